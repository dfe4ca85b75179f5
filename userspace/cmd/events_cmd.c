// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* `sbtrace events`: print the agent's JSON Lines as they come, filtered. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
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
#include "lib/clock.h"
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
	close(fd);
	return err;
}

static void log_no_agent(const char *path, int err)
{
	sbt_log("cannot connect to the agent at %s: %s; is 'sbtrace agent' running (as root, "
		"with that --socket)?",
		path, strerror(-err));
}

/* How a connection's stream ended. */
enum stream_end {
	END_STOPPED, /* the agent said TraceStopped, then closed */
	END_GONE,    /* closed without a TraceStopped: the agent died, or was killed */
	END_READER,  /* our stdout went away */
	END_SIGNAL,  /* SIGINT, SIGTERM */
};

static volatile sig_atomic_t stop;

static void on_stop(int sig)
{
	(void)sig;
	stop = 1;
}

static bool is_event(json_object *ev, const char *name)
{
	json_object *v;

	return ev && json_object_object_get_ex(ev, "event", &v) && v &&
	       strcmp(json_object_get_string(v), name) == 0;
}

/*
 * Lines from fd, filtered, to stdout, until the agent closes the socket;
 * *lines: how many came. `hello`: said on stderr when the first one comes.
 */
static enum stream_end stream(int fd, const struct sbt_event_filter *f, const char *hello,
			      uint64_t *lines)
{
	FILE *in = fdopen(fd, "r");
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	bool filtering = f->nr_targets || f->nr_events, stopped = false;
	enum stream_end end = END_GONE;

	*lines = 0;
	if (!in) {
		close(fd);
		return END_GONE;
	}
	while ((n = getline(&line, &cap, in)) > 0) {
		json_object *ev = NULL;
		bool pass = true;

		if (line[n - 1] != '\n')
			break; /* the agent died mid-line: no event */
		if ((*lines)++ == 0 && hello)
			sbt_log("%s", hello);
		/* parsed only to filter, or to be sure a TraceStopped is one */
		if (filtering || strstr(line, "\"TraceStopped\""))
			ev = json_tokener_parse(line);
		stopped |= is_event(ev, "TraceStopped");
		if (filtering)
			pass = ev && sbt_event_filter_match(f, ev);
		json_object_put(ev);
		if (pass && (fwrite(line, 1, (size_t)n, stdout) != (size_t)n || fflush(stdout))) {
			end = END_READER;
			break;
		}
	}
	if (end != END_READER)
		end = stop ? END_SIGNAL : stopped ? END_STOPPED : END_GONE;
	free(line);
	fclose(in);
	return end;
}

/* The agent, again: every 0.5 s until it answers (an fd) or a signal (-1). */
static int reconnect(const char *path)
{
	int fd = -1;

	while (!stop && fd < 0) {
		sbt_sleep_ms(500); /* a stopping agent's socket may take a connection still */
		fd = stop ? -1 : sbt_agent_connect(path);
	}
	return fd;
}

/*
 * Stream from fd; with follow, from the agent again each time it comes
 * back (a connection that brought nothing, a stopping agent's, said
 * nothing of). An exit code.
 */
static int follow_stream(const char *path, int fd, const struct sbt_event_filter *f, bool follow,
			 bool waited)
{
	char hello[512];
	const char *say = NULL;
	uint64_t lines;

	snprintf(hello, sizeof(hello), "connected to the agent at %s", path);
	if (waited)
		say = hello;
	for (;; say = hello) {
		switch (stream(fd, f, say, &lines)) {
		case END_READER:
		case END_SIGNAL:
			return SBT_EXIT_OK;
		case END_STOPPED:
			if (!follow)
				return SBT_EXIT_OK;
			sbt_log("the agent stopped (TraceStopped); waiting for it at %s", path);
			break;
		case END_GONE:
			if (!follow) {
				sbt_log("the agent at %s closed its socket without a TraceStopped "
					"(it died or was killed): the stream is cut short",
					path);
				return SBT_EXIT_RUNTIME;
			}
			if (lines)
				sbt_log("the agent at %s went away without a TraceStopped; "
					"reconnecting every 0.5 s",
					path);
			break;
		}
		fd = reconnect(path);
		if (fd < 0)
			return SBT_EXIT_OK;
	}
}

int sbt_events_main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "sandbox", required_argument, NULL, 'S' },
		{ "event", required_argument, NULL, 'e' },
		{ "follow", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct sbt_event_filter f = { 0 };
	struct sigaction sa = { .sa_handler = on_stop }; /* no SA_RESTART: a read returns */
	const char *path = SBT_AGENT_SOCKET_DEFAULT;
	bool follow = false, waited;
	int c, fd;

	optind = 1;
	while ((c = getopt_long(argc, argv, "fh", longopts, NULL)) != -1) {
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
		case 'f':
			follow = true;
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
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	fd = sbt_agent_connect(path);
	waited = fd < 0;
	if (fd < 0) {
		log_no_agent(path, fd);
		if (!follow)
			return SBT_EXIT_RUNTIME;
		sbt_log("--follow: trying again every 0.5 s");
		fd = reconnect(path);
		if (fd < 0)
			return SBT_EXIT_OK;
	}
	return follow_stream(path, fd, &f, follow, waited);
}
