// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Test helper: a static HTTP/1.1 file server, a test host's npm registry
 * (run inside the test's own "host" network namespace):
 *
 *   sbt-httpd --listen A.B.C.D:PORT --root DIR --log FILE
 *
 * GET and HEAD of DIR/PATH (a path with "..", a NUL or a backslash is 404;
 * a directory serves its index.json, as a registry's package document), one
 * request per connection (Connection: close), Content-Length always.
 * Content-Type application/json for .json, application/octet-stream else.
 * Logs "<method> <path> <status>" per request (flushed at once), prints
 * "ready" once listening, runs until SIGTERM/SIGINT. One request at a time:
 * enough for npm, which retries.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#define REQ_MAX 8192

static volatile sig_atomic_t stop_flag;

static void on_stop(int sig)
{
	(void)sig;
	stop_flag = 1;
}

static int usage(void)
{
	fprintf(stderr, "usage: sbt-httpd --listen A.B.C.D:PORT --root DIR --log FILE\n");
	return 2;
}

static void send_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n <= 0)
			return;
		buf += n;
		len -= (size_t)n;
	}
}

static void reply_status(int fd, int code, const char *text)
{
	char head[256];
	int n = snprintf(head, sizeof(head),
			 "HTTP/1.1 %d %s\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", code,
			 text);

	send_all(fd, head, (size_t)n);
}

static bool bad_path(const char *path)
{
	return path[0] != '/' || strstr(path, "..") || strchr(path, '\\');
}

/* Serve one file; the status sent. */
static int serve_file(int fd, const char *root, const char *path, bool head_only)
{
	char full[PATH_MAX], hdr[256], buf[65536];
	struct stat st;
	const char *dot;
	int f, n;

	if (bad_path(path) ||
	    (size_t)snprintf(full, sizeof(full), "%s%s", root, path) >= sizeof(full))
		return reply_status(fd, 404, "Not Found"), 404;
	if (stat(full, &st) == 0 && S_ISDIR(st.st_mode) &&
	    (size_t)snprintf(full, sizeof(full), "%s%s/index.json", root, path) >= sizeof(full))
		return reply_status(fd, 404, "Not Found"), 404;
	f = open(full, O_RDONLY | O_CLOEXEC);
	if (f < 0 || fstat(f, &st) || !S_ISREG(st.st_mode)) {
		if (f >= 0)
			close(f);
		return reply_status(fd, 404, "Not Found"), 404;
	}
	dot = strrchr(full, '.');
	n = snprintf(hdr, sizeof(hdr),
		     "HTTP/1.1 200 OK\r\nContent-Type: %s\r\nContent-Length: %lld\r\n"
		     "Connection: close\r\n\r\n",
		     dot && strcmp(dot, ".json") == 0 ? "application/json"
						      : "application/octet-stream",
		     (long long)st.st_size);
	send_all(fd, hdr, (size_t)n);
	while (!head_only) {
		ssize_t r = read(f, buf, sizeof(buf));

		if (r <= 0)
			break;
		send_all(fd, buf, (size_t)r);
	}
	close(f);
	return 200;
}

/* Read the request head (up to the blank line), answer it. */
static void handle(int fd, const char *root, FILE *log)
{
	char req[REQ_MAX + 1], method[16], path[4096];
	size_t used = 0;
	struct timeval tv = { .tv_sec = 5 };
	int code;

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	while (used < REQ_MAX) {
		ssize_t n = read(fd, req + used, REQ_MAX - used);

		if (n <= 0)
			return;
		used += (size_t)n;
		req[used] = '\0';
		if (strstr(req, "\r\n\r\n"))
			break;
	}
	req[used] = '\0';
	if (sscanf(req, "%15s %4095s", method, path) != 2) {
		reply_status(fd, 400, "Bad Request");
		return;
	}
	path[strcspn(path, "?")] = '\0';
	if (strcmp(method, "GET") && strcmp(method, "HEAD")) {
		reply_status(fd, 405, "Method Not Allowed");
		code = 405;
	} else {
		code = serve_file(fd, root, path, strcmp(method, "HEAD") == 0);
	}
	fprintf(log, "%s %s %d\n", method, path, code);
	fflush(log);
}

int main(int argc, char **argv)
{
	const char *listen_at = NULL, *root = NULL, *log_path = NULL;
	struct sockaddr_in sin = { .sin_family = AF_INET };
	char addr[64], *colon;
	struct sigaction sa = { .sa_handler = on_stop };
	FILE *log;
	int s, one = 1;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--listen") == 0)
			listen_at = argv[i + 1];
		else if (strcmp(argv[i], "--root") == 0)
			root = argv[i + 1];
		else if (strcmp(argv[i], "--log") == 0)
			log_path = argv[i + 1];
		else
			return usage();
	}
	if (!listen_at || !root || !log_path || argc % 2 == 0)
		return usage();
	snprintf(addr, sizeof(addr), "%s", listen_at);
	colon = strrchr(addr, ':');
	if (!colon)
		return usage();
	*colon = '\0';
	sin.sin_port = htons((uint16_t)atoi(colon + 1));
	if (inet_pton(AF_INET, addr, &sin.sin_addr) != 1)
		return usage();
	log = fopen(log_path, "a");
	if (!log) {
		perror(log_path);
		return 1;
	}
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0 || setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(s, (struct sockaddr *)&sin, sizeof(sin)) || listen(s, 64)) {
		perror("sbt-httpd: listen");
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	while (!stop_flag) {
		int c = accept4(s, NULL, NULL, SOCK_CLOEXEC);

		if (c < 0) {
			if (errno == EINTR)
				continue;
			perror("sbt-httpd: accept");
			break;
		}
		handle(c, root, log);
		shutdown(c, SHUT_WR);
		close(c);
	}
	close(s);
	fclose(log);
	return 0;
}
