/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The run's events as JSON from the typed events of kinds.h (their
 * sbt_json_<kind>() are declared there); and the hooks' part of TraceStarted.
 */
#ifndef SBT_EVENTS_RUN_H
#define SBT_EVENTS_RUN_H

#include <json-c/json.h>

#include "trace/tracer.h"

/* {"capability": {"mode", "tried", "fallback"}, ...} for a NULL-terminated list. */
json_object *sbt_hooks_json(const struct sbt_hook_result *const *list);

#endif
