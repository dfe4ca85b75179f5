// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The agent's subscriber socket (sink_sub.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "event/line.h"
#include "event/sink_sub.h"
#include "lib/clock.h"

static void drop_client(struct sbt_sub_client *c)
{
	close(c->fd);
	free(c->buf);
	memset(c, 0, sizeof(*c));
	c->fd = -1;
}

/* The client's own EventsLost line, once its buffer has room for it. */
static void tell_lost(struct sbt_sub_sink *s, struct sbt_sub_client *c)
{
	struct sbt_event ev = { .kind = SBT_EV_LOST,
				.ts = sbt_now_epoch_ns(),
				.lost = { .lost = c->lost,
					  .lost_total = c->lost_total,
					  .has_total = true,
					  .reason = "subscriber_slow",
					  .kind = "subscriber" } };
	struct sbt_event_line line = { 0 };
	const char *txt;
	size_t n;

	ev.line = &line;
	txt = sbt_event_line(&ev, &n);
	if (txt && c->len + n + 1 <= s->buf_bytes) {
		memcpy(c->buf + c->len, txt, n);
		c->buf[c->len + n] = '\n';
		c->len += n + 1;
		c->lost = 0;
	}
	sbt_event_line_release(&line);
}

/* Queue `len` bytes of a line, and its '\n' when `nl`, for every client. */
static void queue(struct sbt_sub_sink *s, const char *line, size_t len, bool nl)
{
	size_t n = len + nl;

	for (int i = 0; i < SBT_SUB_MAX_CLIENTS; i++) {
		struct sbt_sub_client *c = &s->clients[i];

		if (c->fd < 0)
			continue;
		if (c->lost)
			tell_lost(s, c);
		if (c->lost || c->len + n > s->buf_bytes) {
			c->lost++;
			c->lost_total++;
			s->dropped++;
			continue;
		}
		memcpy(c->buf + c->len, line, len);
		if (nl)
			c->buf[c->len + len] = '\n';
		c->len += n;
	}
}

void sbt_sub_sink_line(struct sbt_sub_sink *s, const char *line, size_t len)
{
	queue(s, line, len, false);
}

static void accept_clients(struct sbt_sub_sink *s)
{
	for (;;) {
		int fd = accept4(s->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct ucred cred;
		socklen_t clen = sizeof(cred);
		int i;

		if (fd < 0)
			return;
		/* root only: the stream names every process of every sandbox */
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) || cred.uid != 0) {
			close(fd);
			s->refused++;
			continue;
		}
		for (i = 0; i < SBT_SUB_MAX_CLIENTS && s->clients[i].fd >= 0; i++)
			;
		if (i == SBT_SUB_MAX_CLIENTS) {
			close(fd);
			s->refused++;
			continue;
		}
		s->clients[i].buf = malloc(s->buf_bytes);
		if (!s->clients[i].buf) {
			close(fd);
			continue;
		}
		s->clients[i].fd = fd;
		s->clients[i].len = 0;
		s->accepted++;
	}
}

void sbt_sub_sink_pump(struct sbt_sub_sink *s)
{
	if (s->listen_fd < 0)
		return;
	accept_clients(s);
	for (int i = 0; i < SBT_SUB_MAX_CLIENTS; i++) {
		struct sbt_sub_client *c = &s->clients[i];
		ssize_t n;

		if (c->fd < 0)
			continue;
		while (c->len) {
			n = send(c->fd, c->buf, c->len, MSG_NOSIGNAL | MSG_DONTWAIT);
			if (n <= 0)
				break;
			memmove(c->buf, c->buf + n, c->len - (size_t)n);
			c->len -= (size_t)n;
		}
		if (c->len && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
			drop_client(c); /* gone */
			continue;
		}
		if (!c->len) { /* a client that hung up: a read sees EOF */
			char b;

			n = recv(c->fd, &b, 1, MSG_DONTWAIT);
			if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK))
				drop_client(c);
		}
	}
}

static void sub_emit(struct sbt_sink *base, const struct sbt_event *ev)
{
	struct sbt_sub_sink *s = (struct sbt_sub_sink *)base;
	const char *line;
	size_t n;
	int any = 0;

	for (int i = 0; i < SBT_SUB_MAX_CLIENTS; i++)
		any |= s->clients[i].fd >= 0;
	if (!any)
		return; /* nobody listens: no JSON to build */
	line = sbt_event_line(ev, &n);
	if (line)
		queue(s, line, n, true);
}

static int sub_flush(struct sbt_sink *base)
{
	sbt_sub_sink_pump((struct sbt_sub_sink *)base);
	return 0; /* a client's trouble is the client's */
}

static const struct sbt_sink_ops sub_ops = {
	.name = "subscribers",
	.emit = sub_emit,
	.flush = sub_flush,
};

int sbt_sub_sink_open(struct sbt_sub_sink *s, const char *path, size_t buf_bytes)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat st;
	mode_t old;
	int err;

	memset(s, 0, sizeof(*s));
	s->base.ops = &sub_ops;
	s->listen_fd = -1;
	s->buf_bytes = buf_bytes;
	for (int i = 0; i < SBT_SUB_MAX_CLIENTS; i++)
		s->clients[i].fd = -1;
	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	snprintf(s->path, sizeof(s->path), "%s", path);
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode))
			return -EEXIST; /* never remove what is not a socket */
		unlink(path);
	}
	s->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (s->listen_fd < 0)
		return -errno;
	old = umask(0077);
	err = bind(s->listen_fd, (struct sockaddr *)&sa, sizeof(sa)) ? -errno : 0;
	umask(old);
	if (!err && listen(s->listen_fd, 16))
		err = -errno;
	if (err) {
		close(s->listen_fd);
		s->listen_fd = -1;
		s->path[0] = '\0';
	}
	return err;
}

void sbt_sub_sink_close(struct sbt_sub_sink *s)
{
	sbt_sub_sink_pump(s); /* the last lines, to whoever can take them now */
	for (int i = 0; i < SBT_SUB_MAX_CLIENTS; i++)
		if (s->clients[i].fd >= 0)
			drop_client(&s->clients[i]);
	if (s->listen_fd >= 0) {
		close(s->listen_fd);
		unlink(s->path);
	}
	s->listen_fd = -1;
}
