// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Egress policy: compilation of rules and the floor to LPM entries, the
 * reference verdict, and the BPF form of an entry (see policy_compile.h).
 */
#include "egress/policy_compile.h"
#include "egress/policy.h"
#include "egress/policy_int.h"
#include "sbtrace.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ADDR_TEXT_MAX 64

/* --- compilation ------------------------------------------------------------ */

#define MAPPED(a, b, c, d)                                                                         \
	{                                                                                          \
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, a, b, c, d                               \
	}

/* 64:ff9b::a.b.c.d (NAT64, RFC 6052) and 2002:AABB:CCDD::/48 (6to4, RFC 3056) */
#define NAT64(a, b, c, d)                                                                          \
	{                                                                                          \
		0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0, a, b, c, d                            \
	}
#define SIX2FOUR(a, b, c, d)                                                                       \
	{                                                                                          \
		0x20, 0x02, a, b, c, d                                                             \
	}
/* ::ffff:0:a.b.c.d (SIIT's IPv4-translated, RFC 6145) and ::a.b.c.d (IPv4-compatible, RFC 4291) */
#define SIIT(a, b, c, d)                                                                           \
	{                                                                                          \
		0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0, a, b, c, d                               \
	}
#define COMPAT(a, b, c, d)                                                                         \
	{                                                                                          \
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, a, b, c, d                                     \
	}

/* The floor's IPv4 ranges as an embedding FORM holds them at prefix BASE (FORM's own bits). */
/* clang-format off */
#define FLOOR_V4(FORM, BASE)                                                    \
	{ FORM(169, 254, 0, 0), (BASE) + 16, true, "link-local", false },        \
	{ FORM(100, 100, 100, 200), (BASE) + 32, true, "metadata", false },      \
	{ FORM(192, 0, 0, 192), (BASE) + 32, true, "metadata", false },          \
	{ FORM(127, 0, 0, 0), (BASE) + 8, true, "loopback", false },             \
	{ FORM(0, 0, 0, 0), (BASE) + 8, true, "loopback", false }
/* clang-format on */

/*
 * The floor, then its IPv4 ranges as NAT64 and 6to4 embed them (a name that
 * answers 64:ff9b::a9fe:a9fe reaches 169.254.169.254 through a NAT64
 * gateway): those leave the sandbox's network namespace, so they are never
 * its own loopback (`embedded`).
 */
static const struct sbt_floor floor_list[] = {
	{ MAPPED(169, 254, 0, 0), 96 + 16, false, "link-local", false },
	{ { 0xfe, 0x80 }, 10, false, "link-local", false },
	{ MAPPED(100, 100, 100, 200), 128, false, "metadata", false }, /* Alibaba Cloud */
	{ MAPPED(192, 0, 0, 192), 128, false, "metadata", false },     /* Oracle Cloud */
	/* AWS */
	{ { 0xfd, 0x00, 0x0e, 0xc2, [14] = 0x02, [15] = 0x54 }, 128, false, "metadata", false },
	{ MAPPED(127, 0, 0, 0), 96 + 8, false, "loopback", false },
	{ { [15] = 1 }, 128, false, "loopback", false },
	/* 0.0.0.0 reaches the local host */
	{ MAPPED(0, 0, 0, 0), 96 + 8, false, "loopback", false },
	{ { 0 }, 128, false, "loopback", false },
	FLOOR_V4(NAT64, 96),
	FLOOR_V4(SIX2FOUR, 16),
	FLOOR_V4(SIIT, 96),
	/* (::0.0.0.0/104 holds :: and ::1, above) */
	FLOOR_V4(COMPAT, 96),
	/*
	 * Answers only: a name's address there is refused unless a cidr rule
	 * covers it; a cidr rule naming them opens them (sbt_policy_answer_floor).
	 */
	{ MAPPED(255, 255, 255, 255), 128, false, "broadcast", true },
	{ MAPPED(224, 0, 0, 0), 96 + 4, false, "multicast", true },
	{ { 0xff }, 8, false, "multicast", true },
};

#define NR_FLOOR (sizeof(floor_list) / sizeof(floor_list[0]))
_Static_assert(NR_FLOOR <= SBT_FLOOR_ENTRIES_MAX, "the floor outgrew SBT_FLOOR_ENTRIES_MAX");

const struct sbt_floor *sbt_policy_floor(size_t *n)
{
	if (n)
		*n = NR_FLOOR;
	return floor_list;
}

static int floor_match(const uint8_t addr[16])
{
	int best = -1;

	for (size_t f = 0; f < NR_FLOOR; f++)
		if (sbt_prefix_covers(floor_list[f].addr, floor_list[f].prefix, addr) &&
		    (best < 0 || floor_list[f].prefix > floor_list[best].prefix))
			best = (int)f;
	return best;
}

/* The IPv4 address at a[off] (xor-ed with x) as ::ffff:a.b.c.d. */
static void v4_at(const uint8_t a[16], size_t off, uint8_t x, uint8_t out[16])
{
	memset(out, 0, 10);
	out[10] = out[11] = 0xff;
	for (int i = 0; i < 4; i++)
		out[12 + i] = a[off + (size_t)i] ^ x;
}

/*
 * The IPv4 addresses the forms of `a` that embed one would reach, into v4s:
 * SIIT and IPv4-compatible, NAT64 (64:ff9b::/96 and the local-use
 * 64:ff9b:1::/48 with a /96 inside it), 6to4, and Teredo (its server, and its
 * client with the bits inverted, RFC 4380). Their count.
 */
static int embedded_v4(const uint8_t a[16], uint8_t v4s[2][16])
{
	static const uint8_t zero[12],
		siit[12] = { [8] = 0xff, [9] = 0xff }, wkp[12] = { 0, 0x64, 0xff, 0x9b },
		local[6] = { 0, 0x64, 0xff, 0x9b, 0, 1 }, teredo[4] = { 0x20, 0x01, 0, 0 };

	if (!memcmp(a, zero, 12) || !memcmp(a, siit, 12) || !memcmp(a, wkp, 12) ||
	    !memcmp(a, local, 6)) {
		v4_at(a, 12, 0, v4s[0]);
		return 1;
	}
	if (a[0] == 0x20 && a[1] == 0x02) {
		v4_at(a, 2, 0, v4s[0]);
		return 1;
	}
	if (!memcmp(a, teredo, 4)) {
		v4_at(a, 4, 0, v4s[0]);
		v4_at(a, 12, 0xff, v4s[1]);
		return 2;
	}
	return 0;
}

int sbt_policy_floor_of(const uint8_t addr[16])
{
	uint8_t v4s[2][16];
	int best = floor_match(addr), n;

	if (best >= 0 || sbt_addr_is_mapped(addr))
		return best;
	n = embedded_v4(addr, v4s);
	for (int i = 0; i < n && best < 0; i++)
		best = floor_match(v4s[i]);
	return best;
}

int sbt_policy_answer_floor(const uint8_t addr[16], const struct sbt_rule *rules, size_t nr_rules)
{
	int f = sbt_policy_floor_of(addr);

	if (f < 0 || !floor_list[f].answer_only)
		return f;
	for (size_t i = 0; i < nr_rules; i++)
		if (rules[i].kind == SBT_RULE_CIDR &&
		    sbt_prefix_covers(rules[i].addr, rules[i].prefix, addr))
			return -1;
	return f;
}

struct prefix_key {
	uint8_t addr[16];
	uint8_t prefix;
	int floor_idx; /* -1: not a floor prefix */
};

static int key_cmp(const void *a, const void *b)
{
	const struct prefix_key *x = a, *y = b;

	if (x->prefix != y->prefix)
		return x->prefix < y->prefix ? -1 : 1;
	return memcmp(x->addr, y->addr, 16);
}

struct rule_ref {
	const struct sbt_rule *r;
	size_t idx;
};

static int ref_cmp(const void *a, const void *b)
{
	const struct rule_ref *x = a, *y = b;

	if (x->r->id != y->r->id)
		return x->r->id < y->r->id ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static int check_rule(const struct sbt_rule *r, size_t i, struct sbt_parse_error *err)
{
	uint8_t net[16];

	if (r->kind != SBT_RULE_CIDR) {
		sbt_policy_set_err(
			err, 0,
			"rule %zu: only cidr rules can be compiled (resolve host rules first)",
			i + 1);
		return -EINVAL;
	}
	if (r->id == 0) {
		sbt_policy_set_err(
			err, 0, "rule %zu: rule id 0 is reserved for deny (ids start at 1)", i + 1);
		return -EINVAL;
	}
	if (r->prefix > 128 || r->port_lo > r->port_hi ||
	    (r->proto != SBT_PROTO_ANY && r->proto != SBT_PROTO_TCP && r->proto != SBT_PROTO_UDP)) {
		sbt_policy_set_err(err, 0, "rule %zu: invalid prefix, port range or protocol",
				   i + 1);
		return -EINVAL;
	}
	memcpy(net, r->addr, 16);
	sbt_prefix_mask(net, r->prefix);
	if (memcmp(net, r->addr, 16) != 0) {
		sbt_policy_set_err(err, 0, "rule %zu: host bits set below the prefix", i + 1);
		return -EINVAL;
	}
	return 0;
}

int sbt_policy_compile(const struct sbt_rule *rules, size_t nr_rules, struct sbt_policy_entry *out,
		       size_t max, struct sbt_parse_error *err)
{
	struct prefix_key *keys = NULL;
	struct rule_ref *refs = NULL;
	size_t nk = 0, n = 0, i, j, f;
	char p[ADDR_TEXT_MAX + 8];
	int ret;

	if (err)
		memset(err, 0, sizeof(*err));
	if (nr_rules && !rules)
		return -EINVAL;
	for (i = 0; i < nr_rules; i++) {
		ret = check_rule(&rules[i], i, err);
		if (ret)
			return ret;
	}
	if (nr_rules > (SIZE_MAX / sizeof(*keys)) - NR_FLOOR)
		return -E2BIG;
	keys = calloc(nr_rules + NR_FLOOR, sizeof(*keys));
	refs = calloc(nr_rules ? nr_rules : 1, sizeof(*refs));
	if (!keys || !refs) {
		sbt_policy_set_err(err, 0, "out of memory compiling the policy");
		ret = -ENOMEM;
		goto out;
	}
	for (f = 0; f < NR_FLOOR; f++) {
		if (floor_list[f].answer_only) /* never the kernel's: a rule may name them */
			continue;
		memcpy(keys[nk].addr, floor_list[f].addr, 16);
		keys[nk].prefix = floor_list[f].prefix;
		keys[nk++].floor_idx = (int)f;
	}
	for (i = 0; i < nr_rules; i++, nk++) {
		memcpy(keys[nk].addr, rules[i].addr, 16);
		keys[nk].prefix = rules[i].prefix;
		keys[nk].floor_idx = -1;
		refs[i].r = &rules[i];
		refs[i].idx = i;
	}
	qsort(keys, nk, sizeof(*keys), key_cmp);
	qsort(refs, nr_rules, sizeof(*refs), ref_cmp);
	/* merge duplicates, keeping the floor flag of any of them */
	for (i = 0; i < nk; i++) {
		if (n && key_cmp(&keys[n - 1], &keys[i]) == 0) {
			if (keys[i].floor_idx >= 0)
				keys[n - 1].floor_idx = keys[i].floor_idx;
			continue;
		}
		keys[n++] = keys[i];
	}
	if (n > max || n > INT32_MAX) {
		sbt_policy_set_err(
			err, 0,
			"too many policy entries (%zu, max %zu): use fewer or broader rules", n,
			max);
		ret = -E2BIG;
		goto out;
	}

	for (i = 0; i < n; i++) {
		struct sbt_policy_entry *e = &out[i];
		int cut = 0; /* rules shorter than the longest floor above the entry stay out */

		memset(e, 0, sizeof(*e));
		memcpy(e->addr, keys[i].addr, 16);
		e->prefix = keys[i].prefix;
		e->floor = keys[i].floor_idx >= 0;
		e->floor_idx = e->floor ? (uint32_t)keys[i].floor_idx : 0;
		for (f = 0; f < NR_FLOOR; f++)
			if (!floor_list[f].answer_only && floor_list[f].prefix <= e->prefix &&
			    sbt_prefix_covers(floor_list[f].addr, floor_list[f].prefix, e->addr) &&
			    floor_list[f].prefix > cut)
				cut = floor_list[f].prefix;

		for (j = 0; j < nr_rules; j++) {
			const struct sbt_rule *r = refs[j].r;
			struct sbt_policy_port *pp;
			size_t k;

			if (r->prefix > e->prefix || r->prefix < cut ||
			    !sbt_prefix_covers(r->addr, r->prefix, e->addr))
				continue;
			for (k = 0; k < e->nr_ports; k++)
				if (e->ports[k].lo == r->port_lo && e->ports[k].hi == r->port_hi &&
				    e->ports[k].proto == (uint8_t)r->proto)
					break;
			if (k < e->nr_ports)
				continue;
			if (e->nr_ports == SBT_POLICY_PORTS) {
				sbt_prefix_str(e->addr, e->prefix, p, sizeof(p));
				sbt_policy_set_err(
					err, 0,
					"too many port/proto alternatives for %s (max %d): merge "
					"rules",
					p, SBT_POLICY_PORTS);
				ret = -E2BIG;
				goto out;
			}
			pp = &e->ports[e->nr_ports++];
			pp->lo = r->port_lo;
			pp->hi = r->port_hi;
			pp->proto = (uint8_t)r->proto;
			pp->rule_id = r->id;
		}
	}
	ret = (int)n;
out:
	free(keys);
	free(refs);
	return ret;
}

uint32_t sbt_policy_verdict(const struct sbt_policy_entry *entries, size_t n,
			    const uint8_t addr[16], uint16_t port, uint8_t proto, bool *floor)
{
	const struct sbt_policy_entry *best = NULL;
	size_t i;

	for (i = 0; i < n; i++)
		if ((!best || entries[i].prefix > best->prefix) &&
		    sbt_prefix_covers(entries[i].addr, entries[i].prefix, addr))
			best = &entries[i];
	if (floor)
		*floor = best && best->floor;
	if (!best)
		return 0;
	for (i = 0; i < best->nr_ports && i < SBT_POLICY_PORTS; i++) {
		const struct sbt_policy_port *pp = &best->ports[i];

		if ((pp->proto == SBT_PROTO_ANY || pp->proto == proto) && pp->lo <= port &&
		    port <= pp->hi)
			return pp->rule_id;
	}
	return 0;
}

/* The longest floor prefix covering an entry, or -1. */
static int covering_floor(const struct sbt_floor *floor, size_t nfloor,
			  const struct sbt_policy_entry *e)
{
	int best = -1;

	for (size_t f = 0; f < nfloor; f++) {
		uint8_t p = floor[f].prefix;
		size_t bytes = p / 8;
		uint8_t mask = (uint8_t)(0xff << (8 - p % 8));

		if (floor[f].answer_only || e->prefix < p ||
		    memcmp(e->addr, floor[f].addr, bytes) != 0)
			continue;
		if (p % 8 && (e->addr[bytes] & mask) != (floor[f].addr[bytes] & mask))
			continue;
		if (best < 0 || floor[f].prefix > floor[best].prefix)
			best = (int)f;
	}
	return best;
}

void sbt_policy_bpf_entry(const struct sbt_policy_entry *e, uint32_t slot,
			  struct sbt_policy_key *key, struct sbt_policy_val *val)
{
	size_t nfloor;
	const struct sbt_floor *floor = sbt_policy_floor(&nfloor);
	int fidx = e->floor ? (int)e->floor_idx : covering_floor(floor, nfloor, e);

	memset(key, 0, sizeof(*key));
	key->prefixlen = 32 + e->prefix;
	key->slot = slot;
	memcpy(key->addr, e->addr, 16);
	memset(val, 0, sizeof(*val));
	if (fidx >= 0) {
		val->flags = SBT_POLICY_FLOOR;
		val->floor_idx = (uint32_t)fidx;
		val->floor_kind = strcmp(floor[fidx].what, "loopback") == 0 && !floor[fidx].embedded
					  ? SBT_FLOOR_LOOPBACK
				  : strcmp(floor[fidx].what, "metadata") == 0
					  ? SBT_FLOOR_METADATA
					  : SBT_FLOOR_LINK_LOCAL;
	}
	val->nr_ports = (uint32_t)e->nr_ports;
	for (size_t j = 0; j < e->nr_ports && j < SBT_POLICY_PORTS_MAX; j++) {
		val->ports[j].lo = e->ports[j].lo;
		val->ports[j].hi = e->ports[j].hi;
		val->ports[j].proto = e->ports[j].proto;
		val->ports[j].rule_id = e->ports[j].rule_id;
	}
}
