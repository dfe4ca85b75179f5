/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* `sbtrace agent`'s per-sandbox egress policy (agent_egress.c). */
#ifndef SBT_LOADER_AGENT_EGRESS_H
#define SBT_LOADER_AGENT_EGRESS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cmd/agent_cmd.h"
#include "egress_slot.h"
#include "trace/tracer.h"

struct bpf_link;
struct sbt_target;
struct sbt_sandbox_state;

#define SBT_AGENT_EGRESS_PROGS 8 /* sbt_egress_progs(): the enforcers and the DNS replies' */

struct sbt_egress_state;
struct sbt_plan;

struct sbt_agent_egress {
	struct sbtrace_bpf *skel;
	/* host rules: their resolution, DNS proxies and learned addresses (egress.c) */
	struct sbt_egress_state *eg;
	const char *policy_dir; /* --policy-dir, NULL: none */
	int dir_fd;
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
	struct sbt_slot_policy policy; /* what the trie holds for its slot */
	bool hosts; /* it has host rules: eg holds its trie, resolution and proxies */
	struct bpf_link *links[SBT_AGENT_EGRESS_PROGS]; /* a shim sandbox's own */
	size_t nr_links;
};

/* --policy-dir: root's, writable by nobody else. 0, or -errno and why. */
int sbt_agent_policy_dir_check(const char *dir, char *why, size_t len);
/*
 * Open --policy-dir, attach the hooks to each parent (when there is one),
 * their links pinned under <bpffs>/sbtrace-agent/PIN_KEY when it is not NULL
 * (--persist). 0 or -errno.
 */
int sbt_agent_egress_init(struct sbt_agent_egress *ae, struct sbt_plan *plan,
			  const char *policy_dir, const struct sbt_target *parents, int nr,
			  const char *pin_key);
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
/* SandboxAdded's egress fields (none for p NULL), its DNS proxy from slot's set-up. */
void sbt_agent_pol_describe(const struct sbt_agent_egress *ae, const struct sbt_agent_pol *p,
			    uint32_t slot, struct sbt_ev_sandbox *c);
/*
 * Write p into slot's trie and mode (p NULL: OBSERVE), attaching the hooks to
 * the sandbox's own cgroup when `attach`. A policy that cannot be written
 * turns FAILED (denied). 0, or -errno when the hooks could not be attached.
 */
int sbt_agent_pol_apply(struct sbt_agent_egress *ae, struct sbt_agent_pol *p, uint32_t slot,
			const struct sbt_target *sb, bool attach);
/*
 * The agent's exit while the sandbox lives on: our fds closed and p freed,
 * the maps left as they are, so that pinned links go on enforcing the
 * policy (a shim's sandbox until it ends; --persist: until the next agent
 * took over).
 */
void sbt_agent_pol_release(struct sbt_agent_pol *p);
/* The same policy (mode, rule texts, error): a reload leaves it alone. */
bool sbt_agent_pol_same(const struct sbt_agent_pol *a, const struct sbt_agent_pol *b);
/*
 * A --cgroup-parent child's policy replaced by p (NULL: lifted) on a reload:
 * the slot denied (PENDING) while the old entries go and the new ones are
 * written, then p's mode; old freed. 0 or -errno (then the slot stays
 * denied).
 */
int sbt_agent_pol_replace(struct sbt_agent_egress *ae, struct sbt_agent_pol *old,
			  struct sbt_agent_pol *p, uint32_t slot, const struct sbt_target *sb);
/* Detach, clear the slot's trie entries, mode OBSERVE; frees p. */
void sbt_agent_pol_free(struct sbt_agent_egress *ae, struct sbt_agent_pol *p, uint32_t slot);
const char *sbt_agent_pol_mode_name(const struct sbt_agent_pol *p); /* NULL for none */

#endif
