// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * sbtrace-shim gc: sandboxes whose controller (shim or probe) is gone are
 * killed and removed with their state files, and what each backend leaves
 * besides (struct sbt_backend_ops gc, gc_orphans); empty cgroups under
 * <v2>/sbtrace/ that no state file names are removed too, and last the
 * pinned links (pins.h) of sandboxes whose cgroup is gone, and the probe's
 * network namespaces and build contexts' copies whose probe is gone.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "lib/cgroupfs.h"
#include "lib/clock.h"
#include "internal.h"
#include "sandbox/pins.h"
#include "lib/log.h"
#include "lib/treecopy.h"
/* Start of process `pid` in CLOCK_REALTIME ns, from /proc/PID/stat; 0 if unknown. */
static uint64_t proc_start_ns(pid_t pid)
{
	char path[64], *stat, *p;
	unsigned long long ticks = 0;
	long hz = sysconf(_SC_CLK_TCK);

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	stat = sbx_slurp(path, 1u << 16, NULL);
	if (!stat)
		return 0;
	p = strrchr(stat, ')'); /* comm may hold spaces and parentheses */
	if (p) {
		/* after ')': field 3 (state) ... field 22 (starttime) */
		for (int field = 2; field < 22 && p; field++)
			p = strchr(p + 1, ' ');
		if (p)
			ticks = strtoull(p + 1, NULL, 10);
	}
	free(stat);
	if (!ticks || hz <= 0)
		return 0;
	return sbt_clock_ns(CLOCK_REALTIME) - sbt_clock_ns(CLOCK_BOOTTIME) +
	       ticks * (1000000000ull / (unsigned long long)hz);
}

/* Is the sandbox's controller still there (not a recycled pid)? */
static bool shim_alive(const struct sbt_sandbox_state *st)
{
	char path[64], *comm;
	bool ours;
	uint64_t started;

	if (kill(st->shim_pid, 0) && errno == ESRCH)
		return false;
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)st->shim_pid);
	comm = sbx_slurp(path, 4096, NULL);
	if (!comm)
		return errno != ENOENT && errno != ESRCH;
	comm[strcspn(comm, "\n")] = '\0';
	ours = strcmp(comm, "sbtrace-shim") == 0 || strcmp(comm, "sbtrace") == 0;
	free(comm);
	if (!ours)
		return false;
	/* The controller starts before its sandbox; 2 s of slack for clock steps. */
	started = proc_start_ns(st->shim_pid);
	return !started || started <= st->start_ns + 2000000000ull;
}

/* The sandbox of state file `file` (STATE_DIR/NAME.json), if its shim is gone: 1 when removed. */
static int gc_one(const char *dir, const char *name, const char *file, bool verbose)
{
	char err[PATH_MAX + 256], path[PATH_MAX], fifo[PATH_MAX];
	const struct sbt_backend_ops *ops;
	struct sbt_sandbox_state st;
	int ret;

	if (sbx_state_parse(dir, name, &st, false, err, sizeof(err))) {
		if (verbose)
			sbt_log("skipping %s", err);
		return 0;
	}
	if (shim_alive(&st))
		return 0;
	/* Only the recorded cgroup: same path and the same id. */
	if (sbt_cgroup_id(st.cgroup_path) == st.cgroup_id) {
		ret = sbx_cgroup_destroy(st.cgroup_path);
		if (ret && ret != -ENOENT) {
			sbt_log("sandbox %s: cannot remove %s: %s", name, st.cgroup_path,
				strerror(-ret));
			return 0;
		}
	}
	ops = sbx_backend_by_name(st.backend);
	if (ops && ops->gc)
		ops->gc(dir, &st);
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	sbx_attach_path(path, fifo, sizeof(fifo));
	if (fifo[0])
		unlink(fifo);
	if (unlink(path) && errno != ENOENT)
		return 0;
	if (verbose)
		sbt_log("removed sandbox %s (shim %d gone; cgroup %s)", name, (int)st.shim_pid,
			st.cgroup_path);
	return 1;
}

static int gc_state_files(const char *dir, bool verbose)
{
	struct dirent *de;
	int count = 0, ret;
	DIR *d;

	ret = sbx_check_state_dir(dir, false);
	if (ret == -ENOENT)
		return 0;
	if (ret) {
		sbt_log("state dir %s: %s", dir, strerror(-ret));
		return ret;
	}
	d = opendir(dir);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		size_t n = strlen(de->d_name);
		char name[SBT_SANDBOX_NAME_MAX + 1];

		if (n <= 5 || n - 5 > SBT_SANDBOX_NAME_MAX ||
		    strcmp(de->d_name + n - 5, ".json") != 0)
			continue;
		snprintf(name, sizeof(name), "%.*s", (int)(n - 5), de->d_name);
		if (sbt_sandbox_name_ok(name))
			count += gc_one(dir, name, de->d_name, verbose);
	}
	closedir(d);
	return count;
}
/* A probe's pid whose process is gone, or recycled (its comm is not sbtrace). */
static bool probe_gone(long pid)
{
	char comm_path[64], *comm;
	bool ours = false;

	snprintf(comm_path, sizeof(comm_path), "/proc/%ld/comm", pid);
	comm = sbx_slurp(comm_path, 4096, NULL);
	if (comm) {
		comm[strcspn(comm, "\n")] = '\0';
		ours = strcmp(comm, "sbtrace") == 0;
		free(comm);
	}
	return !ours;
}

/* The pid in NAME when it is PREFIX<pid>END..., with END the rest's first byte; else 0. */
static long name_pid(const char *name, const char *prefix, char end)
{
	size_t n = strlen(prefix);
	char *e;
	long pid;

	if (strncmp(name, prefix, n) != 0 || !name[n])
		return 0;
	pid = strtol(name + n, &e, 10);
	return *e == end && pid > 0 ? pid : 0;
}

/*
 * Empty cgroups under <v2>/sbtrace/ that no state file names, and the
 * cgroups of the probe's relays (probe-net-PID, probe/net.c) whose probe is
 * gone, whatever their age (the relay ends with its probe: --exit-fd).
 */
static int gc_orphan_cgroups(const char *dir, bool verbose)
{
	char mnt_point[PATH_MAX], top[PATH_MAX], cg[PATH_MAX], sf[PATH_MAX];
	struct dirent *de;
	struct stat st;
	int count = 0;
	DIR *d;

	if (sbx_cgroup2_mount(mnt_point, sizeof(mnt_point)) ||
	    !sbx_str_fits(top, sizeof(top), "%s/sbtrace", mnt_point))
		return 0;
	d = opendir(top);
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		if (!sbt_sandbox_name_ok(de->d_name) ||
		    !sbx_str_fits(cg, sizeof(cg), "%s/%s", top, de->d_name) ||
		    !sbx_str_fits(sf, sizeof(sf), "%s/%s.json", dir, de->d_name))
			continue;
		long pid = name_pid(de->d_name, "probe-net-", '\0');

		if (pid) {
			if (!probe_gone(pid) || sbx_cgroup_destroy(cg))
				continue;
			count++;
			if (verbose)
				sbt_log("removed cgroup %s (probe %ld gone)", cg, pid);
			continue;
		}
		/* A sandbox being started has its cgroup before its first process. */
		if (lstat(sf, &st) == 0 || !sbx_cgroup_leftover(cg))
			continue;
		if (sbx_cgroup_rmdir_tree(cg) == 0) {
			count++;
			if (verbose)
				sbt_log("removed empty cgroup %s", cg);
		}
	}
	closedir(d);
	return count;
}

/*
 * The probe's network namespaces (`ip netns` names sbtrace-probe-PID, the
 * microVM's tap, and sbtrace-probe-net-PID, the build's) whose probe is
 * gone: unmounted and unlinked as `ip netns del` does. A live pid whose comm
 * is not sbtrace is a recycled one: its namespace is a leftover too.
 */
static int gc_orphan_netns(bool verbose)
{
	static const char dir[] = "/run/netns";
	struct dirent *de;
	int count = 0;
	DIR *d = opendir(dir);

	if (!d)
		return 0;
	while ((de = readdir(d))) {
		long pid = name_pid(de->d_name, "sbtrace-probe-net-", '\0');
		char path[PATH_MAX];

		if (!pid && strncmp(de->d_name, "sbtrace-probe-net-", 18) != 0)
			pid = name_pid(de->d_name, "sbtrace-probe-", '\0');
		if (!pid || !probe_gone(pid) ||
		    !sbx_str_fits(path, sizeof(path), "%s/%s", dir, de->d_name))
			continue;
		umount2(path, MNT_DETACH);
		if (unlink(path) == 0) {
			count++;
			if (verbose)
				sbt_log("removed network namespace %s (probe %ld gone)", de->d_name,
					pid);
		}
	}
	closedir(d);
	return count;
}

/*
 * The copies of the repo a Dockerfile build used as its context
 * (sbtrace-ctx-PID.XXXXXX in /var/tmp, or in $SBTRACE_CONTEXT_DIR: the
 * probe's kind_dockerfile.c) whose probe is gone.
 */
static int gc_orphan_contexts(bool verbose)
{
	const char *env = getenv("SBTRACE_CONTEXT_DIR"), *dirs[] = { "/var/tmp", NULL };
	int count = 0;

	if (env && env[0] == '/' && strcmp(env, dirs[0]) != 0)
		dirs[1] = env;
	for (int i = 0; i < 2 && dirs[i]; i++) {
		DIR *d = opendir(dirs[i]);
		struct dirent *de;

		while (d && (de = readdir(d))) {
			long pid = name_pid(de->d_name, "sbtrace-ctx-", '.');
			char path[PATH_MAX];

			if (!pid || !probe_gone(pid) ||
			    !sbx_str_fits(path, sizeof(path), "%s/%s/store/overlay", dirs[i],
					  de->d_name))
				continue;
			/* a microVM build's image store: the overlay driver's own mount */
			umount2(path, MNT_DETACH | UMOUNT_NOFOLLOW);
			path[strlen(path) - strlen("/store/overlay")] = '\0';
			if (sbt_tree_remove(path) == 0) {
				count++;
				if (verbose)
					sbt_log("removed build context %s (probe %ld gone)", path,
						pid);
			}
		}
		if (d)
			closedir(d);
	}
	return count;
}

int sbt_sandbox_gc(const char *state_dir, bool verbose)
{
	const char *dir = state_dir ? state_dir : SBT_STATE_DIR_DEFAULT;
	int n = gc_state_files(dir, verbose);

	if (n < 0)
		return n;
	for (int b = 0; b < SBT_BACKEND__MAX; b++) {
		const struct sbt_backend_ops *ops = sbx_backend((enum sbt_sandbox_backend)b);

		if (ops->gc_orphans)
			ops->gc_orphans(dir, verbose);
	}
	n += gc_orphan_cgroups(dir, verbose);
	n += sbx_limits_gc(verbose);
	n += gc_orphan_netns(verbose);
	n += gc_orphan_contexts(verbose);
	return n + sbt_pin_gc(verbose);
}
