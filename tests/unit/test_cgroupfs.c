// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for mountinfo and /proc/PID/cgroup parsing (userspace/cgroupfs.c). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/cgroupfs.h"

#define BUF 4096

/* A systemd "hybrid" host: v1 controllers plus the v2 hierarchy at .../unified. */
static const char hybrid_mountinfo[] =
	"22 28 0:21 / /sys rw,nosuid,nodev,noexec,relatime shared:7 - sysfs sysfs rw\n"
	"23 28 0:22 / /proc rw,nosuid,nodev,noexec,relatime shared:13 - proc proc rw\n"
	"24 28 0:5 / /dev rw,nosuid,relatime shared:2 - devtmpfs udev "
	"rw,size=8123456k,nr_inodes=2030864,mode=755\n"
	"28 1 8:2 / / rw,relatime shared:1 - ext4 /dev/sda2 rw,errors=remount-ro\n"
	"31 22 0:26 / /sys/fs/cgroup ro,nosuid,nodev,noexec shared:9 - tmpfs tmpfs ro,mode=755\n"
	"32 31 0:27 / /sys/fs/cgroup/systemd rw,nosuid,nodev,noexec,relatime shared:10 - cgroup "
	"cgroup rw,xattr,name=systemd\n"
	"35 31 0:30 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid,nodev,noexec,relatime shared:15 - "
	"cgroup cgroup rw,cpu,cpuacct\n"
	"36 31 0:31 / /sys/fs/cgroup/memory rw,nosuid,nodev,noexec,relatime shared:16 - cgroup "
	"cgroup rw,memory\n"
	"37 31 0:32 / /sys/fs/cgroup/pids rw,nosuid,nodev,noexec,relatime shared:17 - cgroup "
	"cgroup rw,pids\n"
	"38 31 0:33 / /sys/fs/cgroup/blkio rw,nosuid,nodev,noexec,relatime shared:18 - cgroup "
	"cgroup rw,blkio\n"
	"41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n"
	"42 31 0:39 / /sys/fs/cgroup/devices rw,nosuid,nodev,noexec,relatime shared:20 - cgroup "
	"cgroup rw,devices\n"
	"60 28 0:45 / /run/user/1000 rw,nosuid,nodev,relatime shared:300 - tmpfs tmpfs "
	"rw,size=1626060k,mode=700,uid=1000,gid=1000\n";

static const char v2_mountinfo[] =
	"25 30 0:23 / /sys rw,nosuid,nodev,noexec,relatime shared:7 - sysfs sysfs rw\n"
	"26 30 0:24 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw\n"
	"30 1 259:2 / / rw,relatime shared:1 - ext4 /dev/nvme0n1p2 rw\n"
	"34 25 0:29 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 cgroup2 "
	"rw,nsdelegate,memory_recursiveprot\n"
	"35 25 0:30 / /sys/fs/pstore rw,nosuid,nodev,noexec,relatime shared:10 - pstore pstore "
	"rw\n";

static void expect_mount(const char *text, const char *mnt, const char *root)
{
	char m[BUF], r[BUF];

	memset(m, 'X', sizeof(m));
	memset(r, 'X', sizeof(r));
	assert_int_equal(sbt_find_cgroup2_mount(text, m, sizeof(m), r, sizeof(r)), 0);
	assert_string_equal(m, mnt);
	assert_string_equal(r, root);
}

static void expect_no_mount(const char *text)
{
	char m[BUF], r[BUF];

	assert_int_equal(sbt_find_cgroup2_mount(text, m, sizeof(m), r, sizeof(r)), -ENOENT);
}

static void test_hybrid(void **state)
{
	(void)state;
	expect_mount(hybrid_mountinfo, "/sys/fs/cgroup/unified", "/");
}

static void test_pure_v2(void **state)
{
	(void)state;
	expect_mount(v2_mountinfo, "/sys/fs/cgroup", "/");
}

static void test_optional_fields(void **state)
{
	(void)state;
	expect_mount("41 31 0:38 / /sys/fs/cgroup rw,relatime shared:5 master:1 - cgroup2 cgroup2 "
		     "rw,nsdelegate\n",
		     "/sys/fs/cgroup", "/");
	/* Many optional fields. */
	expect_mount("41 31 0:38 / /cg rw shared:5 master:1 propagate_from:2 unbindable - cgroup2 "
		     "none rw\n",
		     "/cg", "/");
}

static void test_escapes(void **state)
{
	(void)state;
	expect_mount("90 28 0:50 / /mnt/my\\040cgroup rw,relatime - cgroup2 cgroup2 rw\n",
		     "/mnt/my cgroup", "/");
	/* Tab, newline and backslash escapes; also in the root field. */
	expect_mount("90 28 0:50 /a\\040b /mnt/x\\011y\\012z\\134w rw - cgroup2 cgroup2 rw\n",
		     "/mnt/x\ty\nz\\w", "/a b");
	/* Escape at the very end of the field. */
	expect_mount("90 28 0:50 / /mnt/end\\040 rw - cgroup2 cgroup2 rw\n", "/mnt/end ", "/");
	/* Not a valid octal escape: copied as is. */
	expect_mount("90 28 0:50 / /mnt/a\\9b\\04 rw - cgroup2 cgroup2 rw\n", "/mnt/a\\9b\\04",
		     "/");
}

static void test_namespace_root(void **state)
{
	(void)state;
	/* Inside a cgroup namespace / a container: the mounted root is not "/". */
	expect_mount("1234 1200 0:29 /../../.. /sys/fs/cgroup ro,nosuid,nodev,noexec,relatime - "
		     "cgroup2 cgroup rw\n",
		     "/sys/fs/cgroup", "/../../..");
	expect_mount("1234 1200 0:29 /system.slice/docker-abc.scope /sys/fs/cgroup rw master:9 - "
		     "cgroup2 cgroup rw\n",
		     "/sys/fs/cgroup", "/system.slice/docker-abc.scope");
}

static void test_no_cgroup2(void **state)
{
	static const char v1_only[] =
		"31 22 0:26 / /sys/fs/cgroup ro,nosuid,nodev,noexec shared:9 - tmpfs tmpfs ro\n"
		"36 31 0:31 / /sys/fs/cgroup/memory rw,nosuid - cgroup cgroup rw,memory\n"
		"37 31 0:32 / /sys/fs/cgroup/cgroup2 rw,nosuid - cgroup cgroup2 rw,pids\n";

	(void)state;
	expect_no_mount(v1_only);
	expect_no_mount("");
	expect_no_mount("\n");
	expect_no_mount("\n\n\n");
}

static void test_too_small(void **state)
{
	static const char line[] = "34 25 0:29 /sb /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n";
	const size_t need = sizeof("/sys/fs/cgroup"); /* incl. NUL */
	char m[BUF], r[BUF];

	(void)state;
	assert_int_equal(sbt_find_cgroup2_mount(line, m, need - 1, r, sizeof(r)), -ENAMETOOLONG);
	assert_int_equal(sbt_find_cgroup2_mount(line, m, 1, r, sizeof(r)), -ENAMETOOLONG);
	assert_int_equal(sbt_find_cgroup2_mount(line, m, 0, r, sizeof(r)), -ENAMETOOLONG);
	assert_int_equal(sbt_find_cgroup2_mount(line, m, need, r, sizeof(r)), 0);
	assert_string_equal(m, "/sys/fs/cgroup");
	assert_string_equal(r, "/sb");
	/* The root too: "/sb" needs 4 bytes. */
	assert_int_equal(sbt_find_cgroup2_mount(line, m, sizeof(m), r, 3), -ENAMETOOLONG);
	assert_int_equal(sbt_find_cgroup2_mount(line, m, sizeof(m), r, 0), -ENAMETOOLONG);
	assert_int_equal(sbt_find_cgroup2_mount(line, m, sizeof(m), r, 4), 0);
	assert_string_equal(r, "/sb");
	/* An escape counts once decoded: "/a b" needs 5 bytes, not 8. */
	assert_int_equal(
		sbt_find_cgroup2_mount("1 2 0:1 / /a\\040b rw - cgroup2 x rw", m, 5, r, sizeof(r)),
		0);
	assert_string_equal(m, "/a b");
	assert_int_equal(
		sbt_find_cgroup2_mount("1 2 0:1 / /a\\040b rw - cgroup2 x rw", m, 4, r, sizeof(r)),
		-ENAMETOOLONG);
}

static void test_cgroup2_in_wrong_field(void **state)
{
	(void)state;
	/* As the source, with another fstype */
	expect_no_mount("50 22 0:40 / /mnt/cg rw,relatime - tmpfs cgroup2 rw\n");
	/* As a super option */
	expect_no_mount("50 22 0:40 / /mnt/cg rw,relatime - tmpfs tmpfs cgroup2\n");
	/* As the mount point, root, options, an optional field */
	expect_no_mount("50 22 0:40 / cgroup2 rw - ext4 /dev/sda1 rw\n");
	expect_no_mount("50 22 0:40 cgroup2 /mnt rw - ext4 /dev/sda1 rw\n");
	expect_no_mount("50 22 0:40 / /mnt cgroup2 - ext4 /dev/sda1 rw\n");
	expect_no_mount("50 22 0:40 / /mnt rw cgroup2 - ext4 /dev/sda1 rw\n");
	/* "-" too early: the separator cannot be among the six first fields */
	expect_no_mount("- cgroup2 cgroup2 rw\n");
	expect_no_mount("50 22 - cgroup2 cgroup2 rw\n");
	expect_no_mount("50 22 0:40 / /mnt - cgroup2 cgroup2 rw\n");
	/* Near misses of the fstype */
	expect_no_mount("50 22 0:40 / /mnt rw - cgroup cgroup2 rw\n");
	expect_no_mount("50 22 0:40 / /mnt rw - cgroup2x cgroup2 rw\n");
	expect_no_mount("50 22 0:40 / /mnt rw - CGROUP2 cgroup2 rw\n");
	expect_no_mount("50 22 0:40 / /mnt rw - xcgroup2 cgroup2 rw\n");
	/* Only the first "-" separates: a later "- cgroup2" is the source and options. */
	expect_no_mount("50 22 0:40 / /mnt rw - ext4 - cgroup2 rw\n");
	/* The fstype missing after "-" */
	expect_no_mount("50 22 0:40 / /mnt rw -\n");
	expect_no_mount("50 22 0:40 / /mnt rw shared:1 -\n");
}

static void test_garbage_lines(void **state)
{
	static const char text[] = "\n"
				   "garbage\n"
				   "   \n"
				   "- cgroup2\n"
				   "\x01\x02\xff\xfe binary \x7f\n"
				   "1 2 3\n"
				   "a b c d e f g h i j k l m n o p q r s t u v w x y z\n"
				   "  41   31 0:38  /   /sys/fs/cgroup/unified   rw,relatime   -   "
				   "cgroup2   cgroup2   rw  \n"
				   "more garbage after\n";

	(void)state;
	expect_mount(text, "/sys/fs/cgroup/unified", "/");
	expect_no_mount("garbage\n\x01\x02\n- - - - - - - - -\ncgroup2\n");
	/* A line with very many fields before the separator: no crash, no bogus mount. */
	{
		char m[BUF], r[BUF];
		int rc = sbt_find_cgroup2_mount(
			"1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 "
			"28 "
			"29 30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 "
			"53 "
			"54 55 56 57 58 59 60 61 62 63 64 65 66 67 68 - cgroup2 cgroup2 rw\n",
			m, sizeof(m), r, sizeof(r));

		assert_true(rc == -ENOENT || (rc == 0 && strcmp(m, "5") == 0));
	}
}

static void test_no_trailing_newline(void **state)
{
	(void)state;
	expect_mount("34 25 0:29 / /sys/fs/cgroup rw shared:9 - cgroup2 cgroup2 rw",
		     "/sys/fs/cgroup", "/");
	expect_mount("1 2 0:1 / /x rw - ext4 /dev/a rw\n"
		     "34 25 0:29 / /sys/fs/cgroup rw - cgroup2 cgroup2",
		     "/sys/fs/cgroup", "/");
	expect_no_mount("1 2 0:1 / /x rw - ext4 /dev/a rw");
}

static void test_first_match_wins(void **state)
{
	(void)state;
	expect_mount("1 2 0:1 / /first rw - cgroup2 cgroup2 rw\n"
		     "3 4 0:1 / /second rw - cgroup2 cgroup2 rw\n",
		     "/first", "/");
}

static const char hybrid_proc_cgroup[] =
	"12:devices:/user.slice\n"
	"11:memory:/user.slice/user-1000.slice/session-2.scope\n"
	"10:cpu,cpuacct:/user.slice\n"
	"9:pids:/user.slice/user-1000.slice/session-2.scope\n"
	"1:name=systemd:/user.slice/user-1000.slice/session-2.scope\n"
	"0::/user.slice/user-1000.slice/session-2.scope\n";

static void test_proc_cgroup(void **state)
{
	char out[BUF];

	(void)state;
	assert_int_equal(sbt_parse_proc_cgroup_v2(hybrid_proc_cgroup, out, sizeof(out)), 0);
	assert_string_equal(out, "/user.slice/user-1000.slice/session-2.scope");

	assert_int_equal(sbt_parse_proc_cgroup_v2("0::/\n", out, sizeof(out)), 0);
	assert_string_equal(out, "/");

	assert_int_equal(sbt_parse_proc_cgroup_v2("0::/sandbox/sb-1\n", out, sizeof(out)), 0);
	assert_string_equal(out, "/sandbox/sb-1");

	/* Path with spaces and colons: everything after "0::" up to the newline. */
	assert_int_equal(sbt_parse_proc_cgroup_v2("0::/a b:c\n", out, sizeof(out)), 0);
	assert_string_equal(out, "/a b:c");
}

static void test_proc_cgroup_missing(void **state)
{
	char out[BUF];

	(void)state;
	assert_int_equal(sbt_parse_proc_cgroup_v2("12:devices:/user.slice\n"
						  "1:name=systemd:/user.slice\n",
						  out, sizeof(out)),
			 -ENOENT);
	assert_int_equal(sbt_parse_proc_cgroup_v2("", out, sizeof(out)), -ENOENT);
	assert_int_equal(sbt_parse_proc_cgroup_v2("\n\n", out, sizeof(out)), -ENOENT);
	/* Near misses: not at the start of a line, other hierarchy ids */
	assert_int_equal(sbt_parse_proc_cgroup_v2("10::/x\n", out, sizeof(out)), -ENOENT);
	assert_int_equal(sbt_parse_proc_cgroup_v2(" 0::/x\n", out, sizeof(out)), -ENOENT);
	assert_int_equal(sbt_parse_proc_cgroup_v2("0:/x\n", out, sizeof(out)), -ENOENT);
	assert_int_equal(sbt_parse_proc_cgroup_v2("0:cpu:/x\n", out, sizeof(out)), -ENOENT);
	assert_int_equal(sbt_parse_proc_cgroup_v2("0:", out, sizeof(out)), -ENOENT);
}

static void test_proc_cgroup_too_long(void **state)
{
	char out[BUF];
	char *text = malloc(3 + BUF + 2);

	(void)state;
	assert_non_null(text);
	/* "0::/" + a path of exactly sizeof(out) bytes: no room for the NUL. */
	memcpy(text, "0::/", 4);
	memset(text + 4, 'a', BUF - 1);
	strcpy(text + 3 + BUF, "\n");
	assert_int_equal(sbt_parse_proc_cgroup_v2(text, out, sizeof(out)), -ENAMETOOLONG);
	/* One byte shorter fits exactly. */
	strcpy(text + 3 + BUF - 1, "\n");
	assert_int_equal(sbt_parse_proc_cgroup_v2(text, out, sizeof(out)), 0);
	assert_int_equal(strlen(out), BUF - 1);
	free(text);

	assert_int_equal(sbt_parse_proc_cgroup_v2("0::/abc\n", out, 4), -ENAMETOOLONG);
	assert_int_equal(sbt_parse_proc_cgroup_v2("0::/abc\n", out, 0), -ENAMETOOLONG);
	assert_int_equal(sbt_parse_proc_cgroup_v2("0::/abc\n", out, 5), 0);
	assert_string_equal(out, "/abc");
}

static void test_proc_cgroup_no_trailing_newline(void **state)
{
	char out[BUF];

	(void)state;
	assert_int_equal(sbt_parse_proc_cgroup_v2("1:name=systemd:/\n0::/a/b", out, sizeof(out)),
			 0);
	assert_string_equal(out, "/a/b");
	assert_int_equal(sbt_parse_proc_cgroup_v2("0::/", out, sizeof(out)), 0);
	assert_string_equal(out, "/");
	assert_int_equal(sbt_parse_proc_cgroup_v2("0::/abc", out, 4), -ENAMETOOLONG);
}

static void test_path_level(void **state)
{
	(void)state;
	assert_int_equal(sbt_cgroup_path_level("/"), 0);
	assert_int_equal(sbt_cgroup_path_level(""), 0);
	assert_int_equal(sbt_cgroup_path_level("//"), 0);
	assert_int_equal(sbt_cgroup_path_level("/a"), 1);
	assert_int_equal(sbt_cgroup_path_level("/a/"), 1);
	assert_int_equal(sbt_cgroup_path_level("/a/b"), 2);
	assert_int_equal(sbt_cgroup_path_level("/a//b/"), 2);
	assert_int_equal(sbt_cgroup_path_level("a/b"), 2);
	assert_int_equal(sbt_cgroup_path_level("a"), 1);
	assert_int_equal(sbt_cgroup_path_level("/user.slice/user-1000.slice/session-2.scope"), 3);
	assert_int_equal(sbt_cgroup_path_level("/a b/c.d/e-f/g"), 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hybrid),
		cmocka_unit_test(test_pure_v2),
		cmocka_unit_test(test_optional_fields),
		cmocka_unit_test(test_escapes),
		cmocka_unit_test(test_namespace_root),
		cmocka_unit_test(test_no_cgroup2),
		cmocka_unit_test(test_too_small),
		cmocka_unit_test(test_cgroup2_in_wrong_field),
		cmocka_unit_test(test_garbage_lines),
		cmocka_unit_test(test_no_trailing_newline),
		cmocka_unit_test(test_first_match_wins),
		cmocka_unit_test(test_proc_cgroup),
		cmocka_unit_test(test_proc_cgroup_missing),
		cmocka_unit_test(test_proc_cgroup_too_long),
		cmocka_unit_test(test_proc_cgroup_no_trailing_newline),
		cmocka_unit_test(test_path_level),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
