/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the files of userspace/sandbox/ share: the table of operations where
 * the backends differ (struct sbt_backend_ops, one entry per enum
 * sbt_sandbox_backend), the child's context and helpers, the cgroup and
 * state-file helpers. Not part of the public API (sandbox.h).
 */
#ifndef SBT_SANDBOX_INTERNAL_H
#define SBT_SANDBOX_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/extbin.h"
#include "lib/envset.h"
#include "sandbox/sandbox.h"

#ifndef CLONE_INTO_CGROUP
#define CLONE_INTO_CGROUP 0x200000000ULL
#endif

#define KILL_WAIT_MS   5000
#define GC_MIN_AGE_SEC 10 /* orphans younger than this may belong to a sandbox being started */
#define READY_OK       '+'
#define READY_ERR      '-'

/* One record on the phase pipe (spec->then_argv), written by init in one write(). */
struct sbx_phase_rec {
	uint32_t end;	  /* SBT_THEN_PENDING: started; else how it ended; or SBX_PHASE_WORKSPACE */
	int32_t status;	  /* the ended workload's wait status (SKIPPED: argv's); WORKSPACE: 0/1 */
	uint64_t boot_ns; /* CLOCK_BOOTTIME when written */
};

/* The phase record of spec.workspace_report: status 1 argv wrote to the workspace, 0 not */
#define SBX_PHASE_WORKSPACE 0x100u
/* sbt_sandbox_then_end's signal to init */
#define SBX_THEN_END_SIGNAL SIGUSR1

struct json_object;
struct sbx_vm_prep;

/* What the child needs; lives in the caller's memory, copied by the clone. */
struct sbx_child {
	const struct sbt_sandbox_spec *spec;
	const char *cwd; /* the workload's (inside the sandbox) or the host tool's */
	char **envp;
	int ready_w, go_r;
	int phase_w; /* spec->then_argv: init's phase records to the caller, else -1 */
	/* the ns backend: the workspace's detached mount tree; the user namespace's sync pipe */
	int ws_fd;
	int sync_r, sync_w;
	/* ns and podman: the declared environment envp points into (owned) */
	struct sbt_env env;
	/* the qemu backend: qemu's argv and environment, the tap, the console pipe */
	struct sbx_vm_prep *vm;
};

/* Where a state file's fields are checked: the file (for messages) and the error buffer. */
struct sbx_state_ctx {
	const char *path;
	char *err;
	size_t errlen;
};

/*
 * Where the backends differ. A NULL hook does nothing. The caller's side
 * runs check, then (the cgroup made) prepare, the clone with clone_flags,
 * after_clone, and release in every case; destroy and gc after the cgroup is
 * gone.
 */
struct sbt_backend_ops {
	const char *name;	      /* --backend and the state file's "backend" */
	struct sbt_backend_caps caps; /* what it can do (sandbox.h): the common checks ask it */
	uint64_t clone_flags;	      /* besides CLONE_INTO_CGROUP: the new namespaces */
	/* The spec's backend-specific part, after the common checks. 0 or -errno, err filled. */
	int (*check)(const struct sbt_sandbox_spec *spec, char *err, size_t errlen);
	/* Before the clone: c->envp and the rest; c->cwd is spec->cwd or "/" on entry. */
	int (*prepare)(struct sbx_child *c, struct sbt_sandbox_run *run, const char *state_dir,
		       char *err, size_t errlen);
	/* The child's side: sets itself up, waits for go, execs; never returns. */
	void (*child_main)(struct sbx_child *c);
	/* The child runs (run->pid set); an error kills it. */
	int (*after_clone)(struct sbx_child *c, struct sbt_sandbox_run *run, char *err,
			   size_t errlen);
	/* Free what prepare made, after the clone or on failure (`failed`: start fails). */
	void (*release)(struct sbx_child *c, struct sbt_sandbox_run *run, bool failed);
	/* sbt_sandbox_destroy(), the cgroup removed: what else the backend leaves. */
	void (*destroy)(struct sbt_sandbox_run *run);
	/* The state file's extra fields (state_keys, NULL-terminated: nobody else's). */
	void (*state_write)(struct json_object *o, const struct sbt_sandbox_run *run);
	const char *const *state_keys;
	int (*state_parse)(struct json_object *root, struct sbt_sandbox_state *st,
			   const struct sbx_state_ctx *v);
	/* gc of a sandbox whose shim is gone, its cgroup removed. */
	void (*gc)(const char *state_dir, const struct sbt_sandbox_state *st);
	/* gc: what a shim killed while starting left, no state file naming it. */
	void (*gc_orphans)(const char *state_dir, bool verbose);
};

/* ---- qemu.c, qemu_state.c: the qemu backend's files, state fields and gc ---- */
void sbx_vm_dir_remove(const char *dir); /* STATE_DIR/NAME.vm and what qemu.c puts in it */
void sbx_qemu_state_write(struct json_object *o, const struct sbt_sandbox_run *run);
int sbx_qemu_state_parse(struct json_object *root, struct sbt_sandbox_state *st,
			 const struct sbx_state_ctx *v);
void sbx_qemu_gc(const char *state_dir, const struct sbt_sandbox_state *st);
void sbx_qemu_gc_orphans(const char *state_dir, bool verbose);

/* ---- qemu_snap.c: the saved boot (qemu.c's) ---- */
enum sbx_snap_mode { SBX_SNAP_NONE = 0, SBX_SNAP_SAVE, SBX_SNAP_RESTORE };
/* What the saved guest depends on, besides the files it names. */
struct sbx_vm_snap_in {
	const struct sbt_sandbox_spec *spec;
	const char *agent;		    /* the host's sbtrace for the guest, "" without */
	const char *qemu, *machine, *accel; /* the binary's name, -M, -accel */
	const char *append;		    /* the kernel command line (no run's words) */
	const char *devices;		    /* the device set, as a word */
	unsigned int mem_mb;
	bool alt, ws, bpf_stats;
};
struct sbx_vm_snap {
	enum sbx_snap_mode mode;
	char kernel[PATH_MAX], base[PATH_MAX]; /* the guest's vmlinux and base initramfs */
	char initrd[PATH_MAX];		       /* guest_dir/snap/KEY.initrd */
	char state[PATH_MAX];		       /* guest_dir/snap/KEY.state */
	int state_fd; /* restore: the state, read; save: an O_TMPFILE beside it; -1 */
};
/*
 * Restore, save or neither (mode NONE: why says why not; SAVE: why says
 * so too): never an error, as a cold boot is always the fallback.
 */
int sbx_vm_snap_plan(const struct sbx_vm_snap_in *in, struct sbx_vm_snap *sn, char *why,
		     size_t whylen);
/* KEY.initrd, unless it exists: 0 or -errno with err. */
int sbx_vm_snap_initrd(const struct sbx_vm_snap *sn, const char *agent, char *err, size_t errlen);
/* After the clone of a restoring qemu: its state loaded (0), else run->boot_why, restore_failed. */
int sbx_vm_snap_loaded(struct sbt_sandbox_run *run, char *err, size_t errlen);
/* The release of a restored guest: cont, then its control archive. */
int sbx_vm_snap_go(struct sbt_sandbox_run *run);
/* The console said SBT-GUEST-HOLD or SBT-GUEST-CLOCK (run->con): save, send, answer. */
void sbx_vm_snap_console(struct sbt_sandbox_run *run);
void sbx_vm_snap_close(struct sbt_sandbox_run *run);

/* ---- backend.c: the table, one row per enum sbt_sandbox_backend ---- */
/* The backend's operations; NULL for a value out of range. */
const struct sbt_backend_ops *sbx_backend(enum sbt_sandbox_backend b);
/* By the state file's name; NULL for a backend this build does not know. */
const struct sbt_backend_ops *sbx_backend_by_name(const char *name);

/* ---- util.c ---- */
int sbx_seterr(char *err, size_t errlen, int ret, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* The executable execvp would run for prog (PATH's first), its path into out (NULL: none). */
bool sbx_which(const char *prog, char *out, size_t outlen);
/* snprintf that says whether everything fitted. */
bool sbx_str_fits(char *dst, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Read a whole (small) file into a NUL-terminated malloc'd buffer; NULL with errno set. */
char *sbx_slurp(const char *path, size_t max, size_t *lenp);
/* `ip [-n NETNS] ARGS...` (NULL: no -n; args NULL-terminated, at most 12). 0, or -EIO. */
int sbx_ip(const char *netns, char *const *args, char *err, size_t errlen);

/* ---- cgroup.c: cg is a cgroup's absolute path ---- */
int sbx_cgroup2_mount(char *mnt, size_t len);
bool sbx_cgroup_empty(const char *cg);
/*
 * A killed controller's leftover: an empty cgroup directory older than
 * GC_MIN_AGE_SEC (a younger one may be a sandbox being started).
 */
bool sbx_cgroup_leftover(const char *cg);
void sbx_cgroup_kill(const char *cg);
/* Freeze everything in the cgroup and below (cgroup.freeze). 0 or -errno. */
int sbx_cgroup_freeze(const char *cg);
/* rmdir cg and every cgroup below it, at any depth. 0 or -errno (-EBUSY: still populated). */
int sbx_cgroup_rmdir_tree(const char *cg);
/* Kill, wait for it to empty, remove. 0 or -errno. */
int sbx_cgroup_destroy(const char *cg);

/* ---- state_field.c: what the state file's parts share (state.c, a backend's fields) ---- */
/* A directory owned by us or root, writable by nobody else (`create`: mkdir first). */
int sbx_check_state_dir(const char *dir, bool create);
/* "state file PATH: field 'KEY<what>" (or the file's what without key) into v->err; ret. */
int sbx_state_bad(const struct sbx_state_ctx *v, int ret, const char *what, const char *key);
/* Required string / optional string (1: absent) / integer min..max, as sbx_state_bad says. */
int sbx_state_str(struct json_object *root, const char *key, char *out, size_t len,
		  const struct sbx_state_ctx *v);
int sbx_state_opt_str(struct json_object *root, const char *key, char *out, size_t len,
		      const struct sbx_state_ctx *v);
int sbx_state_int(struct json_object *root, const char *key, int64_t min, int64_t max, int64_t *out,
		  const struct sbx_state_ctx *v);

/* ---- state.c ---- */
/* STATE_DIR/NAME.attach for STATE_DIR/NAME.json ("" when it does not end so). */
void sbx_attach_path(const char *state_file, char *out, size_t len);
/* Parse and validate; with `live`, the cgroup must still exist with the recorded id. */
int sbx_state_parse(const char *dir, const char *name, struct sbt_sandbox_state *st, bool live,
		    char *err, size_t errlen);

/* ---- child.c: the child's side, before its exec ---- */
void sbx_child_fail(const struct sbx_child *c, int err, const char *fmt, ...)
	__attribute__((noreturn, format(printf, 3, 4)));
/* Default signals, dies with its parent, named `comm`, its own session. */
void sbx_child_start(const struct sbx_child *c, const char *comm);
/* stdin /dev/null, stdout and stderr from the spec (-1: kept). 0 or -errno. */
int sbx_child_stdio(const struct sbt_sandbox_spec *spec);
void sbx_drop_privileges(const struct sbx_child *c);
/* Close every fd but those in keep[] (-1 entries ignored). */
void sbx_close_fds_except(int *keep, int n);
pid_t sbx_raw_clone(uint64_t flags, int cgroup_fd);
/* Tell the caller the set-up is done, then block until it says go (EOF: it is gone). */
void sbx_ready_then_wait_go(struct sbx_child *c);
/* Only the ready report: the backend is released another way (qemu_snap.c). */
void sbx_ready(struct sbx_child *c);
/* The workload's seccomp filter (seccomp.c); exit 127 with a message when it cannot be. */
void sbx_child_seccomp(const struct sbx_child *c);
/* Exec argv with c->envp as its environment; exit 127 with a message when it fails. */
void sbx_child_exec(const struct sbx_child *c, enum sbt_exec_ctx ctx, char *const *argv)
	__attribute__((noreturn));

/* ---- seccomp.c: the workload's filter ---- */
/* An argument test: holds when (argument & mask) == value. */
struct sbx_seccomp_test {
	unsigned int arg; /* 0-5 */
	uint64_t mask, value;
};

#define SBX_SC_MAX_TESTS 2
#define SBX_SC_COMPAT	 (1u << 0) /* the name exists in the 32-bit ABI only (i386's stime) */
#define SBX_SC_OPTIONAL	 (1u << 1) /* newer than some libseccomp: left out where unknown */
/* arg 0 is a socket family: every family but sbx_seccomp_families' (the test's value unused) */
#define SBX_SC_FAMILIES (1u << 2)

/* One rule of the deny list: the call fails with err when every test holds (none: always). */
struct sbx_seccomp_rule {
	const char *syscall;
	int err; /* EPERM; ENOSYS where libc falls back to a call the filter can read */
	unsigned int nr_tests;
	struct sbx_seccomp_test tests[SBX_SC_MAX_TESTS];
	unsigned int flags; /* SBX_SC_* */
	const char *why;
};

extern const struct sbx_seccomp_rule sbx_seccomp_rules[];
extern const size_t sbx_seccomp_nr_rules;
/* The socket families a workload may open (SBX_SC_FAMILIES), -1 terminated. */
extern const int sbx_seccomp_families[];

/*
 * Confine the calling process (and what it execs) with the rules: call it
 * single-threaded, right before the exec. 0, or -errno with err filled.
 */
int sbx_seccomp_install(char *err, size_t errlen);

/* ---- limits.c: pids and memory through the host's cgroup controllers ---- */
/* Set spec->limits on run's cgroup (v2), or on v1 cgroups of its name. 0 or -errno with err. */
int sbx_limits_prepare(const struct sbt_sandbox_spec *spec, struct sbt_sandbox_run *run, char *err,
		       size_t errlen);
/* v1: put pid (the sandbox's init, before it runs anything) into the v1 cgroups. */
int sbx_limits_join(struct sbt_sandbox_run *run, pid_t pid, char *err, size_t errlen);
/* Remove the v1 cgroups (their processes gone). */
void sbx_limits_destroy(struct sbt_sandbox_run *run);
/* gc: v1 cgroups of sandboxes whose v2 cgroup is gone, emptied. How many. */
int sbx_limits_gc(bool verbose);

/* ---- relay.c: the workload's output to a terminal, escaped ---- */
/*
 * in (n bytes) with controls as \xNN into out (4 * n bytes). keep NULL:
 * everything; else a UTF-8 sequence cut at the end is left (*keep bytes).
 * The bytes written.
 */
size_t sbx_term_escape(const char *in, size_t n, char *out, size_t *keep);
/*
 * Where spec's stdout or stderr (-1: the caller's 1 and 2) is a terminal,
 * a pipe to a relay in its place (the run's relay to that terminal, or a
 * new one). 0 or -errno with err.
 */
int sbx_relay_wrap(struct sbt_sandbox_spec *spec, struct sbt_sandbox_run *run, char *err,
		   size_t errlen);
/* Close the run's write ends and wait for its relays (a bounded wait). */
void sbx_relay_end(struct sbt_sandbox_run *run);

/* ---- qemu_tap.c: the qemu backend's network ---- */
/* A name `ip netns` can have made; an interface name the kernel accepts. */
bool sbx_netns_name_ok(const char *n);
bool sbx_ifname_ok(const char *n);
/* Check the tap's address pairs; the guest's halves onto `append` and into guest[] (NULL: no). */
int sbx_vm_addrs(const struct sbt_sandbox_spec *spec, char *append, size_t len, char (*guest)[64],
		 int *nr_guest, char *err, size_t errlen);
/* run->tap in spec->tap_netns: its fd, or -errno; then its addresses, and up. */
int sbx_tap_create(const struct sbt_sandbox_spec *spec, struct sbt_sandbox_run *run, char *err,
		   size_t errlen);
int sbx_tap_configure(const struct sbt_sandbox_spec *spec, struct sbt_sandbox_run *run, char *err,
		      size_t errlen);
/* Delete the tap if it is still there with the recorded ifindex. */
void sbx_tap_remove(const char *netns, const char *tap, int ifindex);

/* qemu_tsc.c: the host's TSC rate in kHz for the guest's tsc_early_khz; 0: unknown. */
unsigned long sbx_host_tsc_khz(void);

/* userns.c: the ns backend's user namespace (see there). */
#define SBX_USERNS_SIZE 65536u
/* The first host id of the sandbox `name`'s range. */
uint32_t sbx_userns_base(const char *name);
/* Caller, before the clone: the pipe the child waits on; release closes it. */
int sbx_userns_prepare(struct sbx_child *c, char *err, size_t errlen);
void sbx_userns_release(struct sbx_child *c);
/* Caller, after the clone: write the maps, idmap the workspace, release the child. */
int sbx_userns_setup(struct sbx_child *c, struct sbt_sandbox_run *run, char *err, size_t errlen);
/* Child, first thing: wait for the maps, become the namespace's root. */
void sbx_userns_enter(const struct sbx_child *c);

/* ns.c: the declared environment (spec->env over the default set, PWD= the cwd) into c->envp. */
int sbx_declared_env(struct sbx_child *c, enum sbt_env_for who, bool pwd, char *err, size_t errlen);

#endif
