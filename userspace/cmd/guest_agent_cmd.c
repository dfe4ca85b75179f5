// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* `sbtrace guest-agent`: its options (see guest_agent_cmd.h). */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/guest_agent_cmd.h"
#include "lib/log.h"
#include "exec/guest_stream.h"
#include "cmd/trace_cmd.h"
#include "help/sbtrace-guest-agent.h"

enum {
	OPT_PORT = 256,
	OPT_CGROUP,
	OPT_OWN_CGROUP,
	OPT_READY_FD,
	OPT_HEARTBEAT,
	OPT_BPF_STATS,
	OPT_RESUME_FD
};

static const struct option longopts[] = {
	{ "port", required_argument, NULL, OPT_PORT },
	{ "cgroup", required_argument, NULL, OPT_CGROUP },
	{ "own-cgroup", required_argument, NULL, OPT_OWN_CGROUP },
	{ "ready-fd", required_argument, NULL, OPT_READY_FD },
	{ "heartbeat-ms", required_argument, NULL, OPT_HEARTBEAT },
	{ "bpf-stats", no_argument, NULL, OPT_BPF_STATS },
	{ "resume-fd", required_argument, NULL, OPT_RESUME_FD },
	{ "exec-hook", required_argument, NULL, SBT_OPT_EXEC_HOOK },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

void sbt_guest_agent_usage(FILE *f)
{
	sbt_help_guest_agent(f);
}

/* "sbtrace guest-agent: ...; see 'sbtrace guest-agent --help'", and its exit code. */
#define usage_error(...) (sbt_log_usage(__VA_ARGS__), SBT_EXIT_USAGE)

static int parse_num(const char *arg, unsigned long lo, unsigned long hi, unsigned long *v)
{
	char *end;

	errno = 0;
	*v = strtoul(arg, &end, 10);
	return errno || end == arg || *end || *arg == '-' || *v < lo || *v > hi ? -EINVAL : 0;
}

int sbt_guest_agent_args_parse(int argc, char **argv, struct sbt_guest_agent_opts *o)
{
	unsigned long v;
	int c;

	memset(o, 0, sizeof(*o));
	o->exec.forced_mode = -1;
	o->exec.argv_max = SBT_ARGV_DEFAULT;
	o->exec.ringbuf_bytes = 1u << 20;
	o->exec.poll_ms = 0;
	o->ready_fd = -1;
	o->resume_fd = -1;
	o->hb_ms = SBT_GUEST_HB_DEFAULT_MS;
	optind = 1;
	while ((c = getopt_long(argc, argv, "vh", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_PORT:
			o->port = optarg;
			break;
		case OPT_CGROUP:
			o->cgroup = optarg;
			break;
		case OPT_OWN_CGROUP:
			o->own_cgroup = optarg;
			break;
		case OPT_READY_FD:
			if (parse_num(optarg, 0, 1023, &v))
				return usage_error("--ready-fd '%s': give a descriptor 0..1023",
						   optarg);
			o->ready_fd = (int)v;
			break;
		case OPT_RESUME_FD:
			if (parse_num(optarg, 0, 1023, &v))
				return usage_error("--resume-fd '%s': give a descriptor 0..1023",
						   optarg);
			o->resume_fd = (int)v;
			break;
		case OPT_HEARTBEAT:
			if (parse_num(optarg, 50, 10000, &v))
				return usage_error("--heartbeat-ms '%s': give 50..10000", optarg);
			o->hb_ms = (uint32_t)v;
			break;
		case OPT_BPF_STATS:
			o->bpf_stats = true;
			break;
		case SBT_OPT_EXEC_HOOK:
			if (sbt_capture_option(&o->exec, c, optarg) >= 0)
				return SBT_EXIT_USAGE;
			break;
		case 'v':
			o->exec.verbose = true;
			break;
		case 'h':
			sbt_guest_agent_usage(stdout);
			return SBT_EXIT_OK;
		default:
			return usage_error("%s", "unknown option");
		}
	}
	if (optind < argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	if (!o->port || !o->port[0])
		return usage_error("%s", "--port is required");
	if (!o->cgroup || !o->cgroup[0])
		return usage_error("%s", "--cgroup is required");
	if (o->resume_fd >= 0 && o->ready_fd < 0)
		return usage_error("%s", "--resume-fd needs --ready-fd");
	return -1;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

int sbt_guest_resume_parse(const char *line, size_t len, struct sbt_guest_resume *r)
{
	const char *p = line, *end = line + len;
	uint64_t ns = 0;
	int digits = 0;

	memset(r, 0, sizeof(*r));
	if (len && end[-1] == '\n')
		end--;
	if (end - p < 3 || memcmp(p, "go ", 3) != 0)
		return -EINVAL;
	for (p += 3; p < end && *p >= '0' && *p <= '9'; p++, digits++) {
		if (digits == 19)
			return -ERANGE; /* ns since 1970 have 19 digits until 2286 */
		ns = ns * 10 + (uint64_t)(*p - '0');
	}
	if (!digits || p == end || *p != ' ' || end - ++p != 2 * SBT_GUEST_SEED_LEN)
		return -EINVAL;
	for (size_t i = 0; i < SBT_GUEST_SEED_LEN; i++) {
		int hi = hexval(p[2 * i]), lo = hexval(p[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return -EINVAL;
		r->seed[i] = (uint8_t)(hi << 4 | lo);
	}
	r->epoch_ns = ns;
	return 0;
}

int sbt_guest_agent_main(int argc, char **argv, sbt_guest_agent_fn run)
{
	struct sbt_guest_agent_opts o;
	int ret = sbt_guest_agent_args_parse(argc, argv, &o);

	return ret >= 0 ? ret : run(&o);
}
