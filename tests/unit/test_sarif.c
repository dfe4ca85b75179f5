// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for the probe report's SARIF log (userspace/probe/sarif.c), from
 * the report samples in tests/fixtures/reports/ (run from the top of the tree,
 * as make does). `test_sarif DIR` also writes each sample's log to
 * DIR/NAME.sarif, which scripts/check-schemas.sh validates against the OASIS
 * SARIF 2.1.0 schema (make check-schemas).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "probe/sarif.h"

#define REPORTS "tests/fixtures/reports"

static const char *out_dir; /* argv[1]: where the logs go, or NULL */

static json_object *load_report(const char *name)
{
	char path[512];
	json_object *r;

	snprintf(path, sizeof(path), "%s/%s", REPORTS, name);
	r = json_object_from_file(path);
	if (!r)
		fail_msg("cannot read %s (run from the top of the tree): %s", path,
			 json_util_get_last_err());
	return r;
}

/*
 * The sample's log, SRCROOT its repo (whatever work tree the path is in on
 * this machine); the report is unchanged by it (compared as text).
 */
static json_object *sarif_of(const char *name)
{
	json_object *report = load_report(name), *log;
	char *before = strdup(json_object_to_json_string(report));

	assert_non_null(before);
	log = probe_sarif_at(report, NULL);
	assert_non_null(log);
	assert_string_equal(json_object_to_json_string(report), before);
	free(before);
	json_object_put(report); /* the log holds copies, nothing of the report */
	return log;
}

static json_object *field(json_object *obj, const char *key, json_type type)
{
	json_object *v = NULL;

	if (!json_object_object_get_ex(obj, key, &v))
		fail_msg("missing key \"%s\" in %s", key, json_object_to_json_string(obj));
	if (!json_object_is_type(v, type))
		fail_msg("key \"%s\": type %s, want %s", key,
			 json_type_to_name(json_object_get_type(v)), json_type_to_name(type));
	return v;
}

static bool has(json_object *obj, const char *key)
{
	return json_object_object_get_ex(obj, key, NULL);
}

static const char *str(json_object *obj, const char *key)
{
	return json_object_get_string(field(obj, key, json_type_string));
}

static int64_t num(json_object *obj, const char *key)
{
	return json_object_get_int64(field(obj, key, json_type_int));
}

static json_object *idx(json_object *arr, size_t i)
{
	assert_true(json_object_is_type(arr, json_type_array));
	if (i >= json_object_array_length(arr))
		fail_msg("index %zu of an array of %zu", i, json_object_array_length(arr));
	return json_object_array_get_idx(arr, i);
}

static json_object *run_of(json_object *log)
{
	json_object *runs = field(log, "runs", json_type_array);

	assert_int_equal(json_object_array_length(runs), 1);
	return idx(runs, 0);
}

static json_object *results(json_object *log)
{
	return field(run_of(log), "results", json_type_array);
}

static json_object *rules(json_object *log)
{
	json_object *tool = field(run_of(log), "tool", json_type_object);

	return field(field(tool, "driver", json_type_object), "rules", json_type_array);
}

static const char *text_of(json_object *result)
{
	return str(field(result, "message", json_type_object), "text");
}

static json_object *props(json_object *obj)
{
	return field(obj, "properties", json_type_object);
}

/* locations[0].physicalLocation of a result: its artifactLocation and region. */
static json_object *physical(json_object *result)
{
	json_object *locs = field(result, "locations", json_type_array);

	assert_int_equal(json_object_array_length(locs), 1);
	return field(idx(locs, 0), "physicalLocation", json_type_object);
}

static void assert_at(json_object *result, const char *uri, int64_t line)
{
	json_object *phys = physical(result),
		    *art = field(phys, "artifactLocation", json_type_object);

	assert_string_equal(str(art, "uri"), uri);
	assert_string_equal(str(art, "uriBaseId"), "%SRCROOT%");
	if (line)
		assert_int_equal(num(field(phys, "region", json_type_object), "startLine"), line);
	else
		assert_false(has(phys, "region"));
}

static const char *srcroot(json_object *log)
{
	json_object *bases = field(run_of(log), "originalUriBaseIds", json_type_object);

	return str(field(bases, "%SRCROOT%", json_type_object), "uri");
}

static void test_safe(void **state)
{
	json_object *log = sarif_of("safe.json"), *run = run_of(log), *driver, *rs;

	assert_string_equal(str(log, "$schema"), "https://json.schemastore.org/sarif-2.1.0.json");
	assert_string_equal(str(log, "version"), "2.1.0");
	driver = field(field(run, "tool", json_type_object), "driver", json_type_object);
	assert_string_equal(str(driver, "name"), "sbtrace");
	assert_string_equal(str(driver, "version"), "0.1.0");
	rs = rules(log);
	assert_int_equal(json_object_array_length(rs), 1);
	assert_string_equal(str(idx(rs, 0), "id"), "shell-invocation");
	assert_string_equal(
		str(field(idx(rs, 0), "defaultConfiguration", json_type_object), "level"), "error");
	assert_int_equal(json_object_array_length(results(log)), 0);
	assert_string_equal(str(props(run), "verdict"), "safe");
	assert_string_equal(str(props(run), "confidence"), "high");
	assert_true(
		json_object_is_type(field(props(run), "reason", json_type_null), json_type_null));
	assert_int_equal(num(field(props(run), "omitted", json_type_object), "count"), 0);
	assert_string_equal(srcroot(log), "file:///work/main/tests/fixtures/dockerfile-builder/");
	json_object_put(log);
}

static void test_dockerfile_locations(void **state)
{
	json_object *log = sarif_of("unsafe-dockerfile.json"), *rs = results(log), *r, *p;

	assert_int_equal(json_object_array_length(rs), 6);
	assert_string_equal(srcroot(log), "file:///srv/ci/shop%20api/");

	/* a RUN of the builder stage: a note, the final image does not get it */
	r = idx(rs, 0);
	assert_string_equal(str(r, "ruleId"), "shell-invocation");
	assert_int_equal(num(r, "ruleIndex"), 0);
	assert_string_equal(str(r, "level"), "note");
	assert_string_equal(text_of(r), "sh -c 'npm ci && npm run build' ran during the build "
					"(RUN, Dockerfile:4); stage builder does not affect the "
					"final image");
	assert_at(r, "Dockerfile", 4);
	p = props(r);
	assert_string_equal(str(p, "phase"), "build");
	assert_string_equal(str(p, "stage"), "builder");
	assert_string_equal(str(p, "chain"), "podman>conmon");
	assert_int_equal(num(p, "count"), 1);
	assert_false(json_object_get_boolean(field(p, "affects_final_image", json_type_boolean)));
	assert_string_equal(str(p, "shell"), "sh");
	assert_string_equal(str(p, "kind"), "command");
	assert_false(has(p, "remediation"));
	assert_string_equal(str(p, "confidence"), "high");
	assert_true(json_object_is_type(field(p, "reason", json_type_null), json_type_null));

	/* a RUN of the final stage: no exec form is a remedy, a build stage is */
	r = idx(rs, 1);
	assert_string_equal(str(r, "level"), "error");
	assert_string_equal(text_of(r),
			    "busybox sh -c 'chmod +x /app/entry.sh' ran during the "
			    "build (RUN, Dockerfile:7); remediation: Dockerfile:7: RUN "
			    "chmod +x /app/entry.sh runs in the final stage: move it to "
			    "a build stage (FROM node:20-slim AS build) and COPY "
			    "--from=build its output; the final image then needs neither "
			    "a shell nor chmod");
	assert_string_equal(str(props(r), "stage"), "#1");
	assert_true(
		json_object_is_type(field(props(r), "exec_form", json_type_null), json_type_null));

	r = idx(rs, 2);
	assert_string_equal(text_of(r), "sh -c 'wget -q -O- http://localhost:8080/health || exit "
					"1' ran 2 times at boot (HEALTHCHECK, Dockerfile:8)");
	assert_int_equal(num(props(r), "count"), 2);

	r = idx(rs, 3);
	assert_string_equal(text_of(r), "the #!sh script /app/entry.sh /bin/sh -c node "
					"/app/server.js ran at boot (ENTRYPOINT, Dockerfile:9)");
	assert_string_equal(str(props(r), "kind"), "shebang");

	/* the boot's CMD: an error, and how to write it without a shell */
	r = idx(rs, 4);
	assert_string_equal(str(r, "level"), "error");
	assert_string_equal(text_of(r), "sh -c 'node /app/server.js' ran at boot (CMD, "
					"Dockerfile:10); exec form: CMD [\"node\", "
					"\"/app/server.js\"]");
	assert_at(r, "Dockerfile", 10);
	p = props(r);
	assert_string_equal(str(p, "phase"), "boot");
	assert_string_equal(str(p, "remediation"), "CMD [\"node\", \"/app/server.js\"]");
	assert_string_equal(json_object_to_json_string_ext(field(p, "exec_form", json_type_array),
							   JSON_C_TO_STRING_PLAIN |
								   JSON_C_TO_STRING_NOSLASHESCAPE),
			    "[\"node\",\"/app/server.js\"]");

	/* no source found: at the build's entry file, no line, saying why */
	r = idx(rs, 5);
	assert_at(r, "Dockerfile", 0);
	assert_string_equal(text_of(r), "sh -c 'ulimit -n 4096' ran at boot; its source was not "
					"found: no instruction of the Dockerfile runs this "
					"command: a program of the image started it");
	json_object_put(log);
}

static void test_npm_and_make(void **state)
{
	json_object *log = sarif_of("unsafe-npm.json"), *rs = results(log), *r;

	assert_int_equal(json_object_array_length(rs), 3);
	r = idx(rs, 0);
	assert_string_equal(text_of(r), "sh -c 'node build.js && make -C native' ran during the "
					"build (npm script \"build\", package.json:6); it does not "
					"affect the final image");
	assert_at(r, "package.json", 6);
	assert_true(json_object_is_type(field(props(r), "stage", json_type_null), json_type_null));
	r = idx(rs, 1);
	assert_string_equal(text_of(r), "sh -c 'cc -O2 -o addon addon.c' ran 2 times during the "
					"build (make recipe, native/Makefile:3); it does not "
					"affect the final image");
	assert_at(r, "native/Makefile", 3);
	r = idx(rs, 2);
	assert_string_equal(str(r, "level"), "error");
	assert_string_equal(text_of(r), "sh -c 'node server.js' ran at boot (npm script "
					"\"start\", package.json:7); exec form: CMD [\"node\", "
					"\"server.js\"]");
	json_object_put(log);
}

/* An unsafe verdict with a reason is not inconclusive: the shells are the answer. */
static void test_cmd_unsafe_with_reason(void **state)
{
	json_object *log = sarif_of("unsafe-cmd-events-lost.json"), *rs = results(log), *r;

	assert_int_equal(json_object_array_length(rules(log)), 1);
	assert_int_equal(json_object_array_length(rs), 3);
	r = idx(rs, 0);
	assert_false(has(r, "locations"));
	assert_string_equal(str(r, "level"), "note");
	assert_string_equal(text_of(r), "sh build.sh ran during the build; its source was not "
					"found: a --cmd build has no file to point at; it does "
					"not affect the final image; confidence low (events_lost): "
					"other shells may have gone unseen");
	assert_string_equal(text_of(idx(rs, 1)),
			    "toybox sh ran during the build; its source was not found: a --cmd "
			    "build has no file to point at; it does not affect the final image; "
			    "confidence low (events_lost): other shells may have gone unseen");
	r = idx(rs, 2);
	assert_false(has(r, "locations"));
	/* the final image's shell, but a low-confidence answer: a warning, and it says why */
	assert_string_equal(str(r, "level"), "warning");
	assert_string_equal(text_of(r),
			    "the #!bash script ./run --port 8080 ran 2 times at boot "
			    "(boot command); confidence low (events_lost): other shells "
			    "may have gone unseen");
	assert_string_equal(str(props(r), "confidence"), "low");
	assert_string_equal(str(props(r), "reason"), "events_lost");
	assert_string_equal(str(props(run_of(log)), "reason"), "events_lost");
	assert_int_equal(num(field(props(run_of(log)), "omitted", json_type_object), "count"), 3);
	json_object_put(log);
}

static void test_inconclusive(void **state)
{
	json_object *log = sarif_of("inconclusive-build-failed.json"), *rs = results(log), *r;

	assert_int_equal(json_object_array_length(rules(log)), 2);
	assert_string_equal(str(idx(rules(log), 1), "id"), "trace-inconclusive");
	assert_int_equal(json_object_array_length(rs), 1);
	r = idx(rs, 0);
	assert_string_equal(str(r, "ruleId"), "trace-inconclusive");
	assert_int_equal(num(r, "ruleIndex"), 1);
	assert_string_equal(str(r, "level"), "warning");
	assert_at(r, "package.json", 0); /* the build's entry file: code scanning needs one */
	assert_string_equal(text_of(r),
			    "the trace is inconclusive (build_failed): the build exited "
			    "with status 1; no shell seen is not proof that none ran");
	assert_string_equal(str(props(r), "reason"), "build_failed");
	assert_string_equal(str(props(run_of(log)), "verdict"), "inconclusive");
	assert_string_equal(str(props(run_of(log)), "confidence"), "low");
	json_object_put(log);

	/* no reason at all: the trace was not complete */
	log = sarif_of("inconclusive.json");
	r = idx(results(log), 0);
	assert_string_equal(text_of(r), "the trace is inconclusive: it is not complete (no reason "
					"was recorded); no shell seen is not proof that none ran");
	assert_true(json_object_is_type(field(props(r), "reason", json_type_null), json_type_null));
	json_object_put(log);
}

static void write_log(const char *name, json_object *log)
{
	char path[512];
	size_t n = strlen(name) - strlen(".json");

	snprintf(path, sizeof(path), "%s/%.*s.sarif", out_dir, (int)n, name);
	if (json_object_to_file_ext(path, log,
				    JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE))
		fail_msg("cannot write %s: %s", path, json_util_get_last_err());
}

/* Every sample: results refer to their rules, one per location (+1 when inconclusive). */
static void check_sample(const char *name)
{
	json_object *report = load_report(name), *log = sarif_of(name), *rs = results(log), *si;
	size_t nlocs, nres = json_object_array_length(rs);
	bool inconclusive = !strcmp(str(report, "verdict"), "inconclusive"),
	     confident = !strcmp(str(report, "confidence"), "high");

	si = field(report, "shell_invocation", json_type_object);
	nlocs = json_object_array_length(field(si, "locations", json_type_array));
	assert_int_equal(nres, nlocs + inconclusive);
	assert_int_equal(json_object_array_length(rules(log)), 1 + inconclusive);
	for (size_t i = 0; i < nres; i++) {
		json_object *r = idx(rs, i), *rule = idx(rules(log), (size_t)num(r, "ruleIndex"));

		assert_string_equal(str(rule, "id"), str(r, "ruleId"));
		assert_true(strlen(text_of(r)) > 0);
		if (i < nlocs) {
			json_object *loc = idx(field(si, "locations", json_type_array), i);
			bool affects = json_object_get_boolean(
				field(loc, "affects_final_image", json_type_boolean));

			assert_string_equal(str(r, "level"), !affects	 ? "note"
							     : confident ? "error"
									 : "warning");
			assert_string_equal(str(props(r), "confidence"), str(report, "confidence"));
		}
	}
	if (out_dir)
		write_log(name, log);
	json_object_put(log);
	json_object_put(report);
}

static void test_every_sample(void **state)
{
	DIR *d = opendir(REPORTS);
	struct dirent *e;
	int n = 0;

	if (!d)
		fail_msg("cannot open %s (run from the top of the tree): %s", REPORTS,
			 strerror(errno));
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);

		if (len <= 5 || strcmp(e->d_name + len - 5, ".json"))
			continue;
		check_sample(e->d_name);
		n++;
	}
	closedir(d);
	assert_true(n >= 5);
}

/* A report missing fields, or with other types, still gives a log; a non-object none. */
static void test_odd_reports(void **state)
{
	json_object *log, *report, *r;

	errno = 0;
	assert_null(probe_sarif(NULL));
	assert_int_equal(errno, EINVAL);
	report = json_object_new_array();
	assert_null(probe_sarif(report));
	assert_int_equal(errno, EINVAL);
	json_object_put(report);

	report = json_object_new_object();
	log = probe_sarif(report);
	assert_non_null(log);
	assert_false(has(run_of(log), "originalUriBaseIds"));
	assert_false(
		has(field(field(run_of(log), "tool", json_type_object), "driver", json_type_object),
		    "version"));
	assert_int_equal(json_object_array_length(results(log)), 0);
	json_object_put(log);
	json_object_put(report);

	report = json_tokener_parse("{\"version\": 1, \"repo\": \"relative/path\", \"verdict\": "
				    "\"inconclusive\", \"warnings\": [7, {\"id\": 1}], \"reason\": "
				    "\"events_lost\", \"shell_invocation\": {\"locations\": [7, "
				    "{\"source\": {\"file\": \"\", \"line\": -3}, \"count\": "
				    "\"2\", \"kind\": \"command\"}]}}");
	assert_non_null(report);
	log = probe_sarif(report);
	assert_non_null(log);
	assert_false(has(run_of(log), "originalUriBaseIds"));
	assert_int_equal(json_object_array_length(results(log)), 3);
	r = idx(results(log), 0);
	assert_string_equal(text_of(r), "a shell ran; its source was not found; it does not affect "
					"the final image; confidence low (events_lost): other "
					"shells may have gone unseen");
	r = idx(results(log), 1);
	assert_string_equal(text_of(r), "a shell -c '' ran; its source was not found; it does not "
					"affect the final image; confidence low (events_lost): "
					"other shells may have gone unseen");
	assert_false(has(r, "locations"));
	assert_string_equal(text_of(idx(results(log), 2)),
			    "the trace is inconclusive (events_lost): see the report's warnings; "
			    "no shell seen is not proof that none ran");
	json_object_put(log);
	json_object_put(report);
}

/* SRCROOT and artifact URIs are percent-encoded; an absolute file is its own URI. */
static void test_uris(void **state)
{
	json_object *report = json_tokener_parse(
		"{\"repo\": \"/a b/\\u00fc#x?\", \"verdict\": \"unsafe\", \"shell_invocation\": "
		"{\"locations\": [{\"source\": {\"file\": \"sub dir/Docker%file\", \"line\": 2}}, "
		"{\"source\": {\"file\": \"/etc/build.sh\", \"line\": null}}]}}");
	json_object *log, *art;

	assert_non_null(report);
	log = probe_sarif_at(report, NULL);
	assert_non_null(log);
	assert_string_equal(srcroot(log), "file:///a%20b/%C3%BC%23x%3F/");
	assert_at(idx(results(log), 0), "sub%20dir/Docker%25file", 2);
	art = field(physical(idx(results(log), 1)), "artifactLocation", json_type_object);
	assert_string_equal(str(art, "uri"), "file:///etc/build.sh");
	assert_false(has(art, "uriBaseId"));
	assert_false(has(physical(idx(results(log), 1)), "region"));
	json_object_put(log);
	json_object_put(report);

	report = json_tokener_parse("{\"repo\": \"/\"}");
	log = probe_sarif_at(report, NULL);
	assert_non_null(log);
	assert_string_equal(srcroot(log), "file:///");
	json_object_put(log);
	json_object_put(report);
}

static json_object *unsafe_at(const char *repo)
{
	char text[1024];

	snprintf(text, sizeof(text),
		 "{\"repo\": \"%.500s\", \"verdict\": \"unsafe\", \"confidence\": \"high\", "
		 "\"inputs\": [{\"name\": \"Dockerfile\"}], \"shell_invocation\": "
		 "{\"locations\": [{\"affects_final_image\": true, \"source\": {\"file\": "
		 "\"Dockerfile\", \"line\": 7}}, {\"source\": {\"file\": null}}]}}",
		 repo);
	return json_tokener_parse(text);
}

/* A repo in a subfolder: its files are relative to the repository root, not to itself. */
static void test_subfolder(void **state)
{
	static const struct {
		const char *root, *srcroot, *uri;
	} cases[] = {
		{ "/srv/mono", "file:///srv/mono/", "apps/result/Dockerfile" },
		{ "/srv/mono/", "file:///srv/mono/", "apps/result/Dockerfile" },
		{ "/", "file:///", "srv/mono/apps/result/Dockerfile" },
		{ "/srv/mono/apps/result", "file:///srv/mono/apps/result/", "Dockerfile" },
		/* a root that does not hold the repo: the repo is SRCROOT */
		{ "/srv/mon", "file:///srv/mono/apps/result/", "Dockerfile" },
		{ "/srv/other", "file:///srv/mono/apps/result/", "Dockerfile" },
		{ "relative", "file:///srv/mono/apps/result/", "Dockerfile" },
		{ NULL, "file:///srv/mono/apps/result/", "Dockerfile" },
	};
	json_object *report = unsafe_at("/srv/mono/apps/result"), *log;

	(void)state;
	assert_non_null(report);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		log = probe_sarif_at(report, cases[i].root);
		assert_non_null(log);
		assert_string_equal(srcroot(log), cases[i].srcroot);
		assert_at(idx(results(log), 0), cases[i].uri, 7);
		/* no file: the entry file, also below the root */
		assert_at(idx(results(log), 1), cases[i].uri, 0);
		json_object_put(log);
	}
	json_object_put(report);
}

static void mkdirs(const char *top, const char *path)
{
	char p[512];

	snprintf(p, sizeof(p), "%s/%s", top, path);
	for (char *c = p + strlen(top) + 1; *c; c++)
		if (*c == '/') {
			*c = '\0';
			mkdir(p, 0755);
			*c = '/';
		}
	assert_int_equal(mkdir(p, 0755), 0);
}

static void touch(const char *top, const char *path)
{
	char p[512];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", top, path);
	f = fopen(p, "w");
	assert_non_null(f);
	fputs("gitdir: /elsewhere/.git/worktrees/wt\n", f);
	fclose(f);
}

static void assert_root(const char *top, const char *dir, const char *want)
{
	char d[512], w[512], root[512];

	snprintf(d, sizeof(d), "%s/%s", top, dir);
	snprintf(w, sizeof(w), "%s/%s", top, want);
	assert_int_equal(probe_sarif_root(d, root, sizeof(root)), 0);
	assert_string_equal(root, w);
}

/* The repository root: the nearest .git upwards, a directory or a file; else the repo. */
static void test_repo_root(void **state)
{
	char top[] = "/tmp/sbt-test-sarif.XXXXXX", root[16], cmd[64];
	json_object *report, *log;
	char repo[512];

	(void)state;
	assert_non_null(mkdtemp(top));
	mkdirs(top, "mono/.git");
	mkdirs(top, "mono/apps/result");
	mkdirs(top, "wt/sub dir");
	touch(top, "wt/.git");
	mkdirs(top, "mono/vendor/mod/x");
	touch(top, "mono/vendor/mod/.git"); /* a submodule: its own root */
	mkdirs(top, "plain/repo");

	assert_root(top, "mono/apps/result", "mono");
	assert_root(top, "mono/apps/result/", "mono");
	assert_root(top, "mono", "mono");
	assert_root(top, "wt/sub dir", "wt");
	assert_root(top, "mono/vendor/mod/x", "mono/vendor/mod");
	/* no work tree up to / (this machine's /tmp is in none): the repo itself */
	assert_root(top, "plain/repo", "plain/repo");

	assert_int_equal(probe_sarif_root("relative/dir", root, sizeof(root)), -EINVAL);
	assert_int_equal(probe_sarif_root(top, root, 4), -ENAMETOOLONG);

	/* probe_sarif finds it for the report's repo */
	snprintf(repo, sizeof(repo), "%s/mono/apps/result", top);
	report = unsafe_at(repo);
	assert_non_null(report);
	log = probe_sarif(report);
	assert_non_null(log);
	assert_at(idx(results(log), 0), "apps/result/Dockerfile", 7);
	assert_non_null(strstr(srcroot(log), "/mono/"));
	json_object_put(log);
	json_object_put(report);

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
	assert_int_equal(system(cmd), 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_safe),	     cmocka_unit_test(test_dockerfile_locations),
		cmocka_unit_test(test_npm_and_make), cmocka_unit_test(test_cmd_unsafe_with_reason),
		cmocka_unit_test(test_inconclusive), cmocka_unit_test(test_every_sample),
		cmocka_unit_test(test_odd_reports),  cmocka_unit_test(test_uris),
		cmocka_unit_test(test_subfolder),    cmocka_unit_test(test_repo_root),
	};

	out_dir = argc > 1 ? argv[1] : NULL;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
