/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The one way sbtrace speaks to the operator on stderr: a line
 * "PREFIX: message", PREFIX the command that runs ("sbtrace trace",
 * "sbtrace agent", "sbtrace-shim run" ...; set once by the command table,
 * lib/cli.c), written with one write() so that lines of several threads
 * never interleave. Stdout is data (events, reports); progress, warnings
 * and errors come through here.
 */
#ifndef SBT_LOG_H
#define SBT_LOG_H

#include <stdarg.h>

/* The prefix: "PROG" or "PROG CMD" (cmd NULL: PROG alone). */
void sbt_log_prefix(const char *prog, const char *cmd);
/* What the lines start with now ("sbtrace" until a command set it). */
const char *sbt_log_name(void);

/* One line: "PREFIX: " fmt "\n" (no newline in fmt; a long line is cut, never split). */
void sbt_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void sbt_vlog(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));

/*
 * A diagnostic about a place in a file: "FILE:LINE:COL: message", the place
 * first and no prefix (as compilers write it: editors jump to it).
 */
void sbt_log_at(const char *file, unsigned int line, unsigned int col, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* A usage error: "PREFIX: message; see 'PREFIX --help'" (the command's own help). */
void sbt_log_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
