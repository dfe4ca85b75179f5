/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef SBT_EGRESS_H
#define SBT_EGRESS_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "egress/dnsev.h"
#include "egress_state.h"
#include "egress_proxy.h"
#include "loader.h"

/*
 * Learn what the proxy passes on for a name of host rule `rule_idx`: each
 * address until its TTL + grace, written into the sandbox's trie before
 * the call returns. 0, -ENOSPC at the per-sandbox limit (nothing learned),
 * or -errno.
 */
int sbt_egress_learn(struct sbt_egress_state *st, uint32_t slot, uint32_t rule_idx,
		     const char *name, const struct sbt_dns_addr *addrs, size_t n, uint64_t ts_ns);
/* Queue a proxy's event for the trace loop (takes ev's allocations). */
void sbt_egress_dns_event(struct sbt_egress_state *st, struct sbt_dns_event *ev);
/* Hand queued DNS events to fn, in order, then free them. */
void sbt_egress_dns_drain(struct sbt_egress_state *st,
			  void (*fn)(void *arg, const struct sbt_dns_event *ev), void *arg);
/* The name whose answer taught addr to sandbox slot (copied), and the answer's ts. */
bool sbt_egress_learned_name(struct sbt_egress_state *st, uint32_t slot, const uint8_t addr[16],
			     char *name, size_t len, uint64_t *ts_ns);

/* An empty set-up on plan's object: sandboxes come with sbt_egress_add. */
void sbt_egress_init(struct sbt_egress_state *st, struct sbt_plan *plan);
/*
 * Sandbox t in slot, under policy cfg (kept by pointer: it outlives the
 * sandbox): write its egress mode; with a policy, resolve its host rules as
 * it would (its network namespace, its resolver), open its DNS proxies,
 * write its trie entries and, with attach, attach the cgroup programs to
 * its cgroup (without: the caller's links run them). 0, or -errno after a
 * one-line message.
 */
int sbt_egress_add(struct sbt_egress_state *st, uint32_t slot, const struct sbt_egress_cfg *cfg,
		   const struct sbt_target *t, bool attach);
/* Undo sbt_egress_add: proxies stopped, links destroyed, trie entries cleared. */
void sbt_egress_remove(struct sbt_egress_state *st, uint32_t slot);
/* sbt_egress_init, then sbt_egress_add (attached) for each of the trace's targets (slot i). */
int sbt_egress_setup(struct sbt_egress_state *st, struct sbt_plan *plan,
		     const struct sbt_egress_cfg *cfg, const struct sbt_target *targets,
		     uint32_t nr);
/* Re-resolve hosts whose TTL expired and rewrite the tries that changed. */
void sbt_egress_tick(struct sbt_egress_state *st);
void sbt_egress_detach(struct sbt_egress_state *st);
void sbt_egress_teardown(struct sbt_egress_state *st);
/* What TraceStarted shows of sandbox i's set-up (pointers into st). */
void sbt_egress_view(const struct sbt_egress_state *st, uint32_t i, struct sbt_egress_view *v);

#endif
