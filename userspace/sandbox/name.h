/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* A sandbox's name, on its own: the trace request and the pins need it, not the launcher. */
#ifndef SBT_SANDBOX_NAME_H
#define SBT_SANDBOX_NAME_H

#include <stdbool.h>

#define SBT_SANDBOX_NAME_MAX 64 /* [A-Za-z0-9_.-], not starting with '.' */

/* True when `name` is a valid sandbox name. */
bool sbt_sandbox_name_ok(const char *name);

#endif
