/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* What sbtrace-shim's commands share: exit codes, the run's waits (help and usage errors: usage.h). */
#ifndef SBT_SHIM_H
#define SBT_SHIM_H

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
				    pid_t *tracer);
/*
 * Wait for the workload; forward a signal, then kill everything after
 * GRACE_MS. The exit code. tracer: a pidfd of the tracer (-1: none); when it
 * goes away first, the workload is frozen and SHIM_EXIT_TRACER_LOST returned.
 */
int shim_wait_workload(struct sbt_sandbox_run *run, int sfd, int pidfd, int tracer);
/* The qemu backend: forward the console until qemu exits; the guest's exit code. Tracer as above. */
int shim_wait_vm(struct sbt_sandbox_run *run, int sfd, int pidfd, int timeout_s, int tracer,
		 uint64_t stream_max);
/* Freeze the workload and say why; SHIM_EXIT_TRACER_LOST. */
int shim_tracer_lost(struct sbt_sandbox_run *run);

#endif
