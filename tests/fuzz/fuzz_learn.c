// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target: learn mode's proposal (userspace/egress/learn.c) from
 * destinations a sandbox chose (its names come from its own DNS queries).
 * The input is records of: flags (bit 0: a name follows), a 16-byte
 * address, a port (2 bytes), a protocol byte, a name length and the name.
 *
 * Invariants: every destination added is allowed by a rule of the proposal
 * (its name, or its address when the name is not one a rule can hold; its
 * port in the rule's range; its protocol, or none), there are no more rules
 * than destinations, every line of the sbtrace text is a comment or a rule
 * the allowlist parser takes, every flags line holds one quoted rule, and
 * the Cilium text is JSON.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "egress/learn.h"
#include "egress/policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int cond)
{
	if (!cond)
		abort();
}

#define MAX_DESTS 256

static bool allows(const struct sbt_learn_rule *lr, const struct sbt_learn_dest *d)
{
	const struct sbt_rule *r = &lr->rule;

	if (d->port < r->port_lo || d->port > r->port_hi ||
	    (r->proto != SBT_PROTO_ANY && r->proto != d->proto))
		return false;
	if (d->resolved)
		return r->kind == SBT_RULE_HOST && strcmp(r->host, d->name) == 0;
	return r->kind == SBT_RULE_CIDR && r->prefix == 128 && memcmp(r->addr, d->addr, 16) == 0;
}

static void check_lines(char *text, bool flags)
{
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		struct sbt_parse_error err;
		struct sbt_rule r;

		if (flags) {
			check(strncmp(line, "--allow-", 8) == 0);
			check(strchr(line, '\'') && strchr(strchr(line, '\'') + 1, '\''));
			continue;
		}
		check(line[0] == '#' || sbt_rule_parse(line, &r, &err) == 1);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sbt_learn l;
	struct sbt_learn_proposal p;
	size_t o = 0;

	sbt_learn_init(&l);
	while (o + 21 <= size && l.n < MAX_DESTS) {
		uint8_t fl = data[o], addr[16], proto;
		uint16_t port;
		char name[300] = "";
		size_t nl;

		memcpy(addr, data + o + 1, 16);
		port = (uint16_t)(data[o + 17] << 8 | data[o + 18]);
		proto = data[o + 19] & 1 ? SBT_PROTO_UDP : SBT_PROTO_TCP;
		nl = data[o + 20];
		o += 21;
		if (nl > size - o)
			nl = size - o;
		if (nl >= sizeof(name))
			nl = sizeof(name) - 1;
		memcpy(name, data + o, nl);
		name[nl] = '\0';
		o += nl;
		check(sbt_learn_add(&l, fl & 1 ? name : NULL, addr, port, proto, 1) ==
		      (port ? 0 : -EINVAL));
	}
	check(sbt_learn_propose(&l, &p) == 0);
	check(p.n <= l.n);
	for (size_t i = 0; i < l.n; i++) {
		bool ok = false;

		for (size_t k = 0; k < p.n && !ok; k++)
			ok = allows(&p.r[k], &l.d[i]);
		check(ok);
	}
	for (unsigned int f = 1; f < 1u << SBT_LEARN_FORMATS; f <<= 1) {
		char *s = sbt_learn_render(&p, f, "fuzz");

		check(s != NULL);
		if (f == SBT_LEARN_SBTRACE || f == SBT_LEARN_FLAGS)
			check_lines(s, f == SBT_LEARN_FLAGS);
		if (f == SBT_LEARN_CILIUM) {
			json_object *j = json_tokener_parse(s);

			check(j != NULL);
			json_object_put(j);
		}
		free(s);
	}
	sbt_learn_proposal_free(&p);
	sbt_learn_free(&l);
	return 0;
}
