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
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "events.h"
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
	char boot_err[256];
	bool timed_out;
};

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void progress(const struct probe_ctx *p, const char *fmt, const char *arg)
{
	if (p->quiet)
		return;
	fprintf(stderr, "sbtrace probe: [%5.1f s] ", (double)(mono_ms() - p->t0_ms) / 1000.0);
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
	p->go_ms = mono_ms();
	progress(p, "sandbox up, tracing; build running%s", "");
}

static const char *on_tick(void *arg)
{
	struct probe_ctx *p = arg;
	uint64_t now = mono_ms();

	if (p->boot_failed)
		return "sandbox_boot_failed";
	if (sbt_sandbox_wait(&p->run, &p->status, 0) == 0) {
		p->exited = true;
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

#include <dirent.h>

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
	int c, ret = SBT_EXIT_OK, egress_mode = SBT_EGRESS_ENFORCE, st;
	uint64_t shells = 0, build_ms = 0;
	const char *reason = NULL, *verdict, *confidence;
	char name[SBT_SANDBOX_NAME_MAX + 1];

	p.t0_ms = mono_ms();
	p.t0_epoch_ns = sbt_now_epoch_ns();
	p.timeout_ms = 1800ull * 1000;
	free(opts.egress.rules);
	memset(&opts, 0, sizeof(opts));
	optind = 1;
	while ((c = getopt_long(argc, argv, "qh", longopts, NULL)) != -1) {
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
			if (sbt_cli_add_rule(&opts.egress, c == 7 ? SBT_RULE_CIDR : SBT_RULE_HOST,
					     c == 7 ? "--allow-cidr" : "--allow-host", optarg))
				return SBT_EXIT_USAGE;
			break;
		case 9:
			if (sbt_cli_load_allowlist(&opts.egress, optarg))
				return SBT_EXIT_USAGE;
			break;
		case 10:
			if (strcmp(optarg, "enforce") == 0)
				egress_mode = SBT_EGRESS_ENFORCE;
			else if (strcmp(optarg, "audit") == 0)
				egress_mode = SBT_EGRESS_AUDIT;
			else if (strcmp(optarg, "off") == 0)
				egress_mode = SBT_EGRESS_OFF;
			else {
				fprintf(stderr,
					"sbtrace probe: --egress '%s': use enforce, audit or "
					"off\n",
					optarg);
				return SBT_EXIT_USAGE;
			}
			break;
		case 11: {
			bool v4;

			if (sbt_addr_parse(optarg, opts.egress.resolver, &v4)) {
				fprintf(stderr, "sbtrace probe: --resolver '%s': give an address\n",
					optarg);
				return SBT_EXIT_USAGE;
			}
			opts.egress.has_resolver = true;
			break;
		}
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
	sbt_probe_cache_key(&plan, SBTRACE_VERSION, key);
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
					       json_object_new_uint64(mono_ms() - p.t0_ms));
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
	if (plan.kind == SBT_BUILD_DOCKERFILE) {
		/* The podman backend is not in this build: an honest, typed failure. */
		p.boot_failed = true;
		snprintf(p.boot_err, sizeof(p.boot_err),
			 "Dockerfile builds need the podman backend, which this build of sbtrace "
			 "does not have; give --cmd to probe another way");
		goto report;
	}

	warnings = NULL;
	if (workspace_setup(&ws, repo) < 0) {
		workspace_teardown(&ws);
		snprintf(ws.merged, sizeof(ws.merged), "%s", repo);
	}
	snprintf(name, sizeof(name), "probe-%.12s-%d", key, (int)getpid());
	{
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
	opts.format = SBT_FORMAT_JSON;
	opts.exec.forced_mode = -1;
	opts.exec.argv_max = SBT_ARGV_DEFAULT;
	opts.exec.ringbuf_bytes = 4u << 20;
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
	build_ms = p.go_ms ? mono_ms() - p.go_ms : 0;

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
	}
	if (!ws.mounted && p.started)
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

		json_object_object_add(vis, "exec", json_object_new_string("host"));
		json_object_object_add(
			vis, "network",
			json_object_new_string(egress_mode == SBT_EGRESS_OFF ? "none" : "cgroup"));
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
		json_object_object_add(t, "total", json_object_new_uint64(mono_ms() - p.t0_ms));
		/* probe start to the workload's first exec, as the kernel timestamped it */
		json_object_object_add(
			t, "to_first_exec",
			first_exec > p.t0_epoch_ns
				? json_object_new_double((double)(first_exec - p.t0_epoch_ns) / 1e6)
				: NULL);
		json_object_object_add(t, "build", json_object_new_uint64(build_ms));
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
	workspace_teardown(&ws);
	if (events_tmp[0])
		unlink(events_tmp);
	json_object_put(report);
	json_object_put(results);
	sbt_build_plan_free(&plan);
	free(opts.egress.rules);
	opts.egress.rules = NULL;
	return ret;
}
