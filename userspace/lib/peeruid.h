/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Who is at the other end of a loopback TCP connection: the peer's socket
 * is in the same network namespace, so /proc/net/tcp (tcp6) lists it, its
 * local address the peer's, with the uid that made it. For the agent's
 * /metrics: a local user's connection is refused before it takes a slot.
 */
#ifndef SBT_PEERUID_H
#define SBT_PEERUID_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/socket.h>

/* The uid of the socket whose local address is `local` ("0100007F:1F90") in f's lines. */
int sbt_proc_tcp_uid(FILE *f, const char *local, unsigned int *uid);
/* The uid that owns the TCP socket at `peer` (this network namespace's). 0 or -errno. */
int sbt_tcp_peer_uid(const struct sockaddr *peer, unsigned int *uid);
/* 127.0.0.0/8, ::1, ::ffff:127.x */
bool sbt_sockaddr_loopback(const struct sockaddr *sa);

#endif
