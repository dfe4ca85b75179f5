// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Sandbox keys: resolve --cgroup PATH and --pid PID to a cgroup v2 directory. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>
#include <linux/magic.h>

#include "cgroupfs.h"
#include "loader.h"

static int read_text(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t off = 0;

	if (fd < 0)
		return -errno;
	while (off + 1 < len) {
		ssize_t n = read(fd, buf + off, len - 1 - off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			n = -errno;
			close(fd);
			return (int)n;
		}
		if (n == 0)
			break;
		off += (size_t)n;
	}
	buf[off] = '\0';
	close(fd);
	return (int)off;
}

/* Fill `sb` from an absolute directory path inside the v2 mount. */
static int fill_sandbox(const char *arg, const char *dir, struct sbt_sandbox *sb)
{
	char mnt[PATH_MAX], root[PATH_MAX], real[PATH_MAX];
	const char *rel;
	struct statfs sfs;
	size_t ml;
	int err;

	err = sbt_cgroup2_mount(mnt, sizeof(mnt), root, sizeof(root));
	if (err) {
		fprintf(stderr,
			"sbtrace: no cgroup v2 hierarchy is mounted (%s); mount one, e.g. "
			"'mount -t cgroup2 none /sys/fs/cgroup/unified'\n",
			strerror(-err));
		return err;
	}
	if (!realpath(dir, real)) {
		err = -errno;
		fprintf(stderr,
			"sbtrace: cgroup '%s': %s; give an existing cgroup v2 directory "
			"(under %s) or a path relative to it\n",
			arg, strerror(errno), mnt);
		return err;
	}
	if (statfs(real, &sfs) < 0 || sfs.f_type != CGROUP2_SUPER_MAGIC) {
		fprintf(stderr, "sbtrace: cgroup '%s': %s is not in the cgroup v2 hierarchy (%s)\n",
			arg, real, mnt);
		return -EINVAL;
	}
	ml = strlen(mnt);
	if (strncmp(real, mnt, ml) != 0 || (real[ml] != '/' && real[ml] != '\0')) {
		fprintf(stderr, "sbtrace: cgroup '%s': %s is not below the cgroup v2 mount %s\n",
			arg, real, mnt);
		return -EINVAL;
	}
	rel = real + ml;
	/* The name is the path within the whole hierarchy: mounted root + rel. */
	if (snprintf(sb->name, sizeof(sb->name), "%s%s", strcmp(root, "/") ? root : "",
		     *rel ? rel : (strcmp(root, "/") ? "" : "/")) >= (int)sizeof(sb->name))
		return -ENAMETOOLONG;
	snprintf(sb->path, sizeof(sb->path), "%s", real);
	sb->level = (uint32_t)sbt_cgroup_path_level(sb->name);
	sb->cgroup_id = sbt_cgroup_id(real);
	if (!sb->cgroup_id) {
		err = -errno;
		fprintf(stderr, "sbtrace: cgroup '%s': cannot read its id: %s\n", arg,
			strerror(errno));
		return err;
	}
	return 0;
}

int sbt_sandbox_from_cgroup(const char *arg, struct sbt_sandbox *sb)
{
	char mnt[PATH_MAX], root[PATH_MAX], dir[PATH_MAX];
	struct stat st;
	int err;

	memset(sb, 0, sizeof(*sb));
	sb->origin = "cgroup";
	if (!arg || !*arg) {
		fprintf(stderr, "sbtrace: --cgroup needs a path\n");
		return -EINVAL;
	}
	/*
	 * A path below the v2 mount as given; else relative to the v2 root when
	 * that exists ("/" is the root cgroup, "sbtrace/x"); else as given, for
	 * the error message.
	 */
	err = sbt_cgroup2_mount(mnt, sizeof(mnt), root, sizeof(root));
	if (err)
		return fill_sandbox(arg, arg, sb); /* reports the missing mount */
	if (strncmp(arg, mnt, strlen(mnt)) == 0)
		return fill_sandbox(arg, arg, sb);
	if (snprintf(dir, sizeof(dir), "%s/%s", mnt, arg[0] == '/' ? arg + 1 : arg) >=
	    (int)sizeof(dir)) {
		fprintf(stderr, "sbtrace: cgroup '%s': path too long\n", arg);
		return -ENAMETOOLONG;
	}
	if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
		return fill_sandbox(arg, dir, sb);
	if (stat(arg, &st) == 0 && S_ISDIR(st.st_mode) && (arg[0] == '/' || arg[0] == '.'))
		return fill_sandbox(arg, arg, sb);
	return fill_sandbox(arg, dir, sb);
}

int sbt_sandbox_from_pid(const char *arg, struct sbt_sandbox *sb)
{
	char path[64], text[8192], cg[PATH_MAX], mnt[PATH_MAX], root[PATH_MAX], dir[PATH_MAX];
	const char *rel;
	char *end;
	long pid;
	int err;

	errno = 0;
	pid = arg ? strtol(arg, &end, 10) : 0;
	if (!arg || errno || *end || end == arg || pid <= 0 || pid > 0x3fffffff) {
		fprintf(stderr, "sbtrace: --pid '%s': not a process id (a positive integer)\n",
			arg ? arg : "");
		return -EINVAL;
	}
	snprintf(path, sizeof(path), "/proc/%ld/cgroup", pid);
	err = read_text(path, text, sizeof(text));
	if (err < 0) {
		fprintf(stderr, "sbtrace: --pid %ld: no such process (%s)\n", pid, strerror(-err));
		return err;
	}
	err = sbt_parse_proc_cgroup_v2(text, cg, sizeof(cg));
	if (err) {
		fprintf(stderr, "sbtrace: --pid %ld: the process has no cgroup v2 membership\n",
			pid);
		return err;
	}
	if (strcmp(cg, "/") == 0) {
		fprintf(stderr,
			"sbtrace: --pid %ld: the process is in the root cgroup, which is the whole "
			"host, not a sandbox; use --cgroup / to mean that\n",
			pid);
		return -EINVAL;
	}
	err = sbt_cgroup2_mount(mnt, sizeof(mnt), root, sizeof(root));
	if (err)
		return fill_sandbox(arg, "/nonexistent", sb);
	/* /proc shows the path within the hierarchy; strip the mounted root. */
	rel = cg;
	if (strcmp(root, "/") != 0) {
		size_t rl = strlen(root);

		if (strncmp(cg, root, rl) != 0) {
			fprintf(stderr,
				"sbtrace: --pid %ld: cgroup %s is outside the mounted v2 "
				"root %s\n",
				pid, cg, root);
			return -EINVAL;
		}
		rel = cg + rl;
	}
	if (snprintf(dir, sizeof(dir), "%s%s", mnt, rel) >= (int)sizeof(dir))
		return -ENAMETOOLONG;
	memset(sb, 0, sizeof(*sb));
	err = fill_sandbox(arg, dir, sb);
	sb->origin = "pid";
	sb->origin_pid = (uint32_t)pid;
	return err;
}

#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE 71
#endif

uint64_t sbt_netns_cookie(void)
{
	uint64_t cookie = 0;
	socklen_t len = sizeof(cookie);
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return 0;
	if (getsockopt(fd, SOL_SOCKET, SO_NETNS_COOKIE, &cookie, &len) < 0)
		cookie = 0;
	close(fd);
	return cookie;
}
