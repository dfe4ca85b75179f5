// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for the DNS query builder / response parser (userspace/dns.c). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "egress/dns.h"

#define ID	 0x1234
#define QNAME	 "example.test"
#define MAXADDR	 16
#define F_RESP	 0x8180 /* QR, RD, RA; opcode 0, rcode 0 */
#define CLASS_IN 1
#define CLASS_CH 3
#define TYPE_SOA 6

/* --- a tiny test-local DNS encoder ------------------------------------- */

struct msg {
	uint8_t b[2048];
	size_t len;
};

static void m_u8(struct msg *m, uint8_t v)
{
	assert_true(m->len < sizeof(m->b));
	m->b[m->len++] = v;
}

static void m_u16(struct msg *m, uint16_t v)
{
	m_u8(m, (uint8_t)(v >> 8));
	m_u8(m, (uint8_t)v);
}

static void m_u32(struct msg *m, uint32_t v)
{
	m_u16(m, (uint16_t)(v >> 16));
	m_u16(m, (uint16_t)v);
}

static void m_bytes(struct msg *m, const void *p, size_t n)
{
	assert_true(n <= sizeof(m->b) - m->len);
	memcpy(m->b + m->len, p, n);
	m->len += n;
}

/* Uncompressed name; NULL: a pointer to the question name (offset 12). */
static void m_name(struct msg *m, const char *name)
{
	const char *p = name;

	if (!name) {
		m_u16(m, 0xc00c);
		return;
	}
	while (*p) {
		const char *dot = strchr(p, '.');
		size_t l = dot ? (size_t)(dot - p) : strlen(p);

		m_u8(m, (uint8_t)l);
		m_bytes(m, p, l);
		p += l;
		if (*p)
			p++;
	}
	m_u8(m, 0);
}

static void m_header(struct msg *m, uint16_t id, uint16_t flags, uint16_t qd, uint16_t an,
		     uint16_t ns, uint16_t ar)
{
	m->len = 0;
	m_u16(m, id);
	m_u16(m, flags);
	m_u16(m, qd);
	m_u16(m, an);
	m_u16(m, ns);
	m_u16(m, ar);
}

static void m_question(struct msg *m, const char *name, uint16_t type, uint16_t class)
{
	m_name(m, name);
	m_u16(m, type);
	m_u16(m, class);
}

/* A standard response header and question for QNAME. */
static void m_resp(struct msg *m, uint16_t flags, uint16_t qtype, uint16_t an, uint16_t ns)
{
	m_header(m, ID, flags, 1, an, ns, 0);
	m_question(m, QNAME, qtype, CLASS_IN);
}

/* Owner, type, class, ttl; returns the offset of rdlength (see m_rr_end). */
static size_t m_rr(struct msg *m, const char *owner, uint16_t type, uint16_t class, uint32_t ttl)
{
	size_t at;

	m_name(m, owner);
	m_u16(m, type);
	m_u16(m, class);
	m_u32(m, ttl);
	at = m->len;
	m_u16(m, 0);
	return at;
}

static void m_rr_end(struct msg *m, size_t at)
{
	size_t rdlen = m->len - at - 2;

	m->b[at] = (uint8_t)(rdlen >> 8);
	m->b[at + 1] = (uint8_t)rdlen;
}

static void m_a(struct msg *m, const char *owner, uint32_t ttl, uint8_t a, uint8_t b, uint8_t c,
		uint8_t d)
{
	size_t at = m_rr(m, owner, SBT_DNS_TYPE_A, CLASS_IN, ttl);
	const uint8_t ip[4] = { a, b, c, d };

	m_bytes(m, ip, 4);
	m_rr_end(m, at);
}

static void m_aaaa(struct msg *m, const char *owner, uint32_t ttl, uint8_t last)
{
	size_t at = m_rr(m, owner, SBT_DNS_TYPE_AAAA, CLASS_IN, ttl);
	uint8_t ip[16] = { 0x20, 0x01, 0x0d, 0xb8 };

	ip[15] = last;
	m_bytes(m, ip, 16);
	m_rr_end(m, at);
}

static void m_cname(struct msg *m, const char *owner, uint32_t ttl, const char *target)
{
	size_t at = m_rr(m, owner, SBT_DNS_TYPE_CNAME, CLASS_IN, ttl);

	m_name(m, target);
	m_rr_end(m, at);
}

/* Returns the offset of its rdlength. */
static size_t m_soa(struct msg *m, const char *owner, uint32_t ttl, uint32_t minimum)
{
	size_t at = m_rr(m, owner, TYPE_SOA, CLASS_IN, ttl);

	m_name(m, "ns1.test");
	m_name(m, "hostmaster.test");
	m_u32(m, 2024010101);
	m_u32(m, 7200);
	m_u32(m, 900);
	m_u32(m, 1209600);
	m_u32(m, minimum);
	m_rr_end(m, at);
	return at;
}

/* --- helpers ----------------------------------------------------------- */

/* Parse from an exact-size heap copy, so ASan catches any read past len. */
static enum sbt_dns_status parse_buf(const uint8_t *b, size_t len, const char *name, uint16_t qtype,
				     struct sbt_dns_addr *out, size_t max, size_t *n, uint32_t *ttl)
{
	uint8_t *copy = malloc(len ? len : 1);
	enum sbt_dns_status st;

	assert_non_null(copy);
	memcpy(copy, b, len);
	*n = 12345;
	*ttl = 12345;
	st = sbt_dns_parse_response(copy, len, ID, name, qtype, out, max, n, ttl);
	free(copy);
	assert_true(*n <= max);
	if (st != SBT_DNS_OK)
		assert_int_equal(*n, 0);
	if (st != SBT_DNS_OK && st != SBT_DNS_NXDOMAIN)
		assert_int_equal(*ttl, 0);
	return st;
}

static enum sbt_dns_status parse(const struct msg *m, uint16_t qtype, struct sbt_dns_addr *out,
				 size_t *n, uint32_t *ttl)
{
	return parse_buf(m->b, m->len, QNAME, qtype, out, MAXADDR, n, ttl);
}

static enum sbt_dns_status parse_status(const struct msg *m, uint16_t qtype)
{
	struct sbt_dns_addr out[MAXADDR];
	uint32_t ttl;
	size_t n;

	return parse(m, qtype, out, &n, &ttl);
}

static void expect_v4(const struct sbt_dns_addr *a, uint8_t b0, uint8_t b1, uint8_t b2, uint8_t b3)
{
	const uint8_t want[16] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, b0, b1, b2, b3 };

	assert_memory_equal(a->addr, want, 16);
}

/* Every proper prefix of a response whose bytes are all needed is MALFORMED. */
static void expect_all_prefixes_malformed(const struct msg *m, uint16_t qtype)
{
	struct sbt_dns_addr out[MAXADDR];
	uint32_t ttl;
	size_t n;

	for (size_t cut = 0; cut < m->len; cut++) {
		enum sbt_dns_status st = parse_buf(m->b, cut, QNAME, qtype, out, MAXADDR, &n, &ttl);

		if (st != SBT_DNS_MALFORMED)
			fail_msg("prefix of %zu/%zu bytes: %s", cut, m->len,
				 sbt_dns_status_str(st));
		assert_int_equal(n, 0);
	}
}

/* --- query building ---------------------------------------------------- */

static void test_query_exact_bytes(void **state)
{
	static const uint8_t want[] = {
		0x12, 0x34, 0x01, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00,
		0x00, 0x00, 7,	  'e',	'x',  'a',  'm',  'p',	'l',  'e',
		4,    't',  'e',  's',	't',  0,    0x00, 0x01, 0x00, 0x01
	};
	uint8_t buf[512];

	(void)state;
	memset(buf, 0xaa, sizeof(buf));
	assert_int_equal(sbt_dns_build_query(ID, "example.test", SBT_DNS_TYPE_A, buf, sizeof(buf)),
			 sizeof(want));
	assert_memory_equal(buf, want, sizeof(want));
	assert_int_equal(buf[sizeof(want)], 0xaa);

	/* The trailing dot is optional. */
	memset(buf, 0xaa, sizeof(buf));
	assert_int_equal(sbt_dns_build_query(ID, "example.test.", SBT_DNS_TYPE_A, buf, sizeof(buf)),
			 sizeof(want));
	assert_memory_equal(buf, want, sizeof(want));

	/* AAAA, other id. */
	assert_int_equal(sbt_dns_build_query(0xbeef, "a", SBT_DNS_TYPE_AAAA, buf, sizeof(buf)),
			 12 + 3 + 4);
	assert_int_equal(buf[0], 0xbe);
	assert_int_equal(buf[1], 0xef);
	assert_int_equal(buf[12], 1);
	assert_int_equal(buf[13], 'a');
	assert_int_equal(buf[14], 0);
	assert_int_equal(buf[15], 0);
	assert_int_equal(buf[16], 28);
}

static void test_query_bad_names(void **state)
{
	char name[300];
	uint8_t buf[512];

	(void)state;
	assert_int_equal(sbt_dns_build_query(ID, "a..b", 1, buf, sizeof(buf)), -EINVAL);
	assert_int_equal(sbt_dns_build_query(ID, ".a", 1, buf, sizeof(buf)), -EINVAL);
	assert_int_equal(sbt_dns_build_query(ID, "a.b..", 1, buf, sizeof(buf)), -EINVAL);
	assert_int_equal(sbt_dns_build_query(ID, "", 1, buf, sizeof(buf)), -EINVAL);
	assert_int_equal(sbt_dns_build_query(ID, ".", 1, buf, sizeof(buf)), -EINVAL);
	assert_int_equal(sbt_dns_build_query(ID, "..", 1, buf, sizeof(buf)), -EINVAL);
	assert_int_equal(sbt_dns_build_query(ID, NULL, 1, buf, sizeof(buf)), -EINVAL);

	/* Label of 63 is fine, 64 is not. */
	memset(name, 'x', 63);
	strcpy(name + 63, ".test");
	assert_int_equal(sbt_dns_build_query(ID, name, 1, buf, sizeof(buf)), 12 + 64 + 6 + 4);
	memset(name, 'x', 64);
	strcpy(name + 64, ".test");
	assert_int_equal(sbt_dns_build_query(ID, name, 1, buf, sizeof(buf)), -EINVAL);
	memset(name, 'y', 64);
	name[64] = '\0';
	assert_int_equal(sbt_dns_build_query(ID, name, 1, buf, sizeof(buf)), -EINVAL);

	/* Names of 253 (with or without a trailing dot) are fine, 254 is not. */
	for (size_t i = 0; i < 253; i++)
		name[i] = (i % 50 == 49) ? '.' : 'a';
	name[253] = '\0';
	assert_int_equal(sbt_dns_build_query(ID, name, 1, buf, sizeof(buf)), 12 + 255 + 4);
	strcpy(name + 253, ".");
	assert_int_equal(sbt_dns_build_query(ID, name, 1, buf, sizeof(buf)), 12 + 255 + 4);
	strcpy(name + 253, "b");
	assert_int_equal(sbt_dns_build_query(ID, name, 1, buf, sizeof(buf)), -EINVAL);
	strcpy(name + 253, "b.");
	assert_int_equal(sbt_dns_build_query(ID, name, 1, buf, sizeof(buf)), -EINVAL);
}

static void test_query_enospc(void **state)
{
	uint8_t buf[64];

	(void)state;
	/* 30 bytes needed for example.test. */
	memset(buf, 0xaa, sizeof(buf));
	assert_int_equal(sbt_dns_build_query(ID, QNAME, 1, buf, 29), -ENOSPC);
	assert_int_equal(sbt_dns_build_query(ID, QNAME, 1, buf, 12), -ENOSPC);
	assert_int_equal(sbt_dns_build_query(ID, QNAME, 1, buf, 0), -ENOSPC);
	assert_int_equal(sbt_dns_build_query(ID, QNAME, 1, NULL, 0), -ENOSPC);
	assert_int_equal(buf[0], 0xaa); /* nothing written */
	assert_int_equal(sbt_dns_build_query(ID, QNAME, 1, buf, 30), 30);
	/* A bad name is reported before the size. */
	assert_int_equal(sbt_dns_build_query(ID, "a..b", 1, buf, 0), -EINVAL);
}

static void test_query_roundtrip(void **state)
{
	struct sbt_dns_addr out[MAXADDR];
	uint8_t buf[512];
	uint32_t ttl;
	size_t n;
	int len;

	(void)state;
	/* Our own query, with QR set, parses as a NODATA answer to itself. */
	len = sbt_dns_build_query(ID, "Mixed.Case.example.", SBT_DNS_TYPE_AAAA, buf, sizeof(buf));
	assert_true(len > 0);
	buf[2] |= 0x80;
	assert_int_equal(parse_buf(buf, (size_t)len, "mixed.case.EXAMPLE", SBT_DNS_TYPE_AAAA, out,
				   MAXADDR, &n, &ttl),
			 SBT_DNS_OK);
	assert_int_equal(n, 0);
	assert_int_equal(ttl, 0);
}

/* --- responses --------------------------------------------------------- */

static void test_simple_a(void **state)
{
	struct sbt_dns_addr out[MAXADDR];
	struct msg m;
	uint32_t ttl;
	size_t n;

	(void)state;
	m_resp(&m, F_RESP, SBT_DNS_TYPE_A, 1, 0);
	m_a(&m, NULL, 300, 192, 0, 2, 1);
	assert_int_equal(parse(&m, SBT_DNS_TYPE_A, out, &n, &ttl), SBT_DNS_OK);
	assert_int_equal(n, 1);
	expect_v4(&out[0], 192, 0, 2, 1);
	assert_int_equal(out[0].ttl, 300);
	assert_int_equal(ttl, 300);
	expect_all_prefixes_malformed(&m, SBT_DNS_TYPE_A);

	/* Uncompressed owner, trailing-dot query name. */
	m_resp(&m, F_RESP, SBT_DNS_TYPE_A, 1, 0);
	m_a(&m, QNAME, 60, 10, 1, 2, 3);
	assert_int_equal(parse_buf(m.b, m.len, QNAME ".", SBT_DNS_TYPE_A, out, MAXADDR, &n, &ttl),
			 SBT_DNS_OK);
	assert_int_equal(n, 1);
	expect_v4(&out[0], 10, 1, 2, 3);
	assert_int_equal(ttl, 60);
}

static void test_multiple_a(void **state)
{
	struct sbt_dns_addr out[MAXADDR];
	struct msg m;
	uint32_t ttl;
	size_t n;

	(void)state;
	m_resp(&m, F_RESP, SBT_DNS_TYPE_A, 3, 0);
	m_a(&m, NULL, 300, 192, 0, 2, 1);
	m_a(&m, NULL, 100, 192, 0, 2, 2);
	m_a(&m, QNAME, 200, 192, 0, 2, 3);
	assert_int_equal(parse(&m, SBT_DNS_TYPE_A, out, &n, &ttl), SBT_DNS_OK);
	assert_int_equal(n, 3);
	expect_v4(&out[0], 192, 0, 2, 1);
	expect_v4(&out[1], 192, 0, 2, 2);
	expect_v4(&out[2], 192, 0, 2, 3);
	assert_int_equal(out[1].ttl, 100);
	assert_int_equal(ttl, 100);
	expect_all_prefixes_malformed(&m, SBT_DNS_TYPE_A);

	/* max caps what is written; min_ttl still covers every answer. */
	assert_int_equal(parse_buf(m.b, m.len, QNAME, SBT_DNS_TYPE_A, out, 1, &n, &ttl),
			 SBT_DNS_OK);
	assert_int_equal(n, 1);
	expect_v4(&out[0], 192, 0, 2, 1);
	assert_int_equal(ttl, 100);

	/* max 0, out NULL: answers exist (OK), none written. */
	assert_int_equal(parse_buf(m.b, m.len, QNAME, SBT_DNS_TYPE_A, NULL, 0, &n, &ttl),
			 SBT_DNS_OK);
	assert_int_equal(n, 0);
	assert_int_equal(ttl, 100);

	/* out NULL is treated as max 0. */
	assert_int_equal(parse_buf(m.b, m.len, QNAME, SBT_DNS_TYPE_A, NULL, 4, &n, &ttl),
			 SBT_DNS_OK);
	assert_int_equal(n, 0);

	/* n and min_ttl may be NULL. */
	assert_int_equal(
		sbt_dns_parse_response(m.b, m.len, ID, QNAME, SBT_DNS_TYPE_A, out, 2, NULL, NULL),
		SBT_DNS_OK);
}

static void test_aaaa(void **state)
{
	static const uint8_t want[16] = {
		0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7
	};
	struct sbt_dns_addr out[MAXADDR];
	struct msg m;
	uint32_t ttl;
	size_t n;

	(void)state;
	m_resp(&m, F_RESP, SBT_DNS_TYPE_AAAA, 3, 0);
	m_a(&m, NULL, 10, 192, 0, 2, 1); /* not the asked type: ignored */
	m_aaaa(&m, NULL, 3600, 7);
	m_aaaa(&m, NULL, 1800, 8);
	assert_int_equal(parse(&m, SBT_DNS_TYPE_AAAA, out, &n, &ttl), SBT_DNS_OK);
	assert_int_equal(n, 2);
	assert_memory_equal(out[0].addr, want, 16);
	assert_int_equal(out[0].ttl, 3600);
	assert_int_equal(out[1].addr[15], 8);
	assert_int_equal(ttl, 1800);
	expect_all_prefixes_malformed(&m, SBT_DNS_TYPE_AAAA);
}

static void test_cname_chain(void **state)
{
	struct sbt_dns_addr out[MAXADDR];
	struct msg m;
	uint32_t ttl;
	size_t n;

	(void)state;
	/* In order: example.test -> www.cdn.test -> edge.cdn.test (A x2). */
	m_resp(&m, F_RESP, SBT_DNS_TYPE_A, 4, 0);
	m_cname(&m, NULL, 3600, "www.cdn.test");
	m_cname(&m, "www.cdn.test", 50, "edge.cdn.test");
	m_a(&m, "edge.cdn.test", 120, 198, 51, 100, 1);
	m_a(&m, "EDGE.cdn.TEST", 90, 198, 51, 100, 2);
	assert_int_equal(parse(&m, SBT_DNS_TYPE_A, out, &n, &ttl), SBT_DNS_OK);
	assert_int_equal(n, 2);
	expect_v4(&out[0], 198, 51, 100, 1);
	expect_v4(&out[1], 198, 51, 100, 2);
	assert_int_equal(ttl, 50); /* the CNAME counts */
	expect_all_prefixes_malformed(&m, SBT_DNS_TYPE_A);

	/* Out of order, with records of unrelated owners mixed in. */
	m_resp(&m, F_RESP, SBT_DNS_TYPE_A, 6, 0);
	m_a(&m, "edge.cdn.test", 120, 198, 51, 100, 1);
	m_a(&m, "unrelated.test", 5, 203, 0, 113, 9);
	m_cname(&m, "www.cdn.test", 500, "edge.cdn.test");
	m_cname(&m, "unrelated.test", 1, "edge.cdn.test");
	m_cname(&m, NULL, 3600, "www.cdn.test");
	m_a(&m, "edge.cdn.test", 700, 198, 51, 100, 2);
	assert_int_equal(parse(&m, SBT_DNS_TYPE_A, out, &n, &ttl), SBT_DNS_OK);
	assert_int_equal(n, 2);
	expect_v4(&out[0], 198, 51, 100, 1);
	expect_v4(&out[1], 198, 51, 100, 2);
	assert_int_equal(ttl, 120);

	/*
	 * Compression inside the chain: question alias.test (offsets 12..27),
	 * CNAME at 28 owned by a pointer to it, target example.test at 40; the
	 * A record's owner is a pointer to that target.
	 */
	m_header(&m, ID, F_RESP, 1, 2, 0, 0);
	m_question(&m, "alias.test", SBT_DNS_TYPE_A, CLASS_IN);
	m_cname(&m, NULL, 30, QNAME);
	m_u16(&m, 0xc000 | 40);
	m_u16(&m, SBT_DNS_TYPE_A);
	m_u16(&m, CLASS_IN);
	m_u32(&m, 40);
	m_u16(&m, 4);
	m_bytes(&m, "\xc0\x00\x02\x04", 4);
	assert_int_equal(
		parse_buf(m.b, m.len, "alias.test", SBT_DNS_TYPE_A, out, MAXADDR, &n, &ttl),
		SBT_DNS_OK);
	assert_int_equal(n, 1);
	expect_v4(&out[0], 192, 0, 2, 4);
	assert_int_equal(ttl, 30);

	/* Addresses at an intermediate name of the chain are taken too. */
	m_resp(&m, F_RESP, SBT_DNS_TYPE_A, 3, 0);
	m_cname(&m, NULL, 300, "mid.test");
	m_a(&m, NULL, 300, 192, 0, 2, 10);
	m_cname(&m, "mid.test", 300, "end.test");
	assert_int_equal(parse(&m, SBT_DNS_TYPE_A, out, &n, &ttl), SBT_DNS_OK);
	assert_int_equal(n, 1);
	expect_v4(&out[0], 192, 0, 2, 10);
}

static void test_cname_loop(void **state)
{
	struct msg m;

	(void)state;
	/* example.test -> a.test -> example.test: MALFORMED (never an answer). */
	m_resp(&m, F_RESP, SBT_DNS_TYPE_A, 3, 0);
	m_cname(&m, NULL, 60, "a.test");
	m_cname(&m, "a.test", 60, QNAME);
	m_a(&m, "a.test", 60, 192, 0, 2, 1);
	assert_int_equal(parse_status(&m, SBT_DNS_TYPE_A), SBT_DNS_MALFORMED);

	/* Self loop. */
	m_resp(&m, F_RESP, SBT_DNS_TYPE_A, 1, 0);
	m_cname(&m, NULL, 60, "Example.Test.");
	assert_int_equal(parse_status(&m, SBT_DNS_TYPE_A), SBT_DNS_MALFORMED);

	/* Loop further down the chain. */
	m_resp(&m, F_RESP, SBT_DNS_TYPE_A, 3, 0);
	m_cname(&m, NULL, 60, "b.test");
	m_cname(&m, "b.test", 60, "c.test");
	m_cname(&m, "c.test", 60, "b.test");
	assert_int_equal(parse_status(&m, SBT_DNS_TYPE_A), SBT_DNS_MALFORMED);

	/* A loop not reachable from the queried name is irrelevant. */
	m_resp(&m, F_RESP, SBT_DNS_TYPE_A, 3, 0);
	m_cname(&m, "x.test", 60, "y.test");
	m_cname(&m, "y.test", 60, "x.test");
	m_a(&m, NULL, 60, 192, 0, 2, 1);
	assert_int_equal(parse_status(&m, SBT_DNS_TYPE_A), SBT_DNS_OK);
}

static void build_chain(struct msg *m, unsigned int links)
{
	char owner[32], target[32];

	m_resp(m, F_RESP, SBT_DNS_TYPE_A, (uint16_t)(links + 1), 0);
	/* Reverse order, to exercise the repeated passes. */
	snprintf(target, sizeof(target), "c%u.test", links);
	m_a(m, target, 60, 192, 0, 2, (uint8_t)links);
	for (unsigned int i = links; i >= 1; i--) {
		snprintf(owner, sizeof(owner), "c%u.test", i - 1);
		snprintf(target, sizeof(target), "c%u.test", i);
		m_cname(m, i == 1 ? QNAME : owner, 100 + i, target);
	}
}

static void test_cname_chain_length(void **state)
{
	struct sbt_dns_addr out[MAXADDR];
	struct msg m;
	uint32_t ttl;
	size_t n;

	(void)state;
	build_chain(&m, 8);
	assert_int_equal(parse(&m, SBT_DNS_TYPE_A, out, &n, &ttl), SBT_DNS_OK);
	assert_int_equal(n, 1);
	expect_v4(&out[0], 192, 0, 2, 8);
	assert_int_equal(ttl, 60);

	build_chain(&m, 9);
	assert_int_equal(parse(&m, SBT_DNS_TYPE_A, out, &n, &ttl), SBT_DNS_MALFORMED);
	assert_int_equal(n, 0);
	build_chain(&m, 20);
	assert_int_equal(parse(&m, SBT_DNS_TYPE_A, out, &n, &ttl), SBT_DNS_MALFORMED);
}

static void test_other_owners_ignored(void **state)
{
	struct sbt_dns_addr out[MAXADDR];
	struct msg m;
	uint32_t ttl;
	size_t n;

	(void)state;
	m_resp(&m, F_RESP, SBT_DNS_TYPE_A, 4, 0);
	m_a(&m, "evil.test", 1, 6, 6, 6, 6);
	m_a(&m, "example.test.evil", 1, 6, 6, 6, 7);
	m_a(&m, NULL, 300, 192, 0, 2, 1);
	m_a(&m, "test", 1, 6, 6, 6, 8);
	assert_int_equal(parse(&m, SBT_DNS_TYPE_A, out, &n, &ttl), SBT_DNS_OK);
	assert_int_equal(n, 1);
	expect_v4(&out[0], 192, 0, 2, 1);
	assert_int_equal(ttl, 300);

	/* Only foreign answers: NODATA. */
	m_resp(&m, F_RESP, SBT_DNS_TYPE_A, 1, 0);
	m_a(&m, "evil.test", 1, 6, 6, 6, 6);
	assert_int_equal(parse(&m, SBT_DNS_TYPE_A, out, &n, &ttl), SBT_DNS_OK);
	assert_int_equal(n, 0);
	assert_int_equal(ttl, 0);

	/* Other classes are ignored (their rdata is not checked either). */
	m_resp(&m, F_RESP, SBT_DNS_TYPE_A, 2, 0);
	{
		size_t at = m_rr(&m, NULL, SBT_DNS_TYPE_A, CLASS_CH, 1);

		m_bytes(&m, "\x06\x06\x06\x06\x06", 5);
		m_rr_end(&m, at);
	}
	m_a(&m, NULL, 300, 192, 0, 2, 1);
	assert_int_equal(parse(&m, SBT_DNS_TYPE_A, out, &n, &ttl), SBT_DNS_OK);
	assert_int_equal(n, 1);
	expect_v4(&out[0], 192, 0, 2, 1);
	assert_int_equal(ttl, 300);

	/* Other types (TXT, MX) are skipped. */
	m_resp(&m, F_RESP, SBT_DNS_TYPE_A, 3, 0);
	{
		size_t at = m_rr(&m, NULL, 16, CLASS_IN, 1);

		m_bytes(&m, "\x03hey", 4);
		m_rr_end(&m, at);
		at = m_rr(&m, NULL, 15, CLASS_IN, 1);
		m_u16(&m, 10);
		m_name(&m, NULL);
		m_rr_end(&m, at);
	}
	m_a(&m, NULL, 300, 192, 0, 2, 1);
	assert_int_equal(parse(&m, SBT_DNS_TYPE_A, out, &n, &ttl), SBT_DNS_OK);
	assert_int_equal(n, 1);
	assert_int_equal(ttl, 300);
}

static void test_header_checks(void **state)
{
	struct sbt_dns_addr out[MAXADDR];
	struct msg m;
	uint32_t ttl;
	size_t n;

	(void)state;
	m_resp(&m, F_RESP, SBT_DNS_TYPE_A, 1, 0);
	m_a(&m, NULL, 300, 192, 0, 2, 1);

	/* Wrong id. */
	m.b[1] ^= 1;
	assert_int_equal(parse(&m, SBT_DNS_TYPE_A, out, &n, &ttl), SBT_DNS_MISMATCH);
	m.b[1] ^= 1;
	/* QR = 0 (a query, not a response). */
	m.b[2] &= 0x7f;
	assert_int_equal(parse(&m, SBT_DNS_TYPE_A, out, &n, &ttl), SBT_DNS_MISMATCH);
	m.b[2] |= 0x80;
	/* Opcode 2 (STATUS). */
	m.b[2] |= 0x10;
	assert_int_equal(parse(&m, SBT_DNS_TYPE_A, out, &n, &ttl), SBT_DNS_MISMATCH);
	m.b[2] &= (uint8_t)~0x10;
	/* TC: retry over TCP, whatever follows. */
	m.b[2] |= 0x02;
	assert_int_equal(parse(&m, SBT_DNS_TYPE_A, out, &n, &ttl), SBT_DNS_TRUNCATED);
	assert_int_equal(parse_buf(m.b, 12, QNAME, SBT_DNS_TYPE_A, out, MAXADDR, &n, &ttl),
			 SBT_DNS_TRUNCATED);
	m.b[2] &= (uint8_t)~0x02;
	/* AA, AD, CD, RA, Z bits don't matter. */
	m.b[2] |= 0x04;
	m.b[3] |= 0x70;
	assert_int_equal(parse(&m, SBT_DNS_TYPE_A, out, &n, &ttl), SBT_DNS_OK);
	assert_int_equal(n, 1);

	/* Shorter than a header; NULL message. */
	assert_int_equal(parse_buf(m.b, 11, QNAME, SBT_DNS_TYPE_A, out, MAXADDR, &n, &ttl),
			 SBT_DNS_MALFORMED);
	assert_int_equal(sbt_dns_parse_response(NULL, 0, ID, QNAME, 1, out, MAXADDR, &n, &ttl),
			 SBT_DNS_MALFORMED);

	/* An invalid query name can match nothing. */
	assert_int_equal(parse_buf(m.b, m.len, "a..b", SBT_DNS_TYPE_A, out, MAXADDR, &n, &ttl),
			 SBT_DNS_MISMATCH);
	assert_int_equal(parse_buf(m.b, m.len, "", SBT_DNS_TYPE_A, out, MAXADDR, &n, &ttl),
			 SBT_DNS_MISMATCH);

	/* Trailing bytes and an unread additional section are tolerated. */
	m.b[11] = 5; /* ARCOUNT */
	m_bytes(&m, "\xff\xff\xff", 3);
	assert_int_equal(parse(&m, SBT_DNS_TYPE_A, out, &n, &ttl), SBT_DNS_OK);
	assert_int_equal(n, 1);
}

static void test_rcodes(void **state)
{
	struct sbt_dns_addr out[MAXADDR];
	struct msg m;
	uint32_t ttl;
	size_t n;

	(void)state;
	m_resp(&m, F_RESP | 2, SBT_DNS_TYPE_A, 0, 0);
	assert_int_equal(parse(&m, SBT_DNS_TYPE_A, out, &n, &ttl), SBT_DNS_SERVFAIL);
	m_resp(&m, F_RESP | 5, SBT_DNS_TYPE_A, 0, 0);
	assert_int_equal(parse(&m, SBT_DNS_TYPE_A, out, &n, &ttl), SBT_DNS_SERVFAIL);
	m_resp(&m, F_RESP | 1, SBT_DNS_TYPE_A, 0, 0);
	assert_int_equal(parse(&m, SBT_DNS_TYPE_A, out, &n, &ttl), SBT_DNS_SERVFAIL);
	m_resp(&m, F_RESP | 15, SBT_DNS_TYPE_A, 1, 0);
	m_a(&m, NULL, 300, 192, 0, 2, 1); /* answers are not used on errors */
	assert_int_equal(parse(&m, SBT_DNS_TYPE_A, out, &n, &ttl), SBT_DNS_SERVFAIL);
	assert_int_equal(n, 0);

	/* Errors without a question (FORMERR, REFUSED often look like this). */
	m_header(&m, ID, F_RESP | 1, 0, 0, 0, 0);
	assert_int_equal(parse(&m, SBT_DNS_TYPE_A, out, &n, &ttl), SBT_DNS_SERVFAIL);
	m_header(&m, ID, F_RESP | 5, 0, 0, 0, 0);
	assert_int_equal(parse(&m, SBT_DNS_TYPE_A, out, &n, &ttl), SBT_DNS_SERVFAIL);
	/* ... but a question, if present, must match. */
	m_header(&m, ID, F_RESP | 2, 1, 0, 0, 0);
	m_question(&m, "other.test", SBT_DNS_TYPE_A, CLASS_IN);
	assert_int_equal(parse(&m, SBT_DNS_TYPE_A, out, &n, &ttl), SBT_DNS_MISMATCH);

	/* NXDOMAIN without SOA: min_ttl 0. */
	m_resp(&m, F_RESP | 3, SBT_DNS_TYPE_A, 0, 0);
	assert_int_equal(parse(&m, SBT_DNS_TYPE_A, out, &n, &ttl), SBT_DNS_NXDOMAIN);
	assert_int_equal(n, 0);
	assert_int_equal(ttl, 0);
	/* NXDOMAIN and NOERROR need the question. */
	m_header(&m, ID, F_RESP | 3, 0, 0, 0, 0);
	assert_int_equal(parse(&m, SBT_DNS_TYPE_A, out, &n, &ttl), SBT_DNS_MISMATCH);
	m_header(&m, ID, F_RESP, 0, 0, 0, 0);
	assert_int_equal(parse(&m, SBT_DNS_TYPE_A, out, &n, &ttl), SBT_DNS_MISMATCH);
}

static void test_nxdomain_soa(void **state)
{
	struct sbt_dns_addr out[MAXADDR];
	struct msg m;
	uint32_t ttl;
	size_t n, at;

	(void)state;
	/* min(SOA TTL, SOA MINIMUM), both ways round. */
	m_resp(&m, F_RESP | 3, SBT_DNS_TYPE_A, 0, 1);
	m_soa(&m, "test", 3600, 300);
	assert_int_equal(parse(&m, SBT_DNS_TYPE_A, out, &n, &ttl), SBT_DNS_NXDOMAIN);
	assert_int_equal(n, 0);
	assert_int_equal(ttl, 300);
	expect_all_prefixes_malformed(&m, SBT_DNS_TYPE_A);

	m_resp(&m, F_RESP | 3, SBT_DNS_TYPE_A, 0, 2);
	{
		at = m_rr(&m, "test", 2, CLASS_IN, 5); /* NS: skipped */

		m_name(&m, "ns1.test");
		m_rr_end(&m, at);
	}
	m_soa(&m, "test", 60, 300);
	assert_int_equal(parse(&m, SBT_DNS_TYPE_A, out, &n, &ttl), SBT_DNS_NXDOMAIN);
	assert_int_equal(ttl, 60);

	/* SOA records of other classes are ignored. */
	m_resp(&m, F_RESP | 3, SBT_DNS_TYPE_A, 0, 2);
	at = m_rr(&m, "test", TYPE_SOA, CLASS_CH, 1);
	m_bytes(&m, "\x01", 1);
	m_rr_end(&m, at);
	m_soa(&m, "test", 600, 500);
	assert_int_equal(parse(&m, SBT_DNS_TYPE_A, out, &n, &ttl), SBT_DNS_NXDOMAIN);
	assert_int_equal(ttl, 500);

	/* Several SOAs: the smallest wins. */
	m_resp(&m, F_RESP | 3, SBT_DNS_TYPE_A, 0, 2);
	m_soa(&m, "test", 600, 400);
	m_soa(&m, "example.test", 600, 500);
	assert_int_equal(parse(&m, SBT_DNS_TYPE_A, out, &n, &ttl), SBT_DNS_NXDOMAIN);
	assert_int_equal(ttl, 400);

	/* SOA minimum with the top bit set counts as 0. */
	m_resp(&m, F_RESP | 3, SBT_DNS_TYPE_A, 0, 1);
	m_soa(&m, "test", 60, 0x80000000u);
	assert_int_equal(parse(&m, SBT_DNS_TYPE_A, out, &n, &ttl), SBT_DNS_NXDOMAIN);
	assert_int_equal(ttl, 0);

	/* NXDOMAIN at the end of a CNAME chain: the CNAME TTL also bounds it. */
	m_resp(&m, F_RESP | 3, SBT_DNS_TYPE_A, 1, 1);
	m_cname(&m, NULL, 20, "gone.test");
	m_soa(&m, "test", 3600, 300);
	assert_int_equal(parse(&m, SBT_DNS_TYPE_A, out, &n, &ttl), SBT_DNS_NXDOMAIN);
	assert_int_equal(ttl, 20);
	expect_all_prefixes_malformed(&m, SBT_DNS_TYPE_A);

	/* SOA rdata one byte too long / too short: MALFORMED. */
	m_resp(&m, F_RESP | 3, SBT_DNS_TYPE_A, 0, 1);
	at = m_soa(&m, "test", 3600, 300);
	m_u8(&m, 0);
	m.b[at + 1]++; /* rdlength low byte */
	assert_int_equal(parse(&m, SBT_DNS_TYPE_A, out, &n, &ttl), SBT_DNS_MALFORMED);
	m.b[at + 1] -= 2;
	assert_int_equal(parse(&m, SBT_DNS_TYPE_A, out, &n, &ttl), SBT_DNS_MALFORMED);
}

static void test_nodata(void **state)
{
	struct sbt_dns_addr out[MAXADDR];
	struct msg m;
	uint32_t ttl;
	size_t n;

	(void)state;
	m_resp(&m, F_RESP, SBT_DNS_TYPE_AAAA, 0, 1);
	m_soa(&m, NULL, 900, 600);
	assert_int_equal(parse(&m, SBT_DNS_TYPE_AAAA, out, &n, &ttl), SBT_DNS_OK);
	assert_int_equal(n, 0);
	assert_int_equal(ttl, 600);
	expect_all_prefixes_malformed(&m, SBT_DNS_TYPE_AAAA);

	/* Without SOA: 0. */
	m_resp(&m, F_RESP, SBT_DNS_TYPE_AAAA, 0, 0);
	assert_int_equal(parse(&m, SBT_DNS_TYPE_AAAA, out, &n, &ttl), SBT_DNS_OK);
	assert_int_equal(n, 0);
	assert_int_equal(ttl, 0);

	/* An A answer to an AAAA question is NODATA too. */
	m_resp(&m, F_RESP, SBT_DNS_TYPE_AAAA, 1, 1);
	m_a(&m, NULL, 5, 192, 0, 2, 1);
	m_soa(&m, "test", 900, 600);
	assert_int_equal(parse(&m, SBT_DNS_TYPE_AAAA, out, &n, &ttl), SBT_DNS_OK);
	assert_int_equal(n, 0);
	assert_int_equal(ttl, 600);

	/* CNAME then NODATA: the CNAME's TTL lowers the SOA's. */
	m_resp(&m, F_RESP, SBT_DNS_TYPE_AAAA, 1, 1);
	m_cname(&m, NULL, 30, "v4only.test");
	m_soa(&m, "test", 900, 600);
	assert_int_equal(parse(&m, SBT_DNS_TYPE_AAAA, out, &n, &ttl), SBT_DNS_OK);
	assert_int_equal(n, 0);
	assert_int_equal(ttl, 30);

	/* A broken authority section is MALFORMED for NODATA. */
	m_resp(&m, F_RESP, SBT_DNS_TYPE_AAAA, 0, 2);
	m_soa(&m, "test", 900, 600);
	assert_int_equal(parse(&m, SBT_DNS_TYPE_AAAA, out, &n, &ttl), SBT_DNS_MALFORMED);
}

/* A response with one answer whose owner is the raw bytes `owner`. */
static void answer_with_owner(struct msg *m, const void *owner, size_t olen)
{
	m_resp(m, F_RESP, SBT_DNS_TYPE_A, 1, 0);
	m_bytes(m, owner, olen);
	m_u16(m, SBT_DNS_TYPE_A);
	m_u16(m, CLASS_IN);
	m_u32(m, 60);
	m_u16(m, 4);
	m_bytes(m, "\xc0\x00\x02\x01", 4);
}

static void test_compression_pointers(void **state)
{
	struct msg m;
	/* Header 12 + question (14 + 4) = 30: the answer owner starts at 30. */
	const uint8_t to_question[] = { 0xc0, 12 };
	const uint8_t forward[] = { 0xc0, 32 };
	const uint8_t to_itself[] = { 0xc0, 30 };
	const uint8_t past_end[] = { 0xff, 0xff };
	const uint8_t into_header[] = { 0xc0, 4 };
	/* "a" then a pointer back to its own start: backwards, yet a loop. */
	const uint8_t self_loop[] = { 1, 'a', 0xc0, 30 };
	/* A pointer to a pointer to the first: 30 -> 32 is forward. */
	const uint8_t two_loop[] = { 0xc0, 32, 0xc0, 30 };
	const uint8_t type40[] = { 0x41, 'a', 0 };
	const uint8_t type80[] = { 0x81, 'a', 0 };

	(void)state;
	answer_with_owner(&m, to_question, sizeof(to_question));
	assert_int_equal(parse_status(&m, SBT_DNS_TYPE_A), SBT_DNS_OK);
	answer_with_owner(&m, forward, sizeof(forward));
	assert_int_equal(parse_status(&m, SBT_DNS_TYPE_A), SBT_DNS_MALFORMED);
	answer_with_owner(&m, to_itself, sizeof(to_itself));
	assert_int_equal(parse_status(&m, SBT_DNS_TYPE_A), SBT_DNS_MALFORMED);
	answer_with_owner(&m, past_end, sizeof(past_end));
	assert_int_equal(parse_status(&m, SBT_DNS_TYPE_A), SBT_DNS_MALFORMED);
	answer_with_owner(&m, into_header, sizeof(into_header));
	assert_int_equal(parse_status(&m, SBT_DNS_TYPE_A), SBT_DNS_MALFORMED);
	answer_with_owner(&m, self_loop, sizeof(self_loop));
	assert_int_equal(parse_status(&m, SBT_DNS_TYPE_A), SBT_DNS_MALFORMED);
	answer_with_owner(&m, two_loop, sizeof(two_loop));
	assert_int_equal(parse_status(&m, SBT_DNS_TYPE_A), SBT_DNS_MALFORMED);
	answer_with_owner(&m, type40, sizeof(type40));
	assert_int_equal(parse_status(&m, SBT_DNS_TYPE_A), SBT_DNS_MALFORMED);
	answer_with_owner(&m, type80, sizeof(type80));
	assert_int_equal(parse_status(&m, SBT_DNS_TYPE_A), SBT_DNS_MALFORMED);

	/* Label types 0x40 and 0x80 even with enough bytes behind them. */
	for (unsigned int t = 0x40; t <= 0x80; t += 0x40) {
		m_resp(&m, F_RESP, SBT_DNS_TYPE_A, 2, 0);
		m_u8(&m, (uint8_t)t);
		for (unsigned int i = 0; i < t; i++)
			m_u8(&m, 'a');
		m_u8(&m, 0);
		m_u16(&m, SBT_DNS_TYPE_A);
		m_u16(&m, CLASS_IN);
		m_u32(&m, 60);
		m_u16(&m, 4);
		m_bytes(&m, "\xc0\x00\x02\x01", 4);
		m_a(&m, NULL, 60, 192, 0, 2, 1);
		assert_int_equal(parse_status(&m, SBT_DNS_TYPE_A), SBT_DNS_MALFORMED);
	}

	/* Pointer as the last byte of the message. */
	m_resp(&m, F_RESP, SBT_DNS_TYPE_A, 1, 0);
	m_u8(&m, 0xc0);
	assert_int_equal(parse_status(&m, SBT_DNS_TYPE_A), SBT_DNS_MALFORMED);

	/* Question name itself a pointer (nothing before it to point to). */
	m_header(&m, ID, F_RESP, 1, 0, 0, 0);
	m_u16(&m, 0xc00c);
	m_u16(&m, SBT_DNS_TYPE_A);
	m_u16(&m, CLASS_IN);
	assert_int_equal(parse_status(&m, SBT_DNS_TYPE_A), SBT_DNS_MALFORMED);

	/* Chains of backward pointers: 16 jumps are fine, 17 are not. */
	for (unsigned int jumps = 16; jumps <= 17; jumps++) {
		size_t prev = 12;

		m_resp(&m, F_RESP, SBT_DNS_TYPE_A, (uint16_t)(jumps - 1 + 1), 0);
		/* jumps-1 CNAME-less TXT records whose owners point to the previous one. */
		for (unsigned int i = 0; i + 1 < jumps; i++) {
			size_t here = m.len;

			m_u16(&m, (uint16_t)(0xc000 | prev));
			m_u16(&m, 16);
			m_u16(&m, CLASS_IN);
			m_u32(&m, 1);
			m_u16(&m, 1);
			m_u8(&m, 0);
			prev = here;
		}
		m_u16(&m, (uint16_t)(0xc000 | prev));
		m_u16(&m, SBT_DNS_TYPE_A);
		m_u16(&m, CLASS_IN);
		m_u32(&m, 60);
		m_u16(&m, 4);
		m_bytes(&m, "\xc0\x00\x02\x01", 4);
		assert_int_equal(parse_status(&m, SBT_DNS_TYPE_A),
				 jumps == 16 ? SBT_DNS_OK : SBT_DNS_MALFORMED);
	}
}

static void test_name_too_long(void **state)
{
	char longname[260];
	struct msg m;
	size_t i;
	const uint8_t owner[] = { 10, 'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 0xc0, 12 };

	(void)state;
	/* 3 x 63 + 55 + 3 dots = 247 chars: 249 bytes in wire form. */
	for (i = 0; i < 247; i++)
		longname[i] = (i % 64 == 63) ? '.' : 'x';
	longname[247] = '\0';
	m_header(&m, ID, F_RESP, 1, 1, 0, 0);
	m_question(&m, longname, SBT_DNS_TYPE_A, CLASS_IN);
	m_bytes(&m, owner, sizeof(owner)); /* 11 + 249 > 255 */
	m_u16(&m, SBT_DNS_TYPE_A);
	m_u16(&m, CLASS_IN);
	m_u32(&m, 60);
	m_u16(&m, 4);
	m_bytes(&m, "\xc0\x00\x02\x01", 4);
	{
		struct sbt_dns_addr out[MAXADDR];
		uint32_t ttl;
		size_t n;

		assert_int_equal(
			parse_buf(m.b, m.len, longname, SBT_DNS_TYPE_A, out, MAXADDR, &n, &ttl),
			SBT_DNS_MALFORMED);
		/* Same owner without the prefix label: fine. */
		m.b[12 + 249 + 4] = 0xc0;
		m.b[12 + 249 + 5] = 12;
		memmove(m.b + 12 + 249 + 6, m.b + 12 + 249 + 4 + sizeof(owner),
			m.len - (12 + 249 + 4 + sizeof(owner)));
		m.len -= sizeof(owner) - 2;
		assert_int_equal(
			parse_buf(m.b, m.len, longname, SBT_DNS_TYPE_A, out, MAXADDR, &n, &ttl),
			SBT_DNS_OK);
		assert_int_equal(n, 1);
	}

	/* 63.63.63.61: 255 bytes in wire form, the longest; 63.63.63.62 is 256. */
	for (size_t last = 61; last <= 62; last++) {
		struct sbt_dns_addr out[MAXADDR];
		uint32_t ttl;
		size_t n;

		m_header(&m, ID, F_RESP, 1, 0, 0, 0);
		for (i = 0; i < 4; i++) {
			m_u8(&m, (uint8_t)(i < 3 ? 63 : last));
			for (size_t k = 0; k < (i < 3 ? 63 : last); k++)
				m_u8(&m, 'x');
		}
		m_u8(&m, 0);
		m_u16(&m, SBT_DNS_TYPE_A);
		m_u16(&m, CLASS_IN);
		memset(longname, 'x', 63 * 3 + last + 3);
		longname[63] = longname[127] = longname[191] = '.';
		longname[63 * 3 + last + 3] = '\0';
		/* (a 254-character query name would itself be refused: use ours) */
		assert_int_equal(parse_buf(m.b, m.len, last == 61 ? longname : QNAME,
					   SBT_DNS_TYPE_A, out, MAXADDR, &n, &ttl),
				 last == 61 ? SBT_DNS_OK : SBT_DNS_MALFORMED);
	}

	/* 4 labels of 63 in the question: 257 bytes, too long. */
	m_header(&m, ID, F_RESP, 1, 0, 0, 0);
	for (i = 0; i < 4; i++) {
		m_u8(&m, 63);
		for (int k = 0; k < 63; k++)
			m_u8(&m, 'x');
	}
	m_u8(&m, 0);
	m_u16(&m, SBT_DNS_TYPE_A);
	m_u16(&m, CLASS_IN);
	assert_int_equal(parse_status(&m, SBT_DNS_TYPE_A), SBT_DNS_MALFORMED);
}

static void test_rdata_checks(void **state)
{
	struct msg m;
	size_t at;

	(void)state;
	/* rdlength overruns the message. */
	m_resp(&m, F_RESP, SBT_DNS_TYPE_A, 1, 0);
	m_a(&m, NULL, 60, 192, 0, 2, 1);
	m.b[m.len - 5] = 10;
	assert_int_equal(parse_status(&m, SBT_DNS_TYPE_A), SBT_DNS_MALFORMED);

	/* ANCOUNT larger than what is there. */
	m_resp(&m, F_RESP, SBT_DNS_TYPE_A, 2, 0);
	m_a(&m, NULL, 60, 192, 0, 2, 1);
	assert_int_equal(parse_status(&m, SBT_DNS_TYPE_A), SBT_DNS_MALFORMED);

	/* A with rdlength 5 (even for another owner). */
	m_resp(&m, F_RESP, SBT_DNS_TYPE_A, 1, 0);
	at = m_rr(&m, NULL, SBT_DNS_TYPE_A, CLASS_IN, 60);
	m_bytes(&m, "\xc0\x00\x02\x01\x00", 5);
	m_rr_end(&m, at);
	assert_int_equal(parse_status(&m, SBT_DNS_TYPE_A), SBT_DNS_MALFORMED);
	m_resp(&m, F_RESP, SBT_DNS_TYPE_AAAA, 1, 0);
	at = m_rr(&m, "other.test", SBT_DNS_TYPE_A, CLASS_IN, 60);
	m_bytes(&m, "\xc0\x00\x02\x01\x00", 5);
	m_rr_end(&m, at);
	assert_int_equal(parse_status(&m, SBT_DNS_TYPE_AAAA), SBT_DNS_MALFORMED);

	/* AAAA with rdlength 4. */
	m_resp(&m, F_RESP, SBT_DNS_TYPE_AAAA, 1, 0);
	at = m_rr(&m, NULL, SBT_DNS_TYPE_AAAA, CLASS_IN, 60);
	m_bytes(&m, "\x20\x01\x0d\xb8", 4);
	m_rr_end(&m, at);
	assert_int_equal(parse_status(&m, SBT_DNS_TYPE_AAAA), SBT_DNS_MALFORMED);

	/* CNAME rdata with a byte after the name / a name running past rdata. */
	m_resp(&m, F_RESP, SBT_DNS_TYPE_A, 1, 0);
	at = m_rr(&m, NULL, SBT_DNS_TYPE_CNAME, CLASS_IN, 60);
	m_name(&m, "x.test");
	m_u8(&m, 0);
	m_rr_end(&m, at);
	assert_int_equal(parse_status(&m, SBT_DNS_TYPE_A), SBT_DNS_MALFORMED);
	m.b[at + 1] -= 2; /* the name now ends after the rdata */
	assert_int_equal(parse_status(&m, SBT_DNS_TYPE_A), SBT_DNS_MALFORMED);

	/* A record header cut in the middle. */
	m_resp(&m, F_RESP, SBT_DNS_TYPE_A, 1, 0);
	m_name(&m, NULL);
	m_u16(&m, SBT_DNS_TYPE_A);
	m_u16(&m, CLASS_IN);
	assert_int_equal(parse_status(&m, SBT_DNS_TYPE_A), SBT_DNS_MALFORMED);
}

static void test_ttl_top_bit(void **state)
{
	struct sbt_dns_addr out[MAXADDR];
	struct msg m;
	uint32_t ttl;
	size_t n;

	(void)state;
	m_resp(&m, F_RESP, SBT_DNS_TYPE_A, 2, 0);
	m_a(&m, NULL, 100, 192, 0, 2, 1);
	m_a(&m, NULL, 0x80000001u, 192, 0, 2, 2);
	assert_int_equal(parse(&m, SBT_DNS_TYPE_A, out, &n, &ttl), SBT_DNS_OK);
	assert_int_equal(n, 2);
	assert_int_equal(out[0].ttl, 100);
	assert_int_equal(out[1].ttl, 0);
	assert_int_equal(ttl, 0);

	/* 0x7fffffff is the largest TTL. */
	m_resp(&m, F_RESP, SBT_DNS_TYPE_A, 1, 0);
	m_a(&m, NULL, 0x7fffffffu, 192, 0, 2, 1);
	assert_int_equal(parse(&m, SBT_DNS_TYPE_A, out, &n, &ttl), SBT_DNS_OK);
	assert_int_equal(ttl, 0x7fffffffu);

	/* Also on a CNAME of the chain. */
	m_resp(&m, F_RESP, SBT_DNS_TYPE_A, 2, 0);
	m_cname(&m, NULL, 0xffffffffu, "t.test");
	m_a(&m, "t.test", 100, 192, 0, 2, 1);
	assert_int_equal(parse(&m, SBT_DNS_TYPE_A, out, &n, &ttl), SBT_DNS_OK);
	assert_int_equal(ttl, 0);
}

static void test_case_insensitive(void **state)
{
	struct sbt_dns_addr out[MAXADDR];
	struct msg m;
	uint32_t ttl;
	size_t n;

	(void)state;
	m_header(&m, ID, F_RESP, 1, 2, 0, 0);
	m_question(&m, "ExAmPlE.TEST", SBT_DNS_TYPE_A, CLASS_IN);
	m_a(&m, "EXAMPLE.TEST", 60, 192, 0, 2, 1);
	m_a(&m, "example.Test", 60, 192, 0, 2, 2);
	assert_int_equal(parse(&m, SBT_DNS_TYPE_A, out, &n, &ttl), SBT_DNS_OK);
	assert_int_equal(n, 2);
	assert_int_equal(
		parse_buf(m.b, m.len, "EXAMPLE.test.", SBT_DNS_TYPE_A, out, MAXADDR, &n, &ttl),
		SBT_DNS_OK);
	assert_int_equal(n, 2);

	/* Only ASCII letters fold: 0xc9 is not 0xe9. */
	m_header(&m, ID, F_RESP, 1, 1, 0, 0);
	m_question(&m, "caf\xc9.test", SBT_DNS_TYPE_A, CLASS_IN);
	m_a(&m, NULL, 60, 192, 0, 2, 1);
	assert_int_equal(
		parse_buf(m.b, m.len, "caf\xe9.test", SBT_DNS_TYPE_A, out, MAXADDR, &n, &ttl),
		SBT_DNS_MISMATCH);
	assert_int_equal(
		parse_buf(m.b, m.len, "CAF\xc9.test", SBT_DNS_TYPE_A, out, MAXADDR, &n, &ttl),
		SBT_DNS_OK);
}

static void test_question_mismatch(void **state)
{
	struct msg m;

	(void)state;
	/* Other name. */
	m_header(&m, ID, F_RESP, 1, 1, 0, 0);
	m_question(&m, "example.org", SBT_DNS_TYPE_A, CLASS_IN);
	m_a(&m, NULL, 60, 192, 0, 2, 1);
	assert_int_equal(parse_status(&m, SBT_DNS_TYPE_A), SBT_DNS_MISMATCH);
	/* A suffix / prefix of ours. */
	m_header(&m, ID, F_RESP, 1, 0, 0, 0);
	m_question(&m, "test", SBT_DNS_TYPE_A, CLASS_IN);
	assert_int_equal(parse_status(&m, SBT_DNS_TYPE_A), SBT_DNS_MISMATCH);
	m_header(&m, ID, F_RESP, 1, 0, 0, 0);
	m_question(&m, "www.example.test", SBT_DNS_TYPE_A, CLASS_IN);
	assert_int_equal(parse_status(&m, SBT_DNS_TYPE_A), SBT_DNS_MISMATCH);
	/* Same text, other label split ("example.test" as one label). */
	m_header(&m, ID, F_RESP, 1, 0, 0, 0);
	m_u8(&m, 12);
	m_bytes(&m, "example.test", 12);
	m_u8(&m, 0);
	m_u16(&m, SBT_DNS_TYPE_A);
	m_u16(&m, CLASS_IN);
	assert_int_equal(parse_status(&m, SBT_DNS_TYPE_A), SBT_DNS_MISMATCH);
	/* Other type. */
	m_resp(&m, F_RESP, SBT_DNS_TYPE_AAAA, 0, 0);
	assert_int_equal(parse_status(&m, SBT_DNS_TYPE_A), SBT_DNS_MISMATCH);
	/* Other class. */
	m_header(&m, ID, F_RESP, 1, 0, 0, 0);
	m_question(&m, QNAME, SBT_DNS_TYPE_A, CLASS_CH);
	assert_int_equal(parse_status(&m, SBT_DNS_TYPE_A), SBT_DNS_MISMATCH);
	/* Two questions. */
	m_header(&m, ID, F_RESP, 2, 0, 0, 0);
	m_question(&m, QNAME, SBT_DNS_TYPE_A, CLASS_IN);
	m_question(&m, QNAME, SBT_DNS_TYPE_A, CLASS_IN);
	assert_int_equal(parse_status(&m, SBT_DNS_TYPE_A), SBT_DNS_MISMATCH);
	/* Question cut before its class. */
	m_header(&m, ID, F_RESP, 1, 0, 0, 0);
	m_name(&m, QNAME);
	m_u16(&m, SBT_DNS_TYPE_A);
	m_u8(&m, 0);
	assert_int_equal(parse_status(&m, SBT_DNS_TYPE_A), SBT_DNS_MALFORMED);
}

static void test_status_str(void **state)
{
	(void)state;
	assert_string_equal(sbt_dns_status_str(SBT_DNS_OK), "ok");
	assert_string_equal(sbt_dns_status_str(SBT_DNS_NXDOMAIN), "nxdomain");
	assert_string_equal(sbt_dns_status_str(SBT_DNS_SERVFAIL), "servfail");
	assert_string_equal(sbt_dns_status_str(SBT_DNS_TRUNCATED), "truncated");
	assert_string_equal(sbt_dns_status_str(SBT_DNS_MALFORMED), "malformed");
	assert_string_equal(sbt_dns_status_str(SBT_DNS_MISMATCH), "mismatch");
	assert_string_equal(sbt_dns_status_str((enum sbt_dns_status)99), "unknown");
}

/* --- resolv.conf ------------------------------------------------------- */

static void expect_ns(const char *text, const uint8_t want[16])
{
	uint8_t addr[16];

	memset(addr, 0xaa, sizeof(addr));
	assert_int_equal(sbt_resolv_conf_nameserver(text, addr), 0);
	assert_memory_equal(addr, want, 16);
}

static void expect_no_ns(const char *text)
{
	uint8_t addr[16], orig[16];

	memset(addr, 0xaa, sizeof(addr));
	memcpy(orig, addr, sizeof(addr));
	assert_int_equal(sbt_resolv_conf_nameserver(text, addr), -ENOENT);
	assert_memory_equal(addr, orig, 16); /* untouched */
}

static void test_resolv_conf(void **state)
{
	static const uint8_t v4[16] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 53 };
	static const uint8_t v4b[16] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 1, 1, 1, 1 };
	static const uint8_t v6[16] = { 0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1 };
	static const uint8_t v6b[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0,
					 0,    0,    0,	   0,	 0, 0, 0, 0x53 };

	(void)state;
	expect_ns("nameserver 10.0.0.53\n", v4);
	expect_ns("nameserver 10.0.0.53", v4); /* no trailing newline */
	expect_ns("# generated\n; other comment\nsearch example.test\noptions ndots:1\n"
		  "nameserver 10.0.0.53\nnameserver 1.1.1.1\n",
		  v4);
	/* Commented-out nameservers don't count. */
	expect_ns("# nameserver 1.1.1.1\n;nameserver 1.1.1.1\n  #nameserver 1.1.1.1\n"
		  "nameserver 10.0.0.53\n",
		  v4);
	/* Leading whitespace, tabs, CRLF, trailing junk after the address. */
	expect_ns("  \t nameserver\t\t10.0.0.53\t # main\r\n", v4);
	expect_ns("nameserver 10.0.0.53\r\n", v4);
	/* IPv6, with and without scope. */
	expect_ns("nameserver fe80::1%eth0\nnameserver 1.1.1.1\n", v6);
	expect_ns("nameserver fe80::1%2\n", v6);
	expect_ns("nameserver 2001:db8::53\n", v6b);
	expect_ns("nameserver ::ffff:1.1.1.1\n", v4b);
	/* Garbage lines are skipped; the first valid nameserver wins. */
	expect_ns("nameserver\n"
		  "nameserver \n"
		  "nameserver bogus\n"
		  "nameserver 1.2.3\n"
		  "nameserver 1.2.3.4.5\n"
		  "nameserver 256.1.1.1\n"
		  "nameserver 1.1.1.1%eth0\n"
		  "nameserver fe80::1%\n"
		  "nameserver fe80:::1\n"
		  "nameservers 10.9.9.9\n"
		  "nameserver10.9.9.9\n"
		  "NAMESERVER 10.9.9.9\n"
		  "xnameserver 10.9.9.9\n"
		  "nameserver "
		  "1111111111111111111111111111111111111111111111111111111111111111111111111\n"
		  "\x01\xff\x7f garbage\n"
		  "nameserver 1.1.1.1\n"
		  "nameserver 10.0.0.53\n",
		  v4b);

	expect_no_ns("");
	expect_no_ns("\n\n");
	expect_no_ns("# nameserver 1.1.1.1\n");
	expect_no_ns("search example.test\noptions edns0\n");
	expect_no_ns("nameserver\nnameserver bogus\nnameserver 1.1.1.1%x\x01");
	expect_no_ns("domain nameserver 1.1.1.1\n");
	expect_no_ns(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_query_exact_bytes),
		cmocka_unit_test(test_query_bad_names),
		cmocka_unit_test(test_query_enospc),
		cmocka_unit_test(test_query_roundtrip),
		cmocka_unit_test(test_simple_a),
		cmocka_unit_test(test_multiple_a),
		cmocka_unit_test(test_aaaa),
		cmocka_unit_test(test_cname_chain),
		cmocka_unit_test(test_cname_loop),
		cmocka_unit_test(test_cname_chain_length),
		cmocka_unit_test(test_other_owners_ignored),
		cmocka_unit_test(test_header_checks),
		cmocka_unit_test(test_rcodes),
		cmocka_unit_test(test_nxdomain_soa),
		cmocka_unit_test(test_nodata),
		cmocka_unit_test(test_compression_pointers),
		cmocka_unit_test(test_name_too_long),
		cmocka_unit_test(test_rdata_checks),
		cmocka_unit_test(test_ttl_top_bit),
		cmocka_unit_test(test_case_insensitive),
		cmocka_unit_test(test_question_mismatch),
		cmocka_unit_test(test_status_str),
		cmocka_unit_test(test_resolv_conf),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
