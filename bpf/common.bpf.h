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
 * Sandbox membership, written by the loader (mmapped .bss) before any exec
 * can match. The first SBT_FAST_SANDBOXES sandboxes, deepest level first,
 * are compared in place: one ancestor-id helper per distinct level and a
 * compare each, no map lookup (a hash lookup costs ~40 ns here). Sandboxes
 * beyond those live in sandbox_cgroups, looked up once per distinct level in
 * hash_levels; they are never deeper than the fast ones, so the nearest
 * sandbox still wins.
 */
SBT_SHARED __u32 nr_fast __attribute__((aligned(64))); /* shares a cache line with fast[0..1] */
SBT_SHARED struct sbt_fast_sandbox fast[SBT_FAST_SANDBOXES];

SBT_SHARED __u32 hash_levels[SBT_MAX_HASH_LEVELS];
SBT_SHARED __u32 nr_hash_levels;

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
	__u32 n = nr_fast, lv = (__u32)-1;
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
			if (BPF_CORE_READ((struct cgroup *)ptr, kn, id) == fast[i].cgroup_id)
				return fast[i].slot;
			continue;
		}
		id = skb ? bpf_skb_ancestor_cgroup_id(skb, fast[i].level)
			 : bpf_get_current_ancestor_cgroup_id(fast[i].level);
		if (id == fast[i].cgroup_id)
			return fast[i].slot;
	}
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
