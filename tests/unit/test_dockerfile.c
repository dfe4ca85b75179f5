// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for the Dockerfile parser (userspace/dockerfile/). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dockerfile/dockerfile.h"

static void parse_args(const char *text, const char *const *build_args, struct sbt_dockerfile *df)
{
	struct sbt_df_error err;

	if (sbt_dockerfile_parse(text, strlen(text), build_args, df, &err) != 0)
		fail_msg("parse failed: line %u: %s", err.line, err.msg);
}

static void parse(const char *text, struct sbt_dockerfile *df)
{
	parse_args(text, NULL, df);
}

static void parse_fails_n(const char *text, size_t len, unsigned int line, const char *want)
{
	struct sbt_dockerfile df;
	struct sbt_df_error err;

	assert_int_equal(sbt_dockerfile_parse(text, len, NULL, &df, &err), -1);
	if (!strstr(err.msg, want))
		fail_msg("error '%s', want '%s'", err.msg, want);
	if (err.line != line)
		fail_msg("error '%s' on line %u, want line %u", err.msg, err.line, line);
	/* a failed parse is left empty, and freeing it is harmless */
	assert_int_equal(df.nr_instrs, 0);
	assert_int_equal(df.nr_stages, 0);
	assert_null(df.mem);
	sbt_dockerfile_free(&df);
}

static void parse_fails(const char *text, unsigned int line, const char *want)
{
	parse_fails_n(text, strlen(text), line, want);
}

static const struct sbt_df_instr *instr(const struct sbt_dockerfile *df, int i, const char *kw)
{
	assert_true(i < df->nr_instrs);
	assert_string_equal(df->instrs[i].keyword, kw);
	return &df->instrs[i];
}

static void assert_lines(const struct sbt_df_instr *in, unsigned int first, unsigned int last)
{
	if (in->line != first || in->end_line != last)
		fail_msg("%s on lines %u-%u, want %u-%u", in->keyword, in->line, in->end_line,
			 first, last);
}

static void assert_argv(const struct sbt_df_instr *in, int argc, const char *const *want)
{
	assert_int_equal(in->form, SBT_DF_FORM_EXEC);
	assert_int_equal(in->argc, argc);
	for (int i = 0; i < argc; i++)
		assert_string_equal(in->argv[i], want[i]);
	assert_null(in->argv[argc]);
}

static void assert_shell(const struct sbt_df_instr *in, const char *cmd)
{
	assert_int_equal(in->form, SBT_DF_FORM_SHELL);
	assert_string_equal(in->cmd, cmd);
}

/* --- directives and lines ----------------------------------------------- */

static void test_escape_directive(void **state)
{
	struct sbt_dockerfile df;

	parse("# escape=`\n"
	      "FROM mcr.microsoft.com/windows/servercore\n"
	      "COPY testfile.txt c:\\\n"
	      "RUN dir c:\\ `\n"
	      "    && echo done\n",
	      &df);
	assert_int_equal(df.escape, '`');
	assert_int_equal(df.nr_lines, 5);
	assert_int_equal(df.nr_instrs, 3);
	assert_string_equal(instr(&df, 1, "COPY")->args, "testfile.txt c:\\");
	assert_lines(&df.instrs[1], 3, 3);
	assert_shell(instr(&df, 2, "RUN"), "dir c:\\     && echo done");
	assert_lines(&df.instrs[2], 4, 5);
	sbt_dockerfile_free(&df);
	sbt_dockerfile_free(&df);

	/* key in any case, blanks around '=', a leading syntax directive, blanks before '#' */
	parse("# syntax=docker/dockerfile:1.7\n  #  ESCAPE = `  \nFROM a\nRUN x `\n y\n", &df);
	assert_int_equal(df.escape, '`');
	assert_string_equal(df.syntax, "docker/dockerfile:1.7");
	assert_shell(instr(&df, 1, "RUN"), "x  y");
	sbt_dockerfile_free(&df);

	parse("# escape=\\\nFROM a\nRUN x \\\n y\n", &df);
	assert_int_equal(df.escape, '\\');
	assert_shell(instr(&df, 1, "RUN"), "x  y");
	sbt_dockerfile_free(&df);

	parse_fails("# escape=`\n# escape=\\\nFROM a\n", 2, "only one escape parser directive");
	parse_fails("# escape=x\nFROM a\n", 1, "invalid escape token 'x'");
}

static void test_directive_position(void **state)
{
	static const char *const not_directives[] = {
		"# a comment\n# escape=`\nFROM a\nRUN x `\n",
		"\n# escape=`\nFROM a\nRUN x `\n",
		"# unknown=1\n# escape=`\nFROM a\nRUN x `\n",
		"FROM a\n# escape=`\nRUN x `\n",
	};
	struct sbt_dockerfile df;

	for (size_t i = 0; i < sizeof(not_directives) / sizeof(not_directives[0]); i++) {
		parse(not_directives[i], &df);
		assert_int_equal(df.escape, '\\');
		assert_shell(instr(&df, 1, "RUN"), "x `");
		sbt_dockerfile_free(&df);
	}
	/* a UTF-8 BOM before the directive */
	parse("\xef\xbb\xbf# escape=`\nFROM a\n", &df);
	assert_int_equal(df.escape, '`');
	sbt_dockerfile_free(&df);
}

static void test_continuation(void **state)
{
	struct sbt_dockerfile df;

	parse("FROM debian\n"
	      "RUN apt-get update \\\n"
	      "  # a comment inside\n"
	      "\n"
	      "    && apt-get install -y gcc \\\n"
	      "\t# a comment ending in the escape \\\n"
	      "  && rm -rf /var/lib/apt\n"
	      "CMD [\"gcc\"]\n",
	      &df);
	assert_int_equal(df.nr_instrs, 3);
	assert_shell(instr(&df, 1, "RUN"),
		     "apt-get update     && apt-get install -y gcc   && rm -rf /var/lib/apt");
	assert_lines(&df.instrs[1], 2, 7);
	assert_lines(instr(&df, 2, "CMD"), 8, 8);
	sbt_dockerfile_free(&df);

	/* an escaped escape does not continue; a continuation may run to the end */
	parse("FROM a\nRUN echo \\\\\nCMD x \\\n", &df);
	assert_shell(instr(&df, 1, "RUN"), "echo \\\\");
	assert_shell(instr(&df, 2, "CMD"), "x");
	assert_lines(&df.instrs[2], 3, 3);
	sbt_dockerfile_free(&df);

	/* blanks after the escape; keyword on its own line */
	parse("FROM \\   \n  node:20 \\\n  AS b\n", &df);
	assert_string_equal(df.stages[0].name, "b");
	assert_lines(&df.instrs[0], 1, 3);
	sbt_dockerfile_free(&df);
}

static void test_crlf(void **state)
{
	static const char *const argv[] = { "node", "server.js" };
	struct sbt_dockerfile df;

	parse("FROM node:20 AS web\r\nRUN npm ci \\\r\n && npm test\r\n"
	      "CMD [\"node\", \"server.js\"]\r\n",
	      &df);
	assert_int_equal(df.nr_lines, 4);
	assert_string_equal(df.stages[0].image, "node:20");
	assert_string_equal(df.stages[0].name, "web");
	assert_shell(instr(&df, 1, "RUN"), "npm ci  && npm test");
	assert_lines(&df.instrs[1], 2, 3);
	assert_argv(instr(&df, 2, "CMD"), 2, argv);
	sbt_dockerfile_free(&df);
}

/* --- instructions --------------------------------------------------------- */

/* refused(text, line, want): sbt_dockerfile_unconfined_run on the final stage says want at line. */
static void refused(const char *text, unsigned int line, const char *want)
{
	struct sbt_dockerfile df;
	struct sbt_df_error err = { 0 };

	parse(text, &df);
	if (want) {
		assert_int_equal(sbt_dockerfile_unconfined_run(&df, df.nr_stages - 1, &err), -1);
		if (!strstr(err.msg, want))
			fail_msg("error '%s', want '%s'", err.msg, want);
		assert_int_equal(err.line, line);
	} else if (sbt_dockerfile_unconfined_run(&df, df.nr_stages - 1, &err) != 0) {
		fail_msg("refused: line %u: %s (%s)", err.line, err.msg, text);
	}
	sbt_dockerfile_free(&df);
}

static void test_unconfined_run(void **state)
{
	(void)state;
	/* what a host engine's RUN step can be confined to */
	refused("FROM a\nRUN --mount=type=bind,source=src,target=/s make\n", 0, NULL);
	refused("FROM a\nRUN --mount=target=/s,ro make\n", 0, NULL); /* bind, the context */
	refused("FROM a\nRUN --mount=type=bind,target=/s,rw=false make\n", 0, NULL);
	refused("FROM a\nRUN --mount=type=tmpfs,target=/t --network=none make\n", 0, NULL);
	refused("FROM a\nRUN --security=sandbox make\nCOPY --from=a /x /y\n", 0, NULL);
	refused("FROM a\nRUN --mount=type=bind,source=a..b/x,target=/s make\n", 0, NULL);
	/* a stage after the target is not built: its RUN is not refused */
	{
		struct sbt_dockerfile df;
		struct sbt_df_error err;

		parse("FROM a AS one\nRUN x\nFROM one\nRUN --mount=type=cache,target=/c y\n", &df);
		assert_int_equal(sbt_dockerfile_unconfined_run(&df, 0, &err), 0);
		assert_int_equal(sbt_dockerfile_unconfined_run(&df, 1, &err), -1);
		assert_int_equal(err.line, 4);
		sbt_dockerfile_free(&df);
	}
	/* what it cannot: each with its line, the flag and what to do */
	refused("FROM a\n\nRUN --mount=type=cache,target=/c make\n", 3,
		"RUN --mount=type=cache: a cache mount keeps what the build writes on the host");
	refused("FROM a\nRUN --mount=type=bind,target=/s,rw make\n", 2,
		"RUN --mount=type=bind: a read-write bind");
	refused("FROM a\nRUN --mount=target=/s,readwrite=true make\n", 2, "read-write bind");
	refused("FROM a\nRUN --mount=type=bind,target=/s,RW=1 make\n", 2, "read-write bind");
	refused("FROM a\nRUN --mount=\"type=bind,source=/etc\",target=/s make\n", 2,
		"its source leaves the build context");
	refused("FROM a\nRUN --mount=type=bind,src=x/../../y,target=/s make\n", 2,
		"its source leaves the build context");
	refused("FROM a\nRUN --mount=type=bind,source=..,target=/s make\n", 2, "leaves");
	refused("FROM a AS b\nFROM a\nRUN --mount=type=bind,from=b,source=/x,target=/s make\n", 3,
		"a bind from another image or stage");
	refused("FROM a\nRUN --mount=type=secret,id=t make\n", 2, "RUN --mount=type=secret:");
	refused("FROM a\nRUN --mount=type=ssh make\n", 2, "no secrets or ssh agent");
	refused("FROM a\nRUN --mount=type=weird,target=/w make\n", 2, "RUN --mount=type=weird:");
	refused("FROM a\nRUN --network=host make\n", 2, "RUN --network=host: the step's network");
	refused("FROM a\nRUN --security=insecure make\n", 2, "RUN --security=insecure:");
	refused("FROM a\nRUN --device=/dev/kvm make\n", 2,
		"RUN --device=/dev/kvm: a RUN flag the probe does not know");
	/* continuation lines: the RUN's first line */
	refused("FROM a\nRUN echo a && \\\n  echo b\nRUN --network=host \\\n  x\n", 4,
		"--network=host");
}

static void test_keywords_and_flags(void **state)
{
	struct sbt_dockerfile df;
	const struct sbt_df_instr *in;

	parse("from --platform=linux/amd64 alpine\n"
	      "copy --chown=1:1 --from=\"my stage\" -- --x /y\n"
	      "run --mount=type=cache,target=/root/.cache --network=none make\n"
	      "Env A=1 B=2\nonbuild RUN x\nfrobnicate  the  thing \n",
	      &df);
	in = instr(&df, 0, "FROM");
	assert_int_equal(in->nr_flags, 1);
	assert_string_equal(in->flags[0], "--platform=linux/amd64");
	assert_string_equal(sbt_df_flag_value(in->flags[0], "platform"), "linux/amd64");
	assert_null(sbt_df_flag_value(in->flags[0], "plat"));
	in = instr(&df, 1, "COPY");
	assert_int_equal(in->nr_flags, 2);
	assert_string_equal(in->flags[1], "--from=my stage");
	assert_string_equal(in->args, "--x /y"); /* "--" ends the flags */
	assert_int_equal(in->nr_sources, 1);
	assert_string_equal(in->sources[0], "my stage");
	in = instr(&df, 2, "RUN");
	assert_int_equal(in->nr_flags, 2);
	assert_string_equal(sbt_df_flag_value(in->flags[1], "network"), "none");
	assert_int_equal(in->nr_sources, 0); /* a cache mount without from= */
	assert_shell(in, "make");
	assert_string_equal(instr(&df, 3, "ENV")->args, "A=1 B=2");
	assert_int_equal(df.instrs[3].form, SBT_DF_FORM_NONE);
	assert_string_equal(instr(&df, 4, "ONBUILD")->args, "RUN x");
	assert_string_equal(instr(&df, 5, "FROBNICATE")->args, "the  thing");
	assert_int_equal(df.stages[0].nr_instrs, 5);
	sbt_dockerfile_free(&df);
}

static void test_exec_and_shell_form(void **state)
{
	static const char *const hi[] = { "echo", "hi" };
	static const char *const esc[] = { "a\"A", "\xc3\xa9" };
	static const char *const sh[] = { "/bin/bash", "-o", "pipefail", "-c" };
	static const char *const quotes[] = { "\\", "\"" };
	struct sbt_dockerfile df;

	parse("FROM a\n"
	      "RUN [\"echo\", \"hi\"]\n"
	      "RUN [ \"echo\", 'hi' ]\n"
	      "CMD [\"echo\", \"hi\"] && true\n"
	      "ENTRYPOINT []\n"
	      "CMD {\"echo\": 1}\n"
	      "CMD [\"a\\\"\\u0041\", \"\\u00e9\"]   \n"
	      "SHELL [\"/bin/bash\", \"-o\", \"pipefail\", \"-c\"]\n"
	      "RUN echo \"[x]\"\n"
	      "CMD [\"a\tb\"]\n"
	      "CMD [NaN]\n"
	      "CMD [\"\\\\\", \"\\\"\"]\n",
	      &df);
	assert_argv(instr(&df, 1, "RUN"), 2, hi);
	assert_shell(instr(&df, 2, "RUN"), "[ \"echo\", 'hi' ]"); /* invalid JSON: shell form */
	assert_shell(instr(&df, 3, "CMD"), "[\"echo\", \"hi\"] && true");
	assert_argv(instr(&df, 4, "ENTRYPOINT"), 0, hi);
	assert_shell(instr(&df, 5, "CMD"), "{\"echo\": 1}");
	assert_argv(instr(&df, 6, "CMD"), 2, esc);
	assert_argv(instr(&df, 7, "SHELL"), 4, sh);
	assert_shell(instr(&df, 8, "RUN"), "echo \"[x]\"");
	/* what Go's JSON refuses is shell form, though json-c would take it */
	assert_shell(instr(&df, 9, "CMD"), "[\"a\tb\"]");
	assert_shell(instr(&df, 10, "CMD"), "[NaN]");
	assert_argv(instr(&df, 11, "CMD"), 2, quotes);
	sbt_dockerfile_free(&df);

	/* Docker refuses a JSON array that holds anything but strings */
	parse_fails("FROM a\nCMD [\"echo\", 1]\n", 2, "arrays must be comprised of strings only");
	parse_fails("FROM a\nRUN [null]\n", 2, "strings only");
	parse_fails("FROM a\nCOPY [\"a\", [\"b\"]]\n", 2, "strings only");
	parse_fails("FROM a\nCMD [\"a\\u0000b\"]\n", 2, "NUL character");
	parse_fails("FROM a\nSHELL /bin/bash -c\n", 2,
		    "SHELL requires the arguments to be in JSON");
	parse_fails("FROM a\nSHELL []\n", 2, "SHELL requires at least one argument");
}

static void test_healthcheck(void **state)
{
	static const char *const argv[] = { "curl", "-f", "http://localhost/" };
	struct sbt_dockerfile df;
	const struct sbt_df_instr *in;

	parse("FROM a\n"
	      "HEALTHCHECK --interval=5m --timeout=3s CMD curl -f http://localhost/ || exit 1\n"
	      "HEALTHCHECK cmd [\"curl\", \"-f\", \"http://localhost/\"]\n"
	      "healthcheck none\n",
	      &df);
	in = instr(&df, 1, "HEALTHCHECK");
	assert_int_equal(in->nr_flags, 2);
	assert_shell(in, "curl -f http://localhost/ || exit 1");
	assert_argv(instr(&df, 2, "HEALTHCHECK"), 3, argv);
	assert_int_equal(instr(&df, 3, "HEALTHCHECK")->form, SBT_DF_FORM_HEALTH_NONE);
	sbt_dockerfile_free(&df);

	parse_fails("FROM a\nHEALTHCHECK NONE now\n", 2, "HEALTHCHECK NONE takes no arguments");
	parse_fails("FROM a\nHEALTHCHECK RUN x\n", 2, "unknown type 'RUN' in HEALTHCHECK");
	parse_fails("FROM a\nHEALTHCHECK CMD\n", 2, "missing command after HEALTHCHECK CMD");
	parse_fails("FROM a\nHEALTHCHECK CMD []\n", 2, "missing command");
	parse_fails("FROM a\nHEALTHCHECK\n", 2, "HEALTHCHECK requires an argument");
}

static void test_heredocs(void **state)
{
	struct sbt_dockerfile df;
	const struct sbt_df_instr *in;

	parse("FROM alpine\n"
	      "RUN <<EOF\n"
	      "FROM evil AS builder\n"
	      "RUN rm -rf /\n"
	      "EOF\n"
	      "COPY <<-\"EOT\" /a <<'X Y' /b\n"
	      "\t\tline $x\n"
	      "\tEOT\n"
	      "two\r\n"
	      "X Y\r\n"
	      "RUN python3 <<PY > out \\\n"
	      "  && cat out\n"
	      "print(1)\n"
	      "PY\n"
	      "CMD done\n",
	      &df);
	assert_int_equal(df.nr_stages, 1);
	assert_int_equal(df.nr_instrs, 5);
	in = instr(&df, 1, "RUN");
	assert_lines(in, 2, 5);
	assert_int_equal(in->nr_heredocs, 1);
	assert_string_equal(in->heredocs[0].name, "EOF");
	assert_string_equal(in->heredocs[0].body, "FROM evil AS builder\nRUN rm -rf /\n");
	assert_int_equal(in->heredocs[0].body_len, 34);
	assert_false(in->heredocs[0].chomp);
	assert_false(in->heredocs[0].quoted);
	in = instr(&df, 2, "COPY");
	assert_lines(in, 6, 10);
	assert_int_equal(in->nr_heredocs, 2);
	assert_string_equal(in->heredocs[0].name, "EOT");
	assert_true(in->heredocs[0].chomp);
	assert_true(in->heredocs[0].quoted);
	assert_string_equal(in->heredocs[0].body, "\t\tline $x\n");
	assert_string_equal(in->heredocs[1].name, "X Y");
	assert_string_equal(in->heredocs[1].body, "two\r\n");
	in = instr(&df, 3, "RUN");
	assert_lines(in, 11, 14);
	assert_shell(in, "python3 <<PY > out   && cat out");
	assert_string_equal(in->heredocs[0].body, "print(1)\n");
	assert_lines(instr(&df, 4, "CMD"), 15, 15);
	sbt_dockerfile_free(&df);

	/* no heredoc: exec form, quoted, not RUN/COPY/ADD, an open quote; ONBUILD RUN has one */
	parse("FROM a\nRUN [\"cat\", \"<<EOF\"]\nRUN echo '<<EOF'\nENV X=<<EOF\n"
	      "RUN cat <<EOF \"open\nONBUILD RUN <<EOF\nbody\nEOF\n",
	      &df);
	assert_int_equal(df.nr_instrs, 6);
	for (int i = 1; i < 5; i++)
		assert_int_equal(df.instrs[i].nr_heredocs, 0);
	assert_int_equal(instr(&df, 5, "ONBUILD")->nr_heredocs, 1);
	assert_lines(&df.instrs[5], 6, 8);
	sbt_dockerfile_free(&df);

	parse_fails("FROM a\nRUN <<EOF\necho\nEOF \n", 2, "unterminated heredoc <<EOF");
	parse_fails("FROM a\nRUN <<A <<B\nA\n", 2, "unterminated heredoc <<B");
}

/* --- stages and ARGs ------------------------------------------------------ */

static void test_stages(void **state)
{
	struct sbt_dockerfile df;
	const struct sbt_df_stage *st;

	parse("FROM golang:1.22 AS Builder\nRUN make\n"
	      "FROM builder as test\nRUN make test\nRUN make lint\n"
	      "FROM scratch\nCOPY --from=BUILDER /x /x\n"
	      "FROM 0\nFROM 7\nFROM Test\n",
	      &df);
	assert_int_equal(df.nr_stages, 6);
	st = &df.stages[0];
	assert_string_equal(st->name, "Builder");
	assert_string_equal(st->base, "golang:1.22");
	assert_int_equal(st->base_kind, SBT_DF_BASE_IMAGE);
	assert_int_equal(st->base_stage, -1);
	assert_int_equal(st->from, 0);
	assert_int_equal(st->nr_instrs, 1);
	assert_int_equal(st->line, 1);
	st = &df.stages[1];
	assert_int_equal(st->base_kind, SBT_DF_BASE_STAGE);
	assert_int_equal(st->base_stage, 0);
	assert_int_equal(st->from, 2);
	assert_int_equal(st->nr_instrs, 2);
	assert_int_equal(df.instrs[4].stage, 1);
	assert_int_equal(df.stages[2].base_kind, SBT_DF_BASE_SCRATCH);
	assert_string_equal(df.stages[2].name, "");
	assert_int_equal(df.stages[3].base_stage, 0);		     /* by index */
	assert_int_equal(df.stages[4].base_kind, SBT_DF_BASE_IMAGE); /* no stage 7 yet */
	assert_int_equal(df.stages[5].base_stage, 1);
	assert_int_equal(sbt_dockerfile_stage_index(&df, "builder"), 0);
	assert_int_equal(sbt_dockerfile_stage_index(&df, "BUILDER"), 0);
	assert_int_equal(sbt_dockerfile_stage_index(&df, "test"), 1);
	assert_int_equal(sbt_dockerfile_stage_index(&df, "tes"), -1);
	assert_int_equal(sbt_dockerfile_stage_index(&df, ""), -1);
	assert_int_equal(sbt_dockerfile_stage_index(&df, NULL), -1);
	sbt_dockerfile_free(&df);

	/* a stage is not its own base */
	parse("FROM b AS b\n", &df);
	assert_int_equal(df.stages[0].base_kind, SBT_DF_BASE_IMAGE);
	sbt_dockerfile_free(&df);

	parse_fails("FROM a AS b\nFROM c AS B\n", 2, "duplicate stage name 'B' (also at line 1)");
	parse_fails("FROM a AS 1st\n", 1, "invalid name for build stage: '1st'");
	parse_fails("FROM a AS b/c\n", 1, "invalid name for build stage");
	parse_fails("FROM\n", 1, "FROM requires either one or three arguments");
	parse_fails("FROM --platform=x\n", 1, "FROM requires either one or three arguments");
}

/* The ENTRYPOINT a stage has: its own, a FROM stage's, else none (its base image's). */
static void test_entrypoint(void **state)
{
	static const char text[] = "FROM base AS a\nENTRYPOINT [\"/x\"]\n"
				   "FROM a AS b\nCMD [\"y\"]\n"
				   "FROM base\nCMD [\"z\"]\n";
	const struct sbt_df_instr *in;
	struct sbt_dockerfile df;

	(void)state;
	parse(text, &df);
	in = sbt_dockerfile_entrypoint(&df, 1);
	assert_non_null(in);
	assert_int_equal(in->line, 2);
	assert_null(sbt_dockerfile_entrypoint(&df, 2));
	assert_non_null(sbt_dockerfile_start(&df, 2)); /* its CMD */
	assert_string_equal(sbt_df_entrypoint_keyword(), in->keyword);
	sbt_dockerfile_free(&df);
}

static void test_arg_substitution(void **state)
{
	static const char *const overrides[] = { "GO_VERSION=1.23", "UNUSED=x", "TARGETARCH=arm64",
						 NULL };
	struct sbt_dockerfile df;
	const struct sbt_df_stage *st;

	parse("ARG GO_VERSION=1.22 DISTRO=\"alpine\"\n"
	      "ARG REG='registry.test' EMPTY= NODEF\n"
	      "ARG IMG=${REG}/go\n"
	      "FROM $IMG:${GO_VERSION}-$DISTRO AS a\n"
	      "FROM ${NODEF:-busybox}:${GO_VERSION:+v}${GO_VERSION} AS b\n"
	      "FROM x${EMPTY:-fallback}${EMPTY-kept}${NODEF:+never}${EMPTY:+never} AS c\n"
	      "FROM golang:${NODEF}-alpine AS d\n"
	      "FROM a\\$b:\"$DISTRO\"'$DISTRO' AS e\n"
	      "FROM $UNDECLARED AS f\n"
	      "FROM alpine-$TARGETARCH AS g\n"
	      "ARG GO_VERSION=9 IN_STAGE\n",
	      &df);
	assert_int_equal(df.nr_args, 6);
	assert_string_equal(df.args[1].name, "DISTRO");
	assert_string_equal(df.args[1].value, "alpine");
	assert_string_equal(df.args[2].value, "registry.test");
	assert_string_equal(df.args[3].value, "");
	assert_null(df.args[4].value);
	assert_string_equal(df.args[5].value, "registry.test/go");
	assert_string_equal(df.stages[0].image, "registry.test/go:1.22-alpine");
	assert_null(df.stages[0].unresolved);
	assert_string_equal(df.stages[1].image, "busybox:v1.22");
	assert_string_equal(df.stages[2].image, "xfallback");
	st = &df.stages[3];
	assert_string_equal(st->base, "golang:${NODEF}-alpine");
	assert_string_equal(st->image, "golang:-alpine");
	assert_string_equal(st->unresolved, "NODEF has no default");
	assert_string_equal(df.stages[4].image, "a$b:alpine$DISTRO");
	assert_string_equal(df.stages[5].unresolved,
			    "UNDECLARED is not a global ARG (declare it before the first FROM)");
	assert_string_equal(df.stages[6].unresolved,
			    "TARGETARCH is set by the builder (pass it as a build arg)");
	assert_int_equal(df.instrs[df.nr_instrs - 1].stage,
			 6); /* an ARG in a stage is not global */
	sbt_dockerfile_free(&df);

	/* build args win over defaults, fill a missing one, and give automatic ARGs a value */
	parse_args("ARG GO_VERSION=1.22\nARG NODEF\nFROM golang:${GO_VERSION}-$TARGETARCH\n"
		   "FROM x:$NODEF\n",
		   overrides, &df);
	assert_string_equal(df.stages[0].image, "golang:1.23-arm64");
	assert_true(df.args[0].passed);
	assert_string_equal(df.stages[1].image, "x:");
	assert_string_equal(df.stages[1].unresolved, "NODEF has no default");
	assert_int_equal(df.nr_args, 2);
	sbt_dockerfile_free(&df);

	/* a default built from an ARG with no value carries the reason */
	parse("ARG A\nARG B=$A-x\nARG A=1\nFROM img:$B\n", &df);
	assert_string_equal(df.stages[0].image, "img:-x");
	assert_string_equal(df.stages[0].unresolved, "A has no default");
	sbt_dockerfile_free(&df);

	parse_fails("ARG V\nFROM x:${V:?pass_V}\n", 2, "V: pass_V");
	parse_fails("ARG V=\nFROM x:${V:?}\n", 2, "V: is not allowed to be unset or empty");
	parse_fails("FROM x:${V\n", 1, "syntax error: missing '}'");
	parse_fails("FROM x:${}\n", 1, "bad substitution");
	parse_fails("FROM x:${V:#a}\n", 1, "unsupported modifier (:#)");
	parse_fails("ARG E=\nFROM $E\n", 2, "the base image is blank");
	parse_fails("ARG =x\nFROM a\n", 1, "ARG names can not be blank");
	parse_fails("ARG\nFROM a\n", 1, "ARG requires at least one argument");
	parse_fails("ARG A=\"open\nFROM a\n", 1, "looking for matching double-quote");
}

static void test_images_and_deps(void **state)
{
	const char *images[8];
	bool need[SBT_DF_MAX_STAGES];
	struct sbt_dockerfile df;
	struct sbt_df_error err;

	parse("ARG V=3.19\n"
	      "FROM alpine:$V AS base\n"
	      "FROM golang:1.22 AS build\n"
	      "RUN --mount=type=bind,\"from=base\",target=/b --mount=type=cache,target=/c make\n"
	      "FROM node:20 AS web\n"
	      "COPY --from=nginx:latest /etc/nginx /etc/nginx\n"
	      "FROM scratch AS final\n"
	      "COPY --from=1 /app /app\n"
	      "COPY --from=base /etc/ssl /etc/ssl\n"
	      "FROM final AS test\n"
	      "FROM golang:1.22\n",
	      &df);
	/* the engine builds every stage up to the target */
	assert_int_equal(sbt_dockerfile_images(&df, 4, SBT_DF_UPTO, images, 8, &err), 4);
	assert_string_equal(images[0], "alpine:3.19");
	assert_string_equal(images[1], "golang:1.22");
	assert_string_equal(images[2], "node:20");
	assert_string_equal(images[3], "nginx:latest");
	assert_int_equal(sbt_dockerfile_stages_needed(&df, 4, SBT_DF_UPTO, need, &err), 5);
	/* BuildKit builds what the target depends on: not the web stage */
	assert_int_equal(sbt_dockerfile_stages_needed(&df, 4, SBT_DF_DEPS, need, &err), 4);
	assert_true(need[0] && need[1] && !need[2] && need[3] && need[4]);
	assert_int_equal(sbt_dockerfile_images(&df, 4, SBT_DF_DEPS, images, 8, &err), 2);
	assert_string_equal(images[0], "alpine:3.19");
	assert_string_equal(images[1], "golang:1.22");
	assert_int_equal(sbt_dockerfile_images(&df, 5, SBT_DF_DEPS, images, 8, &err), 1);
	assert_int_equal(sbt_dockerfile_images(&df, 5, SBT_DF_UPTO, images, 8, &err), 4);
	assert_int_equal(sbt_dockerfile_images(&df, 4, SBT_DF_UPTO, images, 3, &err), -1);
	assert_string_equal(err.msg, "more than 3 images needed; the build needs too many");
	assert_int_equal(sbt_dockerfile_stages_needed(&df, 6, SBT_DF_DEPS, need, &err), -1);
	assert_string_equal(err.msg, "no stage 6: the Dockerfile has 6");
	sbt_dockerfile_free(&df);

	parse("FROM golang:${GO_VERSION}-alpine AS b\nFROM scratch\nCOPY --from=b /x /x\n", &df);
	assert_int_equal(sbt_dockerfile_images(&df, 1, SBT_DF_DEPS, images, 8, &err), -1);
	assert_int_equal(err.line, 1);
	assert_string_equal(err.msg, "FROM golang:${GO_VERSION}-alpine: GO_VERSION is not a global "
				     "ARG (declare it before the first FROM)");
	sbt_dockerfile_free(&df);

	parse("FROM a AS x\nCOPY --from=y /a /a\nFROM b AS y\nCOPY --from=$S /a /a\n"
	      "COPY --from=5 /a /a\n",
	      &df);
	assert_int_equal(sbt_dockerfile_stages_needed(&df, 0, SBT_DF_DEPS, need, &err), -1);
	assert_int_equal(err.line, 2);
	assert_string_equal(err.msg, "COPY --from=y: that stage needs to be defined before the "
				     "current one");
	assert_int_equal(sbt_dockerfile_images(&df, 1, SBT_DF_DEPS, images, 8, &err), -1);
	assert_int_equal(err.line, 4);
	assert_non_null(strstr(err.msg, "variables are not expanded in --from"));
	sbt_dockerfile_free(&df);
}

/* The cases the probe's own Dockerfile scan was tested with (test_probe.c). */
static void test_probe_cases(void **state)
{
	static const struct {
		const char *text;
		const char *builder; /* the stage found as "builder"; NULL: none */
	} found[] = {
		{ "from --platform=$BUILDPLATFORM node:20 as Builder\n", "Builder" },
		{ "FROM\tnode:20\tAS\tbuilder\r\n", "builder" },
		{ "  FROM node:20 AS builder", "builder" },
		{ "FROM \\\n  node:20 \\\n  # a comment\n\n  AS builder\nRUN x\n", "builder" },
		{ "FROM node:20 \\   \n AS builder\n", "builder" },
		{ "# escape=`\nFROM node:20 `\n AS builder\n", "builder" },
		{ "# FROM node:20 AS builder\nFROM alpine\n", NULL },
		{ "FROM node:20 AS builders\n", NULL },
		{ "FROM node:20 AS deps\nFROM node:20\nRUN npm run build\n", NULL },
		{ "", NULL },
		{ "\\", NULL },
	};
	static const struct {
		const char *text;
		unsigned int line;
		const char *error;
	} refused[] = {
		{ "# escape=`\nFROM node:20 \\\nAS builder\n", 2, "one or three arguments" },
		{ "RUN echo FROM x AS builder\n", 1, "RUN before the first FROM" },
		{ "FROM node:20 AS\n", 1, "one or three arguments" },
		{ "FROM AS builder\n", 1, "one or three arguments" },
		{ "FROM node:20 AS builder extra\n", 1, "one or three arguments" },
		{ "FROM node:20 builder\n", 1, "one or three arguments" },
	};
	struct sbt_dockerfile df;

	for (size_t i = 0; i < sizeof(found) / sizeof(found[0]); i++) {
		int idx;

		parse(found[i].text, &df);
		idx = sbt_dockerfile_stage_index(&df, "builder");
		if (!found[i].builder && idx >= 0)
			fail_msg("case %zu: found a builder stage", i);
		if (found[i].builder && idx < 0)
			fail_msg("case %zu: no builder stage", i);
		if (found[i].builder)
			assert_string_equal(df.stages[idx].name, found[i].builder);
		sbt_dockerfile_free(&df);
	}
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
		parse_fails(refused[i].text, refused[i].line, refused[i].error);

	parse("FROM node:20 AS deps\nFROM deps AS builder\nFROM builder AS test\nFROM scratch\n",
	      &df);
	assert_int_equal(sbt_dockerfile_stage_index(&df, "test"), 2);
	assert_int_equal(sbt_dockerfile_stage_index(&df, "DEPS"), 0);
	assert_int_equal(sbt_dockerfile_stage_index(&df, "nope"), -1);
	assert_int_equal(df.stages[2].base_stage, 1);
	sbt_dockerfile_free(&df);
}

/* --- limits and errors ---------------------------------------------------- */

static char *repeat(const char *head, const char *line, int times)
{
	size_t hl = strlen(head), ll = strlen(line);
	char *s = malloc(hl + ll * (size_t)times + 1);

	assert_non_null(s);
	memcpy(s, head, hl);
	for (int i = 0; i < times; i++)
		memcpy(s + hl + ll * (size_t)i, line, ll);
	s[hl + ll * (size_t)times] = '\0';
	return s;
}

static void test_limits(void **state)
{
	struct sbt_dockerfile df;
	size_t big = SBT_DF_MAX_BYTES + 1;
	char *s = malloc(big);

	assert_non_null(s);
	memset(s, '#', big);
	parse_fails_n(s, big, 0, "larger than 1024 KiB");
	s[big - 2] = '\n'; /* exactly 1 MiB of comments is fine */
	assert_int_equal(sbt_dockerfile_parse(s, big - 1, NULL, &df, NULL), 0);
	assert_int_equal(df.nr_lines, 1);
	sbt_dockerfile_free(&df);
	free(s);

	s = repeat("", "FROM a\n", SBT_DF_MAX_STAGES);
	parse(s, &df);
	assert_int_equal(df.nr_stages, SBT_DF_MAX_STAGES);
	sbt_dockerfile_free(&df);
	free(s);
	s = repeat("", "FROM a\n", SBT_DF_MAX_STAGES + 1);
	parse_fails(s, SBT_DF_MAX_STAGES + 1, "more than 128 stages");
	free(s);

	s = repeat("FROM a\n", "RUN x\n", SBT_DF_MAX_INSTRS);
	parse_fails(s, SBT_DF_MAX_INSTRS + 1, "more than 4096 instructions");
	free(s);

	s = malloc(SBT_DF_MAX_ARGS * 16 + 16);
	assert_non_null(s);
	s[0] = '\0';
	for (int i = 0; i <= SBT_DF_MAX_ARGS; i++)
		sprintf(s + strlen(s), "ARG A%d=%d\n", i, i);
	parse_fails(s, SBT_DF_MAX_ARGS + 1, "more than 64 global ARGs");
	free(s);

	/* doubling ARG defaults stop at the value limit */
	s = repeat("ARG A=xxxxxxxxxxxxxxxx\n", "ARG A=$A$A\n", 12);
	parse_fails(s, 11, "longer than 8192 bytes after ARG substitution");
	free(s);
	s = repeat("FROM a\nRUN --a", " --b", SBT_DF_MAX_FLAGS);
	parse_fails(s, 2, "more than 32 --flags");
	free(s);
	s = repeat("FROM a:", "${A:-", SBT_DF_MAX_NESTING + 1);
	parse_fails(s, 1, "nested more than 16 deep");
	free(s);
	s = repeat("FROM a\nRUN", " <<A", SBT_DF_MAX_HEREDOCS + 1);
	parse_fails(s, 2, "more than 16 heredocs");
	free(s);
}

static void test_errors(void **state)
{
	static const char *const bad_args[] = { "NOEQUALS", NULL };
	struct sbt_dockerfile df;
	struct sbt_df_error err;

	parse_fails("ENV A=1\nFROM a\n", 1,
		    "ENV before the first FROM: only ARG may come before it");
	parse_fails("ARG A=1\n\nCOPY x y\nFROM a\n", 3, "COPY before the first FROM");
	parse_fails_n("FROM a\nRUN x\0y\n", 14, 2, "a NUL byte");
	assert_int_equal(sbt_dockerfile_parse("FROM a\n", 7, bad_args, &df, &err), -1);
	assert_string_equal(err.msg, "build arg 'NOEQUALS': give it as NAME=VALUE");
	assert_int_equal(sbt_dockerfile_parse(NULL, 0, NULL, &df, &err), 0);
	assert_int_equal(df.nr_instrs, 0);
	sbt_dockerfile_free(&df);
	/* only comments, or ARGs: no stage, not an error here */
	parse("# nothing\n\nARG A=1\n", &df);
	assert_int_equal(df.nr_stages, 0);
	assert_int_equal(df.nr_instrs, 1);
	assert_int_equal(df.instrs[0].stage, -1);
	sbt_dockerfile_free(&df);
}

/* --- reading files -------------------------------------------------------- */

static void write_file(int dir, const char *name, const char *data, size_t len)
{
	int fd = openat(dir, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	close(fd);
}

static void test_read(void **state)
{
	char tmpl[] = "/tmp/sbt-test-dockerfile.XXXXXX", *buf, *big;
	struct sbt_dockerfile df;
	struct sbt_df_error err;
	size_t len;
	int dir;

	assert_non_null(mkdtemp(tmpl));
	dir = open(tmpl, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(dir >= 0);
	write_file(dir, "Dockerfile", "FROM a AS b\n", 12);
	assert_int_equal(sbt_dockerfile_read(dir, "Dockerfile", &buf, &len, &err), 0);
	assert_int_equal(len, 12);
	assert_string_equal(buf, "FROM a AS b\n");
	free(buf);
	assert_int_equal(sbt_dockerfile_load(dir, "Dockerfile", NULL, &df, &err), 0);
	assert_int_equal(sbt_dockerfile_stage_index(&df, "b"), 0);
	sbt_dockerfile_free(&df);

	assert_int_equal(sbt_dockerfile_read(dir, "missing", &buf, &len, &err), -ENOENT);
	assert_string_equal(err.msg, "missing: No such file or directory");
	assert_null(buf);
	assert_int_equal(sbt_dockerfile_read(dir, ".", &buf, &len, &err), -EINVAL);
	assert_string_equal(err.msg, ".: not a regular file; a Dockerfile must be one");
	assert_int_equal(mkfifoat(dir, "fifo", 0600), 0);
	assert_int_equal(sbt_dockerfile_read(dir, "fifo", &buf, &len, &err), -EINVAL);
	big = calloc(1, SBT_DF_MAX_BYTES + 1);
	assert_non_null(big);
	write_file(dir, "big", big, SBT_DF_MAX_BYTES + 1);
	free(big);
	assert_int_equal(sbt_dockerfile_read(dir, "big", &buf, &len, &err), -EFBIG);
	assert_string_equal(err.msg, "big: larger than 1024 KiB; refusing to parse it");
	assert_int_equal(sbt_dockerfile_load(dir, "big", NULL, &df, &err), -1);
	assert_null(df.mem);

	unlinkat(dir, "Dockerfile", 0);
	unlinkat(dir, "fifo", 0);
	unlinkat(dir, "big", 0);
	close(dir);
	assert_int_equal(rmdir(tmpl), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escape_directive),
		cmocka_unit_test(test_directive_position),
		cmocka_unit_test(test_continuation),
		cmocka_unit_test(test_crlf),
		cmocka_unit_test(test_keywords_and_flags),
		cmocka_unit_test(test_unconfined_run),
		cmocka_unit_test(test_exec_and_shell_form),
		cmocka_unit_test(test_healthcheck),
		cmocka_unit_test(test_heredocs),
		cmocka_unit_test(test_stages),
		cmocka_unit_test(test_entrypoint),
		cmocka_unit_test(test_arg_substitution),
		cmocka_unit_test(test_images_and_deps),
		cmocka_unit_test(test_probe_cases),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_read),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
