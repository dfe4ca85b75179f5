/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* `sbtrace agent` in the loader: the run (agent.c) and what it serves (agent_obs.c). */
#ifndef SBT_LOADER_AGENT_H
#define SBT_LOADER_AGENT_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cmd/agent_cmd.h"
#include "trace/tracer.h"

/* Run the agent to its end: an exit code (an sbt_agent_fn). */
int sbt_agent_run(struct sbt_agent_opts *opts);

#endif
