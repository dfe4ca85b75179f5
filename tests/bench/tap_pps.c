// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The tap program's cost per frame, from the kernel's own clock
 * (BPF_PROG_TEST_RUN duration), next to an empty tc program measured the
 * same way in the same run:
 *
 *   tap_pps [RUNS]
 *
 * Frames that pass are run with repeat (the kernel averages RUNS runs): the
 * segments of one flow, whose verdict the flow cache holds. A denied SYN
 * turns into its RST on the first run, so it is run once per call (RUNS/10
 * calls), and so is the uncached case (the policy generation bumped before
 * each call: every frame goes to the trie); those compare with the empty
 * program run once per call too (the clock reads around a single run are in
 * both).
 * ROUNDS rounds, each measuring the two floors (the empty program with
 * repeat and run once per call) and then every case, so that each case has
 * its floor from the same round. Prints per round one line per case:
 * "round R case NAME ns N floor_ns F" (F: the empty program measured alike).
 * Exit codes: 0 ok, 1 a run failed, 3 load failed.
 */
#include <stdlib.h>

#include "bench_empty.skel.h"
#include "tests/common/frames.h"
#include "tests/kernel/taplab.h"

#define ROUNDS 5

static const char *const rules[] = {
	"cidr 198.51.100.7/32 port 80 proto tcp",
	"cidr 2001:db8:2::7/128 port 80 proto tcp",
	"cidr 192.0.2.0/24",
	"cidr 2001:db8:4::/48 port 443",
};

/*
 * One round: the per-run average (repeat) or the mean of RUNS single runs.
 * With gen (single runs only), *gen is bumped before each run: the flow
 * cache never hits, every frame goes to the trie.
 */
static int measure(int prog_fd, const struct frame *f, uint32_t runs, bool single, int want,
		   volatile uint32_t *gen, uint32_t *ns)
{
	uint8_t out[FRAME_BUF_SIZE + 256];
	uint32_t calls = single ? runs : 1;
	uint64_t sum = 0;

	for (uint32_t c = 0; c < calls; c++) {
		struct __sk_buff ctx = { .ifindex = TAPLAB_IFINDEX };
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = f->buf,
			    .data_size_in = (uint32_t)f->len, .data_out = out,
			    .data_size_out = sizeof(out), .ctx_in = &ctx,
			    .ctx_size_in = sizeof(ctx), .repeat = single ? 1 : runs);

		if (gen)
			(*gen)++;
		if (bpf_prog_test_run_opts(prog_fd, &o)) {
			perror("tap_pps: test_run");
			return -1;
		}
		if (want >= 0 && (int)o.retval != want) {
			fprintf(stderr, "tap_pps: verdict %u, expected %d\n", o.retval, want);
			return -1;
		}
		sum += o.duration;
	}
	*ns = (uint32_t)(sum / calls);
	return 0;
}

static void tcp_frame(struct frame *f, struct frame_addr src, struct frame_addr dst, uint16_t dport,
		      uint8_t flags, size_t payload)
{
	static const uint8_t data[1400];

	frame_init(f);
	frame_eth(f, FRAME_MAC(2, 0, 0, 0, 0, 1), FRAME_MAC(2, 0, 0, 0, 0, 2), 0);
	frame_ip(f, &(struct frame_ip){ .src = src, .dst = dst });
	frame_tcp(f, &(struct frame_tcp){ .sport = 40000,
					  .dport = dport,
					  .seq = 7,
					  .ack = flags & FRAME_TCP_ACK ? 9 : 0,
					  .flags = flags,
					  .window = 64240,
					  .mss = flags & FRAME_TCP_SYN ? 1460 : 0 });
	if (payload)
		frame_payload(f, data, payload);
	frame_finish(f);
}

int main(int argc, char **argv)
{
	struct frame_addr g4 = FRAME_V4(203, 0, 113, 254),
			  g6 = FRAME_V6(0x2001, 0xdb8, 9, 0, 0, 0, 0, 2);
	struct frame_addr a4 = FRAME_V4(198, 51, 100, 7),
			  a6 = FRAME_V6(0x2001, 0xdb8, 2, 0, 0, 0, 0, 7);
	struct frame_addr d4 = FRAME_V4(203, 0, 113, 5),
			  d6 = FRAME_V6(0x2001, 0xdb8, 3, 0, 0, 0, 0, 5);
	struct sbt_tap t = { .flags = SBT_TAP_CHECK_SRC | SBT_TAP_GUEST4 | SBT_TAP_GUEST6 };
	uint32_t runs = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 10) : 200000;
	struct bench_empty_bpf *empty;
	struct taplab lab;
	/* Established segments (ACK + 100 bytes) and SYNs; passes with repeat, the rest once a call. */
	const struct {
		const char *name;
		bool v6, deny, syn, single, uncached;
		int want;
	} table[] = {
		{ "allowed_v4_tcp", false, false, false, false, false, TAPLAB_TC_OK },
		{ "allowed_v6_tcp", true, false, false, false, false, TAPLAB_TC_OK },
		{ "allowed_v4_syn_folded", false, false, true, false, false, TAPLAB_TC_OK },
		{ "allowed_v6_syn_folded", true, false, true, false, false, TAPLAB_TC_OK },
		{ "allowed_v4_tcp_uncached", false, false, false, true, true, TAPLAB_TC_OK },
		{ "allowed_v6_tcp_uncached", true, false, false, true, true, TAPLAB_TC_OK },
		{ "denied_v4_syn_rst", false, true, true, true, false, TAPLAB_TC_REDIRECT },
		{ "denied_v6_syn_rst", true, true, true, true, false, TAPLAB_TC_REDIRECT },
	};
	enum { N = sizeof(table) / sizeof(table[0]) };
	static struct frame frames[N];
	int empty_fd;
	uint32_t floor_rep, floor_single, ns;

	if (!runs)
		runs = 200000;
	memcpy(t.guest4, g4.a + 12, 4);
	memcpy(t.guest6, g6.a, 16);
	if (taplab_open(&lab, SBT_EGRESS_ENFORCE, rules, 4, &t))
		return 3;
	empty = bench_empty_bpf__open_and_load();
	if (!empty) {
		fprintf(stderr, "tap_pps: cannot load bench_empty\n");
		return 3;
	}
	empty_fd = bpf_program__fd(empty->progs.bench_empty_tc);
	for (int i = 0; i < N; i++) {
		bool v6 = table[i].v6;

		tcp_frame(&frames[i], v6 ? g6 : g4, table[i].deny ? (v6 ? d6 : d4) : (v6 ? a6 : a4),
			  80, table[i].syn ? FRAME_TCP_SYN : FRAME_TCP_ACK, table[i].syn ? 0 : 100);
	}

	for (int r = 1; r <= ROUNDS; r++) {
		if (measure(empty_fd, &frames[0], runs, false, 0, NULL, &floor_rep) ||
		    measure(empty_fd, &frames[0], runs / 10, true, 0, NULL, &floor_single))
			return 1;
		for (int i = 0; i < N; i++) {
			taplab_reset(&lab);
			if (measure(lab.prog_fd, &frames[i], table[i].single ? runs / 10 : runs,
				    table[i].single, table[i].want,
				    table[i].uncached ? &lab.skel->bss->policy_gen : NULL, &ns))
				return 1;
			printf("round %d case %s ns %u floor_ns %u\n", r, table[i].name, ns,
			       table[i].single ? floor_single : floor_rep);
		}
		printf("round %d case empty_tc ns %u floor_ns %u\n", r, floor_rep, floor_rep);
		printf("round %d case empty_tc_single ns %u floor_ns %u\n", r, floor_single,
		       floor_single);
	}
	bench_empty_bpf__destroy(empty);
	taplab_close(&lab);
	return 0;
}
