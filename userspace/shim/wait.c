// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * sbtrace-shim run's waits: for a tracer on the attach FIFO, for the
 * workload (signals forwarded, then a grace period), for the VM (its console
 * forwarded, the exit code from the guest).
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/signalfd.h>
#include <sys/wait.h>

#include "lib/clock.h"
#include "sandbox/sandbox.h"
#include "shim.h"
#include "lib/log.h"

/* Send `sig` to every process of the sandbox but its init (which ignores it anyway). */
static void forward_signal(const struct sbt_sandbox_run *run, int sig)
{
	char path[PATH_MAX + 16];
	FILE *f;
	long pid;

	snprintf(path, sizeof(path), "%s/cgroup.procs", run->cgroup_path);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fscanf(f, "%ld", &pid) == 1)
		if (pid > 0 && pid != run->pid)
			kill((pid_t)pid, sig);
	fclose(f);
}

static int exit_code(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return SHIM_EXIT_SETUP;
}

static int read_signal(int sfd)
{
	struct signalfd_siginfo si;
	ssize_t n = read(sfd, &si, sizeof(si));

	return n == (ssize_t)sizeof(si) ? (int)si.ssi_signo : 0;
}

/* Block until "attached[ PID]\n" arrives on the FIFO, a signal, or the sandbox dies. */
enum attach_result shim_wait_attach(const char *name, int fifo, int sfd, int pidfd, int *sig,
				    pid_t *tracer, bool *handover)
{
	char line[128];
	size_t len = 0;

	for (;;) {
		struct pollfd p[3] = { { .fd = fifo, .events = POLLIN },
				       { .fd = sfd, .events = POLLIN },
				       { .fd = pidfd, .events = POLLIN } };

		if (poll(p, pidfd >= 0 ? 3 : 2, pidfd >= 0 ? -1 : 200) < 0) {
			if (errno == EINTR)
				continue;
			return INIT_DIED;
		}
		if (p[1].revents & POLLIN) {
			*sig = read_signal(sfd);
			if (*sig)
				return SIGNALLED;
		}
		if (pidfd >= 0 && (p[2].revents & POLLIN))
			return INIT_DIED;
		if (!(p[0].revents & POLLIN))
			continue;
		if (shim_attach_read(fifo, name, false, line, sizeof(line), &len, tracer, handover))
			return ATTACHED;
	}
}

/* Wait for the workload; forward a signal, then kill everything after a grace period. */
int shim_wait_workload(struct sbt_sandbox_run *run, int sfd, int pidfd, struct shim_tracer *tr)
{
	uint64_t deadline = 0;
	int sig = 0, status;

	for (;;) {
		struct pollfd p[4] = { { .fd = sfd, .events = POLLIN },
				       { .fd = pidfd, .events = POLLIN },
				       { .fd = tr->pidfd, .events = POLLIN },
				       { .fd = tr->fifo, .events = POLLIN } };
		int timeout = pidfd >= 0 ? (run->exec_stream[0] ? 1000 : -1) : 100, ret;

		if (sig) {
			int64_t left = (int64_t)(deadline - sbt_mono_ms());

			if (left <= 0)
				return 128 + sig;
			if (timeout < 0 || left < timeout)
				timeout = (int)left;
		}
		ret = poll(p, 4, timeout);
		if (ret < 0 && errno != EINTR)
			return SHIM_EXIT_SETUP;
		if (ret > 0 && (p[2].revents & POLLIN)) {
			int code = shim_tracer_gone(run, tr);

			if (code >= 0)
				return code;
		}
		if (ret > 0 && (p[3].revents & POLLIN))
			shim_tracer_again(run, tr);
		if (pidfd < 0 || (ret > 0 && (p[1].revents & POLLIN))) {
			int w = sbt_sandbox_wait(run, &status, 0);

			if (w == 0)
				return exit_code(status);
			if (w != -ETIMEDOUT && w != -EINTR)
				return SHIM_EXIT_SETUP;
		}
		if (ret > 0 && (p[0].revents & POLLIN)) {
			int s = read_signal(sfd);

			if (!s)
				continue;
			if (sig) /* a second signal: no more grace */
				return 128 + sig;
			sig = s;
			forward_signal(run, sig);
			deadline = sbt_mono_ms() + GRACE_MS;
		}
	}
}

/* Read the console until nothing is pending; true at its end (qemu closed it). */
static bool pump_console(struct sbt_sandbox_run *run)
{
	long n;

	while ((n = sbt_sandbox_console(run, STDOUT_FILENO)) > 0)
		;
	return n == 0 || (n < 0 && n != -EAGAIN);
}

/*
 * The qemu backend: forward the workload's console output until qemu exits;
 * the exit code is the one the guest reported. A signal or --vm-timeout
 * ends the VM at once (destroy kills it).
 */
int shim_wait_vm(struct sbt_sandbox_run *run, int sfd, int pidfd, int timeout_s,
		 struct shim_tracer *tr, uint64_t stream_max)
{
	uint64_t deadline = timeout_s > 0 ? run->go_ns + (uint64_t)timeout_s * 1000000000ull : 0;
	int status = 0, sig;
	bool eof = false, trimmed = false;

	for (;;) {
		struct pollfd p[5] = { { .fd = eof ? -1 : run->console_fd, .events = POLLIN },
				       { .fd = sfd, .events = POLLIN },
				       { .fd = pidfd, .events = POLLIN },
				       { .fd = tr->pidfd, .events = POLLIN },
				       { .fd = tr->fifo, .events = POLLIN } };
		int timeout = pidfd >= 0 ? -1 : 100, ret;

		if (deadline) {
			uint64_t now = sbt_mono_ns();

			if (now >= deadline) {
				sbt_log("sandbox %s: --vm-timeout %d s expired; the VM was killed",
					run->name, timeout_s);
				return SHIM_EXIT_VM_TIMEOUT;
			}
			if (timeout < 0 || (deadline - now) / 1000000 + 1 < (uint64_t)timeout)
				timeout = (int)((deadline - now) / 1000000 + 1);
		}
		ret = poll(p, 5, timeout);
		if (ret < 0 && errno != EINTR)
			return SHIM_EXIT_SETUP;
		if (ret > 0 && (p[3].revents & POLLIN)) {
			int code = shim_tracer_gone(run, tr);

			if (code >= 0)
				return code;
		}
		if (ret > 0 && (p[4].revents & POLLIN))
			shim_tracer_again(run, tr);
		/* its exec stream's disk, bounded (a tracer reading it frees it as it goes) */
		if (sbt_vm_stream_trim(run, stream_max) == 1 && !trimmed) {
			trimmed = true;
			sbt_log("sandbox %s: its exec stream passed %llu MiB on disk unread: its "
				"oldest records were dropped (a tracer sees the gap: "
				"exec_complete false; --vm-stream-max)",
				run->name, (unsigned long long)(stream_max >> 20));
		}
		if (ret > 0 && (p[0].revents & (POLLIN | POLLHUP | POLLERR)))
			eof = pump_console(run);
		if (ret > 0 && (p[1].revents & POLLIN)) {
			sig = read_signal(sfd);
			if (sig)
				return 128 + sig;
		}
		if (pidfd < 0 || (ret > 0 && (p[2].revents & POLLIN))) {
			int w = sbt_sandbox_wait(run, &status, 0);

			if (w == 0)
				break;
			if (w != -ETIMEDOUT && w != -EINTR)
				return SHIM_EXIT_SETUP;
		}
	}
	/* qemu is gone: what it wrote is in the pipe, up to its end */
	if (!eof && !pump_console(run))
		sbt_vm_console_eof(&run->con, STDOUT_FILENO);
	if (run->con.phase == SBT_VM_EXITED)
		return run->con.exit_code;
	sbt_log("sandbox %s: the VM died before the workload %s (qemu exited %s %d)%s%s", run->name,
		run->con.phase == SBT_VM_BOOTING ? "started" : "finished",
		WIFSIGNALED(status) ? "on signal" : "with",
		WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status),
		run->con.tail_len ? "; the end of its console:\n" : "", run->con.tail);
	return SHIM_EXIT_SETUP;
}
