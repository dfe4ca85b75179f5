// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The npm build kind: package.json's scripts.build, run as `npm run build`. */
#include <stdlib.h>

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
	return probe_set_argv(plan, npm, 3, err, errlen) < 0 ? -1 : 1;
}

const struct probe_kind probe_kind_npm = {
	.name = "npm",
	.label = "npm",
	.looked_for = "package.json scripts.build",
	.inputs = npm_inputs,
	.instruction = "script",
	.file = "package.json",
	.detect = npm_detect,
	.sites = probe_kind_sites,
};
