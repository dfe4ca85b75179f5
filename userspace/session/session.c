// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The session core of trace and agent (session.h): records in, typed events
 * out, every record the kernel counted accounted for.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/utsname.h>

#include "egress/dnsev.h"
#include "exec/guest_feed.h"
#include "exec/shell.h"
#include "exec/shellagg.h"
#include "lib/clock.h"
#include "session/session.h"
#include "session/session_learn.h"
#include "lib/log.h"

/* Where an exec record came from: the host's ring buffer, or a microVM's guest stream. */
struct exec_src {
	struct sbt_proctab *proc; /* guest PIDs are another namespace: their own table */
	int64_t boot_offset;	  /* the source's CLOCK_BOOTTIME -> the host's epoch */
	uint32_t slot;		  /* the host's slot (a guest's records all say 0) */
	bool guest;
	uint64_t guest_cg; /* the guest's id of its workload's cgroup (HELLO), 0 unknown */
	/*
	 * A guest's: its agent's HELLO on the host's epoch (ns). What the guest's
	 * init unpacked and wrote before (its initramfs, busybox) is its own, not
	 * the workload's.
	 */
	uint64_t guest_since;
};

struct session_guest {
	struct sbt_session *s;
	struct sbt_guest_feed feed;
	struct exec_src src;
	struct sbt_guest_info info; /* for TraceStopped */
};

/*
 * The last record of each fold key of a slot, to give the folded tail its
 * details at the end: open addressing, grown by doubling up to FOLD_MAX
 * entries (beyond, a tail is reported with its key's fields only).
 */
struct fold_entry {
	struct sbt_fold_key key;
	struct sbt_egress ev;
	bool used;
};

struct session_folds {
	struct fold_entry *e;
	uint32_t cap, used;
};

/* The coarse clock's lag a file's ctime may have (a tick at HZ 100, twice). */
#define OWN_SLACK_NS 20000000ull

#define FOLD_MIN (1u << 6)
#define FOLD_MAX (1u << 15)

/* ---- slots ------------------------------------------------------------------------ */

static void report_failed(void *arg, const struct sbt_failgroup *g);

int sbt_session_init(struct sbt_session *s, const struct sbt_trace_opts *opts, uint32_t max,
		     const struct sbt_session_ops *ops)
{
	memset(s, 0, sizeof(*s));
	s->opts = opts;
	if (ops)
		s->ops = *ops;
	s->max = max;
	s->slots = calloc(max ? max : 1, sizeof(*s->slots));
	s->names = calloc(max ? max : 1, sizeof(*s->names));
	s->argv_store = calloc(SBT_ARGV_MAX_ARGS, sizeof(*s->argv_store));
	s->tail = malloc(SBT_ARGV_CAP + 1);
	s->procfs.root = "/proc";
	s->procfs.targets = s->names;
	sbt_shellid_scan(&s->shellid, NULL);
	s->fails = malloc(sizeof(*s->fails));
	if (!s->slots || !s->names || !s->argv_store || !s->tail || !s->fails)
		return -ENOMEM;
	sbt_execfail_init(s->fails, report_failed, s);
	s->proc = sbt_proctab_new(sbt_proc_lookup_procfs, &s->procfs);
	return s->proc ? 0 : -ENOMEM;
}

static void guest_free(struct session_guest *g)
{
	if (!g)
		return;
	sbt_guest_feed_close(&g->feed);
	sbt_proctab_free(g->src.proc);
	free(g);
}

static void folds_free(struct session_folds *f)
{
	if (f)
		free(f->e);
	free(f);
}

static void slot_clear(struct sbt_session_slot *sl)
{
	sbt_shellagg_free(sl->agg);
	guest_free(sl->guest);
	folds_free(sl->folds);
	sbt_session_learn_free(sl->learn);
	memset(sl, 0, sizeof(*sl));
}

void sbt_session_free(struct sbt_session *s)
{
	for (uint32_t i = 0; s->slots && i < s->max; i++)
		if (s->slots[i].used)
			slot_clear(&s->slots[i]);
	sbt_proctab_free(s->proc);
	free(s->fails);
	free(s->slots);
	free(s->names);
	free(s->argv_store);
	free(s->tail);
	memset(s, 0, sizeof(*s));
}

/* The procfs lookups see the cgroups of the used slots. */
static void rebuild_names(struct sbt_session *s)
{
	size_t n = 0;

	for (uint32_t i = 0; i < s->max; i++)
		if (s->slots[i].used && sbt_target_has_cgroup(s->slots[i].target))
			s->names[n++] = s->slots[i].target->name;
	s->procfs.nr_targets = n;
}

void sbt_session_set_egress(struct sbt_session *s, uint32_t slot,
			    const struct sbt_egress_cfg *egress)
{
	if (slot < s->max && s->slots[slot].used)
		s->slots[slot].egress = egress;
}

int sbt_session_add(struct sbt_session *s, struct sbt_target *t,
		    const struct sbt_egress_cfg *egress)
{
	struct sbt_session_slot *sl;

	if (t->slot >= s->max || s->slots[t->slot].used)
		return -EINVAL;
	sl = &s->slots[t->slot];
	sl->agg = sbt_shellagg_new();
	if (!sl->agg)
		return -ENOMEM;
	sl->used = true;
	sl->target = t;
	sl->egress = egress;
	sl->learn = sbt_session_learn_new(egress);
	if (egress && egress->learn && !sl->learn) {
		slot_clear(sl);
		return -ENOMEM;
	}
	sl->own_since =
		s->opts && s->opts->own_since_ns ? s->opts->own_since_ns : sbt_now_epoch_ns();
	s->nr++;
	rebuild_names(s);
	return 0;
}

void sbt_session_remove(struct sbt_session *s, uint32_t slot)
{
	if (slot >= s->max || !s->slots[slot].used)
		return;
	slot_clear(&s->slots[slot]);
	s->nr--;
	rebuild_names(s);
}

struct sbt_session_slot *sbt_session_slot(struct sbt_session *s, uint32_t slot)
{
	return slot < s->max && s->slots[slot].used ? &s->slots[slot] : NULL;
}

/* ---- output ------------------------------------------------------------------------ */

void sbt_session_emit(struct sbt_session *s, struct sbt_event *ev, const struct sbt_target *t)
{
	ev->sandbox = t;
	sbt_sinks_emit(s->opts, ev);
}

void sbt_session_started(struct sbt_session *s, const struct sbt_target_view *views,
			 const struct sbt_hook_result *const *hooks, uint64_t attach_ms)
{
	struct sbt_event ev = { .kind = SBT_EV_STARTED, .ts = sbt_now_epoch_ns() };
	struct utsname u;

	ev.started.opts = s->opts;
	ev.started.views = views;
	ev.started.hooks = hooks;
	ev.started.kernel = uname(&u) == 0 ? u.release : NULL;
	ev.started.attach_ms = attach_ms;
	sbt_session_emit(s, &ev, NULL);
	sbt_sinks_flush(s->opts);
}

static void emit_lost(struct sbt_session *s, const struct sbt_target *t,
		      const struct sbt_ev_lost *lost)
{
	struct sbt_event ev = { .kind = SBT_EV_LOST, .ts = sbt_now_epoch_ns() };

	ev.lost = *lost;
	sbt_session_emit(s, &ev, t);
}

static void decode_error(struct sbt_session *s, enum sbt_decode_err err)
{
	if (!s->decode_errors++)
		s->first_decode_err = err;
}

/* ---- records ------------------------------------------------------------------------ */

/* The slot a record names; one not in use may have been registered at mkdir, not seen yet. */
static struct sbt_session_slot *slot_of_record(struct sbt_session *s, uint32_t slot)
{
	struct sbt_session_slot *sl = sbt_session_slot(s, slot);

	if (!sl && slot < s->max && s->ops.unknown_slot) {
		s->ops.unknown_slot(s->ops.arg, slot);
		sl = sbt_session_slot(s, slot);
	}
	return sl;
}

/*
 * An ELF the sandbox wrote (or linked, renamed, chmod'ed: its inode's ctime)
 * since it began, that no name or layout places as a shell: it could be one.
 */
static bool is_unidentified(const struct sbt_session_slot *sl, const struct sbt_exec *ev,
			    uint64_t guest_since)
{
	uint64_t since = guest_since > sl->own_since ? guest_since : sl->own_since;

	/* ctime is the coarse clock's, up to a tick behind: a file made just after counts */
	return !(ev->flags & SBT_EXEC_EXE_UNAVAILABLE) && memcmp(ev->exe_head, "\177ELF", 4) == 0 &&
	       ev->exe_ctime + OWN_SLACK_NS >= since;
}

static void handle_exec(struct sbt_session *s, const void *data, size_t size,
			const struct exec_src *src)
{
	struct sbt_event out = { .kind = SBT_EV_EXEC };
	struct sbt_ancestor anc[SBT_MAX_ANCESTORS];
	struct sbt_session_slot *sl = NULL;
	struct sbt_shell_class cls;
	enum sbt_decode_err derr;
	struct sbt_exec ev;
	bool is_shell;

	derr = sbt_decode_exec(data, size, &ev, s->argv_store, s->tail);
	/* the guest agent registers one cgroup, at slot 0 */
	if (derr == SBT_DECODE_OK && src->guest)
		derr = ev.slot == 0 ? SBT_DECODE_OK : SBT_DECODE_BAD_FIELD;
	if (derr == SBT_DECODE_OK) {
		if (src->guest)
			ev.slot = src->slot;
		sl = slot_of_record(s, ev.slot);
		if (!sl)
			derr = SBT_DECODE_BAD_FIELD;
	}
	if (derr != SBT_DECODE_OK) {
		decode_error(s, derr);
		return;
	}
	/*
	 * The guest's workload cgroup is the sandbox's own (its id there is the
	 * host's); those below it (an engine's containers) keep the guest's ids.
	 */
	if (src->guest && src->guest_cg && ev.cgroup_id == src->guest_cg && sl->target)
		ev.cgroup_id = sl->target->cgroup_id;
	if (!src->guest)
		sl->n.received++; /* a guest's records are counted by its feed */
	out.ts = sbt_boot_to_epoch_ns(ev.ts_boot_ns, src->boot_offset);
	/* the earliest: a guest's stream and the host's ring buffer interleave */
	if (!sl->n.first_exec_ts || out.ts < sl->n.first_exec_ts)
		sl->n.first_exec_ts = out.ts;

	sbt_proctab_rename(src->proc, ev.ppid, ev.parent_comm);
	/* its failed attempts at this name were a PATH search; at another name, failures */
	sbt_execfail_exec(s->fails, ev.slot, ev.pid, src->proc, ev.filename);
	is_shell = sbt_shell_classify(ev.filename, ev.interp, ev.argv, ev.argc, &cls) ||
		   sbt_shellid_classify(&s->shellid, &ev, &cls);
	if (!is_shell && is_unidentified(sl, &ev, src->guest ? src->guest_since : 0)) {
		out.exec.unidentified = true;
		if (sbt_shellagg_unidentified(sl->agg, ev.filename, ev.exe_name, ev.pid, ev.argv,
					      ev.argc) < 0)
			sbt_log("out of memory aggregating unidentified executables");
	}
	if (is_shell) {
		out.exec.nanc = sbt_proctab_ancestors(src->proc, ev.ppid, ev.parent_comm, anc,
						      SBT_MAX_ANCESTORS);
		out.exec.anc = anc;
		if (sbt_shellagg_add(sl->agg, &cls, ev.pid, ev.filename, ev.argv, ev.argc, anc,
				     out.exec.nanc) < 0)
			sbt_log("out of memory aggregating shell invocations");
	}
	sbt_proctab_exec(src->proc, ev.pid, ev.ppid, ev.comm);
	out.exec.rec = &ev;
	out.exec.shell = is_shell ? &cls : NULL;
	sbt_session_emit(s, &out, sl->target);
}

/* ---- failed execs ------------------------------------------------------------------ */

/* A group of failed attempts (execfail.h) as ProcessExecFailed; a shell's counts. */
static void report_failed(void *arg, const struct sbt_failgroup *g)
{
	struct sbt_session *s = arg;
	struct sbt_session_slot *sl = sbt_session_slot(s, g->slot);
	struct sbt_event out = { .kind = SBT_EV_EXEC_FAILED, .ts = g->ts };
	struct sbt_ancestor anc[SBT_MAX_ANCESTORS];
	const struct sbt_exec_fail *f = &g->first;
	struct sbt_shell_class cls;
	size_t nanc = 0;
	bool is_shell;

	if (!sl)
		return;
	is_shell = f->filename[0] && sbt_shell_classify(f->filename, NULL, f->argv, f->argc, &cls);
	if (is_shell) {
		/* the process that failed is the would-be shell: its ancestors from its parent */
		nanc = sbt_proctab_ancestors(g->src, f->ppid, f->comm, anc, SBT_MAX_ANCESTORS);
		if (sbt_shellagg_add_failed(sl->agg, &cls, g->err, f->pid, f->filename, f->argv,
					    f->argc, anc, nanc) < 0)
			sbt_log("out of memory aggregating shell invocations");
	}
	out.exec_failed = (struct sbt_ev_exec_failed){
		.rec = f,
		.tried = g->tried_p,
		.ntried = g->ntried,
		.err = g->err,
		.shell = is_shell ? &cls : NULL,
		.anc = anc,
		.nanc = nanc,
	};
	sbt_session_emit(s, &out, sl->target);
}

static void handle_exec_failed(struct sbt_session *s, const void *data, size_t size,
			       const struct exec_src *src)
{
	struct sbt_session_slot *sl = NULL;
	enum sbt_decode_err derr;
	struct sbt_exec_fail f;

	derr = sbt_decode_exec_failed(data, size, &f);
	if (derr == SBT_DECODE_OK && !(sl = slot_of_record(s, f.slot)))
		derr = SBT_DECODE_BAD_FIELD;
	if (derr != SBT_DECODE_OK) {
		decode_error(s, derr);
		return;
	}
	sl->n.failed_received++;
	sbt_execfail_add(s->fails, &f, src->proc,
			 sbt_boot_to_epoch_ns(f.ts_boot_ns, src->boot_offset), sbt_mono_ms());
}

void sbt_session_tick(struct sbt_session *s)
{
	uint64_t now = sbt_mono_ms();

	if (now > SBT_EXECFAIL_IDLE_MS)
		sbt_execfail_flush(s->fails, SBT_EXECFAIL_ALL, now - SBT_EXECFAIL_IDLE_MS);
}

/* ---- egress records -------------------------------------------------------------- */

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

static uint64_t fold_hash(const struct sbt_fold_key *k)
{
	const unsigned char *b = (const unsigned char *)k;
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < sizeof(*k); i++)
		h = (h ^ b[i]) * 1099511628211ull;
	return h;
}

/* Key k's entry in e (cap a power of two), or the free one where it would go; NULL: full. */
static struct fold_entry *fold_find(struct fold_entry *e, uint32_t cap,
				    const struct sbt_fold_key *k)
{
	uint64_t h = fold_hash(k);

	for (uint32_t i = 0; i < cap; i++) {
		struct fold_entry *x = &e[(h + i) & (cap - 1)];

		if (!x->used || memcmp(&x->key, k, sizeof(*k)) == 0)
			return x;
	}
	return NULL;
}

/* Room for one more key, growing the table at 3/4. False: at FOLD_MAX, or no memory. */
static bool folds_room(struct sbt_session_slot *sl)
{
	struct session_folds *f = sl->folds;
	struct fold_entry *n;
	uint32_t cap;

	if (!f) {
		f = sl->folds = calloc(1, sizeof(*f));
		if (!f)
			return false;
	}
	if (f->cap && (f->used + 1) * 4 <= f->cap * 3)
		return true;
	cap = f->cap ? f->cap * 2 : FOLD_MIN;
	if (cap > FOLD_MAX)
		return f->used < f->cap;
	n = calloc(cap, sizeof(*n));
	if (!n)
		return f->used < f->cap;
	for (uint32_t i = 0; i < f->cap; i++)
		if (f->e[i].used)
			*fold_find(n, cap, &f->e[i].key) = f->e[i];
	free(f->e);
	f->e = n;
	f->cap = cap;
	return true;
}

static void fold_remember(struct sbt_session_slot *sl, const struct sbt_egress *ev)
{
	struct sbt_fold_key k;
	struct fold_entry *fe;

	fold_key_of(ev, &k);
	fe = sl->folds && sl->folds->cap ? fold_find(sl->folds->e, sl->folds->cap, &k) : NULL;
	if (!fe || !fe->used) {
		if (!folds_room(sl))
			return; /* its tail is reported without the details */
		fe = fold_find(sl->folds->e, sl->folds->cap, &k);
		if (!fe)
			return;
		if (!fe->used)
			sl->folds->used++;
	}
	fe->used = true;
	fe->key = k;
	fe->ev = *ev;
}

static void emit_egress(struct sbt_session *s, struct sbt_session_slot *sl,
			const struct sbt_egress *rec, uint64_t ts)
{
	struct sbt_event ev = { .kind = SBT_EV_EGRESS, .ts = ts };
	char name[SBT_HOST_MAX];

	ev.egress.rec = rec;
	ev.egress.rule = sl->egress ? sbt_egress_rule_text(sl->egress, rec->rule_id) : NULL;
	ev.egress.floor = sbt_egress_floor_text(rec->floor_idx);
	if (((rec->verdict == SBT_VERDICT_ALLOWED && rec->reason == SBT_REASON_RULE) ||
	     sbt_session_learn_wants(sl->learn, rec)) &&
	    s->ops.learned_name &&
	    s->ops.learned_name(s->ops.arg, rec->slot, rec->daddr, name, sizeof(name),
				&ev.egress.dns_ts))
		ev.egress.dns_name = name;
	sbt_session_learn_connect(sl->learn, rec, ev.egress.dns_name);
	sbt_session_emit(s, &ev, sl->target);
}

static void count_egress(struct sbt_session_slot *sl, const struct sbt_egress *ev, uint64_t count)
{
	sl->n.eg_events += count;
	if (ev->verdict == SBT_VERDICT_DENIED)
		sl->n.eg_denied += count;
}

static void handle_egress(struct sbt_session *s, const void *data, size_t size)
{
	enum sbt_decode_err derr;
	struct sbt_session_slot *sl = NULL;
	struct sbt_egress ev;

	derr = sbt_decode_egress(data, size, &ev);
	if (derr == SBT_DECODE_OK && !(sl = slot_of_record(s, ev.slot)))
		derr = SBT_DECODE_BAD_FIELD;
	if (derr != SBT_DECODE_OK) {
		decode_error(s, derr);
		return;
	}
	sl->n.eg_received++;
	count_egress(sl, &ev, ev.count);
	fold_remember(sl, &ev);
	emit_egress(s, sl, &ev, sbt_boot_to_epoch_ns(ev.ts_boot_ns, s->boot_offset));
}

void sbt_session_fold_tail(struct sbt_session *s, const struct sbt_fold_key *k, uint64_t folded)
{
	struct sbt_session_slot *sl = sbt_session_slot(s, k->slot);
	struct fold_entry *fe = NULL;
	struct sbt_egress ev;

	if (!sl || !folded)
		return;
	if (sl->folds && sl->folds->cap)
		fe = fold_find(sl->folds->e, sl->folds->cap, k);
	if (fe && fe->used) {
		ev = fe->ev;
	} else {
		memset(&ev, 0, sizeof(ev));
		ev.slot = k->slot;
		ev.pid = k->pid;
		memcpy(ev.daddr, k->daddr, 16);
		ev.dport = k->dport;
		ev.proto = k->proto;
		ev.hook = k->hook;
		ev.verdict = k->verdict;
		ev.reason = k->reason;
		ev.family = memcmp(ev.daddr, "\0\0\0\0\0\0\0\0\0\0\xff\xff", 12) == 0 ? AF_INET
										      : AF_INET6;
	}
	ev.count = folded;
	count_egress(sl, &ev, folded);
	emit_egress(s, sl, &ev, sbt_now_epoch_ns());
}

void sbt_session_dns(struct sbt_session *s, const struct sbt_dns_event *rec)
{
	struct sbt_session_slot *sl = sbt_session_slot(s, rec->slot);
	struct sbt_event ev = { .kind = SBT_EV_DNS, .ts = rec->ts };

	if (!sl)
		return;
	ev.dns.rec = rec;
	ev.dns.rule = sl->egress ? sbt_egress_rule_text(sl->egress, rec->rule_id) : NULL;
	sbt_session_emit(s, &ev, sl->target);
}

int sbt_session_record(void *ctx, void *data, size_t size)
{
	struct sbt_session *s = ctx;
	struct exec_src src = { .proc = s->proc, .boot_offset = s->boot_offset };

	switch (sbt_record_type(data, size)) {
	case SBT_REC_EXEC:
		handle_exec(s, data, size, &src);
		break;
	case SBT_REC_EGRESS:
		handle_egress(s, data, size);
		break;
	case SBT_REC_EXEC_FAILED:
		handle_exec_failed(s, data, size, &src);
		break;
	case -1:
		decode_error(s, SBT_DECODE_SHORT);
		break;
	default:
		decode_error(s, SBT_DECODE_BAD_TYPE);
		break;
	}
	return 0;
}

/* ---- guest streams -------------------------------------------------------------- */

/* A RECORD of a guest stream: an exec of the guest kernel (the agent sends no other). */
static void handle_guest_record(void *arg, const void *data, size_t size)
{
	struct session_guest *g = arg;

	if (sbt_record_type(data, size) != SBT_REC_EXEC) {
		decode_error(g->s, SBT_DECODE_BAD_TYPE);
		return;
	}
	g->src.boot_offset = sbt_guest_feed_boot_offset(&g->feed);
	g->src.guest_cg = g->feed.hello.cgroup_id;
	g->src.guest_since = g->feed.hello.sent_boot_ns + (uint64_t)g->src.boot_offset;
	handle_exec(g->s, data, size, &g->src);
}

int sbt_session_guest_open(struct sbt_session *s, uint32_t slot, const char *path)
{
	struct sbt_session_slot *sl = sbt_session_slot(s, slot);
	struct session_guest *g;
	int err;

	if (!sl || sl->guest)
		return -EINVAL;
	g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	g->s = s;
	g->src = (struct exec_src){ .slot = slot, .guest = true };
	/* no lookup: a guest's processes are not in the host's /proc */
	g->src.proc = sbt_proctab_new(NULL, NULL);
	if (!g->src.proc) {
		free(g);
		return -ENOMEM;
	}
	sl->guest = g;
	err = sbt_guest_feed_open(&g->feed, path, handle_guest_record, g);
	/* not fatal: the slot's trace is then incomplete, and says why */
	if (err)
		sbt_log("sandbox %s: its guest's exec stream %s: %s; its execs will not be seen "
			"(exec_complete false)",
			sl->target->name, path, strerror(-err));
	return 0;
}

void sbt_session_guests_poll(struct sbt_session *s, size_t max_bytes)
{
	for (uint32_t i = 0; i < s->max; i++)
		if (s->slots[i].used && s->slots[i].guest)
			sbt_guest_feed_poll(&s->slots[i].guest->feed, max_bytes, sbt_mono_ms(),
					    sbt_now_epoch_ns());
}

/* What the stream told of its agent, for TraceStopped. */
static void guest_info(struct session_guest *g)
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

/* ---- processes already there ------------------------------------------------------ */

/* Record one cgroup's processes, then recurse into its children. */
static void snapshot_cgroup(struct sbt_session *s, int dirfd, int depth)
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

			if (pid && sbt_proc_lookup_procfs(pid, &info, &s->procfs))
				sbt_proctab_seen(s->proc, pid, info.ppid, info.comm);
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
		snapshot_cgroup(s, child, depth + 1);
		close(child);
	}
	closedir(d);
}

void sbt_session_snapshot(struct sbt_session *s, uint32_t slot)
{
	struct sbt_session_slot *sl = sbt_session_slot(s, slot);
	int fd;

	if (!sl || !sbt_target_has_cgroup(sl->target))
		return;
	fd = open(sl->target->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return;
	snapshot_cgroup(s, fd, 0);
	close(fd);
}

/* ---- accounting ---------------------------------------------------------------------- */

static int read_stats(struct sbt_session *s, uint32_t slot, struct sbt_sandbox_stats *out)
{
	memset(out, 0, sizeof(*out));
	return s->ops.read_stats ? s->ops.read_stats(s->ops.arg, slot, out) : -ENOENT;
}

static void slot_drops(struct sbt_session *s, struct sbt_session_slot *sl)
{
	struct sbt_sandbox_stats k;
	struct sbt_ev_lost ev;

	if (read_stats(s, sl->target->slot, &k))
		return;
	sl->n.kernel_execs = k.execs;
	sl->n.kernel_lost = k.lost;
	sl->n.kernel_eg = k.egress;
	sl->n.kernel_eg_lost = k.egress_lost;
	sl->n.kernel_failed = k.failed;
	sl->n.kernel_failed_lost = k.lost_failed;
	if (sbt_lost_since(k.lost_failed, &sl->n.failed_lost_reported, "exec_failed", &ev))
		emit_lost(s, sl->target, &ev);
	if (sbt_lost_since(k.egress_lost, &sl->n.eg_lost_reported, "egress", &ev))
		emit_lost(s, sl->target, &ev);
	if (sbt_lost_since(k.lost, &sl->n.lost_reported, "exec", &ev))
		emit_lost(s, sl->target, &ev);
}

void sbt_session_drops(struct sbt_session *s)
{
	for (uint32_t i = 0; i < s->max; i++)
		if (s->slots[i].used)
			slot_drops(s, &s->slots[i]);
}

bool sbt_session_pending(struct sbt_session *s)
{
	for (uint32_t i = 0; i < s->max; i++) {
		struct sbt_session_slot *sl = &s->slots[i];
		struct sbt_sandbox_stats k;

		if (sl->used && read_stats(s, i, &k) == 0 &&
		    (sl->n.received + k.lost < k.execs || sl->n.eg_received < k.egress ||
		     sl->n.failed_received < k.failed))
			return true;
	}
	return false;
}

/* The slot's guest stream into its totals: its execs, and why they are not complete. */
static const char *final_guest(struct sbt_session *s, struct sbt_session_slot *sl,
			       struct sbt_target_totals *t)
{
	struct session_guest *g = sl->guest;
	struct sbt_guest_account ga = { 0 };

	sbt_guest_feed_account(&g->feed, sbt_mono_ms(), &ga);
	if (ga.lost)
		emit_lost(s, sl->target,
			  &(struct sbt_ev_lost){ .lost = ga.lost,
						 .reason = g->feed.last.lost ? "ringbuf_full"
									     : "not_received",
						 .kind = "exec",
						 .detail = ga.reason });
	if (ga.reason)
		sbt_log("sandbox %s: the guest's exec stream is not complete (%s)",
			sl->target->name, ga.reason);
	t->execs += ga.execs;
	t->received += ga.received;
	t->lost += ga.lost;
	guest_info(g);
	t->guest = &g->info;
	return ga.reason;
}

/* --egress learn: the slot's AllowlistProposed, after its ShellInvocationObserved. */
static void learn_final(struct sbt_session *s, struct sbt_session_slot *sl, bool egress_complete)
{
	struct sbt_event ev = { .kind = SBT_EV_ALLOWLIST };
	struct sbt_learn_final f;

	if (sbt_learn_final_make(sl->learn, sl->egress, sl->target->name, &s->learn_out_written,
				 egress_complete, &f))
		return;
	ev.ts = sbt_now_epoch_ns();
	ev.allowlist = f.ev;
	sbt_session_emit(s, &ev, sl->target);
	sbt_learn_final_free(&f);
}

static void slot_final(struct sbt_session *s, struct sbt_session_slot *sl, bool flush,
		       struct sbt_target_totals *t)
{
	const char *why = s->decode_errors ? "decode_error" : "not_received", *guest_why = NULL;
	struct sbt_event ev = { .kind = SBT_EV_SUMMARY };
	uint64_t missing = 0, eg_missing = 0;
	bool exec_visible;

	memset(t, 0, sizeof(*t));
	slot_drops(s, sl);
	/* its failed execs waiting for a PATH search's end: none comes now */
	sbt_execfail_flush(s->fails, sl->target->slot, UINT64_MAX);
	if (flush && s->ops.flush_folds)
		s->ops.flush_folds(s->ops.arg, s, sl->target->slot);
	exec_visible = strcmp(sbt_target_vis_exec(sl->target), "none") != 0;
	if (sl->n.kernel_execs > sl->n.received)
		missing = sl->n.kernel_execs - sl->n.received;
	/* a failed exec lost may be a shell that was tried: the execs are not complete */
	if (sl->n.kernel_failed > sl->n.failed_received)
		missing += sl->n.kernel_failed - sl->n.failed_received;
	if (sl->n.kernel_eg > sl->n.eg_received)
		eg_missing = sl->n.kernel_eg - sl->n.eg_received;
	/* Records the kernel sent that never decoded, or that vanished. */
	if (missing > sl->n.lost_reported)
		emit_lost(s, sl->target,
			  &(struct sbt_ev_lost){ .lost = missing - sl->n.lost_reported,
						 .lost_total = missing,
						 .has_total = true,
						 .reason = why,
						 .kind = "exec" });
	if (eg_missing)
		emit_lost(s, sl->target,
			  &(struct sbt_ev_lost){
				  .lost = eg_missing, .reason = why, .kind = "egress" });
	t->execs = sl->n.kernel_execs;
	t->received = sl->n.received;
	t->lost = missing + sl->n.kernel_failed_lost;
	t->first_exec_ts = sl->n.first_exec_ts;
	t->eg_records = sl->n.eg_received;
	t->eg_events = sl->n.eg_events;
	t->eg_denied = sl->n.eg_denied;
	t->eg_lost = sl->n.kernel_eg_lost + eg_missing;
	if (sl->guest)
		guest_why = final_guest(s, sl, t);
	/* Execs inside a guest kernel without an agent were never visible: no count is complete. */
	t->complete = sbt_completeness_of(t, exec_visible, s->decode_errors);
	if (guest_why) {
		t->complete.exec = t->complete.all = false;
		t->complete.exec_reason = guest_why;
	} else if (sl->target->adopted) { /* it ran before it was observed: execs, connects */
		t->complete.exec = t->complete.egress = t->complete.all = false;
		t->complete.exec_reason = "adopted";
	}
	ev.ts = sbt_now_epoch_ns();
	ev.summary.agg = sl->agg;
	ev.summary.complete = t->complete;
	ev.summary.exec_visible = exec_visible;
	sbt_session_emit(s, &ev, sl->target);
	if (sl->learn)
		learn_final(s, sl, t->complete.egress);
}

void sbt_session_final(struct sbt_session *s, uint32_t slot, struct sbt_target_totals *t)
{
	struct sbt_session_slot *sl = sbt_session_slot(s, slot);

	if (sl)
		slot_final(s, sl, true, t);
	else
		memset(t, 0, sizeof(*t));
}

void sbt_session_stopped(struct sbt_session *s, const char *reason, uint64_t duration_ms)
{
	struct sbt_target_totals *tot = calloc(s->nr ? s->nr : 1, sizeof(*tot));
	const char **names = calloc(s->nr ? s->nr : 1, sizeof(*names));
	struct sbt_event ev = { .kind = SBT_EV_STOPPED };
	uint32_t n = 0;

	/* one walk of the fold table for every slot's tail */
	if (s->ops.flush_folds)
		s->ops.flush_folds(s->ops.arg, s, SBT_SESSION_ALL);
	for (uint32_t i = 0; tot && names && i < s->max && n < s->nr; i++) {
		if (!s->slots[i].used)
			continue;
		slot_final(s, &s->slots[i], false, &tot[n]);
		names[n++] = s->slots[i].target->name;
	}
	if (!tot || !names)
		sbt_log("out of memory: TraceStopped without its sandboxes");
	if (s->decode_errors)
		emit_lost(s, NULL,
			  &(struct sbt_ev_lost){
				  .lost = s->decode_errors,
				  .reason = "decode_error",
				  .detail = sbt_decode_strerror(s->first_decode_err) });
	ev.ts = sbt_now_epoch_ns();
	ev.stopped.reason = reason;
	ev.stopped.duration_ms = duration_ms;
	ev.stopped.decode_errors = s->decode_errors;
	ev.stopped.totals = tot;
	ev.stopped.names = names;
	ev.stopped.nr = n;
	sbt_session_emit(s, &ev, NULL);
	free(tot);
	free(names);
}

void sbt_session_stats(struct sbt_session *s, const struct sbt_ev_stats *base)
{
	struct sbt_stats_sandbox *sbs = calloc(s->nr ? s->nr : 1, sizeof(*sbs));
	struct sbt_event ev = { .kind = SBT_EV_STATS, .ts = sbt_now_epoch_ns() };
	uint32_t n = 0;

	if (!sbs)
		return;
	for (uint32_t i = 0; i < s->max && n < s->nr; i++) {
		const struct sbt_session_slot *sl = &s->slots[i];
		const struct sbt_guest_feed *g = sl->guest ? &sl->guest->feed : NULL;

		if (!sl->used)
			continue;
		sbs[n++] = (struct sbt_stats_sandbox){
			.name = sl->target->name,
			.execs = sl->n.kernel_execs + (g ? g->last.execs : 0),
			.received = sl->n.received + (g ? g->records : 0),
			.lost = sl->n.kernel_lost,
			.shells = sbt_shellagg_count(sl->agg),
		};
	}
	ev.stats = *base;
	ev.stats.decode_errors = s->decode_errors;
	ev.stats.targets = sbs;
	ev.stats.nr = n;
	sbt_session_emit(s, &ev, NULL);
	free(sbs);
}
