/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The agent's subscriber socket: its JSON Lines, streamed to local clients
 * (`sbtrace events`, `sbtrace top`) on a unix socket only root may use.
 * Every client has a bounded buffer written without blocking: a slow client
 * loses lines, counted and told to it as an EventsLost line of its own
 * (reason subscriber_slow) once it has room again; it never slows the
 * ring-buffer drain nor the other clients.
 *
 * A client's first lines are its greeting: the agent's TraceStarted and
 * the SandboxAdded of every sandbox live now (added, not yet removed), in
 * the order they were added; then the live stream. The greeting is bounded
 * (SBT_SUB_GREET_MAX sandboxes, half a client's buffer): the sandboxes
 * beyond it are counted, and a greeting short of them ends with an
 * EventsLost saying how many.
 */
#ifndef SBT_SINK_SUB_H
#define SBT_SINK_SUB_H

#include <stddef.h>
#include <stdint.h>

#include "event/sink.h"

#define SBT_SUB_MAX_CLIENTS 32
#define SBT_SUB_BUF_BYTES   (1u << 20)
/* Live sandboxes the greeting names: above the agent's default --max-sandboxes (1024). */
#define SBT_SUB_GREET_MAX 4096

struct sbt_sub_client {
	int fd;
	char *buf;
	size_t len;
	uint64_t lost;	     /* lines dropped since the last EventsLost told it */
	uint64_t lost_total; /* for the whole connection */
};

/* A live sandbox's SandboxAdded line, kept for the greeting. */
struct sbt_sub_live {
	uint64_t cgroup_id;
	char *name; /* the event's sandbox (its cgroup path) */
	char *line; /* without its '\n' */
	size_t len;
};

/* What a new client is told first. */
struct sbt_sub_greeting {
	char *started; /* the TraceStarted line, NULL before it */
	size_t started_len;
	struct sbt_sub_live *live; /* nr of cap, in the order they were added */
	size_t nr, cap;
	size_t bytes;	   /* of the live lines */
	uint64_t not_kept; /* live sandboxes beyond the bounds: not in the greeting */
};

struct sbt_sub_sink {
	struct sbt_sink base;
	int listen_fd;
	char path[108];
	struct sbt_sub_client clients[SBT_SUB_MAX_CLIENTS];
	size_t buf_bytes; /* per client */
	uint64_t accepted, refused;
	uint64_t dropped; /* lines every client lost, all told (a counter: never goes down) */
	struct sbt_sub_greeting greet;
};

/* Listen on `path` (a stale socket replaced), mode 0600. 0, or -errno. */
int sbt_sub_sink_open(struct sbt_sub_sink *s, const char *path, size_t buf_bytes);
void sbt_sub_sink_close(struct sbt_sub_sink *s);
/* Accept waiting clients (root only; each greeted), write what each can take. Each tick. */
void sbt_sub_sink_pump(struct sbt_sub_sink *s);
/*
 * Take fd (connected, non-blocking, root's) as a client, its greeting
 * queued. 0, -EMFILE (no free client) or -ENOMEM.
 */
int sbt_sub_sink_add_client(struct sbt_sub_sink *s, int fd);
/* Queue one line (with its '\n') for every client. */
void sbt_sub_sink_line(struct sbt_sub_sink *s, const char *line, size_t len);

#endif
