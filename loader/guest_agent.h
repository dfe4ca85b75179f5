/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The loader's `sbtrace guest-agent` (see userspace/guest_agent_cmd.h). */
#ifndef SBT_GUEST_AGENT_H
#define SBT_GUEST_AGENT_H

#include "cmd/guest_agent_cmd.h"

/* Attach, stream until SIGTERM/SIGINT or a failed write: an exit code. */
int sbt_guest_agent_run(const struct sbt_guest_agent_opts *opts);

#endif
