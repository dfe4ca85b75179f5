/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Shell classifier: is this exec a shell, and how was it invoked? Pure logic. */
#ifndef SBT_SHELL_H
#define SBT_SHELL_H

#include <stdbool.h>
#include <stddef.h>

enum sbt_shell_kind {
	SBT_SHELL_NONE = 0,
	SBT_SHELL_DIRECT,  /* interactive or reading stdin: `sh`, `bash -l`, `sh -s` */
	SBT_SHELL_COMMAND, /* `sh -c 'cmd'` (also combined flags: -ec, -xc, -lc) */
	SBT_SHELL_SHEBANG, /* a `#!` script whose interpreter (bprm->interp) is a shell */
	SBT_SHELL_SCRIPT,  /* a script argument: `sh build.sh` */
};

#define SBT_SHELL_NAME_MAX 32

struct sbt_shell_class {
	enum sbt_shell_kind kind;
	char shell[SBT_SHELL_NAME_MAX]; /* "sh", "bash", "busybox sh", "toybox sh" ... */
	const char *command;		/* the -c argument (points into argv) or NULL */
	const char *script;		/* script path (argv or filename) or NULL */
	const char *multicall;		/* "busybox" / "toybox" when an applet, else NULL */
	/* how it was known: "name" (its path or argv), "file_name" (the executed file's
	 * own name: a symlink's target), "content" (its fingerprint: a copy or hard link),
	 * "loader" (the dynamic loader ran it: `ld-linux-x86-64.so.2 /bin/sh -c ...`) */
	const char *identified_by;
};

/* "direct", "command", "shebang", "script"; NULL for SBT_SHELL_NONE. */
const char *sbt_shell_kind_name(enum sbt_shell_kind kind);
/* The i-th shell name the classifier can give ("sh", ..., "busybox sh"), NULL past the last. */
const char *sbt_shell_known(size_t i);

/* The i-th shell name the classifier knows ("sh", "bash" ...), NULL past the last. */
const char *sbt_shell_name_at(size_t i);

/* True when `name` (a basename, e.g. "bash", "-bash") names a shell. */
bool sbt_is_shell_name(const char *name);

/*
 * Classify one exec. `filename` is bprm->filename (what was exec'd; the
 * dynamic loader run as a program is an interpreter: what it loads is classified),
 * `interp` bprm->interp (differs from filename for `#!` scripts; may be NULL
 * or "" when unknown), argv the new program's arguments. Returns true and
 * fills `out` when the exec is a shell; false (out->kind = NONE) otherwise.
 */
bool sbt_shell_classify(const char *filename, const char *interp, const char *const *argv,
			size_t argc, struct sbt_shell_class *out);

#endif
