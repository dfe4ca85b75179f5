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
 */
#include <arpa/inet.h>
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
	fprintf(stderr, "usage: sbt-lookup connect NAME PORT COUNT | all NAME PORT | bench NAME "
			"COUNT\n");
	return 2;
}
