// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The `ns` sandbox backend (see sandbox.h).
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
 *   init    clones the workload W (again fork-like), reaps every child and,
 *           when W exits, exits with W's exit code (or 128+signal); the
 *           kernel then kills whatever is left in the pid namespace.
 *   W       stdin /dev/null, stdout/stderr from the spec, all other fds closed,
 *           chdir(cwd), HOME=/root, sbt_exec(SBT_EXEC_SANDBOXED): the first
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
 * without this it could write /proc/sys/kernel/core_pattern); a minimal /dev (tmpfs, read-only: bind mounts of the host's null,
 * zero, full, random, urandom, tty, the fd/std* symlinks, a tmpfs /dev/shm);
 * writable tmpfs on /tmp, /root (HOME) and /run (the host's /run, with its
 * unix sockets such as systemd's private one, must not be reachable); an
 * empty /sys (nothing mounted, so no cgroupfs); the workspace at /workspace,
 * a detached copy of its mount tree made by the caller (open_tree; so a
 * workspace under /tmp works), nosuid, nodev, read-only with workspace_ro.
 *
 * The podman backend (SBT_BACKEND_PODMAN): the same cgroup, pipes and clone3,
 * but CLONE_INTO_CGROUP alone: the child keeps the host's namespaces, root
 * and capabilities (a container engine needs them) and the caller's
 * environment. It sets up its stdio, signals, PR_SET_PDEATHSIG and setsid,
 * closes every other fd, reports ready and blocks on the go pipe exactly like
 * init; after go it becomes the tool itself (sbt_exec(SBT_EXEC_HOST): only an
 * allowlisted program), so run->pid is the tool and its exit status is the
 * workload's. Nothing executes in the cgroup before go. The containers the
 * tool starts are placed below the cgroup by the caller (--cgroup-parent);
 * runc also creates that path in every v1 hierarchy on a hybrid system, so
 * destroy (and gc) remove <v1 mount>/sbtrace/NAME trees as well.
 *
 * The qemu backend (SBT_BACKEND_QEMU): CLONE_INTO_CGROUP alone, like podman's. The
 * caller prepares everything before the clone: STATE_DIR/NAME.vm/initrd (the
 * guest's base initramfs, zero padding to a 4-byte boundary, then a second
 * newc archive with /sbt/run and the workspace, cpio.h; the kernel unpacks
 * both), the tap (below), the qemu command line and the console pipe. The
 * child takes stdin /dev/null, stdout the console pipe, fd 3 the tap, drops
 * every capability (securebits locked, no_new_privs: qemu needs none, as the
 * tap is open already and its files belong to root), reports ready, waits
 * for go and becomes qemu-system-x86_64 (sbt_exec(SBT_EXEC_HOST)), which
 * also runs under its own seccomp filter (-sandbox on). run->pid is qemu.
 *
 * The tap: the caller enters spec->tap_netns (setns on /run/netns/NAME, and
 * back), opens /dev/net/tun, TUNSETIFF IFF_TAP | IFF_NO_PI | IFF_VNET_HDR
 * (qemu probes the vnet header on a tap fd= and uses it) | IFF_TUN_EXCL (an
 * existing device of that name is an error, never attached to), and gives
 * the host side its addresses with `ip`. Not persistent: the tap exists as
 * long as an fd is attached, i.e. as long as qemu runs; destroy and gc
 * delete it by name only if it is still there with the recorded ifindex.
 *
 * The guest's kernel gets tsc_early_khz=<the host's TSC rate>: TCG's guest
 * TSC runs at the host TSC's rate, and without the hint the guest calibrates
 * it against emulated timers, which under TCG stalls about one boot in
 * five. The rate comes from the host kernel's own log (/dev/kmsg: "tsc:
 * Refined TSC clocksource calibration: N MHz", else "tsc: Detected N MHz
 * processor"), else from counting TSC ticks over 20 ms of CLOCK_MONOTONIC_RAW
 * (x86); /proc/cpuinfo's "cpu MHz" is not used, as with cpufreq it is the
 * current core clock, not the TSC's.
 *
 * Requirements: Linux 5.12 (clone3 CLONE_INTO_CGROUP 5.7, mount_setattr
 * 5.12), root, a single-threaded caller (the child of a raw clone3 must not
 * find a lock held by another thread; the child avoids malloc; the tap set-up
 * switches the calling thread's network namespace for a moment).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <arpa/inet.h>
#include <linux/capability.h>
#include <linux/if_tun.h>
#include <linux/magic.h>
#include <linux/securebits.h>
#include <json-c/json.h>

#include "clock.h"
#include "cgroupfs.h"
#include "cpio.h"
#include "extbin.h"
#include "io.h"
#include "netns.h"
#include "sandbox.h"

static int veth_setup(const struct sbt_sandbox_spec *spec, pid_t pid, char *err, size_t errlen);

/* The cgroup v2 mount point. 0 or -errno. */
static int cgroup2_mount(char *mnt, size_t len)
{
	char root[PATH_MAX];

	return sbt_cgroup2_mount(mnt, len, root, sizeof(root));
}
struct vm_prep;
static int vm_prepare(const struct sbt_sandbox_spec *spec, struct sbt_sandbox_run *run,
		      const char *sdir, struct vm_prep **out, char *err, size_t errlen);
static void vm_prep_free(struct vm_prep *v);
static void vm_dir_remove(const char *dir);
static int check_state_dir(const char *dir, bool create);
static bool netns_name_ok(const char *n);
static int vm_addrs(const struct sbt_sandbox_spec *spec, char *append, size_t len,
		    char (*guest)[64], int *nr_guest, char *err, size_t errlen);

#ifndef CLONE_INTO_CGROUP
#define CLONE_INTO_CGROUP 0x200000000ULL
#endif

#define STATE_MAX_BYTES 65536u
#define PID_LIMIT	4194304 /* PID_MAX_LIMIT on 64-bit */
#define STAGE		"/tmp"	/* where the new root is built, in the new mount ns */
#define KILL_WAIT_MS	5000
#define GC_MIN_AGE_SEC	10 /* orphan cgroups younger than this may be starting */
#define READY_OK	'+'
#define READY_ERR	'-'

/* struct clone_args up to CLONE_ARGS_SIZE_VER2 (own copy: <linux/sched.h> clashes with glibc). */
struct sbt_clone_args {
	uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls;
	uint64_t set_tid, set_tid_size, cgroup;
};

/* What the child needs; lives in the caller's memory, copied by the clone. */
struct child_ctx {
	const struct sbt_sandbox_spec *spec;
	const char *cwd;
	char **envp;
	int ready_w, go_r, ws_fd;
	/* the qemu backend */
	char **vm_argv;
	int console_w, tap_fd;
};

#define VM_TAP_FD 3 /* where qemu finds the tap: -netdev tap,fd=3 */
#define STR(x)	  #x
#define XSTR(x)	  STR(x)

#define VM_QEMU	    "qemu-system-x86_64"
#define VM_ARGV_MAX 40
#define VM_MACHINE  "microvm,x-option-roms=off,isa-serial=on,rtc=on"
#define VM_SECCOMP  "on,obsolete=deny,elevateprivileges=deny,spawn=deny,resourcecontrol=deny"
#define VM_CMDLINE  "console=ttyS0 quiet reboot=t panic=-1"

/* What the clone needs for the VM; freed by the caller after the clone. */
struct vm_prep {
	char *argv[VM_ARGV_MAX];
	char *env[2];
	char path_env[4096];
	char mem[16], kernel[PATH_MAX], initrd[PATH_MAX], append[1024], device[96];
	int tap_fd;
	int console[2];
};

/* ---- small helpers ----------------------------------------------------- */

static int seterr(char *err, size_t errlen, int ret, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int seterr(char *err, size_t errlen, int ret, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return ret;
}

static bool str_fits(char *dst, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* snprintf that says whether everything fitted. */
static bool str_fits(char *dst, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(dst, len, fmt, ap);
	va_end(ap);
	return n >= 0 && (size_t)n < len;
}

/* Read a whole (small) file into a NUL-terminated malloc'd buffer; NULL with errno set. */
static char *slurp(const char *path, size_t max, size_t *lenp)
{
	size_t cap = 4096, len = 0;
	char *buf = malloc(cap), *nb;
	int fd, e;
	ssize_t n;

	if (!buf)
		return NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		e = errno;
		free(buf);
		errno = e;
		return NULL;
	}
	for (;;) {
		if (len + 1 >= cap) {
			nb = realloc(buf, cap * 2);
			if (!nb) {
				e = ENOMEM;
				goto fail;
			}
			buf = nb;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			e = errno;
			goto fail;
		}
		if (n == 0)
			break;
		len += (size_t)n;
		if (len > max) {
			e = EFBIG;
			goto fail;
		}
	}
	close(fd);
	buf[len] = '\0';
	if (lenp)
		*lenp = len;
	return buf;
fail:
	free(buf);
	close(fd);
	errno = e;
	return NULL;
}

bool sbt_sandbox_name_ok(const char *name)
{
	size_t n;

	if (!name || !name[0] || name[0] == '.')
		return false;
	for (n = 0; name[n]; n++) {
		char c = name[n];

		if (n >= SBT_SANDBOX_NAME_MAX)
			return false;
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '.' || c == '-'))
			return false;
	}
	return true;
}

/* ---- killing and removing a cgroup -------------------------------------- */

/* "populated 0" in cgroup.events: no live process in the cgroup or below. */
static bool cgroup_empty(const char *cg)
{
	char path[PATH_MAX], *ev, *p;
	bool empty = false;

	if (!str_fits(path, sizeof(path), "%s/cgroup.events", cg))
		return false;
	ev = slurp(path, 1u << 16, NULL);
	if (!ev)
		return errno == ENOENT;
	p = strstr(ev, "populated ");
	if (p && (p == ev || p[-1] == '\n'))
		empty = p[10] == '0';
	free(ev);
	return empty;
}

/* SIGKILL every process in the cgroup and below: cgroup.kill, else one by one. */
static void cgroup_kill(const char *cg)
{
	char path[PATH_MAX], *procs, *p, *end;
	int fd;

	if (!str_fits(path, sizeof(path), "%s/cgroup.kill", cg))
		return;
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		int ret = sbt_write_all(fd, "1", 1);

		close(fd);
		if (!ret)
			return;
	}
	/* Before Linux 5.14: kill what cgroup.procs lists until it stays empty (bounded). */
	if (!str_fits(path, sizeof(path), "%s/cgroup.procs", cg))
		return;
	for (int round = 0; round < 100; round++) {
		bool any = false;

		procs = slurp(path, 16u << 20, NULL);
		if (!procs)
			return;
		for (p = procs; *p; p = end) {
			long pid = strtol(p, &end, 10);

			if (end == p)
				break;
			if (pid > 0 && kill((pid_t)pid, SIGKILL) == 0)
				any = true;
		}
		free(procs);
		if (!any)
			return;
		sbt_sleep_ms(10);
	}
}

/* rmdir a cgroup and any child cgroups, depth first (bounded depth). */
static int cgroup_rmdir_tree(const char *cg, int depth)
{
	DIR *d;
	struct dirent *de;

	if (rmdir(cg) == 0 || errno == ENOENT)
		return 0;
	/* cgroupfs says EBUSY for a cgroup with child cgroups (and for one with tasks) */
	if (errno != ENOTEMPTY && errno != EEXIST && errno != EBUSY)
		return -errno;
	if (depth > 16)
		return -ENOTEMPTY;
	d = opendir(cg);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		char sub[PATH_MAX];

		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		if (str_fits(sub, sizeof(sub), "%s/%s", cg, de->d_name))
			cgroup_rmdir_tree(sub, depth + 1);
	}
	closedir(d);
	return rmdir(cg) == 0 || errno == ENOENT ? 0 : -errno;
}

/* Kill everything in the cgroup, wait for it to empty, remove it (retrying on EBUSY). */
static int cgroup_destroy(const char *cg)
{
	int ret = 0;

	cgroup_kill(cg);
	for (int waited = 0; waited < KILL_WAIT_MS; waited += 10) {
		ret = cgroup_rmdir_tree(cg, 0);
		if (ret != -EBUSY && ret != -ENOTEMPTY)
			return ret;
		if (waited % 500 == 490)
			cgroup_kill(cg);
		sbt_sleep_ms(10);
	}
	return ret;
}

static void attach_path(const char *state_file, char *out, size_t len)
{
	size_t n = strlen(state_file);

	out[0] = '\0';
	if (n > 5 && strcmp(state_file + n - 5, ".json") == 0 && n + 2 < len)
		snprintf(out, len, "%.*s.attach", (int)(n - 5), state_file);
}

/* ---- the child: init ---------------------------------------------------- */

static void child_fail(const struct child_ctx *c, int err, const char *fmt, ...)
	__attribute__((noreturn, format(printf, 3, 4)));

static void child_fail(const struct child_ctx *c, int err, const char *fmt, ...)
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

static void mnt(const struct child_ctx *c, const char *src, const char *dst, const char *type,
		unsigned long flags, const char *data)
{
	if (mount(src, dst, type, flags, data))
		child_fail(c, errno, "mount %s on %s: %s", type ? type : src, dst, strerror(errno));
}

static void mnt_attr(const struct child_ctx *c, int dfd, const char *path, unsigned int flags,
		     uint64_t attrs)
{
	struct mount_attr a = { .attr_set = attrs };

	if (mount_setattr(dfd, path, flags, &a, sizeof(a)))
		child_fail(c, errno, "mount_setattr %s: %s (needs Linux 5.12+)", path,
			   strerror(errno));
}

static void mkdir_or_fail(const struct child_ctx *c, const char *path, mode_t mode)
{
	if (mkdir(path, mode) && errno != EEXIST)
		child_fail(c, errno, "mkdir %s: %s", path, strerror(errno));
}

static void touch_or_fail(const struct child_ctx *c, const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);

	if (fd < 0)
		child_fail(c, errno, "create %s: %s", path, strerror(errno));
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
static void bind_host_root(const struct child_ctx *c)
{
	char buf[8192], src[PATH_MAX], dst[PATH_MAX], target[PATH_MAX];
	int rootfd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	long n;

	if (rootfd < 0)
		child_fail(c, errno, "open /: %s", strerror(errno));
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
			if (!str_fits(src, sizeof(src), "/%s", de->d_name) ||
			    !str_fits(dst, sizeof(dst), STAGE "/%s", de->d_name))
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
					child_fail(c, errno, "symlink %s: %s", dst,
						   strerror(errno));
			}
			/* top-level files (a swap file...) stay out */
		}
	}
	if (n < 0)
		child_fail(c, errno, "read /: %s", strerror(errno));
	close(rootfd);
}

/* proc of the new pid namespace, with the host-wide knobs read-only or masked. */
static void mount_proc(const struct child_ctx *c)
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

/* A minimal /dev: the harmless character devices, bound from the host's. */
static void mount_dev(const struct child_ctx *c)
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
			child_fail(c, errno, "symlink %s: %s", dst, strerror(errno));
	}
	mkdir_or_fail(c, STAGE "/dev/shm", 01777);
	mnt(c, "tmpfs", STAGE "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=1777");
	mnt_attr(c, AT_FDCWD, STAGE "/dev", 0, MOUNT_ATTR_RDONLY);
}

/*
 * The workspace: a detached copy of its mount tree the caller made with
 * open_tree(OPEN_TREE_CLONE) (by now its path may be hidden, and a path or fd
 * of the caller's mount namespace cannot be bound from this one).
 */
static void mount_workspace(const struct child_ctx *c)
{
	uint64_t attrs = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;

	mkdir_or_fail(c, STAGE "/workspace", 0755);
	if (c->spec->workspace_ro)
		attrs |= MOUNT_ATTR_RDONLY;
	mnt_attr(c, c->ws_fd, "", AT_EMPTY_PATH | AT_RECURSIVE, attrs);
	if (move_mount(c->ws_fd, "", AT_FDCWD, STAGE "/workspace", MOVE_MOUNT_F_EMPTY_PATH))
		child_fail(c, errno, "mount workspace %s on /workspace: %s", c->spec->workspace,
			   strerror(errno));
}

static void build_root(const struct child_ctx *c)
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
	mnt(c, "tmpfs", STAGE "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777");
	mnt(c, "tmpfs", STAGE "/root", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0700");
	mnt(c, "tmpfs", STAGE "/run", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755");
	if (c->ws_fd >= 0) {
		mount_workspace(c);
		close(c->ws_fd);
	}
	mnt_attr(c, AT_FDCWD, STAGE, 0, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
	/* pivot_root(".", "."): the old root ends up on top of the new one; detach it. */
	if (chdir(STAGE) || syscall(SYS_pivot_root, ".", ".") || umount2(".", MNT_DETACH) ||
	    chdir("/"))
		child_fail(c, errno, "pivot_root to the new root: %s", strerror(errno));
}

static void lo_up(const struct child_ctx *c)
{
	struct ifreq ifr;
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (s < 0)
		child_fail(c, errno, "socket: %s", strerror(errno));
	memset(&ifr, 0, sizeof(ifr));
	memcpy(ifr.ifr_name, "lo", 3);
	if (ioctl(s, SIOCGIFFLAGS, &ifr))
		child_fail(c, errno, "SIOCGIFFLAGS lo: %s", strerror(errno));
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(s, SIOCSIFFLAGS, &ifr))
		child_fail(c, errno, "bring lo up: %s", strerror(errno));
	close(s);
}

/* No capability in any set, none to regain (securebits locked), no_new_privs. */
static void drop_privileges(const struct child_ctx *c)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2];
	unsigned long bits = SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
			     SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED |
			     SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED;

	if (prctl(PR_SET_SECUREBITS, bits, 0, 0, 0))
		child_fail(c, errno, "PR_SET_SECUREBITS: %s", strerror(errno));
	for (unsigned long cap = 0; cap < 64; cap++) {
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) == 0)
			continue;
		if (errno == EINVAL) /* past the kernel's last capability */
			break;
		child_fail(c, errno, "PR_CAPBSET_DROP %lu: %s", cap, strerror(errno));
	}
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) && errno != EINVAL)
		child_fail(c, errno, "clear ambient capabilities: %s", strerror(errno));
	memset(data, 0, sizeof(data));
	if (syscall(SYS_capset, &hdr, data))
		child_fail(c, errno, "capset: %s", strerror(errno));
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		child_fail(c, errno, "PR_SET_NO_NEW_PRIVS: %s", strerror(errno));
	/* W inherits this until its exec: it cannot ptrace init or read /proc/1/mem. */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0))
		child_fail(c, errno, "PR_SET_DUMPABLE: %s", strerror(errno));
}

/* Close every fd but those in keep[] (-1 entries ignored). */
static void close_fds_except(int *keep, int n)
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

static pid_t raw_clone(uint64_t flags, int cgroup_fd)
{
	struct sbt_clone_args a;

	memset(&a, 0, sizeof(a));
	a.flags = flags;
	a.exit_signal = SIGCHLD;
	if (cgroup_fd >= 0)
		a.cgroup = (uint64_t)cgroup_fd;
	return (pid_t)syscall(SYS_clone3, &a, sizeof(a));
}

static void workload(const struct child_ctx *c) __attribute__((noreturn));

static void workload(const struct child_ctx *c)
{
	const struct sbt_sandbox_spec *spec = c->spec;
	int out = spec->stdout_fd >= 0 ? fcntl(spec->stdout_fd, F_DUPFD_CLOEXEC, 10) : -1;
	int err = spec->stderr_fd >= 0 ? fcntl(spec->stderr_fd, F_DUPFD_CLOEXEC, 10) : -1;
	int null = open("/dev/null", O_RDONLY);
	int ret;

	if (null < 0 || dup2(null, 0) < 0 || (out >= 0 && dup2(out, 1) < 0) ||
	    (err >= 0 && dup2(err, 2) < 0)) {
		dprintf(2, "sandbox %s: stdio: %s\n", spec->name, strerror(errno));
		_exit(127);
	}
	close_range(3, ~0u, 0);
	if (chdir(c->cwd)) {
		dprintf(2, "sandbox %s: chdir %s: %s\n", spec->name, c->cwd, strerror(errno));
		_exit(127);
	}
	environ = c->envp;
	ret = sbt_exec(SBT_EXEC_SANDBOXED, spec->argv);
	dprintf(2, "sandbox %s: cannot execute '%s': %s\n", spec->name, spec->argv[0],
		strerror(-ret));
	_exit(127);
}

static void child_main(struct child_ctx *c) __attribute__((noreturn));

/* Tell the caller the set-up is done, then block until it says go (EOF: it is gone). */
static void ready_then_wait_go(struct child_ctx *c)
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

static void child_main(struct child_ctx *c)
{
	const struct sbt_sandbox_spec *spec = c->spec;
	int keep[] = { 0, 1, 2, spec->stdout_fd, spec->stderr_fd, c->ready_w, c->go_r };
	struct stat st;
	pid_t w;

	reset_signals();
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0))
		child_fail(c, errno, "PR_SET_PDEATHSIG: %s", strerror(errno));
	/* a fork of the tracer or shim: name it for what it is in ancestor chains */
	prctl(PR_SET_NAME, "sandbox-init", 0, 0, 0);
	setsid();
	if (unshare(CLONE_NEWCGROUP))
		child_fail(c, errno, "unshare(CLONE_NEWCGROUP): %s", strerror(errno));
	if (sethostname(spec->name, strlen(spec->name)))
		child_fail(c, errno, "sethostname: %s", strerror(errno));
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		child_fail(c, errno, "make mounts private: %s", strerror(errno));
	build_root(c);
	if (stat(c->cwd, &st) || !S_ISDIR(st.st_mode))
		child_fail(c, ENOENT, "cwd %s: not a directory inside the sandbox", c->cwd);
	lo_up(c);
	drop_privileges(c);
	close_fds_except(keep, (int)(sizeof(keep) / sizeof(keep[0])));

	ready_then_wait_go(c);

	w = raw_clone(0, -1);
	if (w == 0)
		workload(c);
	if (w < 0) {
		dprintf(spec->stderr_fd >= 0 ? spec->stderr_fd : 2,
			"sandbox %s: cannot start the workload: %s\n", spec->name, strerror(errno));
		_exit(126);
	}
	for (;;) {
		int status;
		pid_t p = waitpid(-1, &status, __WALL);

		if (p < 0 && errno == EINTR)
			continue;
		if (p < 0)
			_exit(126);
		if (p == w)
			_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
	}
}

/* The podman backend's child: the caller's privileges, waits for go, then the tool. */
static void host_tool_main(struct child_ctx *c) __attribute__((noreturn));

static void host_tool_main(struct child_ctx *c)
{
	const struct sbt_sandbox_spec *spec = c->spec;
	int out = spec->stdout_fd >= 0 ? fcntl(spec->stdout_fd, F_DUPFD_CLOEXEC, 10) : -1;
	int err = spec->stderr_fd >= 0 ? fcntl(spec->stderr_fd, F_DUPFD_CLOEXEC, 10) : -1;
	int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
	int keep[] = { 0, 1, 2, c->ready_w, c->go_r };
	int ret;

	reset_signals();
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0))
		child_fail(c, errno, "PR_SET_PDEATHSIG: %s", strerror(errno));
	prctl(PR_SET_NAME, "sandbox-tool", 0, 0, 0);
	setsid();
	if (null < 0 || dup2(null, 0) < 0 || (out >= 0 && dup2(out, 1) < 0) ||
	    (err >= 0 && dup2(err, 2) < 0))
		child_fail(c, errno, "stdio: %s", strerror(errno));
	if (chdir(c->cwd))
		child_fail(c, errno, "chdir %s: %s", c->cwd, strerror(errno));
	close_fds_except(keep, (int)(sizeof(keep) / sizeof(keep[0])));

	ready_then_wait_go(c);
	environ = c->envp;
	ret = sbt_exec(SBT_EXEC_HOST, spec->argv);
	dprintf(2, "sandbox %s: cannot execute '%s': %s\n", spec->name, spec->argv[0],
		ret == -EPERM ? "not on the host tool allowlist" : strerror(-ret));
	_exit(127);
}

/* The qemu backend's child: the console and the tap in place, no capabilities, then qemu. */
static void vm_main(struct child_ctx *c) __attribute__((noreturn));

static void vm_main(struct child_ctx *c)
{
	const struct sbt_sandbox_spec *spec = c->spec;
	/* Above the slots they go to (0-3), so no dup2 below overwrites another. */
	int out = fcntl(c->console_w, F_DUPFD_CLOEXEC, 10);
	int tap = fcntl(c->tap_fd, F_DUPFD_CLOEXEC, 10);
	int err = spec->stderr_fd >= 0 ? fcntl(spec->stderr_fd, F_DUPFD_CLOEXEC, 10) : -1;
	int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
	int ready_w = fcntl(c->ready_w, F_DUPFD_CLOEXEC, 10);
	int go_r = fcntl(c->go_r, F_DUPFD_CLOEXEC, 10);
	int keep[] = { 0, 1, 2, VM_TAP_FD, -1, -1 };
	int ret;

	if (ready_w >= 0)
		c->ready_w = ready_w;
	if (go_r >= 0)
		c->go_r = go_r;
	keep[4] = c->ready_w;
	keep[5] = c->go_r;
	reset_signals();
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0))
		child_fail(c, errno, "PR_SET_PDEATHSIG: %s", strerror(errno));
	prctl(PR_SET_NAME, "sandbox-vm", 0, 0, 0);
	setsid();
	if (out < 0 || tap < 0 || ready_w < 0 || go_r < 0 || null < 0 || dup2(null, 0) < 0 ||
	    dup2(out, 1) < 0 || (err >= 0 && dup2(err, 2) < 0) || dup2(tap, VM_TAP_FD) < 0)
		child_fail(c, errno, "stdio and tap fds: %s", strerror(errno));
	if (chdir("/"))
		child_fail(c, errno, "chdir /: %s", strerror(errno));
	close_fds_except(keep, (int)(sizeof(keep) / sizeof(keep[0])));
	drop_privileges(c);

	ready_then_wait_go(c);
	environ = c->envp;
	ret = sbt_exec(SBT_EXEC_HOST, c->vm_argv);
	dprintf(2, "sandbox %s: cannot execute '%s': %s\n", spec->name, c->vm_argv[0],
		ret == -EPERM ? "not on the host tool allowlist" : strerror(-ret));
	_exit(127);
}

/* ---- the caller's side -------------------------------------------------- */

/* The caller's environment with HOME=/root and PWD=cwd; TMPDIR (a host path) dropped. */
static char **build_env(const char *cwd, char **pwd)
{
	size_t n = 0, o = 0;
	char **env;

	for (char **e = environ; e && *e; e++)
		n++;
	env = calloc(n + 3, sizeof(*env));
	*pwd = malloc(strlen(cwd) + 5);
	if (!env || !*pwd) {
		free(env);
		free(*pwd);
		*pwd = NULL;
		return NULL;
	}
	for (char **e = environ; e && *e; e++)
		if (strncmp(*e, "HOME=", 5) != 0 && strncmp(*e, "PWD=", 4) != 0 &&
		    strncmp(*e, "OLDPWD=", 7) != 0 && strncmp(*e, "TMPDIR=", 7) != 0)
			env[o++] = *e;
	env[o++] = (char *)"HOME=/root";
	sprintf(*pwd, "PWD=%s", cwd);
	env[o++] = *pwd;
	env[o] = NULL;
	return env;
}

static void run_reset(struct sbt_sandbox_run *run)
{
	memset(run, 0, sizeof(*run));
	run->go_fd = -1;
	run->ready_fd = -1;
	run->console_fd = -1;
}

/* An executable `prog` in one of PATH's directories (as execvp will look). */
static bool in_path(const char *prog)
{
	const char *path = getenv("PATH"), *p, *end;
	char full[PATH_MAX];

	for (p = path && *path ? path : "/usr/local/bin:/usr/bin:/bin"; *p; p = end) {
		end = strchr(p, ':');
		if (!end)
			end = p + strlen(p);
		if (end > p && str_fits(full, sizeof(full), "%.*s/%s", (int)(end - p), p, prog) &&
		    access(full, X_OK) == 0)
			return true;
		if (*end == ':')
			end++;
	}
	return false;
}

int sbt_sandbox_check(const struct sbt_sandbox_spec *spec, char *err, size_t errlen)
{
	char path[PATH_MAX];
	struct stat st;

	if (!spec || !spec->name || !sbt_sandbox_name_ok(spec->name))
		return seterr(err, errlen, -EINVAL,
			      "sandbox name '%s': use 1-%d characters [A-Za-z0-9_.-], not starting "
			      "with '.'",
			      spec && spec->name ? spec->name : "", SBT_SANDBOX_NAME_MAX);
	if (!spec->argv || !spec->argv[0] || !spec->argv[0][0])
		return seterr(err, errlen, -EINVAL, "sandbox %s: no workload command", spec->name);
	if (spec->net != SBT_NET_NONE &&
	    (spec->net != SBT_NET_VETH || spec->backend == SBT_BACKEND_PODMAN ||
	     !spec->veth_host_cidr || !spec->veth_sandbox_cidr))
		return seterr(err, errlen, -EINVAL,
			      "sandbox %s: network mode %d needs the ns backend and both veth "
			      "addresses",
			      spec->name, (int)spec->net);
	if (spec->backend == SBT_BACKEND_PODMAN && spec->workspace)
		return seterr(err, errlen, -EINVAL,
			      "sandbox %s: a host-tool sandbox has no workspace (the tool reads "
			      "host paths)",
			      spec->name);
	if (spec->backend == SBT_BACKEND_QEMU && (spec->net != SBT_NET_NONE || spec->cwd))
		return seterr(err, errlen, -EINVAL,
			      "sandbox %s: a qemu sandbox takes no host tool, network mode or cwd "
			      "(its network is the tap)",
			      spec->name);
	if (spec->backend == SBT_BACKEND_QEMU && (!spec->guest_dir || !spec->guest_dir[0]))
		return seterr(err, errlen, -EINVAL,
			      "sandbox %s: no guest: build one with scripts/guest-build.sh and "
			      "give the directory it prints",
			      spec->name);
	if (spec->backend == SBT_BACKEND_PODMAN && !sbt_extbin_allowed(spec->argv[0]))
		return seterr(err, errlen, -EPERM,
			      "sandbox %s: '%s' is not on the host tool allowlist", spec->name,
			      spec->argv[0]);
	if (spec->cwd && spec->cwd[0] != '/')
		return seterr(err, errlen, -EINVAL, "sandbox %s: cwd '%s' must be absolute",
			      spec->name, spec->cwd);
	if (spec->backend != SBT_BACKEND_QEMU)
		return 0;
	if (spec->vm_mem_mb &&
	    (spec->vm_mem_mb < SBT_VM_MEM_MIN_MB || spec->vm_mem_mb > SBT_VM_MEM_MAX_MB))
		return seterr(err, errlen, -EINVAL, "sandbox %s: VM memory %u MiB: give %d-%d",
			      spec->name, spec->vm_mem_mb, SBT_VM_MEM_MIN_MB, SBT_VM_MEM_MAX_MB);
	if (spec->tap_netns && !netns_name_ok(spec->tap_netns))
		return seterr(err, errlen, -EINVAL,
			      "sandbox %s: '%s' is not a network namespace name (ip netns list)",
			      spec->name, spec->tap_netns);
	if (spec->tap_netns &&
	    (!str_fits(path, sizeof(path), "/run/netns/%s", spec->tap_netns) || stat(path, &st)))
		return seterr(err, errlen, -ENOENT,
			      "sandbox %s: no network namespace %s (/run/netns/%s); create it with "
			      "'ip netns add'",
			      spec->name, spec->tap_netns, spec->tap_netns);
	if (!in_path(VM_QEMU))
		return seterr(err, errlen, -ENOENT,
			      "sandbox %s: %s is not in PATH (Debian: apt-get install "
			      "qemu-system-x86)",
			      spec->name, VM_QEMU);
	if (!str_fits(path, sizeof(path), "%s/vmlinux", spec->guest_dir) || stat(path, &st) ||
	    !S_ISREG(st.st_mode))
		return seterr(err, errlen, -ENOENT,
			      "sandbox %s: no guest kernel %s; build the guest with "
			      "scripts/guest-build.sh and give the directory it prints",
			      spec->name, path);
	return vm_addrs(spec, NULL, 0, NULL, NULL, err, errlen);
}

int sbt_sandbox_start(const struct sbt_sandbox_spec *spec, struct sbt_sandbox_run *run, char *err,
		      size_t errlen)
{
	struct child_ctx c = {
		.spec = spec, .ready_w = -1, .go_r = -1, .ws_fd = -1, .console_w = -1, .tap_fd = -1
	};
	struct vm_prep *vm = NULL;
	int ready[2] = { -1, -1 }, go[2] = { -1, -1 }, cgfd = -1, ret = 0;
	char mnt_point[PATH_MAX], parent[PATH_MAX], *pwd = NULL;
	const char *sdir;
	struct stat st;
	bool made = false;
	pid_t pid;

	run_reset(run);
	ret = sbt_sandbox_check(spec, err, errlen);
	if (ret)
		return ret;
	c.cwd = spec->cwd					       ? spec->cwd
		: spec->workspace && spec->backend != SBT_BACKEND_QEMU ? "/workspace"
								       : "/";
	sdir = spec->state_dir ? spec->state_dir : SBT_STATE_DIR_DEFAULT;
	if (!str_fits(run->state_file, sizeof(run->state_file), "%s/%s.json", sdir, spec->name))
		return seterr(err, errlen, -ENAMETOOLONG, "state dir '%s': path too long", sdir);
	if (lstat(run->state_file, &st) == 0) {
		ret = seterr(
			err, errlen, -EEXIST,
			"sandbox %s exists (state file %s); run sbtrace-shim gc or pick another "
			"name",
			spec->name, run->state_file);
		goto fail;
	}
	snprintf(run->name, sizeof(run->name), "%s", spec->name);

	if (spec->workspace &&
	    spec->backend != SBT_BACKEND_QEMU) { /* the VM gets a copy, see vm_initrd() */
		if (stat(spec->workspace, &st) == 0 && !S_ISDIR(st.st_mode))
			errno = ENOTDIR;
		else
			c.ws_fd = open_tree(AT_FDCWD, spec->workspace,
					    OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
		if (c.ws_fd < 0) {
			ret = seterr(err, errlen, -errno, "workspace '%s': %s", spec->workspace,
				     strerror(errno));
			goto fail;
		}
	}
	ret = cgroup2_mount(mnt_point, sizeof(mnt_point));
	if (ret) {
		seterr(err, errlen, ret, "no cgroup v2 mount found in /proc/self/mountinfo: %s",
		       strerror(-ret));
		goto fail;
	}
	if (!str_fits(parent, sizeof(parent), "%s/sbtrace", mnt_point) ||
	    !str_fits(run->cgroup_path, sizeof(run->cgroup_path), "%s/%s", parent, spec->name) ||
	    !str_fits(run->cgroup_name, sizeof(run->cgroup_name), "/sbtrace/%s", spec->name)) {
		ret = seterr(err, errlen, -ENAMETOOLONG, "cgroup path too long");
		goto fail;
	}
	if (mkdir(parent, 0755) && errno != EEXIST) {
		ret = seterr(err, errlen, -errno, "create cgroup %s: %s", parent, strerror(errno));
		goto fail;
	}
	if (mkdir(run->cgroup_path, 0755)) {
		if (errno == EEXIST)
			ret = seterr(err, errlen, -EEXIST,
				     "sandbox %s exists (cgroup %s); run sbtrace-shim gc or pick "
				     "another name",
				     spec->name, run->cgroup_path);
		else
			ret = seterr(err, errlen, -errno, "create cgroup %s: %s", run->cgroup_path,
				     strerror(errno));
		goto fail;
	}
	made = true;
	cgfd = open(run->cgroup_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	run->cgroup_id = sbt_cgroup_id(run->cgroup_path);
	if (cgfd < 0 || !run->cgroup_id) {
		ret = seterr(err, errlen, -errno, "open cgroup %s: %s", run->cgroup_path,
			     strerror(errno));
		goto fail;
	}
	if (spec->backend == SBT_BACKEND_QEMU) {
		ret = vm_prepare(spec, run, sdir, &vm, err, errlen);
		if (!ret && !vm)
			ret = -ENOMEM;
		if (ret)
			goto fail;
		c.vm_argv = vm->argv;
		c.console_w = vm->console[1];
		c.tap_fd = vm->tap_fd;
	}
	/* The host tool gets the caller's environment as it is (not owned: not freed). */
	if (spec->backend == SBT_BACKEND_QEMU)
		c.envp = vm->env;
	else
		c.envp = spec->backend == SBT_BACKEND_PODMAN ? environ : build_env(c.cwd, &pwd);
	if (!c.envp) {
		ret = seterr(err, errlen, -ENOMEM, "out of memory");
		goto fail;
	}
	if (pipe2(ready, O_CLOEXEC) || pipe2(go, O_CLOEXEC)) {
		ret = seterr(err, errlen, -errno, "pipe: %s", strerror(errno));
		goto fail;
	}
	c.ready_w = ready[1];
	c.go_r = go[0];
	run->start_ns = sbt_clock_ns(CLOCK_REALTIME);
	if (spec->backend != SBT_BACKEND_NS)
		pid = raw_clone(CLONE_INTO_CGROUP, cgfd);
	else
		pid = raw_clone(CLONE_INTO_CGROUP | CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWUTS |
					CLONE_NEWIPC | CLONE_NEWNET,
				cgfd);
	if (pid == 0) {
		if (spec->backend == SBT_BACKEND_QEMU)
			vm_main(&c);
		if (spec->backend == SBT_BACKEND_PODMAN)
			host_tool_main(&c);
		child_main(&c);
	}
	if (pid < 0) {
		ret = seterr(err, errlen, -errno,
			     "clone3 into cgroup %s%s: %s (needs root and Linux 5.7+)",
			     run->cgroup_path,
			     spec->backend != SBT_BACKEND_NS ? "" : " with new namespaces",
			     strerror(errno));
		goto fail;
	}
	run->pid = pid;
	run->backend = spec->backend;
	if (vm) {
		/* The child holds the tap and the console's write end now. */
		run->console_fd = vm->console[0];
		vm->console[0] = -1;
	}
	if (spec->net == SBT_NET_VETH) {
		ret = veth_setup(spec, pid, err, errlen);
		if (ret) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
			run->pid = 0;
			goto fail;
		}
	}
	run->ready_fd = ready[0];
	run->go_fd = go[1];
	ready[0] = go[1] = -1;
	ret = 0;
fail:
	for (int i = 0; i < 2; i++) {
		if (ready[i] >= 0)
			close(ready[i]);
		if (go[i] >= 0)
			close(go[i]);
	}
	if (cgfd >= 0)
		close(cgfd);
	if (c.ws_fd >= 0)
		close(c.ws_fd);
	if (spec->backend == SBT_BACKEND_NS)
		free(c.envp);
	free(pwd);
	vm_prep_free(vm); /* the tap stays while the child holds it */
	if (ret) {
		if (made)
			rmdir(run->cgroup_path);
		vm_dir_remove(run->vm_dir);
		run_reset(run);
	}
	return ret;
}

/* Run `ip ARGS...` (allowlisted host tool); 0, or -EIO with err naming the command. */
static int ip_cmd(char *err, size_t errlen, char **argv)
{
	int st = 0, rc = sbt_run(argv, NULL, &st);

	if (rc == 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 0;
	{
		char cmd[256] = "";

		for (char **a = argv; *a; a++)
			if (strlen(cmd) + strlen(*a) + 2 < sizeof(cmd)) {
				strcat(cmd, *a);
				strcat(cmd, " ");
			}
		return seterr(err, errlen, -EIO, "'%s' failed (%s)", cmd,
			      rc ? strerror(-rc) : "non-zero exit");
	}
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
		char *attach[] = { "ip", "netns", "attach", ns, pidstr, NULL };

		ret = ip_cmd(err, errlen, attach);
		if (ret)
			return ret;
	}
	{
		char *add_h[] = { "ip",	  "link", "add",  host,	   "type", "veth",
				  "peer", "name", "eth0", "netns", ns,	   NULL };
		char *add_n[] = { "ip",	  "-n",	  (char *)hns, "link", "add",	host, "type",
				  "veth", "peer", "name",      "eth0", "netns", ns,   NULL };
		char *addr_h[] = { "ip",  "addr", "add", (char *)spec->veth_host_cidr,
				   "dev", host,	  NULL };
		char *addr_n[] = { "ip",   "-n",  (char *)hns,
				   "addr", "add", (char *)spec->veth_host_cidr,
				   "dev",  host,  NULL };
		char *up_h[] = { "ip", "link", "set", host, "up", NULL };
		char *up_n[] = { "ip", "-n", (char *)hns, "link", "set", host, "up", NULL };
		char *addr_s[] = { "ip",   "-n",   ns,
				   "addr", "add",  (char *)spec->veth_sandbox_cidr,
				   "dev",  "eth0", NULL };
		char *up_s[] = { "ip", "-n", ns, "link", "set", "eth0", "up", NULL };
		char *route_s[] = { "ip", "-n", ns, "route", "add", "default", "via", gw, NULL };

		ret = ip_cmd(err, errlen, hns ? add_n : add_h);
		if (!ret)
			ret = ip_cmd(err, errlen, hns ? addr_n : addr_h);
		if (!ret)
			ret = ip_cmd(err, errlen, hns ? up_n : up_h);
		if (!ret)
			ret = ip_cmd(err, errlen, addr_s);
		if (!ret)
			ret = ip_cmd(err, errlen, up_s);
		if (!ret)
			ret = ip_cmd(err, errlen, route_s);
	}
	{
		char *detach[] = { "ip", "netns", "delete", ns, NULL };
		int st;

		sbt_run(detach, NULL, &st);
	}
	return ret;
}

/* ---- the qemu backend: the caller's preparations ------------------------- */

/* 32-bit FNV-1a: the tap's name and MAC address from the sandbox name. */
static uint32_t fnv1a(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

/* A name `ip netns` can have made: /run/netns/NAME, one path component. */
static bool netns_name_ok(const char *n)
{
	size_t len = n ? strnlen(n, NAME_MAX + 1) : 0;

	if (len == 0 || len > NAME_MAX || strcmp(n, ".") == 0 || strcmp(n, "..") == 0)
		return false;
	for (size_t i = 0; i < len; i++)
		if (n[i] == '/' || (unsigned char)n[i] <= ' ' || n[i] == 0x7f)
			return false;
	return true;
}

/* An interface name as the kernel accepts it (dev_valid_name). */
static bool ifname_ok(const char *n)
{
	size_t len = n ? strnlen(n, IFNAMSIZ) : 0;

	if (len == 0 || len >= IFNAMSIZ || strcmp(n, ".") == 0 || strcmp(n, "..") == 0)
		return false;
	for (size_t i = 0; i < len; i++)
		if (n[i] == '/' || n[i] == ':' || (unsigned char)n[i] <= ' ' || n[i] == 0x7f)
			return false;
	return true;
}

/* "ADDR/LEN" of `family`: the address (binary and text, without /LEN) and LEN. */
static bool cidr_parse(const char *cidr, int family, unsigned char bin[16], char *text,
		       size_t textlen, int *plen)
{
	const char *slash = cidr ? strchr(cidr, '/') : NULL;
	int max = family == AF_INET ? 32 : 128, len = 0;
	char a[INET6_ADDRSTRLEN];

	if (!slash || slash == cidr || (size_t)(slash - cidr) >= sizeof(a) || !slash[1])
		return false;
	memcpy(a, cidr, (size_t)(slash - cidr));
	a[slash - cidr] = '\0';
	if (inet_pton(family, a, bin) != 1)
		return false;
	for (const char *p = slash + 1; *p; p++) {
		if (*p < '0' || *p > '9' || p - slash > 3)
			return false;
		len = len * 10 + (*p - '0');
	}
	if (len < 1 || len > max || strlen(a) >= textlen)
		return false;
	memcpy(text, a, strlen(a) + 1);
	*plen = len;
	return true;
}

static bool same_prefix(const unsigned char *a, const unsigned char *b, int plen)
{
	int bytes = plen / 8, bits = plen % 8;

	if (memcmp(a, b, (size_t)bytes) != 0)
		return false;
	return !bits || ((a[bytes] ^ b[bytes]) & (0xff << (8 - bits))) == 0;
}

/*
 * The tap's address pairs: the guest's half goes on the kernel command line
 * (sbt.ip= sbt.gw=, sbt.ip6= sbt.gw6=, appended to `append`) and into
 * guest[] (each may be NULL: only checked). Both of a pair, one subnet, two
 * different addresses.
 */
static int vm_addrs(const struct sbt_sandbox_spec *spec, char *append, size_t len,
		    char (*guest)[64], int *nr_guest, char *err, size_t errlen)
{
	static const struct {
		int family;
		const char *ip, *gw, *example;
	} fam[2] = { { AF_INET, "sbt.ip", "sbt.gw", "203.0.113.253/30,203.0.113.254/30" },
		     { AF_INET6, "sbt.ip6", "sbt.gw6", "2001:db8:9::1/64,2001:db8:9::2/64" } };
	const char *pair[2][2] = { { spec->tap_host_cidr, spec->tap_guest_cidr },
				   { spec->tap_host_cidr6, spec->tap_guest_cidr6 } };

	for (int i = 0; i < 2; i++) {
		unsigned char hb[16], gb[16];
		char ht[INET6_ADDRSTRLEN], gt[INET6_ADDRSTRLEN];
		int hl, gl, bytes = fam[i].family == AF_INET ? 4 : 16;
		size_t n = append ? strlen(append) : 0;
		const char *h = pair[i][0], *g = pair[i][1];

		if (!h && !g)
			continue;
		if (!cidr_parse(h, fam[i].family, hb, ht, sizeof(ht), &hl) ||
		    !cidr_parse(g, fam[i].family, gb, gt, sizeof(gt), &gl))
			return seterr(
				err, errlen, -EINVAL,
				"sandbox %s: tap addresses '%s,%s': give HOST/LEN,GUEST/LEN of "
				"IPv%d, e.g. %s",
				spec->name, h ? h : "", g ? g : "", i ? 6 : 4, fam[i].example);
		if (hl != gl || !same_prefix(hb, gb, hl) || memcmp(hb, gb, (size_t)bytes) == 0)
			return seterr(
				err, errlen, -EINVAL,
				"sandbox %s: tap addresses '%s,%s': two different addresses of "
				"one subnet (the same /LEN), e.g. %s",
				spec->name, h, g, fam[i].example);
		if (append &&
		    !str_fits(append + n, len - n, " %s=%s %s=%s", fam[i].ip, g, fam[i].gw, ht))
			return seterr(err, errlen, -ENAMETOOLONG, "kernel command line too long");
		if (guest)
			memcpy(guest[(*nr_guest)++], gt, strlen(gt) + 1);
	}
	return 0;
}

/* "2596.122 MHz..." -> 2596122 (kHz); 0 when it does not read like that. */
static unsigned long mhz_to_khz(const char *s)
{
	unsigned long mhz = 0, frac = 0;
	int digits = 0, whole = 0;

	for (; *s >= '0' && *s <= '9' && whole < 7; s++, whole++)
		mhz = mhz * 10 + (unsigned long)(*s - '0');
	if (!whole)
		return 0;
	if (*s == '.')
		for (s++; *s >= '0' && *s <= '9'; s++)
			if (digits < 3) {
				frac = frac * 10 + (unsigned long)(*s - '0');
				digits++;
			}
	for (; digits < 3; digits++)
		frac *= 10;
	if (strncmp(s, " MHz", 4) != 0 || mhz == 0 || mhz > 100000)
		return 0;
	return mhz * 1000 + frac;
}

/* The host kernel's own figure, from its log: the refined calibration, else the first one. */
static unsigned long tsc_khz_from_kmsg(void)
{
	static const char refined[] = "tsc: Refined TSC clocksource calibration: ";
	static const char detected[] = "tsc: Detected ";
	unsigned long r = 0, d = 0;
	char rec[2048];
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0)
		return 0;
	for (int i = 0; i < 1000000; i++) {
		ssize_t n = read(fd, rec, sizeof(rec) - 1);
		char *msg, *p;

		if (n < 0 && (errno == EPIPE || errno == EINTR || errno == EINVAL))
			continue; /* overwritten meanwhile, or a record longer than rec */
		if (n <= 0)
			break;
		rec[n] = '\0';
		msg = strchr(rec, ';');
		if (!msg)
			continue;
		if ((p = strstr(msg, refined)))
			r = mhz_to_khz(p + sizeof(refined) - 1);
		else if (!d && (p = strstr(msg, detected)) && strstr(p, " MHz processor"))
			d = mhz_to_khz(p + sizeof(detected) - 1);
	}
	close(fd);
	return r ? r : d;
}

/* TSC ticks per ms of CLOCK_MONOTONIC_RAW over 20 ms (x86 only). */
static unsigned long tsc_khz_measured(void)
{
#if defined(__x86_64__) || defined(__i386__)
	uint64_t c0, c1, t0, t1;

	t0 = sbt_clock_ns(CLOCK_MONOTONIC_RAW);
	c0 = __builtin_ia32_rdtsc();
	sbt_sleep_ms(20);
	c1 = __builtin_ia32_rdtsc();
	t1 = sbt_clock_ns(CLOCK_MONOTONIC_RAW);
	if (t1 <= t0 || c1 <= c0)
		return 0;
	return (unsigned long)((c1 - c0) * 1000000ull / (t1 - t0));
#else
	return 0;
#endif
}

/* The host's TSC rate for the guest's tsc_early_khz (see the top of this file); 0: unknown. */
static unsigned long host_tsc_khz(void)
{
	unsigned long khz = tsc_khz_from_kmsg();

	return khz ? khz : tsc_khz_measured();
}

/*
 * Create run->tap in spec->tap_netns and return its fd (or -errno): an fd
 * of /dev/net/tun opened in that namespace, so the device is born there.
 */
static int tap_create(const struct sbt_sandbox_spec *spec, struct sbt_sandbox_run *run, char *err,
		      size_t errlen)
{
	const char *ns = spec->tap_netns ? spec->tap_netns : "(the shim's)";
	struct ifreq ifr;
	int back, fd = -1, ret, e;

	ret = sbt_netns_enter(spec->tap_netns, &back);
	if (ret)
		return seterr(err, errlen, ret,
			      "sandbox %s: network namespace %s (/run/netns/%s): %s; create it "
			      "with 'ip netns add'",
			      spec->name, ns, ns, strerror(-ret));
	fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		ret = seterr(err, errlen, -errno, "sandbox %s: /dev/net/tun: %s (modprobe tun?)",
			     spec->name, strerror(errno));
		goto out;
	}
	memset(&ifr, 0, sizeof(ifr));
	memcpy(ifr.ifr_name, run->tap, strlen(run->tap) + 1);
	ifr.ifr_flags =
		(short)(IFF_TAP | IFF_NO_PI | IFF_VNET_HDR | IFF_TUN_EXCL); /* 0x8000: a short */
	if (ioctl(fd, TUNSETIFF, &ifr)) {
		e = errno;
		if (e == EBUSY || e == EEXIST)
			ret = seterr(err, errlen, -EEXIST,
				     "sandbox %s: a network device %s exists already in network "
				     "namespace %s (a sandbox of the same name? sbtrace-shim gc)",
				     spec->name, run->tap, ns);
		else
			ret = seterr(err, errlen, -e,
				     "sandbox %s: create tap %s in network namespace %s: %s",
				     spec->name, run->tap, ns, strerror(e));
		goto out;
	}
	run->tap_ifindex = (int)if_nametoindex(run->tap);
	if (run->tap_ifindex <= 0)
		ret = seterr(err, errlen, -ENODEV, "sandbox %s: tap %s has no ifindex", spec->name,
			     run->tap);
out:
	e = sbt_netns_leave(back);
	if (e && !ret)
		ret = seterr(err, errlen, e,
			     "sandbox %s: cannot return to the shim's network namespace: %s",
			     spec->name, strerror(-e));
	if (ret && fd >= 0)
		close(fd);
	return ret ? ret : fd;
}

/* `ip [-n NETNS] ARGS...` (args NULL-terminated, at most 12). */
static int ip_in(const char *netns, char *const *args, char *err, size_t errlen)
{
	char *argv[16];
	int n = 0;

	argv[n++] = (char *)"ip";
	if (netns && netns[0]) {
		argv[n++] = (char *)"-n";
		argv[n++] = (char *)netns;
	}
	for (; *args && n < 15; args++)
		argv[n++] = *args;
	argv[n] = NULL;
	return ip_cmd(err, errlen, argv);
}

/* The host side's addresses, then up. */
static int tap_configure(const struct sbt_sandbox_spec *spec, struct sbt_sandbox_run *run,
			 char *err, size_t errlen)
{
	char *addr4[] = { "addr", "add", (char *)spec->tap_host_cidr, "dev", run->tap, NULL };
	char *addr6[] = { "addr",  "add", (char *)spec->tap_host_cidr6, "dev", run->tap,
			  "nodad", NULL };
	char *up[] = { "link", "set", run->tap, "up", NULL };
	int ret = 0;

	if (spec->tap_host_cidr)
		ret = ip_in(spec->tap_netns, addr4, err, errlen);
	if (!ret && spec->tap_host_cidr6)
		ret = ip_in(spec->tap_netns, addr6, err, errlen);
	if (!ret)
		ret = ip_in(spec->tap_netns, up, err, errlen);
	return ret;
}

/* Delete the tap if it is still there with the recorded ifindex (a killed shim's). */
static void tap_remove(const char *netns, const char *tap, int ifindex)
{
	const char *ns = netns && netns[0] ? netns : NULL;
	char err[64];
	int back;
	unsigned int idx;

	if (!tap[0] || ifindex <= 0 || sbt_netns_enter(ns, &back))
		return;
	idx = if_nametoindex(tap);
	if (sbt_netns_leave(back) || idx == 0 || (int)idx != ifindex)
		return;
	{
		char *del[] = { "link", "del", (char *)tap, NULL };

		ip_in(ns, del, err, sizeof(err));
	}
}

static void vm_dir_remove(const char *dir)
{
	char p[PATH_MAX];

	if (!dir[0])
		return;
	if (str_fits(p, sizeof(p), "%s/initrd", dir))
		unlink(p);
	rmdir(dir);
}

/* STATE_DIR/NAME.vm/initrd: the guest's base initramfs, padding, the second archive. */
static int vm_initrd(const struct sbt_sandbox_spec *spec, const char *path, unsigned int mem_mb,
		     char *err, size_t errlen)
{
	static const char zeros[4];
	char base[PATH_MAX], msg[PATH_MAX + 256], buf[65536];
	uint64_t total = 0;
	int in, out, ret = 0;
	ssize_t n;

	if (!str_fits(base, sizeof(base), "%s/initramfs.cpio.gz", spec->guest_dir))
		return seterr(err, errlen, -ENAMETOOLONG, "guest directory path too long");
	in = open(base, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return seterr(err, errlen, -errno,
			      "sandbox %s: guest %s: %s; build it with scripts/guest-build.sh",
			      spec->name, base, strerror(errno));
	out = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (out < 0) {
		ret = seterr(err, errlen, -errno, "sandbox %s: create %s: %s", spec->name, path,
			     strerror(errno));
		close(in);
		return ret;
	}
	while ((n = read(in, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || (ret = sbt_write_all(out, buf, (size_t)n))) {
			ret = ret ? ret : -errno;
			break;
		}
		total += (uint64_t)n;
	}
	close(in);
	/* The kernel looks for the next archive's "070701" at a 4-byte boundary. */
	if (!ret && total % 4)
		ret = sbt_write_all(out, zeros, (size_t)(4 - total % 4));
	if (ret) {
		close(out);
		return seterr(err, errlen, ret, "sandbox %s: copy %s to %s: %s", spec->name, base,
			      path, strerror(-ret));
	}
	ret = sbt_guest_archive(out, spec->argv, spec->workspace, ((uint64_t)mem_mb << 20) / 4, msg,
				sizeof(msg));
	if (close(out) && !ret)
		ret = -errno;
	if (ret)
		return seterr(err, errlen, ret, "sandbox %s: %s", spec->name,
			      msg[0] ? msg : strerror(-ret));
	return 0;
}

static void vm_prep_free(struct vm_prep *v)
{
	if (!v)
		return;
	if (v->tap_fd >= 0)
		close(v->tap_fd);
	for (int i = 0; i < 2; i++)
		if (v->console[i] >= 0)
			close(v->console[i]);
	free(v);
}

/*
 * Everything the VM's child needs, made before the clone: the per-run
 * initrd, the tap (created, addressed, up), the console pipe, qemu's
 * command line and environment (PATH only). On error everything made is
 * undone (the caller removes run->vm_dir).
 */
static int vm_prepare(const struct sbt_sandbox_spec *spec, struct sbt_sandbox_run *run,
		      const char *sdir, struct vm_prep **out, char *err, size_t errlen)
{
	unsigned int mem = spec->vm_mem_mb ? spec->vm_mem_mb : SBT_VM_MEM_DEFAULT_MB;
	const char *path = getenv("PATH");
	struct vm_prep *v;
	unsigned long khz;
	uint32_t h = fnv1a(spec->name);
	int n = 0, ret;

	*out = NULL; /* the spec passed sbt_sandbox_check() */
	v = calloc(1, sizeof(*v));
	if (!v)
		return seterr(err, errlen, -ENOMEM, "out of memory");
	v->tap_fd = v->console[0] = v->console[1] = -1;
	snprintf(run->tap, sizeof(run->tap), "sbt%08x", h);
	if (spec->tap_netns)
		snprintf(run->tap_netns, sizeof(run->tap_netns), "%s", spec->tap_netns);
	khz = host_tsc_khz();
	snprintf(v->append, sizeof(v->append), "%s", VM_CMDLINE);
	if (khz)
		snprintf(v->append + strlen(v->append), sizeof(v->append) - strlen(v->append),
			 " tsc_early_khz=%lu", khz);
	ret = vm_addrs(spec, v->append, sizeof(v->append), run->guest_addrs, &run->nr_guest_addrs,
		       err, errlen);
	if (ret)
		goto fail;
	if (!str_fits(run->vm_dir, sizeof(run->vm_dir), "%s/%s.vm", sdir, spec->name) ||
	    !str_fits(v->initrd, sizeof(v->initrd), "%s/initrd", run->vm_dir) ||
	    !str_fits(v->kernel, sizeof(v->kernel), "%s/vmlinux", spec->guest_dir) ||
	    !str_fits(v->path_env, sizeof(v->path_env), "PATH=%s",
		      path ? path
			   : "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")) {
		ret = seterr(err, errlen, -ENAMETOOLONG, "sandbox %s: path too long", spec->name);
		goto fail;
	}
	ret = check_state_dir(sdir, true);
	if (ret) {
		seterr(err, errlen, ret, "state dir %s: %s", sdir, strerror(-ret));
		goto fail;
	}
	vm_dir_remove(run->vm_dir); /* a killed shim's, of the same name */
	if (mkdir(run->vm_dir, 0700)) {
		ret = seterr(err, errlen, -errno, "sandbox %s: mkdir %s: %s", spec->name,
			     run->vm_dir, strerror(errno));
		run->vm_dir[0] = '\0';
		goto fail;
	}
	ret = vm_initrd(spec, v->initrd, mem, err, errlen);
	if (ret)
		goto fail;
	if (pipe2(v->console, O_CLOEXEC) || fcntl(v->console[0], F_SETFL, O_NONBLOCK)) {
		ret = seterr(err, errlen, -errno, "pipe: %s", strerror(errno));
		goto fail;
	}
	v->tap_fd = tap_create(spec, run, err, errlen);
	if (v->tap_fd < 0) {
		ret = v->tap_fd;
		goto fail;
	}
	ret = tap_configure(spec, run, err, errlen);
	if (ret)
		goto fail;
	snprintf(v->mem, sizeof(v->mem), "%u", mem);
	snprintf(v->device, sizeof(v->device),
		 "virtio-net-device,netdev=n0,mac=02:53:42:%02x:%02x:%02x", (h >> 16) & 0xff,
		 (h >> 8) & 0xff, h & 0xff);
	v->env[0] = v->path_env;
	v->env[1] = NULL;
#define ARG(x) (v->argv[n++] = (char *)(x))
	ARG(VM_QEMU);
	ARG("-M");
	ARG(VM_MACHINE);
	ARG("-accel");
	ARG("tcg");
	ARG("-cpu");
	ARG("max");
	ARG("-smp");
	ARG("1");
	ARG("-m");
	ARG(v->mem);
	ARG("-nodefaults");
	ARG("-no-user-config");
	ARG("-display");
	ARG("none");
	ARG("-no-reboot");
	ARG("-sandbox");
	ARG(VM_SECCOMP);
	ARG("-kernel");
	ARG(v->kernel);
	ARG("-initrd");
	ARG(v->initrd);
	ARG("-append");
	ARG(v->append);
	ARG("-serial");
	ARG("stdio");
	ARG("-netdev");
	ARG("tap,id=n0,fd=" XSTR(VM_TAP_FD));
	ARG("-device");
	ARG(v->device);
#undef ARG
	v->argv[n] = NULL;
	*out = v;
	return 0;
fail:
	vm_prep_free(v);
	return ret;
}

int sbt_sandbox_ready(struct sbt_sandbox_run *run, char *err, size_t errlen)
{
	char buf[1100];
	ssize_t n;

	if (run->ready_fd < 0)
		return run->pid > 0 ? 0 : seterr(err, errlen, -EINVAL, "sandbox not started");
	do
		n = read(run->ready_fd, buf, sizeof(buf) - 1);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return seterr(err, errlen, -errno, "sandbox %s: reading the ready pipe: %s",
			      run->name, strerror(errno));
	if (n == 1 && buf[0] == READY_OK) {
		close(run->ready_fd);
		run->ready_fd = -1;
		return 0;
	}
	if (n == 0)
		return seterr(err, errlen, -ECHILD,
			      "sandbox %s: init exited during set-up (killed?)", run->name);
	buf[n] = '\0';
	if (buf[0] == READY_ERR) {
		char *end;
		long e = strtol(buf + 1, &end, 10);

		if (*end == ':' && e > 0 && e < 4096)
			return seterr(err, errlen, (int)-e, "sandbox %s: set-up failed: %s",
				      run->name, end + 1);
	}
	return seterr(err, errlen, -EPROTO, "sandbox %s: unexpected message from init", run->name);
}

int sbt_sandbox_go(struct sbt_sandbox_run *run)
{
	sigset_t pipe_set, old, pending;
	bool was_pending;
	ssize_t n;
	int ret = 0;

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

static const char *const backend_names[SBT_BACKEND__MAX] = {
	[SBT_BACKEND_NS] = "ns",
	[SBT_BACKEND_PODMAN] = "podman",
	[SBT_BACKEND_QEMU] = "qemu",
};

const char *sbt_backend_name(enum sbt_sandbox_backend b)
{
	return (unsigned int)b < SBT_BACKEND__MAX ? backend_names[b] : NULL;
}

int sbt_backend_parse(const char *s, enum sbt_sandbox_backend *out)
{
	for (int b = 0; s && b < SBT_BACKEND__MAX; b++)
		if (strcmp(s, backend_names[b]) == 0) {
			*out = (enum sbt_sandbox_backend)b;
			return 0;
		}
	return -EINVAL;
}

/* ---- the qemu backend: the console -------------------------------------- */

#define READY_LINE "SBT-GUEST-READY"
#define EXIT_LINE  "SBT-GUEST-EXIT "

void sbt_vm_console_init(struct sbt_vm_console *con)
{
	memset(con, 0, sizeof(*con));
}

/* Keep the last bytes of what was not the workload's, for error messages. */
static void con_tail(struct sbt_vm_console *con, const char *p, size_t n, bool nl)
{
	size_t cap = sizeof(con->tail) - 1, add = n + (nl ? 1 : 0);

	if (add > cap) { /* only the end of a long line */
		p += add - cap;
		n -= add - cap;
		add = cap;
	}
	if (con->tail_len + add > cap) {
		size_t drop = con->tail_len + add - cap;

		memmove(con->tail, con->tail + drop, con->tail_len - drop);
		con->tail_len -= drop;
	}
	memcpy(con->tail + con->tail_len, p, n);
	con->tail_len += n;
	if (nl)
		con->tail[con->tail_len++] = '\n';
	con->tail[con->tail_len] = '\0';
}

static void con_out(struct sbt_vm_console *con, int fd, const char *p, size_t n)
{
	if (!con->out_failed && n && sbt_write_all(fd, p, n))
		con->out_failed = true; /* e.g. EPIPE: the VM runs on, its output is dropped */
}

/* "SBT-GUEST-EXIT <0-255>" (a CR before the end tolerated); the code or -1. */
static int exit_marker(const char *l, size_t n)
{
	size_t k = sizeof(EXIT_LINE) - 1;
	int code = 0;

	if (n && l[n - 1] == '\r')
		n--;
	if (n <= k || n > k + 3 || memcmp(l, EXIT_LINE, k) != 0)
		return -1;
	for (size_t i = k; i < n; i++) {
		if (l[i] < '0' || l[i] > '9')
			return -1;
		code = code * 10 + (l[i] - '0');
	}
	return code <= 255 ? code : -1;
}

/* One line (without its newline; `complete`: it had one). */
static void con_line(struct sbt_vm_console *con, int out_fd, bool complete)
{
	const char *l = con->line;
	size_t n = con->len;
	int code;

	switch (con->phase) {
	case SBT_VM_BOOTING:
		if (complete && (n == sizeof(READY_LINE) - 1 || n == sizeof(READY_LINE)) &&
		    memcmp(l, READY_LINE, sizeof(READY_LINE) - 1) == 0 &&
		    (n == sizeof(READY_LINE) - 1 || l[n - 1] == '\r')) {
			con->phase = SBT_VM_RUNNING;
			con->ready_ns = sbt_clock_ns(CLOCK_MONOTONIC);
			con->pending_nl = false;
			con->mid_line = false;
			break;
		}
		con_tail(con, l, n, complete);
		break;
	case SBT_VM_RUNNING:
		code = con->mid_line ? -1 : exit_marker(l, n);
		if (code >= 0 && complete) {
			/* the newline before the marker is init's, not the workload's */
			con->phase = SBT_VM_EXITED;
			con->exit_code = code;
			con->exit_ns = sbt_clock_ns(CLOCK_MONOTONIC);
			con->pending_nl = false;
			break;
		}
		if (con->pending_nl)
			con_out(con, out_fd, "\n", 1);
		con_out(con, out_fd, l, n);
		con->pending_nl = complete;
		con->mid_line = !complete;
		break;
	case SBT_VM_EXITED:
		con_tail(con, l, n, complete);
		break;
	}
	con->len = 0;
}

void sbt_vm_console_feed(struct sbt_vm_console *con, const char *buf, size_t n, int out_fd)
{
	for (size_t i = 0; i < n; i++) {
		if (buf[i] == '\n') {
			con_line(con, out_fd, true);
			continue;
		}
		/* A full buffer is no marker: pass it on as part of a longer line. */
		if (con->len == sizeof(con->line))
			con_line(con, out_fd, false);
		con->line[con->len++] = buf[i];
	}
}

void sbt_vm_console_eof(struct sbt_vm_console *con, int out_fd)
{
	if (con->len)
		con_line(con, out_fd, false);
	if (con->phase == SBT_VM_RUNNING && con->pending_nl) {
		con_out(con, out_fd, "\n", 1); /* the VM died: the workload's line stays whole */
		con->pending_nl = false;
	}
}

long sbt_sandbox_console(struct sbt_sandbox_run *run, int out_fd)
{
	char buf[16384];
	ssize_t n;

	if (run->console_fd < 0)
		return 0;
	do
		n = read(run->console_fd, buf, sizeof(buf));
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK ? -EAGAIN : -errno;
	if (n == 0) {
		sbt_vm_console_eof(&run->con, out_fd);
		close(run->console_fd);
		run->console_fd = -1;
		return 0;
	}
	sbt_vm_console_feed(&run->con, buf, (size_t)n, out_fd);
	return (long)n;
}

/*
 * runc (cgroupfs manager) on a hybrid system creates a container's cgroup
 * path in every v1 hierarchy too, and leaves the parents it made: remove the
 * (empty) trees <v1 mount><name> of the hierarchies mounted at their root.
 */
static void cgroup_v1_remove(const char *name)
{
	char *mi = slurp("/proc/self/mountinfo", 16u << 20, NULL), *line, *next, path[PATH_MAX];

	if (!mi || name[0] != '/' || !name[1])
		goto out;
	for (line = mi; line && *line; line = next) {
		char *f[6], *save = NULL, *sep;
		int n = 0;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		/* id parent maj:min root mnt opts ... - fstype source superopts */
		sep = strstr(line, " - ");
		if (!sep || strncmp(sep + 3, "cgroup ", 7) != 0)
			continue;
		*sep = '\0';
		for (char *t = strtok_r(line, " ", &save); t && n < 6;
		     t = strtok_r(NULL, " ", &save))
			f[n++] = t;
		if (n < 5 || strcmp(f[3], "/") != 0 || strchr(f[4], '\\'))
			continue;
		if (str_fits(path, sizeof(path), "%s%s", f[4], name))
			cgroup_rmdir_tree(path, 0);
	}
out:
	free(mi);
}

void sbt_sandbox_destroy(struct sbt_sandbox_run *run)
{
	char fifo[PATH_MAX];

	if (run->go_fd >= 0)
		close(run->go_fd);
	if (run->ready_fd >= 0)
		close(run->ready_fd);
	run->go_fd = run->ready_fd = -1;
	if (run->cgroup_path[0])
		cgroup_kill(run->cgroup_path);
	if (run->pid > 0) {
		int st;

		if (sbt_sandbox_wait(run, &st, KILL_WAIT_MS) == -ETIMEDOUT) {
			kill(run->pid, SIGKILL);
			sbt_sandbox_wait(run, &st, KILL_WAIT_MS);
		}
		run->pid = 0;
	}
	if (run->cgroup_path[0] && cgroup_destroy(run->cgroup_path) == 0)
		run->cgroup_path[0] = '\0';
	if (run->backend == SBT_BACKEND_PODMAN && run->cgroup_name[0])
		cgroup_v1_remove(run->cgroup_name);
	if (run->backend == SBT_BACKEND_QEMU) {
		/* qemu is gone, and with it the tap's last fd: this only checks */
		tap_remove(run->tap_netns, run->tap, run->tap_ifindex);
		vm_dir_remove(run->vm_dir);
		if (run->console_fd >= 0)
			close(run->console_fd);
		run->console_fd = -1;
		run->tap[0] = run->vm_dir[0] = '\0';
	}
	if (run->state_file[0]) {
		attach_path(run->state_file, fifo, sizeof(fifo));
		if (fifo[0])
			unlink(fifo);
		unlink(run->state_file);
		run->state_file[0] = '\0';
	}
}

/* ---- state files -------------------------------------------------------- */

/* The state dir must be a directory owned by us (or root) that nobody else can write. */
static int check_state_dir(const char *dir, bool create)
{
	struct stat st;

	if (create && mkdir(dir, 0700) && errno != EEXIST)
		return -errno;
	if (stat(dir, &st))
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	if ((st.st_uid != geteuid() && st.st_uid != 0) || (st.st_mode & (S_IWGRP | S_IWOTH)))
		return -EPERM;
	return 0;
}

int sbt_state_write(const char *state_dir, const struct sbt_sandbox_run *run)
{
	const char *backend = run ? sbt_backend_name(run->backend) : NULL;
	char path[PATH_MAX], tmp[PATH_MAX], netns[64];
	struct json_object *o, *vis, *addrs;
	const char *s;
	int fd, ret;

	if (!state_dir)
		state_dir = SBT_STATE_DIR_DEFAULT;
	if (!run || !sbt_sandbox_name_ok(run->name) || run->pid <= 0 || !backend || !backend[0] ||
	    strlen(backend) >= sizeof(((struct sbt_sandbox_state *)0)->backend))
		return -EINVAL;
	ret = check_state_dir(state_dir, true);
	if (ret)
		return ret;
	if (!str_fits(path, sizeof(path), "%s/%s.json", state_dir, run->name) ||
	    !str_fits(tmp, sizeof(tmp), "%s/.%s.json.%d.tmp", state_dir, run->name, (int)getpid()))
		return -ENAMETOOLONG;
	snprintf(netns, sizeof(netns), "/proc/%d/ns/net", (int)run->pid);
	o = json_object_new_object();
	if (!o)
		return -ENOMEM;
	json_object_object_add(o, "name", json_object_new_string(run->name));
	json_object_object_add(o, "backend", json_object_new_string(backend));
	json_object_object_add(o, "cgroup", json_object_new_string(run->cgroup_path));
	json_object_object_add(o, "cgroup_id", json_object_new_int64((int64_t)run->cgroup_id));
	json_object_object_add(o, "pid", json_object_new_int(run->pid));
	json_object_object_add(o, "shim_pid", json_object_new_int(getpid()));
	json_object_object_add(o, "netns", json_object_new_string(netns));
	json_object_object_add(o, "start_ns", json_object_new_int64((int64_t)run->start_ns));
	vis = json_object_new_object();
	json_object_object_add(
		vis, "exec",
		json_object_new_string(run->backend == SBT_BACKEND_QEMU ? "none" : "host"));
	json_object_object_add(
		vis, "network",
		json_object_new_string(run->backend == SBT_BACKEND_QEMU ? "tap" : "cgroup"));
	json_object_object_add(o, "visibility", vis);
	if (run->backend == SBT_BACKEND_QEMU) {
		json_object_object_add(o, "tap", json_object_new_string(run->tap));
		json_object_object_add(o, "tap_netns", json_object_new_string(run->tap_netns));
		json_object_object_add(o, "tap_ifindex", json_object_new_int(run->tap_ifindex));
		addrs = json_object_new_array();
		for (int i = 0; i < run->nr_guest_addrs && i < SBT_VM_MAX_ADDRS; i++)
			json_object_array_add(addrs, json_object_new_string(run->guest_addrs[i]));
		json_object_object_add(o, "guest_addrs", addrs);
	}
	s = json_object_to_json_string_ext(o,
					   JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		ret = -errno;
	} else {
		ret = sbt_write_all(fd, s, strlen(s));
		if (!ret)
			ret = sbt_write_all(fd, "\n", 1);
		if (close(fd) && !ret)
			ret = -errno;
		if (!ret && rename(tmp, path))
			ret = -errno;
		if (ret)
			unlink(tmp);
	}
	json_object_put(o);
	return ret;
}

struct vctx {
	const char *path;
	char *err;
	size_t errlen;
};

static int bad(const struct vctx *v, int ret, const char *what, const char *key)
{
	return seterr(v->err, v->errlen, ret, "state file %s: %s%s%s", v->path,
		      key ? "field '" : "", key ? key : "", what);
}

static int get_field(struct json_object *root, const char *key, json_type type,
		     struct json_object **out, const struct vctx *v)
{
	if (!json_object_object_get_ex(root, key, out))
		return bad(v, -EINVAL, "' is missing", key);
	if (!json_object_is_type(*out, type))
		return bad(v, -EINVAL,
			   type == json_type_int ? "' must be an integer" : "' must be a string",
			   key);
	return 0;
}

static int get_str(struct json_object *root, const char *key, char *out, size_t len,
		   const struct vctx *v)
{
	struct json_object *f;
	int ret = get_field(root, key, json_type_string, &f, v);
	const char *s;
	int n;

	if (ret)
		return ret;
	s = json_object_get_string(f);
	n = json_object_get_string_len(f);
	if (n <= 0 || (size_t)n >= len || strlen(s) != (size_t)n)
		return bad(v, -EINVAL, "' is empty, too long or contains NUL", key);
	memcpy(out, s, (size_t)n + 1);
	return 0;
}

static int get_int(struct json_object *root, const char *key, int64_t min, int64_t max,
		   int64_t *out, const struct vctx *v)
{
	struct json_object *f;
	int ret = get_field(root, key, json_type_int, &f, v);

	if (ret)
		return ret;
	errno = 0;
	*out = json_object_get_int64(f);
	if (errno || *out < min || *out > max || *out == INT64_MAX)
		return bad(v, -ERANGE, "' is out of range", key);
	return 0;
}

/* Optional string field: 1 when absent, 0 when copied (empty allowed), or -errno. */
static int get_opt_str(struct json_object *root, const char *key, char *out, size_t len,
		       const struct vctx *v)
{
	struct json_object *f;
	const char *s;
	int n;

	if (!json_object_object_get_ex(root, key, &f))
		return 1;
	if (!json_object_is_type(f, json_type_string))
		return bad(v, -EINVAL, "' must be a string", key);
	s = json_object_get_string(f);
	n = json_object_get_string_len(f);
	if (n < 0 || (size_t)n >= len || strlen(s) != (size_t)n)
		return bad(v, -EINVAL, "' is too long or contains NUL", key);
	memcpy(out, s, (size_t)n + 1);
	return 0;
}

/* One of `allowed` (NULL-terminated) as visibility.KEY, into out. */
static int get_vis(struct json_object *vis, const char *key, const char *const *allowed, char *out,
		   size_t len, const struct vctx *v)
{
	char what[32];
	struct json_object *f;
	const char *s;

	snprintf(what, sizeof(what), "visibility.%s", key);
	if (!json_object_object_get_ex(vis, key, &f))
		return bad(v, -EINVAL, "' is missing", what);
	s = json_object_is_type(f, json_type_string) ? json_object_get_string(f) : NULL;
	for (; s && *allowed; allowed++)
		if (strcmp(s, *allowed) == 0 && strlen(s) < len) {
			memcpy(out, s, strlen(s) + 1);
			return 0;
		}
	return bad(v, -EINVAL, "' is not one of the known values", what);
}

/* "visibility": {"exec": "host"|"none", "network": "cgroup"|"tap"}, optional. */
static int parse_visibility(struct json_object *root, struct sbt_sandbox_state *st,
			    const struct vctx *v)
{
	static const char *const exec[] = { "host", "none", NULL };
	static const char *const network[] = { "cgroup", "tap", NULL };
	struct json_object *vis;
	int ret;

	if (!json_object_object_get_ex(root, "visibility", &vis))
		return 0;
	if (!json_object_is_type(vis, json_type_object))
		return bad(v, -EINVAL, "' must be an object", "visibility");
	ret = get_vis(vis, "exec", exec, st->visibility_exec, sizeof(st->visibility_exec), v);
	if (!ret)
		ret = get_vis(vis, "network", network, st->visibility_network,
			      sizeof(st->visibility_network), v);
	return ret;
}

/* The qemu backend's tap, its netns and the guest's addresses: required there, absent elsewhere. */
static int parse_tap(struct json_object *root, struct sbt_sandbox_state *st, const struct vctx *v)
{
	static const char *const keys[] = { "tap", "tap_netns", "tap_ifindex", "guest_addrs" };
	struct json_object *arr;
	bool vm = strcmp(st->backend, "qemu") == 0;
	int64_t i;
	size_t n;
	int ret;

	if (!vm) {
		for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
			if (json_object_object_get_ex(root, keys[k], &arr))
				return bad(v, -EINVAL, "' belongs to backend qemu only", keys[k]);
		return 0;
	}
	ret = get_str(root, "tap", st->tap, sizeof(st->tap), v);
	if (!ret && !ifname_ok(st->tap))
		ret = bad(v, -EINVAL, "' is not an interface name", "tap");
	if (!ret) {
		ret = get_opt_str(root, "tap_netns", st->tap_netns, sizeof(st->tap_netns), v);
		if (ret == 1)
			ret = bad(v, -EINVAL, "' is missing", "tap_netns");
	}
	if (!ret && st->tap_netns[0] && !netns_name_ok(st->tap_netns))
		ret = bad(v, -EINVAL, "' is not a network namespace name", "tap_netns");
	if (!ret)
		ret = get_int(root, "tap_ifindex", 1, INT32_MAX, &i, v);
	if (ret)
		return ret;
	st->tap_ifindex = (int)i;
	if (!json_object_object_get_ex(root, "guest_addrs", &arr))
		return bad(v, -EINVAL, "' is missing", "guest_addrs");
	if (!json_object_is_type(arr, json_type_array))
		return bad(v, -EINVAL, "' must be an array", "guest_addrs");
	n = json_object_array_length(arr);
	if (n > SBT_VM_MAX_ADDRS)
		return bad(v, -EINVAL, "' has more than 4 addresses", "guest_addrs");
	for (size_t k = 0; k < n; k++) {
		struct json_object *a = json_object_array_get_idx(arr, k);
		unsigned char bin[16];
		const char *s;

		if (!json_object_is_type(a, json_type_string))
			return bad(v, -EINVAL, "' must hold strings", "guest_addrs");
		s = json_object_get_string(a);
		if ((size_t)json_object_get_string_len(a) >= sizeof(st->guest_addrs[0]) ||
		    strlen(s) != (size_t)json_object_get_string_len(a) ||
		    (inet_pton(AF_INET, s, bin) != 1 && inet_pton(AF_INET6, s, bin) != 1))
			return bad(v, -EINVAL, "' must hold IP addresses", "guest_addrs");
		memcpy(st->guest_addrs[k], s, strlen(s) + 1);
		st->nr_guest_addrs++;
	}
	return 0;
}

/* A canonical absolute path strictly below `top`: no //, no . or .. component. */
static bool path_below(const char *path, const char *top)
{
	size_t n = strlen(top);

	while (n > 1 && top[n - 1] == '/')
		n--;
	if (strncmp(path, top, n) != 0 || path[n] != '/' || !path[n + 1])
		return false;
	for (const char *p = path + n; *p; p++) {
		if (*p != '/')
			continue;
		if (p[1] == '/' || p[1] == '\0')
			return false;
		if (p[1] == '.' && (p[2] == '/' || p[2] == '\0'))
			return false;
		if (p[1] == '.' && p[2] == '.' && (p[3] == '/' || p[3] == '\0'))
			return false;
	}
	return true;
}

/* Parse and validate; with `live`, the cgroup must still exist with the recorded id. */
static int parse_state(const char *dir, const char *name, struct sbt_sandbox_state *st, bool live,
		       char *err, size_t errlen)
{
	char path[PATH_MAX], mnt_point[PATH_MAX], want_cg[PATH_MAX], want[64];
	char buf[STATE_MAX_BYTES + 1];
	struct vctx v = { path, err, errlen };
	struct json_tokener *tok = NULL;
	struct json_object *root = NULL;
	struct stat sb;
	struct statfs sf;
	int64_t i;
	ssize_t n;
	size_t len = 0;
	int fd, ret;

	memset(st, 0, sizeof(*st));
	if (!sbt_sandbox_name_ok(name))
		return seterr(err, errlen, -EINVAL, "sandbox name '%s' is not valid", name);
	if (!str_fits(path, sizeof(path), "%s/%s.json", dir, name))
		return seterr(err, errlen, -ENAMETOOLONG, "state dir '%s': path too long", dir);
	ret = check_state_dir(dir, false);
	if (ret)
		return seterr(err, errlen, ret,
			      "state dir %s: %s (it must be a directory owned by you or root, "
			      "writable by nobody else)",
			      dir, strerror(-ret));
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		ret = -errno;
		if (ret == -ENOENT)
			return seterr(err, errlen, ret, "no sandbox %s: %s does not exist", name,
				      path);
		return bad(&v, ret, ret == -ELOOP ? "a symbolic link (refused)" : strerror(-ret),
			   NULL);
	}
	if (fstat(fd, &sb) || !S_ISREG(sb.st_mode)) {
		close(fd);
		return bad(&v, -EINVAL, "not a regular file", NULL);
	}
	while (len <= STATE_MAX_BYTES) {
		n = read(fd, buf + len, sizeof(buf) - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
		if (len == sizeof(buf))
			break;
	}
	close(fd);
	if (len > STATE_MAX_BYTES)
		return bad(&v, -EFBIG, "larger than 64 KiB", NULL);
	if (memchr(buf, '\0', len))
		return bad(&v, -EINVAL, "contains a NUL byte", NULL);
	tok = json_tokener_new_ex(8);
	if (!tok)
		return bad(&v, -ENOMEM, "out of memory", NULL);
	root = json_tokener_parse_ex(tok, buf, (int)len);
	if (!root || json_tokener_get_error(tok) != json_tokener_success ||
	    strspn(buf + json_tokener_get_parse_end(tok), " \t\r\n") !=
		    len - json_tokener_get_parse_end(tok)) {
		ret = bad(&v, -EINVAL, "not a single JSON document", NULL);
		goto out;
	}
	if (!json_object_is_type(root, json_type_object)) {
		ret = bad(&v, -EINVAL, "not a JSON object", NULL);
		goto out;
	}
	ret = get_str(root, "name", st->name, sizeof(st->name), &v);
	if (!ret && strcmp(st->name, name) != 0)
		ret = bad(&v, -EINVAL, "' does not match the file's name", "name");
	if (!ret)
		ret = get_str(root, "backend", st->backend, sizeof(st->backend), &v);
	if (!ret &&
	    strspn(st->backend, "abcdefghijklmnopqrstuvwxyz0123456789") != strlen(st->backend))
		ret = bad(&v, -EINVAL, "' must be [a-z0-9]+", "backend");
	if (!ret)
		ret = get_str(root, "cgroup", st->cgroup_path, sizeof(st->cgroup_path), &v);
	if (!ret)
		ret = get_int(root, "cgroup_id", 1, INT64_MAX, &i, &v);
	if (!ret) {
		st->cgroup_id = (uint64_t)i;
		ret = get_int(root, "pid", 1, PID_LIMIT, &i, &v);
	}
	if (!ret) {
		st->pid = (pid_t)i;
		ret = get_int(root, "shim_pid", 1, PID_LIMIT, &i, &v);
	}
	if (!ret) {
		st->shim_pid = (pid_t)i;
		ret = get_str(root, "netns", st->netns, sizeof(st->netns), &v);
	}
	if (!ret) {
		snprintf(want, sizeof(want), "/proc/%d/ns/net", (int)st->pid);
		if (strcmp(st->netns, want) != 0)
			ret = bad(&v, -EINVAL, "' must be /proc/PID/ns/net of its pid", "netns");
	}
	if (!ret)
		ret = get_int(root, "start_ns", 0, INT64_MAX, &i, &v);
	if (!ret)
		st->start_ns = (uint64_t)i;
	if (!ret)
		ret = parse_visibility(root, st, &v);
	if (!ret)
		ret = parse_tap(root, st, &v);
	if (ret)
		goto out;
	ret = cgroup2_mount(mnt_point, sizeof(mnt_point));
	if (ret) {
		ret = bad(&v, ret, "': no cgroup v2 mount to check it against", "cgroup");
		goto out;
	}
	if (!path_below(st->cgroup_path, mnt_point)) {
		ret = bad(&v, -EINVAL, "' is not a canonical path below the cgroup v2 mount",
			  "cgroup");
		goto out;
	}
	/* The ns, podman and qemu backends' cgroup is always <v2>/sbtrace/NAME. */
	if ((strcmp(st->backend, "ns") == 0 || strcmp(st->backend, "podman") == 0 ||
	     strcmp(st->backend, "qemu") == 0) &&
	    (!str_fits(want_cg, sizeof(want_cg), "%s/sbtrace/%s", mnt_point, name) ||
	     strcmp(st->cgroup_path, want_cg) != 0)) {
		ret = bad(&v, -EINVAL,
			  "' must be <cgroup v2 mount>/sbtrace/NAME for backends ns, podman and "
			  "qemu",
			  "cgroup");
		goto out;
	}
	if (!live)
		goto out;
	if (stat(st->cgroup_path, &sb) || !S_ISDIR(sb.st_mode) || statfs(st->cgroup_path, &sf) ||
	    sf.f_type != CGROUP2_SUPER_MAGIC) {
		ret = bad(&v, -ENOENT, "': the cgroup no longer exists (run sbtrace-shim gc)",
			  "cgroup");
		goto out;
	}
	if (sbt_cgroup_id(st->cgroup_path) != st->cgroup_id)
		ret = bad(&v, -ESTALE, "' does not match the cgroup's id (it was recreated)",
			  "cgroup_id");
out:
	json_object_put(root);
	json_tokener_free(tok);
	return ret;
}

int sbt_state_read(const char *state_dir, const char *name, struct sbt_sandbox_state *st, char *err,
		   size_t errlen)
{
	return parse_state(state_dir ? state_dir : SBT_STATE_DIR_DEFAULT, name, st, true, err,
			   errlen);
}

/* ---- gc ----------------------------------------------------------------- */

/* Start of process `pid` in CLOCK_REALTIME ns, from /proc/PID/stat; 0 if unknown. */
static uint64_t proc_start_ns(pid_t pid)
{
	char path[64], *stat, *p;
	unsigned long long ticks = 0;
	long hz = sysconf(_SC_CLK_TCK);

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	stat = slurp(path, 1u << 16, NULL);
	if (!stat)
		return 0;
	p = strrchr(stat, ')'); /* comm may hold spaces and parentheses */
	if (p) {
		/* after ')': field 3 (state) ... field 22 (starttime) */
		for (int field = 2; field < 22 && p; field++)
			p = strchr(p + 1, ' ');
		if (p)
			ticks = strtoull(p + 1, NULL, 10);
	}
	free(stat);
	if (!ticks || hz <= 0)
		return 0;
	return sbt_clock_ns(CLOCK_REALTIME) - sbt_clock_ns(CLOCK_BOOTTIME) +
	       ticks * (1000000000ull / (unsigned long long)hz);
}

/* Is the sandbox's controller still there (not a recycled pid)? */
static bool shim_alive(const struct sbt_sandbox_state *st)
{
	char path[64], *comm;
	bool ours;
	uint64_t started;

	if (kill(st->shim_pid, 0) && errno == ESRCH)
		return false;
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)st->shim_pid);
	comm = slurp(path, 4096, NULL);
	if (!comm)
		return errno != ENOENT && errno != ESRCH;
	comm[strcspn(comm, "\n")] = '\0';
	ours = strcmp(comm, "sbtrace-shim") == 0 || strcmp(comm, "sbtrace") == 0;
	free(comm);
	if (!ours)
		return false;
	/* The controller starts before its sandbox; 2 s of slack for clock steps. */
	started = proc_start_ns(st->shim_pid);
	return !started || started <= st->start_ns + 2000000000ull;
}

static int gc_state_files(const char *dir, bool verbose)
{
	char err[PATH_MAX + 256], path[PATH_MAX], fifo[PATH_MAX];
	struct sbt_sandbox_state st;
	struct dirent *de;
	int count = 0, ret;
	DIR *d;

	ret = check_state_dir(dir, false);
	if (ret == -ENOENT)
		return 0;
	if (ret) {
		fprintf(stderr, "sbtrace-shim gc: state dir %s: %s\n", dir, strerror(-ret));
		return ret;
	}
	d = opendir(dir);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		size_t n = strlen(de->d_name);
		char name[SBT_SANDBOX_NAME_MAX + 1];

		if (n <= 5 || n - 5 > SBT_SANDBOX_NAME_MAX ||
		    strcmp(de->d_name + n - 5, ".json") != 0)
			continue;
		snprintf(name, sizeof(name), "%.*s", (int)(n - 5), de->d_name);
		if (!sbt_sandbox_name_ok(name))
			continue;
		if (parse_state(dir, name, &st, false, err, sizeof(err))) {
			if (verbose)
				fprintf(stderr, "sbtrace-shim gc: skipping %s\n", err);
			continue;
		}
		if (shim_alive(&st))
			continue;
		/* Only the recorded cgroup: same path and the same id. */
		if (sbt_cgroup_id(st.cgroup_path) == st.cgroup_id) {
			ret = cgroup_destroy(st.cgroup_path);
			if (ret && ret != -ENOENT) {
				fprintf(stderr,
					"sbtrace-shim gc: sandbox %s: cannot remove %s: %s\n", name,
					st.cgroup_path, strerror(-ret));
				continue;
			}
		}
		if (strcmp(st.backend, "podman") == 0) {
			char cg_name[SBT_SANDBOX_NAME_MAX + 16];

			snprintf(cg_name, sizeof(cg_name), "/sbtrace/%s", name);
			cgroup_v1_remove(cg_name);
		}
		if (strcmp(st.backend, "qemu") == 0) {
			/* qemu died with the cgroup, and the tap with it; delete what is left */
			tap_remove(st.tap_netns, st.tap, st.tap_ifindex);
			if (str_fits(path, sizeof(path), "%s/%s.vm", dir, name))
				vm_dir_remove(path);
		}
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		attach_path(path, fifo, sizeof(fifo));
		if (fifo[0])
			unlink(fifo);
		if (unlink(path) && errno != ENOENT)
			continue;
		count++;
		if (verbose)
			fprintf(stderr,
				"sbtrace-shim gc: removed sandbox %s (shim %d gone; cgroup %s)\n",
				name, (int)st.shim_pid, st.cgroup_path);
	}
	closedir(d);
	return count;
}

/* Empty cgroups under <v2>/sbtrace/ that no state file names. */
static int gc_orphan_cgroups(const char *dir, bool verbose)
{
	char mnt_point[PATH_MAX], top[PATH_MAX], cg[PATH_MAX], sf[PATH_MAX];
	struct dirent *de;
	struct stat st;
	int count = 0;
	time_t now = time(NULL);
	DIR *d;

	if (cgroup2_mount(mnt_point, sizeof(mnt_point)) ||
	    !str_fits(top, sizeof(top), "%s/sbtrace", mnt_point))
		return 0;
	d = opendir(top);
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		if (!sbt_sandbox_name_ok(de->d_name) ||
		    !str_fits(cg, sizeof(cg), "%s/%s", top, de->d_name) ||
		    !str_fits(sf, sizeof(sf), "%s/%s.json", dir, de->d_name))
			continue;
		if (lstat(sf, &st) == 0 || stat(cg, &st) || !S_ISDIR(st.st_mode))
			continue;
		/* A sandbox being started has its cgroup before its first process. */
		if (now - st.st_ctime < GC_MIN_AGE_SEC || !cgroup_empty(cg))
			continue;
		if (cgroup_rmdir_tree(cg, 0) == 0) {
			count++;
			if (verbose)
				fprintf(stderr, "sbtrace-shim gc: removed empty cgroup %s\n", cg);
		}
	}
	closedir(d);
	return count;
}

/* STATE_DIR/NAME.vm directories that no state file names (a shim killed while starting). */
static void gc_orphan_vm_dirs(const char *dir, bool verbose)
{
	char name[SBT_SANDBOX_NAME_MAX + 1], sf[PATH_MAX], vd[PATH_MAX];
	struct dirent *de;
	struct stat st;
	time_t now = time(NULL);
	DIR *d = opendir(dir);

	if (!d)
		return;
	while ((de = readdir(d))) {
		size_t n = strlen(de->d_name);

		if (n <= 3 || n - 3 > SBT_SANDBOX_NAME_MAX ||
		    strcmp(de->d_name + n - 3, ".vm") != 0)
			continue;
		snprintf(name, sizeof(name), "%.*s", (int)(n - 3), de->d_name);
		if (!sbt_sandbox_name_ok(name) ||
		    !str_fits(sf, sizeof(sf), "%s/%s.json", dir, name) ||
		    !str_fits(vd, sizeof(vd), "%s/%s", dir, de->d_name))
			continue;
		if (lstat(sf, &st) == 0 || lstat(vd, &st) || !S_ISDIR(st.st_mode) ||
		    now - st.st_ctime < GC_MIN_AGE_SEC)
			continue;
		vm_dir_remove(vd);
		if (verbose && lstat(vd, &st))
			fprintf(stderr, "sbtrace-shim gc: removed %s\n", vd);
	}
	closedir(d);
}

int sbt_sandbox_gc(const char *state_dir, bool verbose)
{
	const char *dir = state_dir ? state_dir : SBT_STATE_DIR_DEFAULT;
	int n = gc_state_files(dir, verbose);

	if (n < 0)
		return n;
	gc_orphan_vm_dirs(dir, verbose);
	return n + gc_orphan_cgroups(dir, verbose);
}
