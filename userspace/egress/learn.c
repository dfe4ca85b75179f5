// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Learn mode (learn.h): destinations aggregated per sandbox, the smallest
 * allowlist allowing them, and its dialects. Every rule's text is parsed
 * back with the allowlist parser: a proposal is never text --allowlist
 * would refuse.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "egress/learn.h"
#include "lib/io.h"
#include "egress/policy.h"

static const char *const format_names[SBT_LEARN_FORMATS] = { "sbtrace", "flags", "cilium",
							     "systemd" };

const char *sbt_learn_format_name(unsigned int f)
{
	for (unsigned int i = 0; i < SBT_LEARN_FORMATS; i++)
		if (f == 1u << i)
			return format_names[i];
	return NULL;
}

int sbt_learn_formats_parse(const char *arg, unsigned int *mask, const char **bad, size_t *bad_len)
{
	const char *s = arg;

	for (;;) {
		size_t len = strcspn(s, ",");
		unsigned int i;

		for (i = 0; i < SBT_LEARN_FORMATS; i++)
			if (strlen(format_names[i]) == len && memcmp(s, format_names[i], len) == 0)
				break;
		if (i == SBT_LEARN_FORMATS) {
			*bad = s;
			*bad_len = len;
			return -EINVAL;
		}
		*mask |= 1u << i;
		if (!s[len])
			return 0;
		s += len + 1;
	}
}

void sbt_learn_init(struct sbt_learn *l)
{
	memset(l, 0, sizeof(*l));
}

void sbt_learn_free(struct sbt_learn *l)
{
	free(l->d);
	memset(l, 0, sizeof(*l));
}

/* A name a host rule can hold, lower-case without its trailing dot, into out. */
static bool rule_name(const char *name, char out[SBT_HOST_MAX])
{
	struct sbt_parse_error err;
	struct sbt_rule r;

	if (!name || !*name || strpbrk(name, " \t#") ||
	    sbt_rule_parse_arg(SBT_RULE_HOST, name, &r, &err) != 1)
		return false;
	memcpy(out, r.host, SBT_HOST_MAX);
	return true;
}

static bool same_dest(const struct sbt_learn_dest *a, const struct sbt_learn_dest *b)
{
	if (a->resolved != b->resolved || a->proto != b->proto || a->port != b->port)
		return false;
	return a->resolved ? strcmp(a->name, b->name) == 0 : memcmp(a->addr, b->addr, 16) == 0;
}

int sbt_learn_add(struct sbt_learn *l, const char *name, const uint8_t addr[16], uint16_t port,
		  uint8_t proto, uint64_t count)
{
	struct sbt_learn_dest d = { .proto = proto, .port = port, .connects = count };

	if ((proto != SBT_PROTO_TCP && proto != SBT_PROTO_UDP) || !port)
		return -EINVAL; /* port 0 is no destination (nor a rule's port) */
	d.resolved = rule_name(name, d.name);
	if (!d.resolved)
		memcpy(d.addr, addr, 16);
	for (size_t i = 0; i < l->n; i++)
		if (same_dest(&l->d[i], &d)) {
			l->d[i].connects += count;
			return 0;
		}
	if (l->n >= SBT_LEARN_MAX) {
		l->dropped += count;
		return -ENOSPC;
	}
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 16;
		struct sbt_learn_dest *n = realloc(l->d, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		l->d = n;
		l->cap = cap;
	}
	l->d[l->n++] = d;
	return 0;
}

/* ---- the proposal ------------------------------------------------------------- */

/* Resolved first; then by name or address. */
static int key_cmp(const struct sbt_learn_dest *a, const struct sbt_learn_dest *b)
{
	if (a->resolved != b->resolved)
		return a->resolved ? -1 : 1;
	return a->resolved ? strcmp(a->name, b->name) : memcmp(a->addr, b->addr, 16);
}

static int dest_cmp(const void *x, const void *y)
{
	const struct sbt_learn_dest *a = x, *b = y;
	int c = key_cmp(a, b);

	if (c)
		return c;
	if (a->proto != b->proto)
		return a->proto < b->proto ? -1 : 1;
	return a->port < b->port ? -1 : a->port > b->port;
}

/* A preliminary rule: a destination key, a protocol (0: both), a port run. */
struct run {
	struct sbt_learn_dest key; /* resolved, name / addr */
	uint8_t proto;
	uint16_t lo, hi;
	uint64_t connects;
};

static int run_cmp(const void *x, const void *y)
{
	const struct run *a = x, *b = y;
	int c = key_cmp(&a->key, &b->key);

	if (c)
		return c;
	if (a->lo != b->lo)
		return a->lo < b->lo ? -1 : 1;
	if (a->hi != b->hi)
		return a->hi < b->hi ? -1 : 1;
	return a->proto < b->proto ? -1 : a->proto > b->proto;
}

/* A TCP and a UDP run of one key with the same ports: one rule for both. */
static size_t merge_protos(struct run *r, size_t n)
{
	size_t k = 0;

	qsort(r, n, sizeof(*r), run_cmp);
	for (size_t i = 0; i < n; i++) {
		if (k && key_cmp(&r[k - 1].key, &r[i].key) == 0 && r[k - 1].lo == r[i].lo &&
		    r[k - 1].hi == r[i].hi && r[k - 1].proto != r[i].proto && r[k - 1].proto) {
			r[k - 1].proto = 0;
			r[k - 1].connects += r[i].connects;
			continue;
		}
		r[k++] = r[i];
	}
	return k;
}

/* Run r as a rule, its text parsed back (the allowlist parser's canonical form). */
static int run_rule(const struct run *r, struct sbt_learn_rule *out)
{
	char text[SBT_RULE_TEXT_MAX + 64], addr[64], ports[16];
	struct sbt_parse_error err;
	bool v4 = memcmp(r->key.addr, "\0\0\0\0\0\0\0\0\0\0\xff\xff", 12) == 0;

	if (r->lo == r->hi)
		snprintf(ports, sizeof(ports), "%u", r->lo);
	else
		snprintf(ports, sizeof(ports), "%u-%u", r->lo, r->hi);
	if (!r->key.resolved)
		sbt_addr_str(r->key.addr, addr, sizeof(addr));
	snprintf(text, sizeof(text), "%s %s%s%s port %s%s%s", r->key.resolved ? "host" : "cidr",
		 r->key.resolved ? r->key.name : addr, r->key.resolved ? "" : "/",
		 r->key.resolved ? "" : (v4 ? "32" : "128"), ports, r->proto ? " proto " : "",
		 r->proto == SBT_PROTO_TCP   ? "tcp"
		 : r->proto == SBT_PROTO_UDP ? "udp"
					     : "");
	if (sbt_rule_parse(text, &out->rule, &err) != 1)
		return -EINVAL; /* cannot happen: names and addresses were checked */
	out->resolved = r->key.resolved;
	out->connects = r->connects;
	return 0;
}

static int rule_cmp(const void *x, const void *y)
{
	const struct sbt_learn_rule *a = x, *b = y;

	if (a->resolved != b->resolved)
		return a->resolved ? -1 : 1;
	return strcmp(a->rule.text, b->rule.text);
}

int sbt_learn_propose(const struct sbt_learn *l, struct sbt_learn_proposal *p)
{
	struct sbt_learn_dest *d;
	struct run *r;
	size_t nr = 0;

	memset(p, 0, sizeof(*p));
	if (!l->n)
		return 0; /* nothing ran: an empty allowlist */
	d = malloc(l->n * sizeof(*d));
	r = calloc(l->n, sizeof(*r));
	if (!d || !r) {
		free(d);
		free(r);
		return -ENOMEM;
	}
	memcpy(d, l->d, l->n * sizeof(*d));
	qsort(d, l->n, sizeof(*d), dest_cmp);
	for (size_t i = 0; i < l->n; i++) {
		struct run *last = nr ? &r[nr - 1] : NULL;

		if (last && key_cmp(&last->key, &d[i]) == 0 && last->proto == d[i].proto &&
		    (uint32_t)last->hi + 1 >= d[i].port) {
			last->hi = d[i].port;
			last->connects += d[i].connects;
			continue;
		}
		r[nr++] = (struct run){ .key = d[i],
					.proto = d[i].proto,
					.lo = d[i].port,
					.hi = d[i].port,
					.connects = d[i].connects };
	}
	free(d);
	nr = merge_protos(r, nr);
	p->r = calloc(nr, sizeof(*p->r)); /* nr >= 1: l->n destinations make a run at least */
	if (!p->r) {
		free(r);
		return -ENOMEM;
	}
	for (size_t i = 0; i < nr; i++)
		if (run_rule(&r[i], &p->r[p->n]) == 0)
			p->nr_unresolved += !p->r[p->n++].resolved;
	free(r);
	qsort(p->r, p->n, sizeof(*p->r), rule_cmp);
	return 0;
}

void sbt_learn_proposal_free(struct sbt_learn_proposal *p)
{
	free(p->r);
	memset(p, 0, sizeof(*p));
}

/* ---- dialects ------------------------------------------------------------------- */

#define UNRESOLVED_COMMENT "# never resolved: a hard-coded address"

static char *render_sbtrace(const struct sbt_learn_proposal *p)
{
	struct sbt_strbuf b = { 0 };

	sbt_strbuf_add(
		&b, "# proposed by sbtrace --egress learn: what ran, allowed (--allowlist FILE)\n");
	for (size_t i = 0; i < p->n; i++) {
		if (!p->r[i].resolved)
			sbt_strbuf_add(&b, UNRESOLVED_COMMENT "\n");
		sbt_strbuf_add(&b, "%s\n", p->r[i].rule.text);
	}
	return sbt_strbuf_done(&b);
}

/* The rule's text without its keyword: the value of --allow-host / --allow-cidr. */
static const char *rule_arg(const struct sbt_rule *r)
{
	const char *sp = strchr(r->text, ' ');

	return sp ? sp + 1 : r->text;
}

/* Shell words: each value single-quoted (names and addresses hold no quote). */
static char *render_flags(const struct sbt_learn_proposal *p)
{
	struct sbt_strbuf b = { 0 };

	for (size_t i = 0; i < p->n; i++)
		sbt_strbuf_add(&b, "%s '%s'%s\n",
			       p->r[i].rule.kind == SBT_RULE_HOST ? "--allow-host" : "--allow-cidr",
			       rule_arg(&p->r[i].rule), i + 1 < p->n ? " \\" : "");
	return sbt_strbuf_done(&b);
}

/* A cidr rule's network as ADDR/LEN (IPv4 as written: /32, not /128). */
static void cidr_text(const struct sbt_rule *r, char *buf, size_t len)
{
	char a[64];
	bool v4 = memcmp(r->addr, "\0\0\0\0\0\0\0\0\0\0\xff\xff", 12) == 0 && r->prefix >= 96;

	sbt_addr_str(r->addr, a, sizeof(a));
	snprintf(buf, len, "%s/%u", a, v4 ? r->prefix - 96u : r->prefix);
}

/* A DNS-1123 name for metadata.name: "sbtrace-learned-" and the sandbox's [a-z0-9-]. */
static void policy_name(const char *sandbox, char *out, size_t len)
{
	size_t o = (size_t)snprintf(out, len, "sbtrace-learned");

	if (sandbox && *sandbox && o + 1 < len)
		out[o++] = '-';
	for (const char *s = sandbox ? sandbox : ""; *s && o + 1 < len && o < 63; s++) {
		char c = *s >= 'A' && *s <= 'Z' ? (char)(*s - 'A' + 'a') : *s;

		out[o++] = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ? c : '-';
	}
	while (o && out[o - 1] == '-')
		o--;
	out[o] = '\0';
}

static json_object *cilium_ports(const struct sbt_rule *r)
{
	json_object *port = json_object_new_object(), *ports = json_object_new_array(),
		    *tp = json_object_new_object(), *list = json_object_new_array();
	char n[8];

	snprintf(n, sizeof(n), "%u", r->port_lo);
	json_object_object_add(port, "port", json_object_new_string(n));
	if (r->port_hi != r->port_lo)
		json_object_object_add(port, "endPort", json_object_new_int(r->port_hi));
	json_object_object_add(port, "protocol",
			       json_object_new_string(r->proto == SBT_PROTO_TCP	  ? "TCP"
						      : r->proto == SBT_PROTO_UDP ? "UDP"
										  : "ANY"));
	json_object_array_add(ports, port);
	json_object_object_add(tp, "ports", ports);
	json_object_array_add(list, tp);
	return list;
}

/* The egress rule that lets the pod ask kube-dns, and lets Cilium see the names (toFQDNs). */
static json_object *cilium_dns_rule(void)
{
	json_object *rule = json_object_new_object(), *ep = json_object_new_object(),
		    *labels = json_object_new_object(), *eps = json_object_new_array(),
		    *port = json_object_new_object(), *ports = json_object_new_array(),
		    *tp = json_object_new_object(), *tps = json_object_new_array(),
		    *dns = json_object_new_array(), *pat = json_object_new_object(),
		    *rules = json_object_new_object();

	json_object_object_add(labels, "k8s:io.kubernetes.pod.namespace",
			       json_object_new_string("kube-system"));
	json_object_object_add(labels, "k8s:k8s-app", json_object_new_string("kube-dns"));
	json_object_object_add(ep, "matchLabels", labels);
	json_object_array_add(eps, ep);
	json_object_object_add(rule, "toEndpoints", eps);
	json_object_object_add(port, "port", json_object_new_string("53"));
	json_object_object_add(port, "protocol", json_object_new_string("ANY"));
	json_object_array_add(ports, port);
	json_object_object_add(tp, "ports", ports);
	json_object_object_add(pat, "matchPattern", json_object_new_string("*"));
	json_object_array_add(dns, pat);
	json_object_object_add(rules, "dns", dns);
	json_object_object_add(tp, "rules", rules);
	json_object_array_add(tps, tp);
	json_object_object_add(rule, "toPorts", tps);
	return rule;
}

static char *render_cilium(const struct sbt_learn_proposal *p, const char *sandbox)
{
	json_object *doc = json_object_new_object(), *meta = json_object_new_object(),
		    *spec = json_object_new_object(), *egress = json_object_new_array();
	char name[64], *out;

	policy_name(sandbox, name, sizeof(name));
	json_object_object_add(doc, "apiVersion", json_object_new_string("cilium.io/v2"));
	json_object_object_add(doc, "kind", json_object_new_string("CiliumNetworkPolicy"));
	json_object_object_add(meta, "name", json_object_new_string(name));
	json_object_object_add(doc, "metadata", meta);
	json_object_object_add(spec, "endpointSelector", json_object_new_object());
	json_object_array_add(egress, cilium_dns_rule());
	for (size_t i = 0; i < p->n; i++) {
		const struct sbt_rule *r = &p->r[i].rule;
		json_object *rule = json_object_new_object(), *to = json_object_new_array();

		if (r->kind == SBT_RULE_HOST) {
			json_object *m = json_object_new_object();

			json_object_object_add(m, "matchName", json_object_new_string(r->host));
			json_object_array_add(to, m);
			json_object_object_add(rule, "toFQDNs", to);
		} else {
			char a[80];

			cidr_text(r, a, sizeof(a));
			json_object_array_add(to, json_object_new_string(a));
			json_object_object_add(rule, "toCIDR", to);
		}
		json_object_object_add(rule, "toPorts", cilium_ports(r));
		json_object_array_add(egress, rule);
	}
	json_object_object_add(spec, "egress", egress);
	json_object_object_add(doc, "spec", spec);
	out = strdup(json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PRETTY |
								 JSON_C_TO_STRING_SPACED |
								 JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(doc);
	return out;
}

/* systemd filters addresses, neither names nor ports: names become comments. */
static char *render_systemd(const struct sbt_learn_proposal *p)
{
	struct sbt_strbuf b = { 0 };

	sbt_strbuf_add(&b, "# proposed by sbtrace --egress learn; systemd filters addresses only:\n"
			   "# names and ports are not expressible here\n");
	for (size_t i = 0; i < p->n; i++)
		if (p->r[i].resolved)
			sbt_strbuf_add(&b, "# not expressible: %s\n", p->r[i].rule.text);
	sbt_strbuf_add(&b, "IPAddressDeny=any\n");
	for (size_t i = 0; i < p->n; i++) {
		char a[80];

		if (p->r[i].resolved)
			continue;
		cidr_text(&p->r[i].rule, a, sizeof(a));
		sbt_strbuf_add(&b, UNRESOLVED_COMMENT " (%s)\nIPAddressAllow=%s\n",
			       p->r[i].rule.text, a);
	}
	return sbt_strbuf_done(&b);
}

char *sbt_learn_render(const struct sbt_learn_proposal *p, unsigned int f, const char *sandbox)
{
	switch (f) {
	case SBT_LEARN_SBTRACE:
		return render_sbtrace(p);
	case SBT_LEARN_FLAGS:
		return render_flags(p);
	case SBT_LEARN_CILIUM:
		return render_cilium(p, sandbox);
	case SBT_LEARN_SYSTEMD:
		return render_systemd(p);
	}
	return NULL;
}
