/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * One instance per state: a lock file held (flock) for a process's life,
 * with its PID in it for the message of the next one; and whether a unix
 * socket is served now (a connect answers), so that a live one is never
 * replaced by a process that does not own it.
 */
#ifndef SBT_INSTANCE_H
#define SBT_INSTANCE_H

#include <sys/types.h>

/*
 * Take `path` (created 0600), write our PID in it. The fd (CLOEXEC, keep it
 * open), or -EWOULDBLOCK with *holder the PID written by the one that holds
 * it (0 if none could be read), or another -errno.
 */
int sbt_instance_lock(const char *path, pid_t *holder);
/* 1 when a process accepts connections on the unix socket `path` (*peer its PID), else 0. */
int sbt_unix_socket_live(const char *path, pid_t *peer);

#endif
