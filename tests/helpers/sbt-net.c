// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Test helper: both ends of the network test world (tests/integration/netlib.sh).
 *
 * Test-host side (run inside the test's own "host" network namespace):
 *
 *   sbt-net serve --log FILE [--tcp ADDR:PORT]... [--udp ADDR:PORT]...
 *	TCP and UDP listeners (IPv4 a.b.c.d:80, IPv6 [2001:db8::1]:80).
 *	Logs "tcp <src> <dst>:<port>" per accepted connection and
 *	"udp <src> <dst>:<port> <len>" per datagram (IPv6 <dst> in brackets).
 *	TCP: sends "hello\n", shuts down its side, then drains the peer until
 *	EOF (so a close never turns into a RST). UDP: echoes every datagram.
 *	Prints "ready" once every socket listens; runs until SIGTERM/SIGINT.
 *
 *   sbt-net sniff --iface IF --log FILE [--all]
 *	AF_PACKET/SOCK_DGRAM socket bound to IF; logs every IPv4/IPv6 packet
 *	that arrives on IF (with --all, also the ones IF sends, marked "out"):
 *	  "<proto> <src> -> <dst>[:<dport>] [info...]"
 *	proto is tcp/udp/icmp/icmp6/other; tcp info is the flags (SYN,ACK,
 *	RST,FIN,PSH as one comma-joined token) then len=<payload bytes>; udp
 *	info is len=N; icmp/icmp6 info is type=N code=N; other is proto=N.
 *	With a port, an IPv6 <dst> is bracketed: [2001:db8:2::7]:80.
 *	Prints "ready" once bound; runs until SIGTERM/SIGINT.
 *
 * Sandbox side (clients). Each prints ONE line to stdout, "ok <ms>" (exit 0)
 * or "err <ERRNO-NAME> <ms>" (exit 1); exit 2 on usage errors. <ms> is the
 * wall time of the operation (CLOCK_MONOTONIC), bounded by --timeout MS
 * (default 3000): a dropped SYN shows as "err ETIMEDOUT 3000.x".
 *
 *   sbt-net [--timeout MS] tcp ADDR PORT	 connect, read the greeting
 *	(tcp --repeat N: N tries; tcp --ports N: one to each of N ports from PORT)
 *   sbt-net [--timeout MS] tcp-mapped V4 PORT  AF_INET6, IPV6_V6ONLY=0, ::ffff:V4
 *   sbt-net [--timeout MS] udp-sendto ADDR PORT  unconnected sendto, await echo
 *   sbt-net [--timeout MS] udp-connect-sendto A1 P1 A2 P2
 *	connect to A1, send (must succeed), then sendto A2 with an explicit
 *	address on the same socket; reports that second send and its echo (a
 *	second unconnected socket shares the port with SO_REUSEADDR, since a
 *	connected UDP socket never receives A2's echo).
 *   sbt-net [--timeout MS] tfo ADDR PORT	 sendto(MSG_FASTOPEN), read greeting
 *	(stderr says how many bytes rode in the SYN)
 *   sbt-net [--timeout MS] raw ADDR	 SOCK_RAW ICMP echo request + reply
 *   sbt-net [--timeout MS] ping ADDR	 SOCK_DGRAM ICMP ("ping socket") echo
 *   sbt-net packet			 can socket(AF_PACKET, SOCK_RAW, 0) be made
 *   sbt-net [--timeout MS] resolve NAME	 getaddrinfo: "ok <ms> <addr>..." or
 *	"err <EAI_...> <ms>" ("EAI_SYSTEM:<ERRNO>" for EAI_SYSTEM; our own
 *	timeout is "err ETIMEDOUT <ms>")
 *
 * --timeout may also follow the subcommand. ADDR is a literal IPv4 or IPv6
 * address (IPv6 optionally in brackets); never a name.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if_ether.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <netpacket/packet.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define PROG "sbt-net"

static double t_start;
static int timeout_ms = 3000;
static volatile sig_atomic_t stop_flag;

/* ---- small utilities --------------------------------------------------- */

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static const char *errno_name(int err)
{
	static char buf[32];
	const char *s = strerrorname_np(err);

	if (s)
		return s;
	snprintf(buf, sizeof(buf), "E%d", err);
	return buf;
}

static int report_ok(void)
{
	printf("ok %.1f\n", now_ms() - t_start);
	fflush(stdout);
	return 0;
}

static int report_err(int err)
{
	printf("err %s %.1f\n", errno_name(err), now_ms() - t_start);
	fflush(stdout);
	return 1;
}

static int usage(const char *msg)
{
	fprintf(stderr, PROG ": %s\n", msg);
	fprintf(stderr,
		"usage: " PROG " serve --log FILE [--tcp ADDR:PORT]... [--udp ADDR:PORT]...\n"
		"       " PROG " sniff --iface IF --log FILE [--all]\n"
		"       " PROG " [--timeout MS] tcp|tcp-mapped|udp-sendto|tfo ADDR PORT\n"
		"       " PROG " [--timeout MS] udp-connect-sendto ADDR1 PORT1 ADDR2 PORT2\n"
		"       " PROG " [--timeout MS] raw|ping ADDR\n"
		"       " PROG " packet\n"
		"       " PROG " [--timeout MS] resolve NAME\n");
	return 2;
}

/* Milliseconds left until deadline, rounded up, never negative. */
static int remaining(double deadline)
{
	double left = deadline - now_ms();

	if (left <= 0)
		return 0;
	return (int)left + 1;
}

/*
 * Wait until one of fds has events, or the deadline passes.
 * Returns the index of a ready fd, or -ETIMEDOUT / -errno.
 */
static int wait_any(struct pollfd *pfd, int n, double deadline)
{
	for (;;) {
		int left = remaining(deadline);
		int r;

		if (left <= 0)
			return -ETIMEDOUT;
		r = poll(pfd, (nfds_t)n, left);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		for (int i = 0; i < n; i++)
			if (pfd[i].revents)
				return i;
	}
}

static int wait_fd(int fd, short events, double deadline)
{
	struct pollfd pfd = { .fd = fd, .events = events };
	int r = wait_any(&pfd, 1, deadline);

	return r < 0 ? r : 0;
}

static int parse_port(const char *s, int *port)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 0 || v > 65535)
		return -1;
	*port = (int)v;
	return 0;
}

/* Literal IPv4 or IPv6 (optionally bracketed) address + port. */
static int parse_ip(const char *s, int port, struct sockaddr_storage *ss, socklen_t *len)
{
	char buf[INET6_ADDRSTRLEN + 2];
	size_t n = strlen(s);

	memset(ss, 0, sizeof(*ss));
	if (n >= 2 && s[0] == '[' && s[n - 1] == ']') {
		if (n - 2 >= sizeof(buf))
			return -1;
		memcpy(buf, s + 1, n - 2);
		buf[n - 2] = 0;
	} else {
		if (n >= sizeof(buf))
			return -1;
		memcpy(buf, s, n + 1);
	}
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

	if (inet_pton(AF_INET, buf, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons((uint16_t)port);
		*len = sizeof(*sin);
		return 0;
	}
	if (inet_pton(AF_INET6, buf, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons((uint16_t)port);
		*len = sizeof(*sin6);
		return 0;
	}
	return -1;
}

/* "a.b.c.d:p" or "[v6]:p" */
static int parse_hostport(const char *s, struct sockaddr_storage *ss, socklen_t *len)
{
	const char *colon = strrchr(s, ':');
	char host[INET6_ADDRSTRLEN + 2];
	int port;

	if (!colon || (size_t)(colon - s) >= sizeof(host))
		return -1;
	memcpy(host, s, (size_t)(colon - s));
	host[colon - s] = 0;
	if (parse_port(colon + 1, &port))
		return -1;
	if (host[0] != '[' && strchr(host, ':'))
		return -1; /* IPv6 must be bracketed here */
	return parse_ip(host, port, ss, len);
}

/* Address only (no port, no brackets). */
static void fmt_addr(const struct sockaddr_storage *ss, char *out, size_t outlen)
{
	const void *a = ss->ss_family == AF_INET6
				? (const void *)&((const struct sockaddr_in6 *)ss)->sin6_addr
				: (const void *)&((const struct sockaddr_in *)ss)->sin_addr;

	if (!inet_ntop(ss->ss_family, a, out, (socklen_t)outlen))
		snprintf(out, outlen, "?");
}

static int ss_port(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
	return ntohs(((const struct sockaddr_in *)ss)->sin_port);
}

/* "<addr>:<port>", IPv6 bracketed. */
static void fmt_addrport(const struct sockaddr_storage *ss, char *out, size_t outlen)
{
	char a[INET6_ADDRSTRLEN];

	fmt_addr(ss, a, sizeof(a));
	if (ss->ss_family == AF_INET6)
		snprintf(out, outlen, "[%s]:%d", a, ss_port(ss));
	else
		snprintf(out, outlen, "%s:%d", a, ss_port(ss));
}

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

static void setup_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

static FILE *open_log(const char *path)
{
	FILE *f = fopen(path, "a");

	if (!f)
		fprintf(stderr, PROG ": open %s: %s\n", path, strerror(errno));
	return f;
}

/* ---- serve ------------------------------------------------------------- */

#define MAX_LISTEN     64
#define MAX_CONN       256
#define CONN_LINGER_MS 5000

struct listener {
	int fd;
	int tcp;
	struct sockaddr_storage addr;
	char name[INET6_ADDRSTRLEN + 8];
};

struct conn {
	int fd;
	double deadline;
};

static int open_listener(struct listener *l, const char *spec, int tcp)
{
	socklen_t len;
	int one = 1, qlen = 16;

	if (parse_hostport(spec, &l->addr, &len)) {
		fprintf(stderr, PROG ": bad address %s\n", spec);
		return -1;
	}
	l->tcp = tcp;
	fmt_addrport(&l->addr, l->name, sizeof(l->name));
	l->fd = socket(l->addr.ss_family,
		       (tcp ? SOCK_STREAM : SOCK_DGRAM) | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (l->fd < 0)
		goto fail;
	setsockopt(l->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (l->addr.ss_family == AF_INET6)
		setsockopt(l->fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(l->fd, (struct sockaddr *)&l->addr, len) < 0)
		goto fail;
	if (tcp) {
		/* Accept data in SYN when the netns allows it (test's choice). */
		setsockopt(l->fd, IPPROTO_TCP, TCP_FASTOPEN, &qlen, sizeof(qlen));
		if (listen(l->fd, 128) < 0)
			goto fail;
	}
	return 0;
fail:
	fprintf(stderr, PROG ": %s %s: %s\n", tcp ? "tcp" : "udp", spec, strerror(errno));
	return -1;
}

static void serve_accept(struct listener *l, FILE *log, struct conn *conns, int *nconn)
{
	static const char hello[] = "hello\n";

	for (;;) {
		struct sockaddr_storage peer = { 0 };
		socklen_t plen = sizeof(peer);
		char src[INET6_ADDRSTRLEN];
		int fd = accept4(l->fd, (struct sockaddr *)&peer, &plen,
				 SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0)
			return; /* EAGAIN or a connection that died meanwhile */
		fmt_addr(&peer, src, sizeof(src));
		fprintf(log, "tcp %s %s\n", src, l->name);
		fflush(log);
		if (write(fd, hello, sizeof(hello) - 1) < 0) {
			/* peer already gone: nothing to do */
		}
		shutdown(fd, SHUT_WR);
		if (*nconn >= MAX_CONN) {
			close(fd);
			continue;
		}
		conns[*nconn].fd = fd;
		conns[*nconn].deadline = now_ms() + CONN_LINGER_MS;
		(*nconn)++;
	}
}

static void serve_udp(struct listener *l, FILE *log)
{
	char buf[65536];

	for (;;) {
		struct sockaddr_storage peer = { 0 };
		socklen_t plen = sizeof(peer);
		char src[INET6_ADDRSTRLEN];
		ssize_t n = recvfrom(l->fd, buf, sizeof(buf), 0, (struct sockaddr *)&peer, &plen);

		if (n < 0)
			return;
		fmt_addr(&peer, src, sizeof(src));
		fprintf(log, "udp %s %s %zd\n", src, l->name, n);
		fflush(log);
		if (sendto(l->fd, buf, (size_t)n, 0, (struct sockaddr *)&peer, plen) < 0) {
			/* best effort echo */
		}
	}
}

/* Returns 1 when the connection is finished. */
static int serve_drain(struct conn *c)
{
	char buf[4096];

	for (;;) {
		ssize_t n = read(c->fd, buf, sizeof(buf));

		if (n > 0)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return 0;
		return 1;
	}
}

static int cmd_serve(int argc, char **argv)
{
	static struct listener ls[MAX_LISTEN];
	static struct conn conns[MAX_CONN];
	static struct pollfd pfd[MAX_LISTEN + MAX_CONN];
	const char *logpath = NULL;
	int nl = 0, nconn = 0;
	FILE *log;

	for (int i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--log") == 0 && i + 1 < argc) {
			logpath = argv[++i];
		} else if ((strcmp(argv[i], "--tcp") == 0 || strcmp(argv[i], "--udp") == 0) &&
			   i + 1 < argc) {
			if (nl >= MAX_LISTEN)
				return usage("too many listeners");
			if (open_listener(&ls[nl], argv[i + 1], argv[i][2] == 't'))
				return 1;
			nl++;
			i++;
		} else {
			return usage("serve: bad arguments");
		}
	}
	if (!logpath || nl == 0)
		return usage("serve: need --log and at least one --tcp/--udp");
	log = open_log(logpath);
	if (!log)
		return 1;
	setup_signals();
	printf("ready\n");
	fflush(stdout);

	while (!stop_flag) {
		int n = 0, wait = 1000;
		double now = now_ms();

		for (int i = 0; i < nl; i++)
			pfd[n++] = (struct pollfd){ .fd = ls[i].fd, .events = POLLIN };
		for (int i = 0; i < nconn; i++) {
			int left = (int)(conns[i].deadline - now) + 1;

			if (left < wait)
				wait = left < 0 ? 0 : left;
			pfd[n++] = (struct pollfd){ .fd = conns[i].fd, .events = POLLIN };
		}
		if (poll(pfd, (nfds_t)n, wait) < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, PROG ": poll: %s\n", strerror(errno));
			return 1;
		}
		/* Connections first: accepting below may append to conns. */
		now = now_ms();
		for (int i = nconn - 1; i >= 0; i--) {
			short re = pfd[nl + i].revents;

			if ((re && serve_drain(&conns[i])) || now >= conns[i].deadline) {
				close(conns[i].fd);
				conns[i] = conns[--nconn];
			}
		}
		for (int i = 0; i < nl; i++) {
			if (!pfd[i].revents)
				continue;
			if (ls[i].tcp)
				serve_accept(&ls[i], log, conns, &nconn);
			else
				serve_udp(&ls[i], log);
		}
	}
	for (int i = 0; i < nconn; i++)
		close(conns[i].fd);
	for (int i = 0; i < nl; i++)
		close(ls[i].fd);
	fclose(log);
	return 0;
}

/* ---- sniff ------------------------------------------------------------- */

static uint16_t get16(const unsigned char *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static void sniff_transport(FILE *log, int v6, int proto, const unsigned char *t, size_t tlen,
			    size_t paylen, const char *src, const char *dst)
{
	const char *name;
	char dstp[INET6_ADDRSTRLEN + 8];

	if (v6 && proto == IPPROTO_ICMPV6)
		name = "icmp6";
	else if (!v6 && proto == IPPROTO_ICMP)
		name = "icmp";
	else if (proto == IPPROTO_TCP)
		name = "tcp";
	else if (proto == IPPROTO_UDP)
		name = "udp";
	else
		name = "other";

	if (proto == IPPROTO_TCP && tlen >= 20) {
		char flags[32] = "";
		unsigned fl = t[13];
		size_t doff = (size_t)(t[12] >> 4) * 4;
		static const struct {
			unsigned bit;
			const char *s;
		} fn[] = { { 0x02, "SYN" },
			   { 0x10, "ACK" },
			   { 0x04, "RST" },
			   { 0x01, "FIN" },
			   { 0x08, "PSH" } };

		for (size_t i = 0; i < sizeof(fn) / sizeof(fn[0]); i++) {
			if (!(fl & fn[i].bit))
				continue;
			if (flags[0])
				strcat(flags, ",");
			strcat(flags, fn[i].s);
		}
		if (!flags[0])
			strcpy(flags, "-");
		snprintf(dstp, sizeof(dstp), v6 ? "[%s]:%u" : "%s:%u", dst, get16(t + 2));
		fprintf(log, "tcp %s -> %s %s len=%zu", src, dstp, flags,
			paylen > doff ? paylen - doff : 0);
	} else if (proto == IPPROTO_UDP && tlen >= 8) {
		snprintf(dstp, sizeof(dstp), v6 ? "[%s]:%u" : "%s:%u", dst, get16(t + 2));
		fprintf(log, "udp %s -> %s len=%zu", src, dstp, paylen > 8 ? paylen - 8 : 0);
	} else if ((proto == IPPROTO_ICMP || proto == IPPROTO_ICMPV6) && tlen >= 2 &&
		   name[0] == 'i') {
		fprintf(log, "%s %s -> %s type=%u code=%u", name, src, dst, t[0], t[1]);
	} else if (proto == IPPROTO_TCP || proto == IPPROTO_UDP) {
		/* non-first fragment or truncated header: no port */
		fprintf(log, "%s %s -> %s frag", name, src, dst);
	} else {
		fprintf(log, "other %s -> %s proto=%d", src, dst, proto);
	}
}

static void sniff_packet(FILE *log, const unsigned char *b, size_t n, int ethertype, int out)
{
	char src[INET6_ADDRSTRLEN], dst[INET6_ADDRSTRLEN];

	if (ethertype == ETH_P_IP) {
		size_t ihl, tot;
		int frag;

		if (n < 20 || (b[0] >> 4) != 4)
			return;
		ihl = (size_t)(b[0] & 0xf) * 4;
		tot = get16(b + 2);
		frag = get16(b + 6) & 0x1fff;
		inet_ntop(AF_INET, b + 12, src, sizeof(src));
		inet_ntop(AF_INET, b + 16, dst, sizeof(dst));
		if (ihl < 20 || ihl > n)
			ihl = n;
		if (tot < ihl)
			tot = ihl;
		sniff_transport(log, 0, b[9], b + ihl, frag ? 0 : n - ihl, tot - ihl, src, dst);
	} else if (ethertype == ETH_P_IPV6) {
		size_t off = 40, plen;
		int nh, frag = 0;

		if (n < 40 || (b[0] >> 4) != 6)
			return;
		plen = get16(b + 4);
		nh = b[6];
		inet_ntop(AF_INET6, b + 8, src, sizeof(src));
		inet_ntop(AF_INET6, b + 24, dst, sizeof(dst));
		/* Skip the common extension headers. */
		while (off + 8 <= n && !frag) {
			size_t hl;

			if (nh == 0 || nh == 43 || nh == 60)
				hl = ((size_t)b[off + 1] + 1) * 8;
			else if (nh == 51)
				hl = ((size_t)b[off + 1] + 2) * 4;
			else if (nh == 44) {
				hl = 8;
				frag = (get16(b + off + 2) & 0xfff8) != 0;
			} else
				break;
			nh = b[off];
			off += hl;
		}
		if (off > n)
			off = n;
		plen = plen + 40 > off ? plen + 40 - off : 0;
		sniff_transport(log, 1, nh, b + off, frag ? 0 : n - off, plen, src, dst);
	} else {
		return;
	}
	fprintf(log, out ? " out\n" : "\n");
	fflush(log);
}

static int cmd_sniff(int argc, char **argv)
{
	const char *iface = NULL, *logpath = NULL;
	struct sockaddr_ll sll;
	unsigned char buf[2048];
	unsigned ifindex;
	int fd, all = 0;
	FILE *log;

	for (int i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--iface") == 0 && i + 1 < argc)
			iface = argv[++i];
		else if (strcmp(argv[i], "--log") == 0 && i + 1 < argc)
			logpath = argv[++i];
		else if (strcmp(argv[i], "--all") == 0)
			all = 1;
		else
			return usage("sniff: bad arguments");
	}
	if (!iface || !logpath)
		return usage("sniff: need --iface and --log");
	ifindex = if_nametoindex(iface);
	if (!ifindex) {
		fprintf(stderr, PROG ": interface %s: %s\n", iface, strerror(errno));
		return 1;
	}
	/* Protocol 0 until bound: no packet from another interface gets queued. */
	fd = socket(AF_PACKET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		fprintf(stderr, PROG ": AF_PACKET socket: %s\n", strerror(errno));
		return 1;
	}
	memset(&sll, 0, sizeof(sll));
	sll.sll_family = AF_PACKET;
	sll.sll_protocol = htons(ETH_P_ALL);
	sll.sll_ifindex = (int)ifindex;
	if (bind(fd, (struct sockaddr *)&sll, sizeof(sll)) < 0) {
		fprintf(stderr, PROG ": bind to %s: %s\n", iface, strerror(errno));
		return 1;
	}
	log = open_log(logpath);
	if (!log)
		return 1;
	setup_signals();
	printf("ready\n");
	fflush(stdout);

	while (!stop_flag) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		struct sockaddr_ll from = { 0 };
		socklen_t flen = sizeof(from);
		ssize_t n;

		if (poll(&pfd, 1, 500) <= 0)
			continue;
		n = recvfrom(fd, buf, sizeof(buf), MSG_DONTWAIT, (struct sockaddr *)&from, &flen);
		if (n < 0)
			continue;
		if (from.sll_ifindex != (int)ifindex)
			continue;
		if (from.sll_pkttype == PACKET_OUTGOING && !all)
			continue;
		sniff_packet(log, buf, (size_t)n, ntohs(from.sll_protocol),
			     from.sll_pkttype == PACKET_OUTGOING);
	}
	close(fd);
	fclose(log);
	return 0;
}

/* ---- clients ----------------------------------------------------------- */

/* Non-blocking connect bounded by deadline: 0 or an errno. */
static int connect_nb(int fd, const struct sockaddr_storage *ss, socklen_t len, double deadline)
{
	int err = 0, r;
	socklen_t elen = sizeof(err);

	if (connect(fd, (const struct sockaddr *)ss, len) == 0)
		return 0;
	if (errno != EINPROGRESS)
		return errno;
	r = wait_fd(fd, POLLOUT, deadline);
	if (r < 0)
		return -r;
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) < 0)
		return errno;
	return err;
}

/* Read until a newline or EOF: 0 when something arrived, else an errno. */
static int read_greeting(int fd, double deadline)
{
	char buf[256];
	size_t got = 0;

	for (;;) {
		ssize_t n;
		int r = wait_fd(fd, POLLIN, deadline);

		if (r < 0)
			return -r;
		n = read(fd, buf, sizeof(buf));
		if (n > 0) {
			if (memchr(buf, '\n', (size_t)n))
				return 0;
			got += (size_t)n;
			continue;
		}
		if (n == 0)
			return got ? 0 : ENODATA;
		if (errno != EAGAIN && errno != EINTR)
			return errno;
	}
}

/* One connect + greeting; 0 or an errno. */
static int tcp_try(struct sockaddr_storage *ss, socklen_t len, int mapped)
{
	double deadline = now_ms() + timeout_ms;
	int fd, err, zero = 0;

	fd = socket(ss->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return errno;
	if (mapped && setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero)) < 0) {
		err = errno;
		close(fd);
		return err;
	}
	err = connect_nb(fd, ss, len, deadline);
	if (!err)
		err = read_greeting(fd, deadline);
	close(fd);
	return err;
}

static int tcp_common(struct sockaddr_storage *ss, socklen_t len, int mapped)
{
	int err = tcp_try(ss, len, mapped);

	return err ? report_err(err) : report_ok();
}

/*
 * tcp [--repeat N | --ports N] ADDR PORT: N tries in one process, the last
 * reported; --repeat: the same destination (a retry loop), --ports: ports
 * PORT..PORT+N-1 (distinct destinations: nothing folds).
 */
static int cmd_tcp(int argc, char **argv)
{
	struct sockaddr_storage ss;
	socklen_t len;
	long repeat = 1;
	int port, step = 0;

	if (argc >= 2 && (strcmp(argv[0], "--repeat") == 0 || strcmp(argv[0], "--ports") == 0)) {
		step = strcmp(argv[0], "--ports") == 0;
		repeat = strtol(argv[1], NULL, 10);
		argc -= 2;
		argv += 2;
	}
	if (argc != 2 || repeat < 1 || repeat > 100000 || parse_port(argv[1], &port) ||
	    port + step * (repeat - 1) > 65535 || parse_ip(argv[0], port, &ss, &len))
		return usage("tcp [--repeat N | --ports N] ADDR PORT");
	for (long i = 1; i < repeat; i++) {
		tcp_try(&ss, len, 0);
		if (step)
			parse_ip(argv[0], port + (int)i, &ss, &len);
	}
	return tcp_common(&ss, len, 0);
}

static int cmd_tcp_mapped(int argc, char **argv)
{
	struct sockaddr_storage ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;
	struct in_addr v4;
	int port;

	if (argc != 2 || parse_port(argv[1], &port) || inet_pton(AF_INET, argv[0], &v4) != 1)
		return usage("tcp-mapped V4ADDR PORT");
	memset(&ss, 0, sizeof(ss));
	sin6->sin6_family = AF_INET6;
	sin6->sin6_port = htons((uint16_t)port);
	sin6->sin6_addr.s6_addr[10] = 0xff;
	sin6->sin6_addr.s6_addr[11] = 0xff;
	memcpy(&sin6->sin6_addr.s6_addr[12], &v4, 4);
	return tcp_common(&ss, sizeof(*sin6), 1);
}

/* Wait for a datagram equal to want on any of fds: 0 or an errno. */
static int wait_echo(const int *fds, int n, const char *want, double deadline)
{
	struct pollfd pfd[2];
	char buf[2048];
	size_t wlen = strlen(want);

	for (int i = 0; i < n; i++)
		pfd[i] = (struct pollfd){ .fd = fds[i], .events = POLLIN };
	for (;;) {
		int i = wait_any(pfd, n, deadline);
		ssize_t got;

		if (i < 0)
			return -i;
		got = recv(fds[i], buf, sizeof(buf), MSG_DONTWAIT);
		if (got < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			return errno; /* e.g. ECONNREFUSED on a connected socket */
		}
		if ((size_t)got == wlen && memcmp(buf, want, wlen) == 0)
			return 0;
	}
}

static int cmd_udp_sendto(int argc, char **argv)
{
	struct sockaddr_storage ss;
	socklen_t len;
	char msg[64];
	int fd, port, err;
	double deadline;

	if (argc != 2 || parse_port(argv[1], &port) || parse_ip(argv[0], port, &ss, &len))
		return usage("udp-sendto ADDR PORT");
	deadline = now_ms() + timeout_ms;
	snprintf(msg, sizeof(msg), "sbt-net udp-sendto %d", (int)getpid());
	fd = socket(ss.ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return report_err(errno);
	if (sendto(fd, msg, strlen(msg), 0, (struct sockaddr *)&ss, len) < 0)
		return report_err(errno);
	err = wait_echo(&fd, 1, msg, deadline);
	close(fd);
	return err ? report_err(err) : report_ok();
}

static int udp_bound_socket(int family, int port)
{
	struct sockaddr_storage ss;
	socklen_t len =
		family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
	int one = 1;
	int fd = socket(family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	memset(&ss, 0, sizeof(ss));
	ss.ss_family = (sa_family_t)family;
	if (family == AF_INET6)
		((struct sockaddr_in6 *)&ss)->sin6_port = htons((uint16_t)port);
	else
		((struct sockaddr_in *)&ss)->sin_port = htons((uint16_t)port);
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(fd, (struct sockaddr *)&ss, len) < 0) {
		int e = errno;

		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

static int cmd_udp_connect_sendto(int argc, char **argv)
{
	struct sockaddr_storage a1, a2, local;
	socklen_t l1, l2, llen = sizeof(local);
	char m1[64], m2[64];
	int p1, p2, fds[2], err;
	double deadline;

	if (argc != 4 || parse_port(argv[1], &p1) || parse_ip(argv[0], p1, &a1, &l1) ||
	    parse_port(argv[3], &p2) || parse_ip(argv[2], p2, &a2, &l2) ||
	    a1.ss_family != a2.ss_family)
		return usage("udp-connect-sendto ADDR1 PORT1 ADDR2 PORT2 (same family)");
	deadline = now_ms() + timeout_ms;
	snprintf(m1, sizeof(m1), "sbt-net udp-connect %d", (int)getpid());
	snprintf(m2, sizeof(m2), "sbt-net udp-connect-sendto %d", (int)getpid());

	/* fds[0]: the connected sender; fds[1]: same port, unconnected, gets
	 * the echo from ADDR2 (the connected socket only accepts ADDR1). */
	fds[0] = udp_bound_socket(a1.ss_family, 0);
	if (fds[0] < 0)
		return report_err(errno);
	if (getsockname(fds[0], (struct sockaddr *)&local, &llen) < 0)
		return report_err(errno);
	fds[1] = udp_bound_socket(a1.ss_family, ss_port(&local));
	if (fds[1] < 0)
		return report_err(errno);
	if (connect(fds[0], (struct sockaddr *)&a1, l1) < 0) {
		fprintf(stderr, PROG ": connect to %s failed\n", argv[0]);
		return report_err(errno);
	}
	if (send(fds[0], m1, strlen(m1), 0) < 0) {
		fprintf(stderr, PROG ": the first (connected) send failed\n");
		return report_err(errno);
	}
	if (sendto(fds[0], m2, strlen(m2), 0, (struct sockaddr *)&a2, l2) < 0)
		return report_err(errno);
	err = wait_echo(fds, 2, m2, deadline);
	close(fds[0]);
	close(fds[1]);
	return err ? report_err(err) : report_ok();
}

static int cmd_tfo(int argc, char **argv)
{
	static const char data[] = "sbt-net tfo\n";
	struct sockaddr_storage ss;
	socklen_t len;
	ssize_t n;
	size_t sent = 0;
	int fd, port, err = 0;
	double deadline;

	if (argc != 2 || parse_port(argv[1], &port) || parse_ip(argv[0], port, &ss, &len))
		return usage("tfo ADDR PORT");
	deadline = now_ms() + timeout_ms;
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return report_err(errno);
	n = sendto(fd, data, sizeof(data) - 1, MSG_FASTOPEN, (struct sockaddr *)&ss, len);
	if (n >= 0)
		sent = (size_t)n;
	else if (errno != EINPROGRESS)
		return report_err(errno);
	fprintf(stderr, PROG ": tfo: %zu bytes in the SYN\n", sent);
	/* Wait for the handshake, then send whatever did not ride the SYN. */
	err = wait_fd(fd, POLLOUT, deadline);
	if (err < 0)
		return report_err(-err);
	{
		socklen_t elen = sizeof(err);

		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) < 0)
			err = errno;
	}
	if (!err && sent < sizeof(data) - 1 &&
	    send(fd, data + sent, sizeof(data) - 1 - sent, MSG_NOSIGNAL) < 0)
		err = errno;
	if (!err)
		err = read_greeting(fd, deadline);
	close(fd);
	return err ? report_err(err) : report_ok();
}

static uint16_t inet_csum(const unsigned char *p, size_t n)
{
	uint32_t sum = 0;

	for (size_t i = 0; i + 1 < n; i += 2)
		sum += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (n & 1)
		sum += (uint32_t)p[n - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/*
 * One ICMP echo exchange. raw: SOCK_RAW (v4 replies include the IP header,
 * we fill the checksum); else a ping socket (kernel sets id and checksum).
 */
static int icmp_echo(int argc, char **argv, int raw)
{
	struct sockaddr_storage ss, from = { 0 };
	socklen_t len;
	unsigned char pkt[64], buf[2048];
	uint16_t id = (uint16_t)getpid(), seq = 1;
	int fd, v6;
	double deadline;

	if (argc != 1 || parse_ip(argv[0], 0, &ss, &len))
		return usage(raw ? "raw ADDR" : "ping ADDR");
	v6 = ss.ss_family == AF_INET6;
	deadline = now_ms() + timeout_ms;
	fd = socket(ss.ss_family, (raw ? SOCK_RAW : SOCK_DGRAM) | SOCK_NONBLOCK | SOCK_CLOEXEC,
		    v6 ? IPPROTO_ICMPV6 : IPPROTO_ICMP);
	if (fd < 0)
		return report_err(errno);
	memset(pkt, 0, sizeof(pkt));
	pkt[0] = v6 ? 128 : 8; /* echo request */
	pkt[4] = (unsigned char)(id >> 8);
	pkt[5] = (unsigned char)id;
	pkt[6] = (unsigned char)(seq >> 8);
	pkt[7] = (unsigned char)seq;
	memcpy(pkt + 8, "sbt-net icmp echo", 17);
	if (!v6) {
		uint16_t c = inet_csum(pkt, 8 + 17);

		pkt[2] = (unsigned char)(c >> 8);
		pkt[3] = (unsigned char)c;
	}
	if (sendto(fd, pkt, 8 + 17, 0, (struct sockaddr *)&ss, len) < 0)
		return report_err(errno);
	for (;;) {
		socklen_t flen = sizeof(from);
		const unsigned char *icmp = buf;
		char a[INET6_ADDRSTRLEN], b[INET6_ADDRSTRLEN];
		ssize_t n;
		int r = wait_fd(fd, POLLIN, deadline);

		if (r < 0)
			return report_err(-r);
		n = recvfrom(fd, buf, sizeof(buf), 0, (struct sockaddr *)&from, &flen);
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			return report_err(errno);
		}
		if (raw && !v6) { /* skip the IPv4 header */
			size_t ihl = (size_t)(buf[0] & 0xf) * 4;

			if ((size_t)n < ihl + 8)
				continue;
			icmp += ihl;
			n -= (ssize_t)ihl;
		}
		if (n < 8)
			continue;
		fmt_addr(&from, a, sizeof(a));
		fmt_addr(&ss, b, sizeof(b));
		if (strcmp(a, b) != 0)
			continue;
		if (icmp[0] != (v6 ? 129 : 0))
			continue;
		if (get16(icmp + 6) != seq || (raw && get16(icmp + 4) != id))
			continue;
		close(fd);
		return report_ok();
	}
}

static int cmd_packet(int argc, char **argv)
{
	int fd;

	(void)argv;
	if (argc != 0)
		return usage("packet");
	fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return report_err(errno);
	close(fd);
	return report_ok();
}

static const char *gai_name(int e)
{
	static char buf[64];

	switch (e) {
	case EAI_AGAIN:
		return "EAI_AGAIN";
	case EAI_BADFLAGS:
		return "EAI_BADFLAGS";
	case EAI_FAIL:
		return "EAI_FAIL";
	case EAI_FAMILY:
		return "EAI_FAMILY";
	case EAI_MEMORY:
		return "EAI_MEMORY";
	case EAI_NONAME:
		return "EAI_NONAME";
	case EAI_SERVICE:
		return "EAI_SERVICE";
	case EAI_SOCKTYPE:
		return "EAI_SOCKTYPE";
	case EAI_OVERFLOW:
		return "EAI_OVERFLOW";
#ifdef EAI_NODATA
	case EAI_NODATA:
		return "EAI_NODATA";
#endif
#ifdef EAI_ADDRFAMILY
	case EAI_ADDRFAMILY:
		return "EAI_ADDRFAMILY";
#endif
	case EAI_SYSTEM:
		snprintf(buf, sizeof(buf), "EAI_SYSTEM:%s", errno_name(errno));
		return buf;
	default:
		snprintf(buf, sizeof(buf), "EAI_%d", e);
		return buf;
	}
}

static int cmd_resolve(int argc, char **argv)
{
	struct addrinfo hints;
	struct gaicb req;
	struct gaicb *list[1] = { &req };
	double deadline;
	char out[4096] = "";
	size_t olen = 0;
	int r;

	if (argc != 1)
		return usage("resolve NAME");
	deadline = now_ms() + timeout_ms;
	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	memset(&req, 0, sizeof(req));
	req.ar_name = argv[0];
	req.ar_request = &hints;
	/* Asynchronous so that our timeout, not resolv.conf's, bounds it. */
	r = getaddrinfo_a(GAI_NOWAIT, list, 1, NULL);
	if (r) {
		printf("err %s %.1f\n", gai_name(r), now_ms() - t_start);
		return 1;
	}
	for (;;) {
		int left = remaining(deadline);
		struct timespec ts = { .tv_sec = left / 1000, .tv_nsec = (left % 1000) * 1000000L };

		r = gai_error(&req);
		if (r != EAI_INPROGRESS)
			break;
		if (left <= 0) {
			gai_cancel(&req);
			printf("err ETIMEDOUT %.1f\n", now_ms() - t_start);
			fflush(stdout);
			_exit(1); /* the resolver thread may still be running */
		}
		gai_suspend((const struct gaicb *const *)list, 1, &ts);
	}
	if (r) {
		printf("err %s %.1f\n", gai_name(r), now_ms() - t_start);
		return 1;
	}
	for (struct addrinfo *ai = req.ar_result; ai; ai = ai->ai_next) {
		struct sockaddr_storage ss;
		char a[INET6_ADDRSTRLEN + 2];

		memset(&ss, 0, sizeof(ss));
		memcpy(&ss, ai->ai_addr, ai->ai_addrlen);
		a[0] = ' ';
		fmt_addr(&ss, a + 1, sizeof(a) - 2);
		strcat(a, " ");
		/* out is " a1 a2 ... " : skip repeats (one per socket type) */
		if (strstr(out, a))
			continue;
		if (olen + strlen(a) < sizeof(out)) {
			memcpy(out + (olen ? olen - 1 : 0), a, strlen(a) + 1);
			olen = strlen(out);
		}
	}
	/* drop the trailing space */
	if (olen)
		out[olen - 1] = 0;
	freeaddrinfo(req.ar_result);
	printf("ok %.1f%s\n", now_ms() - t_start, out);
	return 0;
}

/* ---- main -------------------------------------------------------------- */

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(int, char **);
	} clients[] = {
		{ "tcp", cmd_tcp },
		{ "tcp-mapped", cmd_tcp_mapped },
		{ "udp-sendto", cmd_udp_sendto },
		{ "udp-connect-sendto", cmd_udp_connect_sendto },
		{ "tfo", cmd_tfo },
		{ "packet", cmd_packet },
		{ "resolve", cmd_resolve },
	};
	char *pos[16];
	const char *cmd = NULL;
	int npos = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc >= 2 && strcmp(argv[1], "serve") == 0)
		return cmd_serve(argc - 2, argv + 2);
	if (argc >= 2 && strcmp(argv[1], "sniff") == 0)
		return cmd_sniff(argc - 2, argv + 2);

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--timeout") == 0 && i + 1 < argc) {
			char *end;
			long v = strtol(argv[++i], &end, 10);

			if (*end || v <= 0 || v > 3600000)
				return usage("bad --timeout");
			timeout_ms = (int)v;
		} else if (!cmd) {
			cmd = argv[i];
		} else if (npos < (int)(sizeof(pos) / sizeof(pos[0]))) {
			pos[npos++] = argv[i];
		} else {
			return usage("too many arguments");
		}
	}
	if (!cmd)
		return usage("no subcommand");
	t_start = now_ms();
	if (strcmp(cmd, "raw") == 0)
		return icmp_echo(npos, pos, 1);
	if (strcmp(cmd, "ping") == 0)
		return icmp_echo(npos, pos, 0);
	for (size_t i = 0; i < sizeof(clients) / sizeof(clients[0]); i++)
		if (strcmp(cmd, clients[i].name) == 0)
			return clients[i].fn(npos, pos);
	return usage("unknown subcommand");
}
