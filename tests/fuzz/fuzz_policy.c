// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target: egress rule parsing and LPM compilation (policy.c).
 *
 * (a) Every input line goes through sbt_rule_parse (and sbt_rule_parse_arg
 *     without its keyword); a parsed rule must be well-formed and its
 *     canonical text must parse back to the same rule; an error shows at most
 *     a cut token, and nothing of a line that does not start like a rule.
 * (b) The parsed CIDR rules are compiled; the LPM verdict must agree with a
 *     brute-force reading of the rules for addresses taken from the input and
 *     from the rules themselves.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "egress/policy.h"
#include "egress/policy_compile.h"
#include "tests/common/policy_reference.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_RULES 64
#define MAX_INPUT 65536

static struct sbt_rule rules[MAX_RULES];
static struct sbt_policy_entry entries[MAX_RULES + SBT_FLOOR_ENTRIES_MAX];

static void check(int cond)
{
	if (!cond)
		abort();
}

static bool is_mapped(const uint8_t a[16])
{
	static const uint8_t pfx[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	return memcmp(a, pfx, sizeof(pfx)) == 0;
}

static bool same_rule(const struct sbt_rule *a, const struct sbt_rule *b)
{
	return a->kind == b->kind && !memcmp(a->addr, b->addr, 16) && a->prefix == b->prefix &&
	       a->v4 == b->v4 && !strcmp(a->host, b->host) && a->port_lo == b->port_lo &&
	       a->port_hi == b->port_hi && a->proto == b->proto && !strcmp(a->text, b->text);
}

/* Does the line start with a rule keyword, in any case (a trailing "\r\n" stripped)? */
static bool starts_with_keyword(const char *line)
{
	const char *s = line + strspn(line, " \t");
	size_t len = strlen(s), n;

	if (len && s[len - 1] == '\n')
		len--;
	if (len && s[len - 1] == '\r')
		len--;
	for (n = 0; n < len && s[n] != ' ' && s[n] != '\t';)
		n++;
	return n == 4 && (!strncasecmp(s, "cidr", 4) || !strncasecmp(s, "host", 4));
}

/*
 * An error names the column, and quotes nothing of a line that does not
 * start like a rule (whole_line: the line as read from a file, keyword
 * included). How much of a token is shown, cut, is test_policy's.
 */
static void check_error(const char *line, const struct sbt_parse_error *err, bool whole_line)
{
	size_t len = strlen(line);

	check(err->col >= 1 && err->col <= len + 1);
	check(err->msg[0] != '\0');
	check(memchr(err->msg, '\0', sizeof(err->msg)) != NULL);
	if (whole_line && !starts_with_keyword(line))
		check(!strchr(err->msg, '\''));
}

static void check_rule(const struct sbt_rule *r)
{
	struct sbt_rule again;
	struct sbt_parse_error err;
	uint8_t a[16];
	char s[64];
	bool v4;
	unsigned int i;

	check(r->kind == SBT_RULE_CIDR || r->kind == SBT_RULE_HOST);
	check(r->port_lo <= r->port_hi);
	check(r->port_lo >= 1 || (r->port_lo == 0 && r->port_hi == 65535));
	check(r->proto == SBT_PROTO_ANY || r->proto == SBT_PROTO_TCP || r->proto == SBT_PROTO_UDP);
	check(r->id == 0);
	check(r->text[0] != '\0' && strlen(r->text) < sizeof(r->text));
	if (r->kind == SBT_RULE_CIDR) {
		check(r->prefix <= 128);
		check(r->v4 == (is_mapped(r->addr) && r->prefix >= 96));
		for (i = r->prefix; i < 128; i++)
			check(!((r->addr[i / 8] >> (7 - i % 8)) & 1)); /* no host bits */
		check(r->host[0] == '\0');
		/* the address text round-trips */
		sbt_addr_str(r->addr, s, sizeof(s));
		check(sbt_addr_parse(s, a, &v4) == 0);
		check(!memcmp(a, r->addr, 16));
		check(v4 == is_mapped(r->addr));
	} else {
		size_t len = strlen(r->host);

		check(len >= 1 && len <= SBT_HOST_MAX - 1);
		check(r->host[len - 1] != '.');
		for (i = 0; i < len; i++)
			check(!(r->host[i] >= 'A' && r->host[i] <= 'Z'));
	}
	check(sbt_rule_parse(r->text, &again, &err) == 1);
	check(same_rule(r, &again));
}

static void probe(size_t nr, int ne, const uint8_t a[16], uint16_t port, uint8_t proto)
{
	bool f1, f2;
	uint32_t got, want;

	got = sbt_policy_verdict(entries, (size_t)ne, a, port, proto, &f1);
	want = policy_reference(rules, nr, a, port, proto, &f2);
	check(got == want && f1 == f2);
}

static void check_compiled(const uint8_t *data, size_t size, size_t nr)
{
	struct sbt_parse_error err;
	const struct sbt_floor *fl;
	size_t nf, i, off;
	int ne, j;

	ne = sbt_policy_compile(rules, nr, entries, sizeof(entries) / sizeof(entries[0]), &err);
	if (ne == -E2BIG) {
		check(err.msg[0] != '\0');
		return;
	}
	check(ne > 0 && (size_t)ne <= sizeof(entries) / sizeof(entries[0]));
	for (j = 0; j < ne; j++) {
		check(entries[j].prefix <= 128);
		check(entries[j].nr_ports <= SBT_POLICY_PORTS);
		check(entries[j].floor || entries[j].nr_ports > 0);
		if (j)
			check(entries[j - 1].prefix < entries[j].prefix ||
			      (entries[j - 1].prefix == entries[j].prefix &&
			       memcmp(entries[j - 1].addr, entries[j].addr, 16) < 0));
	}

	fl = sbt_policy_floor(&nf);
	for (i = 0; i < nr + nf; i++) {
		const uint8_t *base = i < nr ? rules[i].addr : fl[i - nr].addr;
		unsigned int prefix = i < nr ? rules[i].prefix : fl[i - nr].prefix;
		uint8_t a[16];
		uint16_t port = i < nr ? rules[i].port_lo : 443;

		/* the network itself, its last address, and one just outside it */
		memcpy(a, base, 16);
		probe(nr, ne, a, port, SBT_PROTO_TCP);
		probe(nr, ne, a, (uint16_t)(port + 1), SBT_PROTO_UDP);
		for (j = (int)prefix; j < 128; j++)
			a[j / 8] |= (uint8_t)(0x80 >> (j % 8));
		probe(nr, ne, a, i < nr ? rules[i].port_hi : 0, SBT_PROTO_UDP);
		if (prefix) {
			memcpy(a, base, 16);
			a[(prefix - 1) / 8] ^= (uint8_t)(0x80 >> ((prefix - 1) % 8));
			probe(nr, ne, a, port, SBT_PROTO_TCP);
		}
	}
	/* addresses and ports straight from the input bytes, some forced into IPv4 */
	for (off = 0; off + 19 <= size && off < 19 * 16; off += 19) {
		uint8_t a[16];

		memcpy(a, data + off, 16);
		if (data[off + 18] & 1) {
			memset(a, 0, 10);
			a[10] = a[11] = 0xff;
		}
		probe(nr, ne, a, (uint16_t)(data[off + 16] << 8 | data[off + 17]),
		      data[off + 18] & 2 ? SBT_PROTO_UDP : SBT_PROTO_TCP);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char buf[MAX_INPUT + 1];
	struct sbt_parse_error err;
	struct sbt_rule r;
	size_t nr = 0;
	char *line, *next;

	if (size > MAX_INPUT)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';

	for (line = buf; line; line = next) {
		char *sp;
		int ret;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';

		ret = sbt_rule_parse(line, &r, &err);
		check(ret >= -1 && ret <= 1);
		if (ret < 0) {
			check_error(line, &err, true);
		} else if (ret == 1) {
			check_rule(&r);
			if (r.kind == SBT_RULE_CIDR && nr < MAX_RULES) {
				rules[nr] = r;
				rules[nr].id = (uint32_t)nr + 1;
				nr++;
			}
		}

		/* the same text as an --allow-* argument, keyword dropped */
		sp = line + strspn(line, " \t");
		if (!strncmp(sp, "cidr", 4) || !strncmp(sp, "host", 4)) {
			enum sbt_rule_kind kind = sp[0] == 'c' ? SBT_RULE_CIDR : SBT_RULE_HOST;
			struct sbt_rule r2;

			ret = sbt_rule_parse_arg(kind, sp + 4, &r2, &err);
			check(ret == -1 || ret == 1);
			if (ret < 0) {
				check_error(sp + 4, &err, false);
			} else {
				check_rule(&r2);
				check(r2.kind == kind);
			}
		}
	}

	check_compiled(data, size, nr);
	return 0;
}
