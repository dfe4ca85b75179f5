// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for the atomic file write (userspace/lib/io.c: sbt_write_atomic). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "lib/io.h"

struct dir {
	char path[64];
	char file[PATH_MAX]; /* path/file */
};

static int dir_setup(void **state)
{
	struct dir *d = calloc(1, sizeof(*d));

	if (!d)
		return -1;
	snprintf(d->path, sizeof(d->path), "/tmp/sbt-test-io.XXXXXX");
	if (!mkdtemp(d->path)) {
		free(d);
		return -1;
	}
	snprintf(d->file, sizeof(d->file), "%s/file", d->path);
	*state = d;
	return 0;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

static int dir_teardown(void **state)
{
	struct dir *d = *state;
	int ret = nftw(d->path, remove_one, 8, FTW_DEPTH | FTW_PHYS);

	free(d);
	return ret;
}

/* The names in dir, but . and .., joined by spaces ("file"; "" when empty). */
static const char *entries(const char *path)
{
	static char names[1024];
	DIR *dir = opendir(path);
	struct dirent *de;

	names[0] = '\0';
	assert_non_null(dir);
	while ((de = readdir(dir))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (names[0])
			strncat(names, " ", sizeof(names) - strlen(names) - 1);
		strncat(names, de->d_name, sizeof(names) - strlen(names) - 1);
	}
	closedir(dir);
	return names;
}

static int open_fds(void)
{
	DIR *dir = opendir("/proc/self/fd");
	int n = 0;

	assert_non_null(dir);
	while (readdir(dir))
		n++;
	closedir(dir);
	return n;
}

/* The file's bytes (malloc'd) and their number. */
static char *slurp(const char *path, size_t *len)
{
	int err;
	const char *kind;
	char *buf = sbt_read_regular(AT_FDCWD, path, 8u << 20, len, &err, &kind);

	assert_non_null(buf);
	return buf;
}

static void test_content_whole(void **state)
{
	struct dir *d = *state;
	size_t big = (3u << 20) + 17, len; /* more than one write's worth, odd-sized */
	char *data = malloc(big), *got;
	struct stat st;

	assert_non_null(data);
	for (size_t i = 0; i < big; i++)
		data[i] = (char)(i * 7 + i / 4093);
	assert_int_equal(sbt_write_atomic(d->file, data, big, 0640, 0), 0);
	got = slurp(d->file, &len);
	assert_int_equal(len, big);
	assert_memory_equal(got, data, big);
	free(got);
	assert_int_equal(stat(d->file, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0640);
	/* a shorter replacement: the new bytes alone, not the old file's tail */
	assert_int_equal(sbt_write_atomic(d->file, "new\n", 4, 0600, SBT_ATOMIC_SYNC_DIR), 0);
	got = slurp(d->file, &len);
	assert_int_equal(len, 4);
	assert_memory_equal(got, "new\n", 4);
	free(got);
	assert_int_equal(stat(d->file, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(sbt_write_atomic(d->file, NULL, 0, 0600, 0), 0);
	assert_int_equal(stat(d->file, &st), 0);
	assert_int_equal(st.st_size, 0);
	assert_string_equal(entries(d->path), "file");
	free(data);
}

/* The rename fails (a directory is in the way): the error, no temporary file, no fd. */
static void test_rename_fails(void **state)
{
	struct dir *d = *state;
	char inner[PATH_MAX + 8];
	int fds = open_fds();

	assert_int_equal(mkdir(d->file, 0700), 0);
	snprintf(inner, sizeof(inner), "%s/keep", d->file);
	assert_int_equal(sbt_write_atomic(inner, "x", 1, 0600, 0), 0); /* not empty */
	assert_int_equal(sbt_write_atomic(d->file, "content", 7, 0600, SBT_ATOMIC_SYNC_DIR),
			 -EISDIR);
	assert_string_equal(entries(d->path), "file");
	assert_string_equal(entries(d->file), "keep");
	assert_int_equal(open_fds(), fds);
}

/* No such directory: nothing is made. */
static void test_no_dir(void **state)
{
	struct dir *d = *state;
	char path[PATH_MAX + 16];

	snprintf(path, sizeof(path), "%s/none/file", d->path);
	assert_int_equal(sbt_write_atomic(path, "x", 1, 0600, 0), -ENOENT);
	assert_string_equal(entries(d->path), "");
}

/* A symlink at path is replaced by the file; what it pointed to is untouched. */
static void test_symlink_replaced(void **state)
{
	struct dir *d = *state;
	char target[PATH_MAX + 16], *got;
	struct stat st;
	size_t len;

	snprintf(target, sizeof(target), "%s/target", d->path);
	assert_int_equal(sbt_write_atomic(target, "old", 3, 0600, 0), 0);
	assert_int_equal(symlink(target, d->file), 0);
	assert_int_equal(sbt_write_atomic(d->file, "new", 3, 0600, 0), 0);
	assert_int_equal(lstat(d->file, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	got = slurp(target, &len);
	assert_int_equal(len, 3);
	assert_memory_equal(got, "old", 3);
	free(got);
}

/* A name without a directory part: the temporary file and the fsync in the current one. */
static void test_relative(void **state)
{
	struct dir *d = *state;
	char cwd[PATH_MAX], *got;
	size_t len;

	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_int_equal(chdir(d->path), 0);
	assert_int_equal(sbt_write_atomic("file", "rel", 3, 0600, SBT_ATOMIC_SYNC_DIR), 0);
	got = slurp("file", &len);
	assert_int_equal(chdir(cwd), 0);
	assert_int_equal(len, 3);
	assert_memory_equal(got, "rel", 3);
	free(got);
	assert_string_equal(entries(d->path), "file");
}

static void test_bad_paths(void **state)
{
	struct dir *d = *state;
	char path[PATH_MAX + 16], *longp = malloc(PATH_MAX + 2);

	assert_int_equal(sbt_write_atomic(NULL, "x", 1, 0600, 0), -EINVAL);
	assert_int_equal(sbt_write_atomic("", "x", 1, 0600, 0), -EINVAL);
	snprintf(path, sizeof(path), "%s/", d->path);
	assert_int_equal(sbt_write_atomic(path, "x", 1, 0600, 0), -EINVAL);
	assert_int_equal(sbt_write_atomic(d->file, NULL, 1, 0600, 0), -EINVAL);
	assert_non_null(longp);
	memset(longp, 'a', PATH_MAX + 1);
	longp[PATH_MAX + 1] = '\0';
	assert_int_equal(sbt_write_atomic(longp, "x", 1, 0600, 0), -ENAMETOOLONG);
	free(longp);
	assert_string_equal(entries(d->path), "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_content_whole, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(test_rename_fails, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(test_no_dir, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(test_symlink_replaced, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(test_relative, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(test_bad_paths, dir_setup, dir_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
