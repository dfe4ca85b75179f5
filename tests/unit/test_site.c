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
		assert_int_equal(probe_site_count(ss, site, &e, &cls, anc, nanc), 0);
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

/* The RUN steps: matched by command in order, a step's shells are its, stages known. */
static void test_dockerfile_steps(void **state)
{
	const char *run1[] = { "/bin/sh", "-c", "make all \\\n  && echo done", NULL };
	const char *inner[] = { "sh", "-c", "true", NULL };
	const char *cp[] = { "/bin/cp", "a", "b", NULL };
	const char *runc[] = { "/usr/bin/runc", "init", NULL };
	const char *same[] = { "/bin/sh", "-c", "echo same", NULL };
	struct probe_sites ss;
	struct sbt_dockerfile df;
	struct probe_site_totals t;
	json_object *locs;
	int s;

	(void)state;
	parse(multistage, &df);
	probe_sites_init(&ss);
	assert_int_equal(probe_sites_dockerfile(&ss, &df, df.nr_stages - 1), 0);
	sbt_dockerfile_free(&df); /* the sites keep nothing of the parse */

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
	/* the same text in two stages: first the earlier stage's, then the final one's */
	s = feed(&ss, PROBE_BUILD, 14, 203, same, NULL, 0);
	assert_int_equal(ss.v[s].line, 6);
	assert_false(ss.v[s].affects_final);
	s = feed(&ss, PROBE_BUILD, 15, 204, same, NULL, 0);
	assert_int_equal(ss.v[s].line, 9);
	assert_true(ss.v[s].affects_final);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dockerfile_steps),
		cmocka_unit_test(test_dockerfile_boot),
		cmocka_unit_test(test_dockerfile_from_stage),
		cmocka_unit_test(test_make),
		cmocka_unit_test(test_npm),
		cmocka_unit_test(test_simple_command),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
