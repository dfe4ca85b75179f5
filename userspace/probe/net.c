// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The build's network. With an empty allowlist a build has none (a network
 * namespace with only lo), as before. With a rule in it, the build gets a
 * network whose every connect passes the sandbox's egress hooks: the
 * cgroup programs judge each socket of the sandbox's cgroup and below,
 * whatever its network namespace, and send its DNS (port 53, any address)
 * to the sandbox's DNS proxy on that namespace's loopback, which answers
 * only what the host rules allow.
 *
 * The way out is slirp4netns, podman's own user-mode network: a tap in the
 * build's namespace whose frames a process of ours on the host turns into
 * sockets of its own. Nothing of the host's network changes (no route, no
 * forwarding, no NAT rule, no address on the host), the build's namespace
 * is never the host's (its loopback services and abstract unix sockets stay
 * out of reach; slirp4netns's own map of the gateway to the host's loopback
 * is off), and the relay ends with us (--exit-fd: our death closes it). It
 * runs sandboxed (--enable-sandbox, --enable-seccomp) in a mount namespace
 * of its own, and in a cgroup of ours (<v2>/sbtrace/probe-net-PID): its
 * sockets are the sandbox's traffic, judged by the sandbox's hooks before
 * they reach it, never by whatever programs the caller's own cgroup carries
 * (a CI runner's egress filter, an operator's policy for the shell that
 * started the probe). Its
 * network is 198.18.0.0/24 (RFC 2544's benchmarking range, never a private
 * one). A packet the sandbox forges on the tap without a socket would skip
 * the socket hooks: the ns backend drops CAP_NET_RAW, and the engine's RUN
 * steps run with --cap-drop=NET_RAW.
 *
 * The ns backend: the relay joins the sandbox's own network namespace.
 * The qemu backend: the relay joins the namespace of the VM's tap, which
 * then forwards between the two (the guest's eth0 reaches the relay's
 * network through its gateway, the tap; proxy ARP answers the relay for the
 * guest's address, outside its own network), and the tap program judges
 * every connect and sends the guest's DNS to the proxy, as for any VM.
 * A Dockerfile build: a namespace of ours (`ip netns add`) that every RUN
 * step joins (podman build --network=ns:PATH) and where the DNS proxy
 * listens (the trace target's dns_netns), with or without the relay.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "lib/cgroupfs.h"
#include "lib/clock.h"
#include "lib/extbin.h"
#include "lib/log.h"
#include "probe_int.h"

#define RELAY	       "slirp4netns"
#define RELAY_CIDR     "198.18.0.0/24" /* the build sees 198.18.0.100, gateway .2, DNS .3 */
#define RELAY_READY_MS 10000

bool probe_net_wanted(const struct probe_opts *o)
{
	/* learn mode: a way out for whatever the build reaches, judged by the floor */
	return o->egress_mode != SBT_EGRESS_OFF && (o->egress.nr_rules > 0 || o->egress.learn);
}

/* `ip ARGS...` quietly; 0 when it exited 0. */
static int ip_cmd(char *const *argv, char *err, size_t errlen)
{
	struct sbt_run_io io = { .err = err, .err_len = errlen, .timeout_ms = 10000 };
	int status = 0, rc;

	err[0] = '\0';
	rc = sbt_run(argv, &io, &status);
	return rc ? rc : sbt_exit_code(status) ? -EIO : 0;
}

/*
 * The relay's cgroup, <v2>/sbtrace/probe-net-PID, made empty; "" in cg when
 * there is no cgroup v2 mount (the relay then stays in ours). 0 or -errno.
 */
static int relay_cgroup(char *cg, size_t len)
{
	char mnt[PATH_MAX], root[PATH_MAX];
	int n;

	cg[0] = '\0';
	if (sbt_cgroup2_mount(mnt, sizeof(mnt), root, sizeof(root)))
		return 0;
	n = snprintf(cg, len, "%s/sbtrace", mnt);
	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	if (mkdir(cg, 0755) && errno != EEXIST)
		return -errno;
	n = snprintf(cg, len, "%s/sbtrace/probe-net-%d", mnt, (int)getpid());
	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	if (mkdir(cg, 0755) && errno != EEXIST)
		return -errno;
	return 0;
}

/* Move the calling process into cgroup cg. 0 or -errno. */
static int cgroup_join(const char *cg)
{
	char path[PATH_MAX + 16];
	int fd, ret = 0;

	snprintf(path, sizeof(path), "%s/cgroup.procs", cg);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, "0", 1) != 1)
		ret = -errno;
	close(fd);
	return ret;
}

/*
 * The relay's child side: its cgroup (cg, "" none), fds 3 (exit) and 4
 * (ready), stdout to /dev/null, then exec.
 */
static void relay_child(const char *cg, int exit_r, int ready_w, char *const *argv)
	__attribute__((noreturn));

static void relay_child(const char *cg, int exit_r, int ready_w, char *const *argv)
{
	int null = open("/dev/null", O_RDWR | O_CLOEXEC), rc;
	/*
	 * Above the slots they go to first: a pipe end that already is fd 3 or 4
	 * would keep its O_CLOEXEC through dup2 (a no-op), close at exec, and
	 * the relay would take the closed --exit-fd for our death and exit at
	 * once, its tap and the build's route with it (ENETUNREACH). Whether it
	 * is depends on what the caller left open.
	 */
	int ex = fcntl(exit_r, F_DUPFD_CLOEXEC, 10), rd = fcntl(ready_w, F_DUPFD_CLOEXEC, 10);

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	/* before its first socket: a socket belongs to the cgroup it was made in */
	if (cg[0] && (rc = cgroup_join(cg)) < 0) {
		dprintf(STDERR_FILENO, "sbtrace probe: %s cannot join its cgroup %s: %s\n", RELAY,
			cg, strerror(-rc));
		_exit(125);
	}
	/*
	 * A mount namespace of its own, a slave of ours: its --enable-sandbox
	 * unmounts what it does not need, and on a shared /run/netns that
	 * would propagate back and unmount every `ip netns` namespace here.
	 */
	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL))
		_exit(126);
	if (null < 0 || ex < 0 || rd < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 ||
	    dup2(ex, 3) < 0 || dup2(rd, 4) < 0)
		_exit(127);
	close_range(5, ~0u, 0);
	sbt_exec(SBT_EXEC_HOST, argv);
	_exit(127);
}

/*
 * Start the relay into `target` (a pid, or a namespace path with
 * path_type) and wait until its tap is configured. 0, or -1 with boot_err.
 */
static int relay_start(struct probe_ctx *p, const char *target, bool path_type)
{
	struct probe_net *n = &p->net;
	char *argv[16];
	int ex[2], rd[2], a = 0, rc;
	char c = 0;
	struct pollfd pfd;
	pid_t pid;

	argv[a++] = RELAY;
	argv[a++] = "--configure";
	argv[a++] = "--mtu=65520";
	argv[a++] = "--disable-host-loopback";
	argv[a++] = "--cidr=" RELAY_CIDR;
	argv[a++] = "--enable-sandbox";
	argv[a++] = "--enable-seccomp";
	argv[a++] = "--exit-fd=3";
	argv[a++] = "--ready-fd=4";
	if (path_type)
		argv[a++] = "--netns-type=path";
	argv[a++] = (char *)target;
	argv[a++] = "tap0";
	argv[a] = NULL;
	rc = relay_cgroup(n->relay_cg, sizeof(n->relay_cg));
	if (rc < 0) {
		snprintf(p->boot_err, sizeof(p->boot_err),
			 "the build's network: cannot make the relay's cgroup %.200s: %s",
			 n->relay_cg, strerror(-rc));
		n->relay_cg[0] = '\0';
		return -1;
	}
	if (pipe2(ex, O_CLOEXEC))
		goto fail_errno;
	if (pipe2(rd, O_CLOEXEC)) {
		close(ex[0]);
		close(ex[1]);
		goto fail_errno;
	}
	pid = fork();
	if (pid == 0)
		relay_child(n->relay_cg, ex[0], rd[1], argv);
	close(ex[0]);
	close(rd[1]);
	if (pid < 0) {
		close(ex[1]);
		close(rd[0]);
		goto fail_errno;
	}
	n->relay = pid;
	n->exit_w = ex[1];
	pfd = (struct pollfd){ .fd = rd[0], .events = POLLIN };
	do
		rc = poll(&pfd, 1, RELAY_READY_MS);
	while (rc < 0 && errno == EINTR);
	if (rc > 0 && read(rd[0], &c, 1) == 1 && c == '1') {
		close(rd[0]);
		return 0;
	}
	close(rd[0]);
	snprintf(p->boot_err, sizeof(p->boot_err),
		 "the build's network: %s did not come up within %d s (%s; install it with "
		 "'make deps', or give no --allow-* rule for a build without network)",
		 RELAY, RELAY_READY_MS / 1000,
		 rc == 0 ? "no answer"
			 : "it exited: see its message above, or it is not installed");
	return -1;
fail_errno:
	snprintf(p->boot_err, sizeof(p->boot_err), "the build's network: %s", strerror(errno));
	return -1;
}

int probe_netns_add(struct probe_ctx *p, const char *name, const char *what)
{
	char err[256];
	char *add[] = { "ip", "netns", "add", (char *)name, NULL };

	if (!ip_cmd(add, err, sizeof(err)))
		return 0;
	snprintf(p->boot_err, sizeof(p->boot_err),
		 "cannot create network namespace %s for %s: %.300s", name, what, err);
	return -1;
}

void probe_netns_del(const struct probe_ctx *p, const char *name)
{
	char err[256];
	char *del[] = { "ip", "netns", "del", (char *)name, NULL };

	if (ip_cmd(del, err, sizeof(err)))
		probe_progress(p, "could not delete network namespace %s", name);
}

int probe_net_build_ns(struct probe_ctx *p, struct probe_build *b)
{
	struct probe_net *n = &p->net;
	char name[64], err[256];
	char *lo[] = { "ip", "-n", name, "link", "set", "lo", "up", NULL };

	snprintf(name, sizeof(name), "sbtrace-probe-net-%d", (int)getpid());
	if (probe_netns_add(p, name, "the build") < 0)
		return -1;
	snprintf(n->netns, sizeof(n->netns), "%s", name);
	snprintf(n->netns_path, sizeof(n->netns_path), "/run/netns/%s", name);
	if (ip_cmd(lo, err, sizeof(err))) {
		snprintf(p->boot_err, sizeof(p->boot_err), "%s: lo does not come up: %.300s", name,
			 err);
		return -1;
	}
	snprintf(b->network, sizeof(b->network), "ns:%s", n->netns_path);
	if (!probe_net_wanted(p->o)) {
		snprintf(n->why, sizeof(n->why), "none: the allowlist is empty");
		return 0;
	}
	if (relay_start(p, n->netns_path, true) < 0)
		return -1;
	snprintf(n->why, sizeof(n->why), "%s (%s) through the allowlist", RELAY, RELAY_CIDR);
	return 0;
}

int probe_net_sandbox(struct probe_ctx *p)
{
	struct probe_net *n = &p->net;
	char pid[16];

	if (!probe_net_wanted(p->o)) {
		snprintf(n->why, sizeof(n->why), "none: the allowlist is empty");
		return 0;
	}
	snprintf(pid, sizeof(pid), "%d", (int)p->run.pid);
	if (relay_start(p, pid, false) < 0)
		return -1;
	snprintf(n->why, sizeof(n->why), "%s (%s) through the allowlist", RELAY, RELAY_CIDR);
	return 0;
}

/* Write "1" to /proc/sys/net/<key> in the network namespace at path (a child joins it). */
static int netns_sysctl_on(const char *path, const char *key)
{
	char file[128];
	int status = 0;
	pid_t pid;

	snprintf(file, sizeof(file), "/proc/sys/net/%s", key);
	pid = fork();
	if (pid == 0) {
		int ns = open(path, O_RDONLY | O_CLOEXEC), fd = -1;

		if (ns < 0 || setns(ns, CLONE_NEWNET) ||
		    (fd = open(file, O_WRONLY | O_CLOEXEC)) < 0 || write(fd, "1", 1) != 1)
			_exit(1);
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0)
		return -errno;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -EIO;
}

int probe_net_tap(struct probe_ctx *p, const char *netns)
{
	struct probe_net *n = &p->net;
	char path[96];

	if (!probe_net_wanted(p->o)) {
		snprintf(n->why, sizeof(n->why), "none: the allowlist is empty");
		return 0;
	}
	snprintf(path, sizeof(path), "/run/netns/%s", netns);
	if (netns_sysctl_on(path, "ipv4/ip_forward") ||
	    netns_sysctl_on(path, "ipv4/conf/all/proxy_arp")) {
		snprintf(p->boot_err, sizeof(p->boot_err),
			 "the build's network: cannot turn forwarding on in %s", netns);
		return -1;
	}
	if (relay_start(p, path, true) < 0)
		return -1;
	snprintf(n->why, sizeof(n->why), "%s (%s) behind the VM's tap, through the allowlist",
		 RELAY, RELAY_CIDR);
	return 0;
}

void probe_net_init(struct probe_net *n)
{
	memset(n, 0, sizeof(*n));
	n->exit_w = -1;
}

void probe_net_cleanup(struct probe_ctx *p)
{
	struct probe_net *n = &p->net;

	if (n->exit_w >= 0) { /* the relay's --exit-fd: it ends */
		close(n->exit_w);
		n->exit_w = -1;
	}
	if (n->relay > 0) {
		uint64_t until = sbt_mono_ms() + 2000;
		int status;

		while (waitpid(n->relay, &status, WNOHANG) == 0) {
			if (sbt_mono_ms() > until) {
				kill(n->relay, SIGKILL);
				waitpid(n->relay, &status, 0);
				break;
			}
			usleep(10 * 1000);
		}
		n->relay = 0;
	}
	if (n->relay_cg[0]) { /* empty now: the relay was its only process */
		if (rmdir(n->relay_cg) && errno != ENOENT)
			probe_progress(p, "could not remove the relay's cgroup %s: %s", n->relay_cg,
				       strerror(errno));
		n->relay_cg[0] = '\0';
	}
	if (n->netns[0]) {
		probe_netns_del(p, n->netns);
		n->netns[0] = '\0';
	}
}
