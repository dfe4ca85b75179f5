// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/extbin.h"

/* Closed set (the founding ADR-0015). Adding one is a reviewed change; strace is never on it. */
static const char *const allowlist[] = {
	"podman",      "docker", "npm", "make", "node", "ip", "qemu-system-x86_64",
	"slirp4netns", /* the probe's build network (userspace/probe/net.c) */
	"sbtrace",     /* itself: the probe's migration check (userspace/migrate/check.c) */
	NULL
};

const char *const *sbt_extbin_list(void)
{
	return allowlist;
}

bool sbt_extbin_allowed(const char *prog)
{
	const char *base;

	if (!prog || !*prog)
		return false;
	base = strrchr(prog, '/');
	base = base ? base + 1 : prog;
	for (const char *const *p = allowlist; *p; p++)
		if (strcmp(base, *p) == 0)
			return true;
	return false;
}

int sbt_exec(enum sbt_exec_ctx ctx, char *const argv[])
{
	if (!argv || !argv[0])
		return -EINVAL;
	if (ctx != SBT_EXEC_SANDBOXED && !sbt_extbin_allowed(argv[0]))
		return -EPERM;
	execvp(argv[0], argv);
	return -errno;
}

int sbt_exit_code(int status)
{
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Read both pipes into the io buffers until both close or the deadline passes. */
static bool pump(int fds[2], const struct sbt_run_io *io, uint64_t end_ms)
{
	struct pollfd p[2] = { { .fd = fds[0], .events = POLLIN },
			       { .fd = fds[1], .events = POLLIN } };
	char *bufs[2] = { io->out, io->err };
	size_t lens[2] = { io->out ? io->out_len : 0, io->err ? io->err_len : 0 };
	size_t used[2] = { 0, 0 };

	while (p[0].fd >= 0 || p[1].fd >= 0) {
		uint64_t now = sbt_mono_ms();
		int r;

		if (end_ms && now >= end_ms)
			return false;
		r = poll(p, 2, end_ms ? (int)(end_ms - now) : -1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return true;
		for (int i = 0; i < 2; i++) {
			char buf[1024];
			ssize_t n;

			if (p[i].fd < 0 || !p[i].revents)
				continue;
			n = read(p[i].fd, buf, sizeof(buf));
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				p[i].fd = -1; /* closed by the caller */
				continue;
			}
			if (bufs[i] && used[i] + 1 < lens[i]) {
				size_t k = (size_t)n < lens[i] - 1 - used[i]
						   ? (size_t)n
						   : lens[i] - 1 - used[i];

				memcpy(bufs[i] + used[i], buf, k);
				used[i] += k;
				bufs[i][used[i]] = '\0';
			}
		}
	}
	return true;
}

/* Nothing captured: wait on a pidfd until the deadline. True when the tool exited. */
static bool wait_exit(pid_t pid, uint64_t end_ms)
{
	int fd = (int)syscall(SYS_pidfd_open, pid, 0);
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int r;

	if (fd < 0)
		return true; /* no pidfd (Linux < 5.3): wait without a deadline */
	do {
		uint64_t now = sbt_mono_ms();

		r = now >= end_ms ? 0 : poll(&p, 1, (int)(end_ms - now));
	} while (r < 0 && errno == EINTR);
	close(fd);
	return r != 0;
}

int sbt_run(char *const argv[], const struct sbt_run_io *io, int *status)
{
	static const struct sbt_run_io none;
	int pipes[2][2] = { { -1, -1 }, { -1, -1 } }, fds[2] = { -1, -1 }, st = 0, ret = 0;
	bool capture[2], done = true;
	uint64_t end_ms;
	pid_t pid;

	if (!argv || !argv[0] || !sbt_extbin_allowed(argv[0]))
		return -EPERM;
	if (!io)
		io = &none;
	capture[0] = io->out && io->out_len;
	capture[1] = io->err && io->err_len;
	for (int i = 0; i < 2; i++) {
		if (capture[i])
			(i ? io->err : io->out)[0] = '\0';
		if (capture[i] && pipe2(pipes[i], O_CLOEXEC)) {
			ret = -errno;
			goto out;
		}
	}
	end_ms = io->timeout_ms > 0 ? sbt_mono_ms() + (uint64_t)io->timeout_ms : 0;
	pid = fork();
	if (pid < 0) {
		ret = -errno;
		goto out;
	}
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);

		if (null < 0 || dup2(null, STDIN_FILENO) < 0 ||
		    (pipes[0][1] >= 0 && dup2(pipes[0][1], STDOUT_FILENO) < 0) ||
		    (pipes[1][1] >= 0 && dup2(pipes[1][1], STDERR_FILENO) < 0))
			_exit(127);
		execvp(argv[0], argv);
		_exit(127);
	}
	for (int i = 0; i < 2; i++) {
		if (pipes[i][1] >= 0)
			close(pipes[i][1]);
		pipes[i][1] = -1;
		fds[i] = pipes[i][0];
	}
	if (fds[0] >= 0 || fds[1] >= 0)
		done = pump(fds, io, end_ms);
	else if (end_ms)
		done = wait_exit(pid, end_ms);
	if (!done)
		kill(pid, SIGKILL);
	while (waitpid(pid, &st, 0) < 0) {
		if (errno != EINTR) {
			ret = -errno;
			goto out;
		}
	}
	if (!done)
		ret = -ETIMEDOUT;
	else if (status)
		*status = st;
out:
	for (int i = 0; i < 2; i++)
		for (int j = 0; j < 2; j++)
			if (pipes[i][j] >= 0)
				close(pipes[i][j]);
	return ret;
}
