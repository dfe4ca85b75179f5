/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The policy verdict computed straight from the rules, bit by bit: the
 * reference the compiled LPM entries are checked against, by the unit test's
 * randomized comparison and by the fuzz target alike.
 */
#ifndef SBT_POLICY_REFERENCE_H
#define SBT_POLICY_REFERENCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "egress/policy.h"
#include "egress/policy_compile.h"

static inline bool ref_covers(const uint8_t *net, unsigned int prefix, const uint8_t *a)
{
	for (unsigned int i = 0; i < prefix; i++)
		if (((net[i / 8] ^ a[i / 8]) >> (7 - i % 8)) & 1)
			return false;
	return true;
}

/*
 * Allowed by R iff R covers addr, ports/proto match and no floor covering
 * addr is longer than R; the lowest such rule id, or 0. *floor: the longest
 * covering prefix is a floor's (the kernel's floor: answer-only entries are not).
 */
static inline uint32_t policy_reference(const struct sbt_rule *rules, size_t n, const uint8_t *a,
					uint16_t port, uint8_t proto, bool *floor)
{
	const struct sbt_floor *fl;
	size_t nf;
	int lf = -1, lr = -1;
	uint32_t best = 0;

	fl = sbt_policy_floor(&nf);
	for (size_t f = 0; f < nf; f++)
		if (!fl[f].answer_only && ref_covers(fl[f].addr, fl[f].prefix, a) &&
		    (int)fl[f].prefix > lf)
			lf = fl[f].prefix;
	for (size_t i = 0; i < n; i++) {
		const struct sbt_rule *r = &rules[i];

		if (!ref_covers(r->addr, r->prefix, a))
			continue;
		if ((int)r->prefix > lr)
			lr = r->prefix;
		if ((int)r->prefix < lf || port < r->port_lo || port > r->port_hi ||
		    (r->proto != SBT_PROTO_ANY && r->proto != proto))
			continue;
		if (!best || r->id < best)
			best = r->id;
	}
	*floor = lf >= 0 && lf >= lr;
	return best;
}

#endif
