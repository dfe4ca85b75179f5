/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The sandboxes of sbtrace-shim (and of `sbtrace probe`): three backends
 * behind one protocol. Each sandbox is a cgroup v2 child under an `sbtrace/`
 * parent; sbt_sandbox_start() creates it and clones the backend's child
 * into it, sbt_sandbox_ready() waits for the child's set-up,
 * sbt_sandbox_go() releases the workload, sbt_sandbox_wait() reaps it and
 * sbt_sandbox_destroy() removes everything. The workload's first exec waits
 * for sbt_sandbox_go(): the tracer attaches in between (no first-exec
 * race). State files let `sbtrace trace --sandbox NAME` find a running
 * sandbox and `sbtrace-shim gc` clean up after a killed shim.
 *
 * The `ns` backend (SBT_BACKEND_NS, the default): new mount, pid, uts, ipc,
 * net and cgroup namespaces, the workspace bind-mounted at /workspace, the
 * host filesystem read-only, writable tmpfs /tmp and HOME, no_new_privs,
 * every capability dropped, and on the workload a seccomp filter (seccomp.c;
 * denied calls fail with EPERM).
 *
 * The `podman` backend (SBT_BACKEND_PODMAN): the same cgroup and protocol,
 * but the child is a plain fork of the caller, born in the cgroup (clone3
 * CLONE_INTO_CGROUP): no new namespaces, every capability kept (a container
 * engine needs root), a declared environment (envset.h). After go it executes an
 * allowlisted host tool (sbt_exec(SBT_EXEC_HOST): podman or docker), whose
 * containers are placed below the sandbox cgroup with --cgroup-parent (see
 * probe/engine.c). On a hybrid cgroup system runc also creates the same path in
 * the v1 hierarchies; destroy and gc remove what it leaves there.
 *
 * The `qemu` backend (SBT_BACKEND_QEMU): the same cgroup and protocol; the
 * child is born in the cgroup like the podman one, drops every capability
 * and, after go, becomes qemu-system-x86_64 -M microvm (KVM or TCG, accel.c)
 * booting the guest that scripts/guest-build.sh made. The workload (argv)
 * runs inside the guest as /sbt/run (in a second cpio archive appended to
 * the guest's initramfs), on a root with the host's /usr and
 * /etc/alternatives (9p, read-only) and the workspace (9p, read-only,
 * idmapped) under tmpfs overlays. The guest's only
 * network is eth0 (virtio-net), whose host side is a tap the caller creates
 * in spec.tap_netns and hands to qemu as an open fd. The serial console
 * comes back through run->console_fd (see sbt_vm_console_feed()). The host
 * sees the VM's execs only as qemu's, and the guest's through its agent's stream:
 * visibility exec "guest_kernel" (without an agent "none"), network "tap".
 * qemu runs under the ns workload's seccomp filter and its own.
 *
 * What each backend can do is its row's capabilities (struct
 * sbt_backend_caps, below): callers ask them, never which backend it is.
 *
 * The code, in userspace/sandbox/: lifecycle.c (checks, start, ready, go,
 * wait, destroy), backend.c (the table: one row per backend), ns.c,
 * podman.c, qemu.c and qemu_tap.c (one backend each: its operations and
 * capabilities), console.c (the VM's console), state.c and state_field.c
 * (state files), gc.c, cgroup.c (kill and remove a cgroup), child.c (what
 * the children share), seccomp.c (the workloads' filter), util.c;
 * internal.h holds struct sbt_backend_ops, the operations where the
 * backends differ. A new backend is its file, its enum value and its row.
 */
#ifndef SBT_SANDBOX_H
#define SBT_SANDBOX_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "sandbox/name.h"

#define SBT_STATE_DIR_DEFAULT "/run/sbtrace"

/* Which kind of sandbox; the state file and --backend spell it sbt_backend_name(). */
enum sbt_sandbox_backend {
	SBT_BACKEND_NS = 0, /* namespaces (the default) */
	SBT_BACKEND_PODMAN, /* an allowlisted container engine run as a host tool in the cgroup */
	SBT_BACKEND_QEMU,   /* a microVM */
	SBT_BACKEND__MAX,
};

/* "ns", "podman", "qemu"; NULL for a value out of range. */
const char *sbt_backend_name(enum sbt_sandbox_backend b);

/* The one parser of a backend's name (--backend): 0 with *out set, or -EINVAL. */
int sbt_backend_parse(const char *s, enum sbt_sandbox_backend *out);

enum sbt_sandbox_net {
	SBT_NET_NONE = 0, /* a new network namespace with only lo (up) */
	SBT_NET_VETH,	  /* plus eth0, one end of a veth pair whose other end is on the host */
};

#define SBT_NET_MODE(net) (1u << (net)) /* a mode in sbt_backend_caps.net_modes */

/* What a backend makes of spec.workspace. */
enum sbt_workspace_kind {
	SBT_WORKSPACE_NONE = 0, /* none: the host tool reads host paths */
	SBT_WORKSPACE_BIND,   /* bind-mounted at /workspace: read-write, read-only or an overlay */
	SBT_WORKSPACE_EXPORT, /* exported read-only to a guest, under a tmpfs overlay there */
};

/* Where the workload's exit status comes from (sbt_sandbox_wait, run->con). */
enum sbt_backend_wait {
	SBT_WAIT_STATUS = 0, /* the sandbox's child exits with the workload's status */
	SBT_WAIT_CONSOLE, /* the child is the VM: the workload's code is the console's exit line */
};

/*
 * What a backend can do: the callers outside userspace/sandbox/ (the probe,
 * the shim, trace and agent) ask these instead of testing the backend. One
 * row per backend, next to its operations (ns.c, podman.c, qemu.c).
 */
struct sbt_backend_caps {
	/*
	 * The workload's execs run on the host's kernel, so host BPF sees them
	 * (visibility.exec "host"). False: a guest kernel's, which the host sees
	 * only through the guest agent's exec stream ("guest_kernel"), when the
	 * guest runs one (run->exec_stream), else not at all ("none").
	 */
	bool execs_on_host;
	/*
	 * The workload's network is a tap whose host side the tap program judges
	 * (tc; visibility.network "tap"), not the sandbox's sockets judged by
	 * the cgroup's socket hooks ("cgroup").
	 */
	bool egress_on_tap;
	unsigned int net_modes;		   /* the spec.net modes it gives: SBT_NET_MODE() bits */
	const char *no_net_why;		   /* why it gives no other (for messages), or NULL */
	enum sbt_workspace_kind workspace; /* what becomes of spec.workspace */
	/* argv is one of these host tools (by base name), run in the cgroup outside any
	 * namespace (sbt_sandbox_next runs the next); NULL: a workload of the sandbox's own */
	const char *const *host_tools;
	bool guest;   /* boots a guest: spec.guest_dir and the tap (tap_netns, tap_*_cidr*) */
	bool console; /* the workload's output comes through run->console_fd (sbt_sandbox_console) */
	enum sbt_backend_wait wait;
	bool then; /* runs a second workload after argv (spec.then_argv) */
	bool gc_state; /* leaves what only gc removes when its controller is killed: keep a state file */
};

/* The backend's capabilities; NULL for a value out of range. */
const struct sbt_backend_caps *sbt_backend_caps(enum sbt_sandbox_backend b);
/* By name (a state file's "backend"); NULL for a backend this build does not know. */
const struct sbt_backend_caps *sbt_backend_caps_by_name(const char *name);
/* visibility.exec of its sandboxes: "host", or "guest_kernel" with a guest's exec stream, "none". */
const char *sbt_backend_vis_exec(const struct sbt_backend_caps *caps, bool exec_stream);
/* visibility.network: "tap" or "cgroup". */
const char *sbt_backend_vis_network(const struct sbt_backend_caps *caps);

/* The qemu backend's boot (spec.vm_boot). */
enum sbt_vm_boot {
	SBT_VM_BOOT_AUTO = 0,
	SBT_VM_BOOT_COLD,
};

/* The qemu backend's accelerator (spec.vm_accel; accel.c). */
enum sbt_vm_accel {
	SBT_VM_ACCEL_AUTO = 0, /* KVM when usable (below), else TCG */
	SBT_VM_ACCEL_KVM,      /* KVM, or a start-up error saying why not */
	SBT_VM_ACCEL_TCG,
};

/*
 * The ns backend's resource limits. pids and memory through the cgroup
 * controllers the host has (limits.c: v2's, else v1's); tmpfs the size of
 * each writable tmpfs (/tmp, HOME, /dev/shm, the workspace overlay's upper
 * layer; /run has 64 MiB). UINT32_MAX / UINT64_MAX: no limit.
 */
#define SBT_LIMIT_PIDS_DEFAULT	 4096u
#define SBT_LIMIT_MEMORY_DEFAULT (8ull << 30)
#define SBT_LIMIT_TMPFS_DEFAULT	 (4ull << 30)
struct sbt_sandbox_limits {
	uint32_t pids;
	uint64_t memory; /* bytes */
	uint64_t tmpfs;	 /* bytes */
};

/* What the limits' own counters say was refused: a fork, a charge, an OOM kill. */
struct sbt_limit_hits {
	uint64_t pids, memory, oom_kills;
};

struct sbt_sandbox_spec {
	const char *name;
	const char *workspace; /* host directory, bind-mounted at /workspace; NULL: none */
	bool workspace_ro;
	/*
	 * The ns backend: the workspace is writable but nothing reaches the
	 * host: an overlay inside the sandbox whose upper layer is a tmpfs of
	 * its own, gone with it (the probe's view of a repo).
	 */
	bool workspace_overlay;
	/*
	 * With workspace_overlay: once argv exited, init says whether it wrote
	 * anything to the workspace (the overlay's upper layer holds an entry)
	 * on the phase pipe: run->workspace_written.
	 */
	bool workspace_report;
	enum sbt_sandbox_net net;
	const char *state_dir; /* NULL: SBT_STATE_DIR_DEFAULT */
	char *const *argv;     /* the workload, argv[0] a path or a name looked up in PATH */
	/*
	 * The ns backend: run first, exactly as argv is run; argv runs only
	 * when it exits 0 (what it left is killed first), else its status is
	 * the workload's. NULL: none. (The probe's install step, npm ci.)
	 */
	char *const *pre_argv;
	/*
	 * NAME=VALUE (or NAME: the caller's value) over the declared default
	 * set (envset.h: PATH, HOME, LANG, TERM); NULL-terminated, NULL for
	 * the default set alone. Nothing else of the caller's environment
	 * enters a sandbox, nor reaches a host tool (podman).
	 */
	char *const *env;
	const char *cwd;	  /* inside the sandbox; NULL: /workspace, or / without one */
	int stdout_fd, stderr_fd; /* the workload's output (-1: inherit) */
	/* The ns backend's resource limits (limits.c); 0: the defaults below. */
	struct sbt_sandbox_limits limits;
	/*
	 * SBT_BACKEND_PODMAN: argv is a host tool run outside any namespace
	 * with the caller's privileges and a declared environment; workspace must be
	 * NULL; cwd is a host path (NULL: /). SBT_BACKEND_QEMU: see below.
	 */
	enum sbt_sandbox_backend backend;
	/*
	 * SBT_NET_VETH: the host end's network namespace (a name as `ip netns`
	 * knows it; NULL: the caller's) and the two addresses, "192.0.2.1/24"
	 * for the host end and "192.0.2.100/24" for eth0, whose default route
	 * is the host end. The pair goes away with the sandbox's namespace.
	 */
	const char *veth_host_netns;
	const char *veth_host_cidr;
	const char *veth_sandbox_cidr;
	/*
	 * The qemu backend: guest_dir is scripts/guest-build.sh's output
	 * (vmlinux, initramfs.cpio.gz); argv runs in the guest, whose root
	 * has the host's /usr (read-only over 9p, writes in the guest's RAM),
	 * so argv is looked up in the host's PATH directories; workspace
	 * (optional) is exported read-only over 9p (idmapped like the ns
	 * backend's) under a tmpfs overlay: nothing comes back, whatever
	 * workspace_ro and workspace_overlay say; vm_accel picks KVM or TCG;
	 * cwd must be NULL; net must be SBT_NET_NONE. The tap lives in the
	 * network namespace tap_netns (a name as `ip netns` knows it; NULL:
	 * the caller's); its host side gets tap_host_cidr / tap_host_cidr6
	 * ("203.0.113.253/30", "2001:db8:9::1/64"), the guest's eth0
	 * tap_guest_cidr / tap_guest_cidr6, with the host side as its default
	 * route. Each pair is optional (both NULL: eth0 stays unconfigured).
	 */
	const char *guest_dir;
	const char *tap_netns;
	const char *tap_host_cidr;
	const char *tap_guest_cidr;
	const char *tap_host_cidr6;
	const char *tap_guest_cidr6;
	unsigned int vm_mem_mb; /* 0: SBT_VM_MEM_DEFAULT_MB */
	enum sbt_vm_accel vm_accel;
	/*
	 * The qemu backend's boot (qemu_snap.c): SBT_VM_BOOT_AUTO restores the
	 * guest from a state saved at the point before any run's own state
	 * (kept in guest_dir/snap/, one per guest, agent binary, qemu and VM
	 * shape), else boots it cold and saves that state on the way; a restore
	 * that fails is a cold boot. SBT_VM_BOOT_COLD always boots cold. What
	 * happened: run.boot and run.boot_why.
	 */
	enum sbt_vm_boot vm_boot;
	/*
	 * The qemu backend's engine mode (a container engine in the guest: the
	 * probe's Dockerfile build). vm_disk_mb > 0: a throw-away disk of that
	 * size (STATE_DIR/NAME.vm/disk, sparse, removed with the sandbox) that
	 * the guest's init formats as ext4 and mounts at /var/lib/containers,
	 * the engine's storage (not an overlay over 9p or tmpfs). vm_root: argv
	 * runs as guest root with its capabilities (an engine needs them: the
	 * guest kernel and qemu are the boundary, and its containers confine
	 * what the build runs), with tmpfs /run and /dev/shm.
	 */
	unsigned int vm_disk_mb;
	bool vm_root;
	/*
	 * The qemu backend: the guest's /sbt/run as given (a script that the
	 * guest's workload shell sources, so that no exec of a shell of ours
	 * is among the traced ones: each command it runs is), instead of one
	 * made from argv (which must still be given: it names the workload).
	 */
	const char *vm_script;
	/*
	 * The ns backend: a second workload after argv (the probe's boot
	 * phase). When argv exits with status 0, init kills whatever it left
	 * (the pid namespace's other processes), writes a record to the run's
	 * phase pipe (sbt_sandbox_then_poll) and runs then_argv exactly as it
	 * ran argv (environment, cwd, privileges, filter) for then_ms at most:
	 * then SIGTERM to it, and SIGKILL to everything then_grace_ms later.
	 * When it ends, the rest is killed too. init still exits with argv's
	 * status. NULL: no second workload. sbt_sandbox_then_end() brings the
	 * SIGTERM forward (the caller saw the workload ready).
	 */
	char *const *then_argv;
	unsigned int then_ms, then_grace_ms;
};

/* What the host's /dev/kvm offers (sbt_vm_kvm_probe). */
struct sbt_kvm_probe {
	bool present;	/* a character device */
	bool others_rw; /* its mode lets anyone read and write it (qemu's unprivileged id) */
	bool openable;	/* by the caller, read-write */
	int api;	/* KVM_GET_API_VERSION, -1 unknown */
	bool vm_ok;	/* KVM_CREATE_VM worked */
	bool hw_virt;	/* vmx or svm among the CPU's flags */
};

/* "auto", "kvm", "tcg". 0, or -EINVAL. */
int sbt_vm_accel_parse(const char *s, enum sbt_vm_accel *out);
/* "auto" or "cold": 0, else -EINVAL. */
int sbt_vm_boot_parse(const char *s, enum sbt_vm_boot *out);
/* Look at /dev/kvm and the CPU's flags (opens /dev/kvm, creates and closes a VM). */
void sbt_vm_kvm_probe(struct sbt_kvm_probe *p);
/*
 * Pure: "kvm" or "tcg" for a request and a probe; *why says why KVM is not
 * usable (NULL when it is). NULL for SBT_VM_ACCEL_KVM when KVM is not usable.
 */
const char *sbt_vm_accel_pick(enum sbt_vm_accel req, const struct sbt_kvm_probe *p,
			      const char **why);

#define SBT_VM_MEM_DEFAULT_MB 256
#define SBT_VM_MEM_MIN_MB     64
#define SBT_VM_MEM_MAX_MB     16384
#define SBT_VM_DISK_MAX_MB    (256u << 10)
#define SBT_VM_MAX_ADDRS      4

/*
 * The guest's serial console, as the caller reads it. Everything before
 * the line SBT-GUEST-READY is boot output; then the workload's output (its
 * stdout and stderr, merged) until the line SBT-GUEST-EXIT <code>, which
 * the guest's init prints after one newline of its own (dropped again:
 * the bytes forwarded are exactly the workload's, split at line ends).
 * Boot output and whatever follows the exit line are kept (the last 2 KiB)
 * for error messages. The exit line carries a nonce of the run's
 * (sbt_vm_console_nonce: "SBT-GUEST-EXIT-<nonce> <code>"), which the guest's
 * init reads from a root-only file of its initramfs the workload cannot
 * reach: a workload that prints an exit line of its own prints just a line
 * of its output (without a nonce set, the plain "SBT-GUEST-EXIT <code>").
 *
 * A caller's mark (sbt_vm_console_mark, e.g. a nonce of the probe's that
 * only its own guest script knows): the workload's complete lines that
 * start with it are not forwarded but kept, without the mark, in `marks`
 * (newline-separated; what does not fit is dropped and counted).
 */
enum sbt_vm_phase {
	SBT_VM_BOOTING = 0,
	SBT_VM_RUNNING, /* after SBT-GUEST-READY */
	SBT_VM_EXITED,	/* after SBT-GUEST-EXIT */
};

struct sbt_vm_console {
	enum sbt_vm_phase phase;
	int exit_code;	   /* valid in SBT_VM_EXITED */
	uint64_t ready_ns; /* CLOCK_MONOTONIC at the markers, 0 before */
	uint64_t exit_ns;
	bool pending_nl;  /* a workload line ended; its newline not written yet */
	bool mid_line;	  /* part of a long line was forwarded already */
	bool out_failed;  /* writing the workload's output failed: the rest is dropped */
	bool no_space;	  /* a line said "No space left on device" (the guest's RAM is its disk) */
	int hold;	  /* a saved boot's init is at its hold: 1 save it, 2 do not; 0 */
	bool clock_asked; /* ... and asks for the host's time and randomness */
	size_t len;
	char line[4096];
	size_t tail_len;
	char tail[2048];
	char exit_nonce[40]; /* hex; "" none */
	char mark[48];
	size_t mark_len, marks_len;
	unsigned int marks_dropped;
	char marks[2048];
};

void sbt_vm_console_init(struct sbt_vm_console *con);
/* The exit line's nonce (hex, at most 39 characters), before the VM runs. */
void sbt_vm_console_nonce(struct sbt_vm_console *con, const char *nonce);
/* Keep the workload's lines that start with mark (at most 47 bytes) from now on. */
void sbt_vm_console_mark(struct sbt_vm_console *con, const char *mark);
/* Take console bytes; the workload's go to out_fd. */
void sbt_vm_console_feed(struct sbt_vm_console *con, const char *buf, size_t n, int out_fd);
/* The console closed: a partial last line is handled like a complete one. */
void sbt_vm_console_eof(struct sbt_vm_console *con, int out_fd);

/* How a sandbox's second workload (spec.then_argv) went. */
enum sbt_then_end {
	SBT_THEN_PENDING = 0, /* not started (argv still runs), or running */
	SBT_THEN_EXITED,      /* it exited by itself before then_ms */
	SBT_THEN_STOPPED,     /* it exited after the SIGTERM at then_ms */
	SBT_THEN_KILLED,      /* SIGKILL, then_grace_ms after the SIGTERM */
	SBT_THEN_SKIPPED,     /* argv failed: not run */
};

struct sbt_sandbox_then {
	bool started;	   /* then_argv was started (start_ns set) */
	uint64_t start_ns; /* CLOCK_BOOTTIME right before (the clock of the exec records) */
	enum sbt_then_end end;
	int status;	 /* its wait status, once it ended */
	uint64_t end_ns; /* CLOCK_BOOTTIME when it ended (with what it left) */
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
	uint64_t start_ns;		  /* CLOCK_REALTIME */
	enum sbt_sandbox_backend backend; /* spec.backend, once started */
	uint32_t userns_base; /* ns backend: the host id its root maps to (0: no user namespace) */
	uint64_t go_ns;	      /* CLOCK_MONOTONIC when sbt_sandbox_go() released the workload */
	pid_t tracer_pid;     /* the tracer that said "attached PID" (state file: tracer_pid) */
	bool tracer_lost;     /* ... and it went away while the workload ran (tracer_lost) */
	/* The qemu backend; run->pid is qemu. */
	int console_fd;		  /* read end of qemu's serial console (non-blocking), or -1 */
	char tap[16];		  /* the tap's name, e.g. "sbt1a2b3c4d" */
	char tap_netns[PATH_MAX]; /* its netns's name, "" for the caller's */
	int tap_ifindex;
	char guest_addrs[SBT_VM_MAX_ADDRS][64]; /* the guest's addresses, without /LEN */
	int nr_guest_addrs;
	char vm_dir[PATH_MAX]; /* STATE_DIR/NAME.vm: the per-run initramfs */
	char accel[8];	       /* "kvm" or "tcg": what qemu was started with */
	/*
	 * How the guest started (qemu_snap.c): "restored" from a saved state,
	 * else "cold", with boot_why saying why not restored ("" restored).
	 */
	char boot[12];
	char boot_why[192];
	/* qemu_snap.c: the guest's control port, qemu's monitor (QMP), -1 without */
	int vm_ctl_fd, vm_mon_fd;
	int vm_snap_fd;		/* the state being saved (O_TMPFILE), -1 */
	char vm_snap[PATH_MAX]; /* where it goes once saved; "" when nothing is to be saved */
	bool vm_restored;	/* qemu was started from a saved state: go is QMP's cont */
	bool vm_restore_failed; /* ... and it failed before the release: start boots cold */
	bool vm_qmp_up;		/* the monitor's greeting and capabilities are done */
	/*
	 * STATE_DIR/NAME.vm/exec.stream: the guest agent's frames
	 * (guest_stream.h) as qemu wrote them from the guest's virtio-serial
	 * port; "" when the guest runs no agent (its execs are not visible).
	 */
	char exec_stream[PATH_MAX];
	struct sbt_vm_console con;
	/* spec.then_argv: init's phase records (read end, non-blocking), -1 without */
	int phase_fd;
	struct sbt_sandbox_then then;
	/* spec.workspace_report: 1 argv wrote to the workspace, 0 nothing, -1 not known (yet) */
	int workspace_written;
	/* The sandbox's egress policy for sbtrace agent (state file: egress), NULL: none. */
	const char *egress_mode;	 /* "enforce" or "audit" */
	const char *const *egress_rules; /* rule lines, policy.h's grammar */
	int nr_egress_rules;
	/* limits.c: the limits set, how ("cgroup2", "cgroup1", "none"), what was hit */
	struct sbt_sandbox_limits limits;
	char limits_via[16];
	char v1_pids[PATH_MAX], v1_memory[PATH_MAX];
	struct sbt_limit_hits hits;
	/* relay.c: the relays of output to a terminal (pid 0: none), their pipes, where to */
	pid_t relay_pid[2];
	int relay_w[2], relay_dest[2];
};

/*
 * Read what qemu wrote on the console (the qemu backend) and feed it to
 * run->con, forwarding the workload's output to out_fd. Returns the bytes
 * read (> 0), 0 at the end (qemu is gone; the console was closed and the
 * partial last line handled), -EAGAIN when nothing is pending, or -errno.
 */
long sbt_sandbox_console(struct sbt_sandbox_run *run, int out_fd);
/*
 * The exec stream file's room on disk: past `cap` bytes allocated (a
 * tracer reading it frees what it read), the oldest data is punched out,
 * which a reader meets as a gap (guest_stream_gap: not complete), never as
 * a silently cut stream. 1 when something went, 0, or -errno.
 */
#define SBT_VM_STREAM_MAX_DEFAULT (256ull << 20)
int sbt_vm_stream_trim(struct sbt_sandbox_run *run, uint64_t cap);

/*
 * Check a spec without acting on it (names, combinations, addresses, the
 * guest's kernel): the errors a user can fix. 0, or -errno with err filled.
 * sbt_sandbox_start() checks the same first.
 */
int sbt_sandbox_check(const struct sbt_sandbox_spec *spec, char *err, size_t errlen);

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

/* Freeze everything in the sandbox (cgroup.freeze) at once. 0 or -errno. */
int sbt_sandbox_freeze(struct sbt_sandbox_run *run);

/* Let the workload exec. 0 or -errno. */
int sbt_sandbox_go(struct sbt_sandbox_run *run);

/*
 * spec.then_argv: take init's phase records that arrived into run->then
 * (never blocks). 1 when something changed, 0 when not, -errno.
 */
int sbt_sandbox_then_poll(struct sbt_sandbox_run *run);
/*
 * spec.then_argv, while it runs: end it now as at then_ms (SIGTERM, the
 * SIGKILL then_grace_ms later). A signal to init, which waits for it with
 * SIGCHLD; before then_argv started it is ignored. 0 or -errno.
 */
int sbt_sandbox_then_end(struct sbt_sandbox_run *run);

/*
 * A host-tool sandbox (SBT_BACKEND_PODMAN) whose tool was reaped: start
 * spec->argv as its next tool, in the same cgroup, the way the first one
 * was started, and release it at once (run->pid is then the new tool).
 * spec->name must be the run's. 0, or -errno with err filled.
 */
int sbt_sandbox_next(struct sbt_sandbox_run *run, const struct sbt_sandbox_spec *spec, char *err,
		     size_t errlen);

/*
 * Wait for the sandbox's init to exit; *status is the workload's exit status
 * in waitpid() form (init exits with it; 127 when the exec failed). For the
 * qemu backend it is qemu's: the workload's comes from the console (run->con).
 * timeout_ms < 0 waits forever; -ETIMEDOUT when it expires.
 */
int sbt_sandbox_wait(struct sbt_sandbox_run *run, int *status, int timeout_ms);
/*
 * One limit from its option's text: `what` "pids" (a number, or "max"),
 * "memory" or "tmpfs" (bytes with an optional k, m, g or t, at least 1m;
 * memory also "max"). 0, or -EINVAL.
 */
int sbt_sandbox_limit_parse(struct sbt_sandbox_limits *l, const char *what, const char *arg);
/* Read the limits' counters into run->hits (kept at their highest; destroy reads them last). */
void sbt_sandbox_limits_read(struct sbt_sandbox_run *run);

/*
 * Kill what is left (cgroup.kill, else SIGKILL each), remove the cgroup and
 * state file (and, for a host-tool sandbox, the same path's empty cgroups in
 * the v1 hierarchies; for a qemu sandbox the tap, should it outlive qemu, and
 * STATE_DIR/NAME.vm).
 */
void sbt_sandbox_destroy(struct sbt_sandbox_run *run);

/*
 * State file (JSON: name, backend, cgroup path and id, netns, pid, shim_pid,
 * start time, visibility {"exec":"host"|"none","network":"cgroup"|"tap"};
 * the qemu backend adds tap, tap_netns ("" for the shim's), tap_ifindex and
 * guest_addrs, the guest's addresses without /LEN). The backend is
 * sbt_backend_name(run->backend); state_dir NULL: SBT_STATE_DIR_DEFAULT.
 * 0 or -errno.
 */
int sbt_state_write(const char *state_dir, const struct sbt_sandbox_run *run);
/* Rewrite the run's state file (run->state_file) with what changed. 0 or -errno. */
int sbt_state_update(const struct sbt_sandbox_run *run);
#define SBT_STATE_EGRESS_MAX   16384 /* the rules' text in a state file */
#define SBT_STATE_EGRESS_RULES 256   /* rules in a state file */
struct sbt_sandbox_state {
	char name[SBT_SANDBOX_NAME_MAX + 1];
	char backend[16];
	char cgroup_path[PATH_MAX];
	uint64_t cgroup_id;
	pid_t pid, shim_pid;
	char netns[PATH_MAX];
	uint64_t start_ns;
	pid_t tracer_pid;	  /* the tracer its workload was released to, 0: none yet */
	char visibility_exec[16]; /* "host", "guest_kernel" or "none"; "" when the file has none */
	char visibility_network[8]; /* "cgroup" or "tap"; "" when the file has none */
	/* The qemu backend ("" / 0 for the others): attach to the tap by ifindex in tap_netns. */
	char tap[16];
	char tap_netns[PATH_MAX]; /* a name as `ip netns` knows it; "" for the shim's own */
	int tap_ifindex;
	char guest_addrs[SBT_VM_MAX_ADDRS][64];
	int nr_guest_addrs;
	/*
	 * "egress": {"mode": "enforce"|"audit", "rules": ["cidr ...", ...]}, written
	 * by the shim (--allow, --egress) for sbtrace agent: egress_mode "" when the
	 * file has none; the rules (unparsed: the agent parses them) one a line.
	 */
	char egress_mode[8];
	char egress_rules[SBT_STATE_EGRESS_MAX];
	int nr_egress_rules;
	char accel[8];		    /* "kvm" or "tcg"; "" when the file has none */
	char boot[12];		    /* "restored" or "cold"; "" when the file has none */
	char boot_why[192];	    /* a cold boot's reason; "" */
	char exec_stream[PATH_MAX]; /* qemu with a guest agent: the run's exec_stream; "" */
};
/* Read and validate (untrusted input: sizes, types, the cgroup still exists). 0 or -errno. */
int sbt_state_read(const char *state_dir, const char *name, struct sbt_sandbox_state *st, char *err,
		   size_t errlen);

/*
 * Remove sandboxes whose shim is gone: kill, rmdir cgroup, delete state (and
 * a qemu sandbox's tap and per-run files). Returns how many.
 */
int sbt_sandbox_gc(const char *state_dir, bool verbose);

/*
 * Remove buildah's working containers of the sandbox `name`, which is gone
 * (destroyed): a podman build interrupted during a RUN step leaves them.
 * sbtrace-shim gc does the same for every sandbox that is gone.
 */
void sbt_podman_remove_working(const char *name);

/*
 * The workloads' seccomp rules as an OCI seccomp profile (seccomp_oci.c), for
 * a container engine's --security-opt seccomp=FILE: JSON, malloc'd; NULL when
 * out of memory.
 */
char *sbt_seccomp_oci_profile(void);

#endif
