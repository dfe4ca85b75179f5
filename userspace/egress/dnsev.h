/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What a sandbox's DNS proxy did with one query, as plain data: DnsQuery
 * (a name no host rule allows, answered here without asking anyone) and
 * DnsAnswer (an allowed name: the upstream's answer, the addresses learned
 * for the sandbox, those left out as the floor). JSON in events_dns.c.
 */
#ifndef SBT_DNSEV_H
#define SBT_DNSEV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "egress/dns.h"

struct sbt_dns_event {
	bool answer;	    /* DnsAnswer, else DnsQuery */
	uint64_t ts;	    /* epoch ns */
	uint32_t slot;	    /* the sandbox */
	char name[254];	    /* as asked, lower-case ('?' for bytes no rule can hold) */
	uint16_t qtype;	    /* 1 A, 28 AAAA ... */
	uint8_t proto;	    /* 6 TCP, 17 UDP: how the sandbox asked */
	bool allowed;	    /* the answer was passed on (addresses learned first) */
	const char *reason; /* static: NULL, "dns_name", "floor", "limit", "upstream_error" */
	const char *
		reply; /* static: what the sandbox got: "answer", "refused", "nxdomain", "servfail" */
	const char *status; /* static: the upstream's answer (sbt_dns_status_str), NULL if none */
	uint32_t rule_id;   /* the host rule allowing the name, 0 */
	uint32_t ttl;	    /* smallest TTL of the answer's records */
	uint32_t grace_s;   /* added to each TTL */
	size_t nr_addrs;    /* learned, each until its TTL + grace */
	struct sbt_dns_addr *addrs;
	size_t nr_floored; /* inside the floor: never learned */
	struct sbt_dns_addr *floored;
	uint32_t *floored_idx; /* index into sbt_policy_floor() */
};

/* Free what an event holds (addrs, floored). */
void sbt_dns_event_free(struct sbt_dns_event *ev);

#endif
