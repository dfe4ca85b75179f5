// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * sbtrace probe --migrate (migrate/check.h): the migration of the probed
 * Dockerfile (migrate.c) and its check. The migrated Dockerfile is written
 * outside the repo (never into it) and probed as the operator would probe
 * it, by a second `sbtrace probe --file THAT --no-cache` of the same repo
 * with the same image maps, boot, backend, environment and allowlist: its
 * build and boot run under trace on the base without a shell (the stand-in,
 * or --distroless-base through an --image-map line). The migration is
 * verified when that report is safe with high confidence, the boot ran and
 * became ready, and no exec failed; otherwise its failed execs (a shell the
 * app tried: ProcessExecFailed, ENOENT) are the evidence, with their chain.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "exec/shell.h"
#include "lib/extbin.h"
#include "lib/io.h"
#include "event/envelope.h"
#include "lib/jsondoc.h"
#include "lib/log.h"
#include "lib/treecopy.h"
#include "migrate/check.h"
#include "migrate/migrate.h"

#define CHILD_ARGS 160
#define REPORT_MAX (8u << 20)

struct ctx {
	const struct probe_ctx *p;
	json_object *scripts; /* package.json's, or NULL */
};

static const char *script_of(void *arg, const char *name)
{
	const struct ctx *c = arg;
	json_object *v;

	if (!c->scripts || !json_object_object_get_ex(c->scripts, name, &v) ||
	    !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

/* A start program that is a shell script: named *.sh, or a repo file starting #!<shell>. */
static bool shell_script_of(void *arg, const char *path)
{
	const struct ctx *c = arg;
	const char *b = strrchr(path, '/') ? strrchr(path, '/') + 1 : path, *interp, *e;
	char name[PATH_MAX], head[128], shell[64];
	size_t len;
	char *buf = NULL;
	int rc;

	if (strlen(b) > 3 && strcmp(b + strlen(b) - 3, ".sh") == 0)
		return true;
	/* the image's path is not the repo's: the file of that name at the repo's top */
	snprintf(name, sizeof(name), "%s", b);
	rc = probe_read_repo_text(c->p->o->repo, name, &buf, &len, head, sizeof(head));
	if (rc <= 0 || len < 3 || buf[0] != '#' || buf[1] != '!') {
		free(buf);
		return false;
	}
	interp = buf + 2;
	interp += strspn(interp, " \t");
	e = interp + strcspn(interp, " \t\n");
	snprintf(shell, sizeof(shell), "%.*s", (int)(e - interp), interp);
	free(buf);
	b = strrchr(shell, '/') ? strrchr(shell, '/') + 1 : shell;
	return sbt_is_shell_name(b) || strcmp(b, "env") == 0; /* #!/usr/bin/env bash: a shell */
}

static json_object *notes_json(const struct sbt_migrate_note *v, int n, const char *file)
{
	json_object *a = json_object_new_array();

	for (int i = 0; i < n; i++) {
		json_object *o = json_object_new_object();

		json_object_object_add(o, "file", v[i].line ? json_object_new_string(file) : NULL);
		json_object_object_add(o, "line",
				       v[i].line ? json_object_new_int64(v[i].line) : NULL);
		json_object_object_add(o, "what", sbt_json_string(v[i].what));
		json_object_object_add(o, "why", sbt_json_string(v[i].why));
		json_object_array_add(a, o);
	}
	return a;
}

/* The migrated Dockerfile in a directory of ours (dir, "" when none was made): path. 0, -errno. */
static int write_dockerfile(const char *text, char *dir, size_t dlen, char *path, size_t plen)
{
	int fd, e = 0;
	size_t n = strlen(text);

	snprintf(dir, dlen, "/var/tmp/sbtrace-migrate-%d.XXXXXX", (int)getpid());
	if (!mkdtemp(dir)) {
		e = errno;
		dir[0] = '\0';
		return -e;
	}
	snprintf(path, plen, "%s/Dockerfile", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, text, n) != (ssize_t)n)
		e = errno ? errno : EIO;
	if (fd >= 0 && close(fd) && !e)
		e = errno;
	return -e;
}

/* The allowlist as a file of rules (the child's --allowlist), "" when there is none. */
static int write_allowlist(const struct probe_opts *o, const char *dir, char *path, size_t len)
{
	FILE *f;

	path[0] = '\0';
	if (!o->egress.nr_rules)
		return 0;
	snprintf(path, len, "%s/allowlist", dir);
	f = fopen(path, "wxe");
	if (!f)
		return -errno;
	for (size_t i = 0; i < o->egress.nr_rules; i++)
		fprintf(f, "%s\n", o->egress.rules[i].text);
	return fclose(f) ? -errno : 0;
}

#define ARG(s)                                                                                     \
	do {                                                                                       \
		if (n < CHILD_ARGS - 1)                                                            \
			argv[n++] = (char *)(s);                                                   \
	} while (0)

/* The child probe's argv (strings in store, which must outlive it). */
static void child_argv(const struct probe_ctx *p, const char *self, const char *file,
		       const char *allowlist, char **argv, char store[][300])
{
	const struct probe_opts *o = p->o;
	int n = 0, s = 0;

	ARG(self);
	ARG("probe");
	ARG("--no-cache");
	ARG("--file");
	ARG(file);
	ARG("-q"); /* its progress is ours: one "migration:" line, not a second verdict */
	for (int i = 0; i < o->nr_image_map && s < 40; i++, s++) {
		snprintf(store[s], sizeof(store[s]), "%.140s=%.150s", o->image_map[i].ref,
			 o->image_map[i].local);
		ARG("--image-map");
		ARG(store[s]);
	}
	snprintf(store[s], sizeof(store[s]), "%.3f", (double)o->boot_ms / 1000.0);
	ARG("--boot-seconds");
	ARG(store[s++]);
	snprintf(store[s], sizeof(store[s]), "%llu", (unsigned long long)o->boot_quiet_ms);
	ARG("--boot-quiet-ms");
	ARG(store[s++]);
	snprintf(store[s], sizeof(store[s]), "%.3f", (double)o->timeout_ms / 1000.0);
	ARG("--timeout");
	ARG(store[s++]);
	if (o->target) {
		ARG("--target");
		ARG(SBT_MIGRATE_STAGE);
	}
	if (o->backend_given) {
		ARG("--backend");
		ARG(sbt_backend_name(o->backend));
	}
	if (o->backend_given && o->guest) {
		ARG("--guest");
		ARG(o->guest);
	}
	if (o->pull)
		ARG("--pull");
	for (int i = 0; i < o->nr_env; i++) {
		ARG("--env");
		ARG(o->env_args[i]);
	}
	if (allowlist[0]) {
		ARG("--allowlist");
		ARG(allowlist);
	}
	ARG(o->repo);
	argv[n] = NULL;
}

/* Run the child probe (lib/extbin.c's runner); its report (stdout) parsed into *out. 0 or -1. */
static int run_child(char **argv, json_object **out, char *why, size_t len)
{
	struct sbt_run_io io = { .out_len = REPORT_MAX };
	const char *perr;
	int st = 0, rc;

	*out = NULL;
	io.out = malloc(io.out_len);
	if (!io.out) {
		snprintf(why, len, "cannot start the check: out of memory");
		return -1;
	}
	rc = sbt_run(argv, &io, &st);
	if (rc == 0 && io.out[0])
		*out = sbt_json_parse_doc(io.out, strlen(io.out), &perr);
	free(io.out);
	if (!*out) {
		snprintf(why, len, "the check's probe gave no report (%s %d)",
			 rc ? "error" : "exit", rc ? rc : sbt_exit_code(st));
		return -1;
	}
	return 0;
}

static const char *str_at(json_object *o, const char *k1, const char *k2)
{
	json_object *v = NULL;

	if (!json_object_object_get_ex(o, k1, &v))
		return NULL;
	if (k2 && (!v || !json_object_object_get_ex(v, k2, &v)))
		return NULL;
	return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

/*
 * The check's failed execs (its locations with `failed` set: a shell the
 * image has not), each with what it tells: "node server.js -> sh: the app
 * needs /bin/sh (child_process.exec, libc's system)".
 */
static json_object *failed_execs(json_object *child, uint64_t *shells)
{
	json_object *locs = NULL, *out = json_object_new_array(), *si;

	*shells = 0;
	if (json_object_object_get_ex(child, "shell_invocation", &si))
		json_object_object_get_ex(si, "locations", &locs);
	for (size_t i = 0; locs && i < json_object_array_length(locs); i++) {
		json_object *l = json_object_array_get_idx(locs, i), *o;
		const char *failed = str_at(l, "failed", NULL), *chain = str_at(l, "chain", NULL),
			   *file = str_at(l, "filename", NULL), *sh = str_at(l, "shell", NULL);
		char tells[512];

		if (!failed) {
			(*shells)++;
			continue;
		}
		snprintf(tells, sizeof(tells),
			 "%s%s%s: the app tries %s (%s) at %s, and the base has none: an exec of "
			 "a shell (child_process.exec, libc's system, a #! script) must become an "
			 "exec of the program itself",
			 chain ? chain : "", chain ? " -> " : "", sh ? sh : "a shell",
			 file ? file : "?", failed,
			 str_at(l, "phase", NULL) ? str_at(l, "phase", NULL) : "?");
		o = json_object_new_object();
		json_object_object_add(o, "shell", sh ? json_object_new_string(sh) : NULL);
		json_object_object_add(o, "filename", file ? sbt_json_string(file) : NULL);
		json_object_object_add(o, "errno", json_object_new_string(failed));
		json_object_object_add(o, "command",
				       json_object_get(json_object_object_get(l, "command")));
		json_object_object_add(o, "chain", chain ? sbt_json_string(chain) : NULL);
		json_object_object_add(o, "phase",
				       json_object_get(json_object_object_get(l, "phase")));
		json_object_object_add(o, "count",
				       json_object_get(json_object_object_get(l, "count")));
		json_object_object_add(o, "why", sbt_json_string(tells));
		json_object_array_add(out, o);
	}
	return out;
}

/* The check's report as the migration's verification; *verified. */
static json_object *verification(json_object *child, bool *verified, json_object **fails, char *why,
				 size_t len)
{
	json_object *o = json_object_new_object(), *boot = NULL, *ready = NULL, *ran = NULL;
	const char *verdict = str_at(child, "verdict", NULL),
		   *conf = str_at(child, "confidence", NULL),
		   *reason = str_at(child, "reason", NULL);
	uint64_t shells;

	json_object_object_get_ex(child, "boot", &boot);
	if (boot) {
		json_object_object_get_ex(boot, "ready_ms", &ready);
		json_object_object_get_ex(boot, "ran", &ran);
	}
	*fails = failed_execs(child, &shells);
	*verified = verdict && strcmp(verdict, "safe") == 0 && conf && strcmp(conf, "high") == 0 &&
		    ran && json_object_get_boolean(ran) && ready &&
		    json_object_array_length(*fails) == 0;
	if (*verified)
		snprintf(why, len,
			 "built and booted on the base without a shell: ready, no shell, "
			 "no failed exec");
	else if (json_object_array_length(*fails))
		snprintf(why, len,
			 "%zu exec(s) of a shell failed on the base without one (failed_execs)",
			 json_object_array_length(*fails));
	else if (verdict && strcmp(verdict, "safe") == 0 && (!ran || !ready))
		snprintf(why, len,
			 "the boot on the new base never became ready (no port listened "
			 "to, no HEALTHCHECK passed)");
	else
		snprintf(why, len, "the check's answer: %s%s%s", verdict ? verdict : "none",
			 reason ? ", " : "", reason ? reason : "");
	json_object_object_add(o, "verdict", verdict ? json_object_new_string(verdict) : NULL);
	json_object_object_add(o, "confidence", conf ? json_object_new_string(conf) : NULL);
	json_object_object_add(o, "reason", reason ? json_object_new_string(reason) : NULL);
	json_object_object_add(o, "boot", json_object_get(boot));
	json_object_object_add(o, "shells", json_object_new_uint64(shells));
	/* of them, those of the final image (the rest ran in build stages: evidence, not faults) */
	json_object_object_add(o, "affecting_final_image",
			       json_object_get(json_object_object_get(
				       json_object_object_get(child, "shell_invocation"),
				       "affecting_final_image")));
	return o;
}

/* Build and boot the migrated Dockerfile (the child probe): verified, why, failed_execs. */
static void check(const struct probe_ctx *p, const struct sbt_migration *m, json_object *out,
		  bool *verified)
{
	char dir[96], file[128], allow[128], why[400], store[48][300], self[PATH_MAX];
	ssize_t sl = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *argv[CHILD_ARGS];
	json_object *child = NULL, *fails = NULL, *ver = NULL;
	int e;

	*verified = false;
	self[sl > 0 ? sl : 0] = '\0'; /* this sbtrace (its basename is on lib/extbin.c's list) */
	e = write_dockerfile(m->dockerfile, dir, sizeof(dir), file, sizeof(file));
	if (!e)
		e = write_allowlist(p->o, dir, allow, sizeof(allow));
	if (e) {
		snprintf(why, sizeof(why), "cannot write the migrated Dockerfile: %s",
			 strerror(-e));
	} else {
		child_argv(p, self, file, allow, argv, store);
		probe_progress((struct probe_ctx *)p,
			       "migration: building and booting it on %s under trace", m->base);
		if (run_child(argv, &child, why, sizeof(why)) == 0)
			ver = verification(child, verified, &fails, why, sizeof(why));
	}
	if (dir[0])
		sbt_tree_remove(dir);
	json_object_object_add(out, "verified", json_object_new_boolean(*verified));
	json_object_object_add(out, "why", sbt_json_string(why));
	json_object_object_add(out, "failed_execs", fails ? fails : json_object_new_array());
	json_object_object_add(out, "verification", ver);
	json_object_put(child);
}

json_object *probe_migrate(const struct probe_ctx *p, const struct sbt_build_plan *plan,
			   bool *verified, bool *shell_failed)
{
	const struct probe_opts *o = p->o;
	struct ctx c = { .p = p };
	json_object *doc = NULL, *out = json_object_new_object();
	struct sbt_dockerfile df;
	struct sbt_df_error derr;
	struct sbt_migration m;
	char err[256], *text = NULL, *pj = NULL;
	size_t len;
	int target, rc;

	*verified = *shell_failed = false;
	if (probe_package_json(o->repo, &doc, &c.scripts, &pj, err, sizeof(err)) < 0)
		c.scripts = NULL;
	rc = probe_read_repo_text(o->repo, plan->dockerfile, &text, &len, err, sizeof(err));
	if (rc <= 0 || sbt_dockerfile_parse(text, len, NULL, &df, &derr) < 0) {
		json_object_put(doc);
		free(pj);
		free(text);
		json_object_put(out);
		return NULL;
	}
	target = plan->target[0] ? sbt_dockerfile_stage_index(&df, plan->target) : df.nr_stages - 1;
	struct sbt_migrate_in in = { .df = &df,
				     .text = text,
				     .len = len,
				     .target = target,
				     .file = plan->dockerfile,
				     .base = o->distroless_base,
				     .script = script_of,
				     .shell_script = shell_script_of,
				     .arg = &c };
	if (target < 0 || sbt_migrate(&in, &m) < 0) {
		sbt_dockerfile_free(&df);
		json_object_put(doc);
		free(pj);
		free(text);
		json_object_put(out);
		return NULL;
	}
	json_object_object_add(out, "base", sbt_json_string(m.base));
	json_object_object_add(out, "runtime",
			       m.runtime ? json_object_new_string(m.runtime) : NULL);
	json_object_object_add(out, "start", m.start[0] ? sbt_json_string(m.start) : NULL);
	json_object_object_add(out, "file", sbt_json_string(plan->dockerfile));
	json_object_object_add(out, "dockerfile_patch", sbt_json_string(m.patch));
	/* the patch as an insertion (SARIF's fix): at byte `append_at`, `appended` */
	json_object_object_add(out, "append_at", json_object_new_uint64(len));
	json_object_object_add(out, "appended", sbt_json_string(m.dockerfile + len));
	json_object_object_add(out, "changes",
			       notes_json(m.changes, m.nr_changes, plan->dockerfile));
	json_object_object_add(out, "unconverted",
			       notes_json(m.unconverted, m.nr_unconverted, plan->dockerfile));
	if (m.nr_unconverted) {
		json_object_object_add(out, "verified", json_object_new_boolean(false));
		json_object_object_add(out, "why",
				       json_object_new_string("not checked: lines it could not "
							      "rewrite (unconverted)"));
		json_object_object_add(out, "failed_execs", json_object_new_array());
		json_object_object_add(out, "verification", NULL);
	} else {
		check(p, &m, out, verified);
		*shell_failed =
			json_object_array_length(json_object_object_get(out, "failed_execs"));
	}
	rc = o->migrate_out ? sbt_write_atomic(o->migrate_out, m.patch, strlen(m.patch), 0644, 0)
			    : 0;
	if (rc < 0)
		sbt_log("--migrate-out %s: %s", o->migrate_out, strerror(-rc));
	sbt_migration_free(&m);
	sbt_dockerfile_free(&df);
	json_object_put(doc);
	free(pj);
	free(text);
	return out;
}
