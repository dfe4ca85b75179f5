/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Length-checking decoders for ring-buffer records (untrusted input). */
#ifndef SBT_DECODE_H
#define SBT_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sbtrace.h"

/* Every argument takes at least one byte of the argv area, so this never overflows. */
#define SBT_ARGV_MAX_ARGS (SBT_ARGV_CAP + 1)

enum sbt_decode_err {
	SBT_DECODE_OK = 0,
	SBT_DECODE_SHORT,	/* fewer bytes than the header or fixed part */
	SBT_DECODE_BAD_TYPE,	/* unknown record type */
	SBT_DECODE_BAD_ABI,	/* ABI version mismatch */
	SBT_DECODE_BAD_SIZE,	/* hdr.size disagrees with the bytes received */
	SBT_DECODE_BAD_LENGTHS, /* string lengths overrun the record */
	SBT_DECODE_BAD_STRING,	/* a string is not NUL-terminated where it must be */
	SBT_DECODE_BAD_FIELD,	/* an enum field out of range */
};

/*
 * A decoded exec: all pointers point into the record passed to
 * sbt_decode_exec() (or into `argv_store` for argv), valid while it lives.
 */
struct sbt_exec {
	uint64_t ts_boot_ns;
	uint64_t cgroup_id;
	uint64_t seq;
	uint32_t slot;
	uint32_t pid, tid, ppid, uid, gid;
	uint32_t flags;			/* SBT_EXEC_* */
	char comm[SBT_COMM_LEN];	/* NUL-terminated copy */
	char parent_comm[SBT_COMM_LEN]; /* NUL-terminated copy */
	/* the file that ran (flags SBT_EXEC_EXE_UNAVAILABLE: unknown, all zero) */
	uint64_t exe_size;
	uint64_t exe_ctime;		       /* its inode's ctime, epoch ns */
	uint64_t exe_head[SBT_EXE_HEAD_WORDS]; /* its first bytes */
	char exe_name[SBT_EXE_NAME_LEN + 1];   /* NUL-terminated copy */
	const char *filename;
	const char *interp; /* "" when the hook could not see it */
	/*
	 * The cwd's last names, outermost first, joined by '/' ("app/node_modules/dep";
	 * "" when none): the whole path inside its mount when cwd_top, else a tail.
	 * Where the exec ran, not a proof of who ran it (sbtrace.h, SBT_CWD_NAMES).
	 */
	char cwd[SBT_CWD_TAIL_MAX];
	bool cwd_top;
	bool argv_truncated;
	size_t argc;
	const char **argv; /* argc entries, NUL-terminated strings */
};

const char *sbt_decode_strerror(enum sbt_decode_err err);

/* Type of a record, or -1 when even the header is short. */
int sbt_record_type(const void *data, size_t len);

/*
 * Decode an exec record of `len` bytes. `argv_store` must hold
 * SBT_ARGV_MAX_ARGS pointers and `tail` SBT_ARGV_CAP + 1 bytes: a cut last
 * argument is copied there to get its terminating NUL.
 */
enum sbt_decode_err sbt_decode_exec(const void *data, size_t len, struct sbt_exec *out,
				    const char **argv_store, char *tail);

/* A decoded failed exec: pointers into the record, valid while it lives. */
struct sbt_exec_fail {
	uint64_t ts_boot_ns;
	uint64_t cgroup_id;
	uint32_t slot, pid, tid, ppid, uid;
	int err;	   /* errno (positive) */
	int dirfd;	   /* execveat's, AT_FDCWD for execve */
	uint32_t at_flags; /* execveat's */
	uint32_t flags;	   /* SBT_EXEC_FAIL_* */
	char comm[SBT_COMM_LEN];
	const char *filename; /* as the caller passed it; "" when unreadable */
	size_t argc;	      /* <= SBT_FAIL_ARGS */
	const char *argv[SBT_FAIL_ARGS];
};

/* Decode a failed-exec record of `len` bytes; checks size, type, ABI, lengths and strings. */
enum sbt_decode_err sbt_decode_exec_failed(const void *data, size_t len, struct sbt_exec_fail *out);

/* A decoded egress record: a plain copy (the record has no variable part). */
struct sbt_egress {
	uint64_t ts_boot_ns;
	uint64_t cgroup_id;
	uint64_t count;
	uint32_t slot, pid, tid, uid;
	uint32_t rule_id;
	uint32_t floor_idx;
	uint16_t dport;
	uint8_t family, proto, hook, verdict, reason, would_deny, sock_type;
	uint8_t reply;	    /* enum sbt_reply: what a tap sent back into the guest */
	uint16_t ethertype; /* tap: the frame's innermost ethertype */
	uint32_t ifindex;   /* tap: the device, else 0 */
	uint8_t daddr[16];
	uint8_t saddr[16];	 /* tap: the frame's source (IPv4 mapped), else zero */
	char comm[SBT_COMM_LEN]; /* NUL-terminated */
};

/* Decode an egress record of `len` bytes; checks size, type, ABI and enum ranges. */
enum sbt_decode_err sbt_decode_egress(const void *data, size_t len, struct sbt_egress *out);

#endif
