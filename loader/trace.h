/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef SBT_TRACE_H
#define SBT_TRACE_H

#include <stdio.h>

#include "events.h"
#include "egress.h"
#include "loader.h"

struct sbt_trace_opts {
	struct sbt_sandbox sandboxes[SBT_MAX_SANDBOXES];
	uint32_t nr_sandboxes;
	struct sbt_exec_opts exec;
	enum sbt_format format;
	FILE *out;
	uint64_t duration_ms; /* 0: until SIGINT/SIGTERM */
	struct sbt_egress_cfg egress;

	/* For callers that run a workload under the trace (sbtrace probe, --sandbox). */
	void *hook_arg;
	/* After TraceStarted: everything is attached and registered. */
	void (*on_attached)(void *arg);
	/* Each loop tick (<= poll_ms); return a stop reason to stop, NULL to go on. */
	const char *(*on_tick)(void *arg);
	/* If set: receives {"shell_invocation": [per sandbox], "stopped": TraceStopped}. */
	json_object **results;
};

extern int sbt_verbose;

void sbt_setup_libbpf(void);
int sbt_trace_run(const struct sbt_trace_opts *opts);
int sbt_features_run(const struct sbt_exec_opts *exec_opts, FILE *out);

#endif
