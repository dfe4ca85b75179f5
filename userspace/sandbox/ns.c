// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The ns backend (see sandbox.h; the caller's side is lifecycle.c's).
 *
 * Processes and namespaces. There is no waiter process in between: the
 * sandbox's init is the caller's own child, so run->pid is both the host pid
 * of pid 1 inside and what sbt_sandbox_wait() reaps.
 *
 *   caller  mkdir <v2>/sbtrace/NAME; pipes "ready" (init -> caller) and "go"
 *           (caller -> init); clone3(CLONE_INTO_CGROUP | CLONE_NEWPID |
 *           CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWNET), fork-like
 *           (no exec). The child is born inside the sandbox cgroup: it never
 *           runs a single instruction outside it.
 *   init    (pid 1 of the new pid namespace) default signal dispositions and
 *           mask, PR_SET_PDEATHSIG(SIGKILL) (the sandbox dies with its
 *           controller), setsid() (no controlling terminal: no TIOCSTI),
 *           unshare(CLONE_NEWCGROUP) (rooted at the sandbox cgroup),
 *           sethostname(NAME), mounts MS_REC|MS_PRIVATE, new root (below),
 *           pivot_root, lo up, every capability dropped (securebits locked,
 *           bounding and ambient sets cleared, capset 0), no_new_privs,
 *           non-dumpable, every fd but the pipes and the output closed; then
 *           writes "+" to the ready pipe (or "-ERRNO:message" and exits 126)
 *           and blocks reading the go pipe (EOF: the caller is gone, exit 126).
 *   caller  sbt_sandbox_ready() reads the pipe; the tracer attaches;
 *           sbt_sandbox_go() writes one byte.
 *   init    clones the workload W (again fork-like; pre_argv first, then argv
 *           when it exited 0), reaps every child and,
 *           when W exits, exits with W's exit code (or 128+signal); the
 *           kernel then kills whatever is left in the pid namespace.
 *   W       stdin /dev/null, stdout/stderr from the spec, all other fds closed,
 *           chdir(cwd), the declared environment only (envset.h: PATH,
 *           HOME=/root, LANG, TERM, what spec->env adds), then
 *           the seccomp filter (seccomp.c), sbt_exec(SBT_EXEC_SANDBOXED): the first
 *           exec in the cgroup. 127 (and a message) when it fails.
 *
 * The new root is a small tmpfs, staged on /tmp (private to the new mount
 * namespace) and made read-only at the end: every top-level directory of the
 * host's / except proc, sys, dev, tmp, run, root and workspace is bound
 * recursively, read-only, nosuid and nodev (mount_setattr AT_RECURSIVE, so
 * submounts are read-only too); top-level symlinks (usrmerge) are copied;
 * top-level files are left out. Then: a fresh proc (the new pid namespace)
 * with sys, sysrq-trigger, irq, bus and fs read-only and kcore, keys,
 * kallsyms, timer_list... masked, as docker does (the workload is uid 0:
 * without this it could write /proc/sys/kernel/core_pattern); a minimal
 * /dev (tmpfs, read-only: bind mounts of the host's null, zero, full,
 * random, urandom, tty, the fd/std* symlinks, a tmpfs /dev/shm);
 * writable tmpfs on /tmp, /root (HOME) and /run (the host's /run, with its
 * unix sockets such as systemd's private one, must not be reachable); an
 * empty /sys (nothing mounted, so no cgroupfs); the workspace at /workspace,
 * a detached copy of its mount tree made by the caller (open_tree; so a
 * workspace under /tmp works), nosuid, nodev, read-only with workspace_ro.
 *
 * --net veth: after the clone, the caller adds the veth pair (veth_setup()).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "lib/clock.h"
#include "internal.h"

#define STAGE "/tmp" /* where the new root is built, in the new mount ns */

/* ---- the child: init ---------------------------------------------------- */

static void mnt(const struct sbx_child *c, const char *src, const char *dst, const char *type,
		unsigned long flags, const char *data)
{
	if (mount(src, dst, type, flags, data))
		sbx_child_fail(c, errno, "mount %s on %s: %s", type ? type : src, dst,
			       strerror(errno));
}

static void mnt_attr(const struct sbx_child *c, int dfd, const char *path, unsigned int flags,
		     uint64_t attrs)
{
	struct mount_attr a = { .attr_set = attrs };

	if (mount_setattr(dfd, path, flags, &a, sizeof(a)))
		sbx_child_fail(c, errno, "mount_setattr %s: %s (needs Linux 5.12+)", path,
			       strerror(errno));
}

static void mkdir_or_fail(const struct sbx_child *c, const char *path, mode_t mode)
{
	if (mkdir(path, mode) && errno != EEXIST)
		sbx_child_fail(c, errno, "mkdir %s: %s", path, strerror(errno));
}

static void touch_or_fail(const struct sbx_child *c, const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);

	if (fd < 0)
		sbx_child_fail(c, errno, "create %s: %s", path, strerror(errno));
	close(fd);
}

static bool is_replaced(const char *name)
{
	static const char *const replaced[] = { "proc", "sys",	"dev",	     "tmp",
						"run",	"root", "workspace", NULL };

	for (const char *const *p = replaced; *p; p++)
		if (strcmp(name, *p) == 0)
			return true;
	return false;
}

/* Every top-level directory of the host's / into STAGE, recursive, read-only. */
static void bind_host_root(const struct sbx_child *c)
{
	char buf[8192], src[PATH_MAX], dst[PATH_MAX], target[PATH_MAX];
	int rootfd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	long n;

	if (rootfd < 0)
		sbx_child_fail(c, errno, "open /: %s", strerror(errno));
	while ((n = syscall(SYS_getdents64, rootfd, buf, sizeof(buf))) > 0) {
		for (long off = 0; off < n;) {
			struct dirent64 *de = (struct dirent64 *)(buf + off);
			unsigned char type = de->d_type;
			struct stat st;

			off += de->d_reclen;
			if (de->d_name[0] == '.' &&
			    (!de->d_name[1] || (de->d_name[1] == '.' && !de->d_name[2])))
				continue;
			if (is_replaced(de->d_name))
				continue;
			if (type == DT_UNKNOWN) {
				if (fstatat(rootfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW))
					continue;
				type = S_ISDIR(st.st_mode)   ? DT_DIR
				       : S_ISLNK(st.st_mode) ? DT_LNK
							     : DT_REG;
			}
			if (!sbx_str_fits(src, sizeof(src), "/%s", de->d_name) ||
			    !sbx_str_fits(dst, sizeof(dst), STAGE "/%s", de->d_name))
				continue;
			if (type == DT_DIR) {
				mkdir_or_fail(c, dst, 0755);
				mnt(c, src, dst, NULL, MS_BIND | MS_REC, NULL);
				mnt_attr(c, AT_FDCWD, dst, AT_RECURSIVE,
					 MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
			} else if (type == DT_LNK) {
				ssize_t len =
					readlinkat(rootfd, de->d_name, target, sizeof(target) - 1);

				if (len < 0)
					continue;
				target[len] = '\0';
				if (symlink(target, dst))
					sbx_child_fail(c, errno, "symlink %s: %s", dst,
						       strerror(errno));
			}
			/* top-level files (a swap file...) stay out */
		}
	}
	if (n < 0)
		sbx_child_fail(c, errno, "read /: %s", strerror(errno));
	close(rootfd);
}

/* proc of the new pid namespace, with the host-wide knobs read-only or masked. */
static void mount_proc(const struct sbx_child *c)
{
	static const char *const ro[] = { "sys", "sysrq-trigger", "irq", "bus", "fs", NULL };
	static const char *const masked[] = { "kcore",	       "keys",	      "key-users",
					      "kallsyms",      "timer_list",  "sched_debug",
					      "latency_stats", "timer_stats", NULL };
	static const char *const masked_dirs[] = { "acpi", "scsi", "asound", NULL };
	char p[PATH_MAX];
	struct stat st;

	mnt(c, "proc", STAGE "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
	for (const char *const *e = ro; *e; e++) {
		snprintf(p, sizeof(p), STAGE "/proc/%s", *e);
		if (lstat(p, &st))
			continue;
		mnt(c, p, p, NULL, MS_BIND | MS_REC, NULL);
		mnt_attr(c, AT_FDCWD, p, AT_RECURSIVE,
			 MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
				 MOUNT_ATTR_NOEXEC);
	}
	for (const char *const *e = masked; *e; e++) {
		snprintf(p, sizeof(p), STAGE "/proc/%s", *e);
		if (lstat(p, &st) || !S_ISREG(st.st_mode))
			continue;
		mnt(c, "/dev/null", p, NULL, MS_BIND, NULL);
		mnt_attr(c, AT_FDCWD, p, 0, MOUNT_ATTR_RDONLY);
	}
	for (const char *const *e = masked_dirs; *e; e++) {
		snprintf(p, sizeof(p), STAGE "/proc/%s", *e);
		if (lstat(p, &st) || !S_ISDIR(st.st_mode))
			continue;
		mnt(c, "tmpfs", p, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
		    "mode=0555,nr_inodes=1");
	}
}

/* A writable tmpfs's options: its mode and the spec's size (limits.tmpfs, 0: no size). */
static const char *tmpfs_opts(const struct sbx_child *c, const char *mode, uint64_t size)
{
	static char opts[4][64];
	static int next;
	char *o = opts[next++ % 4];

	if (!size)
		size = c->spec->limits.tmpfs;
	if (size)
		snprintf(o, sizeof(opts[0]), "mode=%s,size=%llu", mode, (unsigned long long)size);
	else
		snprintf(o, sizeof(opts[0]), "mode=%s", mode);
	return o;
}

/* A minimal /dev: the harmless character devices, bound from the host's. */
static void mount_dev(const struct sbx_child *c)
{
	static const char *const devs[] = {
		"null", "zero", "full", "random", "urandom", "tty", NULL
	};
	static const char *const links[][2] = { { "fd", "/proc/self/fd" },
						{ "stdin", "/proc/self/fd/0" },
						{ "stdout", "/proc/self/fd/1" },
						{ "stderr", "/proc/self/fd/2" },
						{ NULL, NULL } };
	char src[PATH_MAX], dst[PATH_MAX];
	struct stat st;

	mnt(c, "tmpfs", STAGE "/dev", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
	    "mode=0755,size=64k,nr_inodes=64");
	for (const char *const *d = devs; *d; d++) {
		snprintf(src, sizeof(src), "/dev/%s", *d);
		snprintf(dst, sizeof(dst), STAGE "/dev/%s", *d);
		if (stat(src, &st) || !S_ISCHR(st.st_mode))
			continue;
		touch_or_fail(c, dst);
		mnt(c, src, dst, NULL, MS_BIND, NULL);
	}
	for (int i = 0; links[i][0]; i++) {
		snprintf(dst, sizeof(dst), STAGE "/dev/%s", links[i][0]);
		if (symlink(links[i][1], dst))
			sbx_child_fail(c, errno, "symlink %s: %s", dst, strerror(errno));
	}
	mkdir_or_fail(c, STAGE "/dev/shm", 01777);
	mnt(c, "tmpfs", STAGE "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
	    tmpfs_opts(c, "1777", 0));
	mnt_attr(c, AT_FDCWD, STAGE "/dev", 0, MOUNT_ATTR_RDONLY);
}

/* init's: the overlay's upper layer, held past its mount's detach (workspace_report), or -1 */
static int ws_upper_fd = -1;

/*
 * workspace_overlay: the (idmapped) tree as the lower layer of an overlay
 * mounted here, in the sandbox's user namespace (userxattr: no trusted.*
 * xattrs there), over a tmpfs of the sandbox's own for the upper layer.
 * Once mounted, the overlay holds its layers: their mount is detached.
 */
static void mount_overlay(const struct sbx_child *c)
{
	static const char ws[] = STAGE "/.workspace";

	mkdir_or_fail(c, ws, 0700);
	mnt(c, "sbtrace-workspace", ws, "tmpfs", MS_NOSUID | MS_NODEV, tmpfs_opts(c, "0700", 0));
	mkdir_or_fail(c, STAGE "/.workspace/lower", 0700);
	mkdir_or_fail(c, STAGE "/.workspace/upper", 0755);
	mkdir_or_fail(c, STAGE "/.workspace/work", 0700);
	if (move_mount(c->ws_fd, "", AT_FDCWD, STAGE "/.workspace/lower", MOVE_MOUNT_F_EMPTY_PATH))
		sbx_child_fail(c, errno, "mount workspace %s: %s", c->spec->workspace,
			       strerror(errno));
	mnt(c, "sbtrace-overlay", STAGE "/workspace", "overlay", MS_NOSUID | MS_NODEV,
	    "lowerdir=" STAGE "/.workspace/lower,upperdir=" STAGE "/.workspace/upper,"
	    "workdir=" STAGE "/.workspace/work,userxattr");
	if (c->spec->workspace_report)
		ws_upper_fd = open(STAGE "/.workspace/upper", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (umount2(ws, MNT_DETACH) || rmdir(ws))
		sbx_child_fail(c, errno, "detach the workspace's layers: %s", strerror(errno));
}

/*
 * The workspace: a detached copy of its mount tree the caller made with
 * open_tree(OPEN_TREE_CLONE) and idmapped to the sandbox's user namespace,
 * nosuid, nodev and (workspace_ro) read-only: userns.c. By now its path may
 * be hidden, and a path or fd of the caller's mount namespace cannot be
 * bound from this one.
 */
static void mount_workspace(const struct sbx_child *c)
{
	mkdir_or_fail(c, STAGE "/workspace", 0755);
	if (c->spec->workspace_overlay) {
		mount_overlay(c);
		return;
	}
	if (move_mount(c->ws_fd, "", AT_FDCWD, STAGE "/workspace", MOVE_MOUNT_F_EMPTY_PATH))
		sbx_child_fail(c, errno, "mount workspace %s on /workspace: %s", c->spec->workspace,
			       strerror(errno));
}

static void build_root(const struct sbx_child *c)
{
	mnt(c, "sbtrace-root", STAGE, "tmpfs", MS_NOSUID | MS_NODEV,
	    "mode=0755,size=1m,nr_inodes=4096");
	bind_host_root(c);
	mkdir_or_fail(c, STAGE "/proc", 0555);
	mkdir_or_fail(c, STAGE "/sys", 0555); /* nothing mounted: no sysfs, no cgroupfs */
	mkdir_or_fail(c, STAGE "/dev", 0755);
	mkdir_or_fail(c, STAGE "/tmp", 01777);
	mkdir_or_fail(c, STAGE "/run", 0755);
	mkdir_or_fail(c, STAGE "/root", 0700);
	mount_proc(c);
	mount_dev(c);
	mnt(c, "tmpfs", STAGE "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, tmpfs_opts(c, "1777", 0));
	mnt(c, "tmpfs", STAGE "/root", "tmpfs", MS_NOSUID | MS_NODEV, tmpfs_opts(c, "0700", 0));
	mnt(c, "tmpfs", STAGE "/run", "tmpfs", MS_NOSUID | MS_NODEV,
	    tmpfs_opts(c, "0755", 64ull << 20));
	if (c->ws_fd >= 0) {
		mount_workspace(c);
		close(c->ws_fd);
	}
	mnt_attr(c, AT_FDCWD, STAGE, 0, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
	/* pivot_root(".", "."): the old root ends up on top of the new one; detach it. */
	if (chdir(STAGE) || syscall(SYS_pivot_root, ".", ".") || umount2(".", MNT_DETACH) ||
	    chdir("/"))
		sbx_child_fail(c, errno, "pivot_root to the new root: %s", strerror(errno));
}

static void lo_up(const struct sbx_child *c)
{
	struct ifreq ifr;
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (s < 0)
		sbx_child_fail(c, errno, "socket: %s", strerror(errno));
	memset(&ifr, 0, sizeof(ifr));
	memcpy(ifr.ifr_name, "lo", 3);
	if (ioctl(s, SIOCGIFFLAGS, &ifr))
		sbx_child_fail(c, errno, "SIOCGIFFLAGS lo: %s", strerror(errno));
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(s, SIOCSIFFLAGS, &ifr))
		sbx_child_fail(c, errno, "bring lo up: %s", strerror(errno));
	close(s);
}

/* No capability in any set, none to regain (securebits locked), no_new_privs. */

/* W: the workload (argv, or then_argv), init's child. */
static void workload(const struct sbx_child *c, char *const *argv) __attribute__((noreturn));

static void workload(const struct sbx_child *c, char *const *argv)
{
	const struct sbt_sandbox_spec *spec = c->spec;
	int ret = sbx_child_stdio(spec);
	sigset_t none;

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL); /* init blocks SIGCHLD for then_argv */

	if (ret) {
		dprintf(2, "sandbox %s: stdio: %s\n", spec->name, strerror(-ret));
		_exit(127);
	}
	close_range(3, ~0u, 0);
	if (chdir(c->cwd)) {
		dprintf(2, "sandbox %s: chdir %s: %s\n", spec->name, c->cwd, strerror(errno));
		_exit(127);
	}
	sbx_child_seccomp(c); /* the last layer, right before the exec: seccomp.c */
	sbx_child_exec(c, SBT_EXEC_SANDBOXED, argv);
}

static pid_t start_workload(const struct sbx_child *c, char *const *argv)
{
	pid_t w = sbx_raw_clone(0, -1);

	if (w == 0)
		workload(c, argv);
	if (w < 0) {
		dprintf(c->spec->stderr_fd >= 0 ? c->spec->stderr_fd : 2,
			"sandbox %s: cannot start the workload: %s\n", c->spec->name,
			strerror(errno));
		_exit(126);
	}
	return w;
}

/* Reap every child until W exits: its wait status. */
static int reap_until(pid_t w)
{
	for (;;) {
		int status;
		pid_t p = waitpid(-1, &status, __WALL);

		if (p < 0 && errno == EINTR)
			continue;
		if (p < 0)
			_exit(126);
		if (p == w)
			return status;
	}
}

static void phase_record(const struct sbx_child *c, enum sbt_then_end end, int status)
{
	struct sbx_phase_rec rec = { .end = end,
				     .status = status,
				     .boot_ns = sbt_clock_ns(CLOCK_BOOTTIME) };

	if (write(c->phase_w, &rec, sizeof(rec)) != (ssize_t)sizeof(rec)) {
		/* the caller is gone: nobody to tell */
	}
}

/*
 * workspace_report: did argv write to the workspace? Any entry in the
 * overlay's upper layer is a write (a file made, changed, removed, or a
 * copy-up of its metadata); an upper layer init cannot read says nothing.
 */
static void workspace_record(const struct sbx_child *c)
{
	struct sbx_phase_rec rec = { .end = SBX_PHASE_WORKSPACE,
				     .boot_ns = sbt_clock_ns(CLOCK_BOOTTIME) };
	int fd = ws_upper_fd >= 0 ? openat(ws_upper_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
				  : -1;
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
			rec.status = 1;
			break;
		}
	closedir(d);
	if (write(c->phase_w, &rec, sizeof(rec)) != (ssize_t)sizeof(rec)) {
		/* the caller is gone: nobody to tell */
	}
}

/* Kill every other process of the pid namespace and reap them all. */
static void kill_rest(void)
{
	kill(-1, SIGKILL);
	while (waitpid(-1, NULL, __WALL) > 0 || errno == EINTR)
		;
}

/*
 * then_argv: the record first (its time precedes the first exec), then the
 * second workload; SIGTERM at then_ms or when the caller asks for it
 * (SBX_THEN_END_SIGNAL: it saw the workload ready), SIGKILL to everything
 * then_grace_ms later; what it left is killed when it ends.
 */
static void run_then(const struct sbx_child *c)
{
	const struct sbt_sandbox_spec *spec = c->spec;
	uint64_t deadline;
	enum sbt_then_end end = SBT_THEN_EXITED;
	sigset_t wake;
	int status = 0;
	pid_t w;

	sigemptyset(&wake);
	sigaddset(&wake, SIGCHLD);
	sigaddset(&wake, SBX_THEN_END_SIGNAL);
	sigprocmask(SIG_BLOCK, &wake, NULL);
	phase_record(c, SBT_THEN_PENDING, 0);
	w = start_workload(c, spec->then_argv);
	deadline = sbt_clock_ns(CLOCK_MONOTONIC) + (uint64_t)spec->then_ms * 1000000ull;
	for (;;) {
		uint64_t now = sbt_clock_ns(CLOCK_MONOTONIC);
		struct timespec left = { 0, 0 };
		pid_t p;

		while ((p = waitpid(-1, &status, __WALL | WNOHANG)) > 0 && p != w)
			;
		if (p == w)
			break;
		if (now >= deadline) {
			if (end == SBT_THEN_EXITED) {
				end = SBT_THEN_STOPPED;
				kill(w, SIGTERM);
				deadline = now + (uint64_t)spec->then_grace_ms * 1000000ull;
			} else {
				end = SBT_THEN_KILLED;
				kill(-1, SIGKILL);
				deadline = now + 1000000000ull; /* reaped soon */
			}
			continue;
		}
		left.tv_sec = (time_t)((deadline - now) / 1000000000ull);
		left.tv_nsec = (long)((deadline - now) % 1000000000ull);
		if (sigtimedwait(&wake, NULL, &left) == SBX_THEN_END_SIGNAL &&
		    end == SBT_THEN_EXITED)
			deadline = now; /* the SIGTERM now */
	}
	kill_rest();
	phase_record(c, end, status);
}

static void ns_main(struct sbx_child *c) __attribute__((noreturn));

static void ns_main(struct sbx_child *c)
{
	const struct sbt_sandbox_spec *spec = c->spec;
	int keep[] = { 0,	1,	    2, spec->stdout_fd, spec->stderr_fd, c->ready_w,
		       c->go_r, c->phase_w, -1 /* ws_upper_fd, from build_root */ };
	int status;
	struct stat st;
	pid_t w;

	sbx_child_start(c, "sandbox-init");
	sbx_userns_enter(c);
	if (unshare(CLONE_NEWCGROUP))
		sbx_child_fail(c, errno, "unshare(CLONE_NEWCGROUP): %s", strerror(errno));
	if (sethostname(spec->name, strlen(spec->name)))
		sbx_child_fail(c, errno, "sethostname: %s", strerror(errno));
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		sbx_child_fail(c, errno, "make mounts private: %s", strerror(errno));
	build_root(c);
	if (stat(c->cwd, &st) || !S_ISDIR(st.st_mode))
		sbx_child_fail(c, ENOENT, "cwd %s: not a directory inside the sandbox", c->cwd);
	lo_up(c);
	sbx_drop_privileges(c);
	keep[sizeof(keep) / sizeof(keep[0]) - 1] = ws_upper_fd;
	sbx_close_fds_except(keep, (int)(sizeof(keep) / sizeof(keep[0])));

	sbx_ready_then_wait_go(c);

	w = start_workload(c, spec->pre_argv ? spec->pre_argv : spec->argv);
	status = reap_until(w);
	if (spec->pre_argv && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		kill_rest();
		w = start_workload(c, spec->argv);
		status = reap_until(w);
	}
	if (spec->then_argv)
		kill_rest();
	if (spec->workspace_report)
		workspace_record(c);
	if (spec->then_argv) {
		if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
			run_then(c);
		else
			phase_record(c, SBT_THEN_SKIPPED, status);
	}
	_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
}

/* ---- the caller's side -------------------------------------------------- */

/*
 * The workload's environment: the declared one (spec->env, else the default
 * clean set: PATH, HOME=/root, LANG, TERM), and PWD. Nothing else of the
 * caller's enters. 0 or -errno with err.
 */
int sbx_declared_env(struct sbx_child *c, enum sbt_env_for who, bool pwd, char *err, size_t errlen)
{
	const struct sbt_sandbox_spec *spec = c->spec;
	char buf[PATH_MAX + 8];
	int rc = sbt_env_default(&c->env, who);

	for (char *const *e = spec->env; !rc && e && *e; e++)
		rc = sbt_env_set(&c->env, *e, buf, sizeof(buf));
	if (!rc && pwd) {
		snprintf(buf, sizeof(buf), "PWD=%s", c->cwd);
		rc = sbt_env_set(&c->env, buf, buf, sizeof(buf));
	}
	if (rc)
		return sbx_seterr(err, errlen, rc, "sandbox %s: environment: %s", spec->name,
				  rc == -ENOMEM ? "out of memory" : buf);
	c->envp = c->env.vars;
	return 0;
}

/* The workspace's mount tree (the VM backend copies it instead), the cwd, the environment. */
static int ns_prepare(struct sbx_child *c, struct sbt_sandbox_run *run, const char *sdir, char *err,
		      size_t errlen)
{
	const struct sbt_sandbox_spec *spec = c->spec;
	struct stat st;
	int ret;

	if (spec->workspace) {
		if (!spec->cwd)
			c->cwd = "/workspace";
		if (stat(spec->workspace, &st) == 0 && !S_ISDIR(st.st_mode))
			errno = ENOTDIR;
		else
			c->ws_fd = open_tree(AT_FDCWD, spec->workspace,
					     OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
		if (c->ws_fd < 0)
			return sbx_seterr(err, errlen, -errno, "workspace '%s': %s",
					  spec->workspace, strerror(errno));
	}
	ret = sbx_userns_prepare(c, err, errlen);
	return ret ? ret : sbx_declared_env(c, SBT_ENV_WORKLOAD, true, err, errlen);
}

static void ns_release(struct sbx_child *c, struct sbt_sandbox_run *run, bool failed)
{
	if (c->ws_fd >= 0)
		close(c->ws_fd);
	c->ws_fd = -1;
	sbt_env_free(&c->env);
	c->envp = NULL;
	sbx_userns_release(c);
}

/*
 * --net veth: a veth pair, eth0 inside the sandbox (addressed, up, default
 * route via the host end) and the host end in the caller's or the named
 * network namespace. Done from here, before the workload may run; `ip netns
 * attach` names the sandbox's namespace for the few commands and the name is
 * removed at once (the namespace lives on with its processes).
 */
static int veth_setup(const struct sbt_sandbox_spec *spec, pid_t pid, char *err, size_t errlen)
{
	char host[16], ns[40], pidstr[16], gw[64];
	const char *hns = spec->veth_host_netns;
	char *slash;
	int ret;

	snprintf(host, sizeof(host), "sbh%d", (int)pid % 100000000);
	snprintf(ns, sizeof(ns), "sbtrace-veth-%d", (int)pid);
	snprintf(pidstr, sizeof(pidstr), "%d", (int)pid);
	snprintf(gw, sizeof(gw), "%s", spec->veth_host_cidr);
	slash = strchr(gw, '/');
	if (slash)
		*slash = '\0';
	{
		char *attach[] = { "netns", "attach", ns, pidstr, NULL };

		ret = sbx_ip(NULL, attach, err, errlen);
		if (ret)
			return ret;
	}
	{
		char *add[] = { "link", "add",	host,	 "type", "veth", "peer",
				"name", "eth0", "netns", ns,	 NULL };
		char *addr_h[] = { "addr", "add", (char *)spec->veth_host_cidr, "dev", host, NULL };
		char *up_h[] = { "link", "set", host, "up", NULL };
		char *addr_s[] = { "addr", "add",  (char *)spec->veth_sandbox_cidr,
				   "dev",  "eth0", NULL };
		char *up_s[] = { "link", "set", "eth0", "up", NULL };
		char *route_s[] = { "route", "add", "default", "via", gw, NULL };

		ret = sbx_ip(hns, add, err, errlen);
		if (!ret)
			ret = sbx_ip(hns, addr_h, err, errlen);
		if (!ret)
			ret = sbx_ip(hns, up_h, err, errlen);
		if (!ret)
			ret = sbx_ip(ns, addr_s, err, errlen);
		if (!ret)
			ret = sbx_ip(ns, up_s, err, errlen);
		if (!ret)
			ret = sbx_ip(ns, route_s, err, errlen);
	}
	{
		char *detach[] = { "ip", "netns", "delete", ns, NULL };
		int st;

		sbt_run(detach, NULL, &st);
	}
	return ret;
}

static int ns_after_clone(struct sbx_child *c, struct sbt_sandbox_run *run, char *err,
			  size_t errlen)
{
	/* the v1 limits before the workload can run anything (it waits for the user namespace) */
	int ret = sbx_limits_join(run, run->pid, err, errlen);

	if (!ret)
		ret = sbx_userns_setup(c, run, err, errlen);
	if (ret || c->spec->net != SBT_NET_VETH)
		return ret;
	return veth_setup(c->spec, run->pid, err, errlen);
}

const struct sbt_backend_ops sbx_ns_ops = {
	.name = "ns",
	.caps = {
		.execs_on_host = true,
		.net_modes = SBT_NET_MODE(SBT_NET_NONE) | SBT_NET_MODE(SBT_NET_VETH),
		.workspace = SBT_WORKSPACE_BIND,
		.then = true,
	},
	.clone_flags = CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC |
		       CLONE_NEWNET,
	.prepare = ns_prepare,
	.child_main = ns_main,
	.after_clone = ns_after_clone,
	.release = ns_release,
};
