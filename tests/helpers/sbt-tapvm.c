// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Test helper: a fake VMM. Plays a guest on an existing tap device (the one a
 * microVM would use): opens NAME in the current network namespace
 * (IFF_TAP | IFF_NO_PI), answers the host's ARP requests and neighbour
 * solicitations for the guest's addresses while it runs, resolves the
 * gateway, runs one command and prints ONE result line on stdout.
 *
 *   sbt-tapvm --tap NAME --mac MAC [--ip ADDR] [--gw ADDR] [--ip6 ADDR] [--gw6 ADDR]
 *	       [--gw-mac MAC] [--vlan ID] [--src ADDR] [--sport N] [--isn N]
 *	       [--timeout-ms N] [--ignore-noise] COMMAND [ARGS]
 *
 *   syn DST PORT	TCP SYN (MSS option) from a random port with a random ISN:
 *	result=synack ms=MS sport=P dport=P seq=N ack=N flags=0xHH csum=ok|bad src=A dst=A
 *		isn=N syn_sport=P	(then a RST to the host cleans up)
 *	result=rst ms=MS sport=P dport=P seq=N ack=N flags=0xHH csum=ok|bad src=A dst=A
 *		isn=N syn_sport=P	(the fields are the RST's)
 *	result=icmp type=N code=N ms=MS csum=ok|bad quoted_dst=A quoted_dport=P src=A
 *		isn=N syn_sport=P
 *	result=timeout ms=MS stage=reply isn=N syn_sport=P
 *   udp DST PORT [PAYLOAD]	one datagram (default payload "sbt-tapvm"; "dns:NAME":
 *	a DNS query for NAME's A records, the reply then ends in rcode=N an=N):
 *	result=reply ms=MS csum=ok|bad len=N payload=ESCAPED
 *	result=icmp type=N code=N ms=MS csum=ok|bad quoted_dst=A quoted_dport=P src=A
 *	result=timeout ms=MS stage=reply
 *   ping DST	ICMP / ICMPv6 echo request (random id, seq 1):
 *	result=echo-reply ms=MS csum=ok|bad
 *	result=icmp ... (an error quoting the echo; as above)
 *	result=timeout ms=MS stage=reply
 *   frame HEX [HEX...]	writes each frame as is (':', '-', '.' between bytes
 *	allowed), then reads for the whole timeout:
 *	result=frames n=K
 *	frame HEX	(K lines, every frame received except the ARP / neighbour
 *			 solicitations answered; with --ignore-noise also without
 *			 any other ARP, ICMPv6 neighbour discovery and MLD)
 *
 * DST picks the family. The source is --ip / --ip6, or --src (spoofing; the
 * helper then also answers ARP / NS for it). The gateway's MAC comes from
 * --gw-mac or is resolved (ARP for --gw, NS for --gw6, resent every 300 ms);
 * without an answer: "result=timeout ms=MS stage=arp|nd". --vlan tags every
 * frame the helper builds (802.1Q); answers to ARP / NS carry the request's
 * tags. Each phase (resolution, waiting for the reply) waits --timeout-ms
 * (default 3000). MS is the time from sending to the answer (CLOCK_MONOTONIC,
 * one decimal); A is an address (IPv4 dotted, IPv6 RFC 5952); ESCAPED is the
 * payload with bytes outside '!'..'~' and '\' written as \xHH. Frames that do
 * not belong to the request (other flows, router advertisements, MLD ...) are
 * ignored; every frame read is parsed with tests/common/frames.h.
 *
 * Exit: 0 when the command ran (whatever the result), 1 on usage or system
 * errors (message on stderr).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <linux/if_tun.h>
#include <net/if.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "tests/common/frames.h"

#define PROG "sbt-tapvm"

/* Frames up to the largest a tap hands out without a vnet header. */
#define RX_MAX 65536

struct guest {
	int fd;
	struct frame_mac mac;
	bool has_ip4, has_ip6, has_gw4, has_gw6, has_src, has_gw_mac, ignore_noise;
	struct frame_addr ip4, ip6, gw4, gw6, src;
	struct frame_mac gw_mac;
	int vlan; /* -1: untagged */
	int timeout_ms;
	uint8_t rx[RX_MAX];
};

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static uint32_t random32(void)
{
	uint32_t v;

	if (getrandom(&v, sizeof(v), 0) != (ssize_t)sizeof(v))
		v = (uint32_t)now_ms() * 2654435761u;
	return v;
}

static int usage(const char *msg)
{
	if (msg)
		fprintf(stderr, PROG ": %s\n", msg);
	fprintf(stderr,
		"usage: " PROG " --tap NAME --mac MAC [--ip ADDR] [--gw ADDR] [--ip6 ADDR]\n"
		"       [--gw6 ADDR] [--gw-mac MAC] [--vlan ID] [--src ADDR] [--sport N] [--isn "
		"N]\n"
		"       [--timeout-ms N] [--ignore-noise] COMMAND [ARGS]\n"
		"commands: syn DST PORT | udp DST PORT [PAYLOAD] | ping DST | frame HEX "
		"[HEX...]\n");
	return 1;
}

/*
 * Attaching brings the carrier up, but the kernel activates the device's
 * queue asynchronously (linkwatch, up to a second later): until then what it
 * sends to the guest is dropped. Wait until operstate says up (at most 2 s).
 */
static void wait_link_up(const char *name)
{
	char path[64], state[16];

	snprintf(path, sizeof(path), "/sys/class/net/%s/operstate", name);
	for (int i = 0; i < 200; i++) {
		FILE *f = fopen(path, "re");
		bool up = false;

		if (f) {
			up = fgets(state, sizeof(state), f) && strncmp(state, "up", 2) == 0;
			fclose(f);
		}
		if (up)
			return;
		usleep(10000);
	}
	fprintf(stderr, PROG ": tap %s: link not up after 2 s; going on\n", name);
}

static int tap_open(const char *name)
{
	struct ifreq ifr;
	int fd;

	if (strlen(name) >= IFNAMSIZ) {
		fprintf(stderr, PROG ": tap name %s: too long\n", name);
		return -1;
	}
	/* TUNSETIFF would create a missing device; the test's tap must exist */
	if (!if_nametoindex(name)) {
		fprintf(stderr, PROG ": tap %s: %s (create it with ip tuntap add %s mode tap)\n",
			name, strerror(errno), name);
		return -1;
	}
	fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, PROG ": open /dev/net/tun: %s\n", strerror(errno));
		return -1;
	}
	memset(&ifr, 0, sizeof(ifr));
	ifr.ifr_flags = IFF_TAP | IFF_NO_PI;
	memcpy(ifr.ifr_name, name, strlen(name));
	if (ioctl(fd, TUNSETIFF, &ifr) < 0) {
		fprintf(stderr,
			PROG ": attach to tap %s: %s (a tun device, or owned by another user?)\n",
			name, strerror(errno));
		close(fd);
		return -1;
	}
	wait_link_up(name);
	return fd;
}

static int send_frame(struct guest *g, struct frame *f)
{
	ssize_t n;

	if (frame_finish(f)) {
		fprintf(stderr, PROG ": cannot build the frame\n");
		return -1;
	}
	n = write(g->fd, f->buf, f->len);
	if (n != (ssize_t)f->len) {
		fprintf(stderr, PROG ": write to tap: %s\n",
			n < 0 ? strerror(errno) : "short write");
		return -1;
	}
	return 0;
}

/*
 * Read one frame before the deadline: its length, 0 on timeout, -1 on
 * errors. The tap is non-blocking; poll waits.
 */
static ssize_t recv_frame(struct guest *g, double deadline)
{
	for (;;) {
		struct pollfd pfd = { .fd = g->fd, .events = POLLIN };
		double left = deadline - now_ms();
		ssize_t n;
		int r;

		if (left <= 0)
			return 0;
		r = poll(&pfd, 1, (int)left + 1);
		if (r < 0 && errno != EINTR) {
			fprintf(stderr, PROG ": poll tap: %s\n", strerror(errno));
			return -1;
		}
		if (r <= 0)
			continue;
		n = read(g->fd, g->rx, sizeof(g->rx));
		if (n > 0)
			return n;
		if (n < 0 && errno != EAGAIN && errno != EINTR) {
			fprintf(stderr, PROG ": read tap: %s\n", strerror(errno));
			return -1;
		}
	}
}

/* Ethernet header (+ our tag) to dst. */
static void put_l2(const struct guest *g, struct frame *f, struct frame_mac dst)
{
	frame_eth(f, dst, g->mac, 0);
	if (g->vlan >= 0)
		frame_vlan(f, FRAME_ETH_8021Q, (uint16_t)g->vlan);
}

/* Ethernet header to dst with the tags of the frame we answer. */
static void put_l2_reply(const struct guest *g, struct frame *f, struct frame_mac dst,
			 const struct frame_info *req)
{
	frame_eth(f, dst, g->mac, 0);
	for (unsigned int i = 0; i < req->nvlan; i++)
		frame_vlan(f, req->vlan_tpid[i], req->vlan_tci[i]);
}

static bool is_mine(const struct guest *g, const struct frame_addr *a)
{
	return (g->has_ip4 && frame_addr_eq(a, &g->ip4)) ||
	       (g->has_ip6 && frame_addr_eq(a, &g->ip6)) ||
	       (g->has_src && frame_addr_eq(a, &g->src));
}

/*
 * Answer an ARP request or neighbour solicitation for one of our addresses.
 * 1 if fi was one (answered), 0 if not, -1 on errors.
 */
static int answer_neigh(struct guest *g, const struct frame_info *fi)
{
	struct frame f = { 0 };

	if (fi->has_arp && fi->arp_op == FRAME_ARP_REQUEST && is_mine(g, &fi->arp_tpa) &&
	    frame_addr_is_v4(&fi->arp_tpa)) {
		put_l2_reply(g, &f, fi->arp_sha, fi);
		frame_arp(&f, FRAME_ARP_REPLY, g->mac, fi->arp_tpa, fi->arp_sha, fi->arp_spa);
		return send_frame(g, &f) ? -1 : 1;
	}
	if (fi->ip_ver == 6 && fi->has_l4 && fi->l4_csum_ok && fi->has_nd &&
	    fi->icmp_type == FRAME_ICMP6_NS && fi->ttl == 255 && is_mine(g, &fi->nd_target)) {
		static const struct frame_addr unspec;
		struct frame_addr to = fi->src;
		struct frame_mac mac = fi->has_nd_lladdr ? fi->nd_lladdr : fi->src_mac;
		uint32_t flags = FRAME_NA_SOLICITED | FRAME_NA_OVERRIDE;

		if (frame_addr_eq(&to, &unspec)) {
			/* duplicate address detection: all-nodes, not solicited */
			to = FRAME_V6(0xff02, 0, 0, 0, 0, 0, 0, 1);
			mac = frame_mac_mcast6(&to);
			flags = FRAME_NA_OVERRIDE;
		}
		put_l2_reply(g, &f, mac, fi);
		frame_ip6(&f, &(struct frame_ip){ .src = fi->nd_target, .dst = to, .ttl = 255 });
		frame_icmp6_na(&f, fi->nd_target, flags, &g->mac);
		return send_frame(g, &f) ? -1 : 1;
	}
	return 0;
}

/* Neighbour discovery, ARP and MLD: what a link says by itself. */
static bool is_noise(const struct frame_info *fi)
{
	if (fi->ethertype == FRAME_ETH_ARP)
		return true;
	if (fi->ip_ver != 6 || fi->proto != FRAME_IPPROTO_ICMPV6 || !fi->has_l4)
		return false;
	return (fi->icmp_type >= 130 && fi->icmp_type <= 137) || fi->icmp_type == 143;
}

/*
 * Read frames until the deadline, answering ARP / NS for us. 1 with fi
 * filled for a frame that is not such a request, 0 on timeout, -1 on errors.
 */
static int next_frame(struct guest *g, double deadline, struct frame_info *fi, size_t *len)
{
	for (;;) {
		ssize_t n = recv_frame(g, deadline);
		int r;

		if (n <= 0)
			return (int)n;
		if (frame_parse(g->rx, (size_t)n, fi))
			continue;
		r = answer_neigh(g, fi);
		if (r < 0)
			return -1;
		if (r == 0) {
			*len = (size_t)n;
			return 1;
		}
	}
}

static void send_resolve(struct guest *g, bool v6)
{
	struct frame f = { 0 };

	if (!v6) {
		put_l2(g, &f, FRAME_MAC_BCAST);
		frame_arp(&f, FRAME_ARP_REQUEST, g->mac, g->has_src ? g->src : g->ip4,
			  FRAME_MAC(0, 0, 0, 0, 0, 0), g->gw4);
	} else {
		struct frame_addr snm = frame_addr_snm(&g->gw6);

		put_l2(g, &f, frame_mac_mcast6(&snm));
		frame_ip6(&f, &(struct frame_ip){ .src = g->has_src ? g->src : g->ip6,
						  .dst = snm,
						  .ttl = 255 });
		frame_icmp6_ns(&f, g->gw6, &g->mac);
	}
	send_frame(g, &f);
}

/* The gateway's MAC into g->gw_mac: 0, 1 if nobody answered, -1 on errors. */
static int resolve_gw(struct guest *g, bool v6)
{
	const struct frame_addr *gw = v6 ? &g->gw6 : &g->gw4;
	double end = now_ms() + g->timeout_ms, next = 0;

	if (g->has_gw_mac)
		return 0;
	for (;;) {
		struct frame_info fi;
		size_t len;
		int r;

		if (now_ms() >= next) {
			send_resolve(g, v6);
			next = now_ms() + 300;
		}
		r = next_frame(g, next < end ? next : end, &fi, &len);
		if (r < 0)
			return -1;
		if (r == 0) {
			if (now_ms() >= end)
				return 1;
			continue;
		}
		if (!v6 && fi.has_arp && frame_addr_eq(&fi.arp_spa, gw)) {
			g->gw_mac = fi.arp_sha;
			return 0;
		}
		if (v6 && fi.has_nd && fi.icmp_type == FRAME_ICMP6_NA && fi.l4_csum_ok &&
		    frame_addr_eq(&fi.nd_target, gw)) {
			g->gw_mac = fi.has_nd_lladdr ? fi.nd_lladdr : fi.src_mac;
			return 0;
		}
		if (v6 && fi.has_nd && fi.icmp_type == FRAME_ICMP6_NS && fi.l4_csum_ok &&
		    fi.has_nd_lladdr && frame_addr_eq(&fi.src, gw)) {
			g->gw_mac = fi.nd_lladdr;
			return 0;
		}
	}
}

/* The source address for dst's family, or NULL (with a message). */
static const struct frame_addr *pick_src(const struct guest *g, const struct frame_addr *dst)
{
	bool v4 = frame_addr_is_v4(dst);

	if (g->has_src) {
		if (frame_addr_is_v4(&g->src) != v4) {
			fprintf(stderr,
				PROG ": --src and the destination are of different families\n");
			return NULL;
		}
		return &g->src;
	}
	if (v4 && !g->has_ip4) {
		fprintf(stderr, PROG ": an IPv4 destination needs --ip\n");
		return NULL;
	}
	if (!v4 && !g->has_ip6) {
		fprintf(stderr, PROG ": an IPv6 destination needs --ip6\n");
		return NULL;
	}
	return v4 ? &g->ip4 : &g->ip6;
}

/* Source, gateway MAC and the L2 + L3 headers towards dst. 0, 1 (printed), -1. */
static int start_packet(struct guest *g, const struct frame_addr *dst,
			const struct frame_addr **src, struct frame *f)
{
	bool v6 = !frame_addr_is_v4(dst);
	double t0 = now_ms();
	int r;

	*src = pick_src(g, dst);
	if (!*src)
		return -1;
	if (!g->has_gw_mac && !(v6 ? g->has_gw6 : g->has_gw4)) {
		fprintf(stderr, PROG ": an IPv%d destination needs %s or --gw-mac\n", v6 ? 6 : 4,
			v6 ? "--gw6" : "--gw");
		return -1;
	}
	r = resolve_gw(g, v6);
	if (r < 0)
		return -1;
	if (r > 0) {
		printf("result=timeout ms=%.1f stage=%s\n", now_ms() - t0, v6 ? "nd" : "arp");
		return 1;
	}
	put_l2(g, f, g->gw_mac);
	frame_ip(f, &(struct frame_ip){
			    .src = **src, .dst = *dst, .id = (uint16_t)random32(), .df = true });
	return 0;
}

/* An ICMP / ICMPv6 error quoting our packet (proto, src -> dst, ports / echo id). */
static bool quotes_ours(const struct frame_info *fi, const struct frame_addr *src,
			const struct frame_addr *dst, uint8_t proto, uint16_t sport, uint16_t dport)
{
	const struct frame_quoted *q = &fi->quoted;

	if (!fi->is_icmp_error || !q->ip_ver || q->proto != proto || !frame_addr_eq(&q->src, src) ||
	    !frame_addr_eq(&q->dst, dst))
		return false;
	if (proto == FRAME_IPPROTO_TCP || proto == FRAME_IPPROTO_UDP)
		return q->has_ports && q->sport == sport && q->dport == dport;
	return q->has_icmp && q->icmp_id == sport;
}

static void print_icmp(const struct frame_info *fi, double ms)
{
	char a[FRAME_ADDRSTRLEN], b[FRAME_ADDRSTRLEN];

	printf("result=icmp type=%u code=%u ms=%.1f csum=%s quoted_dst=%s quoted_dport=%u src=%s",
	       fi->icmp_type, fi->icmp_code, ms, fi->l4_csum_ok ? "ok" : "bad",
	       frame_addr_str(&fi->quoted.dst, a), fi->quoted.has_ports ? fi->quoted.dport : 0u,
	       frame_addr_str(&fi->src, b));
}

static bool is_from(const struct frame_info *fi, const struct frame_addr *src,
		    const struct frame_addr *dst, uint8_t proto)
{
	return fi->ip_ver && fi->has_l4 && fi->proto == proto && frame_addr_eq(&fi->src, dst) &&
	       frame_addr_eq(&fi->dst, src);
}

static int parse_num(const char *s, unsigned long max, unsigned long *out)
{
	char *end;

	errno = 0;
	*out = strtoul(s, &end, 10);
	if (errno || end == s || *end || *s == '-' || *out > max)
		return -1;
	return 0;
}

static int parse_dst_port(const char *addr, const char *port, struct frame_addr *dst, uint16_t *p)
{
	unsigned long v;

	if (frame_addr_parse(addr, dst)) {
		fprintf(stderr, PROG ": %s: not an IPv4 or IPv6 address\n", addr);
		return -1;
	}
	if (port) {
		if (parse_num(port, 65535, &v)) {
			fprintf(stderr, PROG ": %s: not a port\n", port);
			return -1;
		}
		*p = (uint16_t)v;
	}
	return 0;
}

static uint16_t pick_sport(long fixed)
{
	return fixed >= 0 ? (uint16_t)fixed : (uint16_t)(32768 + random32() % 28232);
}

static int cmd_syn(struct guest *g, int argc, char **argv, long sport_opt, long isn_opt)
{
	const struct frame_addr *src;
	struct frame_addr dst;
	struct frame f = { 0 };
	struct frame_info fi;
	uint16_t port = 0, sport = pick_sport(sport_opt);
	uint32_t isn = isn_opt >= 0 ? (uint32_t)isn_opt : random32();
	double t0, end;
	size_t len;
	int r;

	if (argc != 2)
		return usage("syn takes DST PORT");
	if (parse_dst_port(argv[0], argv[1], &dst, &port))
		return 1;
	r = start_packet(g, &dst, &src, &f);
	if (r)
		return r < 0 ? 1 : 0;
	frame_tcp(&f, &(struct frame_tcp){ .sport = sport,
					   .dport = port,
					   .seq = isn,
					   .flags = FRAME_TCP_SYN,
					   .window = 64240,
					   .mss = frame_addr_is_v4(&dst) ? 1460 : 1440 });
	t0 = now_ms();
	end = t0 + g->timeout_ms;
	if (send_frame(g, &f))
		return 1;
	while ((r = next_frame(g, end, &fi, &len)) > 0) {
		char a[FRAME_ADDRSTRLEN], b[FRAME_ADDRSTRLEN];
		double ms = now_ms() - t0;

		if (is_from(&fi, src, &dst, FRAME_IPPROTO_TCP) && fi.sport == port &&
		    fi.dport == sport &&
		    ((fi.tcp_flags & FRAME_TCP_RST) ||
		     (fi.tcp_flags & (FRAME_TCP_SYN | FRAME_TCP_ACK)) ==
			     (FRAME_TCP_SYN | FRAME_TCP_ACK))) {
			bool rst = fi.tcp_flags & FRAME_TCP_RST;

			printf("result=%s ms=%.1f sport=%u dport=%u seq=%u ack=%u flags=0x%02x "
			       "csum=%s "
			       "src=%s dst=%s isn=%u syn_sport=%u\n",
			       rst ? "rst" : "synack", ms, fi.sport, fi.dport, fi.seq, fi.ack,
			       fi.tcp_flags, fi.l4_csum_ok ? "ok" : "bad",
			       frame_addr_str(&fi.src, a), frame_addr_str(&fi.dst, b), isn, sport);
			if (rst)
				return 0;
			/* no connection left behind on the host */
			frame_init(&f);
			put_l2(g, &f, g->gw_mac);
			frame_ip(&f, &(struct frame_ip){ .src = *src, .dst = dst, .df = true });
			frame_tcp(&f, &(struct frame_tcp){ .sport = sport,
							   .dport = port,
							   .seq = fi.ack,
							   .flags = FRAME_TCP_RST });
			send_frame(g, &f);
			return 0;
		}
		if (quotes_ours(&fi, src, &dst, FRAME_IPPROTO_TCP, sport, port)) {
			print_icmp(&fi, ms);
			printf(" isn=%u syn_sport=%u\n", isn, sport);
			return 0;
		}
	}
	if (r < 0)
		return 1;
	printf("result=timeout ms=%.1f stage=reply isn=%u syn_sport=%u\n", now_ms() - t0, isn,
	       sport);
	return 0;
}

static void print_escaped(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (p[i] > ' ' && p[i] < 0x7f && p[i] != '\\')
			putchar(p[i]);
		else
			printf("\\x%02x", p[i]);
	}
}

/* A DNS query (id 0x5b7a, RD) for NAME's A records into b (cap 300): its length, 0 if too long. */
static size_t dns_query(const char *name, uint8_t *b)
{
	static const uint8_t hdr[12] = { 0x5b, 0x7a, 0x01, 0, 0, 1, 0, 0, 0, 0, 0, 0 };
	size_t o = 12, n = strlen(name);

	if (n == 0 || n > 253)
		return 0;
	memcpy(b, hdr, 12);
	for (const char *p = name; *p;) {
		size_t l = strcspn(p, ".");

		if (l == 0 || l > 63)
			return 0;
		b[o++] = (uint8_t)l;
		memcpy(b + o, p, l);
		o += l;
		p += l + (p[l] == '.');
	}
	b[o++] = 0;
	memcpy(b + o, "\0\1\0\1", 4); /* type A, class IN */
	return o + 4;
}

static int cmd_udp(struct guest *g, int argc, char **argv, long sport_opt)
{
	uint8_t q[300];
	size_t qlen = 0;
	const struct frame_addr *src;
	const char *payload = argc >= 3 ? argv[2] : "sbt-tapvm";
	struct frame_addr dst;
	struct frame f = { 0 };
	struct frame_info fi;
	uint16_t port = 0, sport = pick_sport(sport_opt);
	double t0, end;
	size_t len;
	int r;

	if (argc != 2 && argc != 3)
		return usage("udp takes DST PORT [PAYLOAD]");
	if (parse_dst_port(argv[0], argv[1], &dst, &port))
		return 1;
	r = start_packet(g, &dst, &src, &f);
	if (r)
		return r < 0 ? 1 : 0;
	frame_udp(&f, sport, port);
	if (strncmp(payload, "dns:", 4) == 0 && !(qlen = dns_query(payload + 4, q)))
		return usage("udp: dns:NAME with a valid NAME");
	if (qlen)
		frame_payload(&f, q, qlen);
	else
		frame_payload(&f, payload, strlen(payload));
	t0 = now_ms();
	end = t0 + g->timeout_ms;
	if (send_frame(g, &f))
		return 1;
	while ((r = next_frame(g, end, &fi, &len)) > 0) {
		double ms = now_ms() - t0;

		if (is_from(&fi, src, &dst, FRAME_IPPROTO_UDP) && fi.sport == port &&
		    fi.dport == sport) {
			printf("result=reply ms=%.1f csum=%s len=%zu payload=", ms,
			       fi.l4_csum_ok ? "ok" : "bad", fi.payload_len);
			print_escaped(g->rx + fi.payload_off, fi.payload_len);
			if (qlen && fi.payload_len >= 12)
				printf(" rcode=%u an=%u", g->rx[fi.payload_off + 3] & 0xfu,
				       (unsigned int)(g->rx[fi.payload_off + 6] << 8 |
						      g->rx[fi.payload_off + 7]));
			putchar('\n');
			return 0;
		}
		if (quotes_ours(&fi, src, &dst, FRAME_IPPROTO_UDP, sport, port)) {
			print_icmp(&fi, ms);
			putchar('\n');
			return 0;
		}
	}
	if (r < 0)
		return 1;
	printf("result=timeout ms=%.1f stage=reply\n", now_ms() - t0);
	return 0;
}

static int cmd_ping(struct guest *g, int argc, char **argv)
{
	static const char pattern[] = "sbt-tapvm echo 0123456789abcdef";
	const struct frame_addr *src;
	struct frame_addr dst;
	struct frame f = { 0 };
	struct frame_info fi;
	uint16_t id = (uint16_t)random32();
	double t0, end;
	size_t len;
	bool v6;
	int r;

	if (argc != 1)
		return usage("ping takes DST");
	if (parse_dst_port(argv[0], NULL, &dst, NULL))
		return 1;
	v6 = !frame_addr_is_v4(&dst);
	r = start_packet(g, &dst, &src, &f);
	if (r)
		return r < 0 ? 1 : 0;
	if (v6)
		frame_icmp6_echo(&f, false, id, 1);
	else
		frame_icmp_echo(&f, false, id, 1);
	frame_payload(&f, pattern, sizeof(pattern) - 1);
	t0 = now_ms();
	end = t0 + g->timeout_ms;
	if (send_frame(g, &f))
		return 1;
	while ((r = next_frame(g, end, &fi, &len)) > 0) {
		uint8_t proto = v6 ? FRAME_IPPROTO_ICMPV6 : FRAME_IPPROTO_ICMP;
		double ms = now_ms() - t0;

		if (is_from(&fi, src, &dst, proto) &&
		    fi.icmp_type == (v6 ? FRAME_ICMP6_ECHO_REPLY : FRAME_ICMP_ECHO_REPLY) &&
		    fi.icmp_id == id && fi.icmp_seq == 1) {
			printf("result=echo-reply ms=%.1f csum=%s\n", ms,
			       fi.l4_csum_ok ? "ok" : "bad");
			return 0;
		}
		if (quotes_ours(&fi, src, &dst, proto, id, 0)) {
			print_icmp(&fi, ms);
			putchar('\n');
			return 0;
		}
	}
	if (r < 0)
		return 1;
	printf("result=timeout ms=%.1f stage=reply\n", now_ms() - t0);
	return 0;
}

struct seen {
	char **hex;
	size_t n, cap;
};

static int seen_add(struct seen *s, const uint8_t *p, size_t n)
{
	char *h;

	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 16;
		char **nh = realloc(s->hex, cap * sizeof(*nh));

		if (!nh)
			return -1;
		s->hex = nh;
		s->cap = cap;
	}
	h = malloc(2 * n + 1);
	if (!h || !frame_hex(p, n, h, 2 * n + 1)) {
		free(h);
		return -1;
	}
	s->hex[s->n++] = h;
	return 0;
}

static int cmd_frame(struct guest *g, int argc, char **argv)
{
	struct seen seen = { 0 };
	struct frame_info fi;
	double end;
	size_t len;
	int r, rc = 0;

	if (argc < 1)
		return usage("frame takes HEX [HEX...]");
	for (int i = 0; i < argc; i++) {
		struct frame f = { 0 };
		ssize_t n;

		if (frame_payload_hex(&f, argv[i]) || f.len == 0) {
			fprintf(stderr, PROG ": frame %d: not hex bytes (or longer than %d)\n",
				i + 1, FRAME_BUF_SIZE);
			return 1;
		}
		n = write(g->fd, f.buf, f.len);
		if (n != (ssize_t)f.len) {
			fprintf(stderr, PROG ": write frame %d to tap: %s\n", i + 1,
				n < 0 ? strerror(errno) : "short write");
			return 1;
		}
	}
	end = now_ms() + g->timeout_ms;
	while ((r = next_frame(g, end, &fi, &len)) > 0) {
		if (g->ignore_noise && is_noise(&fi))
			continue;
		if (seen_add(&seen, g->rx, len)) {
			fprintf(stderr, PROG ": out of memory\n");
			rc = 1;
			break;
		}
	}
	if (r < 0)
		rc = 1;
	if (!rc) {
		printf("result=frames n=%zu\n", seen.n);
		for (size_t i = 0; i < seen.n; i++)
			printf("frame %s\n", seen.hex[i]);
	}
	for (size_t i = 0; i < seen.n; i++)
		free(seen.hex[i]);
	free(seen.hex);
	return rc;
}

static int parse_addr_opt(const char *opt, const char *s, bool want_v4, struct frame_addr *a)
{
	if (frame_addr_parse(s, a) || frame_addr_is_v4(a) != want_v4) {
		fprintf(stderr, PROG ": %s %s: not an IPv%d address\n", opt, s, want_v4 ? 4 : 6);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "tap", required_argument, NULL, 't' },
		{ "mac", required_argument, NULL, 'm' },
		{ "ip", required_argument, NULL, '4' },
		{ "gw", required_argument, NULL, 'g' },
		{ "ip6", required_argument, NULL, '6' },
		{ "gw6", required_argument, NULL, 'G' },
		{ "gw-mac", required_argument, NULL, 'M' },
		{ "vlan", required_argument, NULL, 'v' },
		{ "src", required_argument, NULL, 's' },
		{ "sport", required_argument, NULL, 'p' },
		{ "isn", required_argument, NULL, 'i' },
		{ "timeout-ms", required_argument, NULL, 'T' },
		{ "ignore-noise", no_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	static struct guest g; /* the receive buffer is large */
	const char *tap = NULL, *cmd;
	long sport = -1, isn = -1;
	bool has_mac = false;
	unsigned long v;
	int c, rc;

	g.vlan = -1;
	g.timeout_ms = 3000;
	while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		switch (c) {
		case 't':
			tap = optarg;
			break;
		case 'm':
			if (frame_mac_parse(optarg, &g.mac))
				return usage("--mac: not a MAC address (02:00:00:00:00:02)");
			has_mac = true;
			break;
		case '4':
			if (parse_addr_opt("--ip", optarg, true, &g.ip4))
				return 1;
			g.has_ip4 = true;
			break;
		case 'g':
			if (parse_addr_opt("--gw", optarg, true, &g.gw4))
				return 1;
			g.has_gw4 = true;
			break;
		case '6':
			if (parse_addr_opt("--ip6", optarg, false, &g.ip6))
				return 1;
			g.has_ip6 = true;
			break;
		case 'G':
			if (parse_addr_opt("--gw6", optarg, false, &g.gw6))
				return 1;
			g.has_gw6 = true;
			break;
		case 'M':
			if (frame_mac_parse(optarg, &g.gw_mac))
				return usage("--gw-mac: not a MAC address");
			g.has_gw_mac = true;
			break;
		case 'v':
			if (parse_num(optarg, 4095, &v))
				return usage("--vlan: not a VLAN id (0-4095)");
			g.vlan = (int)v;
			break;
		case 's':
			if (frame_addr_parse(optarg, &g.src))
				return usage("--src: not an IPv4 or IPv6 address");
			g.has_src = true;
			break;
		case 'p':
			if (parse_num(optarg, 65535, &v))
				return usage("--sport: not a port");
			sport = (long)v;
			break;
		case 'i':
			if (parse_num(optarg, UINT32_MAX, &v))
				return usage("--isn: not a 32-bit number");
			isn = (long)v;
			break;
		case 'T':
			if (parse_num(optarg, 600000, &v) || v == 0)
				return usage("--timeout-ms: not a number of ms (1-600000)");
			g.timeout_ms = (int)v;
			break;
		case 'n':
			g.ignore_noise = true;
			break;
		case 'h':
			usage(NULL);
			return 0;
		default:
			return usage(NULL);
		}
	}
	if (!tap || !has_mac)
		return usage("--tap and --mac are required");
	if (optind >= argc)
		return usage("no command");
	cmd = argv[optind];
	if (strcmp(cmd, "syn") != 0 && strcmp(cmd, "udp") != 0 && strcmp(cmd, "ping") != 0 &&
	    strcmp(cmd, "frame") != 0)
		return usage("unknown command");
	g.fd = tap_open(tap);
	if (g.fd < 0)
		return 1;
	argc -= optind + 1;
	argv += optind + 1;
	if (strcmp(cmd, "syn") == 0)
		rc = cmd_syn(&g, argc, argv, sport, isn);
	else if (strcmp(cmd, "udp") == 0)
		rc = cmd_udp(&g, argc, argv, sport);
	else if (strcmp(cmd, "ping") == 0)
		rc = cmd_ping(&g, argc, argv);
	else
		rc = cmd_frame(&g, argc, argv);
	fflush(stdout);
	close(g.fd);
	return rc;
}
