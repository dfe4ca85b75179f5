// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The DNS proxy and its upstream, on real sockets in a network namespace of
 * the test's own (root; skipped otherwise): the test is the sandbox's client
 * and the resolver (127.0.0.1:53). Only the resolver's answer to the
 * question asked, with its id, from its address is taken; a socket per query
 * (a new source port); a resolver gone or a TCP connection it closes is a
 * SERVFAIL, and the next query works again; an IPv6 resolver's answers are
 * taken too.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "egress/dns.h"
#include "egress/dnsev.h"
#include "egress/dnsproxy.h"
#include "egress/policy.h"
#include "sbtrace.h"
#include "trace/tracer.h"

#define WAIT_MS 3000

static const uint8_t REAL[4] = { 192, 0, 2, 7 }, EVIL[4] = { 203, 0, 113, 66 };

/* What the proxy's thread told its owner. */
static struct {
	pthread_mutex_t lock;
	size_t nr_learned;
	uint8_t learned[8][16];
	const char *reason, *reply;
} seen = { .lock = PTHREAD_MUTEX_INITIALIZER };

static int learn(void *arg, uint32_t slot, uint32_t rule_idx, const char *name,
		 const struct sbt_dns_addr *addrs, size_t n, uint64_t ts_ns)
{
	pthread_mutex_lock(&seen.lock);
	for (size_t i = 0; i < n && seen.nr_learned < 8; i++)
		memcpy(seen.learned[seen.nr_learned++], addrs[i].addr, 16);
	pthread_mutex_unlock(&seen.lock);
	return 0;
}

static void event(void *arg, struct sbt_dns_event *ev)
{
	pthread_mutex_lock(&seen.lock);
	seen.reason = ev->reason;
	seen.reply = ev->reply;
	pthread_mutex_unlock(&seen.lock);
}

static struct {
	bool ok; /* root, and a network namespace of its own */
	int nsfd;
	struct sbt_rule rule;
	struct sbt_egress_cfg cfg;
	struct sbt_dnsproxy *px;
	uint16_t port[4];
	int res_udp, res_tcp; /* the resolver's */
} w = { .nsfd = -1, .res_udp = -1, .res_tcp = -1 };

static struct sockaddr_in sin_of(const char *a, uint16_t port_be)
{
	struct sockaddr_in s = { .sin_family = AF_INET, .sin_port = port_be };

	inet_pton(AF_INET, a, &s.sin_addr);
	return s;
}

static int resolver_socket(int type)
{
	struct sockaddr_in s = sin_of("127.0.0.1", htons(53));
	int one = 1, fd = socket(AF_INET, type | SOCK_CLOEXEC, 0);

	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (fd < 0 || bind(fd, (struct sockaddr *)&s, sizeof(s)) < 0 ||
	    (type == SOCK_STREAM && listen(fd, 4) < 0)) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

static bool lo_up(void)
{
	struct ifreq ifr = { 0 };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	bool ok;

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	ok = fd >= 0 && ioctl(fd, SIOCGIFFLAGS, &ifr) == 0;
	ifr.ifr_flags |= IFF_UP;
	ok = ok && ioctl(fd, SIOCSIFFLAGS, &ifr) == 0;
	if (fd >= 0)
		close(fd);
	return ok;
}

static int setup(void **state)
{
	struct sbt_dnsproxy_owner o = {
		.slot = 0, .has_resolver = true, .learn = learn, .event = event
	};
	int err;

	(void)state;
	if (geteuid() != 0 || unshare(CLONE_NEWNET) < 0 || !lo_up())
		return 0; /* every test skips */
	w.nsfd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	w.res_udp = resolver_socket(SOCK_DGRAM);
	w.res_tcp = resolver_socket(SOCK_STREAM);
	w.rule = (struct sbt_rule){
		.kind = SBT_RULE_HOST, .host = "allowed.test", .port_hi = 65535, .id = 1
	};
	w.cfg = (struct sbt_egress_cfg){ .rules = &w.rule, .nr_rules = 1 };
	o.cfg = &w.cfg;
	memcpy(o.resolver, "\0\0\0\0\0\0\0\0\0\0\xff\xff\x7f\0\0\1", 16);
	o.resolver_nsfd = w.nsfd; /* its thread enters it (the same one here) */
	w.px = sbt_dnsproxy_start(&o, "test", w.nsfd, NULL, &err);
	if (!w.px || w.nsfd < 0 || w.res_udp < 0 || w.res_tcp < 0)
		return -1;
	sbt_dnsproxy_ports(w.px, w.port);
	w.ok = w.port[SBT_DNS_UDP4] && w.port[SBT_DNS_TCP4];
	return w.ok ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	sbt_dnsproxy_stop(w.px);
	if (w.res_udp >= 0)
		close(w.res_udp);
	if (w.res_tcp >= 0)
		close(w.res_tcp);
	if (w.nsfd >= 0)
		close(w.nsfd);
	return 0;
}

static bool readable(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, ms) == 1;
}

static void forget(void)
{
	pthread_mutex_lock(&seen.lock);
	seen.nr_learned = 0;
	seen.reason = seen.reply = NULL;
	pthread_mutex_unlock(&seen.lock);
}

/* The sandbox's client: a UDP socket that asked the proxy for allowed.test (id 0x4242). */
static int client_udp(void)
{
	struct sockaddr_in s = sin_of("127.0.0.1", w.port[SBT_DNS_UDP4]);
	uint8_t q[64];
	int n = sbt_dns_build_query(0x4242, "allowed.test", SBT_DNS_TYPE_A, q, sizeof(q));
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0 && n > 0);
	assert_int_equal(sendto(fd, q, (size_t)n, 0, (struct sockaddr *)&s, sizeof(s)), n);
	return fd;
}

/* The proxy's query at the resolver: its length, where it came from into *from. */
static int upstream_query(uint8_t *up, size_t cap, struct sockaddr_in *from)
{
	socklen_t fl = sizeof(*from);

	assert_true(readable(w.res_udp, WAIT_MS));
	return (int)recvfrom(w.res_udp, up, cap, 0, (struct sockaddr *)from, &fl);
}

/* The resolver's answer to query up (its OPT record last): one A record, addr. */
static size_t answer(const uint8_t *up, size_t ul, const uint8_t addr[4], uint8_t *r)
{
	static const uint8_t rr[] = { 0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4 };
	size_t qend = ul - 11;

	memcpy(r, up, qend);
	r[2] = 0x81;
	r[3] = 0x80;
	r[7] = 1;
	r[11] = 0;
	memcpy(r + qend, rr, sizeof(rr));
	memcpy(r + qend + sizeof(rr), addr, 4);
	return qend + sizeof(rr) + 4;
}

/* The client's answer: its rcode, the first A record's address into addr. */
static int client_answer(const uint8_t *m, size_t n, uint8_t addr[4])
{
	struct sbt_dns_addr a[4];
	size_t na = 0;
	uint32_t ttl;

	assert_true(n >= 12);
	assert_int_equal(m[0] << 8 | m[1], 0x4242);
	if (sbt_dns_parse_response(m, n, 0x4242, "allowed.test", SBT_DNS_TYPE_A, a, 4, &na, &ttl) ==
		    SBT_DNS_OK &&
	    na)
		memcpy(addr, a[0].addr + 12, 4);
	return m[3] & 0xf;
}

static void test_only_the_resolvers_answer(void **state)
{
	uint8_t up[512], r[512], m[512], got[4] = { 0 };
	struct sockaddr_in from, evil_src = sin_of("127.0.0.2", htons(53));
	int cfd, evil, ul;
	size_t rl;

	(void)state;
	if (!w.ok)
		skip();
	forget();
	cfd = client_udp();
	ul = upstream_query(up, sizeof(up), &from);
	assert_true(ul > 23);
	rl = answer(up, (size_t)ul, EVIL, r);
	/* another id */
	r[0] ^= 0x5a;
	sendto(w.res_udp, r, rl, 0, (struct sockaddr *)&from, sizeof(from));
	r[0] ^= 0x5a;
	/* another question ("allowed.tesu") */
	r[ul - 11 - 6] ^= 1;
	sendto(w.res_udp, r, rl, 0, (struct sockaddr *)&from, sizeof(from));
	r[ul - 11 - 6] ^= 1;
	/* everything right but the source: 127.0.0.2:53 */
	evil = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	assert_int_equal(bind(evil, (struct sockaddr *)&evil_src, sizeof(evil_src)), 0);
	sendto(evil, r, rl, 0, (struct sockaddr *)&from, sizeof(from));
	close(evil);
	/* none of them is an answer: the client is still waiting */
	assert_false(readable(cfd, 200));
	rl = answer(up, (size_t)ul, REAL, r);
	assert_int_equal(sendto(w.res_udp, r, rl, 0, (struct sockaddr *)&from, sizeof(from)),
			 (ssize_t)rl);
	assert_true(readable(cfd, WAIT_MS));
	rl = (size_t)recv(cfd, m, sizeof(m), 0);
	assert_int_equal(client_answer(m, rl, got), 0);
	assert_memory_equal(got, REAL, 4);
	pthread_mutex_lock(&seen.lock);
	assert_int_equal(seen.nr_learned, 1); /* the real one only */
	assert_memory_equal(seen.learned[0] + 12, REAL, 4);
	assert_string_equal(seen.reply, "answer");
	pthread_mutex_unlock(&seen.lock);
	close(cfd);
}

/* One query answered the normal way: the proxy's source port. */
static uint16_t one_query(void)
{
	uint8_t up[512], r[512], m[512], got[4] = { 0 };
	struct sockaddr_in from;
	int cfd = client_udp(), ul = upstream_query(up, sizeof(up), &from);
	size_t rl = answer(up, (size_t)ul, REAL, r);

	sendto(w.res_udp, r, rl, 0, (struct sockaddr *)&from, sizeof(from));
	assert_true(readable(cfd, WAIT_MS));
	rl = (size_t)recv(cfd, m, sizeof(m), 0);
	assert_int_equal(client_answer(m, rl, got), 0);
	assert_memory_equal(got, REAL, 4);
	close(cfd);
	return from.sin_port;
}

static void test_a_socket_per_query(void **state)
{
	uint16_t a, b, c;

	(void)state;
	if (!w.ok)
		skip();
	a = one_query();
	b = one_query();
	c = one_query();
	assert_false(a == b && b == c); /* random ports: all three equal ~ 1 in 10^9 */
}

static void test_resolver_gone_then_back(void **state)
{
	uint8_t m[512], got[4];
	int cfd;

	(void)state;
	if (!w.ok)
		skip();
	forget();
	close(w.res_udp); /* nothing on 127.0.0.1:53/udp: ICMP port unreachable */
	w.res_udp = -1;
	cfd = client_udp();
	assert_true(readable(cfd, WAIT_MS));
	assert_int_equal(client_answer(m, (size_t)recv(cfd, m, sizeof(m), 0), got),
			 SBT_DNS_RCODE_SERVFAIL);
	close(cfd);
	pthread_mutex_lock(&seen.lock);
	assert_string_equal(seen.reason, "upstream_error");
	assert_int_equal(seen.nr_learned, 0);
	pthread_mutex_unlock(&seen.lock);
	w.res_udp = resolver_socket(SOCK_DGRAM);
	assert_true(w.res_udp >= 0);
	one_query();
}

/* A TCP DNS message: its 2-byte length, then m. */
static void send_tcp_msg(int fd, const uint8_t *m, size_t n)
{
	uint8_t b[600];

	b[0] = (uint8_t)(n >> 8);
	b[1] = (uint8_t)n;
	memcpy(b + 2, m, n);
	assert_int_equal(send(fd, b, n + 2, MSG_NOSIGNAL), (ssize_t)(n + 2));
}

static size_t recv_tcp_msg(int fd, uint8_t *m, size_t cap)
{
	uint8_t l[2];
	size_t n;

	assert_true(readable(fd, WAIT_MS));
	assert_int_equal(recv(fd, l, 2, MSG_WAITALL), 2);
	n = (size_t)(l[0] << 8 | l[1]);
	assert_true(n <= cap);
	assert_int_equal(recv(fd, m, n, MSG_WAITALL), (ssize_t)n);
	return n;
}

/* The resolver side of one TCP query: accepted, read; answered, or closed unanswered. */
static void resolver_tcp(bool answer_it)
{
	uint8_t up[512], r[512];
	int fd;
	size_t n, rl;

	assert_true(readable(w.res_tcp, WAIT_MS));
	fd = accept4(w.res_tcp, NULL, NULL, SOCK_CLOEXEC);
	assert_true(fd >= 0);
	n = recv_tcp_msg(fd, up, sizeof(up));
	if (answer_it) {
		rl = answer(up, n, REAL, r);
		send_tcp_msg(fd, r, rl);
	}
	close(fd);
}

static void test_tcp_closed_by_the_resolver(void **state)
{
	struct sockaddr_in s = sin_of("127.0.0.1", w.port[SBT_DNS_TCP4]);
	uint8_t q[64], m[512], got[4] = { 0 };
	int n, cfd;

	(void)state;
	if (!w.ok)
		skip();
	forget();
	n = sbt_dns_build_query(0x4242, "allowed.test", SBT_DNS_TYPE_A, q, sizeof(q));
	cfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_int_equal(connect(cfd, (struct sockaddr *)&s, sizeof(s)), 0);
	send_tcp_msg(cfd, q, (size_t)n);
	resolver_tcp(false);
	assert_int_equal(client_answer(m, recv_tcp_msg(cfd, m, sizeof(m)), got),
			 SBT_DNS_RCODE_SERVFAIL);
	pthread_mutex_lock(&seen.lock);
	assert_string_equal(seen.reason, "upstream_error");
	pthread_mutex_unlock(&seen.lock);
	/* the same client connection, again: a new upstream connection answers */
	send_tcp_msg(cfd, q, (size_t)n);
	resolver_tcp(true);
	assert_int_equal(client_answer(m, recv_tcp_msg(cfd, m, sizeof(m)), got), 0);
	assert_memory_equal(got, REAL, 4);
	close(cfd);
}

/* A resolver on ::1: its answers come from an IPv6 address, and are taken too. */
static void test_ipv6_resolver(void **state)
{
	struct sbt_dnsproxy_owner o = { .cfg = &w.cfg,
					.has_resolver = true,
					.learn = learn,
					.event = event,
					.resolver_nsfd = -1 };
	struct sockaddr_in6 s6 = { .sin6_family = AF_INET6,
				   .sin6_port = htons(53),
				   .sin6_addr = IN6ADDR_LOOPBACK_INIT },
			    from;
	struct sockaddr_in c = sin_of("127.0.0.1", 0);
	uint8_t q[64], up[512], r[512], m[512], got[4] = { 0 };
	struct sbt_dnsproxy *px;
	uint16_t port[4];
	socklen_t fl = sizeof(from);
	int one = 1, res, cfd, n, ul, err;
	size_t rl;

	(void)state;
	if (!w.ok)
		skip();
	res = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	setsockopt(res, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (res < 0 || bind(res, (struct sockaddr *)&s6, sizeof(s6)) < 0) {
		if (res >= 0)
			close(res);
		skip(); /* no IPv6 here */
	}
	memcpy(o.resolver, &in6addr_loopback, 16);
	px = sbt_dnsproxy_start(&o, "test6", w.nsfd, NULL, &err);
	assert_non_null(px);
	sbt_dnsproxy_ports(px, port);
	c.sin_port = port[SBT_DNS_UDP4];
	n = sbt_dns_build_query(0x4242, "allowed.test", SBT_DNS_TYPE_A, q, sizeof(q));
	cfd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	assert_int_equal(sendto(cfd, q, (size_t)n, 0, (struct sockaddr *)&c, sizeof(c)), n);
	assert_true(readable(res, WAIT_MS));
	ul = (int)recvfrom(res, up, sizeof(up), 0, (struct sockaddr *)&from, &fl);
	assert_true(ul > 23);
	rl = answer(up, (size_t)ul, REAL, r);
	sendto(res, r, rl, 0, (struct sockaddr *)&from, fl);
	assert_true(readable(cfd, WAIT_MS));
	rl = (size_t)recv(cfd, m, sizeof(m), 0);
	assert_int_equal(client_answer(m, rl, got), 0);
	assert_memory_equal(got, REAL, 4);
	close(cfd);
	close(res);
	sbt_dnsproxy_stop(px);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_only_the_resolvers_answer),
		cmocka_unit_test(test_a_socket_per_query),
		cmocka_unit_test(test_resolver_gone_then_back),
		cmocka_unit_test(test_tcp_closed_by_the_resolver),
		cmocka_unit_test(test_ipv6_resolver),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
