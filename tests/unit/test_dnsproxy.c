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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_query),
		cmocka_unit_test(test_query_name_odd_bytes),
		cmocka_unit_test(test_refusal),
		cmocka_unit_test(test_learn),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
