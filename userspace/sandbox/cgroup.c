// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Killing and removing a sandbox's cgroup (and whatever is below it). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include "lib/cgroupfs.h"
#include "lib/clock.h"
#include "lib/io.h"
#include "internal.h"

/* The cgroup v2 mount point. 0 or -errno. */
int sbx_cgroup2_mount(char *mnt, size_t len)
{
	char root[PATH_MAX];

	return sbt_cgroup2_mount(mnt, len, root, sizeof(root));
}

/* "populated 0" in cgroup.events: no live process in the cgroup or below. */
bool sbx_cgroup_empty(const char *cg)
{
	char path[PATH_MAX], *ev, *p;
	bool empty = false;

	if (!sbx_str_fits(path, sizeof(path), "%s/cgroup.events", cg))
		return false;
	ev = sbx_slurp(path, 1u << 16, NULL);
	if (!ev)
		return errno == ENOENT;
	p = strstr(ev, "populated ");
	if (p && (p == ev || p[-1] == '\n'))
		empty = p[10] == '0';
	free(ev);
	return empty;
}

bool sbx_cgroup_leftover(const char *cg)
{
	struct stat st;

	return stat(cg, &st) == 0 && S_ISDIR(st.st_mode) &&
	       time(NULL) - st.st_ctime >= GC_MIN_AGE_SEC && sbx_cgroup_empty(cg);
}

/* Write "1" to the cgroup's control file `knob` (cgroup.kill, cgroup.freeze). 0 or -errno. */
static int write_one(const char *cg, const char *knob)
{
	char path[PATH_MAX];
	int fd, ret;

	if (!sbx_str_fits(path, sizeof(path), "%s/%s", cg, knob))
		return -ENAMETOOLONG;
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = sbt_write_all(fd, "1", 1);
	close(fd);
	return ret;
}

int sbx_cgroup_freeze(const char *cg)
{
	return write_one(cg, "cgroup.freeze");
}

/* SIGKILL every process in the cgroup and below: cgroup.kill, else one by one. */
void sbx_cgroup_kill(const char *cg)
{
	char path[PATH_MAX], *procs, *p, *end;

	if (write_one(cg, "cgroup.kill") == 0)
		return;
	/* Before Linux 5.14: kill what cgroup.procs lists until it stays empty (bounded). */
	if (!sbx_str_fits(path, sizeof(path), "%s/cgroup.procs", cg))
		return;
	for (int round = 0; round < 100; round++) {
		bool any = false;

		procs = sbx_slurp(path, 16u << 20, NULL);
		if (!procs)
			return;
		for (p = procs; *p; p = end) {
			long pid = strtol(p, &end, 10);

			if (end == p)
				break;
			if (pid > 0 && kill((pid_t)pid, SIGKILL) == 0)
				any = true;
		}
		free(procs);
		if (!any)
			return;
		sbt_sleep_ms(10);
	}
}

/* The first child directory of the directory open as fd, into name. False if none. */
static bool first_child_dir(int fd, char name[NAME_MAX + 1])
{
	int dfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
	struct dirent *de;
	bool found = false;

	if (!d) {
		if (dfd >= 0)
			close(dfd);
		return false;
	}
	while (!found && (de = readdir(d))) {
		if (de->d_type != DT_DIR || !strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		memcpy(name, de->d_name, strlen(de->d_name) + 1);
		found = true;
	}
	closedir(d);
	return found;
}

/*
 * Remove a cgroup and every cgroup below it, leaves first, whatever the
 * depth or the length of the paths: it walks down by name with one
 * directory fd (openat), removes a leaf through its parent (unlinkat, the
 * parent reopened as ".."), and keeps only the names it went down by.
 * 0, or -errno (-EBUSY: something still runs in there).
 */
int sbx_cgroup_rmdir_tree(const char *cg)
{
	char **names = NULL, **nn, child[NAME_MAX + 1];
	size_t n = 0, cap = 0;
	int cur, ret = 0;

	if (rmdir(cg) == 0 || errno == ENOENT)
		return 0;
	/* cgroupfs says EBUSY for a cgroup with child cgroups (and for one with tasks) */
	if (errno != ENOTEMPTY && errno != EEXIST && errno != EBUSY)
		return -errno;
	cur = open(cg, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cur < 0)
		return errno == ENOENT ? 0 : -errno;
	for (;;) {
		int next;

		if (first_child_dir(cur, child)) {
			next = openat(cur, child, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
			if (next < 0 && errno == ENOENT)
				continue;
			if (next < 0) {
				ret = -errno;
				break;
			}
			if (n == cap) {
				nn = realloc(names, (cap ? 2 * cap : 16) * sizeof(*nn));
				if (nn) {
					names = nn;
					cap = cap ? 2 * cap : 16;
				}
			}
			if (n == cap || !(names[n] = strdup(child))) {
				ret = -ENOMEM;
				close(next);
				break;
			}
			n++;
			close(cur);
			cur = next;
			continue;
		}
		if (n == 0)
			break; /* the top has no child left */
		next = openat(cur, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (next < 0) {
			ret = -errno;
			break;
		}
		close(cur);
		cur = next;
		n--;
		if (unlinkat(cur, names[n], AT_REMOVEDIR) && errno != ENOENT)
			ret = -errno;
		free(names[n]);
		if (ret)
			break;
	}
	close(cur);
	while (n)
		free(names[--n]);
	free(names);
	if (ret)
		return ret;
	return rmdir(cg) == 0 || errno == ENOENT ? 0 : -errno;
}

/* Kill everything in the cgroup, wait for it to empty, remove it (retrying on EBUSY). */
int sbx_cgroup_destroy(const char *cg)
{
	int ret = 0;

	sbx_cgroup_kill(cg);
	for (int waited = 0; waited < KILL_WAIT_MS; waited += 10) {
		ret = sbx_cgroup_rmdir_tree(cg);
		if (ret != -EBUSY && ret != -ENOTEMPTY)
			return ret;
		if (waited % 500 == 490)
			sbx_cgroup_kill(cg);
		sbt_sleep_ms(10);
	}
	return ret;
}
