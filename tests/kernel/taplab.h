/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A lab for the tap program (bpf/tap.bpf.c) on the real kernel: the sbtrace
 * object loaded with tap_ingress and tap_egress alone, one tap registered on ifindex 1 (the
 * device BPF_PROG_TEST_RUN runs tc programs on: loopback), rules compiled by
 * the library exactly as the loader does, frames fed through test_run, and
 * the events the program sent read back from the ring buffer.
 * Used by the packet table test, the fuzz target and the benchmark. Needs
 * root (CAP_BPF, CAP_NET_ADMIN).
 */
#ifndef SBT_TESTS_TAPLAB_H
#define SBT_TESTS_TAPLAB_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include "event/decode.h"
#include "egress/policy.h"
#include "egress/policy_compile.h"
#include "sbtrace.h"
#include "sbtrace.skel.h"

#define TAPLAB_IFINDEX	  1 /* test_run's device */
#define TAPLAB_MAX_RULES  16
#define TAPLAB_MAX_EVENTS 64

#define TAPLAB_TC_OK	   0
#define TAPLAB_TC_SHOT	   2
#define TAPLAB_TC_REDIRECT 7

struct taplab {
	struct sbtrace_bpf *skel;
	struct ring_buffer *rb;
	int prog_fd;
	struct sbt_egress events[TAPLAB_MAX_EVENTS];
	int nr_events;
	int bad_records;
};

static inline int taplab_on_record(void *ctx, void *data, size_t size)
{
	struct taplab *L = ctx;

	if (L->nr_events >= TAPLAB_MAX_EVENTS)
		return 0;
	if (sbt_decode_egress(data, size, &L->events[L->nr_events]) == SBT_DECODE_OK)
		L->nr_events++;
	else
		L->bad_records++;
	return 0;
}

/* Silence libbpf unless TAPLAB_VERBOSE is set. */
static inline int taplab_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (!getenv("TAPLAB_VERBOSE"))
		return 0;
	return vfprintf(stderr, fmt, ap);
}

/*
 * Load the program, register the tap (`tap->ifindex` and `slot` are set
 * here), set the egress mode and write `rules` (rule lines as in an
 * allowlist file, ids 1..n). 0 or -errno with a message on stderr.
 */
static inline int taplab_open(struct taplab *L, uint8_t mode, const char *const *rules,
			      size_t nr_rules, const struct sbt_tap *tap)
{
	struct sbt_rule r[TAPLAB_MAX_RULES];
	struct sbt_policy_entry entries[TAPLAB_MAX_RULES + SBT_FLOOR_ENTRIES_MAX];
	struct sbt_parse_error perr;
	struct bpf_program *prog;
	int n, err, fd;

	memset(L, 0, sizeof(*L));
	libbpf_set_print(taplab_print);
	if (nr_rules > TAPLAB_MAX_RULES)
		return -E2BIG;
	L->skel = sbtrace_bpf__open();
	if (!L->skel) {
		fprintf(stderr, "taplab: open: %s\n", strerror(errno));
		return -errno;
	}
	bpf_object__for_each_program(prog, L->skel->obj) bpf_program__set_autoload(prog, false);
	bpf_program__set_autoload(L->skel->progs.tap_ingress, true);
	bpf_program__set_autoload(L->skel->progs.tap_egress, true);
	bpf_map__set_max_entries(L->skel->maps.events, 1 << 16);
	L->skel->rodata->wakeup_each = 0;
	err = sbtrace_bpf__load(L->skel);
	if (err) {
		fprintf(stderr, "taplab: load: %s (TAPLAB_VERBOSE=1 shows the verifier log)\n",
			strerror(-err));
		sbtrace_bpf__destroy(L->skel);
		L->skel = NULL;
		return err;
	}
	L->prog_fd = bpf_program__fd(L->skel->progs.tap_ingress);
	L->skel->bss->taps[0] = *tap;
	L->skel->bss->taps[0].ifindex = TAPLAB_IFINDEX;
	L->skel->bss->taps[0].slot = 0;
	L->skel->bss->nr_taps = 1;
	L->skel->bss->egress_mode[0] = mode;
	for (size_t i = 0; i < nr_rules; i++) {
		if (sbt_rule_parse(rules[i], &r[i], &perr) != 1) {
			fprintf(stderr, "taplab: rule '%s': %s\n", rules[i], perr.msg);
			return -EINVAL;
		}
		r[i].id = (uint32_t)i + 1;
	}
	n = sbt_policy_compile(r, nr_rules, entries, sizeof(entries) / sizeof(entries[0]), &perr);
	if (n < 0) {
		fprintf(stderr, "taplab: compile: %s\n", perr.msg);
		return n;
	}
	fd = bpf_map__fd(L->skel->maps.egress_policy);
	for (int i = 0; i < n; i++) {
		struct sbt_policy_key key;
		struct sbt_policy_val val;

		sbt_policy_bpf_entry(&entries[i], 0, &key, &val);
		if (bpf_map_update_elem(fd, &key, &val, BPF_ANY))
			return -errno;
	}
	L->rb = ring_buffer__new(bpf_map__fd(L->skel->maps.events), taplab_on_record, L, NULL);
	return L->rb ? 0 : -errno;
}

static inline void taplab_close(struct taplab *L)
{
	ring_buffer__free(L->rb);
	if (L->skel)
		sbtrace_bpf__destroy(L->skel);
	memset(L, 0, sizeof(*L));
}

/* Forget what the fold and fragment tables remember (between independent cases). */
static inline void taplab_reset(struct taplab *L)
{
	struct bpf_map *maps[] = { L->skel->maps.egress_fold, L->skel->maps.tap_frags };

	for (size_t m = 0; m < 2; m++) {
		char key[64], next[64];
		int fd = bpf_map__fd(maps[m]);

		while (bpf_map_get_next_key(fd, NULL, next) == 0) {
			memcpy(key, next, sizeof(key));
			bpf_map_delete_elem(fd, key);
		}
	}
	ring_buffer__consume(L->rb);
	L->nr_events = 0;
}

/*
 * Run one frame. *ret gets the program's verdict (TAPLAB_TC_*), out (when
 * given, out_cap bytes) the frame as the program left it (a reply for
 * TAPLAB_TC_REDIRECT) and *out_len its length; with repeat > 1, *ns_per_run
 * the kernel's average. Events land in L->events (L->nr_events counts).
 */
static inline int taplab_run(struct taplab *L, const void *frame, size_t len, void *out,
			     uint32_t out_cap, uint32_t *out_len, int *ret, uint32_t repeat,
			     uint32_t *ns_per_run)
{
	struct __sk_buff ctx = { .ifindex = TAPLAB_IFINDEX };
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = frame, .data_size_in = (uint32_t)len,
		    .data_out = out, .data_size_out = out ? out_cap : 0, .ctx_in = &ctx,
		    .ctx_size_in = sizeof(ctx), .repeat = repeat);
	int err = bpf_prog_test_run_opts(L->prog_fd, &o);

	if (err)
		return -errno;
	*ret = (int)o.retval;
	if (out_len)
		*out_len = o.data_size_out;
	if (ns_per_run)
		*ns_per_run = o.duration;
	ring_buffer__consume(L->rb);
	return 0;
}

#endif
