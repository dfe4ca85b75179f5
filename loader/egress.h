/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef SBT_EGRESS_H
#define SBT_EGRESS_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "egress/dnsev.h"
#include "egress/dnsproxy.h"
#include "egress/dnslearn.h"

#include "egress_slot.h"
#include "loader.h"
#include "egress/policy_compile.h"

#define SBT_MAX_HOSTS	     64
#define SBT_MAX_EGRESS_LINKS 8

struct sbt_egress_sandbox {
	struct sbt_host_state hosts[SBT_MAX_HOSTS];
	size_t nr_hosts;
	bool has_resolver;
	uint8_t resolver[16];
	char resolver_source[96];
	int resolver_pid;
	int nsfd;		       /* the sandbox's network namespace, -1 for the host's */
	struct sbt_slot_policy policy; /* what the trie holds for this slot */
	struct bpf_link *links[SBT_MAX_EGRESS_LINKS];
	size_t nr_links;
	/* The DNS proxy (dnsproxy.c): lock guards hosts, learned and entries. */
	pthread_mutex_t lock;
	struct sbt_dns_learn learned;
	struct sbt_dnsproxy *proxy; /* NULL: no proxy, DNS judged like the rest */
	bool tap_proxy;		    /* the proxy listens on tap.host4/6 (tap.port) too */
	struct sbt_dnsproxy_tap tap;
};

struct sbt_egress_state {
	struct sbt_plan *plan;
	const struct sbt_egress_cfg *cfg;
	struct sbt_egress_sandbox sb[SBT_MAX_SANDBOXES];
	uint32_t nr;
	/* DnsQuery / DnsAnswer from the proxies' threads, for the trace loop */
	pthread_mutex_t dns_lock;
	struct sbt_dns_event *dns_events;
	size_t nr_dns_events, cap_dns_events;
	uint64_t dns_events_lost;
};

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

/*
 * Per sandbox: write its egress mode; with a policy, resolve its host rules
 * as it would (its network namespace, its resolver), write its trie entries
 * and attach the cgroup programs. 0, or -errno after a one-line message.
 */
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
