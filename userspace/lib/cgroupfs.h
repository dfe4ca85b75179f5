/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Parsing of /proc/self/mountinfo and /proc/PID/cgroup (untrusted text). */
#ifndef SBT_CGROUPFS_H
#define SBT_CGROUPFS_H

#include <stddef.h>
#include <stdint.h>

/*
 * Find the cgroup v2 mount in mountinfo text. Writes the mount point to
 * `mnt` and the mounted root within the hierarchy (mountinfo field 4, "/"
 * normally) to `root`. Octal escapes (\040) are decoded.
 * Returns 0, -ENOENT when there is no cgroup2 mount, -ENAMETOOLONG.
 */
int sbt_find_cgroup2_mount(const char *mountinfo, char *mnt, size_t mnt_len, char *root,
			   size_t root_len);

/* The first mount of file system type `fstype` ("bpf", ...), as above. */
int sbt_find_fs_mount(const char *mountinfo, const char *fstype, char *mnt, size_t mnt_len,
		      char *root, size_t root_len);

/*
 * The cgroup v2 path ("0::/a/b") in /proc/PID/cgroup text, copied to `out`.
 * Returns 0, -ENOENT (no v2 line), -ENAMETOOLONG.
 */
int sbt_parse_proc_cgroup_v2(const char *text, char *out, size_t out_len);

/* Number of path components of an absolute cgroup path: "/" -> 0, "/a/b" -> 2. */
int sbt_cgroup_path_level(const char *path);

/*
 * The cgroup v2 mount of this process's mount namespace, read from
 * /proc/self/mountinfo (see sbt_find_cgroup2_mount). 0 or -errno.
 */
int sbt_cgroup2_mount(char *mnt, size_t mnt_len, char *root, size_t root_len);

/* The first mount of `fstype` in this process's mount namespace. 0 or -errno. */
int sbt_fs_mount(const char *fstype, char *mnt, size_t mnt_len, char *root, size_t root_len);

/* The cgroup id (kernfs node id) of a cgroup directory, as BPF sees it; 0 if unknown. */
uint64_t sbt_cgroup_id(const char *path);

#endif
