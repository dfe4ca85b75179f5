// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target: the distroless migration (userspace/migrate/migrate.c),
 * which rewrites a repo's Dockerfile and follows its package.json scripts
 * (both untrusted).
 *
 * Input: up to the first NUL a Dockerfile (its final stage migrated), up to
 * the second scripts.start, the rest scripts.serve (both absent when empty).
 *
 * Invariants: sbt_migrate succeeds; the migrated Dockerfile starts with the
 * original; when nothing is unconverted it parses with one more stage, the
 * last named sbtrace-distroless, and a start; the patch starts with its
 * headers; every note's line is within the file.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "migrate/migrate.h"

struct scripts {
	const char *start, *serve;
};

static const char *script(void *arg, const char *name)
{
	const struct scripts *s = arg;

	if (strcmp(name, "start") == 0)
		return s->start;
	return strcmp(name, "serve") == 0 ? s->serve : NULL;
}

static bool shell_script(void *arg, const char *path)
{
	(void)arg;
	return strlen(path) % 3 == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 3), *text, *start, *serve;
	struct sbt_dockerfile df, again;
	struct sbt_df_error err;
	struct sbt_migration m;
	struct scripts s;

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = buf[size + 1] = buf[size + 2] = '\0';
	text = buf;
	start = text + strlen(text) + 1;
	if (start > buf + size)
		start = buf + size + 1;
	serve = start + strlen(start) + 1;
	if (serve > buf + size + 1)
		serve = buf + size + 2;
	s.start = start[0] ? start : NULL;
	s.serve = serve[0] ? serve : NULL;
	memset(&df, 0, sizeof(df));
	if (sbt_dockerfile_parse(text, strlen(text), NULL, &df, &err) == 0 && df.nr_stages > 0) {
		struct sbt_migrate_in in = { .df = &df,
					     .text = text,
					     .len = strlen(text),
					     .target = df.nr_stages - 1,
					     .file = "Dockerfile",
					     .script = script,
					     .shell_script = shell_script,
					     .arg = &s };

		if (sbt_migrate(&in, &m))
			abort();
		if (strncmp(m.dockerfile, text, strlen(text)) != 0 ||
		    strncmp(m.patch, "--- a/Dockerfile\n+++ b/Dockerfile\n@@ ", 37) != 0)
			abort();
		for (int i = 0; i < m.nr_unconverted; i++)
			if (m.unconverted[i].line > df.nr_lines)
				abort();
		if (!m.nr_unconverted) {
			if (sbt_dockerfile_parse(m.dockerfile, strlen(m.dockerfile), NULL, &again,
						 &err) ||
			    again.nr_stages != df.nr_stages + 1 ||
			    strcmp(again.stages[again.nr_stages - 1].name, SBT_MIGRATE_STAGE) !=
				    0 ||
			    !m.start[0])
				abort();
			sbt_dockerfile_free(&again);
		}
		sbt_migration_free(&m);
	}
	sbt_dockerfile_free(&df);
	free(buf);
	return 0;
}
