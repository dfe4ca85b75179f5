// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target: the agent's configuration file (sbt_agent_conf_argv(),
 * userspace/cmd/agent_conf.c), the input being the file (in a private
 * directory, ours, mode 0600), read unchecked and checked against a table.
 *
 * Invariants: 0 with a NULL-terminated vector that starts with the caller's
 * argv[0] and ends with its argv[1..]; in between, each option "--NAME" (or
 * "--NAME=VALUE") with NAME of [a-z0-9-], each value apart non-empty with no
 * newline and no blank at either end; or an error < 0 whose message starts
 * with "PATH:" and no vector.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/agent_conf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[64], path[128];

static const struct option opts[] = {
	{ "cgroup-parent", required_argument, NULL, 1 },
	{ "no-shim", no_argument, NULL, 2 },
	{ "color", optional_argument, NULL, 3 },
	{ 0 },
};

static bool blank(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\v' || ch == '\f';
}

/* "--NAME" or, when `joined`, "--NAME=VALUE": NAME of [a-z0-9-]. */
static bool option_ok(const char *s, bool joined)
{
	size_t i = 2;

	if (strncmp(s, "--", 2) || !s[2])
		return false;
	for (; s[i] && s[i] != '='; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-'))
			return false;
	return s[i] == '\0' || (joined && s[i + 1]);
}

static bool value_ok(const char *s)
{
	size_t n = strlen(s);

	return n && !strchr(s, '\n') && !blank(s[0]) && !blank(s[n - 1]);
}

static void check(int ret, int argc, char **out, char **args, const char *err,
		  const struct option *table)
{
	if (ret < 0) {
		if (out || strncmp(err, path, strlen(path)) || err[strlen(path)] != ':')
			abort();
		return;
	}
	if (ret != 0 || !out || argc < 2 || out[argc] || out[0] != args[0] ||
	    out[argc - 1] != args[1])
		abort();
	for (int i = 1; i < argc - 1; i++) {
		if (option_ok(out[i], table != NULL))
			continue;
		/* a value follows its option (a table's optional ones are joined) */
		if (i == 1 || !option_ok(out[i - 1], false) || !value_ok(out[i]))
			abort();
	}
	free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *args[] = { "agent", "--no-shim", NULL }, err[512], **out;
	int fd, argc, ret;

	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "/tmp/sbtrace-fuzz-agent-conf.XXXXXX");
		if (!mkdtemp(dir))
			abort();
		snprintf(path, sizeof(path), "%s/agent.conf", dir);
	}
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || (size && write(fd, data, size) != (ssize_t)size))
		abort();
	close(fd);
	ret = sbt_agent_conf_argv(path, true, 2, args, &argc, &out, err, sizeof(err));
	check(ret, argc, out, args, err, NULL);
	ret = sbt_agent_conf_argv_checked(path, true, opts, 2, args, &argc, &out, err, sizeof(err));
	check(ret, argc, out, args, err, opts);
	return 0;
}
