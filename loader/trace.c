// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* `sbtrace trace`: attach, register sandboxes, drain the ring buffer, report. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/utsname.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "clock.h"
#include "sbtrace.h"
#include "sbtrace.skel.h"
#include "cgroupfs.h"
#include "decode.h"
#include "egress.h"
#include "policy.h"
#include "events.h"
#include "loader.h"
#include "proctab.h"
#include "shell.h"
#include "shellagg.h"
#include "trace.h"

int sbt_verbose;
static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

struct sandbox_state {
	uint64_t received;	/* ProcessExec records decoded for this slot */
	uint64_t lost_reported; /* lost records already reported in EventsLost */
	uint64_t kernel_execs;	/* last read of the kernel's counter */
	uint64_t kernel_lost;
	struct sbt_shellagg *agg;
	/* egress */
	uint64_t eg_received; /* egress records decoded */
	uint64_t eg_events;   /* verdicts they stand for (sum of counts) */
	uint64_t eg_denied;   /* of which denied */
	uint64_t eg_lost_reported;
	uint64_t kernel_eg, kernel_eg_lost;
	uint64_t first_exec_ts; /* epoch ns of the first exec seen, 0 if none */
};

/* The last record of each fold key, to report the folded tail at stop. */
struct fold_entry {
	struct sbt_fold_key key;
	struct sbt_egress ev;
	bool used;
};

struct trace_ctx {
	const struct sbt_trace_opts *opts;
	struct sbt_sink sink;
	struct sandbox_state st[SBT_MAX_SANDBOXES];
	struct sbt_proctab *proc;
	struct sbt_procfs_ctx procfs;
	const char *names[SBT_MAX_SANDBOXES];
	const char **argv_store;
	char *tail;
	int64_t boot_offset;
	uint64_t decode_errors;
	enum sbt_decode_err first_decode_err;
	int map_stats_fd;
	struct sbt_plan *plan;
	struct sbt_egress_state *egress;
	struct sbt_tap_state *taps;
	struct fold_entry *folds; /* open addressing, FOLD_SLOTS entries */
};

#define FOLD_SLOTS (1u << 15)

static void fold_key_of(const struct sbt_egress *ev, struct sbt_fold_key *k)
{
	memset(k, 0, sizeof(*k));
	k->slot = ev->slot;
	k->pid = ev->pid;
	memcpy(k->daddr, ev->daddr, 16);
	k->dport = ev->dport;
	k->proto = ev->proto;
	k->hook = ev->hook;
	k->verdict = ev->verdict;
	k->reason = ev->reason;
}

static struct fold_entry *fold_slot(struct trace_ctx *ctx, const struct sbt_fold_key *k)
{
	const unsigned char *b = (const unsigned char *)k;
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < sizeof(*k); i++)
		h = (h ^ b[i]) * 1099511628211ull;
	for (uint32_t i = 0; i < FOLD_SLOTS; i++) {
		struct fold_entry *e = &ctx->folds[(h + i) & (FOLD_SLOTS - 1)];

		if (!e->used || memcmp(&e->key, k, sizeof(*k)) == 0)
			return e;
	}
	return NULL; /* full: the tail of this key is reported without its details */
}

static void handle_egress(struct trace_ctx *ctx, const void *data, size_t size)
{
	const struct sbt_egress_cfg *cfg = &ctx->opts->egress;
	enum sbt_decode_err derr;
	struct sandbox_state *st;
	struct sbt_fold_key k;
	struct fold_entry *fe;
	struct sbt_egress ev;

	derr = sbt_decode_egress(data, size, &ev);
	if (derr == SBT_DECODE_OK && ev.slot >= ctx->opts->nr_sandboxes)
		derr = SBT_DECODE_BAD_FIELD;
	if (derr != SBT_DECODE_OK) {
		if (!ctx->decode_errors++)
			ctx->first_decode_err = derr;
		return;
	}
	st = &ctx->st[ev.slot];
	st->eg_received++;
	st->eg_events += ev.count;
	if (ev.verdict == SBT_VERDICT_DENIED)
		st->eg_denied += ev.count;
	fold_key_of(&ev, &k);
	fe = ctx->folds ? fold_slot(ctx, &k) : NULL;
	if (fe) {
		fe->used = true;
		fe->key = k;
		fe->ev = ev;
	}
	sbt_sink_write(&ctx->sink,
		       sbt_event_egress(&ev, sbt_boot_to_epoch_ns(ev.ts_boot_ns, ctx->boot_offset),
					ctx->opts->sandboxes[ev.slot].name,
					sbt_egress_rule_text(cfg, ev.rule_id),
					sbt_egress_floor_text(ev.floor_idx)));
}

/* At stop: events folded since the last record of their key. */
static void flush_folds(struct trace_ctx *ctx)
{
	int fd = bpf_map__fd(ctx->plan->skel->maps.egress_fold);
	struct sbt_fold_key key, next, *prev = NULL;
	const struct sbt_egress_cfg *cfg = &ctx->opts->egress;

	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		struct sbt_fold_val val;
		struct fold_entry *fe;
		struct sbt_egress ev;

		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &val) || val.folded == 0 ||
		    key.slot >= ctx->opts->nr_sandboxes)
			continue;
		fe = fold_slot(ctx, &key);
		if (fe && fe->used) {
			ev = fe->ev;
		} else {
			memset(&ev, 0, sizeof(ev));
			ev.slot = key.slot;
			ev.pid = key.pid;
			memcpy(ev.daddr, key.daddr, 16);
			ev.dport = key.dport;
			ev.proto = key.proto;
			ev.hook = key.hook;
			ev.verdict = key.verdict;
			ev.reason = key.reason;
			ev.family = AF_INET6;
		}
		ev.count = val.folded;
		ctx->st[key.slot].eg_events += val.folded;
		if (ev.verdict == SBT_VERDICT_DENIED)
			ctx->st[key.slot].eg_denied += val.folded;
		sbt_sink_write(&ctx->sink, sbt_event_egress(&ev, sbt_now_epoch_ns(),
							    ctx->opts->sandboxes[key.slot].name,
							    sbt_egress_rule_text(cfg, ev.rule_id),
							    sbt_egress_floor_text(ev.floor_idx)));
	}
}

static int handle_record(void *vctx, void *data, size_t size)
{
	struct trace_ctx *ctx = vctx;
	const struct sbt_sandbox *sb;
	struct sbt_shell_class cls;
	struct sandbox_state *st;
	enum sbt_decode_err derr;
	struct sbt_exec ev;
	bool is_shell;
	uint64_t ts;

	if (sbt_record_type(data, size) == SBT_REC_EGRESS) {
		handle_egress(ctx, data, size);
		return 0;
	}
	derr = sbt_decode_exec(data, size, &ev, ctx->argv_store, ctx->tail);
	if (derr == SBT_DECODE_OK && ev.slot >= ctx->opts->nr_sandboxes)
		derr = SBT_DECODE_BAD_LENGTHS;
	if (derr != SBT_DECODE_OK) {
		if (!ctx->decode_errors++)
			ctx->first_decode_err = derr;
		return 0;
	}
	sb = &ctx->opts->sandboxes[ev.slot];
	st = &ctx->st[ev.slot];
	st->received++;
	ts = sbt_boot_to_epoch_ns(ev.ts_boot_ns, ctx->boot_offset);
	if (!st->first_exec_ts)
		st->first_exec_ts = ts;

	sbt_proctab_rename(ctx->proc, ev.ppid, ev.parent_comm);
	is_shell = sbt_shell_classify(ev.filename, ev.interp, ev.argv, ev.argc, &cls);
	if (is_shell) {
		struct sbt_ancestor anc[SBT_MAX_ANCESTORS];
		size_t n = sbt_proctab_ancestors(ctx->proc, ev.ppid, ev.parent_comm, anc,
						 SBT_MAX_ANCESTORS);

		if (sbt_shellagg_add(st->agg, &cls, ev.pid, ev.filename, ev.argv, ev.argc, anc, n) <
		    0)
			fprintf(stderr, "sbtrace: out of memory aggregating shell invocations\n");
	}
	sbt_proctab_exec(ctx->proc, ev.pid, ev.ppid, ev.comm);
	sbt_sink_write(&ctx->sink, sbt_event_exec(&ev, ts, sb->name, is_shell ? &cls : NULL));
	return 0;
}

static int read_stats(struct trace_ctx *ctx, uint32_t slot, struct sbt_sandbox_stats *out)
{
	memset(out, 0, sizeof(*out));
	return bpf_map_lookup_elem(ctx->map_stats_fd, &slot, out);
}

/* Emit EventsLost for ring-buffer drops the kernel counted since the last look. */
static void report_drops(struct trace_ctx *ctx)
{
	for (uint32_t i = 0; i < ctx->opts->nr_sandboxes; i++) {
		struct sandbox_state *st = &ctx->st[i];
		struct sbt_sandbox_stats s;
		json_object *ev;

		if (read_stats(ctx, i, &s))
			continue;
		st->kernel_execs = s.execs;
		st->kernel_lost = s.lost;
		st->kernel_eg = s.egress;
		st->kernel_eg_lost = s.egress_lost;
		if (s.egress_lost > st->eg_lost_reported) {
			ev = sbt_event_new("EventsLost", sbt_now_epoch_ns(),
					   ctx->opts->sandboxes[i].name);
			json_object_object_add(
				ev, "lost",
				json_object_new_uint64(s.egress_lost - st->eg_lost_reported));
			json_object_object_add(ev, "lost_total",
					       json_object_new_uint64(s.egress_lost));
			json_object_object_add(ev, "reason",
					       json_object_new_string("ringbuf_full"));
			json_object_object_add(ev, "kind", json_object_new_string("egress"));
			sbt_sink_write(&ctx->sink, ev);
			st->eg_lost_reported = s.egress_lost;
		}
		if (s.lost <= st->lost_reported)
			continue;
		ev = sbt_event_new("EventsLost", sbt_now_epoch_ns(), ctx->opts->sandboxes[i].name);
		json_object_object_add(ev, "lost",
				       json_object_new_uint64(s.lost - st->lost_reported));
		json_object_object_add(ev, "lost_total", json_object_new_uint64(s.lost));
		json_object_object_add(ev, "reason", json_object_new_string("ringbuf_full"));
		json_object_object_add(ev, "kind", json_object_new_string("exec"));
		sbt_sink_write(&ctx->sink, ev);
		st->lost_reported = s.lost;
	}
}

/* After detach: consume until every counted exec arrived or was counted lost. */
static void drain(struct trace_ctx *ctx, struct ring_buffer *rb)
{
	uint64_t deadline = sbt_mono_ms() + 250;

	for (;;) {
		bool pending = false;

		ring_buffer__consume(rb);
		for (uint32_t i = 0; i < ctx->opts->nr_sandboxes; i++) {
			struct sbt_sandbox_stats s;

			if (read_stats(ctx, i, &s) == 0 &&
			    (ctx->st[i].received + s.lost < s.execs ||
			     ctx->st[i].eg_received < s.egress))
				pending = true;
		}
		if (!pending || sbt_mono_ms() >= deadline)
			break;
		sbt_sleep_ms(2);
	}
	report_drops(ctx);
}

static const char *try_error(const struct sbt_hook_result *res, unsigned int i)
{
	if (strcmp(res->tries[i].stage, "disabled") == 0)
		return "disabled by SBTRACE_DISABLE_HOOKS";
	return res->tries[i].err ? strerror(-res->tries[i].err) : NULL;
}

/* A fallback taken is never silent: one line on stderr (and hooks.* in TraceStarted). */
static void report_fallback(const struct sbt_hook_result *res)
{
	unsigned int i;

	if (res->nr_tries < 2 && res->mode)
		return;
	for (i = 0; i < res->nr_tries; i++)
		if (strcmp(res->tries[i].stage, "unsupported") != 0)
			break;
	if (i == res->nr_tries || (res->mode && strcmp(res->tries[i].stage, "attached") == 0))
		return;
	if (res->mode)
		fprintf(stderr, "sbtrace: %s hook: fell back to %s (%s %s: %s)\n", res->capability,
			res->mode, res->tries[i].mode, res->tries[i].stage, try_error(res, i));
	else
		fprintf(stderr, "sbtrace: %s hook: not available (%s %s: %s); not observed\n",
			res->capability, res->tries[i].mode, res->tries[i].stage,
			try_error(res, i));
}

static void hook_json_add(json_object *hooks, const struct sbt_hook_result *res)
{
	json_object *h = json_object_new_object(), *tried = json_object_new_array();

	json_object_object_add(h, "mode", res->mode ? json_object_new_string(res->mode) : NULL);
	for (unsigned int i = 0; i < res->nr_tries; i++) {
		json_object *t = json_object_new_object();

		json_object_object_add(t, "mode", json_object_new_string(res->tries[i].mode));
		json_object_object_add(t, "stage", json_object_new_string(res->tries[i].stage));
		json_object_object_add(t, "error",
				       try_error(res, i) ? json_object_new_string(try_error(res, i))
							 : NULL);
		json_object_array_add(tried, t);
	}
	json_object_object_add(h, "tried", tried);
	json_object_object_add(h, "fallback",
			       json_object_new_boolean(res->mode && res->nr_tries > 1));
	json_object_object_add(hooks, res->capability, h);
}

/* {"capability": {"mode", "tried", "fallback"}, ...} for the NULL-terminated list. */
static json_object *hooks_json(const struct sbt_hook_result *const *list)
{
	json_object *hooks = json_object_new_object();

	for (; *list; list++)
		hook_json_add(hooks, *list);
	return hooks;
}

/* Which views of a sandbox the host has (design: "What the host cannot see"). */
static const char *vis_exec(const struct sbt_sandbox *sb)
{
	return sb->exec_hidden || !sbt_sandbox_has_cgroup(sb) ? "none" : "host";
}

static const char *vis_network(const struct sbt_sandbox *sb, int egress_mode)
{
	if (sb->has_tap)
		return "tap";
	return egress_mode == SBT_EGRESS_OFF ? "none" : "cgroup";
}

static json_object *addr_json(const uint8_t addr[16])
{
	char buf[64];

	sbt_addr_str(addr, buf, sizeof(buf));
	return json_object_new_string(buf);
}

static json_object *tap_json(const struct sbt_sandbox *sb, const struct sbt_tap_state *ts,
			     const struct sbt_egress_cfg *cfg)
{
	json_object *o = json_object_new_object(), *guests = json_object_new_array();
	const struct sbt_tap_spec *t = &sb->tap;

	json_object_object_add(o, "ifname", json_object_new_string(t->ifname));
	for (uint32_t k = 0; ts && k < ts->nr; k++)
		if (ts->idx[k] == sb->slot)
			json_object_object_add(o, "ifindex", json_object_new_int64(ts->ifindex[k]));
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
	for (uint32_t k = 0; ts && k < ts->nr; k++)
		if (ts->idx[k] == sb->slot)
			json_object_object_add(
				o, "mode",
				ts->res[k].mode ? json_object_new_string(ts->res[k].mode) : NULL);
	return o;
}

static json_object *sandbox_json(const struct sbt_sandbox *sb, const struct sbt_tap_state *ts,
				 const struct sbt_egress_cfg *cfg)
{
	json_object *o = json_object_new_object(), *vis = json_object_new_object();

	json_object_object_add(o, "name", json_object_new_string(sb->name));
	json_object_object_add(o, "slot", json_object_new_int64(sb->slot));
	json_object_object_add(
		o, "cgroup", sbt_sandbox_has_cgroup(sb) ? json_object_new_string(sb->path) : NULL);
	json_object_object_add(o, "cgroup_id", json_object_new_uint64(sb->cgroup_id));
	json_object_object_add(o, "level", json_object_new_int64(sb->level));
	json_object_object_add(o, "key", json_object_new_string(sb->origin));
	if (sb->origin_pid)
		json_object_object_add(o, "pid", json_object_new_int64(sb->origin_pid));
	json_object_object_add(vis, "exec", json_object_new_string(vis_exec(sb)));
	json_object_object_add(vis, "network", json_object_new_string(vis_network(sb, cfg->mode)));
	json_object_object_add(o, "visibility", vis);
	json_object_object_add(o, "tap", sb->has_tap ? tap_json(sb, ts, cfg) : NULL);
	return o;
}

/* The policy as loaded: mode, rules, floor, and per sandbox its resolver and hosts. */
static json_object *egress_json(struct trace_ctx *ctx)
{
	const struct sbt_egress_cfg *cfg = &ctx->opts->egress;
	json_object *o = json_object_new_object(), *rules = json_object_new_array();
	json_object *floor = json_object_new_array(), *sbs = json_object_new_array();
	size_t nfloor;
	const struct sbt_floor *fl = sbt_policy_floor(&nfloor);

	json_object_object_add(o, "mode", json_object_new_string(sbt_egress_mode_name(cfg->mode)));
	for (size_t i = 0; i < cfg->nr_rules; i++) {
		json_object *r = json_object_new_object();

		json_object_object_add(r, "id", json_object_new_int64(cfg->rules[i].id));
		json_object_object_add(r, "text", sbt_json_string(cfg->rules[i].text));
		json_object_array_add(rules, r);
	}
	json_object_object_add(o, "rules", rules);
	for (size_t i = 0; i < nfloor; i++) {
		json_object *f = json_object_new_object();
		char buf[64];
		uint8_t prefix = fl[i].prefix;
		bool v4 =
			memcmp(fl[i].addr, "\0\0\0\0\0\0\0\0\0\0\xff\xff", 12) == 0 && prefix >= 96;

		sbt_addr_str(fl[i].addr, buf, sizeof(buf));
		snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "/%u",
			 v4 ? prefix - 96u : prefix);
		json_object_object_add(f, "cidr", json_object_new_string(buf));
		json_object_object_add(f, "what", json_object_new_string(fl[i].what));
		json_object_array_add(floor, f);
	}
	json_object_object_add(o, "floor", floor);
	for (uint32_t i = 0; ctx->egress && i < ctx->opts->nr_sandboxes; i++) {
		const struct sbt_egress_sandbox *es = &ctx->egress->sb[i];
		json_object *sb = json_object_new_object(), *hosts = json_object_new_array();

		json_object_object_add(sb, "name",
				       json_object_new_string(ctx->opts->sandboxes[i].name));
		if (es->has_resolver) {
			json_object *r = json_object_new_object();

			json_object_object_add(r, "addr", addr_json(es->resolver));
			json_object_object_add(r, "source",
					       json_object_new_string(es->resolver_source));
			json_object_object_add(
				r, "netns",
				json_object_new_string(es->nsfd >= 0 ? "sandbox" : "host"));
			json_object_object_add(sb, "resolver", r);
		} else {
			json_object_object_add(sb, "resolver", NULL);
		}
		for (size_t h = 0; h < es->nr_hosts; h++) {
			json_object *ho = json_object_new_object(),
				    *addrs = json_object_new_array();

			json_object_object_add(ho, "name",
					       json_object_new_string(es->hosts[h].name));
			for (size_t a = 0; a < es->hosts[h].nr_addrs; a++)
				json_object_array_add(addrs, addr_json(es->hosts[h].addrs[a]));
			json_object_object_add(ho, "addrs", addrs);
			json_object_object_add(ho, "ttl", json_object_new_int64(es->hosts[h].ttl));
			json_object_object_add(ho, "error",
					       es->hosts[h].error[0]
						       ? json_object_new_string(es->hosts[h].error)
						       : NULL);
			json_object_array_add(hosts, ho);
		}
		json_object_object_add(sb, "hosts", hosts);
		json_object_object_add(sb, "entries",
				       json_object_new_int64((int64_t)es->nr_entries));
		json_object_array_add(sbs, sb);
	}
	json_object_object_add(o, "sandboxes", sbs);
	return o;
}

static void emit_started(struct trace_ctx *ctx, const struct sbt_hook_result *const *hooks,
			 uint64_t attach_ms)
{
	json_object *ev = sbt_event_new("TraceStarted", sbt_now_epoch_ns(), NULL);
	json_object *sbs = json_object_new_array(), *vis = json_object_new_object();
	struct utsname u;

	json_object_object_add(ev, "version", json_object_new_string(SBTRACE_VERSION));
	if (uname(&u) == 0)
		json_object_object_add(ev, "kernel", json_object_new_string(u.release));
	const char *vexec = "host", *vnet = NULL;

	for (uint32_t i = 0; i < ctx->opts->nr_sandboxes; i++) {
		const struct sbt_sandbox *sb = &ctx->opts->sandboxes[i];
		const char *n = vis_network(sb, ctx->opts->egress.mode);

		json_object_array_add(sbs, sandbox_json(sb, ctx->taps, &ctx->opts->egress));
		/* the run as a whole: the weakest exec view; a tap when any sandbox has one */
		if (strcmp(vis_exec(sb), "none") == 0)
			vexec = "none";
		if (!vnet || strcmp(n, "tap") == 0 || strcmp(vnet, "none") == 0)
			vnet = n;
	}
	json_object_object_add(ev, "sandboxes", sbs);
	json_object_object_add(ev, "hooks", hooks_json(hooks));
	json_object_object_add(vis, "exec", json_object_new_string(vexec));
	json_object_object_add(vis, "network", json_object_new_string(vnet ? vnet : "none"));
	json_object_object_add(ev, "visibility", vis);
	json_object_object_add(ev, "egress", egress_json(ctx));
	json_object_object_add(ev, "argv_max", json_object_new_int64(ctx->opts->exec.argv_max));
	json_object_object_add(ev, "ringbuf_bytes",
			       json_object_new_int64(ctx->opts->exec.ringbuf_bytes));
	json_object_object_add(ev, "poll_ms", json_object_new_int64(ctx->opts->exec.poll_ms));
	json_object_object_add(ev, "attach_ms", json_object_new_uint64(attach_ms));
	sbt_sink_write(&ctx->sink, ev);
	sbt_sink_flush(&ctx->sink);
}

static void emit_final(struct trace_ctx *ctx, const char *reason, uint64_t duration_ms)
{
	json_object *stopped, *sbs = json_object_new_array();
	json_object *shells = ctx->opts->results ? json_object_new_array() : NULL;

	for (uint32_t i = 0; i < ctx->opts->nr_sandboxes; i++) {
		struct sandbox_state *st = &ctx->st[i];
		const char *name = ctx->opts->sandboxes[i].name;
		bool exec_visible = strcmp(vis_exec(&ctx->opts->sandboxes[i]), "host") == 0;
		uint64_t missing = 0;
		bool complete;
		json_object *ev, *s;

		if (st->kernel_execs > st->received)
			missing = st->kernel_execs - st->received;
		/* Records the kernel sent that never decoded, or that vanished. */
		if (missing > st->lost_reported) {
			ev = sbt_event_new("EventsLost", sbt_now_epoch_ns(), name);
			json_object_object_add(ev, "lost",
					       json_object_new_uint64(missing - st->lost_reported));
			json_object_object_add(ev, "lost_total", json_object_new_uint64(missing));
			json_object_object_add(ev, "reason",
					       json_object_new_string(ctx->decode_errors
									      ? "decode_error"
									      : "not_received"));
			json_object_object_add(ev, "kind", json_object_new_string("exec"));
			sbt_sink_write(&ctx->sink, ev);
		}
		/* Execs inside a guest kernel were never visible: no count is complete. */
		complete = exec_visible && missing == 0 && st->kernel_lost == 0 &&
			   ctx->decode_errors == 0;
		if (st->kernel_eg > st->eg_received) {
			ev = sbt_event_new("EventsLost", sbt_now_epoch_ns(), name);
			json_object_object_add(
				ev, "lost",
				json_object_new_uint64(st->kernel_eg - st->eg_received));
			json_object_object_add(ev, "reason",
					       json_object_new_string(ctx->decode_errors
									      ? "decode_error"
									      : "not_received"));
			json_object_object_add(ev, "kind", json_object_new_string("egress"));
			sbt_sink_write(&ctx->sink, ev);
		}

		ev = sbt_event_new("ShellInvocationObserved", sbt_now_epoch_ns(), name);
		s = sbt_shellagg_to_json(st->agg);
		if (s) {
			json_object_object_foreach(s, key, val)
			{
				json_object_object_add(ev, key, json_object_get(val));
			}
			json_object_put(s);
		}
		json_object_object_add(ev, "complete", json_object_new_boolean(complete));
		json_object_object_add(ev, "exec_visible", json_object_new_boolean(exec_visible));
		if (shells)
			json_object_array_add(shells, json_object_get(ev));
		sbt_sink_write(&ctx->sink, ev);

		s = json_object_new_object();
		json_object_object_add(s, "name", json_object_new_string(name));
		json_object_object_add(s, "execs", json_object_new_uint64(st->kernel_execs));
		json_object_object_add(s, "received", json_object_new_uint64(st->received));
		json_object_object_add(s, "lost", json_object_new_uint64(missing));
		json_object_object_add(s, "complete", json_object_new_boolean(complete));
		json_object_object_add(s, "first_exec_ts",
				       st->first_exec_ts ? json_object_new_uint64(st->first_exec_ts)
							 : NULL);
		{
			json_object *eg = json_object_new_object();
			uint64_t eg_lost =
				st->kernel_eg_lost + (st->kernel_eg > st->eg_received
							      ? st->kernel_eg - st->eg_received
							      : 0);

			json_object_object_add(eg, "records",
					       json_object_new_uint64(st->eg_received));
			json_object_object_add(eg, "events", json_object_new_uint64(st->eg_events));
			json_object_object_add(eg, "denied", json_object_new_uint64(st->eg_denied));
			json_object_object_add(eg, "lost", json_object_new_uint64(eg_lost));
			json_object_object_add(s, "egress", eg);
		}
		json_object_array_add(sbs, s);
	}
	if (ctx->decode_errors) {
		json_object *ev = sbt_event_new("EventsLost", sbt_now_epoch_ns(), NULL);

		json_object_object_add(ev, "lost", json_object_new_uint64(ctx->decode_errors));
		json_object_object_add(ev, "reason", json_object_new_string("decode_error"));
		json_object_object_add(
			ev, "detail",
			json_object_new_string(sbt_decode_strerror(ctx->first_decode_err)));
		sbt_sink_write(&ctx->sink, ev);
	}
	stopped = sbt_event_new("TraceStopped", sbt_now_epoch_ns(), NULL);
	json_object_object_add(stopped, "reason", json_object_new_string(reason));
	json_object_object_add(stopped, "duration_ms", json_object_new_uint64(duration_ms));
	json_object_object_add(stopped, "sandboxes", sbs);
	json_object_object_add(stopped, "decode_errors",
			       json_object_new_uint64(ctx->decode_errors));
	if (ctx->opts->results) {
		json_object *r = json_object_new_object();

		json_object_object_add(r, "shell_invocation", shells);
		json_object_object_add(r, "stopped", json_object_get(stopped));
		*ctx->opts->results = r;
	}
	sbt_sink_write(&ctx->sink, stopped);
	sbt_sink_flush(&ctx->sink);
}

/* Record one cgroup's processes, then recurse into its children. */
static void snapshot_cgroup(struct trace_ctx *ctx, int dirfd, int depth)
{
	char buf[4096];
	FILE *f;
	DIR *d;
	int fd;

	fd = openat(dirfd, "cgroup.procs", O_RDONLY | O_CLOEXEC);
	f = fd >= 0 ? fdopen(fd, "r") : NULL;
	if (f) {
		while (fgets(buf, sizeof(buf), f)) {
			struct sbt_proc_info info;
			uint32_t pid = (uint32_t)strtoul(buf, NULL, 10);

			if (pid && sbt_proc_lookup_procfs(pid, &info, &ctx->procfs))
				sbt_proctab_seen(ctx->proc, pid, info.ppid, info.comm);
		}
		fclose(f);
	} else if (fd >= 0) {
		close(fd);
	}
	if (depth >= SBT_MAX_CGROUP_LEVEL)
		return;
	fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	for (struct dirent *e; (e = readdir(d));) {
		int child;

		if (e->d_type != DT_DIR || e->d_name[0] == '.')
			continue;
		child = openat(dirfd, e->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (child < 0)
			continue;
		snapshot_cgroup(ctx, child, depth + 1);
		close(child);
	}
	closedir(d);
}

/*
 * Processes already in the sandboxes at attach: their exec is in the past,
 * so remember them now (ancestor chains must not depend on them still being
 * alive when a descendant's exec is decoded).
 */
static void snapshot_sandboxes(struct trace_ctx *ctx)
{
	for (uint32_t i = 0; i < ctx->opts->nr_sandboxes; i++) {
		int fd = open(ctx->opts->sandboxes[i].path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		if (fd < 0)
			continue;
		snapshot_cgroup(ctx, fd, 0);
		close(fd);
	}
}

/*
 * Register sandboxes, deepest first so that the nearest sandbox wins: the
 * first SBT_FAST_SANDBOXES in the program's in-place table, the rest in the
 * hash map with their distinct levels.
 */
static int register_sandboxes(const struct sbt_plan *plan, const struct sbt_trace_opts *opts,
			      struct sbt_hook_result *membership)
{
	const struct sbt_sandbox *order[SBT_MAX_SANDBOXES];
	uint64_t ptrs[SBT_FAST_SANDBOXES];
	struct sbtrace_bpf *skel = plan->skel;
	int fd = bpf_map__fd(skel->maps.sandbox_cgroups);
	uint32_t n = 0, nr_fast = 0, nr_levels = 0;

	for (uint32_t i = 0; i < opts->nr_sandboxes; i++) {
		uint32_t j;

		if (!sbt_sandbox_has_cgroup(&opts->sandboxes[i]))
			continue; /* a tap-only sandbox: its key is the tap, registered by tap.c */
		for (j = n++; j > 0 && order[j - 1]->level < opts->sandboxes[i].level; j--)
			order[j] = order[j - 1];
		order[j] = &opts->sandboxes[i];
	}
	if (n == 0) { /* taps only: no cgroup, no membership check */
		memset(membership, 0, sizeof(*membership));
		membership->capability = "membership";
		return 0;
	}
	sbt_membership_learn(plan, order, n < SBT_FAST_SANDBOXES ? n : SBT_FAST_SANDBOXES, ptrs,
			     membership);
	for (uint32_t i = 0; i < n; i++) {
		const struct sbt_sandbox *sb = order[i];
		struct sbt_sandbox_key_val v = { .slot = sb->slot, .level = sb->level };
		uint32_t j;

		if (nr_fast < SBT_FAST_SANDBOXES) {
			skel->bss->fast[nr_fast].cgroup_id = sb->cgroup_id;
			skel->bss->fast[nr_fast].cgroup_ptr = ptrs[nr_fast];
			skel->bss->fast[nr_fast].level = sb->level;
			skel->bss->fast[nr_fast].slot = sb->slot;
			nr_fast++;
			continue;
		}
		for (j = 0; j < nr_levels && skel->bss->hash_levels[j] != sb->level; j++)
			;
		if (j == nr_levels) {
			if (nr_levels == SBT_MAX_HASH_LEVELS) {
				fprintf(stderr,
					"sbtrace: sandboxes sit at too many distinct cgroup "
					"levels; trace fewer at once\n");
				return -E2BIG;
			}
			skel->bss->hash_levels[nr_levels++] = sb->level;
		}
		if (bpf_map_update_elem(fd, &sb->cgroup_id, &v, BPF_ANY)) {
			int err = -errno;

			fprintf(stderr, "sbtrace: cannot register sandbox %s: %s\n", sb->name,
				strerror(errno));
			return err;
		}
	}
	__atomic_store_n(&skel->bss->nr_hash_levels, nr_levels, __ATOMIC_RELEASE);
	__atomic_store_n(&skel->bss->nr_fast, nr_fast, __ATOMIC_RELEASE);
	return 0;
}

/*
 * libbpf's own messages only with -v: the attach plan expects some tries to
 * fail (fentry where the kernel has no trampolines ...) and reports every
 * failure itself, in TraceStarted and on stderr.
 */
static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list args)
{
	if (!sbt_verbose)
		return 0;
	return vfprintf(stderr, fmt, args);
}

void sbt_setup_libbpf(void)
{
	libbpf_set_print(libbpf_print);
}

int sbt_trace_run(const struct sbt_trace_opts *opts)
{
	struct trace_ctx *ctx = calloc(1, sizeof(*ctx));
	struct sbt_plan plan = { 0 };
	struct ring_buffer *rb = NULL;
	struct sbt_hook_result membership;
	struct sigaction sa = { .sa_handler = on_signal };
	uint64_t t0 = sbt_mono_ms(), start_ms, pause_ms = 0;
	const char *reason = "signal", *env;
	int ret = SBT_EXIT_OK, err;

	if (!ctx) {
		fprintf(stderr, "sbtrace: out of memory\n");
		return SBT_EXIT_RUNTIME;
	}
	ctx->opts = opts;
	sbt_sink_init(&ctx->sink, opts->out, opts->format);
	ctx->argv_store = calloc(SBT_ARGV_MAX_ARGS, sizeof(*ctx->argv_store));
	ctx->tail = malloc(SBT_ARGV_CAP + 1);
	for (uint32_t i = 0; i < opts->nr_sandboxes; i++) {
		ctx->names[i] = opts->sandboxes[i].name;
		ctx->st[i].agg = sbt_shellagg_new();
		if (!ctx->st[i].agg)
			goto oom;
	}
	ctx->procfs.root = "/proc";
	ctx->procfs.sandboxes = ctx->names;
	ctx->procfs.nr_sandboxes = opts->nr_sandboxes;
	ctx->proc = sbt_proctab_new(sbt_proc_lookup_procfs, &ctx->procfs);
	if (!ctx->argv_store || !ctx->tail || !ctx->proc)
		goto oom;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	err = sbt_plan_attach(&opts->exec, &plan);
	if (err) {
		const struct sbt_hook_result *res = &plan.exec;

		fprintf(stderr,
			"sbtrace: cannot attach the exec hook (%s, last tried: %s): %s; "
			"is this a Linux >= 5.8 kernel with BPF ring buffers, and are you "
			"root (CAP_BPF + CAP_PERFMON)? run 'sbtrace features' for details\n",
			res->nr_tries ? res->tries[res->nr_tries - 1].stage : "open",
			res->nr_tries ? res->tries[res->nr_tries - 1].mode : "-", strerror(-err));
		ret = SBT_EXIT_KERNEL;
		goto cleanup;
	}
	report_fallback(&plan.exec);
	if (opts->exec.observe_connect)
		report_fallback(&plan.connect);
	if (opts->exec.observe)
		report_fallback(&plan.packet);
	ctx->plan = &plan;
	ctx->map_stats_fd = bpf_map__fd(plan.skel->maps.sandbox_stats);
	rb = ring_buffer__new(bpf_map__fd(plan.skel->maps.events), handle_record, ctx, NULL);
	if (!rb) {
		fprintf(stderr, "sbtrace: cannot set up the ring buffer: %s\n", strerror(errno));
		ret = SBT_EXIT_KERNEL;
		goto cleanup;
	}
	if (register_sandboxes(&plan, opts, &membership)) {
		ret = SBT_EXIT_KERNEL;
		goto cleanup;
	}
	report_fallback(&membership);
	ctx->egress = calloc(1, sizeof(*ctx->egress));
	ctx->folds = calloc(FOLD_SLOTS, sizeof(*ctx->folds));
	if (!ctx->egress || !ctx->folds)
		goto oom;
	err = sbt_egress_setup(ctx->egress, &plan, &opts->egress, opts->sandboxes,
			       opts->nr_sandboxes);
	if (err) {
		ret = err == -EINVAL ? SBT_EXIT_USAGE : SBT_EXIT_KERNEL;
		goto cleanup;
	}
	ctx->taps = calloc(1, sizeof(*ctx->taps));
	if (!ctx->taps)
		goto oom;
	if (opts->exec.tap) {
		err = sbt_tap_attach(ctx->taps, &plan, opts->sandboxes, opts->nr_sandboxes,
				     opts->egress.has_resolver ? opts->egress.resolver : NULL);
		if (err) {
			ret = err == -ENODEV || err == -EINVAL ? SBT_EXIT_USAGE : SBT_EXIT_KERNEL;
			goto cleanup;
		}
		for (uint32_t k = 0; k < ctx->taps->nr; k++)
			report_fallback(&ctx->taps->res[k]);
	}
	ctx->boot_offset = sbt_boot_epoch_offset_ns();
	start_ms = sbt_mono_ms();
	emit_started(ctx,
		     (const struct sbt_hook_result *const[]){
			     &plan.exec, &membership, &plan.connect, &plan.packet,
			     ctx->taps->nr ? &ctx->taps->res[0] : NULL, NULL },
		     start_ms - t0);
	snapshot_sandboxes(ctx);
	if (opts->on_attached)
		opts->on_attached(opts->hook_arg);

	/* Test hook: hold off consuming so a small ring buffer overflows. */
	env = getenv("SBTRACE_TEST_CONSUMER_DELAY_MS");
	if (env)
		pause_ms = strtoull(env, NULL, 10);
	if (pause_ms)
		sbt_sleep_ms((long)pause_ms);

	while (!stop_signal) {
		uint64_t now;

		/* Records come without wake-ups (see exec.bpf.c): drain on the tick too. */
		err = ring_buffer__poll(rb, opts->exec.poll_ms ? (int)opts->exec.poll_ms : 100);
		if (err >= 0 || err == -EINTR)
			err = ring_buffer__consume(rb);
		if (err < 0 && err != -EINTR) {
			fprintf(stderr, "sbtrace: reading the ring buffer failed: %s\n",
				strerror(-err));
			reason = "error";
			ret = SBT_EXIT_RUNTIME;
			break;
		}
		report_drops(ctx);
		sbt_egress_tick(ctx->egress);
		if (sbt_sink_flush(&ctx->sink) || ctx->sink.error) {
			fprintf(stderr, "sbtrace: writing output failed: %s\n",
				strerror(ctx->sink.error));
			reason = "output_error";
			ret = SBT_EXIT_RUNTIME;
			break;
		}
		now = sbt_mono_ms();
		if (opts->duration_ms && now - start_ms >= opts->duration_ms) {
			reason = "duration";
			break;
		}
		if (opts->on_tick) {
			const char *r = opts->on_tick(opts->hook_arg);

			if (r) {
				reason = r;
				break;
			}
		}
	}
	/* Detach first so no new events arrive, then drain what is in flight. */
	sbt_tap_detach(ctx->taps, opts->sandboxes);
	sbt_egress_detach(ctx->egress);
	sbt_plan_detach(&plan);
	drain(ctx, rb);
	flush_folds(ctx);
	emit_final(ctx, reason, sbt_mono_ms() - start_ms);
	if (ctx->sink.error && ret == SBT_EXIT_OK) {
		fprintf(stderr, "sbtrace: writing output failed: %s\n", strerror(ctx->sink.error));
		ret = SBT_EXIT_RUNTIME;
	}
	goto cleanup;

oom:
	fprintf(stderr, "sbtrace: out of memory\n");
	ret = SBT_EXIT_RUNTIME;
cleanup:
	ring_buffer__free(rb);
	if (ctx->taps)
		sbt_tap_detach(ctx->taps, opts->sandboxes);
	free(ctx->taps);
	if (ctx->egress)
		sbt_egress_teardown(ctx->egress);
	sbt_plan_destroy(&plan);
	free(ctx->egress);
	free(ctx->folds);
	for (uint32_t i = 0; i < opts->nr_sandboxes; i++)
		sbt_shellagg_free(ctx->st[i].agg);
	sbt_proctab_free(ctx->proc);
	free(ctx->argv_store);
	free(ctx->tail);
	free(ctx);
	return ret;
}

int sbt_features_run(const struct sbt_exec_opts *exec_opts, FILE *out)
{
	struct sbt_plan plan = { 0 };
	struct sbt_hook_result membership, tap;
	json_object *o = json_object_new_object(), *cg = json_object_new_object();
	char mnt[PATH_MAX], root[PATH_MAX];
	struct sbt_sandbox top;
	struct utsname u;
	uint64_t ptr;
	int err;

	err = sbt_plan_attach(exec_opts, &plan);

	json_object_object_add(o, "version", json_object_new_string(SBTRACE_VERSION));
	if (uname(&u) == 0)
		json_object_object_add(o, "kernel", json_object_new_string(u.release));
	json_object_object_add(
		o, "btf", json_object_new_boolean(access("/sys/kernel/btf/vmlinux", R_OK) == 0));
	memset(&membership, 0, sizeof(membership));
	membership.capability = "membership";
	if (sbt_cgroup2_mount(mnt, sizeof(mnt), root, sizeof(root)) == 0) {
		json_object_object_add(cg, "mount", json_object_new_string(mnt));
		json_object_object_add(cg, "root", json_object_new_string(root));
		/* Probe the membership modes on the hierarchy's own top cgroup. */
		if (!err && sbt_sandbox_from_cgroup(mnt, &top) == 0) {
			const struct sbt_sandbox *one = &top;

			sbt_membership_learn(&plan, &one, 1, &ptr, &membership);
		}
	}
	memset(&tap, 0, sizeof(tap));
	if (!err)
		sbt_tap_probe(&plan, &tap);
	sbt_plan_destroy(&plan);
	json_object_object_add(o, "cgroup2", cg);
	json_object_object_add(o, "hooks",
			       hooks_json((const struct sbt_hook_result *const[]){
				       &plan.exec, &membership, &plan.connect, &plan.packet,
				       tap.capability ? &tap : NULL, NULL }));
	fprintf(out, "%s\n",
		json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
							  JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
	return err ? SBT_EXIT_KERNEL : SBT_EXIT_OK;
}
