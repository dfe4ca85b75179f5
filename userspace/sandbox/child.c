// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * What the children of every backend share, between the clone and their
 * exec. The child of a raw clone3 runs on a copy of the caller's memory: no
 * malloc here (a lock another thread held at the clone would stay held), but
 * for libseccomp's in sbx_child_seccomp(), which the single-threaded caller
 * (lifecycle.c) makes safe.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <linux/capability.h>
#include <linux/securebits.h>

#include "internal.h"

/* struct clone_args up to CLONE_ARGS_SIZE_VER2 (own copy: <linux/sched.h> clashes with glibc). */
struct sbt_clone_args {
	uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls;
	uint64_t set_tid, set_tid_size, cgroup;
};

void sbx_child_fail(const struct sbx_child *c, int err, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	int n = snprintf(msg, sizeof(msg), "%c%d:", READY_ERR, err > 0 ? err : EIO);

	va_start(ap, fmt);
	vsnprintf(msg + n, sizeof(msg) - (size_t)n, fmt, ap);
	va_end(ap);
	if (write(c->ready_w, msg, strlen(msg)) < 0) {
		/* the caller is gone: nobody to tell */
	}
	_exit(126);
}

static void reset_signals(void)
{
	struct sigaction sa;
	sigset_t none;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	for (int sig = 1; sig < NSIG; sig++)
		sigaction(sig, &sa, NULL); /* SIGKILL, SIGSTOP, RT ones glibc keeps: EINVAL */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

void sbx_child_start(const struct sbx_child *c, const char *comm)
{
	reset_signals();
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0))
		sbx_child_fail(c, errno, "PR_SET_PDEATHSIG: %s", strerror(errno));
	/* a fork of the tracer or shim: name it for what it is in ancestor chains */
	prctl(PR_SET_NAME, comm, 0, 0, 0);
	setsid(); /* no controlling terminal: no TIOCSTI */
}

int sbx_child_stdio(const struct sbt_sandbox_spec *spec)
{
	/* Above the slots they go to, so no dup2 below overwrites another. */
	int out = spec->stdout_fd >= 0 ? fcntl(spec->stdout_fd, F_DUPFD_CLOEXEC, 10) : -1;
	int err = spec->stderr_fd >= 0 ? fcntl(spec->stderr_fd, F_DUPFD_CLOEXEC, 10) : -1;
	int null = open("/dev/null", O_RDONLY | O_CLOEXEC);

	if (null < 0 || dup2(null, 0) < 0 || (out >= 0 && dup2(out, 1) < 0) ||
	    (err >= 0 && dup2(err, 2) < 0))
		return -errno;
	return 0;
}

/* No capability in any set, none to regain (securebits locked), no_new_privs. */
void sbx_drop_privileges(const struct sbx_child *c)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2];
	unsigned long bits = SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
			     SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED |
			     SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED;

	if (prctl(PR_SET_SECUREBITS, bits, 0, 0, 0))
		sbx_child_fail(c, errno, "PR_SET_SECUREBITS: %s", strerror(errno));
	for (unsigned long cap = 0; cap < 64; cap++) {
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) == 0)
			continue;
		if (errno == EINVAL) /* past the kernel's last capability */
			break;
		sbx_child_fail(c, errno, "PR_CAPBSET_DROP %lu: %s", cap, strerror(errno));
	}
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) && errno != EINVAL)
		sbx_child_fail(c, errno, "clear ambient capabilities: %s", strerror(errno));
	memset(data, 0, sizeof(data));
	if (syscall(SYS_capset, &hdr, data))
		sbx_child_fail(c, errno, "capset: %s", strerror(errno));
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		sbx_child_fail(c, errno, "PR_SET_NO_NEW_PRIVS: %s", strerror(errno));
	/* W inherits this until its exec: it cannot ptrace init or read /proc/1/mem. */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0))
		sbx_child_fail(c, errno, "PR_SET_DUMPABLE: %s", strerror(errno));
}

void sbx_close_fds_except(int *keep, int n)
{
	unsigned int next = 0;

	for (int i = 1; i < n; i++) /* insertion sort, n is tiny */
		for (int j = i; j > 0 && keep[j] < keep[j - 1]; j--) {
			int t = keep[j];

			keep[j] = keep[j - 1];
			keep[j - 1] = t;
		}
	for (int i = 0; i < n; i++) {
		if (keep[i] < 0 || (unsigned int)keep[i] < next)
			continue;
		if ((unsigned int)keep[i] > next)
			close_range(next, (unsigned int)keep[i] - 1, 0);
		next = (unsigned int)keep[i] + 1;
	}
	close_range(next, ~0u, 0);
}

pid_t sbx_raw_clone(uint64_t flags, int cgroup_fd)
{
	struct sbt_clone_args a;

	memset(&a, 0, sizeof(a));
	a.flags = flags;
	a.exit_signal = SIGCHLD;
	if (cgroup_fd >= 0)
		a.cgroup = (uint64_t)cgroup_fd;
	return (pid_t)syscall(SYS_clone3, &a, sizeof(a));
}

void sbx_ready(struct sbx_child *c)
{
	char b = READY_OK;

	if (write(c->ready_w, &b, 1) != 1)
		_exit(126);
	close(c->go_r);
	close(c->ready_w);
}

void sbx_ready_then_wait_go(struct sbx_child *c)
{
	char b = READY_OK;
	ssize_t n;

	if (write(c->ready_w, &b, 1) != 1)
		_exit(126);
	do
		n = read(c->go_r, &b, 1);
	while (n < 0 && errno == EINTR);
	if (n != 1)
		_exit(126); /* the caller went away (or gave up) before go */
	close(c->go_r);
	close(c->ready_w);
}

void sbx_child_seccomp(const struct sbx_child *c)
{
	char msg[256];

	if (sbx_seccomp_install(msg, sizeof(msg)) == 0)
		return;
	dprintf(2, "sandbox %s: %s\n", c->spec->name, msg);
	_exit(127);
}

void sbx_child_exec(const struct sbx_child *c, enum sbt_exec_ctx ctx, char *const *argv)
{
	int ret;

	environ = c->envp;
	ret = sbt_exec(ctx, argv);
	dprintf(2, "sandbox %s: cannot execute '%s': %s\n", c->spec->name, argv[0],
		ctx == SBT_EXEC_HOST && ret == -EPERM ? "not on the host tool allowlist"
						      : strerror(-ret));
	_exit(127);
}
