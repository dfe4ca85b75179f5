/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The `ns` sandbox backend of sbtrace-shim: a cgroup v2 child under an
 * `sbtrace/` parent, new mount, pid, uts, ipc, net and cgroup namespaces, the
 * workspace bind-mounted at /workspace, the host filesystem read-only,
 * writable tmpfs /tmp and HOME, no_new_privs, every capability dropped. The
 * workload's first exec waits for sbt_sandbox_go(): the tracer attaches in
 * between (no first-exec race). State files let `sbtrace trace --sandbox
 * NAME` find a running sandbox and `sbtrace-shim gc` clean up after a killed
 * shim.
 *
 * The `podman` backend (spec.host_tool): the same cgroup and the same
 * start / ready / go / wait / destroy protocol, but the child is a plain
 * fork of the caller, born in the cgroup (clone3 CLONE_INTO_CGROUP): no new
 * namespaces, every capability kept (a container engine needs root), the
 * caller's environment. After go it executes an allowlisted host tool
 * (sbt_exec(SBT_EXEC_HOST): podman or docker), whose containers are placed
 * below the sandbox cgroup with --cgroup-parent (see probe_cmd.c). On a
 * hybrid cgroup system runc also creates the same path in the v1
 * hierarchies; destroy and gc remove what it leaves there.
 */
#ifndef SBT_SANDBOX_H
#define SBT_SANDBOX_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define SBT_SANDBOX_NAME_MAX  64 /* [A-Za-z0-9_.-], not starting with '.' */
#define SBT_STATE_DIR_DEFAULT "/run/sbtrace"

enum sbt_sandbox_net {
	SBT_NET_NONE = 0, /* a new network namespace with only lo (up) */
	SBT_NET_VETH,	  /* plus eth0, one end of a veth pair whose other end is on the host */
};

struct sbt_sandbox_spec {
	const char *name;
	const char *workspace; /* host directory, bind-mounted at /workspace; NULL: none */
	bool workspace_ro;
	enum sbt_sandbox_net net;
	const char *state_dir;	  /* NULL: SBT_STATE_DIR_DEFAULT */
	char *const *argv;	  /* the workload, argv[0] a path or a name looked up in PATH */
	const char *cwd;	  /* inside the sandbox; NULL: /workspace, or / without one */
	int stdout_fd, stderr_fd; /* the workload's output (-1: inherit) */
	/*
	 * The podman backend: argv is a host tool run outside any namespace
	 * with the caller's privileges and environment; workspace must be
	 * NULL; cwd is a host path (NULL: /).
	 */
	bool host_tool;
	/*
	 * SBT_NET_VETH: the host end's network namespace (a name as `ip netns`
	 * knows it; NULL: the caller's) and the two addresses, "192.0.2.1/24"
	 * for the host end and "192.0.2.100/24" for eth0, whose default route
	 * is the host end. The pair goes away with the sandbox's namespace.
	 */
	const char *veth_host_netns;
	const char *veth_host_cidr;
	const char *veth_sandbox_cidr;
};

struct sbt_sandbox_run {
	char name[SBT_SANDBOX_NAME_MAX + 1];
	char cgroup_path[PATH_MAX]; /* absolute, e.g. /sys/fs/cgroup/unified/sbtrace/NAME */
	char cgroup_name[PATH_MAX]; /* below the v2 root, e.g. /sbtrace/NAME */
	uint64_t cgroup_id;
	pid_t pid;    /* the sandbox's init (pid 1 inside), or the host tool, seen from the host */
	int go_fd;    /* write end of the go pipe, -1 once released */
	int ready_fd; /* read end: the child writes 1 byte when set up */
	char state_file[PATH_MAX];
	uint64_t start_ns; /* CLOCK_REALTIME */
	bool host_tool;	   /* started with spec.host_tool (backend "podman") */
};

/* The backend's name for state files: "ns", or "podman" for a host-tool sandbox. */
const char *sbt_sandbox_backend(const struct sbt_sandbox_run *run);

/*
 * Create the cgroup and fork the sandbox. Returns at once (the child sets
 * itself up in parallel with the caller's BPF load) with run->pid set; the
 * child joins the cgroup before anything else, so by return the cgroup and
 * id are final. 0, or -errno with `err` filled.
 */
int sbt_sandbox_start(const struct sbt_sandbox_spec *spec, struct sbt_sandbox_run *run, char *err,
		      size_t errlen);

/* Wait until the child finished its set-up (or failed: -errno, err filled). */
int sbt_sandbox_ready(struct sbt_sandbox_run *run, char *err, size_t errlen);

/* Let the workload exec. 0 or -errno. */
int sbt_sandbox_go(struct sbt_sandbox_run *run);

/*
 * Wait for the sandbox's init to exit; *status is the workload's exit status
 * in waitpid() form (init exits with it; 127 when the exec failed).
 * timeout_ms < 0 waits forever; -ETIMEDOUT when it expires.
 */
int sbt_sandbox_wait(struct sbt_sandbox_run *run, int *status, int timeout_ms);

/*
 * Kill what is left (cgroup.kill, else SIGKILL each), remove the cgroup and
 * state file (and, for a host-tool sandbox, the same path's empty cgroups in
 * the v1 hierarchies).
 */
void sbt_sandbox_destroy(struct sbt_sandbox_run *run);

/* State file (JSON: name, backend, cgroup path and id, netns, pid, shim_pid, start time). */
int sbt_state_write(const char *state_dir, const struct sbt_sandbox_run *run, const char *backend);
struct sbt_sandbox_state {
	char name[SBT_SANDBOX_NAME_MAX + 1];
	char backend[16];
	char cgroup_path[PATH_MAX];
	uint64_t cgroup_id;
	pid_t pid, shim_pid;
	char netns[PATH_MAX];
	uint64_t start_ns;
};
/* Read and validate (untrusted input: sizes, types, the cgroup still exists). 0 or -errno. */
int sbt_state_read(const char *state_dir, const char *name, struct sbt_sandbox_state *st, char *err,
		   size_t errlen);

/* Remove sandboxes whose shim is gone: kill, rmdir cgroup, delete state. Returns how many. */
int sbt_sandbox_gc(const char *state_dir, bool verbose);

/* True when `name` is a valid sandbox name. */
bool sbt_sandbox_name_ok(const char *name);

#endif
