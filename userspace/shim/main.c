// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * sbtrace-shim: run a workload in a sandbox (sandbox.h) that sbtrace attaches
 * to before the workload's first exec. Commands are a table of {name, fn}:
 * run (run.c), gc (gc.c); their help and usage errors are usage.c's.
 */
#include <stdio.h>

#include "lib/cli.h"
#include "shim.h"
#include "usage.h"

#ifndef SBTRACE_VERSION
#define SBTRACE_VERSION "dev"
#endif

static const struct sbt_command commands[] = {
	{ "run", shim_cmd_run, shim_usage_run },
	{ "gc", shim_cmd_gc, shim_usage_gc },
};

int main(int argc, char **argv)
{
	static const struct sbt_cli cli = {
		.prog = "sbtrace-shim",
		.commands = commands,
		.nr_commands = sizeof(commands) / sizeof(commands[0]),
		.usage = shim_usage_main,
		.version = "sbtrace-shim " SBTRACE_VERSION,
		.exit_ok = SHIM_EXIT_OK,
		.exit_usage = SHIM_EXIT_USAGE,
	};

	return sbt_cli_main(&cli, argc, argv);
}
