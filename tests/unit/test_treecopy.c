// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for the build context's copy of a tree (userspace/lib/treecopy.c). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "lib/treecopy.h"

static char top[64]; /* a directory of this test's: src/, dst/, outside/ */

static void at(char *buf, size_t len, const char *rel)
{
	snprintf(buf, len, "%s/%s", top, rel);
}

static void put(const char *rel, const char *text, mode_t mode)
{
	char p[256];
	FILE *f;

	at(p, sizeof(p), rel);
	f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	assert_int_equal(chmod(p, mode), 0);
}

static void dir(const char *rel)
{
	char p[256];

	at(p, sizeof(p), rel);
	assert_int_equal(mkdir(p, 0755), 0);
}

static void link_(const char *target, const char *rel)
{
	char p[256];

	at(p, sizeof(p), rel);
	assert_int_equal(symlink(target, p), 0);
}

static int setup(void **state)
{
	(void)state;
	snprintf(top, sizeof(top), "/tmp/sbt-treecopy.XXXXXX");
	assert_non_null(mkdtemp(top));
	dir("src");
	dir("dst");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	assert_int_equal(sbt_tree_remove(top), 0);
	return 0;
}

static int copy(const char *dst_rel, struct sbt_tree_copy *st, char *err, size_t errlen)
{
	char src[256], dst[256];

	at(src, sizeof(src), "src");
	at(dst, sizeof(dst), dst_rel ? dst_rel : "");
	return sbt_tree_copy(src, dst_rel ? dst : NULL, st, err, errlen);
}

static void test_pure(void **state)
{
	(void)state;
	assert_int_equal(sbt_copy_action(S_IFREG | 0644), SBT_COPY_FILE);
	assert_int_equal(sbt_copy_action(S_IFDIR | 0755), SBT_COPY_DIR);
	assert_int_equal(sbt_copy_action(S_IFLNK | 0777), SBT_COPY_LINK);
	assert_int_equal(sbt_copy_action(S_IFCHR | 0600), SBT_COPY_SKIP);
	assert_int_equal(sbt_copy_action(S_IFBLK | 0600), SBT_COPY_SKIP);
	assert_int_equal(sbt_copy_action(S_IFIFO | 0600), SBT_COPY_SKIP);
	assert_int_equal(sbt_copy_action(S_IFSOCK | 0600), SBT_COPY_SKIP);
	assert_int_equal(sbt_copy_mode(S_IFREG | S_ISUID | 0755), 0755);
	assert_int_equal(sbt_copy_mode(S_IFDIR | S_ISGID | S_ISVTX | 0775), 0775);
	assert_int_equal(sbt_copy_mode(S_IFREG | 0600), 0600);
	assert_false(sbt_link_escapes("link", "file"));
	assert_false(sbt_link_escapes("a/b/link", "../../file"));
	assert_false(sbt_link_escapes("a/link", "./b/../c"));
	assert_true(sbt_link_escapes("link", "../file"));
	assert_true(sbt_link_escapes("a/link", "../../file"));
	assert_true(sbt_link_escapes("a/link", "b/../../../file"));
	assert_true(sbt_link_escapes("link", "/etc/shadow"));
}

static bool same_text(const char *rel, const char *text)
{
	char p[256], buf[64] = "";
	FILE *f;
	size_t n;

	at(p, sizeof(p), rel);
	f = fopen(p, "r");
	if (!f)
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return strcmp(buf, text) == 0;
}

static mode_t mode_of(const char *rel)
{
	char p[256];
	struct stat sb;

	at(p, sizeof(p), rel);
	if (lstat(p, &sb) < 0)
		return 0;
	return sb.st_mode;
}

/* Files, modes, links inside; set-id bits dropped, special files left out. */
static void test_copy(void **state)
{
	struct sbt_tree_copy st = { 0 };
	char err[512], p[256], target[64];
	ssize_t n;
	bool dev;

	(void)state;
	dir("src/sub");
	put("src/sub/run.sh", "#!/bin/sh\n", 0755);
	put("src/ro", "ro\n", 0444);
	put("src/suid", "x\n", 04755);
	link_("sub/run.sh", "src/in");
	link_("../ro", "src/sub/up");
	link_("missing", "src/dangling");
	at(p, sizeof(p), "src/fifo");
	assert_int_equal(mkfifo(p, 0600), 0);
	at(p, sizeof(p), "src/mem");
	dev = mknod(p, S_IFCHR | 0600, makedev(1, 1)) == 0; /* as root */
	dir("src/setgid");
	at(p, sizeof(p), "src/setgid");
	assert_int_equal(chmod(p, 02775), 0);

	assert_int_equal(copy("dst", &st, err, sizeof(err)), 0);
	assert_true(same_text("dst/sub/run.sh", "#!/bin/sh\n"));
	assert_int_equal(mode_of("dst/sub/run.sh"), S_IFREG | 0755);
	assert_int_equal(mode_of("dst/ro"), S_IFREG | 0444);
	assert_int_equal(mode_of("dst/suid"), S_IFREG | 0755); /* no set-uid bit */
	assert_int_equal(mode_of("dst/setgid"), S_IFDIR | 0775);
	assert_int_equal(mode_of("dst/fifo"), 0); /* left out */
	assert_int_equal(mode_of("dst/mem"), 0);
	assert_true(S_ISLNK(mode_of("dst/in")));
	at(p, sizeof(p), "dst/in");
	n = readlink(p, target, sizeof(target) - 1);
	assert_true(n > 0);
	target[n] = '\0';
	assert_string_equal(target, "sub/run.sh"); /* a link, as it was */
	assert_true(same_text("dst/sub/up", "ro\n"));
	assert_true(S_ISLNK(mode_of("dst/dangling")));
	assert_int_equal(st.files, 3);
	assert_int_equal(st.links, 3);
	assert_int_equal(st.skipped, dev ? 2 : 1);
	assert_string_equal(st.first_skipped[0] ? "set" : "", "set");
	assert_int_equal(st.setid, 2);
	/* a check writes nothing and finds nothing wrong */
	assert_int_equal(copy(NULL, &st, err, sizeof(err)), 0);
}

/* A link that leads out, however it does, refuses the tree with its path. */
static void test_escapes(void **state)
{
	static const struct {
		const char *target, *at;
	} cases[] = {
		{ "../outside/secret", "src/a" },    /* climbs out */
		{ "/etc/passwd", "src/b" },	     /* absolute */
		{ "../../missing/x", "src/sub2/c" }, /* dangling, out as written */
		{ "u/../..", "src/x/v" },	     /* out only through the link u */
	};
	struct sbt_tree_copy st = { 0 };
	char err[512], p[256];

	(void)state;
	dir("outside");
	put("outside/secret", "s\n", 0600);
	dir("src/sub2");
	dir("src/x");
	link_("..", "src/x/u"); /* inside: the root */
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		link_(cases[i].target, cases[i].at);
		assert_int_equal(copy(NULL, &st, err, sizeof(err)), -EXDEV);
		assert_string_equal(st.escape, cases[i].at + 4);
		assert_string_equal(st.escape_target, cases[i].target);
		assert_non_null(strstr(err, "leads out"));
		/* the copy refuses it too (the repo may change after the check) */
		assert_int_equal(copy("dst", &st, err, sizeof(err)), -EXDEV);
		at(p, sizeof(p), "dst");
		assert_int_equal(sbt_tree_remove(p), 0);
		dir("dst");
		at(p, sizeof(p), cases[i].at);
		assert_int_equal(unlink(p), 0);
	}
	assert_int_equal(copy(NULL, &st, err, sizeof(err)), 0);
}

/* A pending SIGINT ends the copy; the caller removes it. */
static void test_signal(void **state)
{
	struct sbt_tree_copy st = { .stop_on_signal = true };
	sigset_t set, old;
	char err[512], name[32];
	int sig;

	(void)state;
	for (int i = 0; i < 600; i++) {
		snprintf(name, sizeof(name), "src/f%d", i);
		put(name, "x", 0644);
	}
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigprocmask(SIG_BLOCK, &set, &old);
	raise(SIGINT);
	assert_int_equal(copy("dst", &st, err, sizeof(err)), -EINTR);
	assert_true(st.files < 600);
	sigwait(&set, &sig); /* take it: this test is not to end */
	sigprocmask(SIG_SETMASK, &old, NULL);
	st.stop_on_signal = false;
	assert_int_equal(copy(NULL, &st, err, sizeof(err)), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pure),
		cmocka_unit_test_setup_teardown(test_copy, setup, teardown),
		cmocka_unit_test_setup_teardown(test_escapes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_signal, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
