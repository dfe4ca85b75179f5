// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The guest stream's frames (see guest_stream.h). The header is read byte
 * by byte in little-endian order; payloads are in the byte order of the
 * guest, which is the host's (the records are the BPF program's own, and a
 * microVM here is the host's architecture).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "exec/guest_stream.h"

_Static_assert(sizeof(struct sbt_gs_hello) == 120, "guest stream: HELLO payload layout");
_Static_assert(sizeof(struct sbt_gs_counters) == 48, "guest stream: counters payload layout");

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

int sbt_gs_reader_init(struct sbt_gs_reader *r)
{
	memset(r, 0, sizeof(*r));
	r->buf = malloc(SBT_GS_HDR_LEN + SBT_GS_PAYLOAD_MAX);
	r->next_seq = 1;
	return r->buf ? 0 : -ENOMEM;
}

void sbt_gs_reader_free(struct sbt_gs_reader *r)
{
	free(r->buf);
	r->buf = NULL;
}

int sbt_gs_header(uint8_t *hdr, enum sbt_gs_type type, uint32_t seq, uint32_t len)
{
	if (type < SBT_GS_HELLO || type > SBT_GS_BYE || len > SBT_GS_PAYLOAD_MAX)
		return -EINVAL;
	put32(hdr, SBT_GS_MAGIC);
	hdr[4] = SBT_GS_VERSION;
	hdr[5] = (uint8_t)type;
	hdr[6] = 0;
	hdr[7] = 0;
	put32(hdr + 8, len);
	put32(hdr + 12, seq);
	return 0;
}

/* The header at r->buf: its payload length, or an error. */
static enum sbt_gs_err check_header(const struct sbt_gs_reader *r, uint32_t *len)
{
	const uint8_t *h = r->buf;
	uint8_t type = h[5];

	if (get32(h) != SBT_GS_MAGIC)
		return SBT_GS_BAD_MAGIC;
	if (h[4] != SBT_GS_VERSION || h[6] || h[7])
		return SBT_GS_BAD_VERSION;
	if (type < SBT_GS_HELLO || type > SBT_GS_BYE)
		return SBT_GS_BAD_TYPE;
	*len = get32(h + 8);
	if (*len > SBT_GS_PAYLOAD_MAX)
		return SBT_GS_BAD_LENGTH;
	if (get32(h + 12) != r->next_seq)
		return SBT_GS_GAP;
	if (r->bye)
		return SBT_GS_AFTER_BYE;
	if ((type == SBT_GS_HELLO) == r->hello)
		return SBT_GS_NO_HELLO; /* HELLO first, and only first */
	if ((type == SBT_GS_HELLO && *len != sizeof(struct sbt_gs_hello)) ||
	    ((type == SBT_GS_BEAT || type == SBT_GS_BYE) &&
	     *len != sizeof(struct sbt_gs_counters)) ||
	    (type == SBT_GS_RECORD && *len == 0))
		return SBT_GS_BAD_LENGTH;
	return SBT_GS_OK;
}

enum sbt_gs_err sbt_gs_feed(struct sbt_gs_reader *r, const void *data, size_t n, sbt_gs_frame_fn cb,
			    void *arg)
{
	const uint8_t *p = data;

	while (!r->err && n) {
		bool in_header = r->have < SBT_GS_HDR_LEN;
		size_t want = (in_header ? SBT_GS_HDR_LEN : SBT_GS_HDR_LEN + r->len) - r->have;
		size_t take = n < want ? n : want;

		memcpy(r->buf + r->have, p, take);
		r->have += take;
		r->bytes += take;
		p += take;
		n -= take;
		if (in_header && r->have == SBT_GS_HDR_LEN)
			r->err = check_header(r, &r->len); /* once per frame, before its payload */
		if (r->err || r->have < SBT_GS_HDR_LEN || r->have < SBT_GS_HDR_LEN + r->len)
			continue;
		{
			struct sbt_gs_frame f = { .type = r->buf[5],
						  .seq = r->next_seq,
						  .payload = r->buf + SBT_GS_HDR_LEN,
						  .len = r->len };

			r->hello = true;
			r->bye = f.type == SBT_GS_BYE;
			r->next_seq++;
			r->frames++;
			r->have = 0;
			if (cb && cb(arg, &f))
				r->err = SBT_GS_REFUSED;
		}
	}
	return r->err;
}

bool sbt_gs_at_boundary(const struct sbt_gs_reader *r)
{
	return r->have == 0;
}

const char *sbt_gs_err_name(enum sbt_gs_err err)
{
	static const char *const names[] = {
		[SBT_GS_OK] = "ok",
		[SBT_GS_BAD_MAGIC] = "bad_magic",
		[SBT_GS_BAD_VERSION] = "bad_version",
		[SBT_GS_BAD_TYPE] = "bad_type",
		[SBT_GS_BAD_LENGTH] = "bad_length",
		[SBT_GS_GAP] = "gap",
		[SBT_GS_NO_HELLO] = "no_hello",
		[SBT_GS_AFTER_BYE] = "after_bye",
		[SBT_GS_REFUSED] = "refused",
	};

	return (unsigned)err < sizeof(names) / sizeof(names[0]) ? names[err] : "unknown";
}

int sbt_gs_hello_of(const struct sbt_gs_frame *f, struct sbt_gs_hello *out)
{
	if (f->type != SBT_GS_HELLO || f->len != sizeof(*out))
		return -EINVAL;
	memcpy(out, f->payload, sizeof(*out));
	out->mode[sizeof(out->mode) - 1] = '\0';
	out->kernel[sizeof(out->kernel) - 1] = '\0';
	return 0;
}

int sbt_gs_counters_of(const struct sbt_gs_frame *f, struct sbt_gs_counters *out)
{
	if ((f->type != SBT_GS_BEAT && f->type != SBT_GS_BYE) || f->len != sizeof(*out))
		return -EINVAL;
	memcpy(out, f->payload, sizeof(*out));
	return 0;
}
