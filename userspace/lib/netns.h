/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Network namespaces by name (as `ip netns` makes them: /run/netns/NAME) or
 * by absolute path, entered on the calling thread for a moment and left
 * again (the caller keeps itself single-threaded meanwhile).
 */
#ifndef SBT_NETNS_H
#define SBT_NETNS_H

#include <stddef.h>

/* The namespace file of `ns`: itself when it starts with '/', else /run/netns/NS. 0 or -ENAMETOOLONG. */
int sbt_netns_path(const char *ns, char *buf, size_t len);

/*
 * Enter `ns` (NULL or "": stay, *back = -1); *back receives the namespace to
 * return to. 0, or -errno (nothing changed).
 */
int sbt_netns_enter(const char *ns, int *back);

/* Return to `back` (-1: nothing to do) and close it. 0 or -errno. */
int sbt_netns_leave(int back);

/* A socket of `type` in network namespace nsfd (-1: ours; a thread enters it). fd or -errno. */
int sbt_socket_in_netns(int nsfd, int domain, int type);

#endif
