/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* `sbtrace events`: the agent's stream from its subscriber socket, filtered. */
#ifndef SBT_EVENTS_CMD_H
#define SBT_EVENTS_CMD_H

#include <stdbool.h>
#include <stdio.h>

#include <json-c/json.h>

#define SBT_EVENTS_MAX_FILTERS 32

struct sbt_event_filter {
	const char *targets[SBT_EVENTS_MAX_FILTERS];
	int nr_targets;
	const char *events[SBT_EVENTS_MAX_FILTERS];
	int nr_events;
};

/* Does the event pass? (no filter of a kind: every value passes; run-wide events pass sandbox filters) */
bool sbt_event_filter_match(const struct sbt_event_filter *f, json_object *ev);
/* Connect to the agent's socket: an fd, or -errno (no message: the caller's to give). */
int sbt_agent_connect(const char *path);

int sbt_events_main(int argc, char **argv);
void sbt_events_usage(FILE *f);

#endif
