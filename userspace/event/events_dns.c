// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* DnsQuery and DnsAnswer as JSON (see dnsev.h and the events schema). */
#include <stdio.h>
#include <stdlib.h>

#include "egress/dnsev.h"
#include "egress/policy.h"
#include "event/envelope.h"
#include "event/events_dns.h"
#include "event/kinds.h"
#include "trace/tracer.h"

void sbt_dns_event_free(struct sbt_dns_event *ev)
{
	free(ev->addrs);
	free(ev->floored);
	free(ev->floored_idx);
	ev->addrs = ev->floored = NULL;
	ev->floored_idx = NULL;
	ev->nr_addrs = ev->nr_floored = 0;
}

static json_object *str_or_null(const char *s)
{
	return s ? json_object_new_string(s) : NULL;
}

static const char *qtype_name(uint16_t t, char *buf, size_t len)
{
	switch (t) {
	case SBT_DNS_TYPE_A:
		return "A";
	case SBT_DNS_TYPE_AAAA:
		return "AAAA";
	case SBT_DNS_TYPE_CNAME:
		return "CNAME";
	case 65:
		return "HTTPS";
	}
	snprintf(buf, len, "TYPE%u", (unsigned int)t);
	return buf;
}

static json_object *addrs_json(const struct sbt_dns_event *ev)
{
	json_object *a = json_object_new_array();

	for (size_t i = 0; i < ev->nr_addrs; i++) {
		json_object *o = json_object_new_object();
		char buf[64];

		sbt_addr_str(ev->addrs[i].addr, buf, sizeof(buf));
		json_object_object_add(o, "addr", json_object_new_string(buf));
		json_object_object_add(o, "ttl", json_object_new_int64(ev->addrs[i].ttl));
		json_object_array_add(a, o);
	}
	return a;
}

static json_object *floored_json(const struct sbt_dns_event *ev)
{
	json_object *a = json_object_new_array();

	for (size_t i = 0; i < ev->nr_floored; i++) {
		json_object *o = json_object_new_object();
		char buf[64];

		sbt_addr_str(ev->floored[i].addr, buf, sizeof(buf));
		json_object_object_add(o, "addr", json_object_new_string(buf));
		json_object_object_add(o, "reason", json_object_new_string("floor"));
		json_object_object_add(o, "floor",
				       str_or_null(sbt_egress_floor_text(ev->floored_idx[i])));
		json_object_array_add(a, o);
	}
	return a;
}

json_object *sbt_event_dns(const struct sbt_dns_event *ev, const char *sandbox, const char *rule)
{
	json_object *o =
		sbt_event_new(sbt_event_kind_name(SBT_EV_DNS, ev->answer), ev->ts, sandbox);
	char tbuf[16];

	json_object_object_add(o, "name", json_object_new_string(ev->name));
	json_object_object_add(o, "qtype",
			       json_object_new_string(qtype_name(ev->qtype, tbuf, sizeof(tbuf))));
	json_object_object_add(o, "proto", json_object_new_string(ev->proto == 6 ? "tcp" : "udp"));
	json_object_object_add(o, "verdict",
			       json_object_new_string(ev->allowed ? "allowed" : "denied"));
	json_object_object_add(o, "reason", str_or_null(ev->reason));
	json_object_object_add(o, "reply", str_or_null(ev->reply));
	if (ev->rule_id) {
		json_object *r = json_object_new_object();

		json_object_object_add(r, "id", json_object_new_int64(ev->rule_id));
		json_object_object_add(r, "text", str_or_null(rule));
		json_object_object_add(o, "rule", r);
	} else {
		json_object_object_add(o, "rule", NULL);
	}
	if (!ev->answer)
		return o;
	json_object_object_add(o, "upstream", str_or_null(ev->status));
	json_object_object_add(o, "ttl", json_object_new_int64(ev->ttl));
	json_object_object_add(o, "grace_s", json_object_new_int64(ev->grace_s));
	json_object_object_add(o, "addrs", addrs_json(ev));
	json_object_object_add(o, "floored", floored_json(ev));
	return o;
}

json_object *sbt_json_dns(const struct sbt_event *ev)
{
	return sbt_event_dns(ev->dns.rec, ev->sandbox ? ev->sandbox->name : NULL, ev->dns.rule);
}
