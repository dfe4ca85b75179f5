// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The addresses a sandbox's DNS proxy passed on, per sandbox (see dnslearn.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "egress/dnslearn.h"

void sbt_dns_learn_init(struct sbt_dns_learn *l, size_t max)
{
	memset(l, 0, sizeof(*l));
	l->max = max ? max : SBT_DNS_LEARN_DEFAULT;
}

void sbt_dns_learn_free(struct sbt_dns_learn *l)
{
	free(l->e);
	l->e = NULL;
	l->n = l->cap = 0;
}

size_t sbt_dns_learn_expire(struct sbt_dns_learn *l, uint64_t now_ms)
{
	size_t k = 0, before = l->n;

	for (size_t i = 0; i < l->n; i++)
		if (l->e[i].expires_ms > now_ms)
			l->e[k++] = l->e[i];
	l->n = k;
	return before - k;
}

int sbt_dns_learn_add(struct sbt_dns_learn *l, const uint8_t addr[16], uint32_t rule_idx,
		      const char *name, uint64_t expires_ms, uint64_t learned_ns, uint64_t now_ms)
{
	struct sbt_dns_learned *e;

	for (size_t i = 0; i < l->n; i++) {
		e = &l->e[i];
		if (e->rule_idx != rule_idx || memcmp(e->addr, addr, 16) != 0)
			continue;
		if (expires_ms > e->expires_ms)
			e->expires_ms = expires_ms;
		e->learned_ns = learned_ns;
		snprintf(e->name, sizeof(e->name), "%s", name ? name : "");
		return 0;
	}
	if (l->n >= l->max && sbt_dns_learn_expire(l, now_ms) == 0)
		return -ENOSPC;
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 64;
		struct sbt_dns_learned *ne = realloc(l->e, cap * sizeof(*ne));

		if (!ne)
			return -ENOMEM;
		l->e = ne;
		l->cap = cap;
	}
	e = &l->e[l->n++];
	memset(e, 0, sizeof(*e));
	memcpy(e->addr, addr, 16);
	e->rule_idx = rule_idx;
	e->expires_ms = expires_ms;
	e->learned_ns = learned_ns;
	snprintf(e->name, sizeof(e->name), "%s", name ? name : "");
	return 1;
}

const struct sbt_dns_learned *sbt_dns_learn_find(const struct sbt_dns_learn *l,
						 const uint8_t addr[16])
{
	const struct sbt_dns_learned *best = NULL;

	for (size_t i = 0; i < l->n; i++)
		if (memcmp(l->e[i].addr, addr, 16) == 0 &&
		    (!best || l->e[i].learned_ns > best->learned_ns))
			best = &l->e[i];
	return best;
}
