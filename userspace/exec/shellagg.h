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

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "exec/proctab.h"
#include "exec/shell.h"

#define SBT_SHELLAGG_MAX_LOCATIONS    200
#define SBT_SHELLAGG_MAX_UNIDENTIFIED 32

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

/*
 * Count one attempt at a shell that failed (errno `err`: ENOENT where a
 * distroless image has no /bin/sh): a shell the workload would have run.
 * Its own location ("failed"), counted in the total. 0, or -ENOMEM.
 */
int sbt_shellagg_add_failed(struct sbt_shellagg *agg, const struct sbt_shell_class *cls, int err,
			    uint32_t pid, const char *filename, const char *const *argv,
			    size_t argc, const struct sbt_ancestor *anc, size_t nanc);

/*
 * Count one exec of an executable sbtrace cannot place: an ELF written
 * during the session that is not known as a shell. Grouped by filename (the
 * first SBT_SHELLAGG_MAX_UNIDENTIFIED listed, the rest counted). 0, or -ENOMEM.
 */
int sbt_shellagg_unidentified(struct sbt_shellagg *agg, const char *filename, const char *exe_name,
			      uint32_t pid, const char *const *argv, size_t argc);
uint64_t sbt_shellagg_unidentified_count(const struct sbt_shellagg *agg);
/* Of the total, the attempts that failed. */
uint64_t sbt_shellagg_failed_count(const struct sbt_shellagg *agg);
/* argv is `X -c STRING` (or -ec, -euc ...): the way a shell is given a command. */
bool sbt_is_command_string(const char *const *argv, size_t argc);

/* Total invocations counted. */
uint64_t sbt_shellagg_count(const struct sbt_shellagg *agg);
size_t sbt_shellagg_nr_locations(const struct sbt_shellagg *agg);

/*
 * {"count": N, "locations": [{"shell", "kind", "multicall" (string|null),
 *   "filename", "command", "argv": [...], "ancestors": [{"pid", "comm", "source"}],
 *   "failed": null | "ENOENT" (an attempt that failed), "chain": "make>npm>sh",
 *   "count": n, "first_pid": p}], "failed": N (of count),
 *  "unidentified": {"count", "executables": [{"filename", "exe_name", "argv",
 *   "command_string", "count", "first_pid"}], "omitted"},
 *  "omitted": {"locations": n, "count": n}, "grouped_by": "shell,kind,command,chain"}
 * Locations in order of first appearance. New reference; NULL on ENOMEM.
 */
json_object *sbt_shellagg_to_json(const struct sbt_shellagg *agg);
/* Its "unidentified" part alone (the executables that could not be placed). New; NULL on ENOMEM. */
json_object *sbt_shellagg_unidentified_json(const struct sbt_shellagg *agg);

#endif
