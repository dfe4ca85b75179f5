// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * BuildKit's Dockerfile word lexers and `$` substitution, ported from
 * frontend/dockerfile/parser (extractBuilderFlags, parseWords, heredoc
 * words) and frontend/dockerfile/shell (lex.go), byte by byte: every read
 * is checked against n, every write against the output's size.
 */
#include "dockerfile/words.h"
#include "dockerfile/dockerfile.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static void skip_blanks(struct df_words *it)
{
	while (it->pos < it->n && df_is_space(it->s[it->pos]))
		it->pos++;
}

static void put(struct df_words *it, char c)
{
	it->w[it->wl++] = c;
}

bool df_next_flag(struct df_words *it)
{
	const char *s = it->s;
	size_t n = it->n, pos;
	char quote = 0;

	skip_blanks(it);
	pos = it->pos;
	if (pos + 1 >= n || s[pos] != '-' || s[pos + 1] != '-')
		return false;
	it->wl = 0;
	for (; pos < n; pos++) {
		char ch = s[pos];

		if (!quote && df_is_space(ch))
			break;
		if (quote && ch == quote) {
			quote = 0;
			continue;
		}
		if (!quote && (ch == '\'' || ch == '"')) {
			quote = ch;
			continue;
		}
		if (ch == it->esc) {
			if (pos + 1 == n) {
				quote = 0;
				continue; /* an escape at the end is dropped */
			}
			ch = s[++pos];
		}
		put(it, ch);
	}
	it->w[it->wl] = '\0';
	it->pos = pos;
	return !(it->wl == 2 && memcmp(it->w, "--", 2) == 0);
}

bool df_next_word(struct df_words *it)
{
	const char *s = it->s;
	size_t n = it->n, pos;
	char quote = 0;

	skip_blanks(it);
	it->wl = 0;
	for (pos = it->pos; pos < n; pos++) {
		char ch = s[pos];

		if (!quote && df_is_space(ch))
			break;
		if (quote && ch == quote) {
			quote = 0;
		} else if (!quote && (ch == '\'' || ch == '"')) {
			quote = ch;
		} else if (ch == it->esc && quote != '\'') {
			if (pos + 1 == n) {
				quote = 0;
				continue; /* an escape at the end is dropped */
			}
			put(it, ch);
			ch = s[++pos];
		}
		put(it, ch);
	}
	it->w[it->wl] = '\0';
	it->pos = pos;
	return it->wl > 0;
}

/* A quoted part, quotes kept: false when it is not closed. */
static bool shell_quoted(struct df_words *it)
{
	char q = it->s[it->pos];

	put(it, it->s[it->pos++]);
	while (it->pos < it->n && it->s[it->pos] != q) {
		if (q == '"' && it->s[it->pos] == '\\' && it->pos + 1 < it->n)
			put(it, it->s[it->pos++]);
		put(it, it->s[it->pos++]);
	}
	if (it->pos == it->n)
		return false;
	put(it, it->s[it->pos++]);
	return true;
}

bool df_next_shell_word(struct df_words *it)
{
	const char *s = it->s;

	skip_blanks(it);
	it->wl = 0;
	while (it->pos < it->n && !df_is_space(s[it->pos])) {
		char ch = s[it->pos];

		if (ch == '\'' || ch == '"') {
			if (!shell_quoted(it))
				goto unclosed;
		} else if (ch == '\\') {
			put(it, s[it->pos++]);
			if (it->pos < it->n)
				put(it, s[it->pos++]);
		} else if (ch == '<' && it->pos + 1 < it->n && s[it->pos + 1] == '<') {
			put(it, s[it->pos++]);
			put(it, s[it->pos++]);
			while (it->pos < it->n &&
			       (s[it->pos] == ' ' || s[it->pos] == '\t' || s[it->pos] == '\r'))
				put(it, s[it->pos++]);
		} else if (ch == '$' && it->pos + 1 < it->n && s[it->pos + 1] == '{') {
			while (it->pos < it->n && s[it->pos] != '}')
				put(it, s[it->pos++]);
			if (it->pos == it->n)
				goto unclosed;
			put(it, s[it->pos++]);
		} else {
			put(it, s[it->pos++]);
		}
	}
	it->w[it->wl] = '\0';
	return it->wl > 0;
unclosed:
	it->failed = true;
	return false;
}

/* Copy a quoted part of a heredoc name without its quotes; the index after it, or 0. */
static size_t name_quoted(const char *w, size_t i, size_t wl, char *name, size_t *nl)
{
	char q = w[i++];

	for (; i < wl && w[i] != q; i++) {
		if (q == '"' && w[i] == '\\' && i + 1 < wl &&
		    (w[i + 1] == '"' || w[i + 1] == '$' || w[i + 1] == '\\'))
			i++;
		name[(*nl)++] = w[i];
	}
	return i < wl ? i + 1 : 0;
}

bool df_heredoc_word(const char *w, size_t wl, char *name, bool *chomp, bool *quoted)
{
	size_t i = 0, nl = 0;
	bool ended = false;

	while (i < wl && w[i] >= '0' && w[i] <= '9')
		i++;
	if (i + 2 > wl || w[i] != '<' || w[i + 1] != '<')
		return false;
	i += 2;
	*chomp = i < wl && w[i] == '-';
	i += *chomp;
	while (i < wl && df_is_space(w[i]) && w[i] != '\v')
		i++;
	if (i == wl || memchr(w + i, '<', wl - i))
		return false;
	*quoted = false;
	while (i < wl) {
		if (df_is_space(w[i])) {
			ended = nl > 0;
			i++;
			continue;
		}
		if (ended)
			return false; /* a second word */
		if (w[i] == '\'' || w[i] == '"') {
			*quoted = true;
			i = name_quoted(w, i, wl, name, &nl);
			if (!i)
				return false;
			continue;
		}
		if (w[i] == '\\' && ++i == wl)
			break;
		name[nl++] = w[i++];
	}
	name[nl] = '\0';
	return nl > 0;
}

const char *sbt_df_flag_value(const char *flag, const char *name)
{
	size_t n = strlen(name);

	if (strncmp(flag, "--", 2) != 0 || strncmp(flag + 2, name, n) != 0)
		return NULL;
	if (flag[2 + n] == '\0')
		return flag + 2 + n;
	return flag[2 + n] == '=' ? flag + 3 + n : NULL;
}

/* --- substitution ------------------------------------------------------- */

static int fail(struct df_subst *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int fail(struct df_subst *sb, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(sb->err, sizeof(sb->err), fmt, ap);
	va_end(ap);
	return -1;
}

static int out(struct df_subst *sb, const char *s, size_t n)
{
	if (n > SBT_DF_MAX_VALUE - sb->len)
		return fail(sb, "longer than %u bytes after ARG substitution", SBT_DF_MAX_VALUE);
	memcpy(sb->out + sb->len, s, n);
	sb->len += n;
	sb->out[sb->len] = '\0';
	return 0;
}

/* Remember the first reason the result is partial. */
static void note(struct df_subst *sb, const char *name, size_t n, const struct df_value *v)
{
	static const char *const fmt[] = {
		[DF_NO_DEFAULT] = "%.*s has no default",
		[DF_UNDECLARED] = "%.*s is not a global ARG (declare it before the first FROM)",
		[DF_AUTOMATIC] = "%.*s is set by the builder (pass it as a build arg)",
	};

	if (sb->why[0])
		return;
	if (v->unset != DF_SET)
		snprintf(sb->why, sizeof(sb->why), fmt[v->unset], (int)(n > 64 ? 64 : n), name);
	else if (v->partial)
		snprintf(sb->why, sizeof(sb->why), "%s", v->partial);
}

/* A variable name: digits, one special character, or [A-Za-z0-9_]*. */
static size_t name_len(const struct df_subst *sb)
{
	const char *s = sb->s + sb->pos;
	size_t i = 0, left = sb->n - sb->pos;

	if (left && s[0] >= '0' && s[0] <= '9') {
		while (i < left && s[i] >= '0' && s[i] <= '9')
			i++;
		return i;
	}
	if (left && s[0] && strchr("@*#?-$!", s[0]))
		return 1;
	while (i < left && ((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
			    (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
		i++;
	return i;
}

/* The variable's value (empty when unset) appended; a missing value noted. */
static int value(struct df_subst *sb, const char *name, size_t n, const struct df_value *v)
{
	note(sb, name, n, v);
	return v->value ? out(sb, v->value, strlen(v->value)) : 0;
}

static int until(struct df_subst *sb, char stop, bool raw_escapes);

/* ${NAME<op>word}: op is - + ? % # (after an optional ':'). */
static int modifier(struct df_subst *sb, const char *name, size_t n, char op, bool colon)
{
	size_t mark = sb->len;
	bool noted = sb->why[0] != '\0', unset;
	struct df_value v;

	if (!strchr("-+?%#", op) || (colon && (op == '%' || op == '#')))
		return fail(sb, "unsupported modifier (%s%c) in substitution", colon ? ":" : "",
			    op);
	if (++sb->depth > SBT_DF_MAX_NESTING)
		return fail(sb, "substitutions nested more than %d deep", SBT_DF_MAX_NESTING);
	if (until(sb, '}', op == '%' || op == '#') < 0)
		return -1;
	sb->depth--;
	v = sb->lookup(sb->ctx, name, n);
	unset = !v.value || (colon && !v.value[0]);
	if (op == '?' && unset)
		return fail(sb, "%.*s: %s", (int)(n > 64 ? 64 : n), name,
			    mark < sb->len ? sb->out + mark
					   : "is not allowed to be unset or empty");
	if ((op == '-' && unset) || (op == '+' && !unset))
		return 0; /* the word stays */
	sb->len = mark;	  /* the word goes, and what it noted */
	sb->out[mark] = '\0';
	if (!noted)
		sb->why[0] = '\0';
	if (op == '+')
		return 0;
	if ((op == '%' || op == '#') && !sb->why[0])
		snprintf(sb->why, sizeof(sb->why), "${%.*s%c...} is not supported here",
			 (int)(n > 64 ? 64 : n), name, op);
	return value(sb, name, n, &v);
}

/* ${...}: at the '{'. */
static int braces(struct df_subst *sb)
{
	const char *name;
	size_t n;
	char ch;

	sb->pos++;
	if (sb->pos == sb->n)
		return fail(sb, "syntax error: missing '}'");
	if (strchr("{}:", sb->s[sb->pos]))
		return fail(sb, "syntax error: bad substitution");
	name = sb->s + sb->pos;
	n = name_len(sb);
	sb->pos += n;
	if (sb->pos == sb->n)
		return fail(sb, "syntax error: missing '}'");
	ch = sb->s[sb->pos++];
	if (ch == '}') {
		struct df_value v = sb->lookup(sb->ctx, name, n);

		return value(sb, name, n, &v);
	}
	if (ch == ':') {
		if (sb->pos == sb->n)
			return fail(sb, "syntax error: missing '}'");
		return modifier(sb, name, n, sb->s[sb->pos++], true);
	}
	if (ch == '/') { /* ${NAME/pattern/replacement}: consumed, not applied */
		size_t mark = sb->len;

		if (until(sb, '}', true) < 0)
			return -1;
		sb->len = mark;
		sb->out[mark] = '\0';
		if (!sb->why[0])
			snprintf(sb->why, sizeof(sb->why), "${%.*s/...} is not supported here",
				 (int)(n > 64 ? 64 : n), name);
		return 0;
	}
	return modifier(sb, name, n, ch, false);
}

static int dollar(struct df_subst *sb)
{
	const char *name;
	size_t n;
	struct df_value v;

	sb->pos++;
	if (sb->pos < sb->n && sb->s[sb->pos] == '{')
		return braces(sb);
	name = sb->s + sb->pos;
	n = name_len(sb);
	if (n == 0)
		return out(sb, "$", 1);
	sb->pos += n;
	v = sb->lookup(sb->ctx, name, n);
	return value(sb, name, n, &v);
}

static int single_quoted(struct df_subst *sb)
{
	size_t start = ++sb->pos;

	while (sb->pos < sb->n && sb->s[sb->pos] != '\'')
		sb->pos++;
	if (sb->pos == sb->n)
		return fail(sb, "unexpected end of statement while looking for matching "
				"single-quote");
	sb->pos++;
	return out(sb, sb->s + start, sb->pos - 1 - start);
}

static int double_quoted(struct df_subst *sb)
{
	sb->pos++;
	for (;;) {
		char ch;

		if (sb->pos == sb->n)
			return fail(sb, "unexpected end of statement while looking for matching "
					"double-quote");
		ch = sb->s[sb->pos];
		if (ch == '"') {
			sb->pos++;
			return 0;
		}
		if (ch == '$') {
			if (dollar(sb) < 0)
				return -1;
			continue;
		}
		sb->pos++;
		if (ch == sb->esc) {
			if (sb->pos == sb->n)
				continue;
			if (strchr("\"$", sb->s[sb->pos]) || sb->s[sb->pos] == sb->esc)
				ch = sb->s[sb->pos++];
		}
		if (out(sb, &ch, 1) < 0)
			return -1;
	}
}

/* BuildKit's processStopOn: up to `stop` (consumed), or the end when stop is 0. */
static int until(struct df_subst *sb, char stop, bool raw_escapes)
{
	while (sb->pos < sb->n) {
		char ch = sb->s[sb->pos];
		int rc = 0;

		if (stop && ch == stop) {
			sb->pos++;
			return 0;
		}
		if (ch == '$' || ch == '\'' || ch == '"') {
			rc = ch == '$'	 ? dollar(sb)
			     : ch == '"' ? double_quoted(sb)
					 : single_quoted(sb);
			if (rc < 0)
				return -1;
			continue;
		}
		sb->pos++;
		if (ch == sb->esc) {
			if (raw_escapes && out(sb, &ch, 1) < 0)
				return -1;
			if (sb->pos == sb->n)
				break;
			ch = sb->s[sb->pos++];
		}
		if (out(sb, &ch, 1) < 0)
			return -1;
	}
	return stop ? fail(sb, "syntax error: missing '}'") : 0;
}

int df_subst(struct df_subst *sb)
{
	sb->pos = 0;
	sb->len = 0;
	sb->out[0] = '\0';
	sb->why[0] = '\0';
	sb->err[0] = '\0';
	sb->depth = 0;
	return until(sb, 0, false);
}
