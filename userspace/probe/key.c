// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * What the cache key covers beyond the declared inputs (plan.c) and the base
 * images (engine.c): every file of the repo (tree.c), the environment the
 * build gets, the build tool itself, the backend and the probe's version.
 * Each is an input of the plan, so the report lists what the key was made of.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "probe_int.h"
#include "lib/sha256.h"

int probe_add_input(struct sbt_build_plan *plan, const char *name, const char *sha256)
{
	struct sbt_probe_input *in;

	if (plan->nr_inputs >= SBT_PROBE_MAX_INPUTS || strlen(name) >= sizeof(in->name))
		return -E2BIG;
	in = &plan->inputs[plan->nr_inputs++];
	snprintf(in->name, sizeof(in->name), "%s", name);
	snprintf(in->sha256, sizeof(in->sha256), "%s", sha256);
	return 0;
}

/* The program `name` resolves to in `path` (a PATH value), or name itself if it has a '/'. */
static bool resolve(const char *name, const char *path, char *out, size_t len, struct stat *st)
{
	if (strchr(name, '/'))
		return (size_t)snprintf(out, len, "%s", name) < len && stat(out, st) == 0;
	for (const char *p = path ? path : ""; *p;) {
		size_t n = strcspn(p, ":");

		if (n && (size_t)snprintf(out, len, "%.*s/%s", (int)n, p, name) < len &&
		    stat(out, st) == 0 && S_ISREG(st->st_mode))
			return true;
		p += n + (p[n] == ':');
	}
	return false;
}

/*
 * The tool that runs the build (make, npm, podman ...): an upgrade can
 * change what it runs. Its identity, not its content (it is large): path,
 * size, modification time, inode.
 */
static int add_tool(struct sbt_build_plan *plan, const char *tool, const char *path_env)
{
	char path[4096], id[4200], hex[65], name[128];
	struct stat st;

	if (resolve(tool, path_env, path, sizeof(path), &st))
		snprintf(id, sizeof(id), "%s\n%lld\n%lld.%09ld\n%llu", path, (long long)st.st_size,
			 (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec,
			 (unsigned long long)st.st_ino);
	else
		snprintf(id, sizeof(id), "%.200s (not found)", tool);
	sbt_sha256_bytes(id, strlen(id), hex);
	snprintf(name, sizeof(name), "tool:%.100s", tool);
	return probe_add_input(plan, name, hex);
}

static int add_env(struct sbt_build_plan *plan, const struct sbt_env *env)
{
	for (int i = 0; i < env->n; i++) {
		char name[128], hex[65];
		size_t n = strcspn(env->vars[i], "=");

		snprintf(name, sizeof(name), "env:%.*s", (int)(n > 100 ? 100 : n), env->vars[i]);
		sbt_sha256_bytes(env->vars[i] + n + 1, strlen(env->vars[i] + n + 1), hex);
		if (probe_add_input(plan, name, hex))
			return -E2BIG;
	}
	return 0;
}

/* cache_dir/stat/<sha256 of the repo's path>: the repo's stat cache. */
static void statcache_path(const struct probe_opts *o, char *buf, size_t len)
{
	char hex[65], dir[PATH_MAX];

	buf[0] = '\0';
	if (!o->cache_dir || o->no_cache)
		return;
	sbt_sha256_bytes(o->repo, strlen(o->repo), hex);
	if ((size_t)snprintf(dir, sizeof(dir), "%s/stat", o->cache_dir) >= sizeof(dir) ||
	    (mkdir(o->cache_dir, 0700) && errno != EEXIST) || (mkdir(dir, 0700) && errno != EEXIST))
		return;
	if ((size_t)snprintf(buf, len, "%s/%s", dir, hex) >= len)
		buf[0] = '\0';
}

/*
 * The egress policy: with a rule, the build has a network (net.c), so what
 * the allowlist says can change what the build runs. The mode, then each
 * rule's canonical text, in order; the resolver and the DNS options too.
 */
static int add_policy(struct sbt_build_plan *plan, const struct probe_opts *o)
{
	struct sbt_sha256 ctx;
	uint8_t md[32];
	char hex[65], num[64];

	sbt_sha256_init(&ctx);
	snprintf(num, sizeof(num), "mode %d rules %zu proxy %d resolver %d\n", o->egress_mode,
		 o->egress.nr_rules, o->egress.dns_proxy_off, o->egress.has_resolver);
	sbt_sha256_update(&ctx, num, strlen(num));
	if (o->egress.has_resolver)
		sbt_sha256_update(&ctx, o->egress.resolver, sizeof(o->egress.resolver));
	for (size_t i = 0; i < o->egress.nr_rules; i++) {
		sbt_sha256_update(&ctx, o->egress.rules[i].text, strlen(o->egress.rules[i].text));
		sbt_sha256_update(&ctx, "\n", 1);
	}
	sbt_sha256_final(&ctx, md);
	sbt_sha256_hex(md, hex);
	return probe_add_input(plan, "policy:egress", hex);
}

/*
 * The probe itself: its version and its binary (size, modification time),
 * so a rebuilt sbtrace, whose classification may differ, answers anew.
 */
static int add_probe(struct sbt_build_plan *plan)
{
	char id[256], hex[65];
	struct stat st;

	if (stat("/proc/self/exe", &st) == 0)
		snprintf(id, sizeof(id), "%s\n%lld\n%lld.%09ld", SBTRACE_VERSION,
			 (long long)st.st_size, (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
	else
		snprintf(id, sizeof(id), "%s", SBTRACE_VERSION);
	sbt_sha256_bytes(id, strlen(id), hex);
	return probe_add_input(plan, "probe:sbtrace", hex);
}

int probe_key_inputs(struct probe_ctx *p, struct sbt_build_plan *plan)
{
	const struct probe_opts *o = p->o;
	/* a Dockerfile's argv is the engine's, made at the start: the engine is the tool */
	const char *tool = plan->argv[0]		   ? plan->argv[0]
			   : p->build.eng == ENGINE_DOCKER ? "docker"
							   : "podman";
	char sc[PATH_MAX];
	int rc;

	statcache_path(o, sc, sizeof(sc));
	rc = probe_tree_digest(o->repo, sc[0] ? sc : NULL, &p->tree);
	if (rc) {
		snprintf(p->tree.why, sizeof(p->tree.why), "the repo: %s", strerror(-rc));
		p->tree.cacheable = false;
	}
	if (probe_add_input(plan, "tree:.", p->tree.digest) || add_env(plan, &o->env) ||
	    add_tool(plan, tool, sbt_env_get(&o->env, "PATH")) || add_policy(plan, o) ||
	    add_probe(plan)) {
		p->tree.cacheable = false;
		snprintf(p->tree.why, sizeof(p->tree.why), "more inputs than the key records");
	}
	return 0;
}
