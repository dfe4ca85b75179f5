/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Internal to the Dockerfile parser (see context.h): stages and global ARGs. */
#ifndef SBT_DF_STAGE_H
#define SBT_DF_STAGE_H

#include "dockerfile/context.h"
#include "dockerfile/dockerfile.h"

/* FROM (a new stage) and a global ARG. */
int df_from(struct df_parser *p, struct sbt_df_instr *in);
int df_global_args(struct df_parser *p, const struct sbt_df_instr *in);

/*
 * The stage among stages[0, before) that `ref` names: by name
 * (case-insensitive) or by its index in decimal. -1 when none.
 */
int df_stage_ref(const struct sbt_dockerfile *df, const char *ref, int before);

#endif
