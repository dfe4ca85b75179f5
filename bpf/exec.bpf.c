// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Exec tracing keyed by sandbox cgroup.
 *
 * Three twins share one handler; the loader keeps exactly one of them
 * (tp_btf preferred, raw_tp, then the classic tracepoint) and reports which.
 */
#define SBT_COMMON_DEFINE /* this part owns the shared maps and globals */
#include "common.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/*
 * Benchmark builds only (scripts/bench-exec-parts.sh): -DSBT_STOP_AFTER=n
 * returns after part n of the exec path, so that the cost of each part is the
 * difference between two builds measured on the same execs. The parts, in
 * the order the program runs them:
 */
enum exec_part {
	PART_MEMBERSHIP = 1, /* is the task in a sandbox? */
	PART_HEADER,	     /* counters, the scratch record, ids, time, cgroup */
	PART_COMM,	     /* comm and the parent's comm */
	PART_EXE,	     /* the file that runs: size, first bytes, name */
	PART_FILENAME,
	PART_INTERP,
	PART_ARGV,
	/* then the ring-buffer send: the whole program, built without SBT_STOP_AFTER */
};
#ifndef SBT_STOP_AFTER
#define SBT_STOP_AFTER 0 /* the real program: runs every part */
#endif
#define PART_END(part)                                                                             \
	do {                                                                                       \
		if (SBT_STOP_AFTER == (part))                                                      \
			return 0;                                                                  \
	} while (0)

/* Runtime knob: bytes of argv to copy, <= SBT_ARGV_CAP. Set before load. */
const volatile __u32 argv_max = SBT_ARGV_DEFAULT;

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

/*
 * Where handle_exec reads: the task, its parent and mm, bprm and the file
 * that runs. tp_btf has them as BTF pointers and loads through them (a
 * plain load each); raw_tp and the tracepoint probe-read (a helper call
 * each, CO-RE). Loads instead of reads took ~500 ns (of 1.9 us) off each
 * traced exec here (scripts/bench-exec-parts.sh). handle_exec is verified
 * once per twin with `btf` a constant there, so each twin keeps its own
 * branch only.
 */
struct exec_src {
	struct task_struct *task;
	struct task_struct *parent;
	struct mm_struct *mm;
	struct linux_binprm *bprm; /* NULL: the classic tracepoint */
	struct file *file;	   /* NULL: the classic tracepoint */
	const char *filename;
};

static __always_inline void fill_ids(struct sbt_exec_record *rec, const struct exec_src *src,
				     bool btf)
{
	if (btf) {
		rec->pid = src->task->tgid;
		rec->tid = src->task->pid;
		rec->ppid = src->parent->tgid;
	} else {
		struct task_struct *task = src->task, *parent = src->parent;

		rec->pid = BPF_CORE_READ(task, tgid);
		rec->tid = BPF_CORE_READ(task, pid);
		rec->ppid = BPF_CORE_READ(parent, tgid);
	}
}

static __always_inline void fill_comms(struct sbt_exec_record *rec, const struct exec_src *src,
				       bool btf)
{
	if (btf) {
		const __u64 *comm = (const __u64 *)src->task->comm;
		const __u64 *parent = (const __u64 *)src->parent->comm;

		/* both NUL-terminated within their 16 bytes (__set_task_comm) */
		((__u64 *)rec->comm)[0] = comm[0];
		((__u64 *)rec->comm)[1] = comm[1];
		((__u64 *)rec->parent_comm)[0] = parent[0];
		((__u64 *)rec->parent_comm)[1] = parent[1];
	} else {
		struct task_struct *parent = src->parent;

		bpf_get_current_comm(rec->comm, sizeof(rec->comm));
		BPF_CORE_READ_STR_INTO(&rec->parent_comm, parent, comm);
	}
}

/*
 * What file runs (bprm->file: a #! script's interpreter), its size and the
 * first bytes the kernel read of it: see struct sbt_exec_record. bprm NULL:
 * the twin cannot see it (the classic tracepoint).
 */
static __always_inline void fill_exe(struct sbt_exec_record *rec, const struct exec_src *src,
				     bool btf)
{
	struct linux_binprm *bprm = src->bprm;
	struct file *f = src->file;
	const char *name;

	rec->exe_name[0] = 0;
	if (!f ||
	    (!btf && bpf_probe_read_kernel(rec->exe_head, sizeof(rec->exe_head), &bprm->buf) < 0)) {
		rec->exe_size = 0;
		rec->flags |= SBT_EXEC_EXE_UNAVAILABLE;
		return;
	}
	if (btf) {
		for (int i = 0; i < SBT_EXE_HEAD_WORDS; i++)
			rec->exe_head[i] = ((const __u64 *)bprm->buf)[i];
		rec->exe_size = f->f_inode->i_size;
		name = (const char *)f->f_path.dentry->d_name.name;
	} else {
		rec->exe_size = BPF_CORE_READ(f, f_inode, i_size);
		name = (const char *)BPF_CORE_READ(f, f_path.dentry, d_name.name);
	}
	bpf_probe_read_kernel_str(rec->exe_name, sizeof(rec->exe_name), name);
}

static __always_inline void fill_argv(struct sbt_exec_record *rec, __u32 off,
				      const struct exec_src *src, bool btf)
{
	unsigned long start, end;
	__u64 len = 0;
	__u32 cap = argv_max;

	if (btf) {
		start = src->mm->arg_start;
		end = src->mm->arg_end;
	} else {
		struct mm_struct *mm = src->mm;

		start = BPF_CORE_READ(mm, arg_start);
		end = BPF_CORE_READ(mm, arg_end);
	}
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

/* bprm NULL: the twin sees neither interp nor the file (the classic tracepoint). */
static __noinline int handle_exec(__u32 slot, const struct exec_src *src, bool btf)
{
	struct linux_binprm *bprm = src->bprm;
	const char *filename = src->filename;
	const char *interp = !bprm ? NULL : btf ? bprm->interp : BPF_CORE_READ(bprm, interp);
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
	fill_ids(rec, src, btf);
	uidgid = bpf_get_current_uid_gid();
	rec->uid = (__u32)uidgid;
	rec->gid = (__u32)(uidgid >> 32);
	rec->flags = 0;
	PART_END(PART_HEADER);
	fill_comms(rec, src, btf);
	PART_END(PART_COMM);
	fill_exe(rec, src, btf);
	PART_END(PART_EXE);

	off = read_kstr(rec->data, filename, &rec->flags, SBT_EXEC_FILENAME_TRUNCATED,
			SBT_EXEC_FILENAME_FAULT);
	rec->filename_len = off;
	if (off > SBT_PATH_MAX)
		return 0;
	PART_END(PART_FILENAME);
	if (interp) {
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
	PART_END(PART_INTERP);

	fill_argv(rec, off, src, btf);
	PART_END(PART_ARGV);

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
	struct exec_src src = { .task = p, .bprm = bprm };
	int slot;

	/*
	 * Before membership, on purpose: the verifier checks every pointer loaded
	 * through a trusted one against the kernel's lists of trusted fields,
	 * each a search by name through its BTF, once per path that reaches the
	 * load. Here that is one path; after membership, one per way out of its
	 * loops (9): verification took 9 ms instead of 15 (7 ms with probe
	 * reads). Outside every sandbox they are three loads from cache lines
	 * the exec has just used.
	 */
	src.parent = p->real_parent;
	src.mm = p->mm;
	src.file = bprm->file;
	barrier_var(src.parent); /* keep them here: the compiler may sink them */
	barrier_var(src.mm);
	barrier_var(src.file);
	slot = sandbox_of_current(p->cgroups->dfl_cgrp);
	if (slot < 0)
		return 0;
	PART_END(PART_MEMBERSHIP);
	src.filename = bprm->filename;
	return handle_exec(slot, &src, true);
}

SEC("raw_tp/sched_process_exec")
int BPF_PROG(exec_raw_tp, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	int slot = sandbox_of_current(NULL);
	struct exec_src src;

	if (slot < 0)
		return 0;
	PART_END(PART_MEMBERSHIP);
	src = (struct exec_src){
		.task = p,
		.parent = BPF_CORE_READ(p, real_parent),
		.mm = BPF_CORE_READ(p, mm),
		.bprm = bprm,
		.file = BPF_CORE_READ(bprm, file),
		.filename = BPF_CORE_READ(bprm, filename),
	};
	return handle_exec(slot, &src, false);
}

SEC("tracepoint/sched/sched_process_exec")
int exec_tracepoint(struct trace_event_raw_sched_process_exec *ctx)
{
	int slot = sandbox_of_current(NULL);
	struct task_struct *task;
	struct exec_src src;
	unsigned short loc;

	if (slot < 0)
		return 0;
	PART_END(PART_MEMBERSHIP);
	loc = ctx->__data_loc_filename & 0xffff;
	task = (struct task_struct *)bpf_get_current_task();
	src = (struct exec_src){
		.task = task,
		.parent = BPF_CORE_READ(task, real_parent),
		.mm = BPF_CORE_READ(task, mm),
		.filename = (const char *)ctx + loc,
	};
	return handle_exec(slot, &src, false);
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
