// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Prometheus text format: the metrics sink and the renderer (metrics.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "event/events.h"
#include "event/kinds.h"
#include "event/metrics.h"
#include "event/sink.h"
#include "lib/io.h"

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h ? h : 1;
}

static struct sbt_counter *find(const struct sbt_counters *cs, const char *labels, uint64_t h)
{
	if (!cs->cap)
		return NULL;
	for (size_t i = 0; i < cs->cap; i++) {
		struct sbt_counter *c = &cs->c[(h + i) & (cs->cap - 1)];

		if (!c->labels || (c->hash == h && strcmp(c->labels, labels) == 0))
			return c;
	}
	return NULL;
}

static int grow(struct sbt_counters *cs)
{
	size_t ncap = cs->cap ? cs->cap * 2 : 64;
	struct sbt_counter *nc = calloc(ncap, sizeof(*nc));

	if (!nc)
		return -ENOMEM;
	for (size_t i = 0; i < cs->cap; i++) {
		struct sbt_counter *o = &cs->c[i];

		if (!o->labels)
			continue;
		for (size_t k = 0; k < ncap; k++) {
			struct sbt_counter *d = &nc[(o->hash + k) & (ncap - 1)];

			if (!d->labels) {
				*d = *o;
				break;
			}
		}
	}
	free(cs->c);
	cs->c = nc;
	cs->cap = ncap;
	return 0;
}

int sbt_counters_add(struct sbt_counters *cs, const char *labels, uint64_t v)
{
	uint64_t h = hash_str(labels);
	struct sbt_counter *c;

	if ((cs->n + 1) * 2 > cs->cap && grow(cs))
		return -ENOMEM;
	c = find(cs, labels, h);
	if (!c)
		return -ENOMEM;
	if (!c->labels) {
		c->labels = strdup(labels);
		if (!c->labels)
			return -ENOMEM;
		c->hash = h;
		cs->n++;
	}
	c->value += v;
	return 0;
}

uint64_t sbt_counters_get(const struct sbt_counters *cs, const char *labels)
{
	struct sbt_counter *c = find(cs, labels, hash_str(labels));

	return c && c->labels ? c->value : 0;
}

void sbt_counters_drop_prefix(struct sbt_counters *cs, const char *prefix)
{
	struct sbt_counters keep = { 0 };
	size_t plen = strlen(prefix);

	for (size_t i = 0; i < cs->cap; i++) {
		struct sbt_counter *c = &cs->c[i];

		if (!c->labels)
			continue;
		if (strncmp(c->labels, prefix, plen) != 0)
			sbt_counters_add(&keep, c->labels, c->value);
		free(c->labels);
	}
	free(cs->c);
	*cs = keep;
}

void sbt_counters_free(struct sbt_counters *cs)
{
	for (size_t i = 0; i < cs->cap; i++)
		free(cs->c[i].labels);
	free(cs->c);
	memset(cs, 0, sizeof(*cs));
}

void sbt_metrics_label(char *buf, size_t len, size_t *off, const char *name, const char *value)
{
	size_t o = *off;

	if (o >= len)
		return;
	o += (size_t)snprintf(buf + o, len - o, "%s%s=\"", o ? "," : "", name);
	for (const char *p = value ? value : ""; *p && o + 3 < len; p++) {
		if (*p == '\\' || *p == '"') {
			buf[o++] = '\\';
			buf[o++] = *p;
		} else if (*p == '\n') {
			buf[o++] = '\\';
			buf[o++] = 'n';
		} else {
			buf[o++] = *p;
		}
	}
	if (o + 1 < len)
		buf[o++] = '"';
	buf[o < len ? o : len - 1] = '\0';
	*off = o;
}

/* ---- the families ------------------------------------------------------------ */

static const struct sbt_metric_family families[SBT_METRIC__MAX] = {
#define SBT_METRIC_ROW(id, name, type, help, from)                                                 \
	[SBT_METRIC_##id] = { name, #type, help, SBT_METRIC_FROM_##from },
#define SBT_METRIC_FROM_runtime SBT_METRIC_FROM_RUNTIME
#define SBT_METRIC_FROM_host	SBT_METRIC_FROM_HOST
#define SBT_METRIC_FROM_sandbox SBT_METRIC_FROM_SANDBOX
#define SBT_METRIC_FROM_run	SBT_METRIC_FROM_RUN
	SBT_METRIC_FAMILIES(SBT_METRIC_ROW)
#undef SBT_METRIC_ROW
#undef SBT_METRIC_FROM_runtime
#undef SBT_METRIC_FROM_host
#undef SBT_METRIC_FROM_sandbox
#undef SBT_METRIC_FROM_run
};

const struct sbt_metric_family *sbt_metric_family(enum sbt_metric m)
{
	return &families[m];
}

enum sbt_metric sbt_metric_by_name(const char *name)
{
	unsigned int m = 0;

	while (m < SBT_METRIC__MAX && strcmp(families[m].name, name) != 0)
		m++;
	return (enum sbt_metric)m;
}

/* ---- the sink -------------------------------------------------------------- */

/* A removed sandbox's series, until they expire. */
struct removal {
	char *prefix; /* sandbox="NAME" */
	uint64_t at_ns;
};

struct sbt_metrics_sink {
	struct sbt_sink base;
	/* the series of the families counted from events (from host, sandbox or run) */
	struct sbt_counters series[SBT_METRIC__MAX];
	uint64_t retain_ns;
	bool per_sandbox;
	bool container_labels; /* sandbox_info's container and image */
	struct removal *removals;
	size_t nr_removals, cap_removals;
};

/* An egress verdict as its label says it. */
static const char *verdict_name(unsigned int v)
{
	static const char *const names[] = { "allowed", "denied", "observed" };

	return names[sbt_egress_variant(v)];
}

/* Add v to the series of family m whose labels are l. */
static void add(struct sbt_metrics_sink *ms, enum sbt_metric m, const char *l, uint64_t v)
{
	sbt_counters_add(&ms->series[m], l, v);
}

/* What each kind adds beyond sbtrace_events_total (kinds.h's metrics column). */
static void count_none(struct sbt_metrics_sink *ms, const struct sbt_event *ev, const char *sb)
{
	(void)ms;
	(void)ev;
	(void)sb;
}

static void count_exec(struct sbt_metrics_sink *ms, const struct sbt_event *ev, const char *sb)
{
	char l[1024];
	size_t o = 0;

	add(ms, SBT_METRIC_EXECS, "", 1);
	if (ev->exec.shell) {
		sbt_metrics_label(l, sizeof(l), &o, "shell", ev->exec.shell->shell);
		sbt_metrics_label(l, sizeof(l), &o, "kind",
				  sbt_shell_kind_name(ev->exec.shell->kind));
		add(ms, SBT_METRIC_SHELLS, l, 1);
	}
	if (!ms->per_sandbox)
		return;
	o = 0;
	sbt_metrics_label(l, sizeof(l), &o, "sandbox", sb);
	add(ms, SBT_METRIC_SANDBOX_EXECS, l, 1);
	if (!ev->exec.shell)
		return;
	sbt_metrics_label(l, sizeof(l), &o, "shell", ev->exec.shell->shell);
	sbt_metrics_label(l, sizeof(l), &o, "kind", sbt_shell_kind_name(ev->exec.shell->kind));
	add(ms, SBT_METRIC_SHELL_INVOCATIONS, l, 1);
}

static void count_egress(struct sbt_metrics_sink *ms, const struct sbt_event *ev, const char *sb)
{
	const struct sbt_egress *rec = ev->egress.rec;
	char l[1024];
	size_t o = 0;

	sbt_metrics_label(l, sizeof(l), &o, "verdict", verdict_name(rec->verdict));
	sbt_metrics_label(l, sizeof(l), &o, "reason", sbt_egress_reason_name(rec->reason));
	add(ms, SBT_METRIC_EGRESS, l, rec->count);
	if (rec->would_deny) {
		o = 0;
		sbt_metrics_label(l, sizeof(l), &o, "reason", sbt_egress_reason_name(rec->reason));
		add(ms, SBT_METRIC_EGRESS_WOULD_DENY, l, rec->count);
	}
	if (!ms->per_sandbox)
		return;
	o = 0;
	sbt_metrics_label(l, sizeof(l), &o, "sandbox", sb);
	sbt_metrics_label(l, sizeof(l), &o, "verdict", verdict_name(rec->verdict));
	sbt_metrics_label(l, sizeof(l), &o, "hook", rec->hook == SBT_HOOK_TAP ? "tap" : "cgroup");
	sbt_metrics_label(l, sizeof(l), &o, "reason", sbt_egress_reason_name(rec->reason));
	add(ms, SBT_METRIC_EGRESS_VERDICTS, l, rec->count);
}

static void count_lost(struct sbt_metrics_sink *ms, const struct sbt_event *ev, const char *sb)
{
	char l[1024];
	size_t o = 0;

	sbt_metrics_label(l, sizeof(l), &o, "kind", ev->lost.kind ? ev->lost.kind : "any");
	sbt_metrics_label(l, sizeof(l), &o, "reason", ev->lost.reason);
	add(ms, SBT_METRIC_EVENTS_LOST, l, ev->lost.lost);
	if (!ev->sandbox || !ms->per_sandbox)
		return;
	o = 0;
	sbt_metrics_label(l, sizeof(l), &o, "sandbox", sb);
	add(ms, SBT_METRIC_SANDBOX_EVENTS_LOST, l, ev->lost.lost);
}

/* The removal of prefix p pending, its index; nr_removals if none. */
static size_t removal_of(const struct sbt_metrics_sink *ms, const char *p)
{
	size_t i = 0;

	while (i < ms->nr_removals && strcmp(ms->removals[i].prefix, p) != 0)
		i++;
	return i;
}

static void removal_drop(struct sbt_metrics_sink *ms, size_t i)
{
	free(ms->removals[i].prefix);
	ms->removals[i] = ms->removals[--ms->nr_removals];
}

static void drop_sandbox(struct sbt_metrics_sink *ms, const char *prefix)
{
	for (unsigned int m = 0; m < SBT_METRIC__MAX; m++)
		if (families[m].from == SBT_METRIC_FROM_SANDBOX)
			sbt_counters_drop_prefix(&ms->series[m], prefix);
}

static void count_sandbox_added(struct sbt_metrics_sink *ms, const struct sbt_event *ev,
				const char *sb)
{
	char l[1024];
	size_t o = 0, i;

	if (!ms->per_sandbox)
		return;
	sbt_metrics_label(l, sizeof(l), &o, "sandbox", sb);
	i = removal_of(ms, l);
	if (i < ms->nr_removals) /* back before its series expired: they go on */
		removal_drop(ms, i);
	sbt_metrics_label(l, sizeof(l), &o, "source", ev->sandbox_change.source);
	if (ms->container_labels) {
		const struct sbt_container *c = ev->sandbox_change.container;

		sbt_metrics_label(l, sizeof(l), &o, "container", c ? c->name : "");
		sbt_metrics_label(l, sizeof(l), &o, "image", c ? c->image : "");
	}
	add(ms, SBT_METRIC_SANDBOX_INFO, l, 1);
}

/*
 * It is not traced now (its info goes at once); its counters stay for
 * retain_ns, so that the scrapes after its end see its last counts, then go:
 * a long-running agent's memory stays bounded.
 */
static void count_sandbox_removed(struct sbt_metrics_sink *ms, const struct sbt_event *ev,
				  const char *sb)
{
	char l[1024];
	size_t o = 0;

	if (!ms->per_sandbox)
		return;
	sbt_metrics_label(l, sizeof(l), &o, "sandbox", sb); /* sandbox="NAME" */
	sbt_counters_drop_prefix(&ms->series[SBT_METRIC_SANDBOX_INFO], l);
	if (removal_of(ms, l) < ms->nr_removals)
		return;
	if (ms->nr_removals == ms->cap_removals) {
		size_t cap = ms->cap_removals ? ms->cap_removals * 2 : 16;
		struct removal *r = realloc(ms->removals, cap * sizeof(*r));

		if (!r) { /* no room to remember it: its series go now */
			drop_sandbox(ms, l);
			return;
		}
		ms->removals = r;
		ms->cap_removals = cap;
	}
	ms->removals[ms->nr_removals].prefix = strdup(l);
	if (!ms->removals[ms->nr_removals].prefix) {
		drop_sandbox(ms, l);
		return;
	}
	ms->removals[ms->nr_removals++].at_ns = ev->ts;
}

void sbt_metrics_sink_expire(struct sbt_metrics_sink *ms, uint64_t now_ns)
{
	for (size_t i = 0; i < ms->nr_removals;) {
		if (now_ns - ms->removals[i].at_ns < ms->retain_ns &&
		    now_ns >= ms->removals[i].at_ns) {
			i++;
			continue;
		}
		drop_sandbox(ms, ms->removals[i].prefix);
		removal_drop(ms, i);
	}
}

void sbt_metrics_sink_config(struct sbt_metrics_sink *ms, uint64_t retain_ns, int per_sandbox)
{
	ms->retain_ns = retain_ns;
	ms->per_sandbox = per_sandbox != 0;
}

void sbt_metrics_sink_container_labels(struct sbt_metrics_sink *ms, bool on)
{
	ms->container_labels = on;
}

static void metrics_emit(struct sbt_sink *s, const struct sbt_event *ev)
{
#define SBT_METRICS_COUNT(kind, json, text, metrics, ...) [SBT_EV_##kind] = count_##metrics,
	static void (*const count[SBT_EV__MAX])(
		struct sbt_metrics_sink *, const struct sbt_event *,
		const char *) = { SBT_EVENT_KINDS(SBT_METRICS_COUNT) };
#undef SBT_METRICS_COUNT
	struct sbt_metrics_sink *ms = (struct sbt_metrics_sink *)s;
	char l[1024];
	size_t o = 0;

	sbt_metrics_label(l, sizeof(l), &o, "event", sbt_event_name(ev));
	add(ms, SBT_METRIC_EVENTS, l, 1);
	if ((unsigned int)ev->kind < SBT_EV__MAX)
		count[ev->kind](ms, ev, ev->sandbox ? ev->sandbox->name : "");
}

static const struct sbt_sink_ops metrics_ops = {
	.name = "metrics",
	.emit = metrics_emit,
};

/*
 * Every label set the host families can have, at 0 from the start: a
 * counter born at 1 is one increase() never sees (Prometheus has no sample
 * of it before), and a sandbox that lives two seconds has only such.
 */
static void init_host(struct sbt_metrics_sink *ms)
{
	static const char *const lost_kinds[] = { "exec", "exec_failed", "egress", "any" };
	static const char *const lost_reasons[] = { "ringbuf_full", "not_received",
						    "decode_error" };
	static const unsigned int kinds[] = { SBT_SHELL_DIRECT, SBT_SHELL_COMMAND,
					      SBT_SHELL_SHEBANG, SBT_SHELL_SCRIPT };
	char l[256];
	size_t o;

	add(ms, SBT_METRIC_EXECS, "", 0);
	for (size_t i = 0; sbt_shell_known(i); i++)
		for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
			o = 0;
			sbt_metrics_label(l, sizeof(l), &o, "shell", sbt_shell_known(i));
			sbt_metrics_label(l, sizeof(l), &o, "kind",
					  sbt_shell_kind_name((enum sbt_shell_kind)kinds[k]));
			add(ms, SBT_METRIC_SHELLS, l, 0);
		}
	for (unsigned int r = 1; r < SBT_REASON__MAX; r++) {
		for (unsigned int v = SBT_VERDICT_ALLOWED; v < SBT_VERDICT__MAX; v++) {
			o = 0;
			sbt_metrics_label(l, sizeof(l), &o, "verdict", verdict_name(v));
			sbt_metrics_label(l, sizeof(l), &o, "reason", sbt_egress_reason_name(r));
			add(ms, SBT_METRIC_EGRESS, l, 0);
		}
		o = 0;
		sbt_metrics_label(l, sizeof(l), &o, "reason", sbt_egress_reason_name(r));
		add(ms, SBT_METRIC_EGRESS_WOULD_DENY, l, 0);
	}
	for (size_t k = 0; k < sizeof(lost_kinds) / sizeof(lost_kinds[0]); k++)
		for (size_t r = 0; r < sizeof(lost_reasons) / sizeof(lost_reasons[0]); r++) {
			o = 0;
			sbt_metrics_label(l, sizeof(l), &o, "kind", lost_kinds[k]);
			sbt_metrics_label(l, sizeof(l), &o, "reason", lost_reasons[r]);
			add(ms, SBT_METRIC_EVENTS_LOST, l, 0);
		}
}

struct sbt_metrics_sink *sbt_metrics_sink_new(void)
{
	struct sbt_metrics_sink *ms = calloc(1, sizeof(*ms));

	if (!ms)
		return NULL;
	ms->base.ops = &metrics_ops;
	ms->per_sandbox = true;
	ms->retain_ns = 300ull * 1000000000ull;
	init_host(ms);
	return ms;
}

void sbt_metrics_sink_free(struct sbt_metrics_sink *ms)
{
	if (!ms)
		return;
	for (unsigned int m = 0; m < SBT_METRIC__MAX; m++)
		sbt_counters_free(&ms->series[m]);
	while (ms->nr_removals)
		removal_drop(ms, 0);
	free(ms->removals);
	free(ms);
}

struct sbt_sink *sbt_metrics_sink_base(struct sbt_metrics_sink *ms)
{
	return &ms->base;
}

/* ---- rendering --------------------------------------------------------------- */

static const char *family(FILE *f, enum sbt_metric m)
{
	const struct sbt_metric_family *fam = &families[m];

	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", fam->name, fam->help, fam->name, fam->type);
	return fam->name;
}

static void series(FILE *f, enum sbt_metric m, const struct sbt_counters *cs)
{
	const char *name = family(f, m);

	for (size_t i = 0; i < cs->cap; i++)
		if (cs->c[i].labels)
			fprintf(f, "%s%s%s%s %llu\n", name, cs->c[i].labels[0] ? "{" : "",
				cs->c[i].labels, cs->c[i].labels[0] ? "}" : "",
				(unsigned long long)cs->c[i].value);
}

static void gauge(FILE *f, enum sbt_metric m, double v)
{
	fprintf(f, "%s %.17g\n", family(f, m), v);
}

static void runtime_metrics(FILE *f, const struct sbt_metrics_runtime *rt)
{
	const char *name;
	char l[256];
	size_t o = 0;

	sbt_metrics_label(l, sizeof(l), &o, "version", rt->version);
	snprintf(l + o, sizeof(l) - o, ",abi=\"%u\"", rt->abi);
	o = strlen(l);
	sbt_metrics_label(l, sizeof(l), &o, "exec_hook", rt->exec_mode ? rt->exec_mode : "none");
	fprintf(f, "%s{%s} 1\n", family(f, SBT_METRIC_BUILD_INFO), l);
	gauge(f, SBT_METRIC_START_TIME, rt->start_time_seconds);
	gauge(f, SBT_METRIC_ATTACH_DURATION, rt->attach_duration_seconds);
	gauge(f, SBT_METRIC_SANDBOXES, (double)rt->targets);
	fprintf(f, "%s %llu\n", family(f, SBT_METRIC_SANDBOXES_UNREGISTERED),
		(unsigned long long)rt->sandboxes_unregistered);
	gauge(f, SBT_METRIC_RINGBUF_PENDING, (double)rt->ringbuf_pending_bytes);
	gauge(f, SBT_METRIC_RINGBUF_HIGH_WATER, (double)rt->ringbuf_high_water_bytes);
	gauge(f, SBT_METRIC_RINGBUF_SIZE, (double)rt->ringbuf_size_bytes);
	name = family(f, SBT_METRIC_BPF_RUN_SECONDS);
	for (size_t i = 0; i < rt->nr_progs; i++)
		fprintf(f, "%s{program=\"%s\"} %.9f\n", name, rt->progs[i].name,
			(double)rt->progs[i].run_time_ns / 1e9);
	name = family(f, SBT_METRIC_BPF_RUNS);
	for (size_t i = 0; i < rt->nr_progs; i++)
		fprintf(f, "%s{program=\"%s\"} %llu\n", name, rt->progs[i].name,
			(unsigned long long)rt->progs[i].run_cnt);
	gauge(f, SBT_METRIC_BPF_STATS_ENABLED, rt->stats_enabled ? 1 : 0);
	if (rt->has_subscribers) {
		gauge(f, SBT_METRIC_SUBSCRIBERS, (double)rt->subscribers);
		gauge(f, SBT_METRIC_SUBSCRIBERS_ACCEPTED, (double)rt->subscribers_accepted);
		gauge(f, SBT_METRIC_SUBSCRIBERS_REFUSED, (double)rt->subscribers_refused);
		gauge(f, SBT_METRIC_SUBSCRIBER_DROPPED, (double)rt->subscriber_dropped);
	}
	if (rt->has_process) {
		gauge(f, SBT_METRIC_PROCESS_CPU, rt->cpu_seconds);
		gauge(f, SBT_METRIC_PROCESS_RSS, (double)rt->rss_bytes);
		gauge(f, SBT_METRIC_PROCESS_VSIZE, (double)rt->vsize_bytes);
		gauge(f, SBT_METRIC_PROCESS_FDS, (double)rt->open_fds);
		gauge(f, SBT_METRIC_PROCESS_MAX_FDS, (double)rt->max_fds);
		gauge(f, SBT_METRIC_PROCESS_START, rt->process_start_seconds);
	}
}

int sbt_metrics_render(const struct sbt_metrics_sink *ms, const struct sbt_metrics_runtime *rt,
		       FILE *f)
{
	if (rt)
		runtime_metrics(f, rt);
	for (unsigned int m = 0; m < SBT_METRIC__MAX; m++)
		if (families[m].from != SBT_METRIC_FROM_RUNTIME)
			series(f, (enum sbt_metric)m, &ms->series[m]);
	return ferror(f) ? -EIO : 0;
}

char *sbt_metrics_render_str(const struct sbt_metrics_sink *ms,
			     const struct sbt_metrics_runtime *rt, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);
	int err;

	if (!f)
		return NULL;
	err = sbt_metrics_render(ms, rt, f);
	if (fclose(f) || err) {
		free(buf);
		return NULL;
	}
	return buf;
}
