/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Learn mode (--egress learn): what a sandbox connected to, by the name its
 * DNS proxy answered for the address (or, never resolved, by the address),
 * port and protocol; at its end the smallest allowlist that would have
 * allowed it, in sbtrace's rule syntax and in the dialects --learn-format
 * names. Pure logic: no libbpf, no sockets.
 */
#ifndef SBT_LEARN_H
#define SBT_LEARN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "egress/policy.h"

/* The dialects of a proposal (--learn-format), a bit each. */
enum sbt_learn_format {
	SBT_LEARN_SBTRACE = 1u << 0, /* allowlist rules, one a line (--allowlist FILE) */
	SBT_LEARN_FLAGS = 1u << 1,   /* --allow-host / --allow-cidr options */
	SBT_LEARN_CILIUM = 1u << 2,  /* a CiliumNetworkPolicy: toFQDNs + toPorts, JSON */
	SBT_LEARN_SYSTEMD = 1u << 3, /* IPAddressDeny=any, IPAddressAllow= for the CIDR part */
};

#define SBT_LEARN_FORMATS 4
#define SBT_LEARN_MAX	  65536 /* distinct destinations kept per sandbox */

/* The name of format bit f ("sbtrace" ...), NULL for none. */
const char *sbt_learn_format_name(unsigned int f);
/*
 * --learn-format: a comma list of names, added to *mask. 0, or -EINVAL with
 * *bad pointing at the offending name (its length in *bad_len).
 */
int sbt_learn_formats_parse(const char *arg, unsigned int *mask, const char **bad, size_t *bad_len);

/* One destination: a name (resolved) or an address (never resolved), a protocol, a port. */
struct sbt_learn_dest {
	bool resolved;		 /* name holds the name its address was answered for */
	char name[SBT_HOST_MAX]; /* resolved: the name asked (a valid host rule name) */
	uint8_t addr[16];	 /* never resolved: the address, IPv4 as ::ffff:a.b.c.d */
	uint8_t proto;		 /* SBT_PROTO_TCP or SBT_PROTO_UDP */
	uint16_t port;
	uint64_t connects;
};

struct sbt_learn {
	struct sbt_learn_dest *d;
	size_t n, cap;
	uint64_t dropped; /* destinations beyond SBT_LEARN_MAX (the proposal is not complete) */
};

void sbt_learn_init(struct sbt_learn *l);
void sbt_learn_free(struct sbt_learn *l);

/*
 * A connect (count of them) to addr:port over proto, its address answered
 * for `name` (NULL: never resolved by the sandbox). A name no host rule can
 * hold is kept by its address. 0, -EINVAL (a protocol other than TCP or
 * UDP, port 0), -ENOSPC (counted in dropped), or -ENOMEM.
 */
int sbt_learn_add(struct sbt_learn *l, const char *name, const uint8_t addr[16], uint16_t port,
		  uint8_t proto, uint64_t count);

/* One rule of a proposal. */
struct sbt_learn_rule {
	struct sbt_rule rule; /* kind, host or addr/prefix, ports, proto, canonical text */
	bool resolved;	      /* false: a cidr rule for an address never resolved */
	uint64_t connects;
};

struct sbt_learn_proposal {
	struct sbt_learn_rule *r; /* host rules by name, then never-resolved cidr rules */
	size_t n;
	size_t nr_unresolved;
};

/*
 * The smallest allowlist allowing every destination of l: one rule per
 * (name or address, protocol, run of consecutive ports), and a TCP and a
 * UDP rule with the same ports as one without proto. 0 or -ENOMEM.
 */
int sbt_learn_propose(const struct sbt_learn *l, struct sbt_learn_proposal *p);
void sbt_learn_proposal_free(struct sbt_learn_proposal *p);

/*
 * Proposal p as format f (one bit), for sandbox `sandbox` (the Cilium
 * policy's name is made of it). A new string, NULL on ENOMEM.
 */
char *sbt_learn_render(const struct sbt_learn_proposal *p, unsigned int f, const char *sandbox);

#endif
