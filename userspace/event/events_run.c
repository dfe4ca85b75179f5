// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The run's events as JSON (TraceStarted, EventsLost, ShellInvocationObserved,
 * TraceStopped, SandboxAdded, SandboxRemoved, TraceStats), built from the
 * typed events of kinds.h; ProcessExec and Egress* come from events.c, DNS
 * from events_dns.c. The schema is userspace/schema/events.schema.json.
 */
#include <stdio.h>
#include <string.h>

#include "egress/policy.h"
#include "egress/policy_compile.h"
#include "event/envelope.h"
#include "event/events_run.h"
#include "event/kinds.h"
#include "exec/shellagg.h"
#include "trace/tracer.h"

static void hook_json_add(json_object *hooks, const struct sbt_hook_result *res)
{
	json_object *h = json_object_new_object(), *tried = json_object_new_array();

	json_object_object_add(h, "mode", res->mode ? json_object_new_string(res->mode) : NULL);
	for (unsigned int i = 0; i < res->nr_tries; i++) {
		json_object *t = json_object_new_object();
		const char *err = sbt_hook_try_error(res, i);

		json_object_object_add(t, "mode", json_object_new_string(res->tries[i].mode));
		json_object_object_add(t, "stage", json_object_new_string(res->tries[i].stage));
		json_object_object_add(t, "error", err ? json_object_new_string(err) : NULL);
		json_object_array_add(tried, t);
	}
	json_object_object_add(h, "tried", tried);
	json_object_object_add(h, "fallback",
			       json_object_new_boolean(res->mode && res->nr_tries > 1));
	json_object_object_add(hooks, res->capability, h);
}

json_object *sbt_hooks_json(const struct sbt_hook_result *const *list)
{
	json_object *hooks = json_object_new_object();

	for (; *list; list++)
		hook_json_add(hooks, *list);
	return hooks;
}

static json_object *addr_json(const uint8_t addr[16])
{
	char buf[64];

	sbt_addr_str(addr, buf, sizeof(buf));
	return json_object_new_string(buf);
}

static json_object *tap_json(const struct sbt_target *sb, const struct sbt_target_view *view,
			     const struct sbt_egress_cfg *cfg)
{
	json_object *o = json_object_new_object(), *guests = json_object_new_array();
	const struct sbt_tap_spec *t = &sb->tap;

	json_object_object_add(o, "ifname", json_object_new_string(t->ifname));
	if (view->tap_ifindex)
		json_object_object_add(o, "ifindex", json_object_new_int64(view->tap_ifindex));
	json_object_object_add(o, "netns", t->netns[0] ? json_object_new_string(t->netns) : NULL);
	for (uint32_t g = 0; g < t->nr_guest; g++)
		json_object_array_add(guests, addr_json(t->guest[g]));
	json_object_object_add(o, "guest", guests);
	json_object_object_add(o, "source_check", json_object_new_boolean(t->nr_guest > 0));
	if (t->has_resolver)
		json_object_object_add(o, "resolver", addr_json(t->resolver));
	else if (cfg->has_resolver)
		json_object_object_add(o, "resolver", addr_json(cfg->resolver));
	else
		json_object_object_add(o, "resolver", NULL);
	if (view->tap_ifindex)
		json_object_object_add(
			o, "mode", view->tap_mode ? json_object_new_string(view->tap_mode) : NULL);
	return o;
}

static json_object *sandbox_json(const struct sbt_target *sb, const struct sbt_target_view *view,
				 const struct sbt_egress_cfg *cfg)
{
	json_object *o = json_object_new_object(), *vis = json_object_new_object();

	json_object_object_add(o, "name", json_object_new_string(sb->name));
	json_object_object_add(o, "slot", json_object_new_int64(sb->slot));
	json_object_object_add(o, "cgroup",
			       sbt_target_has_cgroup(sb) ? json_object_new_string(sb->path) : NULL);
	json_object_object_add(o, "cgroup_id", json_object_new_uint64(sb->cgroup_id));
	json_object_object_add(o, "level", json_object_new_int64(sb->level));
	json_object_object_add(o, "key", json_object_new_string(sb->origin));
	if (sb->origin_pid)
		json_object_object_add(o, "pid", json_object_new_int64(sb->origin_pid));
	json_object_object_add(vis, "exec", json_object_new_string(sbt_target_vis_exec(sb)));
	json_object_object_add(vis, "network",
			       json_object_new_string(sbt_target_vis_network(sb, cfg->mode)));
	json_object_object_add(o, "visibility", vis);
	json_object_object_add(o, "tap", sb->has_tap ? tap_json(sb, view, cfg) : NULL);
	/* a microVM sandbox of the shim: how qemu runs its guest */
	if (sb->accel[0])
		json_object_object_add(o, "accel", json_object_new_string(sb->accel));
	if (sb->boot[0]) {
		json_object *boot = json_object_new_object();

		json_object_object_add(boot, "mode", json_object_new_string(sb->boot));
		json_object_object_add(
			boot, "why", sb->boot_why[0] ? json_object_new_string(sb->boot_why) : NULL);
		json_object_object_add(o, "boot", boot);
	}
	return o;
}

static json_object *floor_json(void)
{
	json_object *floor = json_object_new_array();
	size_t nfloor;
	const struct sbt_floor *fl = sbt_policy_floor(&nfloor);

	for (size_t i = 0; i < nfloor; i++) {
		json_object *f;
		char buf[64];
		uint8_t prefix = fl[i].prefix;
		bool v4 =
			memcmp(fl[i].addr, "\0\0\0\0\0\0\0\0\0\0\xff\xff", 12) == 0 && prefix >= 96;

		if (fl[i].answer_only) /* not the kernel's floor: refused in answers only */
			continue;
		f = json_object_new_object();

		sbt_addr_str(fl[i].addr, buf, sizeof(buf));
		snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "/%u",
			 v4 ? prefix - 96u : prefix);
		json_object_object_add(f, "cidr", json_object_new_string(buf));
		json_object_object_add(f, "what", json_object_new_string(fl[i].what));
		json_object_array_add(floor, f);
	}
	return floor;
}

/* Answer addresses of a host left out because they are inside the floor. */
static json_object *floored_json(const struct sbt_host_state *hs)
{
	json_object *a = json_object_new_array();

	for (size_t k = 0; k < hs->nr_floored; k++) {
		json_object *f = json_object_new_object();
		const char *what = sbt_egress_floor_text(hs->floored_idx[k]);

		json_object_object_add(f, "addr", addr_json(hs->floored[k]));
		json_object_object_add(f, "reason", json_object_new_string("floor"));
		json_object_object_add(f, "floor", what ? json_object_new_string(what) : NULL);
		json_object_array_add(a, f);
	}
	return a;
}

/* One sandbox's resolver and what each host rule resolved to. */
static json_object *egress_sandbox_json(const struct sbt_target *sb,
					const struct sbt_egress_view *es)
{
	json_object *o = json_object_new_object(), *hosts = json_object_new_array();

	json_object_object_add(o, "name", json_object_new_string(sb->name));
	if (es->has_resolver) {
		json_object *r = json_object_new_object();

		json_object_object_add(r, "addr", addr_json(es->resolver));
		json_object_object_add(r, "source", json_object_new_string(es->resolver_source));
		json_object_object_add(
			r, "netns",
			json_object_new_string(es->resolver_in_sandbox ? "sandbox" : "host"));
		json_object_object_add(o, "resolver", r);
	} else {
		json_object_object_add(o, "resolver", NULL);
	}
	for (size_t h = 0; h < es->nr_hosts; h++) {
		const struct sbt_host_state *hs = &es->hosts[h];
		json_object *ho = json_object_new_object(), *addrs = json_object_new_array();

		json_object_object_add(ho, "name", json_object_new_string(hs->name));
		for (size_t a = 0; a < hs->nr_addrs; a++)
			json_object_array_add(addrs, addr_json(hs->addrs[a]));
		json_object_object_add(ho, "addrs", addrs);
		json_object_object_add(ho, "floored", floored_json(hs));
		json_object_object_add(ho, "ttl", json_object_new_int64(hs->ttl));
		json_object_object_add(ho, "error",
				       hs->error[0] ? json_object_new_string(hs->error) : NULL);
		json_object_array_add(hosts, ho);
	}
	json_object_object_add(o, "hosts", hosts);
	json_object_object_add(o, "entries", json_object_new_int64((int64_t)es->nr_entries));
	if (es->dns_proxy) {
		static const char *const k[4] = { "udp4", "tcp4", "udp6", "tcp6" };
		json_object *p = json_object_new_object();

		json_object *t = NULL;

		for (int i = 0; i < 4; i++)
			json_object_object_add(p, k[i],
					       json_object_new_int(es->dns_proxy_ports[i]));
		json_object_object_add(p, "netns",
				       json_object_new_int64((int64_t)es->dns_proxy_netns));
		if (es->dns_proxy_tap) {
			json_object *a = json_object_new_array();

			t = json_object_new_object();
			for (int i = 0; i < 4; i++)
				json_object_object_add(
					t, k[i], json_object_new_int(es->dns_proxy_tap_ports[i]));
			for (size_t i = 0; i < es->nr_dns_proxy_tap_addrs; i++)
				json_object_array_add(a, addr_json(es->dns_proxy_tap_addrs[i]));
			json_object_object_add(t, "addrs", a);
		}
		json_object_object_add(p, "tap", t);
		json_object_object_add(o, "dns_proxy", p);
	} else {
		json_object_object_add(o, "dns_proxy", NULL);
	}
	return o;
}

/* The policy as loaded: mode, rules, floor, and per sandbox its resolver and hosts. */
static json_object *egress_json(const struct sbt_ev_started *st)
{
	const struct sbt_egress_cfg *cfg = &st->opts->egress;
	json_object *o = json_object_new_object(), *rules = json_object_new_array();
	json_object *sbs = json_object_new_array();

	/* learn is audit with the proxy and the floor: said as itself */
	json_object_object_add(
		o, "mode",
		json_object_new_string(cfg->learn ? "learn" : sbt_egress_mode_name(cfg->mode)));
	for (size_t i = 0; i < cfg->nr_rules; i++) {
		json_object *r = json_object_new_object();

		json_object_object_add(r, "id", json_object_new_int64(cfg->rules[i].id));
		json_object_object_add(r, "text", sbt_json_string(cfg->rules[i].text));
		json_object_array_add(rules, r);
	}
	json_object_object_add(o, "rules", rules);
	json_object_object_add(o, "floor", floor_json());
	for (uint32_t i = 0; st->views && i < st->opts->nr_targets; i++)
		json_object_array_add(
			sbs, egress_sandbox_json(&st->opts->targets[i], &st->views[i].egress));
	json_object_object_add(o, "sandboxes", sbs);
	return o;
}

json_object *sbt_json_started(const struct sbt_event *ev)
{
	const struct sbt_ev_started *st = &ev->started;
	const struct sbt_trace_opts *opts = st->opts;
	json_object *o = sbt_event_new(sbt_event_name(ev), ev->ts, NULL);
	json_object *sbs = json_object_new_array(), *vis = json_object_new_object();
	const char *vexec = "host", *vnet = NULL;

	json_object_object_add(o, "version", json_object_new_string(SBTRACE_VERSION));
	if (st->kernel)
		json_object_object_add(o, "kernel", json_object_new_string(st->kernel));
	for (uint32_t i = 0; i < opts->nr_targets; i++) {
		const struct sbt_target *sb = &opts->targets[i];
		const char *n = sbt_target_vis_network(sb, opts->egress.mode);
		const char *x = sbt_target_vis_exec(sb);

		json_object_array_add(sbs, sandbox_json(sb, &st->views[i], &opts->egress));
		/* the run as a whole: the weakest exec view (none < guest_kernel < host); a tap when any sandbox has one */
		if (strcmp(x, "none") == 0)
			vexec = "none";
		else if (strcmp(x, "guest_kernel") == 0 && strcmp(vexec, "host") == 0)
			vexec = "guest_kernel";
		if (!vnet || strcmp(n, "tap") == 0 || strcmp(vnet, "none") == 0)
			vnet = n;
	}
	json_object_object_add(o, "sandboxes", sbs);
	json_object_object_add(o, "hooks", sbt_hooks_json(st->hooks));
	json_object_object_add(vis, "exec", json_object_new_string(vexec));
	json_object_object_add(vis, "network", json_object_new_string(vnet ? vnet : "none"));
	json_object_object_add(o, "visibility", vis);
	json_object_object_add(o, "egress", egress_json(st));
	json_object_object_add(o, "argv_max", json_object_new_int64(opts->exec.argv_max));
	json_object_object_add(o, "ringbuf_bytes", json_object_new_int64(opts->exec.ringbuf_bytes));
	json_object_object_add(o, "poll_ms", json_object_new_int64(opts->exec.poll_ms));
	json_object_object_add(o, "attach_ms", json_object_new_uint64(st->attach_ms));
	return o;
}

json_object *sbt_json_lost(const struct sbt_event *ev)
{
	const struct sbt_ev_lost *l = &ev->lost;
	json_object *o =
		sbt_event_new(sbt_event_name(ev), ev->ts, ev->sandbox ? ev->sandbox->name : NULL);

	json_object_object_add(o, "lost", json_object_new_uint64(l->lost));
	if (l->has_total)
		json_object_object_add(o, "lost_total", json_object_new_uint64(l->lost_total));
	json_object_object_add(o, "reason", json_object_new_string(l->reason));
	if (l->kind)
		json_object_object_add(o, "kind", json_object_new_string(l->kind));
	if (l->detail)
		json_object_object_add(o, "detail", json_object_new_string(l->detail));
	return o;
}

/* complete, exec_complete, egress_complete: the same three in both events that carry them. */
static void completeness_json_add(json_object *o, const struct sbt_completeness *c)
{
	json_object_object_add(o, "complete", json_object_new_boolean(c->all));
	json_object_object_add(o, "exec_complete", json_object_new_boolean(c->exec));
	json_object_object_add(o, "egress_complete", json_object_new_boolean(c->egress));
	if (c->exec_reason)
		json_object_object_add(o, "exec_incomplete_reason",
				       json_object_new_string(c->exec_reason));
}

json_object *sbt_json_summary(const struct sbt_event *ev)
{
	json_object *o = sbt_event_new(sbt_event_name(ev), ev->ts, ev->sandbox->name);
	json_object *s = sbt_shellagg_to_json(ev->summary.agg);

	if (s) {
		json_object_object_foreach(s, key, val)
		{
			json_object_object_add(o, key, json_object_get(val));
		}
		json_object_put(s);
	}
	completeness_json_add(o, &ev->summary.complete);
	json_object_object_add(o, "exec_visible",
			       json_object_new_boolean(ev->summary.exec_visible));
	return o;
}

static json_object *guest_json(const struct sbt_guest_info *g)
{
	json_object *o = json_object_new_object(), *bpf = NULL;

	json_object_object_add(o, "attached", json_object_new_boolean(g->hello));
	json_object_object_add(o, "bye", json_object_new_boolean(g->bye));
	json_object_object_add(o, "mode", g->hello ? sbt_json_string(g->mode) : NULL);
	json_object_object_add(o, "kernel", g->hello ? sbt_json_string(g->kernel) : NULL);
	json_object_object_add(o, "heartbeat_ms", json_object_new_int64(g->hb_ms));
	json_object_object_add(o, "attached_ts",
			       g->hello ? json_object_new_uint64(g->attached_ts) : NULL);
	json_object_object_add(o, "frames", json_object_new_uint64(g->frames));
	json_object_object_add(o, "bytes", json_object_new_uint64(g->bytes));
	if (g->bpf_run_cnt) {
		bpf = json_object_new_object();
		json_object_object_add(bpf, "run_ns", json_object_new_uint64(g->bpf_run_ns));
		json_object_object_add(bpf, "run_cnt", json_object_new_uint64(g->bpf_run_cnt));
	}
	json_object_object_add(o, "bpf", bpf);
	return o;
}

static json_object *totals_json(const char *name, const struct sbt_target_totals *t)
{
	json_object *s = json_object_new_object(), *eg = json_object_new_object();

	json_object_object_add(s, "name", json_object_new_string(name));
	json_object_object_add(s, "execs", json_object_new_uint64(t->execs));
	json_object_object_add(s, "received", json_object_new_uint64(t->received));
	json_object_object_add(s, "lost", json_object_new_uint64(t->lost));
	completeness_json_add(s, &t->complete);
	json_object_object_add(s, "first_exec_ts",
			       t->first_exec_ts ? json_object_new_uint64(t->first_exec_ts) : NULL);
	json_object_object_add(eg, "records", json_object_new_uint64(t->eg_records));
	json_object_object_add(eg, "events", json_object_new_uint64(t->eg_events));
	json_object_object_add(eg, "denied", json_object_new_uint64(t->eg_denied));
	json_object_object_add(eg, "lost", json_object_new_uint64(t->eg_lost));
	json_object_object_add(s, "egress", eg);
	if (t->guest)
		json_object_object_add(s, "guest", guest_json(t->guest));
	return s;
}

json_object *sbt_json_stopped(const struct sbt_event *ev)
{
	const struct sbt_ev_stopped *st = &ev->stopped;
	const struct sbt_target *targets = st->targets;
	json_object *o = sbt_event_new(sbt_event_name(ev), ev->ts, NULL);
	json_object *sbs = json_object_new_array();

	for (uint32_t i = 0; i < st->nr; i++)
		json_object_array_add(sbs, totals_json(st->names ? st->names[i] : targets[i].name,
						       &st->totals[i]));
	json_object_object_add(o, "reason", json_object_new_string(st->reason));
	json_object_object_add(o, "duration_ms", json_object_new_uint64(st->duration_ms));
	json_object_object_add(o, "sandboxes", sbs);
	json_object_object_add(o, "decode_errors", json_object_new_uint64(st->decode_errors));
	return o;
}

/* SandboxAdded's egress: null when the sandbox has no policy. */
static json_object *egress_policy_json(const struct sbt_ev_sandbox *c)
{
	json_object *o;

	if (!c->egress_mode)
		return NULL;
	o = json_object_new_object();
	json_object_object_add(o, "source", json_object_new_string(c->egress_source));
	json_object_object_add(o, "mode", json_object_new_string(c->egress_mode));
	json_object_object_add(o, "rules", json_object_new_uint64(c->egress_rules));
	json_object_object_add(o, "error",
			       c->egress_error ? json_object_new_string(c->egress_error) : NULL);
	if (c->dns_proxy) {
		static const char *const k[4] = { "udp4", "tcp4", "udp6", "tcp6" };
		json_object *p = json_object_new_object();

		for (int i = 0; i < 4; i++)
			json_object_object_add(p, k[i], json_object_new_int(c->dns_proxy_ports[i]));
		json_object_object_add(p, "netns",
				       json_object_new_int64((int64_t)c->dns_proxy_netns));
		json_object_object_add(o, "dns_proxy", p);
	} else {
		json_object_object_add(o, "dns_proxy", NULL);
	}
	return o;
}

/* What SandboxAdded and SandboxRemoved both say of the sandbox. */
static json_object *sandbox_change_json(const struct sbt_event *ev)
{
	const struct sbt_ev_sandbox *c = &ev->sandbox_change;
	json_object *o;

	if (!ev->sandbox) /* always one: a sandbox's own event */
		return NULL;
	o = sbt_event_new(sbt_event_name(ev), ev->ts, ev->sandbox->name);
	json_object_object_add(o, "source", json_object_new_string(c->source));
	json_object_object_add(o, "cgroup", json_object_new_string(ev->sandbox->path));
	json_object_object_add(o, "cgroup_id", json_object_new_uint64(ev->sandbox->cgroup_id));
	json_object_object_add(o, "slot", json_object_new_int64(ev->sandbox->slot));
	return o;
}

/* What the container runtime says of the sandbox's cgroup; null when nothing. */
static json_object *container_json(const struct sbt_container *c)
{
	json_object *o;

	if (!c)
		return NULL;
	o = json_object_new_object();
	json_object_object_add(o, "runtime", json_object_new_string(c->runtime));
	json_object_object_add(o, "id", json_object_new_string(c->id));
	json_object_object_add(o, "name", sbt_json_string(c->name));
	json_object_object_add(o, "image", sbt_json_string(c->image));
	return o;
}

json_object *sbt_json_sandbox_added(const struct sbt_event *ev)
{
	const struct sbt_ev_sandbox *c = &ev->sandbox_change;
	json_object *o = sandbox_change_json(ev);

	if (!o)
		return NULL;
	json_object_object_add(o, "registered_by", json_object_new_string(c->registered_by));
	json_object_object_add(o, "released", json_object_new_boolean(c->released));
	json_object_object_add(o, "adopted", json_object_new_boolean(ev->sandbox->adopted));
	json_object_object_add(o, "observed_since",
			       ev->sandbox->adopted
				       ? json_object_new_uint64(ev->sandbox->observed_since_ns)
				       : NULL);
	json_object_object_add(o, "egress", egress_policy_json(c));
	json_object_object_add(o, "container", container_json(c->container));
	return o;
}

json_object *sbt_json_sandbox_removed(const struct sbt_event *ev)
{
	json_object *o = sandbox_change_json(ev);

	if (o)
		json_object_object_add(o, "totals",
				       totals_json(ev->sandbox->name, ev->sandbox_change.totals));
	return o;
}

json_object *sbt_json_stats(const struct sbt_event *ev)
{
	const struct sbt_ev_stats *st = &ev->stats;
	json_object *o = sbt_event_new(sbt_event_name(ev), ev->ts, NULL);
	json_object *sbs = json_object_new_array(), *rb = json_object_new_object();

	json_object_object_add(o, "uptime_ms", json_object_new_uint64(st->uptime_ms));
	json_object_object_add(rb, "pending_bytes",
			       json_object_new_uint64(st->ringbuf_pending_bytes));
	json_object_object_add(rb, "size_bytes", json_object_new_uint64(st->ringbuf_size_bytes));
	json_object_object_add(o, "ringbuf", rb);
	json_object_object_add(o, "decode_errors", json_object_new_uint64(st->decode_errors));
	json_object_object_add(o, "sandboxes_added", json_object_new_uint64(st->sandboxes_added));
	json_object_object_add(o, "sandboxes_removed",
			       json_object_new_uint64(st->sandboxes_removed));
	json_object_object_add(o, "sandboxes_unregistered",
			       json_object_new_uint64(st->sandboxes_unregistered));
	for (uint32_t i = 0; i < st->nr; i++) {
		const struct sbt_stats_sandbox *s = &st->targets[i];
		json_object *so = json_object_new_object();

		json_object_object_add(so, "name", json_object_new_string(s->name));
		json_object_object_add(so, "execs", json_object_new_uint64(s->execs));
		json_object_object_add(so, "received", json_object_new_uint64(s->received));
		json_object_object_add(so, "lost", json_object_new_uint64(s->lost));
		json_object_object_add(so, "shells", json_object_new_uint64(s->shells));
		json_object_array_add(sbs, so);
	}
	json_object_object_add(o, "sandboxes", sbs);
	return o;
}
