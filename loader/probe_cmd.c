// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * `sbtrace probe REPO`: run the repo's build in a fresh sandbox under trace
 * and print one JSON report: does this build invoke a shell — can the image
 * go distroless? (ADR-0002: typed failures, warning ids, content cache.)
 *
 * Start-up overlaps the two slow parts: the sandbox child sets itself up
 * (namespaces, mounts) while this process loads the BPF object; the
 * workload's first exec waits until the trace is attached.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "events.h"
#include "extbin.h"
#include "loader.h"
#include "policy.h"
#include "probe.h"
#include "probe_cmd.h"
#include "sandbox.h"
#include "trace.h"

#define PROBE_NAME  "ShellInvocationTraceProbe"
#define WARN_PREFIX "shell_invocation_trace."

struct probe_ctx {
	struct sbt_sandbox_run run;
	bool started, released, exited, boot_failed, quiet;
	int status;
	uint64_t t0_ms, go_ms, last_progress_ms, timeout_ms;
	uint64_t t0_epoch_ns;
	char boot_err[512];
	bool timed_out;
	int console_out; /* the qemu backend: where the guest's console goes */
};

static void progress(const struct probe_ctx *p, const char *fmt, const char *arg)
{
	if (p->quiet)
		return;
	fprintf(stderr, "sbtrace probe: [%5.1f s] ", (double)(sbt_mono_ms() - p->t0_ms) / 1000.0);
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
}

/* Attached: let the workload exec, once its sandbox is set up. */
static void on_attached(void *arg)
{
	struct probe_ctx *p = arg;

	if (sbt_sandbox_ready(&p->run, p->boot_err, sizeof(p->boot_err)) < 0 ||
	    sbt_sandbox_go(&p->run) < 0) {
		p->boot_failed = true;
		if (!p->boot_err[0])
			snprintf(p->boot_err, sizeof(p->boot_err), "cannot release the workload");
		return;
	}
	p->released = true;
	p->go_ms = sbt_mono_ms();
	p->last_progress_ms = p->go_ms;
	progress(p, "sandbox up, tracing; build running%s", "");
}

/*
 * The qemu backend: the workload's exit code comes from the guest's console
 * (SBT-GUEST-EXIT), qemu's own from waitpid; a VM that ends without the
 * marker never ran the workload to its end: a boot failure.
 */
static void vm_exited(struct probe_ctx *p)
{
	while (sbt_sandbox_console(&p->run, p->console_out) > 0)
		;
	if (p->run.con.phase == SBT_VM_EXITED) {
		p->status = (p->run.con.exit_code & 0xff) << 8; /* as waitpid() has it */
		return;
	}
	p->boot_failed = true;
	snprintf(p->boot_err, sizeof(p->boot_err),
		 "the VM ended before the workload finished (qemu status %d): %.300s", p->status,
		 p->run.con.tail_len ? p->run.con.tail : "no console output");
}

static const char *on_tick(void *arg)
{
	struct probe_ctx *p = arg;
	uint64_t now = sbt_mono_ms();

	if (p->boot_failed)
		return "sandbox_boot_failed";
	if (p->run.backend == SBT_BACKEND_QEMU)
		while (sbt_sandbox_console(&p->run, p->console_out) > 0)
			;
	if (sbt_sandbox_wait(&p->run, &p->status, 0) == 0) {
		p->exited = true;
		if (p->run.backend == SBT_BACKEND_QEMU) {
			vm_exited(p);
			if (p->boot_failed)
				return "sandbox_boot_failed";
		}
		return "workload_exited";
	}
	if (p->timeout_ms && now - p->go_ms > p->timeout_ms) {
		p->timed_out = true;
		return "timeout";
	}
	if (!p->quiet && now - p->last_progress_ms >= 5000) {
		char buf[32];

		p->last_progress_ms = now;
		snprintf(buf, sizeof(buf), "%.0f", (double)(now - p->go_ms) / 1000.0);
		progress(p, "build running (%s s)", buf);
	}
	return NULL;
}

static void add_warning(json_object *warnings, const char *id, const char *message)
{
	json_object *w = json_object_new_object();
	char full[96];

	snprintf(full, sizeof(full), WARN_PREFIX "%s", id);
	json_object_object_add(w, "id", json_object_new_string(full));
	json_object_object_add(w, "message", sbt_json_string(message));
	json_object_array_add(warnings, w);
}

static json_object *argv_json(char *const *argv)
{
	json_object *a = json_object_new_array();

	for (; argv && *argv; argv++)
		json_object_array_add(a, sbt_json_string(*argv));
	return a;
}

static const char *kind_name(enum sbt_build_kind k)
{
	switch (k) {
	case SBT_BUILD_CMD:
		return "cmd";
	case SBT_BUILD_DOCKERFILE:
		return "dockerfile";
	case SBT_BUILD_NPM:
		return "npm";
	case SBT_BUILD_MAKE:
		return "make";
	}
	return "?";
}

/* Egress summary from the trace's event file: allowed/denied counts and denied destinations. */
static json_object *egress_summary(const char *events_path, const char *mode)
{
	json_object *o = json_object_new_object(), *denied = json_object_new_array();
	uint64_t n_allowed = 0, n_denied = 0, n_observed = 0;
	FILE *f = events_path ? fopen(events_path, "re") : NULL;
	char *line = NULL;
	size_t cap = 0;

	while (f && getline(&line, &cap, f) > 0) {
		json_object *ev = json_tokener_parse(line), *v;
		const char *name;
		int64_t count = 1;

		if (!ev)
			continue;
		name = json_object_object_get_ex(ev, "event", &v) ? json_object_get_string(v) : "";
		if (json_object_object_get_ex(ev, "count", &v))
			count = json_object_get_int64(v);
		if (strcmp(name, "EgressAllowed") == 0) {
			n_allowed += (uint64_t)count;
		} else if (strcmp(name, "EgressObserved") == 0) {
			n_observed += (uint64_t)count;
		} else if (strcmp(name, "EgressDenied") == 0) {
			json_object *d = json_object_new_object();

			n_denied += (uint64_t)count;
			if (json_object_array_length(denied) < 64) {
				const char *keys[] = { "daddr", "dport", "proto", "reason",
						       "comm" };

				for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
					if (json_object_object_get_ex(ev, keys[i], &v))
						json_object_object_add(d, keys[i],
								       json_object_get(v));
				json_object_array_add(denied, d);
			} else {
				json_object_put(d);
			}
		}
		json_object_put(ev);
	}
	free(line);
	if (f)
		fclose(f);
	json_object_object_add(o, "mode", json_object_new_string(mode));
	json_object_object_add(o, "allowed", json_object_new_uint64(n_allowed));
	json_object_object_add(o, "denied", json_object_new_uint64(n_denied));
	json_object_object_add(o, "observed", json_object_new_uint64(n_observed));
	json_object_object_add(o, "denied_destinations", denied);
	return o;
}

/*
 * A writable view of the repo without touching it: an overlay whose upper
 * layer is thrown away. Falls back to the repo read-only (reported).
 */
struct workspace {
	char dir[64]; /* temp dir holding upper, work, merged */
	char merged[PATH_MAX];
	bool mounted;
};

static int workspace_setup(struct workspace *ws, const char *repo)
{
	char upper[96], work[96], opts[PATH_MAX + 256];

	snprintf(ws->dir, sizeof(ws->dir), "/tmp/sbtrace-probe.XXXXXX");
	if (!mkdtemp(ws->dir))
		return -errno;
	snprintf(upper, sizeof(upper), "%s/upper", ws->dir);
	snprintf(work, sizeof(work), "%s/work", ws->dir);
	snprintf(ws->merged, sizeof(ws->merged), "%s/merged", ws->dir);
	if (mkdir(upper, 0755) || mkdir(work, 0755) || mkdir(ws->merged, 0755))
		return -errno;
	if ((size_t)snprintf(opts, sizeof(opts), "lowerdir=%s,upperdir=%s,workdir=%s", repo, upper,
			     work) >= sizeof(opts))
		return -ENAMETOOLONG;
	if (mount("overlay", ws->merged, "overlay", MS_NODEV | MS_NOSUID, opts) < 0)
		return -errno;
	ws->mounted = true;
	return 0;
}

static int rm_tree(const char *path, int depth);

static void workspace_teardown(struct workspace *ws)
{
	if (ws->mounted)
		umount2(ws->merged, MNT_DETACH);
	ws->mounted = false;
	if (ws->dir[0])
		rm_tree(ws->dir, 0);
	ws->dir[0] = '\0';
}

/* rm -rf without following symlinks (the upper layer holds what the build wrote). */
static int rm_tree(const char *path, int depth)
{
	struct stat st;
	DIR *d;
	struct dirent *e;

	if (lstat(path, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode) || depth > 64)
		return unlink(path) ? -errno : 0;
	d = opendir(path);
	if (d) {
		while ((e = readdir(d))) {
			char sub[PATH_MAX];

			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
				continue;
			if ((size_t)snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name) >=
			    sizeof(sub))
				continue;
			rm_tree(sub, depth + 1);
		}
		closedir(d);
	}
	return rmdir(path) ? -errno : 0;
}

/* ---- the podman backend: Dockerfile builds ------------------------------ */

#define DF_MAX_IMAGES	8
#define DF_IMAGE_MAX	256
#define DF_MAX_BYTES	(1u << 20)
#define TOOL_TIMEOUT_MS 30000

enum engine { ENGINE_NONE = 0, ENGINE_PODMAN, ENGINE_DOCKER };

/* What the build of the target stage needs: base images, and whether any RUN runs. */
struct df_info {
	int nr_images;
	char images[DF_MAX_IMAGES][DF_IMAGE_MAX];
	char ids[DF_MAX_IMAGES][65]; /* their image ids (hex), once inspected */
	int nr_runs;		     /* RUN instructions in the stages up to the target */
	char stages[16][64];	     /* stage names seen so far (FROM ... AS NAME) */
	int nr_stages;
	bool in_target, done;
};

/* A host tool's exit code (128+signal), -ETIMEDOUT or -errno; output captured into out/errout. */
static int tool_code(char *const *argv, char *out, size_t outlen, char *errout, size_t errlen,
		     int timeout_ms)
{
	struct sbt_run_io io = { .out = out,
				 .out_len = outlen,
				 .err = errout,
				 .err_len = errlen,
				 .timeout_ms = timeout_ms };
	int status = 0, rc = sbt_run(argv, &io, &status);

	return rc ? rc : sbt_exit_code(status);
}

static void msgf(char *msg, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* snprintf for messages that may be cut. */
static void msgf(char *msg, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, len, fmt, ap);
	va_end(ap);
}

/* The first line of a tool's message, trimmed (for a warning). */
static const char *first_line(char *s)
{
	size_t n;

	s += strspn(s, " \t\r\n");
	n = strcspn(s, "\r\n");
	s[n] = '\0';
	return s;
}

/* One logical Dockerfile instruction: FROM (stages, base images) and RUN (counted). */
static void df_instruction(struct df_info *df, const char *target, char *line)
{
	char *tok[4], *save = NULL, *t;
	int n = 0;

	t = strtok_r(line, " \t\v\f", &save);
	if (!t || df->done)
		return;
	if (strcasecmp(t, "RUN") == 0) {
		if (df->nr_stages > 0 || df->in_target)
			df->nr_runs++;
		return;
	}
	if (strcasecmp(t, "FROM") != 0)
		return;
	if (df->in_target) { /* stages after the target are not built */
		df->done = true;
		return;
	}
	while ((t = strtok_r(NULL, " \t\v\f", &save)) && n < 4) {
		if (n == 0 && strncmp(t, "--", 2) == 0)
			continue; /* --platform=... */
		tok[n++] = t;
	}
	if (n == 0)
		return;
	/* A base image, unless it names an earlier stage, is scratch or uses an ARG. */
	if (strcasecmp(tok[0], "scratch") != 0 && !strchr(tok[0], '$') &&
	    strlen(tok[0]) < DF_IMAGE_MAX && df->nr_images < DF_MAX_IMAGES) {
		bool known = false;

		for (int i = 0; i < df->nr_stages && !known; i++)
			known = strcasecmp(df->stages[i], tok[0]) == 0;
		for (int i = 0; i < df->nr_images && !known; i++)
			known = strcmp(df->images[i], tok[0]) == 0;
		if (!known)
			snprintf(df->images[df->nr_images++], DF_IMAGE_MAX, "%s", tok[0]);
	}
	if (n >= 3 && strcasecmp(tok[1], "AS") == 0) {
		if (df->nr_stages < 16)
			snprintf(df->stages[df->nr_stages++], sizeof(df->stages[0]), "%s", tok[2]);
		df->in_target = strcasecmp(tok[2], target) == 0;
	} else if (df->nr_stages < 16) {
		df->stages[df->nr_stages++][0] = '\0'; /* an unnamed stage */
	}
}

/*
 * The stages `podman build --target` builds: every FROM up to the target's
 * stage. Physical lines ending in a backslash continue the instruction;
 * comment and blank lines are dropped. 0 or -errno.
 */
static int df_scan(const char *repo, const char *target, struct df_info *df)
{
	char path[PATH_MAX], *buf, *logical, *p;
	size_t len = 0, llen = 0;
	FILE *f;

	memset(df, 0, sizeof(*df));
	if ((size_t)snprintf(path, sizeof(path), "%s/Dockerfile", repo) >= sizeof(path))
		return -ENAMETOOLONG;
	f = fopen(path, "re");
	if (!f)
		return -errno;
	buf = malloc(DF_MAX_BYTES + 1);
	logical = malloc(DF_MAX_BYTES + 2); /* every line plus a blank, and the NUL */
	if (buf && logical)
		len = fread(buf, 1, DF_MAX_BYTES, f);
	fclose(f);
	if (!buf || !logical) {
		free(buf);
		free(logical);
		return -ENOMEM;
	}
	buf[len] = '\0';
	for (p = buf; p && *p;) {
		char *nl = strchr(p, '\n'), *s = p, *e;
		bool cont;

		e = nl ? nl : p + strlen(p);
		p = nl ? nl + 1 : NULL;
		while (e > s && (e[-1] == '\r' || e[-1] == ' ' || e[-1] == '\t'))
			e--;
		while (s < e && (*s == ' ' || *s == '\t'))
			s++;
		if (s == e || *s == '#')
			continue;
		cont = e[-1] == '\\';
		if (cont)
			e--;
		memcpy(logical + llen, s, (size_t)(e - s));
		llen += (size_t)(e - s);
		logical[llen++] = ' ';
		if (cont)
			continue;
		logical[llen] = '\0';
		df_instruction(df, target, logical);
		llen = 0;
	}
	if (llen) {
		logical[llen] = '\0';
		df_instruction(df, target, logical);
	}
	free(buf);
	free(logical);
	return 0;
}

/* "sha256:HEX" or "HEX" (64 lower-case hex digits) into hex; false if not an id. */
static bool parse_image_id(const char *s, char hex[65])
{
	if (strncmp(s, "sha256:", 7) == 0)
		s += 7;
	if (strspn(s, "0123456789abcdef") != 64 || (s[64] && s[64] != '\n'))
		return false;
	memcpy(hex, s, 64);
	hex[64] = '\0';
	return true;
}

/*
 * Pick the engine and check the base images before anything starts: podman
 * when it is installed, else docker when its engine answers (`docker info`).
 * Every base image must already be in local storage (the probe never
 * pulls); their ids become inputs (and so part of the cache key).
 * 0, or -1 with `msg` saying what is missing.
 */
static int dockerfile_prepare(const char *repo, struct sbt_build_plan *plan, struct df_info *df,
			      enum engine *eng, char *msg, size_t msglen)
{
	char out[512], errout[1024], fmt[] = "{{.Id}}";
	char *version[] = { "podman", "--version", NULL };
	char *dinfo[] = { "docker", "info", "--format", "{{.ServerVersion}}", NULL };
	const char *tool;
	int rc = df_scan(repo, plan->target, df);

	*eng = ENGINE_NONE;
	if (rc) {
		msgf(msg, msglen, "cannot read %s/Dockerfile: %s", repo, strerror(-rc));
		return -1;
	}
	rc = tool_code(version, out, sizeof(out), errout, sizeof(errout), TOOL_TIMEOUT_MS);
	if (rc == 0) {
		*eng = ENGINE_PODMAN;
	} else if (tool_code(dinfo, out, sizeof(out), errout, sizeof(errout), 10000) == 0) {
		*eng = ENGINE_DOCKER;
	} else {
		msgf(msg, msglen,
		     "Dockerfile builds need podman (%s; install it and runc with 'make deps', "
		     "then run scripts/podman-setup.sh) or a docker engine ('docker info' "
		     "failed)",
		     rc == 127 ? "not installed" : "'podman --version' failed");
		return -1;
	}
	tool = *eng == ENGINE_PODMAN ? "podman" : "docker";
	for (int i = 0; i < df->nr_images; i++) {
		char *inspect[] = { (char *)tool, "image",	 "inspect", "--format",
				    fmt,	  df->images[i], NULL };

		rc = tool_code(inspect, out, sizeof(out), errout, sizeof(errout), TOOL_TIMEOUT_MS);
		if (rc != 0 || !parse_image_id(first_line(out), df->ids[i])) {
			msgf(msg, msglen,
			     "base image '%.200s' (Dockerfile stage '%s' or before) is not in "
			     "%s's local image storage (the probe never pulls): build or import "
			     "it locally (scripts/podman-setup.sh imports "
			     "localhost/sbtrace-busybox:latest)%s%.160s",
			     df->images[i], plan->target, tool, errout[0] ? ": " : "",
			     first_line(errout));
			return -1;
		}
		if (plan->nr_inputs < SBT_PROBE_MAX_INPUTS) {
			struct sbt_probe_input *in = &plan->inputs[plan->nr_inputs++];

			snprintf(in->name, sizeof(in->name), "image:%.120s", df->images[i]);
			memcpy(in->sha256, df->ids[i], sizeof(in->sha256));
		}
	}
	return 0;
}

/*
 * CONTAINERS_CONF for podman: the caller's, else the one scripts/podman-setup.sh
 * writes next to this binary's build tree (build/bin/sbtrace ->
 * build/podman/containers.conf) when it exists; else podman's defaults.
 */
static void podman_conf_env(void)
{
	char exe[PATH_MAX], conf[PATH_MAX + 32], *slash;
	ssize_t n;

	if (getenv("CONTAINERS_CONF"))
		return;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (!slash)
		return;
	*slash = '\0';
	snprintf(conf, sizeof(conf), "%s/../podman/containers.conf", exe);
	if (access(conf, R_OK) == 0)
		setenv("CONTAINERS_CONF", conf, 0);
}

/* Build the engine's argv into plan->argv (owned by the plan). 0 or -ENOMEM. */
static int dockerfile_argv(struct sbt_build_plan *plan, enum engine eng, const char *repo,
			   const char *cgroup_parent, const char *iidfile)
{
	static const char *const podman[] = {
		"podman",	"--runtime",	    "runc",	      "--cgroup-manager",
		"cgroupfs",	"--events-backend", "file",	      "build",
		"--pull=never", "--no-cache",	    "--layers=false", NULL
	};
	static const char *const docker[] = { "docker", "buildx", "build", "--no-cache", NULL };
	const char *const *fixed = eng == ENGINE_PODMAN ? podman : docker;
	char buf[PATH_MAX + 32];
	int n = 0;

#define ADD(s)                                                                                     \
	do {                                                                                       \
		if (n >= SBT_PROBE_MAX_ARGS)                                                       \
			return -E2BIG;                                                             \
		if (!(plan->argv[n] = strdup(s)))                                                  \
			return -ENOMEM;                                                            \
		plan->argc = ++n;                                                                  \
	} while (0)
	for (const char *const *f = fixed; *f; f++)
		ADD(*f);
	snprintf(buf, sizeof(buf), "--target=%s", plan->target);
	ADD(buf);
	ADD("--network=none");
	snprintf(buf, sizeof(buf), "--cgroup-parent=%s", cgroup_parent);
	ADD(buf);
	snprintf(buf, sizeof(buf), "--iidfile=%s", iidfile);
	ADD(buf);
	ADD("-f");
	snprintf(buf, sizeof(buf), "%s/Dockerfile", repo);
	ADD(buf);
	ADD(repo);
#undef ADD
	plan->argv[n] = NULL;
	return 0;
}

/* Did any exec happen below the sandbox's own cgroup (a container: a RUN step)? */
static bool exec_below(const char *events_path, uint64_t sandbox_cgroup_id)
{
	FILE *f = events_path ? fopen(events_path, "re") : NULL;
	char *line = NULL;
	size_t cap = 0;
	bool seen = false;

	while (f && !seen && getline(&line, &cap, f) > 0) {
		json_object *ev, *v;

		if (!strstr(line, "\"ProcessExec\""))
			continue;
		ev = json_tokener_parse(line);
		if (ev && json_object_object_get_ex(ev, "cgroup_id", &v) &&
		    (uint64_t)json_object_get_int64(v) != sandbox_cgroup_id)
			seen = true;
		json_object_put(ev);
	}
	free(line);
	if (f)
		fclose(f);
	return seen;
}

/* Remove the image the build produced (never one of the base images). */
static void dockerfile_cleanup_image(enum engine eng, const char *iidfile, const struct df_info *df)
{
	char buf[128], id[65], out[256], errout[256];
	FILE *f = iidfile[0] ? fopen(iidfile, "re") : NULL;
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;

	if (f)
		fclose(f);
	buf[n] = '\0';
	if (!parse_image_id(first_line(buf), id))
		return;
	for (int i = 0; i < df->nr_images; i++)
		if (strcmp(df->ids[i], id) == 0)
			return;
	{
		char *rmi[] = { eng == ENGINE_PODMAN ? "podman" : "docker", "rmi", id, NULL };

		tool_code(rmi, out, sizeof(out), errout, sizeof(errout), TOOL_TIMEOUT_MS);
	}
}

/* The newest guest scripts/guest-build.sh left in the cache. 0, or -ENOENT. */
static int newest_guest(char *out, size_t len)
{
	const char *dir = getenv("SBTRACE_GUEST_CACHE");
	struct dirent *de;
	time_t best = 0;
	DIR *d;

	if (!dir || !*dir)
		dir = "/var/cache/sbtrace/guest";
	d = opendir(dir);
	if (!d)
		return -ENOENT;
	while ((de = readdir(d))) {
		char path[PATH_MAX], vmlinux[PATH_MAX + 16];
		struct stat st;

		if (strncmp(de->d_name, "guest-", 6) != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		snprintf(vmlinux, sizeof(vmlinux), "%s/vmlinux", path);
		if (stat(vmlinux, &st) == 0 && st.st_mtime >= best) {
			best = st.st_mtime;
			snprintf(out, len, "%s", path);
		}
	}
	closedir(d);
	return best ? 0 : -ENOENT;
}

/* --backend qemu: the build kind, the guest, the tap's addresses. 0, or -EINVAL after a message. */
static int vm_options(const struct sbt_build_plan *plan, const char **guest, char *guest_buf,
		      const char *tap_addrs, char *tap_host, char *tap_guest)
{
	const char *comma = strchr(tap_addrs, ',');

	if (plan->kind == SBT_BUILD_DOCKERFILE) {
		fprintf(stderr,
			"sbtrace probe: --backend qemu runs --cmd, npm or make builds in a "
			"busybox guest; a Dockerfile build runs on podman (drop --backend)\n");
		return -EINVAL;
	}
	if (!*guest) {
		if (newest_guest(guest_buf, PATH_MAX) < 0) {
			fprintf(stderr, "sbtrace probe: --backend qemu: no guest built; run "
					"scripts/guest-build.sh (or give --guest DIR)\n");
			return -EINVAL;
		}
		*guest = guest_buf;
	}
	if (!comma || comma == tap_addrs || !comma[1] || comma - tap_addrs >= 64 ||
	    strlen(comma + 1) >= 64 || !strchr(tap_addrs, '/') || !strchr(comma + 1, '/')) {
		fprintf(stderr,
			"sbtrace probe: --tap-addrs '%s': give HOST/LEN,GUEST/LEN (e.g. "
			"10.255.255.1/30,10.255.255.2/30)\n",
			tap_addrs);
		return -EINVAL;
	}
	snprintf(tap_host, 64, "%.*s", (int)(comma - tap_addrs), tap_addrs);
	snprintf(tap_guest, 64, "%s", comma + 1);
	return 0;
}

void sbt_probe_usage(FILE *f)
{
	fprintf(f, "Usage: sbtrace probe [OPTIONS] REPO\n"
		   "\n"
		   "Run REPO's build in a fresh sandbox under trace and print one JSON report:\n"
		   "does the build invoke a shell (can the image go distroless)? The build is\n"
		   "--cmd if given, else a Dockerfile 'builder' stage (podman/docker), else\n"
		   "package.json scripts.build (npm run build), else a Makefile (make).\n"
		   "Reports are cached by content (inputs' SHA-256, command, probe version).\n"
		   "\n"
		   "  --cmd \"PROG ARGS\"     the build command, split into words with simple\n"
		   "                         quoting ('...', \"...\", \\), never given to a shell\n"
		   "  --target STAGE        the Dockerfile stage (default builder)\n"
		   "  --backend ns|qemu     ns (default): namespaces and a cgroup, execs seen;\n"
		   "                         qemu: a microVM (qemu -M microvm, busybox guest),\n"
		   "                         whose execs the host cannot see: the report is\n"
		   "                         never a confident 'safe' (exec_not_visible)\n"
		   "  --guest DIR           the guest scripts/guest-build.sh built (default:\n"
		   "                         the newest in $SBTRACE_GUEST_CACHE or\n"
		   "                         /var/cache/sbtrace/guest)\n"
		   "  --tap-addrs HOST,GUEST  the VM's tap addresses (CIDR; default\n"
		   "                         10.255.255.1/30,10.255.255.2/30), in a network\n"
		   "                         namespace of the probe's own: nothing is routed\n"
		   "                         beyond it; the tap program judges every frame\n"
		   "  --allow-cidr, --allow-host, --allowlist, --egress, --resolver\n"
		   "                         egress policy as for 'sbtrace trace'; default:\n"
		   "                         enforce with an empty allowlist (no network)\n"
		   "  --cache-dir DIR       default $XDG_CACHE_HOME/sbtrace or ~/.cache/sbtrace\n"
		   "  --no-cache            neither read nor write the cache\n"
		   "  --trace-out FILE      also keep the trace's JSON Lines events\n"
		   "  --timeout SEC         stop the build after SEC seconds (default 1800)\n"
		   "  -q, --quiet           no progress on stderr\n"
		   "  -h, --help            this help\n"
		   "\n"
		   "Exit codes: 0 a report was printed (whatever its verdict); 2 usage error or\n"
		   "no build found; 3 kernel capability missing (no report possible).\n");
}

int sbt_probe_main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "cmd", required_argument, NULL, 1 },
		{ "target", required_argument, NULL, 2 },
		{ "cache-dir", required_argument, NULL, 3 },
		{ "no-cache", no_argument, NULL, 4 },
		{ "trace-out", required_argument, NULL, 5 },
		{ "timeout", required_argument, NULL, 6 },
		{ "allow-cidr", required_argument, NULL, 7 },
		{ "allow-host", required_argument, NULL, 8 },
		{ "allowlist", required_argument, NULL, 9 },
		{ "egress", required_argument, NULL, 10 },
		{ "resolver", required_argument, NULL, 11 },
		{ "backend", required_argument, NULL, 12 },
		{ "guest", required_argument, NULL, 13 },
		{ "tap-addrs", required_argument, NULL, 14 },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	static struct sbt_trace_opts opts;
	struct probe_ctx p = { 0 };
	struct sbt_build_plan plan = { 0 };
	struct workspace ws = { 0 };
	const char *cmd = NULL, *target = NULL, *cache_dir = NULL, *trace_out = NULL;
	char repo[PATH_MAX], key[65], cache_buf[PATH_MAX], err[512], events_tmp[64] = "";
	json_object *report = NULL, *results = NULL, *warnings, *cached = NULL;
	bool no_cache = false, build_ok, complete = false, lost = false;
	int c, ret = SBT_EXIT_OK, egress_mode = SBT_EGRESS_ENFORCE, st, optind_long = 0;
	uint64_t shells = 0, build_ms = 0;
	const char *reason = NULL, *verdict, *confidence;
	char name[SBT_SANDBOX_NAME_MAX + 1];
	static struct df_info df;
	enum engine eng = ENGINE_NONE;
	char iidfile[64] = "";
	bool runs_unseen = false;
	bool vm = false;
	const char *guest = NULL, *tap_addrs = "10.255.255.1/30,10.255.255.2/30";
	char guest_buf[PATH_MAX], tap_host[64], tap_guest[64], netns[64] = "";
	bool netns_made = false;

	p.t0_ms = sbt_mono_ms();
	memset(&df, 0, sizeof(df));
	p.t0_epoch_ns = sbt_now_epoch_ns();
	p.timeout_ms = 1800ull * 1000;
	free(opts.egress.rules);
	memset(&opts, 0, sizeof(opts));
	optind = 1;
	while ((c = getopt_long(argc, argv, "qh", longopts, &optind_long)) != -1) {
		switch (c) {
		case 1:
			cmd = optarg;
			break;
		case 2:
			target = optarg;
			break;
		case 3:
			cache_dir = optarg;
			break;
		case 4:
			no_cache = true;
			break;
		case 5:
			trace_out = optarg;
			break;
		case 6: {
			char *end;
			double d = strtod(optarg, &end);

			if (*end || !(d > 0) || d > 86400 * 7) {
				fprintf(stderr, "sbtrace probe: --timeout '%s': give seconds > 0\n",
					optarg);
				return SBT_EXIT_USAGE;
			}
			p.timeout_ms = (uint64_t)(d * 1000);
			break;
		}
		case 7:
		case 8:
		case 9:
		case 10:
		case 11:
			if (sbt_cli_egress_option(&opts.egress, &egress_mode, "probe",
						  longopts[optind_long].name, optarg))
				return SBT_EXIT_USAGE;
			break;
		case 12: {
			enum sbt_sandbox_backend b;

			if (sbt_backend_parse(optarg, &b) || b == SBT_BACKEND_PODMAN) {
				fprintf(stderr,
					"sbtrace probe: --backend '%s': use ns or qemu (a "
					"Dockerfile build always runs on podman)\n",
					optarg);
				return SBT_EXIT_USAGE;
			}
			if (b == SBT_BACKEND_QEMU)
				vm = true;
			break;
		}
		case 13:
			guest = optarg;
			break;
		case 14:
			tap_addrs = optarg;
			break;
		case 'q':
			p.quiet = true;
			break;
		case 'h':
			sbt_probe_usage(stdout);
			return SBT_EXIT_OK;
		default:
			fprintf(stderr, "see 'sbtrace probe --help'\n");
			return SBT_EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr,
			"sbtrace probe: give exactly one REPO directory; see 'sbtrace probe "
			"--help'\n");
		return SBT_EXIT_USAGE;
	}
	if (cmd && target) {
		fprintf(stderr,
			"sbtrace probe: --cmd and --target exclude each other: --target picks "
			"a Dockerfile stage, --cmd replaces the build\n");
		return SBT_EXIT_USAGE;
	}
	if (!realpath(argv[optind], repo)) {
		fprintf(stderr, "sbtrace probe: %s: %s\n", argv[optind], strerror(errno));
		return SBT_EXIT_USAGE;
	}
	if (sbt_probe_plan(repo, cmd, target, &plan, err, sizeof(err))) {
		fprintf(stderr, "sbtrace probe: %s\n", err);
		return SBT_EXIT_USAGE;
	}
	if (vm && vm_options(&plan, &guest, guest_buf, tap_addrs, tap_host, tap_guest) < 0) {
		sbt_build_plan_free(&plan);
		return SBT_EXIT_USAGE;
	}
	/* Dockerfile: the engine and the base images (their ids are inputs) first. */
	if (plan.kind == SBT_BUILD_DOCKERFILE &&
	    dockerfile_prepare(repo, &plan, &df, &eng, p.boot_err, sizeof(p.boot_err)) < 0)
		p.boot_failed = true;
	/* A VM's report is another answer than a namespace sandbox's: its own key. */
	sbt_probe_cache_key(&plan, vm ? SBTRACE_VERSION "+qemu" : SBTRACE_VERSION, key);
	if (p.boot_failed) {
		snprintf(name, sizeof(name), "probe-%.12s-%d", key, (int)getpid());
		goto report;
	}
	if (!cache_dir && !no_cache && sbt_cache_default_dir(cache_buf, sizeof(cache_buf)) == 0)
		cache_dir = cache_buf;

	/* Warm path: the cache answers; no sandbox, no BPF. */
	if (!no_cache && cache_dir) {
		int r = sbt_cache_read(cache_dir, key, &cached);

		if (r == 0) {
			json_object *cache, *timings;

			json_object_object_get_ex(cached, "cache", &cache);
			json_object_object_add(cache, "hit", json_object_new_boolean(true));
			timings = json_object_new_object();
			json_object_object_add(timings, "total",
					       json_object_new_uint64(sbt_mono_ms() - p.t0_ms));
			json_object_object_add(cached, "timings_ms", timings);
			printf("%s\n", json_object_to_json_string_ext(
					       cached, JSON_C_TO_STRING_PRETTY |
							       JSON_C_TO_STRING_NOSLASHESCAPE));
			json_object_put(cached);
			sbt_build_plan_free(&plan);
			progress(&p, "answered from the cache (%s)", cache_dir);
			return SBT_EXIT_OK;
		}
		if (r == -EBADMSG)
			progress(&p, "cache entry corrupt: ignored, will be rewritten%s", "");
	}
	warnings = NULL;
	snprintf(name, sizeof(name), "probe-%.12s-%d", key, (int)getpid());
	if (plan.kind == SBT_BUILD_DOCKERFILE) {
		/*
		 * The podman backend: the engine runs on the host, in the sandbox's
		 * cgroup (no namespaces of ours: it makes its own), and puts every
		 * RUN step's container in <sandbox cgroup>/build (--cgroup-parent;
		 * runc's cgroupfs manager mirrors it into the cgroup v2 hierarchy),
		 * so the trace sees them. It reads the repo as its build context.
		 */
		struct sbt_sandbox_spec spec = {
			.name = name,
			.net = SBT_NET_NONE,
			.argv = plan.argv,
			.stdout_fd = STDERR_FILENO,
			.stderr_fd = STDERR_FILENO,
			.backend = SBT_BACKEND_PODMAN,
		};
		char cg_parent[SBT_SANDBOX_NAME_MAX + 32];
		int fd;

		snprintf(cg_parent, sizeof(cg_parent), "/sbtrace/%s/build", name);
		snprintf(iidfile, sizeof(iidfile), "/tmp/sbtrace-probe-iid.XXXXXX");
		fd = mkstemp(iidfile);
		if (fd >= 0)
			close(fd);
		else
			iidfile[0] = '\0';
		if (eng == ENGINE_PODMAN)
			podman_conf_env();
		if (!iidfile[0] || dockerfile_argv(&plan, eng, repo, cg_parent, iidfile) < 0) {
			p.boot_failed = true;
			snprintf(p.boot_err, sizeof(p.boot_err), "cannot prepare the %s command",
				 eng == ENGINE_PODMAN ? "podman" : "docker");
			goto report;
		}
		if (p.quiet)
			spec.stdout_fd = spec.stderr_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
		if (sbt_sandbox_start(&spec, &p.run, p.boot_err, sizeof(p.boot_err)) < 0) {
			p.boot_failed = true;
			goto report;
		}
		p.started = true;
		/* --cgroup-parent must name a descendant of the sandbox cgroup. */
		if (strncmp(cg_parent, p.run.cgroup_name, strlen(p.run.cgroup_name)) != 0 ||
		    cg_parent[strlen(p.run.cgroup_name)] != '/') {
			p.boot_failed = true;
			snprintf(p.boot_err, sizeof(p.boot_err),
				 "sandbox cgroup %s is not where --cgroup-parent=%s points",
				 p.run.cgroup_name, cg_parent);
			goto report;
		}
		/* A state file: sbtrace-shim gc cleans up after a killed probe. */
		if (sbt_state_write(NULL, &p.run) < 0)
			progress(&p, "could not write the sandbox state file (%s)",
				 p.run.state_file);
	} else {
		if (workspace_setup(&ws, repo) < 0) {
			workspace_teardown(&ws);
			snprintf(ws.merged, sizeof(ws.merged), "%s", repo);
		}
	}
	if (vm) {
		/*
		 * The qemu backend: the repo is copied into the guest (read there,
		 * nothing comes back); the tap lives in a network namespace of our
		 * own, with no route anywhere: the tap program reports and refuses
		 * whatever the build tries to reach.
		 */
		struct sbt_sandbox_spec spec = {
			.name = name,
			.workspace = repo,
			.net = SBT_NET_NONE,
			.argv = plan.argv,
			.stdout_fd = -1,
			.stderr_fd = -1,
			.backend = SBT_BACKEND_QEMU,
			.guest_dir = guest,
			.tap_host_cidr = tap_host,
			.tap_guest_cidr = tap_guest,
		};
		char *add[] = { "ip", "netns", "add", netns, NULL };
		int status;

		snprintf(netns, sizeof(netns), "sbtrace-probe-%d", (int)getpid());
		if (sbt_run(add, NULL, &status) < 0 || !WIFEXITED(status) || WEXITSTATUS(status)) {
			p.boot_failed = true;
			snprintf(p.boot_err, sizeof(p.boot_err),
				 "cannot create network namespace %s for the VM's tap", netns);
			goto report;
		}
		netns_made = true;
		spec.tap_netns = netns;
		p.console_out = p.quiet ? -1 : STDERR_FILENO;
		if (sbt_sandbox_start(&spec, &p.run, p.boot_err, sizeof(p.boot_err)) < 0) {
			p.boot_failed = true;
			goto report;
		}
		p.started = true;
		if (sbt_state_write(NULL, &p.run) < 0)
			progress(&p, "could not write the sandbox state file (%s)",
				 p.run.state_file);
	}
	if (!p.started) {
		struct sbt_sandbox_spec spec = {
			.name = name,
			.workspace = ws.mounted ? ws.merged : repo,
			.workspace_ro = !ws.mounted,
			.net = SBT_NET_NONE,
			.argv = plan.argv,
			.stdout_fd =
				STDERR_FILENO, /* the build's output never mixes with the report */
			.stderr_fd = STDERR_FILENO,
		};

		if (p.quiet) {
			int devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);

			spec.stdout_fd = spec.stderr_fd = devnull;
		}
		if (sbt_sandbox_start(&spec, &p.run, p.boot_err, sizeof(p.boot_err)) < 0) {
			p.boot_failed = true;
			goto report;
		}
		p.started = true;
	}
	progress(&p, "sandbox %s starting", name);

	/* The trace: this sandbox only, egress enforced, events to a file. */
	if (!trace_out) {
		snprintf(events_tmp, sizeof(events_tmp), "/tmp/sbtrace-probe-events.XXXXXX");
		st = mkstemp(events_tmp);
		if (st >= 0)
			close(st);
		trace_out = events_tmp;
	}
	opts.out = fopen(trace_out, "we");
	if (!opts.out) {
		fprintf(stderr, "sbtrace probe: --trace-out '%s': %s\n", trace_out,
			strerror(errno));
		ret = SBT_EXIT_USAGE;
		goto cleanup;
	}
	if (sbt_sandbox_from_cgroup(p.run.cgroup_path, &opts.sandboxes[0]) < 0) {
		p.boot_failed = true;
		snprintf(p.boot_err, sizeof(p.boot_err), "sandbox cgroup vanished");
		goto report;
	}
	opts.sandboxes[0].origin = "sandbox";
	opts.nr_sandboxes = 1;
	if (vm) {
		struct sbt_sandbox *sb = &opts.sandboxes[0];

		int bad;

		sb->exec_hidden = true;
		if (sbt_tap_from_shim(sb, p.run.tap, p.run.tap_netns, p.run.guest_addrs,
				      p.run.nr_guest_addrs, &bad)) {
			p.boot_failed = true;
			snprintf(p.boot_err, sizeof(p.boot_err),
				 "the VM's guest address '%s' is not an address",
				 p.run.guest_addrs[bad]);
			goto report;
		}
		opts.exec.tap = true;
	}
	opts.format = SBT_FORMAT_JSON;
	opts.exec.forced_mode = -1;
	opts.exec.argv_max = SBT_ARGV_DEFAULT;
	opts.exec.ringbuf_bytes = 1u << 20;
	opts.exec.poll_ms = 20;
	opts.exec.host_netns_cookie = sbt_netns_cookie();
	opts.egress.mode = egress_mode;
	opts.egress.resolver_rule_id = (uint32_t)opts.egress.nr_rules + 1;
	/*
	 * The shim's sandboxes have no CAP_NET_RAW: no packet socket can exist,
	 * so its observation (a load and an attach) is skipped; the policy
	 * hooks see every connect.
	 */
	opts.exec.observe = false;
	opts.exec.observe_connect = false;
	opts.exec.policy = egress_mode != SBT_EGRESS_OFF;
	opts.on_attached = on_attached;
	opts.on_tick = on_tick;
	opts.hook_arg = &p;
	opts.results = &results;
	sbt_setup_libbpf();
	st = sbt_trace_run(&opts);
	fclose(opts.out);
	opts.out = NULL;
	if (st == SBT_EXIT_KERNEL) {
		ret = SBT_EXIT_KERNEL;
		goto cleanup;
	}
	if (!p.exited && p.started) {
		/* stopped early (signal, timeout, boot failure): end the workload */
		sbt_sandbox_destroy(&p.run);
		p.started = false;
	}
	build_ms = p.go_ms ? sbt_mono_ms() - p.go_ms : 0;
	/* Every RUN step runs in a container below the sandbox cgroup: were they seen? */
	if (plan.kind == SBT_BUILD_DOCKERFILE && p.exited && df.nr_runs > 0)
		runs_unseen = !exec_below(trace_out, p.run.cgroup_id);

report:
	report = json_object_new_object();
	warnings = json_object_new_array();
	build_ok = p.exited && WIFEXITED(p.status) && WEXITSTATUS(p.status) == 0;
	if (results) {
		json_object *arr, *sio = NULL, *v;

		if (json_object_object_get_ex(results, "shell_invocation", &arr) &&
		    json_object_array_length(arr) > 0)
			sio = json_object_array_get_idx(arr, 0);
		if (sio && json_object_object_get_ex(sio, "count", &v))
			shells = (uint64_t)json_object_get_int64(v);
		if (sio && json_object_object_get_ex(sio, "complete", &v))
			complete = json_object_get_boolean(v);
		lost = !complete;
	}
	if (p.boot_failed) {
		reason = "sandbox_boot_failed";
		add_warning(warnings, "sandbox_boot_failed", p.boot_err);
	} else if (vm) {
		/* Whatever happened inside, the host saw only qemu: no exec, no shell. */
		reason = "exec_not_visible";
		add_warning(warnings, "exec_not_visible",
			    "the build ran in a microVM: host BPF cannot see execs in the guest "
			    "kernel, so no shell count is evidence (visibility.exec none)");
		if (p.timed_out || !build_ok)
			add_warning(warnings, "build_failed",
				    p.timed_out ? "the build did not finish within --timeout"
						: "the build in the VM did not exit with status 0");
	} else if (p.timed_out) {
		reason = "build_failed";
		add_warning(warnings, "build_failed", "the build did not finish within --timeout");
	} else if (!build_ok) {
		char msg[128];

		reason = "build_failed";
		if (p.exited && WIFEXITED(p.status))
			snprintf(msg, sizeof(msg), "the build exited with status %d",
				 WEXITSTATUS(p.status));
		else if (p.exited && WIFSIGNALED(p.status))
			snprintf(msg, sizeof(msg), "the build was killed by signal %d",
				 WTERMSIG(p.status));
		else
			snprintf(msg, sizeof(msg), "the build was interrupted");
		add_warning(warnings, "build_failed", msg);
	} else if (lost) {
		reason = "events_lost";
		add_warning(warnings, "events_lost",
			    "some exec events of the sandbox may be missing: the shell count is a "
			    "lower bound");
	} else if (runs_unseen) {
		reason = "exec_not_visible";
		add_warning(warnings, "exec_not_visible",
			    "the Dockerfile's RUN steps ran outside the sandbox cgroup (the "
			    "engine ignored --cgroup-parent): their execs were not traced");
	}
	if (!ws.mounted && p.started && plan.kind != SBT_BUILD_DOCKERFILE)
		add_warning(warnings, "workspace_readonly",
			    "the overlay for a writable workspace could not be mounted; the repo "
			    "was mounted read-only");
	/* Any shell seen is proof; "no shell" needs a complete trace of a build that worked. */
	if (shells > 0)
		verdict = "unsafe";
	else if (!reason && complete)
		verdict = "safe";
	else
		verdict = "inconclusive";
	confidence = !reason && complete ? "high" : "low";

	json_object_object_add(report, "probe", json_object_new_string(PROBE_NAME));
	json_object_object_add(report, "version", json_object_new_string(SBTRACE_VERSION));
	json_object_object_add(report, "repo", sbt_json_string(repo));
	{
		json_object *c2 = json_object_new_object();

		json_object_object_add(c2, "kind", json_object_new_string(kind_name(plan.kind)));
		json_object_object_add(c2, "argv", argv_json(plan.argv));
		json_object_object_add(c2, "target",
				       plan.kind == SBT_BUILD_DOCKERFILE
					       ? json_object_new_string(plan.target)
					       : NULL);
		json_object_object_add(report, "command", c2);
	}
	{
		json_object *in = json_object_new_array();

		for (int i = 0; i < plan.nr_inputs; i++) {
			json_object *o = json_object_new_object();

			json_object_object_add(o, "name", sbt_json_string(plan.inputs[i].name));
			json_object_object_add(o, "sha256",
					       json_object_new_string(plan.inputs[i].sha256));
			json_object_array_add(in, o);
		}
		json_object_object_add(report, "inputs", in);
	}
	{
		json_object *cache = json_object_new_object();

		json_object_object_add(cache, "key", json_object_new_string(key));
		json_object_object_add(cache, "hit", json_object_new_boolean(false));
		json_object_object_add(report, "cache", cache);
	}
	json_object_object_add(report, "confidence", json_object_new_string(confidence));
	json_object_object_add(report, "reason", reason ? json_object_new_string(reason) : NULL);
	json_object_object_add(report, "verdict", json_object_new_string(verdict));
	{
		json_object *sio = json_object_new_object(), *arr, *src = NULL, *v;

		if (results && json_object_object_get_ex(results, "shell_invocation", &arr) &&
		    json_object_array_length(arr) > 0)
			src = json_object_array_get_idx(arr, 0);
		json_object_object_add(sio, "count", json_object_new_uint64(shells));
		json_object_object_add(sio, "locations",
				       src && json_object_object_get_ex(src, "locations", &v)
					       ? json_object_get(v)
					       : json_object_new_array());
		json_object_object_add(sio, "complete", json_object_new_boolean(complete));
		json_object_object_add(report, "shell_invocation", sio);
	}
	json_object_object_add(report, "egress",
			       egress_summary(p.started || p.exited ? trace_out : NULL,
					      sbt_egress_mode_name(egress_mode)));
	json_object_object_add(report, "warnings", warnings);
	{
		json_object *vis = json_object_new_object();

		json_object_object_add(vis, "exec", json_object_new_string(vm ? "none" : "host"));
		json_object_object_add(vis, "network",
				       json_object_new_string(vm ? "tap"
							      : egress_mode == SBT_EGRESS_OFF
								      ? "none"
								      : "cgroup"));
		json_object_object_add(report, "visibility", vis);
	}
	{
		json_object *t = json_object_new_object(), *stopped, *sbs, *sb0, *v;
		uint64_t first_exec = 0;

		if (results && json_object_object_get_ex(results, "stopped", &stopped) &&
		    json_object_object_get_ex(stopped, "sandboxes", &sbs) &&
		    (sb0 = json_object_array_get_idx(sbs, 0)) &&
		    json_object_object_get_ex(sb0, "first_exec_ts", &v) && v)
			first_exec = (uint64_t)json_object_get_int64(v);
		json_object_object_add(t, "total", json_object_new_uint64(sbt_mono_ms() - p.t0_ms));
		/* probe start to the workload's first exec, as the kernel timestamped it */
		if (first_exec > p.t0_epoch_ns) {
			char buf[32];
			double ms = (double)(first_exec - p.t0_epoch_ns) / 1e6;

			snprintf(buf, sizeof(buf), "%.1f", ms);
			json_object_object_add(t, "to_first_exec",
					       json_object_new_double_s(ms, buf));
		} else {
			json_object_object_add(t, "to_first_exec", NULL);
		}
		json_object_object_add(t, "build", json_object_new_uint64(build_ms));
		/* the VM: go to the guest's SBT-GUEST-READY (kernel boot and init) */
		if (vm && p.run.con.ready_ns && p.run.go_ns && p.run.con.ready_ns > p.run.go_ns)
			json_object_object_add(
				t, "vm_boot",
				json_object_new_uint64((p.run.con.ready_ns - p.run.go_ns) /
						       1000000));
		else
			json_object_object_add(t, "vm_boot", NULL);
		json_object_object_add(report, "timings_ms", t);
	}
	printf("%s\n", json_object_to_json_string_ext(
			       report, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
	fflush(stdout);
	progress(&p, "verdict: %s", verdict);
	/* Cache what is deterministic: a complete trace, or a build that failed by itself. */
	if (!no_cache && cache_dir && (!reason || strcmp(reason, "build_failed") == 0) &&
	    !p.timed_out && sbt_cache_write(cache_dir, key, report) < 0)
		progress(&p, "could not write the cache entry in %s", cache_dir);

cleanup:
	if (opts.out)
		fclose(opts.out);
	if (p.started)
		sbt_sandbox_destroy(&p.run);
	if (iidfile[0]) {
		dockerfile_cleanup_image(eng, iidfile, &df);
		unlink(iidfile);
	}
	workspace_teardown(&ws);
	if (netns_made) {
		char *del[] = { "ip", "netns", "del", netns, NULL };
		int status;

		if (sbt_run(del, NULL, &status) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
			progress(&p, "could not delete network namespace %s", netns);
	}
	if (events_tmp[0])
		unlink(events_tmp);
	json_object_put(report);
	json_object_put(results);
	sbt_build_plan_free(&plan);
	free(opts.egress.rules);
	opts.egress.rules = NULL;
	return ret;
}
