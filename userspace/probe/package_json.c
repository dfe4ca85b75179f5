// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * package.json: the npm build (scripts.build) and the scripts as sites. The
 * only JSON the probe reads from a repo.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/jsondoc.h"
#include "probe_int.h"

/* 1: plan set (NPM), 0: no package.json or no scripts.build, -1: error. */
int probe_plan_npm(const char *root, struct sbt_build_plan *plan, char *err, size_t errlen)
{
	static const char *const npm[] = { "npm", "run", "build" };
	json_object *obj, *scripts, *build;
	const char *why;
	bool has_build;
	size_t len;
	char *buf;
	int rc;

	rc = probe_read_repo_text(root, "package.json", &buf, &len, err, errlen);
	if (rc <= 0)
		return rc;
	obj = sbt_json_parse_doc(buf, len, &why);
	free(buf);
	if (!obj) {
		probe_err(err, errlen, "package.json: not valid JSON (%s)", why);
		return -1;
	}
	if (!json_object_is_type(obj, json_type_object)) {
		probe_err(err, errlen, "package.json: not a JSON object");
		json_object_put(obj);
		return -1;
	}
	has_build = json_object_object_get_ex(obj, "scripts", &scripts) &&
		    json_object_is_type(scripts, json_type_object) &&
		    json_object_object_get_ex(scripts, "build", &build) &&
		    json_object_is_type(build, json_type_string) &&
		    json_object_get_string_len(build) > 0;
	json_object_put(obj);
	if (!has_build)
		return 0;
	plan->kind = SBT_BUILD_NPM;
	snprintf(plan->why + strlen(plan->why), sizeof(plan->why) - strlen(plan->why),
		 "package.json scripts.build (npm run build)");
	return probe_set_argv(plan, npm, 3, err, errlen) < 0 ? -1 : 1;
}

/* package.json's scripts as sites (the start script the boot's when boot_start). 0 or -ENOMEM. */
int probe_npm_sites(const char *root, struct probe_sites *ss, bool boot_start, bool *has_start)
{
	json_object *obj, *scripts, *start;
	const char *why;
	char *buf, err[256];
	size_t len;
	int ret = 0;

	*has_start = false;
	if (probe_read_repo_text(root, "package.json", &buf, &len, err, sizeof(err)) <= 0)
		return 0;
	obj = sbt_json_parse_doc(buf, len, &why);
	if (obj && json_object_object_get_ex(obj, "scripts", &scripts) &&
	    json_object_is_type(scripts, json_type_object)) {
		*has_start = json_object_object_get_ex(scripts, "start", &start) &&
			     json_object_is_type(start, json_type_string);
		ret = probe_sites_npm(ss, scripts, buf, boot_start && *has_start);
	}
	json_object_put(obj);
	free(buf);
	return ret;
}
