/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Egress policy (sbtrace-trace(1), EGRESS): the rules and their parser (policy.c);
 * their compilation to LPM-trie entries is policy_compile.h's. Pure logic: no
 * libbpf, no sockets.
 *
 * Grammar, one rule a line (`#` starts a comment, blank lines are ignored):
 *
 *   cidr ADDR[/LEN] [port N[-M]] [proto tcp|udp]
 *   host NAME       [port N[-M]] [proto tcp|udp]
 *
 * port and proto may come in either order, each at most once. ADDR is IPv4
 * dotted quad or IPv6 (any RFC 4291 text form, including ::ffff:a.b.c.d);
 * LEN defaults to 32 / 128. An IPv4 rule is stored as IPv4-mapped IPv6
 * (::ffff:a.b.c.d, prefix + 96) and an IPv6 rule naming ::ffff:0:0/96 or
 * longer is the same thing: the mapped-address bypass cannot exist. Host bits
 * set below the prefix are an error ("did you mean ADDR/LEN?"). NAME is a DNS
 * name (letters, digits, '-', '_', '.', at most 253 bytes, labels at most 63,
 * a trailing dot allowed), compared case-insensitively.
 */
#ifndef SBT_POLICY_H
#define SBT_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SBT_HOST_MAX	  254 /* 253 + NUL */
#define SBT_RULE_TEXT_MAX 320

enum sbt_rule_kind {
	SBT_RULE_CIDR = 1,
	SBT_RULE_HOST,
};

enum sbt_proto {
	SBT_PROTO_ANY = 0,
	SBT_PROTO_TCP = 6,
	SBT_PROTO_UDP = 17,
};

struct sbt_rule {
	enum sbt_rule_kind kind;
	uint8_t addr[16];	 /* CIDR: network address, IPv4 as ::ffff:a.b.c.d */
	uint8_t prefix;		 /* CIDR: 0..128 (IPv4 /n is 96 + n) */
	bool v4;		 /* CIDR: written as IPv4 (for printing) */
	char host[SBT_HOST_MAX]; /* HOST: lower-case, no trailing dot */
	uint16_t port_lo;	 /* 0..65535; port_lo = 0, port_hi = 65535 when not given */
	uint16_t port_hi;
	enum sbt_proto proto;
	uint32_t id; /* set by the caller: 1-based rule id, reported in events */
	char text
		[SBT_RULE_TEXT_MAX]; /* canonical text, e.g. "cidr 192.0.2.0/24 port 443 proto tcp" */
};

struct sbt_parse_error {
	unsigned int col; /* 1-based column of the offending token */
	char msg[160];	  /* what is wrong and what to do, lower-case, no trailing period */
};

/*
 * Parse one rule line. Returns 1 and fills `rule` for a rule, 0 for a blank
 * or comment-only line, -1 on error with `err` filled.
 */
int sbt_rule_parse(const char *line, struct sbt_rule *rule, struct sbt_parse_error *err);

/*
 * Parse the value of --allow-cidr / --allow-host: the rule without its
 * keyword ("192.0.2.0/24 port 443"). Same return values as sbt_rule_parse.
 */
int sbt_rule_parse_arg(enum sbt_rule_kind kind, const char *arg, struct sbt_rule *rule,
		       struct sbt_parse_error *err);

/* Text form of a 16-byte address: dotted quad when IPv4-mapped, else RFC 5952. */
void sbt_addr_str(const uint8_t addr[16], char *buf, size_t len);

/* Parse an address (v4 or v6 text) to the normalized 16-byte form. 0 or -EINVAL. */
int sbt_addr_parse(const char *s, uint8_t addr[16], bool *v4);

#endif
