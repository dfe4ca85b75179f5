/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* What `sbtrace agent` observes of itself, and serves (agent_obs.c). */
#ifndef SBT_LOADER_AGENT_OBS_H
#define SBT_LOADER_AGENT_OBS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "event/metrics.h"

struct sbtrace_bpf;
struct bpf_program;

#define SBT_AGENT_OBS_PROGS 48

/* What the agent observes of itself for a scrape: BPF program costs, the ring buffer. */
struct sbt_agent_obs {
	int stats_fd; /* BPF_ENABLE_STATS, -1 if refused */
	const struct bpf_program *progs[SBT_AGENT_OBS_PROGS];
	struct sbt_prog_stats prog_stats[SBT_AGENT_OBS_PROGS];
	size_t nr_progs;
	void *rb_consumer, *rb_producer; /* read-only views of the ring buffer's positions */
	uint64_t rb_size;
	uint64_t rb_last, rb_high; /* pending before the last drain, and the most ever */
	long page;
};

/* Turn run-time statistics on for this process's life (not the global sysctl). */
void sbt_agent_obs_init(struct sbt_agent_obs *ob, int ringbuf_fd, uint64_t ringbuf_size);
void sbt_agent_obs_add_prog(struct sbt_agent_obs *ob, const struct bpf_program *prog);
/* Fill rt's BPF and ring-buffer fields now. */
void sbt_agent_obs_fill(struct sbt_agent_obs *ob, struct sbt_metrics_runtime *rt);
uint64_t sbt_agent_obs_pending(const struct sbt_agent_obs *ob);
/* Before a drain: what waits now, for the pending and high-water gauges. */
void sbt_agent_obs_sample(struct sbt_agent_obs *ob);
void sbt_agent_obs_free(struct sbt_agent_obs *ob);

/* /metrics over HTTP (libmicrohttpd, driven by the agent's own poll loop: no thread). */
struct sbt_http;
typedef char *(*sbt_http_render_fn)(void *arg, size_t *len);
/* NULL after a one-line message on failure. */
/* Who may scrape (agent_obs.c, accept_peer). */
struct sbt_http_access {
	unsigned int uids[8]; /* loopback peers besides root's */
	int nr_uids;
	const char *token_file; /* a token every request must carry; NULL: none */
	bool open;		/* peers from elsewhere without a token (an address not loopback) */
};
struct sbt_http *sbt_http_start(const char *hostport, const struct sbt_http_access *acc,
				sbt_http_render_fn render, void *arg);
int sbt_http_fd(const struct sbt_http *h); /* poll it for POLLIN, then sbt_http_run() */
void sbt_http_run(struct sbt_http *h);
void sbt_http_stop(struct sbt_http *h);

#endif
