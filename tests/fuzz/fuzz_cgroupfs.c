// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* libFuzzer target: mountinfo and /proc/PID/cgroup parsers (untrusted text). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/cgroupfs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int cond)
{
	if (!cond)
		abort();
}

/* Output buffers of exactly `len` bytes (heap, so ASan sees overflows). */
static void find_mount(const char *text, size_t mnt_len, size_t root_len)
{
	char *mnt = malloc(mnt_len ? mnt_len : 1);
	char *root = malloc(root_len ? root_len : 1);
	int rc;

	check(mnt && root);
	rc = sbt_find_cgroup2_mount(text, mnt, mnt_len, root, root_len);
	check(rc == 0 || rc == -ENOENT || rc == -ENAMETOOLONG);
	if (rc == 0) {
		check(memchr(mnt, '\0', mnt_len) != NULL);
		check(memchr(root, '\0', root_len) != NULL);
	}
	free(mnt);
	free(root);
}

static void parse_cgroup(const char *text, size_t out_len)
{
	char *out = malloc(out_len ? out_len : 1);
	int rc;

	check(out != NULL);
	rc = sbt_parse_proc_cgroup_v2(text, out, out_len);
	check(rc == 0 || rc == -ENOENT || rc == -ENAMETOOLONG);
	if (rc == 0) {
		check(memchr(out, '\0', out_len) != NULL);
		check(sbt_cgroup_path_level(out) >= 0);
	}
	free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	int level;

	check(text != NULL);
	memcpy(text, data, size);
	text[size] = '\0';

	find_mount(text, 4096, 4096);
	find_mount(text, 8, 8);
	find_mount(text, 1, 4096);
	find_mount(text, 4096, 1);
	find_mount(text, 0, 0);
	parse_cgroup(text, 4096);
	parse_cgroup(text, 8);
	parse_cgroup(text, 1);
	parse_cgroup(text, 0);
	level = sbt_cgroup_path_level(text);
	check(level >= 0 && (size_t)level <= size);

	free(text);
	return 0;
}
