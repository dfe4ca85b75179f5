// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdint.h>
#include <string.h>

#include "lib/jsondoc.h"

/*
 * Parse exactly one JSON value filling all of buf (trailing blanks allowed).
 * Returns it, or NULL with *why set.
 */
json_object *sbt_json_parse_doc(const char *buf, size_t len, const char **why)
{
	json_tokener *tok;
	json_object *obj;
	enum json_tokener_error jerr;
	size_t end;

	*why = NULL;
	if (memchr(buf, '\0', len)) {
		*why = "contains a NUL byte";
		return NULL;
	}
	if (len > INT32_MAX) {
		*why = "too large";
		return NULL;
	}
	tok = json_tokener_new();
	if (!tok) {
		*why = "out of memory";
		return NULL;
	}
	obj = json_tokener_parse_ex(tok, buf, (int)len);
	jerr = json_tokener_get_error(tok);
	if (!obj || jerr != json_tokener_success) {
		*why = jerr == json_tokener_continue || jerr == json_tokener_success
			       ? "empty or truncated"
			       : json_tokener_error_desc(jerr);
		json_object_put(obj);
		json_tokener_free(tok);
		return NULL;
	}
	end = json_tokener_get_parse_end(tok);
	json_tokener_free(tok);
	for (; end < len; end++) {
		if (!strchr(" \t\n\r\v\f", buf[end]) || !buf[end]) {
			*why = "trailing data after the JSON value";
			json_object_put(obj);
			return NULL;
		}
	}
	return obj;
}
