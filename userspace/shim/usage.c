// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* sbtrace-shim's help and usage errors (usage.h). */
#include <stdio.h>

#include "shim.h"
#include "usage.h"
#include "help/sbtrace-shim.h"

void shim_usage_main(FILE *f)
{
	sbt_help_shim(f);
}

void shim_usage_run(FILE *f)
{
	sbt_help_shim_run(f);
}

void shim_usage_gc(FILE *f)
{
	sbt_help_shim_gc(f);
}
