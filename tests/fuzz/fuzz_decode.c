// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target: the ring-buffer record decoder and everything a decoded
 * exec flows into (shell classifier, event JSON, text sink).
 *
 * Raw input goes to the decoder as is (mostly rejected early). To reach the
 * deep paths, the input is also turned into a record that must be valid:
 * bytes 0-7 choose the lengths and flags, the rest is string material.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "event/decode.h"
#include "event/events.h"
#include "event/kinds.h"
#include "event/sink_json.h"
#include "exec/shell.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *argv_store[SBT_ARGV_MAX_ARGS];
static char tail[SBT_ARGV_CAP + 1];

static void check(int cond)
{
	if (!cond)
		abort();
}

/* Classify, build the event, serialize it and write it as text to /dev/null. */
static void consume(const struct sbt_exec *ev)
{
	static FILE *devnull;
	struct sbt_shell_class cls;
	json_object *o;
	bool is_shell;

	check(ev->argc <= SBT_ARGV_MAX_ARGS);
	check(strlen(ev->cwd) < SBT_CWD_TAIL_MAX);
	is_shell = sbt_shell_classify(ev->filename, ev->interp, ev->argv, ev->argc, &cls);
	check(is_shell == (cls.kind != SBT_SHELL_NONE));
	o = sbt_event_exec(ev, ev->ts_boot_ns, ev->slot & 1 ? "fuzz" : NULL,
			   is_shell ? &cls : NULL);
	check(o != NULL);
	check(json_object_to_json_string(o) != NULL);

	if (!devnull)
		devnull = fopen("/dev/null", "w");
	if (devnull) {
		static struct sbt_target sb = { .name = "fuzz" };
		struct sbt_event tev = { .kind = SBT_EV_EXEC,
					 .ts = ev->ts_boot_ns,
					 .sandbox = ev->slot & 1 ? &sb : NULL,
					 .exec = { .rec = ev, .shell = is_shell ? &cls : NULL } };
		struct sbt_json_sink sink;

		/* the text row, from the typed event */
		sbt_json_sink_init(&sink, devnull, SBT_FORMAT_TEXT);
		sbt_json_sink_emit(&sink, &tev);
	}
	json_object_put(o);
}

static uint16_t le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

/* Take up to `want` bytes of material, or fewer when it runs out. */
static size_t take(size_t want, size_t *avail)
{
	if (want > *avail)
		want = *avail;
	*avail -= want;
	return want;
}

static void constructed(const uint8_t *data, size_t size)
{
	const uint8_t *mat = data + 8;
	static const char cwd[] = "dep\0node_modules"; /* innermost first, + its NUL */
	size_t avail = size - 8, fl, il, al, len;
	struct sbt_exec_record r;
	struct sbt_exec ev;
	unsigned char *buf;
	char *payload;

	/* Lengths from the first bytes, clamped to the limits and to the material. */
	fl = take(le16(data) % SBT_PATH_MAX, &avail) + 1;
	il = take(le16(data + 2) % SBT_PATH_MAX, &avail) + 1;
	al = take(((size_t)le16(data + 4) | (size_t)(data[6] & 0x7f) << 16) % (SBT_ARGV_CAP + 1),
		  &avail);
	len = sizeof(r) + fl + il + sizeof(cwd) + al;
	check(len <= SBT_EXEC_RECORD_MAX);

	memset(&r, 0, sizeof(r));
	r.hdr.type = SBT_REC_EXEC;
	r.hdr.abi = SBT_ABI_VERSION;
	r.hdr.size = (__u32)len;
	r.ts_boot_ns = (uint64_t)data[0] << 40 | data[7];
	r.cgroup_id = le16(data + 2);
	r.seq = data[6];
	r.slot = data[1];
	r.pid = data[2];
	r.tid = data[3];
	r.ppid = data[4];
	r.uid = data[5];
	r.gid = data[6];
	r.flags = data[7];
	r.filename_len = (__u16)fl;
	r.interp_len = (__u16)il;
	r.argv_len = (__u32)al;
	r.argv_full_len = (__u32)al + (data[7] & SBT_EXEC_ARGV_TRUNCATED);
	r.cwd_len = sizeof(cwd);
	r.cwd_names = 2;
	/* comm without a NUL, from whatever material there is */
	for (size_t i = 0; i < SBT_COMM_LEN; i++) {
		r.comm[i] = size > 8 ? (char)mat[i % (size - 8)] : 'c';
		r.parent_comm[i] = size > 8 ? (char)mat[(i * 7) % (size - 8)] : 'p';
	}

	/* Exactly `len` bytes, so that ASan sees any read past the record. */
	buf = malloc(len);
	check(buf != NULL);
	memcpy(buf, &r, sizeof(r));
	payload = (char *)buf + sizeof(r);
	memcpy(payload, mat, fl - 1);
	payload[fl - 1] = '\0';
	memcpy(payload + fl, mat + fl - 1, il - 1);
	payload[fl + il - 1] = '\0';
	memcpy(payload + fl + il, cwd, sizeof(cwd));
	memcpy(payload + fl + il + sizeof(cwd), mat + fl - 1 + il - 1, al);

	check(sbt_decode_exec(buf, len, &ev, argv_store, tail) == SBT_DECODE_OK);
	check(ev.argc <= SBT_ARGV_MAX_ARGS);
	check(ev.argc <= al + 1);
	check(ev.filename == payload && strlen(ev.filename) < fl);
	check(ev.interp == payload + fl && strlen(ev.interp) < il);
	check(ev.comm[SBT_COMM_LEN - 1] == '\0' && ev.parent_comm[SBT_COMM_LEN - 1] == '\0');
	check(ev.argv_truncated == !!(r.flags & SBT_EXEC_ARGV_TRUNCATED));
	check(strcmp(ev.cwd, "node_modules/dep") == 0);
	consume(&ev);

	/* Every strict prefix of a valid record is rejected. */
	check(sbt_decode_exec(buf, len - 1, &ev, argv_store, tail) != SBT_DECODE_OK);
	free(buf);
}

/* A decoded failed exec as ProcessExecFailed JSON: bounded, NUL-terminated, serializable. */
static void consume_failed(const struct sbt_exec_fail *f)
{
	struct sbt_event ev = {
		.kind = SBT_EV_EXEC_FAILED,
		.exec_failed = { .rec = f, .tried = &f->filename, .ntried = 1, .err = f->err }
	};
	json_object *o;

	check(f->argc <= SBT_FAIL_ARGS && f->err > 0 && f->err <= 4095);
	for (size_t i = 0; i < f->argc; i++)
		check(strlen(f->argv[i]) < SBT_FAIL_ARGS * SBT_FAIL_ARG_MAX);
	o = sbt_json_exec_failed(&ev);
	check(o != NULL && json_object_to_json_string(o) != NULL);
	json_object_put(o);
}

/* A valid failed-exec record from the input: path, then up to 4 arguments. */
static void constructed_failed(const uint8_t *data, size_t size)
{
	const uint8_t *mat = data + 8;
	size_t avail = size - 8, fl, len, off, argc = data[6] % (SBT_FAIL_ARGS + 1), al = 0;
	struct sbt_exec_fail_record r;
	struct sbt_exec_fail f;
	unsigned char *buf;

	fl = take(le16(data) % SBT_PATH_MAX, &avail) + 1;
	size_t alen[SBT_FAIL_ARGS];
	for (size_t i = 0; i < argc; i++) {
		alen[i] = take(data[i % 8] % SBT_FAIL_ARG_MAX, &avail) + 1;
		al += alen[i];
	}
	len = sizeof(r) + fl + al;
	check(len <= SBT_EXEC_FAIL_RECORD_MAX);
	memset(&r, 0, sizeof(r));
	r.hdr.type = SBT_REC_EXEC_FAILED;
	r.hdr.abi = SBT_ABI_VERSION;
	r.hdr.size = (__u32)len;
	r.err = -(int)(1 + data[1] % 200);
	r.flags = data[7];
	r.filename_len = (__u16)fl;
	r.argv_len = (__u16)al;
	r.argc = (__u16)argc;
	for (size_t i = 0; i < SBT_COMM_LEN; i++)
		r.comm[i] = size > 8 ? (char)mat[i % (size - 8)] : 'c';
	buf = malloc(len);
	check(buf != NULL);
	memcpy(buf, &r, sizeof(r));
	off = sizeof(r);
	memcpy(buf + off, mat, fl - 1);
	buf[off + fl - 1] = 0;
	off += fl;
	for (size_t i = 0, m = fl - 1; i < argc; i++) {
		memcpy(buf + off, mat + m, alen[i] - 1);
		buf[off + alen[i] - 1] = 0;
		m += alen[i] - 1;
		off += alen[i];
	}
	/* a NUL inside the material cuts an argument short: then the count disagrees */
	if (sbt_decode_exec_failed(buf, len, &f) == SBT_DECODE_OK) {
		check(f.filename == (const char *)buf + sizeof(r));
		consume_failed(&f);
	}
	check(sbt_decode_exec_failed(buf, len - 1, &f) != SBT_DECODE_OK);
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sbt_exec_fail f;
	struct sbt_exec ev;
	int type = sbt_record_type(data, size);

	check(type >= -1 && type <= 0xffff);
	if (sbt_decode_exec(data, size, &ev, argv_store, tail) == SBT_DECODE_OK) {
		check(type == SBT_REC_EXEC);
		consume(&ev);
	}
	if (sbt_decode_exec_failed(data, size, &f) == SBT_DECODE_OK) {
		check(type == SBT_REC_EXEC_FAILED);
		consume_failed(&f);
	}
	if (size >= 8) {
		constructed(data, size);
		constructed_failed(data, size);
	}
	return 0;
}
