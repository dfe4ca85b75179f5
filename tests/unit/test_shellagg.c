// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for the shell invocation aggregator and its JSON. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "exec/shellagg.h"

static struct sbt_shell_class make_class(const char *shell, enum sbt_shell_kind kind,
					 const char *multicall)
{
	struct sbt_shell_class cls;

	memset(&cls, 0, sizeof(cls));
	cls.kind = kind;
	snprintf(cls.shell, sizeof(cls.shell), "%s", shell);
	cls.multicall = multicall;
	return cls;
}

static struct sbt_ancestor anc_of(uint32_t pid, const char *comm, enum sbt_ancestor_source src)
{
	struct sbt_ancestor a;

	memset(&a, 0, sizeof(a));
	a.pid = pid;
	snprintf(a.comm, sizeof(a.comm), "%s", comm);
	a.source = src;
	return a;
}

/* The aggregator's JSON, printed and parsed back: what a consumer sees. */
static json_object *round_trip(const struct sbt_shellagg *agg)
{
	json_object *obj = sbt_shellagg_to_json(agg), *parsed;

	assert_non_null(obj);
	parsed = json_tokener_parse(json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PLAIN));
	assert_non_null(parsed);
	json_object_put(obj);
	return parsed;
}

static json_object *field(json_object *obj, const char *key, json_type type)
{
	json_object *v = NULL;

	if (!json_object_object_get_ex(obj, key, &v))
		fail_msg("missing key \"%s\"", key);
	if (!json_object_is_type(v, type))
		fail_msg("key \"%s\": type %s, want %s", key,
			 json_type_to_name(json_object_get_type(v)), json_type_to_name(type));
	return v;
}

static const char *str_field(json_object *obj, const char *key)
{
	return json_object_get_string(field(obj, key, json_type_string));
}

static int64_t int_field(json_object *obj, const char *key)
{
	return json_object_get_int64(field(obj, key, json_type_int));
}

static json_object *location(json_object *root, size_t i)
{
	json_object *locs = field(root, "locations", json_type_array);

	assert_true(i < json_object_array_length(locs));
	return json_object_array_get_idx(locs, i);
}

static void test_empty(void **state)
{
	struct sbt_shellagg *agg = sbt_shellagg_new();
	json_object *obj;

	assert_non_null(agg);
	assert_int_equal(sbt_shellagg_count(agg), 0);
	assert_int_equal(sbt_shellagg_nr_locations(agg), 0);
	obj = sbt_shellagg_to_json(agg);
	assert_non_null(obj);
	assert_string_equal(json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PLAIN),
			    "{\"count\":0,\"failed\":0,\"unidentified\":{\"count\":0,"
			    "\"executables\":[],\"omitted\":0},\"locations\":[],\"omitted\":{"
			    "\"locations\":0,\"count\":0},\"grouped_by\":\"shell,kind,command,"
			    "chain\"}");
	json_object_put(obj);
	sbt_shellagg_free(agg);
	sbt_shellagg_free(NULL);
}

/* One location per distinct command: the same command under the same chain is counted. */
static void test_grouping(void **state)
{
	struct sbt_shellagg *agg = sbt_shellagg_new();
	struct sbt_shell_class one = make_class("sh", SBT_SHELL_COMMAND, NULL);
	struct sbt_shell_class two = make_class("sh", SBT_SHELL_COMMAND, NULL);
	const char *argv1[] = { "sh", "-c", "echo one" };
	const char *argv2[] = { "sh", "-c", "echo two" };
	struct sbt_ancestor anc1[] = { anc_of(20, "npm", SBT_ANC_EXEC),
				       anc_of(10, "make", SBT_ANC_EXEC) };
	/* Same comms, other pids and sources: the same location. */
	struct sbt_ancestor anc2[] = { anc_of(21, "npm", SBT_ANC_PROC),
				       anc_of(11, "make", SBT_ANC_EVENT) };
	json_object *root, *loc, *argv;

	one.command = argv1[2];
	two.command = argv2[2];
	assert_non_null(agg);
	assert_int_equal(sbt_shellagg_add(agg, &one, 100, "/bin/sh", argv1, 3, anc1, 2), 0);
	assert_int_equal(sbt_shellagg_add(agg, &two, 101, "/usr/bin/sh", argv2, 3, anc2, 2), 0);
	assert_int_equal(sbt_shellagg_add(agg, &two, 102, "/bin/sh", argv2, 3, anc1, 2), 0);
	assert_int_equal(sbt_shellagg_count(agg), 3);
	assert_int_equal(sbt_shellagg_nr_locations(agg), 2);

	root = round_trip(agg);
	assert_int_equal(int_field(root, "count"), 3);
	loc = location(root, 0);
	assert_int_equal(int_field(loc, "count"), 1);
	assert_string_equal(str_field(loc, "command"), "echo one");
	loc = location(root, 1);
	assert_int_equal(int_field(loc, "count"), 2);
	assert_string_equal(str_field(loc, "command"), "echo two");
	/* The first sample is kept. */
	assert_int_equal(int_field(loc, "first_pid"), 101);
	assert_string_equal(str_field(loc, "filename"), "/usr/bin/sh");
	argv = field(loc, "argv", json_type_array);
	assert_string_equal(json_object_get_string(json_object_array_get_idx(argv, 2)), "echo two");
	assert_string_equal(str_field(loc, "chain"), "make>npm");
	json_object_put(root);
	sbt_shellagg_free(agg);
}

/* The command of a script, a shebang script and a direct shell: its arguments, quoted. */
static void test_command_text(void **state)
{
	struct sbt_shellagg *agg = sbt_shellagg_new();
	struct sbt_shell_class script = make_class("bash", SBT_SHELL_SCRIPT, NULL);
	struct sbt_shell_class direct = make_class("sh", SBT_SHELL_DIRECT, NULL);
	const char *a1[] = { "bash", "build.sh", "a b", "it's" };
	const char *a2[] = { "sh" };
	json_object *root;

	(void)state;
	assert_int_equal(sbt_shellagg_add(agg, &script, 1, "/bin/bash", a1, 4, NULL, 0), 0);
	assert_int_equal(sbt_shellagg_add(agg, &direct, 2, "/bin/sh", a2, 1, NULL, 0), 0);
	root = round_trip(agg);
	assert_string_equal(str_field(location(root, 0), "command"), "build.sh 'a b' 'it'\\''s'");
	assert_string_equal(str_field(location(root, 1), "command"), "");
	json_object_put(root);
	sbt_shellagg_free(agg);
}

static void test_new_locations(void **state)
{
	struct sbt_shellagg *agg = sbt_shellagg_new();
	struct sbt_shell_class sh_c = make_class("sh", SBT_SHELL_COMMAND, NULL);
	struct sbt_shell_class sh_s = make_class("sh", SBT_SHELL_SCRIPT, NULL);
	struct sbt_shell_class bash_c = make_class("bash", SBT_SHELL_COMMAND, NULL);
	const char *argv[] = { "sh", "-c", "true" };
	struct sbt_ancestor make_npm[] = { anc_of(20, "npm", SBT_ANC_EXEC),
					   anc_of(10, "make", SBT_ANC_EXEC) };
	struct sbt_ancestor npm_make[] = { anc_of(20, "make", SBT_ANC_EXEC),
					   anc_of(10, "npm", SBT_ANC_EXEC) };
	struct sbt_ancestor make_only[] = { anc_of(10, "make", SBT_ANC_EXEC) };
	/* A comm may hold '>': the key is the list of comms, not the joined text. */
	struct sbt_ancestor gt[] = { anc_of(10, "make>npm", SBT_ANC_EXEC) };
	static const char *const want_chain[] = {
		"make>npm", "npm>make", "make", "make>npm", "make>npm", "", "make>npm", "npm",
	};
	json_object *root;
	size_t i;

	assert_non_null(agg);
	assert_int_equal(sbt_shellagg_add(agg, &sh_c, 1, "/bin/sh", argv, 3, make_npm, 2), 0);
	assert_int_equal(sbt_shellagg_add(agg, &sh_c, 2, "/bin/sh", argv, 3, npm_make, 2), 0);
	assert_int_equal(sbt_shellagg_add(agg, &sh_c, 3, "/bin/sh", argv, 3, make_only, 1), 0);
	assert_int_equal(sbt_shellagg_add(agg, &sh_s, 4, "/bin/sh", argv, 3, make_npm, 2), 0);
	assert_int_equal(sbt_shellagg_add(agg, &bash_c, 5, "/bin/bash", argv, 3, make_npm, 2), 0);
	assert_int_equal(sbt_shellagg_add(agg, &sh_c, 6, "/bin/sh", argv, 3, NULL, 0), 0);
	assert_int_equal(sbt_shellagg_add(agg, &sh_c, 7, "/bin/sh", argv, 3, gt, 1), 0);
	/* Repeats of earlier keys, in another order; then the nearest level only. */
	assert_int_equal(sbt_shellagg_add(agg, &bash_c, 8, "/bin/bash", argv, 3, make_npm, 2), 0);
	assert_int_equal(sbt_shellagg_add(agg, &sh_c, 9, "/bin/sh", argv, 3, make_npm, 2), 0);
	assert_int_equal(sbt_shellagg_add(agg, &sh_c, 10, "/bin/sh", argv, 3, make_npm, 1), 0);
	assert_int_equal(sbt_shellagg_count(agg), 10);
	assert_int_equal(sbt_shellagg_nr_locations(agg), 8);

	root = round_trip(agg);
	assert_int_equal(json_object_array_length(field(root, "locations", json_type_array)), 8);
	for (i = 0; i < 8; i++) {
		json_object *loc = location(root, i);
		int64_t want_pid = i < 7 ? (int64_t)i + 1 : 10;

		/* Order of first appearance. */
		assert_int_equal(int_field(loc, "first_pid"), want_pid);
		assert_string_equal(str_field(loc, "chain"), want_chain[i]);
	}
	assert_int_equal(int_field(location(root, 0), "count"), 2);
	assert_int_equal(int_field(location(root, 4), "count"), 2);
	assert_string_equal(str_field(location(root, 3), "kind"), "script");
	assert_string_equal(str_field(location(root, 4), "shell"), "bash");
	json_object_put(root);

	/* Bad arguments. */
	assert_int_equal(sbt_shellagg_add(NULL, &sh_c, 1, "/bin/sh", argv, 3, NULL, 0), -EINVAL);
	assert_int_equal(sbt_shellagg_add(agg, NULL, 1, "/bin/sh", argv, 3, NULL, 0), -EINVAL);
	assert_int_equal(sbt_shellagg_add(agg, &sh_c, 1, "/bin/sh", argv, 3, NULL, 2), -EINVAL);
	assert_int_equal(sbt_shellagg_count(agg), 10);
	sbt_shellagg_free(agg);
}

static void test_copies(void **state)
{
	struct sbt_shellagg *agg = sbt_shellagg_new();
	char shell[] = "busybox sh", multicall[] = "busybox";
	char filename[] = "/bin/busybox";
	char a0[] = "sh", a1[] = "-c", a2[] = "echo hi";
	char *argv[] = { a0, a1, a2 };
	struct sbt_ancestor anc[] = { anc_of(20, "npm", SBT_ANC_EXEC),
				      anc_of(10, "make", SBT_ANC_PROC) };
	struct sbt_shell_class cls = make_class(shell, SBT_SHELL_COMMAND, multicall);
	json_object *obj;
	char before[4096];

	assert_non_null(agg);
	assert_int_equal(
		sbt_shellagg_add(agg, &cls, 42, filename, (const char *const *)argv, 3, anc, 2), 0);
	obj = sbt_shellagg_to_json(agg);
	assert_non_null(obj);
	snprintf(before, sizeof(before), "%s",
		 json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PLAIN));
	json_object_put(obj);

	/* Scribble over everything the caller passed. */
	memset(shell, 'X', sizeof(shell) - 1);
	memset(multicall, 'X', sizeof(multicall) - 1);
	memset(filename, 'X', sizeof(filename) - 1);
	memset(a0, 'X', sizeof(a0) - 1);
	memset(a2, 'X', sizeof(a2) - 1);
	argv[1] = a0;
	memset(anc, 'X', sizeof(anc));
	memset(cls.shell, 'Y', sizeof(cls.shell));
	cls.multicall = NULL;

	obj = sbt_shellagg_to_json(agg);
	assert_non_null(obj);
	assert_string_equal(json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PLAIN), before);
	json_object_put(obj);
	assert_non_null(strstr(before, "\"echo hi\""));
	assert_non_null(strstr(before, "\"chain\":\"make>npm\""));
	assert_non_null(strstr(before, "\"multicall\":\"busybox\""));
	sbt_shellagg_free(agg);
}

static void test_json_shape(void **state)
{
	struct sbt_shellagg *agg = sbt_shellagg_new();
	struct sbt_shell_class cls = make_class("sh", SBT_SHELL_COMMAND, NULL);
	struct sbt_shell_class bb = make_class("busybox sh", SBT_SHELL_SHEBANG, "busybox");
	const char *argv[] = { "sh", "-c", "npm run build" };
	struct sbt_ancestor anc[] = { anc_of(30, "sh", SBT_ANC_EXEC),
				      anc_of(20, "npm", SBT_ANC_PROC),
				      anc_of(10, "make", SBT_ANC_EVENT) };
	static const char *const loc_keys[] = { "shell",    "kind",	 "multicall",
						"filename", "command",	 "identified_by",
						"argv",	    "ancestors", "chain",
						"count",    "first_pid", "failed" };
	json_object *root, *loc, *arr, *a;
	size_t i;

	assert_non_null(agg);
	assert_int_equal(sbt_shellagg_add(agg, &cls, 31, "/bin/sh", argv, 3, anc, 3), 0);
	assert_int_equal(sbt_shellagg_add(agg, &bb, 32, NULL, NULL, 0, NULL, 0), 0);

	root = round_trip(agg);
	assert_int_equal(json_object_object_length(root), 6);
	assert_int_equal(int_field(root, "count"), 2);
	assert_int_equal(json_object_array_length(field(root, "locations", json_type_array)), 2);

	loc = location(root, 0);
	assert_int_equal(json_object_object_length(loc), 12);
	for (i = 0; i < sizeof(loc_keys) / sizeof(loc_keys[0]); i++)
		assert_true(json_object_object_get_ex(loc, loc_keys[i], NULL));
	assert_string_equal(str_field(loc, "shell"), "sh");
	assert_string_equal(str_field(loc, "kind"), "command");
	field(loc, "multicall", json_type_null);
	assert_string_equal(str_field(loc, "filename"), "/bin/sh");
	arr = field(loc, "argv", json_type_array);
	assert_int_equal(json_object_array_length(arr), 3);
	for (i = 0; i < 3; i++)
		assert_string_equal(json_object_get_string(json_object_array_get_idx(arr, i)),
				    argv[i]);
	/* Ancestors nearest first, chain outermost first. */
	arr = field(loc, "ancestors", json_type_array);
	assert_int_equal(json_object_array_length(arr), 3);
	a = json_object_array_get_idx(arr, 0);
	assert_int_equal(json_object_object_length(a), 3);
	assert_int_equal(int_field(a, "pid"), 30);
	assert_string_equal(str_field(a, "comm"), "sh");
	assert_string_equal(str_field(a, "source"), "exec");
	a = json_object_array_get_idx(arr, 1);
	assert_int_equal(int_field(a, "pid"), 20);
	assert_string_equal(str_field(a, "comm"), "npm");
	assert_string_equal(str_field(a, "source"), "proc");
	a = json_object_array_get_idx(arr, 2);
	assert_int_equal(int_field(a, "pid"), 10);
	assert_string_equal(str_field(a, "comm"), "make");
	assert_string_equal(str_field(a, "source"), "event");
	assert_string_equal(str_field(loc, "chain"), "make>npm>sh");
	assert_int_equal(int_field(loc, "count"), 1);
	assert_int_equal(int_field(loc, "first_pid"), 31);

	/* No filename, argv or ancestors: null, [], [] and "". */
	loc = location(root, 1);
	assert_int_equal(json_object_object_length(loc), 12);
	assert_string_equal(str_field(loc, "shell"), "busybox sh");
	assert_string_equal(str_field(loc, "kind"), "shebang");
	assert_string_equal(str_field(loc, "multicall"), "busybox");
	field(loc, "filename", json_type_null);
	assert_int_equal(json_object_array_length(field(loc, "argv", json_type_array)), 0);
	assert_int_equal(json_object_array_length(field(loc, "ancestors", json_type_array)), 0);
	assert_string_equal(str_field(loc, "chain"), "");
	assert_int_equal(int_field(loc, "first_pid"), 32);
	json_object_put(root);
	sbt_shellagg_free(agg);
}

static void test_bounded_strings(void **state)
{
	struct sbt_shellagg *agg = sbt_shellagg_new();
	struct sbt_shell_class cls;
	struct sbt_ancestor anc;
	const char *argv[] = { "sh", NULL };
	json_object *root, *loc, *arr;

	assert_non_null(agg);
	/* Unterminated fixed arrays from the caller: read within bounds only. */
	memset(&cls, 0, sizeof(cls));
	cls.kind = SBT_SHELL_DIRECT;
	memset(cls.shell, 's', sizeof(cls.shell));
	memset(&anc, 0, sizeof(anc));
	anc.pid = 9;
	anc.source = SBT_ANC_EXEC;
	memset(anc.comm, 'c', sizeof(anc.comm));
	assert_int_equal(sbt_shellagg_add(agg, &cls, 1, "/bin/sh", argv, 2, &anc, 1), 0);
	assert_int_equal(sbt_shellagg_add(agg, &cls, 2, "/bin/sh", argv, 2, &anc, 1), 0);
	assert_int_equal(sbt_shellagg_nr_locations(agg), 1);

	root = round_trip(agg);
	loc = location(root, 0);
	assert_int_equal(strlen(str_field(loc, "shell")), SBT_SHELL_NAME_MAX - 1);
	assert_string_equal(str_field(loc, "chain"), "ccccccccccccccc");
	assert_string_equal(str_field(loc, "kind"), "direct");
	arr = field(loc, "argv", json_type_array);
	assert_int_equal(json_object_array_length(arr), 2);
	assert_true(json_object_is_type(json_object_array_get_idx(arr, 1), json_type_null));
	json_object_put(root);
	sbt_shellagg_free(agg);
}

static void test_count_totals(void **state)
{
	const size_t nr = 3000;
	struct sbt_shellagg *agg = sbt_shellagg_new();
	struct sbt_shell_class cls = make_class("bash", SBT_SHELL_SCRIPT, NULL);
	const char *argv[] = { "bash", "build.sh" };
	struct sbt_ancestor anc[2];
	json_object *root, *loc;
	char want[64];
	size_t i, round;
	uint64_t total = 0, listed = 0;

	assert_non_null(agg);
	anc[1] = anc_of(1, "make", SBT_ANC_EXEC);
	/* Location i is hit i % 5 + 1 times; rounds interleave the locations. */
	for (round = 0; round < 5; round++) {
		for (i = 0; i < nr; i++) {
			if (round > i % 5)
				continue;
			anc[0] = anc_of((uint32_t)(i + 2), "", SBT_ANC_EXEC);
			snprintf(anc[0].comm, sizeof(anc[0].comm), "job%zu", i);
			assert_int_equal(sbt_shellagg_add(agg, &cls, (uint32_t)(1000 + i),
							  "/bin/bash", argv, 2, anc, 2),
					 0);
			total++;
		}
	}
	assert_int_equal(sbt_shellagg_count(agg), total);
	/* Past the cap, locations are counted, not listed: listed + omitted = total. */
	assert_int_equal(sbt_shellagg_nr_locations(agg), SBT_SHELLAGG_MAX_LOCATIONS);

	root = round_trip(agg);
	assert_int_equal(int_field(root, "count"), (int64_t)total);
	assert_int_equal(json_object_array_length(field(root, "locations", json_type_array)),
			 SBT_SHELLAGG_MAX_LOCATIONS);
	for (i = 0; i < SBT_SHELLAGG_MAX_LOCATIONS; i++) {
		loc = location(root, i);
		snprintf(want, sizeof(want), "make>job%zu", i);
		assert_string_equal(str_field(loc, "chain"), want);
		assert_int_equal(int_field(loc, "count"), (int64_t)(i % 5 + 1));
		assert_int_equal(int_field(loc, "first_pid"), (int64_t)(1000 + i));
		listed += i % 5 + 1;
	}
	loc = field(root, "omitted", json_type_object);
	assert_int_equal(int_field(loc, "locations"), (int64_t)(nr - SBT_SHELLAGG_MAX_LOCATIONS));
	assert_int_equal(int_field(loc, "count"), (int64_t)(total - listed));
	json_object_put(root);
	sbt_shellagg_free(agg);
}

/* A shell tried that failed is its own location, counted, and named by its errno. */
static void test_failed(void **state)
{
	struct sbt_shellagg *agg = sbt_shellagg_new();
	struct sbt_shell_class cls = make_class("sh", SBT_SHELL_COMMAND, NULL);
	const char *argv[] = { "sh", "-c", "echo x" };
	json_object *root;

	(void)state;
	assert_int_equal(sbt_shellagg_add(agg, &cls, 10, "/bin/sh", argv, 3, NULL, 0), 0);
	assert_int_equal(
		sbt_shellagg_add_failed(agg, &cls, ENOENT, 11, "/bin/sh", argv, 3, NULL, 0), 0);
	assert_int_equal(
		sbt_shellagg_add_failed(agg, &cls, ENOENT, 12, "/bin/sh", argv, 3, NULL, 0), 0);
	assert_int_equal(sbt_shellagg_count(agg), 3);
	assert_int_equal(sbt_shellagg_failed_count(agg), 2);
	assert_int_equal(sbt_shellagg_nr_locations(agg), 2); /* ran and failed apart */
	root = round_trip(agg);
	assert_int_equal(int_field(root, "failed"), 2);
	field(location(root, 0), "failed", json_type_null);
	assert_string_equal(str_field(location(root, 1), "failed"), "ENOENT");
	assert_int_equal(int_field(location(root, 1), "count"), 2);
	json_object_put(root);
	sbt_shellagg_free(agg);
}

/* Unidentified executables: grouped by file, a -c string noticed, the list bounded. */
static void test_unidentified(void **state)
{
	struct sbt_shellagg *agg = sbt_shellagg_new();
	const char *c[] = { "./x", "-ec", "id" }, *plain[] = { "./x", "file.c" };
	const char *cc[] = { "cc", "-c", "a.c" }, *dashdash[] = { "x", "--config", "y" };
	json_object *root, *u, *list;
	char name[32];

	(void)state;
	assert_true(sbt_is_command_string(c, 3));
	assert_true(sbt_is_command_string(cc, 3)); /* the shape only: the file decides */
	assert_false(sbt_is_command_string(plain, 2));
	assert_false(sbt_is_command_string(dashdash, 3));
	assert_false(sbt_is_command_string(c, 2));
	assert_int_equal(sbt_shellagg_unidentified(agg, "/w/x", "x", 5, plain, 2), 0);
	assert_int_equal(sbt_shellagg_unidentified(agg, "/w/x", "x", 6, c, 3), 0);
	for (int i = 0; i < SBT_SHELLAGG_MAX_UNIDENTIFIED + 3; i++) {
		snprintf(name, sizeof(name), "/w/y%d", i);
		assert_int_equal(sbt_shellagg_unidentified(agg, name, "y", 7, plain, 2), 0);
	}
	assert_int_equal(sbt_shellagg_unidentified_count(agg), SBT_SHELLAGG_MAX_UNIDENTIFIED + 5);
	assert_int_equal(sbt_shellagg_count(agg), 0); /* no shell */
	root = round_trip(agg);
	u = field(root, "unidentified", json_type_object);
	list = field(u, "executables", json_type_array);
	assert_int_equal(json_object_array_length(list), SBT_SHELLAGG_MAX_UNIDENTIFIED);
	assert_int_equal(int_field(u, "omitted"), 4);
	assert_string_equal(str_field(json_object_array_get_idx(list, 0), "filename"), "/w/x");
	assert_int_equal(int_field(json_object_array_get_idx(list, 0), "count"), 2);
	assert_int_equal(int_field(json_object_array_get_idx(list, 0), "first_pid"), 5);
	assert_true(json_object_get_boolean(
		field(json_object_array_get_idx(list, 0), "command_string", json_type_boolean)));
	json_object_put(root);
	sbt_shellagg_free(agg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_failed),	      cmocka_unit_test(test_unidentified),
		cmocka_unit_test(test_empty),	      cmocka_unit_test(test_grouping),
		cmocka_unit_test(test_new_locations), cmocka_unit_test(test_copies),
		cmocka_unit_test(test_json_shape),    cmocka_unit_test(test_bounded_strings),
		cmocka_unit_test(test_count_totals),  cmocka_unit_test(test_command_text),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
