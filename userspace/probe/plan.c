// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Which build to run for a repo, its argv and its declared inputs (see probe.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dockerfile/dockerfile.h"
#include "probe_int.h"
#include "lib/sha256.h"

#define STAGE_LIST_MAX 256 /* stage names listed in an error message */

/* The declared inputs, in report order. */
static const char *const input_names[] = {
	"Dockerfile",	  "package.json", "package-lock.json", "npm-shrinkwrap.json", "yarn.lock",
	"pnpm-lock.yaml", "Makefile",	  "makefile",	       "GNUmakefile",
};

static const char *const makefile_names[] = { "Makefile", "makefile", "GNUmakefile" };

/* --- Dockerfile --------------------------------------------------------- */

/* Docker's stage-name rule: a letter, then letters, digits, '.', '_', '-'. */
static bool valid_stage_name(const char *t)
{
	size_t n = strlen(t);

	if (n == 0 || n >= sizeof(((struct sbt_build_plan *)0)->target))
		return false;
	if (!((t[0] >= 'a' && t[0] <= 'z') || (t[0] >= 'A' && t[0] <= 'Z')))
		return false;
	for (size_t i = 1; i < n; i++) {
		char c = t[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '_' || c == '-'))
			return false;
	}
	return true;
}

/* The named stages of a Dockerfile, for an error message. */
static void stage_list(const struct sbt_dockerfile *df, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int i = 0; i < df->nr_stages; i++) {
		const char *n = df->stages[i].name;
		int w;

		if (!n[0])
			continue;
		if (used + strlen(n) + 8 > len) {
			snprintf(buf + used, len - used, "%s...", used ? ", " : "");
			return;
		}
		w = snprintf(buf + used, len - used, "%s%s", used ? ", " : "", n);
		used += (size_t)w;
	}
}

/*
 * 1: plan set (DOCKERFILE: the --target stage, else the final stage: the
 * image a container runs), 0: no Dockerfile or one without FROM (why says
 * so), -1: error (unreadable, unparsable, no such --target).
 */
static int plan_dockerfile(const char *root, const char *repo, const char *target,
			   struct sbt_build_plan *plan, char *err, size_t errlen)
{
	struct sbt_dockerfile df;
	struct sbt_df_error derr;
	char list[STAGE_LIST_MAX];
	const struct sbt_df_stage *st;
	size_t len;
	char *buf;
	int rc, idx;

	rc = probe_read_repo_text(root, "Dockerfile", &buf, &len, err, errlen);
	if (rc < 0)
		return -1;
	if (rc == 0) {
		if (target)
			probe_err(err, errlen, "no Dockerfile in %s (needed for --target '%s')",
				  repo, target);
		return target ? -1 : 0;
	}
	rc = sbt_dockerfile_parse(buf, len, NULL, &df, &derr);
	free(buf);
	if (rc < 0) {
		probe_err(err, errlen, "Dockerfile:%u: %s", derr.line, derr.msg);
		sbt_dockerfile_free(&df);
		return -1;
	}
	idx = target ? sbt_dockerfile_stage_index(&df, target) : df.nr_stages - 1;
	if (idx < 0 && target) {
		stage_list(&df, list, sizeof(list));
		probe_err(err, errlen, "Dockerfile has no stage '%s' (stages: %s)", target,
			  list[0] ? list : "none named");
		sbt_dockerfile_free(&df);
		return -1;
	}
	if (df.nr_stages == 0) {
		snprintf(plan->why, sizeof(plan->why), "a Dockerfile without FROM, so ");
		sbt_dockerfile_free(&df);
		return 0;
	}
	st = &df.stages[idx];
	plan->kind = SBT_BUILD_DOCKERFILE;
	snprintf(plan->target, sizeof(plan->target), "%s", st->name);
	if (target)
		snprintf(plan->why, sizeof(plan->why), "Dockerfile: stage '%s' (--target, line %u)",
			 st->name, st->line);
	else
		snprintf(plan->why, sizeof(plan->why),
			 "Dockerfile: the final stage%s%s%s (line %u), the image a container runs",
			 st->name[0] ? " '" : "", st->name, st->name[0] ? "'" : "", st->line);
	sbt_dockerfile_free(&df);
	return 1;
}

int probe_set_argv(struct sbt_build_plan *plan, const char *const *words, int n, char *err,
		   size_t errlen)
{
	for (int i = 0; i < n; i++) {
		plan->argv[i] = strdup(words[i]);
		if (!plan->argv[i]) {
			probe_err(err, errlen, "out of memory");
			return -1;
		}
		plan->argc = i + 1;
	}
	plan->argv[n] = NULL;
	return 0;
}

/* --- inputs ------------------------------------------------------------- */

static bool has_input(const struct sbt_build_plan *plan, const char *name)
{
	for (int i = 0; i < plan->nr_inputs; i++) {
		if (strcmp(plan->inputs[i].name, name) == 0)
			return true;
	}
	return false;
}

/* Record `name` when it is a regular file in the repo. 0 or -1. */
static int add_input(const char *root, const char *name, struct sbt_build_plan *plan, char *err,
		     size_t errlen)
{
	struct sbt_probe_input *in;
	int fd, rc;

	if (has_input(plan, name))
		return 0;
	rc = probe_open_repo_file(root, name, &fd, err, errlen);
	if (rc <= 0)
		return rc;
	if (strlen(name) >= sizeof(in->name) || plan->nr_inputs >= SBT_PROBE_MAX_INPUTS) {
		probe_err(err, errlen,
			  "%s: cannot record it as an input (path too long or too many)", name);
		close(fd);
		return -1;
	}
	in = &plan->inputs[plan->nr_inputs];
	rc = sbt_sha256_fd(fd, in->sha256);
	close(fd);
	if (rc < 0) {
		probe_err(err, errlen, "%s: %s", name, strerror(-rc));
		return -1;
	}
	memcpy(in->name, name, strlen(name) + 1);
	plan->nr_inputs++;
	return 0;
}

static int add_inputs(const char *root, struct sbt_build_plan *plan, char *err, size_t errlen)
{
	char rel[PATH_MAX];

	for (size_t i = 0; i < sizeof(input_names) / sizeof(input_names[0]); i++) {
		if (add_input(root, input_names[i], plan, err, errlen) < 0)
			return -1;
	}
	/* --cmd ./build.sh: the script is an input too (a program on PATH is not). */
	if (plan->kind == SBT_BUILD_CMD && probe_normalize_rel(plan->argv[0], rel, sizeof(rel)))
		return add_input(root, rel, plan, err, errlen);
	return 0;
}

/* --- the plan ----------------------------------------------------------- */

/* 1: plan set (MAKE: make -B, so outputs already in the tree are rebuilt), 0: none, -1. */
static int plan_make(const char *root, struct sbt_build_plan *plan, char *err, size_t errlen)
{
	static const char *const make[] = { "make", "-B" };

	for (size_t i = 0; i < sizeof(makefile_names) / sizeof(makefile_names[0]); i++) {
		int fd, rc = probe_open_repo_file(root, makefile_names[i], &fd, err, errlen);

		if (rc <= 0) {
			if (rc < 0)
				return -1;
			continue;
		}
		close(fd);
		plan->kind = SBT_BUILD_MAKE;
		snprintf(plan->why + strlen(plan->why), sizeof(plan->why) - strlen(plan->why),
			 "%s (make -B: every target remade)", makefile_names[i]);
		return probe_set_argv(plan, make, 2, err, errlen) < 0 ? -1 : 1;
	}
	return 0;
}

/* The kind of build, in order: --cmd, a Dockerfile, package.json's build script, a Makefile. */
static int plan_kind(const char *root, const char *repo, const char *cmd, const char *target,
		     struct sbt_build_plan *plan, char *err, size_t errlen)
{
	char why[128];
	int rc;

	if (cmd) {
		rc = sbt_split_words(cmd, plan->argv, SBT_PROBE_MAX_ARGS, why, sizeof(why));
		if (rc < 0) {
			probe_err(err, errlen, "bad --cmd: %s", why);
			return -1;
		}
		plan->kind = SBT_BUILD_CMD;
		plan->argc = rc;
		snprintf(plan->why, sizeof(plan->why), "--cmd");
		return 0;
	}
	if (target && !valid_stage_name(target)) {
		probe_err(err, errlen,
			  "bad --target '%.64s': a stage name is a letter, then letters, digits, "
			  "'.', '_' or '-' (at most %zu characters)",
			  target, sizeof(plan->target) - 1);
		return -1;
	}
	rc = plan_dockerfile(root, repo, target, plan, err, errlen);
	if (rc == 0) {
		if (!plan->why[0])
			snprintf(plan->why, sizeof(plan->why), "no Dockerfile, so ");
		rc = probe_plan_npm(root, plan, err, errlen);
	}
	if (rc == 0) {
		snprintf(plan->why + strlen(plan->why), sizeof(plan->why) - strlen(plan->why), "%s",
			 plan->kind ? "" : "no package.json scripts.build, so ");
		rc = plan_make(root, plan, err, errlen);
	}
	if (rc == 0)
		probe_err(err, errlen,
			  "no build found in %s: looked for --cmd, a Dockerfile, package.json "
			  "scripts.build, a Makefile",
			  repo);
	return rc > 0 ? 0 : -1;
}

int sbt_probe_plan(const char *repo, const char *cmd, const char *target,
		   struct sbt_build_plan *plan, char *err, size_t errlen)
{
	struct stat st;
	char *root;

	if (err && errlen)
		err[0] = '\0';
	if (!plan) {
		probe_err(err, errlen, "invalid arguments");
		return -1;
	}
	memset(plan, 0, sizeof(*plan));
	if (!repo || !repo[0]) {
		probe_err(err, errlen, "no repo given");
		return -1;
	}
	if (stat(repo, &st) < 0) {
		probe_err(err, errlen, "%s: %s", repo, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		probe_err(err, errlen, "%s: %s", repo, strerror(ENOTDIR));
		return -1;
	}
	root = realpath(repo, NULL);
	if (!root) {
		probe_err(err, errlen, "%s: %s", repo, strerror(errno));
		return -1;
	}
	if (plan_kind(root, repo, cmd, target, plan, err, errlen) < 0 ||
	    add_inputs(root, plan, err, errlen) < 0) {
		free(root);
		sbt_build_plan_free(plan);
		return -1;
	}
	free(root);
	return 0;
}

void sbt_build_plan_free(struct sbt_build_plan *plan)
{
	if (!plan)
		return;
	for (int i = 0; i <= SBT_PROBE_MAX_ARGS; i++)
		free(plan->argv[i]);
	memset(plan, 0, sizeof(*plan));
}
