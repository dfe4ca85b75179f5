/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Egress policy (README, "Egress"): rule parsing and compilation to
 * LPM-trie entries keyed by (sandbox slot, IPv4-mapped-IPv6 address). Pure
 * logic: no libbpf, no sockets.
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

/* --- compilation to LPM entries --------------------------------------- */

/* Port/protocol alternatives one LPM entry can carry (the BPF value's array). */
#define SBT_POLICY_PORTS 8

/* Always-denied floor (link-local, metadata, host loopback) unless a rule names it exactly. */
struct sbt_floor {
	uint8_t addr[16];
	uint8_t prefix;
	bool embedded; /* a NAT64 / 6to4 form of an IPv4 range: never the sandbox's own loopback */
	const char *what; /* "link-local", "metadata", "loopback" */
};
/* The built-in floor list; *n receives its length. */
const struct sbt_floor *sbt_policy_floor(size_t *n);
/*
 * The floor entry (index into sbt_policy_floor()) whose prefix covers `addr`
 * (the longest), or -1. Floor first: an address a name resolved to inside the
 * floor never becomes an allow rule, whatever rule named the host.
 */
int sbt_policy_floor_of(const uint8_t addr[16]);

struct sbt_policy_port {
	uint16_t lo, hi;
	uint8_t proto; /* enum sbt_proto */
	uint32_t rule_id;
};

struct sbt_policy_entry {
	uint8_t addr[16];
	uint8_t prefix;
	bool floor;	    /* a floor prefix: deny unless ports[] allow */
	uint32_t floor_idx; /* index into sbt_policy_floor() when floor */
	size_t nr_ports;
	struct sbt_policy_port ports[SBT_POLICY_PORTS];
};

/*
 * Compile resolved rules (CIDR rules, and host rules already turned into
 * CIDR rules /32 or /128 per address by the caller, keeping their id) plus
 * the floor into LPM entries. Longest-prefix match returns one entry, so each
 * entry carries the ports of every rule whose prefix covers it ("push-down"),
 * except that rules broader than a floor prefix do not reach the floor entry
 * or anything below it: a broad rule never opens the floor; only a rule naming
 * the floor prefix exactly, or a more specific one, does.
 * Identical port alternatives are merged. Returns the number of entries
 * written (<= max), -E2BIG when an entry would need more than
 * SBT_POLICY_PORTS alternatives (err names the prefix) or more than `max`
 * entries are needed.
 */
int sbt_policy_compile(const struct sbt_rule *rules, size_t nr_rules, struct sbt_policy_entry *out,
		       size_t max, struct sbt_parse_error *err);

/*
 * The verdict for one destination against compiled entries, exactly as the
 * BPF programs decide it (used by tests and by the fuzzer as the reference):
 * longest prefix match, then the first port alternative that matches.
 * Returns the rule id (> 0) when allowed, 0 when denied; *floor is set when the
 * matching entry is a floor entry.
 */
uint32_t sbt_policy_verdict(const struct sbt_policy_entry *entries, size_t n,
			    const uint8_t addr[16], uint16_t port, uint8_t proto, bool *floor);

/*
 * The BPF trie's key and value for one compiled entry of sandbox `slot`. An
 * entry under a floor prefix (a rule naming 127.0.0.1/32 port 80) is a floor
 * entry too: its other ports are denied as the floor, and loopback in the
 * sandbox's own netns stays allowed.
 */
struct sbt_policy_key;
struct sbt_policy_val;
void sbt_policy_bpf_entry(const struct sbt_policy_entry *e, uint32_t slot,
			  struct sbt_policy_key *key, struct sbt_policy_val *val);

#endif
