// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* `sbtrace events`: print the agent's JSON Lines as they come, filtered. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "cmd/agent_cmd.h"
#include "cmd/events_cmd.h"
#include "cmd/trace_cmd.h"
#include "help/sbtrace-events.h"
#include "lib/log.h"

void sbt_events_usage(FILE *f)
{
	sbt_help_events(f);
}

bool sbt_event_filter_match(const struct sbt_event_filter *f, json_object *ev)
{
	json_object *v;
	const char *name = NULL, *sb = NULL;
	bool ok;

	if (json_object_object_get_ex(ev, "event", &v) && v)
		name = json_object_get_string(v);
	if (json_object_object_get_ex(ev, "sandbox", &v) && v)
		sb = json_object_get_string(v);
	ok = f->nr_events == 0;
	for (int i = 0; !ok && name && i < f->nr_events; i++)
		ok = strcmp(f->events[i], name) == 0;
	if (!ok)
		return false;
	if (f->nr_targets == 0 || !sb)
		return true;
	for (int i = 0; i < f->nr_targets; i++)
		if (strcmp(f->targets[i], sb) == 0)
			return true;
	return false;
}

int sbt_agent_connect(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), err;

	if (fd < 0)
		return -errno;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
		return fd;
	err = -errno;
	sbt_log("cannot connect to the agent at %s: %s; is 'sbtrace agent' running (as root, "
		"with that --socket)?",
		path, strerror(-err));
	close(fd);
	return err;
}

/* Lines from fd, filtered, to stdout. An exit code. */
static int stream(int fd, const struct sbt_event_filter *f)
{
	FILE *in = fdopen(fd, "r");
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	bool filtering = f->nr_targets || f->nr_events;

	if (!in) {
		close(fd);
		return SBT_EXIT_RUNTIME;
	}
	while ((n = getline(&line, &cap, in)) > 0) {
		json_object *ev;

		if (filtering) {
			ev = json_tokener_parse(line);
			if (!ev || !sbt_event_filter_match(f, ev)) {
				json_object_put(ev);
				continue;
			}
			json_object_put(ev);
		}
		if (fwrite(line, 1, (size_t)n, stdout) != (size_t)n || fflush(stdout))
			break; /* our reader went away */
	}
	free(line);
	fclose(in);
	return SBT_EXIT_OK;
}

int sbt_events_main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "sandbox", required_argument, NULL, 'S' },
		{ "event", required_argument, NULL, 'e' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct sbt_event_filter f = { 0 };
	const char *path = SBT_AGENT_SOCKET_DEFAULT;
	int c, fd;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 's':
			path = optarg;
			break;
		case 'S':
		case 'e':
			if ((c == 'S' ? f.nr_targets : f.nr_events) >= SBT_EVENTS_MAX_FILTERS) {
				sbt_log("at most 32 of each filter");
				return SBT_EXIT_USAGE;
			}
			if (c == 'S')
				f.targets[f.nr_targets++] = optarg;
			else
				f.events[f.nr_events++] = optarg;
			break;
		case 'h':
			sbt_events_usage(stdout);
			return SBT_EXIT_OK;
		default:
			sbt_log("see '%s --help'", sbt_log_name());
			return SBT_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		sbt_log("unexpected argument '%s'; see 'sbtrace events --help'", argv[optind]);
		return SBT_EXIT_USAGE;
	}
	fd = sbt_agent_connect(path);
	if (fd < 0)
		return SBT_EXIT_RUNTIME;
	return stream(fd, &f);
}
