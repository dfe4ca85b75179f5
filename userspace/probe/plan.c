// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Which build to run for a repo, its argv and its declared inputs (see
 * probe.h): the table of build kinds (kind.h), asked in SBT_BUILD_KINDS'
 * order.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "kind.h"

/* Each row's kind_<name>.c defines probe_kind_<name>. */
#define KIND_EXTERN(id, name) extern const struct probe_kind probe_kind_##name;
SBT_BUILD_KINDS(KIND_EXTERN)
#undef KIND_EXTERN

#define KIND_ROW(id, name) [SBT_BUILD_##id] = &probe_kind_##name,
static const struct probe_kind *const kinds[SBT_BUILD__MAX] = { SBT_BUILD_KINDS(KIND_ROW) };
#undef KIND_ROW

const struct probe_kind *probe_kind_of(enum sbt_build_kind k)
{
	return k > SBT_BUILD_NONE && k < SBT_BUILD__MAX ? kinds[k] : NULL;
}

/* The first kind whose detect says yes; else what was looked for. 0 or -1. */
static int plan_kind(const struct probe_plan_in *in, struct sbt_build_plan *plan, char *err,
		     size_t errlen)
{
	char looked[256] = "";

	for (int k = SBT_BUILD_NONE + 1; k < SBT_BUILD__MAX; k++) {
		int rc = kinds[k]->detect(in, plan, err, errlen);
		size_t used = strlen(looked);

		if (rc > 0)
			plan->kind = (enum sbt_build_kind)k;
		if (rc)
			return rc > 0 ? 0 : -1;
		snprintf(looked + used, sizeof(looked) - used, "%s%s", used ? ", " : "",
			 kinds[k]->looked_for);
	}
	probe_err(err, errlen, "no build found in %s: looked for %s", in->repo, looked);
	return -1;
}

/* Every kind's declared inputs that exist, in table order, then the chosen kind's own. */
static int add_inputs(const char *root, struct sbt_build_plan *plan, char *err, size_t errlen)
{
	const struct probe_kind *chosen = kinds[plan->kind];

	for (int k = SBT_BUILD_NONE + 1; k < SBT_BUILD__MAX; k++)
		for (const char *const *n = kinds[k]->inputs; n && *n; n++)
			if (probe_input_file(root, *n, plan, err, errlen) < 0)
				return -1;
	return chosen->more_inputs ? chosen->more_inputs(root, plan, err, errlen) : 0;
}

int sbt_probe_plan(const char *repo, const char *cmd, const char *target, const char *file,
		   struct sbt_build_plan *plan, char *err, size_t errlen)
{
	struct probe_plan_in in = { .repo = repo, .cmd = cmd, .target = target, .file = file };
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
	if (file && (cmd || strlen(file) >= sizeof(plan->dockerfile) || !file[0])) {
		probe_err(err, errlen,
			  cmd ? "--file names a Dockerfile: not with --cmd"
			      : "--file: an empty name or one too long");
		return -1;
	}
	snprintf(plan->dockerfile, sizeof(plan->dockerfile), "%s", file ? file : "Dockerfile");
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
	in.root = root;
	if (plan_kind(&in, plan, err, errlen) < 0 || add_inputs(root, plan, err, errlen) < 0) {
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
