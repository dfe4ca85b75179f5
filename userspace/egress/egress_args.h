/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The egress options `sbtrace trace` and `sbtrace probe` share (--allow-cidr,
 * --allow-host, --allowlist, --egress, --resolver, --learn-format,
 * --learn-out ...).
 */
#ifndef SBT_EGRESS_ARGS_H
#define SBT_EGRESS_ARGS_H

#include "trace/tracer.h"

/*
 * One egress option by its long name (without --): rules are appended to
 * cfg (ids 1, 2, ...), --egress sets *mode (learn: SBT_EGRESS_AUDIT and
 * cfg->learn). 0, or -errno after a one-line message (lib/log.h: the
 * command's prefix).
 */
int sbt_egress_option(struct sbt_egress_cfg *cfg, int *mode, const char *opt, const char *arg);
/*
 * After the options: why learn mode's options do not go together (the
 * learn options without --egress learn, learn without the DNS proxy), or NULL.
 */
const char *sbt_egress_learn_refused(const struct sbt_egress_cfg *cfg);

/* An allowlist is a regular file of at most this many bytes. */
#define SBT_ALLOWLIST_MAX (1u << 20)

/*
 * --allowlist FILE: one rule a line; errors as
 * FILE:LINE:COL: what is wrong (naming at most the offending token, never the
 * line). 0 or -errno.
 */
int sbt_allowlist_load(struct sbt_egress_cfg *cfg, const char *path);

#endif
