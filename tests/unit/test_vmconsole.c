// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for the qemu backend's console parser (sbt_vm_console_*,
 * userspace/sandbox/console.c): boot output kept apart, the workload's bytes passed
 * on exactly, the exit code from the marker, markers split across reads,
 * long lines, a VM that dies early, an output that fails.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sandbox/sandbox.h"

/* Feed `in` to con as it is, in chunks of `step` bytes (0: at once); what reached the output. */
static char *feed_all(struct sbt_vm_console *con, const char *in, size_t step, bool eof)
{
	FILE *f = tmpfile();
	size_t n = strlen(in), len;
	char *out;

	assert_non_null(f);
	for (size_t off = 0; off < n;) {
		size_t k = step && n - off > step ? step : n - off;

		sbt_vm_console_feed(con, in + off, k, fileno(f));
		off += k;
	}
	if (eof)
		sbt_vm_console_eof(con, fileno(f));
	len = (size_t)ftell(f);
	out = calloc(1, len + 1);
	rewind(f);
	assert_int_equal(fread(out, 1, len, f), len);
	fclose(f);
	return out;
}

/* The same on a new console. */
static char *run(struct sbt_vm_console *con, const char *in, size_t step, bool eof)
{
	sbt_vm_console_init(con);
	return feed_all(con, in, step, eof);
}

static const char boot[] = "[    0.000000] Linux version 6.1\r\nsome noise\n";

static void test_exact_output_and_code(void **state)
{
	struct sbt_vm_console con;
	char *out;
	size_t steps[] = { 0, 1, 2, 7 };

	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		char in[512];

		snprintf(in, sizeof(in), "%sSBT-GUEST-READY\nhello\nworld\n\nSBT-GUEST-EXIT 7\n",
			 boot);
		out = run(&con, in, steps[i], true);
		assert_string_equal(out, "hello\nworld\n");
		assert_int_equal(con.phase, SBT_VM_EXITED);
		assert_int_equal(con.exit_code, 7);
		assert_true(con.ready_ns > 0 && con.exit_ns >= con.ready_ns);
		assert_non_null(strstr(con.tail, "some noise"));
		free(out);
	}
}

static void test_last_line_without_newline(void **state)
{
	struct sbt_vm_console con;
	char *out = run(&con, "SBT-GUEST-READY\r\nabc\nSBT-GUEST-EXIT 0\n", 0, true);

	assert_string_equal(out, "abc");
	assert_int_equal(con.exit_code, 0);
	free(out);
}

static void test_not_markers(void **state)
{
	struct sbt_vm_console con;
	char *out;

	/* before READY nothing is output, even a fake exit marker */
	out = run(&con, "SBT-GUEST-EXIT 3\nSBT-GUEST-READYX\n", 0, true);
	assert_string_equal(out, "");
	assert_int_equal(con.phase, SBT_VM_BOOTING);
	free(out);
	/* codes above 255, signs and trailing text are output, not markers */
	out = run(&con,
		  "SBT-GUEST-READY\nSBT-GUEST-EXIT 256\nSBT-GUEST-EXIT -1\nSBT-GUEST-EXIT 1 x\n"
		  "\nSBT-GUEST-EXIT 2\n",
		  0, true);
	assert_string_equal(out, "SBT-GUEST-EXIT 256\nSBT-GUEST-EXIT -1\nSBT-GUEST-EXIT 1 x\n");
	assert_int_equal(con.exit_code, 2);
	free(out);
}

static void test_long_line_passes(void **state)
{
	struct sbt_vm_console con;
	size_t n = 3 * sizeof(con.line) + 5;
	char *in = malloc(n + 64), *out;

	strcpy(in, "SBT-GUEST-READY\n");
	memset(in + 16, 'x', n);
	strcpy(in + 16 + n, "\n\nSBT-GUEST-EXIT 0\n");
	out = run(&con, in, 1000, true);
	assert_int_equal(strlen(out), n + 1);
	assert_int_equal(out[n], '\n');
	assert_int_equal(con.phase, SBT_VM_EXITED);
	free(in);
	free(out);
}

static void test_vm_dies(void **state)
{
	struct sbt_vm_console con;
	char *out = run(&con, "SBT-GUEST-READY\npartial line\nand a half", 0, true);

	assert_int_equal(con.phase, SBT_VM_RUNNING);
	assert_string_equal(out, "partial line\nand a half");
	free(out);
	out = run(&con, "Kernel panic - not syncing\n", 3, true);
	assert_int_equal(con.phase, SBT_VM_BOOTING);
	assert_string_equal(out, "");
	assert_non_null(strstr(con.tail, "Kernel panic"));
	free(out);
}

static void test_output_failure_keeps_parsing(void **state)
{
	struct sbt_vm_console con;
	const char in[] = "SBT-GUEST-READY\nlost\nSBT-GUEST-EXIT 5\n";

	sbt_vm_console_init(&con);
	sbt_vm_console_feed(&con, in, sizeof(in) - 1, -1);
	assert_true(con.out_failed);
	assert_int_equal(con.phase, SBT_VM_EXITED);
	assert_int_equal(con.exit_code, 5);
}

/* The caller's marked lines are kept, not passed on; others and split or cut lines pass. */
static void test_marked_lines(void **state)
{
	static const char in[] = "SBT-GUEST-READY\nbuild out\nM-1 boot 0 1200\r\nM-1x\n"
				 "not M-1 here\nM-1 hc 0\nlast\nSBT-GUEST-EXIT 0\n";
	struct sbt_vm_console con;
	char *out;

	sbt_vm_console_init(&con);
	sbt_vm_console_mark(&con, "M-1 ");
	out = feed_all(&con, in, 3, false); /* split anywhere */
	assert_string_equal(out, "build out\nM-1x\nnot M-1 here\nlast");
	assert_string_equal(con.marks, "boot 0 1200\nhc 0\n");
	assert_int_equal(con.marks_dropped, 0);
	assert_int_equal(con.exit_code, 0);
	free(out);
}

/* With a nonce, only the init's exit line ends the run: a workload's own is output. */
/*
 * ENOSPC said by the workload (its output, passed on) or by the guest: the
 * console notes it, split across reads too; nothing else does.
 */
static void test_no_space(void **state)
{
	static const char said[] = "SBT-GUEST-READY\nbuilding\n"
				   "dd: error writing 'fill': No space left on device\n"
				   "SBT-GUEST-EXIT 1\n";
	struct sbt_vm_console con;
	size_t steps[] = { 0, 1, 5 };
	char *out;

	(void)state;
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		out = run(&con, said, steps[i], true);
		assert_true(con.no_space);
		assert_non_null(strstr(out, "No space left on device"));
		assert_int_equal(con.exit_code, 1);
		free(out);
	}
	out = run(&con, "SBT-GUEST-READY\nNo space left\nSBT-GUEST-EXIT 0\n", 0, true);
	assert_false(con.no_space);
	free(out);
	out = run(&con, "overlayfs: No space left on device\nSBT-GUEST-READY\n", 0, true);
	assert_true(con.no_space); /* the guest's own line, before the workload */
	free(out);
}

/* A saved boot's markers (qemu_snap.c): seen before READY only, never output. */
static void test_hold_and_clock(void **state)
{
	struct sbt_vm_console con;
	size_t steps[] = { 0, 1, 3 };
	char *out;

	(void)state;
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		out = run(&con, "noise\nSBT-GUEST-HOLD\r\n", steps[i], false);
		assert_int_equal(con.hold, 1);
		assert_false(con.clock_asked);
		assert_null(strstr(con.tail, "HOLD"));
		free(out);
		out = run(&con, "SBT-GUEST-HOLD-NOSAVE\nSBT-GUEST-CLOCK\n", steps[i], false);
		assert_int_equal(con.hold, 2);
		assert_true(con.clock_asked);
		free(out);
	}
	/* not a marker: longer, shorter, mid-line, or the workload's (after READY) */
	out = run(&con, "SBT-GUEST-HOLDX\nSBT-GUEST-HOL\nx SBT-GUEST-CLOCK\n", 0, false);
	assert_int_equal(con.hold, 0);
	assert_false(con.clock_asked);
	free(out);
	out = run(&con, "SBT-GUEST-READY\nSBT-GUEST-HOLD\nSBT-GUEST-CLOCK\n\nSBT-GUEST-EXIT 0\n", 0,
		  true);
	assert_int_equal(con.hold, 0);
	assert_false(con.clock_asked);
	assert_string_equal(out, "SBT-GUEST-HOLD\nSBT-GUEST-CLOCK\n");
	free(out);
}

static void test_exit_nonce(void **state)
{
	static const char in[] = "SBT-GUEST-READY\nSBT-GUEST-EXIT 0\nSBT-GUEST-EXIT-feed 0\n"
				 "after\n\nSBT-GUEST-EXIT-c0ffee 3\nboot noise\n";
	struct sbt_vm_console con;
	char *out;

	(void)state;
	sbt_vm_console_init(&con);
	sbt_vm_console_nonce(&con, "c0ffee");
	out = feed_all(&con, in, 5, false);
	assert_int_equal(con.phase, SBT_VM_EXITED);
	assert_int_equal(con.exit_code, 3);
	/* the forged lines, and what followed them, are the workload's output */
	assert_string_equal(out, "SBT-GUEST-EXIT 0\nSBT-GUEST-EXIT-feed 0\nafter\n");
	assert_non_null(strstr(con.tail, "boot noise"));
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exact_output_and_code),
		cmocka_unit_test(test_last_line_without_newline),
		cmocka_unit_test(test_not_markers),
		cmocka_unit_test(test_long_line_passes),
		cmocka_unit_test(test_vm_dies),
		cmocka_unit_test(test_output_failure_keeps_parsing),
		cmocka_unit_test(test_marked_lines),
		cmocka_unit_test(test_exit_nonce),
		cmocka_unit_test(test_no_space),
		cmocka_unit_test(test_hold_and_clock),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
