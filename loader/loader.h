/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The sbtrace loader (the libbpf side): shared declarations of its parts. */
#ifndef SBT_LOADER_H
#define SBT_LOADER_H

#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "sbtrace.h"
#include "trace/tracer.h"

struct sbtrace_bpf;
struct bpf_link;

/* What plan.c attached, and why each capability got its mode. */
struct sbt_plan {
	struct sbtrace_bpf *skel;
	struct bpf_link *exec_link, *connect_link, *packet_link;
	struct bpf_link *failed_link[2]; /* sys_exit_execve, sys_exit_execveat */
	struct sbt_hook_result exec, connect, packet, exec_failed;
	int failed_err; /* the load error with the failed-exec programs, 0 if they loaded */
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
/*
 * minbtf.c: the cut-down kernel BTF scripts/min-btf.sh made, into buf, when
 * it is for the running kernel; else NULL (libbpf reads the kernel's own).
 */
const char *sbt_min_btf(char *buf, size_t len);

int sbt_plan_attach(const struct sbt_exec_opts *opts, struct sbt_plan *plan);

/*
 * signals.c: SIGINT and SIGTERM set sbt_stop_signal (the signal's number),
 * SIGHUP (with hup; else its default) sets sbt_hup_pending, SIGPIPE is
 * ignored (a write error says it). For trace, agent and guest-agent.
 */
extern volatile sig_atomic_t sbt_stop_signal;
extern volatile sig_atomic_t sbt_hup_pending;
void sbt_signals_install(bool hup);

/*
 * The egress programs a sandbox's cgroup gets, in one order: the first
 * SBT_EGRESS_ENFORCERS judge (connect, sendmsg, socket creation, packets),
 * the rest restore a DNS reply's source (the DNS proxy). *n: how many.
 */
#define SBT_EGRESS_ENFORCERS 6
#define SBT_EGRESS_PROGS     8
struct bpf_program *const *sbt_egress_progs(struct sbtrace_bpf *skel, size_t *n);
void sbt_plan_detach(struct sbt_plan *plan);
void sbt_plan_destroy(struct sbt_plan *plan);

/*
 * A loaded program's run time and run count by the kernel's own accounting
 * (non-zero while BPF_STATS_RUN_TIME is on). 0, or -errno (not loaded).
 */
int sbt_prog_run_stats(const struct bpf_program *prog, uint64_t *run_ns, uint64_t *run_cnt);

/*
 * The membership capability (membership.c): learn the kernel address of each
 * of `nr` sandbox cgroups into ptrs[] with the object's cgroup iterator when
 * the exec hook is tp_btf and the iterator loaded; otherwise, or when that
 * fails, ptrs[] stays 0 (ancestor-id helper). `res` says which mode and why.
 */
void sbt_membership_learn(const struct sbt_plan *plan, const struct sbt_target *const *targets,
			  uint32_t nr, uint64_t *ptrs, struct sbt_hook_result *res);

/*
 * The agent's membership mode into `res`: its sandboxes by address (or by id
 * when the iterator is missing) in the fast table, beyond it and on an
 * architecture where the table cannot change under the programs by the
 * hash map (ancestor_id).
 *
 * The agent's fast table, changed while the programs run (membership.c):
 * add sandbox sb (its slot set), by its kernel address when `mode` (what
 * sbt_membership_learn said) is cgroup_ptr, else by id: 0, -ENOSPC (full)
 * or -EOPNOTSUPP (not on this architecture: the hash map alone). Delete by
 * cgroup id: true if it was there. Only the loader's thread calls them.
 */
void sbt_membership_agent(const struct sbt_plan *plan, struct sbt_hook_result *res);
int sbt_membership_fast_add(const struct sbt_plan *plan, const struct sbt_hook_result *mode,
			    const struct sbt_target *sb);
bool sbt_membership_fast_del(struct sbtrace_bpf *skel, uint64_t cgroup_id);

/*
 * trace.c: register the cgroup sandboxes of sandboxes[nr] with the exec hook
 * (the fast slots, by kernel address where membership.c learns it, then the
 * hash path by cgroup level). 0, or -errno after a message.
 */
int sbt_register_targets(const struct sbt_plan *plan, const struct sbt_target *targets, uint32_t nr,
			 struct sbt_hook_result *membership);

/*
 * A shim's or the probe's sandbox (sb->pin_name): pin its n enforcing links
 * (what[i]: link i's name in the pin directory) under <bpffs>/sbtrace/NAME,
 * so they outlive this process. A failure is said once, on stderr.
 */
void sbt_pin_enforcers(const struct sbt_target *sb, const int *link_fds, const char *const *what,
		       size_t n);

struct sbt_tap_state {
	struct sbt_hook_result res[SBT_MAX_TAPS]; /* per tap: tcx or clsact, and failures */
	int link_fd[SBT_MAX_TAPS];		  /* tcx link, -1 if none */
	bool clsact[SBT_MAX_TAPS];		  /* a clsact filter was attached */
	int eg_link_fd[SBT_MAX_TAPS];		  /* tap_egress (DNS proxy's replies): tcx link */
	bool eg_clsact[SBT_MAX_TAPS];		  /* ... or a clsact egress filter */
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
struct sbt_egress_state;
int sbt_tap_attach(struct sbt_tap_state *ts, struct sbt_plan *plan,
		   const struct sbt_target *targets, uint32_t nr, const uint8_t *cfg_resolver,
		   const struct sbt_egress_state *eg);
void sbt_tap_detach(struct sbt_tap_state *ts, const struct sbt_target *targets);
/* `sbtrace features`: would a tap get tcx (probed without a device) or clsact? */
void sbt_tap_probe(const struct sbt_plan *plan, struct sbt_hook_result *res);

#endif
