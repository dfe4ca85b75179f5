// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * sbtrace-shim: run a workload in a sandbox (sandbox.h) that sbtrace attaches
 * to before the workload's first exec. Commands are a table of {name, fn}:
 * run (run.c), gc (gc.c).
 */
#include <stdio.h>

#include "lib/cli.h"
#include "shim.h"

#ifndef SBTRACE_VERSION
#define SBTRACE_VERSION "dev"
#endif

const char shim_exit_codes_help[] =
	"Exit codes:\n"
	"  0    success; run: the workload's own exit code once it ran (128+N when\n"
	"       killed by signal N, 127 when its command could not be executed)\n"
	"  1    gc: the state dir could not be read\n"
	"  2    usage or input error (unknown option, bad name, missing workspace,\n"
	"       sandbox name in use, backend not available; gc: a --state-dir that\n"
	"       does not exist or is not a directory)\n"
	"  3    the sandbox could not be set up (cgroup, namespaces, mounts, state\n"
	"       file, tap), or it died before the workload started; qemu: the VM\n"
	"       ended without reporting the workload's exit code\n"
	"  124  run --backend qemu: --vm-timeout expired (the VM was killed)\n"
	"  125  run: the tracer went away while the workload ran (it was frozen and\n"
	"       killed: the egress policy must never lapse)\n";

static void usage_main(FILE *f)
{
	fprintf(f,
		"Usage: sbtrace-shim [--version] [--help] COMMAND [ARGS]\n"
		"\n"
		"Run a workload in a sandbox that sbtrace can attach to before the\n"
		"workload's first exec.\n"
		"\n"
		"Commands:\n"
		"  run        start a sandbox, wait for a tracer, run the workload in it\n"
		"  gc         clean up what killed shims left (processes, cgroups, state)\n"
		"  version    print the version\n"
		"  help       show help for a command: sbtrace-shim help run\n"
		"\n%s",
		shim_exit_codes_help);
}

int shim_usage_error(const char *cmd, const char *fmt, const char *arg)
{
	fprintf(stderr, "sbtrace-shim %s: ", cmd);
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "; see 'sbtrace-shim %s --help'\n", cmd);
	return SHIM_EXIT_USAGE;
}

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
		.usage = usage_main,
		.version = "sbtrace-shim " SBTRACE_VERSION,
		.exit_ok = SHIM_EXIT_OK,
		.exit_usage = SHIM_EXIT_USAGE,
	};

	return sbt_cli_main(&cli, argc, argv);
}
