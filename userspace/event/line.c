// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* An event as JSON, serialized once (line.h). */
#include <string.h>

#include "event/line.h"

json_object *sbt_event_json(const struct sbt_event *ev)
{
#define SBT_LINE_BUILDER(kind, json, ...) [SBT_EV_##kind] = sbt_json_##json,
	static json_object *(*const build[SBT_EV__MAX])(
		const struct sbt_event *) = { SBT_EVENT_KINDS(SBT_LINE_BUILDER) };
#undef SBT_LINE_BUILDER

	return (unsigned int)ev->kind < SBT_EV__MAX ? build[ev->kind](ev) : NULL;
}

const char *sbt_event_line(const struct sbt_event *ev, size_t *len)
{
	static _Thread_local struct sbt_event_line own;
	struct sbt_event_line *l = ev->line;

	if (!l) {
		sbt_event_line_release(&own);
		l = &own;
	}
	if (!l->built) {
		l->built = true;
		l->obj = sbt_event_json(ev);
		if (l->obj)
			l->text = json_object_to_json_string_length(l->obj, SBT_JSON_LINE_FLAGS,
								    &l->len);
	}
	*len = l->text ? l->len : 0;
	return l->text;
}

void sbt_event_line_release(struct sbt_event_line *line)
{
	json_object_put(line->obj);
	memset(line, 0, sizeof(*line));
}
