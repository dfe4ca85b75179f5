/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * An event as JSON: its kind's builder (kinds.h), and its line, serialized
 * once however many sinks write it. sbt_sinks_emit() gives each event a
 * struct sbt_event_line for its sinks; the first sink that asks builds it.
 */
#ifndef SBT_LINE_H
#define SBT_LINE_H

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

#include "event/kinds.h"

/* The flags of every line sbtrace writes: one line, '/' unescaped. */
#define SBT_JSON_LINE_FLAGS (JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)

struct sbt_event_line {
	bool built;	  /* asked for: obj and text are what there is */
	json_object *obj; /* NULL: the builder failed (ENOMEM) */
	const char *text; /* obj's line, no '\n' (obj's memory) */
	size_t len;
};

/* The event's JSON object (its kind's sbt_json_*): a new reference, NULL on ENOMEM. */
json_object *sbt_event_json(const struct sbt_event *ev);

/*
 * The event's JSON line without its '\n' (*len bytes), built on the first
 * call for ev->line and kept there. An event without one (a sink called
 * directly) gets a line of its own, good until the next such call. NULL:
 * out of memory.
 */
const char *sbt_event_line(const struct sbt_event *ev, size_t *len);

/* Free what the line holds; it can be built again. */
void sbt_event_line_release(struct sbt_event_line *line);

#endif
