// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The --cmd build kind: the caller's command, split into words (never given to a shell). */
#include <limits.h>
#include <stdio.h>

#include "kind.h"

static int cmd_detect(const struct probe_plan_in *in, struct sbt_build_plan *plan, char *err,
		      size_t errlen)
{
	char why[128];
	int rc;

	if (!in->cmd)
		return 0;
	rc = sbt_split_words(in->cmd, plan->argv, SBT_PROBE_MAX_ARGS, why, sizeof(why));
	if (rc < 0) {
		probe_err(err, errlen, "bad --cmd: %s", why);
		return -1;
	}
	plan->argc = rc;
	probe_why(plan, "--cmd");
	return 1;
}

/* --cmd ./build.sh: the script is an input too (a program on PATH is not). */
static int cmd_inputs(const char *root, struct sbt_build_plan *plan, char *err, size_t errlen)
{
	char rel[PATH_MAX];

	if (!probe_normalize_rel(plan->argv[0], rel, sizeof(rel)))
		return 0;
	return probe_input_file(root, rel, plan, err, errlen);
}

/*
 * make runs with -B, npm's script always runs, a Dockerfile's RUN steps
 * with --no-cache; a --cmd may skip work because its outputs are already
 * there, and then a clean build may run more. The evidence: the ns
 * backend's init says whether the build wrote anything to its workspace
 * (the overlay's upper layer); `node build.js` is one exec and a real
 * build. Where the backend cannot tell (qemu), the count stands in: a build
 * that ran no program besides its own command is taken to have done nothing.
 */
static const char *cmd_doubt(const struct probe_ctx *p, const struct sbt_build_plan *plan,
			     const char **message)
{
	if (p->run.workspace_written > 0)
		return NULL;
	if (p->run.workspace_written == 0) {
		*message = "the build wrote nothing to its workspace: if it skipped work because "
			   "its outputs already exist, a clean build may run shells this one did "
			   "not";
		return "build_did_nothing";
	}
	if (p->sink.execs > 1)
		return NULL;
	*message = "the build ran no program besides its own command (this backend cannot tell "
		   "whether it wrote its output): if it skipped work because its outputs already "
		   "exist, a clean build may run shells this one did not";
	return "build_did_nothing";
}

const struct probe_kind probe_kind_cmd = {
	.name = "cmd",
	.label = "--cmd",
	.looked_for = "--cmd",
	.instruction = "cmd",
	.detect = cmd_detect,
	.more_inputs = cmd_inputs,
	.sites = probe_kind_sites,
	.doubt = cmd_doubt,
};
