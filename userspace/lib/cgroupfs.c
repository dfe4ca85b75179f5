// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "lib/cgroupfs.h"
#include "lib/io.h"

/* Copy one space-separated mountinfo field, decoding \ooo escapes. */
static int copy_field(const char *s, size_t n, char *out, size_t out_len)
{
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		if (c == '\\' && i + 3 < n && s[i + 1] >= '0' && s[i + 1] <= '3' &&
		    s[i + 2] >= '0' && s[i + 2] <= '7' && s[i + 3] >= '0' && s[i + 3] <= '7') {
			c = (char)(((s[i + 1] - '0') << 6) | ((s[i + 2] - '0') << 3) |
				   (s[i + 3] - '0'));
			i += 3;
		}
		if (o + 1 >= out_len)
			return -ENAMETOOLONG;
		out[o++] = c;
	}
	if (out_len == 0)
		return -ENAMETOOLONG;
	out[o] = '\0';
	return 0;
}

/* Split a line into fields; returns the count (at most max). */
static size_t split_fields(const char *line, size_t len, const char **f, size_t *fl, size_t max)
{
	size_t n = 0, i = 0;

	while (i < len && n < max) {
		while (i < len && line[i] == ' ')
			i++;
		if (i >= len)
			break;
		f[n] = line + i;
		while (i < len && line[i] != ' ')
			i++;
		fl[n] = (size_t)(line + i - f[n]);
		n++;
	}
	return n;
}

int sbt_find_cgroup2_mount(const char *mountinfo, char *mnt, size_t mnt_len, char *root,
			   size_t root_len)
{
	return sbt_find_fs_mount(mountinfo, "cgroup2", mnt, mnt_len, root, root_len);
}

int sbt_find_fs_mount(const char *mountinfo, const char *fstype, char *mnt, size_t mnt_len,
		      char *root, size_t root_len)
{
	size_t tlen = strlen(fstype);
	const char *line = mountinfo;

	while (line && *line) {
		const char *end = strchr(line, '\n');
		size_t len = end ? (size_t)(end - line) : strlen(line);
		const char *f[64];
		size_t fl[64], n = split_fields(line, len, f, fl, 64);

		/* id parent maj:min root mnt opts [optional...] - fstype source superopts */
		for (size_t i = 6; i + 1 < n; i++) {
			if (fl[i] == 1 && f[i][0] == '-') {
				if (fl[i + 1] == tlen && memcmp(f[i + 1], fstype, tlen) == 0) {
					int err = copy_field(f[4], fl[4], mnt, mnt_len);

					if (!err)
						err = copy_field(f[3], fl[3], root, root_len);
					return err;
				}
				break;
			}
		}
		line = end ? end + 1 : NULL;
	}
	return -ENOENT;
}

int sbt_parse_proc_cgroup_v2(const char *text, char *out, size_t out_len)
{
	const char *line = text;

	while (line && *line) {
		const char *end = strchr(line, '\n');
		size_t len = end ? (size_t)(end - line) : strlen(line);

		if (len >= 3 && memcmp(line, "0::", 3) == 0) {
			if (len - 3 + 1 > out_len)
				return -ENAMETOOLONG;
			memcpy(out, line + 3, len - 3);
			out[len - 3] = '\0';
			return 0;
		}
		line = end ? end + 1 : NULL;
	}
	return -ENOENT;
}

int sbt_cgroup_path_level(const char *path)
{
	int level = 0;

	for (const char *p = path; *p; p++) {
		if (*p != '/' && (p == path || p[-1] == '/'))
			level++;
	}
	return level;
}

#define MOUNTINFO_MAX (16u << 20)

int sbt_cgroup2_mount(char *mnt, size_t mnt_len, char *root, size_t root_len)
{
	return sbt_fs_mount("cgroup2", mnt, mnt_len, root, root_len);
}

int sbt_fs_mount(const char *fstype, char *mnt, size_t mnt_len, char *root, size_t root_len)
{
	int fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC), e, ret;
	size_t len;
	char *buf;

	if (fd < 0)
		return -errno;
	buf = sbt_read_capped(fd, MOUNTINFO_MAX, &len, &e);
	close(fd);
	if (!buf)
		return -e;
	ret = sbt_find_fs_mount(buf, fstype, mnt, mnt_len, root, root_len);
	free(buf);
	return ret;
}

uint64_t sbt_cgroup_id(const char *path)
{
	union {
		struct file_handle fh;
		char raw[sizeof(struct file_handle) + sizeof(uint64_t)];
	} h;
	struct stat st;
	uint64_t id;
	int mount_id;

	h.fh.handle_bytes = sizeof(uint64_t);
	if (name_to_handle_at(AT_FDCWD, path, &h.fh, &mount_id, 0) == 0 &&
	    h.fh.handle_bytes == sizeof(uint64_t)) {
		memcpy(&id, h.fh.f_handle, sizeof(id));
		return id;
	}
	/* kernfs: the inode number is the cgroup id on 64-bit kernels */
	if (stat(path, &st) == 0)
		return (uint64_t)st.st_ino;
	return 0;
}
