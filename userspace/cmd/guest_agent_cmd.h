/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * `sbtrace guest-agent`: run by a microVM guest's init (ours, trusted,
 * before the workload), it loads the exec hook into the guest kernel for the
 * workload's cgroup and sends every record, in the guest stream's frames
 * (guest_stream.h), down a port the workload cannot open. Options → request
 * → the loader's function (passed in: the parsing stays pure C).
 */
#ifndef SBT_GUEST_AGENT_CMD_H
#define SBT_GUEST_AGENT_CMD_H

#include <stdint.h>
#include <stdio.h>

#include "trace/tracer.h"

#define SBT_GUEST_HB_DEFAULT_MS 500

struct sbt_guest_agent_opts {
	struct sbt_exec_opts exec;
	const char *port;   /* the channel to the host (a virtio-serial port, a FIFO, a file) */
	const char *cgroup; /* the workload's cgroup (v2 path) */
	/*
	 * Where the workload itself runs, at or below cgroup (NULL: cgroup): its
	 * id is HELLO's; cgroups below cgroup but not it are the workload's own
	 * (an engine's containers).
	 */
	const char *own_cgroup;
	int ready_fd; /* "attached\n" here once HELLO is sent; -1: none */
	/*
	 * A guest restored from a saved state (the qemu backend's boot:
	 * restored): after "attached\n" on ready_fd, wait on this fd for the
	 * host's "go EPOCH_NS SEED" (sbt_guest_resume_parse), set the clock,
	 * reseed the kernel's RNG, then send HELLO and "resumed\n". -1: none.
	 */
	int resume_fd;
	uint32_t hb_ms; /* heartbeat interval */
	bool bpf_stats; /* turn the kernel's BPF run-time accounting on; report it */
};

/* The host's word to a restored guest: the time and fresh randomness. */
#define SBT_GUEST_SEED_LEN 32
struct sbt_guest_resume {
	uint64_t epoch_ns; /* CLOCK_REALTIME, ns */
	uint8_t seed[SBT_GUEST_SEED_LEN];
};
/* "go <epoch ns, decimal> <64 lower-case hex digits>", a newline at the end allowed: 0 or -EINVAL/-ERANGE. */
int sbt_guest_resume_parse(const char *line, size_t len, struct sbt_guest_resume *r);

typedef int (*sbt_guest_agent_fn)(const struct sbt_guest_agent_opts *opts);

/* Parse the options. -1 to go on, else an exit code (0 after --help). */
int sbt_guest_agent_args_parse(int argc, char **argv, struct sbt_guest_agent_opts *o);
int sbt_guest_agent_main(int argc, char **argv, sbt_guest_agent_fn run);
void sbt_guest_agent_usage(FILE *f);

#endif
