// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for the distroless migration (userspace/migrate/migrate.c): the
 * new final stage for each kind of start (npm start with a simple script,
 * node in shell form, a shell-form HEALTHCHECK, a final-stage RUN left in the
 * build stage), what it will not rewrite (a script with &&, an ENTRYPOINT
 * shell script, no WORKDIR) named with its line, and the patch.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "migrate/migrate.h"

struct scripts {
	const char *start, *prestart, *serve;
};

static const char *script(void *arg, const char *name)
{
	const struct scripts *s = arg;

	if (strcmp(name, "start") == 0)
		return s->start;
	if (strcmp(name, "prestart") == 0)
		return s->prestart;
	if (strcmp(name, "serve") == 0)
		return s->serve;
	return NULL;
}

static bool shell_script(void *arg, const char *path)
{
	(void)arg;
	return strstr(path, ".sh") != NULL;
}

/* Migrate `text` (its final stage) with package.json's scripts s into m. */
static void migrate(const char *text, struct scripts *s, struct sbt_migration *m)
{
	struct sbt_dockerfile df;
	struct sbt_df_error err;
	struct sbt_migrate_in in = { .df = &df,
				     .text = text,
				     .len = strlen(text),
				     .file = "Dockerfile",
				     .script = script,
				     .shell_script = shell_script,
				     .arg = s };

	assert_int_equal(sbt_dockerfile_parse(text, strlen(text), NULL, &df, &err), 0);
	in.target = df.nr_stages - 1;
	assert_int_equal(sbt_migrate(&in, m), 0);
	sbt_dockerfile_free(&df);
}

/* The text after the original: the new stage (the Dockerfile must start with the original). */
static const char *new_stage(const struct sbt_migration *m, const char *orig)
{
	assert_memory_equal(m->dockerfile, orig, strlen(orig));
	return m->dockerfile + strlen(orig);
}

static void test_npm_start_simple(void **state)
{
	static const char df[] = "FROM node:20\nWORKDIR /app\nCOPY . .\nENV PORT=8080\n"
				 "EXPOSE 8080\nCMD npm start\n";
	struct scripts s = { .start = "node server.js --port 8080" };
	struct sbt_migration m;
	const char *st;

	(void)state;
	migrate(df, &s, &m);
	assert_int_equal(m.nr_unconverted, 0);
	assert_string_equal(m.runtime, "nodejs");
	assert_string_equal(m.base, SBT_MIGRATE_BASE_NODEJS);
	assert_string_equal(m.start, "CMD [\"server.js\", \"--port\", \"8080\"]");
	st = new_stage(&m, df);
	assert_non_null(strstr(st, "FROM " SBT_MIGRATE_BASE_NODEJS " AS sbtrace-distroless\n"
				   "ENV PORT=8080\nCOPY --from=0 /app /app\nWORKDIR /app\n"
				   "EXPOSE 8080\nUSER nonroot\n"
				   "CMD [\"server.js\", \"--port\", \"8080\"]\n"));
	/* the patch: the last 3 lines as context, then the new stage, all added */
	assert_non_null(strstr(m.patch, "--- a/Dockerfile\n+++ b/Dockerfile\n@@ -4,3 +4,"));
	assert_non_null(strstr(m.patch, "\n CMD npm start\n+\n+# sbtrace probe --migrate"));
	assert_non_null(strstr(m.patch, "\n+USER nonroot\n"));
	sbt_migration_free(&m);
}

static void test_shell_form_cmd_and_healthcheck(void **state)
{
	static const char df[] = "FROM node:20-slim AS app\nWORKDIR /srv\nUSER node\n"
				 "HEALTHCHECK --interval=5s CMD node health.js\n"
				 "RUN npm ci\nCMD node server.js";
	struct scripts s = { 0 };
	struct sbt_migration m;
	const char *st;

	(void)state;
	migrate(df, &s, &m);
	assert_int_equal(m.nr_unconverted, 0);
	st = new_stage(&m, df);
	assert_non_null(strstr(st, "COPY --from=app /srv /srv\nWORKDIR /srv\nUSER node\n"
				   "HEALTHCHECK --interval=5s CMD [\"/nodejs/bin/node\", "
				   "\"health.js\"]\nCMD [\"server.js\"]\n"));
	/* no newline at the end of the original: its last line changes in the patch */
	assert_non_null(strstr(m.patch, "-CMD node server.js\n\\ No newline at end of file\n"
					"+CMD node server.js\n"));
	sbt_migration_free(&m);
}

static void test_unconverted(void **state)
{
	struct scripts s = { .start = "node a.js && node b.js" };
	struct sbt_migration m;

	(void)state;
	migrate("FROM node:20\nWORKDIR /app\nCMD [\"npm\", \"start\"]\n", &s, &m);
	assert_int_equal(m.nr_unconverted, 1);
	assert_int_equal(m.unconverted[0].line, 3);
	assert_string_equal(m.unconverted[0].what, "scripts.start: node a.js && node b.js");
	assert_string_equal(m.start, "");
	assert_non_null(strstr(m.dockerfile, "# sbtrace: the start command is not converted"));
	sbt_migration_free(&m);

	migrate("FROM node:20\nWORKDIR /app\nCOPY entry.sh /\nENTRYPOINT [\"/entry.sh\"]\n"
		"CMD [\"node\", \"s.js\"]\n",
		&s, &m);
	assert_int_equal(m.nr_unconverted, 1);
	assert_int_equal(m.unconverted[0].line, 4);
	assert_non_null(strstr(m.unconverted[0].why, "shell script"));
	sbt_migration_free(&m);

	migrate("FROM node:20\nCMD [\"node\", \"s.js\"]\n", &s, &m);
	assert_int_equal(m.nr_unconverted, 1);
	assert_string_equal(m.unconverted[0].what, "WORKDIR");
	sbt_migration_free(&m);

	s.prestart = "node migrate.js";
	s.start = "node s.js";
	migrate("FROM node:20\nWORKDIR /a\nCMD npm start\n", &s, &m);
	assert_int_equal(m.nr_unconverted, 1);
	assert_string_equal(m.unconverted[0].what, "scripts.prestart");
	sbt_migration_free(&m);

	migrate("FROM golang:1.22\nWORKDIR /a\nCMD [\"./app\"]\n", &s, &m);
	assert_int_equal(m.nr_unconverted, 1);
	assert_non_null(strstr(m.unconverted[0].why, "--distroless-base"));
	sbt_migration_free(&m);
}

/* npm run NAME follows the script; a program that is not node keeps its own ENTRYPOINT. */
static void test_npm_run_and_entrypoint(void **state)
{
	struct scripts s = { .start = "npm run serve", .serve = "node dist/server.js" };
	struct sbt_migration m;

	(void)state;
	migrate("FROM node:20 AS b\nFROM b\nWORKDIR /w\nCMD npm start\n", &s, &m);
	assert_int_equal(m.nr_unconverted, 0);
	assert_string_equal(m.start, "CMD [\"dist/server.js\"]");
	assert_non_null(strstr(m.dockerfile, "COPY --from=1 /w /w\n"));
	sbt_migration_free(&m);

	migrate("FROM node:20\nWORKDIR /w\nENTRYPOINT [\"/w/bin/app\"]\nCMD [\"--x\"]\n", &s, &m);
	assert_int_equal(m.nr_unconverted, 0);
	assert_string_equal(m.start, "ENTRYPOINT [\"/w/bin/app\", \"--x\"]\nCMD []");
	sbt_migration_free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_npm_start_simple),
		cmocka_unit_test(test_shell_form_cmd_and_healthcheck),
		cmocka_unit_test(test_unconverted),
		cmocka_unit_test(test_npm_run_and_entrypoint),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
