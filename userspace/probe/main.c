// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * `sbtrace probe REPO`: run the repo's build in a fresh sandbox under trace
 * and print one JSON report: does this build invoke a shell — can the image
 * go distroless? (the founding ADR-0002: typed failures, warning ids, content cache.)
 *
 *   options → plan (what to build, its inputs, the cache key) → the cache
 *   answers, or: run (sandbox + trace, run.c) → verdict and report → cache.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/clock.h"
#include "kind.h"
#include "migrate/check.h"
#include "sarif.h"
#include "lib/sha256.h"
#include "lib/log.h"

/* The report on stdout, as JSON or (--format sarif) as a SARIF log. */
static void print_report(const struct probe_opts *o, json_object *report)
{
	json_object *out = o->sarif ? probe_sarif(report) : json_object_get(report);

	if (!out) {
		sbt_log("out of memory writing the report");
		return;
	}
	printf("%s\n", json_object_to_json_string_ext(out, JSON_C_TO_STRING_PRETTY |
								   JSON_C_TO_STRING_NOSLASHESCAPE));
	fflush(stdout);
	json_object_put(out);
}

/* The boot is part of the question: what runs, for how long (an input of the key). */
static void boot_input(const struct probe_ctx *p, struct sbt_build_plan *plan)
{
	char desc[4096], hex[65];
	size_t n;

	n = (size_t)snprintf(desc, sizeof(desc), "%s|%d|%llu|%llu",
			     p->boot.skipped ? p->boot.skipped : "", (int)p->boot.source,
			     (unsigned long long)p->o->boot_ms,
			     (unsigned long long)p->o->boot_quiet_ms);
	for (int i = 0; p->boot.argv[i] && n < sizeof(desc); i++)
		n += (size_t)snprintf(desc + n, sizeof(desc) - n, "|%s", p->boot.argv[i]);
	sbt_sha256_bytes(desc, strlen(desc), hex);
	probe_add_input(plan, "boot", hex);
}

/*
 * What to build and its key. -1 to go on (p->boot_failed when the sandbox
 * cannot be set up, e.g. a base image is missing: that is reported), else an
 * exit code.
 */
static int plan_build(struct probe_ctx *p, struct probe_opts *o, struct sbt_build_plan *plan)
{
	const struct probe_kind *k;
	char err[512], version[64];

	if (sbt_probe_plan(o->repo, o->cmd, o->target, o->file, plan, err, sizeof(err))) {
		sbt_log("%s", err);
		return SBT_EXIT_USAGE;
	}
	k = probe_kind_of(plan->kind);
	if (probe_backend_options(o, k, &p->backend) < 0)
		return SBT_EXIT_USAGE;
	if (probe_boot_plan(p, plan, err, sizeof(err)) < 0) {
		sbt_log("%s", err);
		return SBT_EXIT_USAGE;
	}
	p->sink.sites = &p->sites;
	/* What the kind needs first (a Dockerfile: the engine, its base images as inputs). */
	if (k->prepare && k->prepare(p, plan) < 0)
		p->boot_failed = true;
	for (int i = 0; i < plan->nr_inputs; i++)
		if (strncmp(plan->inputs[i].name, "image:", 6) == 0 && !plan->inputs[i].sha256[0])
			p->uncacheable = true; /* --pull: an image the key cannot pin */
	/* --egress learn observes this run (and writes --learn-out), --migrate checks one: */
	if (o->egress.learn || o->migrate) /* never answered from a cache */
		p->uncacheable = true;
	if (o->migrate && plan->kind != SBT_BUILD_DOCKERFILE) {
		sbt_log("--migrate rewrites a Dockerfile's final stage; %s has none (a %s build)",
			o->repo, k->label);
		return SBT_EXIT_USAGE;
	}
	probe_progress(p, "build: %s", plan->why);
	boot_input(p, plan);
	if (!p->boot_failed)
		probe_key_inputs(p, plan);
	/* Another backend's report (a VM's) is another answer: its own key. */
	snprintf(version, sizeof(version), "%s%s%s", SBTRACE_VERSION,
		 p->backend == SBT_BACKEND_QEMU ? "+" : "",
		 p->backend == SBT_BACKEND_QEMU ? sbt_backend_name(p->backend) : "");
	sbt_probe_cache_key(plan, version, p->key);
	return -1;
}

/* --fail-on: the exit code the verdict (safe, unsafe, inconclusive; NULL: none) makes. */
static int verdict_exit(const struct probe_opts *o, const char *verdict)
{
	if (!verdict)
		verdict = "";
	if (o->fail_on != FAIL_ON_NOTHING && strcmp(verdict, "unsafe") == 0)
		return PROBE_EXIT_UNSAFE;
	if (o->fail_on == FAIL_ON_INCONCLUSIVE && strcmp(verdict, "safe") != 0)
		return PROBE_EXIT_INCONCLUSIVE;
	return SBT_EXIT_OK;
}

/* Warm path: the cache answers; no sandbox, no BPF. True when it did. */
static bool cache_answer(const struct probe_ctx *p, int *code)
{
	const struct probe_opts *o = p->o;
	json_object *cached, *cache, *timings, *verdict;
	int r;

	if (o->no_cache || !o->cache_dir)
		return false;
	if (!p->tree.cacheable) {
		probe_progress(p, "no cache: %s", p->tree.why);
		return false;
	}
	r = sbt_cache_read(o->cache_dir, p->key, &cached);
	if (r == -EBADMSG)
		probe_progress(p, "cache entry corrupt: ignored, will be rewritten%s", "");
	if (r)
		return false;
	json_object_object_get_ex(cached, "cache", &cache);
	json_object_object_add(cache, "hit", json_object_new_boolean(true));
	timings = json_object_new_object();
	json_object_object_add(timings, "total", json_object_new_uint64(sbt_mono_ms() - p->t0_ms));
	json_object_object_add(cached, "timings_ms", timings);
	print_report(o, cached);
	/* a cached answer is all there is of that run: its verdict is the entry's */
	*code = verdict_exit(o, json_object_object_get_ex(cached, "verdict", &verdict)
					? json_object_get_string(verdict)
					: NULL);
	json_object_put(cached);
	probe_progress(p, "answered from the cache (%s)", o->cache_dir);
	return true;
}

/* The last line on stderr: the verdict, and why it is not a confident one. */
static void summary(const struct probe_ctx *p, const struct probe_verdict *v)
{
	char line[700];

	snprintf(line, sizeof(line), "%s, confidence %s%s%s%s%s", v->verdict, v->confidence,
		 v->reason ? " (" : "", v->reason ? v->reason : "", v->reason ? ": " : "",
		 v->reason ? v->message : "");
	if (v->reason)
		strcat(line, ")");
	probe_progress(p, "verdict: %s", line);
}

/*
 * --migrate: the report's migration (migrate/check.h); the exit code --fail-on
 * makes of it: unsafe when the app tried a shell the new base has not,
 * inconclusive when it is not verified.
 */
static int migrate(const struct probe_ctx *p, const struct sbt_build_plan *plan, json_object *r)
{
	bool verified = false, shell_failed = false;
	json_object *m = NULL;

	if (!p->boot_failed)
		m = probe_migrate(p, plan, &verified, &shell_failed);
	json_object_object_add(r, "migration", m);
	if (m)
		probe_progress((struct probe_ctx *)p, "migration: %s (%s)",
			       verified ? "verified" : "not verified",
			       json_object_get_string(json_object_object_get(m, "why")));
	if (p->o->fail_on != FAIL_ON_NOTHING && shell_failed)
		return PROBE_EXIT_UNSAFE;
	if (p->o->fail_on == FAIL_ON_INCONCLUSIVE && !verified)
		return PROBE_EXIT_INCONCLUSIVE;
	return SBT_EXIT_OK;
}

/* Report, and cache only a confident answer of a repo the key covers. The exit code. */
static int report(struct probe_ctx *p, const struct sbt_build_plan *plan)
{
	const struct probe_opts *o = p->o;
	struct probe_verdict v;
	json_object *r;
	int ret, mig_exit;

	if (p->started)
		sbt_sandbox_limits_read(&p->run); /* else destroy read them last */
	probe_decide(p, plan, &v);
	r = probe_report(p, plan, &v);
	mig_exit = o->migrate ? migrate(p, plan, r) : SBT_EXIT_OK;
	print_report(o, r);
	summary(p, &v);
	if (!o->no_cache && o->cache_dir && !v.reason && p->tree.cacheable && !p->timed_out &&
	    !p->uncacheable && sbt_cache_write(o->cache_dir, p->key, r) < 0)
		probe_progress(p, "could not write the cache entry in %s", o->cache_dir);
	ret = verdict_exit(o, v.verdict);
	json_object_put(r);
	return ret ? ret : mig_exit;
}

int sbt_probe_main(int argc, char **argv, sbt_trace_fn trace)
{
	static struct probe_opts o;
	static struct probe_ctx p;
	struct sbt_build_plan plan = { 0 };
	int ret, code = SBT_EXIT_OK;

	memset(&p, 0, sizeof(p));
	probe_net_init(&p.net);
	p.o = &o;
	p.t0_ms = sbt_mono_ms();
	p.t0_epoch_ns = sbt_now_epoch_ns();
	probe_sink_init(&p.sink, 0);
	ret = probe_options(argc, argv, &o);
	if (ret < 0)
		ret = plan_build(&p, &o, &plan);
	if (ret < 0 && !p.boot_failed && !p.uncacheable && cache_answer(&p, &code))
		ret = code;
	if (ret < 0 && !p.boot_failed)
		ret = probe_run(&p, &plan, trace);
	if (ret < 0)
		ret = report(&p, &plan);
	probe_cleanup(&p);
	sbt_build_plan_free(&plan);
	free(o.egress.rules);
	o.egress.rules = NULL;
	sbt_env_free(&o.env);
	return ret;
}
