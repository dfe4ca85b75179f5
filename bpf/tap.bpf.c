// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Egress of a microVM, judged on its tap: tc ingress (tcx, or clsact) on the
 * host side of the tap, where every frame the guest sends arrives. The guest
 * is root and may craft any frame, so the parser is strict and anything it
 * cannot vouch for is dropped and reported:
 *
 *   Ethernet, up to two 802.1Q / 802.1ad tags in the frame (an outer tag the
 *   kernel took off into skb metadata is fine too); ARP (allowed, sender
 *   checked); IPv4 with options (source routes refused) and fragments (a
 *   non-first fragment passes only when its first fragment was allowed);
 *   IPv6 with a bounded walk of extension headers (routing headers with
 *   segments left refused; v4-mapped destinations refused); TCP, UDP, ICMP,
 *   ICMPv6 (neighbour discovery and link-scope MLD allowed). A source address
 *   that is not the guest's is dropped (spoofed_source).
 *
 * DNS (UDP and TCP port 53, any destination): with sbtrace's DNS proxy for
 * the tap (enforce mode, host rules), every query is rewritten to the
 * proxy's socket on the tap's host-side address (destination address and
 * port, checksums updated) and the guest's end of the flow remembered;
 * tap_egress, on the same tap's egress, gives the proxy's replies the source
 * the guest asked (its resolver drops anything else). The guest needs no
 * configuration. Without the proxy, DNS goes only to the designated
 * resolver.
 *
 * The destination is judged by the same trie and rules as the cgroup hooks
 * (policy.bpf.h), keyed by the tap's sandbox slot. A denied TCP SYN is
 * answered with a RST, a denied UDP datagram or ICMP echo with an ICMP /
 * ICMPv6 "administratively prohibited", both sent back into the guest
 * (redirect to the tap's egress), so the guest's connect fails at once.
 * Events: one per flow start (SYN, datagram, echo) and per denial, folded
 * like the cgroup path's.
 */
#include "policy.bpf.h"

#define TC_ACT_OK	0
#define TC_ACT_SHOT	2
#define TC_ACT_REDIRECT 7

#define ETH_HLEN     14
#define ETH_P_ARP    0x0806
#define ETH_P_8021Q  0x8100
#define ETH_P_8021AD 0x88A8

#define IP_MF	  0x2000
#define IP_OFFSET 0x1fff

#define NEXTHDR_HOP	 0
#define NEXTHDR_ROUTING	 43
#define NEXTHDR_FRAGMENT 44
#define NEXTHDR_AUTH	 51
#define NEXTHDR_DEST	 60

#define TCP_FLAG_SYN 0x02
#define TCP_FLAG_RST 0x04
#define TCP_FLAG_ACK 0x10

#define MAX_VLAN_TAGS 2
#define MAX_EXT_HDRS  6
#define MAX_L4OFF     512 /* Ethernet, tags, IPv6 and its extension headers: beyond is refused */
#define QUOTE4_MAX    68  /* an IPv4 header with options and 8 bytes of its payload */
#define QUOTE6_MAX    128 /* of the offending IPv6 packet, from its start */

/* The devices the program is attached to (the loader fills these before it attaches). */
struct sbt_tap taps[SBT_MAX_TAPS];
__u32 nr_taps;

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, struct sbt_frag_key);
	__type(value, __u32);
} tap_frags SEC(".maps");

/*
 * Verdicts of recent destinations, per CPU, direct-mapped: the segments of a
 * flow skip the trie (about 40 of the ~85 ns an allowed frame cost here without it). Valid
 * while policy_gen is unchanged.
 */
#define FLOW_CACHE_SLOTS 64

/* Bumped by the loader after every change to the trie: older cached verdicts are stale. */
__u32 policy_gen;

struct flow_cache {
	__u8 daddr[16];
	__u32 slot;
	__u32 gen;
	__u32 rule_id;
	__u32 floor_idx;
	__u16 dport;
	__u8 proto;
	__u8 valid;
	__u8 allowed;
	__u8 reason;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, FLOW_CACHE_SLOTS);
	__type(key, __u32);
	__type(value, struct flow_cache);
} tap_flows SEC(".maps");

enum frag_kind {
	FRAG_NONE = 0,
	FRAG_FIRST,    /* offset 0, more fragments follow: carries the ports */
	FRAG_NONFIRST, /* no ports: judged by its first fragment */
};

/* What the parser found. Offsets count from the start of the frame. */
struct pkt {
	__u32 l3off, l4off, l3end;
	__u32 seq;     /* TCP */
	__u32 payload; /* TCP payload bytes (SYN data counts in the RST's ack) */
	__u32 frag_id;
	__u16 sport, dport;
	__u16 ethertype;
	__u8 family, proto, tcp_flags, icmp_type, frag, hop_limit;
	__u8 saddr[16] __attribute__((aligned(8)));
	__u8 daddr[16] __attribute__((aligned(8))); /* both IPv4 mapped */
	__u8 mac[12];				    /* destination then source, as in the frame */
};

/*
 * skb->data and data_end read afresh at each use: the empty asm hides the
 * context pointer from the compiler, so it cannot keep skb+76 in a register
 * and load through it (the verifier refuses a modified context pointer).
 */
static __always_inline void *pkt_data(struct __sk_buff *skb)
{
	asm volatile("" : "+r"(skb));
	return (void *)(long)skb->data;
}

static __always_inline void *pkt_end(struct __sk_buff *skb)
{
	asm volatile("" : "+r"(skb));
	return (void *)(long)skb->data_end;
}

/* parse() and check_source(): 0 to judge the destination, PASS for control traffic, else a reason. */
#define PASS 0xff

static __always_inline bool is_v4_mapped(const __u8 a[16])
{
	const __u32 *w = (const __u32 *)a;

	return w[0] == 0 && w[1] == 0 && w[2] == bpf_htonl(0xffff);
}

static __always_inline bool addr_eq(const __u8 a[16], const __u8 b[16])
{
	const __u64 *x = (const __u64 *)a, *y = (const __u64 *)b;

	return x[0] == y[0] && x[1] == y[1];
}

/* The first bytes of the transport header, directly when linear, else copied. */
static __always_inline int load_l4(struct __sk_buff *skb, __u32 off, __u8 *buf, __u32 len)
{
	void *data = pkt_data(skb), *end = pkt_end(skb);

	if (off > MAX_L4OFF)
		return -1;
	if (data + off + 20 <= end) {
		__builtin_memcpy(buf, data + off, 20);
		return 0;
	}
	return bpf_skb_load_bytes(skb, off, buf, len);
}

static __always_inline int parse_l4(struct __sk_buff *skb, struct pkt *p)
{
	__u8 h[20];
	__u32 room = p->l3end - p->l4off, doff;

	if (p->frag == FRAG_NONFIRST)
		return 0;
	switch (p->proto) {
	case IPPROTO_TCP:
		if (room < 20 || load_l4(skb, p->l4off, h, 20))
			return SBT_REASON_MALFORMED;
		doff = (__u32)(h[12] >> 4) * 4;
		if (doff < 20 || doff > room)
			return SBT_REASON_MALFORMED;
		p->sport = ((__u16)h[0] << 8) | h[1];
		p->dport = ((__u16)h[2] << 8) | h[3];
		p->seq = ((__u32)h[4] << 24) | ((__u32)h[5] << 16) | ((__u32)h[6] << 8) | h[7];
		p->tcp_flags = h[13];
		p->payload = room - doff;
		return 0;
	case IPPROTO_UDP:
		if (room < 8 || load_l4(skb, p->l4off, h, 8))
			return SBT_REASON_MALFORMED;
		/* the length covers the whole datagram: in a first fragment it is longer */
		if ((((__u32)h[4] << 8) | h[5]) < 8 ||
		    ((((__u32)h[4] << 8) | h[5]) > room && p->frag != FRAG_FIRST))
			return SBT_REASON_MALFORMED;
		p->sport = ((__u16)h[0] << 8) | h[1];
		p->dport = ((__u16)h[2] << 8) | h[3];
		return 0;
	case IPPROTO_ICMP:
	case IPPROTO_ICMPV6:
		if (room < 8 || load_l4(skb, p->l4off, h, 8))
			return SBT_REASON_MALFORMED;
		p->icmp_type = h[0];
		return 0;
	}
	return 0; /* other protocols: judged by address alone */
}

/* IPv4 options: walked, source routes refused. */
struct opt_walk {
	__u8 opt[40];
	__u32 o, olen;
	int verdict;
};

/* One option per call (bpf_loop: verified once, whatever the options hold). */
static long opt_step(__u64 i, void *arg)
{
	struct opt_walk *w = arg;
	__u32 o = w->o;
	__u8 t, len;

	if (o >= w->olen || o >= 40)
		return 1;
	t = w->opt[o];
	if (t == 0) /* end of options */
		return 1;
	if (t == 1) { /* no-op */
		w->o = o + 1;
		return 0;
	}
	if (o + 1 >= w->olen || o + 1 >= 40) {
		w->verdict = SBT_REASON_MALFORMED;
		return 1;
	}
	len = w->opt[o + 1];
	if (len < 2 || o + len > w->olen) {
		w->verdict = SBT_REASON_MALFORMED;
		return 1;
	}
	if (t == 131 || t == 137) { /* loose / strict source route */
		w->verdict = SBT_REASON_UNSUPPORTED;
		return 1;
	}
	w->o = o + len;
	return 0;
}

static __noinline int check_ip_options(struct __sk_buff *skb, __u32 off, __u32 olen)
{
	struct opt_walk w = {};

	if (olen == 0 || olen > 40)
		return olen ? SBT_REASON_MALFORMED : 0;
	if (bpf_skb_load_bytes(skb, off, w.opt, olen) < 0)
		return SBT_REASON_MALFORMED;
	w.olen = olen;
	bpf_loop(40, opt_step, &w, 0);
	return w.verdict;
}

static __always_inline int parse_ipv4(struct __sk_buff *skb, struct pkt *p)
{
	void *data = pkt_data(skb), *end = pkt_end(skb);
	struct iphdr *ip;
	__u32 hl, tot, off = p->l3off, frag;
	int err;

	if (off > ETH_HLEN + 4 * MAX_VLAN_TAGS)
		return SBT_REASON_MALFORMED;
	ip = data + off;
	if ((void *)(ip + 1) > end)
		return SBT_REASON_MALFORMED;
	hl = (__u32)ip->ihl * 4;
	tot = bpf_ntohs(ip->tot_len);
	if (ip->version != 4 || hl < 20 || tot < hl || off + tot > skb->len)
		return SBT_REASON_MALFORMED;
	p->family = AF_INET;
	p->proto = ip->protocol;
	p->l3end = off + tot;
	p->l4off = off + hl;
	v4_mapped(p->saddr, ip->saddr);
	v4_mapped(p->daddr, ip->daddr);
	frag = bpf_ntohs(ip->frag_off);
	p->frag_id = ip->id;
	if (frag & IP_OFFSET) {
		p->frag = FRAG_NONFIRST;
	} else if (frag & IP_MF) {
		p->frag = FRAG_FIRST;
	}
	if (hl > 20) {
		err = check_ip_options(skb, off + 20, hl - 20);
		if (err)
			return err;
	}
	return parse_l4(skb, p);
}

/* The extension headers before the transport header: a bounded walk. */
static __noinline int walk_ext_headers(struct __sk_buff *skb, struct pkt *p, __u8 nh)
{
	__u32 o = p->l3off + 40;

	for (int i = 0; i < MAX_EXT_HDRS; i++) {
		__u8 h[8];
		__u32 len;

		if (nh != NEXTHDR_HOP && nh != NEXTHDR_ROUTING && nh != NEXTHDR_FRAGMENT &&
		    nh != NEXTHDR_AUTH && nh != NEXTHDR_DEST)
			break;
		if (nh == NEXTHDR_HOP && i != 0)
			return SBT_REASON_MALFORMED; /* hop-by-hop only right after the header */
		if (o + 8 > p->l3end || o > MAX_L4OFF || bpf_skb_load_bytes(skb, o, h, 8) < 0)
			return SBT_REASON_MALFORMED;
		if (nh == NEXTHDR_FRAGMENT) {
			__u16 fo = ((__u16)h[2] << 8) | h[3];

			__builtin_memcpy(&p->frag_id, h + 4, 4);
			if (fo & 0xfff8) {
				p->frag = FRAG_NONFIRST;
				p->proto = h[0];
				p->l4off = o + 8;
				return 0;
			}
			if (fo & 1)
				p->frag = FRAG_FIRST;
			len = 8;
		} else if (nh == NEXTHDR_AUTH) {
			len = ((__u32)h[1] + 2) * 4;
		} else {
			if (nh == NEXTHDR_ROUTING && h[3] != 0)
				return SBT_REASON_UNSUPPORTED; /* the packet would go on elsewhere */
			len = ((__u32)h[1] + 1) * 8;
		}
		nh = h[0];
		o += len;
	}
	if (nh == NEXTHDR_HOP || nh == NEXTHDR_ROUTING || nh == NEXTHDR_FRAGMENT ||
	    nh == NEXTHDR_AUTH || nh == NEXTHDR_DEST || o > MAX_L4OFF || o > p->l3end)
		return SBT_REASON_UNSUPPORTED;
	p->proto = nh;
	p->l4off = o;
	return 0;
}

static __always_inline int parse_ipv6(struct __sk_buff *skb, struct pkt *p)
{
	void *data = pkt_data(skb), *end = pkt_end(skb);
	struct ipv6hdr *ip6;
	__u32 off = p->l3off, plen;
	int err;

	if (off > ETH_HLEN + 4 * MAX_VLAN_TAGS)
		return SBT_REASON_MALFORMED;
	ip6 = data + off;
	if ((void *)(ip6 + 1) > end)
		return SBT_REASON_MALFORMED;
	plen = bpf_ntohs(ip6->payload_len);
	if (ip6->version != 6 || off + 40 + plen > skb->len)
		return SBT_REASON_MALFORMED;
	p->family = AF_INET6;
	p->hop_limit = ip6->hop_limit;
	p->l3end = off + 40 + plen;
	p->l4off = off + 40;
	p->proto = ip6->nexthdr;
	__builtin_memcpy(p->saddr, &ip6->saddr, 16);
	__builtin_memcpy(p->daddr, &ip6->daddr, 16);
	if (is_v4_mapped(p->daddr))
		return SBT_REASON_UNSUPPORTED;
	if (p->proto != IPPROTO_TCP && p->proto != IPPROTO_UDP && p->proto != IPPROTO_ICMPV6) {
		err = walk_ext_headers(skb, p, p->proto);
		if (err)
			return err;
	}
	return parse_l4(skb, p);
}

static __always_inline int parse_arp(struct __sk_buff *skb, const struct sbt_tap *t, struct pkt *p)
{
	void *data = pkt_data(skb), *end = pkt_end(skb);
	__u32 off = p->l3off;
	__u8 *a, spa[4], tpa[4];

	if (off > ETH_HLEN + 4 * MAX_VLAN_TAGS)
		return SBT_REASON_MALFORMED;
	a = data + off;
	if ((void *)(a + 28) > end)
		return SBT_REASON_MALFORMED;
	/* Ethernet / IPv4 only: htype 1, ptype 0x0800, hlen 6, plen 4 */
	if (a[0] != 0 || a[1] != 1 || a[2] != 0x08 || a[3] != 0 || a[4] != 6 || a[5] != 4)
		return SBT_REASON_MALFORMED;
	__builtin_memcpy(spa, a + 14, 4);
	__builtin_memcpy(tpa, a + 24, 4);
	v4_mapped(p->saddr, *(__u32 *)spa);
	v4_mapped(p->daddr, *(__u32 *)tpa);
	p->family = AF_INET;
	if (!(t->flags & SBT_TAP_CHECK_SRC) || *(__u32 *)spa == 0) /* 0: an address probe */
		return PASS;
	if ((t->flags & SBT_TAP_GUEST4) && __builtin_memcmp(spa, t->guest4, 4) == 0)
		return PASS;
	return SBT_REASON_SPOOFED_SOURCE;
}

/* Ethernet and VLAN tags, then the network layer. */
static __always_inline int parse(struct __sk_buff *skb, const struct sbt_tap *t, struct pkt *p)
{
	void *data = pkt_data(skb), *end = pkt_end(skb);
	struct ethhdr *eth = data;
	__u16 proto;
	__u32 off = ETH_HLEN;

	if ((void *)(eth + 1) > end)
		return SBT_REASON_MALFORMED;
	__builtin_memcpy(p->mac, eth, 12);
	proto = eth->h_proto;
#pragma unroll
	for (int i = 0; i < MAX_VLAN_TAGS; i++) {
		struct vlan_hdr *vh;

		if (proto != bpf_htons(ETH_P_8021Q) && proto != bpf_htons(ETH_P_8021AD))
			break;
		vh = data + off;
		if ((void *)(vh + 1) > end)
			return SBT_REASON_MALFORMED;
		proto = vh->h_vlan_encapsulated_proto;
		off += 4;
	}
	p->ethertype = bpf_ntohs(proto);
	p->l3off = off;
	if (proto == bpf_htons(ETH_P_IP))
		return parse_ipv4(skb, p);
	if (proto == bpf_htons(ETH_P_IPV6))
		return parse_ipv6(skb, p);
	if (proto == bpf_htons(ETH_P_ARP))
		return parse_arp(skb, t, p);
	return SBT_REASON_UNSUPPORTED; /* a third tag, or a protocol nobody may send */
}

/* Control traffic that stays on the link, and the source address check. */
static __always_inline int check_source(const struct sbt_tap *t, const struct pkt *p)
{
	bool ll_src, ll_dst;

	if (p->family == AF_INET6) {
		if (p->proto == IPPROTO_ICMPV6 && p->frag == FRAG_NONE) {
			/* neighbour discovery: only valid with hop limit 255 (never routed) */
			if (p->icmp_type >= 133 && p->icmp_type <= 137)
				return p->hop_limit == 255 ? PASS : SBT_REASON_MALFORMED;
			/* MLD: link-scope multicast, hop limit 1 */
			if ((p->icmp_type >= 130 && p->icmp_type <= 132) || p->icmp_type == 143)
				return p->hop_limit == 1 && p->daddr[0] == 0xff &&
						       (p->daddr[1] & 0x0f) == 0x02
					       ? PASS
					       : SBT_REASON_MALFORMED;
		}
		if (!(t->flags & SBT_TAP_CHECK_SRC))
			return 0;
		if ((t->flags & SBT_TAP_GUEST6) && addr_eq(p->saddr, t->guest6))
			return 0;
		/* a link-local source may talk only to link-local or link-scope multicast */
		ll_src = p->saddr[0] == 0xfe && (p->saddr[1] & 0xc0) == 0x80;
		ll_dst = (p->daddr[0] == 0xfe && (p->daddr[1] & 0xc0) == 0x80) ||
			 (p->daddr[0] == 0xff && (p->daddr[1] & 0x0f) == 0x02);
		return ll_src && ll_dst ? 0 : SBT_REASON_SPOOFED_SOURCE;
	}
	if (!(t->flags & SBT_TAP_CHECK_SRC))
		return 0;
	if ((t->flags & SBT_TAP_GUEST4) && __builtin_memcmp(p->saddr + 12, t->guest4, 4) == 0)
		return 0;
	return SBT_REASON_SPOOFED_SOURCE;
}

/* Fold a 32-bit one's-complement sum (csum_words(), or bpf_csum_diff()'s) to a checksum. */
static __always_inline __u16 csum_fold(__u32 s)
{
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	return (__u16)~s;
}

/* One's-complement sum of `len` (constant, even) bytes, unrolled: no helper call. */
static __always_inline __u32 csum_words(const void *buf, const int len, __u32 sum)
{
	const __u16 *w = buf;

#pragma unroll
	for (int i = 0; i < len / 2; i++)
		sum += w[i];
	return sum;
}

/* The frame becomes its reply: Ethernet addresses swapped (VLAN tags stay where they are). */
static __always_inline void mirror_macs(__u8 *mac, const struct pkt *p)
{
	__builtin_memcpy(mac, p->mac + 6, 6);
	__builtin_memcpy(mac + 6, p->mac, 6);
}

static __always_inline int swap_macs(struct __sk_buff *skb, const struct pkt *p)
{
	__u8 mac[12];

	mirror_macs(mac, p);
	return bpf_skb_store_bytes(skb, 0, mac, 12, 0);
}

/*
 * A denied SYN: RST|ACK, seq 0, ack = its seq + 1 + its data, from the
 * destination. The frame is cut to the reply's length and the headers are
 * written in place (direct packet access, checksums summed inline: the
 * helper-free path is about 3x cheaper than store_bytes and csum_diff).
 */
static __always_inline void rst_tcp(__u8 tcp[20], const struct pkt *p, __u32 pseudo_sum)
{
	__u32 ack = bpf_htonl(p->seq + 1 + p->payload);
	__u16 c;

	__builtin_memset(tcp, 0, 20);
	tcp[0] = p->dport >> 8;
	tcp[1] = p->dport & 0xff;
	tcp[2] = p->sport >> 8;
	tcp[3] = p->sport & 0xff;
	__builtin_memcpy(tcp + 8, &ack, 4);
	tcp[12] = 5 << 4;
	tcp[13] = TCP_FLAG_RST | TCP_FLAG_ACK;
	c = csum_fold(csum_words(tcp, 20, pseudo_sum));
	__builtin_memcpy(tcp + 16, &c, 2);
}

/*
 * The reply is never longer than the SYN it answers (same tags, minimal
 * headers). A few bytes more (the SYN's options) stay as Ethernet padding
 * behind the IP length, which the guest's stack trims; more (data in the
 * SYN) is cut, so nothing of size goes back.
 */
static __always_inline int trim_to(struct __sk_buff *skb, __u32 len)
{
	if (skb->len < len)
		return -1;
	if (skb->len - len <= 32)
		return 0;
	return bpf_skb_change_tail(skb, len, 0);
}

/* The reply in place: mirrored Ethernet addresses, `len` bytes of headers at `off`. */
static __always_inline int put_reply(struct __sk_buff *skb, const struct pkt *p, __u32 off,
				     const void *hdr, const __u32 len)
{
	void *data = pkt_data(skb), *end = pkt_end(skb);

	if (data + ETH_HLEN > end || data + off + len > end)
		return -1;
	mirror_macs(data, p);
	__builtin_memcpy(data + off, hdr, len);
	return 0;
}

static __noinline int reply_rst(struct __sk_buff *skb, const struct pkt *p)
{
	/* pseudo-header: the addresses (summed below), protocol and TCP length */
	__u32 off = p->l3off, pseudo = bpf_htons(IPPROTO_TCP) + bpf_htons(20);

	if (off > ETH_HLEN + 4 * MAX_VLAN_TAGS)
		return TC_ACT_SHOT;
	if (p->family == AF_INET) {
		struct {
			struct iphdr ip;
			__u8 tcp[20];
		} r = {};

		if (trim_to(skb, off + sizeof(r)))
			return TC_ACT_SHOT;
		r.ip.version = 4;
		r.ip.ihl = 5;
		r.ip.tot_len = bpf_htons(sizeof(r));
		r.ip.frag_off = bpf_htons(0x4000);
		r.ip.ttl = 64;
		r.ip.protocol = IPPROTO_TCP;
		__builtin_memcpy(&r.ip.saddr, p->daddr + 12, 4);
		__builtin_memcpy(&r.ip.daddr, p->saddr + 12, 4);
		r.ip.check = csum_fold(csum_words(&r.ip, 20, 0));
		rst_tcp(r.tcp, p, csum_words(&r.ip.saddr, 8, pseudo));
		if (put_reply(skb, p, off, &r, sizeof(r)))
			return TC_ACT_SHOT;
	} else {
		struct {
			struct ipv6hdr ip6;
			__u8 tcp[20];
		} r = {};

		if (trim_to(skb, off + sizeof(r)))
			return TC_ACT_SHOT;
		r.ip6.version = 6;
		r.ip6.payload_len = bpf_htons(20);
		r.ip6.nexthdr = IPPROTO_TCP;
		r.ip6.hop_limit = 64;
		__builtin_memcpy(&r.ip6.saddr, p->daddr, 16);
		__builtin_memcpy(&r.ip6.daddr, p->saddr, 16);
		rst_tcp(r.tcp, p, csum_words(&r.ip6.saddr, 32, pseudo));
		if (put_reply(skb, p, off, &r, sizeof(r)))
			return TC_ACT_SHOT;
	}
	return bpf_redirect(skb->ifindex, 0);
}

/* ICMP type 3 code 13: communication administratively prohibited, quoting the datagram. */
static __noinline int reply_icmp4(struct __sk_buff *skb, const struct pkt *p)
{
	struct {
		struct iphdr ip;
		__u8 icmp[8];
		__u8 quote[QUOTE4_MAX];
	} r = {};
	__u32 q = p->l4off - p->l3off + 8, off = p->l3off;
	__u16 c;

	if (q > QUOTE4_MAX || q < 28 || off > ETH_HLEN + 4 * MAX_VLAN_TAGS || off + q > p->l3end)
		return TC_ACT_SHOT;
	if (bpf_skb_load_bytes(skb, off, r.quote, q) < 0)
		return TC_ACT_SHOT;
	r.ip.version = 4;
	r.ip.ihl = 5;
	r.ip.tot_len = bpf_htons(28 + q);
	r.ip.ttl = 64;
	r.ip.protocol = IPPROTO_ICMP;
	__builtin_memcpy(&r.ip.saddr, p->daddr + 12, 4);
	__builtin_memcpy(&r.ip.daddr, p->saddr + 12, 4);
	r.ip.check = csum_fold(bpf_csum_diff(NULL, 0, (__be32 *)&r.ip, sizeof(r.ip), 0));
	r.icmp[0] = 3;
	r.icmp[1] = 13;
	c = csum_fold(bpf_csum_diff(NULL, 0, (__be32 *)r.icmp, 8 + q, 0));
	__builtin_memcpy(r.icmp + 2, &c, 2);
	if (bpf_skb_change_tail(skb, off + 28 + q, 0) || swap_macs(skb, p) ||
	    bpf_skb_store_bytes(skb, off, &r, 28 + q, 0))
		return TC_ACT_SHOT;
	return bpf_redirect(skb->ifindex, 0);
}

/* ICMPv6 type 1 code 1: communication administratively prohibited. */
static __noinline int reply_icmp6(struct __sk_buff *skb, const struct pkt *p)
{
	struct {
		struct ipv6hdr ip6;
		__u8 icmp[8];
		__u8 quote[QUOTE6_MAX];
	} r = {};
	__u32 q = p->l4off - p->l3off + 8, off = p->l3off, sum;
	__u16 c;

	if (q > QUOTE6_MAX)
		q = QUOTE6_MAX;
	if (q < 48 || off > ETH_HLEN + 4 * MAX_VLAN_TAGS || off + q > p->l3end)
		return TC_ACT_SHOT;
	if (bpf_skb_load_bytes(skb, off, r.quote, q) < 0)
		return TC_ACT_SHOT;
	r.ip6.version = 6;
	r.ip6.payload_len = bpf_htons(8 + q);
	r.ip6.nexthdr = IPPROTO_ICMPV6;
	r.ip6.hop_limit = 64;
	__builtin_memcpy(&r.ip6.saddr, p->daddr, 16);
	__builtin_memcpy(&r.ip6.daddr, p->saddr, 16);
	r.icmp[0] = 1;
	r.icmp[1] = 1;
	/* pseudo-header: the addresses, the ICMPv6 length and next header */
	sum = csum_words(&r.ip6.saddr, 32, bpf_htons(IPPROTO_ICMPV6) + bpf_htons(8 + q));
	c = csum_fold(bpf_csum_diff(NULL, 0, (__be32 *)r.icmp, 8 + (q & ~3u), sum));
	__builtin_memcpy(r.icmp + 2, &c, 2);
	if (bpf_skb_change_tail(skb, off + 48 + q, 0) || swap_macs(skb, p) ||
	    bpf_skb_store_bytes(skb, off, &r, 48 + q, 0))
		return TC_ACT_SHOT;
	return bpf_redirect(skb->ifindex, 0);
}

static __always_inline bool is_syn(const struct pkt *p)
{
	return p->proto == IPPROTO_TCP &&
	       (p->tcp_flags & (TCP_FLAG_SYN | TCP_FLAG_ACK | TCP_FLAG_RST)) == TCP_FLAG_SYN;
}

static __always_inline bool is_echo_request(const struct pkt *p)
{
	return (p->proto == IPPROTO_ICMP && p->icmp_type == 8) ||
	       (p->proto == IPPROTO_ICMPV6 && p->icmp_type == 128);
}

/* The answer that makes the guest's call fail at once, or a plain drop. */
static __always_inline int refuse(struct __sk_buff *skb, const struct pkt *p, __u8 *reply)
{
	int ret;

	if (p->frag == FRAG_NONFIRST)
		return TC_ACT_SHOT;
	if (is_syn(p)) {
		ret = reply_rst(skb, p);
		*reply = ret == TC_ACT_REDIRECT ? SBT_REPLY_TCP_RST : SBT_REPLY_NONE;
		return ret;
	}
	if (p->proto == IPPROTO_UDP || is_echo_request(p)) {
		ret = p->family == AF_INET ? reply_icmp4(skb, p) : reply_icmp6(skb, p);
		*reply = ret == TC_ACT_REDIRECT ? SBT_REPLY_ICMP : SBT_REPLY_NONE;
		return ret;
	}
	return TC_ACT_SHOT;
}

/* What the program decided about one frame. */
struct decision {
	struct verdict v;
	__u8 verdict, would_deny, reply;
};

static __noinline void tap_event(const struct sbt_tap *t, const struct pkt *p,
				 const struct decision *d)
{
	struct sbt_fold_key k = {
		.slot = t->slot,
		.dport = p->dport,
		.proto = p->proto,
		.hook = SBT_HOOK_TAP,
		.verdict = d->verdict,
		.reason = d->v.reason,
	};
	struct sbt_egress_record r;
	__u64 count;

	/* The fold key first: a folded event costs no record. */
	__builtin_memcpy(k.daddr, p->daddr, 16);
	count = fold(&k, bpf_ktime_get_coarse_ns());
	if (!count)
		return;
	__builtin_memset(&r, 0, sizeof(r));
	r.count = count;
	r.slot = t->slot;
	r.hook = SBT_HOOK_TAP;
	r.family = p->family;
	r.proto = p->proto;
	r.dport = p->dport;
	r.ethertype = p->ethertype;
	r.ifindex = t->ifindex;
	r.verdict = d->verdict;
	r.reason = d->v.reason;
	r.would_deny = d->would_deny;
	r.reply = d->reply;
	r.rule_id = d->v.rule_id;
	r.floor_idx = d->v.floor_idx;
	__builtin_memcpy(r.daddr, p->daddr, 16);
	__builtin_memcpy(r.saddr, p->saddr, 16);
	send_egress(&r);
}

static __always_inline void judge(const struct sbt_tap *t, const struct pkt *p, struct verdict *v)
{
	__u32 gen = policy_gen, idx;
	struct flow_cache *c;

	__builtin_memcpy(&idx, p->daddr + 12, 4);
	idx = (idx ^ (idx >> 16) ^ p->dport ^ t->slot) & (FLOW_CACHE_SLOTS - 1);
	c = bpf_map_lookup_elem(&tap_flows, &idx);
	if (c && c->valid && c->gen == gen && c->dport == p->dport && c->proto == p->proto &&
	    c->slot == t->slot && addr_eq(c->daddr, p->daddr)) {
		v->allowed = c->allowed;
		v->rule_id = c->rule_id;
		v->floor_idx = c->floor_idx;
		v->reason = c->reason;
		return;
	}
	policy_check(t->slot, p->daddr, p->dport, p->proto, false, v);
	if (!c)
		return;
	__builtin_memcpy(c->daddr, p->daddr, 16);
	c->slot = t->slot;
	c->gen = gen;
	c->rule_id = v->rule_id;
	c->floor_idx = v->floor_idx;
	c->dport = p->dport;
	c->proto = p->proto;
	c->allowed = v->allowed;
	c->reason = v->reason;
	c->valid = 1;
}

static __always_inline void frag_key(struct sbt_frag_key *k, const struct sbt_tap *t,
				     const struct pkt *p)
{
	__builtin_memset(k, 0, sizeof(*k));
	k->slot = t->slot;
	k->id = p->frag_id;
	k->proto = p->proto;
	__builtin_memcpy(k->saddr, p->saddr, 16);
	__builtin_memcpy(k->daddr, p->daddr, 16);
}

static __always_inline const struct sbt_tap *tap_of(__u32 ifindex)
{
	__u32 n = nr_taps;

	for (__u32 i = 0; i < SBT_MAX_TAPS; i++) {
		if (i >= n)
			break;
		if (taps[i].ifindex == ifindex)
			return &taps[i];
	}
	return NULL;
}

#include "tapdns.bpf.h"

SEC("tc")
int tap_ingress(struct __sk_buff *skb)
{
	const struct sbt_tap *t = tap_of(skb->ifindex);
	struct decision d = {};
	struct pkt p;
	__u8 mode;
	int why, ret;

	if (!t)
		return TC_ACT_OK; /* not ours (the loader registers a device before attaching) */
	mode = egress_mode[t->slot & (SBT_MAX_SANDBOXES - 1)];
	__builtin_memset(&p, 0, sizeof(p));
	/* Headers beyond the linear part of a large frame: pull them in first. */
	if (pkt_end(skb) - pkt_data(skb) < skb->len && pkt_end(skb) - pkt_data(skb) < 256)
		bpf_skb_pull_data(skb, skb->len < 256 ? skb->len : 256);

	why = parse(skb, t, &p);
	if (why == 0)
		why = check_source(t, &p);
	if (why == PASS)
		return TC_ACT_OK;
	if (why) {
		d.v.reason = (__u8)why;
	} else if (p.frag == FRAG_NONFIRST) {
		struct sbt_frag_key k;

		frag_key(&k, t, &p);
		if (bpf_map_lookup_elem(&tap_frags, &k))
			return TC_ACT_OK; /* its first fragment was allowed (and reported) */
		d.v.reason = SBT_REASON_FRAGMENT;
	} else if (mode == SBT_EGRESS_OBSERVE) {
		if (p.proto == IPPROTO_TCP && !is_syn(&p))
			return TC_ACT_OK;
		d.verdict = SBT_VERDICT_OBSERVED;
		d.v.reason = SBT_REASON_NO_POLICY;
		tap_event(t, &p, &d);
		return TC_ACT_OK;
	} else if ((p.proto == IPPROTO_UDP || p.proto == IPPROTO_TCP) && p.dport == 53) {
		/* DNS: the proxy, else the designated resolver, else nobody */
		why = dns_divert(skb, t, &p);
		if (why == 0) {
			d.v.allowed = true;
			d.v.reason = SBT_REASON_DNS_PROXY;
		} else if (why != 1) {
			d.v.reason = (__u8)why;
		} else if ((t->flags & SBT_TAP_RESOLVER) && addr_eq(p.daddr, t->resolver)) {
			d.v.allowed = true;
			d.v.reason = SBT_REASON_RESOLVER;
		} else {
			d.v.reason = SBT_REASON_NOT_RESOLVER;
		}
	} else {
		judge(t, &p, &d.v);
	}

	if (d.v.allowed) {
		if (p.frag == FRAG_FIRST) {
			struct sbt_frag_key k;
			__u32 one = 1;

			frag_key(&k, t, &p);
			bpf_map_update_elem(&tap_frags, &k, &one, BPF_ANY);
		}
		/* one event per flow start: a SYN, a datagram, an echo ... not every segment */
		if (p.proto != IPPROTO_TCP || is_syn(&p)) {
			d.verdict = SBT_VERDICT_ALLOWED;
			tap_event(t, &p, &d);
		}
		return TC_ACT_OK;
	}
	if (mode != SBT_EGRESS_ENFORCE) {
		d.verdict = SBT_VERDICT_OBSERVED;
		d.would_deny = 1;
		tap_event(t, &p, &d);
		return TC_ACT_OK;
	}
	ret = TC_ACT_SHOT;
	/* Only a judged destination is answered: never a spoofed or malformed frame. */
	if (d.v.reason == SBT_REASON_NOT_IN_ALLOWLIST || d.v.reason == SBT_REASON_FLOOR ||
	    d.v.reason == SBT_REASON_NOT_RESOLVER)
		ret = refuse(skb, &p, &d.reply);
	d.verdict = SBT_VERDICT_DENIED;
	tap_event(t, &p, &d);
	return ret;
}
