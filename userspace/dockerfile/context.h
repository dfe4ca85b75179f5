/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Internal to the Dockerfile parser (userspace/dockerfile/), not a public
 * API: one parse's state, its errors and the memory its result lives in.
 *
 * The room, bottom up; each file uses only those below it (and the public
 * model, dockerfile.h):
 *   context.c  the parse state (this header), errors, memory
 *   words.c    BuildKit's word lexers and `$` substitution (words.h)
 *   stage.c    FROM, the global ARGs, stage names (stage.h)
 *   parse.c    lines, directives, instructions: sbt_dockerfile_parse
 *   query.c    what a parsed file says (stages and images a build needs,
 *              what a container runs), and the bounded file reader
 *   confine.c  the RUN flags a host engine's build cannot confine
 */
#ifndef SBT_DF_CONTEXT_H
#define SBT_DF_CONTEXT_H

#include <stdbool.h>
#include <stddef.h>

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
/* Free the memory df_alloc gave a result (its df->mem), all at once. */
void df_mem_free(void *mem);

/* Room for element nr in *arr (capacity *cap, at most max); 0 or -1 (out of memory). */
int df_grow(struct df_parser *p, void **arr, int *cap, int nr, int max, size_t size);

#define DF_SHOWN_MAX 48 /* bytes of untrusted text in a message */

/* Untrusted text for a message: at most DF_SHOWN_MAX bytes, non-printable ones as '?'. */
const char *df_shown(char *buf, size_t size, const char *s, size_t n);

#define DF_SHOWN(q, s, n) df_shown(q, sizeof(q), s, n)

#endif
