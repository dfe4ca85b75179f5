// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Test helper: join a cgroup, then run a program there without any shell.
 *
 *   sbt-spawn CGROUP_DIR [-n N] [--exec] -- PROG [ARGS...]
 *
 * Default: fork N children (default 1), each execs PROG; wait for all; exit 0
 * when every child exited 0. With --exec: exec PROG in place (one exec).
 * The helper joins the cgroup after its own exec, so only PROG's execs land
 * in it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int join_cgroup(const char *dir)
{
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "sbt-spawn: open %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (write(fd, "0", 1) != 1) {
		fprintf(stderr, "sbt-spawn: join %s: %s\n", dir, strerror(errno));
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	long n = 1;
	int in_place = 0, i = 2, failed = 0;

	if (argc < 4) {
		fprintf(stderr, "usage: sbt-spawn CGROUP_DIR [-n N] [--exec] -- PROG [ARGS...]\n");
		return 2;
	}
	for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
		if (strcmp(argv[i], "-n") == 0 && i + 1 < argc)
			n = strtol(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--exec") == 0)
			in_place = 1;
		else {
			fprintf(stderr, "sbt-spawn: unknown option %s\n", argv[i]);
			return 2;
		}
	}
	if (i + 1 >= argc || n < 1) {
		fprintf(stderr, "sbt-spawn: need -- PROG and N >= 1\n");
		return 2;
	}
	if (join_cgroup(argv[1]))
		return 1;
	if (in_place) {
		execv(argv[i + 1], argv + i + 1);
		fprintf(stderr, "sbt-spawn: exec %s: %s\n", argv[i + 1], strerror(errno));
		return 127;
	}
	for (long k = 0; k < n; k++) {
		pid_t pid = fork();
		int st;

		if (pid < 0) {
			fprintf(stderr, "sbt-spawn: fork: %s\n", strerror(errno));
			return 1;
		}
		if (pid == 0) {
			execv(argv[i + 1], argv + i + 1);
			_exit(127);
		}
		/* One at a time: keeps the machine quiet and the order deterministic. */
		if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
			failed++;
	}
	if (failed)
		fprintf(stderr, "sbt-spawn: %d of %ld children failed\n", failed, n);
	return failed ? 1 : 0;
}
