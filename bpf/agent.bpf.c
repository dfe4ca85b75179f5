// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * `sbtrace agent`: a child cgroup of a watched parent (--cgroup-parent)
 * becomes a sandbox in the kernel, at its mkdir. The cgroup:cgroup_mkdir
 * tracepoint fires before the new directory is activated in kernfs, so no
 * task can be moved into it before its membership entry exists: its first
 * exec cannot be missed, however late userspace notices the directory.
 */
#include "policy.bpf.h"

/* Watched parents: cgroup id -> 1. Their direct children are sandboxes. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, __u64);
	__type(value, __u32);
} agent_parents SEC(".maps");

/* Free sandbox slots (userspace fills it, takes from it, returns slots to it). */
struct {
	__uint(type, BPF_MAP_TYPE_QUEUE);
	__uint(max_entries, SBT_MAX_SANDBOXES); /* resized to --max-sandboxes before load */
	__type(value, __u32);
} agent_free_slots SEC(".maps");

/* Children that got no slot (all taken) or no entry: userspace reports them. */
__u64 agent_mkdir_no_slot;
__u64 agent_mkdir_added;

SEC("tp_btf/cgroup_mkdir")
int BPF_PROG(agent_cgroup_mkdir, struct cgroup *cgrp, const char *path)
{
	__u64 parent = BPF_CORE_READ(cgrp, self.parent, cgroup, kn, id);
	__u64 id = BPF_CORE_READ(cgrp, kn, id);
	struct sbt_sandbox_stats zero = {};
	struct sbt_sandbox_key_val v;
	__u32 slot, mode = agent_mkdir_mode;

	if (!bpf_map_lookup_elem(&agent_parents, &parent))
		return 0;
	if (bpf_map_pop_elem(&agent_free_slots, &slot)) {
		__sync_fetch_and_add(&agent_mkdir_no_slot, 1);
		return 0;
	}
	v.slot = slot;
	v.level = BPF_CORE_READ(cgrp, level);
	bpf_map_update_elem(&sandbox_stats, &slot, &zero, BPF_ANY);
	/* before it is a member: its first connect finds the mode (PENDING: denied) */
	bpf_map_update_elem(&agent_egress_mode, &slot, &mode, BPF_ANY);
	if (bpf_map_update_elem(&sandbox_cgroups, &id, &v, BPF_NOEXIST)) {
		bpf_map_push_elem(&agent_free_slots, &slot, 0);
		__sync_fetch_and_add(&agent_mkdir_no_slot, 1);
		return 0;
	}
	/* in the hash only until the loader moves it into the fast table (common.bpf.h) */
	__sync_fetch_and_add(&hash_only, 1);
	__sync_fetch_and_add(&agent_mkdir_added, 1);
	return 0;
}
