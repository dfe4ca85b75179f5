// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for the newc cpio writer and the guest archive (userspace/cpio.c). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "lib/cpio.h"

/* One parsed entry, pointing into the archive buffer. */
struct ent {
	char name[256];
	uint32_t ino, mode, uid, gid, nlink, mtime, size;
	const char *data;
};

struct archive {
	char *buf;
	size_t len;
	struct ent e[64];
	int n;
	bool trailer;
};

static uint32_t hex8(const char *p)
{
	char tmp[9];

	memcpy(tmp, p, 8);
	tmp[8] = '\0';
	for (int i = 0; i < 8; i++)
		assert_non_null(strchr("0123456789ABCDEF", tmp[i]));
	return (uint32_t)strtoul(tmp, NULL, 16);
}

/* Parse a whole newc archive strictly (alignment, magic, names, trailer last). */
static void parse(struct archive *a)
{
	size_t off = 0;

	a->n = 0;
	a->trailer = false;
	while (off < a->len) {
		const char *h = a->buf + off;
		struct ent *e = &a->e[a->n];
		uint32_t nsize;

		assert_false(a->trailer);
		assert_int_equal(off % 4, 0);
		assert_true(off + 110 <= a->len);
		assert_memory_equal(h, "070701", 6);
		e->ino = hex8(h + 6);
		e->mode = hex8(h + 14);
		e->uid = hex8(h + 22);
		e->gid = hex8(h + 30);
		e->nlink = hex8(h + 38);
		e->mtime = hex8(h + 46);
		e->size = hex8(h + 54);
		for (int f = 7; f < 11; f++)
			assert_int_equal(hex8(h + 6 + 8 * f), 0); /* dev, rdev */
		nsize = hex8(h + 94);
		assert_int_equal(hex8(h + 102), 0); /* check */
		assert_true(nsize >= 2 && nsize < sizeof(e->name));
		assert_true(off + 110 + nsize <= a->len);
		assert_int_equal(h[110 + nsize - 1], '\0');
		memcpy(e->name, h + 110, nsize);
		assert_int_equal(strlen(e->name), nsize - 1);
		off = (off + 110 + nsize + 3) & ~(size_t)3;
		assert_true(off + e->size <= a->len);
		e->data = a->buf + off;
		off = (off + e->size + 3) & ~(size_t)3;
		if (strcmp(e->name, "TRAILER!!!") == 0) {
			a->trailer = true;
			continue;
		}
		assert_true(a->n < 63);
		a->n++;
	}
	assert_int_equal(off, a->len);
	assert_true(a->trailer);
}

static const struct ent *find(const struct archive *a, const char *name)
{
	for (int i = 0; i < a->n; i++)
		if (strcmp(a->e[i].name, name) == 0)
			return &a->e[i];
	return NULL;
}

static int memfd(void)
{
	int fd = memfd_create("cpio-test", MFD_CLOEXEC);

	assert_true(fd >= 0);
	return fd;
}

/* Read back everything written to fd. */
static void slurp_fd(int fd, struct archive *a)
{
	off_t end = lseek(fd, 0, SEEK_END);

	assert_true(end >= 0);
	a->len = (size_t)end;
	a->buf = malloc(a->len + 1);
	assert_non_null(a->buf);
	assert_int_equal(pread(fd, a->buf, a->len, 0), (ssize_t)a->len);
	parse(a);
}

static void test_name_ok(void **state)
{
	static const char *const good[] = { "a", "sbt/run", "workspace/x/.hidden", "a..b", "..a" };
	static const char *const bad[] = { "",	   "/abs", ".",	  "..",	  "a/../b", "a/./b",
					   "a//b", "a/",   "./a", "a/..", NULL };
	char longname[SBT_CPIO_NAME_MAX + 2];

	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		assert_true(sbt_cpio_name_ok(good[i]));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_false(sbt_cpio_name_ok(bad[i]));
	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	assert_false(sbt_cpio_name_ok(longname));
	longname[SBT_CPIO_NAME_MAX] = '\0';
	assert_true(sbt_cpio_name_ok(longname));
}

static void test_entries(void **state)
{
	struct archive a = { 0 };
	struct sbt_cpio c;
	const struct ent *e;
	int fd = memfd();

	(void)state;
	sbt_cpio_init(&c, fd, 1 << 20);
	assert_int_equal(sbt_cpio_dir(&c, "d", 0755, 7), 0);
	assert_int_equal(sbt_cpio_file(&c, "d/f", 0644, 8, "hello", 5), 0);
	assert_int_equal(sbt_cpio_file(&c, "d/empty", 0600, 9, NULL, 0), 0);
	assert_int_equal(sbt_cpio_symlink(&c, "d/l", "f", 10), 0);
	assert_int_equal(sbt_cpio_file(&c, "../x", 0644, 0, "x", 1), -EINVAL);
	assert_int_equal(sbt_cpio_symlink(&c, "d/l2", "", 0), -EINVAL);
	assert_int_equal(sbt_cpio_finish(&c), 0);
	assert_int_equal(sbt_cpio_finish(&c), 0); /* once */
	assert_int_equal(sbt_cpio_dir(&c, "late", 0755, 0), -EINVAL);
	assert_int_equal(c.written % 4, 0);
	slurp_fd(fd, &a);
	assert_int_equal(a.len, c.written); /* the late entry wrote nothing */
	assert_int_equal(a.n, 4);
	e = find(&a, "d");
	assert_non_null(e);
	assert_int_equal(e->mode, S_IFDIR | 0755);
	assert_int_equal(e->nlink, 2);
	assert_int_equal(e->mtime, 7);
	e = find(&a, "d/f");
	assert_non_null(e);
	assert_int_equal(e->mode, S_IFREG | 0644);
	assert_int_equal(e->size, 5);
	assert_memory_equal(e->data, "hello", 5);
	assert_int_equal(e->uid, 0);
	assert_int_equal(e->gid, 0);
	e = find(&a, "d/empty");
	assert_non_null(e);
	assert_int_equal(e->size, 0);
	e = find(&a, "d/l");
	assert_non_null(e);
	assert_int_equal(e->mode, S_IFLNK | 0777);
	assert_int_equal(e->size, 1);
	assert_memory_equal(e->data, "f", 1);
	/* distinct inode numbers, none 0 */
	for (int i = 0; i < a.n; i++) {
		assert_int_not_equal(a.e[i].ino, 0);
		for (int j = 0; j < i; j++)
			assert_int_not_equal(a.e[i].ino, a.e[j].ino);
	}
	free(a.buf);
	close(fd);
}

/* The bound holds for the whole archive, trailer included; a refused entry writes nothing. */
static void test_bound(void **state)
{
	struct archive a = { 0 };
	struct sbt_cpio c;
	char big[1000];
	int fd = memfd();

	(void)state;
	memset(big, 'b', sizeof(big));
	/* 112 (dir) + 1116 (file) + 124 (trailer) = 1352 */
	sbt_cpio_init(&c, fd, 1351);
	assert_int_equal(sbt_cpio_dir(&c, "d", 0755, 0), 0);
	assert_int_equal(sbt_cpio_file(&c, "d/big", 0644, 0, big, sizeof(big)), -EFBIG);
	assert_int_equal(c.err, 0);
	assert_int_equal(sbt_cpio_finish(&c), 0);
	assert_true(c.written <= 1351);
	slurp_fd(fd, &a);
	assert_int_equal(a.n, 1);
	free(a.buf);
	close(fd);

	fd = memfd();
	sbt_cpio_init(&c, fd, 1352);
	assert_int_equal(sbt_cpio_dir(&c, "d", 0755, 0), 0);
	assert_int_equal(sbt_cpio_file(&c, "d/big", 0644, 0, big, sizeof(big)), 0);
	assert_int_equal(sbt_cpio_finish(&c), 0);
	assert_int_equal(c.written, 1352);
	close(fd);
}

/* A source that ends before its announced size makes the archive fail for good. */
static void test_short_source(void **state)
{
	struct sbt_cpio c;
	int fd = memfd(), src = memfd();

	(void)state;
	assert_int_equal(write(src, "abc", 3), 3);
	assert_int_equal(lseek(src, 0, SEEK_SET), 0);
	sbt_cpio_init(&c, fd, 1 << 20);
	assert_int_equal(sbt_cpio_file_fd(&c, "f", 0644, 0, src, 10), -EIO);
	assert_int_equal(sbt_cpio_finish(&c), -EIO);
	assert_int_equal(lseek(src, 0, SEEK_SET), 0);
	close(fd);
	fd = memfd();
	sbt_cpio_init(&c, fd, 1 << 20);
	assert_int_equal(sbt_cpio_file_fd(&c, "f", 0644, 0, src, 3), 0);
	assert_int_equal(sbt_cpio_finish(&c), 0);
	close(fd);
	close(src);
}

static void test_script(void **state)
{
	char *const simple[] = { "sh", "-c", "echo hi", NULL };
	char *const tricky[] = { "printf", "%s|", "it's", "", "a\nb", "$HOME `x` \\", NULL };
	char *const empty[] = { NULL };
	char *const empty0[] = { "", NULL };
	char out[256], tiny[12];

	(void)state;
	assert_int_equal(sbt_guest_script(simple, out, sizeof(out)),
			 (long)strlen("exec 'sh' '-c' 'echo hi'\n"));
	assert_string_equal(out, "exec 'sh' '-c' 'echo hi'\n");
	assert_true(sbt_guest_script(tricky, out, sizeof(out)) > 0);
	assert_string_equal(out, "exec 'printf' '%s|' 'it'\\''s' '' 'a\nb' '$HOME `x` \\'\n");
	assert_int_equal(sbt_guest_script(empty, out, sizeof(out)), -EINVAL);
	assert_int_equal(sbt_guest_script(empty0, out, sizeof(out)), -EINVAL);
	assert_int_equal(sbt_guest_script(NULL, out, sizeof(out)), -EINVAL);
	assert_int_equal(sbt_guest_script(simple, tiny, sizeof(tiny)), -ENAMETOOLONG);
	/* exactly fitting: the NUL needs its byte too */
	assert_int_equal(sbt_guest_script((char *const[]){ "ab", NULL }, tiny, 10), -ENAMETOOLONG);
	assert_int_equal(sbt_guest_script((char *const[]){ "ab", NULL }, tiny, 11), 10);
	assert_string_equal(tiny, "exec 'ab'\n");
}

static char tmpdir[64];

static void mk(const char *rel, const char *content)
{
	char p[256];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", tmpdir, rel);
	f = fopen(p, "w");
	assert_non_null(f);
	fputs(content, f);
	fclose(f);
}

static int setup_tree(void **state)
{
	char p[256];

	(void)state;
	strcpy(tmpdir, "/tmp/sbt-cpio-test.XXXXXX");
	if (!mkdtemp(tmpdir))
		return -1;
	snprintf(p, sizeof(p), "%s/sub", tmpdir);
	mkdir(p, 0750);
	snprintf(p, sizeof(p), "%s/sub/deeper", tmpdir);
	mkdir(p, 0700);
	mk("a.txt", "alpha\n");
	mk("sub/b.sh", "echo b\n");
	chmod(strcat(strcpy(p, tmpdir), "/sub/b.sh"), 0755);
	mk("sub/deeper/c", "");
	snprintf(p, sizeof(p), "%s/link", tmpdir);
	return symlink("sub/b.sh", p);
}

static int teardown_tree(void **state)
{
	static const char *const files[] = { "sub/deeper/c", "sub/b.sh", "a.txt",
					     "link",	     "fifo",	 NULL };
	char p[256];

	(void)state;
	for (const char *const *f = files; *f; f++) {
		snprintf(p, sizeof(p), "%s/%s", tmpdir, *f);
		unlink(p);
	}
	snprintf(p, sizeof(p), "%s/sub/deeper", tmpdir);
	rmdir(p);
	snprintf(p, sizeof(p), "%s/sub", tmpdir);
	rmdir(p);
	rmdir(tmpdir);
	return 0;
}

static void test_guest_archive(void **state)
{
	char *const argv[] = { "sh", "-c", "cat a.txt", NULL };
	struct archive a = { 0 };
	const struct ent *e;
	char err[512] = "", agent[300];
	size_t plain;
	int fd = memfd();

	(void)state;
	assert_int_equal(sbt_guest_archive(fd, argv, tmpdir, NULL, 1 << 20, err, sizeof(err)), 0);
	slurp_fd(fd, &a);
	/* parents before children, siblings sorted */
	static const char *const order[] = { "sbt",
					     "sbt/run",
					     "workspace",
					     "workspace/a.txt",
					     "workspace/link",
					     "workspace/sub",
					     "workspace/sub/b.sh",
					     "workspace/sub/deeper",
					     "workspace/sub/deeper/c" };
	assert_int_equal(a.n, sizeof(order) / sizeof(order[0]));
	for (int i = 0; i < a.n; i++)
		assert_string_equal(a.e[i].name, order[i]);
	e = find(&a, "sbt/run");
	assert_int_equal(e->mode, S_IFREG | 0755);
	assert_int_equal(e->size, strlen("exec 'sh' '-c' 'cat a.txt'\n"));
	assert_memory_equal(e->data, "exec 'sh' '-c' 'cat a.txt'\n", e->size);
	e = find(&a, "workspace/a.txt");
	assert_int_equal(e->size, 6);
	assert_memory_equal(e->data, "alpha\n", 6);
	assert_true(e->mtime > 0);
	e = find(&a, "workspace/sub/b.sh");
	assert_int_equal(e->mode, S_IFREG | 0755);
	e = find(&a, "workspace/sub");
	assert_int_equal(e->mode, S_IFDIR | 0750);
	e = find(&a, "workspace/link");
	assert_int_equal(e->mode, S_IFLNK | 0777);
	assert_memory_equal(e->data, "sub/b.sh", 8);
	free(a.buf);
	close(fd);

	/* without a workspace: only /sbt */
	fd = memfd();
	assert_int_equal(sbt_guest_archive(fd, argv, NULL, NULL, 1 << 20, err, sizeof(err)), 0);
	slurp_fd(fd, &a);
	assert_int_equal(a.n, 2);
	plain = a.len;
	free(a.buf);
	close(fd);

	/* with the guest agent: sbt/sbtrace, the file's bytes, 0755 whatever its mode */
	snprintf(agent, sizeof(agent), "%s/a.txt", tmpdir);
	fd = memfd();
	assert_int_equal(sbt_guest_archive(fd, argv, NULL, agent, 1 << 20, err, sizeof(err)), 0);
	slurp_fd(fd, &a);
	assert_int_equal(a.n, 3);
	e = find(&a, "sbt/sbtrace");
	assert_int_equal(e->mode, S_IFREG | 0755);
	assert_int_equal(e->uid, 0);
	assert_int_equal(e->size, 6);
	assert_memory_equal(e->data, "alpha\n", 6);
	free(a.buf);
	close(fd);
	/* the agent within the bound (this one has room for /sbt/run alone), or refused */
	fd = memfd();
	assert_int_equal(sbt_guest_archive(fd, argv, NULL, agent, plain + 50, err, sizeof(err)),
			 -EFBIG);
	assert_non_null(strstr(err, "/sbt/sbtrace"));
	close(fd);
	fd = memfd();
	assert_int_equal(sbt_guest_archive(fd, argv, NULL, tmpdir, 1 << 20, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "the guest agent"));
	close(fd);
}

static void test_guest_archive_refusals(void **state)
{
	char *const argv[] = { "true", NULL };
	char *const none[] = { NULL };
	char err[512] = "", p[256];
	int fd = memfd();

	(void)state;
	/* too small for the tree: a clear message naming the bound */
	assert_int_equal(sbt_guest_archive(fd, argv, tmpdir, NULL, 900, err, sizeof(err)), -EFBIG);
	assert_non_null(strstr(err, "would exceed"));
	assert_non_null(strstr(err, tmpdir));
	close(fd);

	/* a FIFO is neither copied nor skipped silently */
	snprintf(p, sizeof(p), "%s/fifo", tmpdir);
	assert_int_equal(mkfifo(p, 0600), 0);
	fd = memfd();
	err[0] = '\0';
	assert_int_equal(sbt_guest_archive(fd, argv, tmpdir, NULL, 1 << 20, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "/fifo"));
	assert_non_null(strstr(err, "not a regular file"));
	unlink(p);
	close(fd);

	fd = memfd();
	assert_int_equal(
		sbt_guest_archive(fd, argv, "/nonexistent-sbt-ws", NULL, 1 << 20, err, sizeof(err)),
		-ENOENT);
	assert_non_null(strstr(err, "/nonexistent-sbt-ws"));
	assert_int_equal(sbt_guest_archive(fd, none, NULL, NULL, 1 << 20, err, sizeof(err)),
			 -EINVAL);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_name_ok),
		cmocka_unit_test(test_entries),
		cmocka_unit_test(test_bound),
		cmocka_unit_test(test_short_source),
		cmocka_unit_test(test_script),
		cmocka_unit_test_setup_teardown(test_guest_archive, setup_tree, teardown_tree),
		cmocka_unit_test_setup_teardown(test_guest_archive_refusals, setup_tree,
						teardown_tree),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
