/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Egress policy: parsed rules (policy.h) and the floor compiled to LPM-trie
 * entries keyed by (sandbox slot, IPv4-mapped-IPv6 address), the reference
 * verdict and the BPF form of an entry (policy_compile.c). Pure logic: no
 * libbpf, no sockets.
 */
#ifndef SBT_POLICY_COMPILE_H
#define SBT_POLICY_COMPILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "egress/policy.h"

/* Port/protocol alternatives one LPM entry can carry (the BPF value's array). */
#define SBT_POLICY_PORTS 8

/* Always-denied floor (link-local, metadata, host loopback) unless a rule names it exactly. */
struct sbt_floor {
	uint8_t addr[16];
	uint8_t prefix;
	bool embedded; /* a NAT64 / 6to4 / SIIT form of an IPv4 range: never the sandbox's own loopback */
	const char *what; /* "link-local", "metadata", "loopback"; "broadcast", "multicast" */
	bool answer_only; /* refused in a name's answer only, never in the kernel (a rule may name it) */
};
/* The most entries the floor list holds: room a caller's entry array keeps for it. */
#define SBT_FLOOR_ENTRIES_MAX 48
/* The built-in floor list; *n receives its length. */
const struct sbt_floor *sbt_policy_floor(size_t *n);
/*
 * The floor entry (index into sbt_policy_floor()) whose prefix covers `addr`
 * (the longest), or -1. Floor first: an address a name resolved to inside the
 * floor never becomes an allow rule, whatever rule named the host.
 */
int sbt_policy_floor_of(const uint8_t addr[16]);
/*
 * The floor entry that refuses `addr` in a name's answer, or -1: the floor
 * (also as the IPv4 address an embedding form of it reaches: SIIT,
 * IPv4-compatible, NAT64 well-known and local-use, 6to4, Teredo), and the
 * broadcast and multicast addresses unless a cidr rule of `rules` covers it.
 */
int sbt_policy_answer_floor(const uint8_t addr[16], const struct sbt_rule *rules, size_t nr_rules);

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
