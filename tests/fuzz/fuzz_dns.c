// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target: DNS response parser, query builder and resolv.conf
 * parser (userspace/dns.c).
 *
 * Input: byte 0 selects the query (bits 0-1 name, 2-3 qtype), the small
 * `max` (bits 4-5) and, bit 6, whether the message is the rest of the input
 * as is, or a response synthesized from our own query (header flags from
 * bytes 1-2 with QR set and opcode/TC cleared, low bytes of ANCOUNT,
 * NSCOUNT, ARCOUNT from bytes 3, 4, 5) followed by input bytes 6.., which
 * gets the fuzzer past the id and question checks quickly.
 * The rest of the input is also a query name (up to its first NUL) and
 * resolv.conf text.
 *
 * Invariants: *n <= max; on every status but OK, *n == 0 and, but for
 * NXDOMAIN, *min_ttl == 0; TTLs never have the top bit set; every address
 * has a TTL >= min_ttl; A answers are v4-mapped; a small `max` gives a
 * prefix of what a large one gives, with the same status and min_ttl.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "egress/dns.h"

#define FUZZ_ID	  0x1234
#define BIG_MAX	  64
#define MAX_QUERY (12 + 255 + 4)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const names[] = { "example.test", "a.b", "www.Example.TEST.", "x" };
static const uint16_t qtypes[] = { SBT_DNS_TYPE_A, SBT_DNS_TYPE_AAAA, SBT_DNS_TYPE_CNAME, 16 };
static const uint8_t v4mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

static void check(int cond)
{
	if (!cond)
		abort();
}

static void check_result(enum sbt_dns_status st, const struct sbt_dns_addr *out, size_t max,
			 size_t n, uint32_t ttl, uint16_t qtype)
{
	check(st >= SBT_DNS_OK && st <= SBT_DNS_MISMATCH);
	check(strcmp(sbt_dns_status_str(st), "unknown") != 0);
	check(n <= max);
	check(ttl <= 0x7fffffffu);
	if (st != SBT_DNS_OK)
		check(n == 0);
	if (st != SBT_DNS_OK && st != SBT_DNS_NXDOMAIN)
		check(ttl == 0);
	if (n > 0)
		check(qtype == SBT_DNS_TYPE_A || qtype == SBT_DNS_TYPE_AAAA);
	for (size_t i = 0; i < n; i++) {
		check(out[i].ttl <= 0x7fffffffu);
		check(out[i].ttl >= ttl);
		if (qtype == SBT_DNS_TYPE_A)
			check(memcmp(out[i].addr, v4mapped, sizeof(v4mapped)) == 0);
	}
}

/* Parse with a large and a small max (exact-size heap arrays): results must agree. */
static void parse(const uint8_t *data, size_t len, uint16_t id, const char *name, uint16_t qtype,
		  size_t small)
{
	uint8_t *msg = malloc(len ? len : 1);
	struct sbt_dns_addr *big = malloc(BIG_MAX * sizeof(*big));
	struct sbt_dns_addr *few = malloc((small ? small : 1) * sizeof(*few));
	enum sbt_dns_status sb, ss, sn;
	uint32_t tb = 7, ts = 7;
	size_t nb = 7, ns = 7;

	check(msg && big && few);
	memcpy(msg, data, len);
	sb = sbt_dns_parse_response(msg, len, id, name, qtype, big, BIG_MAX, &nb, &tb);
	check_result(sb, big, BIG_MAX, nb, tb, qtype);
	ss = sbt_dns_parse_response(msg, len, id, name, qtype, few, small, &ns, &ts);
	check_result(ss, few, small, ns, ts, qtype);
	check(sb == ss && tb == ts);
	check(ns == (nb < small ? nb : small));
	check(ns == 0 || memcmp(few, big, ns * sizeof(*few)) == 0);
	sn = sbt_dns_parse_response(msg, len, id, name, qtype, NULL, 0, NULL, NULL);
	check(sn == sb);
	free(few);
	free(big);
	free(msg);
}

/* Independent check of the name rules of sbt_dns_build_query. */
static int name_valid(const char *name)
{
	size_t n = strlen(name), label = 0;

	if (n > 0 && name[n - 1] == '.')
		n--;
	if (n == 0 || n > 253)
		return 0;
	for (size_t i = 0; i <= n; i++) {
		if (i == n || name[i] == '.') {
			if (label == 0 || label > 63)
				return 0;
			label = 0;
		} else {
			label++;
		}
	}
	return 1;
}

static void build(const char *name, uint16_t qtype)
{
	uint8_t *buf = malloc(MAX_QUERY), *tight;
	size_t n = strlen(name), pos = 12, text = 0;
	int rc, rc2;

	check(buf != NULL);
	rc = sbt_dns_build_query(FUZZ_ID, name, qtype, buf, MAX_QUERY);
	if (!name_valid(name)) {
		check(rc == -EINVAL);
		free(buf);
		return;
	}
	check(rc > 12 + 4 && rc <= MAX_QUERY);

	/* One byte short: ENOSPC; exact: the same bytes. */
	tight = malloc((size_t)rc);
	check(tight != NULL);
	check(sbt_dns_build_query(FUZZ_ID, name, qtype, tight, (size_t)rc - 1) == -ENOSPC);
	rc2 = sbt_dns_build_query(FUZZ_ID, name, qtype, tight, (size_t)rc);
	check(rc2 == rc && memcmp(tight, buf, (size_t)rc) == 0);
	free(tight);

	/* Header, then labels spelling the name, then qtype and class IN. */
	check(buf[0] == 0x12 && buf[1] == 0x34 && buf[2] == 0x01 && buf[3] == 0);
	check(buf[4] == 0 && buf[5] == 1);
	for (int i = 6; i < 12; i++)
		check(buf[i] == 0);
	if (name[n - 1] == '.')
		n--;
	while (buf[pos] != 0) {
		size_t l = buf[pos];

		check(l <= 63 && pos + 1 + l < (size_t)rc);
		if (text > 0)
			check(name[text++] == '.');
		check(text + l <= n && memcmp(buf + pos + 1, name + text, l) == 0);
		text += l;
		pos += 1 + l;
	}
	check(text == n && pos - 12 + 1 <= 255 && pos + 5 == (size_t)rc);
	check(buf[pos + 1] == (uint8_t)(qtype >> 8) && buf[pos + 2] == (uint8_t)qtype);
	check(buf[pos + 3] == 0 && buf[pos + 4] == 1);

	/* Turned into a response, it is an empty answer to its own question. */
	buf[2] |= 0x80;
	{
		struct sbt_dns_addr out[1];
		uint32_t ttl = 7;
		size_t cnt = 7;

		check(sbt_dns_parse_response(buf, (size_t)rc, FUZZ_ID, name, qtype, out, 1, &cnt,
					     &ttl) == SBT_DNS_OK);
		check(cnt == 0 && ttl == 0);
	}
	free(buf);
}

static void resolv_conf(const char *text)
{
	uint8_t addr[16], orig[16];
	int rc;

	memset(addr, 0xa5, sizeof(addr));
	memcpy(orig, addr, sizeof(addr));
	rc = sbt_resolv_conf_nameserver(text, addr);
	check(rc == 0 || rc == -ENOENT);
	if (rc == 0)
		check(strstr(text, "nameserver") != NULL);
	else
		check(memcmp(addr, orig, sizeof(addr)) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t sel = size ? data[0] : 0;
	const char *name = names[sel & 3];
	uint16_t qtype = qtypes[(sel >> 2) & 3];
	size_t small = (sel >> 4) & 3;
	const uint8_t *rest = size ? data + 1 : data;
	size_t rlen = size ? size - 1 : 0;
	char *text;

	if (sel & 0x40) {
		/* Our query, turned into a response header, then the input. */
		size_t cap = MAX_QUERY + rlen;
		uint8_t *msg = malloc(cap);
		int q;

		check(msg != NULL);
		q = sbt_dns_build_query(FUZZ_ID, name, qtype, msg, cap);
		check(q > 0);
		if (rlen >= 5) {
			uint16_t flags = (uint16_t)((rest[0] << 8) | rest[1]);

			flags = (uint16_t)((flags & ~0x7a00u) | 0x8000u); /* QR, opcode 0, no TC */
			msg[2] = (uint8_t)(flags >> 8);
			msg[3] = (uint8_t)flags;
			msg[7] = rest[2];
			msg[9] = rest[3];
			msg[11] = rest[4];
			memcpy(msg + q, rest + 5, rlen - 5);
			parse(msg, (size_t)q + rlen - 5, FUZZ_ID, name, qtype, small);
		}
		free(msg);
	} else {
		uint16_t id = rlen >= 2 ? (uint16_t)((rest[0] << 8) | rest[1]) : 0;

		parse(rest, rlen, id, name, qtype, small);
		parse(rest, rlen, FUZZ_ID, name, qtype, small);
	}

	text = malloc(rlen + 1);
	check(text != NULL);
	memcpy(text, rest, rlen);
	text[rlen] = '\0';
	if (strlen(text) <= 300)
		build(text, qtype);
	resolv_conf(text);
	free(text);
	return 0;
}
