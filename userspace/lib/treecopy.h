/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A copy of a directory tree that a build may use in its place: modes kept
 * without set-id or sticky bits, owners and times kept, symlinks copied as
 * symlinks, never followed, and refused when they lead out of the tree;
 * device nodes, FIFOs and sockets left out. Bounded: depth, entries, and
 * each file's bytes to its size when opened.
 */
#ifndef SBT_TREECOPY_H
#define SBT_TREECOPY_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define SBT_TREECOPY_MAX_ENTRIES (1u << 20)
#define SBT_TREECOPY_MAX_DEPTH	 256

enum sbt_copy_action {
	SBT_COPY_SKIP = 0, /* device node, FIFO, socket: not copied */
	SBT_COPY_DIR,
	SBT_COPY_FILE,
	SBT_COPY_LINK,
};

/* What to do with an entry of this (lstat) mode. */
enum sbt_copy_action sbt_copy_action(mode_t mode);

/* The mode a copy gets: the permission bits alone (no set-uid, set-gid or sticky). */
mode_t sbt_copy_mode(mode_t mode);

/*
 * Whether a symlink at `path` (relative to the tree's root, e.g. "a/b/link")
 * whose target is `target` leads out of the tree as written: an absolute
 * target, or one that climbs above the root. Lexical only (it cannot know
 * what other links on the way resolve to).
 */
bool sbt_link_escapes(const char *path, const char *target);

struct sbt_tree_copy {
	uint64_t files, dirs, links, bytes;
	uint64_t skipped; /* device nodes, FIFOs, sockets left out */
	uint64_t setid;	  /* entries copied without their set-id bits */
	char first_skipped[256], first_setid[256];
	char escape[4096];	 /* the symlink that leads out (path in the tree), "" */
	char escape_target[256]; /* its target as written */
	bool stop_on_signal;	 /* end with -EINTR once SIGINT or SIGTERM is pending (blocked) */
};

/*
 * Copy the tree at `src` into the existing, empty directory `dst`, or with
 * `dst` NULL only check it (every symlink; nothing written). A symlink leads
 * out when its resolution beneath src escapes (openat2 RESOLVE_BENEATH:
 * absolute, or climbing above src through any links) or, dangling, when it
 * does so as written. 0; -EXDEV with st->escape set; -E2BIG beyond the
 * limits; -EINTR for a pending signal (stop_on_signal); -errno, with `err` saying which
 * path, otherwise. A failed copy leaves what it copied: sbt_tree_remove it.
 */
int sbt_tree_copy(const char *src, const char *dst, struct sbt_tree_copy *st, char *err,
		  size_t errlen);

/* Remove a tree (never following a symlink), `path` itself included. 0 or -errno. */
int sbt_tree_remove(const char *path);

#endif
