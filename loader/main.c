// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* sbtrace: the loader's command line. Commands are a table of {name, fn}. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "loader.h"
#include "policy.h"
#include "sandbox.h"
#include "probe_cmd.h"
#include "trace.h"

#define SBT_XSTR(x) #x
#define SBT_STR(x)  SBT_XSTR(x)

static const char exit_codes_help[] =
	"Exit codes:\n"
	"  0  success (also when stopped by SIGINT, SIGTERM or --duration)\n"
	"  1  runtime failure while tracing (e.g. the output could not be written)\n"
	"  2  usage or input error (unknown option, nonexistent cgroup or pid, bad value)\n"
	"  3  kernel capability missing, or loading/attaching a BPF program failed\n";

static void usage_main(FILE *f)
{
	fprintf(f,
		"Usage: sbtrace [--version] [--help] COMMAND [ARGS]\n"
		"\n"
		"Trace what runs inside a sandbox, from the host kernel, with BPF.\n"
		"\n"
		"Commands:\n"
		"  trace      attach to running sandboxes (cgroups) and stream their execs\n"
		"  features   probe the kernel and print the attach plan as JSON\n"
		"  probe      run a repo's build in a fresh sandbox: does it invoke a shell?\n"
		"  version    print the version\n"
		"  help       show help for a command: sbtrace help trace\n"
		"\n%s",
		exit_codes_help);
}

static void usage_trace(FILE *f)
{
	fprintf(f,
		"Usage: sbtrace trace (--cgroup PATH | --pid PID | --sandbox NAME | --tap "
		"IFNAME)...\n"
		"                    [OPTIONS]\n"
		"\n"
		"Attach to one or more sandboxes and stream every exec inside them (the\n"
		"cgroup itself or any descendant) as events; at stop, report the shell\n"
		"invocations seen (ShellInvocationObserved) and any lost events.\n"
		"\n"
		"Sandboxes (at least one; repeatable, up to %d):\n"
		"  -c, --cgroup PATH      a cgroup v2 directory: absolute, or relative to the\n"
		"                         v2 mount (e.g. sbtrace/job1)\n"
		"  -p, --pid PID          the cgroup that process PID is in\n"
		"      --sandbox NAME     a sandbox started by sbtrace-shim (its state file);\n"
		"                         a shim waiting for a tracer is released once attached;\n"
		"                         when every sandbox is one of these, the trace stops\n"
		"                         by itself once they have all ended\n"
		"      --state-dir DIR    where shim state files live (default /run/sbtrace)\n"
		"      --tap IFNAME[,netns=NS][,guest=ADDR]...[,resolver=ADDR]\n"
		"                         a microVM's tap (or a veth's host end): its ingress\n"
		"                         is the guest's egress, judged by a tc program with\n"
		"                         the same rules (denied SYN: RST back; denied UDP or\n"
		"                         echo: ICMP prohibited). netns: where the device is\n"
		"                         (a name in /run/netns or a path); guest: the guest's\n"
		"                         own addresses (any other source is dropped as\n"
		"                         spoofed; without one, sources are not checked);\n"
		"                         resolver: the only DNS server the guest may use\n"
		"                         (default --resolver; none: DNS refused). The guest's\n"
		"                         execs are invisible from here (visibility.exec none)\n"
		"\n"
		"Output:\n"
		"  -o, --output FORMAT    json (JSON Lines, default) or text (aligned columns)\n"
		"  -O, --out FILE         write events to FILE instead of stdout\n"
		"  -d, --duration SEC     stop after SEC seconds (decimals allowed)\n"
		"  -v, --verbose          libbpf debug output on stderr\n"
		"\n"
		"Capture:\n"
		"      --argv-max BYTES   argv bytes captured per exec (1..%d, default %d);\n"
		"                         longer argv is cut and flagged argv_truncated\n"
		"      --ringbuf-size BYTES  ring buffer size, a power of two >= 4096\n"
		"                         (default 1048576; it is mapped twice, so it\n"
		"                         counts twice in the loader's RSS)\n"
		"      --exec-hook MODE   force tp_btf, raw_tp or tracepoint instead of\n"
		"                         choosing at run time (no fallback then)\n"
		"      --poll-ms MS       drain the ring buffer every MS ms (default 50): events\n"
		"                         reach the output within about MS ms; a wake-up is\n"
		"                         forced when a quarter of the buffer fills. 0 wakes\n"
		"                         the reader on every exec: lowest latency, but each\n"
		"                         wake-up costs the traced exec ~18 us in a VM\n"
		"\n"
		"Egress (see the README's \"Egress\"; rules: cidr ADDR[/LEN] | host NAME,\n"
		"each with optional port N[-M] and proto tcp|udp):\n"
		"      --allow-cidr CIDR  allow a destination range, e.g. 192.0.2.0/24 or\n"
		"                         '2001:db8::/32 port 443 proto tcp' (repeatable)\n"
		"      --allow-host NAME  allow what NAME resolves to, as the sandbox resolves\n"
		"                         it, re-resolved when the TTL expires (repeatable)\n"
		"      --allowlist FILE   rules from FILE, one a line, # comments\n"
		"      --egress MODE      enforce (deny = EPERM at once), audit (allow, report\n"
		"                         would_deny) or off; default: enforce when any rule\n"
		"                         is given, else observe TCP connects only\n"
		"      --resolver ADDR    the resolver host rules are resolved with (default:\n"
		"                         the sandbox's own resolv.conf, in its netns)\n"
		"  -h, --help             this help\n"
		"\n"
		"Stops on SIGINT, SIGTERM or --duration: detaches, drains the ring buffer,\n"
		"then prints ShellInvocationObserved per sandbox and TraceStopped.\n"
		"\n%s",
		SBT_MAX_SANDBOXES, SBT_ARGV_CAP, SBT_ARGV_DEFAULT, exit_codes_help);
}

static void usage_features(FILE *f)
{
	fprintf(f,
		"Usage: sbtrace features [--exec-hook MODE] [-v]\n"
		"\n"
		"Load and attach each capability's hooks in order of preference (no sandbox\n"
		"registered, so nothing is traced), detach, and print the resulting attach\n"
		"plan as JSON: the mode chosen per capability and every attempt that failed.\n"
		"\n%s",
		exit_codes_help);
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

static int usage_error(const char *cmd, const char *fmt, const char *arg)
{
	fprintf(stderr, "sbtrace %s: ", cmd);
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "; see 'sbtrace %s --help'\n", cmd);
	return SBT_EXIT_USAGE;
}

static int add_rule(struct sbt_egress_cfg *cfg, const struct sbt_rule *r)
{
	struct sbt_rule *n;

	if (cfg->nr_rules >= 100000) {
		fprintf(stderr, "sbtrace trace: more than 100000 allow rules\n");
		return -E2BIG;
	}
	n = realloc(cfg->rules, (cfg->nr_rules + 1) * sizeof(*n));
	if (!n) {
		fprintf(stderr, "sbtrace trace: out of memory\n");
		return -ENOMEM;
	}
	cfg->rules = n;
	n[cfg->nr_rules] = *r;
	n[cfg->nr_rules].id = (uint32_t)cfg->nr_rules + 1;
	cfg->nr_rules++;
	return 0;
}

int sbt_cli_add_rule(struct sbt_egress_cfg *cfg, enum sbt_rule_kind kind, const char *opt,
		     const char *arg)
{
	struct sbt_parse_error err;
	struct sbt_rule r;
	int n = sbt_rule_parse_arg(kind, arg, &r, &err);

	if (n < 0) {
		fprintf(stderr, "sbtrace trace: %s '%s':%u: %s\n", opt, arg, err.col, err.msg);
		return -EINVAL;
	}
	if (n == 0) {
		fprintf(stderr, "sbtrace trace: %s needs a value\n", opt);
		return -EINVAL;
	}
	return add_rule(cfg, &r);
}

/*
 * The egress options trace and probe share (--allow-cidr, --allow-host,
 * --allowlist, --egress, --resolver), by long name. 0, or -EINVAL after a
 * one-line message.
 */
int sbt_cli_egress_option(struct sbt_egress_cfg *cfg, int *mode, const char *cmd, const char *opt,
			  const char *arg)
{
	bool v4;

	if (strcmp(opt, "allow-cidr") == 0)
		return sbt_cli_add_rule(cfg, SBT_RULE_CIDR, "--allow-cidr", arg);
	if (strcmp(opt, "allow-host") == 0)
		return sbt_cli_add_rule(cfg, SBT_RULE_HOST, "--allow-host", arg);
	if (strcmp(opt, "allowlist") == 0)
		return sbt_cli_load_allowlist(cfg, arg);
	if (strcmp(opt, "egress") == 0) {
		if (strcmp(arg, "enforce") == 0)
			*mode = SBT_EGRESS_ENFORCE;
		else if (strcmp(arg, "audit") == 0)
			*mode = SBT_EGRESS_AUDIT;
		else if (strcmp(arg, "off") == 0)
			*mode = SBT_EGRESS_OFF;
		else {
			usage_error(cmd, "--egress '%s': use enforce, audit or off", arg);
			return -EINVAL;
		}
		return 0;
	}
	if (strcmp(opt, "resolver") == 0) {
		if (sbt_addr_parse(arg, cfg->resolver, &v4)) {
			usage_error(cmd, "--resolver '%s': give an IPv4 or IPv6 address", arg);
			return -EINVAL;
		}
		cfg->has_resolver = true;
		return 0;
	}
	return -EINVAL;
}

/* --allowlist FILE: one rule a line; errors as FILE:LINE:COL: what is wrong. */
int sbt_cli_load_allowlist(struct sbt_egress_cfg *cfg, const char *path)
{
	FILE *f = fopen(path, "re");
	char *line = NULL;
	size_t cap = 0;
	unsigned int lineno = 0;
	ssize_t len;
	int ret = 0;

	if (!f) {
		fprintf(stderr, "sbtrace trace: --allowlist '%s': %s\n", path, strerror(errno));
		return -errno;
	}
	while ((len = getline(&line, &cap, f)) >= 0) {
		struct sbt_parse_error err;
		struct sbt_rule r;
		int n;

		lineno++;
		if (len > 0 && line[len - 1] == '\n')
			line[--len] = '\0';
		if ((size_t)len != strlen(line)) {
			fprintf(stderr, "%s:%u:%zu: NUL byte in the line; allowlists are text\n",
				path, lineno, strlen(line) + 1);
			ret = -EINVAL;
			break;
		}
		n = sbt_rule_parse(line, &r, &err);
		if (n < 0) {
			fprintf(stderr, "%s:%u:%u: %s\n", path, lineno, err.col, err.msg);
			ret = -EINVAL;
			break;
		}
		if (n > 0 && add_rule(cfg, &r)) {
			ret = -ENOMEM;
			break;
		}
	}
	if (!ret && ferror(f)) {
		fprintf(stderr, "sbtrace trace: --allowlist '%s': read error\n", path);
		ret = -EIO;
	}
	free(line);
	fclose(f);
	return ret;
}

/* Shims waiting for us (sbtrace-shim run without --no-wait): tell them we are attached. */
struct handshake {
	int n;
	char fifo[SBT_MAX_SANDBOXES][PATH_MAX];
	char cgroup[SBT_MAX_SANDBOXES][PATH_MAX]; /* to notice the sandboxes ending */
	bool stop_when_gone;			  /* every sandbox came from --sandbox */
	uint64_t ticks;
};

/* All the shim's sandboxes have ended (their cgroups are gone): nothing more can come. */
static const char *shim_gone(void *arg)
{
	struct handshake *h = arg;

	if (!h->stop_when_gone || ++h->ticks % 4)
		return NULL;
	for (int i = 0; i < h->n; i++)
		if (access(h->cgroup[i], F_OK) == 0)
			return NULL;
	return "workload_exited";
}

static void shim_handshake(void *arg)
{
	struct handshake *h = arg;

	for (int i = 0; i < h->n; i++) {
		int fd = open(h->fifo[i], O_WRONLY | O_NONBLOCK | O_CLOEXEC);

		/* ENXIO: nobody waits (--no-wait, or it went on already) */
		if (fd < 0)
			continue;
		if (write(fd, "attached\n", 9) != 9)
			fprintf(stderr, "sbtrace: handshake with %s: %s\n", h->fifo[i],
				strerror(errno));
		close(fd);
	}
}

static int cmd_trace(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "cgroup", required_argument, NULL, 'c' },
		{ "pid", required_argument, NULL, 'p' },
		{ "output", required_argument, NULL, 'o' },
		{ "out", required_argument, NULL, 'O' },
		{ "duration", required_argument, NULL, 'd' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "argv-max", required_argument, NULL, 1 },
		{ "ringbuf-size", required_argument, NULL, 2 },
		{ "exec-hook", required_argument, NULL, 3 },
		{ "poll-ms", required_argument, NULL, 4 },
		{ "allow-cidr", required_argument, NULL, 5 },
		{ "allow-host", required_argument, NULL, 6 },
		{ "allowlist", required_argument, NULL, 7 },
		{ "egress", required_argument, NULL, 8 },
		{ "resolver", required_argument, NULL, 9 },
		{ "sandbox", required_argument, NULL, 10 },
		{ "state-dir", required_argument, NULL, 11 },
		{ "tap", required_argument, NULL, 12 },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	static struct sbt_trace_opts opts;
	const char *out_path = NULL;
	unsigned long long v;
	enum sbt_exec_mode mode;
	int c, ret, egress_mode = -2, nr_names = 0, optind_long = 0;
	const char *sandbox_names[SBT_MAX_SANDBOXES];
	const char *state_dir = SBT_STATE_DIR_DEFAULT;
	static struct handshake handshake;

	free(opts.egress.rules);
	memset(&opts, 0, sizeof(opts));
	memset(&handshake, 0, sizeof(handshake));
	opts.exec.forced_mode = -1;
	opts.exec.argv_max = SBT_ARGV_DEFAULT;
	opts.exec.ringbuf_bytes = 1u << 20;
	opts.exec.poll_ms = 50;
	opts.exec.observe = true;
	opts.exec.host_netns_cookie = sbt_netns_cookie();
	opts.format = SBT_FORMAT_JSON;
	opts.out = stdout;

	optind = 1;
	while ((c = getopt_long(argc, argv, "c:p:o:O:d:vh", longopts, &optind_long)) != -1) {
		struct sbt_sandbox *sb;

		switch (c) {
		case 'c':
		case 'p':
			if (opts.nr_sandboxes >= SBT_MAX_SANDBOXES)
				return usage_error("trace", "more than 64 sandboxes (at %s)",
						   optarg);
			sb = &opts.sandboxes[opts.nr_sandboxes];
			if ((c == 'c' ? sbt_sandbox_from_cgroup(optarg, sb)
				      : sbt_sandbox_from_pid(optarg, sb)) < 0)
				return SBT_EXIT_USAGE;
			for (uint32_t i = 0; i < opts.nr_sandboxes; i++)
				if (opts.sandboxes[i].cgroup_id == sb->cgroup_id)
					return usage_error("trace", "cgroup %s given twice",
							   sb->name);
			sb->slot = opts.nr_sandboxes++;
			break;
		case 'o':
			if (strcmp(optarg, "json") == 0)
				opts.format = SBT_FORMAT_JSON;
			else if (strcmp(optarg, "text") == 0)
				opts.format = SBT_FORMAT_TEXT;
			else
				return usage_error("trace", "--output '%s': use json or text",
						   optarg);
			break;
		case 'O':
			out_path = optarg;
			break;
		case 'd': {
			char *end;
			double d;

			errno = 0;
			d = strtod(optarg, &end);
			if (errno || *end || end == optarg || !(d > 0) || d > 31536000)
				return usage_error(
					"trace",
					"--duration '%s': give seconds > 0 (e.g. 5 or 0.5)",
					optarg);
			opts.duration_ms = (uint64_t)(d * 1000 + 0.5);
			if (!opts.duration_ms)
				opts.duration_ms = 1;
			break;
		}
		case 'v':
			sbt_verbose = 1;
			break;
		case 1:
			if (parse_u64(optarg, 1, SBT_ARGV_CAP, &v))
				return usage_error("trace", "--argv-max '%s': give 1..16384 bytes",
						   optarg);
			opts.exec.argv_max = (uint32_t)v;
			break;
		case 2:
			if (parse_u64(optarg, 4096, 1u << 30, &v) || (v & (v - 1)))
				return usage_error("trace",
						   "--ringbuf-size '%s': give a power of two from "
						   "4096 to 2^30",
						   optarg);
			opts.exec.ringbuf_bytes = (uint32_t)v;
			break;
		case 3:
			if (sbt_exec_mode_parse(optarg, &mode))
				return usage_error(
					"trace",
					"--exec-hook '%s': use tp_btf, raw_tp or tracepoint",
					optarg);
			opts.exec.forced_mode = (int)mode;
			break;
		case 4:
			if (parse_u64(optarg, 0, 10000, &v))
				return usage_error("trace", "--poll-ms '%s': give 0..10000",
						   optarg);
			opts.exec.poll_ms = (uint32_t)v;
			break;
		case 5:
		case 6:
		case 7:
		case 8:
		case 9:
			if (sbt_cli_egress_option(&opts.egress, &egress_mode, "trace",
						  longopts[optind_long].name, optarg))
				return SBT_EXIT_USAGE;
			break;
		case 10:
			if (nr_names >= SBT_MAX_SANDBOXES)
				return usage_error("trace", "more than 64 sandboxes (at %s)",
						   optarg);
			sandbox_names[nr_names++] = optarg;
			break;
		case 11:
			state_dir = optarg;
			break;
		case 12: {
			char err[256];

			if (opts.nr_sandboxes >= SBT_MAX_SANDBOXES)
				return usage_error("trace", "more than 64 sandboxes (at %s)",
						   optarg);
			sb = &opts.sandboxes[opts.nr_sandboxes];
			memset(sb, 0, sizeof(*sb));
			if (sbt_tap_parse(optarg, &sb->tap, err, sizeof(err))) {
				fprintf(stderr,
					"sbtrace trace: --tap '%s': %s; see 'sbtrace trace "
					"--help'\n",
					optarg, err);
				return SBT_EXIT_USAGE;
			}
			memcpy(sb->name, "tap:", 4);
			memcpy(sb->name + 4, sb->tap.ifname, sizeof(sb->tap.ifname));
			for (uint32_t i = 0; i < opts.nr_sandboxes; i++)
				if (strcmp(opts.sandboxes[i].name, sb->name) == 0 &&
				    strcmp(opts.sandboxes[i].tap.netns, sb->tap.netns) == 0)
					return usage_error("trace", "--tap %s given twice",
							   sb->tap.ifname);
			sb->origin = "tap";
			sb->has_tap = true;
			sb->exec_hidden = true;
			sb->slot = opts.nr_sandboxes++;
			opts.exec.tap = true;
			break;
		}
		case 'h':
			usage_trace(stdout);
			return SBT_EXIT_OK;
		default:
			fprintf(stderr, "see 'sbtrace trace --help'\n");
			return SBT_EXIT_USAGE;
		}
	}
	if (optind < argc)
		return usage_error("trace", "unexpected argument '%s'", argv[optind]);
	for (int i = 0; i < nr_names; i++) {
		struct sbt_sandbox_state st;
		struct sbt_sandbox *sb;
		char err[256];
		int bad;

		if (opts.nr_sandboxes >= SBT_MAX_SANDBOXES)
			return usage_error("trace", "more than 64 sandboxes (at %s)",
					   sandbox_names[i]);
		if (sbt_state_read(state_dir, sandbox_names[i], &st, err, sizeof(err))) {
			fprintf(stderr,
				"sbtrace trace: --sandbox %s: %s; is it running? "
				"(sbtrace-shim run --name %s ...)\n",
				sandbox_names[i], err, sandbox_names[i]);
			return SBT_EXIT_USAGE;
		}
		sb = &opts.sandboxes[opts.nr_sandboxes];
		if (sbt_sandbox_from_cgroup(st.cgroup_path, sb) < 0)
			return SBT_EXIT_USAGE;
		sb->origin = "sandbox";
		sb->slot = opts.nr_sandboxes++;
		/* A microVM: its execs are in the guest kernel; its network is the tap. */
		sb->exec_hidden = strcmp(st.visibility_exec, "none") == 0;
		if (st.tap[0] && sbt_tap_from_shim(sb, st.tap, st.tap_netns, st.guest_addrs,
						   st.nr_guest_addrs, &bad)) {
			fprintf(stderr,
				"sbtrace trace: --sandbox %s: guest address '%s' in its state file "
				"is not an address; restart the sandbox\n",
				st.name, st.guest_addrs[bad]);
			return SBT_EXIT_USAGE;
		}
		if (sb->has_tap)
			opts.exec.tap = true;
		snprintf(handshake.cgroup[handshake.n], PATH_MAX, "%s", st.cgroup_path);
		snprintf(handshake.fifo[handshake.n++], PATH_MAX, "%s/%s.attach", state_dir,
			 sandbox_names[i]);
	}
	if (handshake.n) {
		opts.on_attached = shim_handshake;
		opts.on_tick = shim_gone;
		opts.hook_arg = &handshake;
		handshake.stop_when_gone = (uint32_t)handshake.n == opts.nr_sandboxes;
	}
	if (opts.nr_sandboxes == 0)
		return usage_error(
			"trace",
			"%sno sandbox given: use --cgroup PATH, --pid PID, --sandbox NAME "
			"or --tap IFNAME",
			"");
	/* Default: enforce when any rule is given, else observe only. */
	if (egress_mode == -2)
		egress_mode = opts.egress.nr_rules ? SBT_EGRESS_ENFORCE : SBT_EGRESS_OBSERVE;
	if (egress_mode == SBT_EGRESS_OFF && opts.egress.nr_rules)
		return usage_error("trace",
				   "%s--egress off with allow rules: drop the rules or "
				   "use audit",
				   "");
	opts.egress.mode = egress_mode;
	opts.egress.resolver_rule_id = (uint32_t)opts.egress.nr_rules + 1;
	/*
	 * The tcp_connect observation serves observe-only mode; with a policy the
	 * sock_addr hooks see every connect (and it would cost ~0.5 us per
	 * connection: inet_sock_set_state fires six times).
	 */
	opts.exec.observe = egress_mode != SBT_EGRESS_OFF;
	opts.exec.observe_connect = egress_mode == SBT_EGRESS_OBSERVE;
	opts.exec.policy = egress_mode == SBT_EGRESS_AUDIT || egress_mode == SBT_EGRESS_ENFORCE;
	/* Taps only: the host-wide exec hook, socket observations and cgroup hooks would watch nothing. */
	{
		bool any_cgroup = false;

		for (uint32_t i = 0; i < opts.nr_sandboxes; i++)
			any_cgroup = any_cgroup || sbt_sandbox_has_cgroup(&opts.sandboxes[i]);
		if (!any_cgroup) {
			opts.exec.observe = false;
			opts.exec.observe_connect = false;
			opts.exec.policy = false;
			opts.exec.no_exec_attach = true;
		}
	}
	if (opts.exec.tap && egress_mode == SBT_EGRESS_OFF)
		return usage_error("trace",
				   "%s--egress off with --tap: a tap is only watched "
				   "for egress; drop one of them",
				   "");
	if (out_path) {
		opts.out = fopen(out_path, "we");
		if (!opts.out) {
			fprintf(stderr, "sbtrace trace: --out '%s': %s\n", out_path,
				strerror(errno));
			return SBT_EXIT_USAGE;
		}
	}
	sbt_setup_libbpf();
	ret = sbt_trace_run(&opts);
	if (out_path && fclose(opts.out) != 0 && ret == SBT_EXIT_OK) {
		fprintf(stderr, "sbtrace trace: closing '%s': %s\n", out_path, strerror(errno));
		ret = SBT_EXIT_RUNTIME;
	}
	return ret;
}

static int cmd_features(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "exec-hook", required_argument, NULL, 3 },
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
	enum sbt_exec_mode mode;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "vh", longopts, NULL)) != -1) {
		switch (c) {
		case 3:
			if (sbt_exec_mode_parse(optarg, &mode))
				return usage_error(
					"features",
					"--exec-hook '%s': use tp_btf, raw_tp or tracepoint",
					optarg);
			eo.forced_mode = (int)mode;
			break;
		case 'v':
			sbt_verbose = 1;
			break;
		case 'h':
			usage_features(stdout);
			return SBT_EXIT_OK;
		default:
			fprintf(stderr, "see 'sbtrace features --help'\n");
			return SBT_EXIT_USAGE;
		}
	}
	if (optind < argc)
		return usage_error("features", "unexpected argument '%s'", argv[optind]);
	sbt_setup_libbpf();
	return sbt_features_run(&eo, stdout);
}

static const struct sbt_command commands[] = {
	{ "trace", cmd_trace, usage_trace },
	{ "features", cmd_features, usage_features },
	{ "probe", sbt_probe_main, sbt_probe_usage },
};

int main(int argc, char **argv)
{
	static const struct sbt_cli cli = {
		.prog = "sbtrace",
		.commands = commands,
		.nr_commands = sizeof(commands) / sizeof(commands[0]),
		.usage = usage_main,
		.version = "sbtrace " SBTRACE_VERSION " (event ABI " SBT_STR(SBT_ABI_VERSION) ")",
		.exit_ok = SBT_EXIT_OK,
		.exit_usage = SBT_EXIT_USAGE,
	};

	return sbt_cli_main(&cli, argc, argv);
}
