// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The agent's configuration file as command-line arguments (agent_conf.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "cmd/agent_conf.h"
#include "lib/io.h"

#define WHY_ROOT                                                                                   \
	"the config file chooses the agent's policy, so it must be owned by root and writable "    \
	"by nobody else"

/* How much of a name or a line a message quotes. */
#define SHOWN 64

/* One option of the file: pointers into its text. */
struct conf_entry {
	const char *name;
	size_t nlen;
	const char *val; /* NULL: a bare name */
	size_t vlen;
	int has_arg; /* the getopt table's, when checked; else required_argument if val */
};

struct conf {
	const char *path;
	const struct option *longopts; /* NULL: names not looked up */
	char *text;
	size_t len;
	struct conf_entry *e;
	size_t n, cap;
	char *err;
	size_t errlen;
};

/* "PATH:LINE: message" (line 0: "PATH: message") into the caller's buffer; ret. */
static int conf_err(struct conf *c, unsigned int line, int ret, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int conf_err(struct conf *c, unsigned int line, int ret, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!c->errlen)
		return ret;
	n = line ? snprintf(c->err, c->errlen, "%s:%u: ", c->path, line)
		 : snprintf(c->err, c->errlen, "%s: ", c->path);
	if (n >= 0 && (size_t)n < c->errlen) {
		va_start(ap, fmt);
		vsnprintf(c->err + n, c->errlen - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return ret;
}

/* The file's text into c->text: 0, 1 when it is missing and need not exist, or -errno. */
static int conf_read(struct conf *c, bool must_exist)
{
	int fd = open(c->path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK), e = 0;
	struct stat st;

	if (fd < 0) {
		e = errno;
		if (e == ENOENT && !must_exist)
			return 1;
		return conf_err(c, 0, -e, "cannot open the config file: %s", strerror(e));
	}
	if (fstat(fd, &st)) {
		e = errno;
		close(fd);
		return conf_err(c, 0, -e, "cannot stat the config file: %s", strerror(e));
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return conf_err(c, 0, -EINVAL, "not a regular file");
	}
	if (st.st_uid != 0 && st.st_uid != geteuid()) {
		close(fd);
		return conf_err(c, 0, -EPERM, "owned by uid %u (mode %04o): %s: chown root %s",
				(unsigned int)st.st_uid, (unsigned int)(st.st_mode & 07777),
				WHY_ROOT, c->path);
	}
	if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		close(fd);
		return conf_err(c, 0, -EPERM,
				"writable by its group or others (mode %04o): %s: "
				"chmod go-w %s",
				(unsigned int)(st.st_mode & 07777), WHY_ROOT, c->path);
	}
	/* the size first (no read of a file far too big), then the bytes (it may grow) */
	c->text = st.st_size > (off_t)SBT_AGENT_CONF_SIZE_MAX
			  ? (e = EFBIG, NULL)
			  : sbt_read_capped(fd, SBT_AGENT_CONF_SIZE_MAX, &c->len, &e);
	close(fd);
	if (!c->text)
		return e == EFBIG ? conf_err(c, 0, -EFBIG, "larger than %u bytes",
					     SBT_AGENT_CONF_SIZE_MAX)
				  : conf_err(c, 0, -e, "cannot read: %s", strerror(e));
	return 0;
}

static bool is_space(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\v' || ch == '\f';
}

static bool is_name_char(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-';
}

static const struct option *find_option(const struct option *o, const char *name, size_t n)
{
	for (; o && o->name; o++)
		if (strlen(o->name) == n && !memcmp(o->name, name, n))
			return o;
	return NULL;
}

/* Options that are actions of one run: in the file, every start would do them. */
static const char *const not_settings[] = { "config", "help", "unpin", NULL };

/* The name's characters, and what the file may not set; 0 or -EINVAL. */
static int check_name(struct conf *c, unsigned int line, const char *name, size_t n)
{
	int shown = n > SHOWN ? SHOWN : (int)n;

	if (name[0] == '-')
		return conf_err(c, line, -EINVAL,
				"'%.*s': write the option's name without the leading '--' "
				"(e.g. 'no-shim', 'cgroup-parent = /machine.slice')",
				shown, name);
	for (size_t i = 0; i < n; i++)
		if (!is_name_char(name[i]))
			return conf_err(c, line, -EINVAL,
					"'%.*s' is not an option name (lower-case letters, digits "
					"and '-': the agent's long options without '--')",
					shown, name);
	for (const char *const *r = not_settings; *r; r++)
		if (strlen(*r) == n && !memcmp(name, *r, n))
			return conf_err(c, line, -EINVAL,
					"'%.*s' cannot be set in a config file (what one run does, "
					"not how the agent runs: give it on the command line)",
					shown, name);
	return 0;
}

/* With a getopt table: the name is an option, and its value is as the option wants. */
static int check_option(struct conf *c, unsigned int line, struct conf_entry *e)
{
	const struct option *o;
	int shown = e->nlen > SHOWN ? SHOWN : (int)e->nlen;

	if (!c->longopts) {
		e->has_arg = e->val ? required_argument : no_argument;
		return 0;
	}
	o = find_option(c->longopts, e->name, e->nlen);
	if (!o)
		return conf_err(c, line, -EINVAL,
				"unknown option '%.*s' (see 'sbtrace agent --help')", shown,
				e->name);
	if (o->has_arg == no_argument && e->val)
		return conf_err(c, line, -EINVAL,
				"'%.*s' takes no value: write the name alone on its line", shown,
				e->name);
	if (o->has_arg == required_argument && !e->val)
		return conf_err(c, line, -EINVAL, "'%.*s' needs a value ('%.*s = VALUE')", shown,
				e->name, shown, e->name);
	e->has_arg = o->has_arg;
	return 0;
}

static int conf_push(struct conf *c, const struct conf_entry *e)
{
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 16;
		struct conf_entry *ne = realloc(c->e, cap * sizeof(*ne));

		if (!ne)
			return conf_err(c, 0, -ENOMEM, "out of memory");
		c->e = ne;
		c->cap = cap;
	}
	c->e[c->n++] = *e;
	return 0;
}

/* One line (len bytes at s, its newline not counted): an option, or nothing. 0 or -errno. */
static int conf_line(struct conf *c, unsigned int line, const char *s, size_t len)
{
	const char *end = s + len, *p;
	struct conf_entry e = { 0 };
	const char *nul = memchr(s, '\0', len);
	int ret;

	if (nul)
		return conf_err(c, line, -EINVAL, "a NUL byte (column %zu): the file must be text",
				(size_t)(nul - s) + 1);
	if (len > SBT_AGENT_CONF_LINE_MAX)
		return conf_err(c, line, -EINVAL, "a line of %zu bytes (at most %d)", len,
				SBT_AGENT_CONF_LINE_MAX);
	while (s < end && is_space(*s))
		s++;
	while (end > s && is_space(end[-1]))
		end--;
	if (s == end || *s == '#')
		return 0;
	if (*s == '=')
		return conf_err(c, line, -EINVAL, "'=' with no option name before it");
	for (p = s; p < end && !is_space(*p) && *p != '='; p++)
		;
	e.name = s;
	e.nlen = (size_t)(p - s);
	ret = check_name(c, line, e.name, e.nlen);
	if (ret)
		return ret;
	while (p < end && is_space(*p))
		p++;
	if (p < end && *p != '=')
		return conf_err(c, line, -EINVAL,
				"expected 'NAME = VALUE' or 'NAME' alone, got '%.*s'",
				(int)((size_t)(end - s) > SHOWN ? SHOWN : (size_t)(end - s)), s);
	if (p < end) {
		for (p++; p < end && is_space(*p); p++)
			;
		if (p == end)
			return conf_err(c, line, -EINVAL, "'%.*s =' with no value",
					(int)(e.nlen > SHOWN ? SHOWN : e.nlen), e.name);
		if (*p == '"' || *p == '\'')
			return conf_err(c, line, -EINVAL,
					"a quoted value: quotes are not removed, write the value "
					"bare (spaces inside it are kept)");
		e.val = p;
		e.vlen = (size_t)(end - p);
	}
	ret = check_option(c, line, &e);
	return ret ? ret : conf_push(c, &e);
}

static int conf_parse(struct conf *c)
{
	const char *p = c->text, *end = c->text + c->len;
	unsigned int line = 0;
	int ret = 0;

	while (p < end && !ret) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);

		ret = conf_line(c, ++line, p, len);
		p += len + 1;
	}
	return ret;
}

/* The new vector (agent_conf.h): pointers, then the strings, in one block. */
static int conf_build(struct conf *c, int argc, char **argv, int *out_argc, char ***out_argv)
{
	size_t nptr = (size_t)argc + 1, bytes = 0, k = 0;
	char **v, *s;

	for (size_t i = 0; i < c->n; i++) {
		const struct conf_entry *e = &c->e[i];
		bool apart = e->val && e->has_arg != optional_argument;

		nptr += apart ? 2 : 1;
		bytes += 2 + e->nlen + 1 + (e->val ? e->vlen + 1 : 0);
	}
	if (nptr > (size_t)INT_MAX)
		return conf_err(c, 0, -E2BIG, "too many options");
	v = malloc(nptr * sizeof(*v) + bytes);
	if (!v)
		return conf_err(c, 0, -ENOMEM, "out of memory");
	s = (char *)(v + nptr);
	v[k++] = argv[0];
	for (size_t i = 0; i < c->n; i++) {
		const struct conf_entry *e = &c->e[i];

		v[k++] = s;
		s += sprintf(s, "--%.*s", (int)e->nlen, e->name);
		if (!e->val) {
			s++;
			continue;
		}
		if (e->has_arg == optional_argument) {
			s += sprintf(s, "=%.*s", (int)e->vlen, e->val) + 1;
			continue;
		}
		v[k++] = ++s;
		s += sprintf(s, "%.*s", (int)e->vlen, e->val) + 1;
	}
	for (int i = 1; i < argc; i++)
		v[k++] = argv[i];
	v[k] = NULL;
	*out_argc = (int)k;
	*out_argv = v;
	return 0;
}

const char *sbt_agent_conf_path(const char *flag, bool *must_exist)
{
	const char *env = getenv(SBT_AGENT_CONF_ENV);

	*must_exist = true;
	if (flag)
		return flag;
	if (env)
		return env[0] ? env : NULL;
	*must_exist = false;
	return SBT_AGENT_CONF_DEFAULT;
}

int sbt_agent_conf_argv_checked(const char *path, bool must_exist, const struct option *longopts,
				int argc, char **argv, int *out_argc, char ***out_argv, char *err,
				size_t errlen)
{
	struct conf c = { .path = path, .longopts = longopts, .err = err, .errlen = errlen };
	int ret = 0;

	if (errlen)
		err[0] = '\0';
	*out_argv = NULL;
	*out_argc = 0;
	if (argc < 1 || !argv)
		return -EINVAL;
	if (path)
		ret = conf_read(&c, must_exist);
	if (ret == 0 && c.text)
		ret = conf_parse(&c);
	if (ret >= 0)
		ret = conf_build(&c, argc, argv, out_argc, out_argv);
	free(c.text);
	free(c.e);
	return ret;
}

int sbt_agent_conf_argv(const char *path, bool must_exist, int argc, char **argv, int *out_argc,
			char ***out_argv, char *err, size_t errlen)
{
	return sbt_agent_conf_argv_checked(path, must_exist, NULL, argc, argv, out_argc, out_argv,
					   err, errlen);
}
