/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* What sbtrace-shim's commands share: exit codes, the run's waits (help and usage errors: usage.h). */
#ifndef SBT_SHIM_H
#define SBT_SHIM_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

enum {
	SHIM_EXIT_OK = 0,
	SHIM_EXIT_RUNTIME = 1, /* gc: the state dir could not be read */
	SHIM_EXIT_USAGE = 2,
	SHIM_EXIT_SETUP = 3,
	SHIM_EXIT_VM_TIMEOUT = 124,  /* as timeout(1) */
	SHIM_EXIT_TRACER_LOST = 125, /* the tracer died while the workload ran: it was killed */
};

struct sbt_sandbox_run;

/* sbtrace-shim run (run.c) and gc (gc.c). */
int shim_cmd_run(int argc, char **argv);
int shim_cmd_gc(int argc, char **argv);

/* run's waits (wait.c); sfd a signalfd, pidfd the sandbox's (-1: polled). */
#define GRACE_MS 2000 /* after forwarding SIGINT/SIGTERM, before killing everything */

enum attach_result { ATTACHED, SIGNALLED, INIT_DIED };

/*
 * Block until "attached[ PID]\n" arrives on the FIFO (*tracer: the tracer's
 * PID, 0 when not given), a signal, or the sandbox dies.
 */
enum attach_result shim_wait_attach(const char *name, int fifo, int sfd, int pidfd, int *sig,
				    pid_t *tracer, bool *handover);
/* The tracer of a running workload (tracer.c). */
struct shim_tracer {
	int pidfd;     /* a pidfd of the tracer that attached, -1: none (--no-wait, or gone) */
	bool handover; /* it said "attached PID handover": its enforcement outlives it */
	int fifo;      /* after a handover: the attach FIFO again, for the next one; -1 */
	char fifo_path[PATH_MAX];
	char line[128];
	size_t len;
	const char *state_dir;
};

/*
 * Wait for the workload; forward a signal, then kill everything after
 * GRACE_MS. The exit code. When the tracer goes away first, the workload is
 * frozen and SHIM_EXIT_TRACER_LOST returned, unless it handed over
 * (shim_tracer_gone()).
 */
int shim_wait_workload(struct sbt_sandbox_run *run, int sfd, int pidfd, struct shim_tracer *tr);
/* The qemu backend: forward the console until qemu exits; the guest's exit code. Tracer as above. */
int shim_wait_vm(struct sbt_sandbox_run *run, int sfd, int pidfd, int timeout_s,
		 struct shim_tracer *tr, uint64_t stream_max);

/* The attach FIFO STATE_DIR/NAME.attach (a stale one replaced), read end. fd or -errno. */
int shim_make_fifo(const char *dir, const char *name, char *path, size_t len);
/* "attached", "attached PID" or "attached PID handover": true, *tracer (0: none given). */
bool shim_attach_line(const char *line, pid_t *tracer, bool *handover);
/*
 * Read what the attach FIFO holds; the first complete attach line (with a
 * PID when need_pid) into *tracer and *handover: true. An unfinished line
 * stays in line (*len bytes of cap); any other line is said and dropped.
 */
bool shim_attach_read(int fifo, const char *name, bool need_pid, char *line, size_t cap,
		      size_t *len, pid_t *tracer, bool *handover);
void shim_tracer_init(struct shim_tracer *tr, const char *state_dir);
void shim_tracer_close(struct shim_tracer *tr);
/* Freeze the workload and say why; SHIM_EXIT_TRACER_LOST. */
int shim_tracer_lost(struct sbt_sandbox_run *run);
/*
 * The tracer's pidfd fired: SHIM_EXIT_TRACER_LOST (frozen), or -1 when it
 * handed over and nothing lapses (no policy, or its pins are there): the
 * workload runs on and the FIFO waits for the next tracer.
 */
int shim_tracer_gone(struct sbt_sandbox_run *run, struct shim_tracer *tr);
/* The FIFO is readable: a new tracer's "attached PID" taken (its pidfd, the state file). */
void shim_tracer_again(struct sbt_sandbox_run *run, struct shim_tracer *tr);

#endif
