/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The kinds of event a trace emits, declared once: SBT_EVENT_KINDS below is
 * the list the sinks (their JSON, text and metrics), the schema check
 * (scripts/check-schemas.sh) and `sbtrace top` (through metrics.h) go by,
 * and struct sbt_event is what every sink is handed (sink.h).
 *
 * A new kind: its row here and what it carries (a member of struct
 * sbt_event), its sbt_json_<json>() in an events*.c, its definition in
 * userspace/schema/events.schema.json, and the code that emits it. Its text
 * ('#' line) and metrics (sbtrace_events_total{event}) come with the row.
 * Its sample goes into tests/unit/test_event_kinds.c (the fixtures written
 * anew: build/tests/test_event_kinds tests/fixtures/events), since
 * check-schemas wants every name of the list among them.
 */
#ifndef SBT_KINDS_H
#define SBT_KINDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "egress/dnsev.h"
#include "egress/learn.h"
#include "event/decode.h"
#include "exec/shell.h"
#include "trace/tracer.h"

/*
 * X(KIND, json, text, metrics, scope, "Name"...), one row per kind:
 *   KIND     SBT_EV_KIND, the typed event's kind (struct sbt_event.kind)
 *   json     its JSON object: sbt_json_<json>(ev), declared below
 *   text     --output text: row (a row of the exec table) or comment ('#', name, JSON)
 *   metrics  what the metrics sink counts of it beyond sbtrace_events_total:
 *            metrics.c's count_<metrics>(), or none
 *   scope    its "sandbox": sandbox (a name), run (null) or either
 *   names    its "event" names; of several, sbt_event_variant() picks one
 */
#define SBT_EVENT_KINDS(X)                                                                         \
	X(STARTED, started, comment, none, run, "TraceStarted")                                    \
	X(EXEC, exec, row, exec, sandbox, "ProcessExec")                                           \
	X(EXEC_FAILED, exec_failed, comment, none, sandbox, "ProcessExecFailed")                   \
	X(EGRESS, egress, comment, egress, sandbox, "EgressAllowed", "EgressDenied",               \
	  "EgressObserved")                                                                        \
	X(LOST, lost, comment, lost, either, "EventsLost")                                         \
	X(SUMMARY, summary, comment, none, sandbox, "ShellInvocationObserved")                     \
	X(STOPPED, stopped, comment, none, run, "TraceStopped")                                    \
	X(SANDBOX_ADDED, sandbox_added, comment, sandbox_added, sandbox, "SandboxAdded")           \
	X(SANDBOX_REMOVED, sandbox_removed, comment, sandbox_removed, sandbox, "SandboxRemoved")   \
	X(STATS, stats, comment, none, run, "TraceStats")                                          \
	X(DNS, dns, comment, none, sandbox, "DnsQuery", "DnsAnswer")                               \
	X(ALLOWLIST, allowlist, comment, none, sandbox, "AllowlistProposed")

/* The most names one kind has. */
#define SBT_EVENT_MAX_NAMES 3

#define SBT_EVENT_KIND_ENUM(kind, ...) SBT_EV_##kind,
enum sbt_event_kind {
	SBT_EVENT_KINDS(SBT_EVENT_KIND_ENUM) SBT_EV__MAX,
};
#undef SBT_EVENT_KIND_ENUM

/* ---- what each kind carries ---------------------------------------------- */

struct sbt_shellagg;
struct sbt_event_line;

/* Per sandbox at start: its tap and its egress set-up. */
struct sbt_target_view {
	int tap_ifindex;	       /* 0: no tap attached */
	const char *tap_mode;	       /* "tcx", "clsact", NULL */
	struct sbt_egress_view egress; /* nr_hosts 0 and no resolver without a policy */
};

/* TraceStarted: attached, sandboxes registered. */
struct sbt_ev_started {
	const struct sbt_trace_opts *opts;
	const struct sbt_target_view *views;	    /* opts->nr_sandboxes entries */
	const struct sbt_hook_result *const *hooks; /* NULL-terminated */
	const char *kernel;			    /* uname -r, NULL if unknown */
	uint64_t attach_ms;
};

/* ProcessExec. */
struct sbt_ev_exec {
	const struct sbt_exec *rec;
	const struct sbt_shell_class *shell; /* NULL when the exec is not a shell */
	/* a shell's ancestors inside the sandbox, nearest first (none for other execs) */
	const struct sbt_ancestor *anc;
	size_t nanc;
	/*
	 * An ELF written, linked or chmod'ed since the session began (its
	 * ctime) that is not known as a shell: sbtrace cannot say what it is.
	 */
	bool unidentified;
};

/*
 * ProcessExecFailed: a process's failed attempts at one program, in a row
 * (a PATH search: /usr/local/bin/sh, /usr/bin/sh ... all failed), the first
 * attempt's record and every path tried. An attempt the process followed
 * with a successful exec of the same name is no failure and not reported.
 */
struct sbt_ev_exec_failed {
	const struct sbt_exec_fail *rec; /* the first attempt */
	const char *const *tried;	 /* ntried paths, in order */
	size_t ntried;
	int err; /* the errno the caller got: EACCES if any attempt got it (execvp's rule) */
	const struct sbt_shell_class *shell; /* a shell it tried to run, else NULL */
	const struct sbt_ancestor *anc;	     /* a shell's ancestors (none for others) */
	size_t nanc;
};

/* EgressAllowed / EgressDenied / EgressObserved. */
struct sbt_ev_egress {
	const struct sbt_egress *rec;
	const char *rule;  /* the allowing rule's text, NULL if none */
	const char *floor; /* what the floor entry is, when the reason is the floor */
	/* allowed by a host rule for an address the sandbox's DNS proxy passed on: */
	const char *dns_name; /* the name the sandbox asked, NULL if none */
	uint64_t dns_ts;      /* the answer's DnsAnswer ts */
};

/* DnsQuery / DnsAnswer: what a sandbox's DNS proxy did. */
struct sbt_ev_dns {
	const struct sbt_dns_event *rec;
	const char *rule; /* the text of rec->rule_id */
};

/* AllowlistProposed: --egress learn's proposal for a sandbox, at its end (egress/learn.h). */
struct sbt_ev_allowlist {
	const struct sbt_learn_proposal *p;
	const char *const *texts; /* SBT_LEARN_FORMATS, by format bit; NULL: not asked */
	uint64_t connects;	  /* connects the proposal stands for */
	uint64_t dropped;	  /* destinations beyond the limit: the proposal is not complete */
	bool egress_complete;	  /* every egress record of the sandbox arrived */
	const char *out;	  /* --learn-out FILE it was written to, NULL */
};

/* EventsLost. */
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

/* ShellInvocationObserved, per sandbox at stop. */
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

/* TraceStopped, last. */
struct sbt_ev_stopped {
	const char *reason; /* "signal", "duration", "error", "output_error", a caller's */
	uint64_t duration_ms;
	uint64_t decode_errors;
	const struct sbt_target *targets;	/* nr entries, by slot */
	const char *const *names;		/* instead of sandboxes: nr names (the agent) */
	const struct sbt_target_totals *totals; /* per sandbox, by slot */
	uint32_t nr;
};

/* SandboxAdded (the agent registered a sandbox) / SandboxRemoved (it ended; its totals). */
/* A container runtime's record of a sandbox's cgroup (podman's libpod-<id>). */
struct sbt_container {
	const char *runtime; /* "podman" */
	const char *id;	     /* 64 hex digits */
	const char *name;
	const char *image; /* as it was asked for (its name), "" when the runtime has none */
};

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
	/* its DNS proxy (host rules, enforce): ports on its (first) loopback, namespaces served */
	bool dns_proxy;
	uint16_t dns_proxy_ports[4]; /* UDP4, TCP4, UDP6, TCP6; 0: none (yet) */
	size_t dns_proxy_netns;
	const struct sbt_container *container; /* SandboxAdded: NULL when no runtime says */
};

/* One sandbox in TraceStats. */
struct sbt_stats_sandbox {
	const char *name;
	uint64_t execs, received, lost, shells;
};

/* TraceStats: the run so far, periodic (--stats-interval). */
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
		struct sbt_ev_exec_failed exec_failed;
		struct sbt_ev_egress egress;
		struct sbt_ev_lost lost;
		struct sbt_ev_summary summary;
		struct sbt_ev_stopped stopped;
		struct sbt_ev_sandbox sandbox_change;
		struct sbt_ev_stats stats;
		struct sbt_ev_dns dns;
		struct sbt_ev_allowlist allowlist;
	};
	/* Its JSON line, built once for every sink that wants it (line.h): sbt_sinks_emit's. */
	struct sbt_event_line *line;
};

/* ---- names and JSON ---------------------------------------------------------- */

/* Which of the names of EgressAllowed / EgressDenied / EgressObserved a verdict has. */
static inline unsigned int sbt_egress_variant(unsigned int verdict)
{
	return verdict == SBT_VERDICT_ALLOWED ? 0 : verdict == SBT_VERDICT_DENIED ? 1 : 2;
}

/* Which of its kind's names (in the order of its row) an event has. */
static inline unsigned int sbt_event_variant(const struct sbt_event *ev)
{
	switch (ev->kind) {
	case SBT_EV_EGRESS:
		return sbt_egress_variant(ev->egress.rec->verdict);
	case SBT_EV_DNS:
		return ev->dns.rec->answer ? 1 : 0;
	default:
		return 0;
	}
}

/* Name `variant` of `kind` as "event" has it; "unknown" for neither. */
static inline const char *sbt_event_kind_name(enum sbt_event_kind kind, unsigned int variant)
{
#define SBT_EVENT_KIND_NAMES(kind, json, text, metrics, scope, ...)                                \
	[SBT_EV_##kind] = { __VA_ARGS__ },
	static const char *const names[SBT_EV__MAX][SBT_EVENT_MAX_NAMES] = { SBT_EVENT_KINDS(
		SBT_EVENT_KIND_NAMES) };
#undef SBT_EVENT_KIND_NAMES

	if ((unsigned int)kind >= SBT_EV__MAX || variant >= SBT_EVENT_MAX_NAMES ||
	    !names[kind][variant])
		return "unknown";
	return names[kind][variant];
}

/* The event's "event" name. */
static inline const char *sbt_event_name(const struct sbt_event *ev)
{
	return sbt_event_kind_name(ev->kind, sbt_event_variant(ev));
}

/* Each kind's JSON object (events.c, events_dns.c, events_run.c): a new reference, or NULL. */
struct json_object;
#define SBT_EVENT_JSON_DECL(kind, json, ...)                                                       \
	struct json_object *sbt_json_##json(const struct sbt_event *ev);
SBT_EVENT_KINDS(SBT_EVENT_JSON_DECL)
#undef SBT_EVENT_JSON_DECL

#endif
