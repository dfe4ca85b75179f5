// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * `sbtrace top`'s table (userspace/top/table.h): the agent's metrics into
 * rows (only the sandboxes traced now), rates across a restart, escaping
 * and eliding names, and every line of the table within 80 columns with
 * every column there. Run from the top of the tree (the metrics fixture).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "top/table.h"

#define FIXTURE	 "tests/fixtures/events/metrics.prom"
#define ELLIPSIS "\u2026"

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t len = 0;
	long n;

	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	assert_true(n > 0);
	rewind(f);
	len = (size_t)n;
	buf = malloc(len + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, len, f), len);
	buf[len] = '\0';
	fclose(f);
	return buf;
}

static void parse(struct sbt_top_sample *s, const char *text, uint64_t at_ms)
{
	char *copy = strdup(text);

	assert_non_null(copy);
	assert_int_equal(sbt_top_parse(s, copy, at_ms), 0);
	free(copy);
}

/* The fixture (every family the agent has): one live sandbox, vm-1's counters not a row. */
static void test_parse_fixture(void **state)
{
	struct sbt_top_sample s = { 0 };
	char *text = slurp(FIXTURE);
	const struct sbt_top_sandbox *r;

	(void)state;
	assert_int_equal(sbt_top_parse(&s, text, 1000), 0);
	assert_int_equal(sbt_top_order(&s, SBT_TOP_SORT_EXECS), 0);
	assert_int_equal(s.nr_sb, 2); /* /sbtrace/build, and vm-1 of its egress series */
	assert_int_equal(s.nr_rows, 1);
	r = sbt_top_row_at(&s, 0);
	assert_string_equal(r->name, "/sbtrace/build");
	assert_string_equal(r->source, "cgroup_parent");
	assert_true(r->live);
	assert_true(r->execs == 2 && r->shells == 1 && r->allowed == 1 && r->denied == 3 &&
		    r->lost == 1);
	/* the host's counters: every sandbox's, gone ones among them */
	assert_true(s.host.execs == 2 && s.host.shells == 1 && s.host.allowed == 1 &&
		    s.host.denied == 3 && s.host.lost == 4);
	assert_true(s.sandboxes == 1);
	assert_true(s.start_time == 1700000000.5);
	assert_int_equal(s.nr_prog, 2);
	free(text);
	sbt_top_sample_free(&s);
}

/* A removed sandbox's retained counters are no row; label values may hold '}', ' ', '"'. */
static void test_parse_labels(void **state)
{
	struct sbt_top_sample s = { 0 };

	(void)state;
	parse(&s,
	      "# HELP sbtrace_sandbox_info A sandbox traced now (1), with its source\n"
	      "sbtrace_sandbox_info{sandbox=\"/p/a} \\\"b\\\\\",source=\"shim\"} 1\n"
	      "sbtrace_sandbox_execs_total{sandbox=\"/p/a} \\\"b\\\\\"} 7\n"
	      "sbtrace_sandbox_execs_total{sandbox=\"/p/gone\"} 9\n"
	      "sbtrace_shell_invocations_total{sandbox=\"/p/gone\",shell=\"busybox "
	      "sh\",kind=\"x\"} 2\n"
	      "sbtrace_egress_verdicts_total{sandbox=\"/p/a} \\\"b\\\\\",verdict=\"denied\","
	      "hook=\"cgroup\",reason=\"rule\"} 4\n"
	      "sbtrace_egress_verdicts_total{sandbox=\"/p/a} \\\"b\\\\\",verdict=\"observed\","
	      "hook=\"tap\",reason=\"rule\"} 5\n"
	      "sbtrace_shells_total{shell=\"busybox sh\",kind=\"command\"} 3\n"
	      "sbtrace_unknown_family{sandbox=\"/p/x\"} 1\n"
	      "sbtrace_sandbox_execs_total{sandbox=\"/p/broken} 1\n",
	      5);
	assert_int_equal(sbt_top_order(&s, SBT_TOP_SORT_NAME), 0);
	assert_int_equal(s.nr_rows, 1);
	assert_string_equal(sbt_top_row_at(&s, 0)->name, "/p/a} \"b\\");
	assert_string_equal(sbt_top_row_at(&s, 0)->source, "shim");
	assert_true(sbt_top_row_at(&s, 0)->execs == 7 && sbt_top_row_at(&s, 0)->denied == 4 &&
		    sbt_top_row_at(&s, 0)->allowed == 0);
	assert_true(s.host.shells == 3);
	sbt_top_sample_free(&s);
}

/* Rates against the scrape before; none across a restart or a counter that went down. */
static void test_rates(void **state)
{
	static const char *const fmt = "sbtrace_start_time_seconds %s\n"
				       "sbtrace_execs_total %d\n"
				       "sbtrace_sandbox_info{sandbox=\"/p/a\",source=\"shim\"} 1\n"
				       "sbtrace_sandbox_execs_total{sandbox=\"/p/a\"} %d\n";
	struct sbt_top_sample a = { 0 }, b = { 0 };
	char text[512];

	(void)state;
	snprintf(text, sizeof(text), fmt, "100", 10, 4);
	parse(&a, text, 1000);
	snprintf(text, sizeof(text), fmt, "100", 30, 14);
	parse(&b, text, 3000);
	sbt_top_rates(&a, &b);
	assert_true(b.host.execs_rate == 10.0);
	assert_true(b.sb[0].execs_rate == 5.0);
	/* the agent restarted: its counters began anew */
	sbt_top_sample_swap(&a, &b);
	snprintf(text, sizeof(text), fmt, "200", 3, 1);
	parse(&b, text, 5000);
	sbt_top_rates(&a, &b);
	assert_true(b.host.execs_rate == 0 && b.sb[0].execs_rate == 0);
	/* the same start (a clock of one second), yet lower: no negative rate */
	sbt_top_sample_swap(&a, &b);
	snprintf(text, sizeof(text), fmt, "200", 2, 0);
	parse(&b, text, 6000);
	sbt_top_rates(&a, &b);
	assert_true(b.host.execs_rate == 0 && b.sb[0].execs_rate == 0);
	sbt_top_sample_free(&a);
	sbt_top_sample_free(&b);
}

/* Bytes outside printable ASCII as \xNN, '\' doubled; never an escape cut in two. */
static void test_escape(void **state)
{
	char out[64], small[6]; /* "ab\\x01" needs 7 */

	(void)state;
	assert_int_equal(sbt_top_escape(out, sizeof(out), "a\x1b[2Jb\\c\x7f\xc2\x9bz"), 25);
	assert_string_equal(out, "a\\x1b[2Jb\\\\c\\x7f\\xc2\\x9bz");
	assert_int_equal(sbt_top_escape(small, sizeof(small), "ab\x01"), 2);
	assert_string_equal(small, "ab");
	sbt_top_escape(out, sizeof(out), "plain-name_1.2");
	assert_string_equal(out, "plain-name_1.2");
}

/* In the middle, a third of the width for the head; an escape whole or not at all. */
static void test_elide(void **state)
{
	char out[64];

	(void)state;
	sbt_top_elide(out, sizeof(out), "build-ab", 8, ELLIPSIS);
	assert_string_equal(out, "build-ab");
	sbt_top_elide(out, sizeof(out), "build-abcdef0123456789f-x", 13, ELLIPSIS);
	assert_string_equal(out, "buil" ELLIPSIS "56789f-x");
	assert_int_equal(sbt_top_columns(out), 13);
	sbt_top_elide(out, sizeof(out), "build-abcdef0123456789f-x", 14, "~");
	assert_string_equal(out, "buil~456789f-x");
	/* the tail would begin inside \x1b: it begins after it */
	sbt_top_elide(out, sizeof(out), "/sbtrace/top/e\\x1bq-long-tail", 10, "~");
	assert_string_equal(out, "/sb~g-tail");
	sbt_top_elide(out, sizeof(out), "/p/ab\\x1bqrst", 10, "~");
	assert_string_equal(out, "/p/~qrst");
	/* the head would end inside one: it ends before it */
	sbt_top_elide(out, sizeof(out), "/\\x01bcdefghijklmnop", 10, "~");
	assert_string_equal(out, "/~klmnop");
}

static void test_num(void **state)
{
	char out[16];

	(void)state;
	sbt_top_num(out, sizeof(out), 999, 0, 6);
	assert_string_equal(out, "999");
	sbt_top_num(out, sizeof(out), 1234.56, 1, 7);
	assert_string_equal(out, "1234.6");
	sbt_top_num(out, sizeof(out), 12345678, 0, 6);
	assert_string_equal(out, "12346k");
	sbt_top_num(out, sizeof(out), 12345678, 0, 5);
	assert_string_equal(out, "12.3M");
	sbt_top_num(out, sizeof(out), 123456789, 1, 5);
	assert_string_equal(out, "123M");
	sbt_top_num(out, sizeof(out), 1e30, 0, 4);
	assert_string_equal(out, "****");
}

static void test_columns_clip(void **state)
{
	char s[32] = "ab" ELLIPSIS "cd";

	(void)state;
	assert_int_equal(sbt_top_columns(s), 5);
	sbt_top_clip(s, 3);
	assert_string_equal(s, "ab" ELLIPSIS);
	sbt_top_clip(s, 2);
	assert_string_equal(s, "ab");
}

/* 45 sandboxes of long names in 80 columns: every column, no line longer, names elided. */
static void test_layout_80(void **state)
{
	struct sbt_top_sample s = { 0 };
	struct sbt_top_layout l;
	char *text = malloc(1 << 16), line[SBT_TOP_LINE_MAX];
	size_t o = 0;

	(void)state;
	assert_non_null(text);
	for (int i = 0; i < 45; i++)
		o += (size_t)snprintf(text + o, (1 << 16) - o,
				      "sbtrace_sandbox_info{sandbox=\"/sbtrace-test.t_agent_top."
				      "12345/top/build-%02d\",source=\"cgroup_parent\"} 1\n"
				      "sbtrace_sandbox_execs_total{sandbox=\"/sbtrace-test."
				      "t_agent_top.12345/top/build-%02d\"} %d\n",
				      i, i, i * 1000000);
	snprintf(text + o, (1 << 16) - o,
		 "sbtrace_sandbox_info{sandbox=\"/p/e\x1b]0;pwned\x07q\",source=\"shim\"} 1\n");
	parse(&s, text, 1);
	assert_int_equal(sbt_top_order(&s, SBT_TOP_SORT_NAME), 0);
	assert_int_equal(s.nr_rows, 46);
	sbt_top_layout(&l, &s, 80, ELLIPSIS);
	sbt_top_header(&l, line, sizeof(line));
	assert_true(sbt_top_columns(line) <= 80);
	for (const char *const *h =
		     (const char *const[]){ "SANDBOX", "SOURCE", "EXECS/S", "EXECS", "SHELLS",
					    "ALLOWED", "DENIED", "LOST", NULL };
	     *h; h++)
		assert_non_null(strstr(line, *h));
	for (size_t i = 0; i < s.nr_rows; i++) {
		sbt_top_row(&l, sbt_top_row_at(&s, i), line, sizeof(line));
		assert_int_equal(sbt_top_columns(line), 80);
		for (const char *p = line; *p; p++) /* nothing raw but the ellipsis */
			assert_true((*p >= 0x20 && *p <= 0x7e) || (*p & 0x80));
	}
	sbt_top_row(&l, sbt_top_row_at(&s, s.nr_rows - 1), line,
		    sizeof(line)); /* /sbtrace-test... build-44 */
	assert_non_null(strstr(line, "/sbtra" ELLIPSIS "5/top/build-44 cgroup_parent"));
	assert_non_null(strstr(line, " 44000k "));
	sbt_top_row(&l, sbt_top_row_at(&s, 0), line, sizeof(line)); /* "/p/e..." sorts first */
	assert_non_null(strstr(line, "/p/e\\x1b]0;pwned\\x07q"));
	/* the widest need: --once's */
	sbt_top_layout(&l, &s, 0, "~");
	sbt_top_row(&l, sbt_top_row_at(&s, 1), line, sizeof(line));
	assert_non_null(strstr(line, "/sbtrace-test.t_agent_top.12345/top/build-00 "));
	/* every column down to SBT_TOP_MIN_WIDTH (the help's promise), then cut */
	sbt_top_layout(&l, &s, SBT_TOP_MIN_WIDTH, "~");
	sbt_top_header(&l, line, sizeof(line));
	assert_int_equal(sbt_top_columns(line), SBT_TOP_MIN_WIDTH);
	assert_non_null(strstr(line, " LOST"));
	sbt_top_row(&l, sbt_top_row_at(&s, 1), line, sizeof(line));
	assert_int_equal(sbt_top_columns(line), SBT_TOP_MIN_WIDTH);
	sbt_top_layout(&l, &s, SBT_TOP_MIN_WIDTH - 1, "~");
	sbt_top_header(&l, line, sizeof(line));
	assert_null(strstr(line, " LOST"));
	/* narrower than every column: cut at its end, never longer */
	sbt_top_layout(&l, &s, 40, "~");
	sbt_top_header(&l, line, sizeof(line));
	assert_int_equal(sbt_top_columns(line), 40);
	free(text);
	sbt_top_sample_free(&s);
}

static void test_scroll(void **state)
{
	(void)state;
	assert_int_equal(sbt_top_scroll(0, 45, 10), 0);
	assert_int_equal(sbt_top_scroll(30, 45, 10), 30);
	assert_int_equal(sbt_top_scroll(40, 45, 10), 35);
	assert_int_equal(sbt_top_scroll(7, 5, 10), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_fixture), cmocka_unit_test(test_parse_labels),
		cmocka_unit_test(test_rates),	      cmocka_unit_test(test_escape),
		cmocka_unit_test(test_elide),	      cmocka_unit_test(test_num),
		cmocka_unit_test(test_columns_clip),  cmocka_unit_test(test_layout_80),
		cmocka_unit_test(test_scroll),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
