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
#define SBT_DNS_NETNS_MAX    8 /* network namespaces of one sandbox with a proxy each */

/* One DNS proxy of a sandbox: on the loopback of one network namespace, and / or on its tap. */
struct sbt_egress_proxy {
	uint64_t netns_cookie; /* where its loopback sockets are (dns_proxy's key); 0: none */
	struct sbt_dnsproxy *px;
	uint16_t port[4]; /* its loopback ports by SBT_DNS_*, network byte order */
};

struct sbt_egress_sandbox {
	bool active;			  /* sbt_egress_add'ed, not removed */
	const struct sbt_egress_cfg *cfg; /* its policy (the trace's, or an agent sandbox's own) */
	struct sbt_host_state hosts[SBT_MAX_HOSTS];
	size_t nr_hosts;
	bool has_resolver;
	uint8_t resolver[16];
	char resolver_source[96];
	int resolver_pid;
	int nsfd;		       /* the sandbox's network namespace, -1 for the host's */
	bool resolver_deferred;	       /* --resolver, no process yet: reached from its first */
	struct sbt_slot_policy policy; /* what the trie holds for this slot */
	struct bpf_link *links[SBT_MAX_EGRESS_LINKS];
	size_t nr_links;
	/* The DNS proxies (dnsproxy.c): lock guards hosts, learned and entries. */
	pthread_mutex_t lock;
	struct sbt_dns_learn learned;
	/*
	 * want_proxy: a cgroup sandbox whose DNS goes only to proxies of ours,
	 * one per network namespace its processes are in (dns_want): opened at
	 * set-up for those it has, and for each new one when a process there
	 * execs or asks (sbt_egress_gate). None: DNS judged like the rest.
	 */
	bool want_proxy;
	bool said_full;
	const char *name;
	struct sbt_dnsproxy_owner owner;
	struct sbt_egress_proxy proxies[SBT_DNS_NETNS_MAX];
	size_t nr_proxies;
	bool tap_proxy; /* proxies[0] listens on tap.host4/6 (tap.port) too */
	struct sbt_dnsproxy_tap tap;
};

struct sbt_egress_state {
	struct sbt_plan *plan;
	struct sbt_egress_sandbox sb[SBT_MAX_SANDBOXES]; /* by slot */
	uint32_t nr;					 /* slots below this may be active */
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
/*
 * The processes that wait for a DNS proxy (dns_wait: an exec, or a query,
 * in a network namespace of a proxied sandbox that has none yet): open one
 * there, then continue those the exec hook stopped. Cheap when none waits:
 * call it after every poll.
 */
void sbt_egress_gate(struct sbt_egress_state *st);
/* Re-resolve hosts whose TTL expired and rewrite the tries that changed. */
void sbt_egress_tick(struct sbt_egress_state *st);
void sbt_egress_detach(struct sbt_egress_state *st);
void sbt_egress_teardown(struct sbt_egress_state *st);
/* What TraceStarted shows of sandbox i's set-up (pointers into st). */
void sbt_egress_view(const struct sbt_egress_state *st, uint32_t i, struct sbt_egress_view *v);

#endif
