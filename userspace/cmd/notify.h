/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The service manager's readiness protocol (systemd's sd_notify(3)), without
 * libsystemd: one datagram of "VAR=VALUE" lines to the AF_UNIX socket that
 * $NOTIFY_SOCKET names. The agent under Type=notify says READY=1 once its
 * hooks are attached and STOPPING=1 as it stops.
 */
#ifndef SBT_NOTIFY_H
#define SBT_NOTIFY_H

#define SBT_NOTIFY_ENV "NOTIFY_SOCKET"

/*
 * Send `state` (e.g. "READY=1", or "READY=1\nSTATUS=...") to $NOTIFY_SOCKET:
 * a path ("/run/systemd/notify") or an abstract name ("@name"). The datagram
 * is sent from the calling process, so that NotifyAccess=main accepts it.
 * 0 when sent, and when NOTIFY_SOCKET is unset or empty (no service manager
 * is listening: nothing to do). -EINVAL: state NULL or empty, or a socket
 * address neither absolute nor abstract; -ENAMETOOLONG: beyond sun_path;
 * else -errno of socket() or sendto() (-ENOENT, -ECONNREFUSED: nobody is
 * bound there; -EAGAIN: the listener's queue stayed full for 5 s).
 */
int sbt_notify(const char *state);

#endif
