/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Internal to the Dockerfile parser (see context.h): BuildKit's word lexers
 * over one instruction's text (never past `n` bytes), its `$` substitution,
 * and the character classes they go by.
 */
#ifndef SBT_DF_WORDS_H
#define SBT_DF_WORDS_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <strings.h>

static inline bool df_is_alpha(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static inline bool df_is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* s[0..n) is `word`, ignoring case. */
static inline bool df_word_is(const char *s, size_t n, const char *word)
{
	return strlen(word) == n && strncasecmp(s, word, n) == 0;
}

/* ASCII white space (BuildKit's unicode.IsSpace, less the non-ASCII ones). */
static inline bool df_is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

/* A walk over the words of s[0..n); each word lands in w (room for n + 1 bytes). */
struct df_words {
	const char *s;
	size_t n, pos;
	char esc;
	char *w;
	size_t wl;
	bool failed; /* df_next_shell_word: a quote or ${ is not closed */
};

/*
 * The next leading --flag word (BuildKit's extractBuilderFlags: quotes
 * removed, the escape character escapes). False at the first word that is
 * not a flag, or after a lone "--", with pos where the arguments start.
 */
bool df_next_flag(struct df_words *it);

/* The next blank-separated word, quotes and escapes kept (BuildKit's parseWords). */
bool df_next_word(struct df_words *it);

/*
 * The next word as BuildKit's heredoc scan sees it: quotes and backslash
 * escapes kept, `<<` takes the blanks after it. False at the end, or with
 * `failed` set when a quote is not closed (then the line has no heredoc).
 */
bool df_next_shell_word(struct df_words *it);

/*
 * A heredoc word `[digits]<<[-][blanks]NAME`: true with NAME (quotes
 * removed, one word) in name (room for wl + 1 bytes).
 */
bool df_heredoc_word(const char *w, size_t wl, char *name, bool *chomp, bool *quoted);

/* Why a variable has no value. */
enum df_unset {
	DF_SET = 0,
	DF_NO_DEFAULT, /* ARG NAME, no default, not passed */
	DF_UNDECLARED, /* no global ARG of that name */
	DF_AUTOMATIC,  /* BuildKit's TARGETARCH & co, not passed */
};

struct df_value {
	const char *value;   /* NULL unless DF_SET */
	const char *partial; /* DF_SET: why the value itself is partial, or NULL */
	enum df_unset unset;
};

typedef struct df_value (*df_lookup_fn)(void *ctx, const char *name, size_t len);

/*
 * BuildKit's ProcessWord over s[0..n): quotes removed, escapes applied,
 * $NAME ${NAME} ${NAME:-w} ${NAME-w} ${NAME:+w} ${NAME+w} ${NAME:?w}
 * ${NAME?w} expanded through lookup. The result (at most SBT_DF_MAX_VALUE
 * bytes) goes to out, NUL-terminated.
 */
struct df_subst {
	const char *s;
	size_t n, pos;
	char esc;
	df_lookup_fn lookup;
	void *ctx;
	char *out; /* SBT_DF_MAX_VALUE + 1 bytes */
	size_t len;
	char why[128]; /* "" or the first reason the result is partial */
	char err[160]; /* set when df_subst fails */
	int depth;
};

/* 0, or -1 with sb->err (bad syntax, ${X?}, too long). */
int df_subst(struct df_subst *sb);

#endif
