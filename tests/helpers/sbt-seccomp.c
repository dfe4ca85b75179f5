// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Test helper: the sandbox's seccomp filter (userspace/sandbox/seccomp.c) as
 * its workload sees it. Run as the workload; one line per check.
 *
 *   sbt-seccomp [DIR]     DIR: where phase 1 makes its files (default /tmp)
 *
 * Phase 1, what a build does, executed for real: "allow LABEL ok" (or the
 * errno's name). "abi i386|x32 ok|absent": whether the kernel takes that ABI.
 *
 * Phase 2, calls the filter must judge, none of which the kernel runs: the
 * helper adds its own filter, which hands each of these calls to a listener
 * thread (SECCOMP_RET_USER_NOTIF) that answers ECANCELED without running it.
 * The kernel runs every filter and takes the strictest verdict, and an
 * earlier filter's ERRNO beats USER_NOTIF: so a call the sandbox's filter
 * denies fails with its errno and never reaches the listener, and a call it
 * lets through does. "deny LABEL EPERM" (or ENOSYS): denied by a filter
 * before; "... reached": nothing stopped it. The same lines for "pass
 * LABEL": calls the filter must let through (the kernel would then decide).
 * Without the sandbox's filter every deny line says "reached", and nothing
 * harmful runs anywhere.
 *
 * A LABEL is the syscall's name, then what is special about the call
 * (chmod:S_ISUID); i386: and x32: labels enter the kernel through that ABI
 * (int $0x80; the x32 bit), with its own syscall numbers.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/personality.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <seccomp.h>

#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452 /* Linux 6.6; the same number in every ABI */
#endif
#define X32_BIT 0x40000000L

extern char **environ;

enum abi { NATIVE = 0, I386, X32 };

struct check {
	const char *kind;  /* "deny" or "pass" */
	const char *label; /* the syscall's name[:what is special] */
	const char *name;  /* the syscall the listener catches (by name: every ABI) */
	enum abi abi;
	long nr; /* in that ABI */
	long a[5];
};

#define CHECK(kind, label, sys, abi, nr, ...)                                                      \
	{                                                                                          \
		kind, label, #sys, abi, nr,                                                        \
		{                                                                                  \
			__VA_ARGS__                                                                \
		}                                                                                  \
	}
#define D(label, sys, ...) CHECK("deny", label, sys, NATIVE, SYS_##sys, __VA_ARGS__)
#define P(label, sys, ...) CHECK("pass", label, sys, NATIVE, SYS_##sys, __VA_ARGS__)
/* i386 numbers from the kernel's arch/x86/entry/syscalls/syscall_32.tbl */
#define D32(label, sys, nr, ...) CHECK("deny", "i386:" label, sys, I386, nr, __VA_ARGS__)
#define P32(label, sys, nr, ...) CHECK("pass", "i386:" label, sys, I386, nr, __VA_ARGS__)
#define DX32(label, sys, ...)                                                                      \
	CHECK("deny", "x32:" label, sys, X32, X32_BIT | SYS_##sys, __VA_ARGS__)

/* Only the arguments the filter reads matter: the rest can be 0, as nothing runs. */
static const struct check checks[] = {
	D("add_key", add_key, 0),
	D("request_key", request_key, 0),
	D("keyctl", keyctl, 0),
	D("bpf", bpf, 0),
	D("perf_event_open", perf_event_open, 0),
	D("userfaultfd", userfaultfd, 0),
	D("io_uring_setup", io_uring_setup, 0),
	D("io_uring_enter", io_uring_enter, 0),
	D("io_uring_register", io_uring_register, 0),
	D("init_module", init_module, 0),
	D("finit_module", finit_module, 0),
	D("delete_module", delete_module, 0),
	D("kexec_load", kexec_load, 0),
	D("kexec_file_load", kexec_file_load, 0),
	D("unshare:CLONE_NEWUSER", unshare, CLONE_NEWUSER),
	D("unshare:CLONE_NEWUSER|CLONE_NEWNS", unshare, CLONE_NEWUSER | CLONE_NEWNS),
	D("clone:CLONE_NEWUSER", clone, CLONE_NEWUSER | SIGCHLD),
	D("clone3", clone3, 0),
	D("setns", setns, 0),
	D("mount", mount, 0),
	D("umount2", umount2, 0),
	D("pivot_root", pivot_root, 0),
	D("move_mount", move_mount, 0),
	D("open_tree", open_tree, 0),
	D("fsopen", fsopen, 0),
	D("fsconfig", fsconfig, 0),
	D("fsmount", fsmount, 0),
	D("fspick", fspick, 0),
	D("mount_setattr", mount_setattr, 0),
	D("ptrace:PTRACE_ATTACH", ptrace, PTRACE_ATTACH, 1),
	D("ptrace:PTRACE_SEIZE", ptrace, PTRACE_SEIZE, 1),
	D("process_vm_readv", process_vm_readv, 1),
	D("process_vm_writev", process_vm_writev, 1),
	D("kcmp", kcmp, 1),
	D("pidfd_getfd", pidfd_getfd, 0),
	D("chmod:S_ISUID", chmod, 0, 04755),
	D("chmod:S_ISGID", chmod, 0, 02755),
	D("fchmod:S_ISUID", fchmod, 0, 04711),
	D("fchmod:S_ISGID", fchmod, 0, 02711),
	D("fchmodat:S_ISUID", fchmodat, AT_FDCWD, 0, 04755),
	D("fchmodat:S_ISGID", fchmodat, AT_FDCWD, 0, 02755),
	D("fchmodat2:S_ISUID", fchmodat2, AT_FDCWD, 0, 04755),
	D("fchmodat2:S_ISGID", fchmodat2, AT_FDCWD, 0, 02755),
	D("open:O_CREAT+S_ISUID", open, 0, O_WRONLY | O_CREAT, 04755),
	D("open:O_CREAT+S_ISGID", open, 0, O_WRONLY | O_CREAT | O_EXCL, 02755),
	D("open:O_TMPFILE+S_ISUID", open, 0, O_RDWR | O_TMPFILE, 04700),
	D("openat:O_CREAT+S_ISUID", openat, AT_FDCWD, 0, O_WRONLY | O_CREAT | O_TRUNC, 04755),
	D("openat:O_CREAT+S_ISGID", openat, AT_FDCWD, 0, O_RDWR | O_CREAT, 02700),
	D("openat:O_TMPFILE+S_ISGID", openat, AT_FDCWD, 0, O_WRONLY | O_TMPFILE, 02700),
	D("creat:S_ISUID", creat, 0, 04755),
	D("creat:S_ISGID", creat, 0, 02755),
	D("openat2", openat2, AT_FDCWD, 0),
	D("mknod:S_IFCHR", mknod, 0, S_IFCHR | 0666, 0x103),
	D("mknod:S_IFBLK", mknod, 0, S_IFBLK | 0600, 0x800),
	D("mknod:S_IFREG+S_ISUID", mknod, 0, S_IFREG | 04755),
	D("mknodat:S_IFCHR", mknodat, AT_FDCWD, 0, S_IFCHR | 0600, 0x103),
	D("mknodat:S_IFBLK", mknodat, AT_FDCWD, 0, S_IFBLK | 0600, 0x800),
	D("mknodat:S_IFREG+S_ISGID", mknodat, AT_FDCWD, 0, S_IFREG | 02755),
	D("reboot", reboot, 0),
	D("swapon", swapon, 0),
	D("swapoff", swapoff, 0),
	D("settimeofday", settimeofday, 0),
	D("clock_settime", clock_settime, 0),
	D("clock_adjtime", clock_adjtime, 0),
	D("adjtimex", adjtimex, 0),
	D("acct", acct, 0),
	D("quotactl", quotactl, 0),
	D("quotactl_fd", quotactl_fd, 0),
	D("syslog", syslog, 10),
	D("vhangup", vhangup, 0),
	D("lookup_dcookie", lookup_dcookie, 0),
	D("name_to_handle_at", name_to_handle_at, AT_FDCWD),
	D("open_by_handle_at", open_by_handle_at, AT_FDCWD),
	D("iopl", iopl, 3),
	D("ioperm", ioperm, 0x80, 1, 1),
	D("socket:AF_VSOCK", socket, AF_VSOCK, SOCK_STREAM, 0),
	D("socket:AF_PACKET", socket, AF_PACKET, SOCK_RAW, 0),
	D("socket:AF_ALG", socket, AF_ALG, SOCK_SEQPACKET, 0),
	D("socket:AF_MAX+7", socket, AF_MAX + 7, SOCK_STREAM, 0),
	D("socket:-1", socket, -1, SOCK_STREAM, 0),
	D("socketpair:AF_VSOCK", socketpair, AF_VSOCK, SOCK_STREAM, 0, 0),

	P("unshare:CLONE_NEWNS", unshare, CLONE_NEWNS),
	P("unshare:CLONE_FS|CLONE_FILES", unshare, CLONE_FS | CLONE_FILES),
	P("clone:CLONE_NEWNS|CLONE_NEWPID", clone, CLONE_NEWNS | CLONE_NEWPID | SIGCHLD),
	P("ptrace:PTRACE_TRACEME", ptrace, PTRACE_TRACEME),
	P("ptrace:PTRACE_CONT", ptrace, PTRACE_CONT, 1),
	P("chmod:01777", chmod, 0, 01777),
	P("fchmodat:0755", fchmodat, AT_FDCWD, 0, 0755),
	P("open:O_RDONLY+04755", open, 0, O_RDONLY, 04755),
	P("openat:O_CREAT+0644", openat, AT_FDCWD, 0, O_WRONLY | O_CREAT, 0644),
	P("mknod:S_IFIFO", mknod, 0, S_IFIFO | 0644),
	P("mknodat:S_IFSOCK", mknodat, AT_FDCWD, 0, S_IFSOCK | 0644),
	P("personality:PER_LINUX32", personality, PER_LINUX32),
	P("socket:AF_INET", socket, AF_INET, SOCK_STREAM, 0),
	P("socket:AF_INET6", socket, AF_INET6, SOCK_DGRAM, 0),
	P("socket:AF_UNIX", socket, AF_UNIX, SOCK_STREAM, 0),
	P("socket:AF_NETLINK", socket, AF_NETLINK, SOCK_RAW, 0),
	P("socketpair:AF_UNIX", socketpair, AF_UNIX, SOCK_STREAM, 0, 0),

	D32("keyctl", keyctl, 288, 0),
	D32("unshare:CLONE_NEWUSER", unshare, 310, CLONE_NEWUSER),
	D32("mount", mount, 21, 0),
	D32("umount", umount, 22, 0),
	D32("stime", stime, 25, 0),
	D32("clock_settime64", clock_settime64, 404, 0),
	D32("clock_adjtime64", clock_adjtime64, 405, 0),
	D32("ptrace:PTRACE_ATTACH", ptrace, 26, PTRACE_ATTACH, 1),
	D32("chmod:S_ISUID", chmod, 15, 0, 04755),
	D32("open:O_CREAT+S_ISGID", open, 5, 0, O_WRONLY | O_CREAT, 02755),
	D32("bpf", bpf, 357, 0),
	D32("socketcall", socketcall, 102, 1, 0),
	D32("socket:AF_VSOCK", socket, 359, AF_VSOCK, SOCK_STREAM, 0),
	P32("unshare:CLONE_NEWNS", unshare, 310, CLONE_NEWNS),
	P32("chmod:0755", chmod, 15, 0, 0755),

	DX32("keyctl", keyctl, 0),
	DX32("unshare:CLONE_NEWUSER", unshare, CLONE_NEWUSER),
};

#define NR_CHECKS (sizeof(checks) / sizeof(checks[0]))

static atomic_uint reached;

/* A syscall through int $0x80 (the i386 ABI) from 64-bit code; -errno on failure. */
static long int80(long nr, const long *a)
{
	long ret;

	__asm__ volatile("int $0x80"
			 : "=a"(ret)
			 : "a"(nr), "b"(a[0]), "c"(a[1]), "d"(a[2]), "S"(a[3]), "D"(a[4])
			 : "memory", "r8", "r9", "r10", "r11");
	return (int)ret;
}

/* The call in its ABI: 0 or more, or -errno. */
static long call(const struct check *c)
{
	long r;

	if (c->abi == I386)
		return int80(c->nr, c->a);
	r = syscall(c->nr, c->a[0], c->a[1], c->a[2], c->a[3], c->a[4]);
	if (r == 0 && (c->nr == SYS_clone || c->nr == (X32_BIT | SYS_clone)))
		_exit(0); /* a clone that ran after all: the child goes at once */
	return r < 0 ? -errno : r;
}

static const char *errname(long neg)
{
	const char *n = strerrorname_np((int)-neg);

	return n ? n : "E?";
}

static void line(const char *kind, const char *label, const char *result)
{
	printf("%s %s %s\n", kind, label, result);
}

/* ---- phase 1 ---------------------------------------------------------------- */

static void allow(const char *label, int ret)
{
	line("allow", label, ret == 0 ? "ok" : errname(ret));
}

static int child_status(pid_t pid)
{
	int st;

	if (pid < 0)
		return -errno;
	if (waitpid(pid, &st, 0) != pid)
		return -errno;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -ECHILD;
}

static int fork_exec(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	return child_status(pid);
}

static int spawn(void)
{
	char *argv[] = { "true", NULL };
	pid_t pid;
	int ret = posix_spawn(&pid, "/bin/true", NULL, NULL, argv, environ);

	return ret ? -ret : child_status(pid);
}

static void *thread_main(void *arg)
{
	return arg;
}

static int thread(void)
{
	static int token;
	pthread_t t;
	void *out = NULL;
	int ret = pthread_create(&t, NULL, thread_main, &token);

	if (ret)
		return -ret;
	pthread_join(t, &out);
	return out == &token ? 0 : -EIO;
}

/* A child asks to be traced, stops; its parent reads its registers and lets it go on. */
static int traceme(void)
{
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL))
			_exit(1);
		raise(SIGSTOP);
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFSTOPPED(st))
		return pid < 0 ? -errno : -ECHILD;
	errno = 0;
	ptrace(PTRACE_PEEKUSER, pid, NULL, NULL);
	if (errno || ptrace(PTRACE_CONT, pid, NULL, NULL))
		return -errno;
	return child_status(pid);
}

static int fd_ok(int fd)
{
	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

static int neg(int r)
{
	return r ? -errno : 0;
}

/* The files a build makes, in dir. */
static void files(const char *dir)
{
	char p[4096];
	int fd;

	snprintf(p, sizeof(p), "%s/sbt-seccomp-f", dir);
	unlink(p);
	allow("open:O_CREAT+0644", fd_ok(open(p, O_WRONLY | O_CREAT, 0644)));
	allow("chmod:0755", neg(chmod(p, 0755)));
	fd = open(p, O_RDONLY);
	allow("fchmod:0644", neg(fd < 0 ? -1 : fchmod(fd, 0644)));
	if (fd >= 0)
		close(fd);
	unlink(p);
	allow("openat:O_CREAT|O_EXCL+0600",
	      fd_ok(openat(AT_FDCWD, p, O_WRONLY | O_CREAT | O_EXCL, 0600)));
	unlink(p);
	allow("creat:0755", fd_ok(creat(p, 0755)));
	unlink(p);
	allow("open:O_TMPFILE+0600", fd_ok(open(dir, O_RDWR | O_TMPFILE, 0600)));
	allow("mknod:S_IFIFO", neg(mknod(p, S_IFIFO | 0644, 0)));
	unlink(p);
	allow("mknod:S_IFREG+0644", neg(mknod(p, S_IFREG | 0644, 0)));
	unlink(p);
	allow("mkdir+chmod:01777", neg(mkdir(p, 0755) || chmod(p, 01777)));
	rmdir(p);
}

static bool abi_works(enum abi abi)
{
	static const long none[5];

	if (abi == I386)
		return int80(20, none) == getpid(); /* getpid */
	return syscall(X32_BIT | SYS_getpid) == getpid();
}

static void phase1(const char *dir, bool *i386, bool *x32)
{
	allow("fork+exec", fork_exec());
	allow("posix_spawn", spawn());
	allow("pthread_create", thread());
	allow("unshare:CLONE_FS|CLONE_FILES", neg(unshare(CLONE_FS | CLONE_FILES)));
	allow("ptrace:PTRACE_TRACEME", traceme());
	allow("personality:query", personality(0xffffffff) == -1 ? -errno : 0);
	files(dir);
	*i386 = abi_works(I386);
	*x32 = abi_works(X32);
	line("abi", "i386", *i386 ? "ok" : "absent");
	line("abi", "x32", *x32 ? "ok" : "absent");
}

/* ---- phase 2 ---------------------------------------------------------------- */

/* Started before the filter it serves (its own clone must not wait for it): the fd comes by pipe. */
static void *listener(void *arg)
{
	int fd, from = *(int *)arg;
	struct seccomp_notif *req;
	struct seccomp_notif_resp *resp;

	if (read(from, &fd, sizeof(fd)) != sizeof(fd) || seccomp_notify_alloc(&req, &resp))
		return NULL;
	for (;;) {
		memset(req, 0, sizeof(*req)); /* the kernel refuses a dirty buffer */
		if (seccomp_notify_receive(fd, req))
			continue; /* interrupted, or the caller went away meanwhile */
		atomic_fetch_add(&reached, 1);
		resp->id = req->id;
		resp->val = 0;
		resp->error = -ECANCELED;
		resp->flags = 0;
		seccomp_notify_respond(fd, resp);
	}
	return NULL;
}

/* This thread's own filter: every call of the checks goes to the listener. */
static int listen_to_checks(int *fd)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	int ret = ctx ? 0 : -ENOMEM;

	if (!ret)
		ret = seccomp_arch_add(ctx, SCMP_ARCH_X86);
	if (!ret || ret == -EEXIST)
		ret = seccomp_arch_add(ctx, SCMP_ARCH_X32);
	for (size_t i = 0; i < NR_CHECKS && (!ret || ret == -EEXIST); i++)
		ret = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY,
				       seccomp_syscall_resolve_name(checks[i].name), 0);
	if (!ret || ret == -EEXIST)
		ret = seccomp_load(ctx);
	if (!ret)
		*fd = seccomp_notify_fd(ctx);
	if (ctx)
		seccomp_release(ctx);
	return ret;
}

static int phase2(bool i386, bool x32)
{
	static int pipefd[2];
	pthread_t t;
	int fd = -1, ret;

	if (pipe(pipefd) || pthread_create(&t, NULL, listener, &pipefd[0])) {
		fprintf(stderr, "sbt-seccomp: listener thread: %s\n", strerror(errno));
		return 1;
	}
	ret = listen_to_checks(&fd);
	if (ret || fd < 0 || write(pipefd[1], &fd, sizeof(fd)) != sizeof(fd)) {
		fprintf(stderr, "sbt-seccomp: own filter: %s\n", strerror(ret ? -ret : errno));
		return 1;
	}
	for (size_t i = 0; i < NR_CHECKS; i++) {
		const struct check *c = &checks[i];
		unsigned int before;
		long r;

		if ((c->abi == I386 && !i386) || (c->abi == X32 && !x32))
			continue;
		before = atomic_load(&reached);
		r = call(c);
		if (atomic_load(&reached) != before)
			line(c->kind, c->label, "reached");
		else
			line(c->kind, c->label, r < 0 ? errname(r) : "succeeded");
	}
	return 0;
}

int main(int argc, char **argv)
{
	bool i386 = false, x32 = false;
	int ret;

	setvbuf(stdout, NULL, _IOLBF, 0);
	phase1(argc > 1 ? argv[1] : "/tmp", &i386, &x32);
	ret = phase2(i386, x32);
	fflush(stdout);
	_exit(ret); /* the listener thread blocks in the kernel */
}
