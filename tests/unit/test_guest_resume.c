// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for the host's word to a restored guest (sbt_guest_resume_parse,
 * userspace/cmd/guest_agent_cmd.c; sbtrace-guest-agent --resume-fd): the
 * time and the seed exactly, everything else refused.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "cmd/guest_agent_cmd.h"

#define SEED "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1eff"

static int parse(const char *line, struct sbt_guest_resume *r)
{
	return sbt_guest_resume_parse(line, strlen(line), r);
}

static void test_good(void **state)
{
	struct sbt_guest_resume r;

	(void)state;
	assert_int_equal(parse("go 1796348553996075982 " SEED "\n", &r), 0);
	assert_true(r.epoch_ns == 1796348553996075982ull);
	for (int i = 0; i < 31; i++)
		assert_int_equal(r.seed[i], i);
	assert_int_equal(r.seed[31], 0xff);
	assert_int_equal(parse("go 1 " SEED, &r), 0); /* no newline */
	assert_true(r.epoch_ns == 1);
}

static void test_bad(void **state)
{
	static const char *const bad[] = {
		"",
		"go",
		"go  " SEED,
		"go x " SEED,
		"go 12 " SEED "00",
		"go 12 " SEED "\n\n",
		"go 12 000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e",
		"go 12 000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1eFF",
		"go 12 000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1ez0",
		"go -12 " SEED,
		"go 12  " SEED,
		"GO 12 " SEED,
		"go 12\t" SEED,
	};
	struct sbt_guest_resume r;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_not_equal(parse(bad[i], &r), 0);
	/* 20 digits: past what 64-bit nanoseconds hold */
	assert_int_equal(parse("go 18446744073709551616 " SEED, &r), -ERANGE);
	/* a NUL inside is not the end */
	assert_int_not_equal(sbt_guest_resume_parse("go 1\0" SEED, 5 + 64, &r), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good),
		cmocka_unit_test(test_bad),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
