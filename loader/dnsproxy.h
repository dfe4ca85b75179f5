/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The per-sandbox DNS proxy (sandboxes with host rules, enforce mode):
 * sockets on the loopback of a cgroup sandbox's network namespace, which the
 * sock_addr programs send the sandbox's DNS to (UDP and TCP port 53, any
 * destination), and / or on the host-side address of its tap, which the tap
 * program sends the guest's DNS to; one thread answers them: names no host rule allows
 * are refused here, the others are asked from the operator's resolver and
 * every address of the answer is learned for the sandbox before the answer
 * is passed on.
 */
#ifndef SBT_DNSPROXY_H
#define SBT_DNSPROXY_H

#include <stdbool.h>
#include <stdint.h>

struct sbt_egress_state;
struct sbt_target;
struct sbt_dnsproxy;

/* Where a tap sandbox's proxy listens: the tap's host-side addresses. */
struct sbt_dnsproxy_tap {
	int nsfd; /* the tap's network namespace, -1: the loader's */
	bool has4, has6;
	uint8_t host4[4], host6[16];
	uint16_t port[4]; /* set by the start: by SBT_DNS_*, network byte order, 0: none */
};

/*
 * Open the proxy of sandbox `slot`: on the loopback of network namespace
 * sb_nsfd (-1: none; the ports go to the cgroup programs) and on tap's
 * addresses (NULL: none; the ports into tap->port, for the tap program),
 * and start its thread. 0, or -errno after a one-line message (the
 * sandbox's DNS is then judged like any traffic).
 */
int sbt_dnsproxy_start(struct sbt_egress_state *st, uint32_t slot, const struct sbt_target *sb,
		       int sb_nsfd, struct sbt_dnsproxy_tap *tap);
/* Stop the thread, unpublish the ports, close the sockets. NULL is fine. */
void sbt_dnsproxy_stop(struct sbt_egress_state *st, uint32_t slot);

#endif
