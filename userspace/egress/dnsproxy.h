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
#include <stddef.h>
#include <stdint.h>

struct sbt_dns_addr;
struct sbt_dns_event;
struct sbt_egress_cfg;
struct sbt_dnsproxy;

/* Where a tap sandbox's proxy listens: the tap's host-side addresses. */
struct sbt_dnsproxy_tap {
	int nsfd; /* the tap's network namespace, -1: the caller's */
	bool has4, has6;
	uint8_t host4[4], host6[16];
	uint16_t port[4]; /* set by the start: by SBT_DNS_*, network byte order, 0: none */
};

/* What a proxy serves and whom it tells: the egress set-up of one sandbox (loader/egress.c). */
struct sbt_dnsproxy_owner {
	const struct sbt_egress_cfg *cfg; /* the host rules; its deny rcode and grace */
	uint32_t slot;
	bool has_resolver;
	uint8_t resolver[16]; /* IPv4 mapped */
	int resolver_nsfd;    /* where the resolver is asked from (the owner's fd), -1: here */
	/*
	 * Learn an allowed answer's addresses for host rule `rule_idx` before
	 * it is passed on: 0, -ENOSPC at the sandbox's limit, or -errno.
	 */
	int (*learn)(void *arg, uint32_t slot, uint32_t rule_idx, const char *name,
		     const struct sbt_dns_addr *addrs, size_t n, uint64_t ts_ns);
	/* A DnsQuery / DnsAnswer to report: takes ev's allocations (leaves its pointers NULL). */
	void (*event)(void *arg, struct sbt_dns_event *ev);
	void *arg;
};

/*
 * Open the proxy of sandbox `name` for owner o (copied): on the loopback of
 * network namespace sb_nsfd (-1: none) and on tap's addresses (NULL: none;
 * the ports into tap->port, for the tap program), and start its thread.
 * The proxy or NULL, *err -errno after a one-line message (the sandbox's
 * DNS is then judged like any traffic).
 */
struct sbt_dnsproxy *sbt_dnsproxy_start(const struct sbt_dnsproxy_owner *o, const char *name,
					int sb_nsfd, struct sbt_dnsproxy_tap *tap, int *err);
/* Its loopback ports by SBT_DNS_* (network byte order, 0: none), for the cgroup programs. */
void sbt_dnsproxy_ports(const struct sbt_dnsproxy *px, uint16_t port[4]);
/* Stop the thread, close the sockets, free. NULL is fine. */
void sbt_dnsproxy_stop(struct sbt_dnsproxy *px);

#endif
