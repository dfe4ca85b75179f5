// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Pinned enforcement: see pins.h. Unpinning is an unlink in bpffs; no libbpf here. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "lib/cgroupfs.h"
#include "sandbox/pins.h"
#include "sandbox/sandbox.h"
#include "lib/log.h"

/* <bpffs>/TOP (made when `create`). */
static int pin_top_of(const char *top, bool create, char *out, size_t len)
{
	char mnt[PATH_MAX], root[PATH_MAX];
	int ret = sbt_fs_mount("bpf", mnt, sizeof(mnt), root, sizeof(root));

	if (ret)
		return ret;
	if ((size_t)snprintf(out, len, "%s/%s", mnt, top) >= len)
		return -ENAMETOOLONG;
	if (create && mkdir(out, 0700) && errno != EEXIST)
		return -errno;
	return 0;
}

static int pin_top(bool create, char *out, size_t len)
{
	return pin_top_of("sbtrace", create, out, len);
}

int sbt_pin_dir(const char *name, bool create, char *out, size_t len)
{
	char top[PATH_MAX];
	int ret;

	if (!sbt_sandbox_name_ok(name))
		return -EINVAL;
	ret = pin_top(create, top, sizeof(top));
	if (ret)
		return ret;
	if ((size_t)snprintf(out, len, "%s/%s", top, name) >= len)
		return -ENAMETOOLONG;
	if (!create || mkdir(out, 0700) == 0 || errno == EEXIST)
		return 0;
	/* A concurrent remove took the empty top away between the two mkdirs: once more. */
	if (errno == ENOENT && (ret = pin_top(true, top, sizeof(top))))
		return ret;
	return mkdir(out, 0700) && errno != EEXIST ? -errno : 0;
}

/* What walk_pins() does to each entry of a pin directory. */
enum pin_op {
	PINS_UNPIN_ALL,	 /* every entry (pins: no subdirectories); -errno of the first failure */
	PINS_COUNT_OF,	 /* count those of `pid` */
	PINS_UNPIN_DEAD, /* unpin those of processes that are gone (not `pid`'s); count them */
};

/* The PID a pin's name starts with ("<pid>-what"), 0 when it does not. */
static pid_t pin_pid(const char *entry)
{
	char *end;
	long pid = strtol(entry, &end, 10);

	return end != entry && *end == '-' && pid > 0 && pid <= 4194304 ? (pid_t)pid : 0;
}

/* One pass over directory `dir`: a count, or -errno (a missing directory: 0). */
static int walk_pins(const char *dir, enum pin_op op, pid_t pid)
{
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), n = 0, err = 0;
	struct dirent *de;
	DIR *d;

	if (dfd < 0)
		return errno == ENOENT ? 0 : -errno;
	d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return -errno;
	}
	while ((de = readdir(d))) {
		pid_t p = pin_pid(de->d_name);

		if (op == PINS_UNPIN_ALL) {
			if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0 &&
			    unlinkat(dfd, de->d_name, 0) && errno != ENOENT && !err)
				err = -errno;
		} else if (op == PINS_COUNT_OF) {
			n += p && p == pid;
		} else if (p && p != pid && kill(p, 0) && errno == ESRCH &&
			   unlinkat(dfd, de->d_name, 0) == 0) {
			n++; /* a live process's pins are its own (a trace, the probe, this agent) */
		}
	}
	closedir(d);
	return err ? err : n;
}

/* Unlink every entry of directory `dir`, then the directory. */
static int remove_dir(const char *dir)
{
	int ret = walk_pins(dir, PINS_UNPIN_ALL, 0);

	if (rmdir(dir) && errno != ENOENT && ret >= 0)
		ret = -errno;
	return ret < 0 ? ret : 0;
}

int sbt_pin_remove(const char *name)
{
	char dir[PATH_MAX];
	int ret = sbt_pin_dir(name, false, dir, sizeof(dir));

	char *slash;

	if (ret == -ENOENT) /* no bpffs: nothing was pinned */
		return 0;
	if (!ret)
		ret = remove_dir(dir);
	slash = strrchr(dir, '/');
	if (!ret && slash) { /* and <bpffs>/sbtrace when it is empty (others' stay: ENOTEMPTY) */
		*slash = '\0';
		rmdir(dir);
	}
	return ret;
}

int sbt_pin_gc(bool verbose)
{
	char top[PATH_MAX], cg2[PATH_MAX], root[PATH_MAX], cg[PATH_MAX];
	struct dirent *de;
	int count = 0;
	DIR *d;

	if (pin_top(false, top, sizeof(top)) ||
	    sbt_cgroup2_mount(cg2, sizeof(cg2), root, sizeof(root)))
		return 0;
	d = opendir(top);
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		if (!sbt_sandbox_name_ok(de->d_name) ||
		    (size_t)snprintf(cg, sizeof(cg), "%s/sbtrace/%s", cg2, de->d_name) >=
			    sizeof(cg) ||
		    access(cg, F_OK) == 0 || errno != ENOENT)
			continue;
		if (sbt_pin_remove(de->d_name) == 0) {
			count++;
			if (verbose)
				sbt_log("removed the pinned links of sandbox %s (its cgroup is "
					"gone)",
					de->d_name);
		}
	}
	closedir(d);
	return count;
}

int sbt_pin_count(const char *name, pid_t pid)
{
	char dir[PATH_MAX];
	int ret = sbt_pin_dir(name, false, dir, sizeof(dir));

	return ret ? (ret == -ENOENT ? 0 : ret) : walk_pins(dir, PINS_COUNT_OF, pid);
}

int sbt_pin_prune(const char *name)
{
	char dir[PATH_MAX];
	int ret = sbt_pin_dir(name, false, dir, sizeof(dir));

	return ret ? (ret == -ENOENT ? 0 : ret) : walk_pins(dir, PINS_UNPIN_DEAD, getpid());
}

int sbt_pin_agent_dir(const char *key, bool create, char *out, size_t len)
{
	char top[PATH_MAX];
	int ret = pin_top_of("sbtrace-agent", create, top, sizeof(top));

	if (ret)
		return ret;
	if (!key[0] || strchr(key, '/') || key[0] == '.' ||
	    (size_t)snprintf(out, len, "%s/%s", top, key) >= len)
		return -EINVAL;
	return create && mkdir(out, 0700) && errno != EEXIST ? -errno : 0;
}

int sbt_pin_agent_prune(const char *key)
{
	char dir[PATH_MAX];
	int ret = sbt_pin_agent_dir(key, false, dir, sizeof(dir));

	return ret ? (ret == -ENOENT ? 0 : ret) : walk_pins(dir, PINS_UNPIN_DEAD, getpid());
}

int sbt_pin_agent_remove(const char *key)
{
	char dir[PATH_MAX];
	int ret = sbt_pin_agent_dir(key, false, dir, sizeof(dir));
	char *slash;

	if (ret)
		return ret == -ENOENT ? 0 : ret;
	ret = remove_dir(dir);
	slash = strrchr(dir, '/');
	if (!ret && slash) {
		*slash = '\0';
		rmdir(dir); /* <bpffs>/sbtrace-agent, when it is empty */
	}
	return ret;
}
