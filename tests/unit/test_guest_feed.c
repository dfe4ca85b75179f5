// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for following a guest stream file (userspace/guest_feed.c):
 * a file that grows in any split, and the accounting that says when the
 * guest's execs are complete and, when not, why.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exec/guest_feed.h"
#include "sbtrace.h"

struct tmp {
	char dir[64], path[96];
	int fd; /* the writer */
	uint32_t seq;
};

struct got {
	int n;
	uint8_t first[8];
};

static void on_record(void *arg, const void *data, size_t size)
{
	struct got *g = arg;

	if (g->n < 8)
		g->first[g->n] = size ? *(const uint8_t *)data : 0;
	g->n++;
}

static void tmp_open(struct tmp *t)
{
	memset(t, 0, sizeof(*t));
	strcpy(t->dir, "/tmp/sbt-gf-XXXXXX");
	assert_non_null(mkdtemp(t->dir));
	snprintf(t->path, sizeof(t->path), "%s/exec.stream", t->dir);
	t->fd = open(t->path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	assert_true(t->fd >= 0);
}

static void tmp_close(struct tmp *t)
{
	close(t->fd);
	unlink(t->path);
	rmdir(t->dir);
}

static void put(struct tmp *t, const void *p, size_t n)
{
	assert_int_equal(write(t->fd, p, n), (ssize_t)n);
}

/* A frame with seq+1 (or `seq` when nonzero), its header only when payload is NULL and len 0. */
static void frame(struct tmp *t, enum sbt_gs_type type, const void *payload, uint32_t len,
		  uint32_t seq)
{
	uint8_t hdr[SBT_GS_HDR_LEN];

	t->seq = seq ? seq : t->seq + 1;
	assert_int_equal(sbt_gs_header(hdr, type, t->seq, len), 0);
	put(t, hdr, sizeof(hdr));
	if (len)
		put(t, payload, len);
}

static void hello(struct tmp *t, uint32_t abi)
{
	struct sbt_gs_hello h = { .abi = abi, .hb_ms = 500, .sent_boot_ns = 1000000000 };

	strcpy(h.mode, "tp_btf");
	frame(t, SBT_GS_HELLO, &h, sizeof(h), 0);
}

static void record(struct tmp *t, uint8_t b)
{
	uint8_t rec[32] = { b };

	frame(t, SBT_GS_RECORD, rec, sizeof(rec), 0);
}

static void counters(struct tmp *t, enum sbt_gs_type type, uint64_t execs, uint64_t records,
		     uint64_t lost)
{
	struct sbt_gs_counters c = { .execs = execs, .records = records, .lost = lost };

	frame(t, type, &c, sizeof(c), 0);
}

static void account(struct sbt_guest_feed *f, uint64_t now, struct sbt_guest_account *a)
{
	/* read at the host's epoch 5e9 + now ms */
	sbt_guest_feed_poll(f, SIZE_MAX, now, 5000000000ull + now * 1000000ull);
	sbt_guest_feed_account(f, now, a);
}

/* One test's stream file, the feed on it, what it handed on, its accounting. */
struct fx {
	struct tmp t;
	struct sbt_guest_feed f;
	struct got g;
	struct sbt_guest_account a;
};

static void fx_open(struct fx *x)
{
	memset(x, 0, sizeof(*x));
	tmp_open(&x->t);
	assert_int_equal(sbt_guest_feed_open(&x->f, x->t.path, on_record, &x->g), 0);
}

static void fx_close(struct fx *x)
{
	sbt_guest_feed_close(&x->f);
	tmp_close(&x->t);
}

/* HELLO, records, BYE with equal counts: complete; records come once, in order. */
static void test_whole(void **state)
{
	struct fx x;

	(void)state;
	fx_open(&x);
	account(&x.f, 1000, &x.a);
	assert_string_equal(x.a.reason, "guest_agent_absent"); /* nothing yet */
	hello(&x.t, SBT_ABI_VERSION);
	record(&x.t, 7);
	account(&x.f, 1000, &x.a);
	/* HELLO written at the guest's 1 s, read at the host's 6 s */
	assert_int_equal(sbt_guest_feed_boot_offset(&x.f), 5000000000ll);
	assert_string_equal(x.a.reason, "guest_stream_unfinished");
	record(&x.t, 8);
	counters(&x.t, SBT_GS_BYE, 2, 2, 0);
	account(&x.f, 99999, &x.a); /* silence after a BYE does not matter */
	assert_null(x.a.reason);
	assert_int_equal(x.a.execs, 2);
	assert_int_equal(x.a.received, 2);
	assert_int_equal(x.a.lost, 0);
	assert_int_equal(x.g.n, 2);
	assert_int_equal(x.g.first[0], 7);
	assert_int_equal(x.g.first[1], 8);
	fx_close(&x);
}

/* The guest's clock mapped to the host's: the least delivery delay seen wins. */
static void test_clock(void **state)
{
	struct sbt_gs_counters c = { .uptime_ms = 2000 };
	struct sbt_guest_account a;
	struct sbt_guest_feed f;
	struct tmp t;

	(void)state;
	tmp_open(&t);
	assert_int_equal(sbt_guest_feed_open(&f, t.path, NULL, NULL), 0);
	assert_int_equal(sbt_guest_feed_boot_offset(&f), 0);
	hello(&t, SBT_ABI_VERSION); /* written at the guest's 1 s */
	account(&f, 1000, &a);	    /* read at the host's 6 s */
	assert_int_equal(sbt_guest_feed_boot_offset(&f), 5000000000ll);
	frame(&t, SBT_GS_BEAT, &c, sizeof(c), 0); /* written at the guest's 3 s */
	account(&f, 1500, &a);			  /* read at 6.5 s: 3.5 s */
	assert_int_equal(sbt_guest_feed_boot_offset(&f), 3500000000ll);
	c.uptime_ms = 2100;
	frame(&t, SBT_GS_BEAT, &c, sizeof(c), 0); /* 3.1 s, read at 9 s: later, kept */
	account(&f, 4000, &a);
	assert_int_equal(sbt_guest_feed_boot_offset(&f), 3500000000ll);
	sbt_guest_feed_close(&f);
	tmp_close(&t);
}

/* A frame written in pieces across polls is handed on once, when whole. */
static void test_split_growth(void **state)
{
	uint8_t rec[40] = { 9 }, hdr[SBT_GS_HDR_LEN];
	struct fx x;

	(void)state;
	fx_open(&x);
	hello(&x.t, SBT_ABI_VERSION);
	assert_int_equal(sbt_gs_header(hdr, SBT_GS_RECORD, ++x.t.seq, sizeof(rec)), 0);
	put(&x.t, hdr, 5);
	account(&x.f, 10, &x.a);
	put(&x.t, hdr + 5, sizeof(hdr) - 5);
	put(&x.t, rec, 11);
	account(&x.f, 20, &x.a);
	assert_int_equal(x.g.n, 0);
	put(&x.t, rec + 11, sizeof(rec) - 11);
	counters(&x.t, SBT_GS_BYE, 1, 1, 0);
	account(&x.f, 30, &x.a);
	assert_int_equal(x.g.n, 1);
	assert_int_equal(x.g.first[0], 9);
	assert_null(x.a.reason);
	fx_close(&x);
}

/* No BYE: still beating → unfinished; silent for 3 heartbeats → gone. */
static void test_no_bye(void **state)
{
	struct fx x;

	(void)state;
	fx_open(&x);
	hello(&x.t, SBT_ABI_VERSION);
	record(&x.t, 1);
	counters(&x.t, SBT_GS_BEAT, 3, 1, 0);
	account(&x.f, 5000, &x.a);
	assert_string_equal(x.a.reason, "guest_stream_unfinished");
	assert_int_equal(x.a.execs, 3);
	assert_int_equal(x.a.lost, 2);
	sbt_guest_feed_account(&x.f, 5000 + 1500, &x.a);
	assert_string_equal(x.a.reason, "guest_stream_unfinished");
	sbt_guest_feed_account(&x.f, 5000 + 1501, &x.a);
	assert_string_equal(x.a.reason, "guest_agent_gone");
	fx_close(&x);
}

/* A gap breaks the stream for good; nothing after it is handed on. */
static void test_gap(void **state)
{
	struct fx x;

	(void)state;
	fx_open(&x);
	hello(&x.t, SBT_ABI_VERSION);
	record(&x.t, 1);
	x.t.seq++; /* frame 3 never written */
	record(&x.t, 2);
	counters(&x.t, SBT_GS_BYE, 2, 2, 0);
	account(&x.f, 1, &x.a);
	assert_string_equal(x.a.reason, "guest_stream_gap");
	assert_int_equal(x.g.n, 1);
	fx_close(&x);
}

/* Counts that do not add up, each with its reason. */
static void test_counts(void **state)
{
	static const struct {
		uint64_t execs, records, lost;
		const char *reason;
		uint64_t want_lost;
	} cases[] = {
		{ 1, 1, 0, NULL, 0 },
		{ 2, 1, 1, "guest_ringbuf_full", 1 }, /* the guest's ring buffer was full */
		{ 2, 1, 0, "guest_not_received", 1 }, /* counted, never sent */
		{ 1, 2, 0, "guest_not_received", 0 }, /* the agent says it sent more */
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct sbt_guest_account a;
		struct sbt_guest_feed f;
		struct got g = { 0 };
		struct tmp t;

		tmp_open(&t);
		assert_int_equal(sbt_guest_feed_open(&f, t.path, on_record, &g), 0);
		hello(&t, SBT_ABI_VERSION);
		record(&t, 1);
		counters(&t, SBT_GS_BYE, cases[i].execs, cases[i].records, cases[i].lost);
		account(&f, 1, &a);
		if (cases[i].reason)
			assert_string_equal(a.reason, cases[i].reason);
		else
			assert_null(a.reason);
		assert_int_equal(a.lost, cases[i].want_lost);
		sbt_guest_feed_close(&f);
		tmp_close(&t);
	}
}

/* Records of another ABI are never decoded; a file that is not there, or a symlink, is unreadable. */
static void test_refused(void **state)
{
	struct sbt_guest_account a;
	struct sbt_guest_feed f;
	struct got g = { 0 };
	char link[128];
	struct tmp t;

	(void)state;
	tmp_open(&t);
	assert_int_equal(sbt_guest_feed_open(&f, t.path, on_record, &g), 0);
	hello(&t, SBT_ABI_VERSION + 1);
	record(&t, 1);
	counters(&t, SBT_GS_BYE, 1, 1, 0);
	account(&f, 1, &a);
	assert_string_equal(a.reason, "guest_abi_mismatch");
	assert_int_equal(g.n, 0);
	sbt_guest_feed_close(&f);

	snprintf(link, sizeof(link), "%s/link", t.dir);
	assert_int_equal(symlink(t.path, link), 0);
	assert_true(sbt_guest_feed_open(&f, link, on_record, &g) < 0);
	sbt_guest_feed_account(&f, 1, &a);
	assert_string_equal(a.reason, "guest_stream_unreadable");
	sbt_guest_feed_close(&f);
	unlink(link);
	assert_true(sbt_guest_feed_open(&f, t.dir, on_record, &g) < 0); /* a directory */
	sbt_guest_feed_close(&f);
	tmp_close(&t);
	assert_true(sbt_guest_feed_open(&f, t.path, on_record, &g) < 0);
	sbt_guest_feed_account(&f, 1, &a);
	assert_string_equal(a.reason, "guest_stream_unreadable");
	sbt_guest_feed_close(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_whole),	     cmocka_unit_test(test_clock),
		cmocka_unit_test(test_split_growth), cmocka_unit_test(test_no_bye),
		cmocka_unit_test(test_gap),	     cmocka_unit_test(test_counts),
		cmocka_unit_test(test_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
