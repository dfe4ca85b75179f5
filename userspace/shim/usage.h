/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * sbtrace-shim's help (its text: sbtrace-shim.help, made into a header by
 * scripts/gen-help.py) and usage errors, which main.c, run.c and gc.c share.
 */
#ifndef SBT_SHIM_USAGE_H
#define SBT_SHIM_USAGE_H

#include <stdio.h>

#include "lib/log.h"

/* --help of sbtrace-shim, its run and its gc. */
void shim_usage_main(FILE *f);
void shim_usage_run(FILE *f);
void shim_usage_gc(FILE *f);

/* "sbtrace-shim CMD: ...; see 'sbtrace-shim CMD --help'" (lib/log.h), and the usage exit code. */
#define shim_usage_error(...) (sbt_log_usage(__VA_ARGS__), SHIM_EXIT_USAGE)

#endif
