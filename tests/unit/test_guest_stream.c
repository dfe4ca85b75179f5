// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for the guest stream's frames and reader (userspace/guest_stream.c). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "exec/guest_stream.h"

struct stream {
	uint8_t buf[4096];
	size_t len;
	uint32_t seq;
};

struct seen {
	int n;
	uint8_t types[32];
	uint32_t lens[32];
	uint8_t first_byte[32];
	int stop_at; /* refuse the frame with this index (1-based), 0: never */
};

static int on_frame(void *arg, const struct sbt_gs_frame *f)
{
	struct seen *s = arg;

	if (s->n < 32) {
		s->types[s->n] = f->type;
		s->lens[s->n] = f->len;
		s->first_byte[s->n] = f->len ? f->payload[0] : 0;
	}
	s->n++;
	return s->stop_at && s->n == s->stop_at;
}

static void add(struct stream *st, enum sbt_gs_type type, const void *payload, uint32_t len)
{
	assert_true(st->len + SBT_GS_HDR_LEN + len <= sizeof(st->buf));
	assert_int_equal(sbt_gs_header(st->buf + st->len, type, ++st->seq, len), 0);
	memcpy(st->buf + st->len + SBT_GS_HDR_LEN, payload, len);
	st->len += SBT_GS_HDR_LEN + len;
}

static void add_hello(struct stream *st)
{
	struct sbt_gs_hello h = { .abi = 2, .hb_ms = 500 };

	strcpy(h.mode, "tp_btf");
	strcpy(h.kernel, "6.1.0-guest");
	add(st, SBT_GS_HELLO, &h, sizeof(h));
}

static void add_counters(struct stream *st, enum sbt_gs_type type, uint64_t execs)
{
	struct sbt_gs_counters c = { .uptime_ms = 7, .execs = execs, .records = execs };

	add(st, type, &c, sizeof(c));
}

/* hello, two records, a beat, bye: a normal stream, fed whole and byte by byte. */
static void make_normal(struct stream *st)
{
	memset(st, 0, sizeof(*st));
	add_hello(st);
	add(st, SBT_GS_RECORD, "\x01record-one", 11);
	add(st, SBT_GS_RECORD, "\x02two", 4);
	add_counters(st, SBT_GS_BEAT, 2);
	add_counters(st, SBT_GS_BYE, 2);
}

static void test_normal(void **state)
{
	static const size_t splits[] = { 0, 1, 3, 16, 17, 4096 };
	struct stream st;

	(void)state;
	make_normal(&st);
	for (size_t k = 0; k < sizeof(splits) / sizeof(splits[0]); k++) {
		struct sbt_gs_reader r;
		struct seen s = { 0 };
		size_t chunk = splits[k] ? splits[k] : st.len;

		assert_int_equal(sbt_gs_reader_init(&r), 0);
		for (size_t off = 0; off < st.len; off += chunk) {
			size_t n = st.len - off < chunk ? st.len - off : chunk;

			assert_int_equal(sbt_gs_feed(&r, st.buf + off, n, on_frame, &s), SBT_GS_OK);
		}
		assert_int_equal(s.n, 5);
		assert_int_equal(s.types[0], SBT_GS_HELLO);
		assert_int_equal(s.types[1], SBT_GS_RECORD);
		assert_int_equal(s.lens[1], 11);
		assert_int_equal(s.first_byte[1], 1);
		assert_int_equal(s.lens[2], 4);
		assert_int_equal(s.first_byte[2], 2);
		assert_int_equal(s.types[3], SBT_GS_BEAT);
		assert_int_equal(s.types[4], SBT_GS_BYE);
		assert_true(r.bye);
		assert_true(sbt_gs_at_boundary(&r));
		assert_int_equal(r.frames, 5);
		assert_int_equal(r.bytes, st.len);
		sbt_gs_reader_free(&r);
	}
}

static enum sbt_gs_err run(const struct stream *st, struct seen *s)
{
	struct sbt_gs_reader r;
	enum sbt_gs_err e;

	assert_int_equal(sbt_gs_reader_init(&r), 0);
	e = sbt_gs_feed(&r, st->buf, st->len, on_frame, s);
	/* an error sticks: nothing more is taken */
	if (e != SBT_GS_OK)
		assert_int_equal(sbt_gs_feed(&r, st->buf, st->len, on_frame, s), e);
	sbt_gs_reader_free(&r);
	return e;
}

static void test_errors(void **state)
{
	struct stream st;
	struct seen s;

	(void)state;
	/* a lost frame: seq jumps */
	memset(&st, 0, sizeof(st));
	add_hello(&st);
	st.seq++;
	add(&st, SBT_GS_RECORD, "x", 1);
	memset(&s, 0, sizeof(s));
	assert_int_equal(run(&st, &s), SBT_GS_GAP);
	assert_int_equal(s.n, 1);

	/* a record before HELLO */
	memset(&st, 0, sizeof(st));
	add(&st, SBT_GS_RECORD, "x", 1);
	memset(&s, 0, sizeof(s));
	assert_int_equal(run(&st, &s), SBT_GS_NO_HELLO);
	assert_int_equal(s.n, 0);

	/* HELLO twice */
	memset(&st, 0, sizeof(st));
	add_hello(&st);
	add_hello(&st);
	memset(&s, 0, sizeof(s));
	assert_int_equal(run(&st, &s), SBT_GS_NO_HELLO);

	/* anything after BYE */
	memset(&st, 0, sizeof(st));
	add_hello(&st);
	add_counters(&st, SBT_GS_BYE, 0);
	add(&st, SBT_GS_RECORD, "x", 1);
	memset(&s, 0, sizeof(s));
	assert_int_equal(run(&st, &s), SBT_GS_AFTER_BYE);
	assert_int_equal(s.n, 2);

	/* an empty record, a short BEAT */
	memset(&st, 0, sizeof(st));
	add_hello(&st);
	add(&st, SBT_GS_RECORD, "", 0);
	memset(&s, 0, sizeof(s));
	assert_int_equal(run(&st, &s), SBT_GS_BAD_LENGTH);
	memset(&st, 0, sizeof(st));
	add_hello(&st);
	add(&st, SBT_GS_BEAT, "12345678", 8);
	assert_int_equal(run(&st, &s), SBT_GS_BAD_LENGTH);

	/* a length past the cap: refused at the header, before any payload is awaited */
	memset(&st, 0, sizeof(st));
	add_hello(&st);
	assert_int_equal(sbt_gs_header(st.buf + st.len, SBT_GS_RECORD, 2, 1000), 0);
	st.buf[st.len + 8] = 0xff;
	st.buf[st.len + 9] = 0xff;
	st.buf[st.len + 10] = 0x01;
	st.len += SBT_GS_HDR_LEN;
	memset(&s, 0, sizeof(s));
	assert_int_equal(run(&st, &s), SBT_GS_BAD_LENGTH);

	/* bad magic, version, type */
	make_normal(&st);
	st.buf[0] ^= 1;
	assert_int_equal(run(&st, &s), SBT_GS_BAD_MAGIC);
	make_normal(&st);
	st.buf[4] = SBT_GS_VERSION + 1;
	assert_int_equal(run(&st, &s), SBT_GS_BAD_VERSION);
	make_normal(&st);
	st.buf[5] = 9;
	assert_int_equal(run(&st, &s), SBT_GS_BAD_TYPE);

	/* the callback refuses */
	make_normal(&st);
	memset(&s, 0, sizeof(s));
	s.stop_at = 2;
	assert_int_equal(run(&st, &s), SBT_GS_REFUSED);
	assert_int_equal(s.n, 2);

	assert_string_equal(sbt_gs_err_name(SBT_GS_GAP), "gap");
	assert_string_equal(sbt_gs_err_name((enum sbt_gs_err)99), "unknown");
}

static void test_half_frame(void **state)
{
	struct sbt_gs_reader r;
	struct stream st;

	(void)state;
	make_normal(&st);
	assert_int_equal(sbt_gs_reader_init(&r), 0);
	assert_int_equal(sbt_gs_feed(&r, st.buf, st.len - 3, NULL, NULL), SBT_GS_OK);
	assert_false(sbt_gs_at_boundary(&r)); /* the stream broke off mid-frame */
	assert_false(r.bye);
	sbt_gs_reader_free(&r);
}

static void test_payloads(void **state)
{
	struct sbt_gs_hello h = { 0 }, out;
	struct sbt_gs_counters c = { .execs = 3, .lost = 1 }, cout;
	struct sbt_gs_frame f = { .type = SBT_GS_HELLO,
				  .payload = (const uint8_t *)&h,
				  .len = sizeof(h) };
	uint8_t hdr[SBT_GS_HDR_LEN];

	(void)state;
	memset(h.mode, 'm', sizeof(h.mode)); /* no NUL: cut at the end */
	memset(h.kernel, 'k', sizeof(h.kernel));
	assert_int_equal(sbt_gs_hello_of(&f, &out), 0);
	assert_int_equal(strlen(out.mode), sizeof(out.mode) - 1);
	assert_int_equal(strlen(out.kernel), sizeof(out.kernel) - 1);
	f.len--;
	assert_int_equal(sbt_gs_hello_of(&f, &out), -22);
	f = (struct sbt_gs_frame){ .type = SBT_GS_BYE,
				   .payload = (const uint8_t *)&c,
				   .len = sizeof(c) };
	assert_int_equal(sbt_gs_counters_of(&f, &cout), 0);
	assert_int_equal(cout.execs, 3);
	assert_int_equal(cout.lost, 1);
	f.type = SBT_GS_RECORD;
	assert_int_equal(sbt_gs_counters_of(&f, &cout), -22);
	assert_int_equal(sbt_gs_header(hdr, SBT_GS_RECORD, 1, SBT_GS_PAYLOAD_MAX + 1), -22);
	assert_int_equal(sbt_gs_header(hdr, (enum sbt_gs_type)0, 1, 1), -22);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_normal),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_half_frame),
		cmocka_unit_test(test_payloads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
