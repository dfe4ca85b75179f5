// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The DNS proxy's pure parts: parsing a sandbox's query, refusing it, the learned table. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "egress/dns.h"
#include "egress/dnslearn.h"

static void test_parse_query(void **state)
{
	uint8_t q[300];
	struct sbt_dns_question qq;
	int n;

	(void)state;
	n = sbt_dns_build_query(0xbeef, "Allowed.TEST.", SBT_DNS_TYPE_AAAA, q, sizeof(q));
	assert_true(n > 0);
	assert_int_equal(sbt_dns_parse_query(q, (size_t)n, &qq), 0);
	assert_int_equal(qq.id, 0xbeef);
	assert_int_equal(qq.qtype, SBT_DNS_TYPE_AAAA);
	assert_int_equal(qq.qclass, 1);
	assert_string_equal(qq.name, "allowed.test");
	assert_true(qq.name_ok);
	assert_int_equal(qq.end, (size_t)n);
	/* short, a response, two questions, a pointer: not a query */
	assert_int_equal(sbt_dns_parse_query(q, 11, &qq), -EINVAL);
	assert_int_equal(sbt_dns_parse_query(q, (size_t)n - 1, &qq), -EINVAL);
	q[2] |= 0x80;
	assert_int_equal(sbt_dns_parse_query(q, (size_t)n, &qq), -EINVAL);
	q[2] &= 0x7f;
	q[5] = 2;
	assert_int_equal(sbt_dns_parse_query(q, (size_t)n, &qq), -EINVAL);
	q[5] = 1;
	q[12] = 0xc0;
	q[13] = 12;
	assert_int_equal(sbt_dns_parse_query(q, (size_t)n, &qq), -EINVAL);
}

/* A label with a dot or a NUL in it can never match a rule (no "allowed.test" forged). */
static void test_query_name_odd_bytes(void **state)
{
	static const uint8_t q[] = { 0,	  1,   1,   0,	 0,   1,   0,	0,   0,	  0,
				     0,	  0,   12,  'a', 'l', 'l', 'o', 'w', 'e', 'd',
				     '.', 't', 'e', 's', 't', 0,   0,	1,   0,	  1 };
	struct sbt_dns_question qq;

	(void)state;
	assert_int_equal(sbt_dns_parse_query(q, sizeof(q), &qq), 0);
	assert_false(qq.name_ok);
	assert_string_equal(qq.name, "allowed?test");
}

static void test_refusal(void **state)
{
	uint8_t q[300], r[300];
	struct sbt_dns_question qq;
	int n, rl;

	(void)state;
	n = sbt_dns_build_query(0x1234, "blocked.test", SBT_DNS_TYPE_A, q, sizeof(q));
	assert_int_equal(sbt_dns_parse_query(q, (size_t)n, &qq), 0);
	rl = sbt_dns_build_refusal(q, &qq, SBT_DNS_RCODE_REFUSED, r, sizeof(r));
	assert_int_equal(rl, n);
	assert_int_equal(r[0] << 8 | r[1], 0x1234);
	assert_int_equal(r[2], 0x81); /* QR, RD */
	assert_int_equal(r[3], 0x85); /* RA, REFUSED */
	assert_int_equal(r[7] | r[9] | r[11], 0);
	assert_memory_equal(r + 12, q + 12, (size_t)n - 12);
	/* our own parser reads it as an answer to the query: no addresses */
	assert_int_equal(sbt_dns_parse_response(r, (size_t)rl, 0x1234, "blocked.test",
						SBT_DNS_TYPE_A, NULL, 0, NULL, NULL),
			 SBT_DNS_SERVFAIL);
	rl = sbt_dns_build_refusal(q, &qq, SBT_DNS_RCODE_NXDOMAIN, r, sizeof(r));
	assert_int_equal(sbt_dns_parse_response(r, (size_t)rl, 0x1234, "blocked.test",
						SBT_DNS_TYPE_A, NULL, 0, NULL, NULL),
			 SBT_DNS_NXDOMAIN);
	assert_int_equal(sbt_dns_build_refusal(q, &qq, 5, r, 12), -ENOSPC);
}

static void addr4(uint8_t a[16], uint8_t last)
{
	memset(a, 0, 16);
	a[10] = a[11] = 0xff;
	a[12] = 192;
	a[14] = 2;
	a[15] = last;
}

static void test_learn(void **state)
{
	struct sbt_dns_learn l;
	uint8_t a[16];

	(void)state;
	sbt_dns_learn_init(&l, 3);
	addr4(a, 1);
	assert_int_equal(sbt_dns_learn_add(&l, a, 0, "x.test", 1000, 1, 0), 1);
	assert_int_equal(sbt_dns_learn_add(&l, a, 0, "x.test", 500, 2, 0), 0);
	assert_int_equal(l.e[0].expires_ms, 1000); /* never shortened */
	assert_int_equal(sbt_dns_learn_add(&l, a, 1, "y.test", 2000, 3, 0), 1);
	assert_string_equal(sbt_dns_learn_find(&l, a)->name, "y.test");
	addr4(a, 2);
	assert_int_equal(sbt_dns_learn_add(&l, a, 0, "x.test", 800, 4, 0), 1);
	addr4(a, 3);
	/* full, nothing expired: a clear refusal, nothing changed */
	assert_int_equal(sbt_dns_learn_add(&l, a, 0, "x.test", 3000, 5, 100), -ENOSPC);
	assert_int_equal(l.n, 3);
	/* at 900 the one of 800 has expired: room again */
	assert_int_equal(sbt_dns_learn_add(&l, a, 0, "x.test", 3000, 5, 900), 1);
	assert_int_equal(l.n, 3);
	assert_int_equal(sbt_dns_learn_expire(&l, 1500), 1);
	assert_int_equal(l.n, 2);
	assert_null(sbt_dns_learn_find(&l, (addr4(a, 9), a)));
	sbt_dns_learn_free(&l);
}

/*
 * A 0x20-cased query with EDNS options (a cookie, padding), DO and CD bits,
 * and an extra additional record: the upstream gets only the question.
 */
static size_t hostile_query(uint8_t *q, size_t cap)
{
	static const uint8_t tail[] = {
		/* OPT: root, type 41, UDP 4096, ext rcode/version/DO, RDLEN 16 */
		0,
		0,
		41,
		0x10,
		0x00,
		0,
		0,
		0x80,
		0,
		0,
		16,
		/* COOKIE (10), 8 bytes */
		0,
		10,
		0,
		8,
		'c',
		'o',
		'v',
		'e',
		'r',
		't',
		'!',
		'!',
		/* PADDING (12), 0 bytes */
		0,
		12,
		0,
		0,
		/* a TXT record in the additional section: "leak" */
		0,
		0,
		16,
		0,
		1,
		0,
		0,
		0,
		0,
		0,
		5,
		4,
		'l',
		'e',
		'a',
		'k',
	};
	int n = sbt_dns_build_query(0x5151, "AlLoWeD.tEsT", SBT_DNS_TYPE_A, q, cap);

	assert_true(n > 0 && (size_t)n + sizeof(tail) <= cap);
	q[3] |= 0x10; /* CD */
	q[11] = 2;    /* ARCOUNT */
	memcpy(q + n, tail, sizeof(tail));
	return (size_t)n + sizeof(tail);
}

static void test_upstream_question_only(void **state)
{
	uint8_t q[512], up[320], want[320];
	struct sbt_dns_question qq;
	size_t ql = hostile_query(q, sizeof(q));
	int n, wl;

	(void)state;
	assert_int_equal(sbt_dns_parse_query(q, ql, &qq), 0);
	assert_true(qq.edns);
	assert_int_equal(qq.udp_size, 4096);
	n = sbt_dns_build_upstream(0x7777, &qq, up, sizeof(up));
	/* exactly: our id, RD only, the lower-case question, our bare OPT */
	wl = sbt_dns_build_query(0x7777, "allowed.test", SBT_DNS_TYPE_A, want, sizeof(want));
	want[11] = 1;
	memcpy(want + wl, "\0\0\x29\x04\xd0\0\0\0\0\0\0", 11);
	assert_int_equal(n, wl + 11);
	assert_memory_equal(up, want, (size_t)n);
	/* its own parser reads it as a query of the same question, EDNS 1232 */
	assert_int_equal(sbt_dns_parse_query(up, (size_t)n, &qq), 0);
	assert_string_equal(qq.name, "allowed.test");
	assert_int_equal(qq.udp_size, SBT_DNS_EDNS_UDP);
	/* a name that can match no rule is never asked */
	qq.name_ok = false;
	assert_int_equal(sbt_dns_build_upstream(1, &qq, up, sizeof(up)), -EINVAL);
	/* no OPT: 512 */
	wl = sbt_dns_build_query(1, "a.test", SBT_DNS_TYPE_A, want, sizeof(want));
	assert_int_equal(sbt_dns_parse_query(want, (size_t)wl, &qq), 0);
	assert_false(qq.edns);
	assert_int_equal(qq.udp_size, 512);
}

/* The upstream's answer to `up` with `nrec` A records (and its OPT). */
static size_t upstream_answer(const uint8_t *up, size_t ul, int nrec, uint8_t *r)
{
	size_t qend = ul - 11, o = qend;

	memcpy(r, up, qend);
	r[2] = 0x81;
	r[3] = 0x80;
	r[7] = (uint8_t)nrec;
	for (int i = 0; i < nrec; i++) {
		static const uint8_t rr[] = {
			0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 198, 51, 100
		};

		memcpy(r + o, rr, sizeof(rr));
		r[o + sizeof(rr)] = (uint8_t)(i + 1);
		o += sizeof(rr) + 1;
	}
	memcpy(r + o, "\0\0\x29\x04\xd0\0\0\0\0\0\0", 11);
	r[11] = 1;
	return o + 11;
}

static void test_answer_for_the_client(void **state)
{
	uint8_t q[512], up[320], r[2048], out[2048];
	struct sbt_dns_question qq, plain;
	size_t ql = hostile_query(q, sizeof(q)), rl;
	int ul, n, pl;

	(void)state;
	assert_int_equal(sbt_dns_parse_query(q, ql, &qq), 0);
	ul = sbt_dns_build_upstream(0x7777, &qq, up, sizeof(up));
	rl = upstream_answer(up, (size_t)ul, 2, r);
	n = sbt_dns_build_answer(q, &qq, r, rl, qq.udp_size, out, sizeof(out));
	assert_int_equal(n, (int)rl); /* the client sent EDNS: the OPT stays */
	assert_int_equal(out[0] << 8 | out[1], 0x5151);
	assert_memory_equal(out + 12, q + 12, qq.end - 12); /* its own letters' case */
	assert_int_equal(sbt_dns_parse_response(out, (size_t)n, 0x5151, "allowed.test",
						SBT_DNS_TYPE_A, NULL, 0, NULL, NULL),
			 SBT_DNS_OK);
	/* a client without EDNS gets no OPT record */
	pl = sbt_dns_build_query(0x4242, "ALLOWED.test", SBT_DNS_TYPE_A, q, sizeof(q));
	assert_int_equal(sbt_dns_parse_query(q, (size_t)pl, &plain), 0);
	n = sbt_dns_build_answer(q, &plain, r, rl, plain.udp_size, out, sizeof(out));
	assert_int_equal(n, (int)rl - 11);
	assert_int_equal(out[11], 0);
	assert_memory_equal(out + 12, q + 12, plain.end - 12);
	/* longer than its 512 bytes: header and question, TC */
	rl = upstream_answer(up, (size_t)ul, 40, r);
	n = sbt_dns_build_answer(q, &plain, r, rl, plain.udp_size, out, sizeof(out));
	assert_int_equal(n, (int)plain.end);
	assert_true(out[2] & 0x02);
	assert_int_equal(out[7] | out[9] | out[11], 0);
	/* over TCP (65535) all of it */
	n = sbt_dns_build_answer(q, &plain, r, rl, 65535, out, sizeof(out));
	assert_int_equal(n, (int)rl - 11);
	assert_int_equal(out[7], 40);
	/* an answer to another question is refused */
	r[12 + 1] = 'x';
	assert_int_equal(sbt_dns_build_answer(q, &plain, r, rl, 65535, out, sizeof(out)), -EINVAL);
	/* a record running past the end is refused */
	r[12 + 1] = 'a';
	assert_int_equal(sbt_dns_build_answer(q, &plain, r, plain.end + 5, 65535, out, sizeof(out)),
			 -EINVAL);
}

/* Our upstream query's question, in a response: any case, but the same name, type, class. */
static void test_same_question(void **state)
{
	uint8_t q[512], up[320], r[2048];
	struct sbt_dns_question qq;
	size_t ql = hostile_query(q, sizeof(q)), rl;
	int ul;

	(void)state;
	assert_int_equal(sbt_dns_parse_query(q, ql, &qq), 0);
	ul = sbt_dns_build_upstream(0x7777, &qq, up, sizeof(up));
	rl = upstream_answer(up, (size_t)ul, 2, r);
	assert_true(sbt_dns_same_question(up, &qq, r, rl));
	assert_true(sbt_dns_same_question(q, &qq, r, rl)); /* the client's 0x20 case too */
	r[13] = 'A';
	assert_true(sbt_dns_same_question(up, &qq, r, rl));
	r[13] = 'b'; /* another name */
	assert_false(sbt_dns_same_question(up, &qq, r, rl));
	r[13] = 'a';
	r[qq.end - 3] = SBT_DNS_TYPE_AAAA; /* another type */
	assert_false(sbt_dns_same_question(up, &qq, r, rl));
	r[qq.end - 3] = SBT_DNS_TYPE_A;
	r[5] = 2; /* two questions */
	assert_false(sbt_dns_same_question(up, &qq, r, rl));
	r[5] = 1;
	assert_false(sbt_dns_same_question(up, &qq, r, qq.end - 1)); /* cut short */
	assert_false(sbt_dns_same_question(up, NULL, r, rl));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_query),
		cmocka_unit_test(test_query_name_odd_bytes),
		cmocka_unit_test(test_refusal),
		cmocka_unit_test(test_upstream_question_only),
		cmocka_unit_test(test_answer_for_the_client),
		cmocka_unit_test(test_same_question),
		cmocka_unit_test(test_learn),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
