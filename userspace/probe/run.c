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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include "lib/clock.h"
#include "event/sink_json.h"
#include "lib/extbin.h"
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
		return p->boot_failed ? "sandbox_boot_failed" : "workload_exited";
	}
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
	char *add[] = { "ip", "netns", "add", netns, NULL };
	int status;

	snprintf(netns, sizeof(netns), "sbtrace-probe-%d", (int)getpid());
	if (sbt_run(add, NULL, &status) < 0 || sbt_exit_code(status)) {
		snprintf(p->boot_err, sizeof(p->boot_err),
			 "cannot create network namespace %s for the VM's tap", netns);
		return -1;
	}
	memcpy(p->netns, netns, sizeof(netns));
	return 0;
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
	};

	if (k->argv && k->argv(p, plan) < 0)
		return -1;
	spec.argv = plan->argv;
	if (caps->workspace != SBT_WORKSPACE_NONE)
		spec.workspace = o->repo;
	spec.workspace_overlay = caps->workspace == SBT_WORKSPACE_BIND;
	if (caps->console) { /* the output comes through the console: the build's, as elsewhere */
		spec.stdout_fd = spec.stderr_fd = -1;
		p->console_out = STDERR_FILENO;
	}
	if (caps->guest)
		spec.guest_dir = o->guest;
	if (caps->egress_on_tap) {
		if (make_tap_netns(p) < 0)
			return -1;
		spec.tap_netns = p->netns;
		spec.tap_host_cidr = o->tap_host;
		spec.tap_guest_cidr = o->tap_guest;
	}
	if ((p->boot.source == BOOT_CMD || p->boot.source == BOOT_NPM_START) && !p->boot.skipped) {
		spec.then_argv = p->boot.argv;
		spec.then_ms = (unsigned int)o->boot_ms;
		spec.then_grace_ms = PROBE_BOOT_GRACE_MS;
		p->sink.run = &p->run;
	}
	if (sbt_sandbox_start(&spec, &p->run, p->boot_err, sizeof(p->boot_err)) < 0)
		return -1;
	p->started = true;
	if (k->started && k->started(p) < 0)
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
	/*
	 * The shim's sandboxes have no CAP_NET_RAW: no packet socket can exist,
	 * so its observation (a load and an attach) is skipped; the policy
	 * hooks see every connect.
	 */
	opts->exec.policy = o->egress_mode != SBT_EGRESS_OFF;
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
	probe_engine_cleanup(&p->build);
	if (p->netns[0]) {
		char *del[] = { "ip", "netns", "del", p->netns, NULL };
		int status;

		if (sbt_run(del, NULL, &status) < 0 || sbt_exit_code(status))
			probe_progress(p, "could not delete network namespace %s", p->netns);
		p->netns[0] = '\0';
	}
	probe_sink_free(&p->sink);
	probe_sites_free(&p->sites);
	probe_boot_free(&p->boot);
}
