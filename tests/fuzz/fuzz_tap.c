// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Random frames through the tap program on the real kernel (BPF_PROG_TEST_RUN,
 * root). The oracle is independent of the program: whenever it lets a frame
 * through, tests/common/frames.h must parse that frame as ARP from the guest,
 * link-local IPv6 control (neighbour discovery, MLD), or an IP packet from
 * the guest whose destination, port and protocol the library's reference
 * verdict (sbt_policy_verdict) allows, or DNS to the designated resolver.
 * Anything else let through is a hole: abort.
 */
#include <stdio.h>
#include <stdlib.h>

#include "tests/common/frames.h"
#include "tests/kernel/taplab.h"

static const char *const rules[] = {
	"cidr 198.51.100.7/32 port 80 proto tcp",
	"cidr 198.51.100.0/24 port 9999 proto udp",
	"cidr 2001:db8:2::/48 port 80-443",
	"cidr 192.0.2.1/32",
};

#define NR_RULES (sizeof(rules) / sizeof(rules[0]))

static struct taplab lab;
/* the rules' entries and the floor's (with its NAT64 and 6to4 forms) */
#define MAX_ENTRIES (NR_RULES + 64)
static struct sbt_policy_entry entries[MAX_ENTRIES];
static int nr_entries;
static struct frame_addr guest4 = FRAME_V4(203, 0, 113, 254), resolver = FRAME_V4(192, 0, 2, 53);
static struct frame_addr guest6 = FRAME_V6(0x2001, 0xdb8, 9, 0, 0, 0, 0, 2);

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct sbt_tap t = { .flags = SBT_TAP_CHECK_SRC | SBT_TAP_GUEST4 | SBT_TAP_GUEST6 |
				      SBT_TAP_RESOLVER };
	struct sbt_rule r[NR_RULES];
	struct sbt_parse_error perr;

	memcpy(t.guest4, guest4.a + 12, 4);
	memcpy(t.guest6, guest6.a, 16);
	memcpy(t.resolver, resolver.a, 16);
	if (taplab_open(&lab, SBT_EGRESS_ENFORCE, rules, NR_RULES, &t)) {
		fprintf(stderr, "fuzz_tap: cannot load the tap program (root? BPF?)\n");
		abort();
	}
	for (size_t i = 0; i < NR_RULES; i++) {
		if (sbt_rule_parse(rules[i], &r[i], &perr) != 1)
			abort();
		r[i].id = (uint32_t)i + 1;
	}
	nr_entries = sbt_policy_compile(r, NR_RULES, entries, MAX_ENTRIES, &perr);
	if (nr_entries < 0)
		abort();
	return 0;
}

static bool link_local(const struct frame_addr *a)
{
	return (a->a[0] == 0xfe && (a->a[1] & 0xc0) == 0x80) ||
	       (a->a[0] == 0xff && (a->a[1] & 0x0f) == 0x02);
}

/* May this frame pass? The reference answer, from an independent parse. */
static bool may_pass(const uint8_t *p, size_t n)
{
	struct frame_info fi;
	bool floor;
	uint16_t port;

	if (frame_parse(p, n, &fi) != 0 || !fi.has_eth)
		return false;
	if (fi.has_arp) /* from the guest, or an address probe (sender 0.0.0.0) */
		return frame_addr_eq(&fi.arp_spa, &guest4) ||
		       (fi.arp_spa.a[12] | fi.arp_spa.a[13] | fi.arp_spa.a[14] |
			fi.arp_spa.a[15]) == 0;
	if (!fi.ip_ver || fi.ip_truncated)
		return false;
	if (fi.ip_ver == 6 && fi.proto == FRAME_IPPROTO_ICMPV6 && fi.has_l4 &&
	    ((fi.icmp_type >= 130 && fi.icmp_type <= 137) || fi.icmp_type == 143))
		return true; /* neighbour discovery, MLD: the link's own business */
	if (!frame_addr_eq(&fi.src, fi.ip_ver == 4 ? &guest4 : &guest6) &&
	    !(fi.ip_ver == 6 && link_local(&fi.src) && link_local(&fi.dst)))
		return false;
	if (fi.is_frag && fi.frag_off)
		return false; /* the fragment table is empty for every input */
	port = (fi.proto == FRAME_IPPROTO_TCP || fi.proto == FRAME_IPPROTO_UDP) ? fi.dport : 0;
	if (port == 53 && (fi.proto == FRAME_IPPROTO_TCP || fi.proto == FRAME_IPPROTO_UDP))
		return frame_addr_eq(&fi.dst, &resolver);
	return sbt_policy_verdict(entries, (size_t)nr_entries, fi.dst.a, port, fi.proto, &floor) >
	       0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t out[FRAME_BUF_SIZE + 256];
	uint32_t out_len;
	int ret;

	if (size < 14 || size > FRAME_BUF_SIZE)
		return 0;
	taplab_reset(&lab);
	if (taplab_run(&lab, data, size, out, sizeof(out), &out_len, &ret, 1, NULL))
		return 0; /* test_run refuses some short frames before any program */
	if (ret == TAPLAB_TC_OK && !may_pass(data, size)) {
		char hex[2 * FRAME_BUF_SIZE + 1];

		frame_hex(data, size, hex, sizeof(hex));
		fprintf(stderr, "fuzz_tap: let through a frame the policy denies: %s\n", hex);
		abort();
	}
	if (ret != TAPLAB_TC_OK && ret != TAPLAB_TC_SHOT && ret != TAPLAB_TC_REDIRECT)
		abort();
	return 0;
}
