/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What a sandbox was told: the addresses its DNS proxy passed on for names
 * that a host rule allows, each until its TTL plus the grace has passed.
 * Per sandbox, bounded (a clear refusal at the limit, never a silent cut).
 * Pure logic: the loader holds the lock and writes the trie.
 */
#ifndef SBT_DNSLEARN_H
#define SBT_DNSLEARN_H

#include <stddef.h>
#include <stdint.h>

#include "egress/policy.h"

#define SBT_DNS_LEARN_DEFAULT 4096 /* addresses per sandbox */
/* rule_idx of a name learned by --egress learn alone: it names, allows nothing, never expires */
#define SBT_DNS_LEARN_NAME_ONLY UINT32_MAX

struct sbt_dns_learned {
	uint8_t addr[16];	 /* IPv4 as ::ffff:a.b.c.d */
	uint32_t rule_idx;	 /* the host rule (index into the rules) that allowed the name */
	uint64_t expires_ms;	 /* CLOCK_MONOTONIC */
	uint64_t learned_ns;	 /* epoch ns of the answer that last told it */
	char name[SBT_HOST_MAX]; /* the name the sandbox asked */
};

struct sbt_dns_learn {
	struct sbt_dns_learned *e;
	size_t n, cap;
	size_t max; /* the per-sandbox limit */
};

void sbt_dns_learn_init(struct sbt_dns_learn *l, size_t max);
void sbt_dns_learn_free(struct sbt_dns_learn *l);

/*
 * Learn (addr, rule_idx) until expires_ms, told at learned_ns for `name`; an
 * entry already there lives on until the later of both expiries. Expired
 * entries are dropped first when the table is full. 1: a new entry, 0: an
 * entry extended, -ENOSPC: the limit is reached (nothing changed), -ENOMEM.
 */
int sbt_dns_learn_add(struct sbt_dns_learn *l, const uint8_t addr[16], uint32_t rule_idx,
		      const char *name, uint64_t expires_ms, uint64_t learned_ns, uint64_t now_ms);

/* Drop entries expired at now_ms; the number dropped. */
size_t sbt_dns_learn_expire(struct sbt_dns_learn *l, uint64_t now_ms);

/* The freshest entry for addr, or NULL. */
const struct sbt_dns_learned *sbt_dns_learn_find(const struct sbt_dns_learn *l,
						 const uint8_t addr[16]);

#endif
