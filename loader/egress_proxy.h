/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The egress set-up's DNS proxies and the exec gate (egress_proxy.c), for egress.c. */
#ifndef SBT_EGRESS_PROXY_H
#define SBT_EGRESS_PROXY_H

#include <stdint.h>

#include "egress_state.h"

struct sbt_target;

/*
 * The proxies of sandbox slot, serving st->sb[slot].owner (which the caller
 * filled: its policy, resolver, and where it learns and reports): in each
 * network namespace its processes use now (or the one it names), on its
 * tap, and from then on in each new one (dns_want). Failures are said on
 * stderr.
 */
void sbt_egress_proxy_start(struct sbt_egress_state *st, uint32_t slot,
			    const struct sbt_target *sb);
/* Unpublish the slot's proxies (nothing is sent to them any more), then stop them. */
void sbt_egress_proxy_stop(struct sbt_egress_state *st, uint32_t slot);
/*
 * The processes that wait for a DNS proxy (dns_wait: an exec, or a query,
 * in a network namespace of a proxied sandbox that has none yet): open one
 * there, then continue those the exec hook stopped. Cheap when none waits:
 * call it after every poll.
 */
void sbt_egress_gate(struct sbt_egress_state *st);
/* At stop: no exec waits any more; every process the exec hook stopped goes on. */
void sbt_egress_gate_release(struct sbt_egress_state *st);

#endif
