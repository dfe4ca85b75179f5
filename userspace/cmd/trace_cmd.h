/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * `sbtrace trace` and `sbtrace features`: options → request → the loader's
 * trace (passed in, so this stays pure C and its parsing is unit-tested).
 */
#ifndef SBT_TRACE_CMD_H
#define SBT_TRACE_CMD_H

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>

#include "event/sink_json.h"
#include "trace/tracer.h"

/* Shims waiting for us (sbtrace-shim run without --no-wait): told once we are attached. */
struct sbt_shim_handshake {
	int n;
	char fifo[SBT_MAX_SANDBOXES][PATH_MAX];
	char cgroup[SBT_MAX_SANDBOXES][PATH_MAX]; /* to notice the sandboxes ending */
	bool stop_when_gone;			  /* every sandbox came from --sandbox */
	uint64_t ticks;
};

/* What `sbtrace trace ARGS` asks for. */
struct sbt_trace_args {
	struct sbt_trace_opts opts;
	enum sbt_format format;
	const char *out_path;		      /* --out, NULL: stdout */
	const char *state_dir;		      /* --state-dir */
	const char *names[SBT_MAX_SANDBOXES]; /* --sandbox NAME, resolved after parsing */
	int nr_names;
	int egress_mode; /* -2 until decided */
	struct sbt_shim_handshake handshake;
};

/*
 * Parse `sbtrace trace` options into args (sandboxes resolved, hooks
 * decided; nothing opened, nothing loaded). -1 to go on, else an exit code
 * (0 after --help; SBT_EXIT_USAGE after a one-line message). Free with
 * sbt_trace_args_free().
 */
int sbt_trace_args_parse(int argc, char **argv, struct sbt_trace_args *args);

/*
 * The capture options every command that loads the exec hook takes (trace,
 * agent, features, guest-agent): their getopt values, for each command's own
 * option table, and their one parser. -1 when `arg` was taken into eo, else
 * SBT_EXIT_USAGE after "sbtrace CMD: ..." on stderr.
 */
enum sbt_capture_opt {
	SBT_OPT_ARGV_MAX = 0x1000, /* --argv-max BYTES */
	SBT_OPT_RINGBUF_SIZE,	   /* --ringbuf-size BYTES */
	SBT_OPT_EXEC_HOOK,	   /* --exec-hook MODE */
	SBT_OPT_POLL_MS,	   /* --poll-ms MS */
};
int sbt_capture_option(struct sbt_exec_opts *eo, int c, const char *arg);

/*
 * The run options trace and agent share, and their one parser: where the
 * events go (-o/--output json|text, -O/--out FILE), how long (-d/--duration
 * SECONDS > 0), TraceStats every --stats-interval SECONDS (0..86400),
 * -v/--verbose (libbpf's messages). -1 when taken into t, *format,
 * *out_path; else SBT_EXIT_USAGE after the message.
 */
#define SBT_OPT_STATS_INTERVAL 0x1010 /* --stats-interval SECONDS (-o, -O, -d, -v: their letters) */
int sbt_run_option(struct sbt_trace_opts *t, enum sbt_format *format, const char **out_path, int c,
		   const char *arg);
void sbt_trace_args_free(struct sbt_trace_args *args);

/* The commands themselves, with the loader's functions passed in. */
int sbt_trace_main(int argc, char **argv, sbt_trace_fn run);
typedef int (*sbt_features_fn)(const struct sbt_exec_opts *opts, FILE *out);
int sbt_features_main(int argc, char **argv, sbt_features_fn features);

void sbt_trace_usage(FILE *f);
void sbt_features_usage(FILE *f);

#endif
