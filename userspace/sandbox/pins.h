/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Pinned enforcement: the links that enforce a sandbox's egress policy (its
 * cgroup programs, its tap's tcx program) are pinned under
 * <bpffs>/sbtrace/NAME/, so a killed tracer does not take them along. They
 * stay until the sandbox's controller (the shim, the probe) has ended the
 * sandbox, or gc finds its cgroup gone; then the directory is removed.
 */
#ifndef SBT_PINS_H
#define SBT_PINS_H

#include <stdbool.h>
#include <stddef.h>

/*
 * <bpffs>/sbtrace/NAME into `out` (made, 0700, when `create`). 0, -EINVAL
 * (a bad sandbox name), -ENOENT (no bpffs mounted), -ENAMETOOLONG, -errno.
 */
int sbt_pin_dir(const char *name, bool create, char *out, size_t len);

/* Unpin everything in sandbox NAME's directory and remove it. 0 (also when absent) or -errno. */
int sbt_pin_remove(const char *name);

/*
 * Remove the pin directories whose sandbox cgroup (<cgroup v2>/sbtrace/NAME)
 * is gone. Returns how many were removed.
 */
int sbt_pin_gc(bool verbose);

#endif
