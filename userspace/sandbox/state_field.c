// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * What the state file's parts share (state.c, and each backend's own fields:
 * qemu.c): the state directory's check and the checked reading of one field,
 * with the message that names the file and the field.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <json-c/json.h>

#include "internal.h"

/* The state dir must be a directory owned by us (or root) that nobody else can write. */
int sbx_check_state_dir(const char *dir, bool create)
{
	struct stat st;

	if (create && mkdir(dir, 0700) && errno != EEXIST)
		return -errno;
	if (stat(dir, &st))
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	if ((st.st_uid != geteuid() && st.st_uid != 0) || (st.st_mode & (S_IWGRP | S_IWOTH)))
		return -EPERM;
	return 0;
}

int sbx_state_bad(const struct sbx_state_ctx *v, int ret, const char *what, const char *key)
{
	return sbx_seterr(v->err, v->errlen, ret, "state file %s: %s%s%s", v->path,
			  key ? "field '" : "", key ? key : "", what);
}

static int get_field(struct json_object *root, const char *key, json_type type,
		     struct json_object **out, const struct sbx_state_ctx *v)
{
	if (!json_object_object_get_ex(root, key, out))
		return sbx_state_bad(v, -EINVAL, "' is missing", key);
	if (!json_object_is_type(*out, type))
		return sbx_state_bad(
			v, -EINVAL,
			type == json_type_int ? "' must be an integer" : "' must be a string", key);
	return 0;
}

int sbx_state_str(struct json_object *root, const char *key, char *out, size_t len,
		  const struct sbx_state_ctx *v)
{
	struct json_object *f;
	int ret = get_field(root, key, json_type_string, &f, v);
	const char *s;
	int n;

	if (ret)
		return ret;
	s = json_object_get_string(f);
	n = json_object_get_string_len(f);
	if (n <= 0 || (size_t)n >= len || strlen(s) != (size_t)n)
		return sbx_state_bad(v, -EINVAL, "' is empty, too long or contains NUL", key);
	memcpy(out, s, (size_t)n + 1);
	return 0;
}

int sbx_state_int(struct json_object *root, const char *key, int64_t min, int64_t max, int64_t *out,
		  const struct sbx_state_ctx *v)
{
	struct json_object *f;
	int ret = get_field(root, key, json_type_int, &f, v);

	if (ret)
		return ret;
	errno = 0;
	*out = json_object_get_int64(f);
	if (errno || *out < min || *out > max || *out == INT64_MAX)
		return sbx_state_bad(v, -ERANGE, "' is out of range", key);
	return 0;
}

/* Optional string field: 1 when absent, 0 when copied (empty allowed), or -errno. */
int sbx_state_opt_str(struct json_object *root, const char *key, char *out, size_t len,
		      const struct sbx_state_ctx *v)
{
	struct json_object *f;
	const char *s;
	int n;

	if (!json_object_object_get_ex(root, key, &f))
		return 1;
	if (!json_object_is_type(f, json_type_string))
		return sbx_state_bad(v, -EINVAL, "' must be a string", key);
	s = json_object_get_string(f);
	n = json_object_get_string_len(f);
	if (n < 0 || (size_t)n >= len || strlen(s) != (size_t)n)
		return sbx_state_bad(v, -EINVAL, "' is too long or contains NUL", key);
	memcpy(out, s, (size_t)n + 1);
	return 0;
}
