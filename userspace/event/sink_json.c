// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The JSON Lines / text sink: every event as a line of the trace's output (sink_json.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "event/envelope.h"
#include "event/line.h"
#include "event/sink_json.h"

#define REPLACEMENT_CHAR "\xef\xbf\xbd" /* U+FFFD */

/* A write's outcome: its error (the first one kept), else the event counted. */
static int written(struct sbt_json_sink *sink)
{
	if (ferror(sink->out)) {
		int err = errno ? errno : EIO;

		if (!sink->error)
			sink->error = err;
		return -err;
	}
	sink->written++;
	return 0;
}

static void json_line(struct sbt_json_sink *sink, const char *text, size_t len)
{
	size_t n = len + 1;

	/* a file's writes end at line ends: a reader of it never sees half a line */
	if (sink->bufsize && sink->pending + n > sink->bufsize) {
		fflush(sink->out);
		sink->pending = 0;
	}
	fwrite(text, 1, len, sink->out);
	fputc('\n', sink->out);
	sink->pending = n > sink->bufsize ? sink->bufsize : sink->pending + n;
}

/* Text: an event that is no row of the table, as '#', its name and its JSON. */
static void comment_line(FILE *f, const char *name, const char *text, size_t len)
{
	fprintf(f, "# %s ", name);
	fwrite(text, 1, len, f);
	fputc('\n', f);
}

/*
 * A terminal control: C0 (below 0x20), DEL, or C1 (U+0080-U+009F: CSI is
 * U+009B), which a terminal would act on (a title, the clipboard, a cleared
 * screen). k is the UTF-8 sequence's length at s.
 */
static bool is_control(const char *s, size_t k)
{
	unsigned char c = (unsigned char)s[0];

	return (k == 1 && (c < 0x20 || c == 0x7f)) ||
	       (k == 2 && c == 0xc2 && (unsigned char)s[1] < 0xa0);
}

/*
 * Text shows strings as the JSON has them (sbt_json_string): bytes that are
 * not valid UTF-8 as U+FFFD, and controls as \xNN (a sandbox names its own
 * processes and cgroups: nothing of them reaches the operator's terminal
 * raw). Writes s so; the bytes written.
 */
static size_t put_utf8(FILE *f, const char *s)
{
	size_t out = 0, k;

	while (*s) {
		k = sbt_utf8_seq(s);
		if (!k) {
			fputs(REPLACEMENT_CHAR, f);
			out += 3;
			s++;
		} else if (is_control(s, k)) {
			for (size_t i = 0; i < k; i++)
				fprintf(f, "\\x%02x", (unsigned char)s[i]);
			out += 4 * k;
			s += k;
		} else {
			fwrite(s, 1, k, f);
			out += k;
			s += k;
		}
	}
	return out;
}

/* s as put_utf8() writes it, then blanks up to `width` bytes (printf's %-Ns). */
static void text_cell(FILE *f, const char *s, size_t width)
{
	for (size_t n = put_utf8(f, s); n < width; n++)
		fputc(' ', f);
}

/* s with invalid bytes as U+FFFD and controls as '?', into buf (cut to len - 1 bytes). */
static void utf8_copy(char *buf, size_t len, const char *s)
{
	size_t o = 0, k;

	for (; *s; s += k ? k : 1) {
		k = sbt_utf8_seq(s);
		if (o + (k ? k : 3) >= len)
			break;
		if (k && is_control(s, k))
			memset(buf + o, '?', k);
		else
			memcpy(buf + o, k ? s : REPLACEMENT_CHAR, k ? k : 3);
		o += k ? k : 3;
	}
	buf[o] = '\0';
}

static bool has_control(const char *s)
{
	for (size_t k; *s; s += k ? k : 1) {
		k = sbt_utf8_seq(s);
		if (k && is_control(s, k))
			return true;
	}
	return false;
}

/* Printable argv for the text format: arguments with blanks are quoted. */
static void text_argv(FILE *f, const char *const *argv, size_t argc)
{
	for (size_t i = 0; i < argc; i++) {
		const char *a = argv[i];

		if (i)
			fputc(' ', f);
		/* U+FFFD for invalid bytes changes none of the ASCII this decides on */
		if (*a != '\0' && !strpbrk(a, " \t\n'\"\\$`;&|<>()*?[]#~") && !has_control(a)) {
			put_utf8(f, a);
			continue;
		}
		/* Shell quoting '...' (each ' as '\''); control bytes as \xNN, one row per exec */
		fputc('\'', f);
		while (*a) {
			unsigned char c = (unsigned char)*a;
			size_t k = sbt_utf8_seq(a);

			if (k == 2 && is_control(a, k)) { /* C1 */
				fprintf(f, "\\x%02x\\x%02x", c, (unsigned char)a[1]);
				a += 2;
				continue;
			}
			if (k != 1) {
				fwrite(k ? a : REPLACEMENT_CHAR, 1, k ? k : 3, f);
				a += k ? k : 1;
				continue;
			}
			if (c == '\'')
				fputs("'\\''", f);
			else if (c < 0x20 || c == 0x7f)
				fprintf(f, "\\x%02x", c);
			else
				fputc(c, f);
			a++;
		}
		fputc('\'', f);
	}
}

/* Text: ProcessExec as a row of the table, from the typed event. */
static int text_row(struct sbt_json_sink *sink, const struct sbt_event *ev)
{
	const struct sbt_exec *rec = ev->exec.rec;
	const struct sbt_shell_class *sh = ev->exec.shell;
	char mark[40] = "-";
	FILE *f = sink->out;

	if (!sink->text_header_done) {
		fprintf(f, "%-16s %-16s %-7s %-7s %-6s %-18s %s\n", "SANDBOX", "COMM", "PID",
			"PPID", "UID", "SHELL", "ARGS");
		sink->text_header_done = true;
	}
	if (sh && sh->kind != SBT_SHELL_NONE) {
		char name[3 * SBT_SHELL_NAME_MAX + 1];

		utf8_copy(name, sizeof(name), sh->shell);
		/* a long one is cut to the mark's size, as it always was */
		if (snprintf(mark, sizeof(mark), "*%s/%s", name, sbt_shell_kind_name(sh->kind)) < 0)
			mark[0] = '\0';
	}
	text_cell(f, ev->sandbox ? ev->sandbox->name : "-", 16);
	fputc(' ', f);
	text_cell(f, rec->comm, 16);
	fprintf(f, " %-7lld %-7lld %-6lld %-18s ", (long long)rec->pid, (long long)rec->ppid,
		(long long)rec->uid, mark);
	text_argv(f, rec->argv, rec->argc);
	fputc('\n', f);
	return 0;
}

/* Text: any other kind as its '#' line. */
static int text_comment(struct sbt_json_sink *sink, const struct sbt_event *ev)
{
	size_t len;
	const char *line = sbt_event_line(ev, &len);

	if (!line)
		return -ENOMEM;
	comment_line(sink->out, sbt_event_name(ev), line, len);
	return 0;
}

int sbt_json_sink_emit(struct sbt_json_sink *sink, const struct sbt_event *ev)
{
#define SBT_TEXT_FN(kind, json, text, ...) [SBT_EV_##kind] = text_##text,
	static int (*const text[SBT_EV__MAX])(struct sbt_json_sink *, const struct sbt_event *) = {
		SBT_EVENT_KINDS(SBT_TEXT_FN)
	};
#undef SBT_TEXT_FN
	int err = 0;

	if ((unsigned int)ev->kind >= SBT_EV__MAX)
		return -ENOMEM; /* no JSON: nothing written */
	if (sink->format == SBT_FORMAT_TEXT) {
		err = text[ev->kind](sink, ev);
	} else {
		size_t len;
		const char *line = sbt_event_line(ev, &len);

		if (line)
			json_line(sink, line, len);
		else
			err = -ENOMEM;
	}
	return err ? err : written(sink);
}

int sbt_json_sink_write(struct sbt_json_sink *sink, json_object *event)
{
	const char *line;
	size_t len;

	if (!event)
		return -ENOMEM;
	line = json_object_to_json_string_length(event, SBT_JSON_LINE_FLAGS, &len);
	if (!line) {
		json_object_put(event);
		return -ENOMEM;
	}
	if (sink->format == SBT_FORMAT_TEXT) {
		json_object *name = NULL;

		json_object_object_get_ex(event, "event", &name);
		comment_line(sink->out, name ? json_object_get_string(name) : "?", line, len);
	} else {
		json_line(sink, line, len);
	}
	json_object_put(event);
	return written(sink);
}

int sbt_json_sink_flush(struct sbt_json_sink *sink)
{
	sink->pending = 0;
	if (fflush(sink->out) != 0) {
		int err = errno ? errno : EIO;

		if (!sink->error)
			sink->error = err;
		return -err;
	}
	return 0;
}

static void json_emit(struct sbt_sink *s, const struct sbt_event *ev)
{
	sbt_json_sink_emit((struct sbt_json_sink *)s, ev);
}

static int json_flush(struct sbt_sink *s)
{
	struct sbt_json_sink *js = (struct sbt_json_sink *)s;

	int err = sbt_json_sink_flush(js);

	return err ? err : -js->error;
}

/*
 * Log rotation: the file was renamed (or removed); what was written before
 * is complete in it (flushed), and every later line goes to a new file of
 * the same name: nothing lost, nothing twice. Appending, never truncating.
 */
static int json_reopen(struct sbt_sink *s)
{
	struct sbt_json_sink *js = (struct sbt_json_sink *)s;
	char *buf;
	FILE *f;
	int err;

	if (!js->path)
		return 0;
	err = sbt_json_sink_flush(js);
	if (err)
		return err;
	buf = malloc(SBT_JSON_SINK_BUF);
	f = buf ? fopen(js->path, "ae") : NULL;
	if (!f) {
		err = buf ? -errno : -ENOMEM;
		free(buf);
		return err;
	}
	setvbuf(f, buf, _IOFBF, SBT_JSON_SINK_BUF);
	if (fclose(js->out) != 0 && !js->error)
		js->error = errno ? errno : EIO;
	free(js->buf);
	js->buf = buf;
	js->out = f;
	js->reopened++;
	return -js->error;
}

static const struct sbt_sink_ops json_ops = {
	.name = "json",
	.emit = json_emit,
	.flush = json_flush,
	.reopen = json_reopen,
};

int sbt_json_sink_open(struct sbt_json_sink *js, const char *path, enum sbt_format format)
{
	char *buf = malloc(SBT_JSON_SINK_BUF);
	FILE *f = buf ? fopen(path, "ae") : NULL;

	if (!f) {
		int err = buf ? -errno : -ENOMEM;

		free(buf);
		return err;
	}
	sbt_json_sink_init(js, f, format);
	/* our own buffer: glibc would ignore the size without one */
	setvbuf(f, buf, _IOFBF, SBT_JSON_SINK_BUF);
	js->buf = buf;
	js->bufsize = SBT_JSON_SINK_BUF;
	js->path = path;
	return 0;
}

int sbt_json_sink_close(struct sbt_json_sink *js)
{
	int err = 0;

	if (js->path && js->out && fclose(js->out) != 0)
		err = -(errno ? errno : EIO);
	free(js->buf); /* after fclose: the stream used it */
	js->buf = NULL;
	js->out = NULL;
	return err;
}

void sbt_json_sink_init(struct sbt_json_sink *js, FILE *out, enum sbt_format format)
{
	memset(js, 0, sizeof(*js));
	js->base.ops = &json_ops;
	js->out = out;
	js->format = format;
}
