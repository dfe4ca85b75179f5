/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Sinks: where a trace's events go. The trace loop (loader/trace.c) hands
 * each typed event to every sink of its request (tracer.h), in order; a sink
 * reads what it needs from the structs and keeps no pointer past the call.
 * The events and what they carry are kinds.h's. The JSON/text writer is one
 * sink (sink_json.c), the probe's verdict another (probe/sink.c). A new sink
 * is one file: a struct that embeds struct sbt_sink, an ops table, and a
 * constructor.
 */
#ifndef SBT_SINK_H
#define SBT_SINK_H

#include <stdbool.h>
#include <stdint.h>

#include "event/kinds.h"
#include "trace/tracer.h"

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
