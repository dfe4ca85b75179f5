// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* An event as JSON (line.h). */
#include "event/line.h"

json_object *sbt_event_json(const struct sbt_event *ev)
{
#define SBT_LINE_BUILDER(kind, json, ...) [SBT_EV_##kind] = sbt_json_##json,
	static json_object *(*const build[SBT_EV__MAX])(const struct sbt_event *) = {
		SBT_EVENT_KINDS(SBT_LINE_BUILDER)
	};
#undef SBT_LINE_BUILDER

	return (unsigned int)ev->kind < SBT_EV__MAX ? build[ev->kind](ev) : NULL;
}
