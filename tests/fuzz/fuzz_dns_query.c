// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target: what the DNS proxy reads from a sandbox (userspace/dns.c):
 * sbt_dns_parse_query on any bytes, then the refusal built from an accepted
 * query.
 *
 * Invariants: an accepted query has its question inside the input, a name
 * of at most 253 bytes that is lower-case and NUL-terminated, name_ok only
 * for names of letters, digits, '-', '_' and dots; its refusal is exactly
 * header + question, echoes the id and question, has QR set and no records,
 * and our response parser reads it back as an answer to that question.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "egress/dns.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int cond)
{
	if (!cond)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t out[70000];
	struct sbt_dns_question q;
	size_t nl;
	int rl;

	if (sbt_dns_parse_query(data, size, &q))
		return 0;
	check(q.end >= 12 + 1 + 4 && q.end <= size);
	nl = strnlen(q.name, sizeof(q.name));
	check(nl < sizeof(q.name));
	for (size_t i = 0; i < nl; i++) {
		char c = q.name[i];

		check(!(c >= 'A' && c <= 'Z'));
		if (q.name_ok)
			check((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
			      c == '_' || c == '.');
	}
	if (q.name_ok)
		check(nl <= 253);
	rl = sbt_dns_build_refusal(data, &q, SBT_DNS_RCODE_REFUSED, out, sizeof(out));
	check(rl == (int)q.end);
	check(sbt_dns_msg_id(out) == q.id);
	check((out[2] & 0x80) && (out[3] & 0xf) == SBT_DNS_RCODE_REFUSED);
	check(!out[6] && !out[7] && !out[8] && !out[9] && !out[10] && !out[11]);
	check(memcmp(out + 12, data + 12, q.end - 12) == 0);
	if (q.name_ok && nl && q.qclass == 1)
		check(sbt_dns_parse_response(out, (size_t)rl, q.id, q.name, q.qtype, NULL, 0, NULL,
					     NULL) == SBT_DNS_SERVFAIL);
	check(sbt_dns_build_refusal(data, &q, 5, out, q.end - 1) < 0);
	return 0;
}
