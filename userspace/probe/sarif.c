// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The probe report as a SARIF 2.1.0 log (sarif.h): the report's json-c object
 * as report.c builds it (or the cache kept it) is read, never text: nothing is
 * parsed here. Every allocation is checked; a failed one is NULL/ENOMEM.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "probe_int.h"
#include "sarif.h"

/* ---- the report: a missing key or a value of another type is null ------ */

static json_object *get(json_object *o, const char *key)
{
	json_object *v = NULL;

	if (!json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, key, &v))
		return NULL;
	return v;
}

static const char *get_str(json_object *o, const char *key)
{
	json_object *v = get(o, key);

	return json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

static bool get_bool(json_object *o, const char *key)
{
	json_object *v = get(o, key);

	return json_object_is_type(v, json_type_boolean) && json_object_get_boolean(v);
}

/* An integer of at least 1 (a line, a count), else 0. */
static int64_t get_pos(json_object *o, const char *key)
{
	json_object *v = get(o, key);
	int64_t n;

	if (!json_object_is_type(v, json_type_int))
		return 0;
	n = json_object_get_int64(v);
	return n >= 1 ? n : 0;
}

static bool str_is(const char *s, const char *want)
{
	return s && !strcmp(s, want);
}

/* What every result shares: where the repo is in the repository, and how sure the answer is. */
struct sarif_ctx {
	const char *prefix; /* the repo's path below SRCROOT, "" or ending in '/' */
	const char *entry;  /* the build's entry file, or NULL */
	json_object *report;
	bool confident; /* confidence high */
};

/* ---- the log: each adder takes its value, and a NULL one is ENOMEM ------ */

static int put(json_object *o, const char *key, json_object *val)
{
	if (!val)
		return -ENOMEM;
	if (json_object_object_add(o, key, val)) {
		json_object_put(val);
		return -ENOMEM;
	}
	return 0;
}

static int put_str(json_object *o, const char *key, const char *s)
{
	return put(o, key, json_object_new_string(s));
}

/* A copy of src's value at src_key under key: JSON null when it has none. */
static int put_copy(json_object *o, const char *key, json_object *src, const char *src_key)
{
	json_object *v = get(src, src_key), *copy = NULL;

	if (!v)
		return json_object_object_add(o, key, NULL) ? -ENOMEM : 0;
	if (json_object_deep_copy(v, &copy, NULL) < 0)
		return -ENOMEM;
	return put(o, key, copy);
}

static int append(json_object *arr, json_object *val)
{
	if (!val)
		return -ENOMEM;
	if (json_object_array_add(arr, val)) {
		json_object_put(val);
		return -ENOMEM;
	}
	return 0;
}

/* {"text": text}, the shape of every SARIF message and description. */
static json_object *message(const char *text)
{
	json_object *m = json_object_new_object();

	if (m && put_str(m, "text", text)) {
		json_object_put(m);
		return NULL;
	}
	return m;
}

/* RFC 3986's unreserved characters and '/' stay as they are; other bytes are %XX. */
static bool uri_plain(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '.' || c == '_' || c == '~' || c == '/';
}

/* prefix, then path percent-encoded, then suffix (malloc'd); NULL on ENOMEM. */
static char *uri_of(const char *prefix, const char *path, const char *suffix)
{
	static const char hex[] = "0123456789ABCDEF";
	const unsigned char *p;
	size_t n = strlen(prefix) + strlen(suffix) + 1;
	char *out, *w;

	for (p = (const unsigned char *)path; *p; p++)
		n += uri_plain(*p) ? 1 : 3;
	out = malloc(n);
	if (!out)
		return NULL;
	w = out + strlen(prefix);
	memcpy(out, prefix, strlen(prefix));
	for (p = (const unsigned char *)path; *p; p++) {
		if (uri_plain(*p)) {
			*w++ = (char)*p;
			continue;
		}
		*w++ = '%';
		*w++ = hex[*p >> 4];
		*w++ = hex[*p & 15];
	}
	memcpy(w, suffix, strlen(suffix) + 1);
	return out;
}

static int put_uri(json_object *o, const char *prefix, const char *path, const char *suffix)
{
	char *uri = uri_of(prefix, path, suffix);
	int rc;

	if (!uri)
		return -ENOMEM;
	rc = put_str(o, "uri", uri);
	free(uri);
	return rc;
}

/* A file's URI: file:///PATH when absolute, else DIR/PATH relative to SRCROOT (dir: "" or "x/"). */
static int put_file_uri(json_object *o, const char *dir, const char *file)
{
	char *path;
	int rc;

	if (file[0] == '/')
		return put_uri(o, "file://", file, "");
	if (asprintf(&path, "%s%s", dir, file) < 0)
		return -ENOMEM;
	rc = put_uri(o, "", path, "");
	free(path);
	return rc;
}

/* ---- a shell location's result ----------------------------------------- */

/* "sh -c 'node server.js'": what the shell was asked to run, as its kind says. */
static void write_what(FILE *f, json_object *loc)
{
	const char *shell = get_str(loc, "shell"), *kind = get_str(loc, "kind"),
		   *cmd = get_str(loc, "command");

	if (!shell)
		shell = "a shell";
	if (str_is(kind, "command"))
		fprintf(f, "%s -c '%s'", shell, cmd ? cmd : "");
	else if (str_is(kind, "shebang") && cmd && cmd[0])
		fprintf(f, "the #!%s script %s", shell, cmd);
	else if (cmd && cmd[0])
		fprintf(f, "%s %s", shell, cmd);
	else
		fputs(shell, f);
}

/* The instruction as a reader names it: RUN, CMD ... as written, the others in words. */
static const char *instruction_label(const char *instruction)
{
	if (str_is(instruction, "script"))
		return "npm script";
	if (str_is(instruction, "recipe"))
		return "make recipe";
	if (str_is(instruction, "boot_cmd"))
		return "boot command";
	return instruction;
}

/* " (CMD, Dockerfile:12)": the instruction and where it is, as far as they are known. */
static void write_where(FILE *f, json_object *src)
{
	const char *label = instruction_label(get_str(src, "instruction")),
		   *script = get_str(src, "script"), *file = get_str(src, "file");
	int64_t line = get_pos(src, "line");
	const char *sep = " (";

	if (label) {
		fprintf(f, "%s%s", sep, label);
		if (script)
			fprintf(f, " \"%s\"", script);
		sep = ", ";
	}
	if (file && file[0]) {
		fprintf(f, "%s%s", sep, file);
		if (line)
			fprintf(f, ":%lld", (long long)line);
		sep = ", ";
	}
	if (sep[0] == ',')
		fputc(')', f);
}

/*
 * "sh -c 'node server.js' ran at boot (CMD, Dockerfile:12); exec form: CMD
 * [\"node\", \"server.js\"]", with what else the location says: a source not
 * found and why, a stage that does not reach the final image.
 */
static char *location_text(json_object *loc, const struct sarif_ctx *c)
{
	json_object *src = get(loc, "source"), *rem = get(loc, "remediation");
	const char *phase = get_str(loc, "phase"), *stage = get_str(loc, "stage"),
		   *why = get_str(src, "why"), *fix = get_str(rem, "text"),
		   *reason = get_str(c->report, "reason");
	int64_t count = get_pos(loc, "count");
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	write_what(f, loc);
	fputs(" ran", f);
	if (count > 1)
		fprintf(f, " %lld times", (long long)count);
	if (str_is(phase, "boot"))
		fputs(" at boot", f);
	else if (str_is(phase, "build"))
		fputs(" during the build", f);
	write_where(f, src);
	if (!get_bool(src, "matched"))
		fprintf(f, "; its source was not found%s%s", why ? ": " : "", why ? why : "");
	if (!get_bool(loc, "affects_final_image"))
		fprintf(f, "; %s%s does not affect the final image", stage ? "stage " : "",
			stage ? stage : "it");
	if (fix)
		fprintf(f, "; %s: %s",
			json_object_is_type(get(rem, "exec_form"), json_type_array) ? "exec form"
										    : "remediation",
			fix);
	if (!c->confident)
		fprintf(f, "; confidence low%s%s%s: other shells may have gone unseen",
			reason ? " (" : "", reason ? reason : "", reason ? ")" : "");
	if (ferror(f)) {
		fclose(f);
		free(buf);
		return NULL;
	}
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}

/*
 * The file the build was planned from (Dockerfile, Makefile, package.json:
 * the first input named by a bare path, not "tree:", "tool:" ...), or NULL.
 */
static const char *entry_file(json_object *report)
{
	json_object *in = get(report, "inputs");

	for (size_t i = 0;
	     json_object_is_type(in, json_type_array) && i < json_object_array_length(in); i++) {
		const char *name = get_str(json_object_array_get_idx(in, i), "name");

		if (name && name[0] && !strchr(name, ':'))
			return name;
	}
	return NULL;
}

/*
 * locations[0] at source.file (relative to SRCROOT), line source.line; with
 * no file there, the build's entry file without a line (code scanning
 * refuses a result without a location); neither: none.
 */
static int put_locations(json_object *result, json_object *src, const struct sarif_ctx *c)
{
	const char *file = get_str(src, "file");
	int64_t line = file && file[0] ? get_pos(src, "line") : 0;
	json_object *locs, *loc, *phys, *art, *region;
	bool absolute;

	if (!file || !file[0])
		file = c->entry;
	if (!file || !file[0])
		return 0;
	absolute = file[0] == '/';
	locs = json_object_new_array();
	if (put(result, "locations", locs))
		return -ENOMEM;
	loc = json_object_new_object();
	if (append(locs, loc))
		return -ENOMEM;
	phys = json_object_new_object();
	if (put(loc, "physicalLocation", phys))
		return -ENOMEM;
	art = json_object_new_object();
	if (put(phys, "artifactLocation", art) ||
	    put_file_uri(art, absolute ? "" : c->prefix, file) ||
	    (!absolute && put_str(art, "uriBaseId", SBT_SARIF_SRCROOT)))
		return -ENOMEM;
	if (!line)
		return 0;
	region = json_object_new_object();
	if (put(phys, "region", region) || put(region, "startLine", json_object_new_int64(line)))
		return -ENOMEM;
	return 0;
}

/* What the location is, for a reader or a filter: phase, stage, chain, count, confidence ... */
static int put_location_properties(json_object *result, json_object *loc, const struct sarif_ctx *c)
{
	static const char *const keys[] = {
		"phase", "stage", "chain",  "count", "affects_final_image",
		"shell", "kind",  "command"
	};
	json_object *props = json_object_new_object(), *fix = get(loc, "remediation");

	if (put(result, "properties", props))
		return -ENOMEM;
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (put_copy(props, keys[i], loc, keys[i]))
			return -ENOMEM;
	if (json_object_is_type(fix, json_type_object) &&
	    (put_copy(props, "remediation", fix, "text") ||
	     put_copy(props, "exec_form", fix, "exec_form")))
		return -ENOMEM;
	return put_copy(props, "confidence", c->report, "confidence") ||
			       put_copy(props, "reason", c->report, "reason")
		       ? -ENOMEM
		       : 0;
}

/* error: a shell in the final image, and a confident answer; warning: not confident. */
static const char *location_level(json_object *loc, const struct sarif_ctx *c)
{
	if (!get_bool(loc, "affects_final_image"))
		return "note";
	return c->confident ? "error" : "warning";
}

/*
 * --migrate: the migration as the fix of a result in the final image (the
 * new final stage inserted at the Dockerfile's end), when it converted
 * everything; its description says whether the check verified it.
 */
static int put_fix(json_object *result, json_object *loc, const struct sarif_ctx *c)
{
	json_object *m = get(c->report, "migration"), *fixes, *fix, *changes, *change, *art, *reps,
		    *rep, *region, *ins;
	const char *file = get_str(m, "file");
	char desc[600];

	if (!json_object_is_type(m, json_type_object) || !get_bool(loc, "affects_final_image") ||
	    !file || json_object_array_length(get(m, "unconverted")) > 0)
		return 0;
	snprintf(desc, sizeof(desc), "the final stage on %s, a base without a shell (%s: %s)",
		 get_str(m, "base") ? get_str(m, "base") : "?",
		 get_bool(m, "verified") ? "verified" : "not verified",
		 get_str(m, "why") ? get_str(m, "why") : "");
	fixes = json_object_new_array();
	fix = json_object_new_object();
	changes = json_object_new_array();
	change = json_object_new_object();
	art = json_object_new_object();
	reps = json_object_new_array();
	rep = json_object_new_object();
	region = json_object_new_object();
	ins = json_object_new_object();
	if (put(result, "fixes", fixes) || append(fixes, fix) ||
	    put(fix, "description", message(desc)) || put(fix, "artifactChanges", changes) ||
	    append(changes, change) || put(change, "artifactLocation", art) ||
	    put_file_uri(art, file[0] == '/' ? "" : c->prefix, file) ||
	    (file[0] != '/' && put_str(art, "uriBaseId", SBT_SARIF_SRCROOT)) ||
	    put(change, "replacements", reps) || append(reps, rep) ||
	    put(rep, "deletedRegion", region) || put_copy(region, "charOffset", m, "append_at") ||
	    put(region, "charLength", json_object_new_int(0)) || put(rep, "insertedContent", ins) ||
	    put_copy(ins, "text", m, "appended"))
		return -ENOMEM;
	return 0;
}

static json_object *location_result(json_object *loc, const struct sarif_ctx *c)
{
	json_object *r = json_object_new_object();
	char *text;
	int rc;

	if (!r)
		return NULL;
	text = location_text(loc, c);
	rc = put_str(r, "ruleId", SBT_SARIF_RULE_SHELL) ||
	     put(r, "ruleIndex", json_object_new_int(0)) ||
	     put_str(r, "level", location_level(loc, c)) || !text ||
	     put(r, "message", message(text)) || put_locations(r, get(loc, "source"), c) ||
	     put_location_properties(r, loc, c) || put_fix(r, loc, c);
	free(text);
	if (rc) {
		json_object_put(r);
		return NULL;
	}
	return r;
}

/* ---- the verdict: an inconclusive one is a result of its own ------------ */

/* The message of the report's warning for reason (shell_invocation_trace.REASON). */
static const char *reason_message(json_object *report, const char *reason)
{
	json_object *warnings = get(report, "warnings");
	size_t prefix = strlen(WARN_PREFIX);

	if (!reason || !json_object_is_type(warnings, json_type_array))
		return NULL;
	for (size_t i = 0; i < json_object_array_length(warnings); i++) {
		json_object *w = json_object_array_get_idx(warnings, i);
		const char *id = get_str(w, "id");

		if (id && !strncmp(id, WARN_PREFIX, prefix) && !strcmp(id + prefix, reason))
			return get_str(w, "message");
	}
	return NULL;
}

static json_object *verdict_properties(json_object *report)
{
	json_object *props = json_object_new_object();

	if (props && (put_copy(props, "reason", report, "reason") ||
		      put_copy(props, "confidence", report, "confidence"))) {
		json_object_put(props);
		return NULL;
	}
	return props;
}

static json_object *inconclusive_result(json_object *report, const struct sarif_ctx *c)
{
	const char *reason = get_str(report, "reason"), *why = reason_message(report, reason);
	json_object *r = json_object_new_object();
	char text[1024];

	if (!r)
		return NULL;
	if (reason)
		snprintf(text, sizeof(text),
			 "the trace is inconclusive (%s): %s; no shell seen is not proof that "
			 "none ran",
			 reason, why ? why : "see the report's warnings");
	else
		snprintf(text, sizeof(text),
			 "the trace is inconclusive: it is not complete (no reason was recorded); "
			 "no shell seen is not proof that none ran");
	if (put_str(r, "ruleId", SBT_SARIF_RULE_INCONCLUSIVE) ||
	    put(r, "ruleIndex", json_object_new_int(1)) || put_str(r, "level", "warning") ||
	    put(r, "message", message(text)) || put_locations(r, NULL, c) ||
	    put(r, "properties", verdict_properties(report))) {
		json_object_put(r);
		return NULL;
	}
	return r;
}

/* ---- the run ----------------------------------------------------------- */

/* {"level": level}: a rule's default configuration. */
static json_object *configuration(const char *level)
{
	json_object *c = json_object_new_object();

	if (c && put_str(c, "level", level)) {
		json_object_put(c);
		return NULL;
	}
	return c;
}

static json_object *rule(const char *id, const char *name, const char *short_text,
			 const char *full_text, const char *help, const char *level)
{
	json_object *r = json_object_new_object();

	if (r && (put_str(r, "id", id) || put_str(r, "name", name) ||
		  put(r, "shortDescription", message(short_text)) ||
		  put(r, "fullDescription", message(full_text)) || put(r, "help", message(help)) ||
		  put(r, "defaultConfiguration", configuration(level)))) {
		json_object_put(r);
		return NULL;
	}
	return r;
}

/* rules[0] shell-invocation, rules[1] trace-inconclusive (when the verdict is). */
static json_object *rules(bool inconclusive)
{
	json_object *rs = json_object_new_array();

	if (!rs)
		return NULL;
	if (append(rs,
		   rule(SBT_SARIF_RULE_SHELL, "ShellInvocation",
			"A shell ran during the build or at boot",
			"sbtrace traced the build, and the built image's start, from the host "
			"kernel and saw a shell run: an image without /bin/sh (distroless) "
			"cannot run it. Level error when it affects the final image and the "
			"answer is confident, warning when it affects it but the report's "
			"confidence is low (the trace may have missed shells), note when it ran "
			"only where the final image does not depend on it (a build stage that "
			"is not the final one). The properties say the phase (build or boot), "
			"the stage, the process chain, the count and the report's confidence "
			"and reason.",
			"Use the exec form (a JSON array) of CMD, ENTRYPOINT and HEALTHCHECK, "
			"start programs directly instead of through sh -c or npm scripts, and "
			"move a RUN the final image is built on (npm ci ...) to a build stage "
			"whose output the final stage copies: its exec form would still need "
			"its tools in the final image. The message gives the remedy when "
			"sbtrace can derive it.",
			"error")) ||
	    (inconclusive &&
	     append(rs, rule(SBT_SARIF_RULE_INCONCLUSIVE, "TraceInconclusive",
			     "The trace cannot say whether a shell ran",
			     "The probe could not give a confident answer: the build failed, "
			     "events were lost, execs were not visible from the host, or the trace "
			     "is not complete. The run's properties say the reason; no shell seen "
			     "is then not proof that none ran.",
			     "Fix what the reason names (the report's warnings say what happened) "
			     "and run the probe again.",
			     "warning")))) {
		json_object_put(rs);
		return NULL;
	}
	return rs;
}

static json_object *driver(json_object *report, bool inconclusive)
{
	json_object *tool = json_object_new_object(), *d;
	const char *version = get_str(report, "version");

	if (!tool)
		return NULL;
	d = json_object_new_object();
	if (put(tool, "driver", d) || put_str(d, "name", "sbtrace") ||
	    (version && put_str(d, "version", version)) || put(d, "rules", rules(inconclusive))) {
		json_object_put(tool);
		return NULL;
	}
	return tool;
}

/* SRCROOT: the repository root's file URI, ending in '/' (results' files are relative to it). */
static int put_srcroot(json_object *run, const char *root)
{
	json_object *bases, *base;

	if (!root || root[0] != '/')
		return 0;
	bases = json_object_new_object();
	if (put(run, "originalUriBaseIds", bases))
		return -ENOMEM;
	base = json_object_new_object();
	if (put(bases, SBT_SARIF_SRCROOT, base) ||
	    put_uri(base, "file://", root, root[strlen(root) - 1] == '/' ? "" : "/"))
		return -ENOMEM;
	return 0;
}

static int put_results(json_object *run, json_object *report, bool inconclusive,
		       const struct sarif_ctx *c)
{
	json_object *results = json_object_new_array(),
		    *locs = get(get(report, "shell_invocation"), "locations");

	if (put(run, "results", results))
		return -ENOMEM;
	for (size_t i = 0;
	     json_object_is_type(locs, json_type_array) && i < json_object_array_length(locs); i++)
		if (append(results, location_result(json_object_array_get_idx(locs, i), c)))
			return -ENOMEM;
	if (inconclusive && append(results, inconclusive_result(report, c)))
		return -ENOMEM;
	return 0;
}

/* verdict, confidence and reason, and the locations past the report's cap (not results). */
static int put_run_properties(json_object *run, json_object *report)
{
	json_object *props = json_object_new_object();

	if (put(run, "properties", props) || put_copy(props, "verdict", report, "verdict") ||
	    put_copy(props, "confidence", report, "confidence") ||
	    put_copy(props, "reason", report, "reason") ||
	    put_copy(props, "omitted", get(report, "shell_invocation"), "omitted"))
		return -ENOMEM;
	return 0;
}

/*
 * The repo's path below root ("result/", "" when it is root), into out; with
 * a root that does not hold it (or none, or a relative repo) SRCROOT is the
 * repo itself: false.
 */
static bool repo_below(const char *repo, const char *root, char *out, size_t len)
{
	size_t n = root ? strlen(root) : 0;

	out[0] = '\0';
	while (n > 1 && root[n - 1] == '/')
		n--;
	if (!repo || repo[0] != '/' || !root || root[0] != '/' || strncmp(repo, root, n) ||
	    (repo[n] && repo[n] != '/' && n > 1))
		return false;
	for (repo += n; *repo == '/'; repo++)
		;
	if (!*repo)
		return true;
	if ((size_t)snprintf(out, len, "%s", repo) >= len - 1) {
		out[0] = '\0';
		return false;
	}
	for (n = strlen(out); n && out[n - 1] == '/'; n--)
		out[n - 1] = '\0';
	strcat(out, "/");
	return true;
}

json_object *probe_sarif_at(json_object *report, const char *root)
{
	json_object *log, *runs, *run;
	bool inconclusive = str_is(get_str(report, "verdict"), "inconclusive");
	const char *repo = get_str(report, "repo");
	struct sarif_ctx c = { .report = report };
	char prefix[PATH_MAX];

	if (!json_object_is_type(report, json_type_object)) {
		errno = EINVAL;
		return NULL;
	}
	if (!repo_below(repo, root, prefix, sizeof(prefix)))
		root = repo;
	c.prefix = prefix;
	c.entry = entry_file(report);
	c.confident = str_is(get_str(report, "confidence"), "high");
	log = json_object_new_object();
	if (!log)
		goto oom;
	if (put_str(log, "$schema", SBT_SARIF_SCHEMA) || put_str(log, "version", SBT_SARIF_VERSION))
		goto oom;
	runs = json_object_new_array();
	if (put(log, "runs", runs))
		goto oom;
	run = json_object_new_object();
	if (append(runs, run) || put(run, "tool", driver(report, inconclusive)) ||
	    put_srcroot(run, root) || put_results(run, report, inconclusive, &c) ||
	    put_run_properties(run, report))
		goto oom;
	return log;
oom:
	json_object_put(log);
	errno = ENOMEM;
	return NULL;
}

int probe_sarif_root(const char *dir, char *root, size_t len)
{
	char git[PATH_MAX + 8];
	struct stat st;
	size_t n;

	if (!dir || dir[0] != '/')
		return -EINVAL;
	if ((size_t)snprintf(root, len, "%s", dir) >= len || len > PATH_MAX)
		return -ENAMETOOLONG;
	for (n = strlen(root); n > 1 && root[n - 1] == '/'; n--)
		root[n - 1] = '\0';
	for (;;) {
		snprintf(git, sizeof(git), "%s/.git", strcmp(root, "/") ? root : "");
		/* a work tree's .git directory, or the file of a worktree or submodule */
		if (!stat(git, &st) && (S_ISDIR(st.st_mode) || S_ISREG(st.st_mode)))
			return 0;
		if (!strcmp(root, "/"))
			break;
		n = (size_t)(strrchr(root, '/') - root);
		root[n ? n : 1] = '\0';
	}
	snprintf(root, len, "%s", dir); /* no work tree: the probed directory is the root */
	return 0;
}

json_object *probe_sarif(json_object *report)
{
	const char *repo = get_str(report, "repo");
	char root[PATH_MAX];

	if (!repo || probe_sarif_root(repo, root, sizeof(root)))
		return probe_sarif_at(report, NULL);
	return probe_sarif_at(report, root);
}
