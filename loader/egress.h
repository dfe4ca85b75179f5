/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef SBT_EGRESS_H
#define SBT_EGRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "loader.h"
#include "policy.h"

/* Loader-side egress modes: the BPF ones plus "off" (no egress hooks at all). */
#define SBT_EGRESS_OFF (-1)

struct sbt_egress_cfg {
	int mode; /* SBT_EGRESS_OFF, or enum sbt_egress_mode */
	struct sbt_rule *rules;
	size_t nr_rules;
	bool has_resolver;
	uint8_t resolver[16];
	uint32_t resolver_rule_id; /* id given to the implicit "resolver port 53" rule */
};

#define SBT_HOST_ADDRS	     16
#define SBT_MAX_HOSTS	     64
#define SBT_MAX_EGRESS_LINKS 8

struct sbt_host_state {
	char name[SBT_HOST_MAX];
	size_t rule_idx;
	uint8_t addrs[SBT_HOST_ADDRS][16];
	size_t nr_addrs;
	uint32_t ttl;
	uint64_t expires_ms; /* CLOCK_MONOTONIC */
	uint64_t refreshes;
	char error[128];
};

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

const char *sbt_egress_mode_name(int mode);

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

const char *sbt_egress_rule_text(const struct sbt_egress_cfg *cfg, uint32_t id);
const char *sbt_egress_floor_text(uint32_t idx);

#endif
