/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * npm's layout: which package a process ran in, from its working
 * directory's tail (struct sbt_exec.cwd). npm runs a dependency's lifecycle
 * scripts (preinstall, install, postinstall) through `sh -c` in the
 * package's directory: node_modules/<name>, node_modules/@scope/<name>,
 * node_modules/a/node_modules/b when nested. The lockfile (v2/v3
 * "packages", keyed by those paths) gives its version.
 */
#ifndef SBT_NPMPKG_H
#define SBT_NPMPKG_H

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

/*
 * The innermost package below a node_modules/ in `cwd` (names joined by
 * '/', outermost first): its lockfile path ("node_modules/a/node_modules/@s/b")
 * into path (len bytes) and its name ("@s/b", inside path) at *name. A
 * directory below the package (node_modules/a/lib) is still the package's.
 * False when cwd is below no node_modules/, names none after it, or the
 * path does not fit.
 */
bool sbt_npm_pkg_of_cwd(const char *cwd, char *path, size_t len, const char **name);

/*
 * The version of the package at `path` in a lockfile's "packages" object,
 * or NULL. `unsure`: the path may be the end of a longer one (a cwd tail
 * cut above its first node_modules/), so only a path no other key ends
 * with answers.
 */
const char *sbt_npm_lock_version(json_object *packages, const char *path, bool unsure);

#endif
