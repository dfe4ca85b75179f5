// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The trace: attach (plan.c), register the sandboxes, drain the ring buffer
 * and hand every record, decoded and typed, to the request's sinks (sink.h);
 * at stop detach, drain what is in flight, account for every record the
 * kernel counted, and report per sandbox.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/utsname.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "lib/clock.h"
#include "sbtrace.h"
#include "sbtrace.skel.h"
#include "event/decode.h"
#include "egress.h"
#include "exec/guest_feed.h"
#include "loader.h"
#include "exec/proctab.h"
#include "exec/shell.h"
#include "exec/shellagg.h"
#include "exec/shellid.h"
#include "event/sink.h"
#include "trace.h"

struct sandbox_state {
	uint64_t received;	/* ProcessExec records decoded for this slot */
	uint64_t lost_reported; /* lost records already reported in EventsLost */
	uint64_t kernel_execs;	/* last read of the kernel's counter */
	uint64_t kernel_lost;
	struct sbt_shellagg *agg;
	/* egress */
	uint64_t eg_received; /* egress records decoded */
	uint64_t eg_events;   /* verdicts they stand for (sum of counts) */
	uint64_t eg_denied;   /* of which denied */
	uint64_t eg_lost_reported;
	uint64_t kernel_eg, kernel_eg_lost;
	uint64_t first_exec_ts; /* epoch ns of the first exec seen, 0 if none */
};

/*
 * Where an exec record came from: the host's ring buffer, or a microVM's
 * guest stream (guest_feed.h) — guest PIDs are another namespace (their own
 * process table), its timestamps the guest's clock, its records say slot 0.
 */
struct exec_src {
	struct sbt_proctab *proc;
	int64_t boot_offset;
	uint32_t slot; /* the host's slot of the sandbox */
	bool guest;
};

struct guest_src {
	struct trace_ctx *ctx;
	struct sbt_guest_feed feed;
	struct exec_src src;
	struct sbt_guest_info info; /* for TraceStopped */
};

/* Bytes of one guest stream taken per tick: the loop stays responsive. */
#define GUEST_TICK_BYTES (4u << 20)

/* The last record of each fold key, to report the folded tail at stop. */
struct fold_entry {
	struct sbt_fold_key key;
	struct sbt_egress ev;
	bool used;
};

struct trace_ctx {
	const struct sbt_trace_opts *opts;
	struct sandbox_state st[SBT_MAX_SANDBOXES];
	struct sbt_proctab *proc;
	struct sbt_procfs_ctx procfs;
	struct sbt_shellid shellid; /* the host's shells, by their files */
	const char *names[SBT_MAX_SANDBOXES];
	const char **argv_store;
	char *tail;
	int64_t boot_offset;
	uint64_t decode_errors;
	enum sbt_decode_err first_decode_err;
	int map_stats_fd;
	struct sbt_plan plan;
	struct ring_buffer *rb;
	struct sbt_hook_result membership;
	struct sbt_egress_state *egress;
	struct sbt_tap_state *taps;
	struct fold_entry *folds;		     /* open addressing, FOLD_SLOTS entries */
	struct guest_src *guests[SBT_MAX_SANDBOXES]; /* by slot: microVMs with a guest agent */
};

#define FOLD_SLOTS (1u << 15)

/* Hand an event of sandbox `sb` (NULL: run-wide) to the sinks. */
static void emit(struct trace_ctx *ctx, struct sbt_event *ev, const struct sbt_target *sb)
{
	ev->sandbox = sb;
	sbt_sinks_emit(ctx->opts, ev);
}

static void emit_egress(struct trace_ctx *ctx, const struct sbt_egress *rec, uint64_t ts)
{
	struct sbt_event ev = { .kind = SBT_EV_EGRESS, .ts = ts };
	char name[SBT_HOST_MAX];

	ev.egress.rec = rec;
	ev.egress.rule = sbt_egress_rule_text(&ctx->opts->egress, rec->rule_id);
	ev.egress.floor = sbt_egress_floor_text(rec->floor_idx);
	if (rec->verdict == SBT_VERDICT_ALLOWED && rec->reason == SBT_REASON_RULE && ctx->egress &&
	    sbt_egress_learned_name(ctx->egress, rec->slot, rec->daddr, name, sizeof(name),
				    &ev.egress.dns_ts))
		ev.egress.dns_name = name;
	emit(ctx, &ev, &ctx->opts->targets[rec->slot]);
}

/* A DNS proxy's event (queued by its thread), to the sinks. */
static void emit_dns(void *arg, const struct sbt_dns_event *rec)
{
	struct trace_ctx *ctx = arg;
	struct sbt_event ev = { .kind = SBT_EV_DNS, .ts = rec->ts };

	ev.dns.rec = rec;
	ev.dns.rule = sbt_egress_rule_text(&ctx->opts->egress, rec->rule_id);
	emit(ctx, &ev, &ctx->opts->targets[rec->slot]);
}

static void emit_lost(struct trace_ctx *ctx, const struct sbt_target *sb,
		      const struct sbt_ev_lost *lost)
{
	struct sbt_event ev = { .kind = SBT_EV_LOST, .ts = sbt_now_epoch_ns() };

	ev.lost = *lost;
	emit(ctx, &ev, sb);
}

static void fold_key_of(const struct sbt_egress *ev, struct sbt_fold_key *k)
{
	memset(k, 0, sizeof(*k));
	k->slot = ev->slot;
	k->pid = ev->pid;
	memcpy(k->daddr, ev->daddr, 16);
	k->dport = ev->dport;
	k->proto = ev->proto;
	k->hook = ev->hook;
	k->verdict = ev->verdict;
	k->reason = ev->reason;
}

static struct fold_entry *fold_slot(struct trace_ctx *ctx, const struct sbt_fold_key *k)
{
	const unsigned char *b = (const unsigned char *)k;
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < sizeof(*k); i++)
		h = (h ^ b[i]) * 1099511628211ull;
	for (uint32_t i = 0; i < FOLD_SLOTS; i++) {
		struct fold_entry *e = &ctx->folds[(h + i) & (FOLD_SLOTS - 1)];

		if (!e->used || memcmp(&e->key, k, sizeof(*k)) == 0)
			return e;
	}
	return NULL; /* full: the tail of this key is reported without its details */
}

static void handle_egress(struct trace_ctx *ctx, const void *data, size_t size)
{
	enum sbt_decode_err derr;
	struct sandbox_state *st;
	struct sbt_fold_key k;
	struct fold_entry *fe;
	struct sbt_egress ev;

	derr = sbt_decode_egress(data, size, &ev);
	if (derr == SBT_DECODE_OK && ev.slot >= ctx->opts->nr_targets)
		derr = SBT_DECODE_BAD_FIELD;
	if (derr != SBT_DECODE_OK) {
		if (!ctx->decode_errors++)
			ctx->first_decode_err = derr;
		return;
	}
	st = &ctx->st[ev.slot];
	st->eg_received++;
	st->eg_events += ev.count;
	if (ev.verdict == SBT_VERDICT_DENIED)
		st->eg_denied += ev.count;
	fold_key_of(&ev, &k);
	fe = ctx->folds ? fold_slot(ctx, &k) : NULL;
	if (fe) {
		fe->used = true;
		fe->key = k;
		fe->ev = ev;
	}
	emit_egress(ctx, &ev, sbt_boot_to_epoch_ns(ev.ts_boot_ns, ctx->boot_offset));
}

/* At stop: events folded since the last record of their key. */
static void flush_folds(struct trace_ctx *ctx)
{
	int fd = bpf_map__fd(ctx->plan.skel->maps.egress_fold);
	struct sbt_fold_key key, next, *prev = NULL;

	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		struct sbt_fold_val val;
		struct fold_entry *fe;
		struct sbt_egress ev;

		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &val) || val.folded == 0 ||
		    key.slot >= ctx->opts->nr_targets)
			continue;
		fe = fold_slot(ctx, &key);
		if (fe && fe->used) {
			ev = fe->ev;
		} else {
			memset(&ev, 0, sizeof(ev));
			ev.slot = key.slot;
			ev.pid = key.pid;
			memcpy(ev.daddr, key.daddr, 16);
			ev.dport = key.dport;
			ev.proto = key.proto;
			ev.hook = key.hook;
			ev.verdict = key.verdict;
			ev.reason = key.reason;
			ev.family = AF_INET6;
		}
		ev.count = val.folded;
		ctx->st[key.slot].eg_events += val.folded;
		if (ev.verdict == SBT_VERDICT_DENIED)
			ctx->st[key.slot].eg_denied += val.folded;
		emit_egress(ctx, &ev, sbt_now_epoch_ns());
	}
}

static void handle_exec(struct trace_ctx *ctx, const void *data, size_t size,
			const struct exec_src *src)
{
	struct sbt_event out = { .kind = SBT_EV_EXEC };
	struct sbt_ancestor anc[SBT_MAX_ANCESTORS];
	struct sbt_shell_class cls;
	struct sandbox_state *st;
	enum sbt_decode_err derr;
	struct sbt_exec ev;
	bool is_shell;

	derr = sbt_decode_exec(data, size, &ev, ctx->argv_store, ctx->tail);
	/* the guest agent registers one cgroup, at slot 0 */
	if (derr == SBT_DECODE_OK && (src->guest ? ev.slot != 0 : ev.slot >= ctx->opts->nr_targets))
		derr = SBT_DECODE_BAD_LENGTHS;
	if (derr != SBT_DECODE_OK) {
		if (!ctx->decode_errors++)
			ctx->first_decode_err = derr;
		return;
	}
	if (src->guest)
		ev.slot = src->slot;
	st = &ctx->st[ev.slot];
	if (!src->guest)
		st->received++; /* a guest's records are counted by its feed */
	out.ts = sbt_boot_to_epoch_ns(ev.ts_boot_ns, src->boot_offset);
	if (!st->first_exec_ts || out.ts < st->first_exec_ts)
		st->first_exec_ts = out.ts;

	sbt_proctab_rename(src->proc, ev.ppid, ev.parent_comm);
	is_shell = sbt_shell_classify(ev.filename, ev.interp, ev.argv, ev.argc, &cls) ||
		   sbt_shellid_classify(&ctx->shellid, &ev, &cls);
	if (is_shell) {
		out.exec.nanc = sbt_proctab_ancestors(src->proc, ev.ppid, ev.parent_comm, anc,
						      SBT_MAX_ANCESTORS);
		out.exec.anc = anc;
		if (sbt_shellagg_add(st->agg, &cls, ev.pid, ev.filename, ev.argv, ev.argc, anc,
				     out.exec.nanc) < 0)
			fprintf(stderr, "sbtrace: out of memory aggregating shell invocations\n");
	}
	sbt_proctab_exec(src->proc, ev.pid, ev.ppid, ev.comm);
	out.exec.rec = &ev;
	out.exec.shell = is_shell ? &cls : NULL;
	emit(ctx, &out, &ctx->opts->targets[ev.slot]);
}

static int handle_record(void *vctx, void *data, size_t size)
{
	struct trace_ctx *ctx = vctx;

	if (sbt_record_type(data, size) == SBT_REC_EGRESS) {
		handle_egress(ctx, data, size);
	} else {
		struct exec_src src = { .proc = ctx->proc, .boot_offset = ctx->boot_offset };

		handle_exec(ctx, data, size, &src);
	}
	return 0;
}

/* A RECORD of a guest stream: an exec of the guest kernel (the agent sends no other). */
static void handle_guest_record(void *arg, const void *data, size_t size)
{
	struct guest_src *g = arg;
	struct trace_ctx *ctx = g->ctx;

	if (sbt_record_type(data, size) != SBT_REC_EXEC) {
		if (!ctx->decode_errors++)
			ctx->first_decode_err = SBT_DECODE_BAD_TYPE;
		return;
	}
	g->src.boot_offset = sbt_guest_feed_boot_offset(&g->feed);
	handle_exec(ctx, data, size, &g->src);
}

/* Open the stream of every microVM sandbox with a guest agent (before TraceStarted). */
static int guests_open(struct trace_ctx *ctx)
{
	for (uint32_t i = 0; i < ctx->opts->nr_targets; i++) {
		const struct sbt_target *sb = &ctx->opts->targets[i];
		struct guest_src *g;
		int err;

		if (!sb->exec_stream[0])
			continue;
		g = calloc(1, sizeof(*g));
		if (!g)
			return -ENOMEM;
		ctx->guests[i] = g;
		g->ctx = ctx;
		g->src = (struct exec_src){ .slot = i, .guest = true };
		/* no lookup: a guest's processes are not in the host's /proc */
		g->src.proc = sbt_proctab_new(NULL, NULL);
		if (!g->src.proc)
			return -ENOMEM;
		err = sbt_guest_feed_open(&g->feed, sb->exec_stream, handle_guest_record, g);
		/* not fatal: the sandbox's trace is then incomplete, and says why */
		if (err)
			fprintf(stderr,
				"sbtrace: sandbox %s: its guest's exec stream %s: %s; its execs "
				"will not be seen (exec_complete false)\n",
				sb->name, sb->exec_stream, strerror(-err));
	}
	return 0;
}

/* What the stream told of its agent, for TraceStopped. */
static void guest_info(struct guest_src *g)
{
	const struct sbt_guest_feed *f = &g->feed;

	g->info = (struct sbt_guest_info){
		.hello = f->has_hello,
		.bye = f->has_bye,
		.mode = f->hello.mode,
		.kernel = f->hello.kernel,
		.hb_ms = f->hello.hb_ms,
		.attached_ts = sbt_boot_to_epoch_ns(f->hello.sent_boot_ns, f->offset),
		.frames = f->rd.frames,
		.bytes = f->rd.bytes,
		.bpf_run_ns = f->last.bpf_run_ns,
		.bpf_run_cnt = f->last.bpf_run_cnt,
	};
}

/* What the guest streams gained since the last look (up to `max` bytes each). */
static void guests_poll(struct trace_ctx *ctx, size_t max)
{
	for (uint32_t i = 0; i < ctx->opts->nr_targets; i++)
		if (ctx->guests[i])
			sbt_guest_feed_poll(&ctx->guests[i]->feed, max, sbt_mono_ms(),
					    sbt_now_epoch_ns());
}

static void guests_free(struct trace_ctx *ctx)
{
	for (uint32_t i = 0; i < SBT_MAX_SANDBOXES; i++) {
		struct guest_src *g = ctx->guests[i];

		if (!g)
			continue;
		sbt_guest_feed_close(&g->feed);
		sbt_proctab_free(g->src.proc);
		free(g);
		ctx->guests[i] = NULL;
	}
}

static int read_stats(struct trace_ctx *ctx, uint32_t slot, struct sbt_sandbox_stats *out)
{
	memset(out, 0, sizeof(*out));
	return bpf_map_lookup_elem(ctx->map_stats_fd, &slot, out);
}

/* Emit EventsLost for ring-buffer drops the kernel counted since the last look. */
static void report_drops(struct trace_ctx *ctx)
{
	for (uint32_t i = 0; i < ctx->opts->nr_targets; i++) {
		struct sandbox_state *st = &ctx->st[i];
		struct sbt_sandbox_stats s;
		struct sbt_ev_lost ev;

		if (read_stats(ctx, i, &s))
			continue;
		st->kernel_execs = s.execs;
		st->kernel_lost = s.lost;
		st->kernel_eg = s.egress;
		st->kernel_eg_lost = s.egress_lost;
		if (sbt_lost_since(s.egress_lost, &st->eg_lost_reported, "egress", &ev))
			emit_lost(ctx, &ctx->opts->targets[i], &ev);
		if (sbt_lost_since(s.lost, &st->lost_reported, "exec", &ev))
			emit_lost(ctx, &ctx->opts->targets[i], &ev);
	}
}

/* After detach: consume until every counted exec arrived or was counted lost. */
static void drain(struct trace_ctx *ctx)
{
	uint64_t deadline = sbt_mono_ms() + 250;

	for (;;) {
		bool pending = false;

		ring_buffer__consume(ctx->rb);
		for (uint32_t i = 0; i < ctx->opts->nr_targets; i++) {
			struct sbt_sandbox_stats s;

			if (read_stats(ctx, i, &s) == 0 &&
			    (ctx->st[i].received + s.lost < s.execs ||
			     ctx->st[i].eg_received < s.egress))
				pending = true;
		}
		if (!pending || sbt_mono_ms() >= deadline)
			break;
		sbt_sleep_ms(2);
	}
	report_drops(ctx);
}

/* A fallback taken is never silent: one line on stderr (and hooks.* in TraceStarted). */
static void report_fallback(const struct sbt_hook_result *res)
{
	char line[512];

	if (*sbt_hook_fallback_line(res, line, sizeof(line)))
		fprintf(stderr, "%s\n", line);
}

static void emit_started(struct trace_ctx *ctx, uint64_t attach_ms)
{
	const struct sbt_trace_opts *opts = ctx->opts;
	struct sbt_target_view views[SBT_MAX_SANDBOXES];
	const struct sbt_hook_result *hooks[] = { &ctx->plan.exec,
						  &ctx->membership,
						  &ctx->plan.connect,
						  &ctx->plan.packet,
						  ctx->taps->nr ? &ctx->taps->res[0] : NULL,
						  NULL };
	struct sbt_event ev = { .kind = SBT_EV_STARTED, .ts = sbt_now_epoch_ns() };
	struct utsname u;

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
	ev.started.opts = opts;
	ev.started.views = views;
	ev.started.hooks = hooks;
	ev.started.kernel = uname(&u) == 0 ? u.release : NULL;
	ev.started.attach_ms = attach_ms;
	emit(ctx, &ev, NULL);
	sbt_sinks_flush(opts);
}

/* One sandbox at stop: what never arrived, its totals, then its shell invocations. */
static void final_sandbox(struct trace_ctx *ctx, uint32_t i, struct sbt_target_totals *t)
{
	const char *why = ctx->decode_errors ? "decode_error" : "not_received";
	const struct sbt_target *sb = &ctx->opts->targets[i];
	struct sandbox_state *st = &ctx->st[i];
	bool exec_visible = strcmp(sbt_target_vis_exec(sb), "none") != 0;
	struct sbt_event ev = { .kind = SBT_EV_SUMMARY };
	struct sbt_guest_account ga = { 0 };
	uint64_t missing = 0, eg_missing = 0;

	if (st->kernel_execs > st->received)
		missing = st->kernel_execs - st->received;
	if (st->kernel_eg > st->eg_received)
		eg_missing = st->kernel_eg - st->eg_received;
	/* Records the kernel sent that never decoded, or that vanished. */
	if (missing > st->lost_reported)
		emit_lost(ctx, sb,
			  &(struct sbt_ev_lost){ .lost = missing - st->lost_reported,
						 .lost_total = missing,
						 .has_total = true,
						 .reason = why,
						 .kind = "exec" });
	if (eg_missing)
		emit_lost(ctx, sb,
			  &(struct sbt_ev_lost){
				  .lost = eg_missing, .reason = why, .kind = "egress" });

	t->execs = st->kernel_execs;
	t->received = st->received;
	t->lost = missing;
	t->first_exec_ts = st->first_exec_ts;
	t->eg_records = st->eg_received;
	t->eg_events = st->eg_events;
	t->eg_denied = st->eg_denied;
	t->eg_lost = st->kernel_eg_lost + eg_missing;
	if (ctx->guests[i]) {
		/* the guest kernel's execs, as far as its stream accounts for them */
		sbt_guest_feed_account(&ctx->guests[i]->feed, sbt_mono_ms(), &ga);
		if (ga.lost)
			emit_lost(ctx, sb,
				  &(struct sbt_ev_lost){ .lost = ga.lost,
							 .reason = ctx->guests[i]->feed.last.lost
									   ? "ringbuf_full"
									   : "not_received",
							 .kind = "exec",
							 .detail = ga.reason });
		if (ga.reason)
			fprintf(stderr,
				"sbtrace: sandbox %s: the guest's exec stream is not complete "
				"(%s)\n",
				sb->name, ga.reason);
		t->execs += ga.execs;
		t->received += ga.received;
		t->lost += ga.lost;
		guest_info(ctx->guests[i]);
		t->guest = &ctx->guests[i]->info;
	}
	/* Execs inside a guest kernel without an agent were never visible: no count is complete. */
	t->complete = sbt_completeness_of(t, exec_visible, ctx->decode_errors);
	if (ga.reason) {
		t->complete.exec = t->complete.all = false;
		t->complete.exec_reason = ga.reason;
	}

	ev.ts = sbt_now_epoch_ns();
	ev.summary.agg = st->agg;
	ev.summary.complete = t->complete;
	ev.summary.exec_visible = exec_visible;
	emit(ctx, &ev, sb);
}

static void emit_final(struct trace_ctx *ctx, const char *reason, uint64_t duration_ms)
{
	struct sbt_target_totals totals[SBT_MAX_SANDBOXES];
	struct sbt_event ev = { .kind = SBT_EV_STOPPED };

	memset(totals, 0, sizeof(totals));
	for (uint32_t i = 0; i < ctx->opts->nr_targets; i++)
		final_sandbox(ctx, i, &totals[i]);
	if (ctx->decode_errors)
		emit_lost(ctx, NULL,
			  &(struct sbt_ev_lost){
				  .lost = ctx->decode_errors,
				  .reason = "decode_error",
				  .detail = sbt_decode_strerror(ctx->first_decode_err) });
	ev.ts = sbt_now_epoch_ns();
	ev.stopped.reason = reason;
	ev.stopped.duration_ms = duration_ms;
	ev.stopped.decode_errors = ctx->decode_errors;
	ev.stopped.totals = totals;
	ev.stopped.targets = ctx->opts->targets;
	ev.stopped.nr = ctx->opts->nr_targets;
	emit(ctx, &ev, NULL);
	sbt_sinks_flush(ctx->opts);
}

/* Record one cgroup's processes, then recurse into its children. */
static void snapshot_cgroup(struct trace_ctx *ctx, int dirfd, int depth)
{
	char buf[4096];
	FILE *f;
	DIR *d;
	int fd;

	fd = openat(dirfd, "cgroup.procs", O_RDONLY | O_CLOEXEC);
	f = fd >= 0 ? fdopen(fd, "r") : NULL;
	if (f) {
		while (fgets(buf, sizeof(buf), f)) {
			struct sbt_proc_info info;
			uint32_t pid = (uint32_t)strtoul(buf, NULL, 10);

			if (pid && sbt_proc_lookup_procfs(pid, &info, &ctx->procfs))
				sbt_proctab_seen(ctx->proc, pid, info.ppid, info.comm);
		}
		fclose(f);
	} else if (fd >= 0) {
		close(fd);
	}
	if (depth >= SBT_MAX_CGROUP_LEVEL)
		return;
	fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	for (struct dirent *e; (e = readdir(d));) {
		int child;

		if (e->d_type != DT_DIR || e->d_name[0] == '.')
			continue;
		child = openat(dirfd, e->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (child < 0)
			continue;
		snapshot_cgroup(ctx, child, depth + 1);
		close(child);
	}
	closedir(d);
}

/*
 * Processes already in the sandboxes at attach: their exec is in the past,
 * so remember them now (ancestor chains must not depend on them still being
 * alive when a descendant's exec is decoded).
 */
static void snapshot_sandboxes(struct trace_ctx *ctx)
{
	for (uint32_t i = 0; i < ctx->opts->nr_targets; i++) {
		int fd = open(ctx->opts->targets[i].path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		if (fd < 0)
			continue;
		snapshot_cgroup(ctx, fd, 0);
		close(fd);
	}
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
				fprintf(stderr,
					"sbtrace: sandboxes sit at too many distinct cgroup "
					"levels; trace fewer at once\n");
				return -E2BIG;
			}
			skel->bss->hash_levels[nr_levels++] = sb->level;
		}
		if (bpf_map_update_elem(fd, &sb->cgroup_id, &v, BPF_ANY)) {
			int err = -errno;

			fprintf(stderr, "sbtrace: cannot register sandbox %s: %s\n", sb->name,
				strerror(errno));
			return err;
		}
	}
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
	ctx->argv_store = calloc(SBT_ARGV_MAX_ARGS, sizeof(*ctx->argv_store));
	ctx->tail = malloc(SBT_ARGV_CAP + 1);
	ctx->egress = calloc(1, sizeof(*ctx->egress));
	ctx->taps = calloc(1, sizeof(*ctx->taps));
	ctx->folds = calloc(FOLD_SLOTS, sizeof(*ctx->folds));
	for (uint32_t i = 0; i < opts->nr_targets; i++) {
		ctx->names[i] = opts->targets[i].name;
		ctx->st[i].agg = sbt_shellagg_new();
		if (!ctx->st[i].agg)
			return ctx; /* the caller sees proc == NULL */
	}
	sbt_shellid_scan(&ctx->shellid, NULL);
	ctx->procfs.root = "/proc";
	ctx->procfs.targets = ctx->names;
	ctx->procfs.nr_targets = opts->nr_targets;
	if (!ctx->argv_store || !ctx->tail || !ctx->egress || !ctx->taps || !ctx->folds)
		return ctx;
	ctx->proc = sbt_proctab_new(sbt_proc_lookup_procfs, &ctx->procfs);
	return ctx;
}

static void ctx_free(struct trace_ctx *ctx)
{
	ring_buffer__free(ctx->rb);
	if (ctx->taps)
		sbt_tap_detach(ctx->taps, ctx->opts->targets);
	free(ctx->taps);
	if (ctx->egress)
		sbt_egress_teardown(ctx->egress);
	sbt_plan_destroy(&ctx->plan);
	free(ctx->egress);
	free(ctx->folds);
	for (uint32_t i = 0; i < ctx->opts->nr_targets; i++)
		sbt_shellagg_free(ctx->st[i].agg);
	sbt_proctab_free(ctx->proc);
	guests_free(ctx);
	free(ctx->argv_store);
	free(ctx->tail);
	free(ctx);
}

/* Load, attach, register: everything before TraceStarted. An exit code. */
static int trace_attach(struct trace_ctx *ctx)
{
	const struct sbt_trace_opts *opts = ctx->opts;
	struct sbt_plan *plan = &ctx->plan;
	int err = sbt_plan_attach(&opts->exec, plan);

	if (err) {
		const struct sbt_hook_result *res = &plan->exec;

		fprintf(stderr,
			"sbtrace: cannot attach the exec hook (%s, last tried: %s): %s; "
			"is this a Linux >= 5.8 kernel with BPF ring buffers, and are you "
			"root (CAP_BPF + CAP_PERFMON)? run 'sbtrace features' for details\n",
			res->nr_tries ? res->tries[res->nr_tries - 1].stage : "open",
			res->nr_tries ? res->tries[res->nr_tries - 1].mode : "-", strerror(-err));
		return SBT_EXIT_KERNEL;
	}
	report_fallback(&plan->exec);
	if (opts->exec.observe_connect)
		report_fallback(&plan->connect);
	if (opts->exec.observe)
		report_fallback(&plan->packet);
	ctx->map_stats_fd = bpf_map__fd(plan->skel->maps.sandbox_stats);
	ctx->rb = ring_buffer__new(bpf_map__fd(plan->skel->maps.events), handle_record, ctx, NULL);
	if (!ctx->rb) {
		fprintf(stderr, "sbtrace: cannot set up the ring buffer: %s\n", strerror(errno));
		return SBT_EXIT_KERNEL;
	}
	if (sbt_register_targets(plan, opts->targets, opts->nr_targets, &ctx->membership))
		return SBT_EXIT_KERNEL;
	if (guests_open(ctx)) {
		fprintf(stderr, "sbtrace: out of memory\n");
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
	const struct sbt_trace_opts *opts = ctx->opts;
	struct sbt_stats_sandbox sbs[SBT_MAX_SANDBOXES];
	struct sbt_event ev = { .kind = SBT_EV_STATS, .ts = sbt_now_epoch_ns() };

	for (uint32_t i = 0; i < opts->nr_targets; i++)
		sbs[i] = (struct sbt_stats_sandbox){
			.name = opts->targets[i].name,
			.execs = ctx->st[i].kernel_execs +
				 (ctx->guests[i] ? ctx->guests[i]->feed.last.execs : 0),
			.received = ctx->st[i].received +
				    (ctx->guests[i] ? ctx->guests[i]->feed.records : 0),
			.lost = ctx->st[i].kernel_lost,
			.shells = sbt_shellagg_count(ctx->st[i].agg),
		};
	ev.stats.uptime_ms = sbt_mono_ms() - start_ms;
	ev.stats.ringbuf_size_bytes = opts->exec.ringbuf_bytes;
	ev.stats.decode_errors = ctx->decode_errors;
	ev.stats.sandboxes_added = opts->nr_targets;
	ev.stats.targets = sbs;
	ev.stats.nr = opts->nr_targets;
	emit(ctx, &ev, NULL);
}

/* Drain until a signal, the duration, an error or the caller says stop. */
static int trace_loop(struct trace_ctx *ctx, uint64_t start_ms, const char **reason)
{
	const struct sbt_trace_opts *opts = ctx->opts;
	uint64_t next_stats = start_ms + opts->stats_interval_ms;

	while (!sbt_stop_signal) {
		int err;

		/* Records come without wake-ups (see exec.bpf.c): drain on the tick too. */
		err = ring_buffer__poll(ctx->rb,
					opts->exec.poll_ms ? (int)opts->exec.poll_ms : 100);
		if (err >= 0 || err == -EINTR)
			err = ring_buffer__consume(ctx->rb);
		if (err < 0 && err != -EINTR) {
			fprintf(stderr, "sbtrace: reading the ring buffer failed: %s\n",
				strerror(-err));
			*reason = "error";
			return SBT_EXIT_RUNTIME;
		}
		report_drops(ctx);
		guests_poll(ctx, GUEST_TICK_BYTES);
		sbt_egress_dns_drain(ctx->egress, emit_dns, ctx);
		sbt_egress_tick(ctx->egress);
		if (opts->stats_interval_ms && sbt_mono_ms() >= next_stats) {
			emit_stats(ctx, start_ms);
			next_stats += opts->stats_interval_ms;
		}
		err = sbt_sinks_flush(opts);
		if (!err && sbt_hup_pending) {
			sbt_hup_pending = 0;
			err = sbt_sinks_reopen(opts);
		}
		if (err) {
			fprintf(stderr, "sbtrace: writing output failed: %s\n", strerror(-err));
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

	if (!ctx || !ctx->proc) {
		fprintf(stderr, "sbtrace: out of memory\n");
		if (ctx)
			ctx_free(ctx);
		return SBT_EXIT_RUNTIME;
	}
	sbt_signals_install(true);

	ret = trace_attach(ctx);
	if (ret != SBT_EXIT_OK)
		goto out;
	ctx->boot_offset = sbt_boot_epoch_offset_ns();
	start_ms = sbt_mono_ms();
	emit_started(ctx, start_ms - t0);
	snapshot_sandboxes(ctx);
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
	drain(ctx);
	guests_poll(ctx, SIZE_MAX); /* what the guests wrote up to now, whole */
	sbt_egress_dns_drain(ctx->egress, emit_dns, ctx);
	flush_folds(ctx);
	emit_final(ctx, reason, sbt_mono_ms() - start_ms);
	err = sbt_sinks_flush(opts);
	if (err && ret == SBT_EXIT_OK) {
		fprintf(stderr, "sbtrace: writing output failed: %s\n", strerror(-err));
		ret = SBT_EXIT_RUNTIME;
	}
out:
	ctx_free(ctx);
	return ret;
}
