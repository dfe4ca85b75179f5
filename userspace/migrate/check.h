/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* sbtrace probe --migrate: the migration of the probed Dockerfile and its check (check.c). */
#ifndef SBT_MIGRATE_CHECK_H
#define SBT_MIGRATE_CHECK_H

#include <stdbool.h>

#include <json-c/json.h>

#include "probe/probe_int.h"

/*
 * The report's `migration` for the probe p of plan (a Dockerfile build):
 * the patch, the new base, what changed and what could not be rewritten,
 * and the check's answer (*verified; *shell_failed when the app tried a
 * shell the new base has not). NULL when the Dockerfile cannot be read
 * again or memory ran out.
 */
json_object *probe_migrate(const struct probe_ctx *p, const struct sbt_build_plan *plan,
			   bool *verified, bool *shell_failed);

#endif
