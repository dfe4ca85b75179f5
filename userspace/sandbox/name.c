// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* A sandbox's name: what the shim, the probe, state files and pins accept. */
#include <stddef.h>

#include "sandbox/name.h"

bool sbt_sandbox_name_ok(const char *name)
{
	size_t n;

	if (!name || !name[0] || name[0] == '.')
		return false;
	for (n = 0; name[n]; n++) {
		char c = name[n];

		if (n >= SBT_SANDBOX_NAME_MAX)
			return false;
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '.' || c == '-'))
			return false;
	}
	return true;
}
