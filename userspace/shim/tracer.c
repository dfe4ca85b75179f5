// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * sbtrace-shim run and its tracer: the attach FIFO, the "attached PID"
 * line, and what the tracer's end means for a workload that runs.
 *
 * A tracer that enforces the sandbox's egress policy and goes away takes
 * the policy along, unless it said "attached PID handover" (sbtrace agent
 * --persist): then its links stay pinned under <bpffs>/sbtrace/NAME with
 * the maps they judge by, and the next agent takes them over. So when the
 * tracer goes: a handover with nothing to enforce, or with its pins still
 * there, lets the workload run on (the FIFO made again for the next
 * tracer, which will report the gap); anything else freezes and kills it.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "sandbox/pins.h"
#include "sandbox/sandbox.h"
#include "shim.h"
#include "lib/log.h"

int shim_make_fifo(const char *dir, const char *name, char *path, size_t len)
{
	struct stat st;
	int fd;

	if (mkdir(dir, 0700) && errno != EEXIST)
		return -errno;
	if ((size_t)snprintf(path, len, "%s/%s.attach", dir, name) >= len)
		return -ENAMETOOLONG;
	if (lstat(path, &st) == 0 && S_ISFIFO(st.st_mode))
		unlink(path);
	if (mkfifo(path, 0600))
		return -errno;
	/* O_RDWR: never EOF when a writer comes and goes without a line. */
	fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		int e = -errno;

		unlink(path);
		return e;
	}
	return fd;
}

bool shim_attach_line(const char *line, pid_t *tracer, bool *handover)
{
	char *end;
	long pid;

	*handover = false;
	if (strcmp(line, "attached") == 0) {
		*tracer = 0;
		return true;
	}
	if (strncmp(line, "attached ", 9) != 0)
		return false;
	pid = strtol(line + 9, &end, 10);
	if (end == line + 9 || pid <= 0 || pid > 4194304)
		return false;
	if (strcmp(end, " handover") == 0)
		*handover = true;
	else if (*end)
		return false;
	*tracer = (pid_t)pid;
	return true;
}

void shim_tracer_init(struct shim_tracer *tr, const char *state_dir)
{
	memset(tr, 0, sizeof(*tr));
	tr->pidfd = -1;
	tr->fifo = -1;
	tr->state_dir = state_dir;
}

static void fifo_close(struct shim_tracer *tr)
{
	if (tr->fifo >= 0)
		close(tr->fifo);
	tr->fifo = -1;
	tr->len = 0;
	if (tr->fifo_path[0])
		unlink(tr->fifo_path);
	tr->fifo_path[0] = '\0';
}

void shim_tracer_close(struct shim_tracer *tr)
{
	if (tr->pidfd >= 0)
		close(tr->pidfd);
	tr->pidfd = -1;
	fifo_close(tr);
}

int shim_tracer_lost(struct sbt_sandbox_run *run)
{
	int ret = sbt_sandbox_freeze(run);

	run->tracer_lost = true;
	sbt_state_update(run); /* seen should the shim itself die before the removal */
	sbt_log("sandbox %s: its tracer went away while the workload ran; the workload was %s and "
		"is killed: enforcement must not lapse (exit %d)",
		run->name, ret ? "not frozen" : "frozen", SHIM_EXIT_TRACER_LOST);
	return SHIM_EXIT_TRACER_LOST;
}

int shim_tracer_gone(struct sbt_sandbox_run *run, struct shim_tracer *tr)
{
	int pins = run->egress_mode ? sbt_pin_count(run->name, run->tracer_pid) : 0;

	close(tr->pidfd);
	tr->pidfd = -1;
	if (!tr->handover || (run->egress_mode && pins <= 0))
		return shim_tracer_lost(run);
	tr->fifo = shim_make_fifo(tr->state_dir, run->name, tr->fifo_path, sizeof(tr->fifo_path));
	if (tr->fifo < 0) {
		tr->fifo_path[0] = '\0';
		sbt_log("sandbox %s: cannot wait for the next tracer (%s)", run->name,
			strerror(-tr->fifo));
	}
	if (run->egress_mode)
		sbt_log("sandbox %s: its tracer (pid %d) went away and handed over: its policy "
			"stays enforced by %d pinned links; the workload runs on, unobserved "
			"until the next tracer attaches",
			run->name, (int)run->tracer_pid, pins);
	else
		sbt_log("sandbox %s: its tracer (pid %d) went away and handed over: no policy to "
			"enforce; the workload runs on, unobserved until the next tracer attaches",
			run->name, (int)run->tracer_pid);
	return -1;
}

bool shim_attach_read(int fifo, const char *name, bool need_pid, char *line, size_t cap,
		      size_t *len, pid_t *tracer, bool *handover)
{
	char buf[256];
	ssize_t n = read(fifo, buf, sizeof(buf));

	for (ssize_t i = 0; i < n; i++) {
		if (buf[i] != '\n') {
			if (*len < cap - 1)
				line[(*len)++] = buf[i];
			continue;
		}
		line[*len] = '\0';
		*len = 0;
		if (shim_attach_line(line, tracer, handover) && (!need_pid || *tracer > 0))
			return true;
		sbt_log("sandbox %s: ignoring '%.40s' on the attach FIFO (expected 'attached%s')",
			name, line, need_pid ? " PID" : "");
	}
	return false;
}

void shim_tracer_again(struct sbt_sandbox_run *run, struct shim_tracer *tr)
{
	pid_t pid;

	if (!shim_attach_read(tr->fifo, run->name, true, tr->line, sizeof(tr->line), &tr->len, &pid,
			      &tr->handover))
		return;
	tr->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (tr->pidfd < 0) {
		sbt_log("sandbox %s: the tracer (pid %d) that attached is gone already", run->name,
			(int)pid);
		return;
	}
	run->tracer_pid = pid;
	sbt_state_update(run);
	sbt_log("sandbox %s: tracer pid %d attached%s", run->name, (int)pid,
		tr->handover ? " (it hands over)" : "");
	fifo_close(tr);
}
