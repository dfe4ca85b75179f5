/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What a trace is asked to do, as plain data: the sandboxes and their keys,
 * the hooks to load, the egress policy, the sinks that receive its events
 * (sink.h) and the caller's hooks into its loop. The loader implements the
 * trace (sbt_trace_fn: loader/trace.c); everything here is pure C, so the
 * commands that build a request (trace, probe) and the sinks that read it
 * are unit-tested without BPF.
 */
#ifndef SBT_TRACER_H
#define SBT_TRACER_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "egress/policy.h"
#include "sandbox/name.h"
#include "sbtrace.h"

/* ---- sandboxes ---------------------------------------------------------- */

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
struct sbt_target {
	char name[PATH_MAX]; /* cgroup path relative to the v2 root, e.g. "/sbtrace/x" */
	char path[PATH_MAX]; /* absolute directory path */
	uint64_t cgroup_id;
	uint32_t level;
	uint32_t slot;
	const char *origin;  /* "cgroup", "pid", "sandbox" or "tap" */
	uint32_t origin_pid; /* for --pid */
	bool has_tap;	     /* tap.* is set: the tc program judges its frames */
	bool exec_hidden;    /* its workload runs in a guest kernel: execs are invisible */
	/*
	 * The agent found it running (at its start, or back after a restart):
	 * what ran before observed_since_ns (epoch) was not seen, so its execs
	 * are never complete (exec_incomplete_reason "adopted").
	 */
	bool adopted;
	uint64_t observed_since_ns;
	char accel[8]; /* a microVM's accelerator ("kvm", "tcg"), from its state file; "" */
	char boot[12]; /* ... how it started ("restored", "cold"), and why cold; "" */
	char boot_why[192];
	/* a microVM whose guest agent streams its execs (guest_stream.h): the file; "" */
	char exec_stream[PATH_MAX];
	/*
	 * A sandbox of the shim or the probe: its name. Its enforcing links are
	 * pinned (pins.h), so they outlive this tracer until the sandbox ends.
	 */
	char pin_name[SBT_SANDBOX_NAME_MAX + 1];
	/*
	 * The network namespace its DNS proxy serves (a path: /run/netns/X),
	 * when its sockets live in one no process of its cgroup is in yet
	 * (the probe's build network, shared by the engine's RUN steps); ""
	 * for its first process's.
	 */
	char dns_netns[PATH_MAX];
	struct sbt_tap_spec tap;
};

/* A sandbox with a cgroup (a tap-only one has none: cgroup_id 0). */
static inline bool sbt_target_has_cgroup(const struct sbt_target *sb)
{
	return sb->cgroup_id != 0;
}

/* Sandbox keys (sandbox_key.c). Each prints a one-line message on error and returns -errno. */
int sbt_target_from_cgroup(const char *arg, struct sbt_target *sb); /* --cgroup PATH */
int sbt_target_from_pid(const char *arg, struct sbt_target *sb);    /* --pid PID */
/* --tap SPEC into a tap-only sandbox's spec. 0, or -EINVAL with err filled (no message). */
int sbt_tap_parse(const char *arg, struct sbt_tap_spec *t, char *err, size_t errlen);
/*
 * The tap's device, looked up in its netns (entered and left again; the
 * caller is single-threaded): its ifindex, or -errno with err filled (no
 * message): -ENOENT no such netns, -ENODEV no such device.
 */
int sbt_tap_ifindex(const struct sbt_tap_spec *t, char *err, size_t errlen);
/*
 * The tap of a sandbox sbtrace-shim runs as a microVM (its state file, or
 * its run): the device, its netns and the guest's addresses. 0, or -EINVAL
 * with *bad the index of an address that does not parse.
 */
int sbt_tap_from_shim(struct sbt_target *sb, const char *tap, const char *netns,
		      const char (*guest_addrs)[64], int nr, int *bad);
/* The cookie of the caller's network namespace (SO_NETNS_COOKIE), 0 if unknown. */
uint64_t sbt_netns_cookie(void);

/* ---- hooks --------------------------------------------------------------- */

/* Exec hook modes, in order of preference. */
enum sbt_exec_mode {
	SBT_EXEC_TP_BTF = 0,
	SBT_EXEC_RAW_TP,
	SBT_EXEC_TRACEPOINT,
	SBT_EXEC_NR_MODES,
};

const char *sbt_exec_mode_name(enum sbt_exec_mode m);
int sbt_exec_mode_parse(const char *s, enum sbt_exec_mode *m);

/* What the attach plan decided for one capability, and why. */
#define SBT_MAX_TRIES 6
struct sbt_hook_result {
	const char *capability;
	const char *mode; /* chosen mode, NULL when none worked */
	unsigned int nr_tries;
	struct {
		const char *mode;
		int err;	   /* -errno */
		const char *stage; /* "load", "attach", "attached", "unsupported", "disabled" */
	} tries[SBT_MAX_TRIES];
};

/* True when SBTRACE_DISABLE_HOOKS names "capability:mode" or the bare mode. */
bool sbt_hook_disabled(const char *capability, const char *mode);
void sbt_hook_record(struct sbt_hook_result *res, const char *mode, const char *stage, int err);
/* The error text of try i ("disabled by SBTRACE_DISABLE_HOOKS", strerror), NULL if none. */
const char *sbt_hook_try_error(const struct sbt_hook_result *res, unsigned int i);
/*
 * The one stderr line a fallback deserves (nothing falls back silently), or
 * "" when the preferred mode worked or the capability was never tried. Written into buf.
 */
const char *sbt_hook_fallback_line(const struct sbt_hook_result *res, char *buf, size_t len);

/* ---- egress policy --------------------------------------------------------- */

/* Loader-side egress modes: the BPF ones (enum sbt_egress_mode) plus "off" (no egress hooks). */
#define SBT_EGRESS_OFF (-1)

struct sbt_egress_cfg {
	int mode; /* SBT_EGRESS_OFF, or enum sbt_egress_mode */
	struct sbt_rule *rules;
	size_t nr_rules;
	bool has_resolver;
	uint8_t resolver[16];
	uint32_t resolver_rule_id; /* id given to the implicit "resolver port 53" rule */
	/* The DNS proxy of cgroup sandboxes with host rules (enforce mode). */
	bool dns_proxy_off; /* --no-dns-proxy */
	/* A proxy even without host rules: every name refused, and each one reported (the probe). */
	bool dns_proxy_always;
	uint32_t dns_grace_s;	/* --dns-grace: learned addresses live TTL + this */
	bool dns_grace_set;	/* else SBT_DNS_GRACE_DEFAULT_S */
	uint8_t dns_deny_rcode; /* --dns-deny-reply: 5 REFUSED (default) or 3 NXDOMAIN */
	uint32_t dns_learn_max; /* --dns-max-learned: addresses per sandbox */
	/*
	 * --egress learn (mode is SBT_EGRESS_AUDIT): the DNS proxy passes every
	 * name on, the floor stays enforced, and each sandbox's end brings an
	 * AllowlistProposed (egress/learn.h) in learn_formats, written to
	 * learn_out (NULL: not).
	 */
	bool learn;
	unsigned int learn_formats; /* enum sbt_learn_format bits */
	const char *learn_out;
};

#define SBT_DNS_GRACE_DEFAULT_S 5

const char *sbt_egress_mode_name(int mode);
/* The text of rule `id` (the implicit resolver rule included), NULL if none. */
const char *sbt_egress_rule_text(const struct sbt_egress_cfg *cfg, uint32_t id);
/* What floor entry `idx` is ("link-local", "metadata", "loopback"), NULL if none. */
const char *sbt_egress_floor_text(uint32_t idx);

#define SBT_HOST_ADDRS 16

/* One host rule as a sandbox resolved it. */
struct sbt_host_state {
	char name[SBT_HOST_MAX];
	size_t rule_idx;
	uint8_t addrs[SBT_HOST_ADDRS][16];
	size_t nr_addrs;
	/* Answer addresses inside the floor: never allowed (floor first), reported. */
	uint8_t floored[SBT_HOST_ADDRS][16];
	uint32_t floored_idx[SBT_HOST_ADDRS]; /* index into sbt_policy_floor() */
	size_t nr_floored;
	uint32_t ttl;
	uint64_t expires_ms; /* CLOCK_MONOTONIC */
	uint64_t refreshes;
	char error[128];
};

/* What TraceStarted shows of one sandbox's egress set-up. */
struct sbt_egress_view {
	const struct sbt_host_state *hosts;
	size_t nr_hosts;
	bool has_resolver;
	const uint8_t *resolver;     /* 16 bytes, IPv4 mapped */
	const char *resolver_source; /* "--resolver", a resolv.conf path ... */
	bool resolver_in_sandbox;    /* resolved from the sandbox's network namespace */
	size_t nr_entries;	     /* trie entries of its slot */
	bool dns_proxy;		     /* its DNS goes to sbtrace's proxy */
	uint16_t dns_proxy_ports[4]; /* UDP4, TCP4, UDP6, TCP6 on its (first) loopback; 0: none */
	size_t dns_proxy_netns;	     /* network namespaces with a proxy (0: none yet) */
	bool dns_proxy_tap;	     /* ... and on its tap's host-side addresses: */
	uint16_t dns_proxy_tap_ports[4];
	uint8_t dns_proxy_tap_addrs[2][16]; /* IPv4 mapped */
	size_t nr_dns_proxy_tap_addrs;
	size_t dns_learned; /* addresses the proxy learned so far */
};

/* ---- the request ----------------------------------------------------------- */

struct sbt_exec_opts {
	int forced_mode; /* -1: auto */
	uint32_t argv_max;
	uint32_t ringbuf_bytes;
	uint32_t poll_ms;     /* 0: a wake-up per record; else drain every poll_ms */
	bool observe;	      /* load the packet-socket observation */
	bool observe_connect; /* load the tcp_connect observation */
	bool policy;	      /* load the egress policy programs */
	bool tap;	      /* load the tap program (tc) */
	bool no_exec_attach;  /* taps only: load the exec hook, attach it nowhere */
	bool no_exec_failed; /* leave the failed-exec hook out (the guest agent's stream: execs only) */
	bool agent;	     /* load the agent's cgroup_mkdir program (attached by it) */
	uint32_t agent_mkdir_mode;  /* the agent: a new child's egress mode (PENDING or OBSERVE) */
	uint32_t max_sandboxes;	    /* the agent: slots in the maps; 0: SBT_MAX_SANDBOXES */
	uint64_t host_netns_cookie; /* the loader's network namespace */
	bool verbose;		    /* libbpf's own messages on stderr */
};

/*
 * The hooks a trace needs, decided from what it watches: socket observation
 * when egress is not off, the tcp_connect observation in observe-only mode,
 * the policy programs in audit/enforce, the tap program when a sandbox has a
 * tap; with taps only, nothing host-wide (the exec hook is loaded but
 * attached nowhere).
 */
void sbt_exec_opts_decide(struct sbt_exec_opts *eo, int egress_mode,
			  const struct sbt_target *targets, uint32_t nr);

#define SBT_MAX_SINKS 4

struct sbt_sink;

struct sbt_trace_opts {
	/* nr_targets entries, by slot (heap: sbt_trace_target_next(), sbt_trace_opts_free()) */
	struct sbt_target *targets;
	uint32_t nr_targets, cap_targets;
	struct sbt_exec_opts exec;
	uint64_t duration_ms;	    /* 0: until SIGINT/SIGTERM */
	uint64_t stats_interval_ms; /* a TraceStats event every so often; 0: none */
	/*
	 * An ELF changed (its ctime) at or after this epoch ns is the sandbox's
	 * own work: run and not known as a shell, it is "unidentified"
	 * (ShellInvocationObserved.unidentified). 0: each sandbox's registration.
	 */
	uint64_t own_since_ns;
	struct sbt_egress_cfg egress;
	/* Every event goes to each sink in order (sink.h); at least one. */
	struct sbt_sink *sinks[SBT_MAX_SINKS];
	uint32_t nr_sinks;

	/* For callers that run a workload under the trace (sbtrace probe, --sandbox). */
	void *hook_arg;
	/* After TraceStarted: everything is attached and registered. */
	void (*on_attached)(void *arg);
	/* Each loop tick (<= poll_ms); return a stop reason to stop, NULL to go on. */
	const char *(*on_tick)(void *arg);
};

/*
 * Room for one more target: a zeroed entry at targets[nr_targets], not
 * counted until sbt_trace_target_commit() (a key that does not parse leaves
 * no trace). NULL when SBT_MAX_SANDBOXES are there (errno E2BIG) or out of
 * memory (ENOMEM). Pointers into targets[] are good until the next call.
 */
struct sbt_target *sbt_trace_target_next(struct sbt_trace_opts *opts);
/* Count the entry sbt_trace_target_next() gave; its slot is its index. */
void sbt_trace_target_commit(struct sbt_trace_opts *opts);
/* Free the request's targets (its egress rules are its builder's); none are left. */
void sbt_trace_targets_free(struct sbt_trace_opts *opts);

/* Run a trace to its end: an exit code (SBT_EXIT_*). The loader's is sbt_trace_run. */
typedef int (*sbt_trace_fn)(const struct sbt_trace_opts *opts);

/* Which views of a sandbox the host has (sbtrace-trace(1), MICROVMS). */
const char *sbt_target_vis_exec(const struct sbt_target *sb); /* host | guest_kernel | none */
const char *sbt_target_vis_network(const struct sbt_target *sb, int egress_mode); /* tap... */

/* Exit codes of sbtrace (documented in --help and the man pages: userspace/cmd/exit-codes.txt). */
enum sbt_exit {
	SBT_EXIT_OK = 0,
	SBT_EXIT_RUNTIME = 1, /* a failure while tracing (e.g. output write error) */
	SBT_EXIT_USAGE = 2,   /* bad usage or input: option, cgroup, pid, file */
	SBT_EXIT_KERNEL = 3,  /* kernel capability missing, load or attach failed */
};

#endif
