/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The session: what `sbtrace trace` and `sbtrace agent` share between the
 * kernel's records and the sinks. A table of slots, one per traced target
 * (filled once for a trace, filled and emptied as the agent goes); record
 * dispatch (exec, egress; a microVM's guest stream as an exec source of its
 * own); accounting against the kernel's counters (EventsLost, what a drain
 * still waits for); the folded egress tail; the final events of a slot
 * (EventsLost for what never arrived, ShellInvocationObserved, its totals)
 * and of the run (TraceStopped); TraceStats.
 *
 * Pure C: what the kernel holds (a slot's counters, its folded egress
 * keys, the names the DNS proxy learned) comes through struct
 * sbt_session_ops, so the unit tests drive a session with records they
 * build. The loader's side (loader/session.c) binds the ops to the maps
 * and the ring buffer; trace.c and agent.c keep discovery, attach and
 * their loops.
 */
#ifndef SBT_SESSION_H
#define SBT_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sbtrace.h"
#include "event/decode.h"
#include "event/sink.h"
#include "exec/proctab.h"
#include "exec/shellid.h"
#include "session/execfail.h"
#include "trace/tracer.h"

struct sbt_session;
struct sbt_dns_event;

#define SBT_SESSION_ALL UINT32_MAX

/* What the session asks of the kernel's side. NULL hooks: nothing to ask. */
struct sbt_session_ops {
	/* The kernel's counters of a slot. 0, or -errno (then nothing is known). */
	int (*read_stats)(void *arg, uint32_t slot, struct sbt_sandbox_stats *out);
	/*
	 * Hand every folded egress key of `slot` (SBT_SESSION_ALL: of every
	 * slot) to sbt_session_fold_tail() and forget them: the slot ends, its
	 * tail is never lost.
	 */
	void (*flush_folds)(void *arg, struct sbt_session *s, uint32_t slot);
	/* The name the slot's DNS proxy learned `addr` from (copied), the answer's ts. */
	bool (*learned_name)(void *arg, uint32_t slot, const uint8_t addr[16], char *name,
			     size_t len, uint64_t *ts_ns);
	/* A record names a slot not in use: the caller may add it now (the agent rescans). */
	void (*unknown_slot)(void *arg, uint32_t slot);
	void *arg;
};

/* One slot's accounting, by kind of record. */
struct sbt_session_counts {
	uint64_t received;	/* the host's exec records decoded */
	uint64_t lost_reported; /* exec drops already said in EventsLost */
	uint64_t kernel_execs, kernel_lost;
	uint64_t eg_received; /* egress records decoded */
	uint64_t eg_events;   /* verdicts they stand for (sum of counts, folded tail included) */
	uint64_t eg_denied;
	uint64_t eg_lost_reported;
	uint64_t kernel_eg, kernel_eg_lost;
	uint64_t first_exec_ts;	  /* the earliest exec's epoch ns, 0 if none */
	uint64_t failed_received; /* failed-exec records decoded */
	uint64_t kernel_failed, kernel_failed_lost, failed_lost_reported;
};

struct session_guest;
struct session_folds;
struct sbt_learn;

struct sbt_session_slot {
	bool used;
	struct sbt_target *target;	     /* the caller's; alive while the slot is used */
	const struct sbt_egress_cfg *egress; /* its policy's rule texts, NULL: none */
	struct sbt_shellagg *agg;
	struct sbt_session_counts n;
	struct session_guest *guest; /* its microVM's guest stream, NULL: none */
	struct session_folds *folds; /* the last record of each fold key */
	uint64_t own_since;	     /* epoch ns: an ELF changed since is the sandbox's own */
	struct sbt_learn *learn;     /* --egress learn: its connects (session_learn.h), else NULL */
};

struct sbt_session {
	const struct sbt_trace_opts *opts; /* the sinks */
	struct sbt_session_ops ops;
	struct sbt_session_slot *slots; /* max, by slot */
	uint32_t max, nr;
	const char **names; /* the used slots' cgroup names, for the procfs lookups */
	struct sbt_proctab *proc;
	struct sbt_procfs_ctx procfs;
	struct sbt_shellid shellid; /* the host's shells, by their files */
	struct sbt_execfail *fails; /* failed execs waiting to be told from a PATH search */
	const char **argv_store;
	char *tail;
	int64_t boot_offset; /* CLOCK_BOOTTIME -> epoch, set at attach */
	uint64_t decode_errors;
	enum sbt_decode_err first_decode_err;
	bool learn_out_written; /* --learn-out: the file was written anew by this session */
};

/* Up to `max` slots. 0, or -ENOMEM (then free it). */
int sbt_session_init(struct sbt_session *s, const struct sbt_trace_opts *opts, uint32_t max,
		     const struct sbt_session_ops *ops);
void sbt_session_free(struct sbt_session *s);

/*
 * Put target t in its slot (t->slot < max, not in use) with the rule texts
 * of its policy (NULL: none). 0, -EINVAL, or -ENOMEM.
 */
int sbt_session_add(struct sbt_session *s, struct sbt_target *t,
		    const struct sbt_egress_cfg *egress);
/* Its policy was replaced (a reload): the rule texts its records name from now on. */
void sbt_session_set_egress(struct sbt_session *s, uint32_t slot,
			    const struct sbt_egress_cfg *egress);
/* The slot's target is gone: forget it (its final events were emitted). */
void sbt_session_remove(struct sbt_session *s, uint32_t slot);
/* The slot in use, NULL if none. */
struct sbt_session_slot *sbt_session_slot(struct sbt_session *s, uint32_t slot);
/*
 * Follow the slot's microVM guest stream at `path` (guest_feed.h): its execs
 * are the slot's. A stream that cannot be opened is said on stderr; the
 * slot's execs are then not complete. 0, or -ENOMEM.
 */
int sbt_session_guest_open(struct sbt_session *s, uint32_t slot, const char *path);
/*
 * Remember the processes already in the slot's cgroup: their exec is in the
 * past, and ancestor chains must not depend on them being alive later.
 */
void sbt_session_snapshot(struct sbt_session *s, uint32_t slot);

/* A ring-buffer record (libbpf's ring_buffer_sample_fn; ctx: the session). Always 0. */
int sbt_session_record(void *ctx, void *data, size_t size);
/*
 * TraceStarted: the request, the per-target views (NULL: none; by slot),
 * the hooks chosen (NULL-terminated), the kernel, the attach time; flushed.
 */
void sbt_session_started(struct sbt_session *s, const struct sbt_target_view *views,
			 const struct sbt_hook_result *const *hooks, uint64_t attach_ms);
/* Hand an event of target t (NULL: run-wide) to the sinks. */
void sbt_session_emit(struct sbt_session *s, struct sbt_event *ev, const struct sbt_target *t);
/* A DNS proxy's event of its slot. */
void sbt_session_dns(struct sbt_session *s, const struct sbt_dns_event *rec);
/* A folded key's tail (ops->flush_folds): `folded` verdicts since its last record. */
void sbt_session_fold_tail(struct sbt_session *s, const struct sbt_fold_key *k, uint64_t folded);
/* Housekeeping of each loop tick: failed execs quiet long enough are reported. */
void sbt_session_tick(struct sbt_session *s);
/* What the guest streams gained since the last look (up to max_bytes each). */
void sbt_session_guests_poll(struct sbt_session *s, size_t max_bytes);

/* Read every slot's counters; EventsLost for the drops the kernel counted since the last look. */
void sbt_session_drops(struct sbt_session *s);
/* True while a record the kernel counted neither arrived nor was counted lost. */
bool sbt_session_pending(struct sbt_session *s);

/*
 * A slot's end: its folded tail, EventsLost for what never arrived,
 * ShellInvocationObserved; its totals into *t (t->guest points into the
 * session until the slot is removed).
 */
void sbt_session_final(struct sbt_session *s, uint32_t slot, struct sbt_target_totals *t);
/* The run's end: every slot's final events, run-wide decode errors, TraceStopped. */
void sbt_session_stopped(struct sbt_session *s, const char *reason, uint64_t duration_ms);
/* TraceStats: `base` (the run-wide fields the caller has) with every used slot's counts. */
void sbt_session_stats(struct sbt_session *s, const struct sbt_ev_stats *base);

#endif
