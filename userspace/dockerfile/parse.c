// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The Dockerfile parser (see dockerfile.h): physical lines, then parser
 * directives, then instructions (continuations joined, flags, exec or shell
 * form, heredocs), then stages with their bases resolved against the global
 * ARGs (stage.c). Strings live in the result's memory (df->mem, context.c).
 */
#include "dockerfile/context.h"
#include "dockerfile/dockerfile.h"
#include "dockerfile/stage.h"
#include "dockerfile/words.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <json-c/json.h>

#define JSON_DEPTH 10000 /* Go's encoding/json nesting limit */

static const char *const directive_keys[] = { "escape", "syntax", "check" };

/* A NULL-terminated copy of n pointers. */
static const char *const *arena_ptrs(struct df_parser *p, const char *const *v, int n)
{
	const char **d = df_alloc(p, sizeof(*d) * ((size_t)n + 1));

	if (d) {
		if (n)
			memcpy(d, v, sizeof(*d) * (size_t)n);
		d[n] = NULL;
	}
	return d;
}

/* --- physical lines ------------------------------------------------------ */

/* The next physical line, without its line end (and trailing CRs). */
static bool next_line(struct df_parser *p, const char **s, size_t *n)
{
	size_t start = p->pos, end;
	const char *nl;

	if (start >= p->len)
		return false;
	nl = memchr(p->buf + start, '\n', p->len - start);
	end = nl ? (size_t)(nl - p->buf) : p->len;
	p->pos = nl ? end + 1 : p->len;
	p->line++;
	while (end > start && p->buf[end - 1] == '\r')
		end--;
	*s = p->buf + start;
	*n = end - start;
	return true;
}

static unsigned int count_lines(const char *buf, size_t len)
{
	unsigned int lines = 0;
	const char *nl;
	size_t pos = 0;

	while (pos < len && (nl = memchr(buf + pos, '\n', len - pos))) {
		lines++;
		pos = (size_t)(nl - buf) + 1;
	}
	return lines + (pos < len);
}

/*
 * BuildKit's line continuation: the last non-blank character is the escape
 * and is not itself escaped. Cuts it (and the blanks) off.
 */
static bool continues(const char *s, size_t *n, char esc)
{
	size_t e = *n;

	while (e > 0 && (s[e - 1] == ' ' || s[e - 1] == '\t'))
		e--;
	if (e == 0 || s[e - 1] != esc || (e >= 2 && s[e - 2] == esc))
		return false;
	*n = e - 1;
	return true;
}

/* --- parser directives ---------------------------------------------------- */

static int apply_directive(struct df_parser *p, int key, const char *v, size_t vn)
{
	char q[DF_SHOWN_MAX + 4];

	if (p->seen & (1u << key))
		return df_fail(p, p->line, "only one %s parser directive can be used",
			       directive_keys[key]);
	p->seen |= 1u << key;
	if (key == 0) {
		if (vn != 1 || (v[0] != '\\' && v[0] != '`'))
			return df_fail(p, p->line,
				       "invalid escape token '%s' does not match ` or \\",
				       DF_SHOWN(q, v, vn));
		p->df->escape = v[0];
	} else if (key == 1) {
		p->df->syntax = df_strndup(p, v, vn);
		if (!p->df->syntax)
			return df_oom(p);
	}
	return 0;
}

/* `# key=value` (s trimmed on the left): 1 applied, 0 not a directive (they end), -1 error. */
static int directive(struct df_parser *p, const char *s, size_t n)
{
	size_t i = 1, k, kl, v, ve;

	if (n == 0 || s[0] != '#')
		return 0;
	while (i < n && df_is_space(s[i]))
		i++;
	for (k = i; i < n && (df_is_alpha(s[i]) || (i > k && df_is_digit(s[i]))); i++)
		;
	kl = i - k;
	while (i < n && df_is_space(s[i]))
		i++;
	if (kl == 0 || i == n || s[i] != '=' || i + 1 == n)
		return 0;
	for (v = ++i; v < n && df_is_space(s[v]);)
		v++;
	for (ve = n; ve > v && df_is_space(s[ve - 1]);)
		ve--;
	if (ve == v) /* only blanks after '=': BuildKit's regexp takes one as the value */
		ve = (v = i) + 1;
	for (int key = 0; key < 3; key++) {
		if (df_word_is(s + k, kl, directive_keys[key]))
			return apply_directive(p, key, s + v, ve - v) < 0 ? -1 : 1;
	}
	return 0;
}

/* --- instructions ----------------------------------------------------------- */

static struct sbt_df_instr *new_instr(struct df_parser *p, unsigned int line)
{
	struct sbt_dockerfile *df = p->df;
	struct sbt_df_instr *in;

	if (df->nr_instrs == SBT_DF_MAX_INSTRS) {
		df_fail(p, line, "more than %d instructions; refusing to parse further",
			SBT_DF_MAX_INSTRS);
		return NULL;
	}
	if (df_grow(p, (void **)&df->instrs, &p->cap_instrs, df->nr_instrs, SBT_DF_MAX_INSTRS,
		    sizeof(*df->instrs)) < 0)
		return NULL;
	in = &df->instrs[df->nr_instrs++];
	memset(in, 0, sizeof(*in));
	in->line = line;
	in->stage = df->nr_stages - 1;
	return in;
}

/* The leading --flags of s into in->flags; *rest where the arguments start. */
static int take_flags(struct df_parser *p, struct sbt_df_instr *in, const char *s, size_t n,
		      size_t *rest)
{
	struct df_words it = { .s = s, .n = n, .esc = p->df->escape, .w = p->word };
	const char *flags[SBT_DF_MAX_FLAGS];
	int nr = 0;

	while (df_next_flag(&it)) {
		if (nr == SBT_DF_MAX_FLAGS)
			return df_fail(p, in->line, "more than %d --flags on one %s instruction",
				       SBT_DF_MAX_FLAGS, in->keyword);
		flags[nr] = df_strndup(p, it.w, it.wl);
		if (!flags[nr++])
			return df_oom(p);
	}
	*rest = it.pos;
	in->flags = arena_ptrs(p, flags, nr);
	in->nr_flags = nr;
	return in->flags ? 0 : df_oom(p);
}

/* Copy the elements of a JSON array of strings; -1 when one is not a string. */
static int json_strings(struct df_parser *p, unsigned int line, json_object *arr,
			const char *const **argv, int *argc)
{
	size_t count = json_object_array_length(arr);
	const char **v;

	if (count > SBT_DF_MAX_ARGV)
		return df_fail(p, line, "more than %d exec-form arguments", SBT_DF_MAX_ARGV);
	v = df_alloc(p, sizeof(*v) * (count + 1));
	if (!v)
		return df_oom(p);
	for (size_t i = 0; i < count; i++) {
		json_object *el = json_object_array_get_idx(arr, i);
		size_t n;

		if (!json_object_is_type(el, json_type_string))
			return df_fail(p, line,
				       "when using JSON array syntax, arrays must be "
				       "comprised of strings only");
		n = (size_t)json_object_get_string_len(el);
		if (memchr(json_object_get_string(el), '\0', n))
			return df_fail(p, line,
				       "an exec-form argument holds a NUL character (\\u0000)");
		v[i] = df_strndup(p, json_object_get_string(el), n);
		if (!v[i])
			return df_oom(p);
	}
	v[count] = NULL;
	*argv = v;
	*argc = (int)count;
	return 0;
}

/*
 * What json-c accepts and Go's encoding/json does not: raw control
 * characters in strings, NaN and Infinity. Such text is no JSON to Docker.
 */
static bool go_json_text(const char *s, size_t n)
{
	bool in_string = false;

	for (size_t i = 0; i < n; i++) {
		if (in_string) {
			if ((unsigned char)s[i] < 0x20)
				return false;
			if (s[i] == '\\')
				i++; /* the escaped character: json-c checks it */
			else if (s[i] == '"')
				in_string = false;
		} else if (s[i] == '"') {
			in_string = true;
		} else if (!s[i] || !strchr(" \t\r\n[]{},:0123456789+-.eEtrufalsn", s[i])) {
			return false;
		}
	}
	return true;
}

/*
 * Docker's exec form: 1 when s is a JSON array of strings (argv, argc set),
 * 0 when s is not JSON (shell form), -1 for an array holding a non-string.
 */
static int json_array(struct df_parser *p, unsigned int line, const char *s, size_t n,
		      const char *const **argv, int *argc)
{
	json_object *arr;
	size_t i = 0, end;
	int rc = 0;

	while (i < n && df_is_space(s[i]))
		i++;
	if (i == n || s[i] != '[' || !go_json_text(s + i, n - i))
		return 0;
	json_tokener_reset(p->tok);
	arr = json_tokener_parse_ex(p->tok, s + i, (int)(n - i));
	if (!arr)
		return 0;
	end = i + json_tokener_get_parse_end(p->tok);
	while (end < n && (s[end] == ' ' || s[end] == '\t' || s[end] == '\r' || s[end] == '\n'))
		end++;
	if (end == n && json_object_is_type(arr, json_type_array))
		rc = json_strings(p, line, arr, argv, argc) < 0 ? -1 : 1;
	json_object_put(arr);
	return rc;
}

/* Exec or shell form of s, a suffix of in->args. */
static int command_form(struct df_parser *p, struct sbt_df_instr *in, const char *s, size_t n)
{
	int rc = json_array(p, in->line, s, n, &in->argv, &in->argc);

	if (rc < 0)
		return -1;
	in->form = rc ? SBT_DF_FORM_EXEC : SBT_DF_FORM_SHELL;
	if (!rc)
		in->cmd = s;
	return 0;
}

static int healthcheck(struct df_parser *p, struct sbt_df_instr *in)
{
	const char *a = in->args;
	size_t n = in->args_len, t = 0, r;
	char q[DF_SHOWN_MAX + 4];

	while (t < n && !df_is_space(a[t]))
		t++;
	for (r = t; r < n && df_is_space(a[r]);)
		r++;
	if (t == 0)
		return df_fail(p, in->line,
			       "HEALTHCHECK requires an argument: NONE or CMD COMMAND");
	if (df_word_is(a, t, "NONE")) {
		if (r < n)
			return df_fail(p, in->line, "HEALTHCHECK NONE takes no arguments");
		in->form = SBT_DF_FORM_HEALTH_NONE;
		return 0;
	}
	if (!df_word_is(a, t, "CMD"))
		return df_fail(p, in->line, "unknown type '%s' in HEALTHCHECK (try CMD)",
			       DF_SHOWN(q, a, t));
	if (command_form(p, in, a + r, n - r) < 0)
		return -1;
	if (in->form == SBT_DF_FORM_EXEC ? in->argc == 0 : !in->cmd[0])
		return df_fail(p, in->line, "missing command after HEALTHCHECK CMD");
	return 0;
}

static int shell_instr(struct df_parser *p, struct sbt_df_instr *in)
{
	if (command_form(p, in, in->args, in->args_len) < 0)
		return -1;
	if (in->form != SBT_DF_FORM_EXEC)
		return df_fail(p, in->line,
			       "SHELL requires the arguments to be in JSON form: "
			       "SHELL [\"executable\", \"parameters\"]");
	if (in->argc == 0)
		return df_fail(p, in->line, "SHELL requires at least one argument");
	return 0;
}

/* The from= of a --mount value (comma-separated, "..." fields), copied; NULL if none. */
static const char *mount_from(struct df_parser *p, const char *v, bool *failed)
{
	const char *from = NULL;

	while (*v) {
		size_t fl = 0;

		if (*v == '"') {
			for (v++; *v && !(v[0] == '"' && v[1] != '"'); v++) {
				v += v[0] == '"'; /* "" is a quote */
				p->name[fl++] = *v;
			}
			v += *v == '"';
		}
		for (; *v && *v != ','; v++)
			p->name[fl++] = *v;
		v += *v == ',';
		if (fl > 5 && !strncasecmp(p->name, "from=", 5)) {
			from = df_strndup(p, p->name + 5, fl - 5);
			*failed |= !from;
		}
	}
	return from;
}

/* COPY --from=X and RUN --mount=...,from=X into in->sources. */
static int take_sources(struct df_parser *p, struct sbt_df_instr *in, bool run)
{
	const char *src[SBT_DF_MAX_FLAGS];
	bool failed = false;
	int nr = 0;

	for (int i = 0; i < in->nr_flags; i++) {
		const char *v = sbt_df_flag_value(in->flags[i], run ? "mount" : "from");

		if (v && run)
			v = mount_from(p, v, &failed);
		if (v && v[0])
			src[nr++] = v;
	}
	in->sources = arena_ptrs(p, src, nr);
	in->nr_sources = nr;
	return in->sources && !failed ? 0 : df_oom(p);
}

static bool heredoc_keyword(const char *s, size_t n)
{
	return df_word_is(s, n, "RUN") || df_word_is(s, n, "COPY") || df_word_is(s, n, "ADD");
}

/* 1 when ONBUILD's instruction takes heredocs (RUN, COPY, ADD, not in JSON form), -1 error. */
static int onbuild_heredocs(struct df_parser *p, const struct sbt_df_instr *in)
{
	struct df_words it = {
		.s = in->args, .n = in->args_len, .esc = p->df->escape, .w = p->word
	};
	const char *const *argv;
	int argc, rc;

	while (it.pos < it.n && !df_is_space(it.s[it.pos]))
		it.pos++;
	if (!heredoc_keyword(it.s, it.pos))
		return 0;
	while (df_next_flag(&it))
		;
	rc = json_array(p, in->line, it.s + it.pos, it.n - it.pos, &argv, &argc);
	return rc < 0 ? -1 : rc == 0;
}

/* Read the body of hd: the lines up to its terminator. */
static int heredoc_body(struct df_parser *p, const struct sbt_df_instr *in,
			struct sbt_df_heredoc *hd)
{
	size_t start = p->pos, nl = strlen(hd->name), line_start;
	char q[DF_SHOWN_MAX + 4];
	const char *s;
	size_t n;

	for (;;) {
		line_start = p->pos;
		if (!next_line(p, &s, &n))
			return df_fail(
				p, in->line,
				"unterminated heredoc <<%s: end it with a line holding just %s",
				DF_SHOWN(q, hd->name, nl), q);
		while (hd->chomp && n && s[0] == '\t') {
			s++;
			n--;
		}
		if (n == nl && memcmp(s, hd->name, n) == 0)
			break;
	}
	hd->body_len = line_start - start;
	hd->body = df_strndup(p, p->buf + start, hd->body_len);
	return hd->body ? 0 : df_oom(p);
}

/* BuildKit: every `<<WORD` word of the line starts a heredoc, read in order. */
static int heredocs(struct df_parser *p, struct sbt_df_instr *in, const char *line, size_t n)
{
	struct df_words it = { .s = line, .n = n, .esc = '\\', .w = p->word };
	struct sbt_df_heredoc hd[SBT_DF_MAX_HEREDOCS], *copy;
	int nr = 0;

	if (!memmem(line, n, "<<", 2))
		return 0;
	while (df_next_shell_word(&it)) {
		bool chomp, quoted;

		if (!df_heredoc_word(it.w, it.wl, p->name, &chomp, &quoted))
			continue;
		if (nr == SBT_DF_MAX_HEREDOCS)
			return df_fail(p, in->line, "more than %d heredocs on one instruction",
				       SBT_DF_MAX_HEREDOCS);
		hd[nr] = (struct sbt_df_heredoc){ .chomp = chomp, .quoted = quoted };
		hd[nr].name = df_strndup(p, p->name, strlen(p->name));
		if (!hd[nr++].name)
			return df_oom(p);
	}
	if (it.failed || nr == 0)
		return 0; /* a quote left open: BuildKit sees no heredoc on the line */
	for (int i = 0; i < nr; i++) {
		if (heredoc_body(p, in, &hd[i]) < 0)
			return -1;
	}
	copy = df_alloc(p, sizeof(hd[0]) * (size_t)nr);
	if (!copy)
		return df_oom(p);
	memcpy(copy, hd, sizeof(hd[0]) * (size_t)nr);
	in->heredocs = copy;
	in->nr_heredocs = nr;
	return 0;
}

/* --- one instruction ---------------------------------------------------------- */

/* What the keyword asks for beyond keyword, flags and arguments. */
static int dispatch(struct df_parser *p, struct sbt_df_instr *in, bool *json)
{
	const char *kw = in->keyword;
	const char *const *argv;
	int argc, rc = 0;

	if (!strcmp(kw, "FROM"))
		return df_from(p, in);
	if (in->stage < 0 && strcmp(kw, "ARG") != 0)
		return df_fail(p, in->line,
			       "%s before the first FROM: only ARG may come before it (no build "
			       "stage in current context)",
			       in->keyword);
	if (!strcmp(kw, "ARG"))
		return in->stage < 0 ? df_global_args(p, in) : 0;
	if (!strcmp(kw, "RUN") || !strcmp(kw, "CMD") || !strcmp(kw, "ENTRYPOINT"))
		rc = command_form(p, in, in->args, in->args_len);
	else if (!strcmp(kw, "SHELL"))
		rc = shell_instr(p, in);
	else if (!strcmp(kw, "HEALTHCHECK"))
		rc = healthcheck(p, in);
	else if (!strcmp(kw, "COPY") || !strcmp(kw, "ADD") || !strcmp(kw, "VOLUME"))
		rc = json_array(p, in->line, in->args, in->args_len, &argv, &argc);
	if (rc < 0)
		return -1;
	*json = in->form == SBT_DF_FORM_EXEC || rc == 1;
	if (!strcmp(kw, "COPY") || !strcmp(kw, "RUN"))
		return take_sources(p, in, kw[0] == 'R');
	return 0;
}

static int instruction(struct df_parser *p, const char *line, size_t n, unsigned int first)
{
	struct sbt_df_instr *in;
	size_t k = 0, rest = 0, e;
	bool json = false;
	int hd;
	char *kw;

	while (n && df_is_space(line[n - 1]))
		n--;
	while (k < n && df_is_space(line[k]))
		k++;
	line += k;
	n -= k;
	if (n == 0)
		return 0; /* only an escape, continued to nothing */
	for (k = 0; k < n && !df_is_space(line[k]);)
		k++;
	in = new_instr(p, first);
	if (!in)
		return -1;
	in->keyword = kw = df_strndup(p, line, k);
	if (!kw)
		return df_oom(p);
	for (size_t i = 0; i < k; i++)
		kw[i] = kw[i] >= 'a' && kw[i] <= 'z' ? (char)(kw[i] - 'a' + 'A') : kw[i];
	if (take_flags(p, in, line + k, n - k, &rest) < 0)
		return -1;
	for (rest += k, e = n; rest < e && df_is_space(line[rest]);)
		rest++;
	in->args_len = e - rest;
	in->args = df_strndup(p, line + rest, in->args_len);
	if (!in->args)
		return df_oom(p);
	if (dispatch(p, in, &json) < 0)
		return -1;
	hd = !strcmp(kw, "ONBUILD") ? onbuild_heredocs(p, in) : heredoc_keyword(kw, k) && !json;
	if (hd < 0 || (hd && heredocs(p, in, line, n) < 0))
		return -1;
	in->end_line = p->line;
	if (in->stage >= 0 && strcmp(kw, "FROM") != 0)
		p->df->stages[in->stage].nr_instrs++;
	return 0;
}

/* Physical lines into instructions: directives first, then continuations joined. */
static int parse_lines(struct df_parser *p)
{
	const char *s;
	size_t n;

	while (next_line(p, &s, &n)) {
		unsigned int first = p->line;
		size_t i = 0, ll;
		bool cont;

		while (i < n && df_is_space(s[i]))
			i++;
		s += i;
		n -= i;
		if (!p->directives_done) {
			int rc = directive(p, s, n);

			if (rc < 0)
				return -1;
			if (rc > 0)
				continue;
			p->directives_done = true;
		}
		if (n == 0 || s[0] == '#')
			continue;
		cont = continues(s, &n, p->df->escape);
		memcpy(p->logical, s, n);
		ll = n;
		while (cont && next_line(p, &s, &n)) {
			for (i = 0; i < n && df_is_space(s[i]);)
				i++;
			if (i == n || s[i] == '#')
				continue; /* blank and comment lines inside are dropped */
			cont = continues(s, &n, p->df->escape);
			memcpy(p->logical + ll, s, n);
			ll += n;
		}
		p->logical[ll] = '\0';
		if (instruction(p, p->logical, ll, first) < 0)
			return -1;
	}
	return 0;
}

/* --- parse ------------------------------------------------------------------ */

static int check_input(struct df_parser *p)
{
	const char *nul = memchr(p->buf, '\0', p->len);
	char q[DF_SHOWN_MAX + 4];
	int nr = 0;

	if (p->len > SBT_DF_MAX_BYTES)
		return df_fail(p, 0, "larger than %u KiB; refusing to parse it",
			       SBT_DF_MAX_BYTES >> 10);
	if (nul)
		return df_fail(p, count_lines(p->buf, (size_t)(nul - p->buf) + 1),
			       "a NUL byte: a Dockerfile is text");
	for (const char *const *b = p->build_args; b && *b; b++, nr++) {
		const char *eq = strchr(*b, '=');

		if (nr == SBT_DF_MAX_BUILD_ARGS)
			return df_fail(p, 0, "more than %d build args", SBT_DF_MAX_BUILD_ARGS);
		if (!eq || eq == *b)
			return df_fail(p, 0, "build arg '%s': give it as NAME=VALUE",
				       DF_SHOWN(q, *b, strlen(*b)));
	}
	return 0;
}

int sbt_dockerfile_parse(const char *buf, size_t len, const char *const *build_args,
			 struct sbt_dockerfile *df, struct sbt_df_error *err)
{
	struct df_parser p = {
		.df = df, .err = err, .buf = buf, .len = len, .build_args = build_args
	};
	json_tokener *tok = NULL;
	char *scratch = NULL;
	int rc = -1;

	memset(df, 0, sizeof(*df));
	df->escape = '\\';
	if (err)
		*err = (struct sbt_df_error){ 0 };
	if (!buf && len)
		return df_fail(&p, 0, "no buffer to parse");
	p.buf = buf ? buf : "";
	if (check_input(&p) < 0)
		return -1;
	/* one block for the scratch buffers; locals keep what is freed in sight */
	scratch = malloc(3 * (len + 1) + SBT_DF_MAX_VALUE + 1);
	tok = json_tokener_new_ex(JSON_DEPTH);
	if (!scratch || !tok) {
		df_oom(&p);
		goto out;
	}
	p.logical = scratch;
	p.word = scratch + len + 1;
	p.name = scratch + 2 * (len + 1);
	p.value = scratch + 3 * (len + 1);
	p.tok = tok;
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	df->nr_lines = count_lines(p.buf, len);
	if (len >= 3 && memcmp(p.buf, "\xef\xbb\xbf", 3) == 0)
		p.pos = 3; /* a UTF-8 byte order mark */
	rc = parse_lines(&p);
out:
	free(scratch);
	if (tok)
		json_tokener_free(tok);
	if (rc < 0)
		sbt_dockerfile_free(df);
	return rc;
}

void sbt_dockerfile_free(struct sbt_dockerfile *df)
{
	if (!df)
		return;
	df_mem_free(df->mem);
	free(df->instrs);
	free(df->stages);
	free(df->args);
	memset(df, 0, sizeof(*df));
	df->escape = '\\';
}
