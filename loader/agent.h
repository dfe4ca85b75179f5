/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* `sbtrace agent` in the loader: the run (agent.c) and what it serves (agent_obs.c). */
#ifndef SBT_LOADER_AGENT_H
#define SBT_LOADER_AGENT_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cmd/agent_cmd.h"
#include "event/metrics.h"
#include "egress/policy_compile.h"
#include "trace/tracer.h"

/* Run the agent to its end: an exit code (an sbt_agent_fn). */
int sbt_agent_run(struct sbt_agent_opts *opts);

struct sbtrace_bpf;
struct bpf_program;

/* What the agent observes of itself for a scrape: BPF program costs, the ring buffer. */
struct sbt_agent_obs {
	int stats_fd; /* BPF_ENABLE_STATS, -1 if refused */
	const struct bpf_program *progs[4];
	struct sbt_prog_stats prog_stats[4];
	size_t nr_progs;
	void *rb_consumer, *rb_producer; /* read-only views of the ring buffer's positions */
	uint64_t rb_size;
	long page;
};

/* Turn run-time statistics on for this process's life (not the global sysctl). */
void sbt_agent_obs_init(struct sbt_agent_obs *ob, int ringbuf_fd, uint64_t ringbuf_size);
void sbt_agent_obs_add_prog(struct sbt_agent_obs *ob, const struct bpf_program *prog);
/* Fill rt's BPF and ring-buffer fields now. */
void sbt_agent_obs_fill(struct sbt_agent_obs *ob, struct sbt_metrics_runtime *rt);
uint64_t sbt_agent_obs_pending(const struct sbt_agent_obs *ob);
void sbt_agent_obs_free(struct sbt_agent_obs *ob);

/* /metrics over HTTP (libmicrohttpd, driven by the agent's own poll loop: no thread). */
struct sbt_http;
typedef char *(*sbt_http_render_fn)(void *arg, size_t *len);
/* NULL after a one-line message on failure. */
struct sbt_http *sbt_http_start(const char *hostport, sbt_http_render_fn render, void *arg);
int sbt_http_fd(const struct sbt_http *h); /* poll it for POLLIN, then sbt_http_run() */
void sbt_http_run(struct sbt_http *h);
void sbt_http_stop(struct sbt_http *h);

/* ---- per-sandbox egress policy (agent_egress.c) ---- */

struct bpf_link;
struct sbt_target;
struct sbt_sandbox_state;

#define SBT_AGENT_EGRESS_PROGS 6 /* sbt_egress_progs()'s enforcers: no DNS proxy in the agent */

struct sbt_agent_egress {
	struct sbtrace_bpf *skel;
	const char *policy_dir; /* --policy-dir, NULL: none */
	int dir_fd, mode_fd, policy_fd;
	struct bpf_link *parent_links[SBT_AGENT_MAX_PARENTS * SBT_AGENT_EGRESS_PROGS];
	size_t nr_parent_links;
	struct sbt_hook_result res; /* TraceStarted.hooks.egress: cgroup_link */
};

/* A sandbox's policy: its rules (ids 1, 2, ...), mode, trie entries and links. */
struct sbt_agent_pol {
	const char *source; /* "state_file" or "policy_dir" */
	int mode;	    /* SBT_EGRESS_ENFORCE, _AUDIT, or _FAILED (denied: error says why) */
	struct sbt_egress_cfg cfg;
	char error[PATH_MAX + 400];
	struct sbt_policy_entry *entries;
	size_t nr_entries;
	struct bpf_link *links[SBT_AGENT_EGRESS_PROGS]; /* a shim sandbox's own */
	size_t nr_links;
};

/* --policy-dir: root's, writable by nobody else. 0, or -errno and why. */
int sbt_agent_policy_dir_check(const char *dir, char *why, size_t len);
/* Open --policy-dir, attach the hooks to each parent (when there is one). 0 or -errno. */
int sbt_agent_egress_init(struct sbt_agent_egress *ae, struct sbtrace_bpf *skel,
			  const char *policy_dir, const struct sbt_target *parents, int nr);
void sbt_agent_egress_free(struct sbt_agent_egress *ae);
int sbt_agent_egress_set_mode(struct sbt_agent_egress *ae, uint32_t slot, uint32_t mode);
/*
 * A shim sandbox's policy into *out (NULL: its state file has none); a
 * refused one is FAILED (denied). 0, or -ENOMEM (then nothing may run).
 */
int sbt_agent_pol_from_state(const struct sbt_sandbox_state *st, const char *state_dir,
			     struct sbt_agent_pol **out);
/* DIR/<child>.policy into *out (NULL: no --policy-dir, or no file); as above. */
int sbt_agent_pol_from_dir(struct sbt_agent_egress *ae, const char *sandbox, const char *child,
			   struct sbt_agent_pol **out);
struct sbt_ev_sandbox;
/* SandboxAdded's egress fields (none for p NULL). */
void sbt_agent_pol_describe(const struct sbt_agent_pol *p, struct sbt_ev_sandbox *c);
/*
 * Write p into slot's trie and mode (p NULL: OBSERVE), attaching the hooks to
 * the sandbox's own cgroup when `attach`. A policy that cannot be written
 * turns FAILED (denied). 0, or -errno when the hooks could not be attached.
 */
int sbt_agent_pol_apply(struct sbt_agent_egress *ae, struct sbt_agent_pol *p, uint32_t slot,
			const struct sbt_target *sb, bool attach);
/* Detach, clear the slot's trie entries, mode OBSERVE; frees p. */
void sbt_agent_pol_free(struct sbt_agent_egress *ae, struct sbt_agent_pol *p, uint32_t slot);
const char *sbt_agent_pol_mode_name(const struct sbt_agent_pol *p); /* NULL for none */
const char *sbt_agent_pol_rule_text(const struct sbt_agent_pol *p, uint32_t id);
/*
 * Events folded in the kernel since their key's last record, of `slot`: one
 * record each (count: how many) to fn, and the keys deleted (a sandbox that
 * ends, the agent that stops: the tail is never lost).
 */
struct sbt_egress;
void sbt_agent_egress_flush_folds(struct sbt_agent_egress *ae, uint32_t slot,
				  void (*fn)(void *arg, const struct sbt_egress *rec), void *arg);

#endif
