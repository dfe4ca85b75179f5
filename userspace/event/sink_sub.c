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

/* An EventsLost of the client's own into its buffer, if it has room. */
static bool put_lost(struct sbt_sub_sink *s, struct sbt_sub_client *c,
		     const struct sbt_ev_lost *lost)
{
	struct sbt_event_line line = { 0 };
	struct sbt_event ev = {
		.kind = SBT_EV_LOST, .ts = sbt_now_epoch_ns(), .lost = *lost, .line = &line
	};
	const char *txt;
	size_t n;
	bool put = false;

	txt = sbt_event_line(&ev, &n);
	if (txt && c->len + n + 1 <= s->buf_bytes) {
		memcpy(c->buf + c->len, txt, n);
		c->buf[c->len + n] = '\n';
		c->len += n + 1;
		put = true;
	}
	sbt_event_line_release(&line);
	return put;
}

/* The client's own EventsLost line, once its buffer has room for it. */
static void tell_lost(struct sbt_sub_sink *s, struct sbt_sub_client *c)
{
	struct sbt_ev_lost lost = { .lost = c->lost,
				    .lost_total = c->lost_total,
				    .has_total = true,
				    .reason = "subscriber_slow",
				    .kind = "subscriber" };

	if (put_lost(s, c, &lost))
		c->lost = 0;
}

/* `len` bytes of a line, and its '\n' when `nl`, for client c: lost (and counted) without room. */
static void put(struct sbt_sub_sink *s, struct sbt_sub_client *c, const char *line, size_t len,
		bool nl)
{
	size_t n = len + nl;

	if (c->lost)
		tell_lost(s, c);
	if (c->lost || c->len + n > s->buf_bytes) {
		c->lost++;
		c->lost_total++;
		s->dropped++;
		return;
	}
	memcpy(c->buf + c->len, line, len);
	if (nl)
		c->buf[c->len + len] = '\n';
	c->len += n;
}

/* Queue a line for every client. */
static void queue(struct sbt_sub_sink *s, const char *line, size_t len, bool nl)
{
	for (int i = 0; i < SBT_SUB_MAX_CLIENTS; i++)
		if (s->clients[i].fd >= 0)
			put(s, &s->clients[i], line, len, nl);
}

/* ---- the greeting: TraceStarted and the live sandboxes' SandboxAdded ---- */

static struct sbt_sub_live *live_find(struct sbt_sub_greeting *g, const struct sbt_target *sb)
{
	for (size_t i = 0; i < g->nr; i++)
		if (g->live[i].cgroup_id == sb->cgroup_id && strcmp(g->live[i].name, sb->name) == 0)
			return &g->live[i];
	return NULL;
}

static void live_free(struct sbt_sub_live *l)
{
	free(l->name);
	free(l->line);
}

/* Drop l from the table. */
static void live_drop(struct sbt_sub_greeting *g, struct sbt_sub_live *l)
{
	size_t after = (size_t)(g->live + g->nr - (l + 1));

	g->bytes -= l->len + 1;
	live_free(l);
	memmove(l, l + 1, after * sizeof(*l));
	g->nr--;
}

/* Keep the SandboxAdded line of ev's sandbox (a sandbox added again: its new line). */
static void greet_added(struct sbt_sub_sink *s, const struct sbt_event *ev, const char *line,
			size_t len)
{
	struct sbt_sub_greeting *g = &s->greet;
	struct sbt_sub_live *l = live_find(g, ev->sandbox), keep = { 0 };
	size_t old = l ? l->len + 1 : 0;

	if (!l && g->nr == SBT_SUB_GREET_MAX)
		goto not_kept;
	if (g->started_len + 1 + g->bytes - old + len + 1 > s->buf_bytes / 2)
		goto not_kept; /* the other half: the live stream's */
	if (!l && g->nr == g->cap) {
		size_t cap = g->cap ? g->cap * 2 : 64;
		struct sbt_sub_live *nv = realloc(g->live, cap * sizeof(*nv));

		if (!nv)
			goto not_kept;
		g->live = nv;
		g->cap = cap;
	}
	keep.cgroup_id = ev->sandbox->cgroup_id;
	keep.name = strdup(ev->sandbox->name);
	keep.line = malloc(len);
	keep.len = len;
	if (!keep.name || !keep.line) {
		live_free(&keep);
		goto not_kept;
	}
	memcpy(keep.line, line, len);
	if (l)
		live_free(l);
	else
		l = &g->live[g->nr++];
	*l = keep;
	g->bytes = g->bytes - old + len + 1;
	return;
not_kept:
	if (l)
		live_drop(g, l); /* its older line is no longer what it is */
	g->not_kept++;
}

/*
 * ev's sandbox is gone. One the table does not hold was among not_kept:
 * the agent removes only sandboxes it added.
 */
static void greet_removed(struct sbt_sub_greeting *g, const struct sbt_event *ev)
{
	struct sbt_sub_live *l = live_find(g, ev->sandbox);

	if (l)
		live_drop(g, l);
	else if (g->not_kept)
		g->not_kept--;
}

/* What ev changes of the greeting (TraceStarted, SandboxAdded, SandboxRemoved). */
static void greet_note(struct sbt_sub_sink *s, const struct sbt_event *ev)
{
	struct sbt_sub_greeting *g = &s->greet;
	const char *line;
	size_t n;
	char *copy;

	if (ev->kind == SBT_EV_SANDBOX_REMOVED && ev->sandbox) {
		greet_removed(g, ev);
		return;
	}
	if (ev->kind != SBT_EV_STARTED && !(ev->kind == SBT_EV_SANDBOX_ADDED && ev->sandbox))
		return;
	line = sbt_event_line(ev, &n);
	if (ev->kind == SBT_EV_SANDBOX_ADDED) {
		if (line)
			greet_added(s, ev, line, n);
		else
			g->not_kept++;
		return;
	}
	copy = line ? malloc(n) : NULL;
	if (!copy)
		return; /* out of memory: a greeting without it */
	memcpy(copy, line, n);
	free(g->started);
	g->started = copy;
	g->started_len = n;
}

/* The greeting, into a new client's (empty) buffer. */
static void greet(struct sbt_sub_sink *s, struct sbt_sub_client *c)
{
	const struct sbt_sub_greeting *g = &s->greet;
	char detail[128];
	struct sbt_ev_lost lost = { .reason = "subscriber_slow",
				    .kind = "subscriber",
				    .detail = detail };

	if (g->started)
		put(s, c, g->started, g->started_len, true);
	for (size_t i = 0; i < g->nr; i++)
		put(s, c, g->live[i].line, g->live[i].len, true);
	if (!g->not_kept)
		return;
	snprintf(detail, sizeof(detail),
		 "greeting: the SandboxAdded of %llu live sandboxes not kept (at most %d)",
		 (unsigned long long)g->not_kept, SBT_SUB_GREET_MAX);
	lost.lost = g->not_kept;
	put_lost(s, c, &lost);
}

static void greet_free(struct sbt_sub_greeting *g)
{
	for (size_t i = 0; i < g->nr; i++)
		live_free(&g->live[i]);
	free(g->live);
	free(g->started);
	memset(g, 0, sizeof(*g));
}

void sbt_sub_sink_line(struct sbt_sub_sink *s, const char *line, size_t len)
{
	queue(s, line, len, false);
}

int sbt_sub_sink_add_client(struct sbt_sub_sink *s, int fd)
{
	struct sbt_sub_client *c = NULL;

	for (int i = 0; i < SBT_SUB_MAX_CLIENTS && !c; i++)
		if (s->clients[i].fd < 0)
			c = &s->clients[i];
	if (!c)
		return -EMFILE;
	c->buf = malloc(s->buf_bytes);
	if (!c->buf)
		return -ENOMEM;
	c->fd = fd;
	c->len = 0;
	s->accepted++;
	greet(s, c);
	return 0;
}

static void accept_clients(struct sbt_sub_sink *s)
{
	for (;;) {
		int fd = accept4(s->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct ucred cred;
		socklen_t clen = sizeof(cred);
		int err;

		if (fd < 0)
			return;
		/* root only: the stream names every process of every sandbox */
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) || cred.uid != 0) {
			close(fd);
			s->refused++;
			continue;
		}
		err = sbt_sub_sink_add_client(s, fd);
		if (err) {
			close(fd);
			s->refused += err == -EMFILE;
		}
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

	greet_note(s, ev);
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
	greet_free(&s->greet);
}
