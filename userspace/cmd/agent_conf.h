/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The agent's configuration file (/etc/sbtrace/agent.conf; a commented
 * sample: scripts/dist/agent.conf). One option a line, named as the agent's
 * long option without "--":
 *
 *	# '#' starts a comment line; blank lines are skipped
 *	cgroup-parent = /machine.slice
 *	no-shim
 *
 * Whitespace around the name, the '=' and the value is dropped; the value is
 * the rest of the line as it is (no quotes, no escapes, no comment after it).
 * The file's options become command-line arguments placed before the real
 * ones, so the command line wins: getopt's last occurrence of a single-valued
 * option is the one kept (a repeatable option, e.g. --cgroup-parent, gets the
 * file's values and the command line's).
 *
 * The file chooses the agent's policy (what is traced, which policies are
 * read), so it is refused unless it is a regular file owned by root (or by
 * the user the agent runs as: root again, in production) that neither its
 * group nor others may write.
 */
#ifndef SBT_AGENT_CONF_H
#define SBT_AGENT_CONF_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>

#define SBT_AGENT_CONF_DEFAULT	"/etc/sbtrace/agent.conf"
#define SBT_AGENT_CONF_ENV	"SBTRACE_AGENT_CONF"
#define SBT_AGENT_CONF_LINE_MAX 4096	   /* bytes of a line, its newline not counted */
#define SBT_AGENT_CONF_SIZE_MAX (1u << 20) /* bytes of the file */

/*
 * Which file to read, and whether it must exist: `flag` (--config FILE) if
 * given; else $SBTRACE_AGENT_CONF if set (an empty value: no file at all,
 * NULL returned); else the default, which may be missing. A file named by
 * the flag or the environment must exist.
 */
const char *sbt_agent_conf_path(const char *flag, bool *must_exist);

/*
 * A new argument vector: argv[0], the file's options in file order ("--name"
 * for a bare name, "--name" "value" for "name = value"), then argv[1..argc-1],
 * NULL-terminated; *out_argc its length. *out_argv is one allocation (free()
 * it): the pointers, then the file's strings; argv's strings are not copied.
 * A missing file that need not exist, or a NULL path, gives argv as it is
 * (in a new vector).
 *
 * Names are checked for their characters ([a-z0-9-]) and are not "config",
 * "help" or "unpin" (actions of one run, which every start would repeat);
 * whether each is an option of the agent is left to the caller's getopt.
 * 0, or -errno with a one-line message in err: "FILE: ..." for the file as a
 * whole (-ENOENT missing, -EPERM owner or mode, -EINVAL not a regular file,
 * -EFBIG beyond SBT_AGENT_CONF_SIZE_MAX, or open's errno), "FILE:LINE: ..."
 * for a line (-EINVAL: a NUL byte, a line beyond SBT_AGENT_CONF_LINE_MAX, a
 * bad name, '=' with no value, a quoted value, anything else after a name).
 */
int sbt_agent_conf_argv(const char *path, bool must_exist, int argc, char **argv, int *out_argc,
			char ***out_argv, char *err, size_t errlen);

/*
 * sbt_agent_conf_argv, each name also checked against the command's getopt
 * table (`longopts`, {0}-terminated), so that the message names the line:
 * "FILE:LINE: unknown option 'x'", a value given to an option that takes
 * none, no value for one that needs it. An optional_argument option's value
 * is passed as "--name=value" (getopt binds it only so).
 */
int sbt_agent_conf_argv_checked(const char *path, bool must_exist, const struct option *longopts,
				int argc, char **argv, int *out_argc, char ***out_argv, char *err,
				size_t errlen);

#endif
