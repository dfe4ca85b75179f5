// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target: the probe's sites (userspace/probe/site.c), which read a
 * repo's Makefile and Dockerfile and match the trace's commands (both from
 * the sandbox: untrusted) against them.
 *
 * Input: up to the first NUL a Makefile, up to the second a Dockerfile (its
 * final stage the target), the rest commands, one a line: each is run as
 * `sh -c LINE` and as its words split at blanks, in the build phase in a
 * cgroup of its own (or the sandbox's) and then in the boot phase, with the
 * previous exec as its ancestor. Every line also goes through
 * probe_simple_command.
 *
 * Invariants: every shell is tied to a site; the report's count is the
 * shells counted, those affecting the final image no more than that, per
 * phase adding up; every location has phase, source and affects_final_image;
 * a simple command gives 1..max-1 non-empty words, NULL-terminated.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe/site.h"
#include "exec/shell.h"

#define MAX_WORDS 16

static size_t split_words(char *line, const char **argv)
{
	size_t n = 0;

	for (char *t = strtok(line, " \t"); t && n < MAX_WORDS; t = strtok(NULL, " \t"))
		argv[n++] = t;
	argv[n] = NULL;
	return n;
}

static void check_simple(const char *cmd)
{
	char *argv[MAX_WORDS];
	int n = probe_simple_command(cmd, argv, MAX_WORDS);

	if (n < 0)
		return;
	if (n == 0 || n >= MAX_WORDS || argv[n])
		abort();
	for (int i = 0; i < n; i++) {
		if (!argv[i] || !argv[i][0])
			abort();
		free(argv[i]);
	}
}

/* One exec; 1 when it was a shell (counted). */
static int feed(struct probe_sites *ss, enum probe_phase ph, uint32_t pid, uint64_t cg,
		const char **argv, size_t argc, const struct sbt_ancestor *anc, size_t nanc)
{
	struct sbt_exec e;
	struct sbt_shell_class cls;
	bool shell;
	int site;

	if (!argc)
		return 0;
	memset(&e, 0, sizeof(e));
	e.pid = pid;
	e.cgroup_id = cg;
	e.argv = argv;
	e.argc = argc;
	e.filename = argv[0];
	e.interp = "";
	shell = sbt_shell_classify(e.filename, e.interp, e.argv, e.argc, &cls);
	site = probe_site_of(ss, ph, &e, shell ? &cls : NULL, anc, nanc, 1);
	if (!shell)
		return 0;
	if (site < 0 || probe_site_count(ss, site, &e, &cls, 0, anc, nanc))
		abort();
	return 1;
}

static void check_report(const struct probe_sites *ss, uint64_t shells)
{
	struct probe_site_totals t;
	json_object *locs = probe_sites_json(ss, &t), *v;

	if (!locs || t.count != shells || t.affecting > t.count || t.build + t.boot != t.count)
		abort();
	for (size_t i = 0; i < json_object_array_length(locs); i++) {
		json_object *loc = json_object_array_get_idx(locs, i);

		if (!json_object_object_get_ex(loc, "phase", &v) ||
		    !json_object_object_get_ex(loc, "source", &v) ||
		    !json_object_object_get_ex(loc, "affects_final_image", &v))
			abort();
	}
	json_object_put(locs);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 3), *mk, *df_text, *cmds, *line, *save = NULL;
	struct sbt_dockerfile df;
	struct sbt_df_error err;
	struct probe_sites ss;
	struct sbt_ancestor anc = { 0 };
	uint64_t shells = 0;
	uint32_t pid = 100;

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = buf[size + 1] = buf[size + 2] = '\0';
	mk = buf;
	df_text = mk + strlen(mk) + 1;
	if (df_text > buf + size)
		df_text = buf + size + 1;
	cmds = df_text + strlen(df_text) + 1;
	if (cmds > buf + size + 1)
		cmds = buf + size + 2;

	probe_sites_init(&ss);
	if (probe_sites_make(&ss, "Makefile", mk, strlen(mk)))
		abort();
	memset(&df, 0, sizeof(df));
	if (sbt_dockerfile_parse(df_text, strlen(df_text), NULL, &df, &err) == 0 &&
	    df.nr_stages > 0) {
		if (probe_sites_dockerfile(&ss, &df, df.nr_stages - 1))
			abort();
	} else if (probe_sites_other(&ss, "recipe", NULL)) {
		abort();
	}
	sbt_dockerfile_free(&df);
	if (ss.boot_other < 0) { /* a boot command's site, as boot.c adds one */
		struct probe_site t = { .phase = PROBE_BOOT, .instruction = "boot_cmd" };

		ss.boot_other = probe_site_add(&ss, &t, NULL, NULL, 0);
	}

	for (line = strtok_r(cmds, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		const char *sh[] = { "/bin/sh", "-c", line, NULL };
		const char *words[MAX_WORDS + 1];
		char copy[4096];
		size_t n;

		check_simple(line);
		snprintf(copy, sizeof(copy), "%s", line);
		n = split_words(copy, words);
		for (int ph = PROBE_BUILD; ph <= PROBE_BOOT; ph++) {
			shells += feed(&ss, ph, pid, 1 + (pid % 3), sh, 3, &anc, pid > 100);
			anc.pid = pid++;
			shells += feed(&ss, ph, pid, 1 + (pid % 3), words, n, &anc, 1);
			anc.pid = pid++;
		}
	}
	check_report(&ss, shells);
	probe_sites_free(&ss);
	free(buf);
	return 0;
}
