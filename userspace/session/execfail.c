// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Failed execs grouped by process and name (execfail.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "session/execfail.h"

static const char *base_of(const char *path)
{
	const char *b = strrchr(path, '/');

	return b ? b + 1 : path;
}

void sbt_execfail_init(struct sbt_execfail *t, sbt_failgroup_fn report, void *arg)
{
	memset(t, 0, sizeof(*t));
	t->report = report;
	t->arg = arg;
}

static void report(struct sbt_execfail *t, struct sbt_failgroup *g)
{
	if (t->report)
		t->report(t->arg, g);
	g->used = false;
}

static struct sbt_failgroup *group_of(struct sbt_execfail *t, uint32_t slot, uint32_t pid,
				      const void *src)
{
	for (size_t i = 0; i < SBT_EXECFAIL_GROUPS; i++) {
		struct sbt_failgroup *g = &t->g[i];

		if (g->used && g->slot == slot && g->first.pid == pid && g->src == src)
			return g;
	}
	return NULL;
}

/* A free group; when none is, the one quiet longest is reported to make room. */
static struct sbt_failgroup *group_free(struct sbt_execfail *t)
{
	struct sbt_failgroup *oldest = &t->g[0];

	for (size_t i = 0; i < SBT_EXECFAIL_GROUPS; i++) {
		if (!t->g[i].used)
			return &t->g[i];
		if (t->g[i].seen_ms < oldest->seen_ms)
			oldest = &t->g[i];
	}
	report(t, oldest);
	return oldest;
}

static void tried_add(struct sbt_failgroup *g, const char *path)
{
	if (g->ntried >= SBT_EXECFAIL_TRIED) {
		g->more++;
		return;
	}
	snprintf(g->tried[g->ntried], sizeof(g->tried[0]), "%s", path);
	g->tried_p[g->ntried] = g->tried[g->ntried];
	g->ntried++;
}

static void group_start(struct sbt_failgroup *g, const struct sbt_exec_fail *f, void *src,
			uint64_t ts)
{
	memset(g, 0, sizeof(*g));
	g->used = true;
	g->slot = f->slot;
	g->ts = ts;
	g->src = src;
	g->first = *f;
	snprintf(g->path, sizeof(g->path), "%s", f->filename);
	g->first.filename = g->path;
	for (size_t i = 0; i < f->argc && i < SBT_FAIL_ARGS; i++) {
		snprintf(g->args[i], sizeof(g->args[0]), "%s", f->argv[i]);
		g->first.argv[i] = g->args[i];
	}
	g->err = f->err;
}

void sbt_execfail_add(struct sbt_execfail *t, const struct sbt_exec_fail *f, void *src, uint64_t ts,
		      uint64_t now_ms)
{
	struct sbt_failgroup *g = group_of(t, f->slot, f->pid, src);

	/* another name: the attempts at the last one are over */
	if (g && strcmp(base_of(g->path), base_of(f->filename)) != 0) {
		report(t, g);
		g = NULL;
	}
	if (!g) {
		g = group_free(t);
		group_start(g, f, src, ts);
	} else if (g->err != EACCES) {
		g->err = f->err;
	}
	tried_add(g, f->filename);
	g->seen_ms = now_ms;
}

void sbt_execfail_exec(struct sbt_execfail *t, uint32_t slot, uint32_t pid, const void *src,
		       const char *filename)
{
	struct sbt_failgroup *g = group_of(t, slot, pid, src);

	if (!g)
		return;
	if (strcmp(base_of(g->path), base_of(filename)) == 0) {
		t->searched += g->ntried + g->more;
		g->used = false;
		return;
	}
	report(t, g);
}

void sbt_execfail_flush(struct sbt_execfail *t, uint32_t slot, uint64_t idle_before_ms)
{
	for (size_t i = 0; i < SBT_EXECFAIL_GROUPS; i++) {
		struct sbt_failgroup *g = &t->g[i];

		if (g->used && (slot == SBT_EXECFAIL_ALL || g->slot == slot) &&
		    (idle_before_ms == UINT64_MAX || g->seen_ms < idle_before_ms))
			report(t, g);
	}
}
