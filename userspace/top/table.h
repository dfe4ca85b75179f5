/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * `sbtrace top`'s table, pure (no terminal, no socket): a scrape's text
 * into a sample by metrics.h's families, the rates of two samples, the
 * rows in order, and each line laid out for a terminal's width. Every
 * column is kept: the name gives way first, elided in its middle. A name
 * is its sandbox's to choose, so every byte of it outside printable ASCII
 * is written \xNN (and '\' as \\): none reaches the terminal raw.
 */
#ifndef SBT_TOP_TABLE_H
#define SBT_TOP_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Below this many columns the rightmost ones are cut; at it and above, all are shown. */
#define SBT_TOP_MIN_WIDTH 64
/* A line of the table: a row's bytes, with room for the ellipsis' UTF-8. */
#define SBT_TOP_LINE_MAX 4096

struct sbt_top_sandbox {
	char *name; /* as its label has it (escapes undone): any bytes */
	char source[16];
	bool live; /* its sbtrace_sandbox_info is there: traced now */
	double execs, shells, allowed, denied, lost;
	double execs_rate;
};

struct sbt_top_prog {
	char *name;
	double seconds, runs;
	double ns_per_run, runs_rate;
};

/* The host's counters (no sandbox label): what outlives short sandboxes. */
struct sbt_top_host {
	double execs, shells, allowed, denied, lost;
	double execs_rate;
};

struct sbt_top_sample {
	struct sbt_top_sandbox *sb; /* every sandbox of the scrape, live or retained */
	size_t nr_sb, cap_sb;
	size_t *slots; /* names hashed: index + 1 into sb, 0 free; nr_slots a power of two */
	size_t nr_slots;
	struct sbt_top_prog *prog;
	size_t nr_prog, cap_prog;
	struct sbt_top_host host;
	double sandboxes;  /* sbtrace_sandboxes */
	double start_time; /* sbtrace_start_time_seconds: another, another agent (counters anew) */
	uint64_t at_ms;
	/* sbt_top_order()'s: the live sandboxes in order (indexes into sb); programs costliest first */
	size_t *rows;
	size_t nr_rows;
};

/* The i-th row (i < nr_rows). */
static inline const struct sbt_top_sandbox *sbt_top_row_at(const struct sbt_top_sample *s, size_t i)
{
	return &s->sb[s->rows[i]];
}

enum sbt_top_sort {
	SBT_TOP_SORT_EXECS,
	SBT_TOP_SORT_SHELLS,
	SBT_TOP_SORT_DENIED,
	SBT_TOP_SORT_LOST,
	SBT_TOP_SORT_NAME,
	SBT_TOP_SORT__MAX,
};

/* "execs", "shells", ... by enum sbt_top_sort. */
extern const char *const sbt_top_sort_names[SBT_TOP_SORT__MAX];

/*
 * The metrics text (`text`, changed: lines cut) into s, emptied first (its
 * memory kept for the next). 0, or -ENOMEM (s holds what was parsed).
 */
int sbt_top_parse(struct sbt_top_sample *s, char *text, uint64_t at_ms);
void sbt_top_sample_free(struct sbt_top_sample *s);
/* Swap two samples (the newest becomes the one the next is measured against). */
void sbt_top_sample_swap(struct sbt_top_sample *a, struct sbt_top_sample *b);
/*
 * now's rates against the earlier prev: per second, 0 when prev is
 * another agent's (a restart: counters begin anew) or a counter went down.
 */
void sbt_top_rates(const struct sbt_top_sample *prev, struct sbt_top_sample *now);
/* rows: the live sandboxes by `by` (then name); the programs by CPU per second. 0/-ENOMEM. */
int sbt_top_order(struct sbt_top_sample *s, enum sbt_top_sort by);

/*
 * `in` with every byte outside printable ASCII as \xNN and '\' as \\, into
 * out (len > 0; an escape never cut in two). Its length.
 */
size_t sbt_top_escape(char *out, size_t len, const char *in);
/*
 * `in` (printable ASCII, escaped) in at most `width` columns: as it is when
 * it fits, else a third of its head, `ellipsis` (one column), the rest of
 * its tail; an escape kept whole or left out. Into out (len > 0).
 */
void sbt_top_elide(char *out, size_t len, const char *in, size_t width, const char *ellipsis);
/* v in at most `width` columns: `decimals` when they fit, else k/M/G/T..., else '*'s. */
void sbt_top_num(char *out, size_t len, double v, int decimals, size_t width);
/* Columns `s` takes on a terminal (UTF-8: continuation bytes take none). */
size_t sbt_top_columns(const char *s);
/* Cut `s` to at most `width` columns (a UTF-8 sequence kept whole). */
void sbt_top_clip(char *s, size_t width);

/* The widths of the table's columns for a terminal `width` wide (0: as wide as the rows need). */
struct sbt_top_layout {
	size_t width;
	size_t name_w, source_w;
	const char *ellipsis; /* "…" on a UTF-8 terminal, else "~" */
};

void sbt_top_layout(struct sbt_top_layout *l, const struct sbt_top_sample *s, size_t width,
		    const char *ellipsis);
/* The header's line, a row's, a program's (after sbt_top_order): at most l->width columns. */
void sbt_top_header(const struct sbt_top_layout *l, char *out, size_t len);
void sbt_top_row(const struct sbt_top_layout *l, const struct sbt_top_sandbox *r, char *out,
		 size_t len);
void sbt_top_prog_header(const struct sbt_top_layout *l, char *out, size_t len);
void sbt_top_prog_row(const struct sbt_top_layout *l, const struct sbt_top_prog *p, char *out,
		      size_t len);
/* "host: execs N (R/s)  shells N  egress allowed N denied N  lost N", clipped. */
void sbt_top_host_line(const struct sbt_top_layout *l, const struct sbt_top_host *h, char *out,
		       size_t len);

/* The first row shown of nr, `height` at a time, from a wished `first`: never past the end. */
size_t sbt_top_scroll(size_t first, size_t nr, size_t height);

#endif
