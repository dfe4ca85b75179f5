// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Egress: policy verdicts and enforcement for sandbox sockets, and the
 * observation of TCP connects and packet sockets.
 *
 * Enforcement (attached to each sandbox cgroup): cgroup/connect4/6 and
 * sendmsg4/6 decide on every destination a socket names; cgroup/sock_create
 * refuses raw IP sockets; cgroup_skb/egress is the backstop for packets the
 * sock_addr hooks never see (ICMP, TCP Fast Open, ...). Every destination is
 * normalized to IPv4-mapped IPv6 before the lookup, so the mapped-address
 * bypass cannot exist. A denial returns 0: the caller gets EPERM at once.
 *
 * Observation (host-wide, keyed like execs): TCP connects through one of the
 * tcp_connect twins (the loader keeps the first that works: fentry, kprobe,
 * tp_btf or tracepoint inet_sock_set_state -> SYN_SENT), and socket(AF_PACKET)
 * through the syscall tracepoint.
 */
#define SBT_POLICY_DEFINE
#include "policy.bpf.h"

#define TCP_SYN_SENT 2

/* The loader's own network namespace: loopback there is the host's. */
const volatile __u64 host_netns_cookie = 0;

/*
 * Task context of a hook: who, and from where, then send. `now` is a
 * monotonic clock for the fold window: the coarse one where the program type
 * may read it (cgroup hooks), the precise one in tracing programs (which may
 * not). A fold key includes the hook, so one key always sees one clock.
 */
static __always_inline void emit_at(struct sbt_egress_record *r, __u64 now)
{
	__u64 id;

	if (folded(r, now))
		return;
	r->cgroup_id = bpf_get_current_cgroup_id();
	id = bpf_get_current_pid_tgid();
	r->tid = (__u32)id;
	r->uid = (__u32)bpf_get_current_uid_gid();
	bpf_get_current_comm(r->comm, sizeof(r->comm));
	send_egress(r);
}

static __always_inline void emit(struct sbt_egress_record *r)
{
	emit_at(r, bpf_ktime_get_coarse_ns());
}

static __always_inline void emit_traced(struct sbt_egress_record *r)
{
	emit_at(r, bpf_ktime_get_ns());
}

/* Fill the fields every egress record has. */
static __always_inline void record_init(struct sbt_egress_record *r, int slot, __u8 hook)
{
	__builtin_memset(r, 0, sizeof(*r));
	r->slot = (__u32)slot;
	r->pid = (__u32)(bpf_get_current_pid_tgid() >> 32);
	r->hook = hook;
}

static __always_inline bool enforcing(const struct sbt_egress_record *r)
{
	return slot_mode(r->slot) >= SBT_EGRESS_ENFORCE; /* PENDING and FAILED deny too */
}

/*
 * A socket of no sandbox: allowed (the hooks are attached to sandbox cgroups),
 * except under the watched parents of an agent with --policy-dir, where it is
 * a child that got no slot (all taken) or not yet one (no cgroup_mkdir hook):
 * denied, fail closed (nothing to report it under: the agent says so).
 */
static __always_inline int no_slot_verdict(void)
{
	return agent_modes && agent_mkdir_mode == SBT_EGRESS_PENDING ? 0 : 1;
}

/* An agent slot without an applied policy (PENDING, FAILED): true and the reason set. */
static __always_inline bool unapplied(struct sbt_egress_record *r, __u32 mode)
{
	if (mode < SBT_EGRESS_PENDING)
		return false;
	r->reason =
		mode == SBT_EGRESS_PENDING ? SBT_REASON_POLICY_PENDING : SBT_REASON_POLICY_ERROR;
	return true;
}

/* A refusal: EgressDenied and 0 (the call fails) when enforcing, else EgressObserved would_deny and 1. */
static __always_inline int deny(struct sbt_egress_record *r)
{
	if (enforcing(r) ||
	    (r->reason == SBT_REASON_FLOOR && egress_learn[r->slot & (SBT_MAX_SANDBOXES - 1)])) {
		r->verdict = SBT_VERDICT_DENIED;
		emit(r);
		return 0;
	}
	r->verdict = SBT_VERDICT_OBSERVED;
	r->would_deny = 1;
	emit(r);
	return 1;
}

/* Verdict, event and return value of a policy hook (1 lets the call through, 0 denies). */
static __always_inline int decide(struct sbt_egress_record *r, bool own_netns)
{
	struct verdict v;

	if (unapplied(r, slot_mode(r->slot)))
		return deny(r);
	policy_check(r->slot, r->daddr, r->dport, r->proto, own_netns, &v);
	r->rule_id = v.rule_id;
	r->floor_idx = v.floor_idx;
	r->reason = v.reason;
	if (!v.allowed)
		return deny(r);
	r->verdict = enforcing(r) ? SBT_VERDICT_ALLOWED : SBT_VERDICT_OBSERVED;
	emit(r);
	return 1;
}

static __always_inline bool own_netns_sock(struct bpf_sock_addr *ctx)
{
	return bpf_get_netns_cookie(ctx) != host_netns_cookie;
}

/* What a redirected socket asked for, by socket cookie: recvmsg restores it. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, struct sbt_dns_orig);
} dns_orig SEC(".maps");

/*
 * DNS to any destination goes to sbtrace's proxy in the socket's network
 * namespace (enforce mode; the loader sets the ports). 1 when `ctx` was
 * rewritten (the proxy decides, the call goes on), -1 when the sandbox has
 * proxies but none in this namespace yet (denied: fail closed; the loader
 * is told, through dns_wait, to open one), 0 when DNS is judged like the rest.
 */
static __always_inline int dns_redirect(struct bpf_sock_addr *ctx, struct sbt_egress_record *r,
					bool v6)
{
	struct sbt_dns_proxy_key pk = { .slot = r->slot };
	struct sbt_dns_orig orig = {};
	struct sbt_dns_proxy *px;
	__u16 port;
	__u64 cookie;
	int k;

	if (r->dport != 53 || !(enforcing(r) || egress_learn[r->slot & (SBT_MAX_SANDBOXES - 1)]))
		return 0;
	if (r->proto == IPPROTO_UDP)
		k = v6 ? SBT_DNS_UDP6 : SBT_DNS_UDP4;
	else if (r->proto == IPPROTO_TCP)
		k = v6 ? SBT_DNS_TCP6 : SBT_DNS_TCP4;
	else
		return 0;
	pk.netns_cookie = bpf_get_netns_cookie(ctx);
	px = bpf_map_lookup_elem(&dns_proxy, &pk);
	if (!px) {
		struct sbt_dns_wait w = { .netns_cookie = pk.netns_cookie, .slot = r->slot };
		__u32 tgid = r->pid;

		if (!dns_want[r->slot & (SBT_MAX_SANDBOXES - 1)])
			return 0;
		/* (an entry of a stopped process stays as it is) */
		bpf_map_update_elem(&dns_wait, &tgid, &w, BPF_NOEXIST);
		r->reason = SBT_REASON_DNS_NO_PROXY;
		return -1;
	}
	port = px->port[k & 3];
	if (!port)
		return 0;
	/* A v4-mapped destination on a dual-stack socket goes to the IPv4 proxy. */
	if (v6 && r->daddr[10] == 0xff && r->daddr[11] == 0xff) {
		bool zero = true;

		for (int i = 0; i < 10; i++)
			zero = zero && r->daddr[i] == 0;
		if (zero) {
			port = px->port[r->proto == IPPROTO_UDP ? SBT_DNS_UDP4 : SBT_DNS_TCP4];
			if (!port)
				return 0;
			ctx->user_ip6[0] = 0;
			ctx->user_ip6[1] = 0;
			ctx->user_ip6[2] = bpf_htonl(0xffff);
			ctx->user_ip6[3] = bpf_htonl(0x7f000001);
			goto rewritten;
		}
	}
	if (v6) {
		ctx->user_ip6[0] = 0;
		ctx->user_ip6[1] = 0;
		ctx->user_ip6[2] = 0;
		ctx->user_ip6[3] = bpf_htonl(1);
	} else {
		ctx->user_ip4 = bpf_htonl(0x7f000001);
	}
rewritten:
	__builtin_memcpy(orig.addr, r->daddr, 16);
	orig.port = bpf_htons(53);
	orig.proxy_port = port;
	cookie = bpf_get_socket_cookie(ctx);
	bpf_map_update_elem(&dns_orig, &cookie, &orig, BPF_ANY);
	ctx->user_port = port;
	r->reason = SBT_REASON_DNS_PROXY;
	r->verdict = SBT_VERDICT_ALLOWED;
	emit(r);
	return 1;
}

/* connect4/6, sendmsg4/6: the destination the socket call names (v6 is a constant). */
static __always_inline int sock_addr(struct bpf_sock_addr *ctx, __u8 hook, bool v6)
{
	struct sbt_egress_record r;
	int slot = sandbox_of_current(NULL);

	if (slot < 0) /* (or a socket of the sandbox used by an outside task: sbtrace-trace(1)) */
		return no_slot_verdict();
	if (slot_mode((__u32)slot) == SBT_EGRESS_OBSERVE)
		return 1; /* the agent: a sandbox without a policy under a watched parent */
	record_init(&r, slot, hook);
	r.family = v6 ? AF_INET6 : AF_INET;
	r.sock_type = (__u8)ctx->type;
	r.proto = (__u8)ctx->protocol;
	r.dport = bpf_ntohs((__u16)ctx->user_port);
	if (v6) {
		/* ctx->user_ip6 is read a word at a time: the verifier allows 4-byte loads */
		__u32 w0 = ctx->user_ip6[0], w1 = ctx->user_ip6[1];
		__u32 w2 = ctx->user_ip6[2], w3 = ctx->user_ip6[3];

		__builtin_memcpy(r.daddr, &w0, 4);
		__builtin_memcpy(r.daddr + 4, &w1, 4);
		__builtin_memcpy(r.daddr + 8, &w2, 4);
		__builtin_memcpy(r.daddr + 12, &w3, 4);
	} else {
		v4_mapped(r.daddr, ctx->user_ip4);
	}
	switch (dns_redirect(ctx, &r, v6)) {
	case 1:
		return 1;
	case -1:
		return deny(&r);
	default:
		return decide(&r, own_netns_sock(ctx));
	}
}

/*
 * A reply from the proxy shows the address the socket asked (glibc checks
 * that the answer comes from the server it asked). Only UDP passes here.
 */
static __always_inline int dns_restore(struct bpf_sock_addr *ctx, bool v6)
{
	struct sbt_dns_orig *orig;
	__u64 cookie;

	if (ctx->user_port == bpf_htons(53))
		return 1;
	cookie = bpf_get_socket_cookie(ctx);
	orig = bpf_map_lookup_elem(&dns_orig, &cookie);
	if (!orig || orig->proxy_port != ctx->user_port)
		return 1;
	if (v6) {
		__u32 w[4];

		__builtin_memcpy(w, orig->addr, 16);
		if (!(ctx->user_ip6[0] == 0 && ctx->user_ip6[1] == 0))
			return 1;
		ctx->user_ip6[0] = w[0];
		ctx->user_ip6[1] = w[1];
		ctx->user_ip6[2] = w[2];
		ctx->user_ip6[3] = w[3];
	} else {
		__u32 a;

		if (ctx->user_ip4 != bpf_htonl(0x7f000001))
			return 1;
		__builtin_memcpy(&a, orig->addr + 12, 4);
		ctx->user_ip4 = a;
	}
	ctx->user_port = orig->port;
	return 1;
}

SEC("cgroup/recvmsg4")
int egress_recvmsg4(struct bpf_sock_addr *ctx)
{
	return dns_restore(ctx, false);
}

SEC("cgroup/recvmsg6")
int egress_recvmsg6(struct bpf_sock_addr *ctx)
{
	return dns_restore(ctx, true);
}

SEC("cgroup/connect4")
int egress_connect4(struct bpf_sock_addr *ctx)
{
	return sock_addr(ctx, SBT_HOOK_CONNECT4, false);
}

SEC("cgroup/connect6")
int egress_connect6(struct bpf_sock_addr *ctx)
{
	return sock_addr(ctx, SBT_HOOK_CONNECT6, true);
}

SEC("cgroup/sendmsg4")
int egress_sendmsg4(struct bpf_sock_addr *ctx)
{
	return sock_addr(ctx, SBT_HOOK_SENDMSG4, false);
}

SEC("cgroup/sendmsg6")
int egress_sendmsg6(struct bpf_sock_addr *ctx)
{
	return sock_addr(ctx, SBT_HOOK_SENDMSG6, true);
}

/* Raw IP sockets can send anything to anyone: refused in enforce mode. */
SEC("cgroup/sock_create")
int egress_sock_create(struct bpf_sock *ctx)
{
	struct sbt_egress_record r;
	int slot;

	if (ctx->type != SOCK_RAW || (ctx->family != AF_INET && ctx->family != AF_INET6))
		return 1;
	slot = sandbox_of_current(NULL);
	if (slot < 0)
		return no_slot_verdict();
	if (slot_mode((__u32)slot) == SBT_EGRESS_OBSERVE)
		return 1;
	record_init(&r, slot, SBT_HOOK_SOCK_CREATE);
	r.family = (__u8)ctx->family;
	r.sock_type = SOCK_RAW;
	r.proto = (__u8)ctx->protocol;
	r.reason = SBT_REASON_RAW_SOCKET;
	unapplied(&r, slot_mode((__u32)slot));
	return deny(&r);
}

/*
 * The backstop: IP packets of sandbox sockets whose destination the sock_addr
 * hooks did not decide on (ICMP, TCP Fast Open, protocols without a hook).
 * For TCP only a bare SYN is judged: segments of accepted connections go
 * back to whoever connected in. Loopback floor entries are not enforced here
 * (the hooks decide those with the socket's network namespace in hand).
 */
SEC("cgroup_skb/egress")
int egress_skb(struct __sk_buff *skb)
{
	struct sbt_egress_record r;
	struct verdict v;
	__u8 mode, proto, family, daddr[16], l4[14];
	__u32 l4off = 0;
	__u16 dport = 0;
	int slot;

	/*
	 * Packets of established flows leave after the headers: most of them.
	 * Direct packet access (no helper call) while the headers are linear.
	 */
	void *data = (void *)(long)skb->data, *end = (void *)(long)skb->data_end;

	if (skb->protocol == bpf_htons(ETH_P_IP)) {
		struct iphdr *ip = data;

		if ((void *)(ip + 1) > end)
			return 1;
		family = AF_INET;
		proto = ip->protocol;
		v4_mapped(daddr, ip->daddr);
		/* a non-first fragment carries no ports: judge the address alone */
		if (!(ip->frag_off & bpf_htons(0x1fff)))
			l4off = ((__u32)ip->ihl * 4) & 0x3c;
	} else if (skb->protocol == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = data;

		if ((void *)(ip6 + 1) > end)
			return 1;
		family = AF_INET6;
		proto = ip6->nexthdr;
		__builtin_memcpy(daddr, &ip6->daddr, 16);
		/* extension headers: ports unknown, the address is judged */
		if (proto == IPPROTO_TCP || proto == IPPROTO_UDP || proto == IPPROTO_ICMPV6)
			l4off = sizeof(*ip6);
	} else {
		return 1;
	}
	if (l4off && data + l4off + sizeof(l4) <= end) {
		__builtin_memcpy(l4, data + l4off, sizeof(l4));
	} else if (!l4off || bpf_skb_load_bytes(skb, l4off, l4, sizeof(l4)) < 0) {
		l4off = 0;
	}
	if (l4off) {
		if (proto == IPPROTO_TCP) {
			__u8 flags = l4[13];

			if (!(flags & 0x02) || (flags & 0x10))
				return 1; /* only a SYN without ACK opens a connection */
			dport = ((__u16)l4[2] << 8) | l4[3];
		} else if (proto == IPPROTO_UDP) {
			dport = ((__u16)l4[2] << 8) | l4[3];
		} else if (proto == IPPROTO_ICMPV6 && l4[0] >= 133 && l4[0] <= 137) {
			return 1; /* neighbour discovery */
		}
	} else if (proto == IPPROTO_TCP) {
		return 1;
	}
	slot = sandbox_of(NULL, skb);
	if (slot < 0)
		return no_slot_verdict();
	record_init(&r, slot, SBT_HOOK_CGROUP_SKB);
	r.family = family;
	r.proto = proto;
	r.dport = dport;
	__builtin_memcpy(r.daddr, daddr, 16);
	mode = slot_mode((__u32)slot);
	if (mode == SBT_EGRESS_OBSERVE)
		return 1;
	if (unapplied(&r, mode))
		return deny(&r);
	/*
	 * In audit mode TCP and UDP packets follow socket calls the sock_addr
	 * hooks already reported (nothing was refused); only the rest is news.
	 */
	if (mode == SBT_EGRESS_AUDIT && (r.proto == IPPROTO_TCP || r.proto == IPPROTO_UDP))
		return 1;
	policy_check(r.slot, r.daddr, r.dport, r.proto, true, &v);
	if (v.allowed)
		return 1; /* allowed packets need no event: their socket call had one */
	r.rule_id = v.rule_id;
	r.floor_idx = v.floor_idx;
	r.reason = v.reason;
	return deny(&r);
}

/* --- observation: TCP connects (observe-only mode) ---------------------- */

static __always_inline void observe_connect(int slot, __u16 family, const __u8 daddr[16],
					    __u16 dport_be)
{
	struct sbt_egress_record r;

	if (slot_mode((__u32)slot) != SBT_EGRESS_OBSERVE)
		return; /* with a policy the sock_addr hooks give the verdict */
	record_init(&r, slot, SBT_HOOK_TCP_CONNECT);
	r.family = (__u8)family;
	r.proto = IPPROTO_TCP;
	r.sock_type = SOCK_STREAM;
	r.dport = bpf_ntohs(dport_be);
	__builtin_memcpy(r.daddr, daddr, 16);
	r.verdict = SBT_VERDICT_OBSERVED;
	r.reason = SBT_REASON_NO_POLICY;
	emit_traced(&r);
}

static __always_inline void observe_sock(int slot, struct sock *sk)
{
	__u16 family = BPF_CORE_READ(sk, __sk_common.skc_family);
	__u16 dport = BPF_CORE_READ(sk, __sk_common.skc_dport);
	__u8 daddr[16];

	if (family == AF_INET) {
		v4_mapped(daddr, BPF_CORE_READ(sk, __sk_common.skc_daddr));
	} else if (family == AF_INET6) {
		BPF_CORE_READ_INTO(&daddr, sk, __sk_common.skc_v6_daddr.in6_u.u6_addr8);
	} else {
		return;
	}
	observe_connect(slot, family, daddr, dport);
}

SEC("fentry/tcp_connect")
int BPF_PROG(connect_fentry, struct sock *sk)
{
	int slot = sandbox_of_current(NULL);

	if (slot >= 0)
		observe_sock(slot, sk);
	return 0;
}

SEC("kprobe/tcp_connect")
int BPF_KPROBE(connect_kprobe, struct sock *sk)
{
	int slot = sandbox_of_current(NULL);

	if (slot >= 0)
		observe_sock(slot, sk);
	return 0;
}

SEC("tp_btf/inet_sock_set_state")
int BPF_PROG(connect_tp_btf, struct sock *sk, int oldstate, int newstate)
{
	int slot;

	if (newstate != TCP_SYN_SENT)
		return 0;
	slot = sandbox_of_current(bpf_get_current_task_btf()->cgroups->dfl_cgrp);
	if (slot >= 0)
		observe_sock(slot, sk);
	return 0;
}

SEC("tracepoint/sock/inet_sock_set_state")
int connect_tracepoint(struct trace_event_raw_inet_sock_set_state *ctx)
{
	__u8 daddr[16];
	int slot;

	if (ctx->newstate != TCP_SYN_SENT || ctx->protocol != IPPROTO_TCP)
		return 0;
	slot = sandbox_of_current(NULL);
	if (slot < 0)
		return 0;
	/* ctx bytes through a probe read: the verifier refuses offsets into ctx */
	if (ctx->family == AF_INET) {
		__u32 a = 0;

		bpf_probe_read_kernel(&a, 4, ctx->daddr);
		v4_mapped(daddr, a);
	} else {
		bpf_probe_read_kernel(daddr, 16, ctx->daddr_v6);
	}
	observe_connect(slot, ctx->family, daddr, bpf_htons(ctx->dport));
	return 0;
}

/* --- observation: packet sockets (no cgroup hook sees them) -------------- */

struct socket_args {
	__u64 pad;
	__s32 syscall_nr;
	__u32 pad2;
	__u64 family;
	__u64 type;
	__u64 protocol;
};

SEC("tracepoint/syscalls/sys_enter_socket")
int packet_socket(struct socket_args *ctx)
{
	struct sbt_egress_record r;
	int slot;

	if (ctx->family != AF_PACKET)
		return 0;
	slot = sandbox_of_current(NULL);
	if (slot < 0)
		return 0;
	record_init(&r, slot, SBT_HOOK_SOCKET_SYSCALL);
	r.family = AF_PACKET;
	r.sock_type = (__u8)ctx->type;
	r.proto = 0;
	r.verdict = SBT_VERDICT_OBSERVED;
	r.reason = SBT_REASON_PACKET_SOCKET;
	r.would_deny = slot_mode((__u32)slot) != SBT_EGRESS_OBSERVE;
	emit_traced(&r);
	return 0;
}
