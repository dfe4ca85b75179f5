// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* `sbtrace agent`: options, help, the request. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "cmd/agent_cmd.h"
#include "cmd/agent_conf.h"
#include "event/metrics.h"
#include "sandbox/sandbox.h"
#include "event/sink.h"
#include "event/sink_sub.h"
#include "cmd/trace_cmd.h"
#include "help/sbtrace-agent.h"
#include "lib/instance.h"
#include "sandbox/pins.h"
#include "lib/log.h"

void sbt_agent_usage(FILE *f)
{
	sbt_help_agent(f);
}

enum agent_opt {
	OPT_PARENT = 256,
	OPT_STATE_DIR,
	OPT_NO_SHIM,
	OPT_MAX_SANDBOXES,
	OPT_METRICS_ADDR,
	OPT_METRICS_FILE,
	OPT_METRICS_ALLOW_UID,
	OPT_METRICS_TOKEN_FILE,
	OPT_SOCKET,
	OPT_NO_SOCKET,
	OPT_POLICY_DIR,
	OPT_METRICS_RETAIN,
	OPT_METRICS_NO_SANDBOX,
	OPT_PERSIST,
	OPT_UNPIN,
	OPT_CONFIG,
	OPT_METRICS_CONTAINER,
};

static const struct option agent_longopts[] = {
	{ "cgroup-parent", required_argument, NULL, OPT_PARENT },
	{ "state-dir", required_argument, NULL, OPT_STATE_DIR },
	{ "no-shim", no_argument, NULL, OPT_NO_SHIM },
	{ "max-sandboxes", required_argument, NULL, OPT_MAX_SANDBOXES },
	{ "stats-interval", required_argument, NULL, SBT_OPT_STATS_INTERVAL },
	{ "metrics-addr", required_argument, NULL, OPT_METRICS_ADDR },
	{ "metrics-file", required_argument, NULL, OPT_METRICS_FILE },
	{ "metrics-allow-uid", required_argument, NULL, OPT_METRICS_ALLOW_UID },
	{ "metrics-token-file", required_argument, NULL, OPT_METRICS_TOKEN_FILE },
	{ "output", required_argument, NULL, 'o' },
	{ "out", required_argument, NULL, 'O' },
	{ "duration", required_argument, NULL, 'd' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "argv-max", required_argument, NULL, SBT_OPT_ARGV_MAX },
	{ "ringbuf-size", required_argument, NULL, SBT_OPT_RINGBUF_SIZE },
	{ "exec-hook", required_argument, NULL, SBT_OPT_EXEC_HOOK },
	{ "poll-ms", required_argument, NULL, SBT_OPT_POLL_MS },
	{ "socket", required_argument, NULL, OPT_SOCKET },
	{ "no-socket", no_argument, NULL, OPT_NO_SOCKET },
	{ "policy-dir", required_argument, NULL, OPT_POLICY_DIR },
	{ "metrics-retain", required_argument, NULL, OPT_METRICS_RETAIN },
	{ "metrics-no-sandbox-label", no_argument, NULL, OPT_METRICS_NO_SANDBOX },
	{ "persist", no_argument, NULL, OPT_PERSIST },
	{ "unpin", no_argument, NULL, OPT_UNPIN },
	{ "config", required_argument, NULL, OPT_CONFIG },
	{ "metrics-container-label", no_argument, NULL, OPT_METRICS_CONTAINER },
	{ "help", no_argument, NULL, 'h' },
	{ 0 },
};

/* "sbtrace agent: ...; see 'sbtrace agent --help'", and its exit code. */
#define usage_error(...) (sbt_log_usage(__VA_ARGS__), SBT_EXIT_USAGE)

int sbt_parse_hostport(const char *s, struct sockaddr_storage *ss, unsigned int *sslen)
{
	char host[64];
	const char *colon, *h = s;
	size_t hl;
	char *end;
	unsigned long port;

	memset(ss, 0, sizeof(*ss));
	if (*s == '[') {
		colon = strstr(s, "]:");
		if (!colon)
			return -EINVAL;
		h = s + 1;
		hl = (size_t)(colon - h);
		colon++;
	} else {
		colon = strchr(s, ':');
		if (!colon || strchr(colon + 1, ':'))
			return -EINVAL; /* an IPv6 address goes in brackets */
		hl = (size_t)(colon - s);
	}
	if (hl == 0 || hl >= sizeof(host))
		return -EINVAL;
	memcpy(host, h, hl);
	host[hl] = '\0';
	errno = 0;
	port = strtoul(colon + 1, &end, 10);
	if (errno || *end || colon[1] == '\0' || port > 65535)
		return -EINVAL;
	if (inet_pton(AF_INET, host, &((struct sockaddr_in *)ss)->sin_addr) == 1) {
		((struct sockaddr_in *)ss)->sin_family = AF_INET;
		((struct sockaddr_in *)ss)->sin_port = htons((uint16_t)port);
		*sslen = sizeof(struct sockaddr_in);
		return 0;
	}
	if (inet_pton(AF_INET6, host, &((struct sockaddr_in6 *)ss)->sin6_addr) == 1) {
		((struct sockaddr_in6 *)ss)->sin6_family = AF_INET6;
		((struct sockaddr_in6 *)ss)->sin6_port = htons((uint16_t)port);
		*sslen = sizeof(struct sockaddr_in6);
		return 0;
	}
	return -EINVAL;
}

static int agent_option(struct sbt_agent_opts *a, int c, const char *arg)
{
	struct sockaddr_storage ss;
	unsigned int sslen;
	unsigned long long v;
	char *end;

	switch (c) {
	case OPT_PARENT:
		if (a->nr_parents >= SBT_AGENT_MAX_PARENTS)
			return usage_error("more than 16 --cgroup-parent (at %s)", arg);
		a->parents[a->nr_parents++] = arg;
		return -1;
	case OPT_STATE_DIR:
		a->state_dir = arg;
		return -1;
	case OPT_NO_SHIM:
		a->state_dir = NULL;
		return -1;
	case OPT_MAX_SANDBOXES:
		errno = 0;
		v = strtoull(arg, &end, 10);
		if (errno || *end || *arg == '-' || v < 1 || v > SBT_AGENT_MAX_SANDBOXES)
			return usage_error("--max-sandboxes '%s': give 1..65536", arg);
		a->max_sandboxes = (uint32_t)v;
		return -1;
	case OPT_METRICS_ADDR:
		if (sbt_parse_hostport(arg, &ss, &sslen))
			return usage_error("--metrics-addr '%s': give HOST:PORT with an address "
					   "literal (127.0.0.1:9464, [::1]:9464)",
					   arg);
		a->metrics_addr = arg;
		return -1;
	case OPT_METRICS_FILE:
		a->metrics_file = arg;
		return -1;
	case OPT_METRICS_ALLOW_UID:
		errno = 0;
		v = strtoull(arg, &end, 10);
		if (errno || *end || *arg < '0' || *arg > '9' || v >= 0xffffffffull ||
		    a->nr_metrics_uids >= 8)
			return usage_error(
				"--metrics-allow-uid '%s': give a numeric uid (at most 8 "
				"of them)",
				arg);
		a->metrics_uids[a->nr_metrics_uids++] = (unsigned int)v;
		return -1;
	case OPT_METRICS_TOKEN_FILE:
		a->metrics_token_file = arg;
		return -1;
	case OPT_SOCKET:
		if (strlen(arg) >= 108)
			return usage_error("--socket '%s': path too long for a unix socket", arg);
		a->socket_path = arg;
		return -1;
	case OPT_NO_SOCKET:
		a->socket_path = NULL;
		return -1;
	case OPT_POLICY_DIR:
		a->policy_dir = arg;
		return -1;
	case OPT_METRICS_RETAIN:
		errno = 0;
		v = strtoull(arg, &end, 10);
		if (errno || *end || *arg < '0' || *arg > '9' || v > 86400)
			return usage_error("--metrics-retain '%s': give seconds, 0..86400", arg);
		a->metrics_retain_ms = v * 1000;
		return -1;
	case OPT_METRICS_NO_SANDBOX:
		a->metrics_no_sandbox = true;
		return -1;
	case OPT_PERSIST:
		a->persist = true;
		return -1;
	case OPT_UNPIN:
		a->unpin = true;
		return -1;
	case OPT_CONFIG: /* read before the options (config_argv()) */
		return -1;
	case OPT_METRICS_CONTAINER:
		a->metrics_container = true;
		return -1;
	case 'o':
	case 'O':
	case 'd':
	case 'v':
	case SBT_OPT_STATS_INTERVAL:
		return sbt_run_option(&a->trace, &a->format, &a->out_path, c, arg);
	case SBT_OPT_ARGV_MAX:
	case SBT_OPT_RINGBUF_SIZE:
	case SBT_OPT_EXEC_HOOK:
	case SBT_OPT_POLL_MS:
		return sbt_capture_option(&a->trace.exec, c, arg);
	case 'h':
		sbt_agent_usage(stdout);
		return SBT_EXIT_OK;
	}
	sbt_log("see '%s --help'", sbt_log_name());
	return SBT_EXIT_USAGE;
}

int sbt_agent_args_parse(int argc, char **argv, struct sbt_agent_opts *a)
{
	struct sbt_exec_opts *eo = &a->trace.exec;
	int c, ret;

	memset(a, 0, sizeof(*a));
	eo->forced_mode = -1;
	eo->argv_max = SBT_ARGV_DEFAULT;
	eo->ringbuf_bytes = 1u << 20;
	eo->poll_ms = 50;
	eo->agent = true;
	a->trace.egress.mode = SBT_EGRESS_OFF;
	a->format = SBT_FORMAT_JSON;
	a->state_dir = SBT_STATE_DIR_DEFAULT;
	a->max_sandboxes = SBT_AGENT_DEFAULT_SANDBOXES;
	a->trace.stats_interval_ms = 60000;
	a->socket_path = SBT_AGENT_SOCKET_DEFAULT;
	a->metrics_retain_ms = 300000;
	optind = 1;
	while ((c = getopt_long(argc, argv, "o:O:d:vh", agent_longopts, NULL)) != -1) {
		ret = agent_option(a, c, optarg);
		if (ret >= 0)
			return ret;
	}
	if (optind < argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	if (!a->state_dir && a->nr_parents == 0)
		return usage_error("nothing to watch: --no-shim without --cgroup-parent");
	if (a->policy_dir && a->nr_parents == 0)
		return usage_error("--policy-dir needs --cgroup-parent (a shim sandbox's policy is "
				   "in its state file)");
	eo->max_sandboxes = a->max_sandboxes;
	eo->policy = true; /* the egress hooks, attached per sandbox with a policy */
	eo->agent_mkdir_mode = a->policy_dir ? SBT_EGRESS_PENDING : SBT_EGRESS_OBSERVE;
	eo->host_netns_cookie = sbt_netns_cookie();
	return -1;
}

/*
 * One agent per state dir (or per socket without one): the lock, held for
 * the process's life; a second agent stops here, before it touches the
 * first's socket or shims. The lock fd, or -1 after a message.
 */
static int take_lock(const struct sbt_agent_opts *a)
{
	char path[PATH_MAX];
	const char *what = a->state_dir ? "--state-dir" : "--socket";
	pid_t holder;
	int fd;

	if (!a->state_dir && !a->socket_path)
		return INT_MAX; /* nothing shared to guard */
	if (a->state_dir && mkdir(a->state_dir, 0700) && errno != EEXIST) {
		sbt_log("--state-dir %s: %s", a->state_dir, strerror(errno));
		return -1;
	}
	if ((size_t)snprintf(path, sizeof(path), "%s%s",
			     a->state_dir ? a->state_dir : a->socket_path,
			     a->state_dir ? "/.agent.lock" : ".lock") >= sizeof(path)) {
		sbt_log("%s: path too long", what);
		return -1;
	}
	fd = sbt_instance_lock(path, &holder);
	if (fd == -EWOULDBLOCK)
		sbt_log("another agent (pid %d) runs on %s %s (it holds %s): not started; stop it "
			"first, or give this one another %s",
			(int)holder, what, a->state_dir ? a->state_dir : a->socket_path, path,
			what);
	else if (fd < 0)
		sbt_log("cannot take the agent's lock %s: %s", path, strerror(-fd));
	return fd < 0 ? -1 : fd;
}

/* The socket, unless a live process serves it (never replaced then). 0, or an exit code. */
static int open_socket(struct sbt_agent_opts *a, struct sbt_sub_sink *sub, struct stat *own)
{
	pid_t peer;
	int err;

	if (sbt_unix_socket_live(a->socket_path, &peer)) {
		sbt_log("--socket %s is served by a running process (pid %d): not replaced; stop "
			"it "
			"first, or give another --socket",
			a->socket_path, (int)peer);
		return SBT_EXIT_USAGE;
	}
	err = sbt_sub_sink_open(sub, a->socket_path, SBT_SUB_BUF_BYTES);
	if (err) {
		sbt_log("--socket %s: %s", a->socket_path, strerror(-err));
		return SBT_EXIT_USAGE;
	}
	if (stat(a->socket_path, own))
		memset(own, 0, sizeof(*own));
	return 0;
}

/* Close it; the path is unlinked only while it is still the socket this agent made. */
static void close_socket(struct sbt_sub_sink *sub, const struct stat *own)
{
	struct stat st;

	if (stat(sub->path, &st) || st.st_ino != own->st_ino || st.st_dev != own->st_dev)
		sub->path[0] = '\0'; /* another's now: not ours to remove */
	sbt_sub_sink_close(sub);
}

static int agent_main_locked(struct sbt_agent_opts *ap, sbt_agent_fn run, struct sbt_sub_sink *sub,
			     struct stat *own)
{
	struct sbt_agent_opts a = *ap;
	struct sbt_metrics_sink *ms = NULL;
	struct sbt_json_sink sink;
	int ret, err;

	if (a.out_path) {
		err = sbt_json_sink_open(&sink, a.out_path, a.format);
		if (err) {
			sbt_log("--out '%s': %s", a.out_path, strerror(-err));
			return SBT_EXIT_USAGE;
		}
	} else {
		sbt_json_sink_init(&sink, stdout, a.format);
	}
	sbt_sinks_add(&a.trace, &sink.base);
	if (a.metrics_addr || a.metrics_file) {
		ms = sbt_metrics_sink_new();
		if (!ms) {
			sbt_log("out of memory");
			sbt_json_sink_close(&sink);
			return SBT_EXIT_RUNTIME;
		}
		sbt_metrics_sink_config(ms, a.metrics_retain_ms * 1000000ull,
					!a.metrics_no_sandbox);
		a.metrics = ms;
		sbt_sinks_add(&a.trace, sbt_metrics_sink_base(ms));
	}
	sub->listen_fd = -1;
	if (a.socket_path) {
		ret = open_socket(&a, sub, own);
		if (ret) {
			sbt_json_sink_close(&sink);
			sbt_metrics_sink_free(ms);
			return ret;
		}
		a.sub = sub;
		sbt_sinks_add(&a.trace, &sub->base);
	}
	ret = run(&a);
	if (a.socket_path)
		close_socket(sub, own);
	err = sbt_json_sink_close(&sink);
	if (err && ret == SBT_EXIT_OK) {
		sbt_log("closing '%s': %s", a.out_path, strerror(-err));
		ret = SBT_EXIT_RUNTIME;
	}
	sbt_metrics_sink_free(ms);
	return ret;
}

/*
 * What names this agent's state for the next one, under which --persist
 * pins: "<dev>-<ino>" of its state dir, or of its socket's lock file. -1 to
 * go on, else an exit code.
 */
static int pin_key(struct sbt_agent_opts *a, int lock)
{
	struct stat st;

	/* the state dir (a lock file may be removed by hand), else the socket's lock file */
	if (lock == INT_MAX || (a->state_dir ? stat(a->state_dir, &st) : fstat(lock, &st))) {
		if (!a->persist && !a->unpin)
			return -1;
		sbt_log("%s needs --state-dir or --socket: the next agent finds what this one "
			"pinned by it",
			a->persist ? "--persist" : "--unpin");
		return SBT_EXIT_USAGE;
	}
	snprintf(a->pin_key, sizeof(a->pin_key), "%llx-%llu", (unsigned long long)st.st_dev,
		 (unsigned long long)st.st_ino);
	return -1;
}

/* --unpin: lift the enforcement a --persist agent left (no agent runs: we hold the lock). */
static int unpin(const struct sbt_agent_opts *a)
{
	char dir[PATH_MAX];
	int err = sbt_pin_agent_dir(a->pin_key, false, dir, sizeof(dir));

	if (err == -ENOENT || (!err && access(dir, F_OK) && errno == ENOENT)) {
		sbt_log("--unpin: nothing pinned for this agent's state");
		return SBT_EXIT_OK;
	}
	err = err ? err : sbt_pin_agent_remove(a->pin_key);
	if (err) {
		sbt_log("--unpin %s: %s", dir, strerror(-err));
		return SBT_EXIT_RUNTIME;
	}
	sbt_log("--unpin: removed %s: the --cgroup-parent policies of the last agent are lifted "
		"(a shim sandbox keeps its own until it ends)",
		dir);
	return SBT_EXIT_OK;
}

/*
 * The options of the config file (--config FILE, $SBTRACE_AGENT_CONF, or
 * /etc/sbtrace/agent.conf) before the command line's, which win. The new
 * argv (free it; the parsed options point into it), or NULL after a
 * message.
 */
static char **config_argv(int argc, char **argv, int *nargc)
{
	const char *flag = NULL, *path;
	char err[PATH_MAX + 256], **nargv = NULL;
	bool must;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			break;
		if (strcmp(argv[i], "--config") == 0 && i + 1 < argc)
			flag = argv[i + 1];
		else if (strncmp(argv[i], "--config=", 9) == 0)
			flag = argv[i] + 9;
	}
	path = sbt_agent_conf_path(flag, &must);
	if (sbt_agent_conf_argv_checked(path, must, agent_longopts, argc, argv, nargc, &nargv, err,
					sizeof(err))) {
		sbt_log("%s", err);
		return NULL;
	}
	return nargv;
}

int sbt_agent_main(int argc, char **argv, sbt_agent_fn run)
{
	struct sbt_agent_opts a;
	struct sbt_sub_sink *sub = calloc(1, sizeof(*sub));
	struct stat own;
	int nargc = 0, ret, lock;
	char **nargv = config_argv(argc, argv, &nargc);

	if (!sub) {
		sbt_log("out of memory");
		ret = SBT_EXIT_RUNTIME;
		goto out;
	}
	ret = nargv ? sbt_agent_args_parse(nargc, nargv, &a) : SBT_EXIT_USAGE;
	if (ret >= 0)
		goto out;
	lock = take_lock(&a);
	if (lock < 0) {
		ret = SBT_EXIT_USAGE;
		goto out;
	}
	ret = pin_key(&a, lock);
	if (ret < 0)
		ret = a.unpin ? unpin(&a) : agent_main_locked(&a, run, sub, &own);
	if (lock != INT_MAX)
		close(lock);
out:
	free(sub);
	free(nargv);
	return ret;
}
