/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The sbtrace loader: shared declarations of its parts. */
#ifndef SBT_LOADER_H
#define SBT_LOADER_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "sbtrace.h"

/* Exit codes (documented in --help and the README). */
enum sbt_exit {
	SBT_EXIT_OK = 0,
	SBT_EXIT_RUNTIME = 1, /* a failure while tracing (e.g. output write error) */
	SBT_EXIT_USAGE = 2,   /* bad usage or input: option, cgroup, pid, file */
	SBT_EXIT_KERNEL = 3,  /* kernel capability missing, load or attach failed */
};

#define SBT_TAP_GUESTS 4

/* The network view of a microVM: a tap (or a veth's host end) judged by tc ingress. */
struct sbt_tap_spec {
	char ifname[16];
	char netns[PATH_MAX]; /* "" the loader's; else a name under /run/netns or a path */
	uint8_t guest[SBT_TAP_GUESTS][16]; /* the guest's own source addresses (IPv4 mapped) */
	uint32_t nr_guest;
	bool has_resolver;
	uint8_t resolver[16];
};

/* One traced sandbox. */
struct sbt_sandbox {
	char name[PATH_MAX]; /* cgroup path relative to the v2 root, e.g. "/sbtrace/x" */
	char path[PATH_MAX]; /* absolute directory path */
	uint64_t cgroup_id;
	uint32_t level;
	uint32_t slot;
	const char *origin;  /* "cgroup", "pid", "sandbox" or "tap" */
	uint32_t origin_pid; /* for --pid */
	bool has_tap;	     /* tap.* is set: the tc program judges its frames */
	bool exec_hidden;    /* its workload runs in a guest kernel: execs are invisible */
	struct sbt_tap_spec tap;
};

/* A sandbox with a cgroup (a tap-only one has none: cgroup_id 0). */
static inline bool sbt_sandbox_has_cgroup(const struct sbt_sandbox *sb)
{
	return sb->cgroup_id != 0;
}

/* cgroup.c */
/* Resolve --cgroup PATH; on error prints a one-line message, returns -errno. */
int sbt_sandbox_from_cgroup(const char *arg, struct sbt_sandbox *sb);
/* Resolve --pid PID. */
int sbt_sandbox_from_pid(const char *arg, struct sbt_sandbox *sb);

/* Exec hook modes, in order of preference. */
enum sbt_exec_mode {
	SBT_EXEC_TP_BTF = 0,
	SBT_EXEC_RAW_TP,
	SBT_EXEC_TRACEPOINT,
	SBT_EXEC_NR_MODES,
};

const char *sbt_exec_mode_name(enum sbt_exec_mode m);
int sbt_exec_mode_parse(const char *s, enum sbt_exec_mode *m);

struct sbtrace_bpf;
struct bpf_link;

/* What the attach plan decided for one capability, and why. */
#define SBT_MAX_TRIES 6
struct sbt_hook_result {
	const char *capability;
	const char *mode; /* chosen mode, NULL when none worked */
	unsigned int nr_tries;
	struct {
		const char *mode;
		int err;	   /* -errno */
		const char *stage; /* "load" or "attach" */
	} tries[SBT_MAX_TRIES];
};

struct sbt_exec_opts {
	int forced_mode; /* -1: auto */
	uint32_t argv_max;
	uint32_t ringbuf_bytes;
	uint32_t poll_ms;	    /* 0: a wake-up per record; else drain every poll_ms */
	bool observe;		    /* load the packet-socket observation */
	bool observe_connect;	    /* load the tcp_connect observation */
	bool policy;		    /* load the egress policy programs */
	bool tap;		    /* load the tap program (tc) */
	bool no_exec_attach;	    /* taps only: load the exec hook, attach it nowhere */
	uint64_t host_netns_cookie; /* the loader's network namespace */
};

/* What plan.c attached, and why each capability got its mode. */
struct sbt_plan {
	struct sbtrace_bpf *skel;
	struct bpf_link *exec_link, *connect_link, *packet_link;
	struct sbt_hook_result exec, connect, packet;
	int iter_err;	/* the cgroup iterator did not load (-errno), 0 if it did */
	int fentry_err; /* the fentry twin did not load (-errno) */
	bool fentry_loaded;
	bool fentry_probed;
};

/*
 * Open and load the object, attach the exec hook (falling back through the
 * modes, or only the forced one) and, with opts->observe, the connect and
 * packet-socket observation. 0, or -errno when no exec mode works.
 */
int sbt_plan_attach(const struct sbt_exec_opts *opts, struct sbt_plan *plan);
void sbt_plan_detach(struct sbt_plan *plan);
void sbt_plan_destroy(struct sbt_plan *plan);

/* The cookie of the caller's network namespace (SO_NETNS_COOKIE), 0 if unknown. */
uint64_t sbt_netns_cookie(void);

/* True when SBTRACE_DISABLE_HOOKS names "capability:mode" or the bare mode. */
bool sbt_hook_disabled(const char *capability, const char *mode);
void sbt_hook_record(struct sbt_hook_result *res, const char *mode, const char *stage, int err);

/*
 * The membership capability (membership.c): learn the kernel address of each
 * of `nr` sandbox cgroups into ptrs[] with the object's cgroup iterator when
 * the exec hook is tp_btf and the iterator loaded; otherwise, or when that
 * fails, ptrs[] stays 0 (ancestor-id helper). `res` says which mode and why.
 */
void sbt_membership_learn(const struct sbt_plan *plan, const struct sbt_sandbox *const *sandboxes,
			  uint32_t nr, uint64_t *ptrs, struct sbt_hook_result *res);

/* tap.c: parse --tap SPEC into a tap-only sandbox's spec. 0, or -EINVAL after a message. */
int sbt_tap_parse(const char *arg, struct sbt_tap_spec *t, char *err, size_t errlen);

/*
 * The tap of a sandbox sbtrace-shim runs as a microVM (its state file, or
 * its run): the device, its netns and the guest's addresses. 0, or -EINVAL
 * with *bad the index of an address that does not parse.
 */
int sbt_tap_from_shim(struct sbt_sandbox *sb, const char *tap, const char *netns,
		      const char (*guest_addrs)[64], int nr, int *bad);

struct sbt_tap_state {
	struct sbt_hook_result res[SBT_MAX_TAPS]; /* per tap: tcx or clsact, and failures */
	int link_fd[SBT_MAX_TAPS];		  /* tcx link, -1 if none */
	bool clsact[SBT_MAX_TAPS];		  /* a clsact filter was attached */
	bool qdisc_made[SBT_MAX_TAPS];		  /* ... on a clsact qdisc we created */
	uint32_t idx[SBT_MAX_TAPS];		  /* sandbox index of each tap */
	int ifindex[SBT_MAX_TAPS];		  /* in the tap's network namespace */
	uint32_t nr;
};

/*
 * Resolve each sandbox's tap in its network namespace, register it in the
 * program's table and attach tap_ingress (tcx, else clsact). 0, or -errno
 * (-ENODEV: no such device, a usage error) after a one-line message.
 */
int sbt_tap_attach(struct sbt_tap_state *ts, struct sbt_plan *plan,
		   const struct sbt_sandbox *sandboxes, uint32_t nr, const uint8_t *cfg_resolver);
void sbt_tap_detach(struct sbt_tap_state *ts, const struct sbt_sandbox *sandboxes);
/* `sbtrace features`: would a tap get tcx (probed without a device) or clsact? */
void sbt_tap_probe(const struct sbt_plan *plan, struct sbt_hook_result *res);

#endif
