// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* `sbtrace trace` and `sbtrace features`: options, help, the request. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "egress/egress_args.h"
#include "event/sink_json.h"
#include "sandbox/sandbox.h"
#include "event/sink.h"
#include "cmd/trace_cmd.h"
#include "help/sbtrace-trace.h"
#include "help/sbtrace-features.h"
#include "lib/log.h"

void sbt_trace_usage(FILE *f)
{
	sbt_help_trace(f);
}

void sbt_features_usage(FILE *f)
{
	sbt_help_features(f);
}

static int parse_u64(const char *s, unsigned long long min, unsigned long long max,
		     unsigned long long *out)
{
	char *end;

	errno = 0;
	if (!s || *s == '-' || *s == '\0')
		return -EINVAL;
	*out = strtoull(s, &end, 10);
	if (errno || *end || *out < min || *out > max)
		return -EINVAL;
	return 0;
}

/* "sbtrace CMD: ...; see 'sbtrace CMD --help'", and its exit code. */
#define usage_error(...) (sbt_log_usage(__VA_ARGS__), SBT_EXIT_USAGE)

/* All the shim's sandboxes have ended (their cgroups are gone): nothing more can come. */
static const char *shim_gone(void *arg)
{
	struct sbt_shim_handshake *h = arg;

	if (!h->stop_when_gone || ++h->ticks % 4)
		return NULL;
	for (int i = 0; i < h->n; i++)
		if (access(h->cgroup[i], F_OK) == 0)
			return NULL;
	return "workload_exited";
}

static void shim_handshake(void *arg)
{
	struct sbt_shim_handshake *h = arg;
	char line[32];
	/* our pid: the shim ends the workload should we die (the policy would lapse) */
	int n = snprintf(line, sizeof(line), "attached %d\n", (int)getpid());

	for (int i = 0; i < h->n; i++) {
		int fd = open(h->fifo[i], O_WRONLY | O_NONBLOCK | O_CLOEXEC);

		/* ENXIO: nobody waits (--no-wait, or it went on already) */
		if (fd < 0)
			continue;
		if (write(fd, line, (size_t)n) != n)
			sbt_log("handshake with %s: %s", h->fifo[i], strerror(errno));
		close(fd);
	}
}

enum trace_opt {
	OPT_ALLOW_CIDR = 256,
	OPT_ALLOW_HOST,
	OPT_ALLOWLIST,
	OPT_EGRESS,
	OPT_RESOLVER,
	OPT_NO_DNS_PROXY,
	OPT_DNS_GRACE,
	OPT_DNS_DENY_REPLY,
	OPT_DNS_MAX_LEARNED,
	OPT_SANDBOX,
	OPT_STATE_DIR,
	OPT_TAP,
	OPT_LEARN_FORMAT,
	OPT_LEARN_OUT,
};

static const struct option trace_longopts[] = {
	{ "cgroup", required_argument, NULL, 'c' },
	{ "pid", required_argument, NULL, 'p' },
	{ "output", required_argument, NULL, 'o' },
	{ "out", required_argument, NULL, 'O' },
	{ "duration", required_argument, NULL, 'd' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "argv-max", required_argument, NULL, SBT_OPT_ARGV_MAX },
	{ "ringbuf-size", required_argument, NULL, SBT_OPT_RINGBUF_SIZE },
	{ "exec-hook", required_argument, NULL, SBT_OPT_EXEC_HOOK },
	{ "poll-ms", required_argument, NULL, SBT_OPT_POLL_MS },
	{ "allow-cidr", required_argument, NULL, OPT_ALLOW_CIDR },
	{ "allow-host", required_argument, NULL, OPT_ALLOW_HOST },
	{ "allowlist", required_argument, NULL, OPT_ALLOWLIST },
	{ "egress", required_argument, NULL, OPT_EGRESS },
	{ "resolver", required_argument, NULL, OPT_RESOLVER },
	{ "no-dns-proxy", no_argument, NULL, OPT_NO_DNS_PROXY },
	{ "dns-grace", required_argument, NULL, OPT_DNS_GRACE },
	{ "dns-deny-reply", required_argument, NULL, OPT_DNS_DENY_REPLY },
	{ "dns-max-learned", required_argument, NULL, OPT_DNS_MAX_LEARNED },
	{ "sandbox", required_argument, NULL, OPT_SANDBOX },
	{ "state-dir", required_argument, NULL, OPT_STATE_DIR },
	{ "tap", required_argument, NULL, OPT_TAP },
	{ "learn-format", required_argument, NULL, OPT_LEARN_FORMAT },
	{ "learn-out", required_argument, NULL, OPT_LEARN_OUT },
	{ "stats-interval", required_argument, NULL, SBT_OPT_STATS_INTERVAL },
	{ "help", no_argument, NULL, 'h' },
	{ 0 },
};

/* No room for another target: too many, or no memory. An exit code. */
static int no_room(const char *arg)
{
	if (errno == E2BIG)
		return usage_error("more than 64 sandboxes (at %s)", arg);
	sbt_log("out of memory");
	return SBT_EXIT_RUNTIME;
}

/* --cgroup PATH or --pid PID: a sandbox keyed by its cgroup. -1, or an exit code. */
static int add_cgroup_sandbox(struct sbt_trace_opts *opts, int c, const char *arg)
{
	struct sbt_target *sb = sbt_trace_target_next(opts);

	if (!sb)
		return no_room(arg);
	if ((c == 'c' ? sbt_target_from_cgroup(arg, sb) : sbt_target_from_pid(arg, sb)) < 0)
		return SBT_EXIT_USAGE;
	for (uint32_t i = 0; i < opts->nr_targets; i++)
		if (opts->targets[i].cgroup_id == sb->cgroup_id)
			return usage_error("cgroup %s given twice", sb->name);
	sbt_trace_target_commit(opts);
	return -1;
}

/* --tap SPEC: a tap-only sandbox. -1, or an exit code. */
static int add_tap_sandbox(struct sbt_trace_opts *opts, const char *arg)
{
	struct sbt_target *sb = sbt_trace_target_next(opts);
	char err[256];

	if (!sb)
		return no_room(arg);
	if (sbt_tap_parse(arg, &sb->tap, err, sizeof(err))) {
		sbt_log("--tap '%s': %s; see 'sbtrace trace --help'", arg, err);
		return SBT_EXIT_USAGE;
	}
	memcpy(sb->name, "tap:", 4);
	memcpy(sb->name + 4, sb->tap.ifname, sizeof(sb->tap.ifname));
	for (uint32_t i = 0; i < opts->nr_targets; i++)
		if (strcmp(opts->targets[i].name, sb->name) == 0 &&
		    strcmp(opts->targets[i].tap.netns, sb->tap.netns) == 0)
			return usage_error("--tap %s given twice", sb->tap.ifname);
	sb->origin = "tap";
	sb->has_tap = true;
	sb->exec_hidden = true;
	sbt_trace_target_commit(opts);
	return -1;
}

/* Seconds (a decimal) into ms, rounded. 0, or -EINVAL unless lo <= s <= hi (lo_open: lo < s). */
static int parse_seconds(const char *arg, double lo, bool lo_open, double hi, uint64_t *ms)
{
	char *end;
	double d;

	errno = 0;
	d = strtod(arg, &end);
	if (errno || *end || end == arg || !(lo_open ? d > lo : d >= lo) || d > hi)
		return -EINVAL;
	*ms = (uint64_t)(d * 1000 + 0.5);
	return 0;
}

int sbt_run_option(struct sbt_trace_opts *t, enum sbt_format *format, const char **out_path, int c,
		   const char *arg)
{
	switch (c) {
	case 'o':
		if (strcmp(arg, "json") == 0)
			*format = SBT_FORMAT_JSON;
		else if (strcmp(arg, "text") == 0)
			*format = SBT_FORMAT_TEXT;
		else
			return usage_error("--output '%s': use json or text", arg);
		return -1;
	case 'O':
		*out_path = arg;
		return -1;
	case 'd':
		if (parse_seconds(arg, 0, true, 31536000, &t->duration_ms))
			return usage_error("--duration '%s': give seconds > 0 (e.g. 5 or 0.5)",
					   arg);
		if (!t->duration_ms)
			t->duration_ms = 1;
		return -1;
	case SBT_OPT_STATS_INTERVAL:
		if (parse_seconds(arg, 0, false, 86400, &t->stats_interval_ms))
			return usage_error("--stats-interval '%s': give seconds, 0..86400", arg);
		return -1;
	case 'v':
		t->exec.verbose = true;
		return -1;
	}
	return usage_error("option %d is not a run option", c);
}

int sbt_capture_option(struct sbt_exec_opts *eo, int c, const char *arg)
{
	unsigned long long v;
	enum sbt_exec_mode mode;

	switch (c) {
	case SBT_OPT_ARGV_MAX:
		if (parse_u64(arg, 1, SBT_ARGV_CAP, &v))
			return usage_error("--argv-max '%s': give 1..16384 bytes", arg);
		eo->argv_max = (uint32_t)v;
		return -1;
	case SBT_OPT_RINGBUF_SIZE:
		if (parse_u64(arg, 4096, 1u << 30, &v) || (v & (v - 1)))
			return usage_error(
				"--ringbuf-size '%s': give a power of two from 4096 to 2^30", arg);
		eo->ringbuf_bytes = (uint32_t)v;
		return -1;
	case SBT_OPT_EXEC_HOOK:
		if (sbt_exec_mode_parse(arg, &mode))
			return usage_error("--exec-hook '%s': use tp_btf, raw_tp or tracepoint",
					   arg);
		eo->forced_mode = (int)mode;
		return -1;
	case SBT_OPT_POLL_MS:
		if (parse_u64(arg, 0, 10000, &v))
			return usage_error("--poll-ms '%s': give 0..10000", arg);
		eo->poll_ms = (uint32_t)v;
		return -1;
	}
	return SBT_EXIT_USAGE;
}

/* --egress learn with what it needs, its options only with it. -1, or an exit code. */
static int decide_learn(struct sbt_trace_opts *opts)
{
	const char *why = sbt_egress_learn_refused(&opts->egress);

	if (why)
		return usage_error("%s", why);
	if (opts->egress.learn && opts->exec.tap)
		return usage_error("%s--egress learn with --tap: learn mode is for cgroup "
				   "sandboxes for now; drop --tap",
				   "");
	return -1;
}

/* One option of `sbtrace trace`. -1 to go on, else an exit code. */
static int trace_option(struct sbt_trace_args *a, int c, int idx, const char *arg)
{
	switch (c) {
	case 'c':
	case 'p':
		return add_cgroup_sandbox(&a->opts, c, arg);
	case OPT_TAP:
		return add_tap_sandbox(&a->opts, arg);
	case OPT_SANDBOX:
		if (a->nr_names >= SBT_MAX_SANDBOXES)
			return usage_error("more than 64 sandboxes (at %s)", arg);
		a->names[a->nr_names++] = arg;
		return -1;
	case OPT_STATE_DIR:
		a->state_dir = arg;
		return -1;
	case 'o':
	case 'O':
	case 'd':
	case 'v':
	case SBT_OPT_STATS_INTERVAL:
		return sbt_run_option(&a->opts, &a->format, &a->out_path, c, arg);
	case SBT_OPT_ARGV_MAX:
	case SBT_OPT_RINGBUF_SIZE:
	case SBT_OPT_EXEC_HOOK:
	case SBT_OPT_POLL_MS:
		return sbt_capture_option(&a->opts.exec, c, arg);
	case OPT_LEARN_FORMAT:
	case OPT_LEARN_OUT:
	case OPT_EGRESS:
	case OPT_ALLOW_CIDR:
	case OPT_ALLOW_HOST:
	case OPT_ALLOWLIST:
	case OPT_RESOLVER:
	case OPT_NO_DNS_PROXY:
	case OPT_DNS_GRACE:
	case OPT_DNS_DENY_REPLY:
	case OPT_DNS_MAX_LEARNED:
		if (sbt_egress_option(&a->opts.egress, &a->egress_mode, trace_longopts[idx].name,
				      arg))
			return SBT_EXIT_USAGE;
		return -1;
	case 'h':
		sbt_trace_usage(stdout);
		return SBT_EXIT_OK;
	}
	sbt_log("see '%s --help'", sbt_log_name());
	return SBT_EXIT_USAGE;
}

/* --sandbox NAME: the shim's state file gives the cgroup (and a microVM's tap). */
static int add_shim_sandboxes(struct sbt_trace_args *a)
{
	struct sbt_trace_opts *opts = &a->opts;
	struct sbt_shim_handshake *h = &a->handshake;

	for (int i = 0; i < a->nr_names; i++) {
		const struct sbt_backend_caps *caps;
		struct sbt_sandbox_state st;
		struct sbt_target *sb;
		char err[256];
		int bad;

		if (sbt_state_read(a->state_dir, a->names[i], &st, err, sizeof(err))) {
			sbt_log("--sandbox %s: %s; is it running? (sbtrace-shim run --name %s ...)",
				a->names[i], err, a->names[i]);
			return SBT_EXIT_USAGE;
		}
		/* Fail closed: a policy the shim recorded for the agent is never dropped unseen. */
		if (st.egress_mode[0] && !opts->egress.nr_rules &&
		    a->egress_mode != SBT_EGRESS_ENFORCE && a->egress_mode != SBT_EGRESS_AUDIT) {
			sbt_log("--sandbox %s: its state file carries an egress policy "
				"(sbtrace-shim run --allow/--egress) that only sbtrace agent "
				"reads; give this trace its own (--allow-cidr ..., --egress "
				"enforce) or run sbtrace agent",
				st.name);
			return SBT_EXIT_USAGE;
		}
		sb = sbt_trace_target_next(opts);
		if (!sb)
			return no_room(a->names[i]);
		if (sbt_target_from_cgroup(st.cgroup_path, sb) < 0)
			return SBT_EXIT_USAGE;
		sb->origin = "sandbox";
		snprintf(sb->pin_name, sizeof(sb->pin_name), "%s", st.name);
		sbt_trace_target_commit(opts);
		/*
		 * A microVM: its execs are in the guest kernel, seen through its
		 * guest agent's stream when it has one; its network is the tap.
		 * The backend says so; a backend this build does not know, its
		 * state file's visibility.
		 */
		caps = sbt_backend_caps_by_name(st.backend);
		sb->exec_hidden = caps ? !caps->execs_on_host
				       : strcmp(st.visibility_exec, "none") == 0 ||
						  strcmp(st.visibility_exec, "guest_kernel") == 0;
		if (sb->exec_hidden && st.exec_stream[0])
			snprintf(sb->exec_stream, sizeof(sb->exec_stream), "%s", st.exec_stream);
		snprintf(sb->accel, sizeof(sb->accel), "%s", st.accel);
		snprintf(sb->boot, sizeof(sb->boot), "%s", st.boot);
		snprintf(sb->boot_why, sizeof(sb->boot_why), "%s", st.boot_why);
		if (st.tap[0] && sbt_tap_from_shim(sb, st.tap, st.tap_netns, st.guest_addrs,
						   st.nr_guest_addrs, &bad)) {
			sbt_log("--sandbox %s: guest address '%s' in its state file is not an "
				"address; restart the sandbox",
				st.name, st.guest_addrs[bad]);
			return SBT_EXIT_USAGE;
		}
		snprintf(h->cgroup[h->n], PATH_MAX, "%s", st.cgroup_path);
		snprintf(h->fifo[h->n++], PATH_MAX, "%s/%s.attach", a->state_dir, a->names[i]);
	}
	if (h->n) {
		opts->on_attached = shim_handshake;
		opts->on_tick = shim_gone;
		opts->hook_arg = h;
		h->stop_when_gone = (uint32_t)h->n == opts->nr_targets;
	}
	return -1;
}

/* After the options: the egress mode's default, and the hooks the sandboxes need. */
static int decide(struct sbt_trace_args *a)
{
	struct sbt_trace_opts *opts = &a->opts;

	if (opts->nr_targets == 0)
		return usage_error("%sno sandbox given: use --cgroup PATH, --pid PID, --sandbox "
				   "NAME or --tap IFNAME",
				   "");
	/* Default: enforce when any rule is given, else observe only. */
	if (a->egress_mode == -2)
		a->egress_mode = opts->egress.nr_rules ? SBT_EGRESS_ENFORCE : SBT_EGRESS_OBSERVE;
	if (a->egress_mode == SBT_EGRESS_OFF && opts->egress.nr_rules)
		return usage_error("%s--egress off with allow rules: drop the rules or use audit",
				   "");
	opts->egress.mode = a->egress_mode;
	opts->egress.resolver_rule_id = (uint32_t)opts->egress.nr_rules + 1;
	sbt_exec_opts_decide(&opts->exec, a->egress_mode, opts->targets, opts->nr_targets);
	if (opts->exec.tap && a->egress_mode == SBT_EGRESS_OFF)
		return usage_error("%s--egress off with --tap: a tap is only watched for egress; "
				   "drop one of them",
				   "");
	return decide_learn(opts);
}

int sbt_trace_args_parse(int argc, char **argv, struct sbt_trace_args *a)
{
	int c, idx = 0, ret;

	memset(a, 0, sizeof(*a));
	a->opts.exec.forced_mode = -1;
	a->opts.exec.argv_max = SBT_ARGV_DEFAULT;
	a->opts.exec.ringbuf_bytes = 1u << 20;
	a->opts.exec.poll_ms = 50;
	a->opts.exec.host_netns_cookie = sbt_netns_cookie();
	a->format = SBT_FORMAT_JSON;
	a->state_dir = SBT_STATE_DIR_DEFAULT;
	a->egress_mode = -2;
	optind = 1;
	while ((c = getopt_long(argc, argv, "c:p:o:O:d:vh", trace_longopts, &idx)) != -1) {
		ret = trace_option(a, c, idx, optarg);
		if (ret >= 0)
			return ret;
	}
	if (optind < argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	ret = add_shim_sandboxes(a);
	return ret >= 0 ? ret : decide(a);
}

/* Every tap's device exists, in its netns, before anything is loaded (tap.c looks again). */
static int check_taps(const struct sbt_trace_opts *opts)
{
	for (uint32_t i = 0; i < opts->nr_targets; i++) {
		const struct sbt_target *sb = &opts->targets[i];
		char err[PATH_MAX + 64];
		int r;

		if (!sb->has_tap || (r = sbt_tap_ifindex(&sb->tap, err, sizeof(err))) > 0)
			continue;
		if (sbt_target_has_cgroup(sb)) /* a shim's microVM (--sandbox) */
			sbt_log("sandbox %s: its tap %s: %s; is it still running?", sb->name,
				sb->tap.ifname, err);
		else
			sbt_log("--tap %s: %s%s", sb->tap.ifname, err,
				r == -ENODEV   ? "; give an existing device ('ip link show'), "
						 "with netns=NS when it is in another namespace"
				: r == -ENOENT ? "; see 'ip netns list'"
					       : "");
		return SBT_EXIT_USAGE;
	}
	return -1;
}

void sbt_trace_args_free(struct sbt_trace_args *a)
{
	sbt_trace_targets_free(&a->opts);
	free(a->opts.egress.rules);
	a->opts.egress.rules = NULL;
}

int sbt_trace_main(int argc, char **argv, sbt_trace_fn run)
{
	struct sbt_trace_args a;
	struct sbt_json_sink sink;
	int ret = sbt_trace_args_parse(argc, argv, &a), err;

	if (ret < 0)
		ret = check_taps(&a.opts);
	if (ret >= 0)
		goto out;
	if (a.out_path) {
		err = sbt_json_sink_open(&sink, a.out_path, a.format);
		if (err) {
			sbt_log("--out '%s': %s", a.out_path, strerror(-err));
			ret = SBT_EXIT_USAGE;
			goto out;
		}
	} else {
		sbt_json_sink_init(&sink, stdout, a.format);
	}
	sbt_sinks_add(&a.opts, &sink.base);
	ret = run(&a.opts);
	err = sbt_json_sink_close(&sink);
	if (err && ret == SBT_EXIT_OK) {
		sbt_log("closing '%s': %s", a.out_path, strerror(-err));
		ret = SBT_EXIT_RUNTIME;
	}
out:
	sbt_trace_args_free(&a);
	return ret;
}

int sbt_features_main(int argc, char **argv, sbt_features_fn features)
{
	static const struct option longopts[] = {
		{ "exec-hook", required_argument, NULL, SBT_OPT_EXEC_HOOK },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct sbt_exec_opts eo = { .forced_mode = -1,
				    .argv_max = SBT_ARGV_DEFAULT,
				    .ringbuf_bytes = 4096,
				    .observe = true,
				    .observe_connect = true,
				    .policy = true,
				    .tap = true,
				    .host_netns_cookie = sbt_netns_cookie() };
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "vh", longopts, NULL)) != -1) {
		switch (c) {
		case SBT_OPT_EXEC_HOOK:
			if (sbt_capture_option(&eo, c, optarg) >= 0)
				return SBT_EXIT_USAGE;
			break;
		case 'v':
			eo.verbose = true;
			break;
		case 'h':
			sbt_features_usage(stdout);
			return SBT_EXIT_OK;
		default:
			sbt_log("see '%s --help'", sbt_log_name());
			return SBT_EXIT_USAGE;
		}
	}
	if (optind < argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	return features(&eo, stdout);
}
