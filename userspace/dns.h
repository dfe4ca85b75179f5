/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Minimal DNS client logic (RFC 1035): build an A/AAAA query, parse the
 * answer. Responses are untrusted input: every length is checked,
 * compression pointers are bounded (no loops), and the parser never reads
 * past `len`. Pure logic: the caller does the sockets.
 */
#ifndef SBT_DNS_H
#define SBT_DNS_H

#include <stddef.h>
#include <stdint.h>

#define SBT_DNS_TYPE_A	   1
#define SBT_DNS_TYPE_CNAME 5
#define SBT_DNS_TYPE_AAAA  28
#define SBT_DNS_MAX_MSG	   4096

struct sbt_dns_addr {
	uint8_t addr[16]; /* A answers as ::ffff:a.b.c.d */
	uint32_t ttl;
};

/*
 * Write a recursive query for `name` (dotted, optional trailing dot) of type
 * qtype with message id `id` into buf. Returns its length, or -EINVAL (bad
 * name: empty label, label > 63, name > 253) / -ENOSPC.
 */
int sbt_dns_build_query(uint16_t id, const char *name, uint16_t qtype, uint8_t *buf, size_t len);

enum sbt_dns_status {
	SBT_DNS_OK = 0,	   /* answers (possibly zero: NODATA) */
	SBT_DNS_NXDOMAIN,  /* rcode 3 */
	SBT_DNS_SERVFAIL,  /* rcode 2 or any other non-zero rcode */
	SBT_DNS_TRUNCATED, /* TC bit: retry over TCP */
	SBT_DNS_MALFORMED, /* short, bad pointers, counts overrun ... */
	SBT_DNS_MISMATCH,  /* id, QR bit, question name or type differ from the query */
};

const char *sbt_dns_status_str(enum sbt_dns_status st);

/*
 * Parse a response to the query (id, name, qtype). Collects the addresses of
 * type qtype that belong to `name` or to the end of a CNAME chain starting at
 * it (chains are followed inside the response, at most 8 links; records for
 * other owners are ignored). Writes at most `max` addresses; *n receives the
 * count; *min_ttl the smallest TTL over the records used (answers and CNAMEs),
 * or for NXDOMAIN/NODATA the SOA minimum from the authority section if present
 * (else 0). Names compare case-insensitively.
 */
enum sbt_dns_status sbt_dns_parse_response(const uint8_t *msg, size_t len, uint16_t id,
					   const char *name, uint16_t qtype,
					   struct sbt_dns_addr *out, size_t max, size_t *n,
					   uint32_t *min_ttl);

/*
 * The first `nameserver` of resolv.conf text (IPv4 or IPv6), as a normalized
 * 16-byte address. Returns 0, or -ENOENT when there is none.
 */
int sbt_resolv_conf_nameserver(const char *text, uint8_t addr[16]);

#endif
