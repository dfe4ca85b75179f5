// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * What every part of the Dockerfile parser uses (see context.h): errors,
 * untrusted text shown in them, and the memory of the result: strings live
 * in chunks owned by it (df->mem), freed at once.
 */
#include "dockerfile/context.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK_SIZE (64u << 10)

struct df_chunk {
	struct df_chunk *next;
	size_t used, size;
	max_align_t data[];
};

static void verr(struct sbt_df_error *err, unsigned int line, const char *fmt, va_list ap)
{
	if (!err)
		return;
	err->line = line;
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
}

int df_error_at(struct sbt_df_error *err, unsigned int line, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verr(err, line, fmt, ap);
	va_end(ap);
	return -1;
}

int df_fail(struct df_parser *p, unsigned int line, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verr(p->err, line, fmt, ap);
	va_end(ap);
	return -1;
}

int df_oom(struct df_parser *p)
{
	return df_fail(p, p->line, "out of memory");
}

const char *df_shown(char *buf, size_t size, const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n && i < size - 4 && i < DF_SHOWN_MAX; i++)
		buf[i] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
	if (i < n) {
		memcpy(buf + i, "...", 3);
		i += 3;
	}
	buf[i] = '\0';
	return buf;
}

void *df_alloc(struct df_parser *p, size_t n)
{
	struct df_chunk *c = p->df->mem;
	void *ptr;

	n = (n + sizeof(max_align_t) - 1) & ~(sizeof(max_align_t) - 1);
	if (!c || c->size - c->used < n) {
		size_t size = n > CHUNK_SIZE ? n : CHUNK_SIZE;

		c = malloc(sizeof(*c) + size);
		if (!c)
			return NULL;
		c->next = p->df->mem;
		c->used = 0;
		c->size = size;
		p->df->mem = c;
	}
	ptr = (char *)c->data + c->used;
	c->used += n;
	return ptr;
}

char *df_strndup(struct df_parser *p, const char *s, size_t n)
{
	char *d = df_alloc(p, n + 1);

	if (d) {
		memcpy(d, s, n);
		d[n] = '\0';
	}
	return d;
}

void df_mem_free(void *mem)
{
	struct df_chunk *c, *next;

	for (c = mem; c; c = next) {
		next = c->next;
		free(c);
	}
}

/* Room for one more element in *arr (of cap *cap, at most max). */
int df_grow(struct df_parser *p, void **arr, int *cap, int nr, int max, size_t size)
{
	int ncap = *cap ? *cap * 2 : 16;
	void *n;

	if (nr < *cap)
		return 0;
	if (ncap > max)
		ncap = max;
	n = realloc(*arr, (size_t)ncap * size);
	if (!n)
		return df_oom(p);
	*arr = n;
	*cap = ncap;
	return 0;
}
