/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The guest stream: how `sbtrace guest-agent`, inside a microVM, hands the
 * exec records of the guest kernel's BPF program to the host over a byte
 * channel the workload cannot open (a virtio-serial port).
 *
 * A stream is a sequence of frames, each a 16-byte header (little endian)
 * and its payload:
 *
 *   u32 magic "SBTG" | u8 version | u8 type | u16 reserved (0) | u32 len |
 *   u32 seq
 *
 * seq is 1 for the first frame and one more for every next one: a frame
 * lost, repeated or reordered is a gap. Types:
 *
 *   HELLO     first frame, sent once the exec hook is attached and the
 *             workload's cgroup registered (the workload may start):
 *             struct sbt_gs_hello
 *   RECORD    one ring-buffer record of the guest's exec program, as the
 *             program wrote it (the host decodes it like its own)
 *   BEAT      every heartbeat interval: struct sbt_gs_counters
 *   BYE       the last frame, at a clean stop: struct sbt_gs_counters
 *
 * The reader is pure and bounded: bytes arrive in any split, a frame's
 * payload is at most SBT_GS_PAYLOAD_MAX, and the first thing that is not a
 * well-formed next frame breaks the stream for good (the trace of that
 * sandbox is then not complete, with the reason).
 */
#ifndef SBT_GUEST_STREAM_H
#define SBT_GUEST_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SBT_GS_MAGIC	   0x47544253u /* "SBTG" in little-endian byte order */
#define SBT_GS_VERSION	   3
#define SBT_GS_HDR_LEN	   16
#define SBT_GS_PAYLOAD_MAX 65536
#define SBT_GS_KERNEL_LEN  65

enum sbt_gs_type {
	SBT_GS_HELLO = 1,
	SBT_GS_RECORD = 2,
	SBT_GS_BEAT = 3,
	SBT_GS_BYE = 4,
};

struct sbt_gs_hello {
	uint32_t abi;		  /* SBT_ABI_VERSION of the records that follow */
	uint32_t hb_ms;		  /* the heartbeat interval the agent keeps */
	int64_t boot_to_epoch_ns; /* the guest's CLOCK_REALTIME - CLOCK_BOOTTIME (its RTC: to the second) */
	uint64_t sent_boot_ns; /* the guest's CLOCK_BOOTTIME when the agent wrote this HELLO */
	char mode[16];	       /* the exec hook's mode: tp_btf, raw_tp ... (NUL-padded) */
	char kernel[SBT_GS_KERNEL_LEN]; /* the guest kernel's release (NUL-padded) */
	char pad[7];
	/*
	 * The guest's id of the workload's cgroup (the agent's --cgroup):
	 * records of that cgroup are the sandbox's own, those below it the
	 * workload's own cgroups (an engine's containers). Version 3.
	 */
	uint64_t cgroup_id;
};

struct sbt_gs_counters {
	uint64_t uptime_ms; /* since the agent attached */
	uint64_t execs;	    /* the kernel's count of the workload's execs */
	uint64_t lost;	    /* records the guest's ring buffer could not take */
	uint64_t records;   /* RECORD frames sent so far */
	/* the exec programs' own accounting (guest-agent --bpf-stats), else 0 */
	uint64_t bpf_run_ns, bpf_run_cnt;
};

enum sbt_gs_err {
	SBT_GS_OK = 0,
	SBT_GS_BAD_MAGIC,
	SBT_GS_BAD_VERSION,
	SBT_GS_BAD_TYPE,
	SBT_GS_BAD_LENGTH,
	SBT_GS_GAP,	  /* seq is not the next one */
	SBT_GS_NO_HELLO,  /* the first frame is not HELLO, or HELLO came twice */
	SBT_GS_AFTER_BYE, /* anything after BYE */
	SBT_GS_REFUSED,	  /* the frame callback said stop */
};

struct sbt_gs_frame {
	uint8_t type;
	uint32_t seq;
	const uint8_t *payload;
	uint32_t len;
};

/* Called for each well-formed frame; nonzero stops the stream (SBT_GS_REFUSED). */
typedef int (*sbt_gs_frame_fn)(void *arg, const struct sbt_gs_frame *f);

struct sbt_gs_reader {
	uint8_t *buf; /* SBT_GS_HDR_LEN + SBT_GS_PAYLOAD_MAX */
	size_t have;  /* bytes of the current frame so far */
	uint32_t len; /* its payload length, once its header is whole */
	uint32_t next_seq;
	bool hello, bye;
	enum sbt_gs_err err; /* the first error; the stream takes nothing after it */
	uint64_t frames, bytes;
};

/* 0, or -ENOMEM. */
int sbt_gs_reader_init(struct sbt_gs_reader *r);
void sbt_gs_reader_free(struct sbt_gs_reader *r);

/*
 * Take n more bytes of the stream; cb for every whole frame in them. The
 * reader's state after: r->err (also returned) is SBT_GS_OK, or the first
 * error, after which every call returns it and takes nothing.
 */
enum sbt_gs_err sbt_gs_feed(struct sbt_gs_reader *r, const void *data, size_t n, sbt_gs_frame_fn cb,
			    void *arg);

/* True when the stream ended where a frame ends (nothing half-read). */
bool sbt_gs_at_boundary(const struct sbt_gs_reader *r);

/* A short name of the error, for a reason string: "gap", "bad_magic" ... */
const char *sbt_gs_err_name(enum sbt_gs_err err);

/* Write the header of a frame into hdr[SBT_GS_HDR_LEN]. 0, or -EINVAL (len, type). */
int sbt_gs_header(uint8_t *hdr, enum sbt_gs_type type, uint32_t seq, uint32_t len);

/* The payload of a HELLO/BEAT/BYE frame, checked for its size; 0 or -EINVAL. */
int sbt_gs_hello_of(const struct sbt_gs_frame *f, struct sbt_gs_hello *out);
int sbt_gs_counters_of(const struct sbt_gs_frame *f, struct sbt_gs_counters *out);

#endif
