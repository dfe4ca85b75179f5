// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The tap program on the real kernel, frame by frame (BPF_PROG_TEST_RUN):
 * a table of frames a guest may send — allowed and denied IPv4/IPv6 TCP and
 * UDP, VLAN and stacked VLAN, IPv6 extension headers, fragments, mapped
 * addresses, spoofed sources, ARP and neighbour discovery, DNS, truncated and
 * malformed headers at every layer — each with the verdict it must get, the
 * event it must send, and for refusals the fields of the RST or ICMP reply
 * the guest gets back. Run as root by tests/integration/t_tap_packets.sh.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>

#include <cmocka.h>

#include <arpa/inet.h>

#include "tests/common/frames.h"
#include "tests/kernel/taplab.h"

#define GUEST_MAC FRAME_MAC(0x02, 0, 0, 0, 0, 0x02)
#define GW_MAC	  FRAME_MAC(0x02, 0, 0, 0, 0, 0x01)
#define GUEST4	  FRAME_V4(203, 0, 113, 254)
#define GUEST6	  FRAME_V6(0x2001, 0xdb8, 9, 0, 0, 0, 0, 2)
#define GUEST_LL  FRAME_V6(0xfe80, 0, 0, 0, 0, 0, 0, 2)
#define ALLOW4	  FRAME_V4(198, 51, 100, 7) /* tcp 80, udp 9999 */
#define ANY4	  FRAME_V4(192, 0, 2, 1)    /* every port */
#define DENY4	  FRAME_V4(203, 0, 113, 5)  /* no rule */
#define RESOLVER4 FRAME_V4(192, 0, 2, 53)
#define ALLOW6	  FRAME_V6(0x2001, 0xdb8, 2, 0, 0, 0, 0, 7) /* port 80 */
#define DENY6	  FRAME_V6(0x2001, 0xdb8, 3, 0, 0, 0, 0, 5)
#define META4	  FRAME_V4(169, 254, 169, 254)

static const char *const rules[] = {
	"cidr 198.51.100.7/32 port 80 proto tcp",   /* 1 */
	"cidr 198.51.100.7/32 port 9999 proto udp", /* 2 */
	"cidr 2001:db8:2::7/128 port 80",	    /* 3 */
	"cidr 192.0.2.1/32",			    /* 4 */
};

static struct taplab lab, audit_lab;

static struct sbt_tap tap_conf(void)
{
	struct sbt_tap t = { .flags = SBT_TAP_CHECK_SRC | SBT_TAP_GUEST4 | SBT_TAP_GUEST6 |
				      SBT_TAP_RESOLVER };
	struct frame_addr g4 = GUEST4, g6 = GUEST6, r = RESOLVER4;

	memcpy(t.guest4, g4.a + 12, 4);
	memcpy(t.guest6, g6.a, 16);
	memcpy(t.resolver, r.a, 16);
	return t;
}

static int setup(void **state)
{
	struct sbt_tap t = tap_conf();

	if (taplab_open(&lab, SBT_EGRESS_ENFORCE, rules, 4, &t))
		return -1;
	if (taplab_open(&audit_lab, SBT_EGRESS_AUDIT, rules, 4, &t))
		return -1;
	return 0;
}

static int teardown(void **state)
{
	taplab_close(&lab);
	taplab_close(&audit_lab);
	return 0;
}

/* ---- frames ------------------------------------------------------------ */

struct spec {
	uint16_t tags[3][2]; /* tpid, vid */
	int ntags;
	struct frame_addr src, dst;
	uint8_t proto;	   /* FRAME_IPPROTO_TCP / UDP / ICMP / ICMPV6 */
	uint8_t tcp_flags; /* default SYN */
	uint16_t sport, dport;
	uint32_t seq;
	size_t payload;
	uint8_t hop_limit;
	const char *v6_ext; /* "h" hop-by-hop, "d" dest opts, "r" routing (segleft 0), "R" (1) */
};

static void build(struct frame *f, const struct spec *s)
{
	static const uint8_t data[64] = "0123456789abcdef0123456789abcdef";
	struct frame_ip ip = { .src = s->src, .dst = s->dst, .ttl = s->hop_limit };
	bool v6 = !frame_addr_is_v4(&s->dst) || !frame_addr_is_v4(&s->src);

	frame_init(f);
	frame_eth(f, GW_MAC, GUEST_MAC, 0);
	for (int i = 0; i < s->ntags; i++)
		frame_vlan(f, s->tags[i][0], s->tags[i][1]);
	frame_ip(f, &ip);
	for (const char *e = s->v6_ext; v6 && e && *e; e++) {
		struct frame_addr seg = ALLOW6;

		if (*e == 'h')
			frame_ip6_hbh(f, NULL, 0);
		else if (*e == 'd')
			frame_ip6_dstopts(f, NULL, 0);
		else if (*e == 'r' || *e == 'R')
			frame_ip6_routing(f, 4, *e == 'R', &seg, 1);
	}
	switch (s->proto) {
	case FRAME_IPPROTO_UDP:
		frame_udp(f, s->sport, s->dport);
		break;
	case FRAME_IPPROTO_ICMP:
		frame_icmp_echo(f, false, 7, 1);
		break;
	case FRAME_IPPROTO_ICMPV6:
		frame_icmp6_echo(f, false, 7, 1);
		break;
	default:
		frame_tcp(f,
			  &(struct frame_tcp){ .sport = s->sport,
					       .dport = s->dport,
					       .seq = s->seq,
					       .flags = s->tcp_flags ? s->tcp_flags : FRAME_TCP_SYN,
					       .window = 64240,
					       .mss = 1460 });
	}
	if (s->payload)
		frame_payload(f, data, s->payload);
	assert_int_equal(frame_finish(f), 0);
}

/* ---- running and checking ------------------------------------------------ */

struct outcome {
	int ret;
	uint8_t out[FRAME_BUF_SIZE];
	uint32_t out_len;
	struct frame_info reply;
	int nr_events;
	struct sbt_egress ev; /* the last event */
};

static void run_on(struct taplab *L, const void *frame, size_t len, struct outcome *o)
{
	int before = L->nr_events;

	memset(o, 0, sizeof(*o));
	assert_int_equal(
		taplab_run(L, frame, len, o->out, sizeof(o->out), &o->out_len, &o->ret, 1, NULL),
		0);
	o->nr_events = L->nr_events - before;
	if (L->nr_events)
		o->ev = L->events[L->nr_events - 1];
	if (o->ret == TAPLAB_TC_REDIRECT)
		frame_parse(o->out, o->out_len, &o->reply);
}

static void run(const struct frame *f, struct outcome *o)
{
	taplab_reset(&lab);
	run_on(&lab, f->buf, f->len, o);
}

static void expect_event(const struct outcome *o, uint8_t verdict, uint8_t reason)
{
	assert_int_equal(o->nr_events, 1);
	assert_int_equal(o->ev.hook, SBT_HOOK_TAP);
	assert_int_equal(o->ev.verdict, verdict);
	assert_int_equal(o->ev.reason, reason);
	assert_int_equal(o->ev.ifindex, TAPLAB_IFINDEX);
	assert_int_equal(o->ev.count, 1);
}

static void expect_pass_silent(const struct frame *f)
{
	struct outcome o;

	run(f, &o);
	assert_int_equal(o.ret, TAPLAB_TC_OK);
	assert_int_equal(o.nr_events, 0);
}

static void expect_allowed(const struct spec *s, uint8_t reason, uint32_t rule_id)
{
	struct frame f;
	struct outcome o;
	struct frame_addr d = s->dst;

	build(&f, s);
	run(&f, &o);
	assert_int_equal(o.ret, TAPLAB_TC_OK);
	expect_event(&o, SBT_VERDICT_ALLOWED, reason);
	assert_int_equal(o.ev.rule_id, rule_id);
	assert_memory_equal(o.ev.daddr, d.a, 16);
	assert_int_equal(o.ev.dport, s->proto == FRAME_IPPROTO_ICMP ? 0 : s->dport);
}

/* Dropped without a reply; one event with this reason. */
static void expect_dropped(const struct frame *f, uint8_t reason)
{
	struct outcome o;

	run(f, &o);
	assert_int_equal(o.ret, TAPLAB_TC_SHOT);
	expect_event(&o, SBT_VERDICT_DENIED, reason);
	assert_int_equal(o.ev.reply, SBT_REPLY_NONE);
}

/* A denied SYN: RST|ACK back to the guest, mirrored, ack = seq + 1 + data. */
static void expect_rst(const struct spec *s, uint8_t reason)
{
	struct frame f;
	struct outcome o;
	struct frame_mac gw = GW_MAC, guest = GUEST_MAC;

	build(&f, s);
	run(&f, &o);
	assert_int_equal(o.ret, TAPLAB_TC_REDIRECT);
	expect_event(&o, SBT_VERDICT_DENIED, reason);
	assert_int_equal(o.ev.reply, SBT_REPLY_TCP_RST);
	assert_true(o.reply.has_eth);
	assert_true(frame_mac_eq(&o.reply.dst_mac, &guest));
	assert_true(frame_mac_eq(&o.reply.src_mac, &gw));
	assert_int_equal(o.reply.nvlan, (unsigned int)s->ntags);
	for (int i = 0; i < s->ntags; i++) {
		assert_int_equal(o.reply.vlan_tpid[i], s->tags[i][0]);
		assert_int_equal(o.reply.vlan_id[i], s->tags[i][1]);
	}
	assert_int_equal(o.reply.proto, FRAME_IPPROTO_TCP);
	assert_true(o.reply.has_l4);
	assert_true(o.reply.ip_csum_ok);
	assert_true(o.reply.l4_csum_ok);
	assert_false(o.reply.ip_truncated);
	assert_true(frame_addr_eq(&o.reply.src, &s->dst));
	assert_true(frame_addr_eq(&o.reply.dst, &s->src));
	assert_int_equal(o.reply.sport, s->dport);
	assert_int_equal(o.reply.dport, s->sport);
	assert_int_equal(o.reply.tcp_flags, FRAME_TCP_RST | FRAME_TCP_ACK);
	assert_int_equal(o.reply.seq, 0);
	assert_int_equal(o.reply.ack, (uint32_t)(s->seq + 1 + s->payload));
	assert_int_equal(o.reply.payload_len, 0);
}

/* A denied datagram or echo: ICMP(v6) administratively prohibited, quoting it. */
static void expect_icmp(const struct spec *s, uint8_t reason)
{
	struct frame f;
	struct outcome o;
	bool v6 = !frame_addr_is_v4(&s->dst);

	build(&f, s);
	run(&f, &o);
	assert_int_equal(o.ret, TAPLAB_TC_REDIRECT);
	expect_event(&o, SBT_VERDICT_DENIED, reason);
	assert_int_equal(o.ev.reply, SBT_REPLY_ICMP);
	assert_int_equal(o.reply.nvlan, (unsigned int)s->ntags);
	assert_int_equal(o.reply.proto, v6 ? FRAME_IPPROTO_ICMPV6 : FRAME_IPPROTO_ICMP);
	assert_int_equal(o.reply.icmp_type, v6 ? 1 : 3);
	assert_int_equal(o.reply.icmp_code, v6 ? 1 : 13);
	assert_true(o.reply.ip_csum_ok);
	assert_true(o.reply.l4_csum_ok);
	assert_true(frame_addr_eq(&o.reply.src, &s->dst));
	assert_true(frame_addr_eq(&o.reply.dst, &s->src));
	assert_true(o.reply.is_icmp_error);
	assert_int_equal(o.reply.quoted.ip_ver, v6 ? 6 : 4);
	assert_true(frame_addr_eq(&o.reply.quoted.dst, &s->dst));
	assert_true(frame_addr_eq(&o.reply.quoted.src, &s->src));
	if (s->proto == FRAME_IPPROTO_UDP) {
		assert_true(o.reply.quoted.has_ports);
		assert_int_equal(o.reply.quoted.dport, s->dport);
		assert_int_equal(o.reply.quoted.sport, s->sport);
	}
}

#define V4(...) (&(struct spec){ .src = GUEST4, .sport = 40000, .seq = 1000, __VA_ARGS__ })
#define V6(...) (&(struct spec){ .src = GUEST6, .sport = 40000, .seq = 1000, __VA_ARGS__ })

/* ---- the table ------------------------------------------------------------ */

static void t_v4_tcp_allowed(void **s)
{
	expect_allowed(V4(.dst = ALLOW4, .dport = 80), SBT_REASON_RULE, 1);
}

static void t_v4_tcp_segment_silent(void **s)
{
	struct frame f;

	build(&f, V4(.dst = ALLOW4, .dport = 80, .tcp_flags = FRAME_TCP_ACK, .payload = 20));
	expect_pass_silent(&f);
}

static void t_v4_tcp_denied_rst(void **s)
{
	expect_rst(V4(.dst = DENY4, .dport = 80), SBT_REASON_NOT_IN_ALLOWLIST);
}

static void t_v4_tcp_wrong_port_rst(void **s)
{
	expect_rst(V4(.dst = ALLOW4, .dport = 443), SBT_REASON_NOT_IN_ALLOWLIST);
}

static void t_v4_tcp_syn_data_rst(void **s)
{
	/* TCP Fast Open: the SYN's data counts in the ack; the sequence wraps */
	expect_rst(&(struct spec){ .src = GUEST4,
				   .sport = 40000,
				   .dst = DENY4,
				   .dport = 80,
				   .payload = 10,
				   .seq = 0xfffffff0 },
		   SBT_REASON_NOT_IN_ALLOWLIST);
}

/* A SYN carrying much data: the reply is cut to the RST's own length (no data goes back). */
static void t_syn_big_data_rst_is_cut(void **s)
{
	struct frame f;
	struct outcome o;

	expect_rst(V4(.dst = DENY4, .dport = 80, .payload = 60), SBT_REASON_NOT_IN_ALLOWLIST);
	build(&f, V6(.dst = DENY6, .dport = 80, .payload = 60));
	run(&f, &o);
	assert_int_equal(o.ret, TAPLAB_TC_REDIRECT);
	assert_int_equal(o.out_len, 14 + 40 + 20);
	build(&f, V4(.dst = DENY4, .dport = 80, .payload = 60));
	run(&f, &o);
	assert_int_equal(o.out_len, 14 + 20 + 20);
}

static void t_v4_tcp_udp_rule_is_not_tcp(void **s)
{
	expect_rst(V4(.dst = ALLOW4, .dport = 9999), SBT_REASON_NOT_IN_ALLOWLIST);
}

static void t_v4_tcp_denied_segment_dropped(void **s)
{
	struct frame f;

	build(&f, V4(.dst = DENY4, .dport = 80, .tcp_flags = FRAME_TCP_ACK));
	expect_dropped(&f, SBT_REASON_NOT_IN_ALLOWLIST);
}

static void t_v4_udp_allowed(void **s)
{
	expect_allowed(V4(.dst = ALLOW4, .dport = 9999, .proto = FRAME_IPPROTO_UDP),
		       SBT_REASON_RULE, 2);
}

static void t_v4_udp_denied_icmp(void **s)
{
	expect_icmp(V4(.dst = DENY4, .dport = 9999, .proto = FRAME_IPPROTO_UDP, .payload = 5),
		    SBT_REASON_NOT_IN_ALLOWLIST);
}

static void t_v4_icmp_echo(void **s)
{
	expect_allowed(V4(.dst = ANY4, .proto = FRAME_IPPROTO_ICMP), SBT_REASON_RULE, 4);
	expect_icmp(V4(.dst = DENY4, .proto = FRAME_IPPROTO_ICMP), SBT_REASON_NOT_IN_ALLOWLIST);
}

static void t_v4_floor_metadata(void **s)
{
	expect_rst(V4(.dst = META4, .dport = 80), SBT_REASON_FLOOR);
}

static void t_v6_tcp_allowed(void **s)
{
	expect_allowed(V6(.dst = ALLOW6, .dport = 80), SBT_REASON_RULE, 3);
}

static void t_v6_tcp_denied_rst(void **s)
{
	expect_rst(V6(.dst = DENY6, .dport = 80), SBT_REASON_NOT_IN_ALLOWLIST);
}

static void t_v6_udp_denied_icmp6(void **s)
{
	expect_icmp(V6(.dst = DENY6, .dport = 5353, .proto = FRAME_IPPROTO_UDP, .payload = 3),
		    SBT_REASON_NOT_IN_ALLOWLIST);
}

static void t_v6_echo_denied_icmp6(void **s)
{
	expect_icmp(V6(.dst = DENY6, .proto = FRAME_IPPROTO_ICMPV6), SBT_REASON_NOT_IN_ALLOWLIST);
}

static void t_vlan_allowed(void **s)
{
	expect_allowed(
		V4(.tags = { { FRAME_ETH_8021Q, 100 } }, .ntags = 1, .dst = ALLOW4, .dport = 80),
		SBT_REASON_RULE, 1);
}

static void t_vlan_denied_rst_keeps_tag(void **s)
{
	expect_rst(V4(.tags = { { FRAME_ETH_8021Q, 100 } }, .ntags = 1, .dst = DENY4, .dport = 80),
		   SBT_REASON_NOT_IN_ALLOWLIST);
}

static void t_qinq_denied_rst_keeps_tags(void **s)
{
	expect_rst(V6(.tags = { { FRAME_ETH_8021AD, 10 }, { FRAME_ETH_8021Q, 20 } }, .ntags = 2,
		      .dst = DENY6, .dport = 443),
		   SBT_REASON_NOT_IN_ALLOWLIST);
	expect_icmp(V4(.tags = { { FRAME_ETH_8021AD, 10 }, { FRAME_ETH_8021Q, 20 } }, .ntags = 2,
		       .dst = DENY4, .dport = 53000, .proto = FRAME_IPPROTO_UDP),
		    SBT_REASON_NOT_IN_ALLOWLIST);
}

static void t_three_tags_unsupported(void **s)
{
	struct frame f;

	build(&f, V4(.tags = { { FRAME_ETH_8021AD, 1 },
			       { FRAME_ETH_8021Q, 2 },
			       { FRAME_ETH_8021Q, 3 } },
		     .ntags = 3, .dst = ALLOW4, .dport = 80));
	expect_dropped(&f, SBT_REASON_UNSUPPORTED);
}

static void t_v6_ext_headers(void **s)
{
	expect_allowed(V6(.dst = ALLOW6, .dport = 80, .v6_ext = "hd"), SBT_REASON_RULE, 3);
	expect_allowed(V6(.dst = ALLOW6, .dport = 80, .v6_ext = "dr"), SBT_REASON_RULE, 3);
	expect_rst(V6(.dst = DENY6, .dport = 80, .v6_ext = "hdd"), SBT_REASON_NOT_IN_ALLOWLIST);
	expect_icmp(V6(.dst = DENY6, .dport = 7, .proto = FRAME_IPPROTO_UDP, .v6_ext = "d"),
		    SBT_REASON_NOT_IN_ALLOWLIST);
}

static void t_v6_routing_segments_left(void **s)
{
	struct frame f;

	/* to an allowed first hop, then elsewhere: refused */
	build(&f, V6(.dst = ALLOW6, .dport = 80, .v6_ext = "R"));
	expect_dropped(&f, SBT_REASON_UNSUPPORTED);
}

static void t_v6_too_many_ext_headers(void **s)
{
	struct frame f;

	build(&f, V6(.dst = ALLOW6, .dport = 80, .v6_ext = "hddddddd"));
	expect_dropped(&f, SBT_REASON_UNSUPPORTED);
}

static void t_v6_hbh_not_first(void **s)
{
	struct frame f;

	build(&f, V6(.dst = ALLOW6, .dport = 80, .v6_ext = "dh"));
	expect_dropped(&f, SBT_REASON_MALFORMED);
}

static void t_v6_mapped_destination(void **s)
{
	struct frame f;
	struct frame_addr mapped = ALLOW4; /* ::ffff:198.51.100.7 in an IPv6 header */

	build(&f, V6(.dst = ALLOW6, .dport = 80));
	memcpy(f.buf + 14 + 24, mapped.a, 16);
	expect_dropped(&f, SBT_REASON_UNSUPPORTED);
}

/* Fragments: the first carries the ports; the rest pass only behind an allowed first. */
static void frag_case(bool v6, bool allowed_first)
{
	struct frame whole, first, rest;
	struct outcome o;
	struct spec sp = { .src = v6 ? GUEST6 : GUEST4,
			   .dst = v6 ? (allowed_first ? ALLOW6 : DENY6)
				     : (allowed_first ? ALLOW4 : DENY4),
			   .proto = FRAME_IPPROTO_UDP,
			   .sport = 40000,
			   .dport = v6 ? 80 : 9999,
			   .payload = 48 };
	size_t l3;

	build(&whole, &sp);
	frame_l3(&whole, &l3);
	assert_int_equal(frame_fragment(&first, &whole, 0, 32, true, 77), 0);
	assert_int_equal(frame_fragment(&rest, &whole, 32, l3 - (v6 ? 40 : 20) - 32, false, 77), 0);
	taplab_reset(&lab);
	run_on(&lab, first.buf, first.len, &o);
	if (allowed_first) {
		assert_int_equal(o.ret, TAPLAB_TC_OK);
		expect_event(&o, SBT_VERDICT_ALLOWED, SBT_REASON_RULE);
		run_on(&lab, rest.buf, rest.len, &o);
		assert_int_equal(o.ret, TAPLAB_TC_OK);
		assert_int_equal(o.nr_events, 0);
	} else {
		assert_int_equal(o.ret, TAPLAB_TC_REDIRECT); /* ICMP prohibited for the first */
		run_on(&lab, rest.buf, rest.len, &o);
		assert_int_equal(o.ret, TAPLAB_TC_SHOT);
		expect_event(&o, SBT_VERDICT_DENIED, SBT_REASON_FRAGMENT);
	}
}

static void t_v4_fragments(void **s)
{
	frag_case(false, true);
	frag_case(false, false);
}

static void t_v6_fragments(void **s)
{
	frag_case(true, true);
	frag_case(true, false);
}

static void t_orphan_fragment(void **s)
{
	struct frame whole, rest;
	size_t l3;

	build(&whole, V4(.dst = ALLOW4, .dport = 9999, .proto = FRAME_IPPROTO_UDP, .payload = 48));
	frame_l3(&whole, &l3);
	assert_int_equal(frame_fragment(&rest, &whole, 16, l3 - 20 - 16, false, 0), 0);
	expect_dropped(&rest, SBT_REASON_FRAGMENT);
}

static void t_spoofed_sources(void **s)
{
	struct frame f;

	build(&f,
	      &(struct spec){
		      .src = FRAME_V4(203, 0, 113, 99), .dst = ALLOW4, .dport = 80, .sport = 1 });
	expect_dropped(&f, SBT_REASON_SPOOFED_SOURCE);
	build(&f, &(struct spec){ .src = FRAME_V6(0x2001, 0xdb8, 9, 0, 0, 0, 0, 3),
				  .dst = ALLOW6,
				  .dport = 80,
				  .sport = 1 });
	expect_dropped(&f, SBT_REASON_SPOOFED_SOURCE);
	/* a link-local source may not leave the link */
	build(&f, &(struct spec){ .src = GUEST_LL, .dst = ALLOW6, .dport = 80, .sport = 1 });
	expect_dropped(&f, SBT_REASON_SPOOFED_SOURCE);
	/* a spoofed source is never answered, even to a denied destination */
	build(&f,
	      &(struct spec){
		      .src = FRAME_V4(198, 51, 100, 8), .dst = DENY4, .dport = 80, .sport = 1 });
	expect_dropped(&f, SBT_REASON_SPOOFED_SOURCE);
}

static void t_arp(void **s)
{
	struct frame f;
	struct frame_mac zero = { { 0 } };

	frame_init(&f);
	frame_eth(&f, FRAME_MAC_BCAST, GUEST_MAC, 0);
	frame_arp(&f, FRAME_ARP_REQUEST, GUEST_MAC, GUEST4, zero, FRAME_V4(203, 0, 113, 253));
	assert_int_equal(frame_finish(&f), 0);
	expect_pass_silent(&f);
	frame_init(&f);
	frame_eth(&f, FRAME_MAC_BCAST, GUEST_MAC, 0);
	frame_arp(&f, FRAME_ARP_REPLY, GUEST_MAC, FRAME_V4(203, 0, 113, 253), zero,
		  FRAME_V4(203, 0, 113, 253));
	assert_int_equal(frame_finish(&f), 0);
	expect_dropped(&f, SBT_REASON_SPOOFED_SOURCE);
}

static void t_neighbour_discovery(void **s)
{
	struct frame f;
	struct frame_mac mac = GUEST_MAC;
	struct frame_addr target = FRAME_V6(0x2001, 0xdb8, 9, 0, 0, 0, 0, 1);
	struct frame_addr snm = frame_addr_snm(&target);

	frame_init(&f);
	frame_eth(&f, frame_mac_mcast6(&snm), GUEST_MAC, 0);
	frame_ip(&f, &(struct frame_ip){ .src = GUEST_LL, .dst = snm, .ttl = 255 });
	frame_icmp6_ns(&f, target, &mac);
	assert_int_equal(frame_finish(&f), 0);
	expect_pass_silent(&f);
	/* with a hop limit below 255 it may have been routed: not neighbour discovery */
	frame_init(&f);
	frame_eth(&f, frame_mac_mcast6(&snm), GUEST_MAC, 0);
	frame_ip(&f, &(struct frame_ip){ .src = GUEST_LL, .dst = snm, .ttl = 64 });
	frame_icmp6_ns(&f, target, &mac);
	assert_int_equal(frame_finish(&f), 0);
	expect_dropped(&f, SBT_REASON_MALFORMED);
}

static void t_dns_only_to_resolver(void **s)
{
	expect_allowed(V4(.dst = RESOLVER4, .dport = 53, .proto = FRAME_IPPROTO_UDP),
		       SBT_REASON_RESOLVER, 0);
	/* 192.0.2.1 is allowed on every port, but it is not the resolver */
	expect_icmp(V4(.dst = ANY4, .dport = 53, .proto = FRAME_IPPROTO_UDP),
		    SBT_REASON_NOT_RESOLVER);
	expect_rst(V4(.dst = ANY4, .dport = 53), SBT_REASON_NOT_RESOLVER);
}

/* The proxy's address on the tap's host side and its ports (network byte order). */
#define PROXY4	   FRAME_V4(203, 0, 113, 253)
#define PROXY6	   FRAME_V6(0x2001, 0xdb8, 9, 0, 0, 0, 0, 1)
#define PROXY_UDP4 40053
#define PROXY_TCP4 40054
#define PROXY_UDP6 40055
#define PROXY_TCP6 40056

static void proxy_on(bool on)
{
	struct sbt_tap *t = &lab.skel->bss->taps[0];
	struct frame_addr h4 = PROXY4, h6 = PROXY6;

	t->flags &= ~(SBT_TAP_PROXY4 | SBT_TAP_PROXY6);
	memset(t->proxy_port, 0, sizeof(t->proxy_port));
	if (!on)
		return;
	t->flags |= SBT_TAP_PROXY4 | SBT_TAP_PROXY6;
	memcpy(t->host4, h4.a + 12, 4);
	memcpy(t->host6, h6.a, 16);
	t->proxy_port[SBT_DNS_UDP4] = htons(PROXY_UDP4);
	t->proxy_port[SBT_DNS_TCP4] = htons(PROXY_TCP4);
	t->proxy_port[SBT_DNS_UDP6] = htons(PROXY_UDP6);
	t->proxy_port[SBT_DNS_TCP6] = htons(PROXY_TCP6);
}

/* A query to `s->dst`:53 goes to the proxy; the proxy's reply comes back from s->dst:53. */
static void expect_diverted(const struct spec *s, const struct frame_addr *proxy, uint16_t pport)
{
	struct frame f;
	struct outcome o;
	struct frame_info in, back;
	uint8_t out[FRAME_BUF_SIZE];
	struct __sk_buff ctx = { .ifindex = TAPLAB_IFINDEX };
	LIBBPF_OPTS(bpf_test_run_opts, to, .ctx_in = &ctx, .ctx_size_in = sizeof(ctx),
		    .data_out = out, .data_size_out = sizeof(out));
	struct frame_ip ip = { .src = *proxy, .dst = s->src };

	build(&f, s);
	run(&f, &o);
	assert_int_equal(o.ret, TAPLAB_TC_OK);
	expect_event(&o, SBT_VERDICT_ALLOWED, SBT_REASON_DNS_PROXY);
	assert_memory_equal(o.ev.daddr, s->dst.a, 16); /* the event names what the guest asked */
	assert_int_equal(frame_parse(o.out, o.out_len, &in), 0);
	assert_true(frame_addr_eq(&in.dst, proxy));
	assert_true(frame_addr_eq(&in.src, &s->src));
	assert_int_equal(in.dport, pport);
	assert_int_equal(in.sport, s->sport);
	assert_true(in.ip_csum_ok);
	assert_true(in.l4_csum_ok);

	/* the reply, from the proxy to the guest's port, through tap_egress */
	frame_init(&f);
	frame_eth(&f, GUEST_MAC, GW_MAC, 0);
	frame_ip(&f, &ip);
	if (s->proto == FRAME_IPPROTO_UDP)
		frame_udp(&f, pport, s->sport);
	else
		frame_tcp(&f, &(struct frame_tcp){ .sport = pport,
						   .dport = s->sport,
						   .flags = FRAME_TCP_SYN | FRAME_TCP_ACK,
						   .window = 64240 });
	frame_payload(&f, "answer", 6);
	assert_int_equal(frame_finish(&f), 0);
	to.data_in = f.buf;
	to.data_size_in = (uint32_t)f.len;
	assert_int_equal(bpf_prog_test_run_opts(bpf_program__fd(lab.skel->progs.tap_egress), &to),
			 0);
	assert_int_equal(to.retval, TAPLAB_TC_OK);
	assert_int_equal(frame_parse(out, to.data_size_out, &back), 0);
	assert_true(frame_addr_eq(&back.src, &s->dst));
	assert_int_equal(back.sport, 53);
	assert_int_equal(back.dport, s->sport);
	assert_true(back.ip_csum_ok);
	assert_true(back.l4_csum_ok);
}

static void t_dns_to_proxy(void **st)
{
	struct frame_addr p4 = PROXY4, p6 = PROXY6;
	struct frame f;
	struct outcome o;

	proxy_on(true);
	/* any destination, UDP and TCP, both families; the resolver too */
	expect_diverted(V4(.dst = ANY4, .dport = 53, .proto = FRAME_IPPROTO_UDP), &p4, PROXY_UDP4);
	expect_diverted(V4(.dst = RESOLVER4, .dport = 53), &p4, PROXY_TCP4);
	expect_diverted(V6(.dst = DENY6, .dport = 53, .proto = FRAME_IPPROTO_UDP), &p6, PROXY_UDP6);
	expect_diverted(V6(.dst = DENY6, .dport = 53), &p6, PROXY_TCP6);
	/* the flow's later segments too, without an event */
	build(&f, V4(.dst = ANY4, .dport = 53, .tcp_flags = FRAME_TCP_ACK));
	run(&f, &o);
	assert_int_equal(o.ret, TAPLAB_TC_OK);
	assert_int_equal(o.nr_events, 0);
	/* a VLAN-tagged query is not the host's to take */
	build(&f, V4(.tags = { { 0x8100, 7 } }, .ntags = 1, .dst = ANY4, .dport = 53,
		     .proto = FRAME_IPPROTO_UDP));
	expect_dropped(&f, SBT_REASON_UNSUPPORTED);
	proxy_on(false);
}

static void t_ip_options(void **s)
{
	static const uint8_t rr[] = { 7, 7, 4, 0, 0, 0, 0 };		 /* record route */
	static const uint8_t lsrr[] = { 1, 131, 7, 4, 198, 51, 100, 7 }; /* NOP, loose route */
	static const uint8_t bad[] = { 68, 1 };				 /* length 1 */
	struct frame f;
	struct outcome o;
	const uint8_t *opts[] = { rr, lsrr, bad };
	size_t lens[] = { sizeof(rr), sizeof(lsrr), sizeof(bad) };

	for (int i = 0; i < 3; i++) {
		frame_init(&f);
		frame_eth(&f, GW_MAC, GUEST_MAC, 0);
		frame_ip(&f, &(struct frame_ip){ .src = GUEST4,
						 .dst = ALLOW4,
						 .opts = opts[i],
						 .opts_len = lens[i] });
		frame_tcp(&f,
			  &(struct frame_tcp){ .sport = 1, .dport = 80, .flags = FRAME_TCP_SYN });
		assert_int_equal(frame_finish(&f), 0);
		if (i == 0) {
			run(&f, &o);
			assert_int_equal(o.ret, TAPLAB_TC_OK);
		} else {
			expect_dropped(&f, i == 1 ? SBT_REASON_UNSUPPORTED : SBT_REASON_MALFORMED);
		}
	}
}

static void t_unknown_ethertype(void **s)
{
	struct frame f;

	frame_init(&f);
	frame_eth(&f, GW_MAC, GUEST_MAC, 0x88cc); /* LLDP */
	frame_payload(&f, "0123456789012345678901234567890123456789", 40);
	assert_int_equal(frame_finish(&f), 0);
	expect_dropped(&f, SBT_REASON_UNSUPPORTED);
}

/* Malformed headers at each layer (lengths that lie, fields out of range). */
static void t_malformed_fields(void **s)
{
	struct frame f;

	/* IPv4 ihl 4 */
	build(&f, V4(.dst = ALLOW4, .dport = 80));
	f.buf[14] = 0x44;
	expect_dropped(&f, SBT_REASON_MALFORMED);
	/* IPv4 total length beyond the frame */
	build(&f, V4(.dst = ALLOW4, .dport = 80));
	frame_put16(f.buf + 16, (uint16_t)(f.len - 14 + 8));
	expect_dropped(&f, SBT_REASON_MALFORMED);
	/* IPv4 version 5 */
	build(&f, V4(.dst = ALLOW4, .dport = 80));
	f.buf[14] = 0x55;
	expect_dropped(&f, SBT_REASON_MALFORMED);
	/* TCP data offset 3 */
	build(&f, V4(.dst = ALLOW4, .dport = 80));
	f.buf[14 + 20 + 12] = 0x30;
	expect_dropped(&f, SBT_REASON_MALFORMED);
	/* TCP data offset beyond the packet */
	build(&f, V4(.dst = ALLOW4, .dport = 80));
	f.buf[14 + 20 + 12] = 0xf0;
	expect_dropped(&f, SBT_REASON_MALFORMED);
	/* UDP length 7 */
	build(&f, V4(.dst = ALLOW4, .dport = 9999, .proto = FRAME_IPPROTO_UDP));
	frame_put16(f.buf + 14 + 20 + 4, 7);
	expect_dropped(&f, SBT_REASON_MALFORMED);
	/* IPv6 payload length beyond the frame */
	build(&f, V6(.dst = ALLOW6, .dport = 80));
	frame_put16(f.buf + 14 + 4, (uint16_t)(f.len - 14 - 40 + 1));
	expect_dropped(&f, SBT_REASON_MALFORMED);
	/* IPv6 version 4 in an IPv6 ethertype */
	build(&f, V6(.dst = ALLOW6, .dport = 80));
	f.buf[14] = 0x40;
	expect_dropped(&f, SBT_REASON_MALFORMED);
}

/*
 * Truncation at every layer: each prefix of a valid frame (Ethernet, tags,
 * IP, extension headers, TCP/UDP) is never allowed and never answered.
 */
static void truncate_all(const struct spec *sp)
{
	struct frame f;
	struct outcome o;
	size_t ran = 0;

	build(&f, sp);
	for (size_t cut = 14; cut < f.len; cut++) {
		int before, err;

		taplab_reset(&lab);
		before = lab.nr_events;
		err = taplab_run(&lab, f.buf, cut, o.out, sizeof(o.out), &o.out_len, &o.ret, 1,
				 NULL);
		/* test_run itself refuses frames shorter than Ethernet + 20 bytes */
		if (err == -EINVAL && cut < 34)
			continue;
		assert_int_equal(err, 0);
		ran++;
		if (o.ret != TAPLAB_TC_SHOT)
			fail_msg("cut at %zu of %zu: verdict %d", cut, f.len, o.ret);
		assert_int_equal(lab.nr_events - before, 1);
		assert_true(lab.events[lab.nr_events - 1].reason == SBT_REASON_MALFORMED ||
			    lab.events[lab.nr_events - 1].reason == SBT_REASON_UNSUPPORTED);
	}
	assert_true(ran >= f.len - 34);
}

static void t_truncated_everywhere(void **s)
{
	truncate_all(
		V4(.tags = { { FRAME_ETH_8021Q, 5 } }, .ntags = 1, .dst = ALLOW4, .dport = 80));
	truncate_all(V4(.dst = ALLOW4, .dport = 9999, .proto = FRAME_IPPROTO_UDP, .payload = 4));
	truncate_all(V6(.tags = { { FRAME_ETH_8021AD, 5 }, { FRAME_ETH_8021Q, 6 } }, .ntags = 2,
			.dst = ALLOW6, .dport = 80, .v6_ext = "hd"));
}

static void t_audit_mode_allows_and_reports(void **s)
{
	struct frame f;
	struct outcome o;

	build(&f, V4(.dst = DENY4, .dport = 80));
	taplab_reset(&audit_lab);
	run_on(&audit_lab, f.buf, f.len, &o);
	assert_int_equal(o.ret, TAPLAB_TC_OK);
	assert_int_equal(o.nr_events, 1);
	assert_int_equal(o.ev.verdict, SBT_VERDICT_OBSERVED);
	assert_int_equal(o.ev.would_deny, 1);
	assert_int_equal(o.ev.reply, SBT_REPLY_NONE);
}

/* Identical denials fold: one event now, the rest counted in the fold table. */
static void t_denials_fold(void **s)
{
	struct frame f;
	struct outcome o;
	struct sbt_fold_key key, next;
	struct sbt_fold_val val;
	int fd = bpf_map__fd(lab.skel->maps.egress_fold), found = 0;

	build(&f, V4(.dst = DENY4, .dport = 80));
	taplab_reset(&lab);
	for (int i = 0; i < 50; i++)
		run_on(&lab, f.buf, f.len, &o);
	assert_int_equal(lab.nr_events, 1);
	assert_int_equal(lab.events[0].count, 1);
	while (bpf_map_get_next_key(fd, found ? &key : NULL, &next) == 0) {
		key = next;
		found++;
		assert_int_equal(bpf_map_lookup_elem(fd, &key, &val), 0);
		assert_int_equal(val.folded, 49);
	}
	assert_int_equal(found, 1);
}

/* The flow cache follows the policy: after a trie change (generation bumped) a cached allow is gone. */
static void t_policy_change_invalidates_cache(void **s)
{
	struct sbt_policy_key key = { .prefixlen = 32 + 128, .slot = 0 };
	struct sbt_policy_val val;
	struct frame_addr a = ALLOW4;
	int fd = bpf_map__fd(lab.skel->maps.egress_policy);
	struct frame f;
	struct outcome o;

	memcpy(key.addr, a.a, 16);
	build(&f, V4(.dst = ALLOW4, .dport = 80, .tcp_flags = FRAME_TCP_ACK));
	expect_pass_silent(&f);
	expect_pass_silent(&f); /* now from the cache */
	assert_int_equal(bpf_map_lookup_elem(fd, &key, &val), 0);
	assert_int_equal(bpf_map_delete_elem(fd, &key), 0);
	lab.skel->bss->policy_gen++;
	run(&f, &o);
	assert_int_equal(o.ret, TAPLAB_TC_SHOT);
	expect_event(&o, SBT_VERDICT_DENIED, SBT_REASON_NOT_IN_ALLOWLIST);
	assert_int_equal(bpf_map_update_elem(fd, &key, &val, BPF_ANY), 0);
	lab.skel->bss->policy_gen++;
	expect_pass_silent(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_v4_tcp_allowed),
		cmocka_unit_test(t_v4_tcp_segment_silent),
		cmocka_unit_test(t_v4_tcp_denied_rst),
		cmocka_unit_test(t_v4_tcp_wrong_port_rst),
		cmocka_unit_test(t_v4_tcp_syn_data_rst),
		cmocka_unit_test(t_syn_big_data_rst_is_cut),
		cmocka_unit_test(t_v4_tcp_udp_rule_is_not_tcp),
		cmocka_unit_test(t_v4_tcp_denied_segment_dropped),
		cmocka_unit_test(t_v4_udp_allowed),
		cmocka_unit_test(t_v4_udp_denied_icmp),
		cmocka_unit_test(t_v4_icmp_echo),
		cmocka_unit_test(t_v4_floor_metadata),
		cmocka_unit_test(t_v6_tcp_allowed),
		cmocka_unit_test(t_v6_tcp_denied_rst),
		cmocka_unit_test(t_v6_udp_denied_icmp6),
		cmocka_unit_test(t_v6_echo_denied_icmp6),
		cmocka_unit_test(t_vlan_allowed),
		cmocka_unit_test(t_vlan_denied_rst_keeps_tag),
		cmocka_unit_test(t_qinq_denied_rst_keeps_tags),
		cmocka_unit_test(t_three_tags_unsupported),
		cmocka_unit_test(t_v6_ext_headers),
		cmocka_unit_test(t_v6_routing_segments_left),
		cmocka_unit_test(t_v6_too_many_ext_headers),
		cmocka_unit_test(t_v6_hbh_not_first),
		cmocka_unit_test(t_v6_mapped_destination),
		cmocka_unit_test(t_v4_fragments),
		cmocka_unit_test(t_v6_fragments),
		cmocka_unit_test(t_orphan_fragment),
		cmocka_unit_test(t_spoofed_sources),
		cmocka_unit_test(t_arp),
		cmocka_unit_test(t_neighbour_discovery),
		cmocka_unit_test(t_dns_only_to_resolver),
		cmocka_unit_test(t_dns_to_proxy),
		cmocka_unit_test(t_ip_options),
		cmocka_unit_test(t_unknown_ethertype),
		cmocka_unit_test(t_malformed_fields),
		cmocka_unit_test(t_truncated_everywhere),
		cmocka_unit_test(t_audit_mode_allows_and_reports),
		cmocka_unit_test(t_denials_fold),
		cmocka_unit_test(t_policy_change_invalidates_cache),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
