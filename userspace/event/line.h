/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* An event as JSON: its kind's builder (kinds.h). */
#ifndef SBT_LINE_H
#define SBT_LINE_H

#include <json-c/json.h>

#include "event/kinds.h"

/* The event's JSON object (its kind's sbt_json_*): a new reference, NULL on ENOMEM. */
json_object *sbt_event_json(const struct sbt_event *ev);

#endif
