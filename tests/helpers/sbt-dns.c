// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Test helper: a tiny authoritative DNS server for the cases dnsmasq cannot
 * make (run in the test's own "host" network namespace):
 *
 *   sbt-dns --listen A.B.C.D --log FILE
 *
 * UDP and TCP on A.B.C.D:53. Its zone, fixed:
 *   rot.test A   2 of the 6 addresses 198.51.100.10-15, a different pair on
 *                each query (a load balancer), TTL 1
 *   big.test A   40 records 203.0.113.100-139, TTL 30: more than a 512-byte
 *                UDP reply holds, so over UDP the answer is cut to its header
 *                and question with TC set (the client retries over TCP)
 *   floor.test A 198.51.100.10 and 169.254.169.254 (the floor's metadata
 *                address), TTL 30
 *   tc.test A    198.51.100.20, TTL 1, over TCP only (over UDP: TC, no
 *                records; a resolver that never retries over TCP learns nothing)
 *   alias.test   CNAME cdn.test, and cdn.test A 203.0.113.100, 203.0.113.101,
 *                TTL 30 (a name behind a CNAME, the chain in one answer)
 *   AAAA of those: no data (NOERROR, no records); anything else: NXDOMAIN.
 * Logs "<udp|tcp> <name> <qtype number>" per query, then "hdr <udp|tcp> <name>
 * flags=<hex> ar=<additional count> extra=<bytes after the question>" (the
 * name's bytes as sent: their case; flushed at once), prints
 * "ready" once listening, runs until SIGTERM/SIGINT.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#define UDP_MAX 512

static volatile sig_atomic_t stop_flag;
static unsigned int rot_counter;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

static void put16(uint8_t *p, unsigned int v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* The question's name as dotted text (no compression in queries); its end. */
static int read_qname(const uint8_t *m, size_t len, char *out, size_t outlen, size_t *end)
{
	size_t p = 12, o = 0;

	while (p < len && m[p]) {
		size_t l = m[p++];

		if (l > 63 || p + l > len || o + l + 2 > outlen)
			return -1;
		if (o)
			out[o++] = '.';
		memcpy(out + o, m + p, l);
		o += l;
		p += l;
	}
	if (p >= len)
		return -1;
	out[o] = '\0';
	*end = p + 1;
	return 0;
}

/* Append one A record (name as a pointer to the question) at *o. */
static void add_a(uint8_t *r, size_t *o, uint32_t ttl, const uint8_t a[4])
{
	put16(r + *o, 0xc00c);
	put16(r + *o + 2, 1);
	put16(r + *o + 4, 1);
	put16(r + *o + 6, ttl >> 16);
	put16(r + *o + 8, ttl & 0xffff);
	put16(r + *o + 10, 4);
	memcpy(r + *o + 12, a, 4);
	*o += 16;
}

/* Append a CNAME of the question to cdn.test, then cdn.test's two A records. */
static void add_alias(uint8_t *r, size_t *o, unsigned int *n)
{
	static const uint8_t target[] = { 3, 'c', 'd', 'n', 4, 't', 'e', 's', 't', 0 };
	size_t rdata;

	put16(r + *o, 0xc00c);
	put16(r + *o + 2, 5);
	put16(r + *o + 4, 1);
	put16(r + *o + 6, 0);
	put16(r + *o + 8, 30);
	put16(r + *o + 10, sizeof(target));
	rdata = *o + 12;
	memcpy(r + rdata, target, sizeof(target));
	*o = rdata + sizeof(target);
	for (unsigned int i = 0; i < 2; i++) {
		put16(r + *o, 0xc000 | (unsigned int)rdata);
		put16(r + *o + 2, 1);
		put16(r + *o + 4, 1);
		put16(r + *o + 6, 0);
		put16(r + *o + 8, 30);
		put16(r + *o + 10, 4);
		r[*o + 12] = 203;
		r[*o + 13] = 0;
		r[*o + 14] = 113;
		r[*o + 15] = (uint8_t)(100 + i);
		*o += 16;
	}
	*n += 3;
}

/* The answer to query m (len bytes) into r (cap >= 1024); its length, 0 for none. */
static size_t answer(const uint8_t *m, size_t len, uint8_t *r, int tcp, FILE *log)
{
	char name[256];
	size_t qend, o;
	unsigned int qtype, n = 0, rcode = 0, tc_only = 0;

	if (len < 12 || (m[2] & 0x80) || m[4] != 0 || m[5] != 1 ||
	    read_qname(m, len, name, sizeof(name), &qend) || qend + 4 > len)
		return 0;
	qtype = (unsigned int)(m[qend] << 8 | m[qend + 1]);
	fprintf(log, "%s %s %u\n", tcp ? "tcp" : "udp", name, qtype);
	/* what else the query carried: its name's bytes as sent, flags, additional records */
	fprintf(log, "hdr %s %s flags=%02x%02x ar=%u extra=%zu\n", tcp ? "tcp" : "udp", name, m[2],
		m[3], (unsigned int)(m[10] << 8 | m[11]), len - (qend + 4));
	fflush(log);
	memcpy(r, m, qend + 4);
	o = qend + 4;
	if (strcasecmp(name, "rot.test") == 0 && qtype == 1) {
		unsigned int k = rot_counter++;

		for (unsigned int i = 0; i < 2; i++) {
			uint8_t a[4] = { 198, 51, 100, (uint8_t)(10 + (2 * k + i) % 6) };

			add_a(r, &o, 1, a);
			n++;
		}
	} else if (strcasecmp(name, "big.test") == 0 && qtype == 1) {
		for (unsigned int i = 0; i < 40; i++) {
			uint8_t a[4] = { 203, 0, 113, (uint8_t)(100 + i) };

			add_a(r, &o, 30, a);
			n++;
		}
	} else if (strcasecmp(name, "floor.test") == 0 && qtype == 1) {
		static const uint8_t fa[2][4] = { { 198, 51, 100, 10 }, { 169, 254, 169, 254 } };

		for (unsigned int i = 0; i < 2; i++, n++)
			add_a(r, &o, 30, fa[i]);
	} else if (strcasecmp(name, "tc.test") == 0 && qtype == 1) {
		static const uint8_t ta[4] = { 198, 51, 100, 20 };

		add_a(r, &o, 1, ta);
		n++;
		tc_only = 1;
	} else if (strcasecmp(name, "alias.test") == 0 && qtype == 1) {
		add_alias(r, &o, &n);
	} else if (strcasecmp(name, "rot.test") != 0 && strcasecmp(name, "big.test") != 0 &&
		   strcasecmp(name, "floor.test") != 0 && strcasecmp(name, "tc.test") != 0 &&
		   strcasecmp(name, "alias.test") != 0) {
		rcode = 3;
	}
	r[2] = (uint8_t)(0x84 | (m[2] & 0x01)); /* QR, AA, RD echoed */
	r[3] = (uint8_t)rcode;
	put16(r + 4, 1);
	put16(r + 6, n);
	put16(r + 8, 0);
	put16(r + 10, 0);
	if (!tcp && (o > UDP_MAX || tc_only)) { /* does not fit: TC, header and question only */
		r[2] |= 0x02;
		put16(r + 6, 0);
		o = qend + 4;
	}
	return o;
}

static void serve_tcp(int lfd, FILE *log)
{
	uint8_t q[1024], r[1024 + 2];
	struct timeval tv = { .tv_sec = 2 };
	int fd = accept(lfd, NULL, NULL);

	if (fd < 0)
		return;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	for (;;) {
		uint8_t l[2];
		size_t n, rl;

		if (recv(fd, l, 2, MSG_WAITALL) != 2)
			break;
		n = (size_t)(l[0] << 8 | l[1]);
		if (n > sizeof(q) || recv(fd, q, n, MSG_WAITALL) != (ssize_t)n)
			break;
		rl = answer(q, n, r + 2, 1, log);
		if (!rl)
			break;
		put16(r, (unsigned int)rl);
		if (send(fd, r, rl + 2, MSG_NOSIGNAL) != (ssize_t)(rl + 2))
			break;
	}
	close(fd);
}

int main(int argc, char **argv)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(53) };
	const char *listen_addr = NULL, *log_path = NULL;
	struct sigaction act = { .sa_handler = on_signal };
	int one = 1, ufd, tfd;
	FILE *log;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--listen") == 0)
			listen_addr = argv[i + 1];
		else if (strcmp(argv[i], "--log") == 0)
			log_path = argv[i + 1];
	}
	if (!listen_addr || !log_path || inet_pton(AF_INET, listen_addr, &sa.sin_addr) != 1) {
		fprintf(stderr, "usage: sbt-dns --listen A.B.C.D --log FILE\n");
		return 2;
	}
	log = fopen(log_path, "a");
	ufd = socket(AF_INET, SOCK_DGRAM, 0);
	tfd = socket(AF_INET, SOCK_STREAM, 0);
	if (!log || ufd < 0 || tfd < 0)
		return perror("sbt-dns"), 1;
	setsockopt(tfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(ufd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    bind(tfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(tfd, 16) < 0)
		return perror("sbt-dns: bind"), 1;
	sigaction(SIGTERM, &act, NULL);
	sigaction(SIGINT, &act, NULL);
	printf("ready\n");
	fflush(stdout);
	while (!stop_flag) {
		struct pollfd p[2] = { { .fd = ufd, .events = POLLIN },
				       { .fd = tfd, .events = POLLIN } };
		uint8_t q[1024], r[1024];
		struct sockaddr_storage from;
		socklen_t fl = sizeof(from);
		ssize_t n;
		size_t rl;

		if (poll(p, 2, 200) <= 0)
			continue;
		if (p[1].revents & POLLIN)
			serve_tcp(tfd, log);
		if (!(p[0].revents & POLLIN))
			continue;
		n = recvfrom(ufd, q, sizeof(q), 0, (struct sockaddr *)&from, &fl);
		if (n <= 0)
			continue;
		rl = answer(q, (size_t)n, r, 0, log);
		if (rl)
			sendto(ufd, r, rl, 0, (struct sockaddr *)&from, fl);
	}
	fclose(log);
	return 0;
}
