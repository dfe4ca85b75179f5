// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Following a guest stream file (guest_feed.h). The file only grows (qemu
 * appends what the guest writes to its port): each poll reads from where
 * the last one stopped, and a read that returns 0 is "nothing more yet",
 * not the end. Pure file I/O and the stream reader: no libbpf, unit-tested.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "exec/guest_feed.h"
#include "sbtrace.h"

/* A heartbeat interval the host believes: the agent's, kept within reason. */
#define GF_HB_MIN_MS	 50
#define GF_HB_MAX_MS	 60000
#define GF_HB_DEFAULT_MS 1000
#define GF_SILENT_BEATS	 3
#define GF_PUNCH_STEP	 (4u << 20)

static int on_frame(void *arg, const struct sbt_gs_frame *fr)
{
	struct sbt_guest_feed *f = arg;
	struct sbt_gs_counters c;

	switch (fr->type) {
	case SBT_GS_HELLO:
		if (sbt_gs_hello_of(fr, &f->hello))
			return -1;
		f->has_hello = true;
		f->offset = (int64_t)(f->now_epoch_ns - f->hello.sent_boot_ns);
		/* records of another layout would decode into nonsense: take none */
		if (f->hello.abi != SBT_ABI_VERSION) {
			f->abi_mismatch = true;
			return -1;
		}
		return 0;
	case SBT_GS_RECORD:
		f->records++;
		if (f->on_record)
			f->on_record(f->arg, fr->payload, fr->len);
		return 0;
	case SBT_GS_BEAT:
	case SBT_GS_BYE:
		if (sbt_gs_counters_of(fr, &c))
			return -1;
		f->last = c;
		f->has_beat = true;
		{
			uint64_t sent = f->hello.sent_boot_ns + c.uptime_ms * 1000000ull;
			int64_t off = (int64_t)(f->now_epoch_ns - sent);

			if (off < f->offset)
				f->offset = off;
		}
		f->has_bye = fr->type == SBT_GS_BYE;
		return 0;
	}
	return -1;
}

int sbt_guest_feed_open(struct sbt_guest_feed *f, const char *path, sbt_guest_record_fn fn,
			void *arg)
{
	struct stat st;

	memset(f, 0, sizeof(*f));
	f->on_record = fn;
	f->arg = arg;
	f->fd = -1;
	if (sbt_gs_reader_init(&f->rd))
		return f->err = -ENOMEM;
	/* read-write where it may: what was read is punched out of the file (its disk freed) */
	f->fd = open(path, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (f->fd < 0)
		f->fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (f->fd < 0)
		return f->err = -errno;
	if (fstat(f->fd, &st))
		f->err = -errno;
	else if (!S_ISREG(st.st_mode))
		f->err = -EINVAL;
	if (f->err) {
		close(f->fd);
		f->fd = -1;
	}
	return f->err;
}

void sbt_guest_feed_close(struct sbt_guest_feed *f)
{
	if (f->fd >= 0)
		close(f->fd);
	f->fd = -1;
	sbt_gs_reader_free(&f->rd);
}

/* Free the disk of what was read, a few MiB at a time (a file opened read-only keeps it). */
static void punch_read(struct sbt_guest_feed *f)
{
	uint64_t upto = f->consumed & ~(uint64_t)4095;

	if (f->no_punch || upto - f->punched < GF_PUNCH_STEP)
		return;
	if (fallocate(f->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)f->punched,
		      (off_t)(upto - f->punched)) == 0)
		f->punched = upto;
	else
		f->no_punch = true; /* read-only, or a file system without holes: never again */
}

size_t sbt_guest_feed_poll(struct sbt_guest_feed *f, size_t max_bytes, uint64_t now_ms,
			   uint64_t now_epoch_ns)
{
	unsigned char buf[65536];
	size_t total = 0;

	f->now_epoch_ns = now_epoch_ns;
	while (f->fd >= 0 && !f->err && f->rd.err == SBT_GS_OK && total < max_bytes) {
		size_t want = max_bytes - total < sizeof(buf) ? max_bytes - total : sizeof(buf);
		uint64_t frames = f->rd.frames;
		ssize_t n = read(f->fd, buf, want);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			f->err = -errno;
			break;
		}
		if (n == 0)
			break; /* nothing more yet */
		total += (size_t)n;
		f->consumed += (uint64_t)n;
		sbt_gs_feed(&f->rd, buf, (size_t)n, on_frame, f);
		punch_read(f);
		if (f->rd.frames != frames)
			f->frame_ms = now_ms;
	}
	return total;
}

int64_t sbt_guest_feed_boot_offset(const struct sbt_guest_feed *f)
{
	return f->has_hello ? f->offset : 0;
}

static const char *stream_reason(enum sbt_gs_err err)
{
	switch (err) {
	case SBT_GS_BAD_MAGIC:
		return "guest_stream_bad_magic";
	case SBT_GS_BAD_VERSION:
		return "guest_stream_bad_version";
	case SBT_GS_BAD_TYPE:
		return "guest_stream_bad_type";
	case SBT_GS_BAD_LENGTH:
		return "guest_stream_bad_length";
	case SBT_GS_GAP:
		return "guest_stream_gap";
	case SBT_GS_NO_HELLO:
		return "guest_stream_no_hello";
	case SBT_GS_AFTER_BYE:
		return "guest_stream_after_bye";
	default:
		return "guest_stream_refused";
	}
}

static uint64_t heartbeat_ms(const struct sbt_guest_feed *f)
{
	uint64_t hb = f->hello.hb_ms ? f->hello.hb_ms : GF_HB_DEFAULT_MS;

	return hb < GF_HB_MIN_MS ? GF_HB_MIN_MS : hb > GF_HB_MAX_MS ? GF_HB_MAX_MS : hb;
}

void sbt_guest_feed_account(const struct sbt_guest_feed *f, uint64_t now_ms,
			    struct sbt_guest_account *out)
{
	memset(out, 0, sizeof(*out));
	out->received = f->records;
	out->execs = f->has_beat ? f->last.execs : 0;
	if (out->execs > out->received)
		out->lost = out->execs - out->received;
	if (f->abi_mismatch)
		out->reason = "guest_abi_mismatch";
	else if (f->rd.err != SBT_GS_OK)
		out->reason = stream_reason(f->rd.err);
	else if (f->fd < 0 || f->err)
		out->reason = "guest_stream_unreadable";
	else if (!f->has_hello)
		out->reason = "guest_agent_absent";
	else if (!f->has_bye)
		out->reason = now_ms - f->frame_ms > GF_SILENT_BEATS * heartbeat_ms(f)
				      ? "guest_agent_gone"
				      : "guest_stream_unfinished";
	else if (f->last.lost)
		out->reason = "guest_ringbuf_full";
	else if (f->last.records != f->records || f->last.execs != f->records)
		out->reason = "guest_not_received";
}
