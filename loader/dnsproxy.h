/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The per-sandbox DNS proxy (cgroup sandboxes with host rules, enforce mode):
 * sockets on the loopback of the sandbox's network namespace, which the
 * sock_addr programs send the sandbox's DNS to (UDP and TCP port 53, any
 * destination), and a thread that answers them: names no host rule allows
 * are refused here, the others are asked from the operator's resolver and
 * every address of the answer is learned for the sandbox before the answer
 * is passed on.
 */
#ifndef SBT_DNSPROXY_H
#define SBT_DNSPROXY_H

#include <stdint.h>

struct sbt_egress_state;
struct sbt_sandbox;
struct sbt_dnsproxy;

/*
 * Open the proxy of sandbox `slot` in network namespace sb_nsfd, publish
 * its ports to the BPF programs and start its thread. 0, or -errno after a
 * one-line message (the sandbox's DNS is then judged like any traffic).
 */
int sbt_dnsproxy_start(struct sbt_egress_state *st, uint32_t slot, const struct sbt_sandbox *sb,
		       int sb_nsfd);
/* Stop the thread, unpublish the ports, close the sockets. NULL is fine. */
void sbt_dnsproxy_stop(struct sbt_egress_state *st, uint32_t slot);

#endif
