// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The ns sandbox's resource limits: how many processes, how much memory
 * (the tmpfs sizes are ns.c's mounts). Set through the cgroup controllers
 * the host has: the v2 pids and memory controllers on the sandbox's own
 * cgroup when the v2 tree offers them (enabled for sbtrace's subtree), else
 * the v1 pids and memory hierarchies — a hybrid host's — with a cgroup of
 * the sandbox's name in each (<v1>/sbtrace/NAME), which its init joins
 * before anything of the workload runs. run->limits_via says which
 * ("cgroup2", "cgroup1", "none": nothing to set them with, said by the
 * caller). What was hit is read from the controllers' own counters
 * (pids.events max, memory.events oom_kill, v1 memory.failcnt).
 */
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "lib/log.h"

/* The mount point of the v1 hierarchy with controller `ctl`, from /proc/self/mountinfo. */
static int v1_mount(const char *ctl, char *out, size_t len)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096];
	int ret = -ENOENT;

	if (!f)
		return -errno;
	while (ret && fgets(line, sizeof(line), f)) {
		char mnt[PATH_MAX], *sep = strstr(line, " - "), *opts, *o, *save = NULL;

		if (!sep || sscanf(line, "%*s %*s %*s %*s %4095s", mnt) != 1 ||
		    strncmp(sep, " - cgroup ", 10) != 0)
			continue;
		opts = strrchr(sep, ' ');
		if (!opts)
			continue;
		for (o = strtok_r(opts + 1, ",\n", &save); o; o = strtok_r(NULL, ",\n", &save))
			if (strcmp(o, ctl) == 0 && sbx_str_fits(out, len, "%s", mnt))
				ret = 0;
	}
	fclose(f);
	return ret;
}

static int put(const char *dir, const char *knob, const char *val)
{
	char p[PATH_MAX];
	int fd, ret = 0;

	if (!sbx_str_fits(p, sizeof(p), "%s/%s", dir, knob))
		return -ENAMETOOLONG;
	fd = open(p, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, val, strlen(val)) != (ssize_t)strlen(val))
		ret = -errno;
	close(fd);
	return ret;
}

/* A counter of a flat-keyed file ("max 3", "oom_kill 1"), or a single number (key NULL). */
static uint64_t counter(const char *dir, const char *file, const char *key)
{
	char p[PATH_MAX], line[256];
	uint64_t v = 0;
	FILE *f;

	if (!dir[0] || !sbx_str_fits(p, sizeof(p), "%s/%s", dir, file) || !(f = fopen(p, "re")))
		return 0;
	while (fgets(line, sizeof(line), f)) {
		char k[64];
		uint64_t n;

		bool hit = key ? sscanf(line, "%63s %" SCNu64, k, &n) == 2 && strcmp(k, key) == 0
			       : sscanf(line, "%" SCNu64, &n) == 1;

		if (hit)
			v = n;
	}
	fclose(f);
	return v;
}

/* v2: are pids and memory there for sbtrace's subtree (enabled, or enabled now)? */
static bool v2_controllers(const char *cgroup_path)
{
	char parent[PATH_MAX], root[PATH_MAX], *slash;
	char ctl[512] = "";
	FILE *f;

	snprintf(parent, sizeof(parent), "%s", cgroup_path);
	slash = strrchr(parent, '/');
	if (!slash)
		return false;
	*slash = '\0';
	snprintf(root, sizeof(root), "%s", parent);
	slash = strrchr(root, '/');
	if (!slash)
		return false;
	*slash = '\0';
	if (!sbx_str_fits(ctl, sizeof(ctl), "%s/cgroup.controllers", root) ||
	    !(f = fopen(ctl, "re")))
		return false;
	ctl[0] = '\0';
	if (!fgets(ctl, sizeof(ctl), f))
		ctl[0] = '\0';
	fclose(f);
	if (!strstr(ctl, "pids") || !strstr(ctl, "memory"))
		return false;
	/* the root offers them to its children, sbtrace/ to the sandboxes */
	put(root, "cgroup.subtree_control", "+pids +memory");
	return put(parent, "cgroup.subtree_control", "+pids +memory") == 0;
}

int sbx_limits_prepare(const struct sbt_sandbox_spec *spec, struct sbt_sandbox_run *run, char *err,
		       size_t errlen)
{
	const struct sbt_sandbox_limits *l = &spec->limits;
	char pids[32], mem[32], base[PATH_MAX];
	const char *ctl[2] = { "pids", "memory" };
	char *dirs[2] = { run->v1_pids, run->v1_memory };
	int ret;

	snprintf(pids, sizeof(pids), "%" PRIu32, l->pids);
	snprintf(mem, sizeof(mem), "%" PRIu64, l->memory);
	if (v2_controllers(run->cgroup_path)) {
		ret = put(run->cgroup_path, "pids.max", l->pids ? pids : "max");
		if (!ret)
			ret = put(run->cgroup_path, "memory.max", l->memory ? mem : "max");
		if (!ret)
			put(run->cgroup_path, "memory.swap.max", "0"); /* no swap past the limit */
		if (ret)
			return sbx_seterr(err, errlen, ret, "cgroup %s: the limits: %s",
					  run->cgroup_path, strerror(-ret));
		snprintf(run->limits_via, sizeof(run->limits_via), "cgroup2");
		return 0;
	}
	for (int i = 0; i < 2; i++) {
		if (v1_mount(ctl[i], base, sizeof(base)))
			continue;
		if (!sbx_str_fits(dirs[i], PATH_MAX, "%s/sbtrace", base) ||
		    (mkdir(dirs[i], 0755) && errno != EEXIST) ||
		    !sbx_str_fits(dirs[i], PATH_MAX, "%s/sbtrace/%s", base, run->name))
			return sbx_seterr(err, errlen, -errno, "cgroup v1 %s: %s", ctl[i],
					  strerror(errno));
		/* a dead sandbox's of the same name: its counters are not this one's */
		if (mkdir(dirs[i], 0755) &&
		    (errno != EEXIST || rmdir(dirs[i]) || mkdir(dirs[i], 0755))) {
			ret = sbx_seterr(err, errlen, -errno, "create cgroup %s: %s", dirs[i],
					 strerror(errno));
			dirs[i][0] = '\0';
			return ret;
		}
		ret = i == 0 ? put(dirs[i], "pids.max", l->pids ? pids : "max")
			     : put(dirs[i], "memory.limit_in_bytes", l->memory ? mem : "-1");
		if (ret)
			return sbx_seterr(err, errlen, ret, "cgroup %s: its limit: %s", dirs[i],
					  strerror(-ret));
	}
	snprintf(run->limits_via, sizeof(run->limits_via), "%s",
		 run->v1_pids[0] && run->v1_memory[0]	? "cgroup1"
		 : run->v1_pids[0] || run->v1_memory[0] ? "cgroup1_partial"
							: "none");
	return 0;
}

int sbx_limits_join(struct sbt_sandbox_run *run, pid_t pid, char *err, size_t errlen)
{
	char s[24];

	snprintf(s, sizeof(s), "%d", (int)pid);
	for (int i = 0; i < 2; i++) {
		const char *d = i ? run->v1_memory : run->v1_pids;
		int ret = d[0] ? put(d, "cgroup.procs", s) : 0;

		if (ret)
			return sbx_seterr(err, errlen, ret, "join cgroup %s: %s", d,
					  strerror(-ret));
	}
	return 0;
}

void sbt_sandbox_limits_read(struct sbt_sandbox_run *run)
{
	struct sbt_limit_hits h = { 0 };

	if (strcmp(run->limits_via, "cgroup2") == 0 && run->cgroup_path[0]) {
		h.pids = counter(run->cgroup_path, "pids.events", "max");
		h.memory = counter(run->cgroup_path, "memory.events", "max");
		h.oom_kills = counter(run->cgroup_path, "memory.events", "oom_kill");
	} else {
		h.pids = counter(run->v1_pids, "pids.events", "max");
		h.memory = counter(run->v1_memory, "memory.failcnt", NULL);
		h.oom_kills = counter(run->v1_memory, "memory.oom_control", "oom_kill");
	}
	/* counters only grow: a read after the cgroups went keeps the last */
	if (h.pids > run->hits.pids)
		run->hits.pids = h.pids;
	if (h.memory > run->hits.memory)
		run->hits.memory = h.memory;
	if (h.oom_kills > run->hits.oom_kills)
		run->hits.oom_kills = h.oom_kills;
}

void sbx_limits_destroy(struct sbt_sandbox_run *run)
{
	char *dirs[2] = { run->v1_pids, run->v1_memory };

	for (int i = 0; i < 2; i++)
		if (dirs[i][0] && (rmdir(dirs[i]) == 0 || errno == ENOENT))
			dirs[i][0] = '\0';
}

/* N, N[kKmMgGtT] (binary units) or "max"; UINT64_MAX for max. */
static bool parse_size(const char *arg, bool units, uint64_t *out)
{
	char *end;
	unsigned long long v;
	int shift = 0;

	if (strcmp(arg, "max") == 0) {
		*out = UINT64_MAX;
		return true;
	}
	if (arg[0] < '0' || arg[0] > '9')
		return false;
	errno = 0;
	v = strtoull(arg, &end, 10);
	if (errno || end == arg)
		return false;
	if (units && *end) {
		const char *u = strchr("kmgt", end[0] | 0x20);

		if (!u || end[1])
			return false;
		shift = 10 * (int)(u - "kmgt" + 1);
		end++;
	}
	if (*end || v == 0 || v > (UINT64_MAX >> 1) >> shift)
		return false;
	*out = (uint64_t)v << shift;
	return true;
}

int sbt_sandbox_limit_parse(struct sbt_sandbox_limits *l, const char *what, const char *arg)
{
	uint64_t v;

	if (strcmp(what, "pids") == 0) {
		if (!parse_size(arg, false, &v) || (v != UINT64_MAX && v > 4194304))
			return -EINVAL;
		l->pids = v == UINT64_MAX ? UINT32_MAX : (uint32_t)v;
		return 0;
	}
	if (!parse_size(arg, true, &v) || (v != UINT64_MAX && v < (1u << 20)))
		return -EINVAL;
	if (strcmp(what, "memory") == 0)
		l->memory = v;
	else if (strcmp(what, "tmpfs") == 0 && v != UINT64_MAX)
		l->tmpfs = v;
	else
		return -EINVAL;
	return 0;
}

int sbx_limits_gc(bool verbose)
{
	const char *ctl[2] = { "pids", "memory" };
	char v2[PATH_MAX], base[PATH_MAX], top[PATH_MAX], cg[PATH_MAX], twin[PATH_MAX];
	struct stat st;
	int count = 0;

	if (sbx_cgroup2_mount(v2, sizeof(v2)))
		return 0;
	for (int i = 0; i < 2; i++) {
		struct dirent *de;
		DIR *d;

		if (v1_mount(ctl[i], base, sizeof(base)) ||
		    !sbx_str_fits(top, sizeof(top), "%s/sbtrace", base) || !(d = opendir(top)))
			continue;
		while ((de = readdir(d))) {
			/* a sandbox makes its v2 cgroup first: a v1 one without it is a leftover */
			if (!sbt_sandbox_name_ok(de->d_name) ||
			    !sbx_str_fits(cg, sizeof(cg), "%s/%s", top, de->d_name) ||
			    !sbx_str_fits(twin, sizeof(twin), "%s/sbtrace/%s", v2, de->d_name) ||
			    lstat(twin, &st) == 0 || rmdir(cg))
				continue;
			count++;
			if (verbose)
				sbt_log("removed cgroup %s", cg);
		}
		closedir(d);
	}
	return count;
}
