/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * One slot's egress in the kernel, for the trace's set-up (egress.c) and
 * the agent's policies (agent_egress.c) alike: its mode, its trie entries
 * (compiled from rules, written as the difference to what the trie holds)
 * and the cgroup programs on its target's cgroup (pinned for a shim's or
 * the probe's sandbox, so they outlive this process).
 */
#ifndef SBT_EGRESS_SLOT_H
#define SBT_EGRESS_SLOT_H

#include <stddef.h>
#include <stdint.h>

#include "egress/policy.h"
#include "egress/policy_compile.h"

struct sbtrace_bpf;
struct bpf_link;
struct sbt_target;

/* What the trie holds for a slot: the compiler's entries, sorted by (prefix, address). */
struct sbt_slot_policy {
	struct sbt_policy_entry *entries;
	size_t nr;
};

/* The slot's egress mode (enum sbt_egress_mode): the agent's map, or the trace's array. 0 or -errno. */
int sbt_slot_set_mode(struct sbtrace_bpf *skel, uint32_t slot, uint32_t mode);

/*
 * Compile `rules` (with the floor) and make the slot's trie hold exactly
 * those entries: what changed written, what is gone deleted, p updated;
 * cached verdicts (the tap's flow cache) made stale. 0, or -errno with err
 * filled (p then holds what the trie holds).
 */
int sbt_slot_policy_write(struct sbtrace_bpf *skel, uint32_t slot, struct sbt_slot_policy *p,
			  const struct sbt_rule *rules, size_t nr_rules, char *err, size_t errlen);
/* Delete the slot's trie entries; p empty. */
void sbt_slot_policy_clear(struct sbtrace_bpf *skel, uint32_t slot, struct sbt_slot_policy *p);

/*
 * Attach the first n egress programs (sbt_egress_progs()) to t's cgroup as
 * links, appended to links[] (*nr of them so far); pinned when t has a
 * pin_name. 0, or -errno after a one-line message.
 */
int sbt_slot_attach(struct sbtrace_bpf *skel, const struct sbt_target *t, size_t n,
		    struct bpf_link **links, size_t *nr);

#endif
