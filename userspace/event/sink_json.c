// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The JSON Lines / text sink: every event as a line of the trace's output. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "event/line.h"
#include "event/sink_json.h"

static const char *str_field(json_object *o, const char *key, const char *dflt)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !v)
		return dflt;
	return json_object_get_string(v);
}

static int64_t int_field(json_object *o, const char *key)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !v)
		return -1;
	return json_object_get_int64(v);
}

static bool has_control(const char *s)
{
	for (; *s; s++) {
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return true;
	}
	return false;
}

/* Printable argv for the text format: arguments with blanks are quoted. */
static void text_argv(FILE *f, json_object *argv)
{
	size_t n = argv ? json_object_array_length(argv) : 0;

	for (size_t i = 0; i < n; i++) {
		const char *a = json_object_get_string(json_object_array_get_idx(argv, i));

		if (i)
			fputc(' ', f);
		if (*a != '\0' && !strpbrk(a, " \t\n'\"\\$`;&|<>()*?[]#~") && !has_control(a)) {
			fputs(a, f);
			continue;
		}
		/* Shell quoting '...' (each ' as '\''); control bytes as \xNN, one row per exec */
		fputc('\'', f);
		for (; *a; a++) {
			unsigned char c = (unsigned char)*a;

			if (c == '\'')
				fputs("'\\''", f);
			else if (c < 0x20 || c == 0x7f)
				fprintf(f, "\\x%02x", c);
			else
				fputc(c, f);
		}
		fputc('\'', f);
	}
}

static void text_write(struct sbt_json_sink *sink, json_object *ev)
{
	const char *name = str_field(ev, "event", "?");
	FILE *f = sink->out;

	if (strcmp(name, "ProcessExec") != 0) {
		fprintf(f, "# %s %s\n", name,
			json_object_to_json_string_ext(ev, JSON_C_TO_STRING_PLAIN |
								   JSON_C_TO_STRING_NOSLASHESCAPE));
		return;
	}
	if (!sink->text_header_done) {
		fprintf(f, "%-16s %-16s %-7s %-7s %-6s %-18s %s\n", "SANDBOX", "COMM", "PID",
			"PPID", "UID", "SHELL", "ARGS");
		sink->text_header_done = true;
	}
	{
		json_object *shell, *argv = NULL;
		char mark[40] = "-";

		if (json_object_object_get_ex(ev, "shell", &shell) && shell)
			snprintf(mark, sizeof(mark), "*%s/%s", str_field(shell, "name", "?"),
				 str_field(shell, "kind", "?"));
		json_object_object_get_ex(ev, "argv", &argv);
		fprintf(f, "%-16s %-16s %-7lld %-7lld %-6lld %-18s ", str_field(ev, "sandbox", "-"),
			str_field(ev, "comm", "?"), (long long)int_field(ev, "pid"),
			(long long)int_field(ev, "ppid"), (long long)int_field(ev, "uid"), mark);
		text_argv(f, argv);
		fputc('\n', f);
	}
}

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

int sbt_json_sink_emit(struct sbt_json_sink *sink, const struct sbt_event *ev)
{
	const char *line;
	size_t len;

	if (sink->format == SBT_FORMAT_TEXT)
		return sbt_json_sink_write(sink, sbt_event_json(ev));
	line = sbt_event_line(ev, &len);
	if (!line)
		return -ENOMEM;
	json_line(sink, line, len);
	return written(sink);
}

int sbt_json_sink_write(struct sbt_json_sink *sink, json_object *event)
{
	const char *line = NULL;
	size_t len;

	if (!event)
		return -ENOMEM;
	if (sink->format == SBT_FORMAT_TEXT) {
		text_write(sink, event);
	} else {
		line = json_object_to_json_string_length(event, SBT_JSON_LINE_FLAGS, &len);
		if (line)
			json_line(sink, line, len);
	}
	json_object_put(event);
	return line || sink->format == SBT_FORMAT_TEXT ? written(sink) : -ENOMEM;
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
