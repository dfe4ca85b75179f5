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
 * The upstream's query built from it (sbt_dns_build_upstream) parses as a
 * query of the same question with sbtrace's EDNS size and nothing else; the
 * client's answer built from the input read as a response to itself keeps
 * the client's id and question bytes and never grows past the input.
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
	if (q.udp_size < 512 || (!q.edns && q.udp_size != 512))
		abort();
	rl = sbt_dns_build_upstream(0x4242, &q, out, sizeof(out));
	if (rl > 0) {
		struct sbt_dns_question u;

		check(q.name_ok && rl <= SBT_DNS_UPSTREAM_MAX);
		check(sbt_dns_parse_query(out, (size_t)rl, &u) == 0);
		check(u.id == 0x4242 && u.qtype == q.qtype && u.qclass == q.qclass);
		check(strcmp(u.name, q.name) == 0 && u.edns && u.udp_size == SBT_DNS_EDNS_UDP);
		check(out[2] == 0x01 && out[3] == 0 && out[7] == 0 && out[9] == 0 && out[11] == 1);
	}
	rl = sbt_dns_build_answer(data, &q, data, size, q.udp_size, out, sizeof(out));
	if (rl >= 0) {
		check((size_t)rl >= q.end && (size_t)rl <= size);
		check(sbt_dns_msg_id(out) == q.id);
		check(memcmp(out + 12, data + 12, q.end - 12) == 0);
		check((size_t)rl <= q.udp_size || (size_t)rl == q.end);
	}
	return 0;
}
