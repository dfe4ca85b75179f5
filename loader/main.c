// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * sbtrace: the command table. The commands are pure C (userspace/); the
 * loader's trace and features functions are what they are handed to run.
 */
#include <stdio.h>

#include "agent.h"
#include "cmd/agent_cmd.h"
#include "lib/cli.h"
#include "cmd/events_cmd.h"
#include "guest_agent.h"
#include "probe/probe.h"
#include "top/top.h"
#include "trace.h"
#include "cmd/trace_cmd.h"
#include "help/sbtrace.h"

#define SBT_XSTR(x) #x
#define SBT_STR(x)  SBT_XSTR(x)

static void usage_main(FILE *f)
{
	sbt_help_sbtrace(f);
}

static int cmd_trace(int argc, char **argv)
{
	return sbt_trace_main(argc, argv, sbt_trace_run);
}

static int cmd_agent(int argc, char **argv)
{
	return sbt_agent_main(argc, argv, sbt_agent_run);
}

static int cmd_events(int argc, char **argv)
{
	return sbt_events_main(argc, argv);
}

static int cmd_top(int argc, char **argv)
{
	return sbt_top_main(argc, argv);
}

static int cmd_features(int argc, char **argv)
{
	return sbt_features_main(argc, argv, sbt_features_run);
}

static int cmd_guest_agent(int argc, char **argv)
{
	return sbt_guest_agent_main(argc, argv, sbt_guest_agent_run);
}

static int cmd_probe(int argc, char **argv)
{
	return sbt_probe_main(argc, argv, sbt_trace_run);
}

static const struct sbt_command commands[] = {
	{ "trace", cmd_trace, sbt_trace_usage },
	{ "agent", cmd_agent, sbt_agent_usage },
	{ "events", cmd_events, sbt_events_usage },
	{ "top", cmd_top, sbt_top_usage },
	{ "features", cmd_features, sbt_features_usage },
	{ "probe", cmd_probe, sbt_probe_usage },
	{ "guest-agent", cmd_guest_agent, sbt_guest_agent_usage },
};

int main(int argc, char **argv)
{
	static const struct sbt_cli cli = {
		.prog = "sbtrace",
		.commands = commands,
		.nr_commands = sizeof(commands) / sizeof(commands[0]),
		.usage = usage_main,
		.version = "sbtrace " SBTRACE_VERSION " (event ABI " SBT_STR(SBT_ABI_VERSION) ")",
		.exit_ok = SBT_EXIT_OK,
		.exit_usage = SBT_EXIT_USAGE,
	};

	return sbt_cli_main(&cli, argc, argv);
}
