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
	PART_CWD, /* the working directory's last names */
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
/* Before 6.11 the inode's ctime was a timespec64: __i_ctime from 6.6, i_ctime before. */
struct inode___ctime_6_6 {
	struct timespec64 __i_ctime;
} __attribute__((preserve_access_index));
struct inode___ctime_old {
	struct timespec64 i_ctime;
} __attribute__((preserve_access_index));

/* The inode's ctime in epoch ns (the coarse clock's: up to a tick behind); 0 unknown. */
static __always_inline __u64 inode_ctime(struct inode *ino, bool btf)
{
	struct inode___ctime_6_6 *mid = (void *)ino;
	struct inode___ctime_old *old = (void *)ino;

	if (bpf_core_field_exists(ino->i_ctime_sec)) {
		if (btf)
			return (__u64)ino->i_ctime_sec * 1000000000ull + ino->i_ctime_nsec;
		return (__u64)BPF_CORE_READ(ino, i_ctime_sec) * 1000000000ull +
		       BPF_CORE_READ(ino, i_ctime_nsec);
	}
	if (bpf_core_field_exists(mid->__i_ctime))
		return (__u64)BPF_CORE_READ(mid, __i_ctime.tv_sec) * 1000000000ull +
		       (__u64)BPF_CORE_READ(mid, __i_ctime.tv_nsec);
	if (bpf_core_field_exists(old->i_ctime))
		return (__u64)BPF_CORE_READ(old, i_ctime.tv_sec) * 1000000000ull +
		       (__u64)BPF_CORE_READ(old, i_ctime.tv_nsec);
	return 0;
}

static __always_inline void fill_exe(struct sbt_exec_record *rec, const struct exec_src *src,
				     bool btf)
{
	struct linux_binprm *bprm = src->bprm;
	struct file *f = src->file;
	struct inode *ino;
	const char *name;

	rec->exe_name[0] = 0;
	if (!f ||
	    (!btf && bpf_probe_read_kernel(rec->exe_head, sizeof(rec->exe_head), &bprm->buf) < 0)) {
		rec->exe_size = 0;
		rec->exe_ctime = 0;
		rec->flags |= SBT_EXEC_EXE_UNAVAILABLE;
		return;
	}
	if (btf) {
		for (int i = 0; i < SBT_EXE_HEAD_WORDS; i++)
			rec->exe_head[i] = ((const __u64 *)bprm->buf)[i];
		ino = f->f_inode;
		rec->exe_size = ino->i_size;
		name = (const char *)f->f_path.dentry->d_name.name;
	} else {
		ino = BPF_CORE_READ(f, f_inode);
		rec->exe_size = BPF_CORE_READ(ino, i_size);
		name = (const char *)BPF_CORE_READ(f, f_path.dentry, d_name.name);
	}
	rec->exe_ctime = inode_ctime(ino, btf);
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
	if (off > 2 * SBT_PATH_MAX + SBT_CWD_TAIL_MAX || len == 0) {
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

/*
 * The cwd's tail at rec->data + off (sbtrace.h, SBT_CWD_NAMES): up its
 * dentries, innermost name first, to its mount's root or a bound. No lock:
 * a racing chdir or rename gives a stale or cut tail, which is all the
 * names are meant to be (evidence). Its length in bytes.
 *
 * Probe reads in every mode, tp_btf too: loaded as BTF pointers, the walk's
 * dozen dentry loads cost the verifier a name search each on every path
 * through the unrolled loop, ~50 ms more at every start (trace attach
 * 132 -> 186 ms median alternated on a loaded host, 149 ms with probe
 * reads), paid by every probe; a few probe reads per sandboxed exec are
 * the cheaper side.
 */
static __always_inline __u32 fill_cwd(struct sbt_exec_record *rec, __u32 off,
				      const struct exec_src *src)
{
	struct task_struct *task = src->task;
	struct dentry *d, *top, *up;
	__u32 len = 0, names = 0;
	bool cut = false;

	d = BPF_CORE_READ(task, fs, pwd.dentry);
	top = BPF_CORE_READ(task, fs, pwd.mnt, mnt_root);
	rec->cwd_names = 0;
	if (!d || off > 2 * SBT_PATH_MAX) {
		rec->flags |= SBT_EXEC_CWD_FAULT;
		return 0;
	}
	for (int i = 0; i < SBT_CWD_NAMES && len < SBT_CWD_TAIL_MAX; i++) {
		const unsigned char *name;
		long n;

		up = BPF_CORE_READ(d, d_parent);
		if (d == top || d == up || !up)
			break;
		name = BPF_CORE_READ(d, d_name.name);
		n = bpf_probe_read_kernel_str(rec->data + off + len, SBT_CWD_TAIL_MAX - len, name);
		if (n <= 0) {
			rec->flags |= SBT_EXEC_CWD_FAULT;
			break;
		}
		/* a name that took all the room left may have been cut: not the whole path then */
		cut = len + n >= SBT_CWD_TAIL_MAX;
		len += n;
		names++;
		d = up;
	}
	if (!cut && (d == top || d == BPF_CORE_READ(d, d_parent)))
		rec->flags |= SBT_EXEC_CWD_TOP;
	rec->cwd_names = names;
	return len;
}

/* bprm NULL: the twin sees neither interp nor the file (the classic tracepoint). */
#define SBT_SIGSTOP 19

/*
 * A sandbox with a DNS proxy exec'ing in a network namespace that has none
 * yet: stop the process before its first instruction and tell the loader
 * (dns_wait), which opens a proxy there and continues it. Its queries never
 * meet a namespace without a proxy; when dns_wait is full it is not
 * stopped, and its DNS is denied until the proxy opens. True: stopped.
 */
static __always_inline bool dns_gate(__u32 slot, struct task_struct *task)
{
	struct sbt_dns_proxy_key k = { .slot = slot };
	struct sbt_dns_wait w = { .slot = slot, .stopped = 1 };
	__u32 tgid;

	if (!dns_want[slot & (SBT_MAX_SANDBOXES - 1)])
		return false;
	k.netns_cookie = BPF_CORE_READ(task, nsproxy, net_ns, net_cookie);
	if (bpf_map_lookup_elem(&dns_proxy, &k))
		return false;
	w.netns_cookie = k.netns_cookie;
	tgid = (__u32)(bpf_get_current_pid_tgid() >> 32);
	if (bpf_map_update_elem(&dns_wait, &tgid, &w, BPF_ANY))
		return false;
	bpf_send_signal(SBT_SIGSTOP);
	return true;
}

static __noinline int handle_exec(__u32 slot, const struct exec_src *src, bool btf)
{
	struct linux_binprm *bprm = src->bprm;
	const char *filename = src->filename;
	const char *interp = !bprm ? NULL : btf ? bprm->interp : BPF_CORE_READ(bprm, interp);
	struct sbt_sandbox_stats *st;
	struct sbt_exec_record *rec;
	struct scratch *s;
	__u32 zero = 0, off, size, cwd;
	__u64 uidgid;
	/* a stopped process's record wakes the loader at once: it waits for it */
	bool gated = dns_gate(slot, src->task);

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

	cwd = fill_cwd(rec, off, src);
	if (cwd > SBT_CWD_TAIL_MAX)
		return 0;
	rec->cwd_len = cwd;
	off += cwd;
	PART_END(PART_CWD);

	fill_argv(rec, off, src, btf);
	PART_END(PART_ARGV);

	size = sizeof(*rec) + off + rec->argv_len;
	if (size > SBT_EXEC_RECORD_MAX)
		return 0;
	rec->hdr.size = size;
	if (bpf_ringbuf_output(&events, rec, size, gated ? BPF_RB_FORCE_WAKEUP : wakeup_flags()) <
	    0)
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

/* ---- execs that failed -------------------------------------------------------- */

/*
 * The syscalls' exit tracepoints: a successful exec returns at once (its
 * record came from sched_process_exec), so the cost on every exec is the
 * tracepoint's call and one compare; only a failed exec in a sandbox reads
 * anything. The arguments come from the task's saved user registers,
 * untouched by a failed exec. Enabling any syscall tracepoint routes every
 * task's syscalls through the tracing slow path: `make bench` measures it.
 */
struct fail_scratch {
	__u8 buf[SBT_EXEC_FAIL_RECORD_MAX];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fail_scratch);
} fail_scratch_map SEC(".maps");

static __always_inline void fail_argv(struct sbt_exec_fail_record *rec, __u32 off,
				      const char *const *argv)
{
	__u32 len = 0;

	rec->argc = 0;
	for (int i = 0; i < SBT_FAIL_ARGS + 1; i++) {
		const char *arg = NULL;
		long n;

		if (!argv || bpf_probe_read_user(&arg, sizeof(arg), &argv[i]) < 0) {
			rec->flags |= SBT_EXEC_FAIL_ARGV_FAULT;
			break;
		}
		if (!arg)
			break;
		if (i == SBT_FAIL_ARGS) {
			rec->flags |= SBT_EXEC_FAIL_ARGV_MORE;
			break;
		}
		if (off + len > SBT_PATH_MAX + (SBT_FAIL_ARGS - 1) * SBT_FAIL_ARG_MAX)
			break;
		n = bpf_probe_read_user_str(rec->data + off + len, SBT_FAIL_ARG_MAX, arg);
		if (n <= 0) {
			rec->flags |= SBT_EXEC_FAIL_ARGV_FAULT;
			break;
		}
		len += (__u32)n;
		rec->argc++;
	}
	rec->argv_len = (__u16)len;
}

static __always_inline int exec_failed(long ret, bool at)
{
	struct sbt_sandbox_stats *st;
	struct sbt_exec_fail_record *rec;
	const char *const *argv;
	const char *path;
	struct task_struct *task;
	struct pt_regs *regs;
	struct fail_scratch *s;
	__u32 zero = 0, size;
	__u64 uidgid;
	long n;
	int slot;

	if (ret >= 0)
		return 0;
	slot = sandbox_of_current(NULL);
	if (slot < 0)
		return 0;
	st = bpf_map_lookup_elem(&sandbox_stats, &slot);
	s = bpf_map_lookup_elem(&fail_scratch_map, &zero);
	if (!st || !s)
		return 0;
	rec = (struct sbt_exec_fail_record *)s->buf;
	rec->hdr.type = SBT_REC_EXEC_FAILED;
	rec->hdr.abi = SBT_ABI_VERSION;
	rec->ts_boot_ns = bpf_ktime_get_boot_ns();
	rec->cgroup_id = bpf_get_current_cgroup_id();
	rec->slot = (__u32)slot;
	task = (struct task_struct *)bpf_get_current_task();
	rec->pid = BPF_CORE_READ(task, tgid);
	rec->tid = BPF_CORE_READ(task, pid);
	rec->ppid = BPF_CORE_READ(task, real_parent, tgid);
	uidgid = bpf_get_current_uid_gid();
	rec->uid = (__u32)uidgid;
	rec->err = (__s32)ret;
	rec->flags = at ? SBT_EXEC_FAIL_EXECVEAT : 0;
	rec->pad = 0;
	rec->pad2 = 0;
	bpf_get_current_comm(rec->comm, sizeof(rec->comm));
	regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
	if (!regs) {
		rec->flags |= SBT_EXEC_FAIL_REGS_UNAVAILABLE;
		rec->dirfd = -100;
		rec->at_flags = 0;
		path = NULL;
		argv = NULL;
	} else if (at) {
		rec->dirfd = (__s32)PT_REGS_PARM1_CORE_SYSCALL(regs);
		path = (const char *)PT_REGS_PARM2_CORE_SYSCALL(regs);
		argv = (const char *const *)PT_REGS_PARM3_CORE_SYSCALL(regs);
		rec->at_flags = (__u32)PT_REGS_PARM5_CORE_SYSCALL(regs);
	} else {
		rec->dirfd = -100; /* AT_FDCWD */
		rec->at_flags = 0;
		path = (const char *)PT_REGS_PARM1_CORE_SYSCALL(regs);
		argv = (const char *const *)PT_REGS_PARM2_CORE_SYSCALL(regs);
	}
	n = path ? bpf_probe_read_user_str(rec->data, SBT_PATH_MAX, path) : -1;
	if (n <= 0) {
		rec->data[0] = 0;
		n = 1;
		rec->flags |= SBT_EXEC_FAIL_PATH_FAULT;
	}
	if (n > SBT_PATH_MAX)
		return 0;
	rec->filename_len = (__u16)n;
	fail_argv(rec, (__u32)n, argv);
	size = sizeof(*rec) + (__u32)n + rec->argv_len;
	if (size > SBT_EXEC_FAIL_RECORD_MAX)
		return 0;
	rec->hdr.size = size;
	if (bpf_ringbuf_output(&events, rec, size, wakeup_flags()) < 0)
		__sync_fetch_and_add(&st->lost_failed, 1);
	else
		__sync_fetch_and_add(&st->failed, 1);
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_execve")
int failed_execve(struct trace_event_raw_sys_exit *ctx)
{
	return exec_failed(ctx->ret, false);
}

SEC("tracepoint/syscalls/sys_exit_execveat")
int failed_execveat(struct trace_event_raw_sys_exit *ctx)
{
	return exec_failed(ctx->ret, true);
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
