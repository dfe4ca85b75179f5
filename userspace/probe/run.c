// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * One probe run: the sandbox for the plan's build (on the kind's own backend,
 * podman for a Dockerfile, else on --backend's: ns, or a microVM with qemu),
 * traced from before its first exec to its end.
 *
 * Start-up overlaps the two slow parts: the sandbox child sets itself up
 * (namespaces, mounts) while the trace loads the BPF object; the workload's
 * first exec waits until the trace is attached (on_attached).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "lib/clock.h"
#include "event/sink_json.h"
#include "kind.h"
#include "lib/log.h"

/* Attached: let the workload exec, once its sandbox is set up. */
static void on_attached(void *arg)
{
	struct probe_ctx *p = arg;
	int ready;

	p->ts_attached = sbt_clock_ns(CLOCK_MONOTONIC);
	ready = sbt_sandbox_ready(&p->run, p->boot_err, sizeof(p->boot_err));
	p->ts_ready = sbt_clock_ns(CLOCK_MONOTONIC);
	p->go_epoch_ns = sbt_now_epoch_ns();
	if (ready < 0 || sbt_sandbox_go(&p->run) < 0) {
		p->boot_failed = true;
		if (!p->boot_err[0])
			snprintf(p->boot_err, sizeof(p->boot_err), "cannot release the workload");
		return;
	}
	p->released = true;
	p->go_ms = sbt_mono_ms();
	p->last_progress_ms = p->go_ms;
	probe_progress(p, "sandbox up, tracing; build running%s", "");
}

/*
 * The qemu backend: the workload's exit code comes from the guest's console
 * (SBT-GUEST-EXIT), qemu's own from waitpid; a VM that ends without the
 * marker never ran the workload to its end: a boot failure.
 */
static void vm_exited(struct probe_ctx *p)
{
	while (sbt_sandbox_console(&p->run, p->console_out) > 0)
		;
	if (p->run.con.phase == SBT_VM_EXITED) {
		p->status = (p->run.con.exit_code & 0xff) << 8; /* as waitpid() has it */
		return;
	}
	p->boot_failed = true;
	snprintf(p->boot_err, sizeof(p->boot_err),
		 "the VM ended before the workload finished (qemu status %d): %.300s", p->status,
		 p->run.con.tail_len ? p->run.con.tail : "no console output");
}

/* The podman backend's container ended (by itself, or stopped). */
static void podman_boot_ended(struct probe_ctx *p, int status)
{
	struct probe_boot *b = &p->boot;

	b->running = false;
	b->status = status;
	b->end = b->kill_sent ? SBT_THEN_KILLED : b->term_sent ? SBT_THEN_STOPPED : SBT_THEN_EXITED;
	b->ms = sbt_mono_ms() - b->start_ms;
}

/* The ns backend's boot, as init reported it. */
static void ns_boot_ended(struct probe_ctx *p)
{
	const struct sbt_sandbox_then *t = &p->run.then;

	sbt_sandbox_then_poll(&p->run);
	if (t->end == SBT_THEN_SKIPPED)
		p->boot.skipped = "build_failed";
	if (!t->started)
		return;
	p->boot.ran = true;
	p->boot.end = t->end;
	p->boot.status = t->status;
	p->boot.ms = t->end_ns > t->start_ns ? (t->end_ns - t->start_ns) / 1000000 : 0;
}

/* The workload (the build, or the boot's container) exited. NULL: trace on. */
static const char *exited(struct probe_ctx *p, int status)
{
	bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;

	if (p->boot.running) {
		podman_boot_ended(p, status);
		return "workload_exited";
	}
	p->exited = true;
	p->status = status;
	p->build_ms = sbt_mono_ms() - p->go_ms;
	if (sbt_backend_caps(p->backend)->wait == SBT_WAIT_CONSOLE) {
		vm_exited(p);
		if ((p->build.in_vm || p->boot.in_vm) && !p->boot_failed)
			probe_vm_build_results(p);
		return p->boot_failed ? "sandbox_boot_failed" : "workload_exited";
	}
	if (p->run.phase_fd >= 0) /* init's records: the workspace's, the boot's */
		sbt_sandbox_then_poll(&p->run);
	if (p->sink.run) { /* the ns backend's init ran (or skipped) the boot */
		ns_boot_ended(p);
		p->build_ms -= p->boot.ms;
		return "workload_exited";
	}
	if (p->build.eng != ENGINE_NONE && p->boot.source == BOOT_DOCKERFILE && !p->boot.skipped) {
		if (!ok) {
			p->boot.skipped = "build_failed";
		} else if (probe_boot_podman(p) < 0) {
			p->boot.skipped = "failed";
			probe_progress(p, "the boot did not start: %s", p->boot_err);
		} else {
			return NULL;
		}
	}
	return "workload_exited";
}

/* How long the run may take: the build's --timeout, and the boot with its grace. */
static uint64_t time_allowed(const struct probe_ctx *p)
{
	bool boot = p->boot.source != BOOT_NONE && !p->boot.skipped;

	return p->o->timeout_ms + (boot ? p->o->boot_ms + PROBE_BOOT_GRACE_MS + 15000 : 0);
}

static const char *on_tick(void *arg)
{
	struct probe_ctx *p = arg;
	uint64_t now = sbt_mono_ms();
	int status;

	if (p->boot_failed)
		return "sandbox_boot_failed";
	if (sbt_backend_caps(p->backend)->console)
		while (sbt_sandbox_console(&p->run, p->console_out) > 0)
			;
	probe_boot_tick(p);
	if (sbt_sandbox_wait(&p->run, &status, 0) == 0) {
		const char *why = exited(p, status);

		if (why)
			return why;
	}
	if (p->o->timeout_ms && now - p->go_ms > time_allowed(p)) {
		p->timed_out = true;
		return "timeout";
	}
	if (!p->o->quiet && now - p->last_progress_ms >= 5000) {
		char buf[32];

		p->last_progress_ms = now;
		snprintf(buf, sizeof(buf), "%.0f", (double)(now - p->go_ms) / 1000.0);
		probe_progress(p, "build running (%s s)", buf);
	}
	return NULL;
}

/* The tap's network namespace, of our own: no route anywhere. 0, or -1 with boot_err. */
static int make_tap_netns(struct probe_ctx *p)
{
	char netns[sizeof(p->netns)];

	snprintf(netns, sizeof(netns), "sbtrace-probe-%d", (int)getpid());
	if (probe_netns_add(p, netns, "the VM's tap") < 0)
		return -1;
	memcpy(p->netns, netns, sizeof(netns));
	return 0;
}

/*
 * The watchdog: a child outside the sandbox that holds the read end of a
 * pipe whose only write end is the probe's. When the probe dies (SIGKILL
 * too) the pipe reads EOF and the watchdog kills the sandbox's cgroup tree
 * (cgroup.kill; else freeze and SIGKILL its own processes), so a container
 * engine's RUN step, which runc reparents away from the probe and its
 * PR_SET_PDEATHSIG, does not run on untraced, and removes the files the
 * probe wrote for the engine (the seccomp profile, the iid file, the
 * rewritten Dockerfile). At the probe's own end the
 * cgroup is gone already and the watchdog just exits. The same job as the
 * shim's death handling (a child with the tracer's pipe), without an exec:
 * only async-signal-safe calls after the fork, on a path copied before it.
 */
/* Kill the cgroup tree cg: 0, or -1 when it is gone (the probe cleaned up). */
static int kill_cgroup(const char *cg)
{
	char path[PATH_MAX + 32], buf[4096];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/cgroup.kill", cg);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT)
		return -1;
	if (fd >= 0) {
		n = write(fd, "1", 1);
		close(fd);
		if (n == 1)
			return 0;
	}
	snprintf(path, sizeof(path), "%s/cgroup.freeze", cg); /* before cgroup.kill (5.14) */
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (write(fd, "1", 1) != 1) {
			/* not frozen: killed below all the same, only racier */
		}
		close(fd);
	}
	snprintf(path, sizeof(path), "%s/cgroup.procs", cg);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	for (char *s = buf, *end; *s; s = end) {
		long pid = strtol(s, &end, 10);

		if (end == s)
			break;
		if (pid > 1)
			kill((pid_t)pid, SIGKILL);
	}
	return 0;
}

/* The probe's own files the engine reads (engine.c), copied before the fork. */
struct watchdog_files {
	char f[3][64];
};

static void watchdog_files_of(const struct probe_build *b, struct watchdog_files *w)
{
	snprintf(w->f[0], sizeof(w->f[0]), "%s", b->seccomp);
	snprintf(w->f[1], sizeof(w->f[1]), "%s", b->iidfile);
	snprintf(w->f[2], sizeof(w->f[2]), "%s", b->dockerfile);
}

static void watchdog_main(int r, const char *cg, const struct watchdog_files *w)
	__attribute__((noreturn));

static void watchdog_main(int r, const char *cg, const struct watchdog_files *w)
{
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	char c;

	signal(SIGINT, SIG_IGN); /* the probe's clean-up answers those; the pipe tells us */
	signal(SIGTERM, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	setsid();
	prctl(PR_SET_NAME, "sbtrace-watch");
	if (null >= 0) /* never the probe's stdout or stderr: a reader waits for their EOF */
		for (int fd = 0; fd < 3; fd++)
			dup2(null, fd);
	if (dup2(r, 3) != 3)
		_exit(1);
	close_range(4, ~0u, 0);
	while (read(3, &c, 1) < 0 && errno == EINTR)
		;
	if (kill_cgroup(cg) == 0) /* the probe died before its clean-up: its files too */
		for (int i = 0; i < 3; i++)
			if (w->f[i][0])
				unlink(w->f[i]);
	_exit(0);
}

static int watchdog_start(struct probe_ctx *p)
{
	static char cg[PATH_MAX];
	static struct watchdog_files files;
	int fds[2];
	pid_t pid;

	snprintf(cg, sizeof(cg), "%s", p->run.cgroup_path);
	watchdog_files_of(&p->build, &files);
	if (!cg[0] || pipe2(fds, O_CLOEXEC))
		return -1;
	pid = fork();
	if (pid == 0)
		watchdog_main(fds[0], cg, &files);
	close(fds[0]);
	if (pid < 0) {
		close(fds[1]);
		return -1;
	}
	p->watchdog = pid;
	p->watchdog_w = fds[1];
	return 0;
}

/* The probe's own end: the sandbox is gone, so the watchdog finds nothing to kill. */
static void watchdog_stop(struct probe_ctx *p)
{
	if (!p->watchdog)
		return;
	close(p->watchdog_w);
	waitpid(p->watchdog, NULL, 0);
	p->watchdog = 0;
}

/*
 * A microVM without the engine: its writable space is a tmpfs in its RAM
 * (half of it), where the build's writes over the workspace land (a
 * node_modules of 200 MB filled the default 256 MiB). Its RAM from the
 * repo's size (its files, as the cache key's walk found them): 1 GiB and
 * three times the repo, at most 8 GiB (qemu takes the pages only as the
 * guest touches them).
 */
static unsigned int vm_mem_for(const struct probe_tree *t)
{
	uint64_t mb = 1024 + 3 * (t->bytes >> 20);

	return mb > 8192 ? 8192 : (unsigned int)mb;
}

/*
 * The sandbox for the build, as its backend's capabilities have it: the
 * repo behind an overlay inside it (ns: never written, nothing comes back),
 * exported read-only to a guest (qemu: the build runs on the host's tools
 * over 9p), or none (a host tool such as the engine reads it as its build
 * context); a tap in a network namespace of our own, with no route
 * anywhere, where the tap program reports and refuses whatever the build
 * tries to reach; the build's output on stderr, never mixed with the
 * report; the boot as the sandbox's second workload.
 */
static int start_sandbox(struct probe_ctx *p, struct sbt_build_plan *plan)
{
	const struct probe_opts *o = p->o;
	const struct probe_kind *k = probe_kind_of(plan->kind);
	const struct sbt_backend_caps *caps = sbt_backend_caps(p->backend);
	struct sbt_sandbox_spec spec = {
		.name = p->name,
		.net = SBT_NET_NONE,
		.env = o->env_args,
		.stdout_fd = STDERR_FILENO,
		.stderr_fd = STDERR_FILENO,
		.backend = p->backend,
		.limits = o->limits,
	};

	if (k->argv && k->argv(p, plan) < 0)
		return -1;
	spec.argv = plan->argv;
	if (caps->then) {
		spec.pre_argv = (char *const *)plan->install;
	} else if (plan->install) { /* one workload: the build as it is, and the report says so */
		plan->install = NULL;
		probe_why(plan, " (not run: the %s backend runs one workload)",
			  sbt_backend_name(p->backend));
	}
	if (caps->workspace != SBT_WORKSPACE_NONE)
		spec.workspace = o->repo;
	spec.workspace_overlay = caps->workspace == SBT_WORKSPACE_BIND;
	spec.workspace_report = spec.workspace_overlay; /* "the build did nothing": kind_cmd.c */
	if (caps->console) { /* the output comes through the console: the build's, as elsewhere */
		spec.stdout_fd = spec.stderr_fd = -1;
		p->console_out = STDERR_FILENO;
	}
	if (caps->guest) {
		spec.guest_dir = o->guest;
		spec.vm_mem_mb = p->vm_mem_mb = vm_mem_for(&p->tree);
	}
	if (p->build.in_vm) { /* the engine in the guest (engine_vm.c) */
		spec.workspace = p->build.context;
		spec.vm_script = p->build.vm_script;
		spec.vm_disk_mb = PROBE_VM_DISK_MB;
		spec.vm_mem_mb = p->vm_mem_mb = PROBE_VM_MEM_MB;
		spec.vm_root = true;
	}
	if (caps->egress_on_tap) {
		if (make_tap_netns(p) < 0 || probe_net_tap(p, p->netns) < 0)
			return -1;
		spec.tap_netns = p->netns;
		spec.tap_host_cidr = o->tap_host;
		spec.tap_guest_cidr = o->tap_guest;
	}
	if ((p->boot.source == BOOT_CMD || p->boot.source == BOOT_NPM_START) && !p->boot.skipped &&
	    caps->guest && !p->build.in_vm) { /* the guest's script boots after the build */
		if (probe_boot_vm_script(p, plan) < 0)
			return -1;
		spec.vm_script = p->boot.vm_script;
	} else if ((p->boot.source == BOOT_CMD || p->boot.source == BOOT_NPM_START) &&
		   !p->boot.skipped) {
		spec.then_argv = p->boot.argv;
		spec.then_ms = (unsigned int)o->boot_ms;
		spec.then_grace_ms = PROBE_BOOT_GRACE_MS;
		p->sink.run = &p->run;
	}
	if (sbt_sandbox_start(&spec, &p->run, p->boot_err, sizeof(p->boot_err)) < 0)
		return -1;
	p->started = true;
	/* an engine's containers leave the sandbox's process tree: they die by the cgroup */
	if ((caps->host_tools || p->build.in_vm) && watchdog_start(p) < 0)
		probe_progress(p, "could not start the watchdog (%s)", strerror(errno));
	if (k->started && k->started(p) < 0)
		return -1;
	if (p->boot.in_vm) /* the script's marked lines, kept apart */
		sbt_vm_console_mark(&p->run.con, p->boot.vm_mark);
	/* a sandbox with a network namespace of its own: the build's network joins it */
	if ((caps->net_modes & SBT_NET_MODE(SBT_NET_VETH)) && probe_net_sandbox(p) < 0)
		return -1;
	/* A state file: sbtrace-shim gc cleans up after a killed probe. */
	if (caps->gc_state && sbt_state_write(NULL, &p->run) < 0)
		probe_progress(p, "could not write the sandbox state file (%s)", p->run.state_file);
	return 0;
}

/* The trace's request: this sandbox only, egress enforced, events to the probe's sink. */
static int trace_request(struct probe_ctx *p, struct sbt_trace_opts *opts, struct sbt_json_sink *js,
			 FILE **out)
{
	const struct probe_opts *o = p->o;
	const struct sbt_backend_caps *caps = sbt_backend_caps(p->backend);
	struct sbt_target *sb;
	int bad;

	memset(opts, 0, sizeof(*opts));
	sb = sbt_trace_target_next(opts);
	if (!sb) {
		snprintf(p->boot_err, sizeof(p->boot_err), "out of memory");
		return -1;
	}
	if (sbt_target_from_cgroup(p->run.cgroup_path, sb) < 0) {
		snprintf(p->boot_err, sizeof(p->boot_err), "sandbox cgroup vanished");
		return -1;
	}
	sb->origin = "sandbox";
	snprintf(sb->pin_name, sizeof(sb->pin_name), "%s", p->run.name);
	snprintf(sb->dns_netns, sizeof(sb->dns_netns), "%s", p->net.netns_path);
	sbt_trace_target_commit(opts);
	if (!caps->execs_on_host) {
		sb->exec_hidden = true;
		/* the guest agent's stream, when the VM runs one: visibility guest_kernel */
		snprintf(sb->exec_stream, sizeof(sb->exec_stream), "%s", p->run.exec_stream);
	}
	if (caps->egress_on_tap) {
		if (sbt_tap_from_shim(sb, p->run.tap, p->run.tap_netns, p->run.guest_addrs,
				      p->run.nr_guest_addrs, &bad)) {
			snprintf(p->boot_err, sizeof(p->boot_err),
				 "the VM's guest address '%s' is not an address",
				 p->run.guest_addrs[bad]);
			return -1;
		}
		opts->exec.tap = true;
	}
	opts->exec.forced_mode = -1;
	opts->exec.argv_max = SBT_ARGV_DEFAULT;
	opts->exec.ringbuf_bytes = 1u << 20;
	opts->exec.poll_ms = 20;
	opts->exec.host_netns_cookie = sbt_netns_cookie();
	opts->egress = o->egress;
	opts->egress.mode = o->egress_mode;
	opts->egress.resolver_rule_id = (uint32_t)o->egress.nr_rules + 1;
	/* a proxy even for an empty allowlist: the names a build asked for are reported */
	opts->egress.dns_proxy_always = true;
	/*
	 * The shim's sandboxes have no CAP_NET_RAW: no packet socket can exist,
	 * so its observation (a load and an attach) is skipped; the policy
	 * hooks see every connect.
	 */
	opts->exec.policy = o->egress_mode != SBT_EGRESS_OFF;
	opts->own_since_ns = p->own_since_ns;
	opts->on_attached = on_attached;
	opts->on_tick = on_tick;
	opts->hook_arg = p;
	p->sink.cgroup_id = p->run.cgroup_id;
	sbt_sinks_add(opts, &p->sink.base);
	if (o->trace_out) {
		*out = fopen(o->trace_out, "we");
		if (!*out) {
			sbt_log("--trace-out '%s': %s", o->trace_out, strerror(errno));
			return SBT_EXIT_USAGE;
		}
		sbt_json_sink_init(js, *out, SBT_FORMAT_JSON);
		sbt_sinks_add(opts, &js->base);
	}
	return 0;
}

int probe_run(struct probe_ctx *p, struct sbt_build_plan *plan, sbt_trace_fn trace)
{
	struct sbt_trace_opts opts;
	struct sbt_json_sink js;
	FILE *out = NULL;
	int rc;

	p->ts_run = sbt_clock_ns(CLOCK_MONOTONIC);
	/* after the base images were copied (a microVM's), before the build's first write */
	p->own_since_ns = sbt_now_epoch_ns();
	snprintf(p->name, sizeof(p->name), "probe-%.12s-%d", p->key, (int)getpid());
	rc = start_sandbox(p, plan);
	if (rc < 0) {
		p->boot_failed = true;
		return -1;
	}
	p->ts_cloned = sbt_clock_ns(CLOCK_MONOTONIC);
	probe_progress(p, "sandbox %s starting", p->name);
	rc = trace_request(p, &opts, &js, &out);
	if (rc) {
		sbt_trace_targets_free(&opts);
		p->boot_failed = rc < 0;
		return rc < 0 ? -1 : rc;
	}
	p->ts_trace = sbt_clock_ns(CLOCK_MONOTONIC);
	rc = trace(&opts);
	sbt_trace_targets_free(&opts);
	if (out)
		fclose(out);
	if (rc == SBT_EXIT_KERNEL)
		return rc;
	if ((!p->exited || p->boot.running) && p->started) {
		/* stopped early (signal, timeout, boot failure): end the workload */
		probe_engine_remove_container(&p->build);
		sbt_sandbox_destroy(&p->run);
		p->started = false;
	}
	if (!p->exited)
		p->build_ms = p->go_ms ? sbt_mono_ms() - p->go_ms : 0;
	return -1;
}

void probe_cleanup(struct probe_ctx *p)
{
	probe_engine_remove_container(&p->build); /* podman's kill first, then the cgroup's */
	if (p->started)
		sbt_sandbox_destroy(&p->run);
	p->started = false;
	watchdog_stop(p);
	/* a build stopped during a RUN step leaves buildah's working container */
	if (p->build.eng == ENGINE_PODMAN && !p->exited && p->name[0])
		sbt_podman_remove_working(p->name);
	if (p->build.in_vm && p->build.context[0]) /* before the context's removal */
		probe_vm_store_umount(p->build.context);
	probe_engine_cleanup(&p->build);
	probe_net_cleanup(p);
	if (p->netns[0]) {
		probe_netns_del(p, p->netns);
		p->netns[0] = '\0';
	}
	probe_sink_free(&p->sink);
	probe_sites_free(&p->sites);
	probe_boot_free(&p->boot);
}
