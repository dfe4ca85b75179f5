// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * sbtrace-shim: run a workload in a sandbox (sandbox.h) that sbtrace attaches
 * to before the workload's first exec. Commands are a table of {name, fn}.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "clock.h"
#include "cli.h"
#include "sandbox.h"

#ifndef SBTRACE_VERSION
#define SBTRACE_VERSION "dev"
#endif

enum {
	SHIM_EXIT_OK = 0,
	SHIM_EXIT_RUNTIME = 1, /* gc: the state dir could not be read */
	SHIM_EXIT_USAGE = 2,
	SHIM_EXIT_SETUP = 3,
	SHIM_EXIT_VM_TIMEOUT = 124, /* as timeout(1) */
};

#define GRACE_MS 2000 /* after forwarding SIGINT/SIGTERM, before killing everything */

static const char exit_codes_help[] =
	"Exit codes:\n"
	"  0    success; run: the workload's own exit code once it ran (128+N when\n"
	"       killed by signal N, 127 when its command could not be executed)\n"
	"  1    gc: the state dir could not be read\n"
	"  2    usage or input error (unknown option, bad name, missing workspace,\n"
	"       sandbox name in use, backend not available)\n"
	"  3    the sandbox could not be set up (cgroup, namespaces, mounts, state\n"
	"       file, tap), or it died before the workload started; qemu: the VM\n"
	"       ended without reporting the workload's exit code\n"
	"  124  run --backend qemu: --vm-timeout expired (the VM was killed)\n";

static void usage_main(FILE *f)
{
	fprintf(f,
		"Usage: sbtrace-shim [--version] [--help] COMMAND [ARGS]\n"
		"\n"
		"Run a workload in a sandbox that sbtrace can attach to before the\n"
		"workload's first exec.\n"
		"\n"
		"Commands:\n"
		"  run        start a sandbox, wait for a tracer, run the workload in it\n"
		"  gc         clean up what killed shims left (processes, cgroups, state)\n"
		"  version    print the version\n"
		"  help       show help for a command: sbtrace-shim help run\n"
		"\n%s",
		exit_codes_help);
}

static void usage_run(FILE *f)
{
	fprintf(f,
		"Usage: sbtrace-shim run --name NAME [OPTIONS] -- CMD [ARGS...]\n"
		"\n"
		"Start sandbox NAME: cgroup <cgroup v2 mount>/sbtrace/NAME; new pid, mount,\n"
		"uts, ipc, net and cgroup namespaces; the host's filesystem read-only;\n"
		"writable tmpfs /tmp and /root (HOME); only lo; no capabilities,\n"
		"no_new_privs. Write the state file STATE_DIR/NAME.json, wait for a tracer,\n"
		"run CMD, and exit with its exit code; everything is removed on exit.\n"
		"\n"
		"  -n, --name NAME        1-%d characters [A-Za-z0-9_.-], not starting with '.'\n"
		"  -b, --backend ns|podman|qemu  ns: the namespaces above (default); podman:\n"
		"                         CMD must be podman or docker (the exec allowlist)\n"
		"                         and runs on the host inside the sandbox cgroup, e.g.\n"
		"                         podman build --cgroup-parent=/sbtrace/NAME/build ...;\n"
		"                         qemu: CMD runs in a microVM (below)\n"
		"  -w, --workspace DIR[:ro]  bind DIR at /workspace (read-only with :ro);\n"
		"                         it is also the workload's working directory\n"
		"                         (qemu: a copy, at most a quarter of --vm-mem)\n"
		"      --net none|veth    networking: a new namespace with only lo (none, the\n"
		"                         default), or also eth0, a veth pair's end, with\n"
		"      --veth-addrs HOST/LEN,SANDBOX/LEN  the two ends' addresses (the host\n"
		"                         end is the sandbox's default route) and\n"
		"      --veth-host-netns NAME  the host end in that network namespace\n"
		"                         (default: the shim's own)\n"
		"  -s, --state-dir DIR    state files (default %s)\n"
		"      --no-wait          run CMD at once, without waiting for a tracer\n"
		"      --timings FILE     at the end, write JSON: boot_ms, workload_ms (qemu\n"
		"                         only, else null) and total_ms, from the release\n"
		"  -h, --help             this help\n"
		"\n"
		"The qemu backend: qemu-system-x86_64 -M microvm (TCG, no KVM needed) runs\n"
		"in the sandbox cgroup without capabilities, booting the guest that\n"
		"scripts/guest-build.sh built (a Debian kernel, busybox); CMD runs there as\n"
		"root, in /workspace if given, else /, with busybox's applets on PATH.\n"
		"      --guest DIR        the guest: the directory scripts/guest-build.sh\n"
		"                         prints (required)\n"
		"      --tap-netns NAME   the tap (the guest's eth0's host side, named\n"
		"                         sbt<hash of NAME>) in that network namespace\n"
		"                         (default: the shim's own)\n"
		"      --tap-addrs HOST/LEN,GUEST/LEN  IPv4 of the tap and of eth0, whose\n"
		"                         default route is the tap (else eth0 has none)\n"
		"      --tap-addrs6 HOST/LEN,GUEST/LEN  the same for IPv6\n"
		"      --vm-mem MB        the VM's memory in MiB, 64-16384 (default %d)\n"
		"      --vm-timeout SEC   kill the VM after SEC seconds from its start (exit 124)\n"
		"The VM's console: CMD's output (stdout and stderr together) goes to stdout,\n"
		"the boot messages nowhere unless the VM fails (then their end, on\n"
		"stderr); the exit code is the one the guest reports. The tap, the cgroup\n"
		"and the per-run files (STATE_DIR/NAME.vm) are removed with the sandbox.\n"
		"\n"
		"Waiting for a tracer: before the state file appears, the FIFO\n"
		"STATE_DIR/NAME.attach is created; CMD runs once a line \"attached\" is\n"
		"written to it, which `sbtrace trace --sandbox NAME` does after attaching.\n"
		"The FIFO is removed then. SIGINT, SIGTERM and SIGHUP are forwarded to the\n"
		"workload; whatever still runs %d ms later (or at a second signal) is killed\n"
		"(a VM at once: its guest cannot be signalled).\n"
		"\n%s",
		SBT_SANDBOX_NAME_MAX, SBT_STATE_DIR_DEFAULT, SBT_VM_MEM_DEFAULT_MB, GRACE_MS,
		exit_codes_help);
}

static void usage_gc(FILE *f)
{
	fprintf(f,
		"Usage: sbtrace-shim gc [--state-dir DIR] [-v]\n"
		"\n"
		"For every state file whose shim is gone: kill the sandbox's processes,\n"
		"remove its cgroup and state file. Also remove empty cgroups under\n"
		"<cgroup v2 mount>/sbtrace/ that no state file names (older than 10 s).\n"
		"\n"
		"  -s, --state-dir DIR    state files (default %s)\n"
		"  -v, --verbose          name each sandbox removed\n"
		"  -h, --help             this help\n"
		"\n%s",
		SBT_STATE_DIR_DEFAULT, exit_codes_help);
}

static int usage_error(const char *cmd, const char *fmt, const char *arg)
{
	fprintf(stderr, "sbtrace-shim %s: ", cmd);
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "; see 'sbtrace-shim %s --help'\n", cmd);
	return SHIM_EXIT_USAGE;
}

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

enum attach_result { ATTACHED, SIGNALLED, INIT_DIED };

/* Block until "attached\n" arrives on the FIFO, a signal, or the sandbox dies. */
static enum attach_result wait_attach(const char *name, int fifo, int sfd, int pidfd, int *sig)
{
	char line[128];
	size_t len = 0;

	for (;;) {
		struct pollfd p[3] = { { .fd = fifo, .events = POLLIN },
				       { .fd = sfd, .events = POLLIN },
				       { .fd = pidfd, .events = POLLIN } };
		char buf[256];
		ssize_t n;

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
		n = read(fifo, buf, sizeof(buf));
		for (ssize_t i = 0; i < n; i++) {
			if (buf[i] != '\n') {
				if (len < sizeof(line) - 1)
					line[len++] = buf[i];
				continue;
			}
			line[len] = '\0';
			if (strcmp(line, "attached") == 0)
				return ATTACHED;
			fprintf(stderr,
				"sbtrace-shim: sandbox %s: ignoring '%.40s' on the attach FIFO "
				"(expected 'attached')\n",
				name, line);
			len = 0;
		}
	}
}

/* Wait for the workload; forward a signal, then kill everything after a grace period. */
static int wait_workload(struct sbt_sandbox_run *run, int sfd, int pidfd)
{
	uint64_t deadline = 0;
	int sig = 0, status;

	for (;;) {
		struct pollfd p[2] = { { .fd = sfd, .events = POLLIN },
				       { .fd = pidfd, .events = POLLIN } };
		int timeout = pidfd >= 0 ? -1 : 100, ret;

		if (sig) {
			int64_t left = (int64_t)(deadline - sbt_mono_ms());

			if (left <= 0)
				return 128 + sig;
			if (timeout < 0 || left < timeout)
				timeout = (int)left;
		}
		ret = poll(p, pidfd >= 0 ? 2 : 1, timeout);
		if (ret < 0 && errno != EINTR)
			return SHIM_EXIT_SETUP;
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
static int wait_vm(struct sbt_sandbox_run *run, int sfd, int pidfd, int timeout_s)
{
	uint64_t deadline = timeout_s > 0 ? run->go_ns + (uint64_t)timeout_s * 1000000000ull : 0;
	int status = 0, sig;
	bool eof = false;

	for (;;) {
		struct pollfd p[3] = { { .fd = eof ? -1 : run->console_fd, .events = POLLIN },
				       { .fd = sfd, .events = POLLIN },
				       { .fd = pidfd, .events = POLLIN } };
		int timeout = pidfd >= 0 ? -1 : 100, ret;

		if (deadline) {
			uint64_t now = sbt_mono_ns();

			if (now >= deadline) {
				fprintf(stderr,
					"sbtrace-shim run: sandbox %s: --vm-timeout %d s expired; "
					"the VM was killed\n",
					run->name, timeout_s);
				return SHIM_EXIT_VM_TIMEOUT;
			}
			if (timeout < 0 || (deadline - now) / 1000000 + 1 < (uint64_t)timeout)
				timeout = (int)((deadline - now) / 1000000 + 1);
		}
		ret = poll(p, 3, timeout);
		if (ret < 0 && errno != EINTR)
			return SHIM_EXIT_SETUP;
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
	fprintf(stderr,
		"sbtrace-shim run: sandbox %s: the VM died before the workload %s (qemu exited "
		"%s %d)%s%s\n",
		run->name, run->con.phase == SBT_VM_BOOTING ? "started" : "finished",
		WIFSIGNALED(status) ? "on signal" : "with",
		WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status),
		run->con.tail_len ? "; the end of its console:\n" : "", run->con.tail);
	return SHIM_EXIT_SETUP;
}

/* --timings FILE: the phases in ms (null: not reached, or not this backend's). */
static void write_timings(const char *path, const struct sbt_sandbox_run *run, uint64_t end_ns)
{
	const struct sbt_vm_console *con = &run->con;
	char boot[32] = "null", work[32] = "null", total[32] = "null";
	FILE *f;
	bool ok = false;

	if (run->backend == SBT_BACKEND_QEMU && con->ready_ns && run->go_ns)
		snprintf(boot, sizeof(boot), "%.1f", (double)(con->ready_ns - run->go_ns) / 1e6);
	if (run->backend == SBT_BACKEND_QEMU && con->exit_ns && con->ready_ns)
		snprintf(work, sizeof(work), "%.1f", (double)(con->exit_ns - con->ready_ns) / 1e6);
	if (run->go_ns && end_ns > run->go_ns)
		snprintf(total, sizeof(total), "%.1f", (double)(end_ns - run->go_ns) / 1e6);
	f = fopen(path, "we");
	if (f) {
		fprintf(f,
			"{\"sandbox\":\"%s\",\"backend\":\"%s\",\"boot_ms\":%s,"
			"\"workload_ms\":%s,\"total_ms\":%s}\n",
			run->name, sbt_backend_name(run->backend), boot, work, total);
		ok = !ferror(f);
		if (fclose(f))
			ok = false;
	}
	if (!ok)
		fprintf(stderr, "sbtrace-shim run: --timings %s: %s\n", path, strerror(errno));
}

/* Create the attach FIFO (a stale one from a killed shim of the same name is replaced). */
static int make_fifo(const char *dir, const char *name, char *path, size_t len)
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

static int cmd_run(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "name", required_argument, NULL, 'n' },
		{ "backend", required_argument, NULL, 'b' },
		{ "workspace", required_argument, NULL, 'w' },
		{ "net", required_argument, NULL, 1 },
		{ "state-dir", required_argument, NULL, 's' },
		{ "no-wait", no_argument, NULL, 2 },
		{ "veth-addrs", required_argument, NULL, 3 },
		{ "veth-host-netns", required_argument, NULL, 4 },
		{ "guest", required_argument, NULL, 5 },
		{ "tap-netns", required_argument, NULL, 6 },
		{ "tap-addrs", required_argument, NULL, 7 },
		{ "tap-addrs6", required_argument, NULL, 8 },
		{ "vm-mem", required_argument, NULL, 9 },
		{ "vm-timeout", required_argument, NULL, 10 },
		{ "timings", required_argument, NULL, 11 },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	static char workspace[PATH_MAX], tap4[128], tap6[128];
	struct sbt_sandbox_spec spec = { .net = SBT_NET_NONE, .stdout_fd = -1, .stderr_fd = -1 };
	struct sbt_sandbox_run run;
	char err[PATH_MAX + 512], fifo_path[PATH_MAX] = "";
	const char *state_dir = SBT_STATE_DIR_DEFAULT, *timings = NULL;
	int c, ret, code = SHIM_EXIT_SETUP, fifo = -1, sfd = -1, pidfd = -1, sig = 0;
	int vm_timeout = 0;
	bool no_wait = false, started = false, tap_opts = false;
	char *end;
	long num;
	struct stat st;
	sigset_t sigs;
	size_t n;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+n:b:w:s:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'n':
			spec.name = optarg;
			break;
		case 'b':
			/* podman: CMD (podman or docker, e.g. a build with --cgroup-parent)
			 * runs as a host tool inside the sandbox cgroup, no namespaces */
			if (sbt_backend_parse(optarg, &spec.backend))
				return usage_error("run", "--backend '%s': use ns, podman or qemu",
						   optarg);
			break;
		case 'w':
			n = strlen(optarg);
			if (n >= sizeof(workspace))
				return usage_error("run", "--workspace '%.64s...': path too long",
						   optarg);
			memcpy(workspace, optarg, n + 1);
			if (n > 3 && (strcmp(workspace + n - 3, ":ro") == 0 ||
				      strcmp(workspace + n - 3, ":rw") == 0)) {
				spec.workspace_ro = workspace[n - 1] == 'o';
				workspace[n - 3] = '\0';
			}
			spec.workspace = workspace;
			break;
		case 1:
			if (strcmp(optarg, "veth") == 0)
				spec.net = SBT_NET_VETH;
			else if (strcmp(optarg, "none") == 0)
				spec.net = SBT_NET_NONE;
			else
				return usage_error("run", "--net '%s': use none or veth", optarg);
			break;
		case 3: {
			static char addrs[128];
			char *comma;

			if (strlen(optarg) >= sizeof(addrs) || !(comma = strchr(optarg, ',')))
				return usage_error(
					"run",
					"--veth-addrs '%s': give HOST/LEN,SANDBOX/LEN, e.g. "
					"192.0.2.1/24,192.0.2.100/24",
					optarg);
			strcpy(addrs, optarg);
			addrs[comma - optarg] = '\0';
			spec.veth_host_cidr = addrs;
			spec.veth_sandbox_cidr = addrs + (comma - optarg) + 1;
			break;
		}
		case 4:
			spec.veth_host_netns = optarg;
			break;
		case 5:
			spec.guest_dir = optarg;
			break;
		case 6:
			spec.tap_netns = optarg;
			tap_opts = true;
			break;
		case 7:
		case 8: {
			char *buf = c == 7 ? tap4 : tap6;
			char *comma = strchr(optarg, ',');

			if (strlen(optarg) >= sizeof(tap4) || !comma)
				return usage_error(
					"run",
					c == 7 ? "--tap-addrs '%s': give HOST/LEN,GUEST/LEN, e.g. "
						 "203.0.113.253/30,203.0.113.254/30"
					       : "--tap-addrs6 '%s': give HOST/LEN,GUEST/LEN, e.g. "
						 "2001:db8:9::1/64,2001:db8:9::2/64",
					optarg);
			strcpy(buf, optarg);
			buf[comma - optarg] = '\0';
			if (c == 7) {
				spec.tap_host_cidr = buf;
				spec.tap_guest_cidr = buf + (comma - optarg) + 1;
			} else {
				spec.tap_host_cidr6 = buf;
				spec.tap_guest_cidr6 = buf + (comma - optarg) + 1;
			}
			tap_opts = true;
			break;
		}
		case 9:
			errno = 0;
			num = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || num < SBT_VM_MEM_MIN_MB ||
			    num > SBT_VM_MEM_MAX_MB)
				return usage_error("run", "--vm-mem '%s': give MiB, 64-16384",
						   optarg);
			spec.vm_mem_mb = (unsigned int)num;
			break;
		case 10:
			errno = 0;
			num = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || num < 1 || num > 86400)
				return usage_error(
					"run", "--vm-timeout '%s': give seconds, 1-86400", optarg);
			vm_timeout = (int)num;
			break;
		case 11:
			if (!optarg[0])
				return usage_error("run", "--timings '%s': give a file", optarg);
			timings = optarg;
			break;
		case 's':
			if (!optarg[0])
				return usage_error("run", "--state-dir '%s': give a directory",
						   optarg);
			state_dir = optarg;
			break;
		case 2:
			no_wait = true;
			break;
		case 'h':
			usage_run(stdout);
			return SHIM_EXIT_OK;
		default:
			fprintf(stderr, "see 'sbtrace-shim run --help'\n");
			return SHIM_EXIT_USAGE;
		}
	}
	if (!spec.name)
		return usage_error("run", "%s--name NAME is required", "");
	if (!sbt_sandbox_name_ok(spec.name))
		return usage_error("run",
				   "--name '%s': use 1-64 characters [A-Za-z0-9_.-], not starting "
				   "with '.'",
				   spec.name);
	if (spec.workspace) {
		const char *why = stat(spec.workspace, &st) ? strerror(errno)
				  : !S_ISDIR(st.st_mode)    ? "not a directory"
							    : NULL;

		if (why) {
			snprintf(err, sizeof(err),
				 "--workspace '%s': %s; give an existing directory", spec.workspace,
				 why);
			return usage_error("run", "%s", err);
		}
	}
	if (optind >= argc)
		return usage_error("run", "%sno command: give it after --, e.g. -- make test", "");
	if (spec.backend == SBT_BACKEND_PODMAN && (spec.workspace || spec.net != SBT_NET_NONE))
		return usage_error("run",
				   "%s--backend podman takes no --workspace or --net: podman "
				   "has its own",
				   "");
	if (spec.backend == SBT_BACKEND_PODMAN) {
		const char *base = strrchr(argv[optind], '/');

		base = base ? base + 1 : argv[optind];
		if (strcmp(base, "podman") != 0 && strcmp(base, "docker") != 0)
			return usage_error("run",
					   "--backend podman runs podman or docker, not '%s'",
					   argv[optind]);
	}
	if (spec.net == SBT_NET_VETH && !spec.veth_host_cidr)
		return usage_error("run", "--net veth needs --veth-addrs HOST/LEN,SANDBOX/LEN%s",
				   "");
	if (spec.net != SBT_NET_VETH && (spec.veth_host_cidr || spec.veth_host_netns))
		return usage_error("run", "--veth-addrs and --veth-host-netns need --net veth%s",
				   "");
	if (spec.backend != SBT_BACKEND_QEMU &&
	    (spec.guest_dir || tap_opts || spec.vm_mem_mb || vm_timeout))
		return usage_error(
			"run",
			"%s--guest, --tap-netns, --tap-addrs, --tap-addrs6, --vm-mem and "
			"--vm-timeout need --backend qemu",
			"");
	if (spec.backend == SBT_BACKEND_QEMU && spec.net != SBT_NET_NONE)
		return usage_error("run",
				   "%s--backend qemu takes no --net: the VM's network is the tap "
				   "(--tap-addrs)",
				   "");
	if (spec.backend == SBT_BACKEND_QEMU && !spec.guest_dir)
		return usage_error("run",
				   "%s--backend qemu needs --guest DIR: build the guest with "
				   "scripts/guest-build.sh, which prints DIR",
				   "");
	spec.argv = argv + optind;
	spec.state_dir = state_dir;
	/* What the user can fix (addresses, the guest...): a usage error, before anything is made. */
	if (sbt_sandbox_check(&spec, err, sizeof(err)))
		return usage_error("run", "%s", err);

	/* Signals are read from a signalfd; the sandbox's init resets its mask. */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGHUP);
	sigprocmask(SIG_BLOCK, &sigs, NULL);
	/* The VM's output goes through us: a closed stdout must not kill the shim. */
	if (spec.backend == SBT_BACKEND_QEMU)
		signal(SIGPIPE, SIG_IGN);
	sfd = signalfd(-1, &sigs, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sfd < 0) {
		fprintf(stderr, "sbtrace-shim run: signalfd: %s\n", strerror(errno));
		return SHIM_EXIT_SETUP;
	}

	ret = sbt_sandbox_start(&spec, &run, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "sbtrace-shim run: %s\n", err);
		/* a name in use, a workspace too large for the VM: the user can fix them */
		code = ret == -EEXIST || ret == -EFBIG ? SHIM_EXIT_USAGE : SHIM_EXIT_SETUP;
		goto out;
	}
	started = true;
	if (!no_wait) {
		fifo = make_fifo(state_dir, spec.name, fifo_path, sizeof(fifo_path));
		if (fifo < 0) {
			fprintf(stderr,
				"sbtrace-shim run: cannot create the attach FIFO in %s: %s; check "
				"--state-dir\n",
				state_dir, strerror(-fifo));
			fifo_path[0] = '\0';
			goto out;
		}
	}
	ret = sbt_state_write(state_dir, &run);
	if (ret) {
		fprintf(stderr,
			"sbtrace-shim run: cannot write the state file %s: %s; the state dir must "
			"be a directory owned by you or root and writable by nobody else\n",
			run.state_file, strerror(-ret));
		goto out;
	}
	ret = sbt_sandbox_ready(&run, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "sbtrace-shim run: %s\n", err);
		goto out;
	}
	pidfd = (int)syscall(SYS_pidfd_open, run.pid, 0);
	if (!no_wait) {
		enum attach_result r;

		if (run.backend == SBT_BACKEND_QEMU)
			fprintf(stderr,
				"sbtrace-shim: sandbox %s up (cgroup %s, pid %d, tap %s); waiting "
				"for a tracer: sbtrace trace --sandbox %s\n",
				run.name, run.cgroup_path, (int)run.pid, run.tap, run.name);
		else
			fprintf(stderr,
				"sbtrace-shim: sandbox %s up (cgroup %s, pid %d); waiting for a "
				"tracer: sbtrace trace --sandbox %s\n",
				run.name, run.cgroup_path, (int)run.pid, run.name);
		r = wait_attach(run.name, fifo, sfd, pidfd, &sig);
		close(fifo);
		fifo = -1;
		unlink(fifo_path);
		fifo_path[0] = '\0';
		if (r == SIGNALLED) {
			code = 128 + sig;
			goto out;
		}
		if (r == INIT_DIED) {
			fprintf(stderr,
				"sbtrace-shim run: sandbox %s died (killed?) before a tracer "
				"attached; the workload did not run; run it again\n",
				run.name);
			goto out;
		}
	}
	ret = sbt_sandbox_go(&run);
	if (ret) {
		fprintf(stderr, "sbtrace-shim run: sandbox %s: cannot start the workload: %s\n",
			run.name, strerror(-ret));
		goto out;
	}
	if (run.backend == SBT_BACKEND_QEMU)
		code = wait_vm(&run, sfd, pidfd, vm_timeout);
	else
		code = wait_workload(&run, sfd, pidfd);
	if (timings)
		write_timings(timings, &run, sbt_mono_ns());
out:
	if (fifo >= 0)
		close(fifo);
	if (fifo_path[0])
		unlink(fifo_path);
	if (started)
		sbt_sandbox_destroy(&run);
	if (pidfd >= 0)
		close(pidfd);
	if (sfd >= 0)
		close(sfd);
	return code;
}

static int cmd_gc(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "state-dir", required_argument, NULL, 's' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *state_dir = SBT_STATE_DIR_DEFAULT;
	bool verbose = false;
	int c, n;

	optind = 1;
	while ((c = getopt_long(argc, argv, "s:vh", longopts, NULL)) != -1) {
		switch (c) {
		case 's':
			state_dir = optarg;
			break;
		case 'v':
			verbose = true;
			break;
		case 'h':
			usage_gc(stdout);
			return SHIM_EXIT_OK;
		default:
			fprintf(stderr, "see 'sbtrace-shim gc --help'\n");
			return SHIM_EXIT_USAGE;
		}
	}
	if (optind < argc)
		return usage_error("gc", "unexpected argument '%s'", argv[optind]);
	n = sbt_sandbox_gc(state_dir, verbose);
	if (n < 0) {
		fprintf(stderr, "sbtrace-shim gc: state dir %s: %s; check --state-dir\n", state_dir,
			strerror(-n));
		return SHIM_EXIT_RUNTIME;
	}
	if (verbose || n > 0)
		printf("sbtrace-shim gc: removed %d stale sandbox%s\n", n, n == 1 ? "" : "es");
	return SHIM_EXIT_OK;
}

static const struct sbt_command commands[] = {
	{ "run", cmd_run, usage_run },
	{ "gc", cmd_gc, usage_gc },
};

int main(int argc, char **argv)
{
	static const struct sbt_cli cli = {
		.prog = "sbtrace-shim",
		.commands = commands,
		.nr_commands = sizeof(commands) / sizeof(commands[0]),
		.usage = usage_main,
		.version = "sbtrace-shim " SBTRACE_VERSION,
		.exit_ok = SHIM_EXIT_OK,
		.exit_usage = SHIM_EXIT_USAGE,
	};

	return sbt_cli_main(&cli, argc, argv);
}
