/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Output events (sbtrace(1), EVENTS): built as json-c objects, written as
 * JSON Lines or as aligned text. Pure logic: no libbpf.
 */
#ifndef SBT_EVENTS_H
#define SBT_EVENTS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <json-c/json.h>

#include "lib/clock.h"
#include "event/decode.h"
#include "event/sink.h"
#include "exec/shell.h"

enum sbt_format {
	SBT_FORMAT_JSON = 0,
	SBT_FORMAT_TEXT,
};

/* A JSON string of `s`; bytes that are not valid UTF-8 become U+FFFD. */
json_object *sbt_json_string(const char *s);

/* `ts_ns` as RFC 3339 UTC with nanoseconds (2026-11-30T22:09:21.000000001Z), in buf. */
const char *sbt_rfc3339_ns(uint64_t ts_ns, char *buf, size_t len);
/* This process's run id: 32 hex digits, random, the same in every event of the run. */
const char *sbt_run_id(void);

/*
 * New event object with "event", "ts", "time" (ts in RFC 3339), "run_id" and
 * "sandbox" (NULL -> JSON null).
 */
json_object *sbt_event_new(const char *name, uint64_t ts_ns, const char *sandbox);

/* The ProcessExec event of a decoded exec; `shell` may be NULL. */
json_object *sbt_event_exec(const struct sbt_exec *ev, uint64_t ts_ns, const char *sandbox,
			    const struct sbt_shell_class *shell);

/*
 * The EgressAllowed / EgressDenied / EgressObserved event of a decoded egress
 * record. `rule` is the text of ev->rule_id's rule (NULL if none), `floor`
 * what the floor entry is ("link-local", "metadata", "loopback") when the
 * reason is the floor.
 */
json_object *sbt_event_egress(const struct sbt_egress *ev, uint64_t ts_ns, const char *sandbox,
			      const char *rule, const char *floor);

struct sbt_dns_event;
/* DnsQuery / DnsAnswer (events_dns.c); `rule` is the text of ev->rule_id. */
json_object *sbt_event_dns(const struct sbt_dns_event *ev, const char *sandbox, const char *rule);

/* Whether the event names a destination (an IP family, not a socket creation). */
bool sbt_egress_has_daddr(const struct sbt_egress *ev);
/* The protocol as JSON shows it ("tcp", "udp", "icmp", a number in buf); NULL for packet sockets. */
const char *sbt_egress_proto_str(const struct sbt_egress *ev, char *buf, size_t len);

/* Names of the egress enums as they appear in JSON. */
const char *sbt_egress_hook_name(unsigned int hook);
const char *sbt_egress_reason_name(unsigned int reason);
const char *sbt_egress_event_name(unsigned int verdict);

/*
 * The run's other events, from the typed events of sink.h: TraceStarted,
 * EventsLost, ShellInvocationObserved, TraceStopped; sbt_event_json() any
 * kind (ProcessExec and Egress* through the builders above). New reference.
 */
struct sbt_event;
struct sbt_hook_result;
json_object *sbt_event_json(const struct sbt_event *ev);
/* {"capability": {"mode", "tried", "fallback"}, ...} for a NULL-terminated list. */
json_object *sbt_hooks_json(const struct sbt_hook_result *const *list);

/* The JSON / text sink (sink_json.c): every event a line of `out`. */
struct sbt_json_sink {
	struct sbt_sink base;
	FILE *out;
	enum sbt_format format;
	bool text_header_done;
	uint64_t written; /* events written */
	int error;	  /* first errno of a failed write, 0 if none */
	const char *path; /* --out: reopened on SIGHUP; NULL: a stream given (stdout) */
	uint64_t reopened;
	size_t bufsize, pending; /* --out's stdio buffer and what it holds (whole lines) */
	char *buf;		 /* that buffer (ours: freed after its stream is closed) */
};

#define SBT_JSON_SINK_BUF (1u << 18)

void sbt_json_sink_init(struct sbt_json_sink *js, FILE *out, enum sbt_format format);
/* A sink writing to `path`, opened for appending (kept: reopened on SIGHUP). 0 or -errno. */
int sbt_json_sink_open(struct sbt_json_sink *js, const char *path, enum sbt_format format);
/* Close a sink's own file (from sbt_json_sink_open). 0 or -errno. */
int sbt_json_sink_close(struct sbt_json_sink *js);

/*
 * Write one event and drop the reference. JSON: one line. Text: ProcessExec
 * as an aligned row (shells marked), other events as a '#' line.
 * Returns 0 or -errno (also remembered in js->error).
 */
int sbt_json_sink_write(struct sbt_json_sink *js, json_object *event);

/* Flush buffered output (after each ring-buffer batch). 0 or -errno. */
int sbt_json_sink_flush(struct sbt_json_sink *js);

#endif
