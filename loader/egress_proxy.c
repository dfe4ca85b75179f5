// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The DNS proxies of the egress set-up (egress.c): for a cgroup sandbox one
 * on the loopback of each network namespace its processes use, published to
 * the cgroup programs by (namespace cookie, slot) in dns_proxy; for a tap,
 * one on its host-side addresses. A sandbox with proxies has dns_want set:
 * DNS from a namespace without one is denied, an exec there stops until the
 * gate (sbt_egress_gate) has opened one and continues it.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <dirent.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "sbtrace.h"
#include "sbtrace.skel.h"
#include "egress_proxy.h"
#include "lib/log.h"
#include "lib/netns.h"

/* A tap's host-side addresses (its first IPv4, its first global IPv6), in its namespace. */
static int tap_host_addrs(const struct sbt_target *sb, struct sbt_dnsproxy_tap *tp)
{
	struct ifaddrs *ifa;
	int back, err = sbt_netns_enter(sb->tap.netns, &back);

	if (err)
		return err;
	if (getifaddrs(&ifa) < 0) {
		err = -errno;
		sbt_netns_leave(back);
		return err;
	}
	for (struct ifaddrs *i = ifa; i; i = i->ifa_next) {
		if (!i->ifa_addr || strcmp(i->ifa_name, sb->tap.ifname) != 0)
			continue;
		if (i->ifa_addr->sa_family == AF_INET && !tp->has4) {
			memcpy(tp->host4, &((struct sockaddr_in *)i->ifa_addr)->sin_addr, 4);
			tp->has4 = true;
		} else if (i->ifa_addr->sa_family == AF_INET6 && !tp->has6) {
			const struct in6_addr *a = &((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr;

			if (IN6_IS_ADDR_LINKLOCAL(a))
				continue;
			memcpy(tp->host6, a, 16);
			tp->has6 = true;
		}
	}
	freeifaddrs(ifa);
	err = sbt_netns_leave(back);
	return err ? err : tp->has4 || tp->has6 ? 0 : -EADDRNOTAVAIL;
}

/* Unpublish the slot's proxy ports (nothing is sent to them any more), then stop them. */
void sbt_egress_proxy_stop(struct sbt_egress_state *st, uint32_t slot)
{
	struct sbt_egress_sandbox *es = &st->sb[slot];
	int fd = bpf_map__fd(st->plan->skel->maps.dns_proxy);

	st->plan->skel->bss->dns_want[slot] = 0;
	for (size_t i = 0; i < es->nr_proxies; i++) {
		struct sbt_egress_proxy *p = &es->proxies[i];
		struct sbt_dns_proxy_key k = { .netns_cookie = p->netns_cookie, .slot = slot };

		if (p->netns_cookie)
			bpf_map_delete_elem(fd, &k);
		sbt_dnsproxy_stop(p->px);
	}
	es->nr_proxies = 0;
	es->tap_proxy = false;
}

#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE 71
#endif

/* The cookie of network namespace nsfd (the key the cgroup programs see). 0 or -errno. */
static int netns_cookie(int nsfd, uint64_t *cookie)
{
	socklen_t len = sizeof(*cookie);
	int fd = sbt_socket_in_netns(nsfd, AF_UNIX, SOCK_DGRAM), err = 0;

	if (fd < 0)
		return fd;
	if (getsockopt(fd, SOL_SOCKET, SO_NETNS_COOKIE, cookie, &len) < 0)
		err = -errno;
	close(fd);
	return err;
}

/*
 * A proxy for sandbox `slot` on the loopback of network namespace nsfd (-1:
 * none) and / or on its tap (NULL: none), published to the cgroup programs.
 * 0 (also when that namespace has one already), or -errno: -ENOSPC at
 * SBT_DNS_NETNS_MAX, else after a one-line message.
 */
static int proxy_open(struct sbt_egress_state *st, uint32_t slot, int nsfd,
		      struct sbt_dnsproxy_tap *tap)
{
	struct sbt_egress_sandbox *es = &st->sb[slot];
	struct sbt_egress_proxy *p;
	uint64_t cookie = 0;
	int err = 0;

	if (nsfd >= 0 && (err = netns_cookie(nsfd, &cookie)) < 0) {
		sbt_log("egress: sandbox %s: its network namespace: %s", es->name, strerror(-err));
		return err;
	}
	for (size_t i = 0; cookie && i < es->nr_proxies; i++)
		if (es->proxies[i].netns_cookie == cookie)
			return 0;
	if (es->nr_proxies == SBT_DNS_NETNS_MAX)
		return -ENOSPC;
	if (nsfd >= 0 && es->resolver_deferred) { /* its first process: --resolver from here */
		es->nsfd = fcntl(nsfd, F_DUPFD_CLOEXEC, 0);
		es->owner.resolver_nsfd = es->nsfd;
		es->resolver_deferred = es->nsfd < 0;
		pthread_mutex_lock(&es->lock);
		for (size_t h = 0; h < es->nr_hosts; h++)
			es->hosts[h].expires_ms = 0; /* the next tick resolves them */
		pthread_mutex_unlock(&es->lock);
	}
	p = &es->proxies[es->nr_proxies];
	memset(p, 0, sizeof(*p));
	p->px = sbt_dnsproxy_start(&es->owner, es->name, nsfd, tap, &err);
	if (!p->px)
		return err ? err : -EIO;
	p->netns_cookie = nsfd >= 0 ? cookie : 0;
	sbt_dnsproxy_ports(p->px, p->port);
	if (p->netns_cookie) {
		struct sbt_dns_proxy_key k = { .netns_cookie = cookie, .slot = slot };
		struct sbt_dns_proxy v;

		memcpy(v.port, p->port, sizeof(v.port));
		if (bpf_map_update_elem(bpf_map__fd(st->plan->skel->maps.dns_proxy), &k, &v,
					BPF_ANY)) {
			err = -errno;
			sbt_log("egress: sandbox %s: cannot publish its DNS proxy: %s", es->name,
				strerror(-err));
			sbt_dnsproxy_stop(p->px);
			return err;
		}
	}
	es->nr_proxies++;
	if (tap)
		es->tap_proxy = true;
	return 0;
}

/* A proxy in the network namespace of process pid (a sandbox's), if it has none yet. */
static int proxy_for_pid(struct sbt_egress_state *st, uint32_t slot, int pid)
{
	char path[64];
	int nsfd, err;

	snprintf(path, sizeof(path), "/proc/%d/ns/net", pid);
	nsfd = open(path, O_RDONLY | O_CLOEXEC);
	if (nsfd < 0)
		return -errno;
	err = proxy_open(st, slot, nsfd, NULL);
	close(nsfd);
	return err;
}

/* Proxies for every network namespace the processes of cgroup dir (and below) are in. */
static size_t proxies_for_cgroup(struct sbt_egress_state *st, uint32_t slot, const char *dir,
				 int depth)
{
	char path[PATH_MAX + 32], buf[32];
	size_t found = 0;
	struct dirent *e;
	FILE *f;
	DIR *d;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	f = fopen(path, "re");
	if (f) {
		while (fgets(buf, sizeof(buf), f)) {
			int pid = atoi(buf);

			if (pid > 0 && proxy_for_pid(st, slot, pid) == 0)
				found++;
		}
		fclose(f);
	}
	if (depth >= 8 || !(d = opendir(dir)))
		return found;
	while ((e = readdir(d))) {
		if (e->d_type != DT_DIR || e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		found += proxies_for_cgroup(st, slot, path, depth + 1);
	}
	closedir(d);
	return found;
}

/*
 * The DNS proxies of a sandbox: for its cgroup, one in each network
 * namespace its processes are in now (or the one the caller named, a
 * probe's), later ones as processes appear (sbt_egress_gate); for its tap,
 * on the tap's host-side addresses.
 */
void sbt_egress_proxy_start(struct sbt_egress_state *st, uint32_t slot, const struct sbt_target *sb)
{
	struct sbt_egress_sandbox *es = &st->sb[slot];
	char path[PATH_MAX + 16];
	int err;

	es->name = sb->name;
	es->want_proxy = sbt_target_has_cgroup(sb);
	memset(&es->tap, 0, sizeof(es->tap));
	es->tap.nsfd = -1;
	if (sb->has_tap) {
		err = tap_host_addrs(sb, &es->tap);
		if (!err && sb->tap.netns[0] &&
		    (err = sbt_netns_path(sb->tap.netns, path, sizeof(path))) == 0) {
			es->tap.nsfd = open(path, O_RDONLY | O_CLOEXEC);
			err = es->tap.nsfd < 0 ? -errno : 0;
		}
		if (err)
			sbt_log("egress: sandbox %s: tap %s has no address on the host side (%s): "
				"no DNS proxy for the guest, its DNS goes only to the resolver",
				sb->name, sb->tap.ifname, strerror(-err));
		else if (proxy_open(st, slot, -1, &es->tap))
			sbt_log("egress: sandbox %s: no DNS proxy for the guest: its DNS goes only "
				"to the resolver",
				sb->name);
		if (es->tap.nsfd >= 0)
			close(es->tap.nsfd);
		es->tap.nsfd = -1;
	}
	if (!es->want_proxy)
		return;
	if (sb->dns_netns[0]) {
		int nsfd = open(sb->dns_netns, O_RDONLY | O_CLOEXEC);

		if (nsfd < 0)
			sbt_log("egress: sandbox %s: its network namespace %s: %s", sb->name,
				sb->dns_netns, strerror(errno));
		else {
			proxy_open(st, slot, nsfd, NULL);
			close(nsfd);
		}
	} else if (!proxies_for_cgroup(st, slot, sb->path, 0)) {
		sbt_log("egress: sandbox %s: no process in it yet: its DNS is denied until one "
			"appears, then a proxy opens in each network namespace it uses",
			sb->name);
	}
	/* from here on, an exec in a namespace without a proxy waits for one */
	st->plan->skel->bss->dns_want[slot] = 1;
}

/* How many dns_wait entries one sweep takes (the rest wait for the next). */
#define GATE_BATCH 64

void sbt_egress_gate(struct sbt_egress_state *st)
{
	uint32_t keys[GATE_BATCH], key;
	size_t n = 0;
	int fd;

	if (!st->plan)
		return;
	fd = bpf_map__fd(st->plan->skel->maps.dns_wait);

	while (n < GATE_BATCH && bpf_map_get_next_key(fd, n ? &keys[n - 1] : NULL, &key) == 0)
		keys[n++] = key;
	for (size_t i = 0; i < n; i++) {
		struct sbt_dns_wait w;
		struct sbt_egress_sandbox *es;
		int err;

		if (bpf_map_lookup_and_delete_elem(fd, &keys[i], &w))
			continue;
		es = w.slot < st->nr ? &st->sb[w.slot] : NULL;
		if (es && es->want_proxy) {
			err = proxy_for_pid(st, w.slot, (int)keys[i]);
			if (err == -ENOSPC && !es->said_full) {
				es->said_full = true;
				sbt_log("egress: sandbox %s: its processes use more than %d "
					"network "
					"namespaces: DNS of the others stays denied",
					es->name, SBT_DNS_NETNS_MAX);
			}
		}
		if (w.stopped)
			kill((pid_t)keys[i], SIGCONT);
	}
}

/* At stop: no exec waits any more; every process the exec hook stopped goes on. */
void sbt_egress_gate_release(struct sbt_egress_state *st)
{
	int fd = bpf_map__fd(st->plan->skel->maps.dns_wait);
	uint32_t key;

	for (uint32_t i = 0; i < st->nr; i++)
		st->plan->skel->bss->dns_want[i] = 0;
	while (bpf_map_get_next_key(fd, NULL, &key) == 0) {
		struct sbt_dns_wait w;

		if (bpf_map_lookup_and_delete_elem(fd, &key, &w))
			break;
		if (w.stopped)
			kill((pid_t)key, SIGCONT);
	}
}
