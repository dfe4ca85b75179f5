// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Egress set-up: per-sandbox mode, the policy written into the LPM trie
 * (CIDR rules, host rules resolved as the sandbox resolves them, the floor),
 * the cgroup programs attached to each sandbox, re-resolution when TTLs
 * expire, and the fold table's tail at stop.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>
#include <ifaddrs.h>
#include <limits.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "lib/clock.h"
#include "sbtrace.h"
#include "sbtrace.skel.h"
#include "egress/dns.h"
#include "egress/dnsproxy.h"
#include "egress.h"
#include "egress_proxy.h"
#include "egress_slot.h"
#include "lib/netns.h"
#include "loader.h"
#include "egress/policy.h"
#include "egress/policy_compile.h"
#include "lib/log.h"

#define DNS_TIMEOUT_MS 1000
#define TTL_MIN_S      1
#define TTL_MAX_S      3600
#define TTL_NEGATIVE_S 30 /* retry an unresolvable name after this long */

/* One query over UDP; returns the status, fills addrs. */
static enum sbt_dns_status query(int nsfd, const uint8_t resolver[16], const char *name,
				 uint16_t qtype, struct sbt_dns_addr *out, size_t max, size_t *n,
				 uint32_t *ttl, int *err)
{
	uint8_t q[512], resp[SBT_DNS_MAX_MSG];
	struct sockaddr_storage ss;
	socklen_t sl;
	uint16_t id = (uint16_t)(random() & 0xffff);
	int qlen, fd, domain;
	uint64_t deadline;
	bool v4 = memcmp(resolver, "\0\0\0\0\0\0\0\0\0\0\xff\xff", 12) == 0;

	*n = 0;
	*err = 0;
	qlen = sbt_dns_build_query(id, name, qtype, q, sizeof(q));
	if (qlen < 0) {
		*err = qlen;
		return SBT_DNS_MALFORMED;
	}
	memset(&ss, 0, sizeof(ss));
	if (v4) {
		struct sockaddr_in *sin = (struct sockaddr_in *)&ss;

		sin->sin_family = AF_INET;
		sin->sin_port = htons(53);
		memcpy(&sin->sin_addr, resolver + 12, 4);
		sl = sizeof(*sin);
		domain = AF_INET;
	} else {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(53);
		memcpy(&sin6->sin6_addr, resolver, 16);
		sl = sizeof(*sin6);
		domain = AF_INET6;
	}
	fd = sbt_socket_in_netns(nsfd, domain, SOCK_DGRAM);
	if (fd < 0) {
		*err = fd;
		return SBT_DNS_SERVFAIL;
	}
	/* connect: only the resolver's answers are read */
	if (connect(fd, (struct sockaddr *)&ss, sl) < 0 || send(fd, q, (size_t)qlen, 0) < 0) {
		*err = -errno;
		close(fd);
		return SBT_DNS_SERVFAIL;
	}
	deadline = sbt_mono_ms() + DNS_TIMEOUT_MS;
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		uint64_t now = sbt_mono_ms();
		enum sbt_dns_status st;
		ssize_t r;

		if (now >= deadline || poll(&pfd, 1, (int)(deadline - now)) <= 0) {
			*err = -ETIMEDOUT;
			close(fd);
			return SBT_DNS_SERVFAIL;
		}
		r = recv(fd, resp, sizeof(resp), 0);
		if (r < 0) {
			*err = -errno;
			close(fd);
			return SBT_DNS_SERVFAIL;
		}
		st = sbt_dns_parse_response(resp, (size_t)r, id, name, qtype, out, max, n, ttl);
		if (st == SBT_DNS_MISMATCH)
			continue; /* a stray or spoofed answer: keep waiting for ours */
		close(fd);
		return st;
	}
}

/* --- per-sandbox policy ------------------------------------------------ */

static int find_sandbox_pid(const char *cgdir, int depth)
{
	char path[PATH_MAX + 32], buf[64];
	FILE *f;
	int pid = 0;

	snprintf(path, sizeof(path), "%s/cgroup.procs", cgdir);
	f = fopen(path, "re");
	if (f) {
		if (fgets(buf, sizeof(buf), f))
			pid = atoi(buf);
		fclose(f);
	}
	if (pid > 0 || depth > 8)
		return pid;
	/* an empty sandbox cgroup may have busy children */
	{
		char cmd_dir[PATH_MAX + 2];
		DIR *d;
		struct dirent *e;

		snprintf(cmd_dir, sizeof(cmd_dir), "%s", cgdir);
		d = opendir(cmd_dir);
		if (!d)
			return 0;
		while (!pid && (e = readdir(d))) {
			if (e->d_type != DT_DIR || e->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", cgdir, e->d_name);
			pid = find_sandbox_pid(path, depth + 1);
		}
		closedir(d);
	}
	return pid;
}

static int read_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

/*
 * The host's resolver configuration: /etc/resolv.conf, or the file
 * SBTRACE_RESOLV_CONF names (the operator's environment; tests use it so
 * that no query leaves for the host's real resolver).
 */
static const char *host_resolv_conf(void)
{
	const char *p = getenv("SBTRACE_RESOLV_CONF");

	return p && *p ? p : "/etc/resolv.conf";
}

/*
 * Where this sandbox's names are resolved: --resolver (or a tap's
 * resolver=), reached from the sandbox's network namespace, else the host's
 * resolver configuration, reached from the host. Never the sandbox's own
 * files: whoever writes them would choose the addresses every host rule
 * allows, and the resolver rule would open port 53 to whatever they name.
 */
static void find_resolver(struct sbt_egress_sandbox *es, const struct sbt_target *sb,
			  const struct sbt_egress_cfg *cfg)
{
	char path[64], text[8192];
	const char *conf = host_resolv_conf();
	int pid = sbt_target_has_cgroup(sb) ? find_sandbox_pid(sb->path, 0) : -1;

	es->nsfd = -1;
	es->resolver_pid = pid;
	if (sb->has_tap && (sb->tap.has_resolver || cfg->has_resolver)) {
		char ns[PATH_MAX + 16];

		memcpy(es->resolver, sb->tap.has_resolver ? sb->tap.resolver : cfg->resolver, 16);
		snprintf(es->resolver_source, sizeof(es->resolver_source), "%s",
			 sb->tap.has_resolver ? "--tap resolver=" : "--resolver");
		es->has_resolver = true;
		if (sb->tap.netns[0] && sbt_netns_path(sb->tap.netns, ns, sizeof(ns)) == 0)
			es->nsfd = open(ns, O_RDONLY | O_CLOEXEC);
		return;
	}
	if (cfg->has_resolver) {
		memcpy(es->resolver, cfg->resolver, 16);
		snprintf(es->resolver_source, sizeof(es->resolver_source), "--resolver");
		es->has_resolver = true;
		if (pid > 0) {
			snprintf(path, sizeof(path), "/proc/%d/ns/net", pid);
			es->nsfd = open(path, O_RDONLY | O_CLOEXEC);
		} else if (sbt_target_has_cgroup(sb) && !sb->dns_netns[0]) {
			/* never from the host's namespace: from the first process's, later */
			es->resolver_deferred = true;
		}
		return;
	}
	if (read_file(conf, text, sizeof(text)) == 0 &&
	    sbt_resolv_conf_nameserver(text, es->resolver) == 0) {
		snprintf(es->resolver_source, sizeof(es->resolver_source), "%s", conf);
		es->has_resolver = true;
	}
}

/* Resolve one host rule for a sandbox (A and AAAA). */
static void resolve_host(const struct sbt_egress_cfg *cfg, struct sbt_egress_sandbox *es,
			 struct sbt_host_state *h)
{
	struct sbt_dns_addr a[SBT_HOST_ADDRS];
	size_t n4 = 0, n6 = 0;
	uint32_t ttl4 = 0, ttl6 = 0, ttl;
	enum sbt_dns_status s4, s6;
	int e4 = 0, e6 = 0;

	h->error[0] = '\0';
	if (es->resolver_deferred) {
		snprintf(h->error, sizeof(h->error),
			 "--resolver is asked from the sandbox's network namespace: resolved when "
			 "its first process appears");
		h->nr_addrs = 0;
		h->expires_ms = UINT64_MAX; /* proxy_open makes it due */
		return;
	}
	if (!es->has_resolver) {
		snprintf(h->error, sizeof(h->error), "no resolver: give --resolver ADDR");
		h->nr_addrs = 0;
		h->expires_ms = sbt_mono_ms() + TTL_NEGATIVE_S * 1000ull;
		return;
	}
	s4 = query(es->nsfd, es->resolver, h->name, SBT_DNS_TYPE_A, a, SBT_HOST_ADDRS, &n4, &ttl4,
		   &e4);
	s6 = query(es->nsfd, es->resolver, h->name, SBT_DNS_TYPE_AAAA, a + n4, SBT_HOST_ADDRS - n4,
		   &n6, &ttl6, &e6);
	h->nr_addrs = 0;
	h->nr_floored = 0;
	for (size_t i = 0; i < n4 + n6; i++) {
		int f = sbt_policy_answer_floor(a[i].addr, cfg->rules, cfg->nr_rules);

		if (f < 0) {
			memcpy(h->addrs[h->nr_addrs++], a[i].addr, 16);
			continue;
		}
		memcpy(h->floored[h->nr_floored], a[i].addr, 16);
		h->floored_idx[h->nr_floored++] = (uint32_t)f;
	}
	if (s4 != SBT_DNS_OK && s6 != SBT_DNS_OK) {
		snprintf(h->error, sizeof(h->error), "%s%s%s", sbt_dns_status_str(s4),
			 e4 ? ": " : "", e4 ? strerror(-e4) : "");
		h->expires_ms = sbt_mono_ms() + TTL_NEGATIVE_S * 1000ull;
		return;
	}
	ttl = n4 && n6 ? (ttl4 < ttl6 ? ttl4 : ttl6) : (n4 ? ttl4 : ttl6);
	if (!n4 && !n6)
		ttl = TTL_NEGATIVE_S;
	if (ttl < TTL_MIN_S)
		ttl = TTL_MIN_S;
	if (ttl > TTL_MAX_S)
		ttl = TTL_MAX_S;
	h->ttl = ttl;
	h->expires_ms = sbt_mono_ms() + ttl * 1000ull;
}

/* The rules a sandbox's trie is compiled from: CIDR rules, resolved hosts, the resolver. */
static int sandbox_rules(const struct sbt_egress_cfg *cfg, const struct sbt_egress_sandbox *es,
			 struct sbt_rule **out, size_t *n)
{
	size_t max = cfg->nr_rules + 2 + es->learned.n, k = 0;
	struct sbt_rule *r;

	for (size_t i = 0; i < es->nr_hosts; i++)
		max += es->hosts[i].nr_addrs;
	r = calloc(max, sizeof(*r));
	if (!r)
		return -ENOMEM;
	for (size_t i = 0; i < cfg->nr_rules; i++)
		if (cfg->rules[i].kind == SBT_RULE_CIDR)
			r[k++] = cfg->rules[i];
	for (size_t i = 0; i < es->nr_hosts; i++) {
		const struct sbt_rule *hr = &cfg->rules[es->hosts[i].rule_idx];

		for (size_t j = 0; j < es->hosts[i].nr_addrs; j++) {
			struct sbt_rule *c = &r[k++];

			*c = *hr;
			c->kind = SBT_RULE_CIDR;
			memcpy(c->addr, es->hosts[i].addrs[j], 16);
			c->prefix = 128;
		}
	}
	/* What the sandbox's DNS proxy passed on, under the host rule of the name. */
	for (size_t i = 0; i < es->learned.n; i++) {
		struct sbt_rule *c;

		if (es->learned.e[i].rule_idx >= cfg->nr_rules)
			continue; /* --egress learn's name only: it allows nothing */
		c = &r[k++];
		*c = cfg->rules[es->learned.e[i].rule_idx];
		c->kind = SBT_RULE_CIDR;
		memcpy(c->addr, es->learned.e[i].addr, 16);
		c->prefix = 128;
	}
	/*
	 * Without a proxy, host rules need the resolver reachable: port 53, rule
	 * "resolver". With one (or one to come), the sandbox's DNS never leaves
	 * for it.
	 */
	if (es->nr_hosts && es->has_resolver && !es->want_proxy && !es->nr_proxies) {
		struct sbt_rule *c = &r[k++];

		memset(c, 0, sizeof(*c));
		c->kind = SBT_RULE_CIDR;
		memcpy(c->addr, es->resolver, 16);
		c->prefix = 128;
		c->port_lo = c->port_hi = 53;
		c->id = cfg->resolver_rule_id;
	}
	*out = r;
	*n = k;
	return 0;
}

/* Compile a sandbox's rules and make its slot's trie hold exactly those entries. */
static int write_policy(struct sbt_egress_state *st, uint32_t slot, char *errbuf, size_t errlen)
{
	struct sbt_egress_sandbox *es = &st->sb[slot];
	struct sbt_rule *rules;
	size_t nr_rules;
	int err;

	if (sandbox_rules(es->cfg, es, &rules, &nr_rules)) {
		snprintf(errbuf, errlen, "out of memory");
		return -ENOMEM;
	}
	err = sbt_slot_policy_write(st->plan->skel, slot, &es->policy, rules, nr_rules, errbuf,
				    errlen);
	free(rules);
	return err;
}

/* Floor first: say which answer addresses of a host rule stay denied. */
static void warn_floored(const struct sbt_host_state *h, const struct sbt_target *sb)
{
	for (size_t k = 0; k < h->nr_floored; k++) {
		char a[64];

		sbt_addr_str(h->floored[k], a, sizeof(a));
		sbt_log("egress: host %s for sandbox %s resolves to %s, inside the floor (%s): not "
			"allowed; name the address in a cidr rule if it must be",
			h->name, sb->name, a, sbt_egress_floor_text(h->floored_idx[k]));
	}
}

static void drop_dns_event(void *arg, const struct sbt_dns_event *ev)
{
	(void)arg;
	(void)ev;
}

void sbt_egress_init(struct sbt_egress_state *st, struct sbt_plan *plan)
{
	memset(st, 0, sizeof(*st));
	st->plan = plan;
	pthread_mutex_init(&st->dns_lock, NULL);
	for (uint32_t i = 0; i < SBT_MAX_SANDBOXES; i++) {
		st->sb[i].nsfd = -1;
		pthread_mutex_init(&st->sb[i].lock, NULL);
	}
	srandom((unsigned int)(time(NULL) ^ getpid()));
}

/* The proxy's thread learns what it passes on (sbt_egress_learn) ... */
static int proxy_learn(void *arg, uint32_t slot, uint32_t rule_idx, const char *name,
		       const struct sbt_dns_addr *addrs, size_t n, uint64_t ts_ns)
{
	return sbt_egress_learn(arg, slot, rule_idx, name, addrs, n, ts_ns);
}

/* ... and queues what it did for the trace loop. */
static void proxy_event(void *arg, struct sbt_dns_event *ev)
{
	sbt_egress_dns_event(arg, ev);
}

/* The proxies of slot, serving its policy, learning and reporting here. */
static void start_proxy(struct sbt_egress_state *st, uint32_t slot, const struct sbt_target *t)
{
	struct sbt_egress_sandbox *es = &st->sb[slot];

	es->owner = (struct sbt_dnsproxy_owner){ .cfg = es->cfg,
						 .slot = slot,
						 .has_resolver = es->has_resolver,
						 .resolver_nsfd = es->nsfd,
						 .learn = proxy_learn,
						 .event = proxy_event,
						 .arg = st };
	memcpy(es->owner.resolver, es->resolver, 16);
	sbt_egress_proxy_start(st, slot, t);
}

int sbt_egress_add(struct sbt_egress_state *st, uint32_t slot, const struct sbt_egress_cfg *cfg,
		   const struct sbt_target *t, bool attach)
{
	bool policy = cfg->mode == SBT_EGRESS_AUDIT || cfg->mode == SBT_EGRESS_ENFORCE;
	struct sbt_egress_sandbox *es;
	char err[200];
	int rc;

	if (slot >= SBT_MAX_SANDBOXES)
		return -EINVAL;
	es = &st->sb[slot];
	if (es->active)
		sbt_egress_remove(st, slot);
	es->active = true;
	es->cfg = cfg;
	es->name = t->name;
	es->nsfd = -1;
	if (slot >= st->nr)
		st->nr = slot + 1;
	sbt_dns_learn_init(&es->learned, cfg->dns_learn_max);
	sbt_slot_set_mode(st->plan->skel, slot,
			  cfg->mode == SBT_EGRESS_OFF ? SBT_EGRESS_OBSERVE : (uint32_t)cfg->mode);
	st->plan->skel->bss->egress_learn[slot] = policy && cfg->learn;
	if (!policy)
		return 0;
	for (size_t r = 0; r < cfg->nr_rules; r++) {
		if (cfg->rules[r].kind != SBT_RULE_HOST || es->nr_hosts >= SBT_MAX_HOSTS)
			continue;
		es->hosts[es->nr_hosts].rule_idx = r;
		snprintf(es->hosts[es->nr_hosts].name, sizeof(es->hosts[0].name), "%s",
			 cfg->rules[r].host);
		es->nr_hosts++;
	}
	if (es->nr_hosts || cfg->learn)
		find_resolver(es, t, cfg);
	/* learn mode: every name through the proxy, whose answers name the connects */
	if ((es->nr_hosts || cfg->dns_proxy_always || cfg->learn) &&
	    (cfg->mode == SBT_EGRESS_ENFORCE || cfg->learn) && !cfg->dns_proxy_off &&
	    (sbt_target_has_cgroup(t) || t->has_tap))
		start_proxy(st, slot, t);
	for (size_t h = 0; h < es->nr_hosts; h++) {
		resolve_host(cfg, es, &es->hosts[h]);
		if (es->hosts[h].error[0])
			sbt_log("egress: host %s for sandbox %s: %s; denied until it resolves",
				es->hosts[h].name, t->name, es->hosts[h].error);
		warn_floored(&es->hosts[h], t);
	}
	pthread_mutex_lock(&es->lock);
	rc = write_policy(st, slot, err, sizeof(err));
	pthread_mutex_unlock(&es->lock);
	if (rc) {
		sbt_log("egress: policy for %s: %s", t->name, err);
		return -EINVAL;
	}
	if (!attach || !sbt_target_has_cgroup(t))
		return 0; /* the caller's links, or a tap-only sandbox: the tc program enforces */
	if (sbt_slot_attach(st->plan->skel, t, SBT_EGRESS_PROGS, es->links, &es->nr_links))
		return -EPERM;
	return 0;
}

/* Stop and free what slot holds; its trie entries cleared with clear (else left, freed). */
static void sandbox_release(struct sbt_egress_state *st, uint32_t slot, bool clear)
{
	struct sbt_egress_sandbox *es;

	if (slot >= SBT_MAX_SANDBOXES || !st->sb[slot].active)
		return;
	es = &st->sb[slot];
	sbt_egress_proxy_stop(st, slot);
	for (size_t l = 0; l < es->nr_links; l++)
		bpf_link__destroy(es->links[l]);
	if (es->nsfd >= 0)
		close(es->nsfd);
	if (clear) {
		sbt_slot_policy_clear(st->plan->skel, slot, &es->policy);
	} else { /* a pinned link may go on judging with them */
		free(es->policy.entries);
	}
	sbt_dns_learn_free(&es->learned);
	/* a fresh slot for the next sandbox (a mutex is re-made, never copied) */
	pthread_mutex_destroy(&es->lock);
	memset(es, 0, sizeof(*es));
	pthread_mutex_init(&es->lock, NULL);
	es->nsfd = -1;
}

void sbt_egress_remove(struct sbt_egress_state *st, uint32_t slot)
{
	sandbox_release(st, slot, true);
}

int sbt_egress_setup(struct sbt_egress_state *st, struct sbt_plan *plan,
		     const struct sbt_egress_cfg *cfg, const struct sbt_target *targets,
		     uint32_t nr)
{
	sbt_egress_init(st, plan);
	for (uint32_t i = 0; i < nr; i++) {
		int err = sbt_egress_add(st, i, cfg, &targets[i], true);

		if (err)
			return err;
	}
	return 0;
}

void sbt_egress_tick(struct sbt_egress_state *st)
{
	uint64_t now = sbt_mono_ms();

	for (uint32_t i = 0; i < st->nr; i++) {
		struct sbt_egress_sandbox *es = &st->sb[i];
		bool changed = false;
		char err[200];

		if (!es->active)
			continue;
		for (size_t h = 0; h < es->nr_hosts; h++) {
			struct sbt_host_state hs;

			if (now < es->hosts[h].expires_ms)
				continue;
			/* resolved outside the lock: the proxy keeps answering meanwhile */
			hs = es->hosts[h];
			resolve_host(es->cfg, es, &hs);
			hs.refreshes++;
			pthread_mutex_lock(&es->lock);
			if (hs.nr_addrs != es->hosts[h].nr_addrs ||
			    memcmp(hs.addrs, es->hosts[h].addrs, hs.nr_addrs * 16) != 0)
				changed = true;
			es->hosts[h] = hs;
			pthread_mutex_unlock(&es->lock);
		}
		pthread_mutex_lock(&es->lock);
		if (sbt_dns_learn_expire(&es->learned, now))
			changed = true;
		if (changed && write_policy(st, i, err, sizeof(err)))
			sbt_log("egress: policy refresh: %s", err);
		pthread_mutex_unlock(&es->lock);
	}
}

/* Is there room in l for the addresses of an answer not learned yet (for rule_idx)? */
static bool learn_room(const struct sbt_dns_learn *l, uint32_t rule_idx,
		       const struct sbt_dns_addr *addrs, size_t n)
{
	size_t fresh = 0;

	for (size_t i = 0; i < n; i++) {
		const struct sbt_dns_learned *e = sbt_dns_learn_find(l, addrs[i].addr);

		fresh += !e || e->rule_idx != rule_idx;
	}
	return l->n + fresh <= l->max;
}

int sbt_egress_learn(struct sbt_egress_state *st, uint32_t slot, uint32_t rule_idx,
		     const char *name, const struct sbt_dns_addr *addrs, size_t n, uint64_t ts_ns)
{
	struct sbt_egress_sandbox *es = &st->sb[slot];
	uint32_t grace = es->cfg->dns_grace_set ? es->cfg->dns_grace_s : SBT_DNS_GRACE_DEFAULT_S;
	uint64_t now = sbt_mono_ms();
	bool added = false;
	char err[200];
	int ret = 0;

	pthread_mutex_lock(&es->lock);
	/* all of the answer or none of it: room for every new address first */
	added = sbt_dns_learn_expire(&es->learned, now) > 0;
	if (!learn_room(&es->learned, rule_idx, addrs, n))
		ret = -ENOSPC;
	for (size_t i = 0; i < n && !ret; i++) {
		/* a name only (learn mode) is kept: a late connect still has its name */
		bool name_only = rule_idx == SBT_DNS_LEARN_NAME_ONLY;
		int r = sbt_dns_learn_add(&es->learned, addrs[i].addr, rule_idx, name,
					  name_only ? UINT64_MAX
						    : now + ((uint64_t)addrs[i].ttl + grace) * 1000,
					  ts_ns, now);

		if (r < 0)
			ret = r;
		added |= r > 0 && !name_only;
	}
	if (added && write_policy(st, slot, err, sizeof(err))) {
		sbt_log("egress: learning %s: %s", name, err);
		ret = -EIO;
	}
	pthread_mutex_unlock(&es->lock);
	return ret;
}

bool sbt_egress_learned_name(struct sbt_egress_state *st, uint32_t slot, const uint8_t addr[16],
			     char *name, size_t len, uint64_t *ts_ns)
{
	struct sbt_egress_sandbox *es;
	const struct sbt_dns_learned *l;
	bool found = false;

	if (slot >= st->nr || !st->sb[slot].active)
		return false;
	es = &st->sb[slot];
	pthread_mutex_lock(&es->lock);
	l = sbt_dns_learn_find(&es->learned, addr);
	if (l) {
		snprintf(name, len, "%s", l->name);
		*ts_ns = l->learned_ns;
		found = true;
	}
	pthread_mutex_unlock(&es->lock);
	return found;
}

#define DNS_EVENTS_MAX 65536 /* queued between two ticks; beyond, counted as lost */

void sbt_egress_dns_event(struct sbt_egress_state *st, struct sbt_dns_event *ev)
{
	pthread_mutex_lock(&st->dns_lock);
	if (st->nr_dns_events == st->cap_dns_events && st->cap_dns_events < DNS_EVENTS_MAX) {
		size_t cap = st->cap_dns_events ? st->cap_dns_events * 2 : 64;
		struct sbt_dns_event *n = realloc(st->dns_events, cap * sizeof(*n));

		if (n) {
			st->dns_events = n;
			st->cap_dns_events = cap;
		}
	}
	if (st->nr_dns_events < st->cap_dns_events) {
		st->dns_events[st->nr_dns_events++] = *ev;
		memset(ev, 0, sizeof(*ev)); /* the queue owns its allocations now */
	} else {
		st->dns_events_lost++;
		sbt_dns_event_free(ev);
	}
	pthread_mutex_unlock(&st->dns_lock);
}

void sbt_egress_dns_drain(struct sbt_egress_state *st,
			  void (*fn)(void *arg, const struct sbt_dns_event *ev), void *arg)
{
	struct sbt_dns_event *evs;
	size_t n;

	pthread_mutex_lock(&st->dns_lock);
	evs = st->dns_events;
	n = st->nr_dns_events;
	st->dns_events = NULL;
	st->nr_dns_events = st->cap_dns_events = 0;
	pthread_mutex_unlock(&st->dns_lock);
	for (size_t i = 0; i < n; i++) {
		fn(arg, &evs[i]);
		sbt_dns_event_free(&evs[i]);
	}
	free(evs);
}

void sbt_egress_teardown(struct sbt_egress_state *st)
{
	if (!st->plan)
		return;
	sbt_egress_gate_release(st);
	for (uint32_t i = 0; i < st->nr; i++)
		sandbox_release(st, i, false);
	sbt_egress_dns_drain(st, drop_dns_event, NULL);
}

/*
 * Detach the cgroup programs first on stop: nothing new is decided after
 * that. A pinned link stays: its sandbox's controller removes it.
 */
void sbt_egress_detach(struct sbt_egress_state *st)
{
	for (uint32_t i = 0; i < st->nr; i++) {
		sbt_egress_proxy_stop(st, i);
		for (size_t l = 0; l < st->sb[i].nr_links; l++)
			bpf_link__destroy(st->sb[i].links[l]);
		st->sb[i].nr_links = 0;
	}
	sbt_egress_gate_release(st);
}

void sbt_egress_view(const struct sbt_egress_state *st, uint32_t i, struct sbt_egress_view *v)
{
	const struct sbt_egress_sandbox *es;

	memset(v, 0, sizeof(*v));
	if (i >= st->nr || !st->sb[i].active)
		return;
	es = &st->sb[i];
	v->hosts = es->hosts;
	v->nr_hosts = es->nr_hosts;
	v->has_resolver = es->has_resolver;
	v->resolver = es->resolver;
	v->resolver_source = es->resolver_source;
	v->resolver_in_sandbox = es->nsfd >= 0 || es->resolver_deferred;
	v->nr_entries = es->policy.nr;
	v->dns_proxy = es->want_proxy || es->nr_proxies;
	for (size_t p = 0; p < es->nr_proxies; p++) {
		if (!es->proxies[p].netns_cookie)
			continue;
		if (!v->dns_proxy_netns++)
			for (int k = 0; k < 4; k++)
				v->dns_proxy_ports[k] = ntohs(es->proxies[p].port[k]);
	}
	v->dns_proxy_tap = es->tap_proxy;
	if (!v->dns_proxy_tap)
		return;
	for (int k = 0; k < 4; k++)
		v->dns_proxy_tap_ports[k] = ntohs(es->tap.port[k]);
	if (es->tap.has4 && es->tap.port[SBT_DNS_UDP4]) {
		uint8_t *a = v->dns_proxy_tap_addrs[v->nr_dns_proxy_tap_addrs++];

		memset(a, 0, 10);
		a[10] = a[11] = 0xff;
		memcpy(a + 12, es->tap.host4, 4);
	}
	if (es->tap.has6 && es->tap.port[SBT_DNS_UDP6])
		memcpy(v->dns_proxy_tap_addrs[v->nr_dns_proxy_tap_addrs++], es->tap.host6, 16);
}
