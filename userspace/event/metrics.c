// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Prometheus text format: the metrics sink and the renderer (metrics.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "egress/dnsev.h"
#include "event/events.h"
#include "lib/io.h"
#include "event/metrics.h"
#include "event/sink.h"

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

/* ---- the sink -------------------------------------------------------------- */

struct sbt_metrics_sink {
	struct sbt_sink base;
	struct sbt_counters execs;   /* sandbox */
	struct sbt_counters shells;  /* sandbox, shell, kind */
	struct sbt_counters egress;  /* sandbox, verdict, source, reason */
	struct sbt_counters lost;    /* kind, reason */
	struct sbt_counters events;  /* event */
	struct sbt_counters info;    /* sandbox, source: the live sandboxes (1 each) */
	struct sbt_counters sb_lost; /* sandbox */
};

/* An egress verdict as its label says it. */
static const char *verdict_name(unsigned int v)
{
	static const char *const names[] = { "allowed", "denied", "observed" };

	return names[sbt_egress_variant(v)];
}

static void metrics_emit(struct sbt_sink *s, const struct sbt_event *ev)
{
	struct sbt_metrics_sink *ms = (struct sbt_metrics_sink *)s;
	const char *sb = ev->sandbox ? ev->sandbox->name : "";
	char l[1024];
	size_t o = 0;

	sbt_metrics_label(l, sizeof(l), &o, "event", sbt_event_name(ev));
	sbt_counters_add(&ms->events, l, 1);
	o = 0;
	switch (ev->kind) {
	case SBT_EV_EXEC:
		sbt_metrics_label(l, sizeof(l), &o, "sandbox", sb);
		sbt_counters_add(&ms->execs, l, 1);
		if (!ev->exec.shell)
			break;
		sbt_metrics_label(l, sizeof(l), &o, "shell", ev->exec.shell->shell);
		sbt_metrics_label(l, sizeof(l), &o, "kind",
				  sbt_shell_kind_name(ev->exec.shell->kind));
		sbt_counters_add(&ms->shells, l, 1);
		break;
	case SBT_EV_EGRESS:
		sbt_metrics_label(l, sizeof(l), &o, "sandbox", sb);
		sbt_metrics_label(l, sizeof(l), &o, "verdict",
				  verdict_name(ev->egress.rec->verdict));
		sbt_metrics_label(l, sizeof(l), &o, "source",
				  ev->egress.rec->hook == SBT_HOOK_TAP ? "tap" : "cgroup");
		sbt_metrics_label(l, sizeof(l), &o, "reason",
				  sbt_egress_reason_name(ev->egress.rec->reason));
		sbt_counters_add(&ms->egress, l, ev->egress.rec->count);
		break;
	case SBT_EV_LOST:
		sbt_metrics_label(l, sizeof(l), &o, "kind", ev->lost.kind ? ev->lost.kind : "any");
		sbt_metrics_label(l, sizeof(l), &o, "reason", ev->lost.reason);
		sbt_counters_add(&ms->lost, l, ev->lost.lost);
		if (!ev->sandbox)
			break;
		o = 0;
		sbt_metrics_label(l, sizeof(l), &o, "sandbox", sb);
		sbt_counters_add(&ms->sb_lost, l, ev->lost.lost);
		break;
	case SBT_EV_SANDBOX_ADDED:
		sbt_metrics_label(l, sizeof(l), &o, "sandbox", sb);
		sbt_metrics_label(l, sizeof(l), &o, "source", ev->sandbox_change.source);
		sbt_counters_add(&ms->info, l, 1);
		break;
	case SBT_EV_SANDBOX_REMOVED:
		/* its series end with it: a long-running agent's memory stays bounded */
		sbt_metrics_label(l, sizeof(l), &o, "sandbox", sb); /* sandbox="NAME" */
		sbt_counters_drop_prefix(&ms->execs, l);
		sbt_counters_drop_prefix(&ms->shells, l);
		sbt_counters_drop_prefix(&ms->egress, l);
		sbt_counters_drop_prefix(&ms->info, l);
		sbt_counters_drop_prefix(&ms->sb_lost, l);
		break;
	default:
		break;
	}
}

static const struct sbt_sink_ops metrics_ops = {
	.name = "metrics",
	.emit = metrics_emit,
};

struct sbt_metrics_sink *sbt_metrics_sink_new(void)
{
	struct sbt_metrics_sink *ms = calloc(1, sizeof(*ms));

	if (ms)
		ms->base.ops = &metrics_ops;
	return ms;
}

void sbt_metrics_sink_free(struct sbt_metrics_sink *ms)
{
	if (!ms)
		return;
	sbt_counters_free(&ms->execs);
	sbt_counters_free(&ms->shells);
	sbt_counters_free(&ms->egress);
	sbt_counters_free(&ms->lost);
	sbt_counters_free(&ms->events);
	sbt_counters_free(&ms->info);
	sbt_counters_free(&ms->sb_lost);
	free(ms);
}

struct sbt_sink *sbt_metrics_sink_base(struct sbt_metrics_sink *ms)
{
	return &ms->base;
}

/* ---- rendering --------------------------------------------------------------- */

static void family(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void series(FILE *f, const char *name, const char *type, const char *help,
		   const struct sbt_counters *cs)
{
	family(f, name, type, help);
	for (size_t i = 0; i < cs->cap; i++)
		if (cs->c[i].labels)
			fprintf(f, "%s{%s} %llu\n", name, cs->c[i].labels,
				(unsigned long long)cs->c[i].value);
}

static void counters(FILE *f, const char *name, const char *help, const struct sbt_counters *cs)
{
	series(f, name, "counter", help, cs);
}

static void gauge(FILE *f, const char *name, const char *help, double v)
{
	family(f, name, "gauge", help);
	fprintf(f, "%s %.17g\n", name, v);
}

static void runtime_metrics(FILE *f, const struct sbt_metrics_runtime *rt)
{
	char l[256];
	size_t o = 0;

	sbt_metrics_label(l, sizeof(l), &o, "version", rt->version);
	snprintf(l + o, sizeof(l) - o, ",abi=\"%u\"", rt->abi);
	o = strlen(l);
	sbt_metrics_label(l, sizeof(l), &o, "exec_hook", rt->exec_mode ? rt->exec_mode : "none");
	family(f, "sbtrace_build_info", "gauge", "sbtrace's version, event ABI and exec hook mode");
	fprintf(f, "sbtrace_build_info{%s} 1\n", l);
	gauge(f, "sbtrace_start_time_seconds", "When this agent started, since the epoch",
	      rt->start_time_seconds);
	gauge(f, "sbtrace_attach_duration_seconds",
	      "Time to load and attach the BPF programs at start", rt->attach_duration_seconds);
	gauge(f, "sbtrace_sandboxes", "Sandboxes traced now", (double)rt->targets);
	family(f, "sbtrace_sandboxes_unregistered_total", "counter",
	       "Child cgroups of a --cgroup-parent that got no slot (not traced)");
	fprintf(f, "sbtrace_sandboxes_unregistered_total %llu\n",
		(unsigned long long)rt->sandboxes_unregistered);
	gauge(f, "sbtrace_ringbuf_pending_bytes", "Bytes waiting in the BPF ring buffer",
	      (double)rt->ringbuf_pending_bytes);
	gauge(f, "sbtrace_ringbuf_size_bytes", "Size of the BPF ring buffer",
	      (double)rt->ringbuf_size_bytes);
	family(f, "sbtrace_bpf_program_run_seconds_total", "counter",
	       "Time the kernel spent in each BPF program (BPF_ENABLE_STATS)");
	for (size_t i = 0; i < rt->nr_progs; i++)
		fprintf(f, "sbtrace_bpf_program_run_seconds_total{program=\"%s\"} %.9f\n",
			rt->progs[i].name, (double)rt->progs[i].run_time_ns / 1e9);
	family(f, "sbtrace_bpf_program_runs_total", "counter",
	       "Runs of each BPF program (BPF_ENABLE_STATS)");
	for (size_t i = 0; i < rt->nr_progs; i++)
		fprintf(f, "sbtrace_bpf_program_runs_total{program=\"%s\"} %llu\n",
			rt->progs[i].name, (unsigned long long)rt->progs[i].run_cnt);
	gauge(f, "sbtrace_bpf_stats_enabled",
	      "1 when BPF run-time statistics are on for this agent (BPF_ENABLE_STATS)",
	      rt->stats_enabled ? 1 : 0);
}

int sbt_metrics_render(const struct sbt_metrics_sink *ms, const struct sbt_metrics_runtime *rt,
		       FILE *f)
{
	if (rt)
		runtime_metrics(f, rt);
	series(f, "sbtrace_sandbox_info", "gauge", "A sandbox traced now (1), with its source",
	       &ms->info);
	counters(f, "sbtrace_sandbox_events_lost_total", "Events lost, by sandbox", &ms->sb_lost);
	counters(f, "sbtrace_sandbox_execs_total", "Execs seen in each sandbox (ProcessExec)",
		 &ms->execs);
	counters(f, "sbtrace_shell_invocations_total", "Shell execs by sandbox, shell and kind",
		 &ms->shells);
	counters(f, "sbtrace_egress_verdicts_total",
		 "Egress verdicts by sandbox, verdict, source and reason", &ms->egress);
	counters(f, "sbtrace_events_lost_total", "Events lost, by kind and reason", &ms->lost);
	counters(f, "sbtrace_events_total", "Events written, by event", &ms->events);
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

int sbt_metrics_write_file(const char *path, const char *text, size_t len)
{
	char tmp[4096];
	int fd, ret;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= sizeof(tmp))
		return -ENAMETOOLONG;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	ret = sbt_write_all(fd, text, len);
	if (close(fd) && !ret)
		ret = -errno;
	if (!ret && rename(tmp, path))
		ret = -errno;
	if (ret)
		unlink(tmp);
	return ret;
}
