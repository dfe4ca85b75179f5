// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Sites: which instruction, script or recipe line a shell came from (see site.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "event/events.h"
#include "probe/probe.h"
#include "exec/npmpkg.h"
#include "exec/shellagg.h"
#include "exec/shellid.h"
#include "probe_int.h"
#include "site.h"

#define SITE_ARGV_MAX 64

static bool blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/*
 * A copy with runs of blanks (and backslash-newlines: continued lines,
 * joined or not) collapsed to one space and none at either end.
 */
static char *collapse(const char *s, size_t len)
{
	char *out = malloc(len + 1), *o = out;
	bool gap = false;

	if (!out)
		return NULL;
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '\\' && i + 1 < len && s[i + 1] == '\n')
			i++;
		if (blank(s[i])) {
			gap = o != out;
			continue;
		}
		if (gap)
			*o++ = ' ';
		gap = false;
		*o++ = s[i];
	}
	*o = '\0';
	return out;
}

/* True when `s` (len bytes) equals the collapsed `text`. */
static bool same_text(const char *text, const char *s)
{
	char *c = collapse(s, strlen(s));
	bool same = c && strcmp(c, text) == 0;

	free(c);
	return same;
}

void probe_sites_init(struct probe_sites *ss)
{
	memset(ss, 0, sizeof(*ss));
	ss->build_other = ss->boot_other = ss->base_entry = -1;
	snprintf(ss->dockerfile, sizeof(ss->dockerfile), "Dockerfile");
}

void probe_sites_free(struct probe_sites *ss)
{
	for (int i = 0; i < ss->nr; i++) {
		struct probe_site *s = &ss->v[i];

		free(s->text);
		free(s->fix);
		for (int j = 0; j < s->argc; j++)
			free(s->argv[j]);
		free(s->argv);
		sbt_shellagg_free(s->agg);
		for (int j = 0; j < s->nr_pkgs; j++) {
			free(s->pkgs[j].package);
			sbt_shellagg_free(s->pkgs[j].agg);
		}
		free(s->pkgs);
	}
	json_object_put(ss->lockfile);
	free(ss->v);
	free(ss->steps);
	free(ss->ties);
	probe_sites_init(ss);
}

/* Room for one more element of an array. 0 or -ENOMEM. */
static int grow(void **v, int nr, int *cap, size_t size)
{
	void *n;
	int c;

	if (nr < *cap)
		return 0;
	c = *cap ? *cap * 2 : 16;
	n = realloc(*v, (size_t)c * size);
	if (!n)
		return -ENOMEM;
	*v = n;
	*cap = c;
	return 0;
}

int probe_site_add(struct probe_sites *ss, const struct probe_site *tmpl, const char *text,
		   const char *const *argv, int argc)
{
	struct probe_site *s;

	if (grow((void **)&ss->v, ss->nr, &ss->cap, sizeof(*ss->v)))
		return -1;
	s = &ss->v[ss->nr];
	*s = *tmpl;
	s->text = s->fix = NULL;
	s->argv = NULL;
	s->argc = 0;
	s->agg = NULL;
	s->pkgs = NULL;
	s->nr_pkgs = s->cap_pkgs = 0;
	if (text && !(s->text = collapse(text, strlen(text))))
		return -1;
	if (argv && argc > 0) {
		s->argv = calloc((size_t)argc, sizeof(char *));
		if (!s->argv) {
			free(s->text);
			return -1;
		}
		for (int i = 0; i < argc; i++) {
			s->argv[i] = strdup(argv[i]);
			if (!s->argv[i]) {
				for (int j = 0; j < i; j++)
					free(s->argv[j]);
				free(s->argv);
				free(s->text);
				return -1;
			}
		}
		s->argc = argc;
	}
	return ss->nr++;
}

/* The catch-all of a phase: shells tied to nothing known. */
static int add_other(struct probe_sites *ss, enum probe_phase ph, const char *instr,
		     const char *file, const char *why)
{
	struct probe_site t = {
		.phase = ph, .file = file, .instruction = instr, .why = why, .affects_final = true
	};
	int i = probe_site_add(ss, &t, NULL, NULL, 0);

	if (i < 0)
		return -ENOMEM;
	if (ph == PROBE_BUILD)
		ss->build_other = i;
	else
		ss->boot_other = i;
	return 0;
}

/* ---- Dockerfile ---------------------------------------------------------- */

static void stage_label(const struct sbt_dockerfile *df, int i, char *out, size_t len)
{
	if (df->stages[i].name[0])
		snprintf(out, len, "%s", df->stages[i].name);
	else
		snprintf(out, len, "#%d", i);
}

/* The stages whose filesystem the target is built on: itself and its FROM-stage chain. */
static void base_chain(const struct sbt_dockerfile *df, int target, bool *in_chain)
{
	for (int i = target, hops = 0; i >= 0 && hops <= df->nr_stages; hops++) {
		in_chain[i] = true;
		i = df->stages[i].base_kind == SBT_DF_BASE_STAGE ? df->stages[i].base_stage : -1;
	}
}

/* A RUN of a stage the final image is built on gets its fix: no exec form is a remedy. */
static int add_instr(struct probe_sites *ss, const struct sbt_dockerfile *df,
		     const struct sbt_df_instr *in, int target, enum probe_phase ph, bool affects)
{
	struct probe_site t = { .phase = ph,
				.file = ss->dockerfile,
				.line = in->line,
				.instruction = sbt_df_keyword(in),
				.matched = true,
				.affects_final = affects,
				.step = ph == PROBE_BUILD };
	bool exec = in->form == SBT_DF_FORM_EXEC;
	char tool[64], fix[768];
	struct probe_site *s;
	int i;

	stage_label(df, in->stage, t.stage, sizeof(t.stage));
	i = probe_site_add(ss, &t, in->form == SBT_DF_FORM_SHELL ? in->cmd : NULL,
			   exec ? in->argv : NULL, exec ? in->argc : 0);
	if (i < 0)
		return -ENOMEM;
	s = &ss->v[i];
	if (ph != PROBE_BUILD || !affects)
		return 0;
	probe_command_program((const char *const *)s->argv, s->argc, s->text, tool, sizeof(tool));
	sbt_dockerfile_run_fix(df, in, target, ss->dockerfile, s->text, tool, fix, sizeof(fix));
	return (s->fix = strdup(fix)) ? 0 : -ENOMEM;
}

/* The boot: ENTRYPOINT (else CMD) of the target, else the base image's; its HEALTHCHECK. */
static int add_boot(struct probe_sites *ss, const struct sbt_dockerfile *df, int target)
{
	const struct sbt_df_instr *start = sbt_dockerfile_start(df, target),
				  *hc = sbt_dockerfile_healthcheck(df, target);
	int ret;

	if (start) {
		ret = add_instr(ss, df, start, target, PROBE_BOOT, true);
		if (ret)
			return ret;
		ss->boot_other = ss->nr - 1; /* the container's processes are its */
	} else {
		ret = add_other(ss, PROBE_BOOT, "CMD", NULL,
				"the final image's ENTRYPOINT and CMD come from its base image");
		if (ret)
			return ret;
	}
	if (hc)
		return add_instr(ss, df, hc, target, PROBE_BOOT, true);
	return 0;
}

int probe_sites_dockerfile(struct probe_sites *ss, const struct sbt_dockerfile *df, int target)
{
	bool need[SBT_DF_MAX_STAGES] = { false }, chain[SBT_DF_MAX_STAGES] = { false };
	struct sbt_df_error err;
	int ret;

	ss->by_cgroup = true;
	if (target < 0 || target >= df->nr_stages ||
	    sbt_dockerfile_stages_needed(df, target, SBT_DF_UPTO, need, &err) < 0)
		return add_other(ss, PROBE_BUILD, "RUN", ss->dockerfile,
				 "the Dockerfile's stages could not be worked out");
	base_chain(df, target, chain);
	for (int i = 0; i < df->nr_instrs; i++) {
		const struct sbt_df_instr *in = &df->instrs[i];

		if (in->stage < 0 || !need[in->stage] || !sbt_df_is_run(in))
			continue;
		ret = add_instr(ss, df, in, target, PROBE_BUILD, chain[in->stage]);
		if (ret)
			return ret;
	}
	ret = add_other(ss, PROBE_BUILD, "RUN", ss->dockerfile,
			"not tied to a RUN instruction: the step's command is none of the "
			"Dockerfile's as written");
	return ret ? ret : add_boot(ss, df, target);
}

int probe_sites_base_entry(struct probe_sites *ss, const char *image, const char *const *argv,
			   int argc)
{
	struct probe_site t = {
		.phase = PROBE_BOOT,
		.instruction = sbt_df_entrypoint_keyword(),
		.matched = true,
		.why = "the base image's own ENTRYPOINT, not the repo's Dockerfile: a "
		       "distroless base replaces it",
		.base_image = true
	};
	int i;

	if (argc <= 0)
		return 0;
	snprintf(t.image, sizeof(t.image), "%s", image);
	i = probe_site_add(ss, &t, NULL, argv, argc);
	if (i < 0)
		return -ENOMEM;
	ss->base_entry = i;
	return 0;
}

/* ---- npm, make, the rest ----------------------------------------------- */

int probe_sites_other(struct probe_sites *ss, const char *build_instr, const char *build_file)
{
	return add_other(ss, PROBE_BUILD, build_instr, build_file,
			 "not tied to a script or recipe line of the repo");
}

int probe_sites_install(struct probe_sites *ss, const char *file, const char *const *argv)
{
	struct probe_site t = { .phase = PROBE_BUILD,
				.file = file,
				.instruction = "install",
				.matched = true,
				.ties = true,
				.affects_final = true };
	int argc = 0;

	while (argv[argc])
		argc++;
	return probe_site_add(ss, &t, NULL, argv, argc) < 0 ? -ENOMEM : 0;
}

/* The 1-based line of `"name"` followed by ':' after `"scripts"` in text, 0 if not found. */
static unsigned int json_key_line(const char *text, const char *name)
{
	const char *p = strstr(text, "\"scripts\""), *q;
	size_t n = strlen(name);
	unsigned int line = 1;

	for (q = p; q && (q = strchr(q + 1, '"'));) {
		const char *r = q + 1 + n;

		if (strncmp(q + 1, name, n) == 0 && *r == '"') {
			for (r++; blank(*r); r++)
				;
			if (*r == ':') {
				for (const char *c = text; c < q; c++)
					line += *c == '\n';
				return line;
			}
		}
	}
	return 0;
}

int probe_sites_npm(struct probe_sites *ss, json_object *scripts, const char *text, bool boot_start)
{
	json_object_object_foreach(scripts, name, val)
	{
		bool start = boot_start && strcmp(name, "start") == 0;
		struct probe_site t = { .phase = start ? PROBE_BOOT : PROBE_BUILD,
					.file = "package.json",
					.line = json_key_line(text, name),
					.instruction = "script",
					.matched = true,
					.affects_final = true };

		if (!json_object_is_type(val, json_type_string))
			continue;
		snprintf(t.script, sizeof(t.script), "%s", name);
		if (probe_site_add(ss, &t, json_object_get_string(val), NULL, 0) < 0)
			return -ENOMEM;
		t.phase = PROBE_BOOT; /* npm start may run another (npm run serve): its shells */
		if (boot_start && !start &&
		    probe_site_add(ss, &t, json_object_get_string(val), NULL, 0) < 0)
			return -ENOMEM;
	}
	return 0;
}

int probe_sites_make(struct probe_sites *ss, const char *name, const char *text, size_t len)
{
	unsigned int line = 1;

	for (size_t i = 0; i < len; line++) {
		size_t end = i;

		while (end < len && text[end] != '\n')
			end++;
		if (text[i] == '\t') {
			size_t b = i + 1, e = end;
			struct probe_site t = { .phase = PROBE_BUILD,
						.file = name,
						.line = line,
						.instruction = "recipe",
						.matched = true,
						.affects_final = true };
			char *cmd;

			while (b < e && (blank(text[b]) || text[b] == '@' || text[b] == '-' ||
					 text[b] == '+'))
				b++;
			if (e > b && text[e - 1] == '\\') /* continued: its first line */
				e--;
			cmd = strndup(text + b, e - b);
			if (!cmd)
				return -ENOMEM;
			if (cmd[0] && probe_site_add(ss, &t, cmd, NULL, 0) < 0) {
				free(cmd);
				return -ENOMEM;
			}
			free(cmd);
		}
		i = end + 1;
	}
	return 0;
}

/* ---- tying execs to sites ------------------------------------------------ */

static const char *base_name(const char *path)
{
	const char *slash = path ? strrchr(path, '/') : NULL;

	return slash ? slash + 1 : path ? path : "";
}

/*
 * An exec form whose program is a `#!` script (`RUN ["npm", "ci"]`, npm being
 * `#!/usr/bin/env node`): the kernel's argv is the interpreter, its option,
 * then the script's path where the program was, then the rest as written.
 */
static bool script_argv_is(const struct probe_site *s, const struct sbt_exec *rec)
{
	if (!s->argv || s->argc < 1)
		return false;
	for (size_t k = 1; k <= 2; k++) {
		bool same = rec->argc == (size_t)s->argc + k &&
			    strcmp(rec->argv[k], rec->filename) == 0 &&
			    (strchr(s->argv[0], '/')
				     ? strcmp(s->argv[0], rec->filename) == 0
				     : strcmp(s->argv[0], base_name(rec->filename)) == 0);

		for (int i = 1; same && i < s->argc; i++)
			same = strcmp(s->argv[i], rec->argv[k + i]) == 0;
		if (same)
			return true;
	}
	return false;
}

/* The exec runs the site's argv: as written, or as the kernel runs a `#!` script of it. */
static bool argv_is(const struct probe_site *s, const struct sbt_exec *rec)
{
	bool same = s->argv && (size_t)s->argc == rec->argc;

	for (int i = 0; same && i < s->argc; i++)
		same = strcmp(s->argv[i], rec->argv[i]) == 0;
	return same || script_argv_is(s, rec);
}

/* Where a make variable reference $(X), ${X} or $X ends (at `p`, which is a '$'). */
static const char *var_end(const char *p)
{
	char close = p[1] == '(' ? ')' : p[1] == '{' ? '}' : '\0';
	int depth = 0;

	if (!close)
		return p[1] ? p + 2 : p + 1;
	for (const char *q = p + 1; *q; q++) {
		if (*q == p[1])
			depth++;
		else if (*q == close && --depth == 0)
			return q + 1;
	}
	return NULL;
}

/*
 * A recipe line with variables matches a command when its literal pieces
 * appear in it in order, the first at the start and the last at the end
 * (each reference stands for any text, as make expanded it). `$$` is a '$'.
 */
static bool recipe_glob(const char *pat, const char *cmd)
{
	char lit[1024];
	const char *c = cmd;
	bool first = true;

	for (const char *p = pat;;) {
		size_t n = 0;

		while (*p && (*p != '$' || p[1] == '$') && n < sizeof(lit) - 1) {
			lit[n++] = *p;
			p += *p == '$' ? 2 : 1;
		}
		lit[n] = '\0';
		if (!*p) /* the last piece: at the end */
			return strlen(c) >= n && strcmp(c + strlen(c) - n, lit) == 0 &&
			       (!first || strlen(c) == n);
		if (*p != '$')
			return false; /* a piece too long to compare */
		if (first ? strncmp(c, lit, n) != 0 : !(c = strstr(c, lit)))
			return false;
		c += n;
		first = false;
		if (!(p = var_end(p)))
			return false;
	}
}

/* A recipe site compares the command's first line (make passes continued lines on). */
static bool text_is(const struct probe_site *s, const char *cmd)
{
	bool recipe = strcmp(s->instruction, "recipe") == 0, same;
	const char *nl;
	char *first;

	if (!s->text || !cmd)
		return false;
	nl = recipe ? strchr(cmd, '\n') : NULL;
	first = nl ? strndup(cmd, (size_t)(nl - cmd)) : strdup(cmd);
	if (first && nl && first[0] && first[strlen(first) - 1] == '\\')
		first[strlen(first) - 1] = '\0';
	same = first && same_text(s->text, first);
	if (!same && first && recipe && strchr(s->text, '$')) {
		char *c = collapse(first, strlen(first));

		same = c && recipe_glob(s->text, c);
		free(c);
	}
	free(first);
	return same;
}

/*
 * A program make ran itself (no shell needed): its words are the recipe
 * line's. A `#!` script's words start at the script (the kernel put the
 * interpreter and its option before it).
 */
static bool words_are(const struct probe_site *s, const struct sbt_exec *rec,
		      const struct sbt_shell_class *cls)
{
	size_t len = 1, from = 0;
	char *joined;
	bool same;

	if (!s->text || !rec->argc)
		return false;
	if (cls->kind == SBT_SHELL_SHEBANG)
		for (size_t i = 1; i < rec->argc && i < 3; i++)
			if (strcmp(rec->argv[i], rec->filename) == 0)
				from = i;
	for (size_t i = from; i < rec->argc; i++)
		len += strlen(rec->argv[i]) + 1;
	joined = malloc(len);
	if (!joined)
		return false;
	joined[0] = '\0';
	for (size_t i = from; i < rec->argc; i++) {
		if (i > from)
			strcat(joined, " ");
		strcat(joined, rec->argv[i]);
	}
	same = text_is(s, joined);
	free(joined);
	return same;
}

/* A step's first process: the first RUN not taken whose command it runs. */
/*
 * A new step's site: the first RUN not taken yet whose argv or text it
 * runs, one of the final image's chain first. The same RUN text in a stage
 * the engine may skip (one the target does not build on) and in the final
 * image's chain is ambiguous: the step is the final image's (the answer that
 * cannot make a shell of the final image disappear), a second one the other's.
 */
static int match_step(struct probe_sites *ss, const struct sbt_exec *rec)
{
	const char *last = rec->argc >= 2 ? rec->argv[rec->argc - 1] : NULL;

	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < ss->nr; i++) {
			struct probe_site *s = &ss->v[i];

			if (!s->step || s->taken || (pass == 0 && !s->affects_final))
				continue;
			if (argv_is(s, rec) || (s->text && last && same_text(s->text, last))) {
				s->taken = true;
				return i;
			}
		}
	return ss->build_other;
}

/* A site of phase ph, not a step, whose -c text (or argv) this shell runs. */
static int match_text(const struct probe_sites *ss, enum probe_phase ph, const struct sbt_exec *rec,
		      const struct sbt_shell_class *cls)
{
	for (int i = 0; i < ss->nr; i++) {
		const struct probe_site *s = &ss->v[i];

		if (s->phase != ph || s->step || !s->matched || s->base_image)
			continue;
		if (text_is(s, cls->command) || argv_is(s, rec) ||
		    (!cls->command && words_are(s, rec, cls)))
			return i;
	}
	return -1;
}

static int step_of(const struct probe_sites *ss, uint64_t cgid)
{
	for (int i = ss->nr_steps - 1; i >= 0; i--)
		if (ss->steps[i].cgroup_id == cgid)
			return ss->steps[i].site;
	return -2;
}

/* The runtime's own process entering a container before the command (`runc init`). */
static bool runtime_helper(const struct sbt_exec *rec)
{
	const char *base = rec->argc ? strrchr(rec->argv[0], '/') : NULL;

	base = base ? base + 1 : rec->argc ? rec->argv[0] : "";
	return rec->argc >= 2 && strcmp(rec->argv[1], "init") == 0 &&
	       (strcmp(base, "runc") == 0 || strcmp(base, "crun") == 0 || strcmp(base, "exe") == 0);
}

static int tie(struct probe_sites *ss, uint32_t pid, int site)
{
	if (grow((void **)&ss->ties, ss->nr_ties, &ss->cap_ties, sizeof(*ss->ties)))
		return -1;
	ss->ties[ss->nr_ties++] = (struct probe_tie){ .pid = pid, .site = site };
	return site;
}

static int tied(const struct probe_sites *ss, uint32_t pid)
{
	for (int i = ss->nr_ties - 1; i >= 0; i--)
		if (ss->ties[i].pid == pid)
			return ss->ties[i].site;
	return -1;
}

/*
 * The container's first process runs the base image's ENTRYPOINT: a `#!`
 * script of that name (the kernel put the interpreter before it), or the
 * entrypoint's argv itself.
 */
static bool runs_base_entry(const struct probe_site *s, const struct sbt_exec *rec,
			    const struct sbt_shell_class *cls)
{
	const char *ep = base_name(s->argv[0]);

	if (cls->kind == SBT_SHELL_SHEBANG && strcmp(base_name(rec->filename), ep) == 0)
		return true;
	if (rec->argc < (size_t)s->argc || strcmp(base_name(rec->argv[0]), ep) != 0)
		return false;
	for (int i = 1; i < s->argc; i++)
		if (strcmp(s->argv[i], rec->argv[i]) != 0)
			return false;
	return true;
}

/*
 * The boot's execs and the base image's entrypoint: the container's first
 * exec, when it runs it, is the base image's site; a later exec of a pid
 * tied there that is no shell (`exec "$@"`: node) makes that pid the app's.
 * The base site's index, or -1.
 */
static int base_entry_of(struct probe_sites *ss, const struct sbt_exec *rec,
			 const struct sbt_shell_class *cls, bool first)
{
	int b = ss->base_entry;

	if (b < 0)
		return -1;
	if (first && cls && runs_base_entry(&ss->v[b], rec, cls))
		return tie(ss, rec->pid, b);
	for (int i = ss->nr_ties - 1; !cls && i >= 0; i--)
		if (ss->ties[i].pid == rec->pid) { /* in place: this cannot fail */
			if (ss->ties[i].site == b)
				ss->ties[i].site = ss->boot_other;
			break;
		}
	return -1;
}

int probe_site_of(struct probe_sites *ss, enum probe_phase ph, const struct sbt_exec *rec,
		  const struct sbt_shell_class *cls, const struct sbt_ancestor *anc, size_t nanc,
		  uint64_t sandbox_cg)
{
	int other = ph == PROBE_BUILD ? ss->build_other : ss->boot_other, step = -2, site;
	bool first = false;

	if (ss->by_cgroup && rec->cgroup_id != sandbox_cg) {
		step = step_of(ss, rec->cgroup_id);
		if (step == -2 && !runtime_helper(rec) &&
		    !grow((void **)&ss->steps, ss->nr_steps, &ss->cap_steps, sizeof(*ss->steps))) {
			step = ph == PROBE_BUILD ? match_step(ss, rec) : ss->boot_other;
			ss->steps[ss->nr_steps++] =
				(struct probe_step){ .cgroup_id = rec->cgroup_id, .site = step };
			first = ph == PROBE_BOOT;
		}
	}
	if (ph == PROBE_BOOT && (site = base_entry_of(ss, rec, cls, first)) >= 0)
		return site;
	if (!cls) {
		/* the install step's process: below it is its; a recipe's program: what it execs */
		for (int i = 0; i < ss->nr; i++)
			if (ss->v[i].phase == ph &&
			    ((ss->v[i].ties && argv_is(&ss->v[i], rec)) ||
			     (!ss->v[i].step && ss->v[i].matched &&
			      words_are(&ss->v[i], rec, &(struct sbt_shell_class){ 0 }))))
				return tie(ss, rec->pid, i);
		return step >= 0 ? step : -1;
	}
	site = match_text(ss, ph, rec, cls);
	/* itself first (a program that exec'd it in place: env sh -c), then its ancestors */
	for (size_t i = 0; site < 0 && i <= nanc; i++) {
		site = tied(ss, i ? anc[i - 1].pid : rec->pid);
		if (site >= 0 && ss->v[site].phase != ph)
			site = -1; /* a pid of the build reused at boot */
	}
	if (site < 0)
		site = step >= 0 ? step : other;
	return site >= 0 ? tie(ss, rec->pid, site) : -1;
}

/* ---- packages ------------------------------------------------------------ */

int probe_sites_lockfile(struct probe_sites *ss, const char *repo)
{
	return probe_npm_lockfile(repo, &ss->lockfile);
}

bool probe_site_package(const struct probe_sites *ss, const struct sbt_exec *rec, char *out,
			size_t len)
{
	char path[SBT_CWD_TAIL_MAX];
	const char *name, *version;
	int n;

	if (!sbt_npm_pkg_of_cwd(rec->cwd, path, sizeof(path), &name))
		return false;
	/* a tail cut above its first node_modules/ may be the end of a nested path */
	version = sbt_npm_lock_version(ss->lockfile, path, !rec->cwd_top);
	n = version ? snprintf(out, len, "%s@%s", name, version) : snprintf(out, len, "%s", name);
	return n > 0 && (size_t)n < len;
}

/* The aggregate of a site's shells run in package pkg: found or added; NULL on ENOMEM. */
static struct sbt_shellagg **package_agg(struct probe_site *s, const char *pkg)
{
	struct probe_site_pkg *p;

	for (int i = 0; i < s->nr_pkgs; i++)
		if (strcmp(s->pkgs[i].package, pkg) == 0)
			return &s->pkgs[i].agg;
	if (grow((void **)&s->pkgs, s->nr_pkgs, &s->cap_pkgs, sizeof(*s->pkgs)))
		return NULL;
	p = &s->pkgs[s->nr_pkgs];
	p->agg = NULL;
	if (!(p->package = strdup(pkg)))
		return NULL;
	s->nr_pkgs++;
	return &p->agg;
}

int probe_site_count(struct probe_sites *ss, int site, const struct sbt_exec *rec,
		     const struct sbt_shell_class *cls, int failed, const struct sbt_ancestor *anc,
		     size_t nanc)
{
	struct sbt_shell_class applet;
	struct sbt_shellagg **agg;
	char pkg[SBT_CWD_TAIL_MAX + 64];
	struct probe_site *s;

	if (site < 0 || site >= ss->nr)
		return 0;
	s = &ss->v[site];
	agg = probe_site_package(ss, rec, pkg, sizeof(pkg)) ? package_agg(s, pkg) : &s->agg;
	if (!agg || (!*agg && !(*agg = sbt_shellagg_new())))
		return -ENOMEM;
	/* /bin/sh a symlink to busybox (Alpine's): the applet, as the file's own name says */
	if (!cls->multicall && sbt_shellid_classify(NULL, rec, &applet) && applet.multicall)
		cls = &applet;
	if (failed)
		return sbt_shellagg_add_failed(*agg, cls, failed, rec->pid, rec->filename,
					       rec->argv, rec->argc, anc, nanc);
	return sbt_shellagg_add(*agg, cls, rec->pid, rec->filename, rec->argv, rec->argc, anc,
				nanc);
}

/* ---- the report ---------------------------------------------------------- */

/* `KW ["a", "b"]`: the exec form as a Dockerfile writes it (each word JSON-quoted). */
static json_object *exec_form_text(const char *kw, json_object *arr)
{
	size_t len = strlen(kw) + 4, n = json_object_array_length(arr);
	json_object *out;
	char *text;

	for (size_t i = 0; i < n; i++)
		len += strlen(json_object_to_json_string_ext(json_object_array_get_idx(arr, i),
							     JSON_C_TO_STRING_NOSLASHESCAPE)) +
		       2;
	text = malloc(len);
	if (!text)
		return NULL;
	snprintf(text, len, "%s [", kw);
	for (size_t i = 0; i < n; i++) {
		if (i)
			strcat(text, ", ");
		strcat(text, json_object_to_json_string_ext(json_object_array_get_idx(arr, i),
							    JSON_C_TO_STRING_NOSLASHESCAPE));
	}
	strcat(text, "]");
	out = json_object_new_string(text);
	free(text);
	return out;
}

/* `CMD ["node", "server.js"]`-style text for the site's instruction. */
static json_object *remedy_json(const struct probe_site *s, json_object *loc)
{
	json_object *kind, *cmd, *o, *arr;
	char *argv[SITE_ARGV_MAX + 1];
	const char *kw;
	int n;

	if (!json_object_object_get_ex(loc, "kind", &kind) ||
	    strcmp(json_object_get_string(kind) ? json_object_get_string(kind) : "", "command") !=
		    0 ||
	    !json_object_object_get_ex(loc, "command", &cmd))
		return NULL;
	if (s->matched && s->stage[0]) /* a Dockerfile's instruction: it has a stage */
		kw = sbt_df_exec_form_prefix(
			s->instruction); /* RUN, CMD, ENTRYPOINT, HEALTHCHECK CMD */
	else if (s->phase == PROBE_BOOT)
		kw = "CMD"; /* --boot-cmd, npm start: what the image should start */
	else
		kw = NULL;
	if (!kw)
		return NULL;
	n = probe_simple_command(json_object_get_string(cmd), argv, SITE_ARGV_MAX + 1);
	if (n <= 0)
		return NULL;
	arr = json_object_new_array();
	for (int i = 0; i < n; i++)
		json_object_array_add(arr, sbt_json_string(argv[i]));
	for (int i = 0; i < n; i++)
		free(argv[i]);
	o = json_object_new_object();
	json_object_object_add(o, "text", exec_form_text(kw, arr));
	json_object_object_add(o, "exec_form", arr);
	return o;
}

/* A RUN the final image is built on: its fix, and no exec form (none is a remedy). */
static json_object *remedy_fix(const struct probe_site *s)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "exec_form", NULL);
	json_object_object_add(o, "text", sbt_json_string(s->fix));
	return o;
}

/*
 * A base image's entrypoint shell: nothing to change (a distroless base has
 * no such entrypoint), or what it execs, given as the Dockerfile's own
 * exec-form ENTRYPOINT: the words after the script in the first sample's argv.
 */
static json_object *remedy_base(const struct probe_site *s, json_object *loc)
{
	const char *ep = base_name(s->argv[0]);
	json_object *argv, *arr, *o, *text;
	size_t n, from = 0;
	char buf[1024];

	if (!json_object_object_get_ex(loc, "argv", &argv))
		return NULL;
	n = json_object_array_length(argv);
	for (size_t i = 0; i < n && !from; i++)
		if (strcmp(base_name(json_object_get_string(json_object_array_get_idx(argv, i))),
			   ep) == 0)
			from = i + 1;
	if (!from || from >= n)
		return NULL;
	arr = json_object_new_array();
	for (size_t i = from; i < n; i++)
		json_object_array_add(arr, json_object_get(json_object_array_get_idx(argv, i)));
	text = exec_form_text(sbt_df_entrypoint_keyword(), arr);
	snprintf(buf, sizeof(buf),
		 "nothing to change: the distroless base replaces %.200s and its entrypoint; or, "
		 "to start without it on this base too, %.600s (exec form) and no CMD in the "
		 "Dockerfile",
		 s->image, text ? json_object_get_string(text) : "an exec-form ENTRYPOINT");
	json_object_put(text);
	o = json_object_new_object();
	json_object_object_add(o, "text", sbt_json_string(buf));
	json_object_object_add(o, "exec_form", arr);
	return o;
}

/* Where the shell comes from: the repo, or its base image's entrypoint (which, argv). */
static void origin_json(const struct probe_site *s, json_object *loc)
{
	json_object *b, *ep;

	json_object_object_add(loc, "origin",
			       json_object_new_string(s->base_image ? "base_image" : "repo"));
	if (!s->base_image) {
		json_object_object_add(loc, "base_image", NULL);
		return;
	}
	b = json_object_new_object();
	ep = json_object_new_array();
	for (int i = 0; i < s->argc; i++)
		json_object_array_add(ep, sbt_json_string(s->argv[i]));
	json_object_object_add(b, "image", sbt_json_string(s->image));
	json_object_object_add(b, "entrypoint", ep);
	json_object_object_add(loc, "base_image", b);
}

static json_object *source_json(const struct probe_site *s)
{
	json_object *src = json_object_new_object();

	json_object_object_add(src, "file", s->file ? json_object_new_string(s->file) : NULL);
	json_object_object_add(src, "line", s->line ? json_object_new_int64(s->line) : NULL);
	json_object_object_add(src, "instruction",
			       s->instruction ? json_object_new_string(s->instruction) : NULL);
	json_object_object_add(src, "script", s->script[0] ? sbt_json_string(s->script) : NULL);
	json_object_object_add(src, "matched", json_object_new_boolean(s->matched));
	json_object_object_add(src, "why", s->why ? json_object_new_string(s->why) : NULL);
	return src;
}

static void count_of(json_object *o, const char *key, uint64_t *n)
{
	json_object *v;

	if (json_object_object_get_ex(o, key, &v))
		*n += (uint64_t)json_object_get_int64(v);
}

void probe_sites_count(const struct probe_sites *ss, struct probe_site_totals *t)
{
	memset(t, 0, sizeof(*t));
	for (int i = 0; i < ss->nr; i++) {
		const struct probe_site *s = &ss->v[i];
		uint64_t n = sbt_shellagg_count(s->agg);

		for (int j = 0; j < s->nr_pkgs; j++)
			n += sbt_shellagg_count(s->pkgs[j].agg);

		t->count += n;
		*(s->phase == PROBE_BUILD ? &t->build : &t->boot) += n;
		if (s->affects_final)
			t->affecting += n;
	}
}

/*
 * One aggregate's locations, each with the site's phase, stage, source and
 * remediation and the package it ran in (pkg, NULL: none), onto locs.
 */
static void add_locations(json_object *locs, const struct probe_site *s,
			  const struct sbt_shellagg *a, const char *pkg,
			  struct probe_site_totals *t)
{
	json_object *agg, *arr, *omitted;

	if (!a || !(agg = sbt_shellagg_to_json(a)))
		return;
	if (json_object_object_get_ex(agg, "omitted", &omitted)) {
		count_of(omitted, "locations", &t->omitted_locations);
		count_of(omitted, "count", &t->omitted_count);
	}
	json_object_object_get_ex(agg, "locations", &arr);
	for (size_t k = 0; arr && k < json_object_array_length(arr); k++) {
		json_object *loc = json_object_get(json_object_array_get_idx(arr, k));

		json_object_object_add(
			loc, "phase",
			json_object_new_string(s->phase == PROBE_BUILD ? "build" : "boot"));
		json_object_object_add(loc, "stage",
				       s->stage[0] ? sbt_json_string(s->stage) : NULL);
		json_object_object_add(loc, "affects_final_image",
				       json_object_new_boolean(s->affects_final));
		json_object_object_add(loc, "source", source_json(s));
		json_object_object_add(loc, "package", pkg ? sbt_json_string(pkg) : NULL);
		/*
		 * moving the step is a dependency's shell's fix too; else no exec
		 * form of the repo's line replaces a dependency's own command
		 */
		json_object_object_add(loc, "remediation",
				       s->fix	       ? remedy_fix(s)
				       : pkg	       ? NULL
				       : s->base_image ? remedy_base(s, loc)
						       : remedy_json(s, loc));
		origin_json(s, loc);
		json_object_array_add(locs, loc);
	}
	json_object_put(agg);
}

json_object *probe_sites_json(const struct probe_sites *ss, struct probe_site_totals *t)
{
	json_object *locs = json_object_new_array();

	probe_sites_count(ss, t);
	for (int i = 0; locs && i < ss->nr; i++) {
		const struct probe_site *s = &ss->v[i];

		add_locations(locs, s, s->agg, NULL, t);
		for (int j = 0; j < s->nr_pkgs; j++)
			add_locations(locs, s, s->pkgs[j].agg, s->pkgs[j].package, t);
	}
	return locs;
}
