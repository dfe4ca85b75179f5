// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The npm build kind: package.json's scripts.build, run as `npm run build`,
 * after `npm ci` when the repo has an npm lockfile but no node_modules (a
 * build that requires a dependency fails without them; the repo's .npmrc is
 * npm's own to read, in the sandbox's copy of the repo).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kind.h"

static const char *const npm_inputs[] = {
	"package.json", "package-lock.json", "npm-shrinkwrap.json",
	"yarn.lock",	"pnpm-lock.yaml",    NULL,
};

static int npm_detect(const struct probe_plan_in *in, struct sbt_build_plan *plan, char *err,
		      size_t errlen)
{
	static const char *const npm[] = { "npm", "run", "build" };
	json_object *doc, *scripts, *build;
	bool has_build;
	char *text;
	int rc = probe_package_json(in->root, &doc, &scripts, &text, err, errlen);

	if (rc < 0)
		return -1;
	has_build = rc > 0 && scripts && json_object_object_get_ex(scripts, "build", &build) &&
		    json_object_is_type(build, json_type_string) &&
		    json_object_get_string_len(build) > 0;
	json_object_put(doc);
	free(text);
	if (!has_build) {
		probe_why(plan, "no package.json scripts.build, so ");
		return 0;
	}
	probe_why(plan, "package.json scripts.build (npm run build)");
	{
		static const char *const ci[] = { "npm", "ci", NULL };
		const char *lock = probe_npm_lockfile_name(in->root);

		if (lock && !probe_has_node_modules(in->root)) {
			plan->install = ci;
			probe_why(plan, ", after npm ci (%s, no node_modules)", lock);
		}
	}
	return probe_set_argv(plan, npm, 3, err, errlen) < 0 ? -1 : 1;
}

/* The scripts and the catch-all (kind.c), and the install step when npm ci runs first. */
static int npm_sites(const struct probe_kind *k, struct probe_ctx *p,
		     const struct sbt_build_plan *plan, bool boot_start, bool *has_start, char *err,
		     size_t errlen)
{
	if (probe_kind_sites(k, p, plan, boot_start, has_start, err, errlen))
		return -1;
	if (plan->install &&
	    probe_sites_install(&p->sites, probe_npm_lockfile_name(p->o->repo), plan->install)) {
		probe_err(err, errlen, "out of memory");
		return -1;
	}
	return 0;
}

const struct probe_kind probe_kind_npm = {
	.name = "npm",
	.label = "npm",
	.looked_for = "package.json scripts.build",
	.inputs = npm_inputs,
	.instruction = "script",
	.file = "package.json",
	.detect = npm_detect,
	.sites = npm_sites,
};
