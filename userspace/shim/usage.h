/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * sbtrace-shim's help and usage errors, which main.c, run.c and gc.c share:
 * a room of their own, so that the command table (main.c) and the commands
 * (run.c, gc.c) do not depend on each other both ways.
 */
#ifndef SBT_SHIM_USAGE_H
#define SBT_SHIM_USAGE_H

#include <stdio.h>

/* The exit codes, as every command's --help ends. */
extern const char shim_exit_codes_help[];

/* --help of sbtrace-shim, its run and its gc. */
void shim_usage_main(FILE *f);
void shim_usage_run(FILE *f);
void shim_usage_gc(FILE *f);

/* "sbtrace-shim CMD: <fmt with arg>; see 'sbtrace-shim CMD --help'" on stderr; SHIM_EXIT_USAGE. */
int shim_usage_error(const char *cmd, const char *fmt, const char *arg);

#endif
