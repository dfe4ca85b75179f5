/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Shells known by their file, not their name: a shell reached through a
 * symlink, a hard link or a copy under another name is still that shell.
 * The exec record says what file ran (decode.h: exe_size, exe_head — its
 * size and first bytes, fingerprinted here: the exact bytes, and the ELF
 * layout in them, which a copy with bytes appended or patched outside its
 * program headers keeps — and exe_name, its dentry's
 * name, which for a symlink is the target's); this table holds the same for
 * the shells installed on the host, learned once at start.
 */
#ifndef SBT_SHELLID_H
#define SBT_SHELLID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "event/decode.h"
#include "exec/shell.h"

#define SBT_SHELLID_MAX 64

struct sbt_shellid {
	struct {
		uint64_t size, fp;
		uint64_t layout; /* sbt_exe_layout's, when has_layout */
		bool has_layout;
		char name[SBT_SHELL_NAME_MAX]; /* "dash", "bash", "busybox" ... */
	} known[SBT_SHELLID_MAX];
	int n;
};

/* A file's fingerprint: its size and its first SBT_EXE_HEAD_BYTES bytes (zero past its end). */
uint64_t sbt_exe_fingerprint(const uint64_t head[SBT_EXE_HEAD_WORDS], uint64_t size);

/*
 * The ELF layout of a head (see shellid.c): true and *out set when the head
 * is a little-endian ELF whose program headers in it hold a PT_LOAD.
 */
bool sbt_exe_layout(const uint64_t head[SBT_EXE_HEAD_WORDS], uint64_t *out);

/* The shells and multi-call binaries (busybox, toybox) in `dirs` (NULL-terminated; NULL: the usual bin directories). */
void sbt_shellid_scan(struct sbt_shellid *t, const char *const *dirs);

/* Add one file as the shell `name`. 0, or -errno (unreadable, table full). */
int sbt_shellid_add(struct sbt_shellid *t, const char *path, const char *name);

/*
 * Classify an exec the name-based classifier found no shell in, by its file:
 * its dentry name (a symlink's target) or its fingerprint among the known
 * shells. True and *out filled (out->identified_by says how) when it is one.
 */
bool sbt_shellid_classify(const struct sbt_shellid *t, const struct sbt_exec *ev,
			  struct sbt_shell_class *out);

#endif
