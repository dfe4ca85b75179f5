// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for the shell classifier (userspace/shell.c). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "exec/shell.h"

#define MAX_ARGS 10

struct shell_case {
	const char *desc;
	const char *filename;
	const char *interp;
	const char *argv[MAX_ARGS];
	size_t argc;
	bool ok;
	enum sbt_shell_kind kind;
	const char *shell;
	const char *command;
	const char *script;
	const char *multicall;
};

#define ARGV(...)                                                                                  \
	.argv = { __VA_ARGS__ },                                                                   \
	.argc = sizeof((const char *[]){ __VA_ARGS__ }) / sizeof(const char *)

#define LONG_DIR                                                                                   \
	"/nix/store/0123456789abcdefghijklmnopqrstuv-some-package-with-a-very-long-name-1.2.3/"    \
	"libexec/"                                                                                 \
	"deeper/and/deeper/bin"
#define LONG_NAME "bashbashbashbashbashbashbashbashbashbashbashbash-not-a-shell-at-all"

static const struct shell_case cases[] = {
	/* the dynamic loader runs the program itself: it is an interpreter */
	{ "ld.so /bin/sh -c", "/lib64/ld-linux-x86-64.so.2", NULL,
	  ARGV("/lib64/ld-linux-x86-64.so.2", "/bin/sh", "-c", "id"), true, SBT_SHELL_COMMAND, "sh",
	  "id", NULL, NULL },
	{ "ld.so /bin/sh (a script on stdin)", "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2",
	  NULL, ARGV("ld-linux-x86-64.so.2", "/bin/sh"), true, SBT_SHELL_DIRECT, "sh", NULL, NULL,
	  NULL },
	{ "ld.so --library-path X --inhibit-cache bash build.sh", "/lib/ld-linux-aarch64.so.1",
	  NULL,
	  ARGV("ld", "--library-path", "/tmp/lib", "--inhibit-cache", "/bin/bash", "build.sh"),
	  true, SBT_SHELL_SCRIPT, "bash", NULL, "build.sh", NULL },
	{ "ld.so --argv0 sh busybox -c (the applet from --argv0)", "/lib/ld-musl-x86_64.so.1", NULL,
	  ARGV("ld", "--argv0", "sh", "/bin/busybox", "-c", "ls"), true, SBT_SHELL_COMMAND,
	  "busybox sh", "ls", NULL, "busybox" },
	{ "ld-2.36.so -- dash -c", "/lib/x86_64-linux-gnu/ld-2.36.so", NULL,
	  ARGV("ld-2.36.so", "--", "/usr/bin/dash", "-c", "true"), true, SBT_SHELL_COMMAND, "dash",
	  "true", NULL, NULL },
	{ "ld.so ld.so sh -c (a loader loading a loader)", "/lib64/ld-linux-x86-64.so.2", NULL,
	  ARGV("ld.so", "/lib64/ld-linux-x86-64.so.2", "/bin/sh", "-c", "x"), true,
	  SBT_SHELL_COMMAND, "sh", "x", NULL, NULL },
	{ "ld.so --list /bin/sh runs nothing", "/lib64/ld-linux-x86-64.so.2", NULL,
	  ARGV("ld.so", "--list", "/bin/sh"), false, SBT_SHELL_NONE, NULL, NULL, NULL, NULL },
	{ "ld.so /usr/bin/node is no shell", "/lib64/ld-linux-x86-64.so.2", NULL,
	  ARGV("ld.so", "/usr/bin/node", "-e", "1"), false, SBT_SHELL_NONE, NULL, NULL, NULL,
	  NULL },
	{ "ld.so alone runs nothing", "/lib64/ld-linux-x86-64.so.2", NULL, ARGV("ld.so"), false,
	  SBT_SHELL_NONE, NULL, NULL, NULL, NULL },
	{ "ld (the linker) is no loader", "/usr/bin/ld", NULL, ARGV("ld", "/bin/sh"), false,
	  SBT_SHELL_NONE, NULL, NULL, NULL, NULL },
	/* -c and combined clusters */
	{ "sh -c", "/bin/sh", NULL, ARGV("sh", "-c", "echo hi"), true, SBT_SHELL_COMMAND, "sh",
	  "echo hi", NULL, NULL },
	{ "bash -c", "/bin/bash", NULL, ARGV("bash", "-c", "make all", "arg0", "arg1"), true,
	  SBT_SHELL_COMMAND, "bash", "make all", NULL, NULL },
	{ "dash -ec", "/usr/bin/dash", NULL, ARGV("dash", "-ec", "set -x; ls"), true,
	  SBT_SHELL_COMMAND, "dash", "set -x; ls", NULL, NULL },
	{ "bash -lc", "/bin/bash", NULL, ARGV("bash", "-lc", "npm ci"), true, SBT_SHELL_COMMAND,
	  "bash", "npm ci", NULL, NULL },
	{ "sh -xc", "/bin/sh", NULL, ARGV("sh", "-xc", "true"), true, SBT_SHELL_COMMAND, "sh",
	  "true", NULL, NULL },
	{ "sh -cx (c first in cluster)", "/bin/sh", NULL, ARGV("sh", "-cx", "true"), true,
	  SBT_SHELL_COMMAND, "sh", "true", NULL, NULL },
	{ "zsh -c -- cmd", "/usr/bin/zsh", NULL, ARGV("zsh", "-c", "--", "print hi"), true,
	  SBT_SHELL_COMMAND, "zsh", "print hi", NULL, NULL },
	{ "sh -c cmd -- a b: command is the first operand", "/bin/sh", NULL,
	  ARGV("sh", "-c", "echo \"$@\"", "--", "a", "b"), true, SBT_SHELL_COMMAND, "sh",
	  "echo \"$@\"", NULL, NULL },
	{ "sh -c -x cmd: options after -c", "/bin/sh", NULL, ARGV("sh", "-c", "-x", "ls"), true,
	  SBT_SHELL_COMMAND, "sh", "ls", NULL, NULL },
	{ "/bin/bash --norc -c", "/bin/bash", NULL, ARGV("/bin/bash", "--norc", "-c", "x"), true,
	  SBT_SHELL_COMMAND, "bash", "x", NULL, NULL },
	{ "bash -o pipefail -c", "/bin/bash", NULL, ARGV("bash", "-o", "pipefail", "-c", "x"), true,
	  SBT_SHELL_COMMAND, "bash", "x", NULL, NULL },
	{ "bash +o posix -c", "/bin/bash", NULL, ARGV("bash", "+o", "posix", "-c", "x"), true,
	  SBT_SHELL_COMMAND, "bash", "x", NULL, NULL },
	{ "sh -c -o pipefail cmd", "/bin/sh", NULL, ARGV("sh", "-c", "-o", "pipefail", "cmd"), true,
	  SBT_SHELL_COMMAND, "sh", "cmd", NULL, NULL },
	{ "sh -c with missing operand", "/bin/sh", NULL, ARGV("sh", "-c"), true, SBT_SHELL_COMMAND,
	  "sh", NULL, NULL, NULL },
	{ "sh -s -c: -c wins over -s", "/bin/sh", NULL, ARGV("sh", "-s", "-c", "id"), true,
	  SBT_SHELL_COMMAND, "sh", "id", NULL, NULL },
	{ "zsh --emulate sh -c", "/bin/zsh", NULL, ARGV("zsh", "--emulate", "sh", "-c", "x"), true,
	  SBT_SHELL_COMMAND, "zsh", "x", NULL, NULL },
	{ "fish -c", "/usr/bin/fish", NULL, ARGV("fish", "-c", "echo hi"), true, SBT_SHELL_COMMAND,
	  "fish", "echo hi", NULL, NULL },
	{ "fish --command=", "/usr/bin/fish", NULL, ARGV("fish", "--command=ls -l"), true,
	  SBT_SHELL_COMMAND, "fish", "ls -l", NULL, NULL },
	{ "fish -C init -c", "/usr/bin/fish", NULL, ARGV("fish", "-C", "set x 1", "-c", "echo $x"),
	  true, SBT_SHELL_COMMAND, "fish", "echo $x", NULL, NULL },
	{ "tcsh -c", "/bin/tcsh", NULL, ARGV("tcsh", "-c", "echo hi"), true, SBT_SHELL_COMMAND,
	  "tcsh", "echo hi", NULL, NULL },
	{ "ksh93 -c", "/usr/bin/ksh93", NULL, ARGV("ksh93", "-c", "print ok"), true,
	  SBT_SHELL_COMMAND, "ksh93", "print ok", NULL, NULL },

	/* script operands */
	{ "sh build.sh", "/bin/sh", NULL, ARGV("sh", "build.sh"), true, SBT_SHELL_SCRIPT, "sh",
	  NULL, "build.sh", NULL },
	{ "bash -x build.sh", "/bin/bash", NULL, ARGV("bash", "-x", "build.sh", "--flag"), true,
	  SBT_SHELL_SCRIPT, "bash", NULL, "build.sh", NULL },
	{ "bash --rcfile f script.sh", "/bin/bash", NULL,
	  ARGV("bash", "--rcfile", "f", "script.sh"), true, SBT_SHELL_SCRIPT, "bash", NULL,
	  "script.sh", NULL },
	{ "GitHub Actions: bash --noprofile --norc -eo pipefail file", "/usr/bin/bash", NULL,
	  ARGV("bash", "--noprofile", "--norc", "-eo", "pipefail", "/tmp/step.sh"), true,
	  SBT_SHELL_SCRIPT, "bash", NULL, "/tmp/step.sh", NULL },
	{ "bash -O extglob script", "/bin/bash", NULL, ARGV("bash", "-O", "extglob", "s.sh"), true,
	  SBT_SHELL_SCRIPT, "bash", NULL, "s.sh", NULL },
	{ "sh +x script: + clusters never mean -c", "/bin/sh", NULL, ARGV("sh", "+xe", "s.sh"),
	  true, SBT_SHELL_SCRIPT, "sh", NULL, "s.sh", NULL },
	{ "sh -- script", "/bin/sh", NULL, ARGV("sh", "--", "-weird-name.sh"), true,
	  SBT_SHELL_SCRIPT, "sh", NULL, "-weird-name.sh", NULL },
	{ "sh - script", "/bin/sh", NULL, ARGV("sh", "-", "s.sh"), true, SBT_SHELL_SCRIPT, "sh",
	  NULL, "s.sh", NULL },
	{ "bash --posix script", "/bin/bash", NULL, ARGV("bash", "--posix", "run.sh"), true,
	  SBT_SHELL_SCRIPT, "bash", NULL, "run.sh", NULL },
	{ "csh script", "/bin/csh", NULL, ARGV("csh", "job.csh"), true, SBT_SHELL_SCRIPT, "csh",
	  NULL, "job.csh", NULL },
	{ "yash script", "/usr/bin/yash", NULL, ARGV("yash", "./t.sh"), true, SBT_SHELL_SCRIPT,
	  "yash", NULL, "./t.sh", NULL },
	{ "operands stop option parsing", "/bin/sh", NULL, ARGV("sh", "s.sh", "-c", "x"), true,
	  SBT_SHELL_SCRIPT, "sh", NULL, "s.sh", NULL },

	/* direct */
	{ "sh alone", "/bin/sh", NULL, ARGV("sh"), true, SBT_SHELL_DIRECT, "sh", NULL, NULL, NULL },
	{ "sh -s arg", "/bin/sh", NULL, ARGV("sh", "-s", "arg"), true, SBT_SHELL_DIRECT, "sh", NULL,
	  NULL, NULL },
	{ "bash -s", "/bin/bash", NULL, ARGV("bash", "-s"), true, SBT_SHELL_DIRECT, "bash", NULL,
	  NULL, NULL },
	{ "-bash login shell", "/bin/bash", NULL, ARGV("-bash"), true, SBT_SHELL_DIRECT, "bash",
	  NULL, NULL, NULL },
	{ "bash --login", "/bin/bash", NULL, ARGV("bash", "--login"), true, SBT_SHELL_DIRECT,
	  "bash", NULL, NULL, NULL },
	{ "bash --init-file f", "/bin/bash", NULL, ARGV("bash", "--init-file", "f"), true,
	  SBT_SHELL_DIRECT, "bash", NULL, NULL, NULL },
	{ "bash -o with missing value", "/bin/bash", NULL, ARGV("bash", "-o"), true,
	  SBT_SHELL_DIRECT, "bash", NULL, NULL, NULL },
	{ "mksh", "/bin/mksh", NULL, ARGV("mksh"), true, SBT_SHELL_DIRECT, "mksh", NULL, NULL,
	  NULL },
	{ "posh", "/bin/posh", NULL, ARGV("posh", "-i"), true, SBT_SHELL_DIRECT, "posh", NULL, NULL,
	  NULL },
	{ "rbash", "/bin/rbash", NULL, ARGV("rbash"), true, SBT_SHELL_DIRECT, "rbash", NULL, NULL,
	  NULL },
	{ "ash", "/bin/ash", NULL, ARGV("ash"), true, SBT_SHELL_DIRECT, "ash", NULL, NULL, NULL },
	{ "lksh", "/bin/lksh", NULL, ARGV("lksh"), true, SBT_SHELL_DIRECT, "lksh", NULL, NULL,
	  NULL },
	{ "pdksh", "/bin/pdksh", NULL, ARGV("pdksh"), true, SBT_SHELL_DIRECT, "pdksh", NULL, NULL,
	  NULL },
	{ "oksh", "/bin/oksh", NULL, ARGV("oksh"), true, SBT_SHELL_DIRECT, "oksh", NULL, NULL,
	  NULL },
	{ "ksh", "/bin/ksh", NULL, ARGV("ksh"), true, SBT_SHELL_DIRECT, "ksh", NULL, NULL, NULL },
	{ "argc 0 still ran a shell",
	  "/bin/sh",
	  NULL,
	  { NULL },
	  0,
	  true,
	  SBT_SHELL_DIRECT,
	  "sh",
	  NULL,
	  NULL,
	  NULL },

	/* shebang */
	{ "#!/bin/sh ./build.sh", "./build.sh", "/bin/sh", ARGV("/bin/sh", "./build.sh", "arg"),
	  true, SBT_SHELL_SHEBANG, "sh", NULL, "./build.sh", NULL },
	{ "#!/bin/bash -e script", "/src/ci.sh", "/bin/bash", ARGV("/bin/bash", "-e", "/src/ci.sh"),
	  true, SBT_SHELL_SHEBANG, "bash", NULL, "/src/ci.sh", NULL },
	{ "#!/usr/bin/env bash: env is not a shell", "./run.sh", "/usr/bin/env",
	  ARGV("/usr/bin/env", "bash", "./run.sh"), false },
	{ "interp unknown, kernel #! argv", "/w/build.sh", NULL, ARGV("/bin/sh", "/w/build.sh"),
	  true, SBT_SHELL_SHEBANG, "sh", NULL, "/w/build.sh", NULL },
	{ "interp unknown, #!/bin/bash -e argv", "/w/b.sh", "", ARGV("/bin/bash", "-e", "/w/b.sh"),
	  true, SBT_SHELL_SHEBANG, "bash", NULL, "/w/b.sh", NULL },
	{ "interp unknown, #!/usr/bin/python3 argv", "/w/t.py", NULL,
	  ARGV("/usr/bin/python3", "/w/t.py"), false },
	{ "binfmt_misc emulator running a non-shell", "/usr/bin/ls", "/usr/bin/qemu-arm-static",
	  ARGV("/usr/bin/qemu-arm-static", "/usr/bin/ls"), false },
	{ "interp unknown, argv[1] differs: not a shebang", "/usr/bin/make", NULL,
	  ARGV("/bin/sh", "x"), false },
	{ "binfmt_misc emulator running a shell binary", "/bin/sh", "/usr/bin/qemu-aarch64-static",
	  ARGV("/usr/bin/qemu-aarch64-static", "/bin/sh", "-c", "uname -m"), true,
	  SBT_SHELL_COMMAND, "sh", "uname -m", NULL, NULL },
	{ "#!/usr/bin/python3", "./tool.py", "/usr/bin/python3",
	  ARGV("/usr/bin/python3", "./tool.py"), false },
	{ "#! non-shell interp wins over shell-named file", "/usr/local/bin/sh", "/usr/bin/perl",
	  ARGV("/usr/bin/perl", "/usr/local/bin/sh"), false },
	{ "#!/bin/busybox sh", "./s", "/bin/busybox", ARGV("/bin/busybox", "sh", "./s"), true,
	  SBT_SHELL_SHEBANG, "busybox sh", NULL, "./s", "busybox" },
	{ "#!/bin/busybox awk", "./s.awk", "/bin/busybox", ARGV("/bin/busybox", "awk", "./s.awk"),
	  false },
	{ "interp equal to filename: no shebang", "/bin/bash", "/bin/bash", ARGV("bash", "-c", "x"),
	  true, SBT_SHELL_COMMAND, "bash", "x", NULL, NULL },
	{ "empty interp", "/bin/bash", "", ARGV("bash", "x.sh"), true, SBT_SHELL_SCRIPT, "bash",
	  NULL, "x.sh", NULL },
	{ "NULL interp", "/bin/dash", NULL, ARGV("dash"), true, SBT_SHELL_DIRECT, "dash", NULL,
	  NULL, NULL },

	/* busybox / toybox */
	{ "busybox sh -c", "/bin/busybox", NULL, ARGV("busybox", "sh", "-c", "ls"), true,
	  SBT_SHELL_COMMAND, "busybox sh", "ls", NULL, "busybox" },
	{ "busybox via sh symlink (argv[0] applet)", "/bin/busybox", NULL, ARGV("sh", "-c", "ls"),
	  true, SBT_SHELL_COMMAND, "busybox sh", "ls", NULL, "busybox" },
	{ "busybox login -sh", "/bin/busybox", NULL, ARGV("-sh"), true, SBT_SHELL_DIRECT,
	  "busybox sh", NULL, NULL, "busybox" },
	{ "busybox ash script", "/bin/busybox", NULL, ARGV("busybox", "ash", "s.sh", "a"), true,
	  SBT_SHELL_SCRIPT, "busybox ash", NULL, "s.sh", "busybox" },
	{ "busybox /bin/sh (applet by path)", "/bin/busybox", NULL,
	  ARGV("/bin/busybox", "/bin/sh", "-c", "x"), true, SBT_SHELL_COMMAND, "busybox sh", "x",
	  NULL, "busybox" },
	{ "busybox hush via argv[0]", "/bin/busybox", NULL, ARGV("/bin/hush", "-c", "x"), true,
	  SBT_SHELL_COMMAND, "busybox hush", "x", NULL, "busybox" },
	{ "busybox.static sh", "/bin/busybox.static", NULL, ARGV("busybox.static", "sh"), true,
	  SBT_SHELL_DIRECT, "busybox sh", NULL, NULL, "busybox" },
	{ "busybox ls", "/bin/busybox", NULL, ARGV("busybox", "ls", "-l"), false },
	{ "busybox ls via argv[0]", "/bin/busybox", NULL, ARGV("ls", "-c"), false },
	{ "busybox alone", "/bin/busybox", NULL, ARGV("busybox"), false },
	{ "busybox --install", "/bin/busybox", NULL, ARGV("busybox", "--install", "-s"), false },
	{ .desc = "busybox argc 0", .filename = "/bin/busybox", .argc = 0, .ok = false },
	{ "toybox sh -c", "/usr/bin/toybox", NULL, ARGV("toybox", "sh", "-c", "echo"), true,
	  SBT_SHELL_COMMAND, "toybox sh", "echo", NULL, "toybox" },
	{ "toybox toysh", "/usr/bin/toybox", NULL, ARGV("toysh"), true, SBT_SHELL_DIRECT,
	  "toybox toysh", NULL, NULL, "toybox" },
	{ "toybox ls", "/usr/bin/toybox", NULL, ARGV("toybox", "ls"), false },

	/* not shells */
	{ "shellcheck", "/usr/bin/shellcheck", NULL, ARGV("shellcheck", "x.sh"), false },
	{ "ssh", "/usr/bin/ssh", NULL, ARGV("ssh", "host", "-c", "x"), false },
	{ "sha256sum", "/usr/bin/sha256sum", NULL, ARGV("sha256sum", "-c", "SUMS"), false },
	{ "bashbug", "/usr/bin/bashbug", NULL, ARGV("bashbug"), false },
	{ "python3 -c", "/usr/bin/python3", NULL, ARGV("python3", "-c", "print(1)"), false },
	{ "/bin/true", "/bin/true", NULL, ARGV("true"), false },
	{ "/usr/bin/env sh: env itself is not a shell", "/usr/bin/env", NULL, ARGV("env", "sh"),
	  false },
	{ "file named sh but argv[0] only looks like one", "/usr/bin/python3", NULL,
	  ARGV("sh", "-c", "x"), false },
	{ "empty filename", "", NULL, ARGV("sh"), false },
	{ "NULL filename", NULL, NULL, ARGV("sh", "-c", "x"), false },
	{ "NULL filename with shell interp", NULL, "/bin/sh", ARGV("/bin/sh", "x"), false },
	{ "very long non-shell name", "/usr/bin/" LONG_NAME, NULL, ARGV(LONG_NAME), false },
	{ "busybox with very long non-shell applet", "/bin/busybox", NULL,
	  ARGV("busybox", LONG_NAME), false },

	/* basename edge cases */
	{ "very long directory, shell basename", LONG_DIR "/bash", NULL, ARGV("bash", "-c", "x"),
	  true, SBT_SHELL_COMMAND, "bash", "x", NULL, NULL },
	{ "relative filename without slash", "sh", NULL, ARGV("sh"), true, SBT_SHELL_DIRECT, "sh",
	  NULL, NULL, NULL },
	{ "trailing slash", "/bin/sh/", NULL, ARGV("sh"), true, SBT_SHELL_DIRECT, "sh", NULL, NULL,
	  NULL },
	{ "several trailing slashes", "/usr//bin//bash///", NULL, ARGV("bash", "s.sh"), true,
	  SBT_SHELL_SCRIPT, "bash", NULL, "s.sh", NULL },
	{ "root only", "/", NULL, ARGV("sh"), false },
	{ "slashes only", "///", NULL, ARGV("sh"), false },
	{ "shell as a directory component", "/bin/sh/tool", NULL, ARGV("tool"), false },
	{ "busybox path with trailing slash", "/bin/busybox/", NULL, ARGV("sh"), true,
	  SBT_SHELL_DIRECT, "busybox sh", NULL, NULL, "busybox" },
};

static void assert_str_or_null(const char *got, const char *want, const char *desc, const char *f)
{
	if (!want && !got)
		return;
	if (!want || !got || strcmp(want, got) != 0) {
		print_error("case \"%s\": %s: got %s%s%s, want %s%s%s\n", desc, f, got ? "\"" : "",
			    got ? got : "NULL", got ? "\"" : "", want ? "\"" : "",
			    want ? want : "NULL", want ? "\"" : "");
		fail();
	}
}

static void assert_zeroed(const struct sbt_shell_class *out)
{
	assert_int_equal(out->kind, SBT_SHELL_NONE);
	assert_string_equal(out->shell, "");
	assert_null(out->command);
	assert_null(out->script);
	assert_null(out->multicall);
}

static void test_table(void **state)
{
	size_t i;

	assert_true(sizeof(cases) / sizeof(cases[0]) >= 40);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct shell_case *c = &cases[i];
		struct sbt_shell_class out;
		bool ok;

		memset(&out, 0x5a, sizeof(out));
		ok = sbt_shell_classify(c->filename, c->interp, c->argc ? c->argv : NULL, c->argc,
					&out);
		if (ok != c->ok) {
			print_error("case \"%s\": returned %d, want %d\n", c->desc, ok, c->ok);
			fail();
		}
		assert_true(strnlen(out.shell, SBT_SHELL_NAME_MAX) < SBT_SHELL_NAME_MAX);
		if (!c->ok) {
			assert_zeroed(&out);
			continue;
		}
		if (out.kind != c->kind) {
			print_error("case \"%s\": kind %s, want %s\n", c->desc,
				    sbt_shell_kind_name(out.kind), sbt_shell_kind_name(c->kind));
			fail();
		}
		assert_str_or_null(out.shell, c->shell, c->desc, "shell");
		assert_str_or_null(out.command, c->command, c->desc, "command");
		assert_str_or_null(out.script, c->script, c->desc, "script");
		assert_str_or_null(out.multicall, c->multicall, c->desc, "multicall");
		/* the return value alone must agree with the classification */
		assert_int_equal(sbt_shell_classify(c->filename, c->interp,
						    c->argc ? c->argv : NULL, c->argc, NULL),
				 c->ok);
	}
}

/* A shell the loader ran says so. */
static void test_loader_identified(void **state)
{
	const char *argv[] = { "ld.so", "/bin/sh", "-c", "id" };
	struct sbt_shell_class out;

	assert_true(sbt_shell_classify("/lib64/ld-linux-x86-64.so.2", NULL, argv, 4, &out));
	assert_string_equal(out.identified_by, "loader");
	assert_true(sbt_shell_classify("/bin/sh", NULL, argv + 1, 3, &out));
	assert_string_equal(out.identified_by, "name");
}

static void test_kind_name(void **state)
{
	assert_null(sbt_shell_kind_name(SBT_SHELL_NONE));
	assert_string_equal(sbt_shell_kind_name(SBT_SHELL_DIRECT), "direct");
	assert_string_equal(sbt_shell_kind_name(SBT_SHELL_COMMAND), "command");
	assert_string_equal(sbt_shell_kind_name(SBT_SHELL_SHEBANG), "shebang");
	assert_string_equal(sbt_shell_kind_name(SBT_SHELL_SCRIPT), "script");
	assert_null(sbt_shell_kind_name((enum sbt_shell_kind)99));
}

static void test_is_shell_name(void **state)
{
	static const char *const yes[] = { "sh",    "bash",  "rbash", "dash", "ash",   "zsh",
					   "ksh",   "ksh93", "mksh",  "lksh", "pdksh", "oksh",
					   "yash",  "posh",  "csh",   "tcsh", "fish",  "hush",
					   "-bash", "-sh",   "-zsh" };
	static const char *const no[] = { "shellcheck", "bashbug", "sha256sum", "ssh", "python3",
					  "env",	"busybox", "toybox",	"",    "-",
					  "--bash",	"BASH",	   "bash ",	" sh", "/bin/sh",
					  "bash5",	"shh",	   "s" };
	size_t i;

	for (i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (!sbt_is_shell_name(yes[i])) {
			print_error("\"%s\" should be a shell name\n", yes[i]);
			fail();
		}
	}
	for (i = 0; i < sizeof(no) / sizeof(no[0]); i++) {
		if (sbt_is_shell_name(no[i])) {
			print_error("\"%s\" should not be a shell name\n", no[i]);
			fail();
		}
	}
	assert_false(sbt_is_shell_name(NULL));
}

/* command and script point into argv (or at filename), not at copies. */
static void test_pointers_into_argv(void **state)
{
	const char *const cmd_argv[] = { "sh", "-ec", "make test" };
	const char *const script_argv[] = { "bash", "-x", "ci/build.sh" };
	const char *filename = "./build.sh";
	const char *const shebang_argv[] = { "/bin/sh", "./build.sh" };
	struct sbt_shell_class out;

	assert_true(sbt_shell_classify("/bin/sh", NULL, cmd_argv, 3, &out));
	assert_ptr_equal(out.command, cmd_argv[2]);
	assert_true(sbt_shell_classify("/bin/bash", NULL, script_argv, 3, &out));
	assert_ptr_equal(out.script, script_argv[2]);
	assert_true(sbt_shell_classify(filename, "/bin/sh", shebang_argv, 2, &out));
	assert_ptr_equal(out.script, filename);
	assert_null(out.command);
}

/* argv arrays sized exactly argc, without a NULL terminator: ASan flags any read past argc. */
static void test_never_reads_past_argc(void **state)
{
	static const char *const full[] = { "busybox", "sh", "-o", "pipefail", "-c", "x" };
	struct sbt_shell_class out;
	size_t n;

	for (n = 0; n <= sizeof(full) / sizeof(full[0]); n++) {
		const char **argv = NULL;

		if (n) {
			argv = malloc(n * sizeof(*argv));
			assert_non_null(argv);
			memcpy(argv, full, n * sizeof(full[0]));
		}
		(void)sbt_shell_classify("/bin/busybox", NULL, argv, n, &out);
		(void)sbt_shell_classify("/bin/bash", NULL, argv, n, &out);
		(void)sbt_shell_classify("./s", "/bin/busybox", argv, n, &out);
		free(argv);
	}
	/* truncated before the operand of -c: command mode, no command */
	{
		const char **argv = malloc(5 * sizeof(*argv));

		assert_non_null(argv);
		memcpy(argv, full, 5 * sizeof(full[0]));
		assert_true(sbt_shell_classify("/bin/busybox", NULL, argv, 5, &out));
		assert_int_equal(out.kind, SBT_SHELL_COMMAND);
		assert_null(out.command);
		/* truncated inside "-o pipefail": the value is consumed, nothing else */
		assert_true(sbt_shell_classify("/bin/busybox", NULL, argv, 3, &out));
		assert_int_equal(out.kind, SBT_SHELL_DIRECT);
		free(argv);
	}
}

/* A NULL inside argv (not expected, but argv comes from a traced process) ends the arguments. */
static void test_null_entry_in_argv(void **state)
{
	const char *const argv[] = { "sh", "-c", NULL, "hidden" };
	const char *const bb[] = { "busybox", NULL, "-c", "x" };
	struct sbt_shell_class out;

	assert_true(sbt_shell_classify("/bin/sh", NULL, argv, 4, &out));
	assert_int_equal(out.kind, SBT_SHELL_COMMAND);
	assert_null(out.command);
	assert_false(sbt_shell_classify("/bin/busybox", NULL, bb, 4, &out));
	/* a NULL argv is read as argc 0, whatever argc says */
	assert_false(sbt_shell_classify("/bin/busybox", NULL, NULL, 3, &out));
	assert_true(sbt_shell_classify("/bin/sh", NULL, NULL, 3, &out));
	assert_int_equal(out.kind, SBT_SHELL_DIRECT);
}

/* Every field is overwritten: a previous result never leaks into the next. */
static void test_out_fully_reset(void **state)
{
	const char *const cmd[] = { "bash", "-c", "x" };
	const char *const ls[] = { "busybox", "ls" };
	const char *const direct[] = { "sh" };
	struct sbt_shell_class out;

	assert_true(sbt_shell_classify("/bin/bash", NULL, cmd, 3, &out));
	assert_false(sbt_shell_classify("/bin/busybox", NULL, ls, 2, &out));
	assert_zeroed(&out);

	assert_true(sbt_shell_classify("/bin/busybox", NULL, cmd, 3, &out));
	assert_string_equal(out.shell, "busybox bash");
	assert_true(sbt_shell_classify("/bin/sh", NULL, direct, 1, &out));
	assert_string_equal(out.shell, "sh");
	assert_null(out.multicall);
	assert_null(out.command);
	assert_null(out.script);
	assert_int_equal(out.kind, SBT_SHELL_DIRECT);
}

/* The longest names the classifier can produce still fit, NUL-terminated. */
static void test_shell_name_fits(void **state)
{
	const char *const argv[] = { "busybox.static", "ksh93" };
	const char *const tb[] = { "toybox", "-pdksh" };
	struct sbt_shell_class out;

	memset(&out, 0x7f, sizeof(out));
	assert_true(sbt_shell_classify("/bin/busybox.static", NULL, argv, 2, &out));
	assert_string_equal(out.shell, "busybox ksh93");
	assert_string_equal(out.multicall, "busybox");
	/* argv[1] applets never carry a login dash: busybox would not run "-pdksh" */
	assert_false(sbt_shell_classify("/usr/bin/toybox", NULL, tb, 2, &out));
	assert_zeroed(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_loader_identified),
		cmocka_unit_test(test_kind_name),
		cmocka_unit_test(test_is_shell_name),
		cmocka_unit_test(test_pointers_into_argv),
		cmocka_unit_test(test_never_reads_past_argc),
		cmocka_unit_test(test_null_entry_in_argv),
		cmocka_unit_test(test_out_fully_reset),
		cmocka_unit_test(test_shell_name_fits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
