// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The shell-invocation probe's pure parts (see probe.h): build plan, inputs
 * and digests, cache key, cache files.
 *
 * Everything read from the repo is untrusted: sizes are capped, only regular
 * files are read, and a path that resolves outside the repo is refused (its
 * content would not be covered by the cache key, yet the build would use it).
 */
#include "io.h"
#include "probe.h"
#include "sha256.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#define TEXT_MAX	 (1u << 20) /* Dockerfile, package.json */
#define CACHE_MAX	 (4u << 20) /* one cache entry */
#define STAGE_LIST_MAX	 256	    /* stage names listed in an error message */
#define DEFAULT_TARGET	 "builder"
#define CACHE_KEY_DOMAIN "sbtrace probe cache key v1"

/* The declared inputs, in report order. */
static const char *const input_names[] = {
	"Dockerfile",	  "package.json", "package-lock.json", "npm-shrinkwrap.json", "yarn.lock",
	"pnpm-lock.yaml", "Makefile",	  "makefile",	       "GNUmakefile",
};

static const char *const makefile_names[] = { "Makefile", "makefile", "GNUmakefile" };

/* --- small helpers ------------------------------------------------------ */

static void set_err(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || errlen == 0)
		return;
	va_start(ap, fmt);
	// NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized)
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* Read all of fd, at most `cap` bytes, NUL-terminated; NULL with *errp (EFBIG beyond cap). */
static char *read_capped(int fd, size_t cap, size_t *lenp, int *errp)
{
	size_t len = 0, size = 4096;
	char *buf = malloc(size + 1), *nbuf;
	ssize_t n;

	*lenp = 0;
	*errp = ENOMEM;
	if (!buf)
		return NULL;
	for (;;) {
		if (len == size) {
			if (size > cap) {
				*errp = EFBIG;
				goto fail;
			}
			size = size * 2 > cap + 1 ? cap + 1 : size * 2;
			nbuf = realloc(buf, size + 1);
			if (!nbuf) {
				*errp = ENOMEM;
				goto fail;
			}
			buf = nbuf;
		}
		n = read(fd, buf + len, size - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			*errp = errno;
			goto fail;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	if (len > cap) {
		*errp = EFBIG;
		goto fail;
	}
	buf[len] = '\0';
	*lenp = len;
	*errp = 0;
	return buf;
fail:
	free(buf);
	return NULL;
}

/*
 * Parse exactly one JSON value filling all of buf (trailing blanks allowed).
 * Returns it, or NULL with *why set.
 */
static json_object *parse_json(const char *buf, size_t len, const char **why)
{
	json_tokener *tok;
	json_object *obj;
	enum json_tokener_error jerr;
	size_t end;

	*why = NULL;
	if (memchr(buf, '\0', len)) {
		*why = "contains a NUL byte";
		return NULL;
	}
	if (len > INT32_MAX) {
		*why = "too large";
		return NULL;
	}
	tok = json_tokener_new();
	if (!tok) {
		*why = "out of memory";
		return NULL;
	}
	obj = json_tokener_parse_ex(tok, buf, (int)len);
	jerr = json_tokener_get_error(tok);
	if (!obj || jerr != json_tokener_success) {
		*why = jerr == json_tokener_continue || jerr == json_tokener_success
			       ? "empty or truncated"
			       : json_tokener_error_desc(jerr);
		json_object_put(obj);
		json_tokener_free(tok);
		return NULL;
	}
	end = json_tokener_get_parse_end(tok);
	json_tokener_free(tok);
	for (; end < len; end++) {
		if (!is_blank(buf[end])) {
			*why = "trailing data after the JSON value";
			json_object_put(obj);
			return NULL;
		}
	}
	return obj;
}

/* --- SHA-256 ------------------------------------------------------------ */

static int sha256_fd(int fd, char hex[65])
{
	char *buf = malloc(1 << 16);
	struct sbt_sha256 ctx;
	uint8_t md[32];
	ssize_t n;

	hex[0] = '\0';
	if (!buf)
		return -ENOMEM;
	sbt_sha256_init(&ctx);
	for (;;) {
		n = read(fd, buf, 1 << 16);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int err = -errno;

			free(buf);
			return err;
		}
		if (n == 0)
			break;
		sbt_sha256_update(&ctx, buf, (size_t)n);
	}
	free(buf);
	sbt_sha256_final(&ctx, md);
	sbt_sha256_hex(md, hex);
	return 0;
}

int sbt_sha256_file(const char *path, char hex[65])
{
	struct stat st;
	int fd, rc;

	hex[0] = '\0';
	if (!path)
		return -EINVAL;
	/* O_NONBLOCK: opening a FIFO must not hang; it is refused below. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		rc = -errno;
	} else if (S_ISDIR(st.st_mode)) {
		rc = -EISDIR;
	} else if (!S_ISREG(st.st_mode)) {
		rc = -EINVAL;
	} else {
		rc = sha256_fd(fd, hex);
	}
	close(fd);
	return rc;
}

void sbt_sha256_bytes(const void *data, size_t len, char hex[65])
{
	struct sbt_sha256 ctx;
	uint8_t md[32];

	hex[0] = '\0';
	if (!data && len)
		return;
	sbt_sha256_init(&ctx);
	sbt_sha256_update(&ctx, data ? data : "", len);
	sbt_sha256_final(&ctx, md);
	sbt_sha256_hex(md, hex);
}

/* --- word splitting ----------------------------------------------------- */

static void free_words(char **argv, int n)
{
	for (int i = 0; i < n; i++) {
		free(argv[i]);
		argv[i] = NULL;
	}
}

int sbt_split_words(const char *s, char **argv, int max, char *err, size_t errlen)
{
	const char *p = s;
	char *word;
	size_t len;
	int argc = 0;

	if (!argv || max < 0) {
		set_err(err, errlen, "invalid arguments");
		return -1;
	}
	argv[0] = NULL;
	if (!s) {
		set_err(err, errlen, "empty command");
		return -1;
	}
	word = malloc(strlen(s) + 1);
	if (!word) {
		set_err(err, errlen, "out of memory");
		return -1;
	}
	for (;;) {
		while (is_blank(*p))
			p++;
		if (!*p)
			break;
		len = 0;
		while (*p && !is_blank(*p)) {
			if (*p == '\'') {
				const char *q = strchr(p + 1, '\'');

				if (!q) {
					set_err(err, errlen, "unterminated single quote");
					goto fail;
				}
				memcpy(word + len, p + 1, (size_t)(q - p - 1));
				len += (size_t)(q - p - 1);
				p = q + 1;
			} else if (*p == '"') {
				for (p++; *p != '"'; p++) {
					if (!*p) {
						set_err(err, errlen, "unterminated double quote");
						goto fail;
					}
					if (*p == '\\' && (p[1] == '"' || p[1] == '\\'))
						p++;
					word[len++] = *p;
				}
				p++;
			} else if (*p == '\\') {
				if (!p[1]) {
					set_err(err, errlen, "backslash at the end of the command");
					goto fail;
				}
				word[len++] = p[1];
				p += 2;
			} else {
				word[len++] = *p++;
			}
		}
		if (argc >= max) {
			set_err(err, errlen, "too many words (at most %d)", max);
			goto fail;
		}
		argv[argc] = strndup(word, len);
		if (!argv[argc]) {
			set_err(err, errlen, "out of memory");
			goto fail;
		}
		argv[++argc] = NULL;
	}
	free(word);
	if (argc == 0) {
		set_err(err, errlen, "empty command");
		return -1;
	}
	return argc;
fail:
	free(word);
	free_words(argv, argc);
	return -1;
}

/* --- repo files --------------------------------------------------------- */

/*
 * Open `name` (relative, already normalized) in the repo whose real path is
 * `root`. Returns 1 and *fdp for a regular file, 0 when it is absent or not a
 * regular file, -1 with err set when it cannot be read or resolves outside
 * the repo.
 */
static int open_repo_file(const char *root, const char *name, int *fdp, char *err, size_t errlen)
{
	char path[PATH_MAX], *real;
	size_t rlen = strlen(root);
	struct stat st;
	bool inside;
	int fd, n;

	*fdp = -1;
	n = snprintf(path, sizeof(path), "%s/%s", strcmp(root, "/") ? root : "", name);
	if (n < 0 || (size_t)n >= sizeof(path)) {
		set_err(err, errlen, "%s: path too long", name);
		return -1;
	}
	real = realpath(path, NULL);
	if (!real) {
		if (errno == ENOENT || errno == ENOTDIR)
			return 0;
		set_err(err, errlen, "%s: %s", name, strerror(errno));
		return -1;
	}
	if (strcmp(real, root) == 0) {
		free(real); /* the repo itself: a directory */
		return 0;
	}
	inside = strcmp(root, "/") == 0 || (strncmp(real, root, rlen) == 0 && real[rlen] == '/');
	if (!inside) {
		set_err(err, errlen,
			"%s: resolves to %s, outside the repo; refusing to follow it "
			"(its content would not be covered by the cache key)",
			name, real);
		free(real);
		return -1;
	}
	/* O_NONBLOCK: a FIFO must not hang the probe; non-regular files are skipped. */
	fd = open(real, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW);
	if (fd < 0) {
		int e = errno;

		free(real);
		if (e == ENOENT || e == ENOTDIR || e == ELOOP)
			return 0;
		set_err(err, errlen, "%s: %s", name, strerror(e));
		return -1;
	}
	free(real);
	if (fstat(fd, &st) < 0) {
		set_err(err, errlen, "%s: %s", name, strerror(errno));
		close(fd);
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return 0;
	}
	*fdp = fd;
	return 1;
}

/* Read a repo text file (at most TEXT_MAX). 1 = read, 0 = absent, -1 = error. */
static int read_repo_text(const char *root, const char *name, char **bufp, size_t *lenp, char *err,
			  size_t errlen)
{
	int fd, rc, e;

	*bufp = NULL;
	*lenp = 0;
	rc = open_repo_file(root, name, &fd, err, errlen);
	if (rc <= 0)
		return rc;
	*bufp = read_capped(fd, TEXT_MAX, lenp, &e);
	close(fd);
	if (!*bufp && e == EFBIG) {
		set_err(err, errlen, "%s: larger than %u KiB; refusing to parse it", name,
			TEXT_MAX >> 10);
		return -1;
	}
	if (!*bufp) {
		set_err(err, errlen, "%s: %s", name, strerror(e));
		return -1;
	}
	return 1;
}

/*
 * Normalize a relative path lexically ("./a//b/../c" -> "a/c"). Returns false
 * when it is absolute, empty or climbs out of the repo.
 */
static bool normalize_rel(const char *in, char *out, size_t outlen)
{
	size_t len = 0, n;
	const char *p = in, *e;

	if (!in || in[0] == '/' || !in[0])
		return false;
	while (*p) {
		while (*p == '/')
			p++;
		if (!*p)
			break;
		e = strchrnul(p, '/');
		n = (size_t)(e - p);
		if (n == 1 && p[0] == '.') {
			/* skip */
		} else if (n == 2 && p[0] == '.' && p[1] == '.') {
			if (len == 0)
				return false;
			while (len > 0 && out[len - 1] != '/')
				len--;
			if (len > 0)
				len--; /* the separator */
		} else {
			if (len + (len ? 1 : 0) + n >= outlen)
				return false;
			if (len)
				out[len++] = '/';
			memcpy(out + len, p, n);
			len += n;
		}
		p = e;
	}
	if (len == 0)
		return false;
	out[len] = '\0';
	return true;
}

/* --- Dockerfile --------------------------------------------------------- */

struct stage_search {
	const char *wanted;
	bool found;
	char name[64];		   /* the stage's name as written */
	char list[STAGE_LIST_MAX]; /* named stages, for the error message */
	size_t list_len;
	bool list_cut;
};

static void stage_list_add(struct stage_search *ss, const char *name, size_t n)
{
	size_t need = n + (ss->list_len ? 2 : 0);

	if (ss->list_cut)
		return;
	/* Room is always left for ", ..." and the NUL. */
	if (ss->list_len + need + 6 > sizeof(ss->list)) {
		const char *more = ss->list_len ? ", ..." : "...";

		memcpy(ss->list + ss->list_len, more, strlen(more) + 1);
		ss->list_len += strlen(more);
		ss->list_cut = true;
		return;
	}
	if (ss->list_len) {
		memcpy(ss->list + ss->list_len, ", ", 2);
		ss->list_len += 2;
	}
	memcpy(ss->list + ss->list_len, name, n);
	ss->list_len += n;
	ss->list[ss->list_len] = '\0';
}

/* One logical instruction: `FROM [--flag=...]... IMAGE [AS NAME]`. */
static void dockerfile_instruction(struct stage_search *ss, char *line)
{
	char *tok[4], *save = NULL, *t;
	int n = 0;
	size_t len;

	t = strtok_r(line, " \t\v\f", &save);
	if (!t || strcasecmp(t, "FROM") != 0)
		return;
	while ((t = strtok_r(NULL, " \t\v\f", &save))) {
		if (n == 0 && strncmp(t, "--", 2) == 0)
			continue; /* --platform=... */
		if (n == 4)
			return; /* not a form we understand: no name */
		tok[n++] = t;
	}
	if (n != 3 || strcasecmp(tok[1], "AS") != 0)
		return;
	len = strlen(tok[2]);
	stage_list_add(ss, tok[2], len);
	if (!ss->found && len < sizeof(ss->name) && strcasecmp(tok[2], ss->wanted) == 0) {
		memcpy(ss->name, tok[2], len + 1);
		ss->found = true;
	}
}

/* `# escape=X` parser directive; returns false when the comment is not a directive. */
static bool dockerfile_directive(const char *s, size_t n, char *escape)
{
	size_t i = 1, k, v, ve;

	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	k = i;
	while (i < n && ((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
			 (i > k && s[i] >= '0' && s[i] <= '9')))
		i++;
	if (i == k)
		return false;
	v = i;
	while (v < n && (s[v] == ' ' || s[v] == '\t'))
		v++;
	if (v >= n || s[v] != '=')
		return false;
	for (v++; v < n && (s[v] == ' ' || s[v] == '\t'); v++)
		;
	ve = n;
	while (ve > v && (s[ve - 1] == ' ' || s[ve - 1] == '\t'))
		ve--;
	if (i - k == 6 && strncasecmp(s + k, "escape", 6) == 0 && ve - v == 1 &&
	    (s[v] == '`' || s[v] == '\\'))
		*escape = s[v];
	return true;
}

/*
 * Find the stage named ss->wanted. Physical lines ending in the escape
 * character (optionally followed by blanks) continue the instruction;
 * comment and blank lines are dropped, also inside a continuation.
 */
static int dockerfile_stages(const char *buf, size_t len, struct stage_search *ss)
{
	char *logical = malloc(len + 1), escape = '\\';
	size_t pos = 0, llen = 0, s, e, i;
	bool directives = true, cont = false;

	if (!logical)
		return -ENOMEM;
	while (pos < len) {
		const char *nl = memchr(buf + pos, '\n', len - pos);

		s = pos;
		e = nl ? (size_t)(nl - buf) : len;
		pos = nl ? e + 1 : len;
		while (e > s && (buf[e - 1] == '\r' || buf[e - 1] == ' ' || buf[e - 1] == '\t'))
			e--;
		for (i = s; i < e && (buf[i] == ' ' || buf[i] == '\t'); i++)
			;
		if (i == e) {
			directives = false;
			continue;
		}
		if (buf[i] == '#') {
			if (directives && !cont)
				directives = dockerfile_directive(buf + i, e - i, &escape);
			continue;
		}
		directives = false;
		cont = buf[e - 1] == escape;
		if (cont)
			e--;
		memcpy(logical + llen, buf + s, e - s);
		llen += e - s;
		if (cont)
			continue;
		logical[llen] = '\0';
		dockerfile_instruction(ss, logical);
		llen = 0;
	}
	if (llen) {
		logical[llen] = '\0';
		dockerfile_instruction(ss, logical);
	}
	free(logical);
	return 0;
}

/* Docker's stage-name rule: a letter, then letters, digits, '.', '_', '-'. */
static bool valid_stage_name(const char *t)
{
	size_t n = strlen(t);

	if (n == 0 || n >= sizeof(((struct sbt_build_plan *)0)->target))
		return false;
	if (!((t[0] >= 'a' && t[0] <= 'z') || (t[0] >= 'A' && t[0] <= 'Z')))
		return false;
	for (size_t i = 1; i < n; i++) {
		char c = t[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '_' || c == '-'))
			return false;
	}
	return true;
}

/* 1: plan set (DOCKERFILE), 0: no such stage / no Dockerfile, -1: error. */
static int plan_dockerfile(const char *root, const char *repo, const char *target,
			   struct sbt_build_plan *plan, char *err, size_t errlen)
{
	struct stage_search ss = { .wanted = target ? target : DEFAULT_TARGET };
	size_t len;
	char *buf;
	int rc;

	rc = read_repo_text(root, "Dockerfile", &buf, &len, err, errlen);
	if (rc < 0)
		return -1;
	if (rc == 0) {
		if (!target)
			return 0;
		set_err(err, errlen, "no Dockerfile in %s (needed for --target '%s')", repo,
			target);
		return -1;
	}
	rc = dockerfile_stages(buf, len, &ss);
	free(buf);
	if (rc < 0) {
		set_err(err, errlen, "Dockerfile: %s", strerror(-rc));
		return -1;
	}
	if (!ss.found) {
		if (!target)
			return 0;
		set_err(err, errlen, "Dockerfile has no stage '%s' (stages: %s)", target,
			ss.list_len ? ss.list : "none named");
		return -1;
	}
	plan->kind = SBT_BUILD_DOCKERFILE;
	memcpy(plan->target, ss.name, sizeof(plan->target));
	return 1;
}

/* --- package.json ------------------------------------------------------- */

static int set_argv(struct sbt_build_plan *plan, const char *const *words, int n, char *err,
		    size_t errlen)
{
	for (int i = 0; i < n; i++) {
		plan->argv[i] = strdup(words[i]);
		if (!plan->argv[i]) {
			set_err(err, errlen, "out of memory");
			return -1;
		}
		plan->argc = i + 1;
	}
	plan->argv[n] = NULL;
	return 0;
}

/* 1: plan set (NPM), 0: no package.json or no scripts.build, -1: error. */
static int plan_npm(const char *root, struct sbt_build_plan *plan, char *err, size_t errlen)
{
	static const char *const npm[] = { "npm", "run", "build" };
	json_object *obj, *scripts, *build;
	const char *why;
	bool has_build;
	size_t len;
	char *buf;
	int rc;

	rc = read_repo_text(root, "package.json", &buf, &len, err, errlen);
	if (rc <= 0)
		return rc;
	obj = parse_json(buf, len, &why);
	free(buf);
	if (!obj) {
		set_err(err, errlen, "package.json: not valid JSON (%s)", why);
		return -1;
	}
	if (!json_object_is_type(obj, json_type_object)) {
		set_err(err, errlen, "package.json: not a JSON object");
		json_object_put(obj);
		return -1;
	}
	has_build = json_object_object_get_ex(obj, "scripts", &scripts) &&
		    json_object_is_type(scripts, json_type_object) &&
		    json_object_object_get_ex(scripts, "build", &build) &&
		    json_object_is_type(build, json_type_string) &&
		    json_object_get_string_len(build) > 0;
	json_object_put(obj);
	if (!has_build)
		return 0;
	plan->kind = SBT_BUILD_NPM;
	return set_argv(plan, npm, 3, err, errlen) < 0 ? -1 : 1;
}

/* --- inputs ------------------------------------------------------------- */

static bool has_input(const struct sbt_build_plan *plan, const char *name)
{
	for (int i = 0; i < plan->nr_inputs; i++) {
		if (strcmp(plan->inputs[i].name, name) == 0)
			return true;
	}
	return false;
}

/* Record `name` when it is a regular file in the repo. 0 or -1. */
static int add_input(const char *root, const char *name, struct sbt_build_plan *plan, char *err,
		     size_t errlen)
{
	struct sbt_probe_input *in;
	int fd, rc;

	if (has_input(plan, name))
		return 0;
	rc = open_repo_file(root, name, &fd, err, errlen);
	if (rc <= 0)
		return rc;
	if (strlen(name) >= sizeof(in->name) || plan->nr_inputs >= SBT_PROBE_MAX_INPUTS) {
		set_err(err, errlen, "%s: cannot record it as an input (path too long or too many)",
			name);
		close(fd);
		return -1;
	}
	in = &plan->inputs[plan->nr_inputs];
	rc = sha256_fd(fd, in->sha256);
	close(fd);
	if (rc < 0) {
		set_err(err, errlen, "%s: %s", name, strerror(-rc));
		return -1;
	}
	memcpy(in->name, name, strlen(name) + 1);
	plan->nr_inputs++;
	return 0;
}

static int add_inputs(const char *root, struct sbt_build_plan *plan, char *err, size_t errlen)
{
	char rel[PATH_MAX];

	for (size_t i = 0; i < sizeof(input_names) / sizeof(input_names[0]); i++) {
		if (add_input(root, input_names[i], plan, err, errlen) < 0)
			return -1;
	}
	/* --cmd ./build.sh: the script is an input too (a program on PATH is not). */
	if (plan->kind == SBT_BUILD_CMD && normalize_rel(plan->argv[0], rel, sizeof(rel)))
		return add_input(root, rel, plan, err, errlen);
	return 0;
}

/* --- the plan ----------------------------------------------------------- */

int sbt_probe_plan(const char *repo, const char *cmd, const char *target,
		   struct sbt_build_plan *plan, char *err, size_t errlen)
{
	char *root = NULL, why[128];
	struct stat st;
	int rc;

	if (err && errlen)
		err[0] = '\0';
	if (!plan) {
		set_err(err, errlen, "invalid arguments");
		return -1;
	}
	memset(plan, 0, sizeof(*plan));
	if (!repo || !repo[0]) {
		set_err(err, errlen, "no repo given");
		return -1;
	}
	if (stat(repo, &st) < 0) {
		set_err(err, errlen, "%s: %s", repo, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		set_err(err, errlen, "%s: %s", repo, strerror(ENOTDIR));
		return -1;
	}
	root = realpath(repo, NULL);
	if (!root) {
		set_err(err, errlen, "%s: %s", repo, strerror(errno));
		return -1;
	}

	if (cmd) {
		rc = sbt_split_words(cmd, plan->argv, SBT_PROBE_MAX_ARGS, why, sizeof(why));
		if (rc < 0) {
			set_err(err, errlen, "bad --cmd: %s", why);
			goto fail;
		}
		plan->kind = SBT_BUILD_CMD;
		plan->argc = rc;
		goto inputs;
	}
	if (target && !valid_stage_name(target)) {
		set_err(err, errlen,
			"bad --target '%.64s': a stage name is a letter, then letters, digits, "
			"'.', '_' or '-' (at most %zu characters)",
			target, sizeof(plan->target) - 1);
		goto fail;
	}

	rc = plan_dockerfile(root, repo, target, plan, err, errlen);
	if (rc < 0)
		goto fail;
	if (rc > 0)
		goto inputs;
	rc = plan_npm(root, plan, err, errlen);
	if (rc < 0)
		goto fail;
	if (rc > 0)
		goto inputs;
	for (size_t i = 0; i < sizeof(makefile_names) / sizeof(makefile_names[0]); i++) {
		static const char *const make[] = { "make" };
		int fd;

		rc = open_repo_file(root, makefile_names[i], &fd, err, errlen);
		if (rc < 0)
			goto fail;
		if (rc == 0)
			continue;
		close(fd);
		plan->kind = SBT_BUILD_MAKE;
		if (set_argv(plan, make, 1, err, errlen) < 0)
			goto fail;
		goto inputs;
	}
	set_err(err, errlen,
		"no build found in %s: looked for --cmd, a Dockerfile with a '" DEFAULT_TARGET
		"' stage, package.json scripts.build, a Makefile",
		repo);
	goto fail;

inputs:
	if (add_inputs(root, plan, err, errlen) < 0)
		goto fail;
	free(root);
	return 0;
fail:
	free(root);
	sbt_build_plan_free(plan);
	return -1;
}

void sbt_build_plan_free(struct sbt_build_plan *plan)
{
	if (!plan)
		return;
	for (int i = 0; i <= SBT_PROBE_MAX_ARGS; i++)
		free(plan->argv[i]);
	memset(plan, 0, sizeof(*plan));
}

/* --- cache key ---------------------------------------------------------- */

static void key_u64(struct sbt_sha256 *ctx, uint64_t v)
{
	unsigned char b[8];

	for (int i = 7; i >= 0; i--) {
		b[i] = (unsigned char)v;
		v >>= 8;
	}
	sbt_sha256_update(ctx, b, sizeof(b));
}

/* Length-prefixed: no two different plans collide by concatenation. */
static void key_bytes(struct sbt_sha256 *ctx, const char *s, size_t n)
{
	key_u64(ctx, n);
	sbt_sha256_update(ctx, s, n);
}

void sbt_probe_cache_key(const struct sbt_build_plan *plan, const char *version, char hex[65])
{
	struct sbt_sha256 ctx;
	uint8_t md[32];
	int argc = 0, nin;

	hex[0] = '\0';
	if (!plan)
		return;
	while (argc < plan->argc && argc < SBT_PROBE_MAX_ARGS && plan->argv[argc])
		argc++;
	nin = plan->nr_inputs < 0		       ? 0
	      : plan->nr_inputs > SBT_PROBE_MAX_INPUTS ? SBT_PROBE_MAX_INPUTS
						       : plan->nr_inputs;
	if (!version)
		version = "";
	sbt_sha256_init(&ctx);
	key_bytes(&ctx, CACHE_KEY_DOMAIN, sizeof(CACHE_KEY_DOMAIN) - 1);
	key_bytes(&ctx, version, strlen(version));
	key_u64(&ctx, (uint64_t)plan->kind);
	key_u64(&ctx, (uint64_t)argc);
	for (int i = 0; i < argc; i++)
		key_bytes(&ctx, plan->argv[i], strlen(plan->argv[i]));
	key_bytes(&ctx, plan->target, strnlen(plan->target, sizeof(plan->target)));
	key_u64(&ctx, (uint64_t)nin);
	for (int i = 0; i < nin; i++) {
		const struct sbt_probe_input *in = &plan->inputs[i];

		key_bytes(&ctx, in->name, strnlen(in->name, sizeof(in->name)));
		key_bytes(&ctx, in->sha256, strnlen(in->sha256, sizeof(in->sha256)));
	}
	sbt_sha256_final(&ctx, md);
	sbt_sha256_hex(md, hex);
}

/* --- cache files -------------------------------------------------------- */

static bool valid_key(const char *key)
{
	if (!key)
		return false;
	for (int i = 0; i < 64; i++) {
		if (!((key[i] >= '0' && key[i] <= '9') || (key[i] >= 'a' && key[i] <= 'f')))
			return false;
	}
	return key[64] == '\0';
}

static int entry_path(char *buf, size_t len, const char *dir, const char *prefix, const char *key,
		      const char *suffix)
{
	int n = snprintf(buf, len, "%s/%s%s.json%s", dir, prefix, key, suffix);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int sbt_cache_read(const char *dir, const char *key, json_object **report)
{
	char path[PATH_MAX], *buf;
	json_object *obj, *cache, *k;
	const char *why;
	struct stat st;
	size_t len;
	int fd, rc, e;

	if (report)
		*report = NULL;
	if (!report || !dir || !dir[0] || !valid_key(key))
		return -EINVAL;
	rc = entry_path(path, sizeof(path), dir, "", key, "");
	if (rc < 0)
		return rc;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		rc = -errno;
		close(fd);
		return rc;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return -EBADMSG;
	}
	buf = read_capped(fd, CACHE_MAX, &len, &e);
	close(fd);
	if (!buf)
		return e == EFBIG ? -EBADMSG : e > 0 ? -e : -EIO;
	obj = parse_json(buf, len, &why);
	free(buf);
	if (!obj)
		return -EBADMSG;
	if (!json_object_is_type(obj, json_type_object) ||
	    !json_object_object_get_ex(obj, "cache", &cache) ||
	    !json_object_is_type(cache, json_type_object) ||
	    !json_object_object_get_ex(cache, "key", &k) ||
	    !json_object_is_type(k, json_type_string) ||
	    strcmp(json_object_get_string(k), key) != 0) {
		json_object_put(obj);
		return -EBADMSG;
	}
	*report = obj;
	return 0;
}

/* mkdir -p; directories it creates are 0700. */
static int mkdir_p(const char *dir)
{
	char path[PATH_MAX];
	size_t len = strlen(dir);
	struct stat st;

	if (len == 0 || len >= sizeof(path))
		return len ? -ENAMETOOLONG : -EINVAL;
	memcpy(path, dir, len + 1);
	for (size_t i = 1; i <= len; i++) {
		if (path[i] != '/' && path[i] != '\0')
			continue;
		if (path[i - 1] == '/')
			continue;
		path[i] = '\0';
		if (mkdir(path, 0700) < 0 && errno != EEXIST) {
			int e = errno;

			/* e.g. EROFS or EACCES for a directory that exists */
			if (stat(path, &st) < 0 || !S_ISDIR(st.st_mode))
				return -e;
		}
		path[i] = dir[i];
	}
	if (stat(dir, &st) < 0)
		return -errno;
	return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}

int sbt_cache_write(const char *dir, const char *key, json_object *report)
{
	char tmp[PATH_MAX], path[PATH_MAX];
	const char *text;
	size_t len;
	int fd, rc;

	if (!report || !dir || !dir[0] || !valid_key(key))
		return -EINVAL;
	rc = entry_path(path, sizeof(path), dir, "", key, "");
	if (rc == 0)
		rc = entry_path(tmp, sizeof(tmp), dir, ".", key, ".tmp.XXXXXX");
	if (rc < 0)
		return rc;
	text = json_object_to_json_string_ext(report, JSON_C_TO_STRING_PLAIN);
	if (!text)
		return -ENOMEM;
	len = strlen(text);
	if (len + 1 > CACHE_MAX)
		return -EFBIG; /* sbt_cache_read would refuse it */
	rc = mkdir_p(dir);
	if (rc < 0)
		return rc;
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return -errno;
	rc = sbt_write_all(fd, text, len);
	if (rc == 0)
		rc = sbt_write_all(fd, "\n", 1);
	if (rc == 0 && fsync(fd) < 0)
		rc = -errno;
	if (close(fd) < 0 && rc == 0)
		rc = -errno;
	if (rc == 0 && rename(tmp, path) < 0)
		rc = -errno;
	if (rc < 0) {
		unlink(tmp);
		return rc;
	}
	/* Make the rename durable; the entry is already in place if this fails. */
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
	return 0;
}

int sbt_cache_default_dir(char *buf, size_t len)
{
	/* secure_getenv: a privileged (setuid / file-capability) sbtrace ignores them. */
	const char *xdg = secure_getenv("XDG_CACHE_HOME");
	const char *home = secure_getenv("HOME");
	int n;

	if (!buf || len == 0)
		return -EINVAL;
	buf[0] = '\0';
	if (xdg && xdg[0] == '/')
		n = snprintf(buf, len, "%s/sbtrace", xdg);
	else if (home && home[0] == '/')
		n = snprintf(buf, len, "%s/.cache/sbtrace", home);
	else
		return -ENOENT;
	if (n < 0 || (size_t)n >= len) {
		buf[0] = '\0';
		return -ENAMETOOLONG;
	}
	return 0;
}
