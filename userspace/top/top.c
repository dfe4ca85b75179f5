// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * `sbtrace top`: a live view of a running agent from its /metrics (two
 * scrapes, their difference): per sandbox execs/s, shells, egress allowed
 * and denied, loss; per BPF program ns per run and runs/s. ncurses
 * (Debian's, loaded when the view starts: dlopen, so no other command
 * carries it), or one text table with --once for scripts.
 */
#define NCURSES_NOMACROS /* the functions themselves: they are looked up by name */
#include <errno.h>
#include <getopt.h>
#include <ncurses.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>

#include "cmd/agent_cmd.h"
#include "event/metrics.h"
#include "lib/clock.h"
#include "lib/dl.h"
#include "lib/log.h"
#include "top.h"
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
	__typeof__(&mvprintw) mvprintw;
	__typeof__(&attron) attron;
	__typeof__(&attroff) attroff;
	int *lines;
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
		SYM(initscr),  SYM(endwin), SYM(cbreak),  SYM(noecho),
		SYM(timeout),  SYM(getch),  SYM(erase),	  SYM(refresh),
		SYM(mvprintw), SYM(attron), SYM(attroff), { "LINES", (void **)&nc.lines },
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

#define initscr	 (*nc.initscr)
#define endwin	 (*nc.endwin)
#define cbreak	 (*nc.cbreak)
#define noecho	 (*nc.noecho)
#define timeout	 (*nc.timeout)
#define getch	 (*nc.getch)
#define erase	 (*nc.erase)
#define refresh	 (*nc.refresh)
#define mvprintw (*nc.mvprintw)
#define attron	 (*nc.attron)
#define attroff	 (*nc.attroff)
#undef LINES
#define LINES (*nc.lines)
#include "cmd/trace_cmd.h"

#define MAX_ROWS  4096
#define MAX_PROGS 8

struct sb_row {
	char name[256];
	char source[16];
	double execs, shells, allowed, denied, lost;
	double execs_rate;
};

struct prog_row {
	char name[256];
	double seconds, runs;
	double ns_per_run, runs_rate;
};

struct sample {
	struct sb_row sb[MAX_ROWS];
	int nr_sb;
	struct prog_row prog[MAX_PROGS];
	int nr_prog;
	double targets;
	uint64_t at_ms;
};

enum sort_key { SORT_EXECS, SORT_SHELLS, SORT_DENIED, SORT_LOST, SORT_NAME, SORT__MAX };
static const char *const sort_names[] = { "execs", "shells", "denied", "lost", "name" };

static volatile sig_atomic_t stop;

static void on_stop(int sig)
{
	(void)sig;
	stop = 1;
}

/*
 * Terminal controls to '?': C0, DEL and C1 (UTF-8 C2 80..9F, CSI among them).
 * A cgroup's name is the sandbox's to choose: none may set the operator's
 * window title or clear the screen.
 */
static void defang(char *s)
{
	for (unsigned char *p = (unsigned char *)s; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			*p = '?';
		else if (*p == 0xc2 && p[1] >= 0x80 && p[1] < 0xa0)
			p[0] = p[1] = '?';
}

/* The value of label `key` in `labels` (escapes undone, controls defanged), "" if absent. */
static void label(const char *labels, const char *key, char *out, size_t len)
{
	size_t kl = strlen(key), o = 0;
	const char *p = labels;

	out[0] = '\0';
	while ((p = strstr(p, key))) {
		if ((p == labels || p[-1] == ',' || p[-1] == '{') && strncmp(p + kl, "=\"", 2) == 0)
			break;
		p += kl;
	}
	if (!p)
		return;
	for (p += kl + 2; *p && *p != '"' && o + 1 < len; p++) {
		if (*p == '\\' && p[1]) {
			p++;
			out[o++] = *p == 'n' ? '\n' : *p;
		} else {
			out[o++] = *p;
		}
	}
	out[o] = '\0';
	defang(out);
}

static struct sb_row *sb_get(struct sample *s, const char *name)
{
	for (int i = 0; i < s->nr_sb; i++)
		if (strcmp(s->sb[i].name, name) == 0)
			return &s->sb[i];
	if (s->nr_sb == MAX_ROWS)
		return NULL;
	memset(&s->sb[s->nr_sb], 0, sizeof(s->sb[0]));
	snprintf(s->sb[s->nr_sb].name, sizeof(s->sb[0].name), "%s", name);
	return &s->sb[s->nr_sb++];
}

static struct prog_row *prog_get(struct sample *s, const char *name)
{
	for (int i = 0; i < s->nr_prog; i++)
		if (strcmp(s->prog[i].name, name) == 0)
			return &s->prog[i];
	if (s->nr_prog == MAX_PROGS)
		return NULL;
	memset(&s->prog[s->nr_prog], 0, sizeof(s->prog[0]));
	snprintf(s->prog[s->nr_prog].name, sizeof(s->prog[0].name), "%s", name);
	return &s->prog[s->nr_prog++];
}

/* A sandbox family's sample into its row. */
static void parse_sandbox(struct sample *s, enum sbt_metric m, const char *labels, double x)
{
	char name[256], v[64];
	struct sb_row *r;

	label(labels, "sandbox", name, sizeof(name));
	r = name[0] ? sb_get(s, name) : NULL;
	if (!r)
		return;
	switch (m) {
	case SBT_METRIC_SANDBOX_INFO:
		label(labels, "source", r->source, sizeof(r->source));
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
		label(labels, "verdict", v, sizeof(v));
		if (strcmp(v, "denied") == 0)
			r->denied += x;
		else if (strcmp(v, "allowed") == 0)
			r->allowed += x;
		break;
	default:
		break;
	}
}

/* One sample line "name{labels} value" into s; the families are metrics.h's. */
static void parse_line(struct sample *s, char *line)
{
	char *brace = strchr(line, '{'), *val = strrchr(line, ' '), name[256];
	const char *labels = "";
	struct prog_row *pr;
	enum sbt_metric m;
	double x;

	if (line[0] == '#' || !val)
		return;
	x = strtod(val + 1, NULL);
	*val = '\0';
	if (brace && brace < val) {
		*brace = '\0';
		labels = brace + 1;
	}
	m = sbt_metric_by_name(line);
	if (m == SBT_METRIC_SANDBOXES) {
		s->targets = x;
	} else if (m == SBT_METRIC_BPF_RUNS || m == SBT_METRIC_BPF_RUN_SECONDS) {
		label(labels, "program", name, sizeof(name));
		pr = prog_get(s, name);
		if (pr && m == SBT_METRIC_BPF_RUNS)
			pr->runs = x;
		else if (pr)
			pr->seconds = x;
	} else if (m < SBT_METRIC__MAX && sbt_metric_family(m)->from == SBT_METRIC_FROM_SANDBOX) {
		parse_sandbox(s, m, labels, x);
	}
}

/* GET /metrics from the agent. 0, or -errno after a message. */
static int scrape(const char *hostport, struct sample *s)
{
	struct sockaddr_storage ss;
	unsigned int sslen;
	static const char req[] = "GET /metrics HTTP/1.0\r\nHost: sbtrace\r\n\r\n";
	char *body = NULL, *p, *line, *save = NULL;
	size_t len = 0, cap = 0;
	int fd, err = 0;

	if (sbt_parse_hostport(hostport, &ss, &sslen))
		return -EINVAL;
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&ss, sslen) ||
	    send(fd, req, sizeof(req) - 1, MSG_NOSIGNAL) != (ssize_t)sizeof(req) - 1) {
		err = -errno;
		goto out;
	}
	for (;;) {
		ssize_t n;

		if (len + 4096 + 1 > cap) {
			char *nb = realloc(body, cap = cap ? cap * 2 : 65536);

			if (!nb) {
				err = -ENOMEM;
				goto out;
			}
			body = nb;
		}
		n = recv(fd, body + len, cap - len - 1, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	if (!body || strncmp(body, "HTTP/1.", 7) != 0 || !strstr(body, " 200 ")) {
		err = -EPROTO;
		goto out;
	}
	body[len] = '\0';
	p = strstr(body, "\r\n\r\n");
	memset(s, 0, sizeof(*s));
	s->at_ms = sbt_mono_ms();
	for (line = p ? strtok_r(p + 4, "\n", &save) : NULL; line;
	     line = strtok_r(NULL, "\n", &save))
		parse_line(s, line);
out:
	if (fd >= 0)
		close(fd);
	free(body);
	return err;
}

/* Rates of b against the earlier a. */
static void rates(const struct sample *a, struct sample *b)
{
	double dt = (double)(b->at_ms - a->at_ms) / 1000.0;

	for (int i = 0; i < b->nr_sb; i++) {
		b->sb[i].execs_rate = 0;
		for (int k = 0; k < a->nr_sb && dt > 0; k++)
			if (strcmp(a->sb[k].name, b->sb[i].name) == 0)
				b->sb[i].execs_rate = (b->sb[i].execs - a->sb[k].execs) / dt;
	}
	for (int i = 0; i < b->nr_prog; i++) {
		for (int k = 0; k < a->nr_prog; k++) {
			double runs = b->prog[i].runs - a->prog[k].runs;

			if (strcmp(a->prog[k].name, b->prog[i].name) != 0)
				continue;
			b->prog[i].runs_rate = dt > 0 ? runs / dt : 0;
			b->prog[i].ns_per_run =
				runs > 0 ? (b->prog[i].seconds - a->prog[k].seconds) * 1e9 / runs
					 : 0;
		}
	}
}

static enum sort_key sort_by;

static double key_of(const struct sb_row *r)
{
	switch (sort_by) {
	case SORT_SHELLS:
		return r->shells;
	case SORT_DENIED:
		return r->denied;
	case SORT_LOST:
		return r->lost;
	default:
		return r->execs_rate * 1e6 + r->execs;
	}
}

static int cmp_rows(const void *x, const void *y)
{
	const struct sb_row *a = x, *b = y;
	double ka, kb;

	if (sort_by == SORT_NAME)
		return strcmp(a->name, b->name);
	ka = key_of(a);
	kb = key_of(b);
	return ka < kb ? 1 : ka > kb ? -1 : strcmp(a->name, b->name);
}

/* Only the sandboxes the agent traces now (sbtrace_sandbox_info): the table's rows. */
static void keep_live(struct sample *s)
{
	int n = 0;

	for (int i = 0; i < s->nr_sb; i++)
		if (s->sb[i].source[0])
			s->sb[n++] = s->sb[i];
	s->nr_sb = n;
	qsort(s->sb, (size_t)n, sizeof(s->sb[0]), cmp_rows);
}

static void print_table(FILE *f, const struct sample *s)
{
	fprintf(f, "%-48s %-13s %9s %8s %8s %8s %6s\n", "SANDBOX", "SOURCE", "EXECS/S", "EXECS",
		"SHELLS", "ALLOWED", "DENIED");
	for (int i = 0; i < s->nr_sb; i++) {
		const struct sb_row *r = &s->sb[i];

		fprintf(f, "%-48s %-13s %9.1f %8.0f %8.0f %8.0f %6.0f%s\n", r->name, r->source,
			r->execs_rate, r->execs, r->shells, r->allowed, r->denied,
			r->lost > 0 ? "  LOST" : "");
	}
	fprintf(f, "\n%-24s %12s %10s\n", "BPF PROGRAM", "NS/RUN", "RUNS/S");
	for (int i = 0; i < s->nr_prog; i++)
		fprintf(f, "%-24s %12.1f %10.1f\n", s->prog[i].name, s->prog[i].ns_per_run,
			s->prog[i].runs_rate);
}

static void draw(const struct sample *s, const char *addr)
{
	int row = 2;

	erase();
	mvprintw(0, 0, "sbtrace top  %s  sandboxes: %.0f  sort: %s  (s: sort, q: quit)", addr,
		 s->targets, sort_names[sort_by]);
	attron(A_REVERSE);
	mvprintw(1, 0, "%-48s %-13s %9s %8s %8s %8s %6s %6s", "SANDBOX", "SOURCE", "EXECS/S",
		 "EXECS", "SHELLS", "ALLOWED", "DENIED", "LOST");
	attroff(A_REVERSE);
	for (int i = 0; i < s->nr_sb && row < LINES - s->nr_prog - 3; i++, row++) {
		const struct sb_row *r = &s->sb[i];

		mvprintw(row, 0, "%-48.48s %-13s %9.1f %8.0f %8.0f %8.0f %6.0f %6.0f", r->name,
			 r->source, r->execs_rate, r->execs, r->shells, r->allowed, r->denied,
			 r->lost);
	}
	attron(A_REVERSE);
	mvprintw(++row, 0, "%-24s %12s %10s", "BPF PROGRAM", "NS/RUN", "RUNS/S");
	attroff(A_REVERSE);
	for (int i = 0; i < s->nr_prog; i++)
		mvprintw(++row, 0, "%-24s %12.1f %10.1f", s->prog[i].name, s->prog[i].ns_per_run,
			 s->prog[i].runs_rate);
	refresh();
}

void sbt_top_usage(FILE *f)
{
	sbt_help_top(f);
}

static int parse_top_args(int argc, char **argv, const char **addr, bool *once, double *iv)
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
			*addr = optarg;
			break;
		case '1':
			*once = true;
			break;
		case 'i':
			*iv = strtod(optarg, NULL);
			if (!(*iv >= 0.1 && *iv <= 3600))
				goto bad;
			break;
		case 's':
			for (k = 0; k < SORT__MAX && strcmp(sort_names[k], optarg) != 0; k++)
				;
			if (k == SORT__MAX)
				goto bad;
			sort_by = (enum sort_key)k;
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

static int take(const char *addr, struct sample *s)
{
	int err = scrape(addr, s);

	if (err)
		sbt_log("cannot read http://%s/metrics: %s; is 'sbtrace agent --metrics-addr %s' "
			"running?",
			addr, strerror(-err), addr);
	return err;
}

int sbt_top_main(int argc, char **argv)
{
	static struct sample a, b; /* large: not on the stack */
	const char *addr = "127.0.0.1:9464";
	bool once = false;
	double iv = 1.0;
	int ret = parse_top_args(argc, argv, &addr, &once, &iv);

	if (ret >= 0)
		return ret;
	if (take(addr, &a))
		return SBT_EXIT_RUNTIME;
	if (once) {
		sbt_sleep_ms((long)(iv * 1000));
		if (take(addr, &b))
			return SBT_EXIT_RUNTIME;
		rates(&a, &b);
		keep_live(&b);
		print_table(stdout, &b);
		return fflush(stdout) ? SBT_EXIT_RUNTIME : SBT_EXIT_OK;
	}
	if (nc_load())
		return SBT_EXIT_RUNTIME;
	signal(SIGINT, on_stop);
	signal(SIGTERM, on_stop);
	initscr();
	cbreak();
	noecho();
	timeout((int)(iv * 1000));
	while (!stop) {
		int ch = getch();

		if (ch == 'q')
			break;
		if (ch == 's')
			sort_by = (enum sort_key)((sort_by + 1) % SORT__MAX);
		if (take(addr, &b)) {
			ret = SBT_EXIT_RUNTIME;
			break;
		}
		rates(&a, &b);
		a = b;
		keep_live(&b);
		draw(&b, addr);
	}
	endwin();
	return ret >= 0 ? ret : SBT_EXIT_OK;
}
