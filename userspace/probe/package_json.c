// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* package.json, the only JSON the probe reads from a repo: its document and its scripts. */
#include <stdlib.h>

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
