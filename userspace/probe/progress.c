// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The probe's progress on stderr: "sbtrace probe: [ 1.2 s] ...", unless --quiet. */
#include <stdio.h>

#include "lib/clock.h"
#include "probe_int.h"

void probe_progress(const struct probe_ctx *p, const char *fmt, const char *arg)
{
	if (p->o->quiet)
		return;
	fprintf(stderr, "sbtrace probe: [%5.1f s] ", (double)(sbt_mono_ms() - p->t0_ms) / 1000.0);
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
}
