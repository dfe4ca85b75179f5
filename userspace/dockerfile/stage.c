// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Stages and global ARGs (see dockerfile.h): FROM with its name checked and
 * its base resolved against the ARGs before the first FROM, which Docker
 * substitutes in FROM lines and in each other's defaults; which stage a
 * name or an index means.
 */
#include "dockerfile/stage.h"
#include "dockerfile/context.h"
#include "dockerfile/dockerfile.h"
#include "dockerfile/words.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* BuildKit's automatic platform ARGs: global without an ARG line. */
static const char *const automatic_args[] = {
	"TARGETPLATFORM", "TARGETOS", "TARGETARCH", "TARGETVARIANT",
	"BUILDPLATFORM",  "BUILDOS",  "BUILDARCH",  "BUILDVARIANT",
};

/* The value of build arg NAME=VALUE, or NULL. */
static const char *build_arg(const struct df_parser *p, const char *name, size_t n)
{
	for (const char *const *b = p->build_args; b && *b; b++) {
		if (strncmp(*b, name, n) == 0 && (*b)[n] == '=')
			return *b + n + 1;
	}
	return NULL;
}

static struct sbt_df_arg *find_arg(const struct sbt_dockerfile *df, const char *name, size_t n)
{
	for (int i = 0; i < df->nr_args; i++) {
		if (strlen(df->args[i].name) == n && memcmp(df->args[i].name, name, n) == 0)
			return &df->args[i];
	}
	return NULL;
}

static struct df_value lookup_arg(void *ctx, const char *name, size_t n)
{
	const struct df_parser *p = ctx;
	const struct sbt_df_arg *a = find_arg(p->df, name, n);
	struct df_value v = { .unset = DF_UNDECLARED };

	if (a && a->value)
		return (struct df_value){ .value = a->value, .partial = a->unresolved };
	for (size_t i = 0; i < sizeof(automatic_args) / sizeof(automatic_args[0]); i++) {
		if (strlen(automatic_args[i]) == n && !memcmp(automatic_args[i], name, n)) {
			v.value = build_arg(p, name, n);
			v.unset = v.value ? DF_SET : DF_AUTOMATIC;
			return v;
		}
	}
	if (a)
		v.unset = DF_NO_DEFAULT;
	return v;
}

/* Substitute s[0..n) into p->value; sb->why says what was left unset. */
static int substitute(struct df_parser *p, unsigned int line, const char *what, const char *s,
		      size_t n, struct df_subst *sb)
{
	char q[DF_SHOWN_MAX + 4];

	*sb = (struct df_subst){ .s = s,
				 .n = n,
				 .esc = p->df->escape,
				 .lookup = lookup_arg,
				 .ctx = p,
				 .out = p->value };
	if (df_subst(sb) < 0)
		return df_fail(p, line, "%s %s: %s", what, DF_SHOWN(q, s, n), sb->err);
	return 0;
}

static struct sbt_df_arg *declare_arg(struct df_parser *p, unsigned int line, const char *name,
				      size_t n)
{
	struct sbt_dockerfile *df = p->df;
	struct sbt_df_arg *a = find_arg(df, name, n);

	if (a)
		return a;
	if (df->nr_args == SBT_DF_MAX_ARGS) {
		df_fail(p, line, "more than %d global ARGs (before the first FROM)",
			SBT_DF_MAX_ARGS);
		return NULL;
	}
	if (!df->args) {
		df->args = calloc(SBT_DF_MAX_ARGS, sizeof(*df->args));
		if (!df->args) {
			df_oom(p);
			return NULL;
		}
	}
	a = &df->args[df->nr_args];
	a->name = df_strndup(p, name, n);
	if (!a->name) {
		df_oom(p);
		return NULL;
	}
	df->nr_args++;
	return a;
}

/* One NAME[=DEFAULT] word of a global ARG; the default sees the ARGs before it. */
static int global_arg(struct df_parser *p, const struct sbt_df_instr *in, const char *w, size_t wl)
{
	const char *eq = memchr(w, '=', wl), *passed;
	size_t kl = eq ? (size_t)(eq - w) : wl;
	struct sbt_df_arg *a;
	struct df_subst sb;

	if (kl == 0)
		return df_fail(p, in->line, "ARG names can not be blank");
	a = declare_arg(p, in->line, w, kl);
	if (!a)
		return -1;
	a->line = in->line;
	passed = build_arg(p, w, kl);
	if (passed) {
		*a = (struct sbt_df_arg){ .name = a->name, .passed = true, .line = in->line };
		a->value = df_strndup(p, passed, strlen(passed));
		return a->value ? 0 : df_oom(p);
	}
	if (!eq)
		return 0; /* ARG NAME keeps an earlier value */
	if (substitute(p, in->line, "ARG", eq + 1, wl - kl - 1, &sb) < 0)
		return -1;
	a->value = df_strndup(p, sb.out, sb.len);
	a->unresolved = sb.why[0] ? df_strndup(p, sb.why, strlen(sb.why)) : NULL;
	a->passed = false;
	return a->value && (a->unresolved || !sb.why[0]) ? 0 : df_oom(p);
}

int df_global_args(struct df_parser *p, const struct sbt_df_instr *in)
{
	struct df_words it = { .s = in->args, .n = in->args_len, .esc = p->df->escape };
	int nr = 0;

	it.w = p->name; /* global_arg's substitution uses p->value, never p->name */
	while (df_next_word(&it)) {
		if (global_arg(p, in, it.w, it.wl) < 0)
			return -1;
		nr++;
	}
	return nr ? 0
		  : df_fail(p, in->line, "ARG requires at least one argument: ARG NAME[=DEFAULT]");
}

/* Docker's stage name: [a-z][a-z0-9._-]*, case-insensitively. */
static bool valid_name(const char *s, size_t n)
{
	if (!df_is_alpha(s[0]))
		return false;
	for (size_t i = 1; i < n; i++) {
		if (!df_is_alpha(s[i]) && !df_is_digit(s[i]) && !strchr("._-", s[i]))
			return false;
	}
	return true;
}

static int resolve_base(struct df_parser *p, struct sbt_df_stage *st, int idx)
{
	char q[DF_SHOWN_MAX + 4];
	struct df_subst sb;

	if (substitute(p, st->line, "FROM", st->base, strlen(st->base), &sb) < 0)
		return -1;
	if (sb.len == 0 && !sb.why[0])
		return df_fail(p, st->line,
			       "FROM %s: the base image is blank after ARG substitution",
			       DF_SHOWN(q, st->base, strlen(st->base)));
	st->image = df_strndup(p, sb.out, sb.len);
	if (sb.why[0])
		st->unresolved = df_strndup(p, sb.why, strlen(sb.why));
	if (!st->image || (sb.why[0] && !st->unresolved))
		return df_oom(p);
	st->base_stage = df_stage_ref(p->df, st->image, idx);
	if (st->base_stage >= 0)
		st->base_kind = SBT_DF_BASE_STAGE;
	else if (strcasecmp(st->image, "scratch") == 0)
		st->base_kind = SBT_DF_BASE_SCRATCH;
	return 0;
}

/* FROM [--platform=P] IMAGE [AS NAME]: a new stage. */
int df_from(struct df_parser *p, struct sbt_df_instr *in)
{
	const char *w[4] = { NULL }, *s = in->args;
	struct sbt_dockerfile *df = p->df;
	size_t wl[4] = { 0 }, pos = 0;
	char q[DF_SHOWN_MAX + 4];
	struct sbt_df_stage *st;
	int nw = 0, dup;

	for (; nw < 4; nw++) { /* white space separates, nothing quotes */
		while (pos < in->args_len && df_is_space(s[pos]))
			pos++;
		if (pos == in->args_len)
			break;
		for (w[nw] = s + pos; pos < in->args_len && !df_is_space(s[pos]);)
			pos++;
		wl[nw] = (size_t)(s + pos - w[nw]);
	}
	if (nw != 1 && !(nw == 3 && df_word_is(w[1], wl[1], "AS")))
		return df_fail(p, in->line,
			       "FROM requires either one or three arguments: "
			       "FROM [--platform=P] IMAGE [AS NAME]");
	if (nw == 3 && !valid_name(w[2], wl[2]))
		return df_fail(p, in->line,
			       "invalid name for build stage: '%s', name can't start "
			       "with a number or contain symbols",
			       DF_SHOWN(q, w[2], wl[2]));
	memcpy(p->name, w[2] ? w[2] : "", wl[2]);
	p->name[wl[2]] = '\0';
	dup = nw == 3 ? sbt_dockerfile_stage_index(df, p->name) : -1;
	if (dup >= 0)
		return df_fail(p, in->line,
			       "duplicate stage name '%s' (also at line %u): rename one",
			       DF_SHOWN(q, w[2], wl[2]), df->stages[dup].line);
	if (df->nr_stages == SBT_DF_MAX_STAGES)
		return df_fail(p, in->line, "more than %d stages (FROM instructions)",
			       SBT_DF_MAX_STAGES);
	if (df_grow(p, (void **)&df->stages, &p->cap_stages, df->nr_stages, SBT_DF_MAX_STAGES,
		    sizeof(*df->stages)) < 0)
		return -1;
	st = &df->stages[df->nr_stages];
	*st = (struct sbt_df_stage){ .from = (int)(in - df->instrs), .line = in->line };
	st->name = df_strndup(p, w[2] ? w[2] : "", wl[2]);
	st->base = df_strndup(p, w[0], wl[0]);
	if (!st->name || !st->base)
		return df_oom(p);
	in->stage = df->nr_stages++;
	return resolve_base(p, st, in->stage);
}

int df_stage_ref(const struct sbt_dockerfile *df, const char *ref, int before)
{
	size_t n = strspn(ref, "0123456789");

	if (n && !ref[n] && n <= 4 && (ref[0] != '0' || n == 1)) {
		int idx = atoi(ref);

		return idx < before ? idx : -1;
	}
	for (int i = 0; i < before; i++) {
		if (df->stages[i].name[0] && strcasecmp(df->stages[i].name, ref) == 0)
			return i;
	}
	return -1;
}

int sbt_dockerfile_stage_index(const struct sbt_dockerfile *df, const char *name)
{
	if (!name || !name[0])
		return -1;
	for (int i = 0; i < df->nr_stages; i++) {
		if (strcasecmp(df->stages[i].name, name) == 0)
			return i;
	}
	return -1;
}
