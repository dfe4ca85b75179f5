// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * package.json and the npm lockfile, the only JSON the probe reads from a repo: the
 * document and its scripts, the lockfile's packages.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/stat.h>

#include "lib/jsondoc.h"
#include "probe_int.h"

int probe_package_json(const char *root, json_object **doc, json_object **scripts, char **text,
		       char *err, size_t errlen)
{
	const char *why;
	size_t len;
	char *buf;
	int rc;

	*doc = *scripts = NULL;
	*text = NULL;
	rc = probe_read_repo_text(root, "package.json", &buf, &len, err, errlen);
	if (rc <= 0)
		return rc;
	*doc = sbt_json_parse_doc(buf, len, &why);
	if (!*doc) {
		probe_err(err, errlen, "package.json: not valid JSON (%s)", why);
		free(buf);
		return -1;
	}
	if (!json_object_is_type(*doc, json_type_object)) {
		probe_err(err, errlen, "package.json: not a JSON object");
		json_object_put(*doc);
		*doc = NULL;
		free(buf);
		return -1;
	}
	if (!json_object_object_get_ex(*doc, "scripts", scripts) ||
	    !json_object_is_type(*scripts, json_type_object))
		*scripts = NULL;
	*text = buf;
	return 1;
}

bool probe_has_node_modules(const char *root)
{
	char path[PATH_MAX];
	struct stat st;

	return (size_t)snprintf(path, sizeof(path), "%s/node_modules", root) < sizeof(path) &&
	       lstat(path, &st) == 0;
}

const char *probe_npm_lockfile_name(const char *root)
{
	static const char *const names[] = { "npm-shrinkwrap.json", "package-lock.json" };
	char err[256];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		int fd, rc = probe_open_repo_file(root, names[i], &fd, err, sizeof(err));

		if (rc > 0) {
			close(fd);
			return names[i];
		}
	}
	return NULL;
}

int probe_npm_lockfile(const char *root, json_object **packages)
{
	const char *name = probe_npm_lockfile_name(root), *why;
	json_object *doc, *pk;
	char err[256], *buf;
	size_t len;

	*packages = NULL;
	if (!name || probe_read_repo_text(root, name, &buf, &len, err, sizeof(err)) <= 0)
		return 0;
	doc = sbt_json_parse_doc(buf, len, &why);
	free(buf);
	if (doc && json_object_object_get_ex(doc, "packages", &pk) &&
	    json_object_is_type(pk, json_type_object))
		*packages = json_object_get(pk);
	json_object_put(doc);
	return 0; /* npm reads the first it finds: v1 or not JSON gives no versions */
}
