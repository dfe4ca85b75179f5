/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Internal to the Dockerfile parser (userspace/dockerfile/), not a public API:
 * BuildKit's word lexers over one instruction's text (never past `n`
 * bytes), its `$` substitution, and the stage lookup the parser and the
 * queries share.
 */
#ifndef SBT_DOCKERFILE_INT_H
#define SBT_DOCKERFILE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <strings.h>

#include <json-c/json.h>

#include "dockerfile/dockerfile.h"

/* One parse: the input, where it is, and scratch space sized for it. */
struct df_parser {
	struct sbt_dockerfile *df;
	struct sbt_df_error *err;
	const char *buf;
	size_t len, pos;   /* the next physical line starts at pos */
	unsigned int line; /* the last physical line read */
	const char *const *build_args;
	char *logical; /* the instruction being joined: len + 1 bytes */
	char *word;    /* a word: len + 1 bytes */
	char *name;    /* a word taken from a word: len + 1 bytes */
	char *value;   /* a substitution: SBT_DF_MAX_VALUE + 1 bytes */
	json_tokener *tok;
	int cap_instrs, cap_stages;
	bool directives_done;
	unsigned int seen; /* directives seen, one bit each */
};

/* Set err (when not NULL; line 0: about no line); returns -1. */
int df_error_at(struct sbt_df_error *err, unsigned int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* df_error_at(p->err, ...). */
int df_fail(struct df_parser *p, unsigned int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int df_oom(struct df_parser *p);

/* Memory that lives as long as the result (df->mem); NULL when out of it. */
void *df_alloc(struct df_parser *p, size_t n);
char *df_strndup(struct df_parser *p, const char *s, size_t n);

/* Room for element nr in *arr (capacity *cap, at most max); 0 or -1 (out of memory). */
int df_grow(struct df_parser *p, void **arr, int *cap, int nr, int max, size_t size);

/* FROM (a new stage) and a global ARG (stage.c). */
int df_from(struct df_parser *p, struct sbt_df_instr *in);
int df_global_args(struct df_parser *p, const struct sbt_df_instr *in);

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

#define DF_SHOWN_MAX 48 /* bytes of untrusted text in a message */

/* Untrusted text for a message: at most DF_SHOWN_MAX bytes, non-printable ones as '?'. */
const char *df_shown(char *buf, size_t size, const char *s, size_t n);

#define DF_SHOWN(q, s, n) df_shown(q, sizeof(q), s, n)

/*
 * The stage among stages[0, before) that `ref` names: by name
 * (case-insensitive) or by its index in decimal. -1 when none.
 */
int df_stage_ref(const struct sbt_dockerfile *df, const char *ref, int before);

#endif
