// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for output events and sinks (userspace/events.c). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "event/events.h"
#include "event/sink_json.h"
#include "lib/clock.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#define T_TS	    1700000000123456789ull
#define T_CGROUP_ID 0xfedcba9876543210ull
#define T_SEQ	    0x8000000000000001ull

static const char *const plain_argv[] = { "make", "-j8", "", "hello world" };

static void init_exec(struct sbt_exec *ev, const char *const *argv, size_t argc)
{
	memset(ev, 0, sizeof(*ev));
	ev->ts_boot_ns = 12345;
	ev->cgroup_id = T_CGROUP_ID;
	ev->seq = T_SEQ;
	ev->slot = 3;
	ev->pid = 4242;
	ev->tid = 4243;
	ev->ppid = 4000;
	ev->uid = 1000;
	ev->gid = 0xfffffffeu;
	strcpy(ev->comm, "make");
	strcpy(ev->parent_comm, "bash");
	ev->filename = "/usr/bin/make";
	ev->interp = "/usr/bin/make";
	ev->argc = argc;
	ev->argv = (const char **)argv;
}

/* The member `key`, which must exist (its value may be JSON null). */
static json_object *member(json_object *o, const char *key)
{
	json_object *v = NULL;

	if (!json_object_object_get_ex(o, key, &v))
		fail_msg("missing key \"%s\"", key);
	return v;
}

static void assert_keys(json_object *o, const char *const *keys, size_t n)
{
	assert_true(json_object_is_type(o, json_type_object));
	for (size_t i = 0; i < n; i++)
		member(o, keys[i]);
	assert_int_equal(json_object_object_length(o), n);
}

static void assert_str_member(json_object *o, const char *key, const char *want)
{
	json_object *v = member(o, key);

	if (!want) {
		assert_null(v);
		return;
	}
	assert_true(json_object_is_type(v, json_type_string));
	assert_string_equal(json_object_get_string(v), want);
}

static void assert_int_member(json_object *o, const char *key, int64_t want)
{
	json_object *v = member(o, key);

	assert_true(json_object_is_type(v, json_type_int));
	assert_int_equal(json_object_get_int64(v), want);
}

static void assert_u64_member(json_object *o, const char *key, uint64_t want)
{
	json_object *v = member(o, key);

	assert_true(json_object_is_type(v, json_type_int));
	assert_int_equal(json_object_get_uint64(v), want);
}

static const char *const exec_keys[] = {
	"event",    "ts",     "time", "run_id",		"sandbox",     "pid",	    "tid",
	"ppid",	    "uid",    "gid",  "comm",		"parent_comm", "cgroup_id", "seq",
	"filename", "interp", "argv", "argv_truncated", "cwd",	       "shell",
};

/* Serialize and parse back: what a consumer of the output sees. */
static json_object *round_trip(json_object *o)
{
	const char *s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	json_object *back;

	assert_non_null(s);
	back = json_tokener_parse(s);
	assert_non_null(back);
	return back;
}

static void test_event_new(void **state)
{
	static const char *const keys[] = { "event", "ts", "time", "run_id", "sandbox" };
	json_object *o = sbt_event_new("SandboxAdded", UINT64_MAX, "sb-1");

	(void)state;
	assert_non_null(o);
	assert_keys(o, keys, ARRAY_SIZE(keys));
	assert_str_member(o, "event", "SandboxAdded");
	assert_u64_member(o, "ts", UINT64_MAX);
	assert_str_member(o, "sandbox", "sb-1");
	json_object_put(o);

	o = sbt_event_new("EventsLost", 0, NULL);
	assert_non_null(o);
	assert_keys(o, keys, ARRAY_SIZE(keys));
	assert_str_member(o, "event", "EventsLost");
	assert_u64_member(o, "ts", 0);
	assert_str_member(o, "sandbox", NULL);
	assert_non_null(strstr(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN),
			       "\"sandbox\":null"));
	json_object_put(o);
}

static void check_exec_shape(json_object *o, const char *sandbox)
{
	json_object *argv;

	assert_keys(o, exec_keys, ARRAY_SIZE(exec_keys));
	assert_str_member(o, "event", "ProcessExec");
	assert_u64_member(o, "ts", T_TS);
	assert_str_member(o, "sandbox", sandbox);
	assert_int_member(o, "pid", 4242);
	assert_int_member(o, "tid", 4243);
	assert_int_member(o, "ppid", 4000);
	assert_int_member(o, "uid", 1000);
	assert_int_member(o, "gid", 0xfffffffeu);
	assert_str_member(o, "comm", "make");
	assert_str_member(o, "parent_comm", "bash");
	assert_u64_member(o, "cgroup_id", T_CGROUP_ID);
	assert_u64_member(o, "seq", T_SEQ);
	assert_str_member(o, "filename", "/usr/bin/make");
	assert_str_member(o, "interp", "/usr/bin/make");
	argv = member(o, "argv");
	assert_true(json_object_is_type(argv, json_type_array));
	assert_int_equal(json_object_array_length(argv), ARRAY_SIZE(plain_argv));
	for (size_t i = 0; i < ARRAY_SIZE(plain_argv); i++) {
		json_object *a = json_object_array_get_idx(argv, i);

		assert_true(json_object_is_type(a, json_type_string));
		assert_string_equal(json_object_get_string(a), plain_argv[i]);
	}
	assert_true(json_object_is_type(member(o, "argv_truncated"), json_type_boolean));
	assert_false(json_object_get_boolean(member(o, "argv_truncated")));
	assert_null(member(o, "cwd")); /* none read */
	assert_null(member(o, "shell"));
}

/* The cwd's tail as read: outermost first, and whether it is the whole path in its mount. */
static void test_exec_cwd(void **state)
{
	struct sbt_exec ev;
	json_object *o, *cwd, *w;

	(void)state;
	init_exec(&ev, plain_argv, ARRAY_SIZE(plain_argv));
	strcpy(ev.cwd, "app/node_modules/dep");
	ev.cwd_top = true;
	o = sbt_event_exec(&ev, T_TS, "sb-1", NULL);
	cwd = member(o, "cwd");
	assert_str_member(cwd, "tail", "app/node_modules/dep");
	assert_true(json_object_get_boolean(member(cwd, "complete")));
	json_object_put(o);

	/* "/" itself: no name, the whole path */
	ev.cwd[0] = '\0';
	o = sbt_event_exec(&ev, T_TS, "sb-1", NULL);
	assert_str_member(member(o, "cwd"), "tail", "");
	json_object_put(o);

	/* unreadable: null, and said */
	ev.cwd_top = false;
	ev.flags = SBT_EXEC_CWD_FAULT;
	o = sbt_event_exec(&ev, T_TS, "sb-1", NULL);
	assert_null(member(o, "cwd"));
	w = member(o, "capture_issues");
	assert_string_equal(json_object_get_string(json_object_array_get_idx(w, 0)),
			    "cwd_unreadable");
	json_object_put(o);
}

static void test_exec_shape(void **state)
{
	struct sbt_exec ev;
	json_object *o, *back;

	(void)state;
	init_exec(&ev, plain_argv, ARRAY_SIZE(plain_argv));
	o = sbt_event_exec(&ev, T_TS, "sb-1", NULL);
	assert_non_null(o);
	check_exec_shape(o, "sb-1");
	/* The same once serialized and parsed back (big unsigned values included). */
	back = round_trip(o);
	check_exec_shape(back, "sb-1");
	json_object_put(back);
	json_object_put(o);

	o = sbt_event_exec(&ev, T_TS, NULL, NULL);
	check_exec_shape(o, NULL);
	json_object_put(o);
}

static void test_exec_uid_max_and_empty_argv(void **state)
{
	struct sbt_exec ev;
	json_object *o;

	(void)state;
	init_exec(&ev, NULL, 0);
	ev.pid = ev.tid = ev.ppid = ev.uid = ev.gid = UINT32_MAX;
	ev.argv_truncated = true;
	o = sbt_event_exec(&ev, 0, "x", NULL);
	assert_int_member(o, "pid", UINT32_MAX);
	assert_int_member(o, "uid", UINT32_MAX);
	assert_int_member(o, "gid", UINT32_MAX);
	assert_true(json_object_is_type(member(o, "argv"), json_type_array));
	assert_int_equal(json_object_array_length(member(o, "argv")), 0);
	assert_true(json_object_get_boolean(member(o, "argv_truncated")));
	json_object_put(o);
}

static void test_exec_interp(void **state)
{
	struct sbt_exec ev;
	json_object *o;

	(void)state;
	init_exec(&ev, plain_argv, ARRAY_SIZE(plain_argv));
	ev.interp = "/bin/sh";
	o = sbt_event_exec(&ev, T_TS, "sb", NULL);
	assert_str_member(o, "interp", "/bin/sh");
	json_object_put(o);

	ev.interp = "";
	o = sbt_event_exec(&ev, T_TS, "sb", NULL);
	assert_str_member(o, "interp", "");
	json_object_put(o);

	ev.flags = SBT_EXEC_INTERP_UNAVAILABLE;
	o = sbt_event_exec(&ev, T_TS, "sb", NULL);
	assert_str_member(o, "interp", NULL);
	assert_keys(o, exec_keys, ARRAY_SIZE(exec_keys)); /* no capture_issues for this flag */
	json_object_put(o);
}

static void test_exec_capture_issues(void **state)
{
	static const struct {
		uint32_t flags;
		const char *want[6];
		size_t n;
	} cases[] = {
		{ 0, { NULL }, 0 },
		{ SBT_EXEC_ARGV_TRUNCATED, { NULL }, 0 },
		{ SBT_EXEC_INTERP_UNAVAILABLE, { NULL }, 0 },
		{ SBT_EXEC_ARGV_TRUNCATED | SBT_EXEC_INTERP_UNAVAILABLE, { NULL }, 0 },
		{ SBT_EXEC_ARGV_FAULT, { "argv_unreadable" }, 1 },
		{ SBT_EXEC_FILENAME_FAULT, { "filename_unreadable" }, 1 },
		{ SBT_EXEC_INTERP_FAULT, { "interp_unreadable" }, 1 },
		{ SBT_EXEC_FILENAME_TRUNCATED, { "filename_truncated" }, 1 },
		{ SBT_EXEC_INTERP_TRUNCATED, { "interp_truncated" }, 1 },
		{ SBT_EXEC_CWD_FAULT, { "cwd_unreadable" }, 1 },
		{ SBT_EXEC_CWD_TOP, { NULL }, 0 },
		{ SBT_EXEC_ARGV_FAULT | SBT_EXEC_INTERP_TRUNCATED | SBT_EXEC_ARGV_TRUNCATED,
		  { "argv_unreadable", "interp_truncated" },
		  2 },
		{ 0xffffffffu,
		  { "argv_unreadable", "filename_unreadable", "interp_unreadable",
		    "filename_truncated", "interp_truncated", "cwd_unreadable" },
		  6 },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct sbt_exec ev;
		json_object *o, *w;

		init_exec(&ev, plain_argv, ARRAY_SIZE(plain_argv));
		ev.flags = cases[i].flags;
		o = sbt_event_exec(&ev, T_TS, "sb", NULL);
		assert_non_null(o);
		if (cases[i].n == 0) {
			assert_false(json_object_object_get_ex(o, "capture_issues", NULL));
			assert_int_equal(json_object_object_length(o), ARRAY_SIZE(exec_keys));
			json_object_put(o);
			continue;
		}
		assert_int_equal(json_object_object_length(o), ARRAY_SIZE(exec_keys) + 1);
		w = member(o, "capture_issues");
		assert_true(json_object_is_type(w, json_type_array));
		assert_int_equal(json_object_array_length(w), cases[i].n);
		for (size_t j = 0; j < cases[i].n; j++)
			assert_string_equal(json_object_get_string(json_object_array_get_idx(w, j)),
					    cases[i].want[j]);
		json_object_put(o);
	}
}

static void check_shell(json_object *o, const char *name, const char *kind, const char *command,
			const char *script, const char *multicall)
{
	static const char *const keys[] = { "name",   "kind",	   "command",
					    "script", "multicall", "identified_by" };
	json_object *sh = member(o, "shell");

	assert_non_null(sh);
	assert_keys(sh, keys, ARRAY_SIZE(keys));
	assert_str_member(sh, "name", name);
	assert_str_member(sh, "kind", kind);
	assert_str_member(sh, "command", command);
	assert_str_member(sh, "script", script);
	assert_str_member(sh, "multicall", multicall);
}

static void test_exec_shell(void **state)
{
	static const char *const sh_argv[] = { "sh", "-c", "echo \"hi\"; exit 0" };
	static const char *const bb_argv[] = { "sh", "build.sh" };
	struct sbt_shell_class cls;
	struct sbt_exec ev;
	json_object *o, *back;

	(void)state;
	/* From the classifier: sh -c */
	init_exec(&ev, sh_argv, ARRAY_SIZE(sh_argv));
	ev.filename = "/bin/sh";
	ev.interp = ev.filename;
	assert_true(sbt_shell_classify(ev.filename, ev.interp, ev.argv, ev.argc, &cls));
	o = sbt_event_exec(&ev, T_TS, "sb", &cls);
	check_shell(o, "sh", "command", "echo \"hi\"; exit 0", NULL, NULL);
	back = round_trip(o);
	check_shell(back, "sh", "command", "echo \"hi\"; exit 0", NULL, NULL);
	json_object_put(back);
	json_object_put(o);

	/* Hand-made: every member set. */
	memset(&cls, 0, sizeof(cls));
	cls.kind = SBT_SHELL_SCRIPT;
	strcpy(cls.shell, "busybox sh");
	cls.command = "c";
	cls.script = "build.sh";
	cls.multicall = "busybox";
	init_exec(&ev, bb_argv, ARRAY_SIZE(bb_argv));
	o = sbt_event_exec(&ev, T_TS, "sb", &cls);
	check_shell(o, "busybox sh", "script", "c", "build.sh", "busybox");
	json_object_put(o);

	/* Not a shell: null, the same as no class at all. */
	memset(&cls, 0, sizeof(cls));
	assert_false(
		sbt_shell_classify("/usr/bin/make", "", plain_argv, ARRAY_SIZE(plain_argv), &cls));
	init_exec(&ev, plain_argv, ARRAY_SIZE(plain_argv));
	o = sbt_event_exec(&ev, T_TS, "sb", &cls);
	assert_null(member(o, "shell"));
	json_object_put(o);

	/* Every kind has its name. */
	for (int k = SBT_SHELL_DIRECT; k <= SBT_SHELL_SCRIPT; k++) {
		memset(&cls, 0, sizeof(cls));
		cls.kind = (enum sbt_shell_kind)k;
		strcpy(cls.shell, "bash");
		o = sbt_event_exec(&ev, T_TS, "sb", &cls);
		check_shell(o, "bash", sbt_shell_kind_name(cls.kind), NULL, NULL, NULL);
		json_object_put(o);
	}
}

/* Awkward bytes: quotes, backslashes, control characters, invalid UTF-8. */
static const char *const nasty_argv[] = {
	"say \"hi\"",
	"back\\slash\\",
	"new\nline\r\n",
	"tab\there",
	"\x01\x02\x1f\x7f ctl",
	"\xff\xfe\x80 not utf-8",
	"caf\xc3\xa9 \xe2\x82\xac",
	"\xc3\x28 bad sequence",
	"/a/b/</script>",
	"'single'",
	"",
	"\\u0041 not an escape",
};

/* The same, as the JSON carries it: invalid UTF-8 bytes became U+FFFD. */
#define FFFD "\xef\xbf\xbd"
static const char *const nasty_json[] = {
	"say \"hi\"",
	"back\\slash\\",
	"new\nline\r\n",
	"tab\there",
	"\x01\x02\x1f\x7f ctl",
	FFFD FFFD FFFD " not utf-8",
	"caf\xc3\xa9 \xe2\x82\xac",
	FFFD "( bad sequence",
	"/a/b/</script>",
	"'single'",
	"",
	"\\u0041 not an escape",
};

static void check_nasty(json_object *o)
{
	json_object *argv = member(o, "argv");

	assert_int_equal(json_object_array_length(argv), ARRAY_SIZE(nasty_json));
	for (size_t i = 0; i < ARRAY_SIZE(nasty_json); i++) {
		json_object *a = json_object_array_get_idx(argv, i);

		assert_int_equal(json_object_get_string_len(a), strlen(nasty_json[i]));
		assert_memory_equal(json_object_get_string(a), nasty_json[i],
				    strlen(nasty_json[i]));
	}
	assert_str_member(o, "filename", "/tmp/\"we\\ird\"\n" FFFD);
	assert_str_member(o, "comm", "a\"b\\c");
}

static void test_exec_nasty_strings(void **state)
{
	struct sbt_exec ev;
	json_object *o, *back;
	const char *s;

	(void)state;
	init_exec(&ev, nasty_argv, ARRAY_SIZE(nasty_argv));
	ev.filename = "/tmp/\"we\\ird\"\n\xff";
	strcpy(ev.comm, "a\"b\\c");
	o = sbt_event_exec(&ev, T_TS, "sb", NULL);
	check_nasty(o);
	s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	assert_null(strchr(s, '\n'));
	back = round_trip(o);
	check_nasty(back);
	json_object_put(back);
	json_object_put(o);
}

/* Split a NUL-terminated buffer into lines (modifying it); every line must end in '\n'. */
static size_t split_lines(char *buf, char **lines, size_t max)
{
	size_t n = 0;
	char *p = buf;

	while (*p) {
		char *nl = strchr(p, '\n');

		assert_non_null(nl);
		assert_true(n < max);
		*nl = '\0';
		lines[n++] = p;
		p = nl + 1;
	}
	return n;
}

/* Text rows come from typed events: a ProcessExec of `rec` as the trace hands it to the sink. */
static int emit_exec(struct sbt_json_sink *sink, const struct sbt_exec *rec, const char *sandbox,
		     const struct sbt_shell_class *shell)
{
	static struct sbt_target sb;
	struct sbt_event ev = { .kind = SBT_EV_EXEC,
				.ts = T_TS,
				.sandbox = sandbox ? &sb : NULL,
				.exec = { .rec = rec, .shell = shell } };

	snprintf(sb.name, sizeof(sb.name), "%s", sandbox ? sandbox : "");
	return sbt_json_sink_emit(sink, &ev);
}

static void test_sink_json(void **state)
{
	char *buf = NULL, *lines[8];
	size_t size = 0, n;
	FILE *f = open_memstream(&buf, &size);
	struct sbt_json_sink sink;
	struct sbt_shell_class cls;
	struct sbt_exec ev;
	static const char *const sh_argv[] = { "sh", "-c", "ls" };

	(void)state;
	assert_non_null(f);
	sbt_json_sink_init(&sink, f, SBT_FORMAT_JSON);
	assert_int_equal(sink.written, 0);
	assert_int_equal(sink.error, 0);
	assert_false(sink.text_header_done);

	init_exec(&ev, nasty_argv, ARRAY_SIZE(nasty_argv));
	ev.filename = "/tmp/\"we\\ird\"\n\xff";
	strcpy(ev.comm, "a\"b\\c");
	assert_int_equal(sbt_json_sink_write(&sink, sbt_event_exec(&ev, T_TS, "sb-1", NULL)), 0);
	assert_int_equal(sbt_json_sink_write(&sink, sbt_event_new("SandboxAdded", 7, "sb-1")), 0);
	init_exec(&ev, sh_argv, ARRAY_SIZE(sh_argv));
	ev.filename = "/bin/sh";
	ev.interp = ev.filename;
	assert_true(sbt_shell_classify(ev.filename, ev.interp, ev.argv, ev.argc, &cls));
	assert_int_equal(sbt_json_sink_write(&sink, sbt_event_exec(&ev, T_TS, NULL, &cls)), 0);
	/* No event (allocation failure upstream): an error, nothing written. */
	assert_int_equal(sbt_json_sink_write(&sink, NULL), -ENOMEM);
	assert_int_equal(sbt_json_sink_flush(&sink), 0);
	assert_int_equal(sink.written, 3);
	assert_int_equal(sink.error, 0);
	assert_int_equal(fclose(f), 0);

	n = split_lines(buf, lines, ARRAY_SIZE(lines));
	assert_int_equal(n, 3);
	{
		json_object *o = json_tokener_parse(lines[0]);

		assert_non_null(o);
		check_nasty(o);
		json_object_put(o);
		/* Slashes are not escaped. */
		assert_non_null(strstr(lines[0], "\"/a/b/</script>\""));
	}
	{
		json_object *o = json_tokener_parse(lines[1]);

		assert_non_null(o);
		assert_str_member(o, "event", "SandboxAdded");
		json_object_put(o);
	}
	{
		json_object *o = json_tokener_parse(lines[2]);

		assert_non_null(o);
		assert_str_member(o, "sandbox", NULL);
		check_shell(o, "sh", "command", "ls", NULL, NULL);
		json_object_put(o);
	}
	free(buf);
}

/* Start offsets of the first `n` space-separated tokens of `line`. */
static void token_offsets(const char *line, size_t *offs, size_t n)
{
	size_t i = 0;

	for (size_t t = 0; t < n; t++) {
		while (line[i] == ' ')
			i++;
		assert_true(line[i] != '\0');
		offs[t] = i;
		while (line[i] && line[i] != ' ')
			i++;
	}
}

static void test_sink_text(void **state)
{
	static const char *const sh_argv[] = { "sh", "-c", "ls -l" };
	char *buf = NULL, *lines[8];
	size_t size = 0, n, hdr[7], row[7];
	FILE *f = open_memstream(&buf, &size);
	struct sbt_json_sink sink;
	struct sbt_shell_class cls;
	struct sbt_exec ev;

	(void)state;
	assert_non_null(f);
	sbt_json_sink_init(&sink, f, SBT_FORMAT_TEXT);
	/* A non-exec event first: a '#' line, no header yet. */
	assert_int_equal(sbt_json_sink_write(&sink, sbt_event_new("SandboxAdded", 7, "sb-1")), 0);
	assert_false(sink.text_header_done);
	init_exec(&ev, plain_argv, ARRAY_SIZE(plain_argv));
	assert_int_equal(emit_exec(&sink, &ev, "sb-1", NULL), 0);
	assert_true(sink.text_header_done);
	init_exec(&ev, sh_argv, ARRAY_SIZE(sh_argv));
	ev.filename = "/bin/sh";
	ev.interp = ev.filename;
	strcpy(ev.comm, "sh");
	assert_true(sbt_shell_classify(ev.filename, ev.interp, ev.argv, ev.argc, &cls));
	assert_int_equal(emit_exec(&sink, &ev, NULL, &cls), 0);
	assert_int_equal(sbt_json_sink_write(&sink, sbt_event_new("EventsLost", 9, NULL)), 0);
	init_exec(&ev, plain_argv, ARRAY_SIZE(plain_argv));
	assert_int_equal(emit_exec(&sink, &ev, "sb-1", NULL), 0);
	assert_int_equal(sbt_json_sink_flush(&sink), 0);
	assert_int_equal(sink.written, 5);
	assert_int_equal(fclose(f), 0);

	n = split_lines(buf, lines, ARRAY_SIZE(lines));
	assert_int_equal(n, 6);

	/* '#' lines: the name, then the event as JSON. */
	assert_memory_equal(lines[0], "# SandboxAdded ", 15);
	{
		json_object *o = json_tokener_parse(lines[0] + 15);

		assert_non_null(o);
		assert_str_member(o, "event", "SandboxAdded");
		assert_str_member(o, "sandbox", "sb-1");
		json_object_put(o);
	}
	assert_memory_equal(lines[4], "# EventsLost ", 13);

	/* One header, then aligned rows. */
	assert_memory_equal(lines[1], "SANDBOX", 7);
	for (size_t i = 2; i < n; i++)
		assert_true(strncmp(lines[i], "SANDBOX", 7) != 0);
	token_offsets(lines[1], hdr, 7);
	assert_memory_equal(lines[1] + hdr[6], "ARGS", 5);

	token_offsets(lines[2], row, 7);
	assert_memory_equal(row, hdr, sizeof(hdr));
	assert_memory_equal(lines[2] + row[0], "sb-1 ", 5);
	assert_memory_equal(lines[2] + row[1], "make ", 5);
	assert_memory_equal(lines[2] + row[2], "4242 ", 5);
	assert_memory_equal(lines[2] + row[3], "4000 ", 5);
	assert_memory_equal(lines[2] + row[4], "1000 ", 5);
	assert_memory_equal(lines[2] + row[5], "- ", 2);
	assert_string_equal(lines[2] + row[6], "make -j8 '' 'hello world'");
	assert_string_equal(lines[5], lines[2]);

	/* The shell row: sandbox null shows as '-', shell marked *name/kind. */
	token_offsets(lines[3], row, 7);
	assert_memory_equal(row, hdr, sizeof(hdr));
	assert_memory_equal(lines[3] + row[0], "- ", 2);
	assert_memory_equal(lines[3] + row[1], "sh ", 3);
	assert_memory_equal(lines[3] + row[5], "*sh/command ", 12);
	assert_string_equal(lines[3] + row[6], "sh -c 'ls -l'");
	free(buf);
}

/* Text ARGS: shell-style quoting, control bytes as \xNN, one row per exec. */
static void test_sink_text_quoting(void **state)
{
	static const char *const argv[] = {
		"plain-arg",
		"",
		"two words",
		"it's",
		"a\x01 b\x7f",
		"new\nline",
		"$HOME",
		"x;y",
		"\\",
		"a\"b",
		"/bin/echo",
		"a\rb",
		"\x1b"
		"c",
	};
	char *buf = NULL, *lines[4];
	size_t size = 0, offs[7];
	FILE *f = open_memstream(&buf, &size);
	struct sbt_json_sink sink;
	struct sbt_exec ev;

	(void)state;
	assert_non_null(f);
	sbt_json_sink_init(&sink, f, SBT_FORMAT_TEXT);
	init_exec(&ev, argv, ARRAY_SIZE(argv));
	assert_int_equal(emit_exec(&sink, &ev, "sb", NULL), 0);
	assert_int_equal(fclose(f), 0);

	assert_int_equal(split_lines(buf, lines, ARRAY_SIZE(lines)), 2);
	token_offsets(lines[0], offs, 7);
	assert_string_equal(lines[1] + offs[6],
			    "plain-arg '' 'two words' 'it'\\''s' 'a\\x01 b\\x7f' "
			    "'new\\x0aline' '$HOME' 'x;y' '\\' 'a\"b' "
			    "/bin/echo 'a\\x0db' '\\x1bc'");
	free(buf);
}

/*
 * A sandbox names its cgroup and its processes: COMM and SANDBOX reach the
 * operator's terminal escaped like ARGS, C1 controls (CSI) too.
 */
static void test_text_names_escaped(void **state)
{
	static const char *const argv[] = { "x", "\xc2\x9b"
						 "2J" };
	static struct sbt_target sb = { .name = "/evil\x1b]0;owned\x07" };
	char *buf = NULL, *lines[4];
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);
	struct sbt_json_sink sink;
	struct sbt_event ev = { .kind = SBT_EV_EXEC, .sandbox = &sb };
	struct sbt_exec rec;

	(void)state;
	assert_non_null(f);
	sbt_json_sink_init(&sink, f, SBT_FORMAT_TEXT);
	init_exec(&rec, argv, ARRAY_SIZE(argv));
	strcpy(rec.comm, "a\x1b[2Jb");
	ev.exec.rec = &rec;
	sbt_json_sink_emit(&sink, &ev);
	assert_int_equal(sbt_json_sink_flush(&sink), 0);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(split_lines(buf, lines, ARRAY_SIZE(lines)), 2);
	assert_null(strchr(lines[1], 0x1b));
	assert_null(strstr(lines[1], "\xc2\x9b"));
	assert_non_null(strstr(lines[1], "/evil\\x1b]0;owned\\x07"));
	assert_non_null(strstr(lines[1], "a\\x1b[2Jb"));
	assert_non_null(strstr(lines[1], "'\\xc2\\x9b2J'"));
	free(buf);
}

static void test_sink_tmpfile(void **state)
{
	char line[4096];
	FILE *f = tmpfile();
	struct sbt_json_sink sink;
	struct sbt_exec ev;
	size_t lines = 0;

	(void)state;
	assert_non_null(f);
	sbt_json_sink_init(&sink, f, SBT_FORMAT_JSON);
	init_exec(&ev, plain_argv, ARRAY_SIZE(plain_argv));
	for (int i = 0; i < 100; i++)
		assert_int_equal(sbt_json_sink_write(&sink, sbt_event_exec(&ev, T_TS, "sb", NULL)),
				 0);
	assert_int_equal(sbt_json_sink_flush(&sink), 0);
	rewind(f);
	while (fgets(line, sizeof(line), f)) {
		json_object *o;

		assert_int_equal(line[strlen(line) - 1], '\n');
		o = json_tokener_parse(line);
		assert_non_null(o);
		check_exec_shape(o, "sb");
		json_object_put(o);
		lines++;
	}
	assert_int_equal(lines, 100);
	assert_int_equal(sink.written, 100);
	fclose(f);
}

static void test_sink_write_error(void **state)
{
	struct sbt_json_sink sink;
	struct sbt_exec ev;
	FILE *f = fopen("/dev/full", "w");
	int rc;

	(void)state;
	if (!f)
		skip();
	sbt_json_sink_init(&sink, f, SBT_FORMAT_JSON);
	init_exec(&ev, plain_argv, ARRAY_SIZE(plain_argv));
	/* Buffered: the write itself may well succeed... */
	sbt_json_sink_write(&sink, sbt_event_exec(&ev, T_TS, "sb", NULL));
	/* ...but the flush cannot. */
	rc = sbt_json_sink_flush(&sink);
	assert_true(rc < 0);
	assert_int_equal(rc, -ENOSPC);
	assert_int_equal(sink.error, ENOSPC);
	/* Later failures keep the first error. */
	assert_true(sbt_json_sink_write(&sink, sbt_event_new("EventsLost", 1, NULL)) < 0);
	assert_true(sbt_json_sink_flush(&sink) < 0);
	assert_int_equal(sink.error, ENOSPC);
	fclose(f);

	/* Text format, and an event bigger than the stdio buffer: fails in the write. */
	f = fopen("/dev/full", "w");
	assert_non_null(f);
	sbt_json_sink_init(&sink, f, SBT_FORMAT_TEXT);
	{
		static char big[256 * 1024];
		const char *argv[] = { big };

		memset(big, 'x', sizeof(big) - 1);
		init_exec(&ev, argv, 1);
		rc = emit_exec(&sink, &ev, "sb", NULL);
	}
	assert_int_equal(rc, -ENOSPC);
	assert_int_equal(sink.error, ENOSPC);
	assert_int_equal(sink.written, 0);
	fclose(f);
}

static void test_boot_to_epoch(void **state)
{
	struct timespec rt, bt;
	int64_t off;
	uint64_t now_boot, got, now;

	(void)state;
	assert_int_equal(sbt_boot_to_epoch_ns(0, 0), 0);
	assert_int_equal(sbt_boot_to_epoch_ns(1000, 500), 1500);
	assert_int_equal(sbt_boot_to_epoch_ns(1000, -300), 700);
	assert_int_equal(sbt_boot_to_epoch_ns(5000000000ull, 1700000000000000000ll),
			 1700000005000000000ull);
	assert_int_equal(sbt_boot_to_epoch_ns(UINT64_MAX, 0), UINT64_MAX);
	assert_int_equal(sbt_boot_to_epoch_ns(UINT64_MAX - 10, 10), UINT64_MAX);
	assert_int_equal(sbt_boot_to_epoch_ns(10, INT64_MIN + 1), 10 + (uint64_t)INT64_MIN + 1);

	/* Against the clocks: the epoch time of "boot time now" is now. */
	off = sbt_boot_epoch_offset_ns();
	assert_true(off > 0);
	clock_gettime(CLOCK_BOOTTIME, &bt);
	now_boot = (uint64_t)bt.tv_sec * 1000000000ull + (uint64_t)bt.tv_nsec;
	got = sbt_boot_to_epoch_ns(now_boot, off);
	clock_gettime(CLOCK_REALTIME, &rt);
	now = (uint64_t)rt.tv_sec * 1000000000ull + (uint64_t)rt.tv_nsec;
	assert_true(got <= now + 1000000000ull);
	assert_true(got + 1000000000ull >= now);
	now = sbt_now_epoch_ns();
	assert_true(now + 1000000000ull >= got);
}

/* Strict RFC 3629: overlongs, surrogates, > U+10FFFF and cut sequences are replaced. */
static void test_json_string_utf8(void **state)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "plain", "plain" },
		{ "", "" },
		{ "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80" },
		{ "\xc0\x80", FFFD FFFD },		     /* overlong NUL */
		{ "\xe0\x80\xaf", FFFD FFFD FFFD },	     /* overlong '/' */
		{ "\xed\xa0\x80", FFFD FFFD FFFD },	     /* surrogate */
		{ "\xf4\x90\x80\x80", FFFD FFFD FFFD FFFD }, /* > U+10FFFF */
		{ "a\xe2\x82", "a" FFFD FFFD },		     /* cut at the end */
		{ "\x80x", FFFD "x" },			     /* lone continuation */
		{ "\xf5\x80", FFFD FFFD },		     /* never valid lead */
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		json_object *o = sbt_json_string(cases[i].in);

		assert_non_null(o);
		assert_int_equal(json_object_get_string_len(o), strlen(cases[i].out));
		assert_memory_equal(json_object_get_string(o), cases[i].out, strlen(cases[i].out));
		json_object_put(o);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json_string_utf8),
		cmocka_unit_test(test_event_new),
		cmocka_unit_test(test_exec_shape),
		cmocka_unit_test(test_exec_cwd),
		cmocka_unit_test(test_exec_uid_max_and_empty_argv),
		cmocka_unit_test(test_exec_interp),
		cmocka_unit_test(test_exec_capture_issues),
		cmocka_unit_test(test_exec_shell),
		cmocka_unit_test(test_exec_nasty_strings),
		cmocka_unit_test(test_sink_json),
		cmocka_unit_test(test_sink_text),
		cmocka_unit_test(test_sink_text_quoting),
		cmocka_unit_test(test_text_names_escaped),
		cmocka_unit_test(test_sink_tmpfile),
		cmocka_unit_test(test_sink_write_error),
		cmocka_unit_test(test_boot_to_epoch),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
