/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* `sbtrace agent`'s run state, private to the loader's agent*.c. */
#ifndef SBT_LOADER_AGENT_INT_H
#define SBT_LOADER_AGENT_INT_H

#include <stdbool.h>
#include <stdint.h>

#include <bpf/libbpf.h>

#include "agent.h"
#include "agent_egress.h"
#include "agent_obs.h"
#include "loader.h"
#include "session_bpf.h"
#include "event/kinds.h"
#include "sandbox/podman_meta.h"
#include "sandbox/sandbox.h"

#define AGENT_REAP_MAX 16

/* What the agent keeps of a sandbox beyond the session's slot. */
struct agent_sb {
	struct sbt_target sb;	   /* the session's target of its slot */
	const char *source;	   /* "shim", "cgroup_parent" */
	const char *registered_by; /* "cgroup_mkdir", "agent" */
	struct sbt_agent_pol *pol; /* egress policy, NULL: none (agent_egress.c) */
	bool fast;		   /* in the programs' fast table, else in the hash map only */
	/* what a container runtime says of its cgroup (podman's libpod-<id>) */
	bool has_container;
	struct sbt_container container; /* points into the three below */
	char cid[65], cname[256], cimage[256];
};

struct agent {
	struct sbt_agent_opts *o;
	struct sbt_plan plan;
	struct sbt_session_bpf sess; /* records, accounting, final events (session.h) */
	struct bpf_link *mkdir_link;
	struct sbt_hook_result mkdir_res, membership;
	struct agent_sb **slots; /* max, by slot */
	uint32_t max;
	int stats_fd, cgroups_fd, free_fd, parents_fd;
	int ino, wd_state, wd_parent[SBT_AGENT_MAX_PARENTS];
	struct sbt_target parent[SBT_AGENT_MAX_PARENTS];
	uint64_t added, removed;
	bool adopting; /* the first scan: what it finds ran before us */
	/* hash map entries of no known sandbox at the last sweep (agent.c, reap_unknown) */
	uint64_t unknown[AGENT_REAP_MAX];
	uint32_t nr_unknown;
	uint64_t start_ms, attach_ms;
	double start_epoch;
	struct sbt_agent_obs obs;
	struct sbt_http *http;
	struct sbt_agent_egress eg;
	struct sbt_podman_meta_cache podman; /* podman's containers.json, read when it changed */
};

#endif
