/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The distroless migration of a Dockerfile (sbtrace probe --migrate): pure
 * text, no engine. The final stage (or --target) stays as it is and becomes
 * a build stage: every RUN of it runs there, shells and all. A new final
 * stage is appended, FROM a base without a shell, that copies the old
 * stage's WORKDIR, keeps its ENV, EXPOSE and USER (else USER nonroot), and
 * starts the app in exec form: `npm start` / `npm run NAME` become the
 * script's own command when it is a simple one, `node server.js` becomes
 * CMD ["server.js"] under the base's node ENTRYPOINT, a shell-form CMD or
 * HEALTHCHECK its exec form. What it cannot rewrite (a script with pipes,
 * `&&` or variables, an ENTRYPOINT that is a shell script, no WORKDIR) is
 * named with its line: such a migration is never offered as verified. The
 * patch is a unified diff of the file as written, never applied to the repo.
 */
#ifndef SBT_MIGRATE_H
#define SBT_MIGRATE_H

#include <stdbool.h>
#include <stddef.h>

#include "dockerfile/dockerfile.h"

#define SBT_MIGRATE_MAX_NOTES 16
#define SBT_MIGRATE_STAGE     "sbtrace-distroless" /* the new final stage's name */

/* The local shell-less stand-ins (scripts/base-images.sh) a runtime defaults to. */
#define SBT_MIGRATE_BASE_NODEJS	 "localhost/sbtrace-distroless-nodejs:nonroot"
#define SBT_MIGRATE_BASE_PYTHON3 "localhost/sbtrace-distroless-python3:nonroot"

struct sbt_migrate_in {
	const struct sbt_dockerfile *df;
	const char *text; /* the Dockerfile as written */
	size_t len;
	int target;	  /* the stage to migrate: the final one, or --target */
	const char *file; /* its name, in notes and the patch's header */
	const char *base; /* --distroless-base, or NULL: the runtime's stand-in */
	/* package.json's script `name` (its text), or NULL when none */
	const char *(*script)(void *arg, const char *name);
	/* is the repo's file at `path` (a start command's program) a shell script? */
	bool (*shell_script)(void *arg, const char *path);
	void *arg;
};

/* A line of the Dockerfile and what the migration did with it, or could not do. */
struct sbt_migrate_note {
	unsigned int line; /* 0: none (the stage as a whole) */
	char what[200];	   /* "CMD npm start", "scripts.start: node a.js && node b.js" */
	char why[320];
};

struct sbt_migration {
	char base[256];
	const char *runtime; /* "nodejs", "python3", NULL (unknown) */
	char start[600];     /* the new start, e.g. CMD ["server.js"] */
	char *dockerfile;    /* the migrated Dockerfile (malloc'd) */
	char *patch;	     /* the unified diff against the original (malloc'd) */
	struct sbt_migrate_note changes[SBT_MIGRATE_MAX_NOTES];
	int nr_changes;
	struct sbt_migrate_note unconverted[SBT_MIGRATE_MAX_NOTES];
	int nr_unconverted;
};

/*
 * Migrate in->df's stage in->target into m (zeroed first; free it with
 * sbt_migration_free). 0, or -ENOMEM; what could not be converted is in
 * m->unconverted, the Dockerfile and patch written all the same (with a
 * comment where a line could not be rewritten).
 */
int sbt_migrate(const struct sbt_migrate_in *in, struct sbt_migration *m);
void sbt_migration_free(struct sbt_migration *m);

/*
 * The unified diff of `a` into `b` when b is a followed by more lines (all
 * the migration does), headers a/FILE and b/FILE. malloc'd, or NULL.
 */
char *sbt_migrate_append_diff(const char *file, const char *a, size_t alen, const char *b,
			      size_t blen);

#endif
