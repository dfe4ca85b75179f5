// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <string.h>

#include "lib/cli.h"
#include "lib/log.h"

static const struct sbt_command *find(const struct sbt_cli *cli, const char *name)
{
	for (size_t i = 0; i < cli->nr_commands; i++)
		if (strcmp(cli->commands[i].name, name) == 0)
			return &cli->commands[i];
	return NULL;
}

static int is_help(const char *a)
{
	return strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0;
}

static int version(const struct sbt_cli *cli, int argc, char **argv)
{
	if (argc > 1 && is_help(argv[1])) {
		printf("Usage: %s version\n\nPrint the version.\n", cli->prog);
		return cli->exit_ok;
	}
	if (argc > 1) {
		sbt_log_prefix(cli->prog, "version");
		sbt_log("unexpected argument '%s'", argv[1]);
		return cli->exit_usage;
	}
	printf("%s\n", cli->version);
	return cli->exit_ok;
}

static int help(const struct sbt_cli *cli, int argc, char **argv)
{
	const struct sbt_command *cmd;

	if (argc < 2) {
		cli->usage(stdout);
		return cli->exit_ok;
	}
	cmd = find(cli, argv[1]);
	if (!cmd && strcmp(argv[1], "version") != 0 && strcmp(argv[1], "help") != 0) {
		sbt_log_prefix(cli->prog, "help");
		sbt_log("unknown command '%s'; see '%s --help'", argv[1], cli->prog);
		return cli->exit_usage;
	}
	if (cmd && cmd->usage)
		cmd->usage(stdout);
	else
		cli->usage(stdout);
	return cli->exit_ok;
}

int sbt_cli_main(const struct sbt_cli *cli, int argc, char **argv)
{
	const struct sbt_command *cmd;

	sbt_log_prefix(cli->prog, NULL);
	if (argc < 2) {
		cli->usage(stderr);
		return cli->exit_usage;
	}
	if (is_help(argv[1])) {
		cli->usage(stdout);
		return cli->exit_ok;
	}
	if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0 ||
	    strcmp(argv[1], "version") == 0)
		return version(cli, argc - 1, argv + 1);
	if (strcmp(argv[1], "help") == 0)
		return help(cli, argc - 1, argv + 1);
	cmd = find(cli, argv[1]);
	if (!cmd) {
		sbt_log("unknown command '%s'; see '%s --help'", argv[1], cli->prog);
		return cli->exit_usage;
	}
	sbt_log_prefix(cli->prog, cmd->name); /* every line it says: "sbtrace trace: ..." */
	return cmd->fn(argc - 1, argv + 1);
}
