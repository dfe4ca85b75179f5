/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Build kinds: what the probe knows of each way a repo is built (--cmd, a
 * Dockerfile, npm, make), one row each (struct probe_kind), in
 * userspace/probe/kind_<name>.c; the list and its order are
 * SBT_BUILD_KINDS (probe.h), the table plan.c's. Everything that differs
 * between kinds is a field or a hook here: the callers ask the row, never
 * which kind it is. A new kind is its file and its row.
 */
#ifndef SBT_PROBE_KIND_H
#define SBT_PROBE_KIND_H

#include <stdbool.h>
#include <stddef.h>

#include "probe_int.h"

/* What a kind's detect looks at. */
struct probe_plan_in {
	const char *root;   /* the repo's real path */
	const char *repo;   /* as given, for messages */
	const char *cmd;    /* --cmd, or NULL */
	const char *target; /* --target, or NULL */
	const char *file;   /* --file (normalized, repo-relative), or NULL: "Dockerfile" */
};

struct probe_kind {
	const char *name;	/* the report's command.kind (probe-report.schema.json) */
	const char *label;	/* in messages: "a Dockerfile build", "--cmd, npm or make builds" */
	const char *looked_for; /* "no build found in REPO: looked for ..." */
	/* Files recorded as inputs when they exist, whatever the kind (report order). */
	const char *const *inputs;
	/* The build's shells tied to nothing else: this instruction (and file) of the repo. */
	const char *instruction, *file;
	/*
	 * The build is an engine's: on the host on this backend (--backend
	 * podman), or with in_vm in the microVM too (--backend qemu; auto picks
	 * it where KVM is usable).
	 */
	bool own_backend, in_vm;
	enum sbt_sandbox_backend backend;
	/* The boot runs the image the build made (else --boot-cmd or npm start, in the sandbox). */
	bool boots_image;
	/*
	 * Is the repo's build this kind? 1: yes, plan->argv (and target) set
	 * and plan->why saying why; 0: no, plan->why may say why not ("no
	 * Dockerfile, so "); -1: an error the user must fix (err).
	 */
	int (*detect)(const struct probe_plan_in *in, struct sbt_build_plan *plan, char *err,
		      size_t errlen);
	/* The chosen kind's inputs beyond `inputs` (--cmd: its script). 0, or -1 with err. */
	int (*more_inputs)(const char *root, struct sbt_build_plan *plan, char *err, size_t errlen);
	/*
	 * The sites of the build's and the boot's shells (site.h) into p->sites;
	 * with boot_start, package.json's start script is the boot's, and
	 * *has_start says whether there is one. 0, or -1 with err.
	 */
	int (*sites)(const struct probe_kind *k, struct probe_ctx *p,
		     const struct sbt_build_plan *plan, bool boot_start, bool *has_start, char *err,
		     size_t errlen);
	/* After the plan, before the key: what the run needs. 0, or -1 with p->boot_err. */
	int (*prepare)(struct probe_ctx *p, struct sbt_build_plan *plan);
	/* Right before the sandbox starts (p->name known): the argv made now. 0, or -1 (boot_err). */
	int (*argv)(struct probe_ctx *p, struct sbt_build_plan *plan);
	/* The sandbox started (p->run): what must hold of it. 0, or -1 with p->boot_err. */
	int (*started)(struct probe_ctx *p);
	/*
	 * Why this trace, of a build that worked and lost nothing, is still no
	 * evidence (its reason, *message its warning), or NULL: the kind's own
	 * rule ("the build did nothing", steps run outside the sandbox).
	 */
	const char *(*doubt)(const struct probe_ctx *p, const struct sbt_build_plan *plan,
			     const char **message);
};

/* kind.c: what the kinds share. */
/* Append to plan->why (as much as fits). */
void probe_why(struct sbt_build_plan *plan, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* plan->argv from n words (copied). 0, or -1 with err. */
int probe_set_argv(struct sbt_build_plan *plan, const char *const *words, int n, char *err,
		   size_t errlen);
/* Record the repo file `name` as an input (its digest) when it is a regular file. 0 or -1. */
int probe_input_file(const char *root, const char *name, struct sbt_build_plan *plan, char *err,
		     size_t errlen);
/* package.json's scripts as sites, the start script the boot's when boot_start. 0 or -ENOMEM. */
int probe_scripts_sites(struct probe_ctx *p, bool boot_start, bool *has_start);
/* The sites of most kinds (a .sites hook): package.json's scripts, then the build's catch-all. */
int probe_kind_sites(const struct probe_kind *k, struct probe_ctx *p,
		     const struct sbt_build_plan *plan, bool boot_start, bool *has_start, char *err,
		     size_t errlen);

#endif
