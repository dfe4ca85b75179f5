// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The per-sandbox DNS proxy (see dnsproxy.h).
 *
 * One thread per sandbox: a slow or hostile client stalls only its own
 * sandbox's DNS. The thread lives in the resolver's network namespace, so
 * its upstream sockets cost a query no thread or setns. Every message from
 * the sandbox is untrusted (dns.c parses it, bounded); only the resolver's
 * answer to our question with our id is taken from upstream, and checked
 * again before anything is learned from it. Fail closed: an answer that
 * cannot be learned (the floor, the limit, a broken upstream) is not passed on.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/random.h>
#include <sys/socket.h>

#include "sbtrace.h"
#include "egress/dns.h"
#include "egress/dnsev.h"
#include "egress/dnslearn.h"
#include "egress/dnsproxy.h"
#include "egress/policy.h"
#include "egress/policy_compile.h"
#include "lib/clock.h"
#include "lib/netns.h"
#include "trace/tracer.h"
#include "lib/log.h"

#define UPSTREAM_TIMEOUT_MS 2000
#define CLIENT_TIMEOUT_S    2
#define TCP_QUERIES_MAX	    32 /* per client connection */
#define MSG_MAX		    65535
#define LEARN_ADDRS_MAX	    1024 /* addresses read from one answer */
#define TTL_MAX_S	    3600
#define NR_FDS		    8 /* 4 on a cgroup sandbox's loopback, 4 on its tap */

struct sbt_dnsproxy {
	struct sbt_dnsproxy_owner o;
	/* by SBT_DNS_*: UDP4, TCP4, UDP6, TCP6 on the loopback, then the same on the tap */
	int fds[NR_FDS];
	uint16_t ports[NR_FDS];
	int stop[2];
	int up_nsfd;	  /* the resolver's network namespace until the thread entered it, -1 */
	int up_err;	  /* 0, or why the thread could not enter it: its upstream queries fail */
	int up_ahead[2];  /* by tcp: the next query's upstream socket, made ahead; -1 */
	int up_spent;	  /* the last query's UDP socket, closed after its reply; -1 */
	uint16_t ids[32]; /* upstream message ids from getrandom, each used once */
	size_t nr_ids;
	char name[64]; /* the sandbox's, for messages */
	pthread_t thread;
	bool running;
	uint8_t *buf, *out; /* MSG_MAX + 2 each */
};

/* --- sockets ---------------------------------------------------------------- */

/*
 * Socket k (SBT_DNS_*) in nsfd, bound to `addr` (4 or 16 bytes by its
 * family; NULL: the loopback) on an ephemeral port, into *port.
 */
static int open_one(int nsfd, int k, const uint8_t *addr, uint16_t *port)
{
	bool v6 = k == SBT_DNS_UDP6 || k == SBT_DNS_TCP6;
	bool tcp = k == SBT_DNS_TCP4 || k == SBT_DNS_TCP6;
	struct sockaddr_storage ss = { 0 };
	socklen_t sl = v6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
	int one = 1,
	    fd = sbt_socket_in_netns(nsfd, v6 ? AF_INET6 : AF_INET, tcp ? SOCK_STREAM : SOCK_DGRAM);

	if (fd < 0)
		return fd;
	if (v6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;

		s6->sin6_family = AF_INET6;
		s6->sin6_addr = in6addr_loopback;
		if (addr)
			memcpy(&s6->sin6_addr, addr, 16);
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;

		s4->sin_family = AF_INET;
		s4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		if (addr)
			memcpy(&s4->sin_addr, addr, 4);
	}
	if (bind(fd, (struct sockaddr *)&ss, sl) < 0 || (tcp && listen(fd, 64) < 0) ||
	    getsockname(fd, (struct sockaddr *)&ss, &sl) < 0) {
		int err = -errno;

		close(fd);
		return err;
	}
	/* sin_port and sin6_port sit at the same offset, right after the family */
	memcpy(port, (const uint8_t *)&ss + sizeof(sa_family_t), sizeof(*port));
	return fd;
}

/* --- the upstream (the operator's resolver) ---------------------------------- */

static int wait_fd(int fd, short ev, uint64_t deadline)
{
	struct pollfd p = { .fd = fd, .events = ev };
	uint64_t now = sbt_mono_ms();
	int r;

	if (now >= deadline)
		return -ETIMEDOUT;
	r = poll(&p, 1, (int)(deadline - now));
	if (r < 0)
		return -errno;
	return r ? 0 : -ETIMEDOUT;
}

/* Read exactly n bytes before the deadline (a non-blocking socket). */
static int read_full(int fd, uint8_t *b, size_t n, uint64_t deadline)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r;
		int err = wait_fd(fd, POLLIN, deadline);

		if (err)
			return err;
		r = recv(fd, b + got, n - got, 0);
		if (r == 0)
			return -ECONNRESET;
		if (r < 0 && errno != EAGAIN && errno != EINTR)
			return -errno;
		if (r > 0)
			got += (size_t)r;
	}
	return 0;
}

static socklen_t resolver_addr(const uint8_t r[16], struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (memcmp(r, "\0\0\0\0\0\0\0\0\0\0\xff\xff", 12) == 0) {
		struct sockaddr_in *s4 = (struct sockaddr_in *)ss;

		s4->sin_family = AF_INET;
		s4->sin_port = htons(53);
		memcpy(&s4->sin_addr, r + 12, 4);
		return sizeof(*s4);
	}
	((struct sockaddr_in6 *)ss)->sin6_family = AF_INET6;
	((struct sockaddr_in6 *)ss)->sin6_port = htons(53);
	memcpy(&((struct sockaddr_in6 *)ss)->sin6_addr, r, 16);
	return sizeof(struct sockaddr_in6);
}

/*
 * The datagram came from the resolver's address and port 53 (as a connected
 * socket's must): the same bytes, as resolver_addr zeroes what it does not
 * set and the kernel does so too (no flow label, no scope: not link-local).
 */
static bool from_resolver(const struct sockaddr_storage *from, socklen_t fl,
			  const struct sockaddr_storage *ss, socklen_t sl)
{
	return fl == sl && memcmp(from, ss, sl) == 0;
}

/* One query to the upstream: ours (id, question), where it goes, until when. */
struct upstream_ask {
	const uint8_t *q; /* sbt_dns_build_upstream's, our id set */
	size_t qlen;
	const struct sbt_dns_question *question; /* the client's, parsed: q has its question */
	struct sockaddr_storage ss;		 /* the resolver, port 53 */
	socklen_t sl;
	uint64_t deadline;
};

/* resp (rlen bytes) is the answer to a's query: our id, QR, our question. */
static bool answers(const struct upstream_ask *a, const uint8_t *resp, size_t rlen)
{
	return rlen >= 12 && sbt_dns_msg_id(resp) == sbt_dns_msg_id(a->q) && (resp[2] & 0x80) &&
	       sbt_dns_same_question(a->q, a->question, resp, rlen);
}

/*
 * Over UDP, on a fresh socket connected to the resolver (a new source port
 * per query): the first datagram from the resolver that answers our query
 * into resp, anything else dropped (a stale or spoofed reply cannot end the
 * wait, nor be taken). Its length, or -errno.
 */
static int ask_udp(int fd, const struct upstream_ask *a, uint8_t *resp, size_t cap)
{
	ssize_t sent;

	if (connect(fd, (const struct sockaddr *)&a->ss, a->sl) < 0)
		return -errno;
	sent = send(fd, a->q, a->qlen, 0);
	if (sent != (ssize_t)a->qlen)
		return sent < 0 ? -errno : -EIO;
	for (;;) {
		struct sockaddr_storage from = { 0 };
		socklen_t fl = sizeof(from);
		int err = wait_fd(fd, POLLIN, a->deadline);
		ssize_t r;

		if (err)
			return err;
		r = recvfrom(fd, resp, cap, 0, (struct sockaddr *)&from, &fl);
		if (r < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (r < 0)
			return -errno; /* ECONNREFUSED: nothing listens there */
		if (from_resolver(&from, fl, &a->ss, a->sl) && answers(a, resp, (size_t)r))
			return (int)r;
	}
}

/* Over TCP, one query on its own connection: the answer into resp, its length, or -errno. */
static int ask_tcp(int fd, const struct upstream_ask *a, uint8_t *resp, size_t cap)
{
	uint8_t msg[2 + SBT_DNS_UPSTREAM_MAX];
	int soerr = 0, err;
	socklen_t el = sizeof(soerr);
	size_t n;

	if (a->qlen > SBT_DNS_UPSTREAM_MAX)
		return -EMSGSIZE;
	if (connect(fd, (const struct sockaddr *)&a->ss, a->sl) < 0 && errno != EINPROGRESS)
		return -errno;
	err = wait_fd(fd, POLLOUT, a->deadline);
	if (!err && getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &el) == 0 && soerr)
		err = -soerr;
	if (err)
		return err;
	/* the length and the query in one segment */
	msg[0] = (uint8_t)(a->qlen >> 8);
	msg[1] = (uint8_t)a->qlen;
	memcpy(msg + 2, a->q, a->qlen);
	if (send(fd, msg, a->qlen + 2, MSG_NOSIGNAL) != (ssize_t)(a->qlen + 2))
		return -EIO;
	err = read_full(fd, msg, 2, a->deadline);
	n = (size_t)(msg[0] << 8 | msg[1]);
	if (!err && n > cap)
		err = -EMSGSIZE;
	if (!err)
		err = read_full(fd, resp, n, a->deadline);
	if (!err && !answers(a, resp, n))
		err = -EBADMSG;
	return err ? err : (int)n;
}

static int upstream_socket(int family, bool tcp)
{
	int fd = socket(family, (tcp ? SOCK_STREAM : SOCK_DGRAM) | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	return fd < 0 ? -errno : fd;
}

/*
 * Between two queries (off their path): the spent UDP socket closed, the next
 * query's sockets made. Made ahead, a socket is neither bound nor connected:
 * it has no port until its query's connect, so nothing can be queued to it.
 */
static void upstream_prepare(struct sbt_dnsproxy *px)
{
	struct sockaddr_storage ss;

	if (px->up_spent >= 0)
		close(px->up_spent);
	px->up_spent = -1;
	if (px->up_err || !px->o.has_resolver)
		return;
	resolver_addr(px->o.resolver, &ss);
	for (int tcp = 0; tcp < 2; tcp++)
		if (px->up_ahead[tcp] < 0)
			px->up_ahead[tcp] = upstream_socket(ss.ss_family, tcp);
}

/*
 * Ask the upstream our query upq (qlen bytes, for the client's question q)
 * over UDP or TCP: its answer into resp. Its length, or -errno. Each query
 * has a socket of its own (UDP: a new source port each time), made ahead by
 * the proxy's thread in the resolver's network namespace (no thread, no
 * setns per query). A TCP one is closed at once (a server is not kept waiting
 * for more), a UDP one after the client's reply.
 */
static int ask_upstream(struct sbt_dnsproxy *px, bool tcp, const uint8_t *upq, size_t qlen,
			const struct sbt_dns_question *q, uint8_t *resp, size_t cap)
{
	struct upstream_ask a = { .q = upq, .qlen = qlen, .question = q };
	int fd, r;

	if (px->up_err)
		return px->up_err;
	a.sl = resolver_addr(px->o.resolver, &a.ss);
	a.deadline = sbt_mono_ms() + UPSTREAM_TIMEOUT_MS;
	fd = px->up_ahead[tcp] >= 0 ? px->up_ahead[tcp] : upstream_socket(a.ss.ss_family, tcp);
	px->up_ahead[tcp] = -1;
	if (fd < 0)
		return fd;
	r = tcp ? ask_tcp(fd, &a, resp, cap) : ask_udp(fd, &a, resp, cap);
	if (tcp || px->up_spent >= 0)
		close(fd);
	else
		px->up_spent = fd;
	return r;
}

/* A message id for the upstream, from getrandom (an off-path sender has to guess it). */
static uint16_t upstream_id(struct sbt_dnsproxy *px)
{
	if (px->nr_ids == 0 && getrandom(px->ids, sizeof(px->ids), 0) == (ssize_t)sizeof(px->ids))
		px->nr_ids = sizeof(px->ids) / sizeof(px->ids[0]);
	return px->nr_ids ? px->ids[--px->nr_ids] : (uint16_t)random();
}

/* --- one query ---------------------------------------------------------------- */

/* The first host rule naming `name`, or -1. */
static int host_rule_of(const struct sbt_egress_cfg *cfg, const struct sbt_dns_question *q)
{
	if (!q->name_ok || q->qclass != 1)
		return -1;
	for (size_t i = 0; i < cfg->nr_rules; i++)
		if (cfg->rules[i].kind == SBT_RULE_HOST && strcmp(cfg->rules[i].host, q->name) == 0)
			return (int)i;
	return -1;
}

static const char *rcode_reply(uint8_t rcode)
{
	return rcode == SBT_DNS_RCODE_NXDOMAIN	? "nxdomain"
	       : rcode == SBT_DNS_RCODE_REFUSED ? "refused"
						: "servfail";
}

/* Report ev to the owner, which takes its allocations; what it did not take is freed. */
static void report(struct sbt_dnsproxy *px, struct sbt_dns_event *ev)
{
	px->o.event(px->o.arg, ev);
	sbt_dns_event_free(ev);
}

/* Answer here: a refusal of q with rcode, and the event saying why. */
static int refuse(struct sbt_dnsproxy *px, const uint8_t *msg, const struct sbt_dns_question *q,
		  uint8_t rcode, struct sbt_dns_event *ev, const char *reason, uint8_t *out,
		  size_t cap)
{
	ev->allowed = false;
	ev->reason = reason;
	ev->reply = rcode_reply(rcode);
	report(px, ev);
	return sbt_dns_build_refusal(msg, q, rcode, out, cap);
}

/* Split an answer's addresses into those to learn and those inside the floor. */
static int split_floor(const struct sbt_egress_cfg *cfg, struct sbt_dns_event *ev,
		       struct sbt_dns_addr *a, size_t n)
{
	ev->addrs = calloc(n ? n : 1, sizeof(*ev->addrs));
	ev->floored = calloc(n ? n : 1, sizeof(*ev->floored));
	ev->floored_idx = calloc(n ? n : 1, sizeof(*ev->floored_idx));
	if (!ev->addrs || !ev->floored || !ev->floored_idx)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		int f = sbt_policy_answer_floor(a[i].addr, cfg->rules, cfg->nr_rules);

		if (f >= 0) {
			ev->floored[ev->nr_floored] = a[i];
			ev->floored_idx[ev->nr_floored++] = (uint32_t)f;
		} else {
			ev->addrs[ev->nr_addrs++] = a[i];
		}
	}
	return 0;
}

/*
 * The upstream's answer to an allowed name: checked against the question,
 * every address learned (the floor never), then passed on. Its length.
 */
static int pass_answer(struct sbt_dnsproxy *px, const uint8_t *msg,
		       const struct sbt_dns_question *q, int rule, uint8_t *resp, size_t rlen,
		       struct sbt_dns_event *ev, uint8_t *out, size_t cap)
{
	const struct sbt_egress_cfg *cfg = px->o.cfg;
	struct sbt_dns_addr *a = calloc(LEARN_ADDRS_MAX, sizeof(*a));
	enum sbt_dns_status st;
	size_t n = 0;
	uint32_t ttl = 0;
	int err = 0, alen;

	if (!a)
		return refuse(px, msg, q, SBT_DNS_RCODE_SERVFAIL, ev, "upstream_error", out, cap);
	st = sbt_dns_parse_response(resp, rlen, q->id, q->name, q->qtype, a, LEARN_ADDRS_MAX, &n,
				    &ttl);
	ev->status = sbt_dns_status_str(st);
	ev->ttl = ttl;
	if (st == SBT_DNS_MISMATCH || st == SBT_DNS_MALFORMED) {
		free(a);
		return refuse(px, msg, q, SBT_DNS_RCODE_SERVFAIL, ev, "upstream_error", out, cap);
	}
	for (size_t i = 0; i < n; i++)
		if (a[i].ttl > TTL_MAX_S)
			a[i].ttl = TTL_MAX_S;
	err = split_floor(cfg, ev, a, n);
	free(a);
	if (err)
		return refuse(px, msg, q, SBT_DNS_RCODE_SERVFAIL, ev, "upstream_error", out, cap);
	if (ev->nr_floored) /* floor first: the answer is refused, nothing learned */
		return refuse(px, msg, q, SBT_DNS_RCODE_REFUSED, ev, "floor", out, cap);
	/* learn mode, a name no rule allows: learned for its name only, allowing nothing */
	if (rule < 0)
		err = px->o.learn(px->o.arg, px->o.slot, SBT_DNS_LEARN_NAME_ONLY, q->name,
				  ev->addrs, ev->nr_addrs, ev->ts);
	/* every host rule naming it (ports and protocols differ), the first one included */
	for (size_t i = rule < 0 ? cfg->nr_rules : (size_t)rule; !err && i < cfg->nr_rules; i++)
		if (cfg->rules[i].kind == SBT_RULE_HOST && strcmp(cfg->rules[i].host, q->name) == 0)
			err = px->o.learn(px->o.arg, px->o.slot, (uint32_t)i, q->name, ev->addrs,
					  ev->nr_addrs, ev->ts);
	if (err)
		return refuse(px, msg, q, SBT_DNS_RCODE_SERVFAIL, ev,
			      err == -ENOSPC ? "limit" : "upstream_error", out, cap);
	alen = sbt_dns_build_answer(msg, q, resp, rlen, ev->proto == 6 ? 65535 : q->udp_size, out,
				    cap);
	if (alen < 0)
		return refuse(px, msg, q, SBT_DNS_RCODE_SERVFAIL, ev, "upstream_error", out, cap);
	ev->allowed = true;
	ev->reply = "answer";
	report(px, ev);
	return alen;
}

/* One query from the sandbox: the reply's length into out, 0 for none. */
static int handle_query(struct sbt_dnsproxy *px, uint8_t *msg, size_t len, bool tcp, uint8_t *out,
			size_t cap)
{
	const struct sbt_egress_cfg *cfg = px->o.cfg;
	struct sbt_dns_event ev = { .slot = px->o.slot, .proto = tcp ? 6 : 17 };
	struct sbt_dns_question q;
	uint8_t upq[SBT_DNS_UPSTREAM_MAX], *resp;
	uint16_t our_id;
	int rule, r, qlen;

	if (sbt_dns_parse_query(msg, len, &q))
		return 0; /* not a query: no answer */
	ev.ts = sbt_now_epoch_ns();
	snprintf(ev.name, sizeof(ev.name), "%s", q.name);
	ev.qtype = q.qtype;
	ev.grace_s = cfg->dns_grace_set ? cfg->dns_grace_s : SBT_DNS_GRACE_DEFAULT_S;
	rule = host_rule_of(cfg, &q);
	if (rule < 0 && !(cfg->learn && q.name_ok && q.qclass == 1))
		return refuse(px, msg, &q, cfg->dns_deny_rcode ? cfg->dns_deny_rcode : 5, &ev,
			      "dns_name", out, cap);
	ev.answer = true;
	ev.rule_id = rule < 0 ? 0 : cfg->rules[rule].id;
	if (!px->o.has_resolver)
		return refuse(px, msg, &q, SBT_DNS_RCODE_SERVFAIL, &ev, "upstream_error", out, cap);
	/* the question, not the client's bytes: nothing of its own reaches the upstream */
	our_id = upstream_id(px);
	qlen = sbt_dns_build_upstream(our_id, &q, upq, sizeof(upq));
	resp = qlen > 0 ? malloc(MSG_MAX) : NULL;
	r = resp ? ask_upstream(px, tcp, upq, (size_t)qlen, &q, resp, MSG_MAX) : -ENOMEM;
	if (r < 12 || sbt_dns_msg_id(resp) != our_id) {
		free(resp);
		return refuse(px, msg, &q, SBT_DNS_RCODE_SERVFAIL, &ev, "upstream_error", out, cap);
	}
	sbt_dns_set_id(resp, q.id);
	r = pass_answer(px, msg, &q, rule, resp, (size_t)r, &ev, out, cap);
	free(resp);
	return r;
}

/* --- the loop ------------------------------------------------------------------- */

static void serve_udp(struct sbt_dnsproxy *px, int fd)
{
	struct sockaddr_storage from;
	socklen_t fl = sizeof(from);
	ssize_t n = recvfrom(fd, px->buf, MSG_MAX, MSG_DONTWAIT, (struct sockaddr *)&from, &fl);
	int r;

	if (n <= 0)
		return;
	r = handle_query(px, px->buf, (size_t)n, false, px->out, MSG_MAX);
	if (r > 0)
		sendto(fd, px->out, (size_t)r, MSG_DONTWAIT, (struct sockaddr *)&from, fl);
}

static void serve_tcp(struct sbt_dnsproxy *px, int lfd)
{
	struct timeval tv = { .tv_sec = CLIENT_TIMEOUT_S };
	int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

	if (fd < 0)
		return;
	fcntl(fd, F_SETFL, 0);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	for (int i = 0; i < TCP_QUERIES_MAX; i++) {
		uint8_t len[2];
		size_t n;
		int r;

		if (recv(fd, len, 2, MSG_WAITALL) != 2)
			break;
		n = (size_t)(len[0] << 8 | len[1]);
		if (n < 12 || recv(fd, px->buf, n, MSG_WAITALL) != (ssize_t)n)
			break;
		r = handle_query(px, px->buf, n, true, px->out + 2, MSG_MAX - 2);
		if (r <= 0)
			break;
		px->out[0] = (uint8_t)(r >> 8);
		px->out[1] = (uint8_t)r;
		if (send(fd, px->out, (size_t)r + 2, MSG_NOSIGNAL) != r + 2)
			break;
	}
	close(fd);
}

/*
 * The thread's upstream sockets are made in the resolver's network namespace,
 * entered once here (setns changes only the calling thread): a query pays no
 * thread of its own nor a setns (~60 us each, most of what the proxy added).
 */
static void enter_resolver_netns(struct sbt_dnsproxy *px)
{
	if (px->up_nsfd < 0)
		return;
	if (setns(px->up_nsfd, CLONE_NEWNET) < 0) {
		px->up_err = -errno;
		sbt_log("egress: sandbox %s: its DNS proxy cannot enter the resolver's network "
			"namespace (%s): every allowed name gets SERVFAIL; is that namespace gone?",
			px->name, strerror(errno));
	}
	close(px->up_nsfd);
	px->up_nsfd = -1;
}

static void *proxy_thread(void *arg)
{
	struct sbt_dnsproxy *px = arg;

	enter_resolver_netns(px);
	upstream_prepare(px);
	for (;;) {
		struct pollfd p[NR_FDS + 1];
		int k;

		for (k = 0; k < NR_FDS; k++) {
			p[k].fd = px->fds[k];
			p[k].events = POLLIN;
			p[k].revents = 0;
		}
		p[NR_FDS].fd = px->stop[0];
		p[NR_FDS].events = POLLIN;
		p[NR_FDS].revents = 0;
		if (poll(p, NR_FDS + 1, -1) < 0 && errno != EINTR)
			break;
		if (p[NR_FDS].revents)
			break;
		for (k = 0; k < NR_FDS; k++) {
			if (!(p[k].revents & POLLIN))
				continue;
			if ((k & 3) == SBT_DNS_TCP4 || (k & 3) == SBT_DNS_TCP6)
				serve_tcp(px, px->fds[k]);
			else
				serve_udp(px, px->fds[k]);
			upstream_prepare(px);
		}
	}
	return NULL;
}

static void proxy_free(struct sbt_dnsproxy *px)
{
	for (int k = 0; k < NR_FDS; k++)
		if (px->fds[k] >= 0)
			close(px->fds[k]);
	if (px->stop[0] >= 0)
		close(px->stop[0]);
	if (px->stop[1] >= 0)
		close(px->stop[1]);
	if (px->up_nsfd >= 0)
		close(px->up_nsfd);
	for (int tcp = 0; tcp < 2; tcp++)
		if (px->up_ahead[tcp] >= 0)
			close(px->up_ahead[tcp]);
	if (px->up_spent >= 0)
		close(px->up_spent);
	free(px->buf);
	free(px->out);
	free(px);
}

/* The loopback sockets of a cgroup sandbox (nsfd): 0 or -errno (IPv4 is needed). */
static int open_loopback(struct sbt_dnsproxy *px, int nsfd)
{
	for (int k = 0; k < 4; k++) {
		int fd = open_one(nsfd, k, NULL, &px->ports[k]);

		/* IPv6 may be off in the sandbox: its DNS is then IPv4 only */
		if (fd < 0 && (k == SBT_DNS_UDP4 || k == SBT_DNS_TCP4))
			return fd;
		px->fds[k] = fd;
	}
	return 0;
}

/* The sockets on a tap's host-side addresses: 0 when one family has both. */
static int open_tap(struct sbt_dnsproxy *px, struct sbt_dnsproxy_tap *tap)
{
	int err = -EADDRNOTAVAIL;

	for (int k = 0; k < 4; k++) {
		bool v6 = k == SBT_DNS_UDP6 || k == SBT_DNS_TCP6;
		int fd;

		if (!(v6 ? tap->has6 : tap->has4))
			continue;
		fd = open_one(tap->nsfd, k, v6 ? tap->host6 : tap->host4, &px->ports[4 + k]);
		if (fd >= 0)
			px->fds[4 + k] = fd;
		else
			err = fd;
	}
	/* a family is served only with both of its sockets (UDP, and TCP for truncation) */
	for (int k = 0; k < 4; k += 2) {
		if (px->fds[4 + k] >= 0 && px->fds[4 + k + 1] >= 0) {
			tap->port[k] = px->ports[4 + k];
			tap->port[k + 1] = px->ports[4 + k + 1];
			err = 0;
		}
	}
	return err;
}

struct sbt_dnsproxy *sbt_dnsproxy_start(const struct sbt_dnsproxy_owner *o, const char *name,
					int sb_nsfd, struct sbt_dnsproxy_tap *tap, int *errp)
{
	struct sbt_dnsproxy *px = calloc(1, sizeof(*px));
	const char *where = "on its loopback";
	int err = 0;

	*errp = -ENOMEM;
	if (!px)
		return NULL;
	px->o = *o;
	px->stop[0] = px->stop[1] = -1;
	px->up_ahead[0] = px->up_ahead[1] = px->up_spent = -1;
	snprintf(px->name, sizeof(px->name), "%s", name);
	for (int k = 0; k < NR_FDS; k++)
		px->fds[k] = -1;
	/* the thread's own reference: the owner's fd may be closed before the thread enters it */
	px->up_nsfd = o->resolver_nsfd >= 0 ? fcntl(o->resolver_nsfd, F_DUPFD_CLOEXEC, 0) : -1;
	px->buf = malloc(MSG_MAX + 2);
	px->out = malloc(MSG_MAX + 2);
	if (!px->buf || !px->out || pipe2(px->stop, O_CLOEXEC) < 0 ||
	    (o->resolver_nsfd >= 0 && px->up_nsfd < 0)) {
		proxy_free(px);
		return NULL;
	}
	if (sb_nsfd >= 0)
		err = open_loopback(px, sb_nsfd);
	if (!err && tap) {
		memset(tap->port, 0, sizeof(tap->port));
		where = "on its tap's host-side address";
		err = open_tap(px, tap);
	}
	if (!err && pthread_create(&px->thread, NULL, proxy_thread, px) != 0)
		err = -EAGAIN;
	*errp = err;
	if (err) {
		sbt_log("egress: sandbox %s: cannot open its DNS proxy %s (%s): its DNS is judged "
			"like any traffic; %s",
			name, where, strerror(-err),
			tap ? "does the tap have an address on the host side?"
			    : "is lo up in its network namespace?");
		if (tap)
			memset(tap->port, 0, sizeof(tap->port));
		proxy_free(px);
		return NULL;
	}
	px->running = true;
	return px;
}

void sbt_dnsproxy_ports(const struct sbt_dnsproxy *px, uint16_t port[4])
{
	for (int k = 0; k < 4; k++)
		port[k] = px && px->fds[k] >= 0 ? px->ports[k] : 0;
}

void sbt_dnsproxy_stop(struct sbt_dnsproxy *px)
{
	if (!px)
		return;
	if (px->running) {
		(void)!write(px->stop[1], "x", 1);
		pthread_join(px->thread, NULL);
	}
	proxy_free(px);
}
