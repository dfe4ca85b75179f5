/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* What the egress set-up keeps per sandbox (egress.c, egress_proxy.c). */
#ifndef SBT_EGRESS_STATE_H
#define SBT_EGRESS_STATE_H

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

#endif
