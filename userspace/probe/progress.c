// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The probe's progress on stderr: "sbtrace probe: [ 1.2 s] ...", unless --quiet. */
#include <stdarg.h>
#include <stdio.h>

#include "lib/clock.h"
#include "lib/log.h"
#include "probe_int.h"

void probe_progress(const struct probe_ctx *p, const char *fmt, ...)
{
	char msg[2048];
	va_list ap;

	if (p->o->quiet)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	sbt_log("[%5.1f s] %s", (double)(sbt_mono_ms() - p->t0_ms) / 1000.0, msg);
}
