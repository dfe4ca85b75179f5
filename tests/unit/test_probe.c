// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for the probe's pure parts (userspace/probe/). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "probe/probe.h"
#include "lib/sha256.h"
#include "../../userspace/probe/kind.h"

#define SHA_ABC	  "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
#define SHA_EMPTY "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
#define KEY_A	  "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define MAX_WORDS 8
#define CACHE_OK  "{\"cache\":{\"key\":\"" KEY_A "\"}}"

/* --- word splitting ----------------------------------------------------- */

struct split_case {
	const char *desc;
	const char *in;
	int max;  /* 0: MAX_WORDS */
	int argc; /* -1: error */
	const char *argv[MAX_WORDS];
	const char *err;
};

#define WORDS(...)                                                                                 \
	.argc = sizeof((const char *[]){ __VA_ARGS__ }) / sizeof(const char *),                    \
	.argv = { __VA_ARGS__ }
#define FAILS(e) .argc = -1, .err = e

static const struct split_case split_cases[] = {
	{ "one word", "make", 0, WORDS("make") },
	{ "two words", "make all", 0, WORDS("make", "all") },
	{ "blanks around and between", "   make    all  ", 0, WORDS("make", "all") },
	{ "tabs", "\tnpm\trun\t\tbuild\t", 0, WORDS("npm", "run", "build") },
	{ "newlines are blanks", "a\nb\r\nc", 0, WORDS("a", "b", "c") },
	{ "single quotes keep blanks", "echo 'a  b'", 0, WORDS("echo", "a  b") },
	{ "double quotes keep blanks", "echo \"a \tb\"", 0, WORDS("echo", "a \tb") },
	{ "empty single-quoted word", "echo ''", 0, WORDS("echo", "") },
	{ "empty double-quoted word", "echo \"\" x", 0, WORDS("echo", "", "x") },
	{ "only an empty word", "''", 0, WORDS("") },
	{ "quotes join a word", "a'b'\"c\"d", 0, WORDS("abcd") },
	{ "backslash escapes a blank", "echo a\\ b", 0, WORDS("echo", "a b") },
	{ "backslash escapes a quote", "echo \\'x\\\"", 0, WORDS("echo", "'x\"") },
	{ "backslash escapes a backslash", "\\\\", 0, WORDS("\\") },
	{ "\\\" inside double quotes", "echo \"a\\\"b\"", 0, WORDS("echo", "a\"b") },
	{ "\\\\ inside double quotes", "echo \"a\\\\b\"", 0, WORDS("echo", "a\\b") },
	{ "other escapes kept in double quotes", "echo \"a\\nb\\$c\"", 0,
	  WORDS("echo", "a\\nb\\$c") },
	{ "single quotes keep backslashes", "echo 'a\\b\\'", 0, WORDS("echo", "a\\b\\") },
	{ "double quote inside single quotes", "echo 'it\"s'", 0, WORDS("echo", "it\"s") },
	{ "single quote inside double quotes", "echo \"it's\"", 0, WORDS("echo", "it's") },
	{ "$HOME kept literally", "echo $HOME ${X}", 0, WORDS("echo", "$HOME", "${X}") },
	{ "globs kept literally", "ls *.c ?.h [ab]", 0, WORDS("ls", "*.c", "?.h", "[ab]") },
	{ "; kept literally", "make; rm -rf /", 0, WORDS("make;", "rm", "-rf", "/") },
	{ "operators kept literally", "a&&b | c > d", 0, WORDS("a&&b", "|", "c", ">", "d") },
	{ "command substitution kept literally", "echo `id` $(id)", 0,
	  WORDS("echo", "`id`", "$(id)") },
	{ "exactly max words", "a b c", 3, WORDS("a", "b", "c") },
	{ "too many words", "a b c d", 3, FAILS("too many words") },
	{ "unterminated single quote", "echo 'abc", 0, FAILS("unterminated single quote") },
	{ "unterminated double quote", "echo \"abc", 0, FAILS("unterminated double quote") },
	{ "escaped closing double quote", "echo \"abc\\\"", 0, FAILS("unterminated double quote") },
	{ "trailing backslash", "echo abc\\", 0, FAILS("backslash at the end") },
	{ "empty command", "", 0, FAILS("empty command") },
	{ "blank command", "  \t \n ", 0, FAILS("empty command") },
};

static void test_split_words(void **state)
{
	for (size_t i = 0; i < sizeof(split_cases) / sizeof(split_cases[0]); i++) {
		const struct split_case *c = &split_cases[i];
		int max = c->max ? c->max : MAX_WORDS;
		char *argv[MAX_WORDS + 1], err[128] = "";
		int n;

		memset(argv, 0x5a, sizeof(argv));
		n = sbt_split_words(c->in, argv, max, err, sizeof(err));
		if (n != c->argc)
			fail_msg("%s: got %d words, want %d (%s)", c->desc, n, c->argc, err);
		if (n < 0) {
			if (!strstr(err, c->err))
				fail_msg("%s: error '%s', want '%s'", c->desc, err, c->err);
			assert_null(argv[0]);
			continue;
		}
		for (int j = 0; j < n; j++) {
			if (strcmp(argv[j], c->argv[j]) != 0)
				fail_msg("%s: word %d is '%s', want '%s'", c->desc, j, argv[j],
					 c->argv[j]);
			free(argv[j]);
		}
		assert_null(argv[n]);
	}
}

static void test_split_words_edges(void **state)
{
	char *argv[SBT_PROBE_MAX_ARGS + 1], err[128] = "";
	char big[3 * (SBT_PROBE_MAX_ARGS + 1) + 1];

	assert_int_equal(sbt_split_words(NULL, argv, 4, err, sizeof(err)), -1);
	assert_string_equal(err, "empty command");
	assert_int_equal(sbt_split_words("a", argv, 0, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "too many words"));
	/* a NULL err buffer is fine */
	assert_int_equal(sbt_split_words("'", argv, 4, NULL, 0), -1);

	/* SBT_PROBE_MAX_ARGS words fit, one more does not */
	big[0] = '\0';
	for (int i = 0; i < SBT_PROBE_MAX_ARGS; i++)
		strcat(big, "xy ");
	assert_int_equal(sbt_split_words(big, argv, SBT_PROBE_MAX_ARGS, err, sizeof(err)),
			 SBT_PROBE_MAX_ARGS);
	assert_null(argv[SBT_PROBE_MAX_ARGS]);
	for (int i = 0; i < SBT_PROBE_MAX_ARGS; i++) {
		assert_string_equal(argv[i], "xy");
		free(argv[i]);
	}
	strcat(big, "z");
	assert_int_equal(sbt_split_words(big, argv, SBT_PROBE_MAX_ARGS, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "too many words"));
	assert_null(argv[0]);
}

/* --- temp repos --------------------------------------------------------- */

struct repo {
	char path[64];
};

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

static void rm_rf(const char *path)
{
	nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static int repo_setup(void **state)
{
	struct repo *r = calloc(1, sizeof(*r));

	if (!r)
		return -1;
	strcpy(r->path, "/tmp/sbt-probe-test.XXXXXX");
	if (!mkdtemp(r->path)) {
		free(r);
		return -1;
	}
	*state = r;
	return 0;
}

static int repo_teardown(void **state)
{
	struct repo *r = *state;

	rm_rf(r->path);
	free(r);
	return 0;
}

static void put_bytes(const struct repo *r, const char *name, const char *data, size_t len)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", r->path, name);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

static void put(const struct repo *r, const char *name, const char *text)
{
	put_bytes(r, name, text, strlen(text));
}

static void sub(const struct repo *r, const char *name, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s", r->path, name);
}

#define DOCKERFILE_BUILDER                                                                         \
	"FROM golang:1.22 AS builder\nRUN make\nFROM scratch\nCOPY --from=builder /x /x\n"
#define PACKAGE_BUILD "{ \"name\": \"x\", \"scripts\": { \"build\": \"tsc\" } }"

static void plan_ok(const struct repo *r, const char *cmd, const char *target,
		    struct sbt_build_plan *plan)
{
	char err[512] = "";

	if (sbt_probe_plan(r->path, cmd, target, NULL, plan, err, sizeof(err)) != 0)
		fail_msg("plan failed: %s", err);
}

static void plan_fails(const struct repo *r, const char *cmd, const char *target, const char *want)
{
	struct sbt_build_plan plan;
	char err[512] = "";

	assert_int_equal(sbt_probe_plan(r->path, cmd, target, NULL, &plan, err, sizeof(err)), -1);
	if (!strstr(err, want))
		fail_msg("error '%s', want '%s'", err, want);
	/* the plan is left empty and freeing it again is harmless */
	assert_int_equal(plan.argc, 0);
	assert_null(plan.argv[0]);
	assert_int_equal(plan.nr_inputs, 0);
	sbt_build_plan_free(&plan);
}

static void assert_argv(const struct sbt_build_plan *plan, int argc, const char *const *want)
{
	assert_int_equal(plan->argc, argc);
	for (int i = 0; i < argc; i++)
		assert_string_equal(plan->argv[i], want[i]);
	assert_null(plan->argv[argc]);
}

static const char *const npm_argv[] = { "npm", "run", "build" };
static const char *const make_argv[] = { "make", "-B" };

/* --- plans -------------------------------------------------------------- */

static void test_plan_cmd_wins(void **state)
{
	static const char *const want[] = { "sh", "-c", "echo hi; make" };
	struct repo *r = *state;
	struct sbt_build_plan plan;

	put(r, "Dockerfile", DOCKERFILE_BUILDER);
	put(r, "package.json", PACKAGE_BUILD);
	put(r, "Makefile", "all:\n");
	plan_ok(r, "sh -c 'echo hi; make'", NULL, &plan);
	assert_int_equal(plan.kind, SBT_BUILD_CMD);
	assert_argv(&plan, 3, want);
	assert_string_equal(plan.target, "");
	assert_int_equal(plan.nr_inputs, 3);
	assert_string_equal(plan.inputs[0].name, "Dockerfile");
	assert_string_equal(plan.inputs[1].name, "package.json");
	assert_string_equal(plan.inputs[2].name, "Makefile");
	sbt_build_plan_free(&plan);
	sbt_build_plan_free(&plan);

	/* cmd also wins over a malformed package.json, which it never reads */
	put(r, "package.json", "{ nope");
	plan_ok(r, "make", NULL, &plan);
	assert_int_equal(plan.kind, SBT_BUILD_CMD);
	sbt_build_plan_free(&plan);
}

static void test_plan_cmd_script_input(void **state)
{
	struct repo *r = *state;
	struct sbt_build_plan plan;
	char dir[256];

	put(r, "build.sh", "abc");
	sub(r, "scripts", dir, sizeof(dir));
	assert_int_equal(mkdir(dir, 0755), 0);
	put(r, "scripts/ci.sh", "");
	put(r, "Makefile", "all:\n");

	plan_ok(r, "./build.sh --fast", NULL, &plan);
	assert_int_equal(plan.kind, SBT_BUILD_CMD);
	assert_string_equal(plan.argv[0], "./build.sh");
	assert_int_equal(plan.nr_inputs, 2);
	assert_string_equal(plan.inputs[0].name, "Makefile");
	assert_string_equal(plan.inputs[1].name, "build.sh");
	assert_string_equal(plan.inputs[1].sha256, SHA_ABC);
	sbt_build_plan_free(&plan);

	plan_ok(r, "build.sh", NULL, &plan);
	assert_int_equal(plan.nr_inputs, 2);
	assert_string_equal(plan.inputs[1].name, "build.sh");
	sbt_build_plan_free(&plan);

	plan_ok(r, ".//scripts/../scripts/./ci.sh", NULL, &plan);
	assert_int_equal(plan.nr_inputs, 2);
	assert_string_equal(plan.inputs[1].name, "scripts/ci.sh");
	assert_string_equal(plan.inputs[1].sha256, SHA_EMPTY);
	sbt_build_plan_free(&plan);

	/* the Makefile named as the command is recorded once */
	plan_ok(r, "./Makefile", NULL, &plan);
	assert_int_equal(plan.nr_inputs, 1);
	sbt_build_plan_free(&plan);

	/* not in the repo: a program on PATH, an absolute path, a path climbing out, a directory */
	plan_ok(r, "sh build.sh", NULL, &plan);
	assert_int_equal(plan.nr_inputs, 1);
	sbt_build_plan_free(&plan);
	plan_ok(r, "/bin/sh -c true", NULL, &plan);
	assert_int_equal(plan.nr_inputs, 1);
	sbt_build_plan_free(&plan);
	plan_ok(r, "../build.sh", NULL, &plan);
	assert_int_equal(plan.nr_inputs, 1);
	sbt_build_plan_free(&plan);
	plan_ok(r, "./scripts", NULL, &plan);
	assert_int_equal(plan.nr_inputs, 1);
	sbt_build_plan_free(&plan);
}

static void test_plan_cmd_bad(void **state)
{
	struct repo *r = *state;

	plan_fails(r, "echo 'x", NULL, "bad --cmd: unterminated single quote");
	plan_fails(r, "", NULL, "bad --cmd: empty command");
	plan_fails(r, "   ", NULL, "bad --cmd: empty command");
}

static void test_plan_dockerfile_default_final(void **state)
{
	struct repo *r = *state;
	struct sbt_build_plan plan;

	put(r, "Dockerfile", DOCKERFILE_BUILDER);
	put(r, "package.json", PACKAGE_BUILD);
	put(r, "Makefile", "all:\n");
	plan_ok(r, NULL, NULL, &plan);
	assert_int_equal(plan.kind, SBT_BUILD_DOCKERFILE);
	assert_int_equal(plan.argc, 0);
	assert_null(plan.argv[0]);
	assert_string_equal(plan.target, ""); /* the final stage: the image a container runs */
	assert_int_equal(plan.nr_inputs, 3);
	sbt_build_plan_free(&plan);
}

static void test_plan_dockerfile_syntax(void **state)
{
	/* target: the stage built ("" the unnamed final one); NULL: no FROM, npm; error: refused */
	static const struct {
		const char *text;
		const char *target;
		const char *error;
	} cases[] = {
		{ "from --platform=$BUILDPLATFORM node:20 as Builder\n", "Builder", NULL },
		{ "FROM\tnode:20\tAS\tbuilder\r\n", "builder", NULL },
		{ "  FROM node:20 AS builder", "builder", NULL }, /* no final newline */
		{ "FROM \\\n  node:20 \\\n  # a comment\n\n  AS builder\nRUN x\n", "builder",
		  NULL },
		{ "FROM node:20 \\   \n AS builder\n", "builder", NULL },
		{ "# escape=`\nFROM node:20 `\n AS builder\n", "builder", NULL },
		{ "# escape=`\nFROM node:20 \\\nAS builder\n", NULL, "Dockerfile:2: " },
		/* no builder stage: the final stage is built, never npm behind the user's back */
		{ "# FROM node:20 AS builder\nFROM alpine\n", "", NULL },
		{ "FROM node:20 AS builders\n", "builders", NULL },
		{ "FROM node:20 AS deps\nFROM deps AS app\nRUN make\n", "app", NULL },
		{ "RUN echo FROM x AS builder\n", NULL, "Dockerfile:1: RUN before the first FROM" },
		{ "FROM node:20 AS\n", NULL, "Dockerfile:1: " },
		{ "FROM node:20 AS builder extra\n", NULL, "Dockerfile:1: " },
		{ "FROM node:20 builder\n", NULL, "Dockerfile:1: " },
		{ "", NULL, NULL },
		{ "# only a comment\n", NULL, NULL },
	};
	struct repo *r = *state;

	put(r, "package.json", PACKAGE_BUILD);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct sbt_build_plan plan;

		put(r, "Dockerfile", cases[i].text);
		if (cases[i].error) {
			plan_fails(r, NULL, NULL, cases[i].error);
			continue;
		}
		plan_ok(r, NULL, NULL, &plan);
		if (cases[i].target) {
			if (plan.kind != SBT_BUILD_DOCKERFILE)
				fail_msg("case %zu: kind %d, want the Dockerfile", i, plan.kind);
			assert_string_equal(plan.target, cases[i].target);
			assert_non_null(strstr(plan.why, "Dockerfile: "));
		} else if (plan.kind != SBT_BUILD_NPM) {
			fail_msg("case %zu: kind %d, want npm", i, plan.kind);
		} else {
			assert_non_null(strstr(plan.why, "package.json scripts.build"));
		}
		sbt_build_plan_free(&plan);
	}
}

/* The final stage, and the plan says so (a stage named builder is no default). */
static void test_plan_dockerfile_final_stage(void **state)
{
	struct repo *r = *state;
	struct sbt_build_plan plan;

	put(r, "Dockerfile", "FROM node:20 AS deps\nFROM node:20\nRUN npm run build\n");
	put(r, "package.json", PACKAGE_BUILD);
	plan_ok(r, NULL, NULL, &plan);
	assert_int_equal(plan.kind, SBT_BUILD_DOCKERFILE);
	assert_string_equal(plan.target, "");
	assert_string_equal(plan.why,
			    "Dockerfile: the final stage (line 2), the image a container runs");
	assert_int_equal(plan.nr_inputs, 2);
	assert_string_equal(plan.inputs[0].name, "Dockerfile");
	assert_string_equal(plan.inputs[1].name, "package.json");
	sbt_build_plan_free(&plan);
}

static void test_plan_target(void **state)
{
	struct repo *r = *state;
	struct sbt_build_plan plan;

	put(r, "Dockerfile",
	    "FROM node:20 AS deps\nFROM deps AS builder\nFROM builder AS test\nFROM scratch\n");
	plan_ok(r, NULL, "test", &plan);
	assert_int_equal(plan.kind, SBT_BUILD_DOCKERFILE);
	assert_string_equal(plan.target, "test");
	sbt_build_plan_free(&plan);

	plan_ok(r, NULL, "DEPS", &plan);
	assert_string_equal(plan.target, "deps");
	sbt_build_plan_free(&plan);

	plan_fails(r, NULL, "nope", "Dockerfile has no stage 'nope' (stages: deps, builder, test)");
	plan_fails(r, NULL, "", "bad --target");
	plan_fails(r, NULL, "-x", "bad --target");
	plan_fails(r, NULL, "a b", "bad --target");
	plan_fails(r, NULL, "a1234567890123456789012345678901234567890123456789012345678901234",
		   "bad --target");

	/* a missing --target stage is an error even when package.json could build */
	put(r, "package.json", PACKAGE_BUILD);
	put(r, "Dockerfile", "FROM alpine\n");
	plan_fails(r, NULL, "builder", "Dockerfile has no stage 'builder' (stages: none named)");
}

/*
 * --file: another Dockerfile is the build (and an input, with the default
 * one), named in the plan; a missing one, one without FROM, one with --cmd
 * are errors, never a reason to build something else.
 */
static void test_plan_file(void **state)
{
	struct repo *r = *state;
	struct sbt_build_plan plan;
	char dir[256], err[512] = "";

	put(r, "Dockerfile", "FROM alpine\n");
	put(r, "package.json", PACKAGE_BUILD);
	sub(r, "deploy", dir, sizeof(dir));
	assert_int_equal(mkdir(dir, 0755), 0);
	put(r, "deploy/Dockerfile.prod", "FROM node:20 AS deps\nRUN npm ci\nFROM deps AS app\n");
	assert_int_equal(sbt_probe_plan(r->path, NULL, NULL, "deploy/Dockerfile.prod", &plan, err,
					sizeof(err)),
			 0);
	assert_int_equal(plan.kind, SBT_BUILD_DOCKERFILE);
	assert_string_equal(plan.dockerfile, "deploy/Dockerfile.prod");
	assert_string_equal(plan.target, "app");
	assert_string_equal(plan.why, "deploy/Dockerfile.prod: the final stage 'app' (line 3), the "
				      "image a container runs");
	assert_int_equal(plan.nr_inputs, 3);
	assert_string_equal(plan.inputs[0].name, "Dockerfile");
	assert_string_equal(plan.inputs[1].name, "package.json");
	assert_string_equal(plan.inputs[2].name, "deploy/Dockerfile.prod");
	sbt_build_plan_free(&plan);

	/* --target names a stage of --file's Dockerfile */
	assert_int_equal(sbt_probe_plan(r->path, NULL, "deps", "deploy/Dockerfile.prod", &plan, err,
					sizeof(err)),
			 0);
	assert_string_equal(plan.target, "deps");
	sbt_build_plan_free(&plan);
	assert_int_equal(sbt_probe_plan(r->path, NULL, "nope", "deploy/Dockerfile.prod", &plan, err,
					sizeof(err)),
			 -1);
	assert_non_null(
		strstr(err, "deploy/Dockerfile.prod has no stage 'nope' (stages: deps, app)"));

	/* without --file, the default one */
	plan_ok(r, NULL, NULL, &plan);
	assert_string_equal(plan.dockerfile, "Dockerfile");
	assert_int_equal(plan.nr_inputs, 2);
	sbt_build_plan_free(&plan);

	assert_int_equal(
		sbt_probe_plan(r->path, NULL, NULL, "Containerfile", &plan, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "--file Containerfile: no such regular file in"));
	put(r, "Containerfile", "# nothing\n");
	assert_int_equal(
		sbt_probe_plan(r->path, NULL, NULL, "Containerfile", &plan, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "--file Containerfile: no FROM in it"));
	put(r, "Containerfile", "FROM alpine\nRUN --network=host true\n");
	assert_int_equal(
		sbt_probe_plan(r->path, NULL, NULL, "Containerfile", &plan, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "Containerfile:2: "));
	assert_int_equal(sbt_probe_plan(r->path, "make", NULL, "deploy/Dockerfile.prod", &plan, err,
					sizeof(err)),
			 -1);
	assert_non_null(strstr(err, "not with --cmd"));
}

static void test_plan_target_no_dockerfile(void **state)
{
	struct repo *r = *state;

	put(r, "Makefile", "all:\n");
	plan_fails(r, NULL, "builder", "no Dockerfile in");
}

static void test_plan_precedence(void **state)
{
	struct repo *r = *state;
	struct sbt_build_plan plan;
	char path[256];

	put(r, "Makefile", "all:\n");
	put(r, "package.json", PACKAGE_BUILD);
	put(r, "Dockerfile", DOCKERFILE_BUILDER);
	plan_ok(r, NULL, NULL, &plan);
	assert_int_equal(plan.kind, SBT_BUILD_DOCKERFILE);
	sbt_build_plan_free(&plan);

	sub(r, "Dockerfile", path, sizeof(path));
	assert_int_equal(unlink(path), 0);
	plan_ok(r, NULL, NULL, &plan);
	assert_int_equal(plan.kind, SBT_BUILD_NPM);
	assert_argv(&plan, 3, npm_argv);
	sbt_build_plan_free(&plan);

	sub(r, "package.json", path, sizeof(path));
	assert_int_equal(unlink(path), 0);
	plan_ok(r, NULL, NULL, &plan);
	assert_int_equal(plan.kind, SBT_BUILD_MAKE);
	assert_argv(&plan, 2, make_argv);
	assert_int_equal(plan.nr_inputs, 1);
	sbt_build_plan_free(&plan);
}

static void test_plan_makefile_names(void **state)
{
	static const char *const names[] = { "Makefile", "makefile", "GNUmakefile" };
	struct repo *r = *state;
	char path[256];

	for (size_t i = 0; i < 3; i++) {
		struct sbt_build_plan plan;

		put(r, names[i], "all:\n");
		plan_ok(r, NULL, NULL, &plan);
		assert_int_equal(plan.kind, SBT_BUILD_MAKE);
		assert_argv(&plan, 2, make_argv);
		assert_int_equal(plan.nr_inputs, 1);
		assert_string_equal(plan.inputs[0].name, names[i]);
		sbt_build_plan_free(&plan);
		sub(r, names[i], path, sizeof(path));
		assert_int_equal(unlink(path), 0);
	}
}

static void test_plan_package_without_build(void **state)
{
	static const char *const texts[] = {
		"{}",
		"{ \"scripts\": {} }",
		"{ \"scripts\": { \"test\": \"jest\" } }",
		"{ \"scripts\": { \"build\": \"\" } }",
		"{ \"scripts\": { \"build\": 5 } }",
		"{ \"scripts\": { \"build\": null } }",
		"{ \"scripts\": \"build\" }",
		"{ \"build\": \"tsc\" }",
	};
	struct repo *r = *state;

	put(r, "Makefile", "all:\n");
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		struct sbt_build_plan plan;

		put(r, "package.json", texts[i]);
		plan_ok(r, NULL, NULL, &plan);
		if (plan.kind != SBT_BUILD_MAKE)
			fail_msg("'%s': kind %d, want make", texts[i], plan.kind);
		assert_int_equal(plan.nr_inputs, 2);
		sbt_build_plan_free(&plan);
	}
}

/* A start script and no build: a plan of its own after make (it installs, the boot answers). */
static void test_plan_npm_start(void **state)
{
	struct repo *r = *state;
	struct sbt_build_plan plan;

	put(r, "package.json", "{ \"scripts\": { \"start\": \"node server.js\" } }");
	plan_ok(r, NULL, NULL, &plan);
	assert_int_equal(plan.kind, SBT_BUILD_NPM_START);
	assert_string_equal(plan.argv[0], "true"); /* no dependencies: nothing to install */
	assert_null(plan.argv[1]);
	assert_non_null(strstr(plan.why, "npm start"));
	sbt_build_plan_free(&plan);
	put(r, "package.json",
	    "{ \"scripts\": { \"start\": \"node s.js\" }, \"dependencies\": { \"a\": \"1\" } }");
	plan_ok(r, NULL, NULL, &plan);
	assert_string_equal(plan.argv[0], "npm");
	assert_string_equal(plan.argv[1], "install"); /* no lockfile */
	sbt_build_plan_free(&plan);
	put(r, "package-lock.json", "{}");
	plan_ok(r, NULL, NULL, &plan);
	assert_string_equal(plan.argv[1], "ci");
	sbt_build_plan_free(&plan);
	put(r, "Makefile", "all:\n"); /* a Makefile is the build then */
	plan_ok(r, NULL, NULL, &plan);
	assert_int_equal(plan.kind, SBT_BUILD_MAKE);
	sbt_build_plan_free(&plan);
}

static void test_plan_package_malformed(void **state)
{
	static const struct {
		const char *text;
		const char *err;
	} cases[] = {
		{ "{ \"scripts\": { \"build\": \"tsc\" }", "package.json: not valid JSON" },
		{ "", "package.json: not valid JSON" },
		{ "garbage", "package.json: not valid JSON" },
		{ "{} {}", "package.json: not valid JSON (trailing data" },
		{ "[\"scripts\"]", "package.json: not a JSON object" },
		{ "\"x\" ", "package.json: not a JSON object" },
	};
	struct repo *r = *state;

	put(r, "Makefile", "all:\n");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		put(r, "package.json", cases[i].text);
		plan_fails(r, NULL, NULL, cases[i].err);
	}
	put_bytes(r, "package.json", "{\"a\":\0}", 7);
	plan_fails(r, NULL, NULL, "NUL");
}

static void test_plan_huge_files(void **state)
{
	struct repo *r = *state;
	size_t n = (1u << 20) + 1;
	char *big = malloc(n);

	assert_non_null(big);
	memset(big, ' ', n);
	big[0] = '{';
	big[n - 1] = '}';
	put_bytes(r, "package.json", big, n);
	plan_fails(r, NULL, NULL, "package.json: larger than 1024 KiB");
	/* exactly 1 MiB is fine: {} without a build script */
	big[n - 2] = '}';
	put_bytes(r, "package.json", big, n - 1);
	plan_fails(r, NULL, NULL, "no build found");

	memset(big, '#', n);
	put_bytes(r, "Dockerfile", big, n);
	plan_fails(r, NULL, NULL, "Dockerfile: larger than 1024 KiB");
	free(big);
}

static void test_plan_nothing(void **state)
{
	struct repo *r = *state;
	char want[512], path[256];

	put(r, "README.md", "hi\n");
	put(r, "yarn.lock", "");
	sub(r, "Makefile", path, sizeof(path));
	assert_int_equal(mkdir(path, 0755), 0); /* a directory is no Makefile */
	snprintf(want, sizeof(want),
		 "no build found in %s: looked for --cmd, a Dockerfile, "
		 "package.json scripts.build, a Makefile, package.json scripts.start",
		 r->path);
	plan_fails(r, NULL, NULL, want);
}

static void test_plan_bad_repo(void **state)
{
	struct repo *r = *state;
	struct sbt_build_plan plan;
	char err[512], path[256], want[512];

	sub(r, "missing", path, sizeof(path));
	assert_int_equal(sbt_probe_plan(path, "make", NULL, NULL, &plan, err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "%s: No such file or directory", path);
	assert_string_equal(err, want);

	put(r, "file", "");
	sub(r, "file", path, sizeof(path));
	assert_int_equal(sbt_probe_plan(path, "make", NULL, NULL, &plan, err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "%s: Not a directory", path);
	assert_string_equal(err, want);

	assert_int_equal(sbt_probe_plan(NULL, "make", NULL, NULL, &plan, err, sizeof(err)), -1);
	/* a tiny error buffer is truncated, not overrun */
	assert_int_equal(sbt_probe_plan(path, "make", NULL, NULL, &plan, err, 4), -1);
	assert_int_equal(strlen(err), 3);
}

static void test_inputs_and_digests(void **state)
{
	static const char *const want[] = {
		"Dockerfile",  "package.json",	 "package-lock.json", "npm-shrinkwrap.json",
		"yarn.lock",   "pnpm-lock.yaml", "Makefile",	      "makefile",
		"GNUmakefile",
	};
	struct repo *r = *state;
	struct sbt_build_plan plan;
	char hex[65], path[256];

	/* created in another order than the report's */
	put(r, "GNUmakefile", "abc");
	put(r, "makefile", "abc");
	put(r, "Makefile", "");
	put(r, "pnpm-lock.yaml", "");
	put(r, "yarn.lock", "abc");
	put(r, "npm-shrinkwrap.json", "{}");
	put(r, "package-lock.json", "{}");
	put(r, "package.json", PACKAGE_BUILD);
	put(r, "Dockerfile", "# no FROM: not a build, so npm\n");
	put(r, "README.md", "not an input");
	put(r, "Cargo.lock", "not an input");

	plan_ok(r, NULL, NULL, &plan);
	assert_int_equal(plan.kind, SBT_BUILD_NPM);
	assert_int_equal(plan.nr_inputs, 9);
	for (int i = 0; i < 9; i++) {
		assert_string_equal(plan.inputs[i].name, want[i]);
		assert_int_equal(strlen(plan.inputs[i].sha256), 64);
		assert_int_equal(strspn(plan.inputs[i].sha256, "0123456789abcdef"), 64);
	}
	sub(r, "Dockerfile", path, sizeof(path));
	assert_int_equal(sbt_sha256_file(path, hex), 0);
	assert_string_equal(plan.inputs[0].sha256, hex);
	assert_string_equal(plan.inputs[4].sha256, SHA_ABC);
	assert_string_equal(plan.inputs[5].sha256, SHA_EMPTY);
	assert_string_equal(plan.inputs[6].sha256, SHA_EMPTY);
	sub(r, "package.json", path, sizeof(path));
	assert_int_equal(sbt_sha256_file(path, hex), 0);
	assert_string_equal(plan.inputs[1].sha256, hex);
	sbt_build_plan_free(&plan);
}

static void test_inputs_special_files(void **state)
{
	struct repo *r = *state;
	struct sbt_build_plan plan;
	char path[256], dir[256];

	put(r, "Makefile", "all:\n");
	sub(r, "locks", dir, sizeof(dir));
	assert_int_equal(mkdir(dir, 0755), 0);
	put(r, "locks/yarn.lock", "abc");
	/* a symlink inside the repo is followed */
	sub(r, "yarn.lock", path, sizeof(path));
	assert_int_equal(symlink("locks/yarn.lock", path), 0);
	/* a dangling symlink is absent */
	sub(r, "package-lock.json", path, sizeof(path));
	assert_int_equal(symlink("does-not-exist", path), 0);
	/* a FIFO is skipped, without hanging */
	sub(r, "pnpm-lock.yaml", path, sizeof(path));
	assert_int_equal(mkfifo(path, 0600), 0);
	/* a directory is skipped */
	sub(r, "npm-shrinkwrap.json", path, sizeof(path));
	assert_int_equal(mkdir(path, 0755), 0);

	plan_ok(r, NULL, NULL, &plan);
	assert_int_equal(plan.kind, SBT_BUILD_MAKE);
	assert_int_equal(plan.nr_inputs, 2);
	assert_string_equal(plan.inputs[0].name, "yarn.lock");
	assert_string_equal(plan.inputs[0].sha256, SHA_ABC);
	assert_string_equal(plan.inputs[1].name, "Makefile");
	sbt_build_plan_free(&plan);

	/* a symlink resolving outside the repo is refused, not followed */
	sub(r, "Dockerfile", path, sizeof(path));
	assert_int_equal(symlink("/etc/passwd", path), 0);
	plan_fails(r, NULL, NULL, "Dockerfile: resolves to /etc/passwd, outside the repo");
	plan_fails(r, "make", NULL, "outside the repo");
	assert_int_equal(unlink(path), 0);
	assert_int_equal(symlink("../", path), 0);
	plan_fails(r, NULL, NULL, "outside the repo");
	assert_int_equal(unlink(path), 0);

	/* the same for the --cmd script, also through a directory symlink */
	sub(r, "tools", path, sizeof(path));
	assert_int_equal(symlink("/bin", path), 0);
	plan_fails(r, "tools/sh -c true", NULL, "outside the repo");
}

static void test_sha256(void **state)
{
	struct repo *r = *state;
	char hex[65], path[256];

	sbt_sha256_bytes("abc", 3, hex);
	assert_string_equal(hex, SHA_ABC);
	sbt_sha256_bytes("", 0, hex);
	assert_string_equal(hex, SHA_EMPTY);
	sbt_sha256_bytes(NULL, 0, hex);
	assert_string_equal(hex, SHA_EMPTY);

	put(r, "abc", "abc");
	sub(r, "abc", path, sizeof(path));
	assert_int_equal(sbt_sha256_file(path, hex), 0);
	assert_string_equal(hex, SHA_ABC);
	put(r, "empty", "");
	sub(r, "empty", path, sizeof(path));
	assert_int_equal(sbt_sha256_file(path, hex), 0);
	assert_string_equal(hex, SHA_EMPTY);

	sub(r, "missing", path, sizeof(path));
	assert_int_equal(sbt_sha256_file(path, hex), -ENOENT);
	assert_string_equal(hex, "");
	assert_int_equal(sbt_sha256_file(r->path, hex), -EISDIR);
}

/* --- cache key ---------------------------------------------------------- */

static void key_of(const struct repo *r, const char *cmd, const char *target, const char *version,
		   char hex[65])
{
	struct sbt_build_plan plan;

	plan_ok(r, cmd, target, &plan);
	sbt_probe_cache_key(&plan, version, hex);
	sbt_build_plan_free(&plan);
	assert_int_equal(strlen(hex), 64);
	assert_int_equal(strspn(hex, "0123456789abcdef"), 64);
}

static void test_cache_key(void **state)
{
	struct repo *r = *state;
	char base[65], k[65];

	put(r, "Dockerfile", "FROM a AS builder\nFROM b AS other\n");
	put(r, "package.json", PACKAGE_BUILD);
	put(r, "yarn.lock", "abc");

	key_of(r, NULL, NULL, "0.1.0", base);
	key_of(r, NULL, NULL, "0.1.0", k);
	assert_string_equal(base, k);

	key_of(r, NULL, NULL, "0.1.1", k);
	assert_string_not_equal(base, k);
	key_of(r, NULL, "builder", "0.1.0", k); /* not the final stage */
	assert_string_not_equal(base, k);
	key_of(r, "npm run build", NULL, "0.1.0", k);
	assert_string_not_equal(base, k);

	put(r, "yarn.lock", "abd");
	key_of(r, NULL, NULL, "0.1.0", k);
	assert_string_not_equal(base, k);
	put(r, "yarn.lock", "abc");
	key_of(r, NULL, NULL, "0.1.0", k);
	assert_string_equal(base, k);

	put(r, "pnpm-lock.yaml", "");
	key_of(r, NULL, NULL, "0.1.0", k);
	assert_string_not_equal(base, k);
}

static void test_cache_key_no_concatenation(void **state)
{
	struct sbt_build_plan a, b;
	char ka[65], kb[65];

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	a.kind = b.kind = SBT_BUILD_CMD;
	a.argc = b.argc = 2;
	a.argv[0] = "ab";
	a.argv[1] = "c";
	b.argv[0] = "a";
	b.argv[1] = "bc";
	sbt_probe_cache_key(&a, "1", ka);
	sbt_probe_cache_key(&b, "1", kb);
	assert_string_not_equal(ka, kb);

	/* the version against the first word */
	b.argv[0] = "1ab";
	b.argv[1] = "c";
	sbt_probe_cache_key(&b, "", kb);
	assert_string_not_equal(ka, kb);

	/* argv against inputs; input name against digest */
	memset(&b, 0, sizeof(b));
	b.kind = SBT_BUILD_CMD;
	b.argc = 1;
	b.argv[0] = "ab";
	b.nr_inputs = 1;
	strcpy(b.inputs[0].name, "c");
	sbt_probe_cache_key(&b, "1", kb);
	assert_string_not_equal(ka, kb);

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	a.kind = b.kind = SBT_BUILD_MAKE;
	a.nr_inputs = b.nr_inputs = 1;
	strcpy(a.inputs[0].name, "ab");
	strcpy(a.inputs[0].sha256, "c");
	strcpy(b.inputs[0].name, "a");
	strcpy(b.inputs[0].sha256, "bc");
	sbt_probe_cache_key(&a, "1", ka);
	sbt_probe_cache_key(&b, "1", kb);
	assert_string_not_equal(ka, kb);

	/* the kind counts too */
	b = a;
	b.kind = SBT_BUILD_NPM;
	sbt_probe_cache_key(&b, "1", kb);
	assert_string_not_equal(ka, kb);
	/* and a NULL version is the empty one */
	sbt_probe_cache_key(&a, NULL, ka);
	sbt_probe_cache_key(&a, "", kb);
	assert_string_equal(ka, kb);
}

/* --- cache files -------------------------------------------------------- */

static json_object *report_with_key(const char *key)
{
	json_object *o = json_object_new_object(), *c = json_object_new_object();

	json_object_object_add(c, "key", json_object_new_string(key));
	json_object_object_add(o, "cache", c);
	json_object_object_add(o, "confidence", json_object_new_string("high"));
	json_object_object_add(o, "count", json_object_new_int(3));
	return o;
}

static int count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d))) {
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			n++;
	}
	closedir(d);
	return n;
}

static void test_cache_round_trip(void **state)
{
	struct repo *r = *state;
	json_object *rep = report_with_key(KEY_A), *back = (json_object *)1;
	char dir[256], path[512];
	struct stat st;

	snprintf(dir, sizeof(dir), "%s/x/y/sbtrace", r->path);
	assert_int_equal(sbt_cache_read(dir, KEY_A, &back), -ENOENT);
	assert_null(back);

	assert_int_equal(sbt_cache_write(dir, KEY_A, rep), 0);
	assert_int_equal(stat(dir, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	snprintf(path, sizeof(path), "%s/x", r->path);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	/* atomic write: the entry and nothing else */
	assert_int_equal(count_entries(dir), 1);
	snprintf(path, sizeof(path), "%s/%s.json", dir, KEY_A);
	assert_int_equal(stat(path, &st), 0);

	assert_int_equal(sbt_cache_read(dir, KEY_A, &back), 0);
	assert_non_null(back);
	assert_true(json_object_equal(rep, back));
	json_object_put(back);

	/* overwrite */
	json_object_object_add(rep, "count", json_object_new_int(4));
	assert_int_equal(sbt_cache_write(dir, KEY_A, rep), 0);
	assert_int_equal(count_entries(dir), 1);
	assert_int_equal(sbt_cache_read(dir, KEY_A, &back), 0);
	assert_true(json_object_equal(rep, back));
	json_object_put(back);

	/* an existing directory, with a trailing slash */
	snprintf(path, sizeof(path), "%s/", dir);
	assert_int_equal(sbt_cache_write(path, KEY_A, rep), 0);
	assert_int_equal(count_entries(dir), 1);
	json_object_put(rep);
}

static void test_cache_corrupt(void **state)
{
	static const char *const texts[] = {
		"garbage",
		"",
		"{\"cache\":{\"key\":\"" KEY_A "\"",
		"[1, 2]",
		"\"" KEY_A "\"",
		"{}",
		"{\"cache\":\"" KEY_A "\"}",
		"{\"cache\":{}}",
		"{\"cache\":{\"key\":1}}",
		"{\"cache\":{\"key\":\"" KEY_A "0\"}}",
		"{\"cache\":{\"key\":"
		"\"1123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\"}}",
		"{\"cache\":{\"key\":\"" KEY_A "\"}} x",
	};
	struct repo *r = *state;
	char name[128], path[256];
	json_object *back;
	size_t n = (4u << 20) + 1;
	char *big;

	snprintf(name, sizeof(name), "%s.json", KEY_A);
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		put(r, name, texts[i]);
		back = (json_object *)1;
		if (sbt_cache_read(r->path, KEY_A, &back) != -EBADMSG)
			fail_msg("'%s' was not refused", texts[i]);
		assert_null(back);
	}
	put(r, name, CACHE_OK "\n");
	assert_int_equal(sbt_cache_read(r->path, KEY_A, &back), 0);
	json_object_put(back);

	/* too large */
	big = malloc(n);
	assert_non_null(big);
	memset(big, ' ', n);
	memcpy(big, CACHE_OK, strlen(CACHE_OK));
	put_bytes(r, name, big, n);
	assert_int_equal(sbt_cache_read(r->path, KEY_A, &back), -EBADMSG);
	put_bytes(r, name, big, n - 1);
	assert_int_equal(sbt_cache_read(r->path, KEY_A, &back), 0);
	json_object_put(back);
	free(big);

	/* a directory in its place */
	snprintf(path, sizeof(path), "%s/%s", r->path, name);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(mkdir(path, 0700), 0);
	assert_int_equal(sbt_cache_read(r->path, KEY_A, &back), -EBADMSG);
}

static void test_cache_bad_key(void **state)
{
	static const char *const keys[] = {
		NULL,
		"",
		"0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef",
		"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde",
		"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0",
		"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdeg",
		"../../../../../../etc/passwd",
	};
	struct repo *r = *state;
	json_object *rep = report_with_key(KEY_A), *back;

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		assert_int_equal(sbt_cache_write(r->path, keys[i], rep), -EINVAL);
		assert_int_equal(sbt_cache_read(r->path, keys[i], &back), -EINVAL);
	}
	assert_int_equal(sbt_cache_write(r->path, KEY_A, NULL), -EINVAL);
	assert_int_equal(sbt_cache_write(NULL, KEY_A, rep), -EINVAL);
	assert_int_equal(sbt_cache_read(NULL, KEY_A, &back), -EINVAL);
	assert_int_equal(count_entries(r->path), 0);
	json_object_put(rep);
}

static void test_cache_write_fails(void **state)
{
	struct repo *r = *state;
	json_object *rep = report_with_key(KEY_A);
	char dir[256];

	/* DIR is a file */
	put(r, "file", "");
	sub(r, "file", dir, sizeof(dir));
	assert_int_equal(sbt_cache_write(dir, KEY_A, rep), -ENOTDIR);
	snprintf(dir, sizeof(dir), "%s/file/sub", r->path);
	assert_int_equal(sbt_cache_write(dir, KEY_A, rep), -ENOTDIR);
	assert_int_equal(count_entries(r->path), 1);
	json_object_put(rep);
}

static void restore_env(const char *name, char *saved)
{
	if (saved) {
		setenv(name, saved, 1);
		free(saved);
	} else {
		unsetenv(name);
	}
}

static void test_cache_default_dir(void **state)
{
	char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	char buf[256], small[8];

	xdg = xdg ? strdup(xdg) : NULL;
	home = home ? strdup(home) : NULL;

	setenv("XDG_CACHE_HOME", "/xdg/cache", 1);
	setenv("HOME", "/home/u", 1);
	assert_int_equal(sbt_cache_default_dir(buf, sizeof(buf)), 0);
	assert_string_equal(buf, "/xdg/cache/sbtrace");
	assert_int_equal(sbt_cache_default_dir(small, sizeof(small)), -ENAMETOOLONG);

	setenv("XDG_CACHE_HOME", "relative/cache", 1);
	assert_int_equal(sbt_cache_default_dir(buf, sizeof(buf)), 0);
	assert_string_equal(buf, "/home/u/.cache/sbtrace");
	setenv("XDG_CACHE_HOME", "", 1);
	assert_int_equal(sbt_cache_default_dir(buf, sizeof(buf)), 0);
	assert_string_equal(buf, "/home/u/.cache/sbtrace");
	unsetenv("XDG_CACHE_HOME");
	assert_int_equal(sbt_cache_default_dir(buf, sizeof(buf)), 0);
	assert_string_equal(buf, "/home/u/.cache/sbtrace");

	unsetenv("HOME");
	assert_int_equal(sbt_cache_default_dir(buf, sizeof(buf)), -ENOENT);
	setenv("HOME", "", 1);
	assert_int_equal(sbt_cache_default_dir(buf, sizeof(buf)), -ENOENT);

	restore_env("XDG_CACHE_HOME", xdg);
	restore_env("HOME", home);
}

#define REPO_TEST(f) cmocka_unit_test_setup_teardown(f, repo_setup, repo_teardown)

/* The kinds' table: a row for every SBT_BUILD_* value, each with what its callers ask. */
static void test_kind_table(void **state)
{
	static const char *const names[] = {
		NULL, "cmd", "dockerfile", "npm", "make", "npm_start"
	};

	(void)state;
	assert_int_equal(SBT_BUILD__MAX, 6); /* a new kind: a row here too */
	assert_null(probe_kind_of(SBT_BUILD_NONE));
	assert_null(probe_kind_of(SBT_BUILD__MAX));
	for (int i = SBT_BUILD_NONE + 1; i < SBT_BUILD__MAX; i++) {
		const struct probe_kind *k = probe_kind_of((enum sbt_build_kind)i);

		assert_non_null(k);
		assert_string_equal(k->name, names[i]);
		assert_non_null(k->label);
		assert_non_null(k->looked_for);
		assert_non_null(k->detect);
		assert_non_null(k->sites);
		/* a kind with its own backend builds with an engine: a host tool's backend */
		if (k->own_backend)
			assert_non_null(sbt_backend_caps(k->backend)->host_tools);
		/* the build's catch-all site is the kind's own unless it makes its own sites */
		if (k->sites == probe_kind_sites)
			assert_non_null(k->instruction);
	}
	assert_true(probe_kind_of(SBT_BUILD_DOCKERFILE)->boots_image);
	assert_false(probe_kind_of(SBT_BUILD_MAKE)->boots_image);
	assert_non_null(probe_kind_of(SBT_BUILD_CMD)->doubt); /* the "did nothing" rule */
	assert_null(probe_kind_of(SBT_BUILD_NPM)->doubt);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kind_table),
		cmocka_unit_test(test_split_words),
		cmocka_unit_test(test_split_words_edges),
		REPO_TEST(test_plan_cmd_wins),
		REPO_TEST(test_plan_cmd_script_input),
		REPO_TEST(test_plan_cmd_bad),
		REPO_TEST(test_plan_dockerfile_default_final),
		REPO_TEST(test_plan_dockerfile_syntax),
		REPO_TEST(test_plan_dockerfile_final_stage),
		REPO_TEST(test_plan_target),
		REPO_TEST(test_plan_target_no_dockerfile),
		REPO_TEST(test_plan_file),
		REPO_TEST(test_plan_precedence),
		REPO_TEST(test_plan_makefile_names),
		REPO_TEST(test_plan_package_without_build),
		REPO_TEST(test_plan_npm_start),
		REPO_TEST(test_plan_package_malformed),
		REPO_TEST(test_plan_huge_files),
		REPO_TEST(test_plan_nothing),
		REPO_TEST(test_plan_bad_repo),
		REPO_TEST(test_inputs_and_digests),
		REPO_TEST(test_inputs_special_files),
		REPO_TEST(test_sha256),
		REPO_TEST(test_cache_key),
		cmocka_unit_test(test_cache_key_no_concatenation),
		REPO_TEST(test_cache_round_trip),
		REPO_TEST(test_cache_corrupt),
		REPO_TEST(test_cache_bad_key),
		REPO_TEST(test_cache_write_fails),
		cmocka_unit_test(test_cache_default_dir),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
