/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* One whole JSON document from untrusted bytes (package.json, a cache entry). */
#ifndef SBT_JSONDOC_H
#define SBT_JSONDOC_H

#include <stddef.h>

#include <json-c/json.h>

/*
 * Parse exactly one JSON value filling all of buf (trailing blanks allowed;
 * no NUL byte). Returns it (a new reference), or NULL with *why saying what
 * is wrong.
 */
json_object *sbt_json_parse_doc(const char *buf, size_t len, const char **why);

#endif
