// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Questions asked of a parsed Dockerfile (see dockerfile.h): which stages
 * and images a build of a stage needs, what its container runs; and the
 * bounded file reader that feeds the parser.
 */
#include "dockerfile/context.h"
#include "dockerfile/dockerfile.h"
#include "dockerfile/stage.h"
#include "lib/io.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * What a --from of stage `s` names: an earlier stage (its index), an image
 * (-1), or -2 with `err` (a variable, the same or a later stage, no such
 * index), as BuildKit refuses them.
 */
static int source_stage(const struct sbt_dockerfile *df, int s, const struct sbt_df_instr *in,
			const char *ref, struct sbt_df_error *err)
{
	size_t digits = strspn(ref, "0123456789");
	int j = df_stage_ref(df, ref, df->nr_stages);
	const char *why = NULL;
	char q[DF_SHOWN_MAX + 4];

	if (strchr(ref, '$'))
		why = "variables are not expanded in --from; name the stage, or make one with "
		      "FROM and a global ARG";
	else if (j < 0 && digits && !ref[digits])
		why = "there is no stage with that index";
	else if (j >= s)
		why = "that stage needs to be defined before the current one";
	if (!why)
		return j;
	df_error_at(err, in->line, "%s --from=%s: %s", in->keyword, DF_SHOWN(q, ref, strlen(ref)),
		    why);
	return -2;
}

int sbt_dockerfile_stages_needed(const struct sbt_dockerfile *df, int target,
				 enum sbt_df_scope scope, bool *need, struct sbt_df_error *err)
{
	int count = 0;

	if (target < 0 || target >= df->nr_stages) {
		df_error_at(err, 0, "no stage %d: the Dockerfile has %d", target, df->nr_stages);
		return -1;
	}
	memset(need, 0, sizeof(*need) * (size_t)df->nr_stages);
	need[target] = true;
	/* every dependency is an earlier stage: one pass backwards closes the set */
	for (int s = target; s >= 0; s--) {
		const struct sbt_df_stage *st = &df->stages[s];

		need[s] |= scope == SBT_DF_UPTO;
		if (!need[s])
			continue;
		count++;
		if (st->base_kind == SBT_DF_BASE_STAGE)
			need[st->base_stage] = true;
		for (int i = st->from + 1; i <= st->from + st->nr_instrs; i++) {
			const struct sbt_df_instr *in = &df->instrs[i];

			for (int k = 0; k < in->nr_sources; k++) {
				int j = source_stage(df, s, in, in->sources[k], err);

				if (j < -1)
					return -1;
				if (j >= 0)
					need[j] = true;
			}
		}
	}
	return count;
}

/* Append `image` unless it is there already. */
static int add_image(const char **images, int nr, int max, const char *image, unsigned int line,
		     struct sbt_df_error *err)
{
	for (int i = 0; i < nr; i++) {
		if (strcmp(images[i], image) == 0)
			return nr;
	}
	if (nr == max)
		return df_error_at(err, line,
				   "more than %d images needed; the build needs too many", max);
	images[nr] = image;
	return nr + 1;
}

/* The images stage s needs: its base, then its --from images. */
static int stage_images(const struct sbt_dockerfile *df, int s, const char **images, int nr,
			int max, struct sbt_df_error *err)
{
	const struct sbt_df_stage *st = &df->stages[s];
	char q[DF_SHOWN_MAX + 4];

	if (st->base_kind == SBT_DF_BASE_IMAGE && st->unresolved)
		return df_error_at(err, st->line, "FROM %s: %s",
				   DF_SHOWN(q, st->base, strlen(st->base)), st->unresolved);
	if (st->base_kind == SBT_DF_BASE_IMAGE)
		nr = add_image(images, nr, max, st->image, st->line, err);
	for (int i = st->from + 1; nr >= 0 && i <= st->from + st->nr_instrs; i++) {
		const struct sbt_df_instr *in = &df->instrs[i];

		for (int k = 0; nr >= 0 && k < in->nr_sources; k++) {
			int j = source_stage(df, s, in, in->sources[k], err);

			if (j < -1)
				return -1;
			if (j == -1)
				nr = add_image(images, nr, max, in->sources[k], in->line, err);
		}
	}
	return nr;
}

int sbt_dockerfile_images(const struct sbt_dockerfile *df, int target, enum sbt_df_scope scope,
			  const char **images, int max, struct sbt_df_error *err)
{
	bool need[SBT_DF_MAX_STAGES];
	int nr = 0;

	if (sbt_dockerfile_stages_needed(df, target, scope, need, err) < 0)
		return -1;
	for (int s = 0; s <= target && nr >= 0; s++) {
		if (need[s])
			nr = stage_images(df, s, images, nr, max, err);
	}
	return nr;
}

/* --- reading ------------------------------------------------------------ */

int sbt_dockerfile_read(int dirfd, const char *path, char **buf, size_t *len,
			struct sbt_df_error *err)
{
	const char *kind;
	int e;

	*len = 0;
	*buf = sbt_read_regular(dirfd, path, SBT_DF_MAX_BYTES, len, &e, &kind);
	if (*buf)
		return 0;
	if (kind)
		df_error_at(err, 0, "%s: not a regular file; a Dockerfile must be one", path);
	else if (e == EFBIG)
		df_error_at(err, 0, "%s: larger than %u KiB; refusing to parse it", path,
			    SBT_DF_MAX_BYTES >> 10);
	else
		df_error_at(err, 0, "%s: %s", path, strerror(e));
	return -e;
}

int sbt_dockerfile_load(int dirfd, const char *path, const char *const *build_args,
			struct sbt_dockerfile *df, struct sbt_df_error *err)
{
	size_t len;
	char *buf;
	int rc;

	memset(df, 0, sizeof(*df));
	df->escape = '\\';
	if (sbt_dockerfile_read(dirfd, path, &buf, &len, err) < 0)
		return -1;
	rc = sbt_dockerfile_parse(buf, len, build_args, df, err);
	free(buf);
	return rc;
}

/* ---- what a stage's container runs --------------------------------------- */

static const char *const command_keywords[] = { "RUN", "CMD", "ENTRYPOINT", "HEALTHCHECK" };

const char *sbt_df_keyword(const struct sbt_df_instr *in)
{
	for (size_t i = 0; i < sizeof(command_keywords) / sizeof(command_keywords[0]); i++)
		if (strcmp(in->keyword, command_keywords[i]) == 0)
			return command_keywords[i];
	return "";
}

bool sbt_df_is_run(const struct sbt_df_instr *in)
{
	return sbt_df_keyword(in) == command_keywords[0];
}

const char *sbt_df_exec_form_prefix(const char *keyword)
{
	if (!keyword)
		return NULL;
	if (strcmp(keyword, command_keywords[3]) == 0)
		return "HEALTHCHECK CMD";
	for (size_t i = 0; i < 3; i++)
		if (strcmp(keyword, command_keywords[i]) == 0)
			return command_keywords[i];
	return NULL;
}

/* A name for a new stage that no stage has: "build", else "build-N". */
static void new_stage_name(const struct sbt_dockerfile *df, char *out, size_t len)
{
	snprintf(out, len, "build");
	for (int n = 2; df_stage_ref(df, out, df->nr_stages) >= 0; n++)
		snprintf(out, len, "build-%d", n);
}

void sbt_dockerfile_run_fix(const struct sbt_dockerfile *df, const struct sbt_df_instr *in,
			    int target, const char *file, const char *cmd, const char *tool,
			    char *out, size_t len)
{
	const struct sbt_df_stage *st = &df->stages[in->stage];
	size_t n = cmd ? strlen(cmd) : in->args_len;
	int shown = n > 200 ? 197 : (int)n;
	char what[240], needs[96], name[32];

	snprintf(what, sizeof(what), "%s %.*s%s", in->keyword, shown, cmd ? cmd : in->args,
		 (size_t)shown < n ? "..." : "");
	snprintf(needs, sizeof(needs), "neither a shell nor %s",
		 tool && tool[0] ? tool : "the tools the step runs");
	if (in->stage == target) {
		new_stage_name(df, name, sizeof(name));
		snprintf(out, len,
			 "%.128s:%u: %s runs in the final stage: move it to a build stage "
			 "(FROM %.80s AS %s) and COPY --from=%s its output; the final image then "
			 "needs %s",
			 file, in->line, what, st->base, name, name, needs);
		return;
	}
	if (st->name[0])
		snprintf(name, sizeof(name), "%.31s", st->name);
	else
		snprintf(name, sizeof(name), "%d", in->stage);
	snprintf(out, len,
		 "%.128s:%u: %s runs in stage %s, which the final stage is built on: start "
		 "the final stage FROM an image without a shell instead and COPY --from=%s the "
		 "step's output; the final image then needs %s",
		 file, in->line, what, name, name, needs);
}

const struct sbt_df_instr *sbt_dockerfile_inherited(const struct sbt_dockerfile *df, int stage,
						    const char *keyword)
{
	for (int i = stage, hops = 0; i >= 0 && i < df->nr_stages && hops <= df->nr_stages;
	     hops++) {
		const struct sbt_df_stage *st = &df->stages[i];

		for (int k = st->from + st->nr_instrs; k > st->from; k--)
			if (strcmp(df->instrs[k].keyword, keyword) == 0)
				return &df->instrs[k];
		i = st->base_kind == SBT_DF_BASE_STAGE ? st->base_stage : -1;
	}
	return NULL;
}

const struct sbt_df_instr *sbt_dockerfile_start(const struct sbt_dockerfile *df, int stage)
{
	const struct sbt_df_instr *in = sbt_dockerfile_inherited(df, stage, command_keywords[2]);

	return in ? in : sbt_dockerfile_inherited(df, stage, command_keywords[1]);
}

const struct sbt_df_instr *sbt_dockerfile_entrypoint(const struct sbt_dockerfile *df, int stage)
{
	return sbt_dockerfile_inherited(df, stage, command_keywords[2]);
}

const char *sbt_df_entrypoint_keyword(void)
{
	return command_keywords[2];
}

const struct sbt_df_instr *sbt_dockerfile_healthcheck(const struct sbt_dockerfile *df, int stage)
{
	const struct sbt_df_instr *in = sbt_dockerfile_inherited(df, stage, command_keywords[3]);

	return in && in->form != SBT_DF_FORM_HEALTH_NONE && in->form != SBT_DF_FORM_NONE ? in
											 : NULL;
}
