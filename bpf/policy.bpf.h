/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the egress parts share: the policy trie, the fold table, the verdict
 * and the sending of egress records. egress.bpf.c (cgroup hooks) defines
 * SBT_POLICY_DEFINE and owns the maps; tap.bpf.c (tc on a tap) sees them as
 * extern. Both judge a destination the same way, so a rule means the same
 * on a cgroup sandbox and on a microVM's tap.
 */
#ifndef SBT_POLICY_BPF_H
#define SBT_POLICY_BPF_H

#include "common.bpf.h"

#ifdef SBT_POLICY_DEFINE
#define SBT_POLICY_SHARED
#define SBT_POLICY_INIT(...) = __VA_ARGS__
#else
#define SBT_POLICY_SHARED extern
#define SBT_POLICY_INIT(...)
#endif

#define AF_INET	       2
#define AF_INET6       10
#define AF_PACKET      17
#define SOCK_STREAM    1
#define SOCK_DGRAM     2
#define SOCK_RAW       3
#define IPPROTO_ICMP   1
#define IPPROTO_TCP    6
#define IPPROTO_UDP    17
#define IPPROTO_ICMPV6 58
#define ETH_P_IP       0x0800
#define ETH_P_IPV6     0x86DD

/* Identical events within this window fold into one (0: every event is sent; benchmarks). */
SBT_POLICY_SHARED const volatile __u64 fold_window_ns SBT_POLICY_INIT(SBT_FOLD_WINDOW_NS);

SBT_POLICY_SHARED struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, 65536);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct sbt_policy_key);
	__type(value, struct sbt_policy_val);
} egress_policy SEC(".maps");

SBT_POLICY_SHARED struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct sbt_fold_key);
	__type(value, struct sbt_fold_val);
} egress_fold SEC(".maps");

/*
 * sbtrace agent: each slot's mode lives in a map sized to --max-sandboxes
 * (the trace's egress_mode[] has SBT_MAX_SANDBOXES entries). A slot without
 * an entry is denied. agent_mkdir_mode is what the cgroup_mkdir program
 * gives a new child of a watched parent: SBT_EGRESS_PENDING with
 * --policy-dir (denied until the agent applied its policy), else OBSERVE.
 * The trace leaves agent_modes 0: the branch is pruned at load.
 */
SBT_POLICY_SHARED const volatile __u32 agent_modes SBT_POLICY_INIT(0);
SBT_POLICY_SHARED const volatile __u32 agent_mkdir_mode SBT_POLICY_INIT(0);

SBT_POLICY_SHARED struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SBT_MAX_SANDBOXES); /* resized to --max-sandboxes before load */
	__type(key, __u32);
	__type(value, __u32);
} agent_egress_mode SEC(".maps");

/* The egress mode of a slot (enum sbt_egress_mode). */
static __always_inline __u32 slot_mode(__u32 slot)
{
	if (agent_modes) {
		const __u32 *m = bpf_map_lookup_elem(&agent_egress_mode, &slot);

		return m ? *m : SBT_EGRESS_FAILED;
	}
	return egress_mode[slot & (SBT_MAX_SANDBOXES - 1)];
}

struct verdict {
	__u32 rule_id;
	__u32 floor_idx;
	__u8 reason;
	bool allowed;
};

static __always_inline void v4_mapped(__u8 addr[16], __u32 ip4_be)
{
	__builtin_memset(addr, 0, 10);
	addr[10] = 0xff;
	addr[11] = 0xff;
	__builtin_memcpy(addr + 12, &ip4_be, 4);
}

/* Longest-prefix match, then the first port alternative that matches. */
static __always_inline void policy_check(__u32 slot, const __u8 addr[16], __u16 port, __u8 proto,
					 bool own_netns, struct verdict *v)
{
	struct sbt_policy_key key = { .prefixlen = 32 + 128, .slot = slot };
	const struct sbt_policy_val *val;

	__builtin_memcpy(key.addr, addr, 16);
	v->rule_id = 0;
	v->floor_idx = 0;
	v->allowed = false;
	v->reason = SBT_REASON_NOT_IN_ALLOWLIST;
	val = bpf_map_lookup_elem(&egress_policy, &key);
	if (!val)
		return;
	for (__u32 i = 0; i < SBT_POLICY_PORTS_MAX; i++) {
		const struct sbt_policy_val_port *p = &val->ports[i];

		if (i >= val->nr_ports)
			break;
		if (p->proto && p->proto != proto)
			continue;
		if (port < p->lo || port > p->hi)
			continue;
		v->allowed = true;
		v->rule_id = p->rule_id;
		v->reason = SBT_REASON_RULE;
		return;
	}
	if (!(val->flags & SBT_POLICY_FLOOR))
		return;
	/* Inside its own network namespace, loopback is the sandbox's own. */
	if (val->floor_kind == SBT_FLOOR_LOOPBACK && own_netns) {
		v->allowed = true;
		v->reason = SBT_REASON_OWN_LOOPBACK;
		return;
	}
	v->reason = SBT_REASON_FLOOR;
	v->floor_idx = val->floor_idx;
}

/*
 * Fold an event: 0 when an identical one was sent less than a second ago (it
 * is counted there instead), else the number of events the record to send
 * stands for (itself plus those folded since the previous one). `now` is a
 * monotonic clock (the coarse one where the program type may read it).
 */
static __always_inline __u64 fold(const struct sbt_fold_key *k, __u64 now)
{
	struct sbt_fold_val *f, init = { .window_start_ns = now };

	f = bpf_map_lookup_elem(&egress_fold, k);
	if (!f) {
		bpf_map_update_elem(&egress_fold, k, &init, BPF_ANY);
		return 1;
	}
	if (now - f->window_start_ns < fold_window_ns) {
		__sync_fetch_and_add(&f->folded, 1);
		return 0;
	}
	/* A new window: this record also stands for those folded in the last one. */
	f->window_start_ns = now;
	return 1 + __sync_fetch_and_and(&f->folded, 0);
}

/* fold() for a filled record; true when it was folded away, else r->count is set. */
static __always_inline bool folded(struct sbt_egress_record *r, __u64 now)
{
	struct sbt_fold_key k = {
		.slot = r->slot,
		.pid = r->pid,
		.dport = r->dport,
		.proto = r->proto,
		.hook = r->hook,
		.verdict = r->verdict,
		.reason = r->reason,
	};

	__builtin_memcpy(k.daddr, r->daddr, 16);
	r->count = fold(&k, now);
	return r->count == 0;
}

/* Send a filled record (not folded away) and count it, or count its loss. */
static __always_inline void send_egress(struct sbt_egress_record *r)
{
	struct sbt_sandbox_stats *st;
	__u32 slot = r->slot;

	st = bpf_map_lookup_elem(&sandbox_stats, &slot);
	if (!st)
		return;
	r->hdr.type = SBT_REC_EGRESS;
	r->hdr.abi = SBT_ABI_VERSION;
	r->hdr.size = sizeof(*r);
	r->ts_boot_ns = bpf_ktime_get_boot_ns();
	if (bpf_ringbuf_output(&events, r, sizeof(*r), wakeup_flags()) < 0)
		__sync_fetch_and_add(&st->egress_lost, 1);
	else
		__sync_fetch_and_add(&st->egress, 1);
}

#endif /* SBT_POLICY_BPF_H */
