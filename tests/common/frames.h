/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Frames for tests, benchmarks and fuzz targets: a builder that appends layers
 * and a length-checked parser for what comes back. Header only, libc only.
 *
 * Conventions
 * - Addresses are struct frame_addr, 16 bytes in network order; IPv4 is the
 *   IPv4-mapped form ::ffff:a.b.c.d (as in the egress policy). FRAME_V4(),
 *   FRAME_V6(), frame_addr_parse() and frame_addr_str() make and print them.
 *   MACs are struct frame_mac (FRAME_MAC(), frame_mac_parse()).
 * - Every other number (ports, seq, ids, ethertypes) is in host order.
 *
 * Building: zero the frame (frame_init() or "struct frame f = { 0 };"),
 * append layers outer to inner, then frame_finish():
 *
 *	frame_eth(&f, gw_mac, my_mac, 0);
 *	frame_vlan(&f, FRAME_ETH_8021Q, 100);
 *	frame_ip(&f, &(struct frame_ip){ .src = FRAME_V4(203, 0, 113, 254),
 *					 .dst = FRAME_V4(198, 51, 100, 7) });
 *	frame_tcp(&f, &(struct frame_tcp){ .sport = 40000, .dport = 80,
 *					   .seq = 1, .flags = FRAME_TCP_SYN,
 *					   .window = 64240, .mss = 1460 });
 *	frame_payload(&f, "data", 4);
 *	if (frame_finish(&f)) ...	// f.buf, f.len: the frame
 *
 * - A type field left 0 (the Ethernet/VLAN ethertype, IPv4 protocol, IPv6 next
 *   header) is filled in by the next layer appended (a VLAN tag, ARP, IP, an
 *   IPv6 extension header, TCP/UDP/ICMP/ICMPv6); a non-zero one is kept as
 *   given. Raw payload fills nothing: frame_type() sets a pending one by hand.
 *   An IPv6 next header still pending at frame_finish() becomes 59 (none).
 * - frame_finish() sets, innermost layer first, UDP length, IPv4 total length,
 *   IPv6 payload length (up to the end of the frame minus frame_trailer()), and
 *   the IPv4 header, TCP, UDP, ICMP and ICMPv6 checksums (TCP/UDP/ICMPv6 with
 *   the pseudo-header over the final payload; IPv6 with a routing header whose
 *   segments_left > 0 uses the final destination as RFC 8200 8.1 says). It
 *   recomputes from the bytes, so one may edit f.buf and finish again; to send
 *   a wrong length or checksum, edit after the last frame_finish().
 * - A layer builder that does not fit (FRAME_BUF_SIZE, FRAME_MAX_LAYERS) or
 *   gets bad arguments returns -1 and marks the frame; frame_finish() then
 *   fails too, so checking only frame_finish() is enough.
 * - Fragments: build the whole datagram, finish it, and cut it with
 *   frame_fragment() (IPv4, or IPv6 with a fragment header after the
 *   unfragmentable part). The L4 checksum of a datagram built directly with a
 *   non-zero fragment offset or MF is computed over this frame's bytes only.
 * - To quote a packet (ICMP errors), finish it in its own frame and append
 *   frame_l3() bytes (as many as wanted) as payload after frame_icmp().
 *
 * Parsing: frame_parse(p, len, &info) decodes Ethernet, up to FRAME_MAX_VLAN
 * 802.1Q/802.1ad tags, ARP, IPv4/IPv6 (IPv6 extension headers hop-by-hop,
 * routing, fragment, destination options, AH), TCP, UDP, ICMP, ICMPv6 (echo,
 * neighbour discovery, errors with the quoted packet). It reads nothing
 * outside [p, p + len); every has_* flag says whether that part was present
 * in full. Bytes after the IP packet's declared length (Ethernet padding) are
 * ignored; a frame shorter than the declared length is ip_truncated and its
 * L4 checksum is not verified (l4_csum_ok false).
 */
#ifndef SBT_TESTS_FRAMES_H
#define SBT_TESTS_FRAMES_H

#include <arpa/inet.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#ifndef FRAME_BUF_SIZE
#define FRAME_BUF_SIZE 2048
#endif
#define FRAME_MAX_LAYERS 24
#define FRAME_MAX_VLAN	 4
#define FRAME_MAX_EXT	 8

#define FRAME_ETH_IP4	 0x0800
#define FRAME_ETH_ARP	 0x0806
#define FRAME_ETH_8021Q	 0x8100
#define FRAME_ETH_8021AD 0x88a8
#define FRAME_ETH_IP6	 0x86dd

#define FRAME_IPPROTO_HOPOPTS  0
#define FRAME_IPPROTO_ICMP     1
#define FRAME_IPPROTO_TCP      6
#define FRAME_IPPROTO_UDP      17
#define FRAME_IPPROTO_ROUTING  43
#define FRAME_IPPROTO_FRAGMENT 44
#define FRAME_IPPROTO_AH       51
#define FRAME_IPPROTO_ICMPV6   58
#define FRAME_IPPROTO_NONE     59
#define FRAME_IPPROTO_DSTOPTS  60

#define FRAME_TCP_FIN 0x01
#define FRAME_TCP_SYN 0x02
#define FRAME_TCP_RST 0x04
#define FRAME_TCP_PSH 0x08
#define FRAME_TCP_ACK 0x10
#define FRAME_TCP_URG 0x20
#define FRAME_TCP_ECE 0x40
#define FRAME_TCP_CWR 0x80

#define FRAME_ARP_REQUEST 1
#define FRAME_ARP_REPLY	  2

#define FRAME_ICMP_ECHO_REPLY	 0
#define FRAME_ICMP_UNREACH	 3
#define FRAME_ICMP_ECHO		 8
#define FRAME_ICMP_TIME_EXCEEDED 11
#define FRAME_ICMP6_UNREACH	 1
#define FRAME_ICMP6_ECHO	 128
#define FRAME_ICMP6_ECHO_REPLY	 129
#define FRAME_ICMP6_RS		 133
#define FRAME_ICMP6_RA		 134
#define FRAME_ICMP6_NS		 135
#define FRAME_ICMP6_NA		 136

/* Neighbour advertisement flags (the first word after the ICMPv6 header). */
#define FRAME_NA_ROUTER	   0x80000000u
#define FRAME_NA_SOLICITED 0x40000000u
#define FRAME_NA_OVERRIDE  0x20000000u

/* Room for frame_addr_str() and frame_mac_str(), terminator included. */
#define FRAME_ADDRSTRLEN 46
#define FRAME_MACSTRLEN	 18

struct frame_addr {
	uint8_t a[16];
};

struct frame_mac {
	uint8_t a[6];
};

#define FRAME_V4(b0, b1, b2, b3)                                                                   \
	((struct frame_addr){                                                                      \
		{ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, (b0), (b1), (b2), (b3) } })
#define FRAME_V6(g0, g1, g2, g3, g4, g5, g6, g7)                                                   \
	((struct frame_addr){ { (g0) >> 8, (g0)&0xff, (g1) >> 8, (g1)&0xff, (g2) >> 8, (g2)&0xff,  \
				(g3) >> 8, (g3)&0xff, (g4) >> 8, (g4)&0xff, (g5) >> 8, (g5)&0xff,  \
				(g6) >> 8, (g6)&0xff, (g7) >> 8, (g7)&0xff } })
#define FRAME_MAC(b0, b1, b2, b3, b4, b5)                                                          \
	((struct frame_mac){ { (b0), (b1), (b2), (b3), (b4), (b5) } })
#define FRAME_MAC_BCAST FRAME_MAC(0xff, 0xff, 0xff, 0xff, 0xff, 0xff)

enum frame_layer_kind {
	FRAME_L_NONE,
	FRAME_L_ETH,
	FRAME_L_VLAN,
	FRAME_L_ARP,
	FRAME_L_IP4,
	FRAME_L_IP6,
	FRAME_L_IP6_HBH,
	FRAME_L_IP6_DST,
	FRAME_L_IP6_RT,
	FRAME_L_IP6_FRAG,
	FRAME_L_TCP,
	FRAME_L_UDP,
	FRAME_L_ICMP,
	FRAME_L_ICMP6,
	FRAME_L_RAW,
};

struct frame_layer {
	uint8_t kind; /* enum frame_layer_kind */
	uint32_t off;
};

struct frame {
	uint8_t buf[FRAME_BUF_SIZE];
	size_t len;
	/* Builder state: the layers appended, the type field the next one fills. */
	size_t trailer;
	bool err;
	unsigned int nlayers;
	struct frame_layer layer[FRAME_MAX_LAYERS];
	uint8_t link_kind; /* FRAME__LINK_* */
	size_t link_off;
};

#define FRAME__LINK_NONE      0
#define FRAME__LINK_ETHERTYPE 1
#define FRAME__LINK_PROTO4    2
#define FRAME__LINK_PROTO6    3

/* IPv4 or IPv6 header. Fields that do not apply to the family are ignored. */
struct frame_ip {
	struct frame_addr src, dst;
	uint8_t proto;	     /* protocol / next header; 0: filled by the next layer */
	uint8_t ttl;	     /* TTL / hop limit; 0 means 64 (finish, edit, finish for 0) */
	uint8_t tos;	     /* TOS / traffic class */
	uint16_t id;	     /* IPv4 identification */
	bool df, mf;	     /* IPv4 flags */
	uint16_t frag_off;   /* IPv4 fragment offset in bytes (multiple of 8) */
	uint32_t flow;	     /* IPv6 flow label (20 bits) */
	const uint8_t *opts; /* IPv4 options, padded with EOL to 4 bytes, at most 40 */
	size_t opts_len;
};

struct frame_tcp {
	uint16_t sport, dport;
	uint32_t seq, ack;
	uint8_t flags; /* FRAME_TCP_* */
	uint16_t window, urg;
	uint16_t mss;	     /* non-zero: an MSS option first */
	const uint8_t *opts; /* then these option bytes; padded with EOL to 4 bytes */
	size_t opts_len;
};

/* ---- addresses --------------------------------------------------------- */

static inline bool frame_addr_is_v4(const struct frame_addr *a)
{
	static const uint8_t pfx[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	return memcmp(a->a, pfx, sizeof(pfx)) == 0;
}

static inline bool frame_addr_eq(const struct frame_addr *a, const struct frame_addr *b)
{
	return memcmp(a->a, b->a, sizeof(a->a)) == 0;
}

static inline bool frame_mac_eq(const struct frame_mac *a, const struct frame_mac *b)
{
	return memcmp(a->a, b->a, sizeof(a->a)) == 0;
}

/* A literal IPv4 (stored mapped) or IPv6 address; 0, or -1 if it is neither. */
static inline int frame_addr_parse(const char *s, struct frame_addr *out)
{
	memset(out, 0, sizeof(*out));
	if (inet_pton(AF_INET, s, &out->a[12]) == 1) {
		out->a[10] = 0xff;
		out->a[11] = 0xff;
		return 0;
	}
	return inet_pton(AF_INET6, s, out->a) == 1 ? 0 : -1;
}

/* Dotted quad for a mapped address, RFC 5952 text otherwise. Returns buf. */
static inline const char *frame_addr_str(const struct frame_addr *a, char buf[FRAME_ADDRSTRLEN])
{
	if (frame_addr_is_v4(a))
		snprintf(buf, FRAME_ADDRSTRLEN, "%u.%u.%u.%u", a->a[12], a->a[13], a->a[14],
			 a->a[15]);
	else if (!inet_ntop(AF_INET6, a->a, buf, FRAME_ADDRSTRLEN))
		snprintf(buf, FRAME_ADDRSTRLEN, "?");
	return buf;
}

/* "02:00:00:00:00:01" (also '-' separated); 0, or -1. */
static inline int frame_mac_parse(const char *s, struct frame_mac *out)
{
	for (int i = 0; i < 6; i++) {
		unsigned int v = 0;

		for (int j = 0; j < 2; j++, s++) {
			char c = *s;

			if (c >= '0' && c <= '9')
				v = v * 16 + (unsigned int)(c - '0');
			else if (c >= 'a' && c <= 'f')
				v = v * 16 + (unsigned int)(c - 'a' + 10);
			else if (c >= 'A' && c <= 'F')
				v = v * 16 + (unsigned int)(c - 'A' + 10);
			else
				return -1;
		}
		out->a[i] = (uint8_t)v;
		if (i < 5 && *s != ':' && *s != '-')
			return -1;
		if (i < 5)
			s++;
	}
	return *s ? -1 : 0;
}

static inline const char *frame_mac_str(const struct frame_mac *m, char buf[FRAME_MACSTRLEN])
{
	snprintf(buf, FRAME_MACSTRLEN, "%02x:%02x:%02x:%02x:%02x:%02x", m->a[0], m->a[1], m->a[2],
		 m->a[3], m->a[4], m->a[5]);
	return buf;
}

/* The solicited-node multicast address ff02::1:ffXX:XXXX of a. */
static inline struct frame_addr frame_addr_snm(const struct frame_addr *a)
{
	struct frame_addr m = FRAME_V6(0xff02, 0, 0, 0, 0, 1, 0xff00, 0);

	memcpy(&m.a[13], &a->a[13], 3);
	return m;
}

/* The Ethernet multicast MAC 33:33:XX:XX:XX:XX of an IPv6 multicast address. */
static inline struct frame_mac frame_mac_mcast6(const struct frame_addr *a)
{
	return FRAME_MAC(0x33, 0x33, a->a[12], a->a[13], a->a[14], a->a[15]);
}

/* ---- byte access -------------------------------------------------------- */

static inline uint16_t frame_get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t frame_get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline void frame_put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void frame_put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* ---- checksums ---------------------------------------------------------- */

/* One's-complement sum of n bytes; only the last piece of a sum may be odd. */
static inline uint64_t frame_csum_add(uint64_t sum, const uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i + 1 < n; i += 2)
		sum += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (i < n)
		sum += (uint32_t)p[i] << 8;
	return sum;
}

static inline uint16_t frame_csum_fold(uint64_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/* The TCP/UDP/ICMPv6 pseudo-header sum of IPv4 (ip_ver 4, mapped addresses) or IPv6. */
static inline uint64_t frame_csum_pseudo(int ip_ver, const struct frame_addr *src,
					 const struct frame_addr *dst, uint8_t proto, size_t len)
{
	uint64_t sum = 0;

	if (ip_ver == 4) {
		sum = frame_csum_add(sum, &src->a[12], 4);
		sum = frame_csum_add(sum, &dst->a[12], 4);
	} else {
		sum = frame_csum_add(sum, src->a, 16);
		sum = frame_csum_add(sum, dst->a, 16);
		sum += (uint32_t)(len >> 16);
	}
	sum += proto;
	sum += (uint32_t)(len & 0xffff);
	return sum;
}

/* ---- builder ------------------------------------------------------------ */

static inline void frame_init(struct frame *f)
{
	memset(f, 0, sizeof(*f));
}

/* Append n bytes (zeros if p is NULL) as one layer; the new bytes, or NULL. */
static inline uint8_t *frame__push(struct frame *f, uint8_t kind, const void *p, size_t n)
{
	uint8_t *d;

	if (f->err || f->trailer || n > sizeof(f->buf) - f->len || f->nlayers >= FRAME_MAX_LAYERS) {
		f->err = true;
		return NULL;
	}
	d = f->buf + f->len;
	if (p)
		memcpy(d, p, n);
	else
		memset(d, 0, n);
	f->layer[f->nlayers].kind = kind;
	f->layer[f->nlayers].off = (uint32_t)f->len;
	f->nlayers++;
	f->len += n;
	return d;
}

/* Fill the pending type field for a layer of this ethertype / IP protocol. */
static inline void frame__link(struct frame *f, uint16_t ethertype, int proto)
{
	if (f->link_kind == FRAME__LINK_ETHERTYPE && ethertype)
		frame_put16(f->buf + f->link_off, ethertype);
	else if ((f->link_kind == FRAME__LINK_PROTO4 || f->link_kind == FRAME__LINK_PROTO6) &&
		 proto >= 0)
		f->buf[f->link_off] = (uint8_t)proto;
	else
		return;
	f->link_kind = FRAME__LINK_NONE;
}

static inline void frame__pend(struct frame *f, uint8_t kind, size_t off, bool given)
{
	f->link_kind = given ? FRAME__LINK_NONE : kind;
	f->link_off = off;
}

/* Set a pending type field by hand (before raw payload): 0, or -1 if none. */
static inline int frame_type(struct frame *f, uint16_t value)
{
	if (f->link_kind == FRAME__LINK_ETHERTYPE)
		frame_put16(f->buf + f->link_off, value);
	else if (f->link_kind != FRAME__LINK_NONE)
		f->buf[f->link_off] = (uint8_t)value;
	else
		return -1;
	f->link_kind = FRAME__LINK_NONE;
	return 0;
}

/* Ethernet II header; ethertype 0: filled by the next layer. */
static inline int frame_eth(struct frame *f, struct frame_mac dst, struct frame_mac src,
			    uint16_t ethertype)
{
	uint8_t *h = frame__push(f, FRAME_L_ETH, NULL, 14);

	if (!h)
		return -1;
	memcpy(h, dst.a, 6);
	memcpy(h + 6, src.a, 6);
	frame_put16(h + 12, ethertype);
	frame__pend(f, FRAME__LINK_ETHERTYPE, f->len - 2, ethertype != 0);
	return 0;
}

/*
 * A VLAN tag: tpid FRAME_ETH_8021Q or FRAME_ETH_8021AD (written into the
 * pending ethertype), tci = PCP << 13 | DEI << 12 | VID. The ethertype after
 * it is filled by the next layer.
 */
static inline int frame_vlan(struct frame *f, uint16_t tpid, uint16_t tci)
{
	uint8_t *h = frame__push(f, FRAME_L_VLAN, NULL, 4);

	if (!h)
		return -1;
	frame__link(f, tpid, -1);
	frame_put16(h, tci);
	frame__pend(f, FRAME__LINK_ETHERTYPE, f->len - 2, false);
	return 0;
}

/* ARP for Ethernet/IPv4; spa and tpa are mapped IPv4 addresses. */
static inline int frame_arp(struct frame *f, uint16_t op, struct frame_mac sha,
			    struct frame_addr spa, struct frame_mac tha, struct frame_addr tpa)
{
	uint8_t *h = frame__push(f, FRAME_L_ARP, NULL, 28);

	if (!h)
		return -1;
	frame__link(f, FRAME_ETH_ARP, -1);
	frame_put16(h, 1);
	frame_put16(h + 2, FRAME_ETH_IP4);
	h[4] = 6;
	h[5] = 4;
	frame_put16(h + 6, op);
	memcpy(h + 8, sha.a, 6);
	memcpy(h + 14, &spa.a[12], 4);
	memcpy(h + 18, tha.a, 6);
	memcpy(h + 24, &tpa.a[12], 4);
	return 0;
}

static inline int frame_ip4(struct frame *f, const struct frame_ip *ip)
{
	size_t olen = (ip->opts_len + 3) & ~(size_t)3;
	uint16_t frag;
	uint8_t *h;

	if (ip->opts_len > 40) {
		f->err = true;
		return -1;
	}
	h = frame__push(f, FRAME_L_IP4, NULL, 20 + olen);
	if (!h)
		return -1;
	frame__link(f, FRAME_ETH_IP4, 4); /* 4: IPv4 in IP */
	h[0] = (uint8_t)(0x40 | (20 + olen) / 4);
	h[1] = ip->tos;
	frame_put16(h + 4, ip->id);
	frag = (uint16_t)((ip->frag_off >> 3) & 0x1fff);
	if (ip->df)
		frag |= 0x4000;
	if (ip->mf)
		frag |= 0x2000;
	frame_put16(h + 6, frag);
	h[8] = ip->ttl ? ip->ttl : 64;
	h[9] = ip->proto;
	memcpy(h + 12, &ip->src.a[12], 4);
	memcpy(h + 16, &ip->dst.a[12], 4);
	if (ip->opts_len)
		memcpy(h + 20, ip->opts, ip->opts_len);
	frame__pend(f, FRAME__LINK_PROTO4, (size_t)(h + 9 - f->buf), ip->proto != 0);
	return 0;
}

static inline int frame_ip6(struct frame *f, const struct frame_ip *ip)
{
	uint8_t *h = frame__push(f, FRAME_L_IP6, NULL, 40);

	if (!h)
		return -1;
	frame__link(f, FRAME_ETH_IP6, 41); /* 41: IPv6 in IP */
	frame_put32(h, 6u << 28 | (uint32_t)ip->tos << 20 | (ip->flow & 0xfffff));
	h[6] = ip->proto;
	h[7] = ip->ttl ? ip->ttl : 64;
	memcpy(h + 8, ip->src.a, 16);
	memcpy(h + 24, ip->dst.a, 16);
	frame__pend(f, FRAME__LINK_PROTO6, (size_t)(h + 6 - f->buf), ip->proto != 0);
	return 0;
}

/* IPv4 if both addresses are mapped IPv4, else IPv6. */
static inline int frame_ip(struct frame *f, const struct frame_ip *ip)
{
	if (frame_addr_is_v4(&ip->src) && frame_addr_is_v4(&ip->dst))
		return frame_ip4(f, ip);
	return frame_ip6(f, ip);
}

/* Hop-by-hop or destination options: opts are TLVs, padded with Pad1/PadN. */
static inline int frame__ip6_opts(struct frame *f, uint8_t kind, uint8_t proto, const uint8_t *opts,
				  size_t n)
{
	size_t total = (2 + n + 7) & ~(size_t)7, pad = total - 2 - n;
	uint8_t *h;

	if (total > 2048) { /* the length byte counts 8-byte units */
		f->err = true;
		return -1;
	}
	h = frame__push(f, kind, NULL, total);
	if (!h)
		return -1;
	frame__link(f, 0, proto);
	h[1] = (uint8_t)(total / 8 - 1);
	if (n)
		memcpy(h + 2, opts, n);
	if (pad == 1) {
		h[2 + n] = 0; /* Pad1 */
	} else if (pad > 1) {
		h[2 + n] = 1; /* PadN, zeros follow */
		h[3 + n] = (uint8_t)(pad - 2);
	}
	frame__pend(f, FRAME__LINK_PROTO6, (size_t)(h - f->buf), false);
	return 0;
}

static inline int frame_ip6_hbh(struct frame *f, const uint8_t *opts, size_t n)
{
	return frame__ip6_opts(f, FRAME_L_IP6_HBH, FRAME_IPPROTO_HOPOPTS, opts, n);
}

static inline int frame_ip6_dstopts(struct frame *f, const uint8_t *opts, size_t n)
{
	return frame__ip6_opts(f, FRAME_L_IP6_DST, FRAME_IPPROTO_DSTOPTS, opts, n);
}

/*
 * Routing header of type (0, 2: 4 reserved bytes then addresses; 4: segment
 * routing, last entry = n - 1, the list in reverse order so addrs[0] is the
 * final destination) with n addresses.
 */
static inline int frame_ip6_routing(struct frame *f, uint8_t type, uint8_t segments_left,
				    const struct frame_addr *addrs, size_t n)
{
	uint8_t *h;

	if (n > 127 || (n && !addrs)) {
		f->err = true;
		return -1;
	}
	h = frame__push(f, FRAME_L_IP6_RT, NULL, 8 + 16 * n);
	if (!h)
		return -1;
	frame__link(f, 0, FRAME_IPPROTO_ROUTING);
	h[1] = (uint8_t)(2 * n);
	h[2] = type;
	h[3] = segments_left;
	if (type == 4 && n)
		h[4] = (uint8_t)(n - 1);
	for (size_t i = 0; i < n; i++)
		memcpy(h + 8 + 16 * i, addrs[i].a, 16);
	frame__pend(f, FRAME__LINK_PROTO6, (size_t)(h - f->buf), false);
	return 0;
}

/* Fragment header: offset in bytes (multiple of 8), the M flag, the id. */
static inline int frame_ip6_frag(struct frame *f, uint16_t offset, bool more, uint32_t id)
{
	uint8_t *h = frame__push(f, FRAME_L_IP6_FRAG, NULL, 8);

	if (!h)
		return -1;
	frame__link(f, 0, FRAME_IPPROTO_FRAGMENT);
	frame_put16(h + 2, (uint16_t)((offset & 0xfff8) | (more ? 1 : 0)));
	frame_put32(h + 4, id);
	frame__pend(f, FRAME__LINK_PROTO6, (size_t)(h - f->buf), false);
	return 0;
}

static inline int frame_tcp(struct frame *f, const struct frame_tcp *t)
{
	size_t olen = ((t->mss ? 4 : 0) + t->opts_len + 3) & ~(size_t)3;
	uint8_t *h;

	if (olen > 40) {
		f->err = true;
		return -1;
	}
	h = frame__push(f, FRAME_L_TCP, NULL, 20 + olen);
	if (!h)
		return -1;
	frame__link(f, 0, FRAME_IPPROTO_TCP);
	frame_put16(h, t->sport);
	frame_put16(h + 2, t->dport);
	frame_put32(h + 4, t->seq);
	frame_put32(h + 8, t->ack);
	h[12] = (uint8_t)((20 + olen) / 4 << 4);
	h[13] = t->flags;
	frame_put16(h + 14, t->window);
	frame_put16(h + 18, t->urg);
	if (t->mss) {
		h[20] = 2;
		h[21] = 4;
		frame_put16(h + 22, t->mss);
	}
	if (t->opts_len)
		memcpy(h + 20 + (t->mss ? 4 : 0), t->opts, t->opts_len);
	return 0;
}

static inline int frame_udp(struct frame *f, uint16_t sport, uint16_t dport)
{
	uint8_t *h = frame__push(f, FRAME_L_UDP, NULL, 8);

	if (!h)
		return -1;
	frame__link(f, 0, FRAME_IPPROTO_UDP);
	frame_put16(h, sport);
	frame_put16(h + 2, dport);
	return 0;
}

/* ICMP header; rest: the second word (echo id/seq, unused, MTU, pointer). */
static inline int frame_icmp(struct frame *f, uint8_t type, uint8_t code, uint32_t rest)
{
	uint8_t *h = frame__push(f, FRAME_L_ICMP, NULL, 8);

	if (!h)
		return -1;
	frame__link(f, 0, FRAME_IPPROTO_ICMP);
	h[0] = type;
	h[1] = code;
	frame_put32(h + 4, rest);
	return 0;
}

static inline int frame_icmp_echo(struct frame *f, bool reply, uint16_t id, uint16_t seq)
{
	return frame_icmp(f, reply ? FRAME_ICMP_ECHO_REPLY : FRAME_ICMP_ECHO, 0,
			  (uint32_t)id << 16 | seq);
}

static inline int frame_icmp6(struct frame *f, uint8_t type, uint8_t code, uint32_t rest)
{
	uint8_t *h = frame__push(f, FRAME_L_ICMP6, NULL, 8);

	if (!h)
		return -1;
	frame__link(f, 0, FRAME_IPPROTO_ICMPV6);
	h[0] = type;
	h[1] = code;
	frame_put32(h + 4, rest);
	return 0;
}

static inline int frame_icmp6_echo(struct frame *f, bool reply, uint16_t id, uint16_t seq)
{
	return frame_icmp6(f, reply ? FRAME_ICMP6_ECHO_REPLY : FRAME_ICMP6_ECHO, 0,
			   (uint32_t)id << 16 | seq);
}

/* A link-layer address option: type 1 (source) or 2 (target). */
static inline int frame__nd_lladdr(struct frame *f, uint8_t type, const struct frame_mac *mac)
{
	uint8_t opt[8] = { type, 1 };

	if (!mac)
		return 0;
	memcpy(opt + 2, mac->a, 6);
	return frame__push(f, FRAME_L_RAW, opt, sizeof(opt)) ? 0 : -1;
}

/*
 * Neighbour discovery. The IPv6 header must have hop limit 255 (ttl = 255);
 * an NS for address resolution goes to frame_addr_snm(target), Ethernet
 * frame_mac_mcast6() of that. slla / tlla NULL: no link-layer address option.
 */
static inline int frame_icmp6_ns(struct frame *f, struct frame_addr target,
				 const struct frame_mac *slla)
{
	if (frame_icmp6(f, FRAME_ICMP6_NS, 0, 0) ||
	    !frame__push(f, FRAME_L_RAW, target.a, sizeof(target.a)))
		return -1;
	return frame__nd_lladdr(f, 1, slla);
}

/* flags: FRAME_NA_ROUTER | FRAME_NA_SOLICITED | FRAME_NA_OVERRIDE */
static inline int frame_icmp6_na(struct frame *f, struct frame_addr target, uint32_t flags,
				 const struct frame_mac *tlla)
{
	if (frame_icmp6(f, FRAME_ICMP6_NA, 0, flags) ||
	    !frame__push(f, FRAME_L_RAW, target.a, sizeof(target.a)))
		return -1;
	return frame__nd_lladdr(f, 2, tlla);
}

static inline int frame_icmp6_rs(struct frame *f, const struct frame_mac *slla)
{
	if (frame_icmp6(f, FRAME_ICMP6_RS, 0, 0))
		return -1;
	return frame__nd_lladdr(f, 1, slla);
}

/* Raw bytes (zeros if p is NULL). */
static inline int frame_payload(struct frame *f, const void *p, size_t n)
{
	return frame__push(f, FRAME_L_RAW, p, n) ? 0 : -1;
}

static inline int frame__hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Raw bytes from hex text; ':', '-', '.' and blanks between bytes are skipped. */
static inline int frame_payload_hex(struct frame *f, const char *hex)
{
	uint8_t tmp[FRAME_BUF_SIZE];
	size_t n = 0;

	while (*hex) {
		int hi, lo;

		if (*hex == ':' || *hex == '-' || *hex == '.' || *hex == ' ' || *hex == '\t' ||
		    *hex == '\n') {
			hex++;
			continue;
		}
		hi = frame__hexval(hex[0]);
		lo = hi < 0 ? -1 : frame__hexval(hex[1]);
		if (lo < 0 || n >= sizeof(tmp)) {
			f->err = true;
			return -1;
		}
		tmp[n++] = (uint8_t)(hi << 4 | lo);
		hex += 2;
	}
	return frame_payload(f, tmp, n);
}

/* n zero bytes after the IP packet (Ethernet padding); the last thing appended. */
static inline int frame_trailer(struct frame *f, size_t n)
{
	if (frame_payload(f, NULL, n))
		return -1;
	f->nlayers--; /* not a layer: lengths stop before it */
	f->trailer = n;
	return 0;
}

/*
 * The final destination named by routing header h with n addresses, for the
 * types whose layout is known (0, 2, 4) and segments left; else dst stays.
 */
static inline void frame__rt_final(const uint8_t *h, size_t n, struct frame_addr *dst)
{
	if (!h[3] || !n || (h[2] != 0 && h[2] != 2 && h[2] != 4))
		return;
	memcpy(dst->a, h + 8 + 16 * (h[2] == 4 ? 0 : n - 1), 16);
}

/* The IPv6 pseudo-header destination for the IP6 layer at index ip. */
static inline struct frame_addr frame__final_dst(const struct frame *f, unsigned int ip,
						 unsigned int upto)
{
	struct frame_addr dst;

	memcpy(dst.a, f->buf + f->layer[ip].off + 24, 16);
	for (unsigned int i = ip + 1; i < upto; i++) {
		const uint8_t *h = f->buf + f->layer[i].off;
		size_t n;

		if (f->layer[i].kind == FRAME_L_IP4 || f->layer[i].kind == FRAME_L_IP6)
			break;
		if (f->layer[i].kind != FRAME_L_IP6_RT)
			continue;
		n = h[1] / 2;
		/* hand-edited lengths: only addresses inside the frame */
		if (n > (f->len - f->layer[i].off - 8) / 16)
			n = (f->len - f->layer[i].off - 8) / 16;
		frame__rt_final(h, n, &dst);
	}
	return dst;
}

/* Fix lengths and checksums (see the top of the file): 0, or -1. */
static inline int frame_finish(struct frame *f)
{
	size_t end = f->len - f->trailer;

	if (f->err)
		return -1;
	if (f->link_kind == FRAME__LINK_PROTO6) {
		f->buf[f->link_off] = FRAME_IPPROTO_NONE;
		f->link_kind = FRAME__LINK_NONE;
	}
	for (unsigned int i = f->nlayers; i-- > 0;) {
		uint8_t kind = f->layer[i].kind;
		size_t off = f->layer[i].off, len = end - off;
		uint8_t *h = f->buf + off;
		struct frame_addr src, dst;
		int ip = -1, csum_at = -1;
		uint8_t proto = 0;
		uint64_t sum = 0;

		switch (kind) {
		case FRAME_L_IP4:
			if (len > 0xffff)
				return -1;
			frame_put16(h + 2, (uint16_t)len);
			frame_put16(h + 10, 0);
			frame_put16(
				h + 10,
				frame_csum_fold(frame_csum_add(
					0, h, (h[0] & 15u) * 4 < len ? (h[0] & 15u) * 4 : len)));
			continue;
		case FRAME_L_IP6:
			if (len - 40 > 0xffff)
				return -1;
			frame_put16(h + 4, (uint16_t)(len - 40));
			continue;
		case FRAME_L_TCP:
			csum_at = 16;
			proto = FRAME_IPPROTO_TCP;
			break;
		case FRAME_L_UDP:
			if (len > 0xffff)
				return -1;
			frame_put16(h + 4, (uint16_t)len);
			csum_at = 6;
			proto = FRAME_IPPROTO_UDP;
			break;
		case FRAME_L_ICMP:
			csum_at = 2;
			break;
		case FRAME_L_ICMP6:
			csum_at = 2;
			proto = FRAME_IPPROTO_ICMPV6;
			break;
		default:
			continue;
		}
		frame_put16(h + csum_at, 0);
		for (unsigned int j = i; j-- > 0;) {
			if (f->layer[j].kind == FRAME_L_IP4 || f->layer[j].kind == FRAME_L_IP6) {
				ip = (int)j;
				break;
			}
		}
		if (kind != FRAME_L_ICMP) {
			if (ip < 0)
				return -1;
			if (f->layer[ip].kind == FRAME_L_IP4) {
				src = FRAME_V4(0, 0, 0, 0);
				dst = src;
				memcpy(&src.a[12], f->buf + f->layer[ip].off + 12, 4);
				memcpy(&dst.a[12], f->buf + f->layer[ip].off + 16, 4);
			} else {
				memcpy(src.a, f->buf + f->layer[ip].off + 8, 16);
				dst = frame__final_dst(f, (unsigned int)ip, i);
			}
			sum = frame_csum_pseudo(f->layer[ip].kind == FRAME_L_IP4 ? 4 : 6, &src,
						&dst, proto, len);
		}
		sum = frame_csum_fold(frame_csum_add(sum, h, len));
		if (kind == FRAME_L_UDP && sum == 0)
			sum = 0xffff;
		frame_put16(h + csum_at, (uint16_t)sum);
	}
	return 0;
}

/* The first IP header and what follows it (for quoting); NULL if none. */
static inline const uint8_t *frame_l3(const struct frame *f, size_t *len)
{
	for (unsigned int i = 0; i < f->nlayers; i++) {
		if (f->layer[i].kind == FRAME_L_IP4 || f->layer[i].kind == FRAME_L_IP6) {
			*len = f->len - f->trailer - f->layer[i].off;
			return f->buf + f->layer[i].off;
		}
	}
	*len = 0;
	return NULL;
}

/*
 * One fragment of whole's first IP datagram: len bytes (clipped) of its
 * fragmentable part from byte off (a multiple of 8), MF = more. IPv4 copies
 * the header with its options and DF; IPv6 puts a fragment header (id6)
 * after the unfragmentable part (hop-by-hop, and destination options and
 * routing up to the last routing header). Lower layers are copied. out is
 * finished; 0, or -1.
 */
static inline int frame_fragment(struct frame *out, const struct frame *whole, size_t off,
				 size_t len, bool more, uint32_t id6)
{
	struct frame w = *whole;
	unsigned int ip, last;
	size_t frag_at, end, avail;

	frame_init(out);
	if (off % 8 || frame_finish(&w))
		return -1;
	for (ip = 0; ip < w.nlayers; ip++)
		if (w.layer[ip].kind == FRAME_L_IP4 || w.layer[ip].kind == FRAME_L_IP6)
			break;
	if (ip == w.nlayers)
		return -1;
	end = w.len - w.trailer;
	last = ip;
	if (w.layer[ip].kind == FRAME_L_IP4) {
		frag_at = w.layer[ip].off + (w.buf[w.layer[ip].off] & 15u) * 4;
	} else {
		for (unsigned int i = ip + 1; i < w.nlayers; i++) {
			uint8_t k = w.layer[i].kind;

			if (k == FRAME_L_IP6_HBH || k == FRAME_L_IP6_RT)
				last = i;
			else if (k != FRAME_L_IP6_DST)
				break;
		}
		frag_at = last + 1 < w.nlayers ? w.layer[last + 1].off : end;
	}
	if (off > end - frag_at)
		return -1;
	avail = end - frag_at - off;
	if (len > avail)
		len = avail;
	memcpy(out->buf, w.buf, frag_at);
	out->len = frag_at;
	memcpy(out->layer, w.layer, sizeof(w.layer[0]) * (last + 1));
	out->nlayers = last + 1;
	if (w.layer[ip].kind == FRAME_L_IP4) {
		uint8_t *h = out->buf + w.layer[ip].off;
		uint16_t fo = frame_get16(h + 6);
		uint16_t noff = (uint16_t)((fo & 0x1fff) + off / 8);

		frame_put16(h + 6,
			    (uint16_t)((fo & 0x4000) | (more ? 0x2000 : 0) | (noff & 0x1fff)));
	} else {
		size_t nh_at = last == ip ? w.layer[ip].off + 6 : w.layer[last].off;
		uint8_t nh = out->buf[nh_at];
		uint8_t *h;

		out->buf[nh_at] = FRAME_IPPROTO_FRAGMENT;
		h = frame__push(out, FRAME_L_IP6_FRAG, NULL, 8);
		if (!h)
			return -1;
		h[0] = nh;
		frame_put16(h + 2, (uint16_t)((off & 0xfff8) | (more ? 1 : 0)));
		frame_put32(h + 4, id6);
	}
	if (frame_payload(out, w.buf + frag_at + off, len))
		return -1;
	return frame_finish(out);
}

/* Lower-case hex of n bytes into out (2n + 1 bytes); false if it does not fit. */
static inline bool frame_hex(const uint8_t *p, size_t n, char *out, size_t outsz)
{
	static const char digits[] = "0123456789abcdef";

	if (outsz < 1 || n > (outsz - 1) / 2)
		return false;
	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[p[i] >> 4];
		out[2 * i + 1] = digits[p[i] & 15];
	}
	out[2 * n] = 0;
	return true;
}

/* ---- parser ------------------------------------------------------------- */

/* The start of a packet quoted in an ICMP/ICMPv6 error. */
struct frame_quoted {
	uint8_t ip_ver; /* 0: no IP header was quoted in full */
	uint8_t proto;	/* upper-layer protocol (after IPv6 extension headers) */
	struct frame_addr src, dst;
	bool has_ports; /* TCP/UDP: the first 4 bytes were quoted */
	uint16_t sport, dport;
	bool has_seq; /* TCP: bytes 4..7 were quoted */
	uint32_t seq;
	bool has_icmp; /* ICMP/ICMPv6: the first 8 bytes were quoted */
	uint8_t icmp_type;
	uint16_t icmp_id, icmp_seq;
};

struct frame_info {
	/* Ethernet; ethertype is the one after the VLAN tags */
	bool has_eth;
	struct frame_mac dst_mac, src_mac;
	unsigned int nvlan; /* tags decoded, outermost first */
	uint16_t vlan_tpid[FRAME_MAX_VLAN], vlan_tci[FRAME_MAX_VLAN];
	uint16_t vlan_id[FRAME_MAX_VLAN]; /* tci & 0xfff */
	uint16_t ethertype;

	/* ARP (Ethernet/IPv4 only); addresses mapped */
	bool has_arp;
	uint16_t arp_op;
	struct frame_mac arp_sha, arp_tha;
	struct frame_addr arp_spa, arp_tpa;

	/* IPv4 / IPv6 */
	uint8_t ip_ver;		     /* 0: no IP header decoded in full */
	size_t l3_off, l3_len;	     /* l3_len: the bytes of the IP packet present */
	bool ip_truncated;	     /* fewer bytes than the IP header says */
	bool ip_csum_ok;	     /* IPv4 header checksum verifies; IPv6: true */
	struct frame_addr src, dst;  /* as in the header (IPv6: not the final destination) */
	struct frame_addr final_dst; /* IPv6: after a routing header with segments_left */
	uint8_t ttl, tos;	     /* TTL / hop limit, TOS / traffic class */
	uint16_t ip_id;		     /* IPv4 */
	uint32_t flow;		     /* IPv6 */
	bool df;		     /* IPv4 */
	bool is_frag;		     /* MF set or offset non-zero (no L4 if offset > 0) */
	bool frag_more;
	uint16_t frag_off;  /* bytes */
	uint32_t frag_id;   /* IPv4 id or IPv6 fragment header id */
	bool has_frag_hdr;  /* IPv6 fragment header, even an atomic one */
	unsigned int n_ext; /* IPv6 extension headers walked, their types */
	uint8_t ext[FRAME_MAX_EXT];
	bool has_rt;
	uint8_t rt_type, rt_segleft;
	uint8_t proto; /* upper-layer protocol */

	/* transport; payload_* is what follows the transport header */
	size_t l4_off, l4_len; /* l4_len: the bytes present, up to the IP end */
	bool has_l4;	       /* the transport header is there in full */
	bool l4_csum_ok;       /* verifies over the whole segment (IPv4 UDP 0: ok) */
	size_t payload_off, payload_len;
	uint16_t sport, dport;
	uint32_t seq, ack;
	uint8_t tcp_flags;
	uint16_t window, urg;
	uint16_t mss;	  /* TCP MSS option, 0 if none */
	uint16_t udp_len; /* the UDP length field */
	uint8_t icmp_type, icmp_code;
	uint32_t icmp_rest;	    /* the second word */
	uint16_t icmp_id, icmp_seq; /* echo request/reply */

	/* ICMPv6 neighbour discovery (NS, NA, RS, RA) */
	bool has_nd;
	struct frame_addr nd_target; /* NS, NA */
	bool has_nd_lladdr;	     /* source/target link-layer address option */
	struct frame_mac nd_lladdr;

	/* ICMP destination unreachable, source quench, redirect, time exceeded,
	 * parameter problem; ICMPv6 types 1-4 */
	bool is_icmp_error;
	struct frame_quoted quoted;
};

/* The IP layer at p[0..n) into fi (ip_* and proto, l4 bounds): 0, or -1. */
static inline int frame__parse_ip(const uint8_t *p, size_t n, struct frame_info *fi)
{
	size_t end, at;
	uint8_t nh;

	if (n < 1)
		return -1;
	if (p[0] >> 4 == 4) {
		size_t ihl = (p[0] & 15u) * 4, tot;
		uint16_t fo;

		if (n < 20 || ihl < 20 || ihl > n)
			return -1;
		tot = frame_get16(p + 2);
		if (tot < ihl)
			return -1;
		fi->ip_ver = 4;
		fi->ip_truncated = tot > n;
		end = tot > n ? n : tot;
		fi->ip_csum_ok = frame_csum_fold(frame_csum_add(0, p, ihl)) == 0;
		fi->tos = p[1];
		fi->ip_id = frame_get16(p + 4);
		fo = frame_get16(p + 6);
		fi->df = fo & 0x4000;
		fi->frag_more = fo & 0x2000;
		fi->frag_off = (uint16_t)((fo & 0x1fff) * 8);
		fi->is_frag = fi->frag_more || fi->frag_off;
		fi->frag_id = fi->ip_id;
		fi->ttl = p[8];
		fi->proto = p[9];
		fi->src = FRAME_V4(p[12], p[13], p[14], p[15]);
		fi->dst = FRAME_V4(p[16], p[17], p[18], p[19]);
		fi->final_dst = fi->dst;
		fi->l3_len = end;
		fi->l4_off = ihl;
		fi->l4_len = end - ihl;
		return 0;
	}
	if (p[0] >> 4 != 6 || n < 40)
		return -1;
	fi->ip_ver = 6;
	fi->ip_csum_ok = true;
	fi->tos = (uint8_t)(frame_get16(p) >> 4);
	fi->flow = frame_get32(p) & 0xfffff;
	fi->ttl = p[7];
	memcpy(fi->src.a, p + 8, 16);
	memcpy(fi->dst.a, p + 24, 16);
	fi->final_dst = fi->dst;
	end = 40 + (size_t)frame_get16(p + 4);
	fi->ip_truncated = end > n;
	if (end > n)
		end = n;
	fi->l3_len = end;
	nh = p[6];
	at = 40;
	while (nh == FRAME_IPPROTO_HOPOPTS || nh == FRAME_IPPROTO_ROUTING ||
	       nh == FRAME_IPPROTO_FRAGMENT || nh == FRAME_IPPROTO_DSTOPTS ||
	       nh == FRAME_IPPROTO_AH) {
		size_t hl;

		if (fi->n_ext >= FRAME_MAX_EXT || end - at < 8)
			break;
		if (nh == FRAME_IPPROTO_FRAGMENT)
			hl = 8;
		else if (nh == FRAME_IPPROTO_AH)
			hl = ((size_t)p[at + 1] + 2) * 4;
		else
			hl = ((size_t)p[at + 1] + 1) * 8;
		if (hl > end - at)
			break;
		fi->ext[fi->n_ext++] = nh;
		if (nh == FRAME_IPPROTO_FRAGMENT) {
			uint16_t fo = frame_get16(p + at + 2);

			fi->has_frag_hdr = true;
			fi->frag_off = fo & 0xfff8;
			fi->frag_more = fo & 1;
			fi->frag_id = frame_get32(p + at + 4);
			fi->is_frag = fi->frag_more || fi->frag_off;
		} else if (nh == FRAME_IPPROTO_ROUTING) {
			size_t na = p[at + 1] / 2;

			fi->has_rt = true;
			fi->rt_type = p[at + 2];
			fi->rt_segleft = p[at + 3];
			frame__rt_final(p + at, na, &fi->final_dst);
		}
		nh = p[at];
		at += hl;
		if (fi->has_frag_hdr && fi->frag_off)
			break;
	}
	fi->proto = nh;
	fi->l4_off = at;
	fi->l4_len = end - at;
	return 0;
}

static inline void frame__parse_quoted(const uint8_t *p, size_t n, struct frame_quoted *q)
{
	struct frame_info in;
	const uint8_t *l4;
	size_t l4n;

	memset(&in, 0, sizeof(in));
	memset(q, 0, sizeof(*q));
	if (frame__parse_ip(p, n, &in))
		return;
	q->ip_ver = in.ip_ver;
	q->proto = in.proto;
	q->src = in.src;
	q->dst = in.dst;
	if (in.frag_off)
		return;
	l4 = p + in.l4_off;
	l4n = in.l4_len;
	if ((in.proto == FRAME_IPPROTO_TCP || in.proto == FRAME_IPPROTO_UDP) && l4n >= 4) {
		q->has_ports = true;
		q->sport = frame_get16(l4);
		q->dport = frame_get16(l4 + 2);
		if (in.proto == FRAME_IPPROTO_TCP && l4n >= 8) {
			q->has_seq = true;
			q->seq = frame_get32(l4 + 4);
		}
	} else if ((in.proto == FRAME_IPPROTO_ICMP || in.proto == FRAME_IPPROTO_ICMPV6) &&
		   l4n >= 8) {
		q->has_icmp = true;
		q->icmp_type = l4[0];
		q->icmp_id = frame_get16(l4 + 4);
		q->icmp_seq = frame_get16(l4 + 6);
	}
}

static inline void frame__parse_l4(const uint8_t *l3, struct frame_info *fi)
{
	const uint8_t *h = l3 + fi->l4_off;
	size_t n = fi->l4_len, hl = 0, csum_len = n;
	bool verify = !fi->ip_truncated && !fi->is_frag, pseudo = true;
	uint8_t proto = fi->proto;

	switch (proto) {
	case FRAME_IPPROTO_TCP:
		if (n < 20 || (size_t)(h[12] >> 4) * 4 < 20 || (size_t)(h[12] >> 4) * 4 > n)
			return;
		hl = (size_t)(h[12] >> 4) * 4;
		fi->sport = frame_get16(h);
		fi->dport = frame_get16(h + 2);
		fi->seq = frame_get32(h + 4);
		fi->ack = frame_get32(h + 8);
		fi->tcp_flags = h[13];
		fi->window = frame_get16(h + 14);
		fi->urg = frame_get16(h + 18);
		for (size_t i = 20; i < hl;) {
			if (h[i] == 0)
				break;
			if (h[i] == 1) {
				i++;
				continue;
			}
			if (i + 1 >= hl || h[i + 1] < 2 || h[i + 1] > hl - i)
				break;
			if (h[i] == 2 && h[i + 1] == 4)
				fi->mss = frame_get16(h + i + 2);
			i += h[i + 1];
		}
		break;
	case FRAME_IPPROTO_UDP:
		if (n < 8)
			return;
		hl = 8;
		fi->sport = frame_get16(h);
		fi->dport = frame_get16(h + 2);
		fi->udp_len = frame_get16(h + 4);
		if (fi->udp_len < 8 || fi->udp_len > n)
			verify = false;
		else
			csum_len = fi->udp_len;
		break;
	case FRAME_IPPROTO_ICMP:
	case FRAME_IPPROTO_ICMPV6:
		if (n < 8 || (proto == FRAME_IPPROTO_ICMP) != (fi->ip_ver == 4))
			return;
		hl = 8;
		pseudo = proto == FRAME_IPPROTO_ICMPV6;
		fi->icmp_type = h[0];
		fi->icmp_code = h[1];
		fi->icmp_rest = frame_get32(h + 4);
		break;
	default:
		return;
	}
	fi->has_l4 = true;
	fi->payload_off = fi->l3_off + fi->l4_off + hl;
	fi->payload_len = n - hl;
	if (proto == FRAME_IPPROTO_UDP && csum_len >= 8 && csum_len <= n)
		fi->payload_len = csum_len - 8;
	if (verify) {
		uint64_t sum = 0;

		if (pseudo)
			sum = frame_csum_pseudo(fi->ip_ver, &fi->src, &fi->final_dst, proto,
						csum_len);
		if (proto == FRAME_IPPROTO_UDP && fi->ip_ver == 4 && frame_get16(h + 6) == 0)
			fi->l4_csum_ok = true;
		else
			fi->l4_csum_ok = frame_csum_fold(frame_csum_add(sum, h, csum_len)) == 0;
	}
	if (proto == FRAME_IPPROTO_TCP || proto == FRAME_IPPROTO_UDP)
		return;

	uint8_t t = fi->icmp_type;
	const uint8_t *body = h + 8;
	size_t bn = n - 8;

	if ((proto == FRAME_IPPROTO_ICMP && (t == 0 || t == 8)) ||
	    (proto == FRAME_IPPROTO_ICMPV6 && (t == 128 || t == 129))) {
		fi->icmp_id = (uint16_t)(fi->icmp_rest >> 16);
		fi->icmp_seq = (uint16_t)fi->icmp_rest;
	} else if ((proto == FRAME_IPPROTO_ICMP &&
		    (t == 3 || t == 4 || t == 5 || t == 11 || t == 12)) ||
		   (proto == FRAME_IPPROTO_ICMPV6 && t >= 1 && t <= 4)) {
		fi->is_icmp_error = true;
		frame__parse_quoted(body, bn, &fi->quoted);
	} else if (proto == FRAME_IPPROTO_ICMPV6 && t >= FRAME_ICMP6_RS && t <= FRAME_ICMP6_NA) {
		/* fixed part after the 8-byte header: RS 0, RA 8, NS/NA the target */
		size_t fixed = t == FRAME_ICMP6_RS ? 0 : t == FRAME_ICMP6_RA ? 8 : 16;

		if (bn < fixed)
			return;
		fi->has_nd = true;
		if (fixed == 16)
			memcpy(fi->nd_target.a, body, 16);
		fi->payload_off += fixed;
		fi->payload_len -= fixed;
		for (size_t i = fixed; bn - i >= 2;) {
			size_t ol = (size_t)body[i + 1] * 8;

			if (!ol || ol > bn - i)
				break;
			if (ol >= 8 && ((body[i] == 1 && t != FRAME_ICMP6_NA) ||
					(body[i] == 2 && t == FRAME_ICMP6_NA))) {
				fi->has_nd_lladdr = true;
				memcpy(fi->nd_lladdr.a, body + i + 2, 6);
			}
			i += ol;
		}
	}
}

/*
 * Decode p[0..len) (see the top of the file). 0 if at least the Ethernet
 * header was there, -1 otherwise; fi is zeroed first either way.
 */
static inline int frame_parse(const uint8_t *p, size_t len, struct frame_info *fi)
{
	size_t at = 14;
	uint16_t type;

	memset(fi, 0, sizeof(*fi));
	if (!p || len < 14)
		return -1;
	fi->has_eth = true;
	memcpy(fi->dst_mac.a, p, 6);
	memcpy(fi->src_mac.a, p + 6, 6);
	type = frame_get16(p + 12);
	while ((type == FRAME_ETH_8021Q || type == FRAME_ETH_8021AD) &&
	       fi->nvlan < FRAME_MAX_VLAN && len - at >= 4) {
		fi->vlan_tpid[fi->nvlan] = type;
		fi->vlan_tci[fi->nvlan] = frame_get16(p + at);
		fi->vlan_id[fi->nvlan] = fi->vlan_tci[fi->nvlan] & 0xfff;
		fi->nvlan++;
		type = frame_get16(p + at + 2);
		at += 4;
	}
	fi->ethertype = type;
	fi->l3_off = at;
	if (type == FRAME_ETH_ARP) {
		const uint8_t *a = p + at;

		if (len - at < 28 || frame_get16(a) != 1 || frame_get16(a + 2) != FRAME_ETH_IP4 ||
		    a[4] != 6 || a[5] != 4)
			return 0;
		fi->has_arp = true;
		fi->arp_op = frame_get16(a + 6);
		memcpy(fi->arp_sha.a, a + 8, 6);
		fi->arp_spa = FRAME_V4(a[14], a[15], a[16], a[17]);
		memcpy(fi->arp_tha.a, a + 18, 6);
		fi->arp_tpa = FRAME_V4(a[24], a[25], a[26], a[27]);
		return 0;
	}
	if (type != FRAME_ETH_IP4 && type != FRAME_ETH_IP6)
		return 0;
	/* frame__parse_ip writes nothing when it fails */
	if (len - at < 1 || p[at] >> 4 != (type == FRAME_ETH_IP4 ? 4 : 6) ||
	    frame__parse_ip(p + at, len - at, fi))
		return 0;
	if (!fi->frag_off)
		frame__parse_l4(p + at, fi);
	return 0;
}

#endif
