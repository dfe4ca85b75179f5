/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef SBT_EGRESS_H
#define SBT_EGRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "loader.h"
#include "policy.h"

#define SBT_MAX_HOSTS	     64
#define SBT_MAX_EGRESS_LINKS 8

struct sbt_egress_sandbox {
	struct sbt_host_state hosts[SBT_MAX_HOSTS];
	size_t nr_hosts;
	bool has_resolver;
	uint8_t resolver[16];
	char resolver_source[96];
	int resolver_pid;
	int nsfd;			  /* the sandbox's network namespace, -1 for the host's */
	struct sbt_policy_entry *entries; /* what the trie holds for this slot */
	size_t nr_entries;
	struct bpf_link *links[SBT_MAX_EGRESS_LINKS];
	size_t nr_links;
};

struct sbt_egress_state {
	struct sbt_plan *plan;
	const struct sbt_egress_cfg *cfg;
	struct sbt_egress_sandbox sb[SBT_MAX_SANDBOXES];
	uint32_t nr;
};

/*
 * Per sandbox: write its egress mode; with a policy, resolve its host rules
 * as it would (its network namespace, its resolver), write its trie entries
 * and attach the cgroup programs. 0, or -errno after a one-line message.
 */
int sbt_egress_setup(struct sbt_egress_state *st, struct sbt_plan *plan,
		     const struct sbt_egress_cfg *cfg, const struct sbt_sandbox *sandboxes,
		     uint32_t nr);
/* Re-resolve hosts whose TTL expired and rewrite the tries that changed. */
void sbt_egress_tick(struct sbt_egress_state *st);
void sbt_egress_detach(struct sbt_egress_state *st);
void sbt_egress_teardown(struct sbt_egress_state *st);
/* What TraceStarted shows of sandbox i's set-up (pointers into st). */
void sbt_egress_view(const struct sbt_egress_state *st, uint32_t i, struct sbt_egress_view *v);

#endif
