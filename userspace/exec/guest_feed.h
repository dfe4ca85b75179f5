/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A microVM's guest stream, followed by the host's trace: the file qemu
 * writes the guest agent's virtio-serial port into (STATE_DIR/NAME.vm/
 * exec.stream), read as it grows, its frames checked (guest_stream.h) and
 * each RECORD handed to the trace, which decodes it like its own.
 *
 * What the feed trusts: the guest kernel and the init sbtrace boots (they
 * start the agent before the workload, as root, and the workload cannot
 * reach the port). What it does not: that the stream is whole. It is
 * complete only when it ends with the agent's BYE, every frame in sequence,
 * the guest kernel's count of execs equal to the records sent and received,
 * nothing lost in the guest's ring buffer; else sbt_guest_feed_account()
 * says why not.
 */
#ifndef SBT_GUEST_FEED_H
#define SBT_GUEST_FEED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "exec/guest_stream.h"

/* One RECORD frame's payload: a ring-buffer record of the guest's exec program. */
typedef void (*sbt_guest_record_fn)(void *arg, const void *data, size_t size);

struct sbt_guest_feed {
	int fd; /* the stream file, -1 when it could not be opened */
	struct sbt_gs_reader rd;
	struct sbt_gs_hello hello;
	struct sbt_gs_counters last; /* the last BEAT's counters, or the BYE's */
	bool has_hello, has_beat, has_bye;
	uint64_t records;	    /* RECORD frames handed on */
	uint64_t consumed, punched; /* bytes read; of them, punched out of the file */
	bool no_punch;		    /* the file cannot be punched (read-only ...) */
	uint64_t frame_ms;	    /* CLOCK_MONOTONIC ms when the last frame was read, 0: none */
	int err;		    /* -errno of the open or of a failed read, 0 */
	bool abi_mismatch;	    /* HELLO named records of another layout: nothing is decoded */
	/*
	 * The guest's CLOCK_BOOTTIME → the host's epoch: the host's time of
	 * reading a frame minus the guest's time of writing it (HELLO's
	 * sent_boot_ns; a BEAT's is HELLO's plus its uptime_ms), the smallest
	 * seen: late by at most the delivery (a poll tick), not by the guest's
	 * RTC-set clock's second.
	 */
	int64_t offset;
	uint64_t now_epoch_ns; /* the poll's time of reading */
	sbt_guest_record_fn on_record;
	void *arg;
};

/* What the stream accounts for (guest execs), and why it is not complete. */
struct sbt_guest_account {
	uint64_t execs;	   /* the guest kernel's count: the BYE's, else the last BEAT's */
	uint64_t received; /* records received */
	uint64_t lost;	   /* execs never received (the guest's ring buffer, the stream) */
	/*
	 * NULL when complete; else one of: guest_stream_unreadable,
	 * guest_agent_absent (no HELLO), guest_abi_mismatch,
	 * guest_stream_<reader error> (bad_magic, gap ...), guest_agent_gone
	 * (no BYE, silent for 3 heartbeats: dead, or the VM ended without it),
	 * guest_stream_unfinished (no BYE yet: the trace stopped while the agent
	 * was still beating), guest_ringbuf_full, guest_not_received.
	 */
	const char *reason;
};

/* Open `path` (a regular file, no symlink) and set up. 0 or -errno (f->err; the feed stays usable and incomplete). */
int sbt_guest_feed_open(struct sbt_guest_feed *f, const char *path, sbt_guest_record_fn fn,
			void *arg);
void sbt_guest_feed_close(struct sbt_guest_feed *f);

/*
 * Read what the file has gained (at most max_bytes), frames to their
 * handlers. now_ms: CLOCK_MONOTONIC ms. Returns the bytes read.
 */
size_t sbt_guest_feed_poll(struct sbt_guest_feed *f, size_t max_bytes, uint64_t now_ms,
			   uint64_t now_epoch_ns);

/* The guest's CLOCK_BOOTTIME ns → the host's epoch ns (see offset; 0 before HELLO). */
int64_t sbt_guest_feed_boot_offset(const struct sbt_guest_feed *f);

/* The stream's accounting at now_ms (see struct sbt_guest_account). */
void sbt_guest_feed_account(const struct sbt_guest_feed *f, uint64_t now_ms,
			    struct sbt_guest_account *out);

#endif
