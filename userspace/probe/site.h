/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Sites: where the probe's shells come from. A site is one instruction,
 * script or recipe line of the repo (a Dockerfile RUN, the final image's
 * ENTRYPOINT/CMD or HEALTHCHECK, a package.json script, a Makefile recipe
 * line, --boot-cmd), with its phase (build or boot), its Dockerfile stage,
 * and whether it affects the final image (the distroless question). Each
 * shell exec of the trace is tied to one site:
 *
 *  - a Dockerfile build runs every RUN step in a container of its own, a
 *    cgroup below the sandbox's: the first process of a new cgroup is the
 *    step's command (`/bin/sh -c TEXT` or the exec form's argv), matched to
 *    the first RUN not matched yet whose command is the same (blanks
 *    collapsed), in file order (the engine builds stages in order); every
 *    exec in that cgroup belongs to that RUN. At boot, the container's
 *    processes belong to its ENTRYPOINT (else CMD) unless a shell's command
 *    is the HEALTHCHECK's.
 *  - elsewhere a shell whose `-c` text is a site's (npm runs scripts as
 *    `sh -c TEXT`, make runs recipe lines that need a shell as `sh -c LINE`)
 *    is tied to it; other shells inherit the site of their nearest tied
 *    ancestor, else the phase's catch-all site (matched false, with why).
 *
 * A shell tied to nothing is counted as affecting the final image: an
 * unknown never turns into "safe".
 */
#ifndef SBT_PROBE_SITE_H
#define SBT_PROBE_SITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "event/decode.h"
#include "dockerfile/dockerfile.h"
#include "exec/proctab.h"
#include "exec/shell.h"

enum probe_phase { PROBE_BUILD = 0, PROBE_BOOT };

struct probe_site {
	enum probe_phase phase;
	char stage[72];		 /* Dockerfile stage name, or "#N" when unnamed; "" none */
	const char *file;	 /* repo-relative: "Dockerfile", "package.json", ...; NULL */
	unsigned int line;	 /* 0: unknown */
	const char *instruction; /* RUN CMD ENTRYPOINT HEALTHCHECK script recipe boot_cmd cmd */
	char script[64];	 /* npm: the script's name */
	bool matched;		 /* shells tied here are this instruction's (else `why`) */
	const char *why;
	bool affects_final;
	bool step;  /* a Dockerfile RUN: matched by a step's first process, once */
	bool taken; /* ... and it was */
	bool ties;  /* an install step: the process running argv ties every shell below it here */
	char *text; /* the -c text it runs (blanks collapsed), or NULL */
	/*
	 * A RUN whose stage the final image is built on: what to do instead
	 * (move it to a build stage), as no exec form is a remedy; else NULL.
	 */
	char *fix;
	char **argv; /* or the exec form's argv (argc strings), or NULL */
	int argc;
	struct sbt_shellagg *agg;    /* its shells, NULL until the first */
	struct probe_site_pkg *pkgs; /* ... and those a dependency ran, by package */
	int nr_pkgs, cap_pkgs;
	/* origin base_image: the base image's own ENTRYPOINT (argv), not the repo's */
	bool base_image;
	char image[256]; /* ... that image, as FROM names it */
};

/* The shells of a site that ran in a dependency's directory (npm's lifecycle scripts). */
struct probe_site_pkg {
	char *package; /* "name@version", or "name" when the lockfile does not say */
	struct sbt_shellagg *agg;
};

struct probe_step {
	uint64_t cgroup_id;
	int site;
};

struct probe_tie {
	uint32_t pid;
	int site;
};

struct probe_sites {
	struct probe_site *v;
	int nr, cap;
	int build_other, boot_other; /* where shells tied to nothing go, per phase */
	int base_entry;		     /* the base image's ENTRYPOINT's site, or -1 */
	bool by_cgroup;		     /* a Dockerfile build: steps are cgroups */
	struct probe_step *steps;
	int nr_steps, cap_steps;
	struct probe_tie *ties;
	int nr_ties, cap_ties;
	json_object *lockfile; /* the repo's npm lockfile, NULL when none */
	/* the Dockerfile's name in the repo (sites' file): "Dockerfile" unless --file */
	char dockerfile[128];
};

void probe_sites_init(struct probe_sites *ss);
void probe_sites_free(struct probe_sites *ss);

/*
 * Add a site (strings copied; text's blanks collapsed). Its index, or -1
 * on ENOMEM.
 */
int probe_site_add(struct probe_sites *ss, const struct probe_site *tmpl, const char *text,
		   const char *const *argv, int argc);

/*
 * The sites of a Dockerfile build of stage `target`: every RUN of the
 * stages a build up to the target runs (affecting the final image when
 * its stage is the target or one the target is built FROM), the target's
 * ENTRYPOINT/CMD and HEALTHCHECK (boot), and the catch-alls. 0 or -ENOMEM.
 */
int probe_sites_dockerfile(struct probe_sites *ss, const struct sbt_dockerfile *df, int target);
/*
 * The final image's ENTRYPOINT is its base image's (`image` as FROM names
 * it): a boot site of origin base_image, not affecting the final image (a
 * distroless base replaces it). The container's first process is its when it
 * runs that entrypoint (a `#!/bin/sh` script, or argv as given), until that
 * process execs something else (the app: `exec "$@"`), whose shells are the
 * app's. 0 or -ENOMEM.
 */
int probe_sites_base_entry(struct probe_sites *ss, const char *image, const char *const *argv,
			   int argc);
/* The build's catch-all when it is not a Dockerfile's. 0 or -ENOMEM. */
int probe_sites_other(struct probe_sites *ss, const char *build_instr, const char *build_file);
/*
 * The build's install step (npm ci, before the build): the process that runs
 * argv (as written, or as its #! script) ties the shells below it to this
 * site, instruction "install", file the lockfile. 0 or -ENOMEM.
 */
int probe_sites_install(struct probe_sites *ss, const char *file, const char *const *argv);
/* package.json's scripts (text: the file, for line numbers). 0 or -ENOMEM. */
int probe_sites_npm(struct probe_sites *ss, json_object *scripts, const char *text,
		    bool boot_start);
/* A Makefile's recipe lines. 0 or -ENOMEM. */
int probe_sites_make(struct probe_sites *ss, const char *name, const char *text, size_t len);

/*
 * Tie one exec to its site (-1: none, for an exec that is no shell and
 * starts no step). `sandbox_cg` is the sandbox's own cgroup.
 */
int probe_site_of(struct probe_sites *ss, enum probe_phase ph, const struct sbt_exec *rec,
		  const struct sbt_shell_class *cls, const struct sbt_ancestor *anc, size_t nanc,
		  uint64_t sandbox_cg);

/*
 * The repo's npm-shrinkwrap.json, else package-lock.json (v2/v3 "packages"),
 * for the versions of the packages shells ran in. None, or one that cannot
 * be read or parsed: names without versions. 0.
 */
int probe_sites_lockfile(struct probe_sites *ss, const char *repo);

/*
 * The package a shell ran in (its cwd below node_modules/, see
 * exec/npmpkg.h): "name@version", or the name alone, into out. False when
 * it ran in none.
 */
bool probe_site_package(const struct probe_sites *ss, const struct sbt_exec *rec, char *out,
			size_t len);

/*
 * Count a shell at its site: with its package's when it ran in one (two
 * packages' identical commands are two locations). 0 or -ENOMEM.
 */
int probe_site_count(struct probe_sites *ss, int site, const struct sbt_exec *rec,
		     const struct sbt_shell_class *cls, int failed, const struct sbt_ancestor *anc,
		     size_t nanc);

/* What the report says of the sites' shells. */
struct probe_site_totals {
	uint64_t count, affecting, build, boot;
	uint64_t omitted_locations, omitted_count;
};

/* The counts of the totals (count, affecting, build, boot), without the locations' JSON. */
void probe_sites_count(const struct probe_sites *ss, struct probe_site_totals *t);

/*
 * Every site's locations, each with phase, stage, affects_final_image,
 * source, package and remediation, in site order; totals filled. New array, NULL on
 * ENOMEM. The remediation of a RUN the final image is built on is its site's
 * fix (exec_form null: the exec form still needs the step's tools in the
 * final image), for a dependency's shell too; elsewhere the exec form of a
 * simple command (ENTRYPOINT, CMD, HEALTHCHECK, a build stage's RUN, npm
 * start, --boot-cmd), none for a dependency's shell.
 */
json_object *probe_sites_json(const struct probe_sites *ss, struct probe_site_totals *t);

/*
 * The exec form of a simple `-c` command (no pipe, redirection, variable,
 * glob, `&&`, `;`, quotes balanced): its words (a leading `exec` dropped),
 * or -1. argv holds max pointers; free the strings. (words.c)
 */
int probe_simple_command(const char *cmd, char **argv, int max);
/*
 * The program an exec form's argv (argc > 0), else the simple command text,
 * runs, into out: "npm" of ["npm", "ci"] or "npm ci"; "" for a command of
 * several, or a shell. (words.c)
 */
void probe_command_program(const char *const *argv, int argc, const char *text, char *out,
			   size_t len);

#endif
