// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Test helper: the service manager's end of sd_notify(3), for testing a
 * Type=notify service without systemd.
 *
 *   sbt-notify-listen SOCKET SECONDS [UNTIL]
 *
 * Binds an AF_UNIX datagram socket at SOCKET (a path, which must not exist
 * yet, or "@name": an abstract name) and prints each assignment of each
 * datagram received as a line "PID VAR=VALUE", PID the sender's (from its
 * credentials: what NotifyAccess=main judges). Exits 0 once a datagram held
 * the line UNTIL (default READY=1), 1 when SECONDS pass first (or on SIGINT,
 * SIGTERM), 2 on a usage or socket error. A path is bound before anything
 * else and removed at exit: the socket file's existence says it listens (and
 * so does the line "sbt-notify-listen: listening on SOCKET" on stderr).
 * File descriptors sent along (sd_notify_barrier(3)'s BARRIER=1) are closed
 * at once, which answers the barrier.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = sig;
}

static int bind_at(const char *name)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	size_t n = strlen(name);
	int fd, on = 1;

	if ((name[0] != '/' && name[0] != '@') || n < 2 ||
	    n >= sizeof(sun.sun_path) + (name[0] == '@')) {
		fprintf(stderr, "sbt-notify-listen: %s: not an absolute path or @name that fits\n",
			name);
		return -1;
	}
	memcpy(sun.sun_path, name, n);
	if (name[0] == '@')
		sun.sun_path[0] = '\0';
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &on, sizeof(on)) ||
	    bind(fd, (struct sockaddr *)&sun,
		 (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + (name[0] != '@')))) {
		fprintf(stderr, "sbt-notify-listen: bind %s: %s\n", name, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* One datagram: its lines printed; 1 when one of them is `until`, 0 if not, -1 on error. */
static int receive(int fd, const char *until)
{
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(sizeof(struct ucred)) + CMSG_SPACE(16 * sizeof(int))];
	} ctl;
	char buf[4097], *line, *save;
	struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) - 1 };
	struct msghdr msg = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = ctl.b,
		.msg_controllen = sizeof(ctl.b),
	};
	struct cmsghdr *c;
	ssize_t n = recvmsg(fd, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	long pid = 0;
	int seen = 0;

	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -1;
	buf[n] = '\0';
	for (c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS) {
			struct ucred uc;

			memcpy(&uc, CMSG_DATA(c), sizeof(uc));
			pid = uc.pid;
		} else if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
			/* BARRIER=1's fd: closing it is the answer the sender waits for */
			size_t nfd = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);

			for (size_t i = 0; i < nfd; i++) {
				int rfd;

				memcpy(&rfd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
				close(rfd);
			}
		}
	if (msg.msg_flags & MSG_TRUNC)
		fprintf(stderr, "sbt-notify-listen: a datagram beyond %zu bytes, cut\n",
			sizeof(buf) - 1);
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		printf("%ld %s\n", pid, line);
		seen |= !strcmp(line, until);
	}
	fflush(stdout);
	return seen;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };
	const char *until = argc > 3 ? argv[3] : "READY=1";
	double secs, deadline;
	char *end;
	int fd, ret = 1;

	if (argc < 3 || argc > 4) {
		fprintf(stderr, "usage: sbt-notify-listen SOCKET SECONDS [UNTIL]\n");
		return 2;
	}
	secs = strtod(argv[2], &end);
	if (*end || end == argv[2] || secs <= 0) {
		fprintf(stderr, "sbt-notify-listen: SECONDS: a number > 0, not '%s'\n", argv[2]);
		return 2;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	fd = bind_at(argv[1]);
	if (fd < 0)
		return 2;
	fprintf(stderr, "sbt-notify-listen: listening on %s\n", argv[1]);
	deadline = now() + secs;
	while (!stop) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		double left = deadline - now();
		int r;

		if (left <= 0)
			break;
		r = poll(&p, 1, (int)(left * 1000) + 1);
		if (r < 0 && errno != EINTR) {
			fprintf(stderr, "sbt-notify-listen: poll: %s\n", strerror(errno));
			ret = 2;
			break;
		}
		if (r <= 0)
			continue;
		r = receive(fd, until);
		if (r < 0) {
			fprintf(stderr, "sbt-notify-listen: recvmsg: %s\n", strerror(errno));
			ret = 2;
			break;
		}
		if (r > 0) {
			ret = 0;
			break;
		}
	}
	if (ret == 1)
		fprintf(stderr, "sbt-notify-listen: no %s within %s s%s\n", until, argv[2],
			stop ? " (stopped by a signal)" : "");
	close(fd);
	if (argv[1][0] == '/')
		unlink(argv[1]);
	return ret;
}
