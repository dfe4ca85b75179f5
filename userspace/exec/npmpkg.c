// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* npm's layout: the package a process ran in and its locked version (see npmpkg.h). */
#include <string.h>

#include "exec/npmpkg.h"

#define NPM_DIR "node_modules"

/* The next name of a '/'-joined path at *p: its start, its length in *n; *p moves past it. */
static const char *next_name(const char **p, size_t *n)
{
	const char *s = *p, *e;

	if (!*s)
		return NULL;
	e = strchr(s, '/');
	*n = e ? (size_t)(e - s) : strlen(s);
	*p = e ? e + 1 : s + *n;
	return s;
}

static bool is_npm_dir(const char *s, size_t n)
{
	return n == sizeof(NPM_DIR) - 1 && memcmp(s, NPM_DIR, n) == 0;
}

/* A package's name: `name`, or `@scope/name` (two names). Its end, or NULL. */
static const char *package_name(const char **p)
{
	const char *s;
	size_t n;

	s = next_name(p, &n);
	if (!s || is_npm_dir(s, n) || s[0] == '.')
		return NULL;
	if (s[0] == '@') {
		if (n == 1)
			return NULL;
		s = next_name(p, &n);
		if (!s || is_npm_dir(s, n) || s[0] == '.')
			return NULL;
	}
	return s + n;
}

bool sbt_npm_pkg_of_cwd(const char *cwd, char *path, size_t len, const char **name)
{
	const char *p = cwd, *s, *start = NULL, *end = NULL, *pkg = NULL;
	size_t n;

	/* the first node_modules/ of the tail starts the chain */
	while ((s = next_name(&p, &n)) && !is_npm_dir(s, n))
		;
	if (!s)
		return false;
	start = s;
	for (;;) {
		const char *here = p, *e = package_name(&p);

		if (!e)
			break;
		pkg = here;
		end = e;
		/* another node_modules/ right below: a nested package, else a directory of this one */
		if (!(s = next_name(&p, &n)) || !is_npm_dir(s, n))
			break;
	}
	if (!pkg || (size_t)(end - start) >= len)
		return false;
	memcpy(path, start, (size_t)(end - start));
	path[end - start] = '\0';
	*name = path + (pkg - start);
	return true;
}

/* True when key ends with "/" + path. */
static bool ends_with_path(const char *key, const char *path)
{
	size_t k = strlen(key), n = strlen(path);

	return k > n && key[k - n - 1] == '/' && strcmp(key + k - n, path) == 0;
}

const char *sbt_npm_lock_version(json_object *packages, const char *path, bool unsure)
{
	json_object *entry, *version;

	if (!packages || !json_object_is_type(packages, json_type_object) ||
	    !json_object_object_get_ex(packages, path, &entry) ||
	    !json_object_object_get_ex(entry, "version", &version) ||
	    !json_object_is_type(version, json_type_string))
		return NULL;
	if (unsure) {
		json_object_object_foreach(packages, key, val)
		{
			(void)val;
			if (ends_with_path(key, path))
				return NULL; /* the tail could be that one's end */
		}
	}
	return json_object_get_string(version);
}
