// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target: the Dockerfile parser (userspace/dockerfile/).
 *
 * Input: byte 0 picks the build args (bit 0: GO_VERSION=1.23, bit 1:
 * TARGETARCH=arm64, bit 2: BASE=alpine); the rest is the Dockerfile.
 *
 * Invariants: a failed parse has an error message and a line within the
 * input, and leaves the result empty. A parse gives line numbers within the
 * input, first <= last, increasing from one instruction to the next; stages
 * whose FROM indexes a FROM instruction and whose instruction ranges tile
 * the instructions; every string NUL-terminated at its stated length;
 * exec-form argv NULL-terminated; stage lookups and the build helpers (both
 * scopes, every target) agree with the stages. ASan checks the rest, leaks
 * included.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dockerfile/dockerfile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int cond)
{
	if (!cond)
		abort();
}

static void check_str(const char *s, size_t len)
{
	check(s != NULL);
	check(memchr(s, '\0', len + 1) == s + len);
}

/* n strings then NULL; no array at all is fine when n is 0 */
static void check_strs(const char *const *v, int n)
{
	check(n >= 0 && (v != NULL || n == 0));
	if (!v)
		return;
	check(v[n] == NULL);
	for (int i = 0; i < n; i++)
		check_str(v[i], strlen(v[i]));
}

static void check_instr(const struct sbt_dockerfile *df, const struct sbt_df_instr *in,
			unsigned int after)
{
	check(in->line > after && in->line <= in->end_line && in->end_line <= df->nr_lines);
	check(in->keyword[0] != '\0');
	for (const char *k = in->keyword; *k; k++)
		check(!(*k >= 'a' && *k <= 'z'));
	check_str(in->args, in->args_len);
	check_strs(in->flags, in->nr_flags);
	check(in->nr_flags <= SBT_DF_MAX_FLAGS);
	for (int i = 0; i < in->nr_flags; i++)
		check(strncmp(in->flags[i], "--", 2) == 0);
	check_strs(in->sources, in->nr_sources);
	check(in->stage >= -1 && in->stage < df->nr_stages);
	check(in->stage >= 0 || strcmp(in->keyword, "ARG") == 0);
	if (in->form == SBT_DF_FORM_EXEC) {
		check(in->argc <= SBT_DF_MAX_ARGV);
		check_strs(in->argv, in->argc);
	} else {
		check(in->argv == NULL && in->argc == 0);
	}
	if (in->form == SBT_DF_FORM_SHELL)
		check(in->cmd >= in->args && in->cmd <= in->args + in->args_len);
	check(in->nr_heredocs >= 0 && in->nr_heredocs <= SBT_DF_MAX_HEREDOCS);
	for (int i = 0; i < in->nr_heredocs; i++) {
		check(in->heredocs[i].name[0] != '\0');
		check_str(in->heredocs[i].body, in->heredocs[i].body_len);
	}
	if (in->nr_heredocs)
		check(in->end_line > in->line);
}

static void check_stage(const struct sbt_dockerfile *df, int s)
{
	const struct sbt_df_stage *st = &df->stages[s];
	const struct sbt_df_instr *from = &df->instrs[st->from];

	check(st->from >= 0 && st->from < df->nr_instrs && strcmp(from->keyword, "FROM") == 0);
	check(from->stage == s && st->line == from->line);
	check(s == 0 || st->from == df->stages[s - 1].from + df->stages[s - 1].nr_instrs + 1);
	for (int i = st->from + 1; i <= st->from + st->nr_instrs; i++)
		check(i < df->nr_instrs && df->instrs[i].stage == s);
	check_str(st->name, strlen(st->name));
	check_str(st->base, strlen(st->base));
	check_str(st->image, strlen(st->image));
	check(st->unresolved || st->image[0]);
	check(strlen(st->image) <= SBT_DF_MAX_VALUE);
	if (st->base_kind == SBT_DF_BASE_STAGE)
		check(st->base_stage >= 0 && st->base_stage < s);
	else
		check(st->base_stage == -1);
	if (st->name[0])
		check(sbt_dockerfile_stage_index(df, st->name) == s);
}

static void check_builds(const struct sbt_dockerfile *df, int target)
{
	bool need[SBT_DF_MAX_STAGES];
	const char *images[SBT_DF_MAX_STAGES];
	struct sbt_df_error err;
	int n, up;

	up = sbt_dockerfile_stages_needed(df, target, SBT_DF_UPTO, need, &err);
	n = sbt_dockerfile_stages_needed(df, target, SBT_DF_DEPS, need, &err);
	/* what the build of a dependency refuses, the build of every stage refuses too */
	check(up == -1 || up == target + 1);
	check(n == -1 ? up == -1 : n >= 1 && n <= target + 1 && need[target]);
	if (n < 0) {
		check(err.msg[0] != '\0' && err.line <= df->nr_lines);
		return;
	}
	for (int s = target + 1; s < df->nr_stages; s++)
		check(!need[s]);
	for (int scope = SBT_DF_UPTO; scope <= SBT_DF_DEPS; scope++) {
		n = sbt_dockerfile_images(df, target, scope, images, SBT_DF_MAX_STAGES, &err);
		check(n >= -1 && n <= SBT_DF_MAX_STAGES);
		if (n < 0)
			check(err.msg[0] != '\0' && err.line <= df->nr_lines);
		for (int i = 0; i < n; i++) {
			check(images[i][0] != '\0');
			for (int j = 0; j < i; j++)
				check(strcmp(images[i], images[j]) != 0);
		}
	}
}

static void check_parsed(const struct sbt_dockerfile *df)
{
	unsigned int last = 0;

	check(df->escape == '\\' || df->escape == '`');
	check(df->nr_instrs >= 0 && df->nr_instrs <= SBT_DF_MAX_INSTRS);
	check(df->nr_stages >= 0 && df->nr_stages <= SBT_DF_MAX_STAGES);
	check(df->nr_args >= 0 && df->nr_args <= SBT_DF_MAX_ARGS);
	for (int i = 0; i < df->nr_instrs; i++) {
		check_instr(df, &df->instrs[i], last);
		last = df->instrs[i].end_line;
	}
	for (int i = 0; i < df->nr_args; i++) {
		check_str(df->args[i].name, strlen(df->args[i].name));
		check(df->args[i].line >= 1 && df->args[i].line <= df->nr_lines);
	}
	for (int s = 0; s < df->nr_stages; s++)
		check_stage(df, s);
	if (df->nr_stages) {
		const struct sbt_df_stage *end = &df->stages[df->nr_stages - 1];

		check(end->from + end->nr_instrs == df->nr_instrs - 1);
	}
	/* only global ARGs come before the first FROM */
	for (int i = 0; i < (df->nr_stages ? df->stages[0].from : df->nr_instrs); i++)
		check(df->instrs[i].stage == -1);
	for (int t = 0; t < df->nr_stages; t++)
		check_builds(df, t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const all_args[] = { "GO_VERSION=1.23", "TARGETARCH=arm64",
						"BASE=alpine" };
	const char *build_args[4];
	struct sbt_dockerfile df;
	struct sbt_df_error err;
	int nb = 0, rc;

	if (size == 0 || size > SBT_DF_MAX_BYTES + 2)
		return 0;
	for (int i = 0; i < 3; i++) {
		if (data[0] & (1u << i))
			build_args[nb++] = all_args[i];
	}
	build_args[nb] = NULL;
	rc = sbt_dockerfile_parse((const char *)data + 1, size - 1, build_args, &df, &err);
	check(rc == 0 || rc == -1);
	if (rc < 0) {
		check(err.msg[0] != '\0' && memchr(err.msg, '\0', sizeof(err.msg)));
		check(err.line <= size);
		check(df.nr_instrs == 0 && df.nr_stages == 0 && df.mem == NULL);
	} else {
		check_parsed(&df);
	}
	sbt_dockerfile_free(&df);
	return 0;
}
