// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target: the guest stream reader (userspace/guest_stream.c).
 *
 * Input: byte 0 is the chunk size (1..256) the rest is fed in; the rest is
 * the stream, with a well-formed HELLO put in front when bit 7 of byte 0 is
 * set (so the fuzzer reaches the frames after it quickly).
 *
 * Invariants: every frame handed to the callback has a known type, a length
 * within the cap and the next seq; HELLO is the first and only HELLO;
 * nothing follows BYE; the same input fed whole gives the same frames and
 * the same error as fed in chunks; once an error is set it stays.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "exec/guest_stream.h"

struct check {
	uint32_t frames, expect_seq;
	uint64_t sum; /* of types, lengths and first bytes: fed whole == fed in chunks */
	int bye;
};

static int on_frame(void *arg, const struct sbt_gs_frame *f)
{
	struct check *c = arg;

	if (f->type < SBT_GS_HELLO || f->type > SBT_GS_BYE || f->len > SBT_GS_PAYLOAD_MAX ||
	    f->seq != ++c->expect_seq || (f->type == SBT_GS_HELLO) != (c->frames == 0) || c->bye)
		abort();
	c->bye = f->type == SBT_GS_BYE;
	c->frames++;
	c->sum += f->type * 1000003u + f->len + (f->len ? f->payload[f->len - 1] : 0);
	return 0;
}

static enum sbt_gs_err feed(const uint8_t *data, size_t n, size_t chunk, struct check *c)
{
	struct sbt_gs_reader r;
	enum sbt_gs_err e = SBT_GS_OK;

	if (sbt_gs_reader_init(&r))
		abort();
	for (size_t off = 0; off < n; off += chunk) {
		enum sbt_gs_err e2 =
			sbt_gs_feed(&r, data + off, n - off < chunk ? n - off : chunk, on_frame, c);

		if (e != SBT_GS_OK && e2 != e)
			abort(); /* an error sticks */
		e = e2;
	}
	if (r.frames != c->frames)
		abort();
	sbt_gs_reader_free(&r);
	return e;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct check whole = { 0 }, parts = { 0 };
	uint8_t *buf;
	size_t n, chunk;

	if (size < 1)
		return 0;
	chunk = (size_t)(data[0] & 0x7f) * 2 + 1;
	buf = malloc(SBT_GS_HDR_LEN + sizeof(struct sbt_gs_hello) + size);
	if (!buf)
		return 0;
	n = 0;
	if (data[0] & 0x80) {
		struct sbt_gs_hello h = { .abi = 2, .hb_ms = 500 };

		sbt_gs_header(buf, SBT_GS_HELLO, 1, sizeof(h));
		memcpy(buf + SBT_GS_HDR_LEN, &h, sizeof(h));
		n = SBT_GS_HDR_LEN + sizeof(h);
	}
	memcpy(buf + n, data + 1, size - 1);
	n += size - 1;
	if (feed(buf, n, n ? n : 1, &whole) != feed(buf, n, chunk, &parts) ||
	    whole.frames != parts.frames || whole.sum != parts.sum)
		abort();
	free(buf);
	return 0;
}
