// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* One stderr line per message, prefixed with the command (log.h). */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "lib/io.h"
#include "lib/log.h"

#define LINE_MAX_BYTES 4096

static char prefix[64] = "sbtrace";

void sbt_log_prefix(const char *prog, const char *cmd)
{
	if (cmd)
		snprintf(prefix, sizeof(prefix), "%s %s", prog, cmd);
	else
		snprintf(prefix, sizeof(prefix), "%s", prog);
}

const char *sbt_log_name(void)
{
	return prefix;
}

/* "LEAD: " fmt "\n" in one write. */
static void vlog_line(const char *lead, const char *fmt, va_list ap)
{
	char line[LINE_MAX_BYTES];
	int n = snprintf(line, sizeof(line), "%s: ", lead), m;

	if (n < 0 || (size_t)n >= sizeof(line) - 1)
		n = 0;
	m = vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	if (m < 0)
		m = 0;
	n += (size_t)m < sizeof(line) - (size_t)n - 1 ? m : (int)(sizeof(line) - (size_t)n - 2);
	line[n++] = '\n';
	/* best effort: a closed stderr loses the line, nothing else */
	(void)sbt_write_all(STDERR_FILENO, line, (size_t)n);
}

void sbt_vlog(const char *fmt, va_list ap)
{
	vlog_line(prefix, fmt, ap);
}

void sbt_log_at(const char *file, unsigned int line, unsigned int col, const char *fmt, ...)
{
	char where[LINE_MAX_BYTES / 2];
	va_list ap;

	snprintf(where, sizeof(where), "%s:%u:%u", file, line, col);
	va_start(ap, fmt);
	vlog_line(where, fmt, ap);
	va_end(ap);
}

void sbt_log(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sbt_vlog(fmt, ap);
	va_end(ap);
}

void sbt_log_usage(const char *fmt, ...)
{
	char msg[LINE_MAX_BYTES];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	sbt_log("%s; see '%s --help'", msg, prefix);
}
