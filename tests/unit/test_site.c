// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for the probe's sites (userspace/probe/site.c): where a shell came from. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe/site.h"
#include "exec/shell.h"

#define SANDBOX_CG 100

/* An exec record with argv (NULL-terminated list), in cgroup cg. */
static struct sbt_exec mk_exec(uint32_t pid, uint64_t cg, const char **argv)
{
	struct sbt_exec e;

	memset(&e, 0, sizeof(e));
	e.pid = pid;
	e.cgroup_id = cg;
	e.argv = argv;
	while (argv[e.argc])
		e.argc++;
	e.filename = argv[0];
	e.interp = "";
	return e;
}

/* Tie and count one exec; its site (-1: none). */
static int feed(struct probe_sites *ss, enum probe_phase ph, uint32_t pid, uint64_t cg,
		const char **argv, const struct sbt_ancestor *anc, size_t nanc)
{
	struct sbt_exec e = mk_exec(pid, cg, argv);
	struct sbt_shell_class cls;
	bool shell = sbt_shell_classify(e.filename, e.interp, e.argv, e.argc, &cls);
	int site = probe_site_of(ss, ph, &e, shell ? &cls : NULL, anc, nanc, SANDBOX_CG);

	if (shell && site >= 0)
		assert_int_equal(probe_site_count(ss, site, &e, &cls, 0, anc, nanc), 0);
	return site;
}

static void parse(const char *text, struct sbt_dockerfile *df)
{
	struct sbt_df_error err;

	assert_int_equal(sbt_dockerfile_parse(text, strlen(text), NULL, df, &err), 0);
}

static const char multistage[] = "FROM base AS builder\n"			 /* 1 */
				 "RUN make   all \\\n  && echo done\n"		 /* 2-3 */
				 "RUN [\"/bin/cp\", \"a\", \"b\"]\n"		 /* 4 */
				 "FROM base AS unused\n"			 /* 5 */
				 "RUN echo same\n"				 /* 6 */
				 "FROM base\n"					 /* 7 */
				 "COPY --from=builder /b /b\n"			 /* 8 */
				 "RUN echo same\n"				 /* 9 */
				 "HEALTHCHECK CMD wget -q localhost || exit 1\n" /* 10 */
				 "CMD node server.js\n";			 /* 11 */

/* The sites of `multistage`'s final stage, into ss. */
static void multistage_sites(struct probe_sites *ss)
{
	struct sbt_dockerfile df;

	parse(multistage, &df);
	probe_sites_init(ss);
	assert_int_equal(probe_sites_dockerfile(ss, &df, df.nr_stages - 1), 0);
	sbt_dockerfile_free(&df); /* the sites keep nothing of the parse */
}

/* The RUN steps: matched by command in order, a step's shells are its, stages known. */
static void test_dockerfile_steps(void **state)
{
	const char *run1[] = { "/bin/sh", "-c", "make all \\\n  && echo done", NULL };
	const char *inner[] = { "sh", "-c", "true", NULL };
	const char *cp[] = { "/bin/cp", "a", "b", NULL };
	const char *runc[] = { "/usr/bin/runc", "init", NULL };
	const char *same[] = { "/bin/sh", "-c", "echo same", NULL };
	struct probe_sites ss;
	struct probe_site_totals t;
	json_object *locs;
	int s;

	(void)state;
	multistage_sites(&ss);

	/* the runtime's own helper starts no step */
	assert_int_equal(feed(&ss, PROBE_BUILD, 10, 201, runc, NULL, 0), -1);
	s = feed(&ss, PROBE_BUILD, 11, 201, run1, NULL, 0);
	assert_true(s >= 0);
	assert_string_equal(ss.v[s].instruction, "RUN");
	assert_int_equal(ss.v[s].line, 2);
	assert_string_equal(ss.v[s].stage, "builder");
	assert_false(ss.v[s].affects_final);
	/* a shell deeper in the same step's cgroup is that RUN's */
	assert_int_equal(feed(&ss, PROBE_BUILD, 12, 201, inner, NULL, 0), s);
	/* an exec-form step is matched by argv; no shell */
	assert_int_equal(ss.v[feed(&ss, PROBE_BUILD, 13, 202, cp, NULL, 0)].line, 4);
	/*
	 * The same text in two stages: the final image's first (the unused
	 * stage may be skipped: its RUN must not take the final one's shell),
	 * then the other's.
	 */
	s = feed(&ss, PROBE_BUILD, 14, 203, same, NULL, 0);
	assert_int_equal(ss.v[s].line, 9);
	assert_true(ss.v[s].affects_final);
	s = feed(&ss, PROBE_BUILD, 15, 204, same, NULL, 0);
	assert_int_equal(ss.v[s].line, 6);
	assert_false(ss.v[s].affects_final);
	/* a step nobody wrote: tied to nothing, counted as affecting */
	s = feed(&ss, PROBE_BUILD, 16, 205, (const char *[]){ "sh", "-c", "other", NULL }, NULL, 0);
	assert_false(ss.v[s].matched);
	assert_true(ss.v[s].affects_final);

	locs = probe_sites_json(&ss, &t);
	assert_int_equal(t.count, 5);
	assert_int_equal(t.affecting, 2); /* line 9 and the unmatched one */
	assert_int_equal(t.build, 5);
	assert_int_equal(json_object_array_length(locs), 5);
	json_object_put(locs);
	probe_sites_free(&ss);
}

/* A skipped stage with the final stage's RUN text: the one step that runs is the final one's. */
static void test_dockerfile_skipped_stage(void **state)
{
	const char *same[] = { "/bin/sh", "-c", "echo same", NULL };
	struct probe_sites ss;
	struct probe_site_totals t;
	json_object *locs;
	int s;

	(void)state;
	multistage_sites(&ss);
	s = feed(&ss, PROBE_BUILD, 14, 203, same, NULL, 0);
	assert_int_equal(ss.v[s].line, 9);
	assert_true(ss.v[s].affects_final);
	locs = probe_sites_json(&ss, &t);
	assert_int_equal(t.affecting, 1);
	json_object_put(locs);
	probe_sites_free(&ss);
}

/* The boot: the container's shells are its CMD's, unless the HEALTHCHECK's command. */
static void test_dockerfile_boot(void **state)
{
	const char *cmd[] = { "/bin/sh", "-c", "node server.js", NULL };
	const char *hc[] = { "/bin/sh", "-c", "wget -q localhost || exit 1", NULL };
	const char *sub[] = { "sh", "-c", "ls", NULL };
	struct sbt_ancestor anc = { .pid = 31 };
	struct probe_sites ss;
	struct sbt_dockerfile df;
	struct probe_site_totals t;
	json_object *locs, *rem, *v;
	int s;

	(void)state;
	parse(multistage, &df);
	probe_sites_init(&ss);
	assert_int_equal(probe_sites_dockerfile(&ss, &df, df.nr_stages - 1), 0);
	sbt_dockerfile_free(&df);
	s = feed(&ss, PROBE_BOOT, 30, 300, cmd, NULL, 0);
	assert_string_equal(ss.v[s].instruction, "CMD");
	assert_int_equal(ss.v[s].line, 11);
	assert_true(ss.v[s].affects_final);
	s = feed(&ss, PROBE_BOOT, 31, 300, hc, NULL, 0);
	assert_string_equal(ss.v[s].instruction, "HEALTHCHECK");
	assert_int_equal(ss.v[s].line, 10);
	/* a shell below the healthcheck's is the healthcheck's */
	assert_int_equal(feed(&ss, PROBE_BOOT, 32, 300, sub, &anc, 1), s);

	locs = probe_sites_json(&ss, &t);
	assert_int_equal(t.boot, 3);
	v = json_object_array_get_idx(locs, 0);
	assert_true(json_object_object_get_ex(v, "remediation", &rem));
	assert_string_equal(json_object_get_string(json_object_object_get(rem, "text")),
			    "CMD [\"node\", \"server.js\"]");
	assert_string_equal(json_object_get_string(json_object_object_get(v, "phase")), "boot");
	/* the healthcheck's command is not simple: no remediation */
	v = json_object_array_get_idx(locs, 1);
	assert_null(json_object_object_get(v, "remediation"));
	json_object_put(locs);
	probe_sites_free(&ss);
}

/*
 * --file: every site of the Dockerfile carries its name (the report's
 * source.file, SARIF's URI), the fixes name it, and its boot's remedy is
 * still an exec form (a Dockerfile's instruction by its stage, not its name).
 */
static void test_dockerfile_named(void **state)
{
	const char *run[] = { "/bin/sh", "-c", "echo same", NULL };
	const char *cmd[] = { "/bin/sh", "-c", "node server.js", NULL };
	struct probe_sites ss;
	struct sbt_dockerfile df;
	struct probe_site_totals t;
	json_object *locs, *v, *rem;
	int s;

	(void)state;
	parse(multistage, &df);
	probe_sites_init(&ss);
	assert_string_equal(ss.dockerfile, "Dockerfile");
	snprintf(ss.dockerfile, sizeof(ss.dockerfile), "deploy/Dockerfile.prod");
	assert_int_equal(probe_sites_dockerfile(&ss, &df, df.nr_stages - 1), 0);
	sbt_dockerfile_free(&df);
	for (int i = 0; i < ss.nr; i++)
		if (ss.v[i].line || ss.v[i].phase == PROBE_BUILD)
			assert_string_equal(ss.v[i].file, "deploy/Dockerfile.prod");
	s = feed(&ss, PROBE_BUILD, 20, 209, run, NULL, 0);
	assert_int_equal(ss.v[s].line, 9);
	assert_non_null(strstr(ss.v[s].fix, "deploy/Dockerfile.prod:9: RUN echo same runs in the "
					    "final stage"));
	s = feed(&ss, PROBE_BOOT, 30, 300, cmd, NULL, 0);
	assert_int_equal(ss.v[s].line, 11);
	locs = probe_sites_json(&ss, &t);
	v = json_object_array_get_idx(locs, 1);
	assert_string_equal(json_object_get_string(json_object_object_get(
				    json_object_object_get(v, "source"), "file")),
			    "deploy/Dockerfile.prod");
	assert_true(json_object_object_get_ex(v, "remediation", &rem));
	assert_string_equal(json_object_get_string(json_object_object_get(rem, "text")),
			    "CMD [\"node\", \"server.js\"]");
	json_object_put(locs);
	probe_sites_free(&ss);
}

/* Tie and count one exec of a file other than argv[0] (a `#!` script: interp is its shell). */
static int feed_file(struct probe_sites *ss, uint32_t pid, const char *filename, const char *interp,
		     const char **argv, const struct sbt_ancestor *anc, size_t nanc)
{
	struct sbt_exec e = mk_exec(pid, 300, argv);
	struct sbt_shell_class cls;
	bool shell;
	int site;

	e.filename = filename;
	e.interp = interp;
	shell = sbt_shell_classify(e.filename, e.interp, e.argv, e.argc, &cls);
	site = probe_site_of(ss, PROBE_BOOT, &e, shell ? &cls : NULL, anc, nanc, SANDBOX_CG);
	if (shell && site >= 0)
		assert_int_equal(probe_site_count(ss, site, &e, &cls, 0, anc, nanc), 0);
	return site;
}

static const char *const node_entry[] = { "docker-entrypoint.sh" };
static const char *entry_argv[] = { "/bin/sh", "/usr/local/bin/docker-entrypoint.sh", "node",
				    "server.js", NULL };
#define ENTRY_FILE "/usr/local/bin/docker-entrypoint.sh"

/* The sites of `text` (final stage) with node's inherited ENTRYPOINT. */
static void node_sites(struct probe_sites *ss, const char *text)
{
	struct sbt_dockerfile df;

	parse(text, &df);
	probe_sites_init(ss);
	assert_int_equal(probe_sites_dockerfile(ss, &df, df.nr_stages - 1), 0);
	sbt_dockerfile_free(&df);
	assert_int_equal(probe_sites_base_entry(ss, "node:20-slim", node_entry, 1), 0);
}

static const char *str_at(json_object *o, const char *a, const char *b)
{
	json_object *v = json_object_object_get(o, a);

	return json_object_get_string(b ? json_object_object_get(v, b) : v);
}

/*
 * The base image's entrypoint script is the container's first process: its
 * shell has origin base_image and does not affect the final image; once that
 * process execs node, a shell node starts is the app's (its CMD's).
 */
static void test_base_entrypoint(void **state)
{
	const char *runc[] = { "/usr/bin/runc", "init", NULL };
	const char *node[] = { "node", "server.js", NULL };
	const char *sub[] = { "/bin/sh", "-c", "echo hi", NULL };
	struct sbt_ancestor anc = { .pid = 40 };
	struct probe_sites ss;
	struct probe_site_totals t;
	json_object *locs, *v;
	int s;

	(void)state;
	node_sites(&ss, "FROM node:20-slim\nCOPY server.js .\nCMD [\"node\", \"server.js\"]\n");
	assert_int_equal(feed_file(&ss, 40, runc[0], "", runc, NULL, 0), -1);
	s = feed_file(&ss, 40, ENTRY_FILE, "/bin/sh", entry_argv, NULL, 0);
	assert_int_equal(s, ss.base_entry);
	assert_false(ss.v[s].affects_final);
	feed_file(&ss, 40, "/usr/bin/node", "", node, NULL, 0);
	s = feed_file(&ss, 41, "/bin/sh", "", sub, &anc, 1);
	assert_string_equal(ss.v[s].instruction, "CMD");
	assert_true(ss.v[s].affects_final);

	locs = probe_sites_json(&ss, &t);
	assert_int_equal(t.boot, 2);
	assert_int_equal(t.affecting, 1);
	assert_int_equal(json_object_array_length(locs), 2);
	v = json_object_array_get_idx(locs, 0); /* the CMD's site comes first */
	assert_string_equal(str_at(v, "origin", NULL), "repo");
	assert_null(json_object_object_get(v, "base_image"));
	v = json_object_array_get_idx(locs, 1);
	assert_string_equal(str_at(v, "origin", NULL), "base_image");
	assert_string_equal(str_at(v, "base_image", "image"), "node:20-slim");
	assert_string_equal(json_object_get_string(json_object_array_get_idx(
				    json_object_object_get(json_object_object_get(v, "base_image"),
							   "entrypoint"),
				    0)),
			    "docker-entrypoint.sh");
	assert_string_equal(str_at(v, "kind", NULL), "shebang");
	assert_false(json_object_get_boolean(json_object_object_get(v, "affects_final_image")));
	assert_non_null(strstr(str_at(v, "remediation", "text"), "nothing to change"));
	assert_non_null(
		strstr(str_at(v, "remediation", "text"), "ENTRYPOINT [\"node\", \"server.js\"]"));
	json_object_put(locs);
	probe_sites_free(&ss);
}

/*
 * Through the entrypoint, the repo's shell-form CMD is the app's; a first
 * process that is not the entrypoint, and a shell of a later container
 * process, are never the base image's.
 */
static void test_base_entrypoint_app_shells(void **state)
{
	const char *cmd[] = { "/bin/sh", "-c", "node server.js", NULL };
	const char *other[] = { "/bin/sh", "-c", "echo other", NULL };
	struct probe_sites ss;
	int s;

	(void)state;
	node_sites(&ss, "FROM node:20-slim\nCMD node server.js\n");
	assert_int_equal(feed_file(&ss, 50, ENTRY_FILE, "/bin/sh", entry_argv, NULL, 0),
			 ss.base_entry);
	s = feed_file(&ss, 50, "/bin/sh", "", cmd, NULL, 0);
	assert_string_equal(ss.v[s].instruction, "CMD");
	assert_true(ss.v[s].affects_final);
	/* the same script run later in the container (not its first process): the app's */
	s = feed_file(&ss, 51, ENTRY_FILE, "/bin/sh", entry_argv, NULL, 0);
	assert_int_not_equal(s, ss.base_entry);
	assert_true(ss.v[s].affects_final);
	probe_sites_free(&ss);

	/* another container whose first process is a shell of the repo's */
	node_sites(&ss, "FROM node:20-slim\nCMD node server.js\n");
	s = feed_file(&ss, 60, "/bin/sh", "", other, NULL, 0);
	assert_int_not_equal(s, ss.base_entry);
	assert_true(ss.v[s].affects_final);
	probe_sites_free(&ss);
}

/* /bin/sh a symlink to busybox (the file's own name says so): the location names the applet. */
static void test_busybox_sh(void **state)
{
	const char *run[] = { "/bin/sh", "-c", "echo built", NULL };
	struct sbt_exec e = mk_exec(70, 301, run);
	struct probe_sites ss;
	struct probe_site_totals t;
	struct sbt_shell_class cls;
	struct sbt_dockerfile df;
	json_object *locs, *v;
	int s;

	(void)state;
	parse("FROM node:20-alpine\nRUN echo built\n", &df);
	probe_sites_init(&ss);
	assert_int_equal(probe_sites_dockerfile(&ss, &df, 0), 0);
	sbt_dockerfile_free(&df);
	snprintf(e.exe_name, sizeof(e.exe_name), "busybox");
	assert_true(sbt_shell_classify(e.filename, e.interp, e.argv, e.argc, &cls));
	assert_string_equal(cls.shell, "sh"); /* by name alone */
	s = probe_site_of(&ss, PROBE_BUILD, &e, &cls, NULL, 0, SANDBOX_CG);
	assert_int_equal(probe_site_count(&ss, s, &e, &cls, 0, NULL, 0), 0);
	locs = probe_sites_json(&ss, &t);
	v = json_object_array_get_idx(locs, 0);
	assert_string_equal(str_at(v, "shell", NULL), "busybox sh");
	assert_string_equal(str_at(v, "multicall", NULL), "busybox");
	assert_string_equal(str_at(v, "identified_by", NULL), "file_name");
	json_object_put(locs);
	probe_sites_free(&ss);
}

/* A final stage built FROM another stage: that stage's RUNs make the final image too. */
static void test_dockerfile_from_stage(void **state)
{
	static const char text[] = "FROM base AS deps\nRUN echo deps\n"
				   "FROM base AS tools\nRUN echo tools\n"
				   "FROM deps\nCMD [\"/app\"]\n";
	const char *deps[] = { "/bin/sh", "-c", "echo deps", NULL };
	const char *tools[] = { "/bin/sh", "-c", "echo tools", NULL };
	struct probe_sites ss;
	struct sbt_dockerfile df;
	int s;

	(void)state;
	parse(text, &df);
	probe_sites_init(&ss);
	assert_int_equal(probe_sites_dockerfile(&ss, &df, df.nr_stages - 1), 0);
	sbt_dockerfile_free(&df);
	s = feed(&ss, PROBE_BUILD, 1, 201, deps, NULL, 0);
	assert_true(ss.v[s].affects_final);
	s = feed(&ss, PROBE_BUILD, 2, 202, tools, NULL, 0);
	assert_false(ss.v[s].affects_final);
	assert_string_equal(ss.v[s].stage, "tools");
	probe_sites_free(&ss);
}

/* make: recipe lines as written, with variables, and what make ran itself. */
static void test_make(void **state)
{
	static const char mk[] = "CC=cc\n"
				 "all:\n"
				 "\t@cp a b && echo done\n"	       /* 3 */
				 "\tcd sub && $(MAKE) -C x \\\n"       /* 4 */
				 "\t  --no-print-directory\n"	       /* 5 */
				 "\t./configure --prefix=$(PREFIX)\n"; /* 6 */
	const char *a[] = { "/bin/sh", "-c", "cp a b && echo done", NULL };
	const char *b[] = { "/bin/sh", "-c", "cd sub && make -C x \\\n--no-print-directory", NULL };
	const char *c[] = { "/bin/sh", "-c", "cd other && make", NULL };
	const char *d[] = { "/bin/sh", "-c", "cat x | wc -l", NULL };
	struct sbt_ancestor anc = { .pid = 41 };
	struct probe_sites ss;
	int s;

	(void)state;
	probe_sites_init(&ss);
	assert_int_equal(probe_sites_make(&ss, "Makefile", mk, strlen(mk)), 0);
	assert_int_equal(probe_sites_other(&ss, "recipe", NULL), 0);
	s = feed(&ss, PROBE_BUILD, 40, SANDBOX_CG, a, NULL, 0);
	assert_int_equal(ss.v[s].line, 3);
	assert_true(ss.v[s].matched);
	s = feed(&ss, PROBE_BUILD, 41, SANDBOX_CG, b, NULL, 0);
	assert_int_equal(ss.v[s].line, 4);
	/* a sub-make's shell: the recipe line that started it */
	assert_int_equal(feed(&ss, PROBE_BUILD, 42, SANDBOX_CG, d, &anc, 1), s);
	s = feed(&ss, PROBE_BUILD, 43, SANDBOX_CG, c, NULL, 0);
	assert_false(ss.v[s].matched);
	assert_non_null(ss.v[s].why);
	probe_sites_free(&ss);
}

/* npm: a script's sh -c is the script; its line in package.json. */
static void test_npm(void **state)
{
	static const char pkg[] =
		"{\n  \"name\": \"x\",\n  \"scripts\": {\n"
		"    \"build\": \"tsc -p .\",\n    \"start\": \"node server.js\"\n"
		"  }\n}\n";
	const char *build[] = { "sh", "-c", "tsc -p .", NULL };
	const char *start[] = { "sh", "-c", "node server.js", NULL };
	json_object *doc = json_tokener_parse(pkg), *scripts;
	struct probe_sites ss;
	int s;

	(void)state;
	assert_true(json_object_object_get_ex(doc, "scripts", &scripts));
	probe_sites_init(&ss);
	assert_int_equal(probe_sites_npm(&ss, scripts, pkg, true), 0);
	assert_int_equal(probe_sites_other(&ss, "script", "package.json"), 0);
	s = feed(&ss, PROBE_BUILD, 50, SANDBOX_CG, build, NULL, 0);
	assert_string_equal(ss.v[s].script, "build");
	assert_int_equal(ss.v[s].line, 4);
	/* the start script is the boot's: at build time the same text would not match it */
	s = feed(&ss, PROBE_BOOT, 51, SANDBOX_CG, start, NULL, 0);
	assert_string_equal(ss.v[s].script, "start");
	assert_int_equal(ss.v[s].line, 5);
	assert_int_equal(ss.v[s].phase, PROBE_BOOT);
	json_object_put(doc);
	probe_sites_free(&ss);
}

/* The install step: a shell below npm ci is its, a shell elsewhere is not. */
static void test_npm_install(void **state)
{
	static const char pkg[] = "{\"scripts\": {\"build\": \"tsc\"}}";
	static const char *const ci[] = { "npm", "ci", NULL };
	const char *npm_ci[] = { "/usr/bin/env", "node", "/usr/bin/npm", "ci", NULL };
	const char *hook[] = { "sh", "-c", "node install.js", NULL };
	struct sbt_ancestor anc[] = { { .pid = 60 }, { .pid = 1 } };
	json_object *doc = json_tokener_parse(pkg), *scripts;
	struct sbt_exec e = mk_exec(60, SANDBOX_CG, npm_ci);
	struct probe_sites ss;
	int s;

	(void)state;
	assert_true(json_object_object_get_ex(doc, "scripts", &scripts));
	probe_sites_init(&ss);
	assert_int_equal(probe_sites_npm(&ss, scripts, pkg, false), 0);
	assert_int_equal(probe_sites_other(&ss, "script", "package.json"), 0);
	assert_int_equal(probe_sites_install(&ss, "package-lock.json", ci), 0);

	/* npm ci itself is no shell (a #! script: the kernel's argv); it ties what runs below it */
	e.filename = "/usr/bin/npm";
	s = probe_site_of(&ss, PROBE_BUILD, &e, NULL, anc + 1, 1, SANDBOX_CG);
	assert_string_equal(ss.v[s].instruction, "install");
	s = feed(&ss, PROBE_BUILD, 61, SANDBOX_CG, hook, anc, 2);
	assert_string_equal(ss.v[s].instruction, "install");
	assert_string_equal(ss.v[s].file, "package-lock.json");
	assert_true(ss.v[s].matched);
	/* the same shell with no npm ci above it: the catch-all */
	s = feed(&ss, PROBE_BUILD, 62, SANDBOX_CG, hook, anc + 1, 1);
	assert_string_equal(ss.v[s].instruction, "script");
	assert_false(ss.v[s].matched);
	json_object_put(doc);
	probe_sites_free(&ss);
}

/* The exec form of a simple command; anything a shell must interpret has none. */
static void test_simple_command(void **state)
{
	static const struct {
		const char *in;
		int n;
		const char *first, *last;
	} cases[] = {
		{ "node server.js", 2, "node", "server.js" },
		{ "exec node  'my app.js'", 2, "node", "my app.js" },
		{ "  npm   start ", 2, "npm", "start" },
		{ "a | b", -1, NULL, NULL },
		{ "a > f", -1, NULL, NULL },
		{ "a && b", -1, NULL, NULL },
		{ "a; b", -1, NULL, NULL },
		{ "echo $HOME", -1, NULL, NULL },
		{ "ls *.js", -1, NULL, NULL },
		{ "FOO=1 node x", -1, NULL, NULL },
		{ "echo `id`", -1, NULL, NULL },
		{ "a\nb", -1, NULL, NULL },
		{ "", -1, NULL, NULL },
		{ "'unterminated", -1, NULL, NULL },
		{ "node ''", -1, NULL, NULL }, /* an empty word: fuzz_sites found it */
	};
	char *argv[8];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int n = probe_simple_command(cases[i].in, argv, 8);

		assert_int_equal(n, cases[i].n);
		if (n <= 0)
			continue;
		assert_string_equal(argv[0], cases[i].first);
		assert_string_equal(argv[n - 1], cases[i].last);
		assert_null(argv[n]);
		for (int k = 0; k < n; k++)
			free(argv[k]);
	}
}

/* A shell with its cwd tail (a dependency's directory, or "" for none). */
static void feed_in(struct probe_sites *ss, uint32_t pid, const char **argv, const char *cwd,
		    bool top)
{
	struct sbt_exec e = mk_exec(pid, SANDBOX_CG, argv);
	struct sbt_shell_class cls;
	int site;

	snprintf(e.cwd, sizeof(e.cwd), "%s", cwd);
	e.cwd_top = top;
	assert_true(sbt_shell_classify(e.filename, e.interp, e.argv, e.argc, &cls));
	site = probe_site_of(ss, PROBE_BUILD, &e, &cls, NULL, 0, SANDBOX_CG);
	assert_true(site >= 0);
	assert_int_equal(probe_site_count(ss, site, &e, &cls, 0, NULL, 0), 0);
}

/* A location's remediation: the fix `want`, no exec form. */
static void assert_fix(json_object *loc, const char *want)
{
	json_object *rem = json_object_object_get(loc, "remediation"), *form = NULL;

	assert_non_null(rem);
	assert_true(json_object_object_get_ex(rem, "exec_form", &form));
	assert_null(form);
	assert_string_equal(json_object_get_string(json_object_object_get(rem, "text")), want);
}

static const char *loc_package(json_object *locs, size_t i)
{
	json_object *v;

	assert_true(json_object_object_get_ex(json_object_array_get_idx(locs, i), "package", &v));
	return json_object_get_string(v);
}

/* A dependency's lifecycle script: its package named, one location per package. */
static void test_packages(void **state)
{
	const char *post[] = { "sh", "-c", "node install.js", NULL };
	struct probe_sites ss;
	struct probe_site_totals t;
	json_object *locs, *rem;

	(void)state;
	probe_sites_init(&ss);
	assert_int_equal(probe_sites_other(&ss, "cmd", NULL), 0);
	ss.lockfile = json_tokener_parse(
		"{\"node_modules/dep\": {\"version\": \"1.0.0\"},"
		" \"node_modules/@s/b\": {\"version\": \"2.0.0\"},"
		" \"node_modules/a/node_modules/dep\": {\"version\": \"0.9.1\"}}");
	assert_non_null(ss.lockfile);
	feed_in(&ss, 10, post, "app/node_modules/dep", true);
	feed_in(&ss, 11, post, "app/node_modules/@s/b", true);
	feed_in(&ss, 12, post, "app/node_modules/dep", true); /* the same package again */
	feed_in(&ss, 13, post, "app", true);		      /* the repo's own */
	feed_in(&ss, 14, post, "node_modules/a/node_modules/dep", true);
	/* cut above its first node_modules/: could be a/node_modules/dep, so no version */
	feed_in(&ss, 15, post, "node_modules/dep", false);
	feed_in(&ss, 16, post, "x/node_modules/nolock", true); /* not in the lockfile */

	locs = probe_sites_json(&ss, &t);
	assert_int_equal(t.count, 7);
	assert_int_equal(json_object_array_length(locs), 6);
	assert_null(loc_package(locs, 0)); /* the site's own shells first */
	assert_string_equal(loc_package(locs, 1), "dep@1.0.0");
	assert_string_equal(loc_package(locs, 2), "@s/b@2.0.0");
	assert_string_equal(loc_package(locs, 3), "dep@0.9.1");
	assert_string_equal(loc_package(locs, 4), "dep");
	assert_string_equal(loc_package(locs, 5), "nolock");
	assert_true(
		json_object_object_get_ex(json_object_array_get_idx(locs, 1), "remediation", &rem));
	assert_null(rem); /* the dependency's command, not the repo's line */
	json_object_put(locs);
	probe_sites_free(&ss);
}

/* RUN ["npm", "ci"]: npm is a #! script, its step's first exec the kernel's rewritten argv. */
static void test_dockerfile_exec_script(void **state)
{
	const char *npm[] = { "/usr/bin/env", "node", "/usr/bin/npm", "ci", NULL };
	const char *other[] = { "/usr/bin/env", "node", "/usr/bin/npx", "ci", NULL };
	const char *post[] = { "sh", "-c", "node install.js", NULL };
	struct probe_sites ss;
	struct probe_site_totals t;
	struct sbt_shell_class cls;
	struct sbt_dockerfile df;
	struct sbt_exec e;
	json_object *locs, *v;
	int s;

	(void)state;
	parse("FROM node\nWORKDIR /app\nRUN [\"npm\", \"ci\"]\nCMD [\"node\", \"s.js\"]\n", &df);
	probe_sites_init(&ss);
	assert_int_equal(probe_sites_dockerfile(&ss, &df, 0), 0);
	sbt_dockerfile_free(&df);
	ss.lockfile = json_tokener_parse("{\"node_modules/dep\": {\"version\": \"1.0.0\"}}");

	/* another script is not that step */
	e = mk_exec(10, 201, other);
	e.filename = "/usr/bin/npx";
	assert_false(ss.v[probe_site_of(&ss, PROBE_BUILD, &e, NULL, NULL, 0, SANDBOX_CG)].matched);
	e = mk_exec(11, 202, npm);
	e.filename = "/usr/bin/npm";
	s = probe_site_of(&ss, PROBE_BUILD, &e, NULL, NULL, 0, SANDBOX_CG);
	assert_string_equal(ss.v[s].instruction, "RUN");
	assert_int_equal(ss.v[s].line, 3);

	/* a dependency's postinstall in that step: the RUN line's, with its package */
	e = mk_exec(12, 202, post);
	strcpy(e.cwd, "app/node_modules/dep");
	e.cwd_top = true;
	assert_true(sbt_shell_classify(e.filename, e.interp, e.argv, e.argc, &cls));
	assert_int_equal(probe_site_of(&ss, PROBE_BUILD, &e, &cls, NULL, 0, SANDBOX_CG), s);
	assert_int_equal(probe_site_count(&ss, s, &e, &cls, 0, NULL, 0), 0);
	locs = probe_sites_json(&ss, &t);
	assert_int_equal(json_object_array_length(locs), 1);
	assert_string_equal(loc_package(locs, 0), "dep@1.0.0");
	assert_true(json_object_object_get_ex(json_object_array_get_idx(locs, 0),
					      "affects_final_image", &v));
	assert_true(json_object_get_boolean(v));
	/* the step is already in exec form, and npm still runs sh: move the step */
	assert_fix(json_object_array_get_idx(locs, 0),
		   "Dockerfile:3: RUN [\"npm\", \"ci\"] runs in the final stage: move it to a "
		   "build stage (FROM node AS build) and COPY --from=build its output; the final "
		   "image then needs neither a shell nor npm");
	json_object_put(locs);
	probe_sites_free(&ss);
}

/*
 * The remediation of the one shell, `sh -c cmd`, of the first RUN of `text`
 * (target -1: the last stage): its text (free it), *exec whether it is an exec form.
 */
static char *run_fix_of(const char *text, int target, const char *cmd, bool *exec)
{
	const char *argv[] = { "/bin/sh", "-c", cmd, NULL };
	struct probe_sites ss;
	struct probe_site_totals t;
	struct sbt_dockerfile df;
	json_object *locs, *rem, *form = NULL;
	char *fix;

	parse(text, &df);
	probe_sites_init(&ss);
	assert_int_equal(probe_sites_dockerfile(&ss, &df, target < 0 ? df.nr_stages - 1 : target),
			 0);
	sbt_dockerfile_free(&df);
	assert_true(ss.v[feed(&ss, PROBE_BUILD, 10, 201, argv, NULL, 0)].matched);
	locs = probe_sites_json(&ss, &t);
	assert_int_equal(json_object_array_length(locs), 1);
	rem = json_object_object_get(json_object_array_get_idx(locs, 0), "remediation");
	assert_non_null(rem);
	assert_true(json_object_object_get_ex(rem, "exec_form", &form));
	*exec = form != NULL;
	fix = strdup(json_object_get_string(json_object_object_get(rem, "text")));
	assert_non_null(fix);
	json_object_put(locs);
	probe_sites_free(&ss);
	return fix;
}

/* The RUN's remediation is the fix `want` (no exec form). */
static void assert_run_fix(const char *text, int target, const char *cmd, const char *want)
{
	bool exec;
	char *fix = run_fix_of(text, target, cmd, &exec);

	assert_false(exec);
	assert_string_equal(fix, want);
	free(fix);
}

/*
 * A RUN the final image is built on: its exec form still needs npm (and the
 * shell npm runs scripts with) in the final image, so the remedy is a build
 * stage and a COPY --from of its output; a builder stage's RUN keeps its exec form.
 */
static void test_final_run_fix(void **state)
{
	char text[1200], cmd[1000], *fix;
	bool exec;

	(void)state;
	assert_run_fix("FROM node:20\nWORKDIR /app\nRUN   npm \\\n ci\nCMD [\"node\", \"s.js\"]\n",
		       -1, "npm ci",
		       "Dockerfile:3: RUN npm ci runs in the final stage: move it to a build stage "
		       "(FROM node:20 AS build) and COPY --from=build its output; the final image "
		       "then needs neither a shell nor npm");
	/* several tools: none named; a stage named build (any case): another name */
	assert_run_fix(
		"FROM x AS Build\nFROM x AS build-2\nFROM node:20-slim AS app\n"
		"RUN npm ci && npm run build\n",
		-1, "npm ci && npm run build",
		"Dockerfile:4: RUN npm ci && npm run build runs in the final stage: move it "
		"to a build stage (FROM node:20-slim AS build-3) and COPY --from=build-3 its "
		"output; the final image then needs neither a shell nor the tools the step "
		"runs");
	/* a stage the final one is built FROM: that stage is the build stage already */
	assert_run_fix(
		"FROM node:20 AS deps\nRUN npm ci\nFROM deps\nCMD [\"node\", \"s.js\"]\n", -1,
		"npm ci",
		"Dockerfile:2: RUN npm ci runs in stage deps, which the final stage is built "
		"on: start the final stage FROM an image without a shell instead and COPY "
		"--from=deps the step's output; the final image then needs neither a shell "
		"nor npm");
	/* --target: the target is the final stage */
	assert_run_fix("FROM node:20 AS deps\nRUN npm ci\nFROM deps\n", 0, "npm ci",
		       "Dockerfile:2: RUN npm ci runs in the final stage: move it to a build stage "
		       "(FROM node:20 AS build) and COPY --from=build its output; the final image "
		       "then needs neither a shell nor npm");
	/* a stage the final image does not get: the exec form is a remedy there */
	fix = run_fix_of("FROM node:20 AS build\nRUN npm ci\nFROM scratch\n"
			 "COPY --from=build /app /app\n",
			 -1, "npm ci", &exec);
	assert_true(exec);
	assert_string_equal(fix, "RUN [\"npm\", \"ci\"]");
	free(fix);
	/* a long step: cut, and said so */
	memset(cmd, 'a', sizeof(cmd) - 1);
	cmd[sizeof(cmd) - 1] = '\0';
	snprintf(text, sizeof(text), "FROM x\nRUN %s\n", cmd);
	fix = run_fix_of(text, -1, cmd, &exec);
	assert_false(exec);
	assert_non_null(strstr(fix, "aaa... runs in the final stage: "));
	assert_true(strlen(fix) < 600);
	free(fix);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dockerfile_steps),
		cmocka_unit_test(test_dockerfile_skipped_stage),
		cmocka_unit_test(test_dockerfile_boot),
		cmocka_unit_test(test_dockerfile_named),
		cmocka_unit_test(test_dockerfile_from_stage),
		cmocka_unit_test(test_base_entrypoint),
		cmocka_unit_test(test_base_entrypoint_app_shells),
		cmocka_unit_test(test_busybox_sh),
		cmocka_unit_test(test_make),
		cmocka_unit_test(test_npm),
		cmocka_unit_test(test_npm_install),
		cmocka_unit_test(test_packages),
		cmocka_unit_test(test_dockerfile_exec_script),
		cmocka_unit_test(test_final_run_fix),
		cmocka_unit_test(test_simple_command),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
