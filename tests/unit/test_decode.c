// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for the ring-buffer record decoder (userspace/decode.c). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "event/decode.h"

#define FIXED sizeof(struct sbt_exec_record)

#define T_TS	    0x0102030405060708ull
#define T_CGROUP_ID 0xfedcba9876543210ull
#define T_SEQ	    0x1122334455667788ull
#define T_SLOT	    63u
#define T_PID	    4242u
#define T_TID	    4243u
#define T_PPID	    4000u
#define T_UID	    1000u
#define T_GID	    0xfffffffeu

/* What goes into a test record; lengths are taken as given (no implied NUL). */
struct rec_spec {
	const void *filename;
	size_t fl;
	const void *interp;
	size_t il;
	const void *argv;
	size_t al;
	uint32_t flags;
};

/* A cwd tail for a test record: its bytes (innermost name first) and its count of names. */
struct cwd_spec {
	const void *cwd;
	size_t cl;
	uint16_t names;
};

/* Buffers handed to sbt_decode_exec(), sized exactly as decode.h demands. */
struct decode_bufs {
	const char **argv_store;
	char *tail;
};

static int setup_bufs(void **state)
{
	struct decode_bufs *b = malloc(sizeof(*b));

	if (!b)
		return -1;
	b->argv_store = malloc(SBT_ARGV_MAX_ARGS * sizeof(*b->argv_store));
	b->tail = malloc(SBT_ARGV_CAP + 1);
	if (!b->argv_store || !b->tail) {
		free(b->argv_store);
		free(b->tail);
		free(b);
		return -1;
	}
	*state = b;
	return 0;
}

static int teardown_bufs(void **state)
{
	struct decode_bufs *b = *state;

	free(b->argv_store);
	free(b->tail);
	free(b);
	return 0;
}

static void get_fixed(const unsigned char *buf, struct sbt_exec_record *r)
{
	memcpy(r, buf, sizeof(*r));
}

static void put_fixed(unsigned char *buf, const struct sbt_exec_record *r)
{
	memcpy(buf, r, sizeof(*r));
}

/*
 * A record built from `s`, in a malloc'ed buffer of exactly its size (so that
 * ASan flags any read past its end). Fixed fields get the T_* values.
 */
static unsigned char *make_record_cwd(const struct rec_spec *s, const struct cwd_spec *c,
				      size_t *len)
{
	struct sbt_exec_record r;
	size_t n = FIXED + s->fl + s->il + c->cl + s->al;
	unsigned char *buf = malloc(n);

	assert_non_null(buf);
	memset(&r, 0, sizeof(r));
	r.hdr.type = SBT_REC_EXEC;
	r.hdr.abi = SBT_ABI_VERSION;
	r.hdr.size = (__u32)n;
	r.ts_boot_ns = T_TS;
	r.cgroup_id = T_CGROUP_ID;
	r.seq = T_SEQ;
	r.slot = T_SLOT;
	r.pid = T_PID;
	r.tid = T_TID;
	r.ppid = T_PPID;
	r.uid = T_UID;
	r.gid = T_GID;
	r.flags = s->flags;
	r.filename_len = (__u16)s->fl;
	r.interp_len = (__u16)s->il;
	r.argv_len = (__u32)s->al;
	r.argv_full_len = (__u32)s->al;
	r.cwd_len = (__u16)c->cl;
	r.cwd_names = c->names;
	memcpy(r.comm, "make", 5);
	memcpy(r.parent_comm, "bash", 5);
	put_fixed(buf, &r);
	if (s->fl)
		memcpy(buf + FIXED, s->filename, s->fl);
	if (s->il)
		memcpy(buf + FIXED + s->fl, s->interp, s->il);
	if (c->cl)
		memcpy(buf + FIXED + s->fl + s->il, c->cwd, c->cl);
	if (s->al)
		memcpy(buf + FIXED + s->fl + s->il + c->cl, s->argv, s->al);
	*len = n;
	return buf;
}

static unsigned char *make_record(const struct rec_spec *s, size_t *len)
{
	static const struct cwd_spec none = { NULL, 0, 0 };

	return make_record_cwd(s, &none, len);
}

/* sizeof of a string literal including its NUL, and without it. */
#define Z(s)  (s), sizeof(s)
#define NZ(s) (s), (sizeof(s) - 1)

static enum sbt_decode_err decode(struct decode_bufs *b, const void *buf, size_t len,
				  struct sbt_exec *out)
{
	return sbt_decode_exec(buf, len, out, b->argv_store, b->tail);
}

/* Build from `s` and expect `want` from decoding it. */
static void expect_err(struct decode_bufs *b, const struct rec_spec *s, enum sbt_decode_err want)
{
	struct sbt_exec ev;
	size_t len;
	unsigned char *buf = make_record(s, &len);

	assert_int_equal(decode(b, buf, len, &ev), want);
	free(buf);
}

static const char good_argv[] = "make\0-j8\0\0hello world\0\0x";
/* good_argv as a record: a final NUL is included (sizeof of the literal). */
static const struct rec_spec good = {
	Z("/usr/bin/make"), Z("/usr/bin/make-interp"), good_argv, sizeof(good_argv), 0,
};

static void test_well_formed(void **state)
{
	struct decode_bufs *b = *state;
	struct sbt_exec ev;
	size_t len;
	unsigned char *buf = make_record(&good, &len);
	const char *payload = (const char *)buf + FIXED;
	const char *area = payload + good.fl + good.il;

	memset(&ev, 0xa5, sizeof(ev));
	assert_int_equal(decode(b, buf, len, &ev), SBT_DECODE_OK);
	assert_int_equal(ev.ts_boot_ns, T_TS);
	assert_int_equal(ev.cgroup_id, T_CGROUP_ID);
	assert_int_equal(ev.seq, T_SEQ);
	assert_int_equal(ev.slot, T_SLOT);
	assert_int_equal(ev.pid, T_PID);
	assert_int_equal(ev.tid, T_TID);
	assert_int_equal(ev.ppid, T_PPID);
	assert_int_equal(ev.uid, T_UID);
	assert_int_equal(ev.gid, T_GID);
	assert_int_equal(ev.flags, 0);
	assert_false(ev.argv_truncated);
	assert_string_equal(ev.comm, "make");
	assert_string_equal(ev.parent_comm, "bash");
	assert_string_equal(ev.filename, "/usr/bin/make");
	assert_ptr_equal(ev.filename, payload);
	assert_string_equal(ev.interp, "/usr/bin/make-interp");
	assert_ptr_equal(ev.interp, payload + good.fl);

	/* "make" "-j8" "" "hello world" "" "x" */
	assert_ptr_equal(ev.argv, b->argv_store);
	assert_int_equal(ev.argc, 6);
	assert_string_equal(ev.argv[0], "make");
	assert_string_equal(ev.argv[1], "-j8");
	assert_string_equal(ev.argv[2], "");
	assert_string_equal(ev.argv[3], "hello world");
	assert_string_equal(ev.argv[4], "");
	assert_string_equal(ev.argv[5], "x");
	/* Exact boundaries: every argument points into the record's argv area. */
	assert_ptr_equal(ev.argv[0], area);
	assert_ptr_equal(ev.argv[1], area + 5);
	assert_ptr_equal(ev.argv[2], area + 9);
	assert_ptr_equal(ev.argv[3], area + 10);
	assert_ptr_equal(ev.argv[4], area + 22);
	assert_ptr_equal(ev.argv[5], area + 23);
	free(buf);
}

static void test_leading_empty_and_only_empty(void **state)
{
	struct decode_bufs *b = *state;
	struct sbt_exec ev;
	size_t len;
	struct rec_spec s = { Z("/bin/true"), Z(""), Z("\0a b\0"), 0 };
	unsigned char *buf = make_record(&s, &len);

	/* "" "a b" "" (the literal's implicit NUL ends an empty last argument) */
	assert_int_equal(decode(b, buf, len, &ev), SBT_DECODE_OK);
	assert_int_equal(ev.argc, 3);
	assert_string_equal(ev.argv[0], "");
	assert_string_equal(ev.argv[1], "a b");
	assert_string_equal(ev.argv[2], "");
	assert_string_equal(ev.interp, "");
	free(buf);

	s.argv = "";
	s.al = 1;
	buf = make_record(&s, &len);
	assert_int_equal(decode(b, buf, len, &ev), SBT_DECODE_OK);
	assert_int_equal(ev.argc, 1);
	assert_string_equal(ev.argv[0], "");
	free(buf);
}

static void test_comm_without_nul(void **state)
{
	struct decode_bufs *b = *state;
	struct sbt_exec_record r;
	struct sbt_exec ev;
	size_t len;
	unsigned char *buf = make_record(&good, &len);

	get_fixed(buf, &r);
	memcpy(r.comm, "0123456789abcdef", SBT_COMM_LEN);
	memcpy(r.parent_comm, "ABCDEFGHIJKLMNOP", SBT_COMM_LEN);
	put_fixed(buf, &r);
	assert_int_equal(decode(b, buf, len, &ev), SBT_DECODE_OK);
	assert_int_equal(ev.comm[SBT_COMM_LEN - 1], '\0');
	assert_int_equal(ev.parent_comm[SBT_COMM_LEN - 1], '\0');
	assert_string_equal(ev.comm, "0123456789abcde");
	assert_string_equal(ev.parent_comm, "ABCDEFGHIJKLMNO");

	/* Bytes after an early NUL do not leak into the copy. */
	memcpy(r.comm, "sh\0garbagegarbag", SBT_COMM_LEN);
	put_fixed(buf, &r);
	assert_int_equal(decode(b, buf, len, &ev), SBT_DECODE_OK);
	assert_string_equal(ev.comm, "sh");
	free(buf);
}

static void test_argv_cut_uses_tail(void **state)
{
	struct decode_bufs *b = *state;
	struct sbt_exec ev;
	size_t len;
	struct rec_spec s = { Z("/bin/echo"), Z("/bin/echo"), NZ("echo\0\0very-long-ar"),
			      SBT_EXEC_ARGV_TRUNCATED };
	unsigned char *buf = make_record(&s, &len);

	memset(b->tail, 'Z', SBT_ARGV_CAP + 1);
	assert_int_equal(decode(b, buf, len, &ev), SBT_DECODE_OK);
	assert_true(ev.argv_truncated);
	assert_int_equal(ev.argc, 3);
	assert_string_equal(ev.argv[0], "echo");
	assert_string_equal(ev.argv[1], "");
	assert_ptr_equal(ev.argv[2], b->tail);
	assert_string_equal(ev.argv[2], "very-long-ar");
	free(buf);

	/* A single argument without any NUL. */
	s.argv = "abc";
	s.al = 3;
	buf = make_record(&s, &len);
	memset(b->tail, 'Z', SBT_ARGV_CAP + 1);
	assert_int_equal(decode(b, buf, len, &ev), SBT_DECODE_OK);
	assert_int_equal(ev.argc, 1);
	assert_ptr_equal(ev.argv[0], b->tail);
	assert_memory_equal(b->tail, "abc", 4);
	free(buf);
}

static void test_argv_truncated_flag(void **state)
{
	static const uint32_t others = SBT_EXEC_ARGV_FAULT | SBT_EXEC_FILENAME_TRUNCATED |
				       SBT_EXEC_INTERP_TRUNCATED | SBT_EXEC_FILENAME_FAULT |
				       SBT_EXEC_INTERP_FAULT | SBT_EXEC_INTERP_UNAVAILABLE;
	static const struct {
		uint32_t flags;
		bool truncated;
	} cases[] = {
		{ 0, false },	       { SBT_EXEC_ARGV_TRUNCATED, true },
		{ others, false },     { others | SBT_EXEC_ARGV_TRUNCATED, true },
		{ 0xffffffffu, true }, { 0xffffffffu & ~SBT_EXEC_ARGV_TRUNCATED, false },
	};
	struct decode_bufs *b = *state;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct rec_spec s = good;
		struct sbt_exec ev;
		size_t len;
		unsigned char *buf;

		s.flags = cases[i].flags;
		buf = make_record(&s, &len);
		assert_int_equal(decode(b, buf, len, &ev), SBT_DECODE_OK);
		assert_int_equal(ev.flags, cases[i].flags);
		assert_int_equal(ev.argv_truncated, cases[i].truncated);
		free(buf);
	}
}

static void test_argv_len_zero(void **state)
{
	struct decode_bufs *b = *state;
	struct sbt_exec ev;
	size_t len;
	struct rec_spec s = { Z("/bin/x"), Z(""), NULL, 0, 0 };
	unsigned char *buf = make_record(&s, &len);

	assert_int_equal(len, FIXED + 7 + 1);
	assert_int_equal(decode(b, buf, len, &ev), SBT_DECODE_OK);
	assert_int_equal(ev.argc, 0);
	assert_string_equal(ev.filename, "/bin/x");
	free(buf);
}

static void test_unaligned_record(void **state)
{
	struct decode_bufs *b = *state;
	struct sbt_exec ev;
	size_t len;
	unsigned char *rec = make_record(&good, &len);
	unsigned char *buf = malloc(len + 1);

	assert_non_null(buf);
	memcpy(buf + 1, rec, len);
	assert_int_equal(decode(b, buf + 1, len, &ev), SBT_DECODE_OK);
	assert_int_equal(ev.cgroup_id, T_CGROUP_ID);
	assert_int_equal(ev.argc, 6);
	assert_string_equal(ev.argv[3], "hello world");
	free(buf);
	free(rec);
}

static void test_short(void **state)
{
	struct decode_bufs *b = *state;
	struct sbt_exec ev;
	size_t len;
	unsigned char *buf = make_record(&good, &len);

	assert_int_equal(decode(b, NULL, 0, &ev), SBT_DECODE_SHORT);
	assert_int_equal(decode(b, NULL, len, &ev), SBT_DECODE_SHORT);
	/* Shorter than the header, then shorter than the fixed part. */
	for (size_t n = 0; n < sizeof(struct sbt_record_hdr); n++)
		assert_int_equal(decode(b, buf, n, &ev), SBT_DECODE_SHORT);
	for (size_t n = sizeof(struct sbt_record_hdr); n < FIXED; n++)
		assert_int_equal(decode(b, buf, n, &ev), SBT_DECODE_SHORT);
	free(buf);
}

static void test_bad_type_abi_size(void **state)
{
	struct decode_bufs *b = *state;
	struct sbt_exec_record r;
	struct sbt_exec ev;
	size_t len;
	unsigned char *buf = make_record(&good, &len);

	get_fixed(buf, &r);
	r.hdr.type = 0;
	put_fixed(buf, &r);
	assert_int_equal(decode(b, buf, len, &ev), SBT_DECODE_BAD_TYPE);
	r.hdr.type = SBT_REC_EXEC + 1;
	put_fixed(buf, &r);
	assert_int_equal(decode(b, buf, len, &ev), SBT_DECODE_BAD_TYPE);
	r.hdr.type = 0xffff;
	put_fixed(buf, &r);
	assert_int_equal(decode(b, buf, len, &ev), SBT_DECODE_BAD_TYPE);

	r.hdr.type = SBT_REC_EXEC;
	r.hdr.abi = 0;
	put_fixed(buf, &r);
	assert_int_equal(decode(b, buf, len, &ev), SBT_DECODE_BAD_ABI);
	r.hdr.abi = SBT_ABI_VERSION + 1;
	put_fixed(buf, &r);
	assert_int_equal(decode(b, buf, len, &ev), SBT_DECODE_BAD_ABI);

	r.hdr.abi = SBT_ABI_VERSION;
	r.hdr.size = (__u32)len + 1;
	put_fixed(buf, &r);
	assert_int_equal(decode(b, buf, len, &ev), SBT_DECODE_BAD_SIZE);
	r.hdr.size = (__u32)len - 1;
	put_fixed(buf, &r);
	assert_int_equal(decode(b, buf, len, &ev), SBT_DECODE_BAD_SIZE);
	r.hdr.size = 0;
	put_fixed(buf, &r);
	assert_int_equal(decode(b, buf, len, &ev), SBT_DECODE_BAD_SIZE);
	r.hdr.size = 0xffffffffu;
	put_fixed(buf, &r);
	assert_int_equal(decode(b, buf, len, &ev), SBT_DECODE_BAD_SIZE);

	/* Restored: decodes again. */
	r.hdr.size = (__u32)len;
	put_fixed(buf, &r);
	assert_int_equal(decode(b, buf, len, &ev), SBT_DECODE_OK);
	free(buf);
}

static void test_bad_lengths(void **state)
{
	static char long_path[SBT_PATH_MAX + 1];
	static char argv_over[SBT_ARGV_CAP + 1];
	struct decode_bufs *b = *state;
	struct rec_spec s;

	memset(long_path, 'p', sizeof(long_path) - 1);
	long_path[sizeof(long_path) - 1] = '\0';

	/* filename_len 0 (sizes otherwise consistent) */
	s = good;
	s.fl = 0;
	expect_err(b, &s, SBT_DECODE_BAD_LENGTHS);
	/* filename_len SBT_PATH_MAX + 1, NUL-terminated and consistent */
	s = good;
	s.filename = long_path;
	s.fl = SBT_PATH_MAX + 1;
	expect_err(b, &s, SBT_DECODE_BAD_LENGTHS);
	/* ... but exactly SBT_PATH_MAX is fine */
	s.filename = long_path + 1;
	s.fl = SBT_PATH_MAX;
	expect_err(b, &s, SBT_DECODE_OK);

	/* interp_len 0, then SBT_PATH_MAX + 1, then SBT_PATH_MAX */
	s = good;
	s.il = 0;
	expect_err(b, &s, SBT_DECODE_BAD_LENGTHS);
	s.interp = long_path;
	s.il = SBT_PATH_MAX + 1;
	expect_err(b, &s, SBT_DECODE_BAD_LENGTHS);
	s.interp = long_path + 1;
	s.il = SBT_PATH_MAX;
	expect_err(b, &s, SBT_DECODE_OK);

	/* argv_len SBT_ARGV_CAP + 1 (consistent), then SBT_ARGV_CAP */
	memset(argv_over, 'a', sizeof(argv_over));
	s = good;
	s.argv = argv_over;
	s.al = SBT_ARGV_CAP + 1;
	expect_err(b, &s, SBT_DECODE_BAD_LENGTHS);
	s.al = SBT_ARGV_CAP;
	expect_err(b, &s, SBT_DECODE_OK);
}

/* Patch one length field of a valid record (hdr.size kept == len). */
enum which_len { FL, IL, AL };

static void patch_len(struct decode_bufs *b, enum which_len w, long delta, uint32_t absolute,
		      bool use_abs, enum sbt_decode_err want)
{
	struct sbt_exec_record r;
	struct sbt_exec ev;
	size_t len;
	unsigned char *buf = make_record(&good, &len);

	get_fixed(buf, &r);
	switch (w) {
	case FL:
		r.filename_len = (__u16)(use_abs ? absolute : (uint32_t)(r.filename_len + delta));
		break;
	case IL:
		r.interp_len = (__u16)(use_abs ? absolute : (uint32_t)(r.interp_len + delta));
		break;
	case AL:
		r.argv_len = use_abs ? absolute : (uint32_t)(r.argv_len + delta);
		break;
	}
	put_fixed(buf, &r);
	assert_int_equal(decode(b, buf, len, &ev), want);
	free(buf);
}

static void test_lengths_disagree_with_record(void **state)
{
	struct decode_bufs *b = *state;

	/* Sum of the lengths bigger, then smaller than the record. */
	patch_len(b, FL, 1, 0, false, SBT_DECODE_BAD_LENGTHS);
	patch_len(b, FL, -1, 0, false, SBT_DECODE_BAD_LENGTHS);
	patch_len(b, IL, 1, 0, false, SBT_DECODE_BAD_LENGTHS);
	patch_len(b, IL, -1, 0, false, SBT_DECODE_BAD_LENGTHS);
	patch_len(b, AL, 1, 0, false, SBT_DECODE_BAD_LENGTHS);
	patch_len(b, AL, -1, 0, false, SBT_DECODE_BAD_LENGTHS);
	patch_len(b, AL, 0, 0, true, SBT_DECODE_BAD_LENGTHS);
	/* Extreme values. */
	patch_len(b, FL, 0, 0xffff, true, SBT_DECODE_BAD_LENGTHS);
	patch_len(b, IL, 0, 0xffff, true, SBT_DECODE_BAD_LENGTHS);
	patch_len(b, AL, 0, 0xffffffffu, true, SBT_DECODE_BAD_LENGTHS);
	patch_len(b, AL, 0, SBT_ARGV_CAP, true, SBT_DECODE_BAD_LENGTHS);
	/* Moving bytes between filename and interp keeps the sum: the NUL check catches it. */
	{
		struct sbt_exec_record r;
		struct sbt_exec ev;
		size_t len;
		unsigned char *buf = make_record(&good, &len);

		get_fixed(buf, &r);
		r.filename_len += 1;
		r.interp_len -= 1;
		put_fixed(buf, &r);
		assert_int_equal(decode(b, buf, len, &ev), SBT_DECODE_BAD_STRING);
		free(buf);
	}
}

static void test_bad_strings(void **state)
{
	struct decode_bufs *b = *state;
	struct rec_spec s;

	/* filename not NUL-terminated */
	s = good;
	s.filename = "/bin/sh";
	s.fl = 7;
	expect_err(b, &s, SBT_DECODE_BAD_STRING);
	/* NUL in the middle but not at the end */
	s.filename = "/bin\0sh";
	s.fl = 7;
	expect_err(b, &s, SBT_DECODE_BAD_STRING);
	s.filename = "x";
	s.fl = 1;
	expect_err(b, &s, SBT_DECODE_BAD_STRING);

	/* interp not NUL-terminated */
	s = good;
	s.interp = "/bin/sh";
	s.il = 7;
	expect_err(b, &s, SBT_DECODE_BAD_STRING);
	s.interp = "\0x";
	s.il = 2;
	expect_err(b, &s, SBT_DECODE_BAD_STRING);

	/* Single-NUL strings are fine. */
	s = good;
	s.filename = "";
	s.fl = 1;
	s.interp = "";
	s.il = 1;
	expect_err(b, &s, SBT_DECODE_OK);
}

/* Every prefix of a valid record is rejected; ASan checks no byte past it is read. */
static void test_every_truncation(void **state)
{
	struct decode_bufs *b = *state;
	struct sbt_exec ev;
	size_t len;
	struct rec_spec s = good;
	unsigned char *full;

	s.argv = good_argv;
	s.al = sizeof(good_argv) - 1; /* cut last arg: exercises the tail path too */
	full = make_record(&s, &len);
	assert_int_equal(decode(b, full, len, &ev), SBT_DECODE_OK);

	for (size_t n = 0; n < len; n++) {
		unsigned char *buf = malloc(n ? n : 1);
		enum sbt_decode_err err;

		assert_non_null(buf);
		memcpy(buf, full, n);
		err = decode(b, buf, n, &ev);
		assert_int_equal(err, n < FIXED ? SBT_DECODE_SHORT : SBT_DECODE_BAD_SIZE);

		/* Same prefix with hdr.size claiming exactly n bytes. */
		if (n >= FIXED) {
			struct sbt_exec_record r;

			get_fixed(buf, &r);
			r.hdr.size = (__u32)n;
			put_fixed(buf, &r);
			err = decode(b, buf, n, &ev);
			assert_int_equal(err, SBT_DECODE_BAD_LENGTHS);
		}
		free(buf);
	}
	free(full);
}

static void test_record_type(void **state)
{
	struct sbt_record_hdr hdr = { .type = 0xbeef, .abi = 7, .size = 3 };
	unsigned char *buf = malloc(sizeof(hdr));

	(void)state;
	assert_non_null(buf);
	memcpy(buf, &hdr, sizeof(hdr));
	assert_int_equal(sbt_record_type(NULL, 0), -1);
	assert_int_equal(sbt_record_type(NULL, 100), -1);
	for (size_t n = 0; n < sizeof(hdr); n++)
		assert_int_equal(sbt_record_type(buf, n), -1);
	assert_int_equal(sbt_record_type(buf, sizeof(hdr)), 0xbeef);
	hdr.type = SBT_REC_EXEC;
	memcpy(buf, &hdr, sizeof(hdr));
	assert_int_equal(sbt_record_type(buf, sizeof(hdr)), SBT_REC_EXEC);
	free(buf);
}

static void test_strerror(void **state)
{
	static const enum sbt_decode_err all[] = {
		SBT_DECODE_OK,	       SBT_DECODE_SHORT,    SBT_DECODE_BAD_TYPE,
		SBT_DECODE_BAD_ABI,    SBT_DECODE_BAD_SIZE, SBT_DECODE_BAD_LENGTHS,
		SBT_DECODE_BAD_STRING,
	};

	(void)state;
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		const char *s = sbt_decode_strerror(all[i]);

		assert_non_null(s);
		assert_true(s[0] != '\0');
		/* Distinct messages for distinct errors. */
		for (size_t j = 0; j < i; j++)
			assert_string_not_equal(s, sbt_decode_strerror(all[j]));
	}
	{
		const char *s = sbt_decode_strerror((enum sbt_decode_err)99);

		assert_non_null(s);
		assert_true(s[0] != '\0');
	}
}

/* The largest record: SBT_ARGV_CAP empty arguments need SBT_ARGV_CAP pointers. */
static void test_max_record_all_nuls(void **state)
{
	struct decode_bufs *b = *state;
	struct sbt_exec ev;
	size_t len;
	char *path = malloc(SBT_PATH_MAX);
	char *argv = calloc(1, SBT_ARGV_CAP);
	struct rec_spec s;
	struct cwd_spec c;
	unsigned char *buf;

	assert_non_null(path);
	assert_non_null(argv);
	memset(path, 'f', SBT_PATH_MAX - 1);
	path[SBT_PATH_MAX - 1] = '\0';
	s = (struct rec_spec){ path, SBT_PATH_MAX, path, SBT_PATH_MAX, argv, SBT_ARGV_CAP, 0 };
	/* and a cwd tail of one name as long as the tail may be */
	c = (struct cwd_spec){ path, SBT_CWD_TAIL_MAX, 1 };
	buf = make_record_cwd(&s, &c, &len);
	assert_int_equal(len, SBT_EXEC_RECORD_MAX);

	assert_int_equal(decode(b, buf, len, &ev), SBT_DECODE_OK);
	assert_int_equal(ev.argc, SBT_ARGV_CAP);
	assert_true(ev.argc <= SBT_ARGV_MAX_ARGS);
	assert_int_equal(strlen(ev.filename), SBT_PATH_MAX - 1);
	assert_int_equal(strlen(ev.interp), SBT_PATH_MAX - 1);
	assert_int_equal(strlen(ev.cwd), SBT_CWD_TAIL_MAX - 1);
	for (size_t i = 0; i < ev.argc; i++) {
		assert_ptr_equal(ev.argv[i], (const char *)buf + FIXED + 2 * SBT_PATH_MAX +
						     SBT_CWD_TAIL_MAX + i);
		assert_string_equal(ev.argv[i], "");
	}
	free(buf);

	/* Same size, no NUL at all: one argument of SBT_ARGV_CAP bytes in `tail`. */
	memset(argv, 'a', SBT_ARGV_CAP);
	buf = make_record_cwd(&s, &c, &len);
	assert_int_equal(decode(b, buf, len, &ev), SBT_DECODE_OK);
	assert_int_equal(ev.argc, 1);
	assert_ptr_equal(ev.argv[0], b->tail);
	assert_int_equal(strlen(ev.argv[0]), SBT_ARGV_CAP);
	free(buf);

	/* Everything NUL but the last byte: SBT_ARGV_CAP - 1 empties plus a 1-byte tail. */
	memset(argv, 0, SBT_ARGV_CAP);
	argv[SBT_ARGV_CAP - 1] = 'z';
	buf = make_record(&s, &len);
	assert_int_equal(decode(b, buf, len, &ev), SBT_DECODE_OK);
	assert_int_equal(ev.argc, SBT_ARGV_CAP);
	assert_ptr_equal(ev.argv[SBT_ARGV_CAP - 1], b->tail);
	assert_string_equal(ev.argv[SBT_ARGV_CAP - 1], "z");
	free(buf);

	free(argv);
	free(path);
}

/* The cwd tail travels innermost name first; it decodes outermost first, joined by '/'. */
static void test_cwd_tail(void **state)
{
	static const char cwd[] = "b\0@scope\0node_modules\0app"; /* + its NUL */
	struct rec_spec s = { Z("/bin/sh"), Z("/bin/sh"), "sh\0-c\0true", 11, SBT_EXEC_CWD_TOP };
	struct cwd_spec c = { cwd, sizeof(cwd), 4 }, none = { NULL, 0, 0 };
	struct sbt_exec ev;
	size_t len;
	unsigned char *buf = make_record_cwd(&s, &c, &len);

	assert_int_equal(decode(*state, buf, len, &ev), SBT_DECODE_OK);
	assert_string_equal(ev.cwd, "app/node_modules/@scope/b");
	assert_true(ev.cwd_top);
	assert_int_equal(ev.argc, 3);
	assert_string_equal(ev.argv[2], "true"); /* argv after the tail */
	free(buf);

	s.flags = SBT_EXEC_CWD_FAULT;
	buf = make_record_cwd(&s, &none, &len);
	assert_int_equal(decode(*state, buf, len, &ev), SBT_DECODE_OK);
	assert_string_equal(ev.cwd, "");
	assert_false(ev.cwd_top);
	free(buf);
}

/* A tail that overruns, lacks its NUL, has an empty name or a '/', or miscounts its names. */
static void test_cwd_tail_bad(void **state)
{
	static char big[SBT_CWD_TAIL_MAX + 1];
	const struct {
		struct cwd_spec c;
		enum sbt_decode_err want;
	} cases[] = {
		{ { "dep", 3, 1 }, SBT_DECODE_BAD_STRING },	     /* no NUL */
		{ { "dep\0\0x", 7, 2 }, SBT_DECODE_BAD_STRING },     /* an empty name */
		{ { "a/b\0", 4, 1 }, SBT_DECODE_BAD_STRING },	     /* a '/' in a name */
		{ { "dep\0nm\0", 7, 1 }, SBT_DECODE_BAD_LENGTHS },   /* 2 names, 1 said */
		{ { big, sizeof(big), 1 }, SBT_DECODE_BAD_LENGTHS }, /* past its bound */
	};
	struct rec_spec s = { Z("/bin/sh"), Z(""), NULL, 0, 0 };
	struct sbt_exec ev;
	size_t len;

	memset(big, 'x', sizeof(big) - 1);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		unsigned char *buf = make_record_cwd(&s, &cases[i].c, &len);

		assert_int_equal(decode(*state, buf, len, &ev), cases[i].want);
		free(buf);
	}
}

/* A failed exec's record: its path and arguments; every inconsistency rejected. */
static void test_failed_record(void **state)
{
	unsigned char buf[sizeof(struct sbt_exec_fail_record) + 32];
	struct sbt_exec_fail_record r;
	struct sbt_exec_fail f;
	static const char payload[] = "/bin/sh\0sh\0-c\0id"; /* + its NUL */
	size_t len = sizeof(r) + sizeof(payload);

	(void)state;
	memset(&r, 0, sizeof(r));
	r.hdr.type = SBT_REC_EXEC_FAILED;
	r.hdr.abi = SBT_ABI_VERSION;
	r.hdr.size = (__u32)len;
	r.pid = 9;
	r.err = -2;
	r.dirfd = -100;
	r.filename_len = 8;
	r.argv_len = sizeof(payload) - 8;
	r.argc = 3;
	memcpy(r.comm, "makemakemakemake", SBT_COMM_LEN); /* no NUL */
	memcpy(buf, &r, sizeof(r));
	memcpy(buf + sizeof(r), payload, sizeof(payload));
	assert_int_equal(sbt_decode_exec_failed(buf, len, &f), SBT_DECODE_OK);
	assert_string_equal(f.filename, "/bin/sh");
	assert_int_equal(f.argc, 3);
	assert_string_equal(f.argv[1], "-c");
	assert_string_equal(f.argv[2], "id");
	assert_int_equal(f.err, 2);
	assert_int_equal(f.comm[SBT_COMM_LEN - 1], 0);
	assert_int_equal(sbt_decode_exec_failed(buf, len - 1, &f), SBT_DECODE_BAD_SIZE);
	/* an argument count the area does not hold */
	((struct sbt_exec_fail_record *)buf)->argc = 2;
	assert_int_equal(sbt_decode_exec_failed(buf, len, &f), SBT_DECODE_BAD_LENGTHS);
	((struct sbt_exec_fail_record *)buf)->argc = 4;
	assert_int_equal(sbt_decode_exec_failed(buf, len, &f), SBT_DECODE_BAD_LENGTHS);
	((struct sbt_exec_fail_record *)buf)->argc = 3;
	/* no error is no failed exec */
	((struct sbt_exec_fail_record *)buf)->err = 0;
	assert_int_equal(sbt_decode_exec_failed(buf, len, &f), SBT_DECODE_BAD_FIELD);
	((struct sbt_exec_fail_record *)buf)->err = -2;
	buf[sizeof(r) + 7] = 'x'; /* the path without its NUL */
	assert_int_equal(sbt_decode_exec_failed(buf, len, &f), SBT_DECODE_BAD_STRING);
	buf[sizeof(r) + 7] = 0;
	((struct sbt_exec_fail_record *)buf)->hdr.type = SBT_REC_EXEC;
	assert_int_equal(sbt_decode_exec_failed(buf, len, &f), SBT_DECODE_BAD_TYPE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_failed_record),
		cmocka_unit_test(test_well_formed),
		cmocka_unit_test(test_leading_empty_and_only_empty),
		cmocka_unit_test(test_comm_without_nul),
		cmocka_unit_test(test_argv_cut_uses_tail),
		cmocka_unit_test(test_argv_truncated_flag),
		cmocka_unit_test(test_argv_len_zero),
		cmocka_unit_test(test_unaligned_record),
		cmocka_unit_test(test_short),
		cmocka_unit_test(test_bad_type_abi_size),
		cmocka_unit_test(test_bad_lengths),
		cmocka_unit_test(test_lengths_disagree_with_record),
		cmocka_unit_test(test_bad_strings),
		cmocka_unit_test(test_every_truncation),
		cmocka_unit_test_setup_teardown(test_cwd_tail, setup_bufs, teardown_bufs),
		cmocka_unit_test_setup_teardown(test_cwd_tail_bad, setup_bufs, teardown_bufs),
		cmocka_unit_test(test_record_type),
		cmocka_unit_test(test_strerror),
		cmocka_unit_test(test_max_record_all_nuls),
	};

	return cmocka_run_group_tests(tests, setup_bufs, teardown_bufs);
}
