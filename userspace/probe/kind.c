// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * What the build kinds share (kind.h): the plan's argv, why and inputs, the
 * common sites; and the probe's progress line, which every part writes.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kind.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "lib/sha256.h"

/* The probe's progress on stderr: "sbtrace probe: [ 1.2 s] ...", unless --quiet. */
void probe_progress(const struct probe_ctx *p, const char *fmt, ...)
{
	char msg[2048];
	va_list ap;

	if (p->o->quiet)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	sbt_log("[%5.1f s] %s", (double)(sbt_mono_ms() - p->t0_ms) / 1000.0, msg);
}

void probe_why(struct sbt_build_plan *plan, const char *fmt, ...)
{
	size_t used = strlen(plan->why);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(plan->why + used, sizeof(plan->why) - used, fmt, ap);
	va_end(ap);
}

int probe_set_argv(struct sbt_build_plan *plan, const char *const *words, int n, char *err,
		   size_t errlen)
{
	for (int i = 0; i < n; i++) {
		plan->argv[i] = strdup(words[i]);
		if (!plan->argv[i]) {
			probe_err(err, errlen, "out of memory");
			return -1;
		}
		plan->argc = i + 1;
	}
	plan->argv[n] = NULL;
	return 0;
}

static bool has_input(const struct sbt_build_plan *plan, const char *name)
{
	for (int i = 0; i < plan->nr_inputs; i++) {
		if (strcmp(plan->inputs[i].name, name) == 0)
			return true;
	}
	return false;
}

int probe_input_file(const char *root, const char *name, struct sbt_build_plan *plan, char *err,
		     size_t errlen)
{
	struct sbt_probe_input *in;
	int fd, rc;

	if (has_input(plan, name))
		return 0;
	rc = probe_open_repo_file(root, name, &fd, err, errlen);
	if (rc <= 0)
		return rc;
	if (strlen(name) >= sizeof(in->name) || plan->nr_inputs >= SBT_PROBE_MAX_INPUTS) {
		probe_err(err, errlen,
			  "%s: cannot record it as an input (path too long or too many)", name);
		close(fd);
		return -1;
	}
	in = &plan->inputs[plan->nr_inputs];
	rc = sbt_sha256_fd(fd, in->sha256);
	close(fd);
	if (rc < 0) {
		probe_err(err, errlen, "%s: %s", name, strerror(-rc));
		return -1;
	}
	memcpy(in->name, name, strlen(name) + 1);
	plan->nr_inputs++;
	return 0;
}

int probe_scripts_sites(struct probe_ctx *p, bool boot_start, bool *has_start)
{
	json_object *doc, *scripts, *start;
	char *text, err[256];
	int ret = 0;

	*has_start = false;
	/* a package.json that cannot be read or parsed has no scripts to tie shells to */
	if (probe_package_json(p->o->repo, &doc, &scripts, &text, err, sizeof(err)) <= 0)
		return 0;
	if (scripts) {
		*has_start = json_object_object_get_ex(scripts, "start", &start) &&
			     json_object_is_type(start, json_type_string);
		ret = probe_sites_npm(&p->sites, scripts, text, boot_start && *has_start);
	}
	json_object_put(doc);
	free(text);
	return ret;
}

int probe_kind_sites(const struct probe_kind *k, struct probe_ctx *p,
		     const struct sbt_build_plan *plan, bool boot_start, bool *has_start, char *err,
		     size_t errlen)
{
	if (probe_scripts_sites(p, boot_start, has_start) ||
	    probe_sites_other(&p->sites, k->instruction, k->file)) {
		probe_err(err, errlen, "out of memory");
		return -1;
	}
	return 0;
}
