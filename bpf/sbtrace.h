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

#define SBT_ABI_VERSION 5

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
	SBT_REC_EXEC_FAILED = 3,
	SBT_REC__MAX, /* one past the last: the decoders range-check against the sentinels */
};

/* Flags of struct sbt_exec_record */
#define SBT_EXEC_ARGV_TRUNCATED	    (1u << 0) /* argv longer than argv_max */
#define SBT_EXEC_ARGV_FAULT	    (1u << 1) /* argv could not be read */
#define SBT_EXEC_FILENAME_TRUNCATED (1u << 2) /* filename >= SBT_PATH_MAX */
#define SBT_EXEC_INTERP_TRUNCATED   (1u << 3) /* interp >= SBT_PATH_MAX */
#define SBT_EXEC_FILENAME_FAULT	    (1u << 4)
#define SBT_EXEC_INTERP_FAULT	    (1u << 5)
#define SBT_EXEC_INTERP_UNAVAILABLE (1u << 6) /* hook cannot see bprm->interp */
#define SBT_EXEC_EXE_UNAVAILABLE    (1u << 7) /* hook cannot see bprm->file: no exe_* */
#define SBT_EXEC_CWD_TOP	    (1u << 8) /* the cwd tail reaches its mount's root */
#define SBT_EXEC_CWD_FAULT	    (1u << 9) /* the cwd could not be read: no tail */

/*
 * The working directory's tail: the last names of task->fs->pwd, read up
 * its dentries (at most SBT_CWD_NAMES names, SBT_CWD_TAIL_MAX bytes),
 * innermost first, each NUL-terminated ("dep\0node_modules\0app\0" for
 * /app/node_modules/dep). It stops at the mount's root (SBT_EXEC_CWD_TOP:
 * the whole path inside that mount) or at a bound (a tail, possibly with
 * its outermost name cut). Evidence of where the exec ran, not a proof of
 * which package ran it: a process can chdir anywhere first.
 */
#define SBT_CWD_NAMES	 6
#define SBT_CWD_TAIL_MAX 256

/*
 * The executed file's first SBT_EXE_HEAD_BYTES bytes as the kernel read them
 * (all of bprm->buf: for an ELF, its header and the first program headers,
 * where the entry point and the loaded segments are). Userspace identifies a
 * shell by that layout (exec/shellid.h), which a copy keeps whatever bytes
 * are appended or patched outside it.
 */
#define SBT_EXE_HEAD_BYTES 256
#define SBT_EXE_HEAD_WORDS (SBT_EXE_HEAD_BYTES / 8)
#define SBT_EXE_NAME_LEN   16

struct sbt_record_hdr {
	__u16 type; /* enum sbt_record_type */
	__u16 abi;  /* SBT_ABI_VERSION */
	__u32 size; /* bytes of the whole record, header included */
};

/*
 * An exec inside a sandbox. After the fixed part follow, back to back:
 * filename (filename_len bytes, NUL included), interp (interp_len bytes, NUL
 * included), the cwd tail (cwd_len bytes, see SBT_CWD_NAMES) and argv (argv_len bytes: the NUL-separated arguments exactly as
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
	/* the file that runs (bprm->file: a #! script's interpreter), unless EXE_UNAVAILABLE */
	__u64 exe_size;
	__u64 exe_ctime; /* its inode's ctime, epoch ns: when it was last written, linked or chmod'ed */
	__u64 exe_head[SBT_EXE_HEAD_WORDS]; /* its first bytes */
	char exe_name[SBT_EXE_NAME_LEN];    /* its dentry's name: a symlink's target's */
	char comm[SBT_COMM_LEN];
	char parent_comm[SBT_COMM_LEN];
	__u16 cwd_len;	 /* bytes of the cwd tail, its names' NULs included; 0: none */
	__u16 cwd_names; /* names in it */
	__u32 pad;
	char data[];
};

#define SBT_EXEC_RECORD_MAX                                                                        \
	(sizeof(struct sbt_exec_record) + 2 * SBT_PATH_MAX + SBT_CWD_TAIL_MAX + SBT_ARGV_CAP)

/*
 * An exec inside a sandbox that failed (execve or execveat returned an
 * error: ENOENT, ENOEXEC, EACCES ...), seen at the syscall's exit. The
 * kernel's sched_process_exec never sees these; a shell that could not be
 * run (a distroless image has no /bin/sh) is one. After the fixed part:
 * the path as the caller passed it (filename_len bytes, NUL included;
 * relative to dirfd for execveat), then its first SBT_FAIL_ARGS arguments,
 * each cut at SBT_FAIL_ARG_MAX bytes and NUL-terminated (argv_len bytes in
 * all; argc of them).
 */
#define SBT_FAIL_ARGS		       4
#define SBT_FAIL_ARG_MAX	       128
#define SBT_EXEC_FAIL_EXECVEAT	       (1u << 0) /* execveat, not execve */
#define SBT_EXEC_FAIL_PATH_FAULT       (1u << 1) /* the path could not be read */
#define SBT_EXEC_FAIL_ARGV_FAULT       (1u << 2) /* an argument could not be read */
#define SBT_EXEC_FAIL_ARGV_MORE	       (1u << 3) /* more than SBT_FAIL_ARGS arguments */
#define SBT_EXEC_FAIL_REGS_UNAVAILABLE (1u << 4) /* the syscall's arguments could not be read */
struct sbt_exec_fail_record {
	struct sbt_record_hdr hdr;
	__u64 ts_boot_ns;
	__u64 cgroup_id; /* the task's own cgroup v2 id */
	__u32 slot;
	__u32 pid; /* tgid */
	__u32 tid;
	__u32 ppid; /* real parent's tgid */
	__u32 uid;
	__s32 err;	/* the syscall's return: -errno */
	__s32 dirfd;	/* execveat's; AT_FDCWD (-100) for execve */
	__u32 at_flags; /* execveat's flags (AT_EMPTY_PATH ...) */
	__u32 flags;	/* SBT_EXEC_FAIL_* */
	__u16 filename_len;
	__u16 argv_len;
	__u16 argc;
	__u16 pad;
	__u32 pad2;
	char comm[SBT_COMM_LEN];
	char data[];
};
#define SBT_EXEC_FAIL_RECORD_MAX                                                                   \
	(sizeof(struct sbt_exec_fail_record) + SBT_PATH_MAX + SBT_FAIL_ARGS * SBT_FAIL_ARG_MAX)

/* Per-sandbox counters (an array indexed by slot, updated atomically). */
struct sbt_sandbox_stats {
	__u64 execs;	   /* execs seen in this sandbox; also the last seq */
	__u64 lost;	   /* exec records that could not be sent (ring buffer full) */
	__u64 egress;	   /* egress records sent */
	__u64 egress_lost; /* egress records that could not be sent */
	__u64 failed;	   /* failed-exec records sent */
	__u64 lost_failed; /* failed-exec records that could not be sent */
};

/* --- egress ---------------------------------------------------------- */

/* Per-sandbox egress mode (the loader writes egress_mode[slot]). */
enum sbt_egress_mode {
	SBT_EGRESS_OBSERVE = 0, /* no policy: TCP connects observed, nothing enforced */
	SBT_EGRESS_AUDIT = 1,	/* policy evaluated, never enforced: EgressObserved + would_deny */
	SBT_EGRESS_ENFORCE = 2, /* policy enforced: EgressAllowed / EgressDenied */
	/* sbtrace agent only: every destination denied (EgressDenied) until ... */
	SBT_EGRESS_PENDING =
		3,	       /* ... the agent applies the slot's policy (reason policy_pending) */
	SBT_EGRESS_FAILED = 4, /* ... forever: its policy cannot be applied (policy_error) */
};

/* Which hook saw the event. */
enum sbt_egress_hook {
	SBT_HOOK_CONNECT4 = 1,
	SBT_HOOK_CONNECT6,
	SBT_HOOK_SENDMSG4,
	SBT_HOOK_SENDMSG6,
	SBT_HOOK_SOCK_CREATE,
	SBT_HOOK_CGROUP_SKB,
	SBT_HOOK_TCP_CONNECT,	 /* observation: fentry/kprobe tcp_connect, inet_sock_set_state */
	SBT_HOOK_SOCKET_SYSCALL, /* observation: syscalls/sys_enter_socket */
	SBT_HOOK_TAP,		 /* tc ingress on a microVM's tap (or a veth's host end) */
	SBT_HOOK__MAX,
};

enum sbt_verdict {
	SBT_VERDICT_ALLOWED = 1,
	SBT_VERDICT_DENIED,
	SBT_VERDICT_OBSERVED,
	SBT_VERDICT__MAX,
};

enum sbt_reason {
	SBT_REASON_RULE = 1,	     /* allowed by rule_id */
	SBT_REASON_NOT_IN_ALLOWLIST, /* no rule covers the destination, port or protocol */
	SBT_REASON_FLOOR,	     /* link-local, metadata or host loopback (floor_idx) */
	SBT_REASON_RAW_SOCKET,	     /* SOCK_RAW IPv4/IPv6 socket */
	SBT_REASON_PACKET_SOCKET,    /* AF_PACKET socket: no cgroup hook can stop its frames */
	SBT_REASON_OWN_LOOPBACK,     /* loopback inside the sandbox's own network namespace */
	SBT_REASON_NO_POLICY,	     /* observe-only: no policy given */
	/* tap only */
	SBT_REASON_RESOLVER,	   /* DNS to the designated resolver */
	SBT_REASON_NOT_RESOLVER,   /* DNS (port 53) to anything but the designated resolver */
	SBT_REASON_SPOOFED_SOURCE, /* source address (IP or ARP sender) not the guest's */
	SBT_REASON_MALFORMED,	   /* truncated or invalid header at some layer */
	SBT_REASON_FRAGMENT,	   /* a non-first fragment whose first fragment was not allowed */
	SBT_REASON_UNSUPPORTED,	   /* frame type, source route, routing header, mapped address */
	/* DNS (UDP/TCP port 53, any destination) redirected to sbtrace's proxy (cgroup, tap) */
	SBT_REASON_DNS_PROXY,
	/* sbtrace agent: a sandbox whose policy is not applied yet, or cannot be (fail closed) */
	SBT_REASON_POLICY_PENDING,
	SBT_REASON_POLICY_ERROR,
	/* DNS of a sandbox with a proxy, from a network namespace whose proxy is not open yet */
	SBT_REASON_DNS_NO_PROXY,
	SBT_REASON__MAX,
};

/* What a tap sent back into the guest for a denial. */
enum sbt_reply {
	SBT_REPLY_NONE = 0,
	SBT_REPLY_TCP_RST = 1, /* a RST|ACK for a denied SYN */
	SBT_REPLY_ICMP = 2,    /* ICMP/ICMPv6 administratively prohibited */
	SBT_REPLY__MAX,
};

#define SBT_POLICY_PORTS_MAX 8
#define SBT_POLICY_FLOOR     (1u << 0)
/* floor kinds */
#define SBT_FLOOR_LINK_LOCAL 1
#define SBT_FLOOR_METADATA   2
#define SBT_FLOOR_LOOPBACK   3

/* Key of the policy LPM trie: prefixlen counts the 32 slot bits plus the address prefix. */
struct sbt_policy_key {
	__u32 prefixlen;
	__u32 slot;
	__u8 addr[16]; /* IPv4 as ::ffff:a.b.c.d */
};

struct sbt_policy_val_port {
	__u16 lo;
	__u16 hi;
	__u8 proto; /* 0 any, 6 tcp, 17 udp */
	__u8 pad[3];
	__u32 rule_id;
};

struct sbt_policy_val {
	__u32 flags; /* SBT_POLICY_FLOOR */
	__u32 floor_idx;
	__u32 floor_kind; /* SBT_FLOOR_* */
	__u32 nr_ports;
	struct sbt_policy_val_port ports[SBT_POLICY_PORTS_MAX];
};

/*
 * One egress verdict or observation. Identical ones (slot, pid, destination,
 * protocol, hook, verdict, reason) within a second are folded in the kernel:
 * `count` is how many this record stands for (itself plus those folded since
 * the previous record of the same key).
 */
struct sbt_egress_record {
	struct sbt_record_hdr hdr;
	__u64 ts_boot_ns;
	__u64 cgroup_id;
	__u64 count;
	__u32 slot;
	__u32 pid;
	__u32 tid;
	__u32 uid;
	__u32 rule_id;	 /* allowing rule, 0 if none */
	__u32 floor_idx; /* when reason is FLOOR */
	__u16 dport;	 /* host byte order, 0 when none */
	__u8 family;	 /* AF_INET, AF_INET6, AF_PACKET */
	__u8 proto;	 /* IPPROTO_TCP, IPPROTO_UDP, IPPROTO_ICMP ... */
	__u8 hook;	 /* enum sbt_egress_hook */
	__u8 verdict;	 /* enum sbt_verdict */
	__u8 reason;	 /* enum sbt_reason */
	__u8 would_deny; /* audit/observe: the policy would deny it */
	__u8 sock_type;	 /* SOCK_STREAM, SOCK_DGRAM, SOCK_RAW ... when known */
	__u8 reply;	 /* enum sbt_reply (tap) */
	__u16 ethertype; /* tap: the frame's innermost ethertype */
	__u32 ifindex;	 /* tap: the device the frame arrived on, else 0 */
	__u8 daddr[16];	 /* IPv4 as ::ffff:a.b.c.d */
	char comm[SBT_COMM_LEN];
	__u8 saddr[16]; /* tap: the frame's source address (IPv4 mapped), else zero */
};

/* Key of the fold table (an LRU hash). */
struct sbt_fold_key {
	__u32 slot;
	__u32 pid;
	__u8 daddr[16];
	__u16 dport;
	__u8 proto;
	__u8 hook;
	__u8 verdict;
	__u8 reason;
	__u8 pad[2];
};

struct sbt_fold_val {
	__u64 window_start_ns; /* when the last record of this key was sent */
	__u64 folded;	       /* identical events since then, not sent */
};

#define SBT_FOLD_WINDOW_NS 1000000000ull

/* Sandboxes compared in place on the hot path (the rest go through a hash map). */
#define SBT_FAST_SANDBOXES 8
/* Distinct cgroup levels of the sandboxes beyond those. */
#define SBT_MAX_HASH_LEVELS 8

struct sbt_fast_sandbox {
	__u64 cgroup_id;
	__u64 cgroup_ptr; /* kernel address of the cgroup, 0 if unknown (loader/membership.c) */
	__u32 level;
	__u32 slot;
};

/* Value of the cgroup-id -> sandbox map. */
struct sbt_sandbox_key_val {
	__u32 slot;
	__u32 level; /* the sandbox cgroup's level in the v2 hierarchy */
};

/* --- the DNS proxy (cgroup sandboxes) -------------------------------- */

/*
 * Where a sandbox's DNS goes: sbtrace's sockets on the loopback of each
 * network namespace the sandbox's processes are in, 127.0.0.1 and ::1, one
 * port each (network byte order, 0: none), in dns_proxy by (namespace
 * cookie, slot). connect4/6 and sendmsg4/6 rewrite a port-53 destination to
 * them; recvmsg4/6 give the reply the address the sandbox asked. A slot with
 * dns_want set has a proxy wherever it goes: DNS from a namespace with none
 * yet is denied (SBT_REASON_DNS_NO_PROXY), never passed to a resolver, and
 * an exec there stops its process (SIGSTOP) until the loader has opened
 * one; dns_wait tells the loader which processes wait (or, from a denied
 * query, which namespace lacks a proxy).
 */
struct sbt_dns_proxy_key {
	__u64 netns_cookie;
	__u32 slot;
	__u32 pad;
};

struct sbt_dns_wait {
	__u64 netns_cookie;
	__u32 slot;
	__u32 stopped; /* 1: the exec hook stopped it, the loader continues it */
};

#define SBT_DNS_PROXY_ENTRIES 1024 /* (namespace, slot) pairs with a proxy */
#define SBT_DNS_WAIT_ENTRIES  1024

#define SBT_DNS_UDP4 0
#define SBT_DNS_TCP4 1
#define SBT_DNS_UDP6 2
#define SBT_DNS_TCP6 3
struct sbt_dns_proxy {
	__u16 port[4]; /* by SBT_DNS_*, network byte order */
};

/* What a redirected socket asked for (by socket cookie), for recvmsg. */
struct sbt_dns_orig {
	__u8 addr[16];	  /* as the socket named it: IPv4 in the last 4 bytes for v4 sockets */
	__u16 port;	  /* network byte order */
	__u16 proxy_port; /* the proxy's port it went to, network byte order */
	__u32 pad2;
};

/* --- tap (tc ingress) ----------------------------------------------- */

#define SBT_MAX_TAPS 16

#define SBT_TAP_GUEST4	  (1u << 0) /* guest4 is the only IPv4 source allowed */
#define SBT_TAP_GUEST6	  (1u << 1) /* guest6 is the only global IPv6 source allowed */
#define SBT_TAP_RESOLVER  (1u << 2) /* resolver is the only DNS server allowed */
#define SBT_TAP_CHECK_SRC (1u << 3) /* sources are checked (some guest address is known) */
#define SBT_TAP_PROXY4	  (1u << 4) /* IPv4 DNS goes to the proxy at host4 */
#define SBT_TAP_PROXY6	  (1u << 5) /* IPv6 DNS goes to the proxy at host6 */

/* One device the tc program is attached to (the loader fills taps[] in .bss). */
struct sbt_tap {
	__u32 ifindex;
	__u32 slot;
	__u32 flags; /* SBT_TAP_* */
	__u8 guest4[4];
	__u8 guest6[16];
	__u8 resolver[16]; /* IPv4 as ::ffff:a.b.c.d */
	/*
	 * The DNS proxy (SBT_TAP_PROXY4/6): the guest's DNS (UDP and TCP port
	 * 53, any destination) is rewritten to the proxy's socket on the tap's
	 * host-side address; tap_egress gives the replies the source the guest
	 * asked. Ports by SBT_DNS_*, network byte order.
	 */
	__u8 host6[16];
	__u8 host4[4];
	__u16 proxy_port[4];
};

/* A guest's DNS flow diverted to the proxy: the guest's end (LRU hash key) ... */
struct sbt_tap_dns_key {
	__u32 slot;
	__u8 proto;
	__u8 pad;
	__u16 port;    /* the guest's, network byte order */
	__u8 addr[16]; /* the guest's, IPv4 mapped */
};

/* ... and the destination it asked (IPv4 mapped). */
struct sbt_tap_dns_orig {
	__u8 addr[16];
};

/* Fragments of a flow whose first fragment was allowed (an LRU hash). */
struct sbt_frag_key {
	__u32 slot;
	__u32 id;
	__u8 proto;
	__u8 pad[3];
	__u8 saddr[16];
	__u8 daddr[16];
};

/*
 * The layout both sides compile: a field moved, resized or padded differently
 * breaks the build here instead of the decoder at run time. Bump
 * SBT_ABI_VERSION with any change.
 */
#define SBT_ABI_LAYOUT(cond, what) _Static_assert(cond, "event ABI layout: " what)
SBT_ABI_LAYOUT(sizeof(struct sbt_record_hdr) == 8, "sbt_record_hdr");
SBT_ABI_LAYOUT(sizeof(struct sbt_exec_record) == 400, "sbt_exec_record");
SBT_ABI_LAYOUT(__builtin_offsetof(struct sbt_exec_record, exe_size) == 72,
	       "sbt_exec_record.exe_size");
SBT_ABI_LAYOUT(__builtin_offsetof(struct sbt_exec_record, comm) == 360, "sbt_exec_record.comm");
SBT_ABI_LAYOUT(__builtin_offsetof(struct sbt_exec_record, cwd_len) == 392,
	       "sbt_exec_record.cwd_len");
SBT_ABI_LAYOUT(__builtin_offsetof(struct sbt_exec_record, data) == 400, "sbt_exec_record.data");
SBT_ABI_LAYOUT(sizeof(struct sbt_exec_fail_record) == 88, "sbt_exec_fail_record");
SBT_ABI_LAYOUT(__builtin_offsetof(struct sbt_exec_fail_record, comm) == 72,
	       "sbt_exec_fail_record.comm");
SBT_ABI_LAYOUT(sizeof(struct sbt_egress_record) == 120, "sbt_egress_record");
SBT_ABI_LAYOUT(__builtin_offsetof(struct sbt_egress_record, dport) == 56,
	       "sbt_egress_record.dport");
SBT_ABI_LAYOUT(__builtin_offsetof(struct sbt_egress_record, daddr) == 72,
	       "sbt_egress_record.daddr");
SBT_ABI_LAYOUT(__builtin_offsetof(struct sbt_egress_record, saddr) == 104,
	       "sbt_egress_record.saddr");
SBT_ABI_LAYOUT(sizeof(struct sbt_sandbox_stats) == 48, "sbt_sandbox_stats");
SBT_ABI_LAYOUT(sizeof(struct sbt_policy_key) == 24, "sbt_policy_key");
SBT_ABI_LAYOUT(sizeof(struct sbt_policy_val) == 112, "sbt_policy_val");
SBT_ABI_LAYOUT(sizeof(struct sbt_fold_key) == 32, "sbt_fold_key");
SBT_ABI_LAYOUT(sizeof(struct sbt_fold_val) == 16, "sbt_fold_val");
SBT_ABI_LAYOUT(sizeof(struct sbt_fast_sandbox) == 24, "sbt_fast_sandbox");
SBT_ABI_LAYOUT(sizeof(struct sbt_sandbox_key_val) == 8, "sbt_sandbox_key_val");
SBT_ABI_LAYOUT(sizeof(struct sbt_tap) == 76, "sbt_tap");
SBT_ABI_LAYOUT(sizeof(struct sbt_tap_dns_key) == 24, "sbt_tap_dns_key");
SBT_ABI_LAYOUT(sizeof(struct sbt_dns_proxy) == 8, "sbt_dns_proxy");
SBT_ABI_LAYOUT(sizeof(struct sbt_dns_proxy_key) == 16, "sbt_dns_proxy_key");
SBT_ABI_LAYOUT(sizeof(struct sbt_dns_wait) == 16, "sbt_dns_wait");
SBT_ABI_LAYOUT(sizeof(struct sbt_dns_orig) == 24, "sbt_dns_orig");
SBT_ABI_LAYOUT(sizeof(struct sbt_frag_key) == 44, "sbt_frag_key");
/* The decoders' ranges: a record's byte fields hold every value of their enum. */
SBT_ABI_LAYOUT(SBT_HOOK__MAX <= 256 && SBT_VERDICT__MAX <= 256 && SBT_REASON__MAX <= 256 &&
		       SBT_REPLY__MAX <= 256,
	       "enums fit their __u8 fields");

#endif /* SBTRACE_ABI_H */
