/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef SBT_PROBE_CMD_H
#define SBT_PROBE_CMD_H

#include <stdio.h>

#include "egress.h"
#include "policy.h"

/* `sbtrace probe` (probe_cmd.c). */
int sbt_probe_main(int argc, char **argv);
void sbt_probe_usage(FILE *f);

/* Egress rule options shared by trace and probe (main.c): 0, or -errno after a message. */
int sbt_cli_add_rule(struct sbt_egress_cfg *cfg, enum sbt_rule_kind kind, const char *opt,
		     const char *arg);
int sbt_cli_load_allowlist(struct sbt_egress_cfg *cfg, const char *path);
/* --allow-cidr, --allow-host, --allowlist, --egress, --resolver by long name (without --). */
int sbt_cli_egress_option(struct sbt_egress_cfg *cfg, int *mode, const char *cmd, const char *opt,
			  const char *arg);

#endif
