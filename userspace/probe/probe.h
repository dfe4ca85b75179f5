/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The shell-invocation probe's pure parts: which build to run for a repo,
 * its declared inputs and their SHA-256 digests, the content cache key, and
 * the cache itself (atomic writes; an unreadable or corrupt entry is ignored,
 * never trusted). No sandbox, no BPF here.
 */
#ifndef SBT_PROBE_H
#define SBT_PROBE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include <stdio.h>

#include <json-c/json.h>

#include "trace/tracer.h"

#define SBT_PROBE_MAX_ARGS   64
#define SBT_PROBE_MAX_INPUTS 96

/*
 * The build kinds, one row each, in the order a repo is looked at: a row
 * X(ID, name) makes the value SBT_BUILD_<ID>, and userspace/probe/kind_<name>.c
 * defines what the probe knows of it (probe_kind_<name>, kind.h). A new kind
 * is its file and its row (and its name in probe-report.schema.json's
 * command.kind).
 */
#define SBT_BUILD_KINDS(X)                                                                         \
	X(CMD, cmd)		  /* --cmd "PROG ARGS" */                                          \
	X(DOCKERFILE, dockerfile) /* a Dockerfile's final stage (or --target): podman/docker */    \
	X(NPM, npm)		  /* package.json scripts.build: npm run build */                  \
	X(MAKE, make)		  /* a Makefile: make -B */                                        \
	X(NPM_START, npm_start)	  /* package.json scripts.start alone: installed, booted */

enum sbt_build_kind {
	SBT_BUILD_NONE = 0,
#define SBT_BUILD_ID(id, name) SBT_BUILD_##id,
	SBT_BUILD_KINDS(SBT_BUILD_ID)
#undef SBT_BUILD_ID
		SBT_BUILD__MAX,
};

struct sbt_probe_input {
	char name[128];	 /* path relative to the repo, e.g. "package.json" */
	char sha256[65]; /* lower-case hex */
	/* a base image (name "image:REF"): the local image --image-map put in its place, or "" */
	char substituted_by[256];
};

struct sbt_build_plan {
	enum sbt_build_kind kind;
	int argc;
	char *argv[SBT_PROBE_MAX_ARGS +
		   1];	 /* NULL-terminated; owned (free with sbt_build_plan_free) */
	char target[64]; /* DOCKERFILE: the stage to build; "" for an unnamed final stage */
	/* The Dockerfile looked at, relative to the repo: "Dockerfile" unless --file named another */
	char dockerfile[128];
	char why[192]; /* which kind was chosen and why, e.g. "no Dockerfile, so Makefile ..." */
	/*
	 * The install step run before argv, in the same sandbox (npm: `npm ci`
	 * when a lockfile is there and node_modules is not): NULL-terminated
	 * static words, or NULL for none.
	 */
	const char *const *install;
	int nr_inputs;
	struct sbt_probe_input inputs[SBT_PROBE_MAX_INPUTS];
};

/*
 * Split `s` into words: blanks separate words; '...' keeps everything
 * literally; "..." keeps everything but \" and \\ escapes; a backslash
 * outside quotes escapes the next character. Never a shell: no $, no globs,
 * no ;. Returns the number of words (argv NULL-terminated, strings malloc'd)
 * or -1 with `err` naming the problem (unterminated quote, too many words,
 * empty command).
 */
int sbt_split_words(const char *s, char **argv, int max, char *err, size_t errlen);

/*
 * Decide the build for `repo`: `cmd` (--cmd) if given; else a Dockerfile
 * (with FROM; `file`, a normalized path relative to the repo, when not NULL:
 * --file, which must then exist and be the build): the stage `target`, else
 * the final stage (the image a container runs); else package.json with
 * scripts.build (npm run build); else Makefile / makefile / GNUmakefile
 * (make -B: outputs already in the tree are remade, not skipped). A
 * Dockerfile that does not parse is an error (its line), never a reason to
 * build something else; plan->why says which kind was chosen and why. Records the declared
 * inputs that exist, with their digests: Dockerfile, package.json,
 * package-lock.json, npm-shrinkwrap.json, yarn.lock, pnpm-lock.yaml,
 * Makefile / makefile / GNUmakefile. Returns 0, or -1 with `err` saying what
 * was looked for ("no build found in REPO: looked for --cmd, a Dockerfile,
 * package.json scripts.build, a Makefile"), or what is
 * wrong (unreadable package.json, bad --cmd ...).
 */
int sbt_probe_plan(const char *repo, const char *cmd, const char *target, const char *file,
		   struct sbt_build_plan *plan, char *err, size_t errlen);
void sbt_build_plan_free(struct sbt_build_plan *plan);

/*
 * The cache key: SHA-256 over the probe version, the build kind, the argv
 * words, the target and every input's name and digest (each length-prefixed,
 * so no two different plans collide by concatenation).
 */
void sbt_probe_cache_key(const struct sbt_build_plan *plan, const char *version, char hex[65]);

/*
 * Cache entries: DIR/KEY.json holding the probe report. Read returns 0 and a
 * new reference when the file parses, is an object and its "cache"."key"
 * equals key; -ENOENT when absent; -EBADMSG when corrupt (the caller ignores
 * it and rewrites). Write is atomic (temp file in DIR, fsync, rename) and
 * creates DIR (and parents) 0700. The default DIR is $XDG_CACHE_HOME/sbtrace,
 * else $HOME/.cache/sbtrace (sbt_cache_default_dir).
 */
int sbt_cache_read(const char *dir, const char *key, json_object **report);
int sbt_cache_write(const char *dir, const char *key, json_object *report);
int sbt_cache_default_dir(char *buf, size_t len);

/*
 * `sbtrace probe ARGS` (userspace/probe/): the whole command, the trace
 * being the loader's (passed in). Exit codes as its help says.
 */
int sbt_probe_main(int argc, char **argv, sbt_trace_fn trace);
void sbt_probe_usage(FILE *f);

#endif
