// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* sbtrace-shim gc: clean up what killed shims left (sbt_sandbox_gc()). */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "sandbox/sandbox.h"
#include "shim.h"
#include "usage.h"
#include "lib/log.h"

int shim_cmd_gc(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "state-dir", required_argument, NULL, 's' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *state_dir = SBT_STATE_DIR_DEFAULT;
	bool verbose = false, given = false;
	struct stat st;
	int c, n;

	optind = 1;
	while ((c = getopt_long(argc, argv, "s:vh", longopts, NULL)) != -1) {
		switch (c) {
		case 's':
			state_dir = optarg;
			given = true;
			break;
		case 'v':
			verbose = true;
			break;
		case 'h':
			shim_usage_gc(stdout);
			return SHIM_EXIT_OK;
		default:
			sbt_log("see '%s --help'", sbt_log_name());
			return SHIM_EXIT_USAGE;
		}
	}
	if (optind < argc)
		return shim_usage_error("unexpected argument '%s'", argv[optind]);
	/* A mistyped --state-dir would find nothing to remove and say all is well. */
	if (given) {
		const char *why = stat(state_dir, &st)	 ? strerror(errno)
				  : !S_ISDIR(st.st_mode) ? "not a directory"
							 : NULL;

		if (why) {
			sbt_log("--state-dir %s: %s; give the directory the shims ran with",
				state_dir, why);
			return SHIM_EXIT_USAGE;
		}
	}
	n = sbt_sandbox_gc(state_dir, verbose);
	if (n < 0) {
		sbt_log("state dir %s: %s; check --state-dir", state_dir, strerror(-n));
		return SHIM_EXIT_RUNTIME;
	}
	if (verbose || n > 0)
		printf("sbtrace-shim gc: removed %d stale sandbox%s\n", n, n == 1 ? "" : "es");
	return SHIM_EXIT_OK;
}
