/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Process table: the ancestor chain of a sandboxed process, from earlier exec
 * events, with a lookup callback (normally /proc) for processes that started
 * before attach or forked without exec. Pure logic: no libbpf.
 */
#ifndef SBT_PROCTAB_H
#define SBT_PROCTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sbtrace.h"

#define SBT_MAX_ANCESTORS 16
/* At this many entries the table is cleared, not trimmed: lookups fall back to /proc. */
#define SBT_PROCTAB_MAX_ENTRIES (1u << 16)

enum sbt_ancestor_source {
	SBT_ANC_EXEC = 1, /* from an exec event seen by the trace */
	SBT_ANC_PROC,	  /* from the lookup callback (/proc) */
	SBT_ANC_EVENT,	  /* only the parent comm carried by the child's event */
};

struct sbt_ancestor {
	uint32_t pid;
	char comm[SBT_COMM_LEN];
	enum sbt_ancestor_source source;
};

struct sbt_proc_info {
	uint32_t pid;
	uint32_t ppid;
	char comm[SBT_COMM_LEN];
	bool in_sandbox; /* the process's cgroup is the sandbox or below it */
};

/* Fill `out` for `pid`; false when the process is unknown (e.g. exited). */
typedef bool (*sbt_proc_lookup_fn)(uint32_t pid, struct sbt_proc_info *out, void *ctx);

/*
 * The /proc implementation of sbt_proc_lookup_fn. ctx is a
 * struct sbt_procfs_ctx: reads <root>/<pid>/stat and <root>/<pid>/cgroup;
 * in_sandbox is true when the "0::" cgroup path equals one of `sandboxes`
 * (paths relative to the cgroup v2 root, e.g. "/sbtrace/x") or lies below it.
 */
struct sbt_procfs_ctx {
	const char *root; /* "/proc", or a fake tree in tests */
	const char *const *targets;
	size_t nr_targets;
};
bool sbt_proc_lookup_procfs(uint32_t pid, struct sbt_proc_info *out, void *ctx);

struct sbt_proctab;

struct sbt_proctab *sbt_proctab_new(sbt_proc_lookup_fn lookup, void *ctx);
void sbt_proctab_free(struct sbt_proctab *tab);

/* Record an exec: `pid` now runs `comm`, its parent is `ppid`. */
void sbt_proctab_exec(struct sbt_proctab *tab, uint32_t pid, uint32_t ppid, const char *comm);

/*
 * Record a process found otherwise (a /proc snapshot at attach): like an exec,
 * but reported with source SBT_ANC_PROC.
 */
void sbt_proctab_seen(struct sbt_proctab *tab, uint32_t pid, uint32_t ppid, const char *comm);

/*
 * A process's current name, as a child's exec event reports its parent's:
 * updates a known entry (programs rename themselves: npm's node is
 * "npm run build"); unknown pids are left alone.
 */
void sbt_proctab_rename(struct sbt_proctab *tab, uint32_t pid, const char *comm);

/* Forget a process (exit). */
void sbt_proctab_exit(struct sbt_proctab *tab, uint32_t pid);

/*
 * The ancestors of a process whose parent is `ppid`, nearest first, while
 * they are inside the sandbox: table entries first, then the lookup
 * callback (whose answers are remembered in the table); when nothing is known of the immediate parent, one SBT_ANC_EVENT
 * entry carrying `parent_comm`. Stops at pid 0/1, a cycle, or `max`.
 * Returns the number of entries written.
 */
size_t sbt_proctab_ancestors(struct sbt_proctab *tab, uint32_t ppid, const char *parent_comm,
			     struct sbt_ancestor *out, size_t max);

#endif
