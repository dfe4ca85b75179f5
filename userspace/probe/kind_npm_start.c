// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The npm start-only kind: a package.json with a start script and no build
 * script (else the npm kind), nor a Makefile (else make). Its boot is the
 * whole answer, `npm start` (which runs the script through sh -c): its
 * dependencies installed first, as the container's image would have them
 * (npm ci with a lockfile, npm install without one; nothing when there are
 * none, or node_modules is there), then the boot.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kind.h"

static const char *const npm_start_inputs[] = {
	"package.json", "package-lock.json", "npm-shrinkwrap.json",
	"yarn.lock",	"pnpm-lock.yaml",    NULL,
};

/* scripts.NAME, a non-empty string. */
static bool has_script(json_object *scripts, const char *name)
{
	json_object *s;

	return scripts && json_object_object_get_ex(scripts, name, &s) &&
	       json_object_is_type(s, json_type_string) && json_object_get_string_len(s) > 0;
}

/* package.json names dependencies (of a kind npm installs by default). */
static bool has_deps(json_object *doc)
{
	static const char *const keys[] = { "dependencies", "devDependencies",
					    "optionalDependencies", NULL };
	json_object *d;

	for (int i = 0; doc && keys[i]; i++)
		if (json_object_object_get_ex(doc, keys[i], &d) &&
		    json_object_is_type(d, json_type_object) && json_object_object_length(d) > 0)
			return true;
	return false;
}

static int npm_start_detect(const struct probe_plan_in *in, struct sbt_build_plan *plan,
			    char *err, size_t errlen)
{
	static const char *const ci[] = { "npm", "ci" }, *const install[] = { "npm", "install" },
				 *const none[] = { "true" };
	json_object *doc, *scripts;
	const char *lock;
	bool start, deps;
	char *text;
	int rc = probe_package_json(in->root, &doc, &scripts, &text, err, errlen);

	if (rc < 0)
		return -1;
	start = rc > 0 && has_script(scripts, "start") && !has_script(scripts, "build");
	deps = rc > 0 && has_deps(doc);
	json_object_put(doc);
	free(text);
	if (!start) {
		probe_why(plan, ", nor scripts.start");
		return 0;
	}
	probe_why(plan, "package.json scripts.start and no build: the boot (npm start) is the "
			"answer; ");
	if (!deps || probe_has_node_modules(in->root)) {
		probe_why(plan, deps ? "node_modules is there, nothing to install"
				     : "no dependencies, nothing to install");
		return probe_set_argv(plan, none, 1, err, errlen) < 0 ? -1 : 1;
	}
	lock = probe_npm_lockfile_name(in->root);
	if (lock)
		probe_why(plan, "npm ci first (%s)", lock);
	else
		probe_why(plan, "npm install first (no lockfile)");
	return probe_set_argv(plan, lock ? ci : install, 2, err, errlen) < 0 ? -1 : 1;
}

const struct probe_kind probe_kind_npm_start = {
	.name = "npm_start",
	.label = "npm start",
	.looked_for = "package.json scripts.start",
	.inputs = npm_start_inputs,
	.instruction = "script",
	.file = "package.json",
	.detect = npm_start_detect,
	.sites = probe_kind_sites,
};
