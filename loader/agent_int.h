/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* `sbtrace agent`'s run state, private to the loader's agent*.c. */
#ifndef SBT_LOADER_AGENT_INT_H
#define SBT_LOADER_AGENT_INT_H

#include <stdbool.h>
#include <stdint.h>

#include <bpf/libbpf.h>

#include "agent.h"
#include "event/decode.h"
#include "loader.h"
#include "exec/proctab.h"
#include "sandbox/sandbox.h"
#include "exec/shellagg.h"
#include "exec/shellid.h"

struct agent_sb {
	struct sbt_target sb;
	const char *source;	   /* "shim", "cgroup_parent" */
	const char *registered_by; /* "cgroup_mkdir", "agent" */
	uint64_t received, lost_reported, kernel_execs, kernel_lost, shells;
	uint64_t first_exec_ts, eg_lost_reported;
	struct sbt_shellagg *agg;
	struct sbt_agent_pol *pol; /* egress policy, NULL: none (agent_egress.c) */
};

struct agent {
	struct sbt_agent_opts *o;
	struct sbt_plan plan;
	struct ring_buffer *rb;
	struct bpf_link *mkdir_link;
	struct sbt_hook_result mkdir_res, membership;
	struct agent_sb **slots;
	const char **names; /* live sandboxes' names, for the procfs lookups */
	uint32_t max, nr;
	int stats_fd, cgroups_fd, free_fd, parents_fd;
	int ino, wd_state, wd_parent[SBT_AGENT_MAX_PARENTS];
	struct sbt_target parent[SBT_AGENT_MAX_PARENTS];
	struct sbt_proctab *proc;
	struct sbt_procfs_ctx procfs;
	struct sbt_shellid shellid;
	const char **argv_store;
	char *tail;
	int64_t boot_offset;
	uint64_t decode_errors, added, removed;
	enum sbt_decode_err first_decode_err;
	uint64_t start_ms, attach_ms;
	double start_epoch;
	struct sbt_agent_obs obs;
	struct sbt_http *http;
	struct sbt_agent_egress eg;
};

#endif
