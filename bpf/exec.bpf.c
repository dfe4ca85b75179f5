// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Exec tracing keyed by sandbox cgroup.
 *
 * Three twins share one handler; the loader keeps exactly one of them
 * (tp_btf preferred, raw_tp, then the classic tracepoint) and reports which.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "sbtrace.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Runtime knob: bytes of argv to copy, <= SBT_ARGV_CAP. Set before load. */
const volatile __u32 argv_max = SBT_ARGV_DEFAULT;

/*
 * Consumer wake-ups. A wake-up per record is an irq_work self-IPI, which in a
 * VM costs a VM exit (~18 us measured here, ten times the rest of the
 * program). By default records are sent without one and the loader drains
 * the buffer on a timer; a wake-up is forced only once wakeup_watermark bytes
 * wait, so a burst cannot overflow the buffer between two timer ticks.
 * wakeup_each = 1 restores one wake-up per record (lowest latency).
 */
const volatile __u32 wakeup_each = 0;
const volatile __u64 wakeup_watermark = 1 << 20;

/*
 * Sandbox membership, written by the loader (mmapped .bss) before any exec
 * can match. The first SBT_FAST_SANDBOXES sandboxes, deepest level first,
 * are compared in place: one ancestor-id helper per distinct level and a
 * compare each, no map lookup (a hash lookup costs ~40 ns here). Sandboxes
 * beyond those live in sandbox_cgroups, looked up once per distinct level in
 * hash_levels; they are never deeper than the fast ones, so the nearest
 * sandbox still wins.
 */
__u32 nr_fast __attribute__((aligned(64))); /* shares a cache line with fast[0..1] */
struct sbt_fast_sandbox fast[SBT_FAST_SANDBOXES];

__u32 hash_levels[SBT_MAX_HASH_LEVELS];
__u32 nr_hash_levels;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20);
} events SEC(".maps");

/* sandbox cgroup id -> slot and level */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SBT_MAX_SANDBOXES);
	__type(key, __u64);
	__type(value, struct sbt_sandbox_key_val);
} sandbox_cgroups SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SBT_MAX_SANDBOXES);
	__type(key, __u32);
	__type(value, struct sbt_sandbox_stats);
} sandbox_stats SEC(".maps");

/* One record under construction per CPU. */
struct scratch {
	__u8 buf[SBT_EXEC_RECORD_MAX];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct scratch);
} scratch_map SEC(".maps");

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
 * ancestor id helper.
 */
static __always_inline int sandbox_of_current(struct cgroup *cg)
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
		id = bpf_get_current_ancestor_cgroup_id(fast[i].level);
		if (id == fast[i].cgroup_id)
			return fast[i].slot;
	}
	n = nr_hash_levels;
	for (__u32 i = 0; i < SBT_MAX_HASH_LEVELS; i++) {
		const struct sbt_sandbox_key_val *sb;

		if (i >= n)
			break;
		id = bpf_get_current_ancestor_cgroup_id(hash_levels[i]);
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

static __always_inline __u32 read_kstr(void *dst, const char *src, __u32 *flags, __u32 trunc_flag,
				       __u32 fault_flag)
{
	long n = bpf_probe_read_kernel_str(dst, SBT_PATH_MAX, src);

	if (n <= 0) {
		*(char *)dst = 0;
		*flags |= fault_flag;
		return 1;
	}
	if (n >= SBT_PATH_MAX)
		*flags |= trunc_flag;
	return (__u32)n;
}

static __always_inline void fill_argv(struct sbt_exec_record *rec, __u32 off,
				      struct task_struct *task)
{
	unsigned long start = BPF_CORE_READ(task, mm, arg_start);
	unsigned long end = BPF_CORE_READ(task, mm, arg_end);
	__u64 len = 0;
	__u32 cap = argv_max;

	if (end > start)
		len = end - start;
	rec->argv_full_len = len > 0xffffffffULL ? 0xffffffffu : (__u32)len;
	if (cap > SBT_ARGV_CAP)
		cap = SBT_ARGV_CAP;
	if (len > cap) {
		len = cap;
		rec->flags |= SBT_EXEC_ARGV_TRUNCATED;
	}
	if (off > 2 * SBT_PATH_MAX || len == 0) {
		rec->argv_len = 0;
		return;
	}
	if (len > SBT_ARGV_CAP)
		len = SBT_ARGV_CAP;
	if (bpf_probe_read_user(rec->data + off, len, (const void *)start) < 0) {
		rec->flags |= SBT_EXEC_ARGV_FAULT;
		len = 0;
	}
	rec->argv_len = (__u32)len;
}

/* A subprogram, not inlined: keeps each twin's hot path a few cache lines long. */
static __noinline int handle_exec(__u32 slot, struct task_struct *task, const char *filename,
				  const char *interp, bool have_interp)
{
	struct sbt_sandbox_stats *st;
	struct sbt_exec_record *rec;
	struct scratch *s;
	__u32 zero = 0, off, size;
	__u64 uidgid;

	st = bpf_map_lookup_elem(&sandbox_stats, &slot);
	if (!st)
		return 0;
	s = bpf_map_lookup_elem(&scratch_map, &zero);
	if (!s) {
		__sync_fetch_and_add(&st->lost, 1);
		return 0;
	}
	rec = (struct sbt_exec_record *)s->buf;

	rec->hdr.type = SBT_REC_EXEC;
	rec->hdr.abi = SBT_ABI_VERSION;
	rec->seq = __sync_fetch_and_add(&st->execs, 1) + 1;
	rec->ts_boot_ns = bpf_ktime_get_boot_ns();
	rec->cgroup_id = bpf_get_current_cgroup_id();
	rec->slot = slot;
	rec->pid = BPF_CORE_READ(task, tgid);
	rec->tid = BPF_CORE_READ(task, pid);
	rec->ppid = BPF_CORE_READ(task, real_parent, tgid);
	uidgid = bpf_get_current_uid_gid();
	rec->uid = (__u32)uidgid;
	rec->gid = (__u32)(uidgid >> 32);
	rec->flags = 0;
	bpf_get_current_comm(rec->comm, sizeof(rec->comm));
	BPF_CORE_READ_STR_INTO(&rec->parent_comm, task, real_parent, comm);

	off = read_kstr(rec->data, filename, &rec->flags, SBT_EXEC_FILENAME_TRUNCATED,
			SBT_EXEC_FILENAME_FAULT);
	rec->filename_len = off;
	if (off > SBT_PATH_MAX)
		return 0;
	if (have_interp) {
		rec->interp_len = read_kstr(rec->data + off, interp, &rec->flags,
					    SBT_EXEC_INTERP_TRUNCATED, SBT_EXEC_INTERP_FAULT);
	} else {
		rec->data[off] = 0;
		rec->interp_len = 1;
		rec->flags |= SBT_EXEC_INTERP_UNAVAILABLE;
	}
	if (rec->interp_len > SBT_PATH_MAX)
		return 0;
	off += rec->interp_len;

	fill_argv(rec, off, task);

	size = sizeof(*rec) + off + rec->argv_len;
	if (size > SBT_EXEC_RECORD_MAX)
		return 0;
	rec->hdr.size = size;
	if (bpf_ringbuf_output(&events, rec, size, wakeup_flags()) < 0)
		__sync_fetch_and_add(&st->lost, 1);
	return 0;
}

/* Each twin checks membership before it touches bprm: the hot path is only that. */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(exec_tp_btf, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	int slot = sandbox_of_current(p->cgroups->dfl_cgrp);

	if (slot < 0)
		return 0;
	return handle_exec(slot, p, bprm->filename, bprm->interp, true);
}

SEC("raw_tp/sched_process_exec")
int BPF_PROG(exec_raw_tp, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	int slot = sandbox_of_current(NULL);

	if (slot < 0)
		return 0;
	return handle_exec(slot, p, BPF_CORE_READ(bprm, filename), BPF_CORE_READ(bprm, interp),
			   true);
}

SEC("tracepoint/sched/sched_process_exec")
int exec_tracepoint(struct trace_event_raw_sched_process_exec *ctx)
{
	int slot = sandbox_of_current(NULL);
	unsigned short loc;

	if (slot < 0)
		return 0;
	loc = ctx->__data_loc_filename & 0xffff;
	return handle_exec(slot, (struct task_struct *)bpf_get_current_task(),
			   (const char *)ctx + loc, NULL, false);
}

/*
 * Learn a sandbox cgroup's kernel address: the loader runs this iterator once
 * per sandbox (SELF_ONLY). The twins then recognise the sandbox by comparing
 * the task's ancestor pointer, which sits in warm cache lines, instead of
 * dereferencing the ancestor's kernfs node for its id (measured here: ~60 ns
 * per exec for the id helper, ~10 ns for the pointer compare).
 */
__u64 found_ptr;
__u64 found_id;
__s32 found_level;

SEC("iter/cgroup")
int cgroup_ptr(struct bpf_iter__cgroup *ctx)
{
	struct cgroup *cgrp = ctx->cgroup;

	if (!cgrp)
		return 0;
	found_ptr = (__u64)cgrp;
	found_id = BPF_CORE_READ(cgrp, kn, id);
	found_level = BPF_CORE_READ(cgrp, level);
	return 0;
}
