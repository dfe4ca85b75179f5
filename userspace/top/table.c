// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* `sbtrace top`'s table (table.h). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "event/metrics.h"
#include "top/table.h"

const char *const sbt_top_sort_names[SBT_TOP_SORT__MAX] = {
	[SBT_TOP_SORT_EXECS] = "execs",	  [SBT_TOP_SORT_SHELLS] = "shells",
	[SBT_TOP_SORT_DENIED] = "denied", [SBT_TOP_SORT_LOST] = "lost",
	[SBT_TOP_SORT_NAME] = "name",
};

/* ---- a scrape into a sample ------------------------------------------------ */

/* The labels top reads, of one sample line. */
struct labels {
	char sandbox[PATH_MAX + 1];
	char source[16], verdict[16];
	char program[256];
};

/* A label's key at *p, *p moved to its value. false at the end. */
static bool label_key(const char **p, char *key, size_t klen)
{
	const char *q = *p;
	size_t k = 0;

	while (*q == ',' || *q == ' ')
		q++;
	for (; *q && *q != '=' && *q != '}'; q++)
		if (k + 1 < klen)
			key[k++] = *q;
	key[k] = '\0';
	if (q[0] != '=' || q[1] != '"')
		return false;
	*p = q + 2;
	return true;
}

/* The value at *p (escapes undone, cut to vlen), *p moved past its '"'. false: unterminated. */
static bool label_value(const char **p, char *val, size_t vlen)
{
	const char *q = *p;
	size_t v = 0;

	for (; *q && *q != '"'; q++) {
		char c = *q;

		if (c == '\\' && q[1])
			c = *++q == 'n' ? '\n' : *q;
		if (v + 1 < vlen)
			val[v++] = c;
	}
	val[v] = '\0';
	*p = q + (*q == '"');
	return *q == '"';
}

static void parse_labels(const char *p, struct labels *l)
{
	char key[32], other[8];

	while (label_key(&p, key, sizeof(key))) {
		char *dst = other;
		size_t len = sizeof(other);

		if (strcmp(key, "sandbox") == 0)
			dst = l->sandbox, len = sizeof(l->sandbox);
		else if (strcmp(key, "source") == 0)
			dst = l->source, len = sizeof(l->source);
		else if (strcmp(key, "verdict") == 0)
			dst = l->verdict, len = sizeof(l->verdict);
		else if (strcmp(key, "program") == 0)
			dst = l->program, len = sizeof(l->program);
		if (!label_value(&p, dst, len))
			return;
	}
}

static uint64_t name_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

/* The slot of `name`: its row's, or the free one it would take. */
static size_t *slot_of(const struct sbt_top_sample *s, const char *name)
{
	size_t mask = s->nr_slots - 1, i = (size_t)name_hash(name) & mask;

	while (s->slots[i] && strcmp(s->sb[s->slots[i] - 1].name, name) != 0)
		i = (i + 1) & mask;
	return &s->slots[i];
}

static const struct sbt_top_sandbox *sb_find(const struct sbt_top_sample *s, const char *name)
{
	size_t *slot = s->nr_slots ? slot_of(s, name) : NULL;

	return slot && *slot ? &s->sb[*slot - 1] : NULL;
}

/* Twice the slots, every row hashed again. 0 or -ENOMEM. */
static int grow_slots(struct sbt_top_sample *s)
{
	size_t n = s->nr_slots ? s->nr_slots * 2 : 256;
	size_t *slots = calloc(n, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	free(s->slots);
	s->slots = slots;
	s->nr_slots = n;
	for (size_t i = 0; i < s->nr_sb; i++)
		*slot_of(s, s->sb[i].name) = i + 1;
	return 0;
}

/* The row of sandbox `name`, made when new. NULL: out of memory. */
static struct sbt_top_sandbox *sb_get(struct sbt_top_sample *s, const char *name)
{
	struct sbt_top_sandbox *r;
	size_t *slot;

	if ((s->nr_sb + 1) * 2 > s->nr_slots && grow_slots(s))
		return NULL;
	slot = slot_of(s, name);
	if (*slot)
		return &s->sb[*slot - 1];
	if (s->nr_sb == s->cap_sb) {
		size_t cap = s->cap_sb ? s->cap_sb * 2 : 64;
		struct sbt_top_sandbox *nv = realloc(s->sb, cap * sizeof(*nv));

		if (!nv)
			return NULL;
		s->sb = nv;
		s->cap_sb = cap;
	}
	r = &s->sb[s->nr_sb];
	memset(r, 0, sizeof(*r));
	r->name = strdup(name);
	if (!r->name)
		return NULL;
	*slot = ++s->nr_sb;
	return r;
}

static struct sbt_top_prog *prog_get(struct sbt_top_sample *s, const char *name)
{
	struct sbt_top_prog *p;

	for (size_t i = 0; i < s->nr_prog; i++)
		if (strcmp(s->prog[i].name, name) == 0)
			return &s->prog[i];
	if (s->nr_prog == s->cap_prog) {
		size_t cap = s->cap_prog ? s->cap_prog * 2 : 16;
		struct sbt_top_prog *nv = realloc(s->prog, cap * sizeof(*nv));

		if (!nv)
			return NULL;
		s->prog = nv;
		s->cap_prog = cap;
	}
	p = &s->prog[s->nr_prog];
	memset(p, 0, sizeof(*p));
	p->name = strdup(name);
	if (!p->name)
		return NULL;
	s->nr_prog++;
	return p;
}

/* A verdict's count into allowed or denied (observed: neither). */
static void add_verdict(double *allowed, double *denied, const char *verdict, double x)
{
	if (strcmp(verdict, "allowed") == 0)
		*allowed += x;
	else if (strcmp(verdict, "denied") == 0)
		*denied += x;
}

/* A per-sandbox family's sample into its sandbox's row. 0 or -ENOMEM. */
static int parse_sandbox(struct sbt_top_sample *s, enum sbt_metric m, const struct labels *l,
			 double x)
{
	struct sbt_top_sandbox *r;

	if (!l->sandbox[0])
		return 0;
	r = sb_get(s, l->sandbox);
	if (!r)
		return -ENOMEM;
	switch (m) {
	case SBT_METRIC_SANDBOX_INFO:
		r->live = true;
		snprintf(r->source, sizeof(r->source), "%s", l->source);
		break;
	case SBT_METRIC_SANDBOX_EXECS:
		r->execs = x;
		break;
	case SBT_METRIC_SANDBOX_EVENTS_LOST:
		r->lost += x;
		break;
	case SBT_METRIC_SHELL_INVOCATIONS:
		r->shells += x;
		break;
	case SBT_METRIC_EGRESS_VERDICTS:
		add_verdict(&r->allowed, &r->denied, l->verdict, x);
		break;
	default:
		break;
	}
	return 0;
}

/* A host family's sample (or a run-time one top shows). 0 or -ENOMEM. */
static int parse_host(struct sbt_top_sample *s, enum sbt_metric m, const struct labels *l, double x)
{
	struct sbt_top_prog *p;

	switch (m) {
	case SBT_METRIC_SANDBOXES:
		s->sandboxes = x;
		break;
	case SBT_METRIC_START_TIME:
		s->start_time = x;
		break;
	case SBT_METRIC_BPF_RUNS:
	case SBT_METRIC_BPF_RUN_SECONDS:
		p = prog_get(s, l->program);
		if (!p)
			return -ENOMEM;
		*(m == SBT_METRIC_BPF_RUNS ? &p->runs : &p->seconds) = x;
		break;
	case SBT_METRIC_EXECS:
		s->host.execs = x;
		break;
	case SBT_METRIC_SHELLS:
		s->host.shells += x;
		break;
	case SBT_METRIC_EGRESS:
		add_verdict(&s->host.allowed, &s->host.denied, l->verdict, x);
		break;
	case SBT_METRIC_EVENTS_LOST:
		s->host.lost += x;
		break;
	default:
		break;
	}
	return 0;
}

/* One line "name{labels} value": its family's. 0 or -ENOMEM. */
static int parse_line(struct sbt_top_sample *s, char *line, struct labels *l)
{
	char *p = line + strcspn(line, "{ "), *end;
	enum sbt_metric m;
	double x;

	if (line[0] == '#' || !*p)
		return 0;
	l->sandbox[0] = l->source[0] = l->verdict[0] = l->program[0] = '\0';
	if (*p == '{') {
		*p++ = '\0';
		parse_labels(p, l);
		/* the value after the closing brace: a label value may hold '}' and ' ' */
		for (bool quoted = false; *p && (quoted || *p != '}'); p++)
			if (*p == '\\' && quoted && p[1])
				p++;
			else if (*p == '"')
				quoted = !quoted;
		if (*p)
			p++;
	} else {
		*p++ = '\0';
	}
	x = strtod(p, &end);
	if (end == p)
		return 0;
	m = sbt_metric_by_name(line);
	if (m == SBT_METRIC__MAX)
		return 0;
	if (sbt_metric_family(m)->from == SBT_METRIC_FROM_SANDBOX)
		return parse_sandbox(s, m, l, x);
	return parse_host(s, m, l, x);
}

static void sample_clear(struct sbt_top_sample *s)
{
	for (size_t i = 0; i < s->nr_sb; i++)
		free(s->sb[i].name);
	for (size_t i = 0; i < s->nr_prog; i++)
		free(s->prog[i].name);
	s->nr_sb = s->nr_prog = s->nr_rows = 0;
	if (s->slots)
		memset(s->slots, 0, s->nr_slots * sizeof(*s->slots));
	memset(&s->host, 0, sizeof(s->host));
	s->sandboxes = s->start_time = 0;
}

int sbt_top_parse(struct sbt_top_sample *s, char *text, uint64_t at_ms)
{
	struct labels *l = malloc(sizeof(*l));
	char *save = NULL;
	int err = 0;

	sample_clear(s);
	s->at_ms = at_ms;
	if (!l)
		return -ENOMEM;
	for (char *line = strtok_r(text, "\n", &save); line && !err;
	     line = strtok_r(NULL, "\n", &save))
		err = parse_line(s, line, l);
	free(l);
	return err;
}

void sbt_top_sample_free(struct sbt_top_sample *s)
{
	sample_clear(s);
	free(s->sb);
	free(s->slots);
	free(s->prog);
	free(s->rows);
	memset(s, 0, sizeof(*s));
}

void sbt_top_sample_swap(struct sbt_top_sample *a, struct sbt_top_sample *b)
{
	struct sbt_top_sample t = *a;

	*a = *b;
	*b = t;
}

/* ---- rates, order -------------------------------------------------------- */

static double rate(double now, double before, double dt)
{
	return dt > 0 && now >= before ? (now - before) / dt : 0;
}

void sbt_top_rates(const struct sbt_top_sample *prev, struct sbt_top_sample *now)
{
	bool same = prev->at_ms && prev->start_time == now->start_time;
	double dt = same ? (double)(now->at_ms - prev->at_ms) / 1000.0 : 0;

	now->host.execs_rate = rate(now->host.execs, prev->host.execs, dt);
	for (size_t i = 0; i < now->nr_sb; i++) {
		const struct sbt_top_sandbox *p = sb_find(prev, now->sb[i].name);

		now->sb[i].execs_rate = p ? rate(now->sb[i].execs, p->execs, dt) : 0;
	}
	for (size_t i = 0; i < now->nr_prog; i++) {
		struct sbt_top_prog *n = &now->prog[i];

		n->runs_rate = n->ns_per_run = 0;
		for (size_t k = 0; k < prev->nr_prog && dt > 0; k++) {
			double runs = n->runs - prev->prog[k].runs;

			if (strcmp(prev->prog[k].name, n->name) != 0)
				continue;
			n->runs_rate = rate(n->runs, prev->prog[k].runs, dt);
			n->ns_per_run =
				runs > 0 ? (n->seconds - prev->prog[k].seconds) * 1e9 / runs : 0;
		}
	}
}

static double sort_key(const struct sbt_top_sandbox *r, enum sbt_top_sort by)
{
	switch (by) {
	case SBT_TOP_SORT_SHELLS:
		return r->shells;
	case SBT_TOP_SORT_DENIED:
		return r->denied;
	case SBT_TOP_SORT_LOST:
		return r->lost;
	default: /* the busiest now, then the busiest ever */
		return r->execs_rate * 1e6 + r->execs;
	}
}

struct order_by {
	const struct sbt_top_sample *s;
	enum sbt_top_sort by;
};

static int cmp_rows(const void *x, const void *y, void *arg)
{
	const struct order_by *o = arg;
	const struct sbt_top_sandbox *a = &o->s->sb[*(const size_t *)x];
	const struct sbt_top_sandbox *b = &o->s->sb[*(const size_t *)y];
	enum sbt_top_sort by = o->by;
	double ka, kb;

	if (by == SBT_TOP_SORT_NAME)
		return strcmp(a->name, b->name);
	ka = sort_key(a, by);
	kb = sort_key(b, by);
	return ka < kb ? 1 : ka > kb ? -1 : strcmp(a->name, b->name);
}

static int cmp_progs(const void *x, const void *y)
{
	const struct sbt_top_prog *a = x, *b = y;
	double ka = a->ns_per_run * a->runs_rate, kb = b->ns_per_run * b->runs_rate;

	return ka < kb ? 1 : ka > kb ? -1 : strcmp(a->name, b->name);
}

int sbt_top_order(struct sbt_top_sample *s, enum sbt_top_sort by)
{
	size_t *rows = realloc(s->rows, (s->nr_sb + 1) * sizeof(*rows));
	struct order_by o = { s, by };

	s->nr_rows = 0;
	if (!rows)
		return -ENOMEM;
	s->rows = rows;
	for (size_t i = 0; i < s->nr_sb; i++)
		if (s->sb[i].live) /* a removed sandbox's retained counters: not a row */
			rows[s->nr_rows++] = i;
	qsort_r(rows, s->nr_rows, sizeof(*rows), cmp_rows, &o);
	if (s->nr_prog)
		qsort(s->prog, s->nr_prog, sizeof(*s->prog), cmp_progs);
	return 0;
}

/* ---- text in columns ------------------------------------------------------ */

size_t sbt_top_escape(char *out, size_t len, const char *in)
{
	size_t o = 0;

	for (const unsigned char *p = (const unsigned char *)in; *p; p++) {
		char e[8];
		size_t n = 1;

		if (*p == '\\')
			n = (size_t)snprintf(e, sizeof(e), "\\\\");
		else if (*p < 0x20 || *p > 0x7e)
			n = (size_t)snprintf(e, sizeof(e), "\\x%02x", *p);
		else
			e[0] = (char)*p;
		if (o + n >= len)
			break;
		memcpy(out + o, e, n);
		o += n;
	}
	out[o] = '\0';
	return o;
}

/* The escape of `s` that position p falls inside (start *at, length returned), 0: none. */
static size_t escape_around(const char *s, size_t p, size_t *at)
{
	for (size_t i = 0; i < p && s[i];) {
		size_t n = s[i] != '\\' ? 1 : s[i + 1] == 'x' ? 4 : 2;

		if (i < p && p < i + n) {
			*at = i;
			return n;
		}
		i += n;
	}
	return 0;
}

void sbt_top_elide(char *out, size_t len, const char *in, size_t width, const char *ellipsis)
{
	size_t n = strlen(in), head, tail, at, e;

	if (n <= width) {
		snprintf(out, len, "%s", in);
		return;
	}
	head = width > 1 ? (width - 1) / 3 : width;
	tail = n - (width > 1 ? width - 1 - head : 0); /* where the tail begins */
	if (escape_around(in, head, &at))
		head = at;
	e = escape_around(in, tail, &at);
	if (e)
		tail = at + e;
	if (width > 1)
		snprintf(out, len, "%.*s%s%s", (int)head, in, ellipsis, in + tail);
	else
		snprintf(out, len, "%.*s", (int)head, in);
}

void sbt_top_num(char *out, size_t len, double v, int decimals, size_t width)
{
	static const char units[] = "kMGTPE";

	snprintf(out, len, "%.*f", decimals, v);
	for (size_t u = 0; strlen(out) > width && units[u]; u++) {
		v /= 1000;
		snprintf(out, len, "%.1f%c", v, units[u]);
		if (strlen(out) > width)
			snprintf(out, len, "%.0f%c", v, units[u]);
	}
	if (strlen(out) > width) {
		size_t n = width < len ? width : len - 1;

		memset(out, '*', n);
		out[n] = '\0';
	}
}

size_t sbt_top_columns(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

void sbt_top_clip(char *s, size_t width)
{
	size_t cols = 0, i = 0;

	for (; s[i]; i++) {
		if (((unsigned char)s[i] & 0xc0) == 0x80)
			continue;
		if (cols++ == width)
			break;
	}
	s[i] = '\0';
}

/* `s` then blanks to `width` columns, at *o of out. */
static void put_padded(char *out, size_t len, size_t *o, const char *s, size_t width)
{
	size_t cols = sbt_top_columns(s);
	int n = snprintf(out + *o, len - *o, "%s%*s", s, (int)(width > cols ? width - cols : 0),
			 "");

	if (n > 0)
		*o = *o + (size_t)n < len ? *o + (size_t)n : len - 1;
}

/* ---- the table ------------------------------------------------------------ */

/* SBT_TOP_MIN_WIDTH: these, the numbers' columns and the blank between name and source */
#define NAME_MIN   12 /* the name's columns before the source gives way, and its least */
#define SOURCE_MIN 6

enum num_id { NUM_EXECS_RATE, NUM_EXECS, NUM_SHELLS, NUM_ALLOWED, NUM_DENIED, NUM_LOST };

struct num_col {
	const char *head;
	size_t width;
	int decimals;
	enum num_id id;
};

static const struct num_col num_cols[] = {
	{ "EXECS/S", 7, 1, NUM_EXECS_RATE }, { "EXECS", 7, 0, NUM_EXECS },
	{ "SHELLS", 6, 0, NUM_SHELLS },	     { "ALLOWED", 7, 0, NUM_ALLOWED },
	{ "DENIED", 6, 0, NUM_DENIED },	     { "LOST", 6, 0, NUM_LOST },
};

static double num_of(const struct sbt_top_sandbox *r, enum num_id id)
{
	switch (id) {
	case NUM_EXECS_RATE:
		return r->execs_rate;
	case NUM_EXECS:
		return r->execs;
	case NUM_SHELLS:
		return r->shells;
	case NUM_ALLOWED:
		return r->allowed;
	case NUM_DENIED:
		return r->denied;
	default:
		return r->lost;
	}
}

#define NR_NUM_COLS (sizeof(num_cols) / sizeof(num_cols[0]))

/* The numbers' columns, each with the blank before it. */
static size_t nums_width(void)
{
	size_t w = 0;

	for (size_t i = 0; i < NR_NUM_COLS; i++)
		w += 1 + num_cols[i].width;
	return w;
}

void sbt_top_layout(struct sbt_top_layout *l, const struct sbt_top_sample *s, size_t width,
		    const char *ellipsis)
{
	char esc[SBT_TOP_LINE_MAX];
	size_t name_need = strlen("SANDBOX"), source_need = strlen("SOURCE"), rest;

	for (size_t i = 0; i < s->nr_rows; i++) {
		const struct sbt_top_sandbox *r = sbt_top_row_at(s, i);
		size_t n = sbt_top_escape(esc, sizeof(esc), r->name);

		name_need = n > name_need ? n : name_need;
		n = strlen(r->source);
		source_need = n > source_need ? n : source_need;
	}
	l->width = width;
	l->ellipsis = ellipsis;
	l->name_w = name_need;
	l->source_w = source_need;
	if (!width)
		return;
	rest = width > nums_width() + 1 + l->source_w ? width - nums_width() - 1 - l->source_w : 0;
	if (rest < NAME_MIN) { /* the source gives way first, to its minimum */
		size_t give = NAME_MIN - rest, can = l->source_w - SOURCE_MIN;

		give = give < can ? give : can;
		l->source_w -= give;
		rest += give;
	}
	if (rest < NAME_MIN)
		rest = NAME_MIN; /* narrower than SBT_TOP_MIN_WIDTH: the line is cut at its end */
	l->name_w = rest < name_need ? rest : name_need;
}

static void finish(const struct sbt_top_layout *l, char *out)
{
	if (l->width)
		sbt_top_clip(out, l->width);
}

void sbt_top_header(const struct sbt_top_layout *l, char *out, size_t len)
{
	size_t o = 0;

	out[0] = '\0';
	put_padded(out, len, &o, "SANDBOX", l->name_w);
	put_padded(out, len, &o, " ", 1);
	put_padded(out, len, &o, "SOURCE", l->source_w);
	for (size_t i = 0; i < NR_NUM_COLS && o < len; i++)
		o += (size_t)snprintf(out + o, len - o, " %*s", (int)num_cols[i].width,
				      num_cols[i].head);
	finish(l, out);
}

void sbt_top_row(const struct sbt_top_layout *l, const struct sbt_top_sandbox *r, char *out,
		 size_t len)
{
	char esc[SBT_TOP_LINE_MAX], cell[SBT_TOP_LINE_MAX];
	size_t o = 0;

	out[0] = '\0';
	sbt_top_escape(esc, sizeof(esc), r->name);
	sbt_top_elide(cell, sizeof(cell), esc, l->name_w, l->ellipsis);
	put_padded(out, len, &o, cell, l->name_w);
	put_padded(out, len, &o, " ", 1);
	sbt_top_escape(esc, sizeof(esc), r->source);
	sbt_top_elide(cell, sizeof(cell), esc, l->source_w, l->ellipsis);
	put_padded(out, len, &o, cell, l->source_w);
	for (size_t i = 0; i < NR_NUM_COLS && o < len; i++) {
		const struct num_col *c = &num_cols[i];

		sbt_top_num(cell, sizeof(cell), num_of(r, c->id), c->decimals, c->width);
		o += (size_t)snprintf(out + o, len - o, " %*s", (int)c->width, cell);
	}
	finish(l, out);
}

#define PROG_NAME_W 24

void sbt_top_prog_header(const struct sbt_top_layout *l, char *out, size_t len)
{
	snprintf(out, len, "%-*s %12s %10s", PROG_NAME_W, "BPF PROGRAM", "NS/RUN", "RUNS/S");
	finish(l, out);
}

void sbt_top_prog_row(const struct sbt_top_layout *l, const struct sbt_top_prog *p, char *out,
		      size_t len)
{
	char esc[SBT_TOP_LINE_MAX], name[SBT_TOP_LINE_MAX], ns[16], runs[16];

	sbt_top_escape(esc, sizeof(esc), p->name);
	sbt_top_elide(name, sizeof(name), esc, PROG_NAME_W, l->ellipsis);
	sbt_top_num(ns, sizeof(ns), p->ns_per_run, 1, 12);
	sbt_top_num(runs, sizeof(runs), p->runs_rate, 1, 10);
	snprintf(out, len, "%-*s %12s %10s", PROG_NAME_W, name, ns, runs);
	finish(l, out);
}

void sbt_top_host_line(const struct sbt_top_layout *l, const struct sbt_top_host *h, char *out,
		       size_t len)
{
	char execs[16], rate_s[16], shells[16], allowed[16], denied[16], lost[16];

	sbt_top_num(execs, sizeof(execs), h->execs, 0, 9);
	sbt_top_num(rate_s, sizeof(rate_s), h->execs_rate, 1, 8);
	sbt_top_num(shells, sizeof(shells), h->shells, 0, 9);
	sbt_top_num(allowed, sizeof(allowed), h->allowed, 0, 9);
	sbt_top_num(denied, sizeof(denied), h->denied, 0, 9);
	sbt_top_num(lost, sizeof(lost), h->lost, 0, 9);
	snprintf(out, len, "host: execs %s (%s/s)  shells %s  egress allowed %s denied %s  lost %s",
		 execs, rate_s, shells, allowed, denied, lost);
	finish(l, out);
}

size_t sbt_top_scroll(size_t first, size_t nr, size_t height)
{
	if (nr <= height)
		return 0;
	return first > nr - height ? nr - height : first;
}
