/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * ProcessExec and Egress* as JSON (sbtrace(1), EVENTS), from decoded records,
 * and the names of the egress enums; the envelope every event starts with
 * is envelope.h's. The run's other events are events_run.h's, DNS
 * events_dns.h's, any kind's line.h's. Pure logic: no libbpf.
 */
#ifndef SBT_EVENTS_H
#define SBT_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "event/decode.h"
#include "event/envelope.h"
#include "exec/shell.h"

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

/* Whether the event names a destination (an IP family, not a socket creation). */
bool sbt_egress_has_daddr(const struct sbt_egress *ev);
/* The protocol as JSON shows it ("tcp", "udp", "icmp", a number in buf); NULL for packet sockets. */
const char *sbt_egress_proto_str(const struct sbt_egress *ev, char *buf, size_t len);

/* Names of the egress enums as they appear in JSON. */
const char *sbt_egress_hook_name(unsigned int hook);
const char *sbt_egress_reason_name(unsigned int reason);
const char *sbt_egress_event_name(unsigned int verdict);

#endif
