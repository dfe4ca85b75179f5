// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* AllowlistProposed as JSON (kinds.h, egress/learn.h and the events schema). */
#include <stdio.h>

#include <json-c/json.h>

#include "egress/learn.h"
#include "egress/policy.h"
#include "event/envelope.h"
#include "event/kinds.h"

static json_object *rule_json(const struct sbt_learn_rule *lr)
{
	const struct sbt_rule *r = &lr->rule;
	json_object *o = json_object_new_object();
	char a[64], cidr[80];

	json_object_object_add(o, "rule", json_object_new_string(r->text));
	json_object_object_add(o, "kind",
			       json_object_new_string(r->kind == SBT_RULE_HOST ? "host" : "cidr"));
	if (r->kind == SBT_RULE_HOST) {
		json_object_object_add(o, "host", json_object_new_string(r->host));
	} else {
		sbt_addr_str(r->addr, a, sizeof(a));
		snprintf(cidr, sizeof(cidr), "%s/%u", a, r->v4 ? r->prefix - 96u : r->prefix);
		json_object_object_add(o, "cidr", json_object_new_string(cidr));
	}
	json_object_object_add(o, "port_lo", json_object_new_int(r->port_lo));
	json_object_object_add(o, "port_hi", json_object_new_int(r->port_hi));
	json_object_object_add(
		o, "proto",
		r->proto == SBT_PROTO_ANY
			? NULL
			: json_object_new_string(r->proto == SBT_PROTO_TCP ? "tcp" : "udp"));
	json_object_object_add(o, "resolved", json_object_new_boolean(lr->resolved));
	if (!lr->resolved)
		json_object_object_add(
			o, "comment",
			json_object_new_string("never resolved: a hard-coded address"));
	json_object_object_add(o, "connects", json_object_new_int64((int64_t)lr->connects));
	return o;
}

json_object *sbt_json_allowlist(const struct sbt_event *ev)
{
	const struct sbt_ev_allowlist *al = &ev->allowlist;
	json_object *o = sbt_event_new("AllowlistProposed", ev->ts,
				       ev->sandbox ? ev->sandbox->name : NULL),
		    *rules = json_object_new_array(), *formats = json_object_new_object();

	for (size_t i = 0; i < al->p->n; i++)
		json_object_array_add(rules, rule_json(&al->p->r[i]));
	for (unsigned int i = 0; al->texts && i < SBT_LEARN_FORMATS; i++)
		if (al->texts[i])
			json_object_object_add(formats, sbt_learn_format_name(1u << i),
					       json_object_new_string(al->texts[i]));
	json_object_object_add(o, "rules", rules);
	json_object_object_add(o, "never_resolved",
			       json_object_new_int64((int64_t)al->p->nr_unresolved));
	json_object_object_add(o, "connects", json_object_new_int64((int64_t)al->connects));
	json_object_object_add(o, "complete",
			       json_object_new_boolean(!al->dropped && al->egress_complete));
	json_object_object_add(o, "dropped", json_object_new_int64((int64_t)al->dropped));
	json_object_object_add(o, "formats", formats);
	json_object_object_add(o, "learn_out", al->out ? json_object_new_string(al->out) : NULL);
	return o;
}
