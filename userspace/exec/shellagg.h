/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * ShellInvocationObserved aggregation for one sandbox: invocations grouped by
 * (shell, kind, command, ancestor comm chain) — one location per distinct
 * shell command — each with a count and the first sample's argv and
 * ancestors. At most SBT_SHELLAGG_MAX_LOCATIONS are listed; the rest are
 * counted ("omitted"), so the listed counts plus the omitted count are the
 * total.
 */
#ifndef SBT_SHELLAGG_H
#define SBT_SHELLAGG_H

#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "exec/proctab.h"
#include "exec/shell.h"

#define SBT_SHELLAGG_MAX_LOCATIONS 200

struct sbt_shellagg;

struct sbt_shellagg *sbt_shellagg_new(void);
void sbt_shellagg_free(struct sbt_shellagg *agg);

/*
 * Count one shell invocation. argv/argc and ancestors are copied.
 * Returns 0, or -ENOMEM.
 */
int sbt_shellagg_add(struct sbt_shellagg *agg, const struct sbt_shell_class *cls, uint32_t pid,
		     const char *filename, const char *const *argv, size_t argc,
		     const struct sbt_ancestor *anc, size_t nanc);

/* Total invocations counted. */
uint64_t sbt_shellagg_count(const struct sbt_shellagg *agg);
size_t sbt_shellagg_nr_locations(const struct sbt_shellagg *agg);

/*
 * {"count": N, "locations": [{"shell", "kind", "multicall" (string|null),
 *   "filename", "command", "argv": [...], "ancestors": [{"pid", "comm", "source"}],
 *   "chain": "make>npm>sh" , "count": n, "first_pid": p}],
 *  "omitted": {"locations": n, "count": n}, "grouped_by": "shell,kind,command,chain"}
 * Locations in order of first appearance. New reference; NULL on ENOMEM.
 */
json_object *sbt_shellagg_to_json(const struct sbt_shellagg *agg);

#endif
