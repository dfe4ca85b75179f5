// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Pinned enforcement: see pins.h. Unpinning is an unlink in bpffs; no libbpf here. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "lib/cgroupfs.h"
#include "sandbox/pins.h"
#include "sandbox/sandbox.h"
#include "lib/log.h"

static int pin_top(bool create, char *out, size_t len)
{
	char mnt[PATH_MAX], root[PATH_MAX];
	int ret = sbt_fs_mount("bpf", mnt, sizeof(mnt), root, sizeof(root));

	if (ret)
		return ret;
	if ((size_t)snprintf(out, len, "%s/sbtrace", mnt) >= len)
		return -ENAMETOOLONG;
	if (create && mkdir(out, 0700) && errno != EEXIST)
		return -errno;
	return 0;
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

/* Unlink every entry of directory `dir` (pins: no subdirectories), then the directory. */
static int remove_dir(const char *dir)
{
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), ret = 0;
	struct dirent *de;
	DIR *d;

	if (dfd < 0)
		return errno == ENOENT ? 0 : -errno;
	d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return -errno;
	}
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0 &&
		    unlinkat(dfd, de->d_name, 0) && errno != ENOENT)
			ret = -errno;
	closedir(d);
	if (rmdir(dir) && errno != ENOENT && !ret)
		ret = -errno;
	return ret;
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
