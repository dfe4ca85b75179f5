/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The tap's side of the DNS proxy (see bpf/tap.bpf.c, which includes this
 * after its parser): dns_divert() sends a guest's query (any destination,
 * UDP or TCP port 53) to the proxy's socket on the tap's host-side address
 * and remembers what the guest asked; tap_egress, on the tap's egress, gives
 * the proxy's replies that source back.
 */
#ifndef SBT_TAPDNS_BPF_H
#define SBT_TAPDNS_BPF_H

/* The guest's DNS flows diverted to the proxy: what each one asked. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct sbt_tap_dns_key);
	__type(value, struct sbt_tap_dns_orig);
} tap_dns SEC(".maps");

/* Where a checksum sits in its transport header. */
static __always_inline __u32 l4_csum_off(__u8 proto)
{
	return proto == IPPROTO_TCP ? 16 : 6;
}

/*
 * Rewrite one address of the frame: `off` is where it sits, `from` and `to`
 * its old and new value (4 or 16 bytes, `len`). The IPv4 header checksum and
 * the transport checksum (its pseudo-header) follow. 0 or a helper's error.
 */
static __always_inline int rewrite_addr(struct __sk_buff *skb, const struct pkt *p, __u32 off,
					const __u8 *from, const __u8 *to, const __u32 len)
{
	__u32 csum = p->l4off + l4_csum_off(p->proto);
	__u64 z0 = p->proto == IPPROTO_UDP ? BPF_F_MARK_MANGLED_0 : 0;
	__s64 diff = bpf_csum_diff((__be32 *)from, len, (__be32 *)to, len, 0);
	int err;

	if (diff < 0)
		return (int)diff;
	err = bpf_l4_csum_replace(skb, csum, 0, diff, BPF_F_PSEUDO_HDR | z0);
	if (!err && len == 4)
		err = bpf_l3_csum_replace(skb, p->l3off + 10, 0, diff, 0);
	if (!err)
		err = bpf_skb_store_bytes(skb, off, to, len, 0);
	return err;
}

/* The same for a port (network byte order) at `off`. */
static __always_inline int rewrite_port(struct __sk_buff *skb, const struct pkt *p, __u32 off,
					__u16 from, __u16 to)
{
	__u64 z0 = p->proto == IPPROTO_UDP ? BPF_F_MARK_MANGLED_0 : 0;
	int err = bpf_l4_csum_replace(skb, p->l4off + l4_csum_off(p->proto), from, to,
				      sizeof(__u16) | z0);

	return err ? err : bpf_skb_store_bytes(skb, off, &to, sizeof(to), 0);
}

/*
 * A guest's DNS query (any destination) to the tap's proxy: 0 when the
 * frame now goes to the proxy, 1 when the tap has no proxy for its family
 * (the resolver rule judges it), else a reason to deny it.
 */
static __noinline int dns_divert(struct __sk_buff *skb, const struct sbt_tap *t,
				 const struct pkt *p)
{
	bool v6 = p->family == AF_INET6, udp = p->proto == IPPROTO_UDP;
	__u16 port = t->proxy_port[(v6 ? 2 : 0) + (udp ? 0 : 1)];
	__u32 off = p->l3off;

	if (!port || !(t->flags & (v6 ? SBT_TAP_PROXY6 : SBT_TAP_PROXY4)))
		return 1;
	/* untagged and whole: the host's stack takes it as it is */
	if (p->frag != FRAG_NONE || off != ETH_HLEN)
		return SBT_REASON_UNSUPPORTED;
	if (udp || is_syn(p)) {
		struct sbt_tap_dns_key k = { .slot = t->slot, .proto = p->proto };
		struct sbt_tap_dns_orig o;

		k.port = bpf_htons(p->sport);
		__builtin_memcpy(k.addr, p->saddr, 16);
		__builtin_memcpy(o.addr, p->daddr, 16);
		if (bpf_map_update_elem(&tap_dns, &k, &o, BPF_ANY))
			return SBT_REASON_UNSUPPORTED;
	}
	if (v6 ? rewrite_addr(skb, p, off + 24, p->daddr, t->host6, 16)
	       : rewrite_addr(skb, p, off + 16, p->daddr + 12, t->host4, 4))
		return SBT_REASON_MALFORMED;
	if (rewrite_port(skb, p, p->l4off + 2, bpf_htons(53), port))
		return SBT_REASON_MALFORMED;
	return 0;
}

/*
 * The proxy's replies on their way into the guest (tc egress of a tap with
 * a proxy): from the tap's host-side address and a proxy port to a flow
 * dns_divert() remembered, they get the source the guest asked (address and
 * port 53). Everything else passes untouched after a few loads.
 */
SEC("tc")
int tap_egress(struct __sk_buff *skb)
{
	const struct sbt_tap *t = tap_of(skb->ifindex);
	struct sbt_tap_dns_key k = {};
	struct sbt_tap_dns_orig *o;
	struct pkt p = {};
	__u8 h[40] __attribute__((aligned(8))), l4[4] __attribute__((aligned(4)));
	__u16 eth;
	int v6;

	if (!t || !(t->flags & (SBT_TAP_PROXY4 | SBT_TAP_PROXY6)))
		return TC_ACT_OK;
	if (bpf_skb_load_bytes(skb, 12, &eth, 2) < 0)
		return TC_ACT_OK;
	p.l3off = ETH_HLEN;
	if (eth == bpf_htons(ETH_P_IP) && (t->flags & SBT_TAP_PROXY4)) {
		if (bpf_skb_load_bytes(skb, ETH_HLEN, h, 20) < 0 || (h[0] >> 4) != 4 ||
		    *(__u32 *)(h + 12) != *(const __u32 *)t->host4)
			return TC_ACT_OK;
		if ((h[6] & 0x3f) || h[7]) /* a fragment */
			return TC_ACT_OK;
		p.proto = h[9];
		p.l4off = ETH_HLEN + (__u32)(h[0] & 0xf) * 4;
		v4_mapped(p.saddr, *(__u32 *)(h + 12));
		v4_mapped(k.addr, *(__u32 *)(h + 16));
		v6 = 0;
	} else if (eth == bpf_htons(ETH_P_IPV6) && (t->flags & SBT_TAP_PROXY6)) {
		if (bpf_skb_load_bytes(skb, ETH_HLEN, h, 40) < 0 || (h[0] >> 4) != 6)
			return TC_ACT_OK;
		__builtin_memcpy(p.saddr, h + 8, 16);
		if (!addr_eq(p.saddr, t->host6))
			return TC_ACT_OK;
		p.proto = h[6];
		p.l4off = ETH_HLEN + 40;
		__builtin_memcpy(k.addr, h + 24, 16);
		v6 = 1;
	} else {
		return TC_ACT_OK;
	}
	if (p.proto != IPPROTO_UDP && p.proto != IPPROTO_TCP)
		return TC_ACT_OK;
	if (p.l4off > ETH_HLEN + 60 || bpf_skb_load_bytes(skb, p.l4off, l4, 4) < 0)
		return TC_ACT_OK;
	p.sport = *(__u16 *)l4; /* network byte order here */
	if (p.sport != t->proxy_port[v6 * 2 + (p.proto == IPPROTO_UDP ? 0 : 1)])
		return TC_ACT_OK;
	k.slot = t->slot;
	k.proto = p.proto;
	k.port = *(__u16 *)(l4 + 2);
	o = bpf_map_lookup_elem(&tap_dns, &k);
	if (!o)
		return TC_ACT_OK;
	__builtin_memcpy(p.daddr, o->addr, 16);
	if (v6 ? rewrite_addr(skb, &p, ETH_HLEN + 8, p.saddr, p.daddr, 16)
	       : rewrite_addr(skb, &p, ETH_HLEN + 12, p.saddr + 12, p.daddr + 12, 4))
		return TC_ACT_SHOT;
	if (rewrite_port(skb, &p, p.l4off, p.sport, bpf_htons(53)))
		return TC_ACT_SHOT;
	return TC_ACT_OK;
}

#endif
