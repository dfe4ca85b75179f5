// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for npm's layout (userspace/exec/npmpkg.c): a cwd tail's package, its version. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "exec/npmpkg.h"

/* The cwd tail -> the package's lockfile path and name. */
static void test_pkg_of_cwd(void **state)
{
	static const struct {
		const char *cwd, *path, *name; /* path NULL: no package */
	} cases[] = {
		{ "app/node_modules/dep", "node_modules/dep", "dep" },
		{ "node_modules/dep", "node_modules/dep", "dep" },
		{ "app/node_modules/@scope/pkg", "node_modules/@scope/pkg", "@scope/pkg" },
		{ "node_modules/a/node_modules/b", "node_modules/a/node_modules/b", "b" },
		{ "node_modules/@s/a/node_modules/@t/b", "node_modules/@s/a/node_modules/@t/b",
		  "@t/b" },
		/* a directory of the package is still the package's */
		{ "app/node_modules/dep/lib/bin", "node_modules/dep", "dep" },
		{ "node_modules/a/lib/node_modules", "node_modules/a", "a" },
		{ "app/src", NULL, NULL },
		{ "", NULL, NULL },
		{ "app/node_modules", NULL, NULL },	   /* npm's own directory: no package */
		{ "app/node_modules/@scope", NULL, NULL }, /* a scope, no name */
		{ "app/node_modules/.bin", NULL, NULL },
		{ "app/node_modules/node_modules", NULL, NULL },
	};
	char path[256];
	const char *name;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		bool found = sbt_npm_pkg_of_cwd(cases[i].cwd, path, sizeof(path), &name);

		assert_int_equal(found, cases[i].path != NULL);
		if (!found)
			continue;
		assert_string_equal(path, cases[i].path);
		assert_string_equal(name, cases[i].name);
	}
	/* a path that does not fit */
	assert_false(sbt_npm_pkg_of_cwd("node_modules/dep", path, 16, &name));
	assert_true(sbt_npm_pkg_of_cwd("node_modules/dep", path, 17, &name));
}

static const char lock[] = "{\"\": {\"name\": \"app\", \"version\": \"0.1.0\"},"
			   " \"node_modules/dep\": {\"version\": \"1.0.0\"},"
			   " \"node_modules/@scope/pkg\": {\"version\": \"2.1.0\"},"
			   " \"node_modules/a\": {\"version\": \"3.0.0\"},"
			   " \"node_modules/a/node_modules/dep\": {\"version\": \"0.9.1\"},"
			   " \"node_modules/nover\": {\"resolved\": \"file:nover.tgz\"}}";

/* The version by lockfile path: scoped and nested; a cut tail's path only when unique. */
static void test_lock_version(void **state)
{
	json_object *pk = json_tokener_parse(lock);

	(void)state;
	assert_non_null(pk);
	assert_string_equal(sbt_npm_lock_version(pk, "node_modules/dep", false), "1.0.0");
	assert_string_equal(sbt_npm_lock_version(pk, "node_modules/@scope/pkg", false), "2.1.0");
	assert_string_equal(sbt_npm_lock_version(pk, "node_modules/a/node_modules/dep", false),
			    "0.9.1");
	assert_null(sbt_npm_lock_version(pk, "node_modules/missing", false));
	assert_null(sbt_npm_lock_version(pk, "node_modules/nover", false));
	/* cut: node_modules/dep may be the end of node_modules/a/node_modules/dep */
	assert_null(sbt_npm_lock_version(pk, "node_modules/dep", true));
	assert_string_equal(sbt_npm_lock_version(pk, "node_modules/@scope/pkg", true), "2.1.0");
	assert_null(sbt_npm_lock_version(NULL, "node_modules/dep", false));
	json_object_put(pk);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pkg_of_cwd),
		cmocka_unit_test(test_lock_version),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
