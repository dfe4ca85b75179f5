// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for failed execs grouped before they are reported (session/execfail.h). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "session/execfail.h"

struct seen {
	int n;
	uint32_t pid[SBT_EXECFAIL_GROUPS + 8];
	char first[SBT_EXECFAIL_GROUPS + 8][SBT_PATH_MAX];
	size_t ntried[SBT_EXECFAIL_GROUPS + 8];
	int err[SBT_EXECFAIL_GROUPS + 8];
	char arg1[SBT_EXECFAIL_GROUPS + 8][SBT_FAIL_ARG_MAX];
};

static void on_report(void *arg, const struct sbt_failgroup *g)
{
	struct seen *s = arg;

	s->pid[s->n] = g->first.pid;
	snprintf(s->first[s->n], sizeof(s->first[0]), "%s", g->first.filename);
	s->ntried[s->n] = g->ntried + g->more;
	s->err[s->n] = g->err;
	snprintf(s->arg1[s->n], sizeof(s->arg1[0]), "%s",
		 g->first.argc > 1 ? g->first.argv[1] : "");
	s->n++;
}

static struct sbt_exec_fail attempt(uint32_t pid, const char *path, int err)
{
	static char buf[4][SBT_PATH_MAX];
	static int next;
	struct sbt_exec_fail f;

	memset(&f, 0, sizeof(f));
	f.slot = 0;
	f.pid = f.tid = pid;
	f.err = err;
	/* the caller's buffer is reused: the group must keep its own copy */
	snprintf(buf[next], sizeof(buf[0]), "%s", path);
	f.filename = buf[next];
	next = (next + 1) % 4;
	f.argv[0] = "sh";
	f.argv[1] = "-c";
	f.argc = 2;
	return f;
}

/* One failed attempt of pid at path, arrived at now_ms. */
static void try_at(struct sbt_execfail *t, void *src, uint32_t pid, const char *path, int err,
		   uint64_t now_ms)
{
	struct sbt_exec_fail f = attempt(pid, path, err);

	sbt_execfail_add(t, &f, src, now_ms, now_ms);
}

/* A PATH search that found its program is no failure: nothing reported. */
static void test_path_search_found(void **state)
{
	static struct sbt_execfail t;
	struct seen s = { 0 };
	int src;

	(void)state;
	sbt_execfail_init(&t, on_report, &s);
	try_at(&t, &src, 7, "/usr/local/sbin/sh", ENOENT, 10);
	try_at(&t, &src, 7, "/usr/local/bin/sh", ENOENT, 11);
	sbt_execfail_exec(&t, 0, 7, &src, "/usr/bin/sh");
	sbt_execfail_flush(&t, SBT_EXECFAIL_ALL, UINT64_MAX);
	assert_int_equal(s.n, 0);
	assert_int_equal(t.searched, 2);
}

/* Every directory failed: one report, the first path, all tried, EACCES sticky. */
static void test_path_search_failed(void **state)
{
	static struct sbt_execfail t;
	struct seen s = { 0 };
	int src;

	(void)state;
	sbt_execfail_init(&t, on_report, &s);
	try_at(&t, &src, 7, "/usr/local/bin/sh", ENOENT, 10);
	try_at(&t, &src, 7, "/usr/bin/sh", EACCES, 11);
	try_at(&t, &src, 7, "/bin/sh", ENOENT, 12);
	sbt_execfail_flush(&t, SBT_EXECFAIL_ALL, 12); /* quiet since 12: not yet */
	assert_int_equal(s.n, 0);
	sbt_execfail_flush(&t, SBT_EXECFAIL_ALL, 13);
	assert_int_equal(s.n, 1);
	assert_int_equal(s.pid[0], 7);
	assert_string_equal(s.first[0], "/usr/local/bin/sh");
	assert_string_equal(s.arg1[0], "-c");
	assert_int_equal(s.ntried[0], 3);
	assert_int_equal(s.err[0], EACCES);
}

/* Another name, or an exec of another name, ends the group: it is reported. */
static void test_other_name(void **state)
{
	static struct sbt_execfail t;
	struct seen s = { 0 };
	int src, other;

	(void)state;
	sbt_execfail_init(&t, on_report, &s);
	try_at(&t, &src, 7, "/bin/bash", ENOENT, 10);
	try_at(&t, &src, 7, "/bin/sh", ENOENT, 11);
	assert_int_equal(s.n, 1);
	assert_string_equal(s.first[0], "/bin/bash");
	/* the same pid of another source (a guest's PID space) is another process */
	sbt_execfail_exec(&t, 0, 7, &other, "/bin/true");
	assert_int_equal(s.n, 1);
	sbt_execfail_exec(&t, 0, 7, &src, "/bin/true");
	assert_int_equal(s.n, 2);
	assert_string_equal(s.first[1], "/bin/sh");
	sbt_execfail_flush(&t, SBT_EXECFAIL_ALL, UINT64_MAX);
	assert_int_equal(s.n, 2);
}

/* More processes than groups: the one quiet longest is reported, none lost. */
static void test_full(void **state)
{
	static struct sbt_execfail t;
	static struct seen s;
	int src;

	(void)state;
	memset(&s, 0, sizeof(s));
	sbt_execfail_init(&t, on_report, &s);
	for (uint32_t i = 0; i < SBT_EXECFAIL_GROUPS + 2; i++) {
		try_at(&t, &src, 100 + i, "/bin/sh", ENOENT, 1000 + i);
	}
	assert_int_equal(s.n, 2);
	assert_int_equal(s.pid[0], 100);
	assert_int_equal(s.pid[1], 101);
	sbt_execfail_flush(&t, 0, UINT64_MAX);
	assert_int_equal(s.n, SBT_EXECFAIL_GROUPS + 2);
	for (uint32_t i = 0; i < SBT_EXECFAIL_TRIED + 3; i++) {
		try_at(&t, &src, 5, "/bin/sh", ENOENT, 5000);
	}
	sbt_execfail_flush(&t, 0, UINT64_MAX);
	assert_int_equal(s.ntried[s.n - 1], SBT_EXECFAIL_TRIED + 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_path_search_found),
		cmocka_unit_test(test_path_search_failed),
		cmocka_unit_test(test_other_name),
		cmocka_unit_test(test_full),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
