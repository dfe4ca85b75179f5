// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for --image-map (userspace/probe/engine.c): globs, the last one wins; foreign tools. */
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

/* The shipped map: the common node tags, Alpine ones on the Alpine stand-in (the last wins). */
static void test_shipped_map(void **state)
{
	static struct probe_opts o;
	char *argv[] = { "probe", "--no-cache", "--image-map", "scripts/image-map", ".", NULL };
	const char *deb = "localhost/sbtrace-node:bookworm", *alp = "localhost/sbtrace-node:alpine";
	static const char *const alpine_tags[] = {
		"node:20-alpine",	   "node:alpine",     "node:current-alpine3.20",
		"node:18.19.1-alpine3.19", "node:lts-alpine", "node:alpine3.20",
		"node:20.11-alpine",
	};
	static const char *const debian_tags[] = {
		"node:20-slim",		 "node:20",	    "node:22-bookworm-slim",
		"node:current-slim",	 "node:current",    "node:lts-bookworm",
		"node:18.19.1-bookworm", "node:20.11-slim", "node:lts",
		"node:current-bookworm", "node:latest",	    "node:22.3.0",
	};
	(void)state;
	assert_int_equal(probe_options(5, argv, &o), -1);
	for (size_t i = 0; i < sizeof(debian_tags) / sizeof(debian_tags[0]); i++)
		mapped(&o, debian_tags[i], deb);
	for (size_t i = 0; i < sizeof(alpine_tags) / sizeof(alpine_tags[0]); i++)
		mapped(&o, alpine_tags[i], alp);
	mapped(&o, "debian:bookworm-slim", "localhost/sbtrace-debian:bookworm");
	mapped(&o, "node:20-bullseye", NULL); /* no bullseye stand-in */
	mapped(&o, "registry.test/distroless/nodejs20", NULL);
	free(o.egress.rules);
	sbt_env_free(&o.env);
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
		cmocka_unit_test(test_shipped_map),
		cmocka_unit_test(test_foreign_tool),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
