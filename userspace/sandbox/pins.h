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
#include <sys/types.h>

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

/*
 * A pin is named "<pid>-<what>" after the process that pinned it. How many
 * of sandbox NAME's pins are of `pid` (its enforcement is still pinned), or
 * -errno.
 */
int sbt_pin_count(const char *name, pid_t pid);
/*
 * A new tracer that took the sandbox over (its own links pinned): unpin the
 * pins of processes that are gone (a restarted agent's). How many, or -errno.
 */
int sbt_pin_prune(const char *name);

/*
 * sbtrace agent --persist: the links on its --cgroup-parent cgroups, pinned
 * under <bpffs>/sbtrace-agent/KEY (KEY: the agent's state, "<dev>-<ino>" of
 * its state dir) for the next agent of the same state to take over. The
 * directory (made when `create`), its dead processes' pins unpinned, or the
 * whole directory removed (sbtrace agent --unpin). 0 / a count, or -errno.
 */
int sbt_pin_agent_dir(const char *key, bool create, char *out, size_t len);
int sbt_pin_agent_prune(const char *key);
int sbt_pin_agent_remove(const char *key);

#endif
