// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The trace: attach (plan.c), register its fixed set of targets, set up
 * their egress and taps, and run the loop; the records, their accounting
 * and the final events are the session's (session/session.h, session_bpf.c),
 * shared with the agent. At stop: detach, drain what is in flight, report.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "sbtrace.h"
#include "sbtrace.skel.h"
#include "egress.h"
#include "event/sink.h"
#include "lib/clock.h"
#include "loader.h"
#include "session_bpf.h"
#include "trace.h"
#include "lib/log.h"

/* Bytes of one guest stream taken per tick: the loop stays responsive. */
#define GUEST_TICK_BYTES (4u << 20)

struct trace_ctx {
	const struct sbt_trace_opts *opts;
	struct sbt_session_bpf sess; /* records, accounting, final events (session.h) */
	struct sbt_plan plan;
	struct sbt_hook_result membership;
	struct sbt_egress_state *egress;
	struct sbt_tap_state *taps;
};

/* A DNS proxy's event (queued by its thread), to the sinks. */
static void emit_dns(void *arg, const struct sbt_dns_event *rec)
{
	struct trace_ctx *ctx = arg;

	sbt_session_dns(&ctx->sess.core, rec);
}

/* A fallback taken is never silent: one line on stderr (and hooks.* in TraceStarted). */
static void report_fallback(const struct sbt_hook_result *res)
{
	char line[512];

	if (*sbt_hook_fallback_line(res, line, sizeof(line)))
		sbt_log("%s", line);
}

static void emit_started(struct trace_ctx *ctx, uint64_t attach_ms)
{
	const struct sbt_trace_opts *opts = ctx->opts;
	struct sbt_target_view views[SBT_MAX_SANDBOXES];
	const struct sbt_hook_result *hooks[] = { &ctx->plan.exec,
						  &ctx->membership,
						  &ctx->plan.connect,
						  &ctx->plan.packet,
						  &ctx->plan.exec_failed,
						  ctx->taps->nr ? &ctx->taps->res[0] : NULL,
						  NULL };
	memset(views, 0, sizeof(views));
	for (uint32_t i = 0; i < opts->nr_targets; i++) {
		for (uint32_t k = 0; k < ctx->taps->nr; k++) {
			if (ctx->taps->idx[k] != opts->targets[i].slot)
				continue;
			views[i].tap_ifindex = ctx->taps->ifindex[k];
			views[i].tap_mode = ctx->taps->res[k].mode;
		}
		sbt_egress_view(ctx->egress, i, &views[i].egress);
	}
	sbt_session_started(&ctx->sess.core, views, hooks, attach_ms);
}

/*
 * Register sandboxes, deepest first so that the nearest sandbox wins: the
 * first SBT_FAST_SANDBOXES in the program's in-place table, the rest in the
 * hash map with their distinct levels.
 */
int sbt_register_targets(const struct sbt_plan *plan, const struct sbt_target *targets, uint32_t nr,
			 struct sbt_hook_result *membership)
{
	const struct sbt_target *order[SBT_MAX_SANDBOXES];
	uint64_t ptrs[SBT_FAST_SANDBOXES];
	struct sbtrace_bpf *skel = plan->skel;
	int fd = bpf_map__fd(skel->maps.sandbox_cgroups);
	uint32_t n = 0, nr_fast = 0, nr_levels = 0;

	for (uint32_t i = 0; i < nr && i < SBT_MAX_SANDBOXES; i++) {
		uint32_t j;

		if (!sbt_target_has_cgroup(&targets[i]))
			continue; /* a tap-only sandbox: its key is the tap, registered by tap.c */
		for (j = n++; j > 0 && order[j - 1]->level < targets[i].level; j--)
			order[j] = order[j - 1];
		order[j] = &targets[i];
	}
	if (n == 0) { /* taps only: no cgroup, no membership check */
		memset(membership, 0, sizeof(*membership));
		membership->capability = "membership";
		return 0;
	}
	sbt_membership_learn(plan, order, n < SBT_FAST_SANDBOXES ? n : SBT_FAST_SANDBOXES, ptrs,
			     membership);
	for (uint32_t i = 0; i < n; i++) {
		const struct sbt_target *sb = order[i];
		struct sbt_sandbox_key_val v = { .slot = sb->slot, .level = sb->level };
		uint32_t j;

		if (nr_fast < SBT_FAST_SANDBOXES) {
			skel->bss->fast[nr_fast].cgroup_id = sb->cgroup_id;
			skel->bss->fast[nr_fast].cgroup_ptr = ptrs[nr_fast];
			skel->bss->fast[nr_fast].level = sb->level;
			skel->bss->fast[nr_fast].slot = sb->slot;
			nr_fast++;
			continue;
		}
		for (j = 0; j < nr_levels && skel->bss->hash_levels[j] != sb->level; j++)
			;
		if (j == nr_levels) {
			if (nr_levels == SBT_MAX_HASH_LEVELS) {
				sbt_log("sandboxes sit at too many distinct cgroup levels; trace "
					"fewer at once");
				return -E2BIG;
			}
			skel->bss->hash_levels[nr_levels++] = sb->level;
		}
		if (bpf_map_update_elem(fd, &sb->cgroup_id, &v, BPF_ANY)) {
			int err = -errno;

			sbt_log("cannot register sandbox %s: %s", sb->name, strerror(errno));
			return err;
		}
	}
	__atomic_store_n(&skel->bss->hash_only, n - nr_fast, __ATOMIC_RELEASE);
	__atomic_store_n(&skel->bss->nr_hash_levels, nr_levels, __ATOMIC_RELEASE);
	__atomic_store_n(&skel->bss->nr_fast, nr_fast, __ATOMIC_RELEASE);
	return 0;
}

static struct trace_ctx *ctx_new(const struct sbt_trace_opts *opts)
{
	struct trace_ctx *ctx = calloc(1, sizeof(*ctx));

	if (!ctx)
		return NULL;
	ctx->opts = opts;
	ctx->egress = calloc(1, sizeof(*ctx->egress));
	ctx->taps = calloc(1, sizeof(*ctx->taps));
	if (!ctx->egress || !ctx->taps) {
		free(ctx->egress);
		free(ctx->taps);
		free(ctx);
		return NULL;
	}
	return ctx;
}

static void ctx_free(struct trace_ctx *ctx)
{
	sbt_tap_detach(ctx->taps, ctx->opts->targets);
	free(ctx->taps);
	sbt_egress_teardown(ctx->egress);
	sbt_session_bpf_close(&ctx->sess);
	sbt_plan_destroy(&ctx->plan);
	free(ctx->egress);
	free(ctx);
}

/* Every target in its slot of the session, a microVM's guest stream opened. 0 or -ENOMEM. */
static int session_targets(struct trace_ctx *ctx)
{
	const struct sbt_trace_opts *opts = ctx->opts;

	for (uint32_t i = 0; i < opts->nr_targets; i++) {
		struct sbt_target *t = &opts->targets[i];
		int err = sbt_session_add(&ctx->sess.core, t, &opts->egress);

		if (!err && t->exec_stream[0])
			err = sbt_session_guest_open(&ctx->sess.core, i, t->exec_stream);
		if (err)
			return err;
	}
	return 0;
}

/* Load, attach, register: everything before TraceStarted. An exit code. */
static int trace_attach(struct trace_ctx *ctx)
{
	const struct sbt_trace_opts *opts = ctx->opts;
	struct sbt_plan *plan = &ctx->plan;
	int err = sbt_plan_attach(&opts->exec, plan);

	if (err) {
		const struct sbt_hook_result *res = &plan->exec;

		sbt_log("cannot attach the exec hook (%s, last tried: %s): %s; is this a Linux >= "
			"5.8 kernel with BPF ring buffers, and are you root (CAP_BPF + "
			"CAP_PERFMON)? run 'sbtrace features' for details",
			res->nr_tries ? res->tries[res->nr_tries - 1].stage : "open",
			res->nr_tries ? res->tries[res->nr_tries - 1].mode : "-", strerror(-err));
		return SBT_EXIT_KERNEL;
	}
	report_fallback(&plan->exec);
	report_fallback(&plan->exec_failed);
	if (opts->exec.observe_connect)
		report_fallback(&plan->connect);
	if (opts->exec.observe)
		report_fallback(&plan->packet);
	ctx->sess.egress = ctx->egress;
	err = sbt_session_bpf_open(&ctx->sess, plan->skel, opts, SBT_MAX_SANDBOXES);
	if (err)
		return err == -ENOMEM ? SBT_EXIT_RUNTIME : SBT_EXIT_KERNEL;
	if (sbt_register_targets(plan, opts->targets, opts->nr_targets, &ctx->membership))
		return SBT_EXIT_KERNEL;
	if (session_targets(ctx)) {
		sbt_log("out of memory");
		return SBT_EXIT_RUNTIME;
	}
	report_fallback(&ctx->membership);
	err = sbt_egress_setup(ctx->egress, plan, &opts->egress, opts->targets, opts->nr_targets);
	if (err)
		return err == -EINVAL ? SBT_EXIT_USAGE : SBT_EXIT_KERNEL;
	if (!opts->exec.tap)
		return SBT_EXIT_OK;
	err = sbt_tap_attach(ctx->taps, plan, opts->targets, opts->nr_targets,
			     opts->egress.has_resolver ? opts->egress.resolver : NULL, ctx->egress);
	if (err)
		return err == -ENODEV || err == -EINVAL ? SBT_EXIT_USAGE : SBT_EXIT_KERNEL;
	for (uint32_t k = 0; k < ctx->taps->nr; k++)
		report_fallback(&ctx->taps->res[k]);
	return SBT_EXIT_OK;
}

/* TraceStats: the run so far, per sandbox (--stats-interval). */
static void emit_stats(struct trace_ctx *ctx, uint64_t start_ms)
{
	struct sbt_ev_stats base = {
		.uptime_ms = sbt_mono_ms() - start_ms,
		.ringbuf_size_bytes = ctx->opts->exec.ringbuf_bytes,
		.sandboxes_added = ctx->opts->nr_targets,
	};

	sbt_session_stats(&ctx->sess.core, &base);
}

/* Drain until a signal, the duration, an error or the caller says stop. */
static int trace_loop(struct trace_ctx *ctx, uint64_t start_ms, const char **reason)
{
	const struct sbt_trace_opts *opts = ctx->opts;
	uint64_t next_stats = start_ms + opts->stats_interval_ms;

	while (!sbt_stop_signal) {
		int err = sbt_session_bpf_poll(&ctx->sess,
					       opts->exec.poll_ms ? (int)opts->exec.poll_ms : 100);

		if (err) {
			sbt_log("reading the ring buffer failed: %s", strerror(-err));
			*reason = "error";
			return SBT_EXIT_RUNTIME;
		}
		sbt_egress_gate(ctx->egress); /* first: a process may wait for it */
		sbt_session_drops(&ctx->sess.core);
		sbt_session_tick(&ctx->sess.core);
		sbt_session_guests_poll(&ctx->sess.core, GUEST_TICK_BYTES);
		sbt_egress_dns_drain(ctx->egress, emit_dns, ctx);
		sbt_egress_tick(ctx->egress);
		if (opts->stats_interval_ms && sbt_mono_ms() >= next_stats) {
			emit_stats(ctx, start_ms);
			next_stats += opts->stats_interval_ms;
		}
		if (sbt_session_bpf_flush(&ctx->sess)) {
			*reason = "output_error";
			return SBT_EXIT_RUNTIME;
		}
		if (opts->duration_ms && sbt_mono_ms() - start_ms >= opts->duration_ms) {
			*reason = "duration";
			return SBT_EXIT_OK;
		}
		if (opts->on_tick && (*reason = opts->on_tick(opts->hook_arg)))
			return SBT_EXIT_OK;
	}
	*reason = "signal";
	return SBT_EXIT_OK;
}

int sbt_trace_run(const struct sbt_trace_opts *opts)
{
	struct trace_ctx *ctx = ctx_new(opts);
	uint64_t t0 = sbt_mono_ms(), start_ms, pause_ms = 0;
	const char *reason = "signal", *env;
	int ret, err;

	if (!ctx) {
		sbt_log("out of memory");
		return SBT_EXIT_RUNTIME;
	}
	sbt_signals_install(true);

	ret = trace_attach(ctx);
	if (ret != SBT_EXIT_OK)
		goto out;
	ctx->sess.core.boot_offset = sbt_boot_epoch_offset_ns();
	start_ms = sbt_mono_ms();
	emit_started(ctx, start_ms - t0);
	for (uint32_t i = 0; i < opts->nr_targets; i++)
		sbt_session_snapshot(&ctx->sess.core, i);
	if (opts->on_attached)
		opts->on_attached(opts->hook_arg);

	/* Test hook: hold off consuming so a small ring buffer overflows. */
	env = getenv("SBTRACE_TEST_CONSUMER_DELAY_MS");
	if (env)
		pause_ms = strtoull(env, NULL, 10);
	if (pause_ms)
		sbt_sleep_ms((long)pause_ms);

	ret = trace_loop(ctx, start_ms, &reason);
	/* Detach first so no new events arrive, then drain what is in flight. */
	sbt_tap_detach(ctx->taps, opts->targets);
	sbt_egress_detach(ctx->egress);
	sbt_plan_detach(&ctx->plan);
	sbt_session_bpf_drain(&ctx->sess);
	sbt_session_guests_poll(&ctx->sess.core, SIZE_MAX); /* what the guests wrote, whole */
	sbt_egress_dns_drain(ctx->egress, emit_dns, ctx);
	sbt_session_stopped(&ctx->sess.core, reason, sbt_mono_ms() - start_ms);
	err = sbt_sinks_flush(opts);
	if (err && ret == SBT_EXIT_OK) {
		sbt_log("writing output failed: %s", strerror(-err));
		ret = SBT_EXIT_RUNTIME;
	}
out:
	ctx_free(ctx);
	return ret;
}
