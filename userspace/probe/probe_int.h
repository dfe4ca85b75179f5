/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The probe's parts (userspace/probe/), as they see each other. */
#ifndef SBT_PROBE_INT_H
#define SBT_PROBE_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "probe/probe.h"

#define PROBE_TEXT_MAX (1u << 20) /* Dockerfile, package.json */

/* repo.c */
void probe_err(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/*
 * Open `name` (relative, already normalized) in the repo whose real path is
 * `root`. 1 and *fdp for a regular file, 0 when it is absent or not a regular
 * file, -1 with err set when it cannot be read or resolves outside the repo.
 * An absolute name (--file outside the repo, the operator's) is opened as it is.
 */
int probe_open_repo_file(const char *root, const char *name, int *fdp, char *err, size_t errlen);
/* Read a repo text file (at most PROBE_TEXT_MAX). 1 = read, 0 = absent, -1 = error. */
int probe_read_repo_text(const char *root, const char *name, char **bufp, size_t *lenp, char *err,
			 size_t errlen);
/* "./a//b/../c" -> "a/c"; false when absolute, empty or climbing out of the repo. */
bool probe_normalize_rel(const char *in, char *out, size_t outlen);

/* plan.c: the build kinds' table (kind.h); NULL for SBT_BUILD_NONE or out of range. */
struct probe_kind;
const struct probe_kind *probe_kind_of(enum sbt_build_kind k);

/*
 * package_json.c: the repo's package.json. 1: *doc (a new reference), its
 * *scripts object (NULL when it has none) and *text (the file, for line
 * numbers; free it); 0: none; -1: unreadable, not JSON or not an object (err).
 */
int probe_package_json(const char *root, json_object **doc, json_object **scripts, char **text,
		       char *err, size_t errlen);
/* The lockfile npm ci installs from, or NULL: npm-shrinkwrap.json wins over package-lock.json. */
const char *probe_npm_lockfile_name(const char *root);
/* ROOT/node_modules is there, in any form (a directory, a link, a file): npm ci would remove it. */
bool probe_has_node_modules(const char *root);
/*
 * The repo's npm-shrinkwrap.json, else package-lock.json (as named above): its v2/v3
 * "packages" object at *packages (a new reference), NULL when there is none,
 * it cannot be read or parsed, or it has none (v1). Always 0.
 */
int probe_npm_lockfile(const char *root, json_object **packages);

/* tree.c: the repo as one digest (the cache key's view of it). */
struct probe_tree {
	char digest[65];
	uint64_t files, hashed, cached, bytes_hashed;
	uint64_t bytes; /* the regular files' sizes, hashed or not (of what the walk reached) */
	bool cacheable; /* false: something the digest cannot cover (why) */
	char why[256];
};

/*
 * Digest every entry below `repo`, with the stat cache file `statcache`
 * (NULL: none; rewritten when the walk is cacheable). 0 or -errno.
 */
int probe_tree_digest(const char *repo, const char *statcache, struct probe_tree *t);

/* ---- the run ------------------------------------------------------------ */

#include <limits.h>
#include <stdint.h>

#include <json-c/json.h>

#include "lib/envset.h"
#include "sandbox/sandbox.h"
#include "event/sink.h"
#include "site.h"
#include "trace/tracer.h"

#define PROBE_NAME  "ShellInvocationTraceProbe"
#define WARN_PREFIX "shell_invocation_trace."

#define PROBE_MAX_IMAGE_MAP 32
#define PROBE_BOOT_GRACE_MS 2000 /* SIGTERM at the boot's end, SIGKILL this much later */
#define PROBE_BOOT_QUIET_MS 1000 /* ready, then this long with no exec: the boot's end */

struct probe_image_map {
	char ref[256];	 /* as a Dockerfile's FROM names it */
	char local[256]; /* the local image that stands in for it */
};

enum probe_fail_on { FAIL_ON_NOTHING = 0, FAIL_ON_UNSAFE, FAIL_ON_INCONCLUSIVE };

/* Exit codes of --fail-on (after the report was printed). */
#define PROBE_EXIT_UNSAFE	4
#define PROBE_EXIT_INCONCLUSIVE 5

/* options.c: what the command line asks for. */
struct probe_opts {
	char repo[PATH_MAX]; /* real path */
	const char *cmd, *target, *cache_dir, *trace_out, *guest, *tap_addrs;
	const char *file;   /* --file: the Dockerfile's path in the repo (normalized), or NULL */
	char file_buf[PATH_MAX]; /* ... where it is kept (at most 127 bytes of it) */
	bool no_cache, quiet;
	struct sbt_sandbox_limits limits; /* --pids-max, --memory-max, --tmpfs-size (0: defaults) */
	enum sbt_sandbox_backend backend; /* --backend, when backend_given (else auto) */
	bool backend_given;
	char isolation[512]; /* auto's host engine: why the isolation is reduced, "" */
	uint64_t timeout_ms;
	int egress_mode;
	struct sbt_egress_cfg egress;
	char cache_buf[PATH_MAX], guest_buf[PATH_MAX];
	char tap_host[64], tap_guest[64]; /* --backend qemu */
	/* the build's environment: the default set and --env (part of the key) */
	struct sbt_env env;
	char *env_args[SBT_ENV_MAX + 1]; /* --env as given, for the sandbox */
	int nr_env;
	/* the boot phase */
	bool no_boot;
	const char *boot_cmd;
	uint64_t boot_ms;
	uint64_t boot_quiet_ms; /* --boot-quiet-ms */
	/* base images: --image-map, --pull */
	struct probe_image_map image_map[PROBE_MAX_IMAGE_MAP];
	int nr_image_map;
	bool pull;
	/* CI outputs */
	enum probe_fail_on fail_on;
	bool sarif;
	/* --migrate: the distroless migration and its check (userspace/migrate/) */
	bool migrate;
	const char *migrate_out, *distroless_base;
};

#define PROBE_BACKEND_DEFAULT SBT_BACKEND_NS /* --backend auto's, for a build without an engine */

/*
 * --image-map's stand-in for `ref`, or NULL: each mapping's REF is a shell
 * glob (fnmatch, "node:*-alpine*"; a plain ref matches itself only), and the
 * last mapping given that matches wins. A mapping matches ref as written,
 * without its digest pin (node:20@sha256:... as node:20), and with the tag
 * a ref without one means (node as node:latest).
 */
const char *probe_image_mapped(const struct probe_opts *o, const char *ref);
/*
 * What a stand-in cannot honour of `ref` into buf ("" when nothing): the
 * version ref asks for beside what the stand-in has (`provides`, its
 * sbtrace.provides label such as "Node.js 18.19.0"; "" when it has none),
 * and a digest pin. "asked: Node.js 24, the stand-in has Node.js 18.19.0".
 */
void probe_image_note(const char *ref, const char *provides, char *buf, size_t len);

/*
 * The package manager a RUN command runs that none of the stand-ins of
 * scripts/base-images.sh has (they are Debian underneath: apk, yum, dnf,
 * microdnf), as a command word of `cmd` (a shell command line), or NULL.
 */
const char *probe_foreign_tool(const char *cmd);

/* -1 to go on, else an exit code (after --help, or a one-line usage error). */
int probe_options(int argc, char **argv, struct probe_opts *o);
/*
 * After the plan: the backend the build runs on (the kind's own, else
 * --backend's) into *backend, and what it needs: a guest, the tap's
 * addresses. 0, or -EINVAL after a message.
 */
int probe_backend_options(struct probe_opts *o, const struct probe_kind *k,
			  enum sbt_sandbox_backend *backend);

/* engine.c: Dockerfile builds with podman (or docker). */
enum probe_engine { ENGINE_NONE = 0, ENGINE_PODMAN, ENGINE_DOCKER };

#define DF_MAX_IMAGES 8
#define DF_IMAGE_MAX  256
#define DF_MAX_ENTRY  8 /* words of a base image's ENTRYPOINT kept */
#define DF_NOTE_MAX   224

/* What the build of the target stage needs: base images, and whether any RUN runs. */
struct probe_df {
	char file[128]; /* its name in the repo (the plan's dockerfile): "Dockerfile", --file's */
	int nr_images;
	char images[DF_MAX_IMAGES][DF_IMAGE_MAX];
	char ids[DF_MAX_IMAGES][65]; /* their image ids (hex), once inspected */
	int nr_runs;		     /* RUN instructions in the stages up to the target */
	/* --image-map: the local image standing in for images[i], "" when none */
	char mapped[DF_MAX_IMAGES][DF_IMAGE_MAX];
	/*
	 * The target's ENTRYPOINT when it is its base image's (none in it or the
	 * stages it is built FROM): that image's index in images (-1: the
	 * Dockerfile's own, or none), and its Config.Entrypoint once inspected.
	 */
	int entry_image;
	char entry[DF_MAX_ENTRY][DF_IMAGE_MAX];
	int entry_argc;
	/* the first RUN on one of our stand-ins that runs a tool it lacks (apk ...) */
	const char *lacks_tool; /* static, NULL for none */
	unsigned int lacks_line;
	int lacks_image; /* its index in images */
	/* a mapped image's probe_image_note() (the warning base_image_substituted's), "" */
	char notes[DF_MAX_IMAGES][DF_NOTE_MAX];
};

/* The note of the base image `ref` (as an input "image:REF" names it), "" when none. */
const char *probe_image_note_of(const struct probe_df *df, const char *ref);

struct probe_build {
	enum probe_engine eng;
	struct probe_df df;
	char iidfile[64];    /* the built image's id, "" when none was asked for */
	char dockerfile[64]; /* the Dockerfile with --image-map's FROMs, "" when the context's */
	char context[256];   /* the build context: a copy of the repo (kind_dockerfile.c), "" */
	char container[96];  /* the boot's container, "" when none was started */
	bool pull;	     /* --pull: podman may pull what is missing */
	const char *fail_reason; /* probe_engine_prepare's failure as a reason, or NULL */
	char network[112];	 /* podman build --network: "ns:/run/netns/X" (net.c), "" none */
	char seccomp[64]; /* podman's OCI seccomp profile of the RUN steps and the boot, "" none */
	/*
	 * The microVM's build (engine_vm.c): context is then the guest's
	 * workspace, with the repo's copy in context/; the guest's /sbt/run
	 * (owned); the mark of its console lines; the base images' copy.
	 */
	bool in_vm;
	char *vm_script;
	char vm_mark[48];
	int vm_images;					  /* in the probe's image store */
	uint64_t vm_copy_ms, vm_store_bytes, vm_build_ms; /* the copy; the guest's build */
};

/* net.c: the build's network, through the allowlist (its comment says how). */
struct probe_net {
	char netns[64];		 /* a Dockerfile build's namespace (ip netns name), "" none */
	char netns_path[96];	 /* /run/netns/NAME */
	pid_t relay;		 /* slirp4netns, ours; 0 none */
	int exit_w;		 /* its --exit-fd: closing it ends the relay; -1 */
	char relay_cg[PATH_MAX]; /* its cgroup, <v2>/sbtrace/probe-net-PID; "" none */
	char why[128];		 /* the report's build network: "none: ...", or what it is */
};

/*
 * Pick the engine, read the Dockerfile and check its base images (their ids
 * become inputs). 0, or -1 with msg saying what is missing.
 */
int probe_engine_prepare(const struct probe_opts *o, struct sbt_build_plan *plan,
			 struct probe_build *b, char *msg, size_t msglen);
/*
 * The engine's build argv into plan->argv (build context `context`, its
 * Dockerfile unless b->dockerfile), with CONTAINERS_CONF set for podman. 0 or -errno.
 */
int probe_engine_argv(struct sbt_build_plan *plan, struct probe_build *b, const char *context,
		      const char *cgroup_parent);
/*
 * The build's argv as probe_engine_argv makes it, from b's files as they are
 * (its iidfile, seccomp profile, network; nothing is made): a microVM's too.
 */
int probe_engine_build_argv(struct sbt_build_plan *plan, const struct probe_build *b,
			    const char *context, const char *cgroup_parent);
/* Remove the boot's container, the image the build produced (never a base image), the files
 * and the build context's copy. */
void probe_engine_cleanup(struct probe_build *b);
/* Remove the boot's container, if one was started (podman's own kill and clean-up). */
void probe_engine_remove_container(struct probe_build *b);
/* Run the boot's container's HEALTHCHECK once: its exit code, or -errno. */
int probe_engine_healthcheck(const struct probe_build *b);
/* The built image's id (hex) from the iid file. 0, or -1. */
int probe_engine_image(const struct probe_build *b, char id[65]);
/* The engine's argv starting the built image's container `name` below cgroup_parent. 0 or -E2BIG. */
int probe_engine_boot_argv(const struct probe_build *b, const char *image, const char *name,
			   const char *cgroup_parent, char **argv, int max);

/*
 * engine_vm.c: a Dockerfile build in the microVM. After the context's copy
 * (into b->context/context): the base images copied from the host's
 * store into the probe's own (store/), the Dockerfile, the seccomp profile and the guest's script
 * (b->vm_script) in b->context, the guest's workspace. 0, or -1 with
 * p->boot_err.
 */
struct probe_ctx;
int probe_vm_build_prepare(struct probe_ctx *p, struct sbt_build_plan *plan);
#define PROBE_VM_DISK_MB 16384 /* sparse: what the engine writes */
#define PROBE_VM_MEM_MB	 2048 /* the guest's root is in its RAM, the engine's storage on the disk */
/* The probe's image store below dir (a workspace): the overlay driver's own mount undone. */
void probe_vm_store_umount(const char *dir);
/* The VM ended: what its script said of the build's and the boot's end (console marks). */
void probe_vm_build_results(struct probe_ctx *p);

/* sink.c: what the probe takes from the trace's events. */
#define PROBE_MAX_DENIED 64

struct probe_sink {
	struct sbt_sink base;
	uint64_t cgroup_id;	     /* the sandbox's own cgroup */
	struct probe_sites *sites;   /* where each shell came from */
	struct sbt_sandbox_run *run; /* the ns backend's boot: init's phase records */
	uint64_t boot_start_ns;	     /* CLOCK_BOOTTIME the boot began, 0 before */
	/*
	 * A microVM's boot starts with the exec, in the sandbox's own cgroup
	 * (no RUN step's), of the engine with this word ("--name=NAME"); "" none.
	 */
	char boot_word[128];
	bool sites_failed;	   /* out of memory tying shells to sites */
	bool summary_seen;	   /* ShellInvocationObserved arrived */
	uint64_t shells;	   /* its count */
	uint64_t failed_shells;	   /* of them, attempts that failed (a shell not there) */
	json_object *unidentified; /* owned: its "unidentified" (executables), NULL before */
	uint64_t nr_unidentified;  /* their execs */
	bool failed_unseen;	   /* no failed-exec hook: a shell tried and missing is unseen */
	struct sbt_completeness complete; /* and its completeness (exec, egress, all) */
	uint64_t first_exec_ts;		  /* from TraceStopped */
	uint64_t attach_ms;		  /* the tracer's own load and attach, from TraceStarted */
	bool exec_below;		  /* an exec in a cgroup below the sandbox's (a RUN step) */
	uint64_t execs;			  /* execs of the build seen in the sandbox */
	uint64_t last_exec_ns; /* CLOCK_BOOTTIME of the latest exec seen (the quiet period) */
	uint64_t allowed, denied, observed;
	json_object *denied_dests;  /* owned; at most PROBE_MAX_DENIED */
	json_object *allowed_dests; /* owned; each destination once, at most PROBE_MAX_DENIED */
	json_object
		*refused_names; /* owned: names the DNS proxy refused, each once, at most as many */
	json_object *proposal;	/* owned: --egress learn's AllowlistProposed (no envelope), NULL */
};

void probe_sink_init(struct probe_sink *ps, uint64_t cgroup_id);
void probe_sink_free(struct probe_sink *ps);

/* boot.c: the boot phase — what starts the container, and how it went. */
enum probe_boot_source { BOOT_NONE = 0, BOOT_DOCKERFILE, BOOT_CMD, BOOT_NPM_START };

struct probe_boot {
	enum probe_boot_source source;
	const char *skipped;		    /* NULL, or why it did not run (a report value) */
	char *argv[SBT_PROBE_MAX_ARGS + 1]; /* ns: the start command (owned) */
	unsigned int line;		    /* Dockerfile: the ENTRYPOINT/CMD line, 0 */
	char image[72];			    /* Dockerfile: the built image */
	bool ran, running;
	uint64_t start_ms, deadline_ms; /* CLOCK_MONOTONIC */
	bool term_sent, kill_sent;
	bool has_healthcheck; /* the image has a HEALTHCHECK: run once during the boot */
	int healthcheck;      /* its exit code; -1 not run */
	enum sbt_then_end end;
	int status;
	uint64_t ms; /* how long it ran */
	/* readiness (ready.c): it listens, or its HEALTHCHECK passed; then the quiet period */
	uint64_t next_poll_ms; /* CLOCK_MONOTONIC: the next look at its sockets */
	uint64_t ready_ns;     /* CLOCK_BOOTTIME it was seen ready, 0 not (yet) */
	const char *ready_by;  /* "ready" (it listens) or "healthcheck" */
	bool end_asked;	       /* the probe ended it at readiness (not its time limit) */
	int term_handled;      /* at the SIGKILL (podman): probe_boot_term_handled() */
	/* a microVM without the engine (boot.c): the build, then the boot, in its /sbt/run */
	bool in_vm;
	char *vm_script;
	char vm_mark[48];
};

struct probe_ctx;
/*
 * After the plan: the boot's command and the sites of the build's and the
 * boot's shells. 0, or -1 with err (bad --boot-cmd).
 */
int probe_boot_plan(struct probe_ctx *p, const struct sbt_build_plan *plan, char *err,
		    size_t errlen);
/* The podman backend's build ended with status 0: start the container. 0 or -1 (boot_err). */
int probe_boot_podman(struct probe_ctx *p);
/* While the container runs: SIGTERM at the deadline, SIGKILL after the grace. */
void probe_boot_tick(struct probe_ctx *p);
void probe_boot_free(struct probe_boot *b);
/*
 * --backend qemu, a build of its own (no Dockerfile) with a boot: the
 * guest's /sbt/run runs the build, then the boot for --boot-seconds
 * (SIGTERM, SIGKILL after the grace), its lines marked on the console
 * (probe_vm_build_results() reads them). 0, or -1 with boot_err.
 */
int probe_boot_vm_script(struct probe_ctx *p, const struct sbt_build_plan *plan);
/* One shell word, single-quoted, after a blank (engine_vm.c). */
void probe_vm_word(FILE *f, const char *w);
json_object *probe_boot_json(const struct probe_ctx *p);

/* ready.c: does the boot listen? One line of /proc/net/tcp or tcp6 (pure). */
bool probe_tcp_line_listens(const char *line);
/* One line of /proc/net/unix: a listening socket (pure). */
bool probe_unix_line_listens(const char *line);
/* Field `field` (1-based, blank-separated) of a /proc/net line as a socket inode; 0 if none. */
unsigned long probe_net_line_inode(const char *line, int field);
#define PROBE_TCP_INODE_FIELD  10 /* sl local rem st tx:rx tr:when retrnsmt uid timeout inode */
#define PROBE_UNIX_INODE_FIELD 7  /* Num RefCount Protocol Flags Type St Inode */
/* 1 a process of the boot listens (TCP, TCP6, unix), 0 not, -1 no process to look at. */
int probe_boot_listening(const struct probe_ctx *p);
/* /proc/PID/status (pure): the process is PID 1 of its pid namespace (NSpid's last). */
bool probe_status_pid1(const char *status);
/* /proc/PID/status (pure): it catches or ignores SIGTERM (SigCgt, SigIgn). */
bool probe_status_term_handled(const char *status);
/*
 * At the boot's SIGKILL: does what got its SIGTERM still act on one? A
 * container's PID 1 whose SIGTERM is at the default (none set, or reset by a
 * one-shot handler that re-raised it: node's) cannot be ended by SIGTERM,
 * the kernel drops it: killing it misses nothing of its own. 1, 0, -1 not
 * known (the ns backend's boot is init's child: 1).
 */
int probe_boot_term_handled(const struct probe_ctx *p);

/* run.c: one run of the build in a sandbox, under the trace. */
struct probe_ctx {
	const struct probe_opts *o;
	enum sbt_sandbox_backend backend; /* what the build runs on (its capabilities: sandbox.h) */
	char key[65];			  /* the cache key */
	struct sbt_sandbox_run run;
	char name[SBT_SANDBOX_NAME_MAX + 1];
	bool started, released, exited, boot_failed, timed_out;
	int status;
	pid_t watchdog; /* run.c: kills the sandbox's cgroup when the probe dies; 0 none */
	int watchdog_w; /* the probe's end of its pipe (while watchdog) */
	uint64_t t0_ms, go_ms, last_progress_ms, build_ms;
	/* start-up stages (CLOCK_MONOTONIC ns): run entered, sandbox cloned, trace called,
	 * attached, sandbox ready; the release in CLOCK_REALTIME (the first exec's clock) */
	uint64_t ts_run, ts_cloned, ts_trace, ts_attached, ts_ready, go_epoch_ns;
	uint64_t own_since_ns; /* epoch: a file changed since is the build's own work */
	uint64_t t0_epoch_ns;
	char boot_err[512];
	unsigned int vm_mem_mb; /* a microVM's RAM (run.c: from the repo's size), 0 none */
	/* boot_failed's reason when it is not the sandbox's set-up (base_image_missing), NULL */
	const char *boot_reason;
	int console_out; /* the qemu backend: where the guest's console goes */
	struct probe_build build;
	char netns[64];	      /* the qemu backend's tap namespace, "" when none was made */
	struct probe_net net; /* the build's network (net.c) */
	struct probe_sink sink;
	struct probe_tree tree; /* the repo's digest; cacheable false: no cache at all */
	struct probe_sites sites;
	struct probe_boot boot;
	bool uncacheable; /* --pull: the base images are not pinned by the key */
};

/* net.c: the build's network, through the allowlist (its comment says how). */
void probe_net_init(struct probe_net *n);
/* A rule in the allowlist, or learn mode (and egress not off): the build gets a network. */
bool probe_net_wanted(const struct probe_opts *o);
/* A Dockerfile build: its namespace, lo up, the relay when wanted; b->network. 0, or -1 (boot_err). */
int probe_net_build_ns(struct probe_ctx *p, struct probe_build *b);
/* The ns backend, its sandbox started: the relay into its namespace when wanted. 0, or -1. */
int probe_net_sandbox(struct probe_ctx *p);
/* The qemu backend: the relay into the tap's namespace netns when wanted. 0, or -1. */
int probe_net_tap(struct probe_ctx *p, const char *netns);
/* `ip netns add NAME` (for `what`, in the message). 0, or -1 with boot_err. */
int probe_netns_add(struct probe_ctx *p, const char *name, const char *what);
/* `ip netns del NAME`; a failure is said on stderr. */
void probe_netns_del(const struct probe_ctx *p, const char *name);
/* End the relay, delete the namespace. */
void probe_net_cleanup(struct probe_ctx *p);

/* key.c: the key's inputs beyond the declared files (the tree, env, tool). 0. */
int probe_key_inputs(struct probe_ctx *p, struct sbt_build_plan *plan);
/* Add one input (name, hex digest). 0 or -E2BIG. */
int probe_add_input(struct sbt_build_plan *plan, const char *name, const char *sha256);

/* kind.c: "sbtrace probe: [ 1.2 s] fmt" (arg its one %s) on stderr, unless --quiet. */
void probe_progress(const struct probe_ctx *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/*
 * run.c: start the sandbox for the plan and trace it until the build ends. -1 when
 * there is something to report (p says what happened), else an exit code
 * (the kernel cannot trace: no report).
 */
int probe_run(struct probe_ctx *p, struct sbt_build_plan *plan, sbt_trace_fn trace);
/* Undo everything the run made (sandbox, image, overlay, netns). */
void probe_cleanup(struct probe_ctx *p);

/* report.c: the verdict and the report. */
struct probe_verdict {
	const char *reason;	/* NULL, or why the answer is not confident */
	const char *verdict;	/* safe, unsafe, inconclusive */
	const char *confidence; /* high, low */
	char message[600];	/* the reason's warning message */
	json_object *warnings;	/* owned */
};

/* The verdict rule: any shell is proof; "no shell" needs a complete trace of a build that worked. */
void probe_decide(const struct probe_ctx *p, const struct sbt_build_plan *plan,
		  struct probe_verdict *v);
/* The report (a new reference); takes v->warnings. */
json_object *probe_report(const struct probe_ctx *p, const struct sbt_build_plan *plan,
			  struct probe_verdict *v);

#endif
