/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What every BPF part of sbtrace shares: the ring buffer, the per-sandbox
 * counters, sandbox membership and the wake-up policy. The parts (exec.bpf.c,
 * egress.bpf.c, ...) are linked into one object (one load, one parse of the
 * kernel's BTF); exec.bpf.c defines SBT_COMMON_DEFINE and so owns the
 * definitions, the others see them as extern.
 */
#ifndef SBT_COMMON_BPF_H
#define SBT_COMMON_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_endian.h>
#include "sbtrace.h"

#ifdef SBT_COMMON_DEFINE
#define SBT_SHARED
#define SBT_INIT(...) = __VA_ARGS__
#else
#define SBT_SHARED extern
#define SBT_INIT(...)
#endif

/*
 * Consumer wake-ups. A wake-up per record is an irq_work self-IPI, which in a
 * VM costs a VM exit (~18 us measured here, ten times the rest of the
 * program). By default records are sent without one and the loader drains
 * the buffer on a timer; a wake-up is forced only once wakeup_watermark bytes
 * wait, so a burst cannot overflow the buffer between two timer ticks.
 * wakeup_each = 1 restores one wake-up per record (lowest latency).
 */
SBT_SHARED const volatile __u32 wakeup_each SBT_INIT(0);
SBT_SHARED const volatile __u64 wakeup_watermark SBT_INIT(1 << 20);

/*
 * Sandbox membership, written by the loader (mmapped .bss). The first
 * SBT_FAST_SANDBOXES sandboxes, deepest level first, are compared in place:
 * one ancestor-id helper per distinct level and a compare each, no map
 * lookup (a hash lookup costs ~40 ns here). Sandboxes beyond those live in
 * sandbox_cgroups, looked up once per distinct level in hash_levels; the
 * trace's are never deeper than the fast ones, so the nearest sandbox still
 * wins (the agent's, children of its parents and shims' cgroups, are not
 * told apart by depth, as before). hash_only counts those not in the table:
 * at 0 no lookup is made.
 *
 * The trace fills the table once, before any exec can match. The agent
 * changes it while the programs run, as sandboxes come and go: through the
 * hash alone (the ancestor-id helper and a lookup, on lines an exec leaves
 * cold) an exec in a sandbox cost it 1.08-1.16x the trace's, one outside
 * 0.99-1.29x (scripts/bench-agent-trace.sh). fast_seq is odd while it
 * writes; a reader that saw it odd or changed trusts only sandbox_cgroups,
 * which holds every one of the agent's sandboxes (the mkdir program puts a
 * new one there, and counts it in hash_only, before the loader knows of
 * it). Both words sit in lines the trace reads anyway. The readers rely on
 * loads not being reordered with loads (x86: elsewhere the agent leaves the
 * table empty, loader/membership.c).
 */
SBT_SHARED __u32 nr_fast __attribute__((aligned(64))); /* shares a cache line with fast[0..1] */
SBT_SHARED __u32 fast_seq;			       /* in nr_fast's padding */
SBT_SHARED struct sbt_fast_sandbox fast[SBT_FAST_SANDBOXES];

SBT_SHARED __u32 hash_levels[SBT_MAX_HASH_LEVELS];
SBT_SHARED __u32 nr_hash_levels;
SBT_SHARED __u32 hash_only; /* next to nr_hash_levels: the same cache line */

SBT_SHARED struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20);
} events SEC(".maps");

/* sandbox cgroup id -> slot and level */
SBT_SHARED struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SBT_MAX_SANDBOXES);
	__type(key, __u64);
	__type(value, struct sbt_sandbox_key_val);
} sandbox_cgroups SEC(".maps");

SBT_SHARED struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SBT_MAX_SANDBOXES);
	__type(key, __u32);
	__type(value, struct sbt_sandbox_stats);
} sandbox_stats SEC(".maps");

/* Egress mode per slot (enum sbt_egress_mode), written by the loader. */
SBT_SHARED __u8 egress_mode[SBT_MAX_SANDBOXES];
/* Per slot, --egress learn (audit mode): the floor still denied, DNS sent to the proxy. */
SBT_SHARED __u8 egress_learn[SBT_MAX_SANDBOXES];

/* The DNS proxies (sbtrace.h, "the DNS proxy"): which slots have one, where, who waits. */
SBT_SHARED __u8 dns_want[SBT_MAX_SANDBOXES];

SBT_SHARED struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SBT_DNS_PROXY_ENTRIES);
	__type(key, struct sbt_dns_proxy_key);
	__type(value, struct sbt_dns_proxy);
} dns_proxy SEC(".maps");

SBT_SHARED struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SBT_DNS_WAIT_ENTRIES);
	__type(key, __u32); /* tgid */
	__type(value, struct sbt_dns_wait);
} dns_wait SEC(".maps");

/* The ancestor of `cg` at `level` as a plain address (0 when cg is shallower). */
static __always_inline __u64 ancestor_ptr(struct cgroup *cg, int cg_level, __u32 level)
{
	__u64 anc = 0;

	if (!bpf_core_field_exists(cg->ancestors) || (int)level > cg_level)
		return 0;
	if ((int)level == cg_level)
		return (__u64)cg; /* no need to touch the ancestors' cache line */
	/* variable index into a flexible array: the verifier wants a probe read */
	bpf_probe_read_kernel(&anc, sizeof(anc),
			      (void *)((__u64)&cg->ancestors[0] + (__u64)(level & 63) * 8));
	return anc;
}

/* fast_seq before the table is read (the compiler keeps the table's loads after it). */
static __always_inline __u32 fast_begin(void)
{
	__u32 seq = *(volatile __u32 *)&fast_seq;

	asm volatile("" ::: "memory");
	return seq;
}

/* True when what was read of the table since fast_begin() gave seq holds. */
static __always_inline bool fast_stable(__u32 seq)
{
	asm volatile("" ::: "memory");
	return !(seq & 1) && *(volatile __u32 *)&fast_seq == seq;
}

/*
 * The hot path: a host-wide hook leaves here for every exec outside the
 * sandboxes. Returns the sandbox slot, or -1. `cg` is the task's own cgroup
 * when the hook has it as a BTF pointer (tp_btf); then sandboxes whose
 * address is known are matched by address (confirmed by id), else by the
 * ancestor id helper: of the current task, or of the packet's socket when
 * `skb` is given (cgroup_skb). Callers pass constant NULLs, so the helper a
 * program type may not use is compiled away.
 */
static __always_inline int sandbox_of(struct cgroup *cg, struct __sk_buff *skb)
{
	/* seq odd (being written): whatever matches, fast_stable() sends it to the hash */
	__u32 seq = fast_begin(), n = nr_fast, lv = (__u32)-1, slot;
	int cg_level = cg ? cg->level : 0;
	__u64 id = 0, ptr = 0;

	for (__u32 i = 0; i < SBT_FAST_SANDBOXES; i++) {
		if (i >= n)
			break;
		if (cg && fast[i].cgroup_ptr) {
			if (fast[i].level != lv) {
				lv = fast[i].level;
				ptr = ancestor_ptr(cg, cg_level, lv);
			}
			if (ptr != fast[i].cgroup_ptr)
				continue;
			/* a freed sandbox cgroup's memory may hold another cgroup now */
			if (BPF_CORE_READ((struct cgroup *)ptr, kn, id) != fast[i].cgroup_id)
				continue;
		} else {
			id = skb ? bpf_skb_ancestor_cgroup_id(skb, fast[i].level)
				 : bpf_get_current_ancestor_cgroup_id(fast[i].level);
			if (id != fast[i].cgroup_id)
				continue;
		}
		slot = fast[i].slot;
		if (fast_stable(seq))
			return slot;
		break; /* the agent changed the table meanwhile: the hash has them all */
	}
	/* hash_only before fast_seq again: 0 and the table unchanged, the table was all */
	if (!hash_only && fast_stable(seq))
		return -1;
	n = nr_hash_levels;
	for (__u32 i = 0; i < SBT_MAX_HASH_LEVELS; i++) {
		const struct sbt_sandbox_key_val *sb;

		if (i >= n)
			break;
		id = skb ? bpf_skb_ancestor_cgroup_id(skb, hash_levels[i])
			 : bpf_get_current_ancestor_cgroup_id(hash_levels[i]);
		sb = id ? bpf_map_lookup_elem(&sandbox_cgroups, &id) : NULL;
		if (sb)
			return sb->slot;
	}
	return -1;
}

static __always_inline __u64 wakeup_flags(void)
{
	if (wakeup_each)
		return 0;
	if (bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= wakeup_watermark)
		return BPF_RB_FORCE_WAKEUP;
	return BPF_RB_NO_WAKEUP;
}

static __always_inline int sandbox_of_current(struct cgroup *cg)
{
	return sandbox_of(cg, NULL);
}

#endif /* SBT_COMMON_BPF_H */
