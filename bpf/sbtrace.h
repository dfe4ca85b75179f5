/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Event ABI shared by the BPF programs and userspace.
 *
 * Every ring-buffer record starts with struct sbt_record_hdr; `size` is the
 * number of bytes of the whole record that travelled (variable-length
 * records: only used bytes are sent). Userspace treats records as untrusted
 * input and checks every size before it reads.
 */
#ifndef SBTRACE_ABI_H
#define SBTRACE_ABI_H

#ifdef __BPF__
/* vmlinux.h provides __u8 ... __u64 */
#else
#include <linux/types.h>
#endif

#define SBT_ABI_VERSION 1

#define SBT_COMM_LEN 16
/* bprm->filename and bprm->interp are each copied up to this many bytes. */
#define SBT_PATH_MAX 256
/* Compile-time bound on argv bytes; the runtime knob argv_max is <= this. */
#define SBT_ARGV_CAP	 16384
#define SBT_ARGV_DEFAULT 4096
/* Maximum number of sandboxes traced at once (slots 0 .. SBT_MAX_SANDBOXES-1). */
#define SBT_MAX_SANDBOXES 64
/* cgroup v2 hierarchy levels the membership check can look at. */
#define SBT_MAX_CGROUP_LEVEL 32

enum sbt_record_type {
	SBT_REC_EXEC = 1,
	SBT_REC_EGRESS = 2,
};

/* Flags of struct sbt_exec_record */
#define SBT_EXEC_ARGV_TRUNCATED	    (1u << 0) /* argv longer than argv_max */
#define SBT_EXEC_ARGV_FAULT	    (1u << 1) /* argv could not be read */
#define SBT_EXEC_FILENAME_TRUNCATED (1u << 2) /* filename >= SBT_PATH_MAX */
#define SBT_EXEC_INTERP_TRUNCATED   (1u << 3) /* interp >= SBT_PATH_MAX */
#define SBT_EXEC_FILENAME_FAULT	    (1u << 4)
#define SBT_EXEC_INTERP_FAULT	    (1u << 5)
#define SBT_EXEC_INTERP_UNAVAILABLE (1u << 6) /* hook cannot see bprm->interp */

struct sbt_record_hdr {
	__u16 type; /* enum sbt_record_type */
	__u16 abi;  /* SBT_ABI_VERSION */
	__u32 size; /* bytes of the whole record, header included */
};

/*
 * An exec inside a sandbox. After the fixed part follow, back to back:
 * filename (filename_len bytes, NUL included), interp (interp_len bytes, NUL
 * included) and argv (argv_len bytes: the NUL-separated arguments exactly as
 * found between mm->arg_start and mm->arg_end, possibly cut at argv_max).
 */
struct sbt_exec_record {
	struct sbt_record_hdr hdr;
	__u64 ts_boot_ns; /* bpf_ktime_get_boot_ns() */
	__u64 cgroup_id;  /* the task's own cgroup v2 id */
	__u64 seq;	  /* per-sandbox exec sequence number, from 1 */
	__u32 slot;	  /* sandbox slot */
	__u32 pid;	  /* tgid */
	__u32 tid;
	__u32 ppid; /* real parent's tgid */
	__u32 uid;
	__u32 gid;
	__u32 flags; /* SBT_EXEC_* */
	__u16 filename_len;
	__u16 interp_len;
	__u32 argv_len;
	__u32 argv_full_len; /* arg_end - arg_start, before any cut */
	char comm[SBT_COMM_LEN];
	char parent_comm[SBT_COMM_LEN];
	char data[];
};

#define SBT_EXEC_RECORD_MAX (sizeof(struct sbt_exec_record) + 2 * SBT_PATH_MAX + SBT_ARGV_CAP)

/* Per-sandbox counters (an array indexed by slot, updated atomically). */
struct sbt_sandbox_stats {
	__u64 execs; /* execs seen in this sandbox; also the last seq */
	__u64 lost;  /* records that could not be sent (ring buffer full) */
};

/* Sandboxes compared in place on the hot path (the rest go through a hash map). */
#define SBT_FAST_SANDBOXES 8
/* Distinct cgroup levels of the sandboxes beyond those. */
#define SBT_MAX_HASH_LEVELS 8

struct sbt_fast_sandbox {
	__u64 cgroup_id;
	__u64 cgroup_ptr; /* kernel address of the cgroup, 0 if unknown (see cgptr.bpf.c) */
	__u32 level;
	__u32 slot;
};

/* Value of the cgroup-id -> sandbox map. */
struct sbt_sandbox_key_val {
	__u32 slot;
	__u32 level; /* the sandbox cgroup's level in the v2 hierarchy */
};

#endif /* SBTRACE_ABI_H */
