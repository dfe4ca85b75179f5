/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Sinks: where a trace's events go. The trace loop (loader/trace.c) hands
 * each typed event to every sink of its request (tracer.h), in order; a sink
 * reads what it needs from the structs and keeps no pointer past the call.
 * The JSON/text writer is one sink (sink_json.c), the probe's verdict
 * another (probe/sink.c). A new sink is one file: a struct that embeds
 * struct sbt_sink, an ops table, and a constructor.
 */
#ifndef SBT_SINK_H
#define SBT_SINK_H

#include <stdbool.h>
#include <stdint.h>

#include "event/decode.h"
#include "exec/shell.h"
#include "trace/tracer.h"

struct sbt_shellagg;

enum sbt_event_kind {
	SBT_EV_STARTED = 0,	/* TraceStarted: attached, sandboxes registered */
	SBT_EV_EXEC,		/* ProcessExec */
	SBT_EV_EGRESS,		/* EgressAllowed / EgressDenied / EgressObserved */
	SBT_EV_LOST,		/* EventsLost */
	SBT_EV_SUMMARY,		/* ShellInvocationObserved, per sandbox at stop */
	SBT_EV_STOPPED,		/* TraceStopped, last */
	SBT_EV_SANDBOX_ADDED,	/* SandboxAdded: the agent registered a sandbox */
	SBT_EV_SANDBOX_REMOVED, /* SandboxRemoved: it ended; its totals */
	SBT_EV_STATS,		/* TraceStats: periodic (--stats-interval) */
	SBT_EV_DNS,		/* DnsQuery / DnsAnswer: what a sandbox's DNS proxy did */
	SBT_EV__MAX,
};

/* Per sandbox at start: its tap and its egress set-up. */
struct sbt_target_view {
	int tap_ifindex;	       /* 0: no tap attached */
	const char *tap_mode;	       /* "tcx", "clsact", NULL */
	struct sbt_egress_view egress; /* nr_hosts 0 and no resolver without a policy */
};

struct sbt_ev_started {
	const struct sbt_trace_opts *opts;
	const struct sbt_target_view *views;	    /* opts->nr_sandboxes entries */
	const struct sbt_hook_result *const *hooks; /* NULL-terminated */
	const char *kernel;			    /* uname -r, NULL if unknown */
	uint64_t attach_ms;
};

struct sbt_ev_exec {
	const struct sbt_exec *rec;
	const struct sbt_shell_class *shell; /* NULL when the exec is not a shell */
	/* a shell's ancestors inside the sandbox, nearest first (none for other execs) */
	const struct sbt_ancestor *anc;
	size_t nanc;
};

struct sbt_ev_egress {
	const struct sbt_egress *rec;
	const char *rule;  /* the allowing rule's text, NULL if none */
	const char *floor; /* what the floor entry is, when the reason is the floor */
	/* allowed by a host rule for an address the sandbox's DNS proxy passed on: */
	const char *dns_name; /* the name the sandbox asked, NULL if none */
	uint64_t dns_ts;      /* the answer's DnsAnswer ts */
};

struct sbt_ev_dns {
	const struct sbt_dns_event *rec;
	const char *rule; /* the text of rec->rule_id */
};

struct sbt_ev_lost {
	uint64_t lost;
	uint64_t lost_total; /* with has_total */
	bool has_total;
	const char *reason; /* "ringbuf_full", "not_received", "decode_error" */
	const char *kind;   /* "exec", "egress", NULL (run-wide) */
	const char *detail; /* NULL, or what failed to decode */
};

/* What of one sandbox may be missing at stop, per kind of record. */
struct sbt_completeness {
	bool all;    /* nothing of the sandbox may be missing: exec && egress */
	bool exec;   /* every exec arrived; never when its execs are invisible (a microVM) */
	bool egress; /* every egress record the kernel made arrived */
	/*
	 * Why exec is false beyond counted losses: a guest stream's reason
	 * (guest_feed.h: guest_agent_gone ...), NULL otherwise.
	 */
	const char *exec_reason;
};

struct sbt_ev_summary {
	const struct sbt_shellagg *agg;
	struct sbt_completeness complete;
	bool exec_visible; /* the host could see its execs at all */
};

/* A microVM's guest agent, as its stream told (TraceStopped.sandboxes[].guest). */
struct sbt_guest_info {
	bool hello, bye;	   /* it attached; it stopped cleanly */
	const char *mode, *kernel; /* the guest's exec hook, its kernel (HELLO) */
	uint32_t hb_ms;
	uint64_t attached_ts; /* HELLO's sending, on the host's epoch (ns) */
	uint64_t frames, bytes;
	uint64_t bpf_run_ns, bpf_run_cnt; /* guest-agent --bpf-stats, else 0 */
};

/* One sandbox's totals at stop. */
struct sbt_target_totals {
	uint64_t execs;	   /* the kernel's count */
	uint64_t received; /* decoded */
	uint64_t lost;	   /* execs counted but not received */
	struct sbt_completeness complete;
	uint64_t first_exec_ts; /* epoch ns, 0 if no exec */
	uint64_t eg_records, eg_events, eg_denied;
	uint64_t eg_lost; /* egress records dropped by the kernel or not received */
	const struct sbt_guest_info *guest; /* a microVM with a guest agent, else NULL */
};

struct sbt_ev_stopped {
	const char *reason; /* "signal", "duration", "error", "output_error", a caller's */
	uint64_t duration_ms;
	uint64_t decode_errors;
	const struct sbt_target *targets;	/* nr entries, by slot */
	const char *const *names;		/* instead of sandboxes: nr names (the agent) */
	const struct sbt_target_totals *totals; /* per sandbox, by slot */
	uint32_t nr;
};

/* SandboxAdded / SandboxRemoved (the agent). */
struct sbt_ev_sandbox {
	const char *source;	   /* "shim" (a state file) or "cgroup_parent" */
	const char *registered_by; /* "cgroup_mkdir" (BPF, at mkdir) or "agent" (userspace) */
	bool released;		   /* a shim's workload was waiting and was told "attached" */
	const struct sbt_target_totals *totals; /* SandboxRemoved only */
	/* SandboxAdded: its egress policy (egress_mode NULL: none, nothing enforced) */
	const char *egress_source; /* "state_file" or "policy_dir" */
	const char *egress_mode;   /* "enforce", "audit" or "denied" (refused: egress_error) */
	const char *egress_error;
	size_t egress_rules;
};

/* One sandbox in TraceStats. */
struct sbt_stats_sandbox {
	const char *name;
	uint64_t execs, received, lost, shells;
};

/* TraceStats: the run so far. */
struct sbt_ev_stats {
	uint64_t uptime_ms;
	uint64_t ringbuf_pending_bytes, ringbuf_size_bytes;
	uint64_t decode_errors;
	uint64_t sandboxes_added, sandboxes_removed, sandboxes_unregistered;
	const struct sbt_stats_sandbox *targets;
	uint32_t nr;
};

struct sbt_event {
	enum sbt_event_kind kind;
	uint64_t ts;			  /* ns since the epoch */
	const struct sbt_target *sandbox; /* NULL: the event is run-wide */
	union {
		struct sbt_ev_started started;
		struct sbt_ev_exec exec;
		struct sbt_ev_egress egress;
		struct sbt_ev_lost lost;
		struct sbt_ev_summary summary;
		struct sbt_ev_stopped stopped;
		struct sbt_ev_sandbox sandbox_change;
		struct sbt_ev_stats stats;
		struct sbt_ev_dns dns;
	};
};

struct sbt_sink;

struct sbt_sink_ops {
	const char *name;
	void (*emit)(struct sbt_sink *sink, const struct sbt_event *ev);
	/* After each batch and at stop. 0, or -errno: the sink cannot write (the trace stops). */
	int (*flush)(struct sbt_sink *sink);
	/* SIGHUP: reopen the output (log rotation). NULL: nothing to reopen. 0 or -errno. */
	int (*reopen)(struct sbt_sink *sink);
};

struct sbt_sink {
	const struct sbt_sink_ops *ops;
};

/* Hand `ev` to every sink of the request. */
void sbt_sinks_emit(const struct sbt_trace_opts *opts, const struct sbt_event *ev);
/* Flush every sink; the first error (-errno), 0 if none. */
int sbt_sinks_flush(const struct sbt_trace_opts *opts);
/* Reopen every sink that has an output (SIGHUP); the first error, 0 if none. */
int sbt_sinks_reopen(const struct sbt_trace_opts *opts);
/* Add a sink to the request. 0, or -E2BIG. */
int sbt_sinks_add(struct sbt_trace_opts *opts, struct sbt_sink *sink);

/*
 * A sandbox's completeness from its totals (lost and eg_lost filled): a kind
 * is complete when none of its records may be missing. A record that failed
 * to decode may be any sandbox's of either kind, so decode_errors spoil all.
 */
struct sbt_completeness sbt_completeness_of(const struct sbt_target_totals *t, bool exec_visible,
					    uint64_t decode_errors);

/*
 * The kernel counted `total` ring-buffer drops of records of `kind` ("exec",
 * "egress"), *reported of them already said: true with *ev the EventsLost of
 * the rest (reason ringbuf_full, with the total) and *reported moved up to
 * total; false when there is nothing new.
 */
bool sbt_lost_since(uint64_t total, uint64_t *reported, const char *kind, struct sbt_ev_lost *ev);

#endif
