/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The agent's subscriber socket: its JSON Lines, streamed to local clients
 * (`sbtrace events`, `sbtrace top`) on a unix socket only root may use.
 * Every client has a bounded buffer written without blocking: a slow client
 * loses lines, counted and told to it as an EventsLost line of its own
 * (reason subscriber_slow) once it has room again; it never slows the
 * ring-buffer drain nor the other clients.
 */
#ifndef SBT_SINK_SUB_H
#define SBT_SINK_SUB_H

#include <stddef.h>
#include <stdint.h>

#include "event/sink.h"

#define SBT_SUB_MAX_CLIENTS 32
#define SBT_SUB_BUF_BYTES   (1u << 20)

struct sbt_sub_client {
	int fd;
	char *buf;
	size_t len;
	uint64_t lost;	     /* lines dropped since the last EventsLost told it */
	uint64_t lost_total; /* for the whole connection */
};

struct sbt_sub_sink {
	struct sbt_sink base;
	int listen_fd;
	char path[108];
	struct sbt_sub_client clients[SBT_SUB_MAX_CLIENTS];
	size_t buf_bytes; /* per client */
	uint64_t accepted, refused;
	uint64_t dropped; /* lines every client lost, all told (a counter: never goes down) */
};

/* Listen on `path` (a stale socket replaced), mode 0600. 0, or -errno. */
int sbt_sub_sink_open(struct sbt_sub_sink *s, const char *path, size_t buf_bytes);
void sbt_sub_sink_close(struct sbt_sub_sink *s);
/* Accept waiting clients (root only), write what each can take. Called each tick. */
void sbt_sub_sink_pump(struct sbt_sub_sink *s);
/* Queue one line (with its '\n') for every client. */
void sbt_sub_sink_line(struct sbt_sub_sink *s, const char *line, size_t len);

#endif
