// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * `sbtrace top`: a live view of a running agent from its /metrics (each
 * scrape against the one before): per live sandbox execs/s, shells, egress
 * allowed and denied, loss; the host's totals; per BPF program ns per run
 * and runs/s. The table (table.h) fits the terminal's width and scrolls;
 * an agent that goes away leaves its last table on screen, retried each
 * interval. ncurses (Debian's, loaded when the view starts: dlopen, so no
 * other command carries it), or one text table with --once for scripts.
 */
#define NCURSES_NOMACROS /* the functions themselves: they are looked up by name */
#include <errno.h>
#include <getopt.h>
#include <langinfo.h>
#include <locale.h>
#include <ncurses.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/time.h>

#include "cmd/agent_cmd.h"
#include "cmd/trace_cmd.h"
#include "lib/clock.h"
#include "lib/dl.h"
#include "lib/log.h"
#include "top/table.h"
#include "top/top.h"
#include "help/sbtrace-top.h"

static struct {
	__typeof__(&initscr) initscr;
	__typeof__(&endwin) endwin;
	__typeof__(&cbreak) cbreak;
	__typeof__(&noecho) noecho;
	__typeof__(&timeout) timeout;
	__typeof__(&getch) getch;
	__typeof__(&erase) erase;
	__typeof__(&refresh) refresh;
	__typeof__(&mvaddstr) mvaddstr;
	__typeof__(&attron) attron;
	__typeof__(&attroff) attroff;
	__typeof__(&keypad) keypad;
	__typeof__(&curs_set) curs_set;
	WINDOW **scr; /* stdscr */
	int *lines, *cols;
} nc;

/* ncurses' functions, once. 0, or -1 after a message. */
static int nc_load(void)
{
	static const char *const sonames[] = { "libncursesw.so.6", "libncurses.so.6" };
#define SYM(f)                                                                                     \
	{                                                                                          \
#f, (void **)&nc.f                                                                 \
	}
	const struct sbt_dl_sym syms[] = {
		SYM(initscr),
		SYM(endwin),
		SYM(cbreak),
		SYM(noecho),
		SYM(timeout),
		SYM(getch),
		SYM(erase),
		SYM(refresh),
		SYM(mvaddstr),
		SYM(attron),
		SYM(attroff),
		SYM(keypad),
		SYM(curs_set),
		{ "stdscr", (void **)&nc.scr },
		{ "LINES", (void **)&nc.lines },
		{ "COLS", (void **)&nc.cols },
	};
#undef SYM
	const char *err;
	int lacks;

	if (sbt_dl_load(sonames, sizeof(sonames) / sizeof(sonames[0]), syms,
			sizeof(syms) / sizeof(syms[0]), &err, &lacks))
		return 0;
	if (lacks)
		sbt_log("ncurses lacks a function: %s", err);
	else
		sbt_log("the live view needs ncurses (Debian's libncursesw6: make deps), or use "
			"--once: %s",
			err);
	return -1;
}

enum top_mode {
	TOP_LIVE, /* ncurses, until q or a signal */
	TOP_ONCE, /* one text table after one interval */
};

struct top_opts {
	const char *addr;
	enum top_mode mode;
	double interval; /* seconds */
	enum sbt_top_sort sort;
};

static volatile sig_atomic_t stop;

static void on_stop(int sig)
{
	(void)sig;
	stop = 1;
}

/* ---- a scrape ---------------------------------------------------------------- */

#define SCRAPE_TIMEOUT_S 2

/* A socket to the agent, connected, every wait bounded. An fd or -errno. */
static int dial(const char *hostport)
{
	struct timeval tv = { .tv_sec = SCRAPE_TIMEOUT_S };
	struct sockaddr_storage ss;
	unsigned int sslen;
	int fd, err;

	if (sbt_parse_hostport(hostport, &ss, &sslen))
		return -EINVAL;
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* SO_SNDTIMEO bounds connect() too */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) ||
	    connect(fd, (struct sockaddr *)&ss, sslen)) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

/* All the peer sends, NUL-terminated, into *out (malloc'd). 0 or -errno. */
static int read_all(int fd, char **out)
{
	char *body = NULL;
	size_t len = 0, cap = 0;

	for (;;) {
		ssize_t n;

		if (len + 4096 + 1 > cap) {
			char *nb = realloc(body, cap = cap ? cap * 2 : 65536);

			if (!nb) {
				free(body);
				return -ENOMEM;
			}
			body = nb;
		}
		n = recv(fd, body + len, cap - len - 1, 0);
		if (n < 0 && errno == EINTR && !stop)
			continue;
		if (n < 0) {
			int err = errno == EAGAIN ? -ETIMEDOUT : -errno;

			free(body);
			return err;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	body[len] = '\0';
	*out = body;
	return 0;
}

/*
 * GET /metrics into s (s untouched on failure). 0, or -errno with why
 * what went wrong (an HTTP status, a connect's error).
 */
static int scrape(const char *hostport, struct sbt_top_sample *s, char *why, size_t whylen)
{
	static const char req[] = "GET /metrics HTTP/1.0\r\nHost: sbtrace\r\n\r\n";
	char *text = NULL, *body;
	int fd = dial(hostport), err = 0;

	if (fd < 0) {
		snprintf(why, whylen, "%s", strerror(-fd));
		return fd;
	}
	if (send(fd, req, sizeof(req) - 1, MSG_NOSIGNAL) != (ssize_t)sizeof(req) - 1)
		err = -errno;
	else
		err = read_all(fd, &text);
	close(fd);
	if (err || !text) {
		snprintf(why, whylen, "%s", strerror(err ? -err : EPROTO));
		return err ? err : -EPROTO;
	}
	body = strstr(text, "\r\n\r\n");
	if (strncmp(text, "HTTP/1.", 7) != 0 || strncmp(text + 8, " 200 ", 5) != 0 || !body) {
		snprintf(why, whylen, "the answer was not HTTP 200: %.*s",
			 (int)strcspn(text, "\r\n"), text);
		free(text);
		return -EPROTO;
	}
	err = sbt_top_parse(s, body + 4, sbt_mono_ms());
	free(text);
	if (err)
		snprintf(why, whylen, "%s", strerror(-err));
	return err;
}

/* ---- --once: text ------------------------------------------------------------ */

static void print_table(FILE *f, const struct sbt_top_sample *s)
{
	struct sbt_top_layout l;
	char line[SBT_TOP_LINE_MAX];

	sbt_top_layout(&l, s, 0, "~");
	sbt_top_header(&l, line, sizeof(line));
	fprintf(f, "%s\n", line);
	for (size_t i = 0; i < s->nr_rows; i++) {
		sbt_top_row(&l, sbt_top_row_at(s, i), line, sizeof(line));
		fprintf(f, "%s\n", line);
	}
	sbt_top_prog_header(&l, line, sizeof(line));
	fprintf(f, "\n%s\n", line);
	for (size_t i = 0; i < s->nr_prog; i++) {
		sbt_top_prog_row(&l, &s->prog[i], line, sizeof(line));
		fprintf(f, "%s\n", line);
	}
}

static int run_once(const struct top_opts *o)
{
	struct sbt_top_sample a = { 0 }, b = { 0 };
	char why[256];
	int ret = SBT_EXIT_RUNTIME;

	if (scrape(o->addr, &a, why, sizeof(why)))
		goto no_scrape;
	sbt_sleep_ms((long)(o->interval * 1000));
	if (scrape(o->addr, &b, why, sizeof(why)))
		goto no_scrape;
	sbt_top_rates(&a, &b);
	if (sbt_top_order(&b, o->sort)) {
		sbt_log("out of memory");
		goto out;
	}
	print_table(stdout, &b);
	ret = fflush(stdout) || ferror(stdout) ? SBT_EXIT_RUNTIME : SBT_EXIT_OK;
	if (ret)
		sbt_log("cannot write the table: %s", strerror(errno));
	goto out;
no_scrape:
	sbt_log("cannot read http://%s/metrics: %s; is 'sbtrace agent --metrics-addr %s' running?",
		o->addr, why, o->addr);
out:
	sbt_top_sample_free(&a);
	sbt_top_sample_free(&b);
	return ret;
}

/* ---- the live view -------------------------------------------------------------- */

#define SB_MIN_ROWS 10	/* sandbox rows the BPF programs leave on a short terminal */
#define KEY_WAIT_MS 250 /* a signal is seen this soon */

struct view {
	const struct top_opts *o;
	struct sbt_top_sample shown, spare; /* spare: where the next scrape goes */
	bool have;			    /* shown holds a scrape */
	int err;			    /* the last scrape's, 0 */
	char why[256];
	uint64_t failing_since_ms;
	size_t first, page; /* the first row shown; rows a page scrolls */
	const char *ellipsis;
};

static void put_line(int y, const char *s, bool reverse)
{
	if (reverse)
		nc.attron(A_REVERSE);
	nc.mvaddstr(y, 0, s);
	if (reverse)
		nc.attroff(A_REVERSE);
}

static void draw_title(const struct view *v, const struct sbt_top_layout *l)
{
	char line[SBT_TOP_LINE_MAX], addr[256], why[512];

	sbt_top_escape(addr, sizeof(addr), v->o->addr);
	sbt_top_escape(why, sizeof(why), v->why); /* an HTTP status line is the peer's text */
	if (v->err)
		snprintf(line, sizeof(line),
			 "sbtrace top %s  agent unreachable, retrying every %.1f s: %s (%llu s)",
			 addr, v->o->interval, why,
			 (unsigned long long)((sbt_mono_ms() - v->failing_since_ms) / 1000));
	else
		snprintf(line, sizeof(line),
			 "sbtrace top %s  sandboxes %.0f  sort %s  s: sort  q: quit", addr,
			 v->shown.sandboxes, sbt_top_sort_names[v->o->sort]);
	sbt_top_clip(line, l->width);
	put_line(0, line, v->err != 0);
}

/* The BPF programs under the table, as many as leave the sandboxes SB_MIN_ROWS. */
static void draw_progs(const struct view *v, const struct sbt_top_layout *l, int y, size_t n)
{
	char line[SBT_TOP_LINE_MAX];
	size_t o;

	sbt_top_prog_header(l, line, sizeof(line));
	o = strlen(line);
	if (n < v->shown.nr_prog)
		snprintf(line + o, sizeof(line) - o, "  (%zu more)", v->shown.nr_prog - n);
	sbt_top_clip(line, l->width);
	put_line(y, line, true);
	for (size_t i = 0; i < n; i++) {
		sbt_top_prog_row(l, &v->shown.prog[i], line, sizeof(line));
		put_line(y + 1 + (int)i, line, false);
	}
}

static void draw(struct view *v)
{
	const struct sbt_top_sample *s = &v->shown;
	size_t height = (size_t)(*nc.lines > 3 ? *nc.lines - 3 : 0), rows, progs = s->nr_prog;
	size_t reserved;
	struct sbt_top_layout l;
	char line[SBT_TOP_LINE_MAX];
	int y = 3;

	sbt_top_layout(&l, s, (size_t)(*nc.cols > 0 ? *nc.cols : 1), v->ellipsis);
	/* the programs take what the sandboxes leave: blank, header, rows */
	if (s->nr_rows + (progs ? progs + 2 : 0) > height) {
		size_t keep = (s->nr_rows < SB_MIN_ROWS ? s->nr_rows : SB_MIN_ROWS) + 1;

		progs = height > keep + 2 ? height - keep - 2 : 0;
		progs = progs < s->nr_prog ? progs : s->nr_prog;
	}
	reserved = s->nr_prog ? progs + 2 : 0; /* the programs' lines */
	rows = height > reserved ? height - reserved : 0;
	if (s->nr_rows > rows)
		rows = rows ? rows - 1 : 0; /* the "more" line's */
	v->page = rows ? rows : 1;
	v->first = sbt_top_scroll(v->first, s->nr_rows, rows);
	nc.erase();
	draw_title(v, &l);
	sbt_top_host_line(&l, &s->host, line, sizeof(line));
	put_line(1, line, false);
	sbt_top_header(&l, line, sizeof(line));
	put_line(2, line, true);
	for (size_t i = v->first; i < s->nr_rows && i < v->first + rows; i++) {
		sbt_top_row(&l, sbt_top_row_at(s, i), line, sizeof(line));
		put_line(y++, line, false);
	}
	if (!s->nr_rows && v->have)
		put_line(y++, "(no sandbox traced now)", false);
	if (s->nr_rows > rows) {
		size_t last = v->first + rows, below = s->nr_rows - last;

		if (below)
			snprintf(line, sizeof(line),
				 "-- %zu more (rows %zu-%zu of %zu; arrows, j/k, PgUp/PgDn) --",
				 below, v->first + 1, last, s->nr_rows);
		else
			snprintf(line, sizeof(line), "-- %zu more above (rows %zu-%zu of %zu) --",
				 v->first, v->first + 1, last, s->nr_rows);
		sbt_top_clip(line, l.width);
		put_line(y++, line, true);
	}
	if (s->nr_prog)
		draw_progs(v, &l, y + 1, progs);
	nc.refresh();
}

/* One scrape: the new sample shown, or the last one kept with the failure said. */
static void refresh_sample(struct view *v)
{
	int err = scrape(v->o->addr, &v->spare, v->why, sizeof(v->why));

	if (err) {
		if (!v->err)
			v->failing_since_ms = sbt_mono_ms();
		v->err = err;
		return;
	}
	v->err = 0;
	sbt_top_rates(&v->shown, &v->spare);
	sbt_top_sample_swap(&v->shown, &v->spare);
	v->have = true;
	if (sbt_top_order(&v->shown, v->o->sort)) {
		v->err = -ENOMEM;
		snprintf(v->why, sizeof(v->why), "%s", strerror(ENOMEM));
	}
}

/* A key: false for quit. */
static bool on_key(struct view *v, struct top_opts *o, int ch)
{
	switch (ch) {
	case 'q':
		return false;
	case 's':
		o->sort = (enum sbt_top_sort)((o->sort + 1) % SBT_TOP_SORT__MAX);
		sbt_top_order(&v->shown, o->sort);
		break;
	case KEY_DOWN:
	case 'j':
		v->first++;
		break;
	case KEY_UP:
	case 'k':
		v->first -= v->first > 0;
		break;
	case KEY_NPAGE:
	case ' ':
		v->first += v->page;
		break;
	case KEY_PPAGE:
	case 'b':
		v->first = v->first > v->page ? v->first - v->page : 0;
		break;
	case KEY_HOME:
	case 'g':
		v->first = 0;
		break;
	case KEY_END:
	case 'G':
		v->first = v->shown.nr_rows;
		break;
	default: /* KEY_RESIZE among them: drawn again */
		break;
	}
	return true;
}

static int run_live(struct top_opts *o)
{
	static struct view v; /* large: not on the stack */
	uint64_t next = 0;

	if (nc_load())
		return SBT_EXIT_RUNTIME;
	v.o = o;
	setlocale(LC_CTYPE, ""); /* ncursesw writes UTF-8 where the terminal takes it */
	v.ellipsis = strcmp(nl_langinfo(CODESET), "UTF-8") == 0 ? "\u2026" : "~";
	nc.initscr();
	nc.cbreak();
	nc.noecho();
	nc.keypad(*nc.scr, TRUE);
	nc.curs_set(0);
	while (!stop) {
		uint64_t now = sbt_mono_ms();
		int ch;

		if (now >= next) {
			refresh_sample(&v);
			next = sbt_mono_ms() + (uint64_t)(o->interval * 1000);
			draw(&v);
			continue;
		}
		nc.timeout((int)(next - now < KEY_WAIT_MS ? next - now : KEY_WAIT_MS));
		ch = nc.getch();
		if (ch == ERR)
			continue;
		if (!on_key(&v, o, ch))
			break;
		draw(&v);
	}
	nc.endwin();
	sbt_top_sample_free(&v.shown);
	sbt_top_sample_free(&v.spare);
	return SBT_EXIT_OK;
}

/* ---- the command -------------------------------------------------------------- */

void sbt_top_usage(FILE *f)
{
	sbt_help_top(f);
}

/* -1 to go on, else an exit code. */
static int parse_top_args(int argc, char **argv, struct top_opts *o)
{
	static const struct option longopts[] = {
		{ "metrics-addr", required_argument, NULL, 'm' },
		{ "once", no_argument, NULL, '1' },
		{ "interval", required_argument, NULL, 'i' },
		{ "sort", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct sockaddr_storage ss;
	unsigned int sslen;
	int c, k;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'm':
			if (sbt_parse_hostport(optarg, &ss, &sslen))
				goto bad;
			o->addr = optarg;
			break;
		case '1':
			o->mode = TOP_ONCE;
			break;
		case 'i':
			o->interval = strtod(optarg, NULL);
			if (!(o->interval >= 0.1 && o->interval <= 3600))
				goto bad;
			break;
		case 's':
			for (k = 0; k < SBT_TOP_SORT__MAX; k++)
				if (strcmp(sbt_top_sort_names[k], optarg) == 0)
					break;
			if (k == SBT_TOP_SORT__MAX)
				goto bad;
			o->sort = (enum sbt_top_sort)k;
			break;
		case 'h':
			sbt_top_usage(stdout);
			return SBT_EXIT_OK;
		default:
			goto bad;
		}
	}
	if (optind == argc)
		return -1;
bad:
	sbt_log("bad usage%s%s; see 'sbtrace top --help'", optarg ? " at " : "",
		optarg ? optarg : "");
	return SBT_EXIT_USAGE;
}

int sbt_top_main(int argc, char **argv)
{
	struct top_opts o = { .addr = "127.0.0.1:9464", .mode = TOP_LIVE, .interval = 1.0 };
	struct sigaction sa = { .sa_handler = on_stop }; /* no SA_RESTART: a wait returns */
	int ret = parse_top_args(argc, argv, &o);

	if (ret >= 0)
		return ret;
	if (!isatty(STDOUT_FILENO))
		o.mode = TOP_ONCE; /* no terminal to draw on: the text table */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	return o.mode == TOP_ONCE ? run_once(&o) : run_live(&o);
}
