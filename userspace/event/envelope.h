/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What every event's JSON shares: the envelope every object starts with
 * (README, "Events") and strings made valid UTF-8 for it. Pure logic.
 */
#ifndef SBT_ENVELOPE_H
#define SBT_ENVELOPE_H

#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

/* A JSON string of `s`; bytes that are not valid UTF-8 become U+FFFD. */
json_object *sbt_json_string(const char *s);
/* Length of the valid UTF-8 sequence at s (1..4), or 0 if its first byte starts none (RFC 3629). */
size_t sbt_utf8_seq(const char *s);

/* `ts_ns` as RFC 3339 UTC with nanoseconds (2026-11-30T22:09:21.000000001Z), in buf. */
const char *sbt_rfc3339_ns(uint64_t ts_ns, char *buf, size_t len);
/* This process's run id: 32 hex digits, random, the same in every event of the run. */
const char *sbt_run_id(void);

/*
 * New event object with "event", "ts", "time" (ts in RFC 3339), "run_id" and
 * "sandbox" (NULL -> JSON null).
 */
json_object *sbt_event_new(const char *name, uint64_t ts_ns, const char *sandbox);

#endif
