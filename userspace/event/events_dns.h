/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* DnsQuery and DnsAnswer as JSON (egress/dnsev.h's events; the events schema). */
#ifndef SBT_EVENTS_DNS_H
#define SBT_EVENTS_DNS_H

#include <json-c/json.h>

#include "egress/dnsev.h"

/* DnsQuery / DnsAnswer; `rule` is the text of ev->rule_id. New reference. */
json_object *sbt_event_dns(const struct sbt_dns_event *ev, const char *sandbox, const char *rule);

#endif
