// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Test helper: escape attempts from inside a sandbox, and the host-side ends
 * they need (tests/integration/t_escape.sh). Each attempt prints ONE line,
 * "ok [detail]" (exit 0) or "err <ERRNO-NAME>" (exit 1); exit 2 on usage.
 *
 * Inside the sandbox (the attacker):
 *   read FILE            open and read a byte
 *   unix-connect PATH    connect to a unix stream socket, read its greeting
 *   key-find DESC        search the user and session keyrings for a "user" key
 *   key-add DESC DATA    add a "user" key to the user keyring ("ok <id>")
 *   unshare-user         unshare(CLONE_NEWUSER), then a raw socket in it
 *   setuid-file PATH     create PATH (0755), then chmod 04755 ("ok": both worked)
 *   creat-mode PATH MODE create PATH with octal MODE (04755: setuid at birth)
 *   mknod-mode PATH MODE mknod a regular file PATH with octal MODE
 *   setcap PATH          give PATH file capabilities (security.capability: CAP_SETUID)
 *   mount DIR            mount a tmpfs on DIR
 *   bpf                  create a BPF array map
 *   bpf-prog             load a BPF socket filter (r0 = 0; exit)
 *   delete-module NAME   unload a kernel module (delete_module(2), O_NONBLOCK)
 *   kill PID SIG         kill(PID, SIG), SIG a number
 *   ptrace PID           PTRACE_ATTACH to PID
 *   tiocsti FD           push a byte into terminal FD's input (TIOCSTI)
 *   write FILE TEXT      open FILE for writing and write TEXT
 *   kill0 PID            kill(PID, 0): does PID exist here
 *   mkdir DIR            mkdir DIR (a nested cgroup, for one)
 *
 * On the host (the victim's side):
 *   unix-serve PATH LOG  listen on PATH (root's, 0666); per connection log
 *                        "uid=<SO_PEERCRED uid>" and greet "hello\n". Prints
 *                        "ready"; runs until SIGTERM.
 *   key-add / key-find   as above, in the host root's keyrings
 *   key-unlink DESC      remove the key from the user keyring
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <linux/capability.h>
#include <linux/keyctl.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/xattr.h>
#include <sys/wait.h>

static int result(int ok, const char *detail)
{
	if (ok) {
		printf("ok%s%s\n", detail ? " " : "", detail ? detail : "");
		return 0;
	}
	printf("err %s\n", strerrorname_np(errno) ? strerrorname_np(errno) : "E?");
	return 1;
}

static int do_read(const char *path)
{
	char c;
	int fd = open(path, O_RDONLY | O_CLOEXEC), ok;

	if (fd < 0)
		return result(0, NULL);
	ok = read(fd, &c, 1) >= 0;
	close(fd);
	return result(ok, NULL);
}

static int unix_addr(const char *path, struct sockaddr_un *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sa->sun_path)) {
		fprintf(stderr, "sbt-escape: socket path too long\n");
		return -1;
	}
	strcpy(sa->sun_path, path);
	return 0;
}

static int unix_connect(const char *path)
{
	struct sockaddr_un sa;
	char buf[16];
	int fd, ok;

	if (unix_addr(path, &sa))
		return 2;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
		return result(0, NULL);
	ok = read(fd, buf, sizeof(buf)) > 0;
	close(fd);
	return result(ok, NULL);
}

static volatile sig_atomic_t stop;
static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

static int unix_serve(const char *path, const char *log)
{
	struct sigaction sa_term = { .sa_handler = on_term };
	struct sockaddr_un sa;
	FILE *lf = fopen(log, "a");
	int fd;

	if (!lf || unix_addr(path, &sa))
		return 2;
	setvbuf(lf, NULL, _IOLBF, 0);
	sigaction(SIGTERM, &sa_term, NULL);
	sigaction(SIGINT, &sa_term, NULL);
	unlink(path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || chmod(path, 0666) ||
	    listen(fd, 16)) {
		perror("sbt-escape unix-serve");
		return 2;
	}
	printf("ready\n");
	fflush(stdout);
	while (!stop) {
		struct ucred cred;
		socklen_t len = sizeof(cred);
		int c = accept4(fd, NULL, NULL, SOCK_CLOEXEC);

		if (c < 0)
			continue;
		if (getsockopt(c, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0)
			fprintf(lf, "uid=%u\n", (unsigned)cred.uid);
		if (write(c, "hello\n", 6) < 0)
			perror("sbt-escape unix-serve: write");
		close(c);
	}
	unlink(path);
	return 0;
}

static long key_search(const char *desc)
{
	long id = syscall(SYS_keyctl, KEYCTL_SEARCH, KEY_SPEC_USER_KEYRING, "user", desc, 0);

	if (id < 0 && errno != EPERM && errno != ENOSYS)
		id = syscall(SYS_keyctl, KEYCTL_SEARCH, KEY_SPEC_SESSION_KEYRING, "user", desc, 0);
	return id;
}

static int key_find(const char *desc)
{
	char buf[32];
	long id = key_search(desc);

	snprintf(buf, sizeof(buf), "%ld", id);
	return result(id >= 0, buf);
}

static int key_add(const char *desc, const char *data)
{
	char buf[32];
	long id = syscall(SYS_add_key, "user", desc, data, strlen(data), KEY_SPEC_USER_KEYRING);

	snprintf(buf, sizeof(buf), "%ld", id);
	return result(id >= 0, buf);
}

static int key_unlink(const char *desc)
{
	long id = key_search(desc);

	return result(id >= 0 && syscall(SYS_keyctl, KEYCTL_UNLINK, id, KEY_SPEC_USER_KEYRING) == 0,
		      NULL);
}

/* In a child: a new user namespace, and what its full capabilities give (a raw socket). */
static int unshare_user(void)
{
	int st, fd;
	pid_t pid;

	if (unshare(CLONE_NEWUSER))
		return result(0, NULL);
	pid = fork();
	if (pid == 0) {
		if (unshare(CLONE_NEWNET))
			_exit(1);
		fd = socket(AF_INET, SOCK_RAW, IPPROTO_ICMP);
		_exit(fd < 0 ? 2 : 0);
	}
	if (pid < 0 || waitpid(pid, &st, 0) < 0)
		return result(0, NULL);
	return result(1, WIFEXITED(st) && WEXITSTATUS(st) == 0 ? "raw-socket" : "no-raw-socket");
}

static int setuid_file(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755), ok;

	if (fd < 0)
		return result(0, NULL);
	ok = fchmod(fd, 04755) == 0;
	close(fd);
	return result(ok, NULL);
}

static int setcap(const char *path)
{
	struct vfs_cap_data cap = { .magic_etc = VFS_CAP_REVISION_2 | VFS_CAP_FLAGS_EFFECTIVE };
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0755);

	if (fd < 0)
		return result(0, NULL);
	close(fd);
	cap.data[0].permitted = 1u << CAP_SETUID;
	return result(setxattr(path, "security.capability", &cap, XATTR_CAPS_SZ_2, 0) == 0, NULL);
}

static int do_bpf(void)
{
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.map_type = BPF_MAP_TYPE_ARRAY;
	attr.key_size = 4;
	attr.value_size = 4;
	attr.max_entries = 1;
	return result(syscall(SYS_bpf, BPF_MAP_CREATE, &attr, sizeof(attr)) >= 0, NULL);
}

static int do_bpf_prog(void)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	union bpf_attr attr;
	long fd;

	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
	attr.insns = (unsigned long)insns;
	attr.insn_cnt = 2;
	attr.license = (unsigned long)"GPL";
	fd = syscall(SYS_bpf, BPF_PROG_LOAD, &attr, sizeof(attr));
	if (fd >= 0)
		close((int)fd);
	return result(fd >= 0, NULL);
}

static int do_write(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), ok;

	if (fd < 0)
		return result(0, NULL);
	ok = write(fd, text, strlen(text)) >= 0;
	close(fd);
	return result(ok, NULL);
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "";
	const char *a = argc > 2 ? argv[2] : NULL, *b = argc > 3 ? argv[3] : NULL;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(cmd, "read") && a)
		return do_read(a);
	if (!strcmp(cmd, "unix-connect") && a)
		return unix_connect(a);
	if (!strcmp(cmd, "unix-serve") && a && b)
		return unix_serve(a, b);
	if (!strcmp(cmd, "key-find") && a)
		return key_find(a);
	if (!strcmp(cmd, "key-add") && a && b)
		return key_add(a, b);
	if (!strcmp(cmd, "key-unlink") && a)
		return key_unlink(a);
	if (!strcmp(cmd, "unshare-user"))
		return unshare_user();
	if (!strcmp(cmd, "setuid-file") && a)
		return setuid_file(a);
	if (!strcmp(cmd, "creat-mode") && a && b) {
		int fd = open(a, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
			      (mode_t)strtoul(b, NULL, 8));

		if (fd >= 0)
			close(fd);
		return result(fd >= 0, NULL);
	}
	if (!strcmp(cmd, "mknod-mode") && a && b)
		return result(mknod(a, S_IFREG | (mode_t)strtoul(b, NULL, 8), 0) == 0, NULL);
	if (!strcmp(cmd, "mount") && a)
		return result(mount("none", a, "tmpfs", 0, NULL) == 0, NULL);
	if (!strcmp(cmd, "setcap") && a)
		return setcap(a);
	if (!strcmp(cmd, "bpf"))
		return do_bpf();
	if (!strcmp(cmd, "bpf-prog"))
		return do_bpf_prog();
	if (!strcmp(cmd, "delete-module") && a)
		return result(syscall(SYS_delete_module, a, O_NONBLOCK) == 0, NULL);
	if (!strcmp(cmd, "kill") && a && b)
		return result(kill((pid_t)atoi(a), atoi(b)) == 0, NULL);
	if (!strcmp(cmd, "ptrace") && a)
		return result(ptrace(PTRACE_ATTACH, (pid_t)atoi(a), NULL, NULL) == 0, NULL);
	if (!strcmp(cmd, "tiocsti") && a)
		return result(ioctl(atoi(a), TIOCSTI, "x") == 0, NULL);
	if (!strcmp(cmd, "write") && a && b)
		return do_write(a, b);
	if (!strcmp(cmd, "kill0") && a)
		return result(kill((pid_t)atoi(a), 0) == 0, NULL);
	if (!strcmp(cmd, "mkdir") && a)
		return result(mkdir(a, 0755) == 0, NULL);
	fprintf(stderr, "usage: sbt-escape COMMAND [ARGS] (see the source's head)\n");
	return 2;
}
