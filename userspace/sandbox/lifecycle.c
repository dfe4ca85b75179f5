// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A sandbox's life, the same for every backend (see sandbox.h): checks,
 * start, ready, go, wait, destroy. Where the backends differ, the table of
 * operations (struct sbt_backend_ops, internal.h) says: ns.c, podman.c and
 * qemu.c.
 *
 * Start: the state file's name must be free; mkdir <v2>/sbtrace/NAME; the
 * backend prepares (the workspace's mount tree, the VM's files and tap...);
 * pipes "ready" (child -> caller) and "go" (caller -> child); clone3
 * (CLONE_INTO_CGROUP and the backend's namespaces), fork-like (no exec). The
 * child is born inside the sandbox cgroup: it never runs a single
 * instruction outside it. It sets itself up, writes "+" to the ready pipe
 * (or "-ERRNO:message" and exits 126) and blocks reading the go pipe (EOF:
 * the caller is gone, exit 126); sbt_sandbox_ready() reads the pipe, the
 * tracer attaches, sbt_sandbox_go() writes one byte.
 *
 * Requirements: Linux 5.12 (clone3 CLONE_INTO_CGROUP 5.7, mount_setattr
 * 5.12), root, a single-threaded caller (the child of a raw clone3 must not
 * find a lock held by another thread; the child avoids malloc; the qemu tap
 * set-up switches the calling thread's network namespace for a moment).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "lib/cgroupfs.h"
#include "lib/clock.h"
#include "internal.h"
#include "lib/log.h"
#include "sandbox/pins.h"

/* ---- checks ------------------------------------------------------------- */

/* "podman or docker": the host tools a backend runs, for a message. */
static void tool_list(const char *const *tools, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int i = 0; tools[i] && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s",
					 i == 0		? ""
					 : tools[i + 1] ? ", "
							: " or ",
					 tools[i]);
}

static bool is_host_tool(const char *const *tools, const char *prog)
{
	const char *slash = strrchr(prog, '/'), *base = slash ? slash + 1 : prog;

	for (; *tools; tools++)
		if (strcmp(base, *tools) == 0)
			return true;
	return false;
}

/* What the backend's capabilities rule out (sandbox.h, struct sbt_backend_caps). */
static int check_caps(const struct sbt_backend_ops *ops, const struct sbt_sandbox_spec *spec,
		      char *err, size_t errlen)
{
	const struct sbt_backend_caps *caps = &ops->caps;
	char tools[64];

	if (!(caps->net_modes & SBT_NET_MODE(spec->net)))
		return sbx_seterr(err, errlen, -EINVAL,
				  "sandbox %s: a %s sandbox takes no network mode %d (%s)",
				  spec->name, ops->name, (int)spec->net,
				  caps->no_net_why ? caps->no_net_why : "none it gives");
	if (spec->workspace && caps->workspace == SBT_WORKSPACE_NONE)
		return sbx_seterr(err, errlen, -EINVAL,
				  "sandbox %s: a %s sandbox has no workspace%s", spec->name,
				  ops->name,
				  caps->host_tools ? " (the tool reads host paths)" : "");
	if (caps->host_tools && !is_host_tool(caps->host_tools, spec->argv[0])) {
		tool_list(caps->host_tools, tools, sizeof(tools));
		return sbx_seterr(err, errlen, -EPERM, "sandbox %s: a %s sandbox runs %s, not '%s'",
				  spec->name, ops->name, tools, spec->argv[0]);
	}
	if (spec->then_argv &&
	    (!caps->then || !spec->then_argv[0] || !spec->then_argv[0][0] || !spec->then_ms))
		return sbx_seterr(err, errlen, -EINVAL,
				  "sandbox %s: a second workload needs a backend that runs one "
				  "(ns), a command and a time limit",
				  spec->name);
	if (spec->pre_argv && (!caps->then || !spec->pre_argv[0] || !spec->pre_argv[0][0]))
		return sbx_seterr(err, errlen, -EINVAL,
				  "sandbox %s: an install step needs a backend that runs more than "
				  "one workload (ns) and a command",
				  spec->name);
	return 0;
}

int sbt_sandbox_check(const struct sbt_sandbox_spec *spec, char *err, size_t errlen)
{
	const struct sbt_backend_ops *ops;
	int ret;

	if (!spec || !spec->name || !sbt_sandbox_name_ok(spec->name))
		return sbx_seterr(err, errlen, -EINVAL,
				  "sandbox name '%s': use 1-%d characters [A-Za-z0-9_.-], not "
				  "starting with '.'",
				  spec && spec->name ? spec->name : "", SBT_SANDBOX_NAME_MAX);
	if (!spec->argv || !spec->argv[0] || !spec->argv[0][0])
		return sbx_seterr(err, errlen, -EINVAL, "sandbox %s: no workload command",
				  spec->name);
	ops = sbx_backend(spec->backend);
	if (!ops)
		return sbx_seterr(err, errlen, -EINVAL, "sandbox %s: no backend %d", spec->name,
				  (int)spec->backend);
	/* The mode and its addresses here; which backends give it, their capabilities say. */
	if (spec->net != SBT_NET_NONE &&
	    (spec->net != SBT_NET_VETH || !spec->veth_host_cidr || !spec->veth_sandbox_cidr))
		return sbx_seterr(err, errlen, -EINVAL,
				  "sandbox %s: network mode %d needs both veth addresses",
				  spec->name, (int)spec->net);
	ret = check_caps(ops, spec, err, errlen);
	if (!ret && ops->check)
		ret = ops->check(spec, err, errlen);
	if (ret)
		return ret;
	if (spec->cwd && spec->cwd[0] != '/')
		return sbx_seterr(err, errlen, -EINVAL, "sandbox %s: cwd '%s' must be absolute",
				  spec->name, spec->cwd);
	return 0;
}

/* ---- start -------------------------------------------------------------- */

static void run_reset(struct sbt_sandbox_run *run)
{
	memset(run, 0, sizeof(*run));
	run->go_fd = -1;
	run->ready_fd = -1;
	run->console_fd = -1;
	run->vm_ctl_fd = run->vm_mon_fd = run->vm_snap_fd = -1;
	run->phase_fd = -1;
	run->workspace_written = -1;
	run->relay_w[0] = run->relay_w[1] = -1;
}

/* The state file's path, not taken yet; the run's name. */
static int claim_name(const struct sbt_sandbox_spec *spec, const char *sdir,
		      struct sbt_sandbox_run *run, char *err, size_t errlen)
{
	struct stat st;

	if (!sbx_str_fits(run->state_file, sizeof(run->state_file), "%s/%s.json", sdir, spec->name))
		return sbx_seterr(err, errlen, -ENAMETOOLONG, "state dir '%s': path too long",
				  sdir);
	if (lstat(run->state_file, &st) == 0)
		return sbx_seterr(err, errlen, -EEXIST,
				  "sandbox %s exists (state file %s); run sbtrace-shim gc or pick "
				  "another name",
				  spec->name, run->state_file);
	snprintf(run->name, sizeof(run->name), "%s", spec->name);
	return 0;
}

/* mkdir <v2>/sbtrace/NAME; its fd (for CLONE_INTO_CGROUP) and id. Removed again on error. */
static int make_cgroup(const struct sbt_sandbox_spec *spec, struct sbt_sandbox_run *run, int *cgfd,
		       char *err, size_t errlen)
{
	char mnt_point[PATH_MAX], parent[PATH_MAX];
	int ret = sbx_cgroup2_mount(mnt_point, sizeof(mnt_point));

	if (ret)
		return sbx_seterr(err, errlen, ret,
				  "no cgroup v2 mount found in /proc/self/mountinfo: %s",
				  strerror(-ret));
	if (!sbx_str_fits(parent, sizeof(parent), "%s/sbtrace", mnt_point) ||
	    !sbx_str_fits(run->cgroup_path, sizeof(run->cgroup_path), "%s/%s", parent,
			  spec->name) ||
	    !sbx_str_fits(run->cgroup_name, sizeof(run->cgroup_name), "/sbtrace/%s", spec->name))
		return sbx_seterr(err, errlen, -ENAMETOOLONG, "cgroup path too long");
	if (mkdir(parent, 0755) && errno != EEXIST)
		return sbx_seterr(err, errlen, -errno, "create cgroup %s: %s", parent,
				  strerror(errno));
	ret = mkdir(run->cgroup_path, 0755) ? -errno : 0;
	/*
	 * A killed sandbox's leftover of the same name (no state file, nothing
	 * running, older than a start takes) goes; a younger one is a
	 * concurrent start's, and the mkdir stays the lock.
	 */
	if (ret == -EEXIST && sbx_cgroup_leftover(run->cgroup_path) &&
	    sbx_cgroup_rmdir_tree(run->cgroup_path) == 0)
		ret = mkdir(run->cgroup_path, 0755) ? -errno : 0;
	if (ret == -EEXIST)
		return sbx_seterr(
			err, errlen, -EEXIST,
			"sandbox %s exists (cgroup %s, in use or just made); stop it, run "
			"sbtrace-shim gc, or pick another name",
			spec->name, run->cgroup_path);
	if (ret)
		return sbx_seterr(err, errlen, ret, "create cgroup %s: %s", run->cgroup_path,
				  strerror(-ret));
	*cgfd = open(run->cgroup_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	run->cgroup_id = sbt_cgroup_id(run->cgroup_path);
	if (*cgfd < 0 || !run->cgroup_id) {
		ret = sbx_seterr(err, errlen, -errno, "open cgroup %s: %s", run->cgroup_path,
				 strerror(errno));
		if (*cgfd >= 0)
			close(*cgfd);
		*cgfd = -1;
		rmdir(run->cgroup_path);
		return ret;
	}
	return 0;
}

/* The pipes, the clone into the cgroup, the backend's after-clone set-up. */
static int spawn(const struct sbt_backend_ops *ops, struct sbx_child *c,
		 struct sbt_sandbox_run *run, int cgfd, char *err, size_t errlen)
{
	int ready[2] = { -1, -1 }, go[2] = { -1, -1 }, phase[2] = { -1, -1 }, ret = 0;
	pid_t pid;

	if (pipe2(ready, O_CLOEXEC) || pipe2(go, O_CLOEXEC) ||
	    ((c->spec->then_argv || c->spec->workspace_report) && pipe2(phase, O_CLOEXEC))) {
		ret = sbx_seterr(err, errlen, -errno, "pipe: %s", strerror(errno));
		goto out;
	}
	c->ready_w = ready[1];
	c->go_r = go[0];
	c->phase_w = phase[1];
	run->start_ns = sbt_clock_ns(CLOCK_REALTIME);
	pid = sbx_raw_clone(CLONE_INTO_CGROUP | ops->clone_flags, cgfd);
	if (pid == 0) {
		ops->child_main(c);
		_exit(126); /* not reached */
	}
	if (pid < 0) {
		ret = sbx_seterr(err, errlen, -errno,
				 "clone3 into cgroup %s%s: %s (needs root and Linux 5.7+)",
				 run->cgroup_path, ops->clone_flags ? " with new namespaces" : "",
				 strerror(errno));
		goto out;
	}
	run->pid = pid;
	run->backend = c->spec->backend;
	ret = ops->after_clone ? ops->after_clone(c, run, err, errlen) : 0;
	if (ret) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		run->pid = 0;
		goto out;
	}
	run->ready_fd = ready[0];
	run->go_fd = go[1];
	ready[0] = go[1] = -1;
	if (phase[0] >= 0) {
		fcntl(phase[0], F_SETFL, O_NONBLOCK);
		run->phase_fd = phase[0];
		phase[0] = -1;
	}
out:
	for (int i = 0; i < 2; i++) {
		if (ready[i] >= 0)
			close(ready[i]);
		if (go[i] >= 0)
			close(go[i]);
		if (phase[i] >= 0)
			close(phase[i]);
	}
	c->phase_w = -1;
	return ret;
}

/*
 * The backend's preparation, the clone into the cgroup (cgfd) and the
 * release of what was prepared: one child of spec. 0 or -errno with err.
 */
static int start_child(const struct sbt_backend_ops *ops, const struct sbt_sandbox_spec *spec,
		       struct sbt_sandbox_run *run, const char *sdir, int cgfd, char *err,
		       size_t errlen)
{
	struct sbx_child c = { .spec = spec,
			       .cwd = spec->cwd ? spec->cwd : "/",
			       .ready_w = -1,
			       .go_r = -1,
			       .phase_w = -1,
			       .ws_fd = -1,
			       .sync_r = -1,
			       .sync_w = -1 };
	int ret = ops->prepare ? ops->prepare(&c, run, sdir, err, errlen) : 0;

	if (!ret)
		ret = spawn(ops, &c, run, cgfd, err, errlen);
	if (ops->release)
		ops->release(&c, run, ret != 0);
	return ret;
}

int sbt_sandbox_start(const struct sbt_sandbox_spec *spec, struct sbt_sandbox_run *run, char *err,
		      size_t errlen)
{
	const struct sbt_backend_ops *ops;
	struct sbt_sandbox_spec s = *spec;
	const char *sdir;
	int cgfd = -1, ret;

	run_reset(run);
	ret = sbt_sandbox_check(spec, err, errlen);
	if (ret)
		return ret;
	ret = sbx_relay_wrap(&s, run, err, errlen); /* a terminal is never the workload's */
	if (ret) {
		sbx_relay_end(run);
		return ret;
	}
	if (!s.limits.pids)
		s.limits.pids = SBT_LIMIT_PIDS_DEFAULT;
	if (!s.limits.memory)
		s.limits.memory = SBT_LIMIT_MEMORY_DEFAULT;
	if (!s.limits.tmpfs)
		s.limits.tmpfs = SBT_LIMIT_TMPFS_DEFAULT;
	if (s.limits.pids == UINT32_MAX)
		s.limits.pids = 0; /* "max" from here on */
	if (s.limits.memory == UINT64_MAX)
		s.limits.memory = 0;
	run->limits = s.limits;
	spec = &s;
	ops = sbx_backend(spec->backend);
	sdir = spec->state_dir ? spec->state_dir : SBT_STATE_DIR_DEFAULT;
	ret = claim_name(spec, sdir, run, err, errlen);
	if (!ret)
		ret = make_cgroup(spec, run, &cgfd, err, errlen);
	if (!ret && spec->backend == SBT_BACKEND_NS)
		ret = sbx_limits_prepare(spec, run, err, errlen);
	if (!ret)
		ret = start_child(ops, spec, run, sdir, cgfd, err, errlen);
	if (ret && run->vm_restore_failed) {
		/* a restore that failed before the release (qemu_snap.c): boot cold instead */
		char why[sizeof(run->boot_why)];

		snprintf(why, sizeof(why), "%s", run->boot_why);
		sbt_log("sandbox %s: %s; booting cold", spec->name, why);
		s.vm_boot = SBT_VM_BOOT_COLD;
		run->vm_restore_failed = false;
		ret = start_child(ops, spec, run, sdir, cgfd, err, errlen);
		snprintf(run->boot_why, sizeof(run->boot_why), "%s", why);
	}
	if (cgfd >= 0) {
		close(cgfd);
		if (ret)
			rmdir(run->cgroup_path);
	}
	if (ret) {
		sbx_relay_end(run);
		sbx_limits_destroy(run);
		run_reset(run);
	}
	return ret;
}

/* ---- ready, go, wait ---------------------------------------------------- */

int sbt_sandbox_ready(struct sbt_sandbox_run *run, char *err, size_t errlen)
{
	char buf[1100];
	ssize_t n;

	if (run->ready_fd < 0)
		return run->pid > 0 ? 0 : sbx_seterr(err, errlen, -EINVAL, "sandbox not started");
	do
		n = read(run->ready_fd, buf, sizeof(buf) - 1);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return sbx_seterr(err, errlen, -errno, "sandbox %s: reading the ready pipe: %s",
				  run->name, strerror(errno));
	if (n == 1 && buf[0] == READY_OK) {
		close(run->ready_fd);
		run->ready_fd = -1;
		return 0;
	}
	if (n == 0)
		return sbx_seterr(err, errlen, -ECHILD,
				  "sandbox %s: init exited during set-up (killed?)", run->name);
	buf[n] = '\0';
	if (buf[0] == READY_ERR) {
		char *end;
		long e = strtol(buf + 1, &end, 10);

		if (*end == ':' && e > 0 && e < 4096)
			return sbx_seterr(err, errlen, (int)-e, "sandbox %s: set-up failed: %s",
					  run->name, end + 1);
	}
	return sbx_seterr(err, errlen, -EPROTO, "sandbox %s: unexpected message from init",
			  run->name);
}

int sbt_sandbox_go(struct sbt_sandbox_run *run)
{
	sigset_t pipe_set, old, pending;
	bool was_pending;
	ssize_t n;
	int ret = 0;

	if (run->vm_restored) /* qemu waits, paused, for its monitor's cont (qemu_snap.c) */
		return sbx_vm_snap_go(run);
	if (run->go_fd < 0)
		return -EBADF;
	/* The init may be gone: EPIPE, without SIGPIPE killing the caller. */
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	sigpending(&pending);
	was_pending = sigismember(&pending, SIGPIPE);
	sigprocmask(SIG_BLOCK, &pipe_set, &old);
	do
		n = write(run->go_fd, "g", 1);
	while (n < 0 && errno == EINTR);
	if (n != 1) {
		ret = n < 0 ? -errno : -EIO;
		if (ret == -EPIPE && !was_pending) {
			struct timespec zero = { 0, 0 };

			sigtimedwait(&pipe_set, NULL, &zero);
		}
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	close(run->go_fd);
	run->go_fd = -1;
	run->go_ns = sbt_clock_ns(CLOCK_MONOTONIC);
	return ret;
}

int sbt_sandbox_then_poll(struct sbt_sandbox_run *run)
{
	struct sbx_phase_rec rec;
	int changed = 0;
	ssize_t n;

	while (run->phase_fd >= 0) {
		n = read(run->phase_fd, &rec, sizeof(rec));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			break;
		if (n == (ssize_t)sizeof(rec) && rec.end == SBX_PHASE_WORKSPACE) {
			run->workspace_written = rec.status != 0;
			changed = 1;
			continue;
		}
		if (n != (ssize_t)sizeof(rec) || rec.end > SBT_THEN_SKIPPED) {
			/* EOF (init is gone) or garbage: nothing more will come */
			close(run->phase_fd);
			run->phase_fd = -1;
			return n < 0 ? -errno : changed;
		}
		changed = 1;
		if (rec.end == SBT_THEN_PENDING) {
			run->then.started = true;
			run->then.start_ns = rec.boot_ns;
		} else {
			run->then.end = (enum sbt_then_end)rec.end;
			run->then.status = rec.status;
			run->then.end_ns = rec.boot_ns;
		}
	}
	return changed;
}

int sbt_sandbox_then_end(struct sbt_sandbox_run *run)
{
	/* init is our child: run->pid is 0 once reaped, never a reused number */
	if (run->pid <= 0 || run->phase_fd < 0)
		return -ESRCH;
	return kill(run->pid, SBX_THEN_END_SIGNAL) ? -errno : 0;
}

int sbt_sandbox_next(struct sbt_sandbox_run *run, const struct sbt_sandbox_spec *spec, char *err,
		     size_t errlen)
{
	const struct sbt_backend_ops *ops = sbx_backend(run->backend);
	uint64_t start_ns = run->start_ns;
	struct sbt_sandbox_spec s = *spec;
	int cgfd, ret;

	if (!ops || !ops->caps.host_tools || spec->backend != run->backend || run->pid > 0 ||
	    !run->cgroup_path[0] || !spec->name || strcmp(spec->name, run->name) != 0)
		return sbx_seterr(err, errlen, -EINVAL,
				  "sandbox %s: a next tool needs a host-tool sandbox whose tool "
				  "was reaped",
				  run->name);
	ret = sbt_sandbox_check(spec, err, errlen);
	if (!ret)
		ret = sbx_relay_wrap(&s, run, err, errlen); /* the run's relays, or new ones */
	if (ret)
		return ret;
	spec = &s;
	cgfd = open(run->cgroup_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cgfd < 0)
		return sbx_seterr(err, errlen, -errno, "open cgroup %s: %s", run->cgroup_path,
				  strerror(errno));
	ret = start_child(ops, spec, run, NULL, cgfd, err, errlen);
	close(cgfd);
	run->start_ns = start_ns;
	if (!ret)
		ret = sbt_sandbox_ready(run, err, errlen);
	if (!ret)
		ret = sbt_sandbox_go(run);
	return ret;
}

int sbt_sandbox_freeze(struct sbt_sandbox_run *run)
{
	return run->cgroup_path[0] ? sbx_cgroup_freeze(run->cgroup_path) : -EINVAL;
}

int sbt_sandbox_wait(struct sbt_sandbox_run *run, int *status, int timeout_ms)
{
	int st = 0, pidfd;
	pid_t r;

	if (run->pid <= 0)
		return -ECHILD;
	if (timeout_ms < 0) {
		r = waitpid(run->pid, &st, 0);
	} else {
		pidfd = (int)syscall(SYS_pidfd_open, run->pid, 0);
		if (pidfd >= 0) {
			struct pollfd pfd = { .fd = pidfd, .events = POLLIN };
			int pr = poll(&pfd, 1, timeout_ms);

			close(pidfd);
			if (pr < 0)
				return -errno;
			if (pr == 0)
				return -ETIMEDOUT;
			r = waitpid(run->pid, &st, WNOHANG);
		} else {
			/* no pidfd_open (Linux < 5.3): poll */
			uint64_t end =
				sbt_clock_ns(CLOCK_MONOTONIC) + (uint64_t)timeout_ms * 1000000ull;

			while ((r = waitpid(run->pid, &st, WNOHANG)) == 0 &&
			       sbt_clock_ns(CLOCK_MONOTONIC) < end)
				sbt_sleep_ms(5);
		}
	}
	if (r < 0)
		return -errno;
	if (r == 0)
		return -ETIMEDOUT;
	if (status)
		*status = st;
	run->pid = 0; /* reaped: the number may be reused from now on */
	return 0;
}

void sbt_sandbox_destroy(struct sbt_sandbox_run *run)
{
	const struct sbt_backend_ops *ops = sbx_backend(run->backend);
	char fifo[PATH_MAX];

	if (run->go_fd >= 0)
		close(run->go_fd);
	if (run->ready_fd >= 0)
		close(run->ready_fd);
	if (run->phase_fd >= 0)
		close(run->phase_fd);
	run->go_fd = run->ready_fd = run->phase_fd = -1;
	if (run->cgroup_path[0])
		sbx_cgroup_kill(run->cgroup_path);
	if (run->pid > 0) {
		int st;

		if (sbt_sandbox_wait(run, &st, KILL_WAIT_MS) == -ETIMEDOUT) {
			kill(run->pid, SIGKILL);
			sbt_sandbox_wait(run, &st, KILL_WAIT_MS);
		}
		run->pid = 0;
	}
	sbx_relay_end(run); /* the workload is gone: its output drained to the last byte */
	sbt_sandbox_limits_read(run);
	sbx_limits_destroy(run);
	if (run->cgroup_path[0] && sbx_cgroup_destroy(run->cgroup_path) == 0)
		run->cgroup_path[0] = '\0';
	if (ops && ops->destroy)
		ops->destroy(run);
	/* Nothing is left to enforce on: the links pinned to outlive a tracer go. */
	if (!run->cgroup_path[0] && run->name[0])
		sbt_pin_remove(run->name);
	if (run->state_file[0]) {
		sbx_attach_path(run->state_file, fifo, sizeof(fifo));
		if (fifo[0])
			unlink(fifo);
		unlink(run->state_file);
		run->state_file[0] = '\0';
	}
}
