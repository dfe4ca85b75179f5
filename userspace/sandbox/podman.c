// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The podman backend (see sandbox.h): the same cgroup, pipes and clone3 as
 * the others, but CLONE_INTO_CGROUP alone: the child keeps the host's
 * namespaces, root and capabilities (a container engine needs them) and a
 * declared environment (envset.h). It sets up its stdio, signals,
 * PR_SET_PDEATHSIG and setsid, closes every other fd, reports ready and blocks on the go pipe
 * exactly like the ns backend's init; after go it becomes the tool itself
 * (sbt_exec(SBT_EXEC_HOST): only an allowlisted program), so run->pid is the
 * tool and its exit status is the workload's. Nothing executes in the cgroup
 * before go. The containers the tool starts are placed below the cgroup by
 * the caller (--cgroup-parent); runc also creates that path in every v1
 * hierarchy on a hybrid system, so destroy (and gc) remove
 * <v1 mount>/sbtrace/NAME trees as well.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/extbin.h"
#include "internal.h"
#include "sandbox/name.h"

/* The host tool gets a declared environment too: the default set and its configuration. */
static int podman_prepare(struct sbx_child *c, struct sbt_sandbox_run *run, const char *sdir,
			  char *err, size_t errlen)
{
	return sbx_declared_env(c, SBT_ENV_HOST_TOOL, false, err, errlen);
}

static void podman_release(struct sbx_child *c, struct sbt_sandbox_run *run, bool failed)
{
	sbt_env_free(&c->env);
	c->envp = NULL;
}

/* The child: the caller's privileges, waits for go, then the tool. */
static void podman_main(struct sbx_child *c) __attribute__((noreturn));

static void podman_main(struct sbx_child *c)
{
	int keep[] = { 0, 1, 2, c->ready_w, c->go_r };
	int ret;

	sbx_child_start(c, "sandbox-tool");
	ret = sbx_child_stdio(c->spec);
	if (ret)
		sbx_child_fail(c, -ret, "stdio: %s", strerror(-ret));
	if (chdir(c->cwd))
		sbx_child_fail(c, errno, "chdir %s: %s", c->cwd, strerror(errno));
	sbx_close_fds_except(keep, (int)(sizeof(keep) / sizeof(keep[0])));

	sbx_ready_then_wait_go(c);
	sbx_child_exec(c, SBT_EXEC_HOST, c->spec->argv);
}

/*
 * runc (cgroupfs manager) on a hybrid system creates a container's cgroup
 * path in every v1 hierarchy too, and leaves the parents it made: remove the
 * (empty) trees <v1 mount><name> of the hierarchies mounted at their root.
 */
static void cgroup_v1_remove(const char *name)
{
	char *mi = sbx_slurp("/proc/self/mountinfo", 16u << 20, NULL), *line, *next, path[PATH_MAX];

	if (!mi || name[0] != '/' || !name[1])
		goto out;
	for (line = mi; line && *line; line = next) {
		char *f[6], *save = NULL, *sep;
		int n = 0;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		/* id parent maj:min root mnt opts ... - fstype source superopts */
		sep = strstr(line, " - ");
		if (!sep || strncmp(sep + 3, "cgroup ", 7) != 0)
			continue;
		*sep = '\0';
		for (char *t = strtok_r(line, " ", &save); t && n < 6;
		     t = strtok_r(NULL, " ", &save))
			f[n++] = t;
		if (n < 5 || strcmp(f[3], "/") != 0 || strchr(f[4], '\\'))
			continue;
		if (sbx_str_fits(path, sizeof(path), "%s%s", f[4], name))
			sbx_cgroup_rmdir_tree(path);
	}
out:
	free(mi);
}

static void podman_destroy(struct sbt_sandbox_run *run)
{
	if (run->cgroup_name[0])
		cgroup_v1_remove(run->cgroup_name);
}

static void podman_gc(const char *state_dir, const struct sbt_sandbox_state *st)
{
	char cg_name[SBT_SANDBOX_NAME_MAX + 16];

	snprintf(cg_name, sizeof(cg_name), "/sbtrace/%s", st->name);
	cgroup_v1_remove(cg_name);
}

/* A podman query's stdout into out. 0, or -1 (no podman, or it failed). */
static int podman_query(char *const *argv, char *out, size_t len)
{
	char err[512];
	struct sbt_run_io io = {
		.out = out, .out_len = len, .err = err, .err_len = sizeof(err), .timeout_ms = 30000
	};
	int status;

	if (sbt_run(argv, &io, &status) < 0 || sbt_exit_code(status))
		return -1;
	return 0;
}

/* The sandbox NAME is gone, cgroup and all: what podman still holds of it is an orphan. */
static bool sandbox_gone(const char *name, size_t len)
{
	char mnt[PATH_MAX], n[SBT_SANDBOX_NAME_MAX + 1], path[PATH_MAX + SBT_SANDBOX_NAME_MAX + 16];

	if (!len || len > SBT_SANDBOX_NAME_MAX)
		return false;
	memcpy(n, name, len);
	n[len] = '\0';
	if (!sbt_sandbox_name_ok(n) || sbx_cgroup2_mount(mnt, sizeof(mnt)) ||
	    !sbx_str_fits(path, sizeof(path), "%s/sbtrace/%s", mnt, n))
		return false;
	return access(path, F_OK) && errno == ENOENT;
}

static void podman_remove(const char *cmd, const char *id, bool verbose)
{
	char *rm[] = { "podman", (char *)cmd, "-f", (char *)id, NULL }, out[256];

	if (podman_query(rm, out, sizeof(out)) == 0 && verbose)
		fprintf(stderr, "sbtrace-shim gc: podman %s %s\n", cmd, id);
}

/*
 * buildah's working containers of a build whose sandbox is gone (a probe
 * killed during a RUN step). `podman ps --external` lists them without
 * labels (podman build puts --label on the image only); their buildah.json
 * in podman's store holds the build's --cgroup-parent, /sbtrace/NAME/build.
 */
static void working_containers_gc(const char *only, bool verbose)
{
	static const char key[] = "\"CgroupParent\":\"/sbtrace/";
	char *info[] = { "podman", "info", "--format",
			 "{{.Store.GraphRoot}}/{{.Store.GraphDriverName}}", NULL };
	char *ps[] = {
		"podman", "ps", "-a", "--external", "--no-trunc", "--format", "{{.ID}}", NULL
	};
	static char ids[64 * 1024];
	char store[PATH_MAX], path[PATH_MAX + 128], *save = NULL;

	if (podman_query(info, store, sizeof(store)) || podman_query(ps, ids, sizeof(ids)))
		return;
	store[strcspn(store, "\n")] = '\0';
	for (char *id = strtok_r(ids, "\n", &save); id; id = strtok_r(NULL, "\n", &save)) {
		char *json, *at;

		if (strspn(id, "0123456789abcdef") != 64 || id[64] ||
		    !sbx_str_fits(path, sizeof(path), "%s-containers/%s/userdata/buildah.json",
				  store, id))
			continue;
		json = sbx_slurp(path, 4u << 20, NULL);
		at = json ? strstr(json, key) : NULL;
		if (at) {
			size_t len = strcspn(at += sizeof(key) - 1, "/\"");

			if ((!only || (strlen(only) == len && !strncmp(at, only, len))) &&
			    sandbox_gone(at, len))
				podman_remove("rm", id, verbose);
		}
		free(json);
	}
}

/* Images labelled sbtrace.probe=NAME (the probe's builds) whose sandbox is gone. */
static void labelled_images_gc(bool verbose)
{
	char *images[] = { "podman",   "images",
			   "-a",       "--no-trunc",
			   "--filter", "label=sbtrace.probe",
			   "--format", "{{.ID}} {{index .Labels \"sbtrace.probe\"}}",
			   NULL };
	static char lines[64 * 1024];
	char *save = NULL;

	if (podman_query(images, lines, sizeof(lines)))
		return;
	for (char *l = strtok_r(lines, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char *name = strchr(l, ' ');

		if (!name)
			continue;
		*name++ = '\0';
		if (sandbox_gone(name, strlen(name)))
			podman_remove("rmi", l, verbose);
	}
}

/* What the engine keeps of sandboxes that are gone (after their gc, or a gc long ago). */
static void podman_gc_orphans(const char *state_dir, bool verbose)
{
	working_containers_gc(NULL, verbose);
	labelled_images_gc(verbose);
}

void sbt_podman_remove_working(const char *name)
{
	working_containers_gc(name, false);
}

static const char *const podman_tools[] = { "podman", "docker", NULL };

const struct sbt_backend_ops sbx_podman_ops = {
	.name = "podman",
	.caps = {
		.execs_on_host = true,
		.net_modes = SBT_NET_MODE(SBT_NET_NONE),
		.no_net_why = "podman has its own",
		.workspace = SBT_WORKSPACE_NONE,
		.host_tools = podman_tools, /* each an allowlisted one (extbin.h) */
		.gc_state = true, /* the v1 hierarchies' cgroups runc made */
	},
	.prepare = podman_prepare,
	.release = podman_release,
	.child_main = podman_main,
	.destroy = podman_destroy,
	.gc = podman_gc,
	.gc_orphans = podman_gc_orphans,
};
