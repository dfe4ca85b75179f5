// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for --image-map (userspace/probe/engine.c): globs, the last one
 * wins, a digest pin dropped, no tag as :latest; the shipped map; the
 * warning's note; foreign tools.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../userspace/probe/kind.h"

static void add(struct probe_opts *o, const char *ref, const char *local)
{
	struct probe_image_map *m = &o->image_map[o->nr_image_map++];

	snprintf(m->ref, sizeof(m->ref), "%s", ref);
	snprintf(m->local, sizeof(m->local), "%s", local);
}

static void mapped(const struct probe_opts *o, const char *ref, const char *want)
{
	const char *got = probe_image_mapped(o, ref);

	if (!want) {
		if (got)
			fail_msg("%s: mapped to %s, want none", ref, got);
		return;
	}
	if (!got)
		fail_msg("%s: not mapped, want %s", ref, want);
	assert_string_equal(got, want);
}

/* A plain REF matches itself only; a glob matches what fnmatch says; none: NULL. */
static void test_globs(void **state)
{
	static struct probe_opts o;

	(void)state;
	memset(&o, 0, sizeof(o));
	add(&o, "debian:bookworm", "deb");
	add(&o, "node:*-alpine*", "alp");
	add(&o, "node:2[0-9]", "n2x");
	mapped(&o, "debian:bookworm", "deb");
	mapped(&o, "debian:bookworm-slim", NULL);
	mapped(&o, "node:20-alpine", "alp");
	mapped(&o, "node:20-alpine3.19", "alp");
	mapped(&o, "node:alpine", NULL); /* "*-" needs the dash */
	mapped(&o, "node:22", "n2x");
	mapped(&o, "node:220", NULL);
	mapped(&o, "node:18", NULL);
	mapped(&o, "library/node:20-alpine", NULL); /* the glob is anchored */
	mapped(&o, "", NULL);
}

/* Several match: the last mapping given wins, whether it is a glob or a plain ref. */
static void test_last_wins(void **state)
{
	static struct probe_opts o;

	(void)state;
	memset(&o, 0, sizeof(o));
	add(&o, "node:*", "any");
	add(&o, "node:20-slim", "exact");
	mapped(&o, "node:20-slim", "exact");
	mapped(&o, "node:22", "any");
	add(&o, "node:2*", "later");
	mapped(&o, "node:20-slim", "later");
	mapped(&o, "node:18", "any");
}

/* A digest pin is dropped before matching; no tag is :latest; the ref as written matches too. */
static void test_forms(void **state)
{
	static struct probe_opts o;
	static const char *const pin =
		"@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
	char ref[256];

	(void)state;
	memset(&o, 0, sizeof(o));
	add(&o, "node:20", "n20");
	add(&o, "node:latest", "latest");
	add(&o, "gcr.io/distroless/nodejs*:nonroot", "nonroot");
	add(&o, "pinned@sha256:*", "pinned");
	add(&o, "localhost:5000/app:latest", "registry-port");
	snprintf(ref, sizeof(ref), "node:20%s", pin);
	mapped(&o, ref, "n20");
	snprintf(ref, sizeof(ref), "node%s", pin);
	mapped(&o, ref, "latest"); /* no tag, and a pin */
	mapped(&o, "node", "latest");
	mapped(&o, "node:2", NULL);
	mapped(&o, "node:20-slim", NULL);
	snprintf(ref, sizeof(ref), "gcr.io/distroless/nodejs20-debian12:nonroot%s", pin);
	mapped(&o, ref, "nonroot");
	mapped(&o, "gcr.io/distroless/nodejs20-debian12", NULL); /* :latest, not :nonroot */
	snprintf(ref, sizeof(ref), "pinned%s", pin);
	mapped(&o, ref, "pinned"); /* a mapping of the pinned ref itself */
	mapped(&o, "pinned", NULL);
	/* a port is no tag: localhost:5000/app is localhost:5000/app:latest */
	mapped(&o, "localhost:5000/app", "registry-port");
	mapped(&o, "localhost:5000/app:1", NULL);
}

/* Every form of the ref counts for each mapping, and still the last one that matches wins. */
static void test_forms_last_wins(void **state)
{
	static struct probe_opts o;

	(void)state;
	memset(&o, 0, sizeof(o));
	add(&o, "node:*", "any");
	add(&o, "node:*alpine*", "alpine");
	add(&o, "node:20@sha256:*", "exact-pin");
	mapped(&o, "node:20@sha256:00", "exact-pin");
	mapped(&o, "node:21@sha256:00", "any");
	mapped(&o, "node:alpine@sha256:00", "alpine");
	add(&o, "node", "bare"); /* the ref as written only: node, not node:latest */
	mapped(&o, "node", "bare");
	mapped(&o, "node@sha256:00", "bare");
	mapped(&o, "node:latest", "any");
	mapped(&o, "node:20@sha256:00", "exact-pin");
}

static const char *const DEB = "localhost/sbtrace-node:bookworm",
			 *const ALP = "localhost/sbtrace-node:alpine";

/* The shipped map, read as --image-map reads it. */
static void shipped(struct probe_opts *o)
{
	char *argv[] = { "probe", "--no-cache", "--image-map", "scripts/image-map", ".", NULL };

	memset(o, 0, sizeof(*o));
	assert_int_equal(probe_options(5, argv, o), -1);
}

static void shipped_free(struct probe_opts *o)
{
	free(o->egress.rules);
	sbt_env_free(&o->env);
}

/* The shipped map: every node tag (and none), Alpine ones on the Alpine stand-in. */
static void test_shipped_map(void **state)
{
	static struct probe_opts o;
	static const char *const alpine_tags[] = {
		"node:20-alpine",	   "node:alpine",
		"node:current-alpine3.20", "node:18.19.1-alpine3.19",
		"node:lts-alpine",	   "node:alpine3.20",
		"node:20.11-alpine",	   "node:22-alpine@sha256:0123",
	};
	static const char *const debian_tags[] = {
		"node:20-slim",
		"node:20",
		"node:22-bookworm-slim",
		"node:current-slim",
		"node:current",
		"node:lts-bookworm",
		"node:18.19.1-bookworm",
		"node:20.11-slim",
		"node:lts",
		"node:current-bookworm",
		"node:latest",
		"node:22.3.0",
		"node:24-slim",
		"node:18.13.0",
		"node:lts-buster-slim",
		"node",
		"node:20-bullseye",
		"node:iron",
		"node:20@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
	};
	(void)state;
	shipped(&o);
	assert_true(o.nr_image_map + 8 <= PROBE_MAX_IMAGE_MAP); /* room for the user's own */
	for (size_t i = 0; i < sizeof(debian_tags) / sizeof(debian_tags[0]); i++)
		mapped(&o, debian_tags[i], DEB);
	for (size_t i = 0; i < sizeof(alpine_tags) / sizeof(alpine_tags[0]); i++)
		mapped(&o, alpine_tags[i], ALP);
	mapped(&o, "debian:bookworm-slim", "localhost/sbtrace-debian:bookworm");
	mapped(&o, "debian:bookworm", "localhost/sbtrace-debian:bookworm");
	mapped(&o, "debian:12", "localhost/sbtrace-debian:bookworm");
	mapped(&o, "debian:12-slim", "localhost/sbtrace-debian:bookworm");
	mapped(&o, "debian:bullseye", NULL); /* no bullseye stand-in */
	mapped(&o, "nosuch/image:1", NULL);
	mapped(&o, "library/node:20", NULL); /* the globs are anchored */
	mapped(&o, "nodejs:20", NULL);
	shipped_free(&o);
}

/* python and golang: Debian for every tag, the Alpine look-alike for Alpine tags. */
static void test_shipped_python_golang(void **state)
{
	static struct probe_opts o;
	static const struct {
		const char *ref, *local;
	} cases[] = {
		{ "python", "localhost/sbtrace-python:bookworm" },
		{ "python:3.12", "localhost/sbtrace-python:bookworm" },
		{ "python:3.11-slim-bookworm", "localhost/sbtrace-python:bookworm" },
		{ "python:3-slim", "localhost/sbtrace-python:bookworm" },
		{ "python:3.12@sha256:ab", "localhost/sbtrace-python:bookworm" },
		{ "python:3.12-alpine", "localhost/sbtrace-python:alpine" },
		{ "python:alpine3.19", "localhost/sbtrace-python:alpine" },
		{ "golang", "localhost/sbtrace-golang:bookworm" },
		{ "golang:1.22", "localhost/sbtrace-golang:bookworm" },
		{ "golang:1.22-bookworm", "localhost/sbtrace-golang:bookworm" },
		{ "golang:1.21.5-alpine3.19", "localhost/sbtrace-golang:alpine" },
		{ "golang:alpine", "localhost/sbtrace-golang:alpine" },
		{ "pythonx:3", NULL },
	};

	(void)state;
	shipped(&o);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		mapped(&o, cases[i].ref, cases[i].local);
	shipped_free(&o);
}

/* distroless: shell-less stand-ins for :latest (and no tag) and :nonroot; :debug has a shell. */
static void test_shipped_distroless(void **state)
{
	static struct probe_opts o;
	static const struct {
		const char *ref, *local;
	} cases[] = {
		{ "gcr.io/distroless/nodejs20-debian12",
		  "localhost/sbtrace-distroless-nodejs:latest" },
		{ "gcr.io/distroless/nodejs22-debian12:latest",
		  "localhost/sbtrace-distroless-nodejs:latest" },
		{ "gcr.io/distroless/nodejs18-debian11:nonroot",
		  "localhost/sbtrace-distroless-nodejs:nonroot" },
		{ "gcr.io/distroless/nodejs20-debian12:nonroot-amd64",
		  "localhost/sbtrace-distroless-nodejs:nonroot" },
		{ "gcr.io/distroless/nodejs20-debian12@sha256:0123",
		  "localhost/sbtrace-distroless-nodejs:latest" },
		{ "gcr.io/distroless/static", "localhost/sbtrace-distroless-static:latest" },
		{ "gcr.io/distroless/static-debian12:nonroot",
		  "localhost/sbtrace-distroless-static:nonroot" },
		{ "gcr.io/distroless/static-debian11:latest",
		  "localhost/sbtrace-distroless-static:latest" },
		{ "gcr.io/distroless/base", "localhost/sbtrace-distroless-base:latest" },
		{ "gcr.io/distroless/base-debian12:nonroot",
		  "localhost/sbtrace-distroless-base:nonroot" },
		{ "gcr.io/distroless/base-nossl-debian12",
		  "localhost/sbtrace-distroless-base:latest" },
		{ "gcr.io/distroless/cc-debian12", "localhost/sbtrace-distroless-base:latest" },
		{ "gcr.io/distroless/python3-debian12",
		  "localhost/sbtrace-distroless-python3:latest" },
		{ "gcr.io/distroless/python3-debian12:nonroot",
		  "localhost/sbtrace-distroless-python3:nonroot" },
		/* the debug images have busybox's shell: no shell-less stand-in for them */
		{ "gcr.io/distroless/nodejs20-debian12:debug", NULL },
		{ "gcr.io/distroless/static-debian12:debug-nonroot", NULL },
		{ "gcr.io/distroless/base:debug", NULL },
		{ "gcr.io/distroless/java17-debian12", NULL },
		{ "gcr.io/distroless-nodejs20", NULL },
	};

	(void)state;
	shipped(&o);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		mapped(&o, cases[i].ref, cases[i].local);
	shipped_free(&o);
}

/* The map's later line wins over the shipped one: an --image-map after the file. */
static void test_shipped_then_user(void **state)
{
	static struct probe_opts o;
	char *argv[] = { "probe",	"--no-cache",	 "--image-map", "scripts/image-map",
			 "--image-map", "node:20*=mine", ".",		NULL };

	(void)state;
	memset(&o, 0, sizeof(o));
	assert_int_equal(probe_options(7, argv, &o), -1);
	mapped(&o, "node:20-slim", "mine");
	mapped(&o, "node:20-alpine", "mine"); /* the user's line is later than the Alpine one */
	mapped(&o, "node:20@sha256:00", "mine");
	mapped(&o, "node:22", DEB);
	shipped_free(&o);
}

static void note_is(const char *ref, const char *provides, const char *want)
{
	char buf[DF_NOTE_MAX];

	probe_image_note(ref, provides, buf, sizeof(buf));
	if (strcmp(buf, want) != 0)
		fail_msg("%s with '%s': '%s', want '%s'", ref, provides, buf, want);
}

/* The warning's note: the version asked for beside the stand-in's, and a digest pin. */
static void test_note(void **state)
{
	(void)state;
	note_is("node:24-slim", "Node.js 18.19.0",
		"asked: Node.js 24, the stand-in has Node.js 18.19.0");
	note_is("node:18.13.0", "Node.js 18.19.0",
		"asked: Node.js 18.13.0, the stand-in has Node.js 18.19.0");
	note_is("node:lts-buster-slim", "Node.js 18.19.0",
		"asked: Node.js lts, the stand-in has Node.js 18.19.0");
	note_is("node:alpine", "Node.js 18.19.0",
		"asked: Node.js latest, the stand-in has Node.js 18.19.0");
	note_is("node", "Node.js 18.19.0",
		"asked: Node.js latest, the stand-in has Node.js 18.19.0");
	note_is("python:3.12-slim", "Python 3.11.2",
		"asked: Python 3.12, the stand-in has Python 3.11.2");
	note_is("golang:1.22-alpine", "Go 1.19.8", "asked: Go 1.22, the stand-in has Go 1.19.8");
	note_is("gcr.io/distroless/nodejs20-debian12:nonroot", "Node.js 18.19.0",
		"asked: Node.js 20, the stand-in has Node.js 18.19.0");
	note_is("gcr.io/distroless/python3-debian12", "Python 3.11.2",
		"asked: Python 3, the stand-in has Python 3.11.2");
	note_is("node:20@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
		"Node.js 18.19.0",
		"asked: Node.js 20, the stand-in has Node.js 18.19.0; the digest pin "
		"@sha256:0123456789ab... cannot be honoured by a stand-in, whose files are its "
		"own");
	/* a stand-in of the user's own has no label: only the pin is worth a note */
	note_is("node:20@sha256:0123456789abcdef", "",
		"the digest pin @sha256:0123456789ab... cannot be honoured by a stand-in, "
		"whose files are its own");
	note_is("node:20", "", "");
	note_is("gcr.io/distroless/static", "", "");
	note_is("x:1", "no version here", "");
}

/* A package manager the stand-ins lack, as a command word only. */
static void test_foreign_tool(void **state)
{
	static const struct {
		const char *cmd, *tool;
	} cases[] = {
		{ "apk add --no-cache curl", "apk" },
		{ "set -e; apk update && apk add git", "apk" },
		{ "apt-get update || /sbin/apk add curl", "apk" },
		{ "sudo yum install -y make", "yum" },
		{ "FOO=1 dnf -y install gcc", "dnf" },
		{ "true|microdnf install tar", "microdnf" },
		{ "(cd /x && exec apk info)", "apk" },
		{ "echo apk add curl", NULL }, /* an argument, not a command */
		{ "npm ci --prefix apk", NULL },
		{ "apkg add x", NULL },
		{ "apt-get install -y curl", NULL },
		{ "", NULL },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *got = probe_foreign_tool(cases[i].cmd);

		if (!cases[i].tool != !got || (got && strcmp(got, cases[i].tool) != 0))
			fail_msg("'%s': %s, want %s", cases[i].cmd, got ? got : "none",
				 cases[i].tool ? cases[i].tool : "none");
	}
	assert_null(probe_foreign_tool(NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_globs),
		cmocka_unit_test(test_last_wins),
		cmocka_unit_test(test_forms),
		cmocka_unit_test(test_forms_last_wins),
		cmocka_unit_test(test_shipped_map),
		cmocka_unit_test(test_shipped_python_golang),
		cmocka_unit_test(test_shipped_distroless),
		cmocka_unit_test(test_shipped_then_user),
		cmocka_unit_test(test_note),
		cmocka_unit_test(test_foreign_tool),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
