// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The session core on the loaded object (session_bpf.h): the per-slot
 * counters (sandbox_stats), the fold table (egress_fold) and the ring
 * buffer (events), shared by trace.c and agent.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "sbtrace.h"
#include "sbtrace.skel.h"
#include "egress.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "loader.h"
#include "session_bpf.h"
#include "lib/log.h"

static int read_stats(void *arg, uint32_t slot, struct sbt_sandbox_stats *out)
{
	struct sbt_session_bpf *sb = arg;

	return bpf_map_lookup_elem(sb->stats_fd, &slot, out) ? -errno : 0;
}

/* The keys first (deleting while walking would restart the walk), then each one's tail. */
static void flush_folds(void *arg, struct sbt_session *s, uint32_t slot)
{
	struct sbt_session_bpf *sb = arg;
	struct sbt_fold_key *keys = NULL, key, next, *prev = NULL;
	size_t n = 0, cap = 0;

	while (bpf_map_get_next_key(sb->fold_fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		if (slot != SBT_SESSION_ALL && key.slot != slot)
			continue;
		if (n == cap) {
			struct sbt_fold_key *k = realloc(keys, (cap ? cap * 2 : 16) * sizeof(*k));

			if (!k) {
				sbt_log("out of memory: some folded egress verdicts are not "
					"reported");
				break;
			}
			keys = k;
			cap = cap ? cap * 2 : 16;
		}
		keys[n++] = key;
	}
	for (size_t i = 0; i < n; i++) {
		struct sbt_fold_val val;

		if (bpf_map_lookup_and_delete_elem(sb->fold_fd, &keys[i], &val) &&
		    (bpf_map_lookup_elem(sb->fold_fd, &keys[i], &val) ||
		     bpf_map_delete_elem(sb->fold_fd, &keys[i])))
			continue;
		sbt_session_fold_tail(s, &keys[i], val.folded);
	}
	free(keys);
}

static bool learned_name(void *arg, uint32_t slot, const uint8_t addr[16], char *name, size_t len,
			 uint64_t *ts_ns)
{
	struct sbt_session_bpf *sb = arg;

	return sb->egress && sbt_egress_learned_name(sb->egress, slot, addr, name, len, ts_ns);
}

static void unknown_slot(void *arg, uint32_t slot)
{
	struct sbt_session_bpf *sb = arg;

	if (sb->unknown_slot)
		sb->unknown_slot(sb->arg, slot);
}

int sbt_session_bpf_open(struct sbt_session_bpf *sb, struct sbtrace_bpf *skel,
			 const struct sbt_trace_opts *opts, uint32_t max)
{
	const struct sbt_session_ops ops = { .read_stats = read_stats,
					     .flush_folds = flush_folds,
					     .learned_name = learned_name,
					     .unknown_slot = unknown_slot,
					     .arg = sb };

	sb->skel = skel;
	sb->stats_fd = bpf_map__fd(skel->maps.sandbox_stats);
	sb->fold_fd = bpf_map__fd(skel->maps.egress_fold);
	if (sbt_session_init(&sb->core, opts, max, &ops)) {
		sbt_log("out of memory");
		return -ENOMEM;
	}
	sb->rb = ring_buffer__new(bpf_map__fd(skel->maps.events), sbt_session_record, &sb->core,
				  NULL);
	if (!sb->rb) {
		int err = -errno;

		sbt_log("cannot set up the ring buffer: %s", strerror(-err));
		return err;
	}
	return 0;
}

void sbt_session_bpf_close(struct sbt_session_bpf *sb)
{
	ring_buffer__free(sb->rb);
	sb->rb = NULL;
	sbt_session_free(&sb->core);
}

int sbt_session_bpf_poll(struct sbt_session_bpf *sb, int timeout_ms)
{
	int err = ring_buffer__poll(sb->rb, timeout_ms);

	/* Records come without wake-ups (see exec.bpf.c): take what is there on the tick too. */
	if (err >= 0 || err == -EINTR)
		err = ring_buffer__consume(sb->rb);
	return err < 0 && err != -EINTR ? err : 0;
}

int sbt_session_bpf_consume(struct sbt_session_bpf *sb)
{
	int err = ring_buffer__consume(sb->rb);

	return err < 0 && err != -EINTR ? err : 0;
}

void sbt_session_bpf_drain(struct sbt_session_bpf *sb)
{
	uint64_t deadline = sbt_mono_ms() + 250;

	for (;;) {
		ring_buffer__consume(sb->rb);
		if (!sbt_session_pending(&sb->core) || sbt_mono_ms() >= deadline)
			break;
		sbt_sleep_ms(2);
	}
	sbt_session_drops(&sb->core);
}

int sbt_session_bpf_flush(struct sbt_session_bpf *sb)
{
	int err = sbt_sinks_flush(sb->core.opts);

	if (!err && sbt_hup_pending) {
		sbt_hup_pending = 0;
		err = sbt_sinks_reopen(sb->core.opts);
	}
	if (err)
		sbt_log("writing output failed: %s", strerror(-err));
	return err;
}

int sbt_session_bpf_fd(const struct sbt_session_bpf *sb)
{
	return ring_buffer__epoll_fd(sb->rb);
}
