/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The Dockerfile parser: one for the whole tree. A Dockerfile comes from the
 * repo being probed, so it is untrusted input: every count and length is
 * bounded (SBT_DF_MAX_*), nothing is read past `len`, and a parse either
 * succeeds or says what is wrong on which line.
 *
 * BuildKit's parser is the reference (frontend/dockerfile/{parser,
 * instructions,shell}); what is followed:
 *
 *  - parser directives at the very top: `# escape=\` or `# escape=``,
 *    `# syntax=...` and `# check=...` (kept, not acted on); the key is
 *    case-insensitive; the first line that is not a directive (comment,
 *    blank line, instruction) ends them; a repeated one is an error.
 *  - a line whose last non-blank character is the escape character (not
 *    itself escaped) continues the instruction; comment and blank lines
 *    inside a continuation are dropped; the pieces are joined as they are;
 *    CRLF (any trailing CR) is accepted, a UTF-8 BOM skipped.
 *  - instructions: keyword (stored upper-case), leading `--flag` words of
 *    every instruction (quotes removed; which flags an instruction accepts
 *    is not checked), the arguments text, the first and last line.
 *  - exec form of RUN, CMD, ENTRYPOINT, SHELL and HEALTHCHECK CMD when the
 *    arguments are a JSON array of strings; text that is not valid JSON is
 *    shell form; a valid JSON array holding a non-string is an error (as in
 *    Docker: "arrays must be comprised of strings only").
 *  - heredocs of RUN, COPY, ADD (also under ONBUILD), shell form only: each
 *    `[n]<<[-]WORD` word of the line (WORD may be quoted) takes the lines
 *    up to one holding just WORD (leading tabs dropped for <<-).
 *  - stages: `FROM [--platform=P] IMAGE [AS NAME]`, names matching
 *    [a-z][a-z0-9._-]* case-insensitively, compared case-insensitively;
 *    the base resolved with the global ARGs (those before the first FROM).
 *
 * Where this parser differs on purpose: `FROM 0` names stage 0 (as buildah,
 * podman's builder, reads it; BuildKit would pull an image "0"); a stage
 * name used twice is an error (BuildKit only warns); a NUL byte is an error;
 * a file without FROM is no error here (nr_stages is 0; the caller decides).
 *
 * Not done: Unicode white space other than ASCII blanks, ${VAR%...},
 * ${VAR#...} and ${VAR/...} (the base is then marked unresolved), checking
 * each instruction's own arguments (ENV, COPY, EXPOSE ... are kept as text,
 * unknown keywords too, where BuildKit refuses them).
 *
 * Its files, bottom up, each using only those below it (context.h says what
 * each holds): context.c, words.c, stage.c, parse.c, query.c, confine.c.
 */
#ifndef SBT_DOCKERFILE_H
#define SBT_DOCKERFILE_H

#include <stdbool.h>
#include <stddef.h>

#define SBT_DF_MAX_BYTES      (1u << 20) /* the file */
#define SBT_DF_MAX_INSTRS     4096	 /* instructions */
#define SBT_DF_MAX_STAGES     128	 /* FROMs */
#define SBT_DF_MAX_ARGS	      64	 /* distinct global ARG names */
#define SBT_DF_MAX_BUILD_ARGS 64	 /* NAME=VALUE build args passed in */
#define SBT_DF_MAX_FLAGS      32	 /* --flags of one instruction */
#define SBT_DF_MAX_ARGV	      1024	 /* exec-form elements */
#define SBT_DF_MAX_HEREDOCS   16	 /* heredocs of one instruction */
#define SBT_DF_MAX_VALUE      8192	 /* an ARG value or base image after substitution */
#define SBT_DF_MAX_NESTING    16	 /* ${A:-${B:-...}} levels */

struct sbt_df_error {
	unsigned int line; /* 1-based line of the instruction, 0 when about no line */
	char msg[192];	   /* what is wrong and what to do, lower-case, no trailing period */
};

enum sbt_df_form {
	SBT_DF_FORM_NONE = 0,	 /* not a command instruction */
	SBT_DF_FORM_SHELL,	 /* cmd holds the command text */
	SBT_DF_FORM_EXEC,	 /* argv holds the JSON array's strings */
	SBT_DF_FORM_HEALTH_NONE, /* HEALTHCHECK NONE */
};

struct sbt_df_heredoc {
	const char *name; /* the terminator word, quotes removed */
	bool chomp;	  /* <<-WORD: leading tabs are dropped */
	bool quoted;	  /* <<"WORD" or <<'WORD': the body is not expanded */
	const char *body; /* the lines up to the terminator, each with its line end */
	size_t body_len;
};

struct sbt_df_instr {
	const char *keyword; /* upper-case */
	const char *args;    /* after the flags, lines joined, blanks trimmed */
	size_t args_len;
	const char *const *flags; /* "--platform=linux/amd64", quotes removed */
	int nr_flags;
	/* COPY --from=X and RUN --mount=...,from=X values, as written */
	const char *const *sources;
	int nr_sources;
	unsigned int line;	 /* first physical line */
	unsigned int end_line;	 /* last: continuation lines and heredoc terminators included */
	int stage;		 /* the stage it belongs to; -1 for an ARG before the first FROM */
	enum sbt_df_form form;	 /* RUN, CMD, ENTRYPOINT, SHELL, HEALTHCHECK; else NONE */
	const char *cmd;	 /* SHELL form: the command text (HEALTHCHECK: after CMD) */
	const char *const *argv; /* EXEC form: argc strings, then NULL */
	int argc;
	const struct sbt_df_heredoc *heredocs;
	int nr_heredocs;
};

enum sbt_df_base {
	SBT_DF_BASE_IMAGE = 0, /* an image to pull or find locally */
	SBT_DF_BASE_SCRATCH,   /* FROM scratch */
	SBT_DF_BASE_STAGE,     /* an earlier stage, by name or by index */
};

struct sbt_df_stage {
	const char *name;	/* "" when unnamed; as written */
	const char *base;	/* the FROM image as written */
	const char *image;	/* after ARG substitution */
	const char *unresolved; /* NULL, or why `image` is partial ("GO_VERSION has no default") */
	enum sbt_df_base base_kind;
	int base_stage;	   /* BASE_STAGE: the stage's index; else -1 */
	int from;	   /* index of the FROM in instrs */
	int nr_instrs;	   /* the stage's instructions: instrs[from + 1 .. from + nr_instrs] */
	unsigned int line; /* the FROM's first line */
};

struct sbt_df_arg {
	const char *name;
	const char *value;	/* NULL: declared without a default and not passed in */
	const char *unresolved; /* NULL, or why the default is partial (it used such an ARG) */
	bool passed;		/* the value is a build arg's */
	unsigned int line;	/* where it was (last) declared */
};

struct sbt_dockerfile {
	char escape;	    /* '\\' or '`' */
	const char *syntax; /* the `# syntax=` directive's value, or NULL */
	unsigned int nr_lines;
	struct sbt_df_instr *instrs;
	int nr_instrs;
	struct sbt_df_stage *stages;
	int nr_stages;
	struct sbt_df_arg *args; /* the global ARGs, each name once */
	int nr_args;
	void *mem; /* private: where the strings live */
};

/*
 * Parse `len` bytes of a Dockerfile. `build_args` (NULL or NULL-terminated
 * "NAME=VALUE" strings) override the defaults of global ARGs of those names
 * and give BuildKit's automatic platform ARGs (TARGETARCH ...) a value; a
 * name that no ARG declares is ignored, as Docker does. Returns 0 with `df`
 * filled (no FROM at all is not an error here: nr_stages is 0), or -1 with
 * `err` set and `df` empty. Either way sbt_dockerfile_free(df) may be called.
 */
int sbt_dockerfile_parse(const char *buf, size_t len, const char *const *build_args,
			 struct sbt_dockerfile *df, struct sbt_df_error *err);

/* Free everything a parse allocated; `df` is left empty (a second call is harmless). */
void sbt_dockerfile_free(struct sbt_dockerfile *df);

/*
 * Read `path` relative to `dirfd` (AT_FDCWD or a directory fd): a regular
 * file of at most SBT_DF_MAX_BYTES. Returns 0 with *buf (malloc'd,
 * NUL-terminated) and *len, or -errno with `err` saying why (-EINVAL: not a
 * regular file, -EFBIG: too large). The last path component may be a
 * symlink; callers that must stay inside a tree resolve the path first.
 */
int sbt_dockerfile_read(int dirfd, const char *path, char **buf, size_t *len,
			struct sbt_df_error *err);

/* sbt_dockerfile_read, then sbt_dockerfile_parse. 0 or -1 with `err`. */
int sbt_dockerfile_load(int dirfd, const char *path, const char *const *build_args,
			struct sbt_dockerfile *df, struct sbt_df_error *err);

/* Index of the stage named `name` (case-insensitive), or -1. */
int sbt_dockerfile_stage_index(const struct sbt_dockerfile *df, const char *name);

/* The value of `flag` when it is --NAME=VALUE ("" for a bare --NAME), else NULL. */
const char *sbt_df_flag_value(const char *flag, const char *name);

enum sbt_df_scope {
	SBT_DF_UPTO = 0, /* every stage up to and including the target (podman, classic docker) */
	SBT_DF_DEPS,	 /* the target and what it depends on (BuildKit) */
};

/*
 * The stages a build of stage `target` runs: need[i] set for each (need has
 * nr_stages entries). A stage depends on its FROM stage and on the stages
 * its COPY --from and RUN --mount from= name (a name or an index). Returns
 * how many are needed, or -1 with `err` (a bad target, a source naming the
 * same or a later stage, a --from with a variable).
 */
int sbt_dockerfile_stages_needed(const struct sbt_dockerfile *df, int target,
				 enum sbt_df_scope scope, bool *need, struct sbt_df_error *err);

/*
 * The distinct images a build of stage `target` needs, in the order they
 * are met: the base of every needed stage that is neither scratch nor a
 * stage, and every COPY --from / RUN --mount from= that names no stage.
 * Pointers into `df`. Returns how many, or -1 with `err`: what
 * sbt_dockerfile_stages_needed refuses, more than `max` images, or a base
 * that is not fully resolved ("FROM golang:${GO_VERSION}: GO_VERSION has no
 * default ...").
 */
int sbt_dockerfile_images(const struct sbt_dockerfile *df, int target, enum sbt_df_scope scope,
			  const char **images, int max, struct sbt_df_error *err);

/*
 * What a container of stage `stage` runs when it starts: its ENTRYPOINT,
 * else its CMD (its own, else inherited from the stages it is built FROM);
 * NULL when both come from the base image.
 */
const struct sbt_df_instr *sbt_dockerfile_start(const struct sbt_dockerfile *df, int stage);
/*
 * The stage's last `keyword` instruction (upper-case: "WORKDIR", "USER",
 * "CMD" ...), else that of the stages it is built FROM: what it inherits; NULL.
 */
const struct sbt_df_instr *sbt_dockerfile_inherited(const struct sbt_dockerfile *df, int stage,
						    const char *keyword);
/* Its ENTRYPOINT (own or inherited from its FROM stages); NULL when it is the base image's. */
const struct sbt_df_instr *sbt_dockerfile_entrypoint(const struct sbt_dockerfile *df, int stage);
/* The keyword of the entrypoint instruction, for a base image's (no instruction here). */
const char *sbt_df_entrypoint_keyword(void);
/* Its HEALTHCHECK (own or inherited); NULL for none or HEALTHCHECK NONE. */
const struct sbt_df_instr *sbt_dockerfile_healthcheck(const struct sbt_dockerfile *df, int stage);
/*
 * The first RUN of the stages up to `target` (what podman builds) with a
 * flag a build on the host engine cannot confine (confine.c says which):
 * -1 with `err` ("RUN --mount=type=cache: ... what to do", the RUN's line),
 * else 0.
 */
int sbt_dockerfile_unconfined_run(const struct sbt_dockerfile *df, int target,
				  struct sbt_df_error *err);
/* A command instruction's keyword as a static string ("RUN" ...; "" for others). */
const char *sbt_df_keyword(const struct sbt_df_instr *in);
bool sbt_df_is_run(const struct sbt_df_instr *in);
/* How a command instruction's exec form starts (RUN, CMD, ENTRYPOINT, HEALTHCHECK CMD); else NULL. */
const char *sbt_df_exec_form_prefix(const char *keyword);
/*
 * What to do with the RUN `in` of a stage the image of stage `target` is
 * built on (shown as `cmd`, its command with blanks collapsed, or NULL: its
 * arguments as written), into out: its exec form would still need its
 * program (`tool`: "npm"; "" when it runs several) in that image, and the
 * shell such a program runs scripts with, so the step moves to a build
 * stage whose output that image copies (`file`, the Dockerfile's name):
 * "Dockerfile:7: RUN npm ci runs in the final stage: move it to a build
 * stage (FROM node:20 AS build) and COPY --from=build its output; the final
 * image then needs neither a shell nor npm" (a stage name no stage has), or,
 * for a stage the target is built FROM, that the target start FROM an image
 * without a shell and COPY --from that stage.
 */
void sbt_dockerfile_run_fix(const struct sbt_dockerfile *df, const struct sbt_df_instr *in,
			    int target, const char *file, const char *cmd, const char *tool,
			    char *out, size_t len);

#endif
