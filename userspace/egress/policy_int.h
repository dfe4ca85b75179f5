/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* What policy.c (parsing) and policy_compile.c (compilation) share. */
#ifndef SBT_POLICY_INT_H
#define SBT_POLICY_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "egress/policy.h"

void sbt_policy_set_err(struct sbt_parse_error *err, size_t col, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Is `a` an IPv4-mapped address (::ffff:a.b.c.d)? */
bool sbt_addr_is_mapped(const uint8_t a[16]);
/* Does the network net/prefix contain `x`? */
bool sbt_prefix_covers(const uint8_t net[16], unsigned int prefix, const uint8_t x[16]);
/* Clear the bits below `prefix`. */
void sbt_prefix_mask(uint8_t a[16], unsigned int prefix);
/* "192.0.2.0/24" for mapped prefixes of /96 and longer, else "2001:db8::/32". */
void sbt_prefix_str(const uint8_t addr[16], unsigned int prefix, char *buf, size_t len);

#endif
