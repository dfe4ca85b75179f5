/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Commands as a table of {name, fn, usage}: the dispatch both binaries share. */
#ifndef SBT_CLI_H
#define SBT_CLI_H

#include <stddef.h>
#include <stdio.h>

struct sbt_command {
	const char *name;
	int (*fn)(int argc, char **argv); /* argv[0] is the command's name */
	void (*usage)(FILE *f);		  /* NULL: the main usage */
};

struct sbt_cli {
	const char *prog; /* "sbtrace" */
	const struct sbt_command *commands;
	size_t nr_commands;
	void (*usage)(FILE *f); /* the main usage */
	const char *version;	/* what `PROG version` / --version prints */
	int exit_ok, exit_usage;
};

/*
 * PROG --help | -h | --version | -V | help [CMD] | version | CMD ARGS...
 * Unknown commands and a missing one are usage errors (one line, exit_usage).
 */
int sbt_cli_main(const struct sbt_cli *cli, int argc, char **argv);

#endif
