// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for the agent's configuration file (userspace/cmd/agent_conf.c):
 * the lines as arguments, the command line after them (and winning through
 * getopt), each error naming FILE:LINE, the owner and mode refused.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "cmd/agent_conf.h"

struct dir {
	char path[64];
	char file[128]; /* path/agent.conf */
};

static int setup(void **state)
{
	struct dir *d = calloc(1, sizeof(*d));

	if (!d)
		return -1;
	snprintf(d->path, sizeof(d->path), "/tmp/sbt-test-agent-conf.XXXXXX");
	if (!mkdtemp(d->path)) {
		free(d);
		return -1;
	}
	snprintf(d->file, sizeof(d->file), "%s/agent.conf", d->path);
	*state = d;
	return 0;
}

static int teardown(void **state)
{
	struct dir *d = *state;
	char p[160];

	unlink(d->file);
	snprintf(p, sizeof(p), "%s/link.conf", d->path);
	unlink(p);
	snprintf(p, sizeof(p), "%s/fifo", d->path);
	unlink(p);
	snprintf(p, sizeof(p), "%s/sub", d->path);
	rmdir(p);
	rmdir(d->path);
	unsetenv(SBT_AGENT_CONF_ENV);
	free(d);
	return 0;
}

/* The file with len bytes of text, mode as given (the umask not applied). */
static void write_conf(const struct dir *d, const char *text, size_t len, mode_t mode)
{
	int fd = open(d->file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, len), (ssize_t)len);
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
}

static void write_text(const struct dir *d, const char *text)
{
	write_conf(d, text, strlen(text), 0644);
}

/* The vector is `want` (NULL-terminated), and NULL-terminated itself. */
static void assert_argv(int argc, char **argv, const char *const *want)
{
	int n = 0;

	while (want[n])
		n++;
	assert_int_equal(argc, n);
	for (int i = 0; i < n; i++)
		assert_string_equal(argv[i], want[i]);
	assert_null(argv[argc]);
}

static void test_parse(void **state)
{
	struct dir *d = *state;
	char *args[] = { "agent", "--duration", "3", NULL };
	const char *want[] = { "agent",
			       "--cgroup-parent",
			       "/machine.slice",
			       "--cgroup-parent",
			       "/pods.slice",
			       "--no-shim",
			       "--metrics-addr",
			       "127.0.0.1:9464",
			       "--out",
			       "/var/log/sbtrace/events with space.jsonl",
			       "--metrics-file",
			       "/x#y",
			       "--duration",
			       "3",
			       NULL };
	char err[512], **out;
	int argc;

	write_text(d, "# sbtrace agent\n"
		      "\n"
		      "   \t\n"
		      "cgroup-parent = /machine.slice\n"
		      "  cgroup-parent=/pods.slice  \t\n"
		      "   # an indented comment\n"
		      "no-shim\n"
		      "\tmetrics-addr\t=\t127.0.0.1:9464\r\n"
		      "out = /var/log/sbtrace/events with space.jsonl\n"
		      "metrics-file = /x#y"); /* no newline at the end */
	assert_int_equal(sbt_agent_conf_argv(d->file, true, 3, args, &argc, &out, err, sizeof(err)),
			 0);
	assert_string_equal(err, "");
	assert_argv(argc, out, want);
	/* the command line's strings are the caller's own */
	assert_ptr_equal(out[0], args[0]);
	assert_ptr_equal(out[argc - 1], args[2]);
	free(out);

	/* comments and blank lines alone: the command line as it is */
	write_text(d, "# nothing yet\n\n");
	assert_int_equal(sbt_agent_conf_argv(d->file, true, 3, args, &argc, &out, err, sizeof(err)),
			 0);
	assert_argv(argc, out, (const char *const[]){ "agent", "--duration", "3", NULL });
	free(out);
	write_text(d, "");
	assert_int_equal(sbt_agent_conf_argv(d->file, true, 1, args, &argc, &out, err, sizeof(err)),
			 0);
	assert_argv(argc, out, (const char *const[]){ "agent", NULL });
	free(out);
}

enum { O_STATS = 1, O_PARENT, O_NO_SHIM, O_COLOR };

static const struct option opts[] = {
	{ "stats-interval", required_argument, NULL, O_STATS },
	{ "cgroup-parent", required_argument, NULL, O_PARENT },
	{ "no-shim", no_argument, NULL, O_NO_SHIM },
	{ "color", optional_argument, NULL, O_COLOR },
	{ 0 },
};

struct parsed {
	const char *stats;
	const char *parents[4];
	int nr_parents;
	bool no_shim;
	const char *color;
};

/* What a command's getopt loop makes of the vector. */
static struct parsed parse(int argc, char **argv)
{
	struct parsed p = { 0 };
	int c;

	optind = 0; /* glibc: start anew */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case O_STATS:
			p.stats = optarg;
			break;
		case O_PARENT:
			if (p.nr_parents < 4)
				p.parents[p.nr_parents++] = optarg;
			break;
		case O_NO_SHIM:
			p.no_shim = true;
			break;
		case O_COLOR:
			p.color = optarg ? optarg : "(none)";
			break;
		default:
			fail_msg("getopt: %d", c);
		}
	}
	return p;
}

/* The file first, the command line after: its single-valued options win, repeated ones add up. */
static void test_override(void **state)
{
	struct dir *d = *state;
	char *cmdline[] = { "agent", "--stats-interval", "5", "--cgroup-parent", "/b", NULL };
	char err[512], **out;
	struct parsed p;
	int argc;

	write_text(d, "stats-interval = 60\ncgroup-parent = /a\nno-shim\n");
	assert_int_equal(
		sbt_agent_conf_argv(d->file, true, 5, cmdline, &argc, &out, err, sizeof(err)), 0);
	p = parse(argc, out);
	assert_string_equal(p.stats, "5");
	assert_int_equal(p.nr_parents, 2);
	assert_string_equal(p.parents[0], "/a");
	assert_string_equal(p.parents[1], "/b");
	assert_true(p.no_shim);
	free(out);

	/* without the flag on the command line, the file's value */
	assert_int_equal(
		sbt_agent_conf_argv(d->file, true, 1, cmdline, &argc, &out, err, sizeof(err)), 0);
	p = parse(argc, out);
	assert_string_equal(p.stats, "60");
	assert_int_equal(p.nr_parents, 1);
	free(out);

	/* checked against the table: the same vector, an optional value bound with '=' */
	write_text(d, "stats-interval = 60\ncolor = auto\ncolor\n");
	assert_int_equal(sbt_agent_conf_argv_checked(d->file, true, opts, 3, cmdline, &argc, &out,
						     err, sizeof(err)),
			 0);
	assert_argv(argc, out,
		    (const char *const[]){ "agent", "--stats-interval", "60", "--color=auto",
					   "--color", "--stats-interval", "5", NULL });
	p = parse(argc, out);
	assert_string_equal(p.stats, "5");
	assert_string_equal(p.color, "(none)");
	free(out);
}

struct bad_case {
	const char *text;
	size_t len;	/* 0: strlen(text) */
	const char *at; /* ":LINE: " after the path */
	const char *says;
};

/* Refused, -EINVAL, the message "PATH:LINE: ..." saying `says`; no vector. */
static void expect_refused(struct dir *d, const struct option *table, const struct bad_case *b)
{
	char *args[] = { "agent", NULL }, err[512], want[256], **out = (char **)1;
	int argc = -1, ret;

	write_conf(d, b->text, b->len ? b->len : strlen(b->text), 0644);
	ret = sbt_agent_conf_argv_checked(d->file, true, table, 1, args, &argc, &out, err,
					  sizeof(err));
	if (ret != -EINVAL || !strstr(err, b->says))
		fail_msg("%s: ret %d, err '%s', want '%s'", b->text, ret, err, b->says);
	snprintf(want, sizeof(want), "%s%s", d->file, b->at);
	if (strncmp(err, want, strlen(want)))
		fail_msg("%s: err '%s' does not start with '%s'", b->text, err, want);
	assert_null(out);
	assert_int_equal(argc, 0);
}

static void test_errors(void **state)
{
	static const struct bad_case cases[] = {
		{ "no-shim\nfoo bar\n", 0,
		  ":2: ", "expected 'NAME = VALUE' or 'NAME' alone, got 'foo bar'" },
		{ "\n\ncgroup-parent =\n", 0, ":3: ", "'cgroup-parent =' with no value" },
		{ "cgroup-parent =   \t\r\n", 0, ":1: ", "with no value" },
		{ "# c\nCgroup-Parent = /x\n", 0, ":2: ", "'Cgroup-Parent' is not an option name" },
		{ "no_shim\n", 0, ":1: ", "'no_shim' is not an option name" },
		{ "no-shim\n\n--no-shim\n", 0, ":3: ", "without the leading '--'" },
		{ "-v\n", 0, ":1: ", "without the leading '--'" },
		{ "= /x\n", 0, ":1: ", "'=' with no option name" },
		{ "out = \"/var/log/x\"\n", 0, ":1: ", "a quoted value" },
		{ "out = '/var/log/x'\n", 0, ":1: ", "a quoted value" },
		{ "#\n#\nconfig = /etc/other.conf\n", 0,
		  ":3: ", "'config' cannot be set in a config file" },
		{ "help\n", 0, ":1: ", "'help' cannot be set" },
		{ "no-shim\nunpin\n", 0, ":2: ", "'unpin' cannot be set" },
		{ "no-shim\na\0b\n", 12, ":2: ", "a NUL byte (column 2)" },
	};
	struct dir *d = *state;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		expect_refused(d, NULL, &cases[i]);
		expect_refused(d, opts, &cases[i]); /* the table changes none of these */
	}
}

/* 4096 bytes of a line are fine; 4097 are not, wherever the line is and whatever it holds. */
static void test_long_line(void **state)
{
	struct dir *d = *state;
	size_t n = SBT_AGENT_CONF_LINE_MAX;
	char *text = malloc(2 * n + 64), *args[] = { "agent", NULL }, err[512], **out;
	struct bad_case b = {
		.text = text, .at = ":3: ", .says = "a line of 4097 bytes (at most 4096)"
	};
	int argc, len;

	assert_non_null(text);
	len = sprintf(text, "no-shim\nout = /");
	memset(text + len, 'o', n - 7); /* "out = /" and the o's: 4096 */
	len += (int)n - 7;
	text[len++] = '\n';
	write_conf(d, text, (size_t)len, 0644);
	assert_int_equal(sbt_agent_conf_argv(d->file, true, 1, args, &argc, &out, err, sizeof(err)),
			 0);
	assert_int_equal(argc, 4);
	assert_int_equal(strlen(out[3]), n - 6);
	free(out);
	text[len++] = '#';
	memset(text + len, 'x', n);
	len += (int)n;
	b.len = (size_t)len; /* a comment of 4097 bytes, at the end, with no newline */
	expect_refused(d, NULL, &b);
	free(text);
}

static void test_checked(void **state)
{
	static const struct bad_case cases[] = {
		{ "no-shim\nunknown-thing\n", 0, ":2: ", "unknown option 'unknown-thing'" },
		{ "stats\n", 0, ":1: ", "unknown option 'stats'" }, /* no abbreviations */
		{ "no-shim = yes\n", 0, ":1: ", "'no-shim' takes no value" },
		{ "\n\ncgroup-parent\n", 0, ":3: ", "'cgroup-parent' needs a value" },
	};
	struct dir *d = *state;
	char *args[] = { "agent", NULL }, err[512], **out;
	int argc;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		expect_refused(d, opts, &cases[i]);
	/* unchecked, the same lines pass: the caller's getopt judges them */
	write_text(d, "unknown-thing\nno-shim = yes\n");
	assert_int_equal(sbt_agent_conf_argv(d->file, true, 1, args, &argc, &out, err, sizeof(err)),
			 0);
	assert_argv(argc, out,
		    (const char *const[]){ "agent", "--unknown-thing", "--no-shim", "yes", NULL });
	free(out);
}

static void test_missing(void **state)
{
	struct dir *d = *state;
	char *args[] = { "agent", "--no-shim", NULL }, err[512], want[256], **out;
	int argc;

	assert_int_equal(
		sbt_agent_conf_argv(d->file, false, 2, args, &argc, &out, err, sizeof(err)), 0);
	assert_argv(argc, out, (const char *const[]){ "agent", "--no-shim", NULL });
	free(out);
	assert_int_equal(sbt_agent_conf_argv(NULL, true, 2, args, &argc, &out, err, sizeof(err)),
			 0);
	assert_argv(argc, out, (const char *const[]){ "agent", "--no-shim", NULL });
	free(out);
	/* --config FILE (must_exist): an error naming the file */
	assert_int_equal(sbt_agent_conf_argv(d->file, true, 2, args, &argc, &out, err, sizeof(err)),
			 -ENOENT);
	snprintf(want, sizeof(want), "%s: cannot open the config file: No such file or directory",
		 d->file);
	assert_string_equal(err, want);
	assert_null(out);
	/* no room for a message: the error alone */
	assert_int_equal(sbt_agent_conf_argv(d->file, true, 2, args, &argc, &out, NULL, 0),
			 -ENOENT);
}

static void expect_perm(struct dir *d, const char *path, int ret, const char *says)
{
	char *args[] = { "agent", NULL }, err[512], **out;
	int argc;

	assert_int_equal(sbt_agent_conf_argv(path, false, 1, args, &argc, &out, err, sizeof(err)),
			 ret);
	if (!strstr(err, says) || strncmp(err, path, strlen(path)))
		fail_msg("err '%s', want '%s: ...%s'", err, path, says);
	assert_null(out);
}

static void test_permissions(void **state)
{
	struct dir *d = *state;
	char *args[] = { "agent", NULL }, err[512], p[160], **out;
	int argc;

	write_conf(d, "no-shim\n", 8, 0620);
	expect_perm(d, d->file, -EPERM,
		    "writable by its group or others (mode 0620): the config file chooses the "
		    "agent's policy");
	expect_perm(d, d->file, -EPERM, "must be owned by root and writable by nobody else");
	write_conf(d, "no-shim\n", 8, 0602);
	expect_perm(d, d->file, -EPERM, "mode 0602");
	write_conf(d, "no-shim\n", 8, 0666);
	expect_perm(d, d->file, -EPERM, "chmod go-w");
	/* readable by all is fine: it holds no secret (a token is in its own file) */
	write_conf(d, "no-shim\n", 8, 0644);
	assert_int_equal(sbt_agent_conf_argv(d->file, true, 1, args, &argc, &out, err, sizeof(err)),
			 0);
	free(out);
	/* a symbolic link: the file it leads to is judged */
	snprintf(p, sizeof(p), "%s/link.conf", d->path);
	assert_int_equal(symlink(d->file, p), 0);
	assert_int_equal(sbt_agent_conf_argv(p, true, 1, args, &argc, &out, err, sizeof(err)), 0);
	assert_int_equal(argc, 2);
	free(out);
	assert_int_equal(chmod(d->file, 0664), 0);
	expect_perm(d, p, -EPERM, "mode 0664");
	if (geteuid() == 0) {
		assert_int_equal(chmod(d->file, 0644), 0);
		assert_int_equal(chown(d->file, 65534, 65534), 0);
		expect_perm(d, d->file, -EPERM, "owned by uid 65534 (mode 0644)");
		expect_perm(d, d->file, -EPERM, "chown root");
	} else {
		print_message("not root: a file of another owner is not tried\n");
	}
	/* not a regular file: refused without blocking (a FIFO has no writer) */
	snprintf(p, sizeof(p), "%s/sub", d->path);
	assert_int_equal(mkdir(p, 0755), 0);
	expect_perm(d, p, -EINVAL, "not a regular file");
	snprintf(p, sizeof(p), "%s/fifo", d->path);
	assert_int_equal(mkfifo(p, 0644), 0);
	expect_perm(d, p, -EINVAL, "not a regular file");
}

static void test_size(void **state)
{
	struct dir *d = *state;
	size_t n = SBT_AGENT_CONF_SIZE_MAX + 1;
	char *text = malloc(n);

	assert_non_null(text);
	for (size_t i = 0; i < n; i++)
		text[i] = i % 64 == 63 ? '\n' : '#';
	write_conf(d, text, n, 0644);
	expect_perm(d, d->file, -EFBIG, "larger than 1048576 bytes");
	write_conf(d, text, n - 1, 0644); /* at the cap: read */
	{
		char *args[] = { "agent", NULL }, err[512], **out;
		int argc;

		assert_int_equal(
			sbt_agent_conf_argv(d->file, true, 1, args, &argc, &out, err, sizeof(err)),
			0);
		assert_int_equal(argc, 1);
		free(out);
	}
	free(text);
}

static void test_path(void **state)
{
	bool must;

	unsetenv(SBT_AGENT_CONF_ENV);
	assert_string_equal(sbt_agent_conf_path(NULL, &must), "/etc/sbtrace/agent.conf");
	assert_false(must);
	assert_string_equal(sbt_agent_conf_path("/srv/a.conf", &must), "/srv/a.conf");
	assert_true(must);
	setenv(SBT_AGENT_CONF_ENV, "/run/b.conf", 1);
	assert_string_equal(sbt_agent_conf_path(NULL, &must), "/run/b.conf");
	assert_true(must);
	assert_string_equal(sbt_agent_conf_path("/srv/a.conf", &must), "/srv/a.conf");
	setenv(SBT_AGENT_CONF_ENV, "", 1); /* no file at all */
	assert_null(sbt_agent_conf_path(NULL, &must));
	unsetenv(SBT_AGENT_CONF_ENV);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_parse, setup, teardown),
		cmocka_unit_test_setup_teardown(test_override, setup, teardown),
		cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_long_line, setup, teardown),
		cmocka_unit_test_setup_teardown(test_checked, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_permissions, setup, teardown),
		cmocka_unit_test_setup_teardown(test_size, setup, teardown),
		cmocka_unit_test(test_path),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
