/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The JSON Lines / text sink: every event a line of the trace's output
 * (stdout or --out FILE, reopened on SIGHUP). JSON: the event's line
 * (line.h). Text: ProcessExec as an aligned row of a table (shells marked),
 * from the typed event; every other kind a '#' line with its name and JSON.
 */
#ifndef SBT_SINK_JSON_H
#define SBT_SINK_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <json-c/json.h>

#include "event/sink.h"

enum sbt_format {
	SBT_FORMAT_JSON = 0,
	SBT_FORMAT_TEXT,
};

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
 * Write one event (what the sink's emit does). Returns 0, -ENOMEM when it
 * has no JSON (nothing written), or -errno of the write (also remembered in
 * js->error).
 */
int sbt_json_sink_emit(struct sbt_json_sink *js, const struct sbt_event *ev);

/*
 * Write a JSON object built elsewhere (not a typed event) and drop the
 * reference: its line; in text format a '#' line with its "event" member.
 * Returns as sbt_json_sink_emit().
 */
int sbt_json_sink_write(struct sbt_json_sink *js, json_object *event);

/* Flush buffered output (after each ring-buffer batch). 0 or -errno. */
int sbt_json_sink_flush(struct sbt_json_sink *js);

#endif
