/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Failed execs, grouped before they are reported. A PATH search fails on
 * every directory before the one that holds the program (a PATH lookup of "sh"
 * tries /usr/local/sbin/sh, /usr/local/bin/sh ... /usr/bin/sh): those
 * attempts are no failure once the process execs that name. So a process's
 * failed attempts at one name wait here, and go one of two ways:
 *
 *  - the process execs a file of that name: they were its PATH search,
 *    dropped (counted in `searched`);
 *  - anything else (it execs another name, tries another name, stays
 *    quiet for SBT_EXECFAIL_IDLE_MS, its sandbox ends): one group is
 *    reported, the first attempt with every path tried.
 *
 * Pure logic, the time passed in (ms, any monotonic clock): unit-tested.
 */
#ifndef SBT_EXECFAIL_H
#define SBT_EXECFAIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "event/decode.h"

#define SBT_EXECFAIL_GROUPS  64 /* processes with attempts waiting; the oldest goes first */
#define SBT_EXECFAIL_TRIED   8	/* paths listed per group (the rest counted) */
#define SBT_EXECFAIL_IDLE_MS 100
#define SBT_EXECFAIL_ALL     UINT32_MAX

struct sbt_failgroup {
	bool used;
	uint32_t slot;
	uint64_t ts;		    /* the first attempt's epoch ns */
	uint64_t seen_ms;	    /* when the last attempt arrived */
	void *src;		    /* the caller's: where the records came from */
	struct sbt_exec_fail first; /* its pointers into the buffers below */
	char path[SBT_PATH_MAX];
	char args[SBT_FAIL_ARGS][SBT_FAIL_ARG_MAX];
	char tried[SBT_EXECFAIL_TRIED][SBT_PATH_MAX];
	const char *tried_p[SBT_EXECFAIL_TRIED];
	size_t ntried, more; /* listed; tried beyond the list */
	int err;	     /* what execvp would return: EACCES if any got it, else the last */
};

/* Called with each group that is reported; the group is freed after. */
typedef void (*sbt_failgroup_fn)(void *arg, const struct sbt_failgroup *g);

struct sbt_execfail {
	struct sbt_failgroup g[SBT_EXECFAIL_GROUPS];
	uint64_t searched; /* attempts dropped: a PATH search that found its program */
	sbt_failgroup_fn report;
	void *arg;
};

void sbt_execfail_init(struct sbt_execfail *t, sbt_failgroup_fn report, void *arg);
/* A failed attempt of `src` (epoch ns `ts`), arrived at `now_ms`. */
void sbt_execfail_add(struct sbt_execfail *t, const struct sbt_exec_fail *f, void *src, uint64_t ts,
		      uint64_t now_ms);
/* Process `pid` of `slot` (from `src`) exec'd `filename`. */
void sbt_execfail_exec(struct sbt_execfail *t, uint32_t slot, uint32_t pid, const void *src,
		       const char *filename);
/* Report the groups of `slot` (SBT_EXECFAIL_ALL: of all) quiet since before `idle_before_ms`
 * (UINT64_MAX: all of them). */
void sbt_execfail_flush(struct sbt_execfail *t, uint32_t slot, uint64_t idle_before_ms);

#endif
