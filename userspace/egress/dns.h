/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Minimal DNS client logic (RFC 1035): build an A/AAAA query, parse the
 * answer. Responses are untrusted input: every length is checked,
 * compression pointers are bounded (no loops), and the parser never reads
 * past `len`. Pure logic: the caller does the sockets.
 */
#ifndef SBT_DNS_H
#define SBT_DNS_H

#include <stdbool.h>
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

/* --- the proxy's side: queries from the sandbox ------------------------- */

#define SBT_DNS_RCODE_SERVFAIL 2
#define SBT_DNS_RCODE_NXDOMAIN 3
#define SBT_DNS_RCODE_REFUSED  5

struct sbt_dns_question {
	uint16_t id;
	uint16_t qtype;
	uint16_t qclass;
	size_t end;	   /* offset just past the question */
	char name[254];	   /* lower-case, dotted, no trailing dot ("" for the root) */
	bool name_ok;	   /* only letters, digits, '-', '_' in its labels: can match a rule */
	bool edns;	   /* the client sent an OPT record (RFC 6891) */
	uint16_t udp_size; /* the UDP size it can take: 512, or its OPT's (at least 512) */
};

/*
 * Parse a query a client sent (untrusted): a 12-byte header with QR clear,
 * opcode QUERY, exactly one question (no compression pointer can point
 * anywhere valid in it). 0, or -EINVAL when it is not such a query (the
 * proxy drops it without an answer).
 */
int sbt_dns_parse_query(const uint8_t *msg, size_t len, struct sbt_dns_question *q);

/*
 * The answer that refuses query `msg` (parsed into q) without asking anyone:
 * its header (id, RD; QR and RA set, rcode) and its question, no records.
 * Returns the length written, or -ENOSPC.
 */
int sbt_dns_build_refusal(const uint8_t *msg, const struct sbt_dns_question *q, uint8_t rcode,
			  uint8_t *out, size_t outlen);

/*
 * The query sbtrace asks the upstream for q: built from the parsed question,
 * never the client's bytes (no option, record, flag or letter case of the
 * client's reaches the operator's resolver): a header with id and RD, the
 * lower-case name, q's type and class, and sbtrace's own EDNS(0) OPT record
 * (UDP size SBT_DNS_EDNS_UDP, no option, no DO bit). Its length, or -EINVAL
 * (a name that cannot match a rule), -ENOSPC.
 */
#define SBT_DNS_EDNS_UDP     1232
#define SBT_DNS_UPSTREAM_MAX (12 + 255 + 4 + 11) /* header, the longest name, type, class, OPT */
int sbt_dns_build_upstream(uint16_t id, const struct sbt_dns_question *q, uint8_t *buf, size_t len);

/*
 * resp's question is that of query qmsg (parsed into q): one question, the
 * same name (any case), type and class. Also for sbtrace's own upstream query
 * of q (sbt_dns_build_upstream), whose question sits at the same offsets.
 */
bool sbt_dns_same_question(const uint8_t *qmsg, const struct sbt_dns_question *q,
			   const uint8_t *resp, size_t rlen);

/*
 * The client's answer to its query qmsg (parsed into q) from the upstream's
 * response resp to sbt_dns_build_upstream's query: the client's id and its
 * question's bytes (the letters' case as it asked), the upstream's flags,
 * answer and authority records, and the additional ones only when the client
 * sent EDNS itself (no OPT record it did not ask for). Longer than max (the
 * client's UDP size; 65535 over TCP): the header and question with TC set
 * (RFC 1035 4.2.1: the client asks again over TCP). Its length, or -EINVAL
 * (resp is not an answer to q's question), -ENOSPC.
 */
int sbt_dns_build_answer(const uint8_t *qmsg, const struct sbt_dns_question *q, const uint8_t *resp,
			 size_t rlen, size_t max, uint8_t *out, size_t cap);

/* The message id of a DNS message (len >= 2), and setting it. */
uint16_t sbt_dns_msg_id(const uint8_t *msg);
void sbt_dns_set_id(uint8_t *msg, uint16_t id);

/*
 * The first `nameserver` of resolv.conf text (IPv4 or IPv6), as a normalized
 * 16-byte address. Returns 0, or -ENOENT when there is none.
 */
int sbt_resolv_conf_nameserver(const char *text, uint8_t addr[16]);

#endif
