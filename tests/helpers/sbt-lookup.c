// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Test helper (sandbox side): lookups then connects by name, as an
 * application does, in one process.
 *
 *   sbt-lookup connect NAME PORT COUNT
 *	COUNT times: getaddrinfo(NAME, IPv4, TCP), then connect to the first
 *	address at once and read its greeting. Prints
 *	"ok <n> eperm <n> other <n> nxname <n>" (exit 0 when every try worked).
 *   sbt-lookup all NAME PORT
 *	one getaddrinfo, then a connect to every address it gave. Prints
 *	"addrs <n> ok <n> eperm <n> other <n>".
 *   sbt-lookup bench NAME COUNT
 *	COUNT getaddrinfo calls; prints "median_us <n> p99_us <n> failed <n>".
 *   sbt-lookup raw NAME SERVER
 *	one UDP query for NAME (A) as a client with something to smuggle sends
 *	it to SERVER:53: the name's letters in alternating case (0x20), the CD
 *	and AD bits, an EDNS record with the DO bit, a cookie and padding, and
 *	a TXT record in the additional section. Prints "ok <the question's
 *	name as answered> an <n> ar <n> tc <0|1>", or "err <reason>".
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static int lookup(const char *name, struct addrinfo **res)
{
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM };

	return getaddrinfo(name, NULL, &hints, res);
}

/* 0 ok, else the errno of the connect (or of reading the greeting). */
static int try_connect(const struct sockaddr *sa, socklen_t sl, int port)
{
	struct sockaddr_in sin;
	struct timeval tv = { .tv_sec = 2 };
	char buf[16];
	int fd = socket(AF_INET, SOCK_STREAM, 0), err = 0;

	memcpy(&sin, sa, sizeof(sin) < sl ? sizeof(sin) : sl);
	sin.sin_port = htons((uint16_t)port);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0)
		err = errno;
	else if (read(fd, buf, sizeof(buf)) <= 0)
		err = EIO;
	close(fd);
	return err;
}

static int cmp_u64(const void *a, const void *b)
{
	unsigned long long x = *(const unsigned long long *)a, y = *(const unsigned long long *)b;

	return x < y ? -1 : x > y;
}

/* The raw query (see the usage above) into q; its length. */
static size_t hostile_query(const char *name, uint8_t *q)
{
	static const uint8_t tail[] = {
		0,   1,	  0,   1,					/* A, IN */
		0,   0,	  41,  0x10, 0,	  0,   0,   0x80, 0,   0,   28, /* OPT 4096, DO, RDLEN 28 */
		0,   10,  0,   8,    's', 'm', 'u', 'g',  'g', 'l', 'e', '!', /* COOKIE */
		0,   12,  0,   12,   0,	  0,   0,   0,	  0,   0,   0,	 0,
		0,   0,	  0,   0, /* PADDING */
		0,   0,	  16,  0,    1,	  0,   0,   0,	  0,   0,   5,	 4,
		'l', 'e', 'a', 'k', /* TXT */
	};
	size_t o = 12, k = 0;

	memset(q, 0, 12);
	q[0] = 0x5a;
	q[1] = 0x20;
	q[2] = 0x01; /* RD */
	q[3] = 0x30; /* AD, CD */
	q[5] = 1;    /* QDCOUNT */
	q[11] = 2;   /* ARCOUNT */
	for (const char *p = name; *p && o < 260;) {
		size_t l = strcspn(p, ".");

		q[o++] = (uint8_t)l;
		for (size_t i = 0; i < l; i++, k++)
			q[o++] = (uint8_t)((k % 2) ? toupper((unsigned char)p[i]) : p[i]);
		p += l + (p[l] == '.');
	}
	q[o++] = 0;
	memcpy(q + o, tail, sizeof(tail));
	return o + sizeof(tail);
}

static int raw_query(const char *name, const char *server)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(53) };
	struct timeval tv = { .tv_sec = 2 };
	uint8_t q[512], r[4096];
	char got[256];
	size_t ql = hostile_query(name, q), p = 12, o = 0;
	ssize_t n;
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	if (fd < 0 || inet_pton(AF_INET, server, &sin.sin_addr) != 1) {
		printf("err setup\n");
		return 1;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (sendto(fd, q, ql, 0, (struct sockaddr *)&sin, sizeof(sin)) != (ssize_t)ql ||
	    (n = recv(fd, r, sizeof(r), 0)) < 12) {
		printf("err %s\n", strerror(errno));
		return 1;
	}
	while (p < (size_t)n && r[p] && o + r[p] + 2 < sizeof(got)) {
		size_t l = r[p++];

		if (p + l > (size_t)n)
			break;
		if (o)
			got[o++] = '.';
		memcpy(got + o, r + p, l);
		o += l;
		p += l;
	}
	got[o] = '\0';
	printf("ok %s an %u ar %u tc %u\n", got, (unsigned int)(r[6] << 8 | r[7]),
	       (unsigned int)(r[10] << 8 | r[11]), (unsigned int)((r[2] >> 1) & 1));
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	int ok = 0, eperm = 0, other = 0, nx = 0;

	if (argc == 5 && strcmp(argv[1], "connect") == 0) {
		int count = atoi(argv[4]), port = atoi(argv[3]);

		for (int i = 0; i < count; i++) {
			struct addrinfo *res;
			int e;

			if (lookup(argv[2], &res)) {
				nx++;
				continue;
			}
			e = try_connect(res->ai_addr, res->ai_addrlen, port);
			if (e == EPERM) {
				char a[INET_ADDRSTRLEN];

				inet_ntop(AF_INET, &((struct sockaddr_in *)res->ai_addr)->sin_addr,
					  a, sizeof(a));
				fprintf(stderr, "sbt-lookup: try %d: %s: EPERM\n", i + 1, a);
			}
			ok += e == 0;
			eperm += e == EPERM;
			other += e && e != EPERM;
			freeaddrinfo(res);
		}
		printf("ok %d eperm %d other %d nxname %d\n", ok, eperm, other, nx);
		return ok == count ? 0 : 1;
	}
	if (argc == 4 && strcmp(argv[1], "all") == 0) {
		struct addrinfo *res;
		int n = 0;

		if (lookup(argv[2], &res)) {
			printf("addrs 0 ok 0 eperm 0 other 0\n");
			return 1;
		}
		for (struct addrinfo *ai = res; ai; ai = ai->ai_next, n++) {
			int e = try_connect(ai->ai_addr, ai->ai_addrlen, atoi(argv[3]));

			ok += e == 0;
			eperm += e == EPERM;
			other += e && e != EPERM;
		}
		freeaddrinfo(res);
		printf("addrs %d ok %d eperm %d other %d\n", n, ok, eperm, other);
		return ok == n ? 0 : 1;
	}
	if (argc == 4 && strcmp(argv[1], "raw") == 0)
		return raw_query(argv[2], argv[3]);
	if (argc == 4 && strcmp(argv[1], "bench") == 0) {
		int count = atoi(argv[3]), failed = 0;
		unsigned long long *us = calloc((size_t)(count > 0 ? count : 1), sizeof(*us));

		for (int i = 0; i < count && us; i++) {
			struct timespec a, b;
			struct addrinfo *res;

			clock_gettime(CLOCK_MONOTONIC, &a);
			if (lookup(argv[2], &res))
				failed++;
			else
				freeaddrinfo(res);
			clock_gettime(CLOCK_MONOTONIC, &b);
			us[i] = (unsigned long long)((b.tv_sec - a.tv_sec) * 1000000LL +
						     (b.tv_nsec - a.tv_nsec) / 1000);
		}
		if (!us || count <= 0)
			return 2;
		qsort(us, (size_t)count, sizeof(*us), cmp_u64);
		printf("median_us %llu p99_us %llu failed %d\n", us[count / 2],
		       us[(count * 99) / 100 < count ? (count * 99) / 100 : count - 1], failed);
		free(us);
		return failed ? 1 : 0;
	}
	fprintf(stderr, "usage: sbt-lookup connect NAME PORT COUNT | all NAME PORT | raw NAME "
			"SERVER | bench NAME "
			"COUNT\n");
	return 2;
}
