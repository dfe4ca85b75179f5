// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Benchmark helper: a TCP connect storm on loopback from inside a cgroup.
 *
 *   connect_storm CGROUP_DIR SECONDS PORT
 *
 * Joins the cgroup, serves 127.0.0.1:PORT from a thread (accept, close) and
 * connects/closes in a loop for SECONDS (SO_LINGER 0: no TIME_WAIT pile-up).
 * Prints "connects N seconds S rate R" and exits 0; 1 on any failure.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static int listen_fd;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *serve(void *arg)
{
	(void)arg;
	for (;;) {
		int c = accept(listen_fd, NULL, NULL);

		if (c < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			return NULL;
		}
		close(c);
	}
}

static int join_cgroup(const char *dir)
{
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, "0", 1) != 1) {
		fprintf(stderr, "connect_storm: join %s: %s\n", dir, strerror(errno));
		return -1;
	}
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };
	double secs, t0, t;
	unsigned long n = 0;
	pthread_t th;
	int one = 1;

	if (argc != 4) {
		fprintf(stderr, "usage: connect_storm CGROUP_DIR SECONDS PORT\n");
		return 2;
	}
	secs = atof(argv[2]);
	sa.sin_port = htons((unsigned short)atoi(argv[3]));
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (join_cgroup(argv[1]))
		return 1;
	listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	setsockopt(listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (listen_fd < 0 || bind(listen_fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    listen(listen_fd, 4096)) {
		fprintf(stderr, "connect_storm: listen: %s\n", strerror(errno));
		return 1;
	}
	if (pthread_create(&th, NULL, serve, NULL)) {
		fprintf(stderr, "connect_storm: thread\n");
		return 1;
	}
	t0 = now_s();
	do {
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

		if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
			fprintf(stderr, "connect_storm: connect: %s\n", strerror(errno));
			return 1;
		}
		setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
		close(fd);
		n++;
		t = now_s();
	} while (t - t0 < secs);
	printf("connects %lu seconds %.3f rate %.1f\n", n, t - t0, (double)n / (t - t0));
	return 0;
}
