/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The session core (session/session.h) on the loaded object: its ops read
 * the per-slot counters and the fold table, its records come from the
 * ring buffer. What `sbtrace trace` and `sbtrace agent` both drive.
 */
#ifndef SBT_SESSION_BPF_H
#define SBT_SESSION_BPF_H

#include <stdint.h>

#include "session/session.h"

struct sbtrace_bpf;
struct ring_buffer;
struct sbt_egress_state;

struct sbt_session_bpf {
	struct sbt_session core;
	struct sbtrace_bpf *skel;
	struct ring_buffer *rb;
	int stats_fd, fold_fd;
	/* the DNS proxies' learned names (the trace's egress set-up), NULL: none */
	struct sbt_egress_state *egress;
	/* a record of a slot not in use (the agent: a cgroup registered at mkdir), NULL: none */
	void (*unknown_slot)(void *arg, uint32_t slot);
	void *arg;
};

/*
 * Set up the session for `max` slots on skel's maps (sb->egress,
 * sb->unknown_slot and sb->arg set by the caller first) and its ring
 * buffer. 0, or -errno after a one-line message.
 */
int sbt_session_bpf_open(struct sbt_session_bpf *sb, struct sbtrace_bpf *skel,
			 const struct sbt_trace_opts *opts, uint32_t max);
void sbt_session_bpf_close(struct sbt_session_bpf *sb);
/* Wait up to timeout_ms for records, then take every record there. 0 or -errno. */
int sbt_session_bpf_poll(struct sbt_session_bpf *sb, int timeout_ms);
/* Take the records there now (no wait). 0 or -errno. */
int sbt_session_bpf_consume(struct sbt_session_bpf *sb);
/*
 * After detach: take records until every one the kernel counted arrived or
 * was counted lost (or 250 ms passed), then report the drops.
 */
void sbt_session_bpf_drain(struct sbt_session_bpf *sb);
/*
 * Flush the sinks, and reopen their outputs when SIGHUP came (log
 * rotation). 0, or -errno after "writing output failed" (the run stops).
 */
int sbt_session_bpf_flush(struct sbt_session_bpf *sb);
/* The ring buffer's fd (epoll), for a caller's own poll. */
int sbt_session_bpf_fd(const struct sbt_session_bpf *sb);

#endif
