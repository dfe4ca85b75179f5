// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The distroless migration of a Dockerfile (migrate.h says what it does). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "migrate/migrate.h"
#include "lib/io.h"
#include "probe/site.h"

#define WORDS_MAX 64
#define NPM_DEPTH 4 /* npm run a -> npm run b -> ...: at most this many hops */

/* The text being made (lib/io.h's growing string). */
#define add sbt_strbuf_add

static void add_bytes(struct sbt_strbuf *b, const char *p, size_t n)
{
	add(b, "%.*s", (int)n, p);
}

/* A word as a JSON string (the exec form's). */
static void add_json_word(struct sbt_strbuf *b, const char *w)
{
	add(b, "\"");
	for (const unsigned char *p = (const unsigned char *)w; *p; p++) {
		if (*p == '"' || *p == '\\')
			add(b, "\\%c", *p);
		else if (*p < 0x20 || *p == 0x7f)
			add(b, "\\u%04x", *p);
		else
			add(b, "%c", *p);
	}
	add(b, "\"");
}

/* ["a", "b"] */
static void add_exec_form(struct sbt_strbuf *b, char *const *argv, int argc)
{
	add(b, "[");
	for (int i = 0; i < argc; i++) {
		if (i)
			add(b, ", ");
		add_json_word(b, argv[i]);
	}
	add(b, "]");
}

static void note(struct sbt_migrate_note *v, int *nr, unsigned int line, const char *what,
		 const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static void note(struct sbt_migrate_note *v, int *nr, unsigned int line, const char *what,
		 const char *fmt, ...)
{
	struct sbt_migrate_note *n;
	va_list ap;

	if (*nr >= SBT_MIGRATE_MAX_NOTES)
		return;
	n = &v[(*nr)++];
	n->line = line;
	snprintf(n->what, sizeof(n->what), "%s", what);
	va_start(ap, fmt);
	vsnprintf(n->why, sizeof(n->why), fmt, ap);
	va_end(ap);
}

#define UNCONVERTED(m, line, what, ...)                                                            \
	note((m)->unconverted, &(m)->nr_unconverted, line, what, __VA_ARGS__)
#define CHANGED(m, line, what, ...) note((m)->changes, &(m)->nr_changes, line, what, __VA_ARGS__)

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

/* Does stage s build on stage `of` (itself included)? */
static bool in_chain(const struct sbt_dockerfile *df, int target, int s)
{
	for (int i = target, hops = 0; i >= 0 && hops <= df->nr_stages; hops++) {
		if (i == s)
			return true;
		i = df->stages[i].base_kind == SBT_DF_BASE_STAGE ? df->stages[i].base_stage : -1;
	}
	return false;
}

/* The image the target's chain starts FROM ("" for scratch). */
static const char *root_image(const struct sbt_dockerfile *df, int target)
{
	int i = target;

	for (int hops = 0; hops <= df->nr_stages && df->stages[i].base_kind == SBT_DF_BASE_STAGE &&
			   df->stages[i].base_stage >= 0;
	     hops++)
		i = df->stages[i].base_stage;
	return df->stages[i].base_kind == SBT_DF_BASE_IMAGE ? df->stages[i].image : "";
}

/* The runtime an image's name says (its repository's last part): nodejs, python3, NULL. */
static const char *runtime_of(const char *image)
{
	char repo[256];
	const char *b;
	char *c;

	snprintf(repo, sizeof(repo), "%s", image);
	if ((c = strchr(repo, '@')))
		*c = '\0';
	b = base_name(repo);
	if ((c = strchr((char *)b, ':')))
		*c = '\0';
	if (strstr(b, "node"))
		return "nodejs";
	if (strstr(b, "python"))
		return "python3";
	return NULL;
}

/* The runtime's program in a distroless image (its ENTRYPOINT), or NULL. */
static const char *runtime_entry(const char *rt)
{
	if (!rt)
		return NULL;
	return strcmp(rt, "nodejs") == 0 ? "/nodejs/bin/node" : "/usr/bin/python3";
}

/* Is argv0 the runtime's own program (node, python3 ...)? */
static bool is_runtime(const char *rt, const char *argv0)
{
	const char *b = base_name(argv0);

	if (!rt)
		return false;
	if (strcmp(rt, "nodejs") == 0)
		return strcmp(b, "node") == 0 || strcmp(b, "nodejs") == 0;
	return strncmp(b, "python", 6) == 0;
}

static void free_words(char **w, int n)
{
	for (int i = 0; i < n; i++)
		free(w[i]);
}

/*
 * The words of a command instruction: its exec form, or its shell form when
 * that is a simple command. The count, or -1 (not simple; unconverted said).
 */
static int instr_words(const struct sbt_df_instr *in, struct sbt_migration *m, char **w)
{
	char what[200];
	int n;

	if (in->form == SBT_DF_FORM_EXEC) {
		if (in->argc > WORDS_MAX)
			return -1;
		for (int i = 0; i < in->argc; i++)
			if (!(w[i] = strdup(in->argv[i]))) {
				free_words(w, i);
				return -1;
			}
		return in->argc;
	}
	n = probe_simple_command(in->cmd, w, WORDS_MAX + 1);
	if (n > 0)
		return n;
	snprintf(what, sizeof(what), "%s %.180s", in->keyword, in->cmd ? in->cmd : in->args);
	UNCONVERTED(m, in->line, what,
		    "a shell-form %s that is not a simple command (pipes, &&, ||, variables, "
		    "redirections): it needs /bin/sh -c, which a distroless image has not; write "
		    "it as one program's argv",
		    in->keyword);
	return -1;
}

/* w's n words freed: the start is not converted. -1. */
static int fail_words(char **w, int n)
{
	free_words(w, n);
	w[0] = NULL;
	return -1;
}

/*
 * `npm start` / `npm run NAME` (and npm run-script): the script's own words
 * when it is a simple command, else unconverted. n (w replaced), or -1.
 */
static int resolve_npm(const struct sbt_migrate_in *in, struct sbt_migration *m, unsigned int line,
		       char **w, int n)
{
	for (int depth = 0; depth < NPM_DEPTH && n >= 2 && strcmp(base_name(w[0]), "npm") == 0;
	     depth++) {
		char name[64], pre[72], what[200], *nw[WORDS_MAX + 1];
		const char *script;
		int k;

		if (n == 2 && strcmp(w[1], "start") == 0)
			snprintf(name, sizeof(name), "start");
		else if (n == 3 && (strcmp(w[1], "run") == 0 || strcmp(w[1], "run-script") == 0))
			snprintf(name, sizeof(name), "%.63s", w[2]);
		else {
			UNCONVERTED(m, line, "npm",
				    "npm with other arguments than start or run NAME: "
				    "npm itself needs a shell for its scripts");
			return fail_words(w, n);
		}
		script = in->script ? in->script(in->arg, name) : NULL;
		if (!script) {
			snprintf(what, sizeof(what), "npm %s", name);
			UNCONVERTED(m, line, what, "package.json has no scripts.%s", name);
			return fail_words(w, n);
		}
		snprintf(pre, sizeof(pre), "pre%s", name);
		if (in->script(in->arg, pre)) {
			snprintf(what, sizeof(what), "scripts.%s", pre);
			UNCONVERTED(m, line, what,
				    "npm runs scripts.%s before scripts.%s: the exec form would "
				    "skip it; fold it into the build stage or the app",
				    pre, name);
			return fail_words(w, n);
		}
		k = probe_simple_command(script, nw, WORDS_MAX + 1);
		if (k <= 0) {
			snprintf(what, sizeof(what), "scripts.%.30s: %.150s", name, script);
			UNCONVERTED(
				m, line, what,
				"npm runs it through sh -c and it is not a simple command (pipes, "
				"&&, variables, redirections): write it as one program's argv, or "
				"move its steps into the build stage");
			return fail_words(w, n);
		}
		snprintf(what, sizeof(what), "npm %s", name);
		CHANGED(m, line, what, "scripts.%s's own command (%.200s), without npm and sh -c",
			name, script);
		free_words(w, n);
		memcpy(w, nw, (size_t)(k + 1) * sizeof(*w));
		n = k;
	}
	if (n >= 1 && strcmp(base_name(w[0]), "npm") == 0) {
		UNCONVERTED(m, line, "npm", "npm scripts that run npm again, too deep to follow");
		return fail_words(w, n);
	}
	return n;
}

/* The start of the old final stage as words (ENTRYPOINT + CMD, npm resolved). n or -1. */
static int start_words(const struct sbt_migrate_in *in, struct sbt_migration *m, char **w,
		       unsigned int *line)
{
	const struct sbt_df_instr *ep = sbt_dockerfile_entrypoint(in->df, in->target),
				  *cmd = sbt_dockerfile_inherited(in->df, in->target, "CMD");
	char what[200];
	int n = 0, k;

	if (!ep && !cmd) {
		UNCONVERTED(m, 0, "CMD",
			    "no ENTRYPOINT or CMD: the base image's start command is not known "
			    "here; give the Dockerfile a CMD");
		return -1;
	}
	*line = ep ? ep->line : cmd->line;
	if (ep) {
		n = instr_words(ep, m, w);
		if (n < 0)
			return -1;
		if (n > 0 && in->shell_script && in->shell_script(in->arg, w[0])) {
			snprintf(what, sizeof(what), "ENTRYPOINT %.180s", w[0]);
			UNCONVERTED(m, ep->line, what,
				    "the ENTRYPOINT is a shell script: its logic needs a shell; "
				    "start the program it ends in instead (exec form)");
			free_words(w, n);
			return -1;
		}
	}
	if (cmd && (!ep || ep->form == SBT_DF_FORM_EXEC)) { /* a shell-form ENTRYPOINT drops CMD */
		k = instr_words(cmd, m, w + n);
		if (k < 0 || n + k > WORDS_MAX) {
			free_words(w, n);
			return -1;
		}
		n += k;
		w[n] = NULL;
	}
	if (n == 0) {
		UNCONVERTED(m, *line, "CMD []", "an empty start command: nothing to start");
		return -1;
	}
	return resolve_npm(in, m, *line, w, n);
}

/* The new stage's start lines into b: CMD under the runtime's ENTRYPOINT, else ENTRYPOINT. */
static void add_start(const struct sbt_migrate_in *in, struct sbt_migration *m,
		      struct sbt_strbuf *b)
{
	char *w[WORDS_MAX + 2] = { 0 };
	struct sbt_strbuf t = { 0 };
	unsigned int line = 0;
	int n = start_words(in, m, w, &line);

	if (n < 0) {
		add(b, "# sbtrace: the start command is not converted (see the report's "
		       "migration.unconverted)\n");
		return;
	}
	if (is_runtime(m->runtime, w[0]) && n >= 2 && runtime_entry(m->runtime)) {
		add(&t, "CMD ");
		add_exec_form(&t, w + 1, n - 1);
	} else {
		add(&t, "ENTRYPOINT ");
		add_exec_form(&t, w, n);
		add(&t, "\nCMD []");
	}
	if (!t.failed) {
		snprintf(m->start, sizeof(m->start), "%s", t.s);
		add(b, "%s\n", t.s);
		CHANGED(m, line, "start", "%s, exec form: no shell starts the app", t.s);
	}
	free(t.s);
	free_words(w, n);
}

/* HEALTHCHECK [flags] CMD [...]: its command's exec form, the runtime by its path. */
static void add_healthcheck(const struct sbt_migrate_in *in, struct sbt_migration *m,
			    struct sbt_strbuf *b)
{
	const struct sbt_df_instr *hc = sbt_dockerfile_healthcheck(in->df, in->target);
	char *w[WORDS_MAX + 2] = { 0 };
	const char *entry = runtime_entry(m->runtime);
	int n;

	if (!hc)
		return;
	n = instr_words(hc, m, w);
	if (n <= 0) {
		add(b, "# sbtrace: HEALTHCHECK (line %u) not converted\n", hc->line);
		return;
	}
	if (entry && is_runtime(m->runtime, w[0])) {
		char *e = strdup(entry);

		if (!e) {
			free_words(w, n);
			free(b->s);
			b->s = NULL;
			b->failed = true; /* as lib/io.h's own failure */
			return;
		}
		free(w[0]);
		w[0] = e;
	}
	add(b, "%s", hc->keyword);
	for (int i = 0; i < hc->nr_flags; i++)
		add(b, " %s", hc->flags[i]);
	add(b, " CMD ");
	add_exec_form(b, w, n);
	add(b, "\n");
	if (hc->form != SBT_DF_FORM_EXEC)
		CHANGED(m, hc->line, hc->keyword, "its exec form: no sh -c runs it");
	free_words(w, n);
}

/* Every `keyword` instruction of the chain, as written (ENV, EXPOSE). */
static void add_each(const struct sbt_migrate_in *in, struct sbt_strbuf *b, const char *keyword)
{
	for (int i = 0; i < in->df->nr_instrs; i++) {
		const struct sbt_df_instr *x = &in->df->instrs[i];

		if (x->stage >= 0 && strcmp(x->keyword, keyword) == 0 &&
		    in_chain(in->df, in->target, x->stage)) {
			add(b, "%s", keyword);
			for (int f = 0; f < x->nr_flags; f++)
				add(b, " %s", x->flags[f]);
			add(b, " ");
			add_bytes(b, x->args, x->args_len);
			add(b, "\n");
		}
	}
}

/* The new final stage. */
static void add_stage(const struct sbt_migrate_in *in, struct sbt_migration *m,
		      struct sbt_strbuf *b)
{
	const struct sbt_dockerfile *df = in->df;
	const struct sbt_df_stage *st = &df->stages[in->target];
	const struct sbt_df_instr *wd = sbt_dockerfile_inherited(df, in->target, "WORKDIR"),
				  *user = sbt_dockerfile_inherited(df, in->target, "USER");
	char from[72];

	if (st->name[0])
		snprintf(from, sizeof(from), "%.64s", st->name);
	else
		snprintf(from, sizeof(from), "%d", in->target);
	add(b,
	    "\n# sbtrace probe --migrate: the final stage on %s, a base without a shell.\n"
	    "# The stage above (%s:%u) is now a build stage: its RUN steps run there;\n"
	    "# this one copies its WORKDIR and starts the app in exec form.\n",
	    m->base, in->file, st->line);
	add(b, "FROM %s AS %s\n", m->base, SBT_MIGRATE_STAGE);
	add_each(in, b, "ENV");
	if (!wd) {
		UNCONVERTED(m, st->line, "WORKDIR",
			    "the final stage has no WORKDIR: which files the app needs is not "
			    "known; give it a WORKDIR its files live in");
		add(b, "# sbtrace: no WORKDIR in the stage above: nothing copied\n");
	} else if (!wd->args_len || memchr(wd->args, '$', wd->args_len) ||
		   strcspn(wd->args, " \t\"'\\") < wd->args_len) {
		UNCONVERTED(m, wd->line, "WORKDIR",
			    "a WORKDIR with blanks, quotes or variables: write the copy of it "
			    "by hand");
		add(b, "# sbtrace: WORKDIR (line %u) not copied\n", wd->line);
	} else {
		add(b, "COPY --from=%s ", from);
		add_bytes(b, wd->args, wd->args_len);
		add(b, " ");
		add_bytes(b, wd->args, wd->args_len);
		add(b, "\nWORKDIR ");
		add_bytes(b, wd->args, wd->args_len);
		add(b, "\n");
	}
	add_each(in, b, "EXPOSE");
	if (user) {
		add(b, "USER ");
		add_bytes(b, user->args, user->args_len);
		add(b, "\n");
	} else {
		add(b, "USER nonroot\n");
		CHANGED(m, st->line, "USER",
			"the stage ran as root: the new one runs as nonroot (uid 65532), as "
			"distroless images provide");
	}
	add_healthcheck(in, m, b);
	add_start(in, m, b);
}

/*
 * The migrated Dockerfile must parse with the new stage last: an end of the
 * original that swallows what follows it (a continuation, a heredoc left
 * open) makes the migration one to write by hand.
 */
static void appended_check(const struct sbt_migrate_in *in, struct sbt_migration *m, size_t len)
{
	struct sbt_dockerfile df;
	struct sbt_df_error err;
	bool ok;

	ok = sbt_dockerfile_parse(m->dockerfile, len, NULL, &df, &err) == 0 &&
	     df.nr_stages == in->df->nr_stages + 1 &&
	     strcmp(df.stages[df.nr_stages - 1].name, SBT_MIGRATE_STAGE) == 0;
	sbt_dockerfile_free(&df);
	if (!ok)
		UNCONVERTED(m, in->df->nr_lines, "the end of the Dockerfile",
			    "a stage appended after it does not parse as one (a continuation or "
			    "heredoc left open at the end?): add the new stage by hand");
}

int sbt_migrate(const struct sbt_migrate_in *in, struct sbt_migration *m)
{
	struct sbt_strbuf b = { 0 };
	const char *rt_base;

	memset(m, 0, sizeof(*m));
	if (in->target < 0 || in->target >= in->df->nr_stages)
		return -EINVAL;
	m->runtime = runtime_of(root_image(in->df, in->target));
	rt_base = in->base					    ? in->base
		  : m->runtime && strcmp(m->runtime, "nodejs") == 0 ? SBT_MIGRATE_BASE_NODEJS
		  : m->runtime					    ? SBT_MIGRATE_BASE_PYTHON3
								    : NULL;
	if (in->base)
		m->runtime = runtime_of(in->base) ? runtime_of(in->base) : m->runtime;
	if (strstr(root_image(in->df, in->target), "distroless"))
		UNCONVERTED(m, in->df->stages[in->target].line, "the base image",
			    "the final stage is on a distroless base already: nothing to migrate");
	if (!rt_base) {
		UNCONVERTED(m, in->df->stages[in->target].line, "the base image",
			    "the runtime of %.120s is not known here (node and python are): give "
			    "--distroless-base REF",
			    root_image(in->df, in->target));
		rt_base = "scratch";
	}
	snprintf(m->base, sizeof(m->base), "%s", rt_base);
	add_bytes(&b, in->text, in->len);
	if (in->len && in->text[in->len - 1] != '\n')
		add(&b, "\n");
	add_stage(in, m, &b);
	if (b.failed) {
		free(b.s);
		return -ENOMEM;
	}
	m->dockerfile = b.s;
	appended_check(in, m, b.len);
	m->patch = sbt_migrate_append_diff(in->file, in->text, in->len, b.s, b.len);
	return m->patch ? 0 : -ENOMEM;
}

void sbt_migration_free(struct sbt_migration *m)
{
	free(m->dockerfile);
	free(m->patch);
	m->dockerfile = m->patch = NULL;
}

/* The start of each of text's lines (at most max), their count. */
static size_t line_starts(const char *t, size_t len, const char **v, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < len && n < max; n++) {
		const char *nl = memchr(t + i, '\n', len - i);

		v[n] = t + i;
		i = nl ? (size_t)(nl - t) + 1 : len;
	}
	return n;
}

static size_t line_len(const char *l, const char *end)
{
	const char *nl = memchr(l, '\n', (size_t)(end - l));

	return nl ? (size_t)(nl - l) : (size_t)(end - l);
}

char *sbt_migrate_append_diff(const char *file, const char *a, size_t alen, const char *b,
			      size_t blen)
{
	enum { CTX = 3, MAXL = 1u << 16 };
	const char **la = calloc(MAXL, sizeof(*la)), **lb = calloc(MAXL, sizeof(*lb));
	struct sbt_strbuf d = { 0 };
	size_t na, nb, from, ctx;
	bool no_nl = alen && a[alen - 1] != '\n';

	if (!la || !lb || blen < alen || memcmp(a, b, alen) != 0) {
		free(la);
		free(lb);
		return NULL;
	}
	na = line_starts(a, alen, la, MAXL);
	nb = line_starts(b, blen, lb, MAXL);
	ctx = na < CTX ? na : CTX;
	from = na - ctx; /* index of the first context line */
	add(&d, "--- a/%s\n+++ b/%s\n", file, file);
	add(&d, "@@ -%zu,%zu +%zu,%zu @@\n", ctx ? from + 1 : 0, ctx, from + 1, nb - from);
	for (size_t i = from; i < na; i++) {
		size_t n = line_len(la[i], a + alen);

		if (i == na - 1 && no_nl) { /* the last line gets its newline: changed */
			add(&d, "-%.*s\n\\ No newline at end of file\n+%.*s\n", (int)n, la[i],
			    (int)n, la[i]);
			continue;
		}
		add(&d, " %.*s\n", (int)n, la[i]);
	}
	for (size_t i = na; i < nb; i++)
		add(&d, "+%.*s\n", (int)line_len(lb[i], b + blen), lb[i]);
	free(la);
	free(lb);
	if (d.failed) {
		free(d.s);
		return NULL;
	}
	return d.s;
}
