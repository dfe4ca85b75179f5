/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The one place sbtrace and sbtrace-shim execute programs (the founding ADR-0015: a closed
 * set of external binaries). Host-side tools must be on the allowlist
 * (podman, docker, npm, make, node, ip, qemu-system-x86_64, slirp4netns); `strace` never is. A sandbox workload
 * (the build the probe runs, --cmd) is exec'd only from inside an
 * established sandbox, with SBT_EXEC_SANDBOXED. A test scans the sources:
 * no call of system, popen or an exec function outside extbin.c.
 */
#ifndef SBT_EXTBIN_H
#define SBT_EXTBIN_H

#include <stdbool.h>

enum sbt_exec_ctx {
	SBT_EXEC_HOST = 0,  /* a host-side tool: argv[0]'s basename must be allowlisted */
	SBT_EXEC_SANDBOXED, /* inside the sandbox, after isolation: any program */
};

/* True when `prog` (a name or path; its basename counts) is on the host allowlist. */
bool sbt_extbin_allowed(const char *prog);

/* The allowlist, NULL-terminated (for --help and the tests). */
const char *const *sbt_extbin_list(void);

/*
 * execvp() after the check. Returns only on failure: -EPERM when not
 * allowed, else -errno of the exec.
 */
int sbt_exec(enum sbt_exec_ctx ctx, char *const argv[]);

/* What sbt_run() captures and how long it waits; every field may be 0. */
struct sbt_run_io {
	char *out, *err;	 /* the tool's stdout / stderr, NUL-terminated, cut to fit */
	size_t out_len, err_len; /* NULL buffers: the stream goes where the caller's goes */
	int timeout_ms;		 /* > 0: SIGKILL after this long, and -ETIMEDOUT */
};

/*
 * The one host-tool runner: fork, exec an allowlisted tool (outside any
 * sandbox), wait; stdin is /dev/null. `io` may be NULL (no capture, no
 * timeout). 0 with *status in waitpid() form (exit 127: the tool could not
 * be executed, e.g. not installed), -ETIMEDOUT (killed), -EPERM (not
 * allowlisted) or -errno.
 */
int sbt_run(char *const argv[], const struct sbt_run_io *io, int *status);

/* The exit code of a waitpid() status: WEXITSTATUS, or 128 + the signal. */
int sbt_exit_code(int status);

#endif
