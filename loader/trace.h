/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The loader's entry points: the trace (tracer.h's request), and `sbtrace features`. */
#ifndef SBT_TRACE_H
#define SBT_TRACE_H

#include <stdio.h>

#include "trace/tracer.h"

/* Run a trace to its end (an sbt_trace_fn): attach, stream to the sinks, report. */
int sbt_trace_run(const struct sbt_trace_opts *opts);

/* Load and attach every capability with nothing registered; the plan as JSON on `out`. */
int sbt_features_run(const struct sbt_exec_opts *exec_opts, FILE *out);

#endif
