/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * `sbtrace agent`: options → request → the loader's agent (passed in, so
 * the parsing stays pure C and unit-tested). One process, one set of
 * host-wide hooks, for every sandbox of the host: sbtrace-shim's (its state
 * directory) and the child cgroups of each --cgroup-parent.
 */
#ifndef SBT_AGENT_CMD_H
#define SBT_AGENT_CMD_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "event/sink_json.h"
#include "trace/tracer.h"

#define SBT_AGENT_MAX_PARENTS	    16
#define SBT_AGENT_DEFAULT_SANDBOXES 1024
#define SBT_AGENT_MAX_SANDBOXES	    65536
#define SBT_AGENT_SOCKET_DEFAULT    "/run/sbtrace-agent.sock"

struct sbt_metrics_sink;
struct sbt_sub_sink;

struct sbt_agent_opts {
	struct sbt_trace_opts
		trace; /* exec options, sinks, duration, stats interval (no targets) */
	enum sbt_format format;
	const char *out_path;	/* --out (appended; reopened on SIGHUP), NULL: stdout */
	const char *policy_dir; /* --policy-dir: DIR/<child>.policy per --cgroup-parent child */
	const char *state_dir;	/* shim state files; NULL: --no-shim */
	const char *parents[SBT_AGENT_MAX_PARENTS]; /* --cgroup-parent, as given */
	int nr_parents;
	uint32_t max_sandboxes;
	const char *metrics_addr;     /* HOST:PORT, NULL: no HTTP */
	const char *metrics_file;     /* node_exporter textfile, NULL: none */
	unsigned int metrics_uids[8]; /* --metrics-allow-uid: loopback scrapers besides root */
	int nr_metrics_uids;
	const char *metrics_token_file;	  /* --metrics-token-file, NULL: none */
	struct sbt_metrics_sink *metrics; /* set by sbt_agent_main when metrics are asked for */
	const char *socket_path;	  /* the subscriber socket, NULL: none */
	struct sbt_sub_sink *sub;	  /* set by sbt_agent_main with a socket */
	uint64_t metrics_retain_ms;	  /* --metrics-retain: a removed sandbox's series */
	bool metrics_no_sandbox;	  /* --metrics-no-sandbox-label: the host families alone */
	bool metrics_container;		  /* --metrics-container-label: sandbox_info's container */
	bool persist;	  /* --persist: the enforcement stays pinned at exit, for the next agent */
	bool unpin;	  /* --unpin: lift what a --persist agent left pinned, then exit */
	char pin_key[48]; /* "<dev>-<ino>" of the state: <bpffs>/sbtrace-agent/KEY; "": none */
};

typedef int (*sbt_agent_fn)(struct sbt_agent_opts *opts);

/* Parse `sbtrace agent` options. -1 to go on, else an exit code (0 after --help). */
int sbt_agent_args_parse(int argc, char **argv, struct sbt_agent_opts *a);
int sbt_agent_main(int argc, char **argv, sbt_agent_fn run);
void sbt_agent_usage(FILE *f);

/* HOST:PORT (HOST an IPv4/IPv6 literal, [v6]:PORT too) into a sockaddr. 0 or -EINVAL. */
struct sockaddr_storage;
int sbt_parse_hostport(const char *s, struct sockaddr_storage *ss, unsigned int *sslen);

#endif
