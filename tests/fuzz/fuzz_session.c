// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target: the session core of trace and agent (session/session.c),
 * driven by a program the input spells: slots added and removed, raw
 * ring-buffer records, well-formed exec and egress records with fuzzed
 * fields and strings, the kernel's counters, folded tails, a slot's end; at
 * the end the run's. Every event goes through the JSON sink (to /dev/null),
 * and the accounting must add up: received never above what was fed.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "event/sink_json.h"
#include "exec/proctab.h"
#include "session/session.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define SLOTS 8

struct input {
	const uint8_t *p;
	size_t n;
};

static uint8_t take8(struct input *in)
{
	uint8_t v = 0;

	if (in->n) {
		v = *in->p++;
		in->n--;
	}
	return v;
}

static uint16_t take16(struct input *in)
{
	return (uint16_t)(take8(in) | take8(in) << 8);
}

static size_t take_bytes(struct input *in, void *dst, size_t want)
{
	size_t n = want < in->n ? want : in->n;

	memcpy(dst, in->p, n);
	in->p += n;
	in->n -= n;
	return n;
}

static struct sbt_sandbox_stats stats[SLOTS];
static uint64_t fed_execs[SLOTS];

static int fake_stats(void *arg, uint32_t slot, struct sbt_sandbox_stats *out)
{
	(void)arg;
	if (slot >= SLOTS)
		return -1;
	*out = stats[slot];
	return 0;
}

static struct sbt_fold_key fold_keys[4];
static uint64_t fold_vals[4];

static void fake_folds(void *arg, struct sbt_session *s, uint32_t slot)
{
	(void)arg;
	for (int i = 0; i < 4; i++)
		if (slot == SBT_SESSION_ALL || fold_keys[i].slot == slot) {
			sbt_session_fold_tail(s, &fold_keys[i], fold_vals[i]);
			fold_vals[i] = 0;
		}
}

static void exec_record(struct sbt_session *s, struct input *in)
{
	unsigned char buf[sizeof(struct sbt_exec_record) + 3 * 256];
	struct sbt_exec_record r;
	uint8_t fl = take8(in), il = take8(in), al = take8(in);
	size_t n;

	memset(&r, 0, sizeof(r));
	r.hdr.type = SBT_REC_EXEC;
	r.hdr.abi = SBT_ABI_VERSION;
	r.slot = take8(in) % (SLOTS + 1);
	r.ts_boot_ns = take16(in);
	r.pid = take8(in);
	r.ppid = take8(in);
	r.flags = take8(in);
	take_bytes(in, r.comm, sizeof(r.comm));
	take_bytes(in, r.parent_comm, sizeof(r.parent_comm));
	r.filename_len = fl;
	r.interp_len = il;
	r.argv_len = r.argv_full_len = al;
	n = sizeof(r) + fl + il + al;
	r.hdr.size = (uint32_t)n;
	memcpy(buf, &r, sizeof(r));
	memset(buf + sizeof(r), 0, fl + il + al);
	take_bytes(in, buf + sizeof(r), fl + il + al);
	if (r.slot < SLOTS)
		fed_execs[r.slot]++;
	sbt_session_record(s, buf, n);
}

static void egress_record(struct sbt_session *s, struct input *in)
{
	struct sbt_egress_record r;

	memset(&r, 0, sizeof(r));
	r.hdr.type = SBT_REC_EGRESS;
	r.hdr.abi = SBT_ABI_VERSION;
	r.hdr.size = sizeof(r);
	r.slot = take8(in) % (SLOTS + 1);
	r.count = take8(in);
	r.rule_id = take8(in) % 4;
	r.floor_idx = take8(in) % 8;
	r.dport = take16(in);
	r.family = take8(in) & 1 ? 10 : 2;
	r.proto = take8(in);
	r.hook = take8(in) % SBT_HOOK__MAX;
	r.verdict = take8(in) % SBT_VERDICT__MAX;
	r.reason = take8(in) % SBT_REASON__MAX;
	take_bytes(in, r.daddr, sizeof(r.daddr));
	take_bytes(in, r.comm, sizeof(r.comm));
	sbt_session_record(s, &r, sizeof(r));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct sbt_target targets[SLOTS];
	static struct sbt_rule rule = { .id = 1, .kind = SBT_RULE_CIDR, .text = "cidr ::/0" };
	static const struct sbt_egress_cfg cfg = { .rules = &rule,
						   .nr_rules = 1,
						   .resolver_rule_id = 2 };
	const struct sbt_session_ops ops = { .read_stats = fake_stats, .flush_folds = fake_folds };
	struct input in = { data, size };
	struct sbt_trace_opts opts;
	struct sbt_json_sink sink;
	struct sbt_session s;
	static FILE *devnull;
	unsigned char raw[512];

	if (!devnull)
		devnull = fopen("/dev/null", "w");
	if (!devnull)
		return 0;
	memset(&opts, 0, sizeof(opts));
	memset(stats, 0, sizeof(stats));
	memset(fed_execs, 0, sizeof(fed_execs));
	memset(fold_vals, 0, sizeof(fold_vals));
	sbt_json_sink_init(&sink, devnull, size & 1 ? SBT_FORMAT_TEXT : SBT_FORMAT_JSON);
	sbt_sinks_add(&opts, &sink.base);
	if (sbt_session_init(&s, &opts, SLOTS, &ops)) {
		sbt_session_free(&s);
		return 0;
	}
	/* no /proc lookups: the fuzzer's own processes are not the point */
	sbt_proctab_free(s.proc);
	s.proc = sbt_proctab_new(NULL, NULL);
	while (in.n) {
		uint8_t op = take8(&in), slot = take8(&in) % SLOTS;
		struct sbt_target_totals t;

		switch (op % 9) {
		case 0:
			if (sbt_session_slot(&s, slot))
				break;
			memset(&targets[slot], 0, sizeof(targets[slot]));
			snprintf(targets[slot].name, sizeof(targets[slot].name), "/fuzz/%u", slot);
			targets[slot].slot = slot;
			targets[slot].cgroup_id = op & 0x10 ? 0 : 100 + slot;
			sbt_session_add(&s, &targets[slot], op & 0x20 ? &cfg : NULL);
			break;
		case 1:
			sbt_session_final(&s, slot, &t);
			if (sbt_session_slot(&s, slot) && t.received > fed_execs[slot])
				abort();
			sbt_session_remove(&s, slot);
			fed_execs[slot] = 0;
			break;
		case 2: {
			size_t n = take8(&in);

			n = take_bytes(&in, raw, n);
			sbt_session_record(&s, raw, n);
			break;
		}
		case 3:
		case 4:
			exec_record(&s, &in);
			break;
		case 5:
			egress_record(&s, &in);
			break;
		case 6:
			stats[slot].execs = take16(&in);
			stats[slot].lost = take8(&in);
			stats[slot].egress = take8(&in);
			stats[slot].egress_lost = take8(&in);
			sbt_session_drops(&s);
			sbt_session_pending(&s);
			break;
		case 7: {
			int k = take8(&in) & 3;

			take_bytes(&in, &fold_keys[k], sizeof(fold_keys[k]));
			fold_keys[k].slot %= SLOTS + 1;
			fold_vals[k] = take8(&in);
			break;
		}
		default: {
			struct sbt_ev_stats base = { .uptime_ms = 1 };

			sbt_session_stats(&s, &base);
			break;
		}
		}
	}
	sbt_session_stopped(&s, "fuzz", 1);
	sbt_sinks_flush(&opts);
	sbt_session_free(&s);
	return 0;
}
