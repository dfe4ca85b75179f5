// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for the session core of trace and agent (userspace/session/session.c):
 * records built here, the kernel's counters and fold table faked through
 * its ops, every event caught by a sink of the test's own.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "exec/shellagg.h"
#include "session/session.h"

#define MAX_SLOTS  8
#define MAX_EVENTS 64

/* What the sink keeps of one event. */
struct caught {
	enum sbt_event_kind kind;
	char sandbox[PATH_MAX];
	uint64_t ts;
	struct sbt_ev_lost lost;
	char lost_detail[64];
	char rule[64];
	uint64_t count;	      /* egress: the record's count */
	bool complete_exec;   /* summary */
	bool complete_egress; /* summary */
	uint64_t stopped_decode_errors;
	uint64_t shells, failed, unidentified; /* summary */
	bool exe_unidentified;		       /* exec */
	char failed_path[SBT_PATH_MAX];	       /* ProcessExecFailed */
	size_t ntried;
	bool failed_shell;
	struct sbt_target_totals totals[MAX_SLOTS]; /* TraceStopped's */
	uint32_t nr;
};

struct world {
	struct sbt_sink sink;
	struct caught ev[MAX_EVENTS];
	size_t nr_ev;
	struct sbt_trace_opts opts;
	struct sbt_session s;
	struct sbt_target t[MAX_SLOTS];
	struct sbt_sandbox_stats stats[MAX_SLOTS]; /* the kernel's counters */
	struct sbt_fold_key fold_key[4];	   /* the fold table */
	uint64_t fold_val[4];
	size_t nr_folds;
	uint32_t unknown_asked; /* the slot unknown_slot was called for, +1 */
	bool add_on_unknown;
};

static void catch_event(struct sbt_sink *sink, const struct sbt_event *ev)
{
	struct world *w = (struct world *)sink;
	struct caught *c;

	assert_true(w->nr_ev < MAX_EVENTS);
	c = &w->ev[w->nr_ev++];
	memset(c, 0, sizeof(*c));
	c->kind = ev->kind;
	c->ts = ev->ts;
	if (ev->sandbox)
		snprintf(c->sandbox, sizeof(c->sandbox), "%s", ev->sandbox->name);
	switch (ev->kind) {
	case SBT_EV_LOST:
		c->lost = ev->lost;
		if (ev->lost.detail)
			snprintf(c->lost_detail, sizeof(c->lost_detail), "%s", ev->lost.detail);
		c->lost.detail = NULL;
		break;
	case SBT_EV_EGRESS:
		c->count = ev->egress.rec->count;
		if (ev->egress.rule)
			snprintf(c->rule, sizeof(c->rule), "%s", ev->egress.rule);
		break;
	case SBT_EV_SUMMARY:
		c->complete_exec = ev->summary.complete.exec;
		c->complete_egress = ev->summary.complete.egress;
		c->shells = sbt_shellagg_count(ev->summary.agg);
		c->failed = sbt_shellagg_failed_count(ev->summary.agg);
		c->unidentified = sbt_shellagg_unidentified_count(ev->summary.agg);
		break;
	case SBT_EV_EXEC:
		c->exe_unidentified = ev->exec.unidentified;
		break;
	case SBT_EV_EXEC_FAILED:
		snprintf(c->failed_path, sizeof(c->failed_path), "%s",
			 ev->exec_failed.rec->filename);
		c->ntried = ev->exec_failed.ntried;
		c->failed_shell = ev->exec_failed.shell != NULL;
		break;
	case SBT_EV_STOPPED:
		c->stopped_decode_errors = ev->stopped.decode_errors;
		c->nr = ev->stopped.nr;
		for (uint32_t i = 0; i < ev->stopped.nr && i < MAX_SLOTS; i++)
			c->totals[i] = ev->stopped.totals[i];
		break;
	default:
		break;
	}
}

static const struct sbt_sink_ops catch_ops = { .name = "test", .emit = catch_event };

static int fake_stats(void *arg, uint32_t slot, struct sbt_sandbox_stats *out)
{
	struct world *w = arg;

	if (slot >= MAX_SLOTS)
		return -1;
	*out = w->stats[slot];
	return 0;
}

static void fake_folds(void *arg, struct sbt_session *s, uint32_t slot)
{
	struct world *w = arg;

	for (size_t i = 0; i < w->nr_folds; i++)
		if (w->fold_val[i] && (slot == SBT_SESSION_ALL || w->fold_key[i].slot == slot)) {
			sbt_session_fold_tail(s, &w->fold_key[i], w->fold_val[i]);
			w->fold_val[i] = 0;
		}
}

static void add_target(struct world *w, uint32_t slot, const struct sbt_egress_cfg *eg)
{
	struct sbt_target *t = &w->t[slot];

	memset(t, 0, sizeof(*t));
	snprintf(t->name, sizeof(t->name), "/test/sb%u", slot);
	t->cgroup_id = 1000 + slot; /* no path: the snapshot has nothing to read */
	t->slot = slot;
	assert_int_equal(sbt_session_add(&w->s, t, eg), 0);
}

static void fake_unknown(void *arg, uint32_t slot)
{
	struct world *w = arg;

	w->unknown_asked = slot + 1;
	if (w->add_on_unknown)
		add_target(w, slot, NULL);
}

static int setup(void **state)
{
	struct world *w = calloc(1, sizeof(*w));
	const struct sbt_session_ops ops = { .read_stats = fake_stats,
					     .flush_folds = fake_folds,
					     .unknown_slot = fake_unknown,
					     .arg = w };

	assert_non_null(w);
	w->sink.ops = &catch_ops;
	assert_int_equal(sbt_sinks_add(&w->opts, &w->sink), 0);
	assert_int_equal(sbt_session_init(&w->s, &w->opts, MAX_SLOTS, &ops), 0);
	*state = w;
	return 0;
}

static int teardown(void **state)
{
	struct world *w = *state;

	sbt_session_free(&w->s);
	free(w);
	return 0;
}

/* An exec record of `slot` at boot time ts: /bin/true, argv "true". */
static size_t exec_record(unsigned char *buf, uint32_t slot, uint64_t ts, uint32_t pid)
{
	static const char file[] = "/bin/true", argv[] = "true";
	struct sbt_exec_record r;
	size_t n = sizeof(r) + sizeof(file) + 1 + sizeof(argv);

	memset(&r, 0, sizeof(r));
	r.hdr.type = SBT_REC_EXEC;
	r.hdr.abi = SBT_ABI_VERSION;
	r.hdr.size = (__u32)n;
	r.ts_boot_ns = ts;
	r.slot = slot;
	r.pid = r.tid = pid;
	r.ppid = 1;
	r.flags = SBT_EXEC_EXE_UNAVAILABLE;
	r.filename_len = sizeof(file);
	r.interp_len = 1;
	r.argv_len = r.argv_full_len = sizeof(argv);
	memcpy(r.comm, "true", 5);
	memcpy(r.parent_comm, "init", 5);
	memcpy(buf, &r, sizeof(r));
	memcpy(buf + sizeof(r), file, sizeof(file));
	buf[sizeof(r) + sizeof(file)] = '\0';
	memcpy(buf + sizeof(r) + sizeof(file) + 1, argv, sizeof(argv));
	return n;
}

/* A failed exec record of `slot`: `path`, argv "sh -c id", errno ENOENT. */
static size_t fail_record(unsigned char *buf, uint32_t slot, uint32_t pid, const char *path)
{
	static const char args[] = "sh\0-c\0id";
	struct sbt_exec_fail_record r;
	size_t fl = strlen(path) + 1, n = sizeof(r) + fl + sizeof(args);

	memset(&r, 0, sizeof(r));
	r.hdr.type = SBT_REC_EXEC_FAILED;
	r.hdr.abi = SBT_ABI_VERSION;
	r.hdr.size = (__u32)n;
	r.slot = slot;
	r.pid = r.tid = pid;
	r.ppid = 1;
	r.err = -2;
	r.dirfd = -100;
	r.filename_len = (__u16)fl;
	r.argv_len = sizeof(args);
	r.argc = 3;
	memcpy(r.comm, "make", 5);
	memcpy(buf, &r, sizeof(r));
	memcpy(buf + sizeof(r), path, fl);
	memcpy(buf + sizeof(r) + fl, args, sizeof(args));
	return n;
}

static size_t egress_record(unsigned char *buf, uint32_t slot, uint8_t verdict, uint32_t rule_id,
			    uint64_t count)
{
	struct sbt_egress_record r;

	memset(&r, 0, sizeof(r));
	r.hdr.type = SBT_REC_EGRESS;
	r.hdr.abi = SBT_ABI_VERSION;
	r.hdr.size = sizeof(r);
	r.ts_boot_ns = 5000;
	r.count = count;
	r.slot = slot;
	r.pid = 77;
	r.rule_id = rule_id;
	r.dport = 443;
	r.family = AF_INET;
	r.proto = 6; /* TCP */
	r.hook = SBT_HOOK_CONNECT4;
	r.verdict = verdict;
	r.reason = verdict == SBT_VERDICT_ALLOWED ? SBT_REASON_RULE : SBT_REASON_NOT_IN_ALLOWLIST;
	r.sock_type = SOCK_STREAM;
	r.daddr[10] = r.daddr[11] = 0xff;
	r.daddr[12] = 198;
	r.daddr[13] = 51;
	r.daddr[14] = 100;
	r.daddr[15] = 7;
	memcpy(r.comm, "curl", 5);
	memcpy(buf, &r, sizeof(r));
	return sizeof(r);
}

static const struct caught *find(const struct world *w, enum sbt_event_kind kind, size_t nth)
{
	for (size_t i = 0; i < w->nr_ev; i++)
		if (w->ev[i].kind == kind && nth-- == 0)
			return &w->ev[i];
	return NULL;
}

static size_t count_kind(const struct world *w, enum sbt_event_kind kind)
{
	size_t n = 0;

	for (size_t i = 0; i < w->nr_ev; i++)
		n += w->ev[i].kind == kind;
	return n;
}

static void record(struct world *w, unsigned char *buf, size_t n)
{
	assert_int_equal(sbt_session_record(&w->s, buf, n), 0);
}

/*
 * Drift 1: the agent kept the first exec seen as first_exec_ts, the trace the
 * earliest. Records of two CPUs (or a guest stream and the host) arrive out of
 * order: the session keeps the earliest for both.
 */
static void test_first_exec_is_the_earliest(void **state)
{
	struct world *w = *state;
	unsigned char buf[512];
	const struct caught *st;

	add_target(w, 0, NULL);
	w->stats[0].execs = 2;
	record(w, buf, exec_record(buf, 0, 2000, 10));
	record(w, buf, exec_record(buf, 0, 1000, 11));
	assert_int_equal(count_kind(w, SBT_EV_EXEC), 2);
	assert_int_equal(find(w, SBT_EV_EXEC, 1)->ts, 1000);
	sbt_session_stopped(&w->s, "test", 1);
	st = find(w, SBT_EV_STOPPED, 0);
	assert_non_null(st);
	assert_int_equal(st->nr, 1);
	assert_int_equal(st->totals[0].first_exec_ts, 1000);
	assert_int_equal(st->totals[0].execs, 2);
	assert_int_equal(st->totals[0].received, 2);
	assert_true(st->totals[0].complete.exec);
}

/*
 * Drift 2: a record of an unknown type was counted BAD_FIELD by the agent and
 * BAD_TYPE by the trace. One dispatch: BAD_TYPE, said at stop, and every
 * sandbox's counts spoiled (a record that did not decode may be anyone's).
 */
static void test_unknown_type_is_bad_type(void **state)
{
	struct world *w = *state;
	unsigned char buf[512];
	struct sbt_record_hdr hdr = { .type = 0x7777, .abi = SBT_ABI_VERSION, .size = 64 };
	const struct caught *lost, *st;

	add_target(w, 0, NULL);
	memset(buf, 0, 64);
	memcpy(buf, &hdr, sizeof(hdr));
	record(w, buf, 64);
	assert_int_equal(w->s.decode_errors, 1);
	assert_int_equal(w->s.first_decode_err, SBT_DECODE_BAD_TYPE);
	sbt_session_stopped(&w->s, "test", 1);
	lost = find(w, SBT_EV_LOST, 0);
	assert_non_null(lost);
	assert_string_equal(lost->lost.reason, "decode_error");
	assert_string_equal(lost->lost_detail, sbt_decode_strerror(SBT_DECODE_BAD_TYPE));
	assert_int_equal(lost->sandbox[0], '\0'); /* run-wide */
	st = find(w, SBT_EV_STOPPED, 0);
	assert_int_equal(st->stopped_decode_errors, 1);
	assert_false(st->totals[0].complete.exec);
	assert_false(st->totals[0].complete.egress);
}

/*
 * Egress accounting (the agent had none: totals.egress 0, and complete after
 * the kernel dropped records): verdicts counted with their folds, the folded
 * tail reported with its record's details, drops said and spoiling egress.
 */
static void test_egress_accounted(void **state)
{
	struct world *w = *state;
	struct sbt_rule rule = { .id = 1, .kind = SBT_RULE_CIDR };
	struct sbt_egress_cfg cfg = { .rules = &rule, .nr_rules = 1, .resolver_rule_id = 2 };
	unsigned char buf[512];
	const struct caught *st, *tail;
	struct sbt_fold_key k;

	snprintf(rule.text, sizeof(rule.text), "cidr 198.51.100.0/24");
	add_target(w, 0, &cfg);
	record(w, buf, egress_record(buf, 0, SBT_VERDICT_ALLOWED, 1, 1));
	record(w, buf, egress_record(buf, 0, SBT_VERDICT_DENIED, 0, 3));
	assert_string_equal(find(w, SBT_EV_EGRESS, 0)->rule, "cidr 198.51.100.0/24");
	/* the allowed key folded 5 more since its record */
	memset(&k, 0, sizeof(k));
	k.slot = 0;
	k.pid = 77;
	k.daddr[10] = k.daddr[11] = 0xff;
	k.daddr[12] = 198;
	k.daddr[13] = 51;
	k.daddr[14] = 100;
	k.daddr[15] = 7;
	k.dport = 443;
	k.proto = 6;
	k.hook = SBT_HOOK_CONNECT4;
	k.verdict = SBT_VERDICT_ALLOWED;
	k.reason = SBT_REASON_RULE;
	w->fold_key[0] = k;
	w->fold_val[0] = 5;
	w->nr_folds = 1;
	/* the kernel sent 3 records and could not send 2 */
	w->stats[0].egress = 3;
	w->stats[0].egress_lost = 2;
	sbt_session_drops(&w->s);
	assert_int_equal(find(w, SBT_EV_LOST, 0)->lost.lost, 2);
	assert_string_equal(find(w, SBT_EV_LOST, 0)->lost.kind, "egress");
	sbt_session_stopped(&w->s, "test", 1);
	tail = find(w, SBT_EV_EGRESS, 2);
	assert_non_null(tail);
	assert_int_equal(tail->count, 5);
	assert_string_equal(tail->rule, "cidr 198.51.100.0/24"); /* its record's details */
	st = find(w, SBT_EV_STOPPED, 0);
	assert_int_equal(st->totals[0].eg_records, 2);
	assert_int_equal(st->totals[0].eg_events, 1 + 3 + 5);
	assert_int_equal(st->totals[0].eg_denied, 3);
	/* 2 dropped by the kernel, 1 sent but never received */
	assert_int_equal(st->totals[0].eg_lost, 3);
	assert_false(st->totals[0].complete.egress);
	assert_false(find(w, SBT_EV_SUMMARY, 0)->complete_egress);
}

/* Exec drops the kernel counted are said once, and what never arrived at the end. */
static void test_exec_drops_and_missing(void **state)
{
	struct world *w = *state;
	unsigned char buf[512];
	const struct caught *st;

	add_target(w, 0, NULL);
	record(w, buf, exec_record(buf, 0, 1000, 10));
	w->stats[0].execs = 5;
	w->stats[0].lost = 2;
	assert_true(sbt_session_pending(&w->s)); /* 1 + 2 lost < 5 */
	sbt_session_drops(&w->s);
	sbt_session_drops(&w->s); /* nothing new: nothing said */
	assert_int_equal(count_kind(w, SBT_EV_LOST), 1);
	assert_string_equal(find(w, SBT_EV_LOST, 0)->lost.reason, "ringbuf_full");
	sbt_session_stopped(&w->s, "test", 1);
	/* 4 missing: 2 said as dropped, the other 2 not received */
	assert_int_equal(find(w, SBT_EV_LOST, 1)->lost.lost, 2);
	assert_string_equal(find(w, SBT_EV_LOST, 1)->lost.reason, "not_received");
	st = find(w, SBT_EV_STOPPED, 0);
	assert_int_equal(st->totals[0].lost, 4);
	assert_false(st->totals[0].complete.exec);
}

/* The agent's dynamic slots: a record of a slot not in use asks, and is taken once added. */
static void test_unknown_slot_asks(void **state)
{
	struct world *w = *state;
	unsigned char buf[512];

	record(w, buf, exec_record(buf, 3, 1000, 10));
	assert_int_equal(w->unknown_asked, 3 + 1);
	assert_int_equal(w->s.decode_errors, 1); /* nobody added it */
	assert_int_equal(w->s.first_decode_err, SBT_DECODE_BAD_FIELD);
	w->add_on_unknown = true;
	record(w, buf, exec_record(buf, 4, 1000, 11));
	assert_int_equal(w->unknown_asked, 4 + 1);
	assert_int_equal(w->s.decode_errors, 1);
	assert_string_equal(find(w, SBT_EV_EXEC, 0)->sandbox, "/test/sb4");
	/* out of the table: not asked */
	w->unknown_asked = 0;
	record(w, buf, exec_record(buf, MAX_SLOTS, 1000, 12));
	assert_int_equal(w->unknown_asked, 0);
	assert_int_equal(w->s.decode_errors, 2);
}

/* A slot removed and taken again starts from nothing: counts, shells, fold details. */
static void test_slot_reuse_starts_clean(void **state)
{
	struct world *w = *state;
	unsigned char buf[512];
	struct sbt_target_totals t;
	struct sbt_fold_key k = { 0 };

	add_target(w, 1, NULL);
	record(w, buf, exec_record(buf, 1, 1000, 10));
	record(w, buf, egress_record(buf, 1, SBT_VERDICT_DENIED, 0, 1));
	w->stats[1].execs = 1;
	w->stats[1].egress = 1;
	sbt_session_final(&w->s, 1, &t);
	assert_int_equal(t.received, 1);
	assert_true(t.complete.all);
	sbt_session_remove(&w->s, 1);
	assert_null(sbt_session_slot(&w->s, 1));
	assert_int_equal(w->s.nr, 0);
	memset(&w->stats[1], 0, sizeof(w->stats[1]));
	add_target(w, 1, NULL);
	/* a tail of the new sandbox: no details left from the old one's record */
	k.slot = 1;
	k.pid = 77;
	k.verdict = SBT_VERDICT_DENIED;
	w->fold_key[0] = k;
	w->fold_val[0] = 2;
	w->nr_folds = 1;
	w->nr_ev = 0;
	sbt_session_final(&w->s, 1, &t);
	assert_int_equal(t.received, 0);
	assert_int_equal(t.first_exec_ts, 0);
	assert_int_equal(t.eg_events, 2);
	assert_int_equal(find(w, SBT_EV_EGRESS, 0)->count, 2);
}

/*
 * A PATH search that found its shell is no failure; one that found none is
 * one ProcessExecFailed (every path tried) and a failed shell in the count.
 */
static void test_failed_execs(void **state)
{
	struct world *w = *state;
	unsigned char buf[512];
	const struct caught *c;

	add_target(w, 0, NULL);
	w->stats[0].execs = 1;
	w->stats[0].failed = 4;
	record(w, buf, fail_record(buf, 0, 20, "/usr/local/bin/sh"));
	record(w, buf, exec_record(buf, 0, 1000, 20)); /* /bin/true: another name */
	record(w, buf, fail_record(buf, 0, 21, "/usr/local/bin/sh"));
	record(w, buf, fail_record(buf, 0, 21, "/usr/bin/sh"));
	record(w, buf, fail_record(buf, 0, 21, "/bin/sh"));
	assert_int_equal(count_kind(w, SBT_EV_EXEC_FAILED), 1); /* pid 20's, at its exec */
	sbt_session_stopped(&w->s, "test", 1);
	assert_int_equal(count_kind(w, SBT_EV_EXEC_FAILED), 2);
	c = find(w, SBT_EV_EXEC_FAILED, 1);
	assert_string_equal(c->failed_path, "/usr/local/bin/sh");
	assert_int_equal(c->ntried, 3);
	assert_true(c->failed_shell);
	c = find(w, SBT_EV_SUMMARY, 0);
	assert_int_equal(c->shells, 2);
	assert_int_equal(c->failed, 2);
	assert_true(c->complete_exec);
	assert_true(find(w, SBT_EV_STOPPED, 0)->totals[0].complete.exec);
}

/* A failed exec the kernel counted and never sent: the execs are not complete. */
static void test_failed_exec_lost(void **state)
{
	struct world *w = *state;

	add_target(w, 0, NULL);
	w->stats[0].failed = 1;
	w->stats[0].lost_failed = 1;
	sbt_session_stopped(&w->s, "test", 1);
	assert_false(find(w, SBT_EV_SUMMARY, 0)->complete_exec);
	assert_non_null(find(w, SBT_EV_LOST, 0));
}

/* An ELF written since the sandbox began, not a shell: unidentified; an older one is not. */
static void test_unidentified_elf(void **state)
{
	struct world *w = *state;
	unsigned char buf[512];
	struct sbt_exec_record *r = (struct sbt_exec_record *)buf;

	add_target(w, 0, NULL);
	w->stats[0].execs = 2;
	exec_record(buf, 0, 1000, 30);
	r->flags = 0;
	memcpy(r->exe_head, "\177ELF", 4);
	r->exe_ctime = w->s.slots[0].own_since + 1;
	record(w, buf, r->hdr.size);
	r->exe_ctime = w->s.slots[0].own_since - 1000000000ull;
	record(w, buf, r->hdr.size);
	assert_true(find(w, SBT_EV_EXEC, 0)->exe_unidentified);
	assert_false(find(w, SBT_EV_EXEC, 1)->exe_unidentified);
	sbt_session_stopped(&w->s, "test", 1);
	assert_int_equal(find(w, SBT_EV_SUMMARY, 0)->unidentified, 1);
	assert_int_equal(find(w, SBT_EV_SUMMARY, 0)->shells, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_failed_execs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_failed_exec_lost, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unidentified_elf, setup, teardown),
		cmocka_unit_test_setup_teardown(test_first_exec_is_the_earliest, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unknown_type_is_bad_type, setup, teardown),
		cmocka_unit_test_setup_teardown(test_egress_accounted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exec_drops_and_missing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unknown_slot_asks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_slot_reuse_starts_clean, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
