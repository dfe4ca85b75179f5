// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The closed set of external binaries (ADR-0015). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "extbin.h"

static void test_allowlist(void **state)
{
	static const char *const yes[] = { "podman", "/usr/bin/docker",	  "npm", "make", "node",
					   "ip",     "qemu-system-x86_64" };
	static const char *const no[] = {
		"strace", "/usr/bin/strace", "sh",   "/bin/sh", "bash", "curl", "ltrace", "gdb",
		"",	  "podman-remote",   "makex"
	};

	(void)state;
	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		assert_true(sbt_extbin_allowed(yes[i]));
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		assert_false(sbt_extbin_allowed(no[i]));
	assert_false(sbt_extbin_allowed(NULL));
	for (const char *const *p = sbt_extbin_list(); *p; p++)
		assert_string_not_equal(*p, "strace");
}

/* A host exec of something off the list is refused before any exec happens. */
static void test_exec_refuses(void **state)
{
	char *const strace[] = { "strace", "-f", "true", NULL };
	char *const sh[] = { "/bin/sh", "-c", "true", NULL };
	char *const empty[] = { NULL };

	(void)state;
	assert_int_equal(sbt_exec(SBT_EXEC_HOST, strace), -EPERM);
	assert_int_equal(sbt_exec(SBT_EXEC_HOST, sh), -EPERM);
	assert_int_equal(sbt_exec(SBT_EXEC_HOST, empty), -EINVAL);
	assert_int_equal(sbt_exec(SBT_EXEC_HOST, NULL), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_allowlist),
		cmocka_unit_test(test_exec_refuses),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
