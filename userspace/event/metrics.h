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
/* Write the text to path atomically (path.tmp, then rename). 0 or -errno. */
int sbt_metrics_write_file(const char *path, const char *text, size_t len);

#endif
