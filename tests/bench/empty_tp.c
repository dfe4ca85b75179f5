// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Benchmark floor: load and attach bench_empty (a tp_btf/sched_process_exec
 * program that returns 0 at once), print "attached <prog_id>", then wait for
 * SIGINT or SIGTERM, detach and exit 0. Its bpf_stats run time per call is
 * the cost of merely having a tp_btf program on the exec hook.
 *
 *   empty_tp [-v] [-s]
 *
 *   -v  libbpf debug output on stderr
 *   -s  also hold a BPF_ENABLE_STATS(BPF_STATS_RUN_TIME) fd while attached, so
 *       run_time_ns/run_cnt keep counting even if someone else writes
 *       kernel.bpf_stats_enabled=0 meanwhile (the kernel refcounts both)
 *
 * Exit codes: 0 stopped by a signal, 2 usage, 3 load/attach failed.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bench_empty.skel.h"

static int verbose;

static int quiet_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (!verbose)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

/* The handler only exists so that SIGINT, ignored in background jobs of a
 * non-interactive shell, is delivered; sigwait() below does the waiting. */
static void on_signal(int sig)
{
	(void)sig;
}

int main(int argc, char **argv)
{
	struct bench_empty_bpf *skel;
	struct bpf_prog_info info;
	__u32 info_len = sizeof(info);
	struct sigaction sa;
	sigset_t set;
	int err, sig, fd, stats = 0, stats_fd = -1;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-v") == 0) {
			verbose = 1;
		} else if (strcmp(argv[i], "-s") == 0) {
			stats = 1;
		} else {
			fprintf(stderr, "usage: empty_tp [-v] [-s]\n");
			return 2;
		}
	}
	libbpf_set_print(quiet_print);

	/* Block first so that a signal arriving during load is not lost. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, NULL);

	if (stats) {
		stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
		if (stats_fd < 0) {
			fprintf(stderr, "empty_tp: enable bpf stats: %s\n", strerror(errno));
			return 3;
		}
	}

	skel = bench_empty_bpf__open_and_load();
	if (!skel) {
		fprintf(stderr, "empty_tp: open/load bench_empty: %s\n", strerror(errno));
		return 3;
	}
	err = bench_empty_bpf__attach(skel);
	if (err) {
		fprintf(stderr, "empty_tp: attach bench_empty_exec: %s\n", strerror(-err));
		bench_empty_bpf__destroy(skel);
		return 3;
	}
	fd = bpf_program__fd(skel->progs.bench_empty_exec);
	memset(&info, 0, sizeof(info));
	err = fd < 0 ? fd : bpf_obj_get_info_by_fd(fd, &info, &info_len);
	if (err) {
		fprintf(stderr, "empty_tp: prog info: %s\n", strerror(-err));
		bench_empty_bpf__destroy(skel);
		return 3;
	}
	printf("attached %u\n", info.id);
	fflush(stdout);

	do {
		err = sigwait(&set, &sig);
	} while (err == EINTR);

	bench_empty_bpf__detach(skel);
	bench_empty_bpf__destroy(skel);
	if (stats_fd >= 0)
		close(stats_fd);
	return 0;
}
