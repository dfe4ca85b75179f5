// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Shell classifier: is this exec a shell, and how was it invoked? Pure logic, no allocation. */
#include <string.h>

#include "exec/shell.h"

/* A name is a (pointer, length) view: basenames are slices of paths that may end in '/'. */
struct name_view {
	const char *s;
	size_t len;
};

/* How one shell parses its arguments, as far as telling -c, -s, scripts and values apart. */
struct shell_desc {
	const char *name;
	const char *value_letters;	/* short options that consume the next argument */
	const char *const *long_values; /* long options (without "--") that consume one */
	bool long_command;		/* fish: --command CMD / --command=CMD */
};

static const char *const bash_long_values[] = { "rcfile", "init-file", NULL };
static const char *const zsh_long_values[] = { "emulate", NULL };
static const char *const yash_long_values[] = { "profile", "rcfile", NULL };
static const char *const fish_long_values[] = {
	"init-command", "debug", "debug-output", "features", "profile", "profile-startup", NULL
};

static const struct shell_desc shells[] = {
	{ "sh", "oO", bash_long_values, false },
	{ "bash", "oO", bash_long_values, false },
	{ "rbash", "oO", bash_long_values, false },
	{ "dash", "o", NULL, false },
	{ "ash", "o", NULL, false },
	{ "zsh", "o", zsh_long_values, false },
	{ "ksh", "o", NULL, false },
	{ "ksh93", "o", NULL, false },
	{ "mksh", "oT", NULL, false },
	{ "lksh", "oT", NULL, false },
	{ "pdksh", "o", NULL, false },
	{ "oksh", "o", NULL, false },
	{ "yash", "o", yash_long_values, false },
	{ "posh", "o", NULL, false },
	{ "csh", "", NULL, false },
	{ "tcsh", "", NULL, false },
	{ "fish", "oCdf", fish_long_values, true },
	{ "hush", "o", NULL, false },
	/* toybox's shell applet is also installed as "toysh" */
	{ "toysh", "o", NULL, false },
};

#define NR_SHELLS (sizeof(shells) / sizeof(shells[0]))

static bool view_eq(struct name_view v, const char *lit)
{
	size_t n = strlen(lit);

	return v.len == n && memcmp(v.s, lit, n) == 0;
}

/* basename(1) semantics without copying: trailing slashes are not part of the name. */
static struct name_view base_view(const char *path)
{
	struct name_view v = { path, strlen(path) };
	size_t i;

	while (v.len > 0 && v.s[v.len - 1] == '/')
		v.len--;
	for (i = v.len; i > 0; i--) {
		if (v.s[i - 1] == '/')
			break;
	}
	v.s += i;
	v.len -= i;
	return v;
}

/* Login shells are started with argv[0] = "-bash": one leading '-' is not part of the name. */
static struct name_view strip_login_dash(struct name_view v)
{
	if (v.len > 0 && v.s[0] == '-') {
		v.s++;
		v.len--;
	}
	return v;
}

static const struct shell_desc *find_shell(struct name_view v)
{
	size_t i;

	v = strip_login_dash(v);
	for (i = 0; i < NR_SHELLS; i++) {
		if (view_eq(v, shells[i].name))
			return &shells[i];
	}
	return NULL;
}

/* The multicall binary's canonical name ("busybox", "toybox"), or NULL. */
static const char *multicall_name(struct name_view v)
{
	if (view_eq(v, "busybox") || view_eq(v, "busybox.static"))
		return "busybox";
	if (view_eq(v, "toybox"))
		return "toybox";
	return NULL;
}

static void name_append(char *buf, size_t *pos, const char *s, size_t len)
{
	size_t room = SBT_SHELL_NAME_MAX - 1 - *pos;

	if (len > room)
		len = room;
	memcpy(buf + *pos, s, len);
	*pos += len;
	buf[*pos] = '\0';
}

/* "bash", or "busybox sh" for an applet; truncated to fit, always NUL-terminated. */
static void set_shell_name(struct sbt_shell_class *out, const char *multicall,
			   struct name_view shell)
{
	size_t pos = 0;

	shell = strip_login_dash(shell);
	out->shell[0] = '\0';
	if (multicall) {
		name_append(out->shell, &pos, multicall, strlen(multicall));
		name_append(out->shell, &pos, " ", 1);
	}
	name_append(out->shell, &pos, shell.s, shell.len);
	out->multicall = multicall;
}

/*
 * The applet a multicall binary runs: basename(argv[0]) unless that is the multicall binary
 * itself, then basename(argv[1]). *next is where the applet's own arguments start.
 */
static bool find_applet(const char *const *argv, size_t argc, struct name_view *applet,
			size_t *next)
{
	struct name_view v;

	if (argc < 1 || !argv[0])
		return false;
	v = strip_login_dash(base_view(argv[0]));
	if (!multicall_name(v)) {
		*applet = v;
		*next = 1;
		return true;
	}
	/* "busybox --help", "busybox --install": options of the multicall binary, not applets */
	if (argc < 2 || !argv[1] || argv[1][0] == '-')
		return false;
	*applet = base_view(argv[1]);
	*next = 2;
	return true;
}

static bool long_takes_value(const struct shell_desc *sd, const char *name, size_t len)
{
	const char *const *p;

	for (p = sd->long_values; p && *p; p++) {
		if (strlen(*p) == len && memcmp(*p, name, len) == 0)
			return true;
	}
	return false;
}

/* Number of arguments present from index i on (argv is cut at the first NULL, if any). */
static size_t args_left(const char *const *argv, size_t argc, size_t i)
{
	size_t n = 0;

	while (i + n < argc && argv[i + n])
		n++;
	return n;
}

/*
 * Walk the shell's options from argv[first]: "-c" anywhere in a '-' cluster means a command
 * (the first operand), "-s" reads stdin, otherwise the first operand is a script.
 */
static void classify_args(const struct shell_desc *sd, const char *const *argv, size_t argc,
			  size_t first, struct sbt_shell_class *out)
{
	const char *operand = NULL, *command = NULL;
	bool want_command = false, from_stdin = false, end_of_options = false;
	size_t i = first;

	while (i < argc && argv[i]) {
		const char *a = argv[i++];
		const char *p;
		size_t skip = 0;

		if (a[0] == '-' && a[1] == '-' && a[2] != '\0') {
			const char *name = a + 2;
			const char *eq = strchr(name, '=');
			size_t len = eq ? (size_t)(eq - name) : strlen(name);

			if (sd->long_command && len == 7 && memcmp(name, "command", 7) == 0) {
				want_command = true;
				if (eq) {
					command = eq + 1;
					break;
				}
			} else if (!eq && long_takes_value(sd, name, len)) {
				skip = 1;
			}
		} else if (a[0] == '-' && (a[1] == '\0' || (a[1] == '-' && a[2] == '\0'))) {
			/* "--" and a lone "-" both end the options */
			end_of_options = true;
			break;
		} else if ((a[0] == '-' || a[0] == '+') && a[1] != '\0') {
			for (p = a + 1; *p; p++) {
				if (a[0] == '-' && *p == 'c')
					want_command = true;
				else if (a[0] == '-' && *p == 's')
					from_stdin = true;
				else if (strchr(sd->value_letters, *p))
					skip++;
			}
		} else {
			operand = a;
			break;
		}
		if (skip > args_left(argv, argc, i))
			skip = args_left(argv, argc, i);
		i += skip;
	}
	if (end_of_options && args_left(argv, argc, i) > 0)
		operand = argv[i];

	if (want_command) {
		out->kind = SBT_SHELL_COMMAND;
		out->command = command ? command : operand;
	} else if (operand && !from_stdin) {
		out->kind = SBT_SHELL_SCRIPT;
		out->script = operand;
	} else {
		out->kind = SBT_SHELL_DIRECT;
	}
}

const char *sbt_shell_known(size_t i)
{
	static const char *const applets[] = { "busybox sh", "busybox ash", "busybox hush",
					       "toybox sh" };

	if (i < NR_SHELLS)
		return shells[i].name;
	i -= NR_SHELLS;
	return i < sizeof(applets) / sizeof(applets[0]) ? applets[i] : NULL;
}

const char *sbt_shell_kind_name(enum sbt_shell_kind kind)
{
	switch (kind) {
	case SBT_SHELL_DIRECT:
		return "direct";
	case SBT_SHELL_COMMAND:
		return "command";
	case SBT_SHELL_SHEBANG:
		return "shebang";
	case SBT_SHELL_SCRIPT:
		return "script";
	case SBT_SHELL_NONE:
		break;
	}
	return NULL;
}

const char *sbt_shell_name_at(size_t i)
{
	return i < NR_SHELLS ? shells[i].name : NULL;
}

bool sbt_is_shell_name(const char *name)
{
	struct name_view v;

	if (!name)
		return false;
	v.s = name;
	v.len = strlen(name);
	return find_shell(v) != NULL;
}

/* `#!` script: the interpreter decides; a non-shell interpreter (env, python) is no shell. */
static bool classify_shebang(const char *filename, const char *interp, const char *const *argv,
			     size_t argc, struct sbt_shell_class *out)
{
	struct name_view iv = base_view(interp), applet;
	const char *multicall = multicall_name(iv);
	size_t next;

	if (multicall) {
		if (!find_applet(argv, argc, &applet, &next) || !find_shell(applet))
			return false;
		set_shell_name(out, multicall, applet);
	} else {
		if (!find_shell(iv))
			return false;
		set_shell_name(out, NULL, iv);
	}
	out->kind = SBT_SHELL_SHEBANG;
	out->script = filename;
	return true;
}

static bool classify(const char *filename, const char *interp, const char *const *argv, size_t argc,
		     struct sbt_shell_class *out, int depth);

/*
 * The dynamic loader by its name: ld-linux-x86-64.so.2, ld-linux-aarch64.so.1,
 * ld-2.36.so, ld64.so.2, ld-musl-x86_64.so.1, ld.so (not ld, the linker).
 */
static bool is_loader(struct name_view v)
{
	bool so = false;

	for (size_t i = 0; i + 3 <= v.len && !so; i++)
		so = memcmp(v.s + i, ".so", 3) == 0;
	return so && ((v.len >= 3 && memcmp(v.s, "ld-", 3) == 0) ||
		      (v.len >= 5 && memcmp(v.s, "ld64.", 5) == 0) || view_eq(v, "ld.so"));
}

#define LOADER_ARGV_MAX 256 /* a loaded program's words classified (the rest are its arguments) */

/*
 * The dynamic loader run as a program, `ld.so [OPTION]... PROGRAM [ARG]...`,
 * runs PROGRAM in its own process: the kernel sees no exec of it, so the
 * loader is an interpreter here, and PROGRAM with its words (argv[0] from
 * --argv0 when given) is what is classified. --list, --verify, --help and
 * the other listings run nothing. A loader that loads a loader is followed
 * once more.
 */
static bool classify_loaded(const char *const *argv, size_t argc, struct sbt_shell_class *out,
			    int depth)
{
	static const char *const with_value[] = {
		"--library-path",	  "--inhibit-rpath",	 "--audit", "--preload", "--argv0",
		"--glibc-hwcaps-prepend", "--glibc-hwcaps-mask", NULL
	};
	static const char *const run_nothing[] = {
		"--list",	   "--verify",		 "--help", "--version",
		"--list-tunables", "--list-diagnostics", NULL
	};
	const char *words[LOADER_ARGV_MAX], *argv0 = NULL;
	size_t i = 1, n;

	if (depth > 1)
		return false;
	while (i < argc && argv[i] && strncmp(argv[i], "--", 2) == 0) {
		bool value = false;

		if (strcmp(argv[i], "--") == 0) {
			i++;
			break;
		}
		for (size_t k = 0; run_nothing[k]; k++)
			if (strcmp(argv[i], run_nothing[k]) == 0)
				return false;
		for (size_t k = 0; with_value[k]; k++)
			value |= strcmp(argv[i], with_value[k]) == 0;
		if (value && strcmp(argv[i], "--argv0") == 0 && i + 1 < argc)
			argv0 = argv[i + 1];
		i += value ? 2 : 1;
	}
	if (i >= argc || !argv[i] || !argv[i][0])
		return false;
	n = argc - i < LOADER_ARGV_MAX ? argc - i : LOADER_ARGV_MAX;
	for (size_t k = 0; k < n; k++)
		words[k] = argv[i + k];
	if (argv0)
		words[0] = argv0;
	if (!classify(argv[i], NULL, words, n, out, depth + 1))
		return false;
	out->identified_by = "loader";
	return true;
}

static bool classify(const char *filename, const char *interp, const char *const *argv, size_t argc,
		     struct sbt_shell_class *out, int depth)
{
	struct name_view fv, applet;
	const struct shell_desc *sd;
	const char *multicall;
	size_t first = 1;

	if (!filename || !filename[0])
		return false;
	if (!argv)
		argc = 0;
	if (interp && interp[0] && strcmp(interp, filename) != 0) {
		struct name_view iv = base_view(interp);

		if (classify_shebang(filename, interp, argv, argc, out))
			return true;
		/*
		 * binfmt_misc: qemu-user running a foreign shell binary (multi-arch
		 * builds). The kernel made argv [emulator, filename, args...].
		 */
		if (iv.len < 5 || memcmp(iv.s, "qemu-", 5) != 0)
			return false;
		memset(out, 0, sizeof(*out));
		fv = base_view(filename);
		sd = find_shell(fv);
		if (!sd || argc < 2)
			return false;
		set_shell_name(out, NULL, fv);
		classify_args(sd, argv, argc, 2, out);
		return true;
	} else if ((!interp || !interp[0]) && argc >= 2 && argv[1] &&
		   !find_shell(base_view(filename)) && !is_loader(base_view(filename)) &&
		   (strcmp(argv[1], filename) == 0 ||
		    (argc >= 3 && argv[2] && strcmp(argv[2], filename) == 0))) {
		/*
		 * The hook could not see bprm->interp, but the kernel's #! handler
		 * left its mark: argv = [interp, (optional arg), script, ...].
		 */
		return classify_shebang(filename, argv[0], argv, argc, out);
	}

	fv = base_view(filename);
	if (is_loader(fv))
		return classify_loaded(argv, argc, out, depth);
	multicall = multicall_name(fv);
	if (multicall) {
		if (!find_applet(argv, argc, &applet, &first))
			return false;
		sd = find_shell(applet);
		if (!sd)
			return false;
		set_shell_name(out, multicall, applet);
	} else {
		sd = find_shell(fv);
		if (!sd)
			return false;
		set_shell_name(out, NULL, fv);
	}
	/* argc 0 (possible before Linux 5.18) still ran the shell: direct, no arguments */
	classify_args(sd, argv, argc, first, out);
	return true;
}

bool sbt_shell_classify(const char *filename, const char *interp, const char *const *argv,
			size_t argc, struct sbt_shell_class *out)
{
	struct sbt_shell_class scratch;
	bool ok;

	if (!out)
		out = &scratch;
	memset(out, 0, sizeof(*out));
	ok = classify(filename, interp, argv, argc, out, 0);
	if (!ok)
		memset(out, 0, sizeof(*out));
	else if (!out->identified_by)
		out->identified_by = "name";
	return ok;
}
