// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for egress rule parsing and LPM compilation (userspace/policy.c). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "egress/policy.h"
#include "egress/policy_compile.h"
#include "sbtrace.h"
#include "tests/common/policy_reference.h"

/* entries of the floor alone: its own, and its NAT64 and 6to4 forms */
#define NR_FLOOR_ENTRIES 29 /* the kernel's: answer-only entries are not compiled */

#define MAX_ENTRIES 512

/* --- parser table ---------------------------------------------------------- */

struct parse_case {
	const char *line;
	int ret;
	/* ret == 1 */
	enum sbt_rule_kind kind;
	const char *target; /* CIDR: sbt_addr_str of the network; HOST: the host */
	unsigned int prefix;
	bool v4;
	unsigned int lo, hi;
	enum sbt_proto proto;
	const char *text;
	/* ret == -1 */
	unsigned int col;
	const char *msg;
};

#define CIDR_(l, a, p, is_v4, plo, phi, pr, t)                                                     \
	{                                                                                          \
		.line = (l), .ret = 1, .kind = SBT_RULE_CIDR, .target = (a), .prefix = (p),        \
		.v4 = (is_v4), .lo = (plo), .hi = (phi), .proto = (pr), .text = (t)                \
	}
#define HOST_(l, h, plo, phi, pr, t)                                                               \
	{                                                                                          \
		.line = (l), .ret = 1, .kind = SBT_RULE_HOST, .target = (h), .lo = (plo),          \
		.hi = (phi), .proto = (pr), .text = (t)                                            \
	}
/* ANY expands to three arguments before CIDR_ / HOST_ count them */
#define CIDR(...) CIDR_(__VA_ARGS__)
#define HOST(...) HOST_(__VA_ARGS__)
#define NONE(l)                                                                                    \
	{                                                                                          \
		.line = (l), .ret = 0                                                              \
	}
#define BAD(l, c, m)                                                                               \
	{                                                                                          \
		.line = (l), .ret = -1, .col = (c), .msg = (m)                                     \
	}

#define ANY 0, 65535, SBT_PROTO_ANY
#define TCP SBT_PROTO_TCP
#define UDP SBT_PROTO_UDP

static const struct parse_case parse_cases[] = {
	/* prefixes and defaults */
	CIDR("cidr 0.0.0.0/0", "0.0.0.0", 96, true, ANY, "cidr 0.0.0.0/0"),
	CIDR("cidr ::/0", "::", 0, false, ANY, "cidr ::/0"),
	CIDR("cidr 192.0.2.1/32", "192.0.2.1", 128, true, ANY, "cidr 192.0.2.1/32"),
	CIDR("cidr 192.0.2.1", "192.0.2.1", 128, true, ANY, "cidr 192.0.2.1/32"),
	CIDR("cidr 2001:db8::1/128", "2001:db8::1", 128, false, ANY, "cidr 2001:db8::1/128"),
	CIDR("cidr 2001:DB8::1", "2001:db8::1", 128, false, ANY, "cidr 2001:db8::1/128"),
	CIDR("cidr ::/128", "::", 128, false, ANY, "cidr ::/128"),
	CIDR("cidr fe80::/10", "fe80::", 10, false, ANY, "cidr fe80::/10"),
	CIDR("cidr 192.0.2.0/24", "192.0.2.0", 120, true, ANY, "cidr 192.0.2.0/24"),
	CIDR("cidr 2001:0db8:0000:0000:0000:0000:0000:0000/32", "2001:db8::", 32, false, ANY,
	     "cidr 2001:db8::/32"),
	/* RFC 5952: the first longest zero run, never a single group */
	CIDR("cidr 2001:db8:0:0:1:0:0:1", "2001:db8::1:0:0:1", 128, false, ANY,
	     "cidr 2001:db8::1:0:0:1/128"),
	CIDR("cidr 2001:db8:0:1:0:0:0:1", "2001:db8:0:1::1", 128, false, ANY,
	     "cidr 2001:db8:0:1::1/128"),
	CIDR("cidr 1:2:3:4:5:6:7::", "1:2:3:4:5:6:7:0", 128, false, ANY,
	     "cidr 1:2:3:4:5:6:7:0/128"),
	/* IPv4-compatible (deprecated) is plain IPv6, printed in hex */
	CIDR("cidr ::1.2.3.4", "::102:304", 128, false, ANY, "cidr ::102:304/128"),
	/* IPv4-mapped IPv6 is the IPv4 rule */
	CIDR("cidr ::ffff:192.0.2.1", "192.0.2.1", 128, true, ANY, "cidr 192.0.2.1/32"),
	CIDR("cidr ::ffff:192.0.2.0/120", "192.0.2.0", 120, true, ANY, "cidr 192.0.2.0/24"),
	CIDR("cidr ::FFFF:c000:200/120", "192.0.2.0", 120, true, ANY, "cidr 192.0.2.0/24"),
	CIDR("cidr ::ffff:0:0/96", "0.0.0.0", 96, true, ANY, "cidr 0.0.0.0/0"),
	/* ports and protocols */
	CIDR("cidr 192.0.2.0/24 port 443", "192.0.2.0", 120, true, 443, 443, SBT_PROTO_ANY,
	     "cidr 192.0.2.0/24 port 443"),
	CIDR("cidr 192.0.2.0/24 port 1-65535", "192.0.2.0", 120, true, 1, 65535, SBT_PROTO_ANY,
	     "cidr 192.0.2.0/24 port 1-65535"),
	CIDR("cidr 192.0.2.0/24 port 80-80", "192.0.2.0", 120, true, 80, 80, SBT_PROTO_ANY,
	     "cidr 192.0.2.0/24 port 80"),
	CIDR("cidr 192.0.2.0/24 port 65535", "192.0.2.0", 120, true, 65535, 65535, SBT_PROTO_ANY,
	     "cidr 192.0.2.0/24 port 65535"),
	CIDR("cidr 192.0.2.0/24 proto udp", "192.0.2.0", 120, true, 0, 65535, UDP,
	     "cidr 192.0.2.0/24 proto udp"),
	CIDR("cidr 192.0.2.0/24 proto tcp port 443", "192.0.2.0", 120, true, 443, 443, TCP,
	     "cidr 192.0.2.0/24 port 443 proto tcp"),
	CIDR("cidr 203.0.113.0/24 port 8000-8080 proto tcp\n", "203.0.113.0", 120, true, 8000, 8080,
	     TCP, "cidr 203.0.113.0/24 port 8000-8080 proto tcp"),
	CIDR("cidr 2001:db8::/32 port 53 proto udp", "2001:db8::", 32, false, 53, 53, UDP,
	     "cidr 2001:db8::/32 port 53 proto udp"),
	/* layout: comments, tabs, leading spaces, CRLF */
	CIDR("cidr 10.0.0.0/8 # office", "10.0.0.0", 104, true, ANY, "cidr 10.0.0.0/8"),
	CIDR("cidr 10.0.0.0/8 #office port 80", "10.0.0.0", 104, true, ANY, "cidr 10.0.0.0/8"),
	CIDR("  \tcidr\t198.51.100.0/24\tport 53   proto udp  ", "198.51.100.0", 120, true, 53, 53,
	     UDP, "cidr 198.51.100.0/24 port 53 proto udp"),
	CIDR("cidr 203.0.113.7\r\n", "203.0.113.7", 128, true, ANY, "cidr 203.0.113.7/32"),
	NONE(""),
	NONE("   \t "),
	NONE("\n"),
	NONE("\r\n"),
	NONE("# comment"),
	NONE("   # cidr 1.2.3.4"),
	NONE("#"),
	/* host names */
	HOST("host example.test", "example.test", ANY, "host example.test"),
	HOST("host Example.TEST. port 443", "example.test", 443, 443, SBT_PROTO_ANY,
	     "host example.test port 443"),
	HOST("host _dmarc.example.test", "_dmarc.example.test", ANY, "host _dmarc.example.test"),
	HOST("host a-b.x_y.test proto udp", "a-b.x_y.test", 0, 65535, UDP,
	     "host a-b.x_y.test proto udp"),
	HOST("host localhost", "localhost", ANY, "host localhost"),
	HOST("host 1a.3com.test", "1a.3com.test", ANY, "host 1a.3com.test"),
	HOST("host port port 80", "port", 80, 80, SBT_PROTO_ANY, "host port port 80"),
	/* bad prefixes */
	BAD("cidr 10.0.0.0/33", 14, "bad prefix length '/33': IPv4 allows 0..32"),
	BAD("cidr ::/129", 8, "bad prefix length '/129': IPv6 allows 0..128"),
	BAD("cidr ::ffff:0:0/129", 16, "IPv6 allows 0..128"),
	BAD("cidr 10.0.0.0/-1", 14, "bad prefix length '/-1'"),
	BAD("cidr 10.0.0.0/", 14, "bad prefix length '/'"),
	BAD("cidr 10.0.0.0/abc", 14, "bad prefix length '/abc'"),
	BAD("cidr 10.0.0.0/+8", 14, "bad prefix length '/+8'"),
	BAD("cidr 10.0.0.0/08", 14, "bad prefix length '/08': leading zeros are not allowed"),
	BAD("cidr 10.0.0.0/033", 14, "leading zeros"),
	BAD("cidr 10.0.0.0/8/8", 14, "bad prefix length '/8/8'"),
	BAD("cidr 10.0.0.0/8#x", 14, "bad prefix length '/8#x'"),
	BAD("cidr 10.0.0.0/99999999999", 14, "bad prefix length"),
	/* host bits */
	BAD("cidr 192.0.2.1/24", 6, "host bits set in 192.0.2.1/24: did you mean 192.0.2.0/24?"),
	BAD("cidr 2001:db8::1/32", 6,
	    "host bits set in 2001:db8::1/32: did you mean 2001:db8::/32?"),
	BAD("cidr ::ffff:192.0.2.1/120", 6, "did you mean ::ffff:192.0.2.0/120?"),
	BAD("cidr 10.0.0.1/0", 6, "did you mean 0.0.0.0/0?"),
	/* bad addresses */
	BAD("cidr 256.1.1.1", 6, "bad IPv4 address '256.1.1.1'"),
	BAD("cidr 1.2.3", 6, "bad IPv4 address '1.2.3'"),
	BAD("cidr 1.2.3/24", 6, "bad IPv4 address '1.2.3/24'"),
	BAD("cidr 01.2.3.4", 6, "bad IPv4 address"),
	BAD("cidr 1.2.3.4.", 6, "bad IPv4 address"),
	BAD("cidr 1:2:3:4:5:6:7:8:9", 6, "bad IPv6 address '1:2:3:4:5:6:7:8:9'"),
	BAD("cidr 1::2::3", 6, "bad IPv6 address"),
	BAD("cidr ::ffff:1.2.3", 6, "bad IPv6 address '::ffff:1.2.3'"),
	BAD("cidr ::ffff:01.2.3.4", 6, "bad IPv6 address"),
	BAD("cidr fe80::1%eth0", 6, "scope ids are not allowed"),
	BAD("cidr example.test", 6, "use 'host' for names"),
	BAD("cidr /24", 6, "missing address before '/'"),
	BAD("cidr", 1, "missing address after 'cidr'"),
	BAD("  cidr   # 10.0.0.0/8", 3, "missing address after 'cidr'"),
	/* bad ports */
	BAD("cidr 10.0.0.0/8 port 0", 22, "port '0' out of range: use 1..65535"),
	BAD("cidr 10.0.0.0/8 port 65536", 22, "port '65536' out of range: use 1..65535"),
	BAD("cidr 10.0.0.0/8 port 70000", 22, "port '70000' out of range"),
	BAD("cidr 10.0.0.0/8 port 99999999999999999999", 22, "out of range"),
	BAD("cidr 10.0.0.0/8 port 80-70000", 25, "port '70000' out of range"),
	BAD("cidr 10.0.0.0/8 port", 17, "missing port number after 'port'"),
	BAD("cidr 10.0.0.0/8 port # 80", 17, "missing port number after 'port'"),
	BAD("cidr 10.0.0.0/8 port 80-", 22, "bad port '80-'"),
	BAD("cidr 10.0.0.0/8 port -80", 22, "bad port '-80'"),
	BAD("cidr 10.0.0.0/8 port +80", 22, "bad port '+80'"),
	BAD("cidr 10.0.0.0/8 port 1-2-3", 24, "bad port '1-2-3'"),
	BAD("cidr 10.0.0.0/8 port 80,443", 22, "bad port '80,443'"),
	BAD("cidr 10.0.0.0/8 port 443-80", 22, "port range 443-80 is reversed: use 80-443"),
	BAD("cidr 10.0.0.0/8 port 08", 22, "bad port '08': leading zeros are not allowed"),
	BAD("cidr 10.0.0.0/8 port 0-80", 22, "port '0' out of range"),
	BAD("cidr 10.0.0.0/8 port \xef\xbc\x98"
	    "0",
	    22, "bad port '\\xef\\xbc\\x980'"),
	/* bad protocols */
	BAD("cidr 10.0.0.0/8 proto icmp", 23, "unknown protocol 'icmp': use tcp or udp"),
	BAD("cidr 10.0.0.0/8 proto TCP", 23, "use tcp or udp (lower-case)"),
	BAD("cidr 10.0.0.0/8 proto", 17, "missing protocol after 'proto'"),
	/* option structure */
	BAD("cidr 10.0.0.0/8 port 80 port 443", 25, "'port' given twice"),
	BAD("cidr 10.0.0.0/8 proto tcp proto udp", 27, "'proto' given twice"),
	BAD("cidr 10.0.0.0/8 proto tcp port 1 port 2", 34, "'port' given twice"),
	BAD("cidr 10.0.0.0/8 port 80 proto tcp x", 35, "trailing text 'x' after the rule"),
	BAD("cidr 10.0.0.0/8 prot tcp", 17, "unknown keyword 'prot': expected port or proto"),
	BAD("cidr 10.0.0.0/8 port 80 10.0.0.0/16", 25,
	    "unknown keyword '10.0.0.0/16': expected proto"),
	BAD("cidr 10.0.0.0/8 proto udp 53", 27, "unknown keyword '53': expected port"),
	BAD("cidr 10.0.0.0/8 PORT 80", 17, "unknown keyword 'PORT': keywords are lower-case"),
	BAD("CIDR 10.0.0.0/8", 1, "unknown rule 'CIDR': keywords are lower-case"),
	BAD("Host example.test", 1, "unknown rule 'Host': keywords are lower-case"),
	BAD("cdir 10.0.0.0/8", 1, "not a rule: a rule starts with cidr or host"),
	BAD("  allow 10.0.0.0/8", 3, "not a rule: a rule starts with cidr or host"),
	/* a line that is no rule is never shown: a secret file given by mistake */
	BAD("root:$6$Zq9sEcReTsAlT$abcdefghijklmnop:19000:0:99999:7:::", 1,
	    "not a rule: a rule starts with cidr or host"),
	BAD("cidr 10.0.0.0/8\x01", 16, "control character 0x01"),
	BAD("cidr 10.0.0.0/8 # a\nb", 20, "control character 0x0a"),
	BAD("cidr 10.0.0.0/8\n\n", 16, "control character 0x0a"),
	/* bad host names */
	BAD("host", 1, "missing host name after 'host'"),
	BAD("host a..b", 6, "bad host name 'a..b': empty label"),
	BAD("host .example.test", 6, "empty label"),
	BAD("host example.test..", 6, "empty label"),
	BAD("host .", 6, "empty label"),
	BAD("host -a.test", 6, "bad host name '-a.test': a label starts or ends with '-'"),
	BAD("host a-.test", 6, "a label starts or ends with '-'"),
	BAD("host exa!mple.test", 9, "'!' is not allowed"),
	BAD("host exa*mple.test", 9, "'*' is not allowed"),
	BAD("host b\xc3\xbc"
	    "cher.test",
	    7, "not ASCII, use its punycode (xn--) form"),
	BAD("host 192.0.2.1", 6, "'192.0.2.1' is an address, not a host name: use cidr 192.0.2.1"),
	BAD("host example.123", 6, "the last label is numeric"),
	BAD("host example.test ports 443", 19, "unknown keyword 'ports'"),
};

static void check_case(const struct parse_case *c, int ret, const struct sbt_rule *r,
		       const struct sbt_parse_error *err)
{
	char a[64];

	if (ret != c->ret)
		fail_msg("'%s': returned %d, want %d (err col %u: %s)", c->line, ret, c->ret,
			 err->col, err->msg);
	if (ret < 0) {
		if (err->col != c->col || !strstr(err->msg, c->msg))
			fail_msg("'%s': error col %u '%s', want col %u '%s'", c->line, err->col,
				 err->msg, c->col, c->msg);
		assert_true(err->msg[0] != '\0');
		return;
	}
	if (ret == 0)
		return;
	assert_int_equal(r->kind, c->kind);
	if (c->kind == SBT_RULE_CIDR) {
		sbt_addr_str(r->addr, a, sizeof(a));
		if (strcmp(a, c->target) || r->prefix != c->prefix || r->v4 != c->v4)
			fail_msg("'%s': got %s/%u v4=%d, want %s/%u v4=%d", c->line, a, r->prefix,
				 r->v4, c->target, c->prefix, c->v4);
	} else {
		assert_string_equal(r->host, c->target);
	}
	assert_int_equal(r->port_lo, c->lo);
	assert_int_equal(r->port_hi, c->hi);
	assert_int_equal(r->proto, c->proto);
	assert_int_equal(r->id, 0);
	assert_string_equal(r->text, c->text);
}

static bool same_rule(const struct sbt_rule *a, const struct sbt_rule *b)
{
	return a->kind == b->kind && !memcmp(a->addr, b->addr, 16) && a->prefix == b->prefix &&
	       a->v4 == b->v4 && !strcmp(a->host, b->host) && a->port_lo == b->port_lo &&
	       a->port_hi == b->port_hi && a->proto == b->proto && !strcmp(a->text, b->text);
}

static void test_parse_table(void **state)
{
	size_t i, n = sizeof(parse_cases) / sizeof(parse_cases[0]);

	(void)state;
	assert_true(n >= 40);
	for (i = 0; i < n; i++) {
		const struct parse_case *c = &parse_cases[i];
		struct sbt_rule r, again;
		struct sbt_parse_error err;
		int ret;

		ret = sbt_rule_parse(c->line, &r, &err);
		check_case(c, ret, &r, &err);
		if (ret != 1)
			continue;
		/* the canonical text is a fixed point */
		assert_int_equal(sbt_rule_parse(r.text, &again, &err), 1);
		if (!same_rule(&r, &again))
			fail_msg("'%s': canonical '%s' re-parses differently", c->line, r.text);
	}
	print_message("[          ] %zu parser cases\n", n);
}

/* An error shows at most 48 bytes of the offending token, then "...". */
static void test_error_token_cut(void **state)
{
	struct sbt_parse_error err;
	struct sbt_rule r;
	char line[256], want[64];

	(void)state;
	snprintf(line, sizeof(line), "cidr %0200d", 0);
	memset(line + 5, 'a', 200);
	assert_int_equal(sbt_rule_parse(line, &r, &err), -1);
	memset(want, 'a', 48);
	memcpy(want + 48, "...'", 5);
	assert_non_null(strstr(err.msg, want));
	want[48] = 'a';
	want[49] = '\0';
	assert_null(strstr(err.msg, want));
}

static void test_mapped_equals_v4(void **state)
{
	struct sbt_rule a, b;
	struct sbt_parse_error err;

	(void)state;
	assert_int_equal(sbt_rule_parse("cidr ::ffff:192.0.2.1 port 80", &a, &err), 1);
	assert_int_equal(sbt_rule_parse("cidr 192.0.2.1 port 80", &b, &err), 1);
	assert_true(same_rule(&a, &b));
	assert_int_equal(sbt_rule_parse("cidr ::ffff:192.0.2.0/120", &a, &err), 1);
	assert_int_equal(sbt_rule_parse("cidr 192.0.2.0/24", &b, &err), 1);
	assert_true(same_rule(&a, &b));
	/* shorter than /96: an IPv6 rule, and ::ffff:0:0/95 has a host bit set */
	assert_int_equal(sbt_rule_parse("cidr ::ffff:0:0/95", &a, &err), -1);
	assert_non_null(strstr(err.msg, "did you mean ::fffe:0:0/95?"));
	assert_int_equal(sbt_rule_parse("cidr ::fffe:0:0/95", &a, &err), 1);
	assert_false(a.v4);
	assert_string_equal(a.text, "cidr ::fffe:0:0/95");
}

static void test_host_lengths(void **state)
{
	char line[600], label63[64], label64[65];
	struct sbt_rule r;
	struct sbt_parse_error err;
	size_t n;

	(void)state;
	memset(label63, 'a', 63);
	label63[63] = '\0';
	memset(label64, 'b', 64);
	label64[64] = '\0';

	snprintf(line, sizeof(line), "host %s.test", label63);
	assert_int_equal(sbt_rule_parse(line, &r, &err), 1);
	assert_int_equal(strlen(r.host), 68);

	snprintf(line, sizeof(line), "host %s.test", label64);
	assert_int_equal(sbt_rule_parse(line, &r, &err), -1);
	assert_int_equal(err.col, 6);
	assert_non_null(strstr(err.msg, "a label is longer than 63 bytes"));
	assert_non_null(strstr(err.msg, "...")); /* long tokens are cut in messages */
	assert_true(strlen(err.msg) < sizeof(err.msg) - 1);

	/* 253 bytes: 3 x 63 + 1 x 61 + 3 dots, with and without the root dot */
	n = (size_t)snprintf(line, sizeof(line), "host %s.%s.%s.", label63, label63, label63);
	memset(line + n, 'C', 61);
	line[n + 61] = '\0';
	assert_int_equal(strlen(line) - 5, 253);
	assert_int_equal(sbt_rule_parse(line, &r, &err), 1);
	assert_int_equal(strlen(r.host), 253);
	assert_int_equal(r.host[252], 'c');
	strcat(line, ".");
	assert_int_equal(sbt_rule_parse(line, &r, &err), 1);
	assert_int_equal(strlen(r.host), 253);
	assert_true(strlen(r.text) < SBT_RULE_TEXT_MAX);
	strcat(line, " port 65534-65535 proto tcp");
	assert_int_equal(sbt_rule_parse(line, &r, &err), 1);
	assert_non_null(strstr(r.text, " port 65534-65535 proto tcp"));

	/* 254 bytes */
	n = (size_t)snprintf(line, sizeof(line), "host %s.%s.%s.", label63, label63, label63);
	memset(line + n, 'c', 62);
	line[n + 62] = '\0';
	assert_int_equal(sbt_rule_parse(line, &r, &err), -1);
	assert_int_equal(err.col, 6);
	assert_non_null(strstr(err.msg, "longer than 253 bytes"));
}

static void test_parse_arg(void **state)
{
	struct sbt_rule r, full;
	struct sbt_parse_error err;

	(void)state;
	assert_int_equal(sbt_rule_parse_arg(SBT_RULE_CIDR, "192.0.2.0/24 port 443", &r, &err), 1);
	assert_int_equal(sbt_rule_parse("cidr 192.0.2.0/24 port 443", &full, &err), 1);
	assert_true(same_rule(&r, &full));
	assert_string_equal(r.text, "cidr 192.0.2.0/24 port 443");

	assert_int_equal(sbt_rule_parse_arg(SBT_RULE_HOST, "Example.test. proto tcp", &r, &err), 1);
	assert_int_equal(r.kind, SBT_RULE_HOST);
	assert_string_equal(r.host, "example.test");
	assert_string_equal(r.text, "host example.test proto tcp");

	assert_int_equal(sbt_rule_parse_arg(SBT_RULE_HOST, "host", &r, &err), 1);
	assert_string_equal(r.host, "host");
	assert_int_equal(sbt_rule_parse_arg(SBT_RULE_HOST, "host port 80", &r, &err), 1);
	assert_string_equal(r.text, "host host port 80");

	/* columns are relative to the argument */
	assert_int_equal(sbt_rule_parse_arg(SBT_RULE_CIDR, "192.0.2.1/24", &r, &err), -1);
	assert_int_equal(err.col, 1);
	assert_non_null(strstr(err.msg, "did you mean 192.0.2.0/24?"));
	assert_int_equal(sbt_rule_parse_arg(SBT_RULE_HOST, "x.test port 0", &r, &err), -1);
	assert_int_equal(err.col, 13);
	assert_int_equal(sbt_rule_parse_arg(SBT_RULE_CIDR, "  10.0.0.0/33", &r, &err), -1);
	assert_int_equal(err.col, 11);

	/* an empty argument is an error, not a blank line */
	assert_int_equal(sbt_rule_parse_arg(SBT_RULE_CIDR, "", &r, &err), -1);
	assert_int_equal(err.col, 1);
	assert_non_null(strstr(err.msg, "missing address"));
	assert_int_equal(sbt_rule_parse_arg(SBT_RULE_HOST, "  ", &r, &err), -1);
	assert_non_null(strstr(err.msg, "missing host name"));
	assert_int_equal(sbt_rule_parse_arg(SBT_RULE_CIDR, "# x", &r, &err), -1);

	/* the keyword repeated */
	assert_int_equal(sbt_rule_parse_arg(SBT_RULE_CIDR, "cidr 10.0.0.0/8", &r, &err), -1);
	assert_int_equal(err.col, 1);
	assert_non_null(strstr(err.msg, "unexpected keyword 'cidr'"));
	assert_int_equal(sbt_rule_parse_arg(SBT_RULE_HOST, " host example.test", &r, &err), -1);
	assert_int_equal(err.col, 2);

	assert_int_equal(sbt_rule_parse_arg(99, "10.0.0.0/8", &r, &err), -1);
	assert_int_equal(sbt_rule_parse_arg(SBT_RULE_CIDR, NULL, &r, &err), -1);
}

/* --- addresses ------------------------------------------------------------- */

static void test_addr(void **state)
{
	static const struct {
		const char *in, *out;
		bool v4;
	} ok[] = {
		{ "0.0.0.0", "0.0.0.0", true },
		{ "255.255.255.255", "255.255.255.255", true },
		{ "::ffff:10.1.2.3", "10.1.2.3", true },
		{ "::", "::", false },
		{ "::1", "::1", false },
		{ "1::", "1::", false },
		{ "FE80::A", "fe80::a", false },
		{ "2001:db8:0:0:0:0:2:1", "2001:db8::2:1", false },
		{ "2001:db8::0:1", "2001:db8::1", false },
		{ "2001:db8:0:1:1:1:1:1", "2001:db8:0:1:1:1:1:1", false },
		{ "0:0:1:0:0:0:1:0", "0:0:1::1:0", false },
		{ "fd00:ec2::254", "fd00:ec2::254", false },
		{ "::ffff:0:1", "0.0.0.1", true },
	};
	static const char *const bad[] = {
		"",
		"1.2.3",
		"01.2.3.4",
		"1.2.3.4 ",
		" 1.2.3.4",
		"1.2.3.4/32",
		"256.0.0.0",
		"1.2.3.4.5",
		"::g",
		"fe80::1%1",
		"1:2:3:4:5:6:7:8:9",
		":::",
		"00001::",
		"::ffff:1.2.3.04",
		"1.2.3.4::",
		"x",
		"0000000000000000000000000000000000000000000000000000000000000000000000000:",
	};
	uint8_t a[16], b[16];
	char s[64];
	bool v4;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		v4 = !ok[i].v4;
		if (sbt_addr_parse(ok[i].in, a, &v4))
			fail_msg("'%s' rejected", ok[i].in);
		assert_int_equal(v4, ok[i].v4);
		sbt_addr_str(a, s, sizeof(s));
		assert_string_equal(s, ok[i].out);
		assert_int_equal(sbt_addr_parse(s, b, NULL), 0);
		assert_memory_equal(a, b, 16);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (sbt_addr_parse(bad[i], a, &v4) != -EINVAL)
			fail_msg("'%s' accepted", bad[i]);

	/* a short buffer truncates, never overflows */
	assert_int_equal(sbt_addr_parse("2001:db8::1", a, NULL), 0);
	memset(s, 'X', sizeof(s));
	sbt_addr_str(a, s, 5);
	assert_string_equal(s, "2001");
	assert_int_equal(s[5], 'X');
}

/* --- compilation ------------------------------------------------------------ */

static struct sbt_policy_entry entries[MAX_ENTRIES];

static void addr_of(const char *s, uint8_t a[16])
{
	if (sbt_addr_parse(s, a, NULL))
		fail_msg("bad test address '%s'", s);
}

static void rule_of(const char *line, uint32_t id, struct sbt_rule *r)
{
	struct sbt_parse_error err;

	if (sbt_rule_parse(line, r, &err) != 1)
		fail_msg("'%s': %s", line, err.msg);
	r->id = id;
}

/* Compile NULL-terminated rule lines (ids 1..n). */
static int compile_lines(const char *const *lines, struct sbt_parse_error *err)
{
	struct sbt_rule rules[32];
	size_t n = 0;

	while (lines[n]) {
		assert_true(n < 32);
		rule_of(lines[n], (uint32_t)n + 1, &rules[n]);
		n++;
	}
	return sbt_policy_compile(rules, n, entries, MAX_ENTRIES, err);
}

static uint32_t verdict(int n, const char *addr, uint16_t port, uint8_t proto, bool *floor)
{
	uint8_t a[16];

	addr_of(addr, a);
	return sbt_policy_verdict(entries, (size_t)n, a, port, proto, floor);
}

static const struct sbt_policy_entry *find_entry(int n, const char *addr, unsigned int prefix)
{
	uint8_t a[16];
	int i;

	addr_of(addr, a);
	for (i = 0; i < n; i++)
		if (entries[i].prefix == prefix && !memcmp(entries[i].addr, a, 16))
			return &entries[i];
	return NULL;
}

static void test_floor_list(void **state)
{
	static const struct {
		const char *addr;
		unsigned int prefix;
		const char *what;
	} want[] = {
		{ "169.254.0.0", 112, "link-local" },
		{ "fe80::", 10, "link-local" },
		{ "100.100.100.200", 128, "metadata" },
		{ "192.0.0.192", 128, "metadata" },
		{ "fd00:ec2::254", 128, "metadata" },
		{ "127.0.0.0", 104, "loopback" },
		{ "::1", 128, "loopback" },
		{ "0.0.0.0", 104, "loopback" },
		{ "::", 128, "loopback" },
		{ "64:ff9b::169.254.0.0", 112, "link-local" },
		{ "64:ff9b::100.100.100.200", 128, "metadata" },
		{ "64:ff9b::192.0.0.192", 128, "metadata" },
		{ "64:ff9b::127.0.0.0", 104, "loopback" },
		{ "64:ff9b::", 104, "loopback" },
		{ "2002:a9fe::", 32, "link-local" },
		{ "2002:6464:64c8::", 48, "metadata" },
		{ "2002:c000:c0::", 48, "metadata" },
		{ "2002:7f00::", 24, "loopback" },
		{ "2002::", 24, "loopback" },
		{ "::ffff:0:169.254.0.0", 112, "link-local" },
		{ "::ffff:0:100.100.100.200", 128, "metadata" },
		{ "::ffff:0:192.0.0.192", 128, "metadata" },
		{ "::ffff:0:127.0.0.0", 104, "loopback" },
		{ "::ffff:0:0.0.0.0", 104, "loopback" },
		{ "::169.254.0.0", 112, "link-local" },
		{ "::100.100.100.200", 128, "metadata" },
		{ "::192.0.0.192", 128, "metadata" },
		{ "::127.0.0.0", 104, "loopback" },
		{ "::", 104, "loopback" },
		{ "255.255.255.255", 128, "broadcast" },
		{ "224.0.0.0", 100, "multicast" },
		{ "ff00::", 8, "multicast" },
	};
	const struct sbt_floor *fl;
	uint8_t a[16];
	size_t n, i;

	(void)state;
	fl = sbt_policy_floor(&n);
	assert_int_equal(n, sizeof(want) / sizeof(want[0]));
	for (i = 0; i < n; i++) {
		addr_of(want[i].addr, a);
		assert_memory_equal(fl[i].addr, a, 16);
		assert_int_equal(fl[i].prefix, want[i].prefix);
		assert_string_equal(fl[i].what, want[i].what);
	}
}

/* Floor first: every answer address inside the floor is found, its NAT64 and 6to4 forms too. */
static void test_floor_of(void **state)
{
	static const struct {
		const char *addr;
		const char *what; /* NULL: outside the floor */
	} cases[] = {
		{ "127.0.0.1", "loopback" },
		{ "::1", "loopback" },
		{ "0.0.0.0", "loopback" },
		{ "::", "loopback" },
		{ "169.254.169.254", "link-local" },
		{ "fe80::1", "link-local" },
		{ "fd00:ec2::254", "metadata" },
		{ "100.100.100.200", "metadata" },
		{ "64:ff9b::a9fe:a9fe", "link-local" },
		{ "64:ff9b::7f00:1", "loopback" },
		{ "64:ff9b::1", "loopback" },
		{ "64:ff9b::6464:64c8", "metadata" },
		{ "2002:a9fe:a9fe::1", "link-local" },
		{ "2002:7f00:1::", "loopback" },
		{ "2002:c000:c0::5", "metadata" },
		{ "192.0.2.1", NULL },
		{ "2001:db8::1", NULL },
		{ "64:ff9b::c000:201", NULL }, /* 192.0.2.1 through NAT64 */
		{ "2002:c000:201::1", NULL },  /* 192.0.2.1 as 6to4 */
		{ "100.100.100.201", NULL },
		/* SIIT, IPv4-compatible, local-use NAT64, Teredo (server; client inverted) */
		{ "::ffff:0:a9fe:a9fe", "link-local" },
		{ "::a9fe:a9fe", "link-local" },
		{ "::7f00:1", "loopback" },
		{ "64:ff9b:1::a9fe:a9fe", "link-local" },
		{ "64:ff9b:1:abcd::7f00:1", "loopback" },
		{ "64:ff9b:1::6464:64c8", "metadata" },
		{ "2001:0:a9fe:a9fe::1", "link-local" },
		{ "2001:0:c633:6407:0:0:5601:5601", "link-local" },
		{ "2001:0:c633:6407:0:0:80ff:fffe", "loopback" },
		{ "64:ff9b:1::c633:6407", NULL }, /* 198.51.100.7 */
		{ "::ffff:0:c633:6407", NULL },
		{ "2001:0:c633:6407::39cc:9bf8", NULL }, /* client 198.51.100.7 */
		/* broadcast and multicast, also embedded */
		{ "255.255.255.255", "broadcast" },
		{ "224.0.0.251", "multicast" },
		{ "239.255.255.250", "multicast" },
		{ "ff02::fb", "multicast" },
		{ "64:ff9b::e000:fb", "multicast" },
		{ "2002:ffff:ffff::1", "broadcast" },
		{ "223.255.255.255", NULL },
		{ "240.0.0.1", NULL },
	};
	size_t nf;
	const struct sbt_floor *fl = sbt_policy_floor(&nf);

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint8_t a[16];
		int f;

		addr_of(cases[i].addr, a);
		f = sbt_policy_floor_of(a);
		if (!cases[i].what) {
			if (f >= 0)
				fail_msg("%s: in the floor (%s)", cases[i].addr, fl[f].what);
			continue;
		}
		if (f < 0)
			fail_msg("%s: not in the floor", cases[i].addr);
		assert_true((size_t)f < nf);
		assert_string_equal(fl[f].what, cases[i].what);
	}
}

/* Broadcast and multicast: refused in answers unless a cidr rule covers them; never the kernel's. */
static void test_answer_floor(void **state)
{
	static const char *const lines[] = { "cidr 224.0.0.0/4 port 5353 proto udp",
					     "cidr 255.255.255.255/32", NULL };
	struct sbt_rule rules[2];
	struct sbt_policy_key key;
	struct sbt_policy_val val;
	const struct sbt_policy_entry *e;
	uint8_t a[16];
	int n;

	(void)state;
	for (int i = 0; i < 2; i++)
		rule_of(lines[i], (uint32_t)i + 1, &rules[i]);
	addr_of("224.0.0.251", a);
	assert_true(sbt_policy_answer_floor(a, NULL, 0) >= 0);
	assert_int_equal(sbt_policy_answer_floor(a, rules, 1), -1);
	addr_of("ff02::fb", a);
	assert_true(sbt_policy_answer_floor(a, rules, 2) >= 0); /* no v6 rule */
	addr_of("255.255.255.255", a);
	assert_int_equal(sbt_policy_answer_floor(a, rules + 1, 1), -1);
	/* the floor proper stays, whatever the rules */
	addr_of("::ffff:0:a9fe:a9fe", a);
	assert_true(sbt_policy_answer_floor(a, rules, 2) >= 0);
	/* the kernel's entries: the rules as rules, not floor */
	n = compile_lines(lines, NULL);
	assert_true(n > 0);
	e = find_entry(n, "224.0.0.0", 100);
	assert_non_null(e);
	sbt_policy_bpf_entry(e, 0, &key, &val);
	assert_int_equal(val.flags & SBT_POLICY_FLOOR, 0);
	assert_null(find_entry(n, "ff00::", 8));
	e = find_entry(n, "::ffff:0:169.254.0.0", 112);
	assert_non_null(e);
	sbt_policy_bpf_entry(e, 0, &key, &val);
	assert_int_equal(val.flags, SBT_POLICY_FLOOR);
}

/* A broad NAT64 / 6to4 rule does not open the floor's embeddings; those are never own loopback. */
static void test_floor_embeddings(void **state)
{
	static const char *const lines[] = { "cidr 64:ff9b::/96", "cidr 2002::/16", NULL };
	struct sbt_policy_key key;
	struct sbt_policy_val val;
	const struct sbt_policy_entry *e;
	bool floor;
	int n;

	(void)state;
	n = compile_lines(lines, NULL);
	assert_true(n > 0);
	assert_int_equal(verdict(n, "64:ff9b::c000:201", 443, SBT_PROTO_TCP, &floor), 1);
	assert_false(floor);
	assert_int_equal(verdict(n, "64:ff9b::a9fe:a9fe", 80, SBT_PROTO_TCP, &floor), 0);
	assert_true(floor);
	assert_int_equal(verdict(n, "64:ff9b::7f00:1", 80, SBT_PROTO_TCP, &floor), 0);
	assert_true(floor);
	assert_int_equal(verdict(n, "2002:c000:201::1", 443, SBT_PROTO_TCP, &floor), 2);
	assert_int_equal(verdict(n, "2002:a9fe:a9fe::1", 80, SBT_PROTO_TCP, &floor), 0);
	assert_true(floor);
	e = find_entry(n, "64:ff9b::7f00:0", 104);
	assert_non_null(e);
	sbt_policy_bpf_entry(e, 0, &key, &val);
	assert_int_equal(val.flags, SBT_POLICY_FLOOR);
	assert_int_not_equal(val.floor_kind, SBT_FLOOR_LOOPBACK);
	e = find_entry(n, "127.0.0.0", 104);
	assert_non_null(e);
	sbt_policy_bpf_entry(e, 0, &key, &val);
	assert_int_equal(val.floor_kind, SBT_FLOOR_LOOPBACK);
}

static void test_empty(void **state)
{
	const struct sbt_floor *fl;
	size_t nf, i;
	bool floor;
	int n, j;

	(void)state;
	fl = sbt_policy_floor(&nf);
	n = sbt_policy_compile(NULL, 0, entries, MAX_ENTRIES, NULL);
	assert_int_equal(n, NR_FLOOR_ENTRIES);
	for (i = 0, j = 0; i < nf; i++)
		j += !fl[i].answer_only;
	assert_int_equal(j, NR_FLOOR_ENTRIES);
	for (j = 0; j < n; j++) {
		assert_true(entries[j].floor);
		assert_int_equal(entries[j].nr_ports, 0);
		assert_memory_equal(entries[j].addr, fl[entries[j].floor_idx].addr, 16);
		assert_int_equal(entries[j].prefix, fl[entries[j].floor_idx].prefix);
		/* sorted by (prefix, addr) */
		if (j)
			assert_true(entries[j - 1].prefix < entries[j].prefix ||
				    (entries[j - 1].prefix == entries[j].prefix &&
				     memcmp(entries[j - 1].addr, entries[j].addr, 16) < 0));
	}
	for (i = 0; i < nf; i++) {
		if (fl[i].answer_only)
			continue;
		for (j = 0; j < n; j++)
			if (entries[j].prefix == fl[i].prefix &&
			    !memcmp(entries[j].addr, fl[i].addr, 16))
				break;
		assert_true(j < n);
		assert_int_equal(entries[j].floor_idx, i);
	}
	floor = true;
	assert_int_equal(verdict(n, "192.0.2.1", 443, SBT_PROTO_TCP, &floor), 0);
	assert_false(floor);
	assert_int_equal(verdict(n, "169.254.169.254", 80, SBT_PROTO_TCP, &floor), 0);
	assert_true(floor);
	assert_int_equal(verdict(n, "::1", 80, SBT_PROTO_TCP, &floor), 0);
	assert_true(floor);
	/* too small an output array */
	assert_int_equal(sbt_policy_compile(NULL, 0, entries, NR_FLOOR_ENTRIES - 1, NULL), -E2BIG);
}

static void test_push_down(void **state)
{
	static const char *const lines[] = {
		"cidr 192.0.2.0/24 port 80",
		"cidr 192.0.2.7 port 443",
		NULL,
	};
	const struct sbt_policy_entry *e;
	bool floor;
	int n;

	(void)state;
	n = compile_lines(lines, NULL);
	assert_int_equal(n, NR_FLOOR_ENTRIES + 2);
	e = find_entry(n, "192.0.2.7", 128);
	assert_non_null(e);
	assert_false(e->floor);
	assert_int_equal(e->nr_ports, 2);
	assert_int_equal(e->ports[0].lo, 80);
	assert_int_equal(e->ports[0].rule_id, 1);
	assert_int_equal(e->ports[1].lo, 443);
	assert_int_equal(e->ports[1].rule_id, 2);
	e = find_entry(n, "192.0.2.0", 120);
	assert_non_null(e);
	assert_int_equal(e->nr_ports, 1);

	assert_int_equal(verdict(n, "192.0.2.7", 80, SBT_PROTO_TCP, &floor), 1);
	assert_false(floor);
	assert_int_equal(verdict(n, "192.0.2.7", 443, SBT_PROTO_UDP, &floor), 2);
	assert_int_equal(verdict(n, "192.0.2.8", 443, SBT_PROTO_TCP, &floor), 0);
	assert_false(floor);
	assert_int_equal(verdict(n, "192.0.2.8", 80, SBT_PROTO_TCP, &floor), 1);
	assert_int_equal(verdict(n, "192.0.3.7", 80, SBT_PROTO_TCP, &floor), 0);
}

static void test_floor_not_opened_by_broad_rules(void **state)
{
	static const char *const lines[] = { "cidr 0.0.0.0/0", "cidr ::/0", NULL };
	bool floor;
	int n;

	(void)state;
	n = compile_lines(lines, NULL);
	assert_true(n > 0);
	assert_int_equal(verdict(n, "192.0.2.1", 443, SBT_PROTO_TCP, &floor), 1);
	assert_false(floor);
	assert_int_equal(verdict(n, "2001:db8::1", 443, SBT_PROTO_TCP, &floor), 2);
	/* ::/0 covers the mapped range too */
	assert_int_equal(verdict(n, "::ffff:192.0.2.1", 53, SBT_PROTO_UDP, &floor), 1);

	assert_int_equal(verdict(n, "169.254.169.254", 80, SBT_PROTO_TCP, &floor), 0);
	assert_true(floor);
	assert_int_equal(verdict(n, "127.0.0.1", 80, SBT_PROTO_TCP, &floor), 0);
	assert_true(floor);
	assert_int_equal(verdict(n, "0.0.0.0", 80, SBT_PROTO_TCP, &floor), 0);
	assert_true(floor);
	assert_int_equal(verdict(n, "0.1.2.3", 80, SBT_PROTO_TCP, &floor), 0);
	assert_true(floor);
	assert_int_equal(verdict(n, "100.100.100.200", 80, SBT_PROTO_TCP, &floor), 0);
	assert_true(floor);
	assert_int_equal(verdict(n, "100.100.100.201", 80, SBT_PROTO_TCP, &floor), 1);
	assert_false(floor);
	assert_int_equal(verdict(n, "192.0.0.192", 80, SBT_PROTO_TCP, &floor), 0);
	assert_int_equal(verdict(n, "fe80::1", 80, SBT_PROTO_TCP, &floor), 0);
	assert_true(floor);
	assert_int_equal(verdict(n, "febf:ffff::1", 80, SBT_PROTO_TCP, &floor), 0);
	assert_int_equal(verdict(n, "fec0::1", 80, SBT_PROTO_TCP, &floor), 2);
	assert_int_equal(verdict(n, "::1", 80, SBT_PROTO_TCP, &floor), 0);
	assert_true(floor);
	assert_int_equal(verdict(n, "::", 80, SBT_PROTO_TCP, &floor), 0);
	/* ::0.0.0.2, IPv4-compatible: 0.0.0.0/8 */
	assert_int_equal(verdict(n, "::2", 80, SBT_PROTO_TCP, &floor), 0);
	assert_true(floor);
	assert_int_equal(verdict(n, "::1:0:0", 80, SBT_PROTO_TCP, &floor), 2);
	assert_int_equal(verdict(n, "::a9fe:a9fe", 80, SBT_PROTO_TCP, &floor), 0);
	assert_true(floor);
	assert_int_equal(verdict(n, "::ffff:0:7f00:1", 80, SBT_PROTO_TCP, &floor), 0);
	assert_true(floor);
	assert_int_equal(verdict(n, "::ffff:0:c633:6407", 80, SBT_PROTO_TCP, &floor), 2);
	assert_int_equal(verdict(n, "fd00:ec2::254", 80, SBT_PROTO_TCP, &floor), 0);
	assert_true(floor);
}

static void test_floor_opened(void **state)
{
	static const char *const exact[] = { "cidr 169.254.169.254/32 port 80", NULL };
	static const char *const whole[] = { "cidr 169.254.0.0/16", "cidr 0.0.0.0/0 port 443",
					     NULL };
	static const char *const v6[] = { "cidr ::/0", "cidr fe80::/16 port 22", NULL };
	bool floor;
	int n;

	(void)state;
	n = compile_lines(exact, NULL);
	assert_int_equal(verdict(n, "169.254.169.254", 80, SBT_PROTO_TCP, &floor), 1);
	assert_false(floor); /* the /32 entry is longer than the floor */
	assert_int_equal(verdict(n, "169.254.169.254", 81, SBT_PROTO_TCP, &floor), 0);
	assert_int_equal(verdict(n, "169.254.169.253", 80, SBT_PROTO_TCP, &floor), 0);
	assert_true(floor);

	n = compile_lines(whole, NULL);
	assert_int_equal(verdict(n, "169.254.169.254", 22, SBT_PROTO_TCP, &floor), 1);
	assert_true(floor); /* the floor entry itself, opened */
	assert_int_equal(verdict(n, "169.254.1.1", 443, SBT_PROTO_TCP, &floor), 1);
	assert_int_equal(verdict(n, "192.0.2.1", 443, SBT_PROTO_TCP, &floor), 2);
	assert_int_equal(verdict(n, "192.0.2.1", 80, SBT_PROTO_TCP, &floor), 0);
	assert_false(floor);
	/* the broad rule's 443 does not reach the floor entry */
	assert_non_null(find_entry(n, "169.254.0.0", 112));
	assert_int_equal(find_entry(n, "169.254.0.0", 112)->nr_ports, 1);
	assert_int_equal(verdict(n, "127.0.0.1", 443, SBT_PROTO_TCP, &floor), 0);

	/* a rule under ::/0 but above fe80::/10 does not open it either; one under it does */
	n = compile_lines(v6, NULL);
	assert_int_equal(verdict(n, "fe80::1", 22, SBT_PROTO_TCP, &floor), 2);
	assert_int_equal(verdict(n, "fe80::1", 80, SBT_PROTO_TCP, &floor), 0);
	assert_false(floor);
	assert_int_equal(verdict(n, "fe81::1", 22, SBT_PROTO_TCP, &floor), 0);
	assert_true(floor);
	{
		static const char *const mid[] = { "cidr fe00::/7", NULL };

		n = compile_lines(mid, NULL);
		assert_int_equal(verdict(n, "fe80::1", 80, SBT_PROTO_TCP, &floor), 0);
		assert_true(floor);
		assert_int_equal(verdict(n, "fe00::1", 80, SBT_PROTO_TCP, &floor), 1);
	}
}

static void test_v4_v6_separation(void **state)
{
	static const char *const lines[] = { "cidr 192.0.2.0/24", "cidr 2001:db8::/32 port 443",
					     NULL };
	uint8_t a[16];
	bool floor;
	int n;

	(void)state;
	n = compile_lines(lines, NULL);
	/* a mapped lookup is the IPv4 lookup */
	assert_int_equal(verdict(n, "::ffff:192.0.2.5", 80, SBT_PROTO_TCP, &floor), 1);
	addr_of("192.0.2.5", a);
	assert_int_equal(sbt_policy_verdict(entries, (size_t)n, a, 80, SBT_PROTO_TCP, &floor), 1);
	/* the same 32 bits elsewhere in IPv6 are not the IPv4 rule */
	assert_int_equal(verdict(n, "::c000:205", 80, SBT_PROTO_TCP, &floor), 0);
	assert_int_equal(verdict(n, "::fffe:c000:205", 80, SBT_PROTO_TCP, &floor), 0);
	assert_int_equal(verdict(n, "64:ff9b::c000:205", 80, SBT_PROTO_TCP, &floor), 0);
	assert_int_equal(verdict(n, "2001:db8::c000:205", 80, SBT_PROTO_TCP, &floor), 0);
	assert_int_equal(verdict(n, "2001:db8::c000:205", 443, SBT_PROTO_TCP, &floor), 2);
	assert_int_equal(verdict(n, "2001:db9::1", 443, SBT_PROTO_TCP, &floor), 0);
	assert_false(floor);
}

static void test_dedup_and_order(void **state)
{
	struct sbt_rule rules[4];
	const struct sbt_policy_entry *e;
	int n;

	(void)state;
	/* ids out of input order; identical alternatives keep the lowest id */
	rule_of("cidr 198.51.100.0/24 port 443 proto tcp", 7, &rules[0]);
	rule_of("cidr 198.51.100.0/24 port 443 proto tcp", 3, &rules[1]);
	rule_of("cidr 198.51.100.0/25 port 53 proto udp", 5, &rules[2]);
	rule_of("cidr 198.51.100.0/25 port 443 proto tcp", 9, &rules[3]);
	n = sbt_policy_compile(rules, 4, entries, MAX_ENTRIES, NULL);
	assert_int_equal(n, NR_FLOOR_ENTRIES + 2);
	e = find_entry(n, "198.51.100.0", 120);
	assert_non_null(e);
	assert_int_equal(e->nr_ports, 1);
	assert_int_equal(e->ports[0].rule_id, 3);
	e = find_entry(n, "198.51.100.0", 121);
	assert_non_null(e);
	assert_int_equal(e->nr_ports, 2);
	assert_int_equal(e->ports[0].rule_id, 3);
	assert_int_equal(e->ports[0].proto, SBT_PROTO_TCP);
	assert_int_equal(e->ports[1].rule_id, 5);
	assert_int_equal(e->ports[1].lo, 53);
	assert_int_equal(e->ports[1].proto, SBT_PROTO_UDP);
}

static void test_too_many_alternatives(void **state)
{
	struct sbt_rule rules[SBT_POLICY_PORTS + 1];
	struct sbt_parse_error err;
	char line[80];
	int i, n;

	(void)state;
	for (i = 0; i < SBT_POLICY_PORTS; i++) {
		snprintf(line, sizeof(line), "cidr 192.0.2.0/24 port %d", 1000 + i);
		rule_of(line, (uint32_t)i + 1, &rules[i]);
	}
	n = sbt_policy_compile(rules, SBT_POLICY_PORTS, entries, MAX_ENTRIES, &err);
	assert_int_equal(n, NR_FLOOR_ENTRIES + 1);
	/* an identical ninth merges */
	rule_of("cidr 192.0.2.0/24 port 1000", 20, &rules[SBT_POLICY_PORTS]);
	n = sbt_policy_compile(rules, SBT_POLICY_PORTS + 1, entries, MAX_ENTRIES, &err);
	assert_int_equal(n, NR_FLOOR_ENTRIES + 1);
	/* a distinct ninth, reaching the /24 by push-down, does not fit */
	rule_of("cidr 192.0.0.0/16 port 1000 proto tcp", 20, &rules[SBT_POLICY_PORTS]);
	n = sbt_policy_compile(rules, SBT_POLICY_PORTS + 1, entries, MAX_ENTRIES, &err);
	assert_int_equal(n, -E2BIG);
	assert_non_null(
		strstr(err.msg, "too many port/proto alternatives for 192.0.2.0/24 (max 8)"));

	rule_of("cidr 2001:db8::/48 port 1", 20, &rules[SBT_POLICY_PORTS]);
	for (i = 0; i < SBT_POLICY_PORTS; i++) {
		snprintf(line, sizeof(line), "cidr 2001:db8::/32 port %d", 1000 + i);
		rule_of(line, (uint32_t)i + 1, &rules[i]);
	}
	n = sbt_policy_compile(rules, SBT_POLICY_PORTS + 1, entries, MAX_ENTRIES, &err);
	assert_int_equal(n, -E2BIG);
	assert_non_null(strstr(err.msg, "2001:db8::/48"));

	/* more entries than room */
	n = sbt_policy_compile(rules, 1, entries, NR_FLOOR_ENTRIES, &err);
	assert_int_equal(n, -E2BIG);
	n = sbt_policy_compile(rules, 1, entries, NR_FLOOR_ENTRIES + 1, &err);
	assert_int_equal(n, NR_FLOOR_ENTRIES + 1);
}

static void test_proto_and_port_edges(void **state)
{
	static const char *const lines[] = {
		"cidr 203.0.113.0/24 port 1000-2000 proto tcp",
		"cidr 203.0.113.0/24 port 53 proto udp",
		"cidr 203.0.113.9 port 65535",
		NULL,
	};
	bool floor;
	int n;

	(void)state;
	n = compile_lines(lines, NULL);
	assert_int_equal(verdict(n, "203.0.113.1", 999, SBT_PROTO_TCP, &floor), 0);
	assert_int_equal(verdict(n, "203.0.113.1", 1000, SBT_PROTO_TCP, &floor), 1);
	assert_int_equal(verdict(n, "203.0.113.1", 2000, SBT_PROTO_TCP, &floor), 1);
	assert_int_equal(verdict(n, "203.0.113.1", 2001, SBT_PROTO_TCP, &floor), 0);
	assert_int_equal(verdict(n, "203.0.113.1", 1500, SBT_PROTO_UDP, &floor), 0);
	assert_int_equal(verdict(n, "203.0.113.1", 53, SBT_PROTO_UDP, &floor), 2);
	assert_int_equal(verdict(n, "203.0.113.1", 53, SBT_PROTO_TCP, &floor), 0);
	assert_int_equal(verdict(n, "203.0.113.9", 65535, SBT_PROTO_UDP, &floor), 3);
	assert_int_equal(verdict(n, "203.0.113.9", 65535, SBT_PROTO_TCP, &floor), 3);
	assert_int_equal(verdict(n, "203.0.113.9", 65534, SBT_PROTO_TCP, &floor), 0);
	assert_int_equal(verdict(n, "203.0.113.9", 1000, SBT_PROTO_TCP, &floor), 1);
	assert_int_equal(verdict(n, "203.0.113.8", 65535, SBT_PROTO_TCP, &floor), 0);
	/* a rule without port or proto matches any, port 0 and other protocols included */
	{
		static const char *const any[] = { "cidr 203.0.113.0/24", NULL };

		n = compile_lines(any, NULL);
		assert_int_equal(verdict(n, "203.0.113.1", 0, 1 /* icmp */, &floor), 1);
		assert_int_equal(verdict(n, "203.0.113.1", 65535, SBT_PROTO_UDP, &floor), 1);
	}
}

static void test_compile_rejects(void **state)
{
	struct sbt_rule r;
	struct sbt_parse_error err;

	(void)state;
	rule_of("host example.test", 1, &r);
	assert_int_equal(sbt_policy_compile(&r, 1, entries, MAX_ENTRIES, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "resolve host rules first"));
	rule_of("cidr 192.0.2.0/24", 0, &r);
	assert_int_equal(sbt_policy_compile(&r, 1, entries, MAX_ENTRIES, &err), -EINVAL);
	rule_of("cidr 192.0.2.0/24", 1, &r);
	r.addr[15] = 1;
	assert_int_equal(sbt_policy_compile(&r, 1, entries, MAX_ENTRIES, &err), -EINVAL);
	rule_of("cidr 192.0.2.0/24", 1, &r);
	r.prefix = 129;
	assert_int_equal(sbt_policy_compile(&r, 1, entries, MAX_ENTRIES, &err), -EINVAL);
}

/* --- randomized comparison with a brute-force reference ------------------------ */

static uint64_t rng = 0x5eed5eed12345678ULL;

static uint32_t rnd(uint32_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 32) % n;
}

/* An address sharing its first `keep` bits with base (a may be base). */
static void random_near(uint8_t a[16], const uint8_t *base, unsigned int keep)
{
	uint8_t b[16];
	unsigned int i;

	memcpy(b, base, 16);
	for (i = 0; i < 16; i++)
		a[i] = (uint8_t)rnd(256);
	for (i = 0; i < keep && i < 128; i++) {
		uint8_t bit = (uint8_t)(0x80 >> (i % 8));

		a[i / 8] = (uint8_t)((a[i / 8] & ~bit) | (b[i / 8] & bit));
	}
}

static void random_base(uint8_t a[16], const struct sbt_floor *fl, size_t nf)
{
	static const char *const interesting[] = { "192.0.2.0", "198.51.100.0", "2001:db8::",
						   "10.0.0.0",	"::",		"0.0.0.0" };

	switch (rnd(4)) {
	case 0:
		memcpy(a, fl[rnd((uint32_t)nf)].addr, 16);
		break;
	case 1:
		addr_of(interesting[rnd(6)], a);
		break;
	case 2:
		addr_of("::ffff:0.0.0.0", a);
		random_near(a, a, 96);
		break;
	default:
		random_near(a, a, 0);
		break;
	}
}

static void test_random_vs_reference(void **state)
{
	static const uint16_t ports[] = { 22, 53, 80, 443, 8080 };
	static const uint16_t probe_ports[] = { 0, 1, 22, 53, 79, 80, 81, 443, 8080, 8180, 65535 };
	const struct sbt_floor *fl;
	struct sbt_rule rules[12];
	struct sbt_parse_error err;
	size_t nf;
	int iter, compiled = 0, allowed = 0, floors = 0;

	(void)state;
	fl = sbt_policy_floor(&nf);
	for (iter = 0; iter < 2000; iter++) {
		size_t nr = rnd(12) + 1, i;
		int n, s;

		for (i = 0; i < nr; i++) {
			struct sbt_rule *r = &rules[i];
			unsigned int p;

			memset(r, 0, sizeof(*r));
			r->kind = SBT_RULE_CIDR;
			random_base(r->addr, fl, nf);
			if (rnd(2)) {
				const struct sbt_floor *f = &fl[rnd((uint32_t)nf)];

				p = f->prefix + rnd(12);
				p = p < 6 ? 0 : p - 6; /* around a floor prefix */
				if (rnd(2))
					memcpy(r->addr, f->addr, 16);
			} else {
				p = rnd(129);
			}
			r->prefix = (uint8_t)(p > 128 ? 128 : p);
			for (p = r->prefix; p < 128; p++)
				r->addr[p / 8] &= (uint8_t) ~(0x80 >> (p % 8));
			if (rnd(2)) {
				r->port_lo = 0;
				r->port_hi = 65535;
			} else {
				r->port_lo = ports[rnd(5)];
				r->port_hi = (uint16_t)(r->port_lo + (rnd(2) ? 0 : rnd(100)));
			}
			r->proto = (enum sbt_proto[]){ SBT_PROTO_ANY, SBT_PROTO_TCP,
						       SBT_PROTO_UDP }[rnd(3)];
			r->id = i && !rnd(5) ? rules[i - 1].id : (uint32_t)i + 1;
		}
		n = sbt_policy_compile(rules, nr, entries, MAX_ENTRIES, &err);
		if (n == -E2BIG)
			continue;
		assert_true(n > 0);
		compiled++;
		for (s = 0; s < 60; s++) {
			uint8_t a[16], base[16];
			uint16_t port = rnd(4) ? probe_ports[rnd(11)] : (uint16_t)rnd(65536);
			uint8_t proto = (uint8_t[]){ SBT_PROTO_TCP, SBT_PROTO_UDP, 1 }[rnd(3)];
			bool f1, f2;
			uint32_t got, want;

			if (rnd(3))
				memcpy(base, rules[rnd((uint32_t)nr)].addr, 16);
			else
				random_base(base, fl, nf);
			random_near(a, base, rnd(129));
			got = sbt_policy_verdict(entries, (size_t)n, a, port, proto, &f1);
			want = policy_reference(rules, nr, a, port, proto, &f2);
			if (got != want || f1 != f2) {
				char as[64];

				sbt_addr_str(a, as, sizeof(as));
				fail_msg("iteration %d: %s port %u proto %u: verdict %u floor %d, "
					 "reference %u floor %d",
					 iter, as, port, proto, got, f1, want, f2);
			}
			allowed += got != 0;
			floors += f1;
		}
	}
	/* the generator must exercise all paths */
	assert_true(compiled > 1500);
	assert_true(allowed > 1000);
	assert_true(floors > 1000);
	print_message("[          ] %d rule sets compiled, %d allowed, %d floor verdicts\n",
		      compiled, allowed, floors);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_table),
		cmocka_unit_test(test_mapped_equals_v4),
		cmocka_unit_test(test_error_token_cut),
		cmocka_unit_test(test_host_lengths),
		cmocka_unit_test(test_parse_arg),
		cmocka_unit_test(test_addr),
		cmocka_unit_test(test_floor_list),
		cmocka_unit_test(test_floor_of),
		cmocka_unit_test(test_floor_embeddings),
		cmocka_unit_test(test_answer_floor),
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_push_down),
		cmocka_unit_test(test_floor_not_opened_by_broad_rules),
		cmocka_unit_test(test_floor_opened),
		cmocka_unit_test(test_v4_v6_separation),
		cmocka_unit_test(test_dedup_and_order),
		cmocka_unit_test(test_too_many_alternatives),
		cmocka_unit_test(test_proto_and_port_edges),
		cmocka_unit_test(test_compile_rejects),
		cmocka_unit_test(test_random_vs_reference),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
