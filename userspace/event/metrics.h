/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Metrics in the Prometheus text exposition format (version 0.0.4): a sink
 * that counts the run's events by their labels, and a renderer that writes
 * them with what only the loader knows (BPF program costs, the ring
 * buffer). Pure C: the loader serves the text (HTTP) or writes it (file).
 */
#ifndef SBT_METRICS_H
#define SBT_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct sbt_sink;
struct sbt_metrics_sink;

/*
 * Every metric family sbtrace exposes, in the order /metrics has them:
 * M(ID, name, type, help, from). `from`: runtime (what the loader adds,
 * struct sbt_metrics_runtime), host (counted from events over every
 * sandbox, no sandbox label: what survives sandboxes that live seconds;
 * every known label set there from the start at 0), sandbox (counted from
 * events, labelled by sandbox first: kept for --metrics-retain after the
 * sandbox ends, then dropped), run (counted from events). The renderer and
 * `sbtrace top` go by this list.
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
	  "Bytes that waited in the BPF ring buffer before its last drain", runtime)               \
	M(RINGBUF_HIGH_WATER, "sbtrace_ringbuf_high_water_bytes", gauge,                           \
	  "The most bytes that ever waited in the BPF ring buffer before a drain", runtime)        \
	M(RINGBUF_SIZE, "sbtrace_ringbuf_size_bytes", gauge, "Size of the BPF ring buffer",        \
	  runtime)                                                                                 \
	M(BPF_RUN_SECONDS, "sbtrace_bpf_program_run_seconds_total", counter,                       \
	  "Time the kernel spent in each loaded BPF program (BPF_ENABLE_STATS)", runtime)          \
	M(BPF_RUNS, "sbtrace_bpf_program_runs_total", counter,                                     \
	  "Runs of each loaded BPF program (BPF_ENABLE_STATS)", runtime)                           \
	M(BPF_STATS_ENABLED, "sbtrace_bpf_stats_enabled", gauge,                                   \
	  "1 when BPF run-time statistics are on for this agent (BPF_ENABLE_STATS)", runtime)      \
	M(SUBSCRIBERS, "sbtrace_subscribers", gauge,                                               \
	  "Clients of the subscriber socket connected now", runtime)                               \
	M(SUBSCRIBERS_ACCEPTED, "sbtrace_subscribers_accepted_total", counter,                     \
	  "Clients the subscriber socket accepted", runtime)                                       \
	M(SUBSCRIBERS_REFUSED, "sbtrace_subscribers_refused_total", counter,                       \
	  "Clients the subscriber socket refused (not root, or too many)", runtime)                \
	M(SUBSCRIBER_DROPPED, "sbtrace_subscriber_lines_dropped_total", counter,                   \
	  "Lines a slow subscriber lost (each told to it as EventsLost)", runtime)                 \
	M(PROCESS_CPU, "process_cpu_seconds_total", counter,                                       \
	  "User and system CPU time of the agent's process", runtime)                              \
	M(PROCESS_RSS, "process_resident_memory_bytes", gauge,                                     \
	  "Resident memory of the agent's process", runtime)                                       \
	M(PROCESS_VSIZE, "process_virtual_memory_bytes", gauge,                                    \
	  "Virtual memory of the agent's process", runtime)                                        \
	M(PROCESS_FDS, "process_open_fds", gauge, "Open file descriptors of the agent", runtime)   \
	M(PROCESS_MAX_FDS, "process_max_fds", gauge, "The agent's file descriptor limit", runtime) \
	M(PROCESS_START, "process_start_time_seconds", gauge,                                      \
	  "When the agent's process started, since the epoch", runtime)                            \
	M(EXECS, "sbtrace_execs_total", counter, "Execs seen in all sandboxes (ProcessExec)",      \
	  host)                                                                                    \
	M(SHELLS, "sbtrace_shells_total", counter,                                                 \
	  "Shell execs in all sandboxes, by shell and kind", host)                                 \
	M(EGRESS, "sbtrace_egress_total", counter,                                                 \
	  "Egress verdicts in all sandboxes, by verdict and reason", host)                         \
	M(EGRESS_WOULD_DENY, "sbtrace_egress_would_deny_total", counter,                           \
	  "Egress an audit-mode policy let pass that enforcing would deny, by reason", host)       \
	M(EVENTS_LOST, "sbtrace_events_lost_total", counter, "Events lost, by kind and reason",    \
	  host)                                                                                    \
	M(SANDBOX_INFO, "sbtrace_sandbox_info", gauge,                                             \
	  "A sandbox traced now (1), with its source (and container, image)", sandbox)             \
	M(SANDBOX_EVENTS_LOST, "sbtrace_sandbox_events_lost_total", counter,                       \
	  "Events lost, by sandbox", sandbox)                                                      \
	M(SANDBOX_EXECS, "sbtrace_sandbox_execs_total", counter,                                   \
	  "Execs seen in each sandbox (ProcessExec)", sandbox)                                     \
	M(SHELL_INVOCATIONS, "sbtrace_shell_invocations_total", counter,                           \
	  "Shell execs by sandbox, shell and kind", sandbox)                                       \
	M(EGRESS_VERDICTS, "sbtrace_egress_verdicts_total", counter,                               \
	  "Egress verdicts by sandbox, verdict, hook (cgroup or tap) and reason", sandbox)         \
	M(EVENTS, "sbtrace_events_total", counter, "Events written, by event", run)

#define SBT_METRIC_ENUM(id, ...) SBT_METRIC_##id,
enum sbt_metric {
	SBT_METRIC_FAMILIES(SBT_METRIC_ENUM) SBT_METRIC__MAX,
};
#undef SBT_METRIC_ENUM

enum sbt_metric_from {
	SBT_METRIC_FROM_RUNTIME,
	SBT_METRIC_FROM_HOST,
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
	uint64_t ringbuf_pending_bytes, ringbuf_high_water_bytes, ringbuf_size_bytes;
	const struct sbt_prog_stats *progs;
	size_t nr_progs;
	int stats_enabled; /* BPF_ENABLE_STATS took: run times are real */
	/* the subscriber socket (has_subscribers: there is one) */
	int has_subscribers;
	uint64_t subscribers, subscribers_accepted, subscribers_refused, subscriber_dropped;
	/* the process (has_process: read from /proc/self) */
	int has_process;
	double cpu_seconds, process_start_seconds;
	uint64_t rss_bytes, vsize_bytes, open_fds, max_fds;
};

/* The metrics sink: counts events (sink.h) by kind and labels. */
struct sbt_metrics_sink *sbt_metrics_sink_new(void);
/*
 * A sandbox's series after its SandboxRemoved: kept retain_ns more (a scrape
 * or two sees its last counts; its info series goes at once), or none at all
 * without per_sandbox (the host families alone: bounded cardinality).
 */
void sbt_metrics_sink_config(struct sbt_metrics_sink *ms, uint64_t retain_ns, int per_sandbox);
/*
 * sbtrace_sandbox_info gains the labels container and image (the container
 * runtime's name and image of the sandbox, "" when none): a join for
 * dashboards, at the cost of two labels more per sandbox.
 */
void sbt_metrics_sink_container_labels(struct sbt_metrics_sink *ms, bool on);
/* Drop the series of sandboxes removed longer than retain_ns before now_ns. */
void sbt_metrics_sink_expire(struct sbt_metrics_sink *ms, uint64_t now_ns);
void sbt_metrics_sink_free(struct sbt_metrics_sink *ms);
struct sbt_sink *sbt_metrics_sink_base(struct sbt_metrics_sink *ms);
/* Every series: the sink's and the runtime's. 0 or -errno (a write failed). */
int sbt_metrics_render(const struct sbt_metrics_sink *ms, const struct sbt_metrics_runtime *rt,
		       FILE *f);
/* The same into a malloc'd string (*len bytes). NULL on failure. */
char *sbt_metrics_render_str(const struct sbt_metrics_sink *ms,
			     const struct sbt_metrics_runtime *rt, size_t *len);

#endif
