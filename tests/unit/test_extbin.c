// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The closed set of external binaries (the founding ADR-0015). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/clock.h"

#include "lib/extbin.h"

static void test_allowlist(void **state)
{
	static const char *const yes[] = { "podman",
					   "/usr/bin/docker",
					   "npm",
					   "make",
					   "node",
					   "ip",
					   "qemu-system-x86_64",
					   "slirp4netns",
					   "/usr/local/bin/sbtrace" };
	static const char *const no[] = {
		"strace", "/usr/bin/strace", "sh",  "/bin/sh", "bash",
		"curl",	  "ltrace",	     "gdb", "",	       "podman-remote",
		"makex",  "sbtrace-shim"
	};

	(void)state;
	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		assert_true(sbt_extbin_allowed(yes[i]));
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		assert_false(sbt_extbin_allowed(no[i]));
	assert_false(sbt_extbin_allowed(NULL));
	for (const char *const *p = sbt_extbin_list(); *p; p++)
		assert_string_not_equal(*p, "strace");
}

/* A host exec of something off the list is refused before any exec happens. */
static void test_exec_refuses(void **state)
{
	char *const strace[] = { "strace", "-f", "true", NULL };
	char *const sh[] = { "/bin/sh", "-c", "true", NULL };
	char *const empty[] = { NULL };

	(void)state;
	assert_int_equal(sbt_exec(SBT_EXEC_HOST, strace), -EPERM);
	assert_int_equal(sbt_exec(SBT_EXEC_HOST, sh), -EPERM);
	assert_int_equal(sbt_exec(SBT_EXEC_HOST, empty), -EINVAL);
	assert_int_equal(sbt_exec(SBT_EXEC_HOST, NULL), -EINVAL);
}

/* The one runner: output captured (and cut to the buffer), exit codes, a timeout kills. */
static void test_run_capture(void **state)
{
	char *const version[] = { "make", "--version", NULL };
	char *const missing[] = { "make", "-f", "/nonexistent/sbtrace-test.mk", NULL };
	char *const strace[] = { "strace", "true", NULL };
	char out[16], err[512];
	struct sbt_run_io io = {
		.out = out, .out_len = sizeof(out), .err = err, .err_len = sizeof(err)
	};
	int status = -1;

	(void)state;
	assert_int_equal(sbt_run(version, &io, &status), 0);
	assert_int_equal(sbt_exit_code(status), 0);
	assert_int_equal(strlen(out), sizeof(out) - 1); /* cut, NUL-terminated */
	assert_memory_equal(out, "GNU Make", 8);
	assert_int_equal(sbt_run(missing, &io, &status), 0);
	assert_int_not_equal(sbt_exit_code(status), 0);
	assert_non_null(strstr(err, "sbtrace-test.mk"));
	assert_int_equal(sbt_run(strace, &io, &status), -EPERM);
}

static void test_run_timeout(void **state)
{
	char mk[] = "/tmp/sbtrace-test-XXXXXX";
	char *const slow[] = { "make", "-s", "-f", mk, NULL };
	struct sbt_run_io io = { .timeout_ms = 200 };
	char out[64];
	uint64_t t0;
	int fd, status = -1;

	(void)state;
	fd = mkstemp(mk);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "all:\n\t@sleep 20\n", 16), 16);
	close(fd);
	t0 = sbt_mono_ms();
	assert_int_equal(sbt_run(slow, &io, &status), -ETIMEDOUT);
	io.out = out;
	io.out_len = sizeof(out);
	assert_int_equal(sbt_run(slow, &io, &status), -ETIMEDOUT);
	assert_true(sbt_mono_ms() - t0 < 5000);
	unlink(mk);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_allowlist),
		cmocka_unit_test(test_exec_refuses),
		cmocka_unit_test(test_run_capture),
		cmocka_unit_test(test_run_timeout),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
