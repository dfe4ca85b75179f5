/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Metrics in the Prometheus text exposition format (version 0.0.4): a sink
 * that counts the run's events by their labels, and a renderer that writes
 * them with what only the loader knows (BPF program costs, the ring
 * buffer). Pure C: the loader serves the text (HTTP) or writes it (file).
 */
#ifndef SBT_METRICS_H
#define SBT_METRICS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct sbt_sink;
struct sbt_metrics_sink;

/*
 * Every metric family sbtrace exposes, in the order /metrics has them:
 * M(ID, name, type, help, from). `from`: runtime (what the loader adds,
 * struct sbt_metrics_runtime), sandbox (counted from events, labelled by
 * sandbox first: gone with it), run (counted from events). The renderer
 * and `sbtrace top` go by this list.
 */
#define SBT_METRIC_FAMILIES(M)                                                                     \
	M(BUILD_INFO, "sbtrace_build_info", gauge,                                                 \
	  "sbtrace's version, event ABI and exec hook mode", runtime)                              \
	M(START_TIME, "sbtrace_start_time_seconds", gauge,                                         \
	  "When this agent started, since the epoch", runtime)                                     \
	M(ATTACH_DURATION, "sbtrace_attach_duration_seconds", gauge,                               \
	  "Time to load and attach the BPF programs at start", runtime)                            \
	M(SANDBOXES, "sbtrace_sandboxes", gauge, "Sandboxes traced now", runtime)                  \
	M(SANDBOXES_UNREGISTERED, "sbtrace_sandboxes_unregistered_total", counter,                 \
	  "Child cgroups of a --cgroup-parent that got no slot (not traced)", runtime)             \
	M(RINGBUF_PENDING, "sbtrace_ringbuf_pending_bytes", gauge,                                 \
	  "Bytes waiting in the BPF ring buffer", runtime)                                         \
	M(RINGBUF_SIZE, "sbtrace_ringbuf_size_bytes", gauge, "Size of the BPF ring buffer",        \
	  runtime)                                                                                 \
	M(BPF_RUN_SECONDS, "sbtrace_bpf_program_run_seconds_total", counter,                       \
	  "Time the kernel spent in each BPF program (BPF_ENABLE_STATS)", runtime)                 \
	M(BPF_RUNS, "sbtrace_bpf_program_runs_total", counter,                                     \
	  "Runs of each BPF program (BPF_ENABLE_STATS)", runtime)                                  \
	M(BPF_STATS_ENABLED, "sbtrace_bpf_stats_enabled", gauge,                                   \
	  "1 when BPF run-time statistics are on for this agent (BPF_ENABLE_STATS)", runtime)      \
	M(SANDBOX_INFO, "sbtrace_sandbox_info", gauge,                                             \
	  "A sandbox traced now (1), with its source", sandbox)                                    \
	M(SANDBOX_EVENTS_LOST, "sbtrace_sandbox_events_lost_total", counter,                       \
	  "Events lost, by sandbox", sandbox)                                                      \
	M(SANDBOX_EXECS, "sbtrace_sandbox_execs_total", counter,                                   \
	  "Execs seen in each sandbox (ProcessExec)", sandbox)                                     \
	M(SHELL_INVOCATIONS, "sbtrace_shell_invocations_total", counter,                           \
	  "Shell execs by sandbox, shell and kind", sandbox)                                       \
	M(EGRESS_VERDICTS, "sbtrace_egress_verdicts_total", counter,                               \
	  "Egress verdicts by sandbox, verdict, source and reason", sandbox)                       \
	M(EVENTS_LOST, "sbtrace_events_lost_total", counter, "Events lost, by kind and reason",    \
	  run)                                                                                     \
	M(EVENTS, "sbtrace_events_total", counter, "Events written, by event", run)

#define SBT_METRIC_ENUM(id, ...) SBT_METRIC_##id,
enum sbt_metric {
	SBT_METRIC_FAMILIES(SBT_METRIC_ENUM) SBT_METRIC__MAX,
};
#undef SBT_METRIC_ENUM

enum sbt_metric_from {
	SBT_METRIC_FROM_RUNTIME,
	SBT_METRIC_FROM_SANDBOX,
	SBT_METRIC_FROM_RUN,
};

struct sbt_metric_family {
	const char *name, *type, *help;
	enum sbt_metric_from from;
};

/* The family of `m` (m < SBT_METRIC__MAX). */
const struct sbt_metric_family *sbt_metric_family(enum sbt_metric m);
/* The family named `name`, or SBT_METRIC__MAX. */
enum sbt_metric sbt_metric_by_name(const char *name);

/* One labelled counter: `labels` is the text between the braces. */
struct sbt_counter {
	char *labels;
	uint64_t value;
	uint64_t hash;
};

/* A counter family's series (open addressing on the label text). */
struct sbt_counters {
	struct sbt_counter *c;
	size_t n, cap; /* cap: a power of two, or 0 */
};

/* Add v to the series `labels`. 0, or -ENOMEM. */
int sbt_counters_add(struct sbt_counters *cs, const char *labels, uint64_t v);
/* The series' value, 0 if none. */
uint64_t sbt_counters_get(const struct sbt_counters *cs, const char *labels);
/* Drop every series whose labels start with `prefix` (a sandbox that ended). */
void sbt_counters_drop_prefix(struct sbt_counters *cs, const char *prefix);
void sbt_counters_free(struct sbt_counters *cs);

/* name="value" with the value escaped (\\, \", \n), appended to buf at *off. */
void sbt_metrics_label(char *buf, size_t len, size_t *off, const char *name, const char *value);

/* One BPF program's cost (BPF_ENABLE_STATS). */
struct sbt_prog_stats {
	const char *name;
	uint64_t run_time_ns;
	uint64_t run_cnt;
};

/* What the loader adds to a scrape. */
struct sbt_metrics_runtime {
	const char *version;
	unsigned int abi;
	const char *exec_mode;
	double start_time_seconds;
	double attach_duration_seconds;
	uint64_t targets;
	uint64_t sandboxes_unregistered; /* child cgroups without a slot */
	uint64_t ringbuf_pending_bytes, ringbuf_size_bytes;
	const struct sbt_prog_stats *progs;
	size_t nr_progs;
	int stats_enabled; /* BPF_ENABLE_STATS took: run times are real */
};

/* The metrics sink: counts events (sink.h) by kind and labels. */
struct sbt_metrics_sink *sbt_metrics_sink_new(void);
void sbt_metrics_sink_free(struct sbt_metrics_sink *ms);
struct sbt_sink *sbt_metrics_sink_base(struct sbt_metrics_sink *ms);
/* Every series: the sink's and the runtime's. 0 or -errno (a write failed). */
int sbt_metrics_render(const struct sbt_metrics_sink *ms, const struct sbt_metrics_runtime *rt,
		       FILE *f);
/* The same into a malloc'd string (*len bytes). NULL on failure. */
char *sbt_metrics_render_str(const struct sbt_metrics_sink *ms,
			     const struct sbt_metrics_runtime *rt, size_t *len);

#endif
