// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * --cmd's and --boot-cmd's words (sbt_split_words, probe.h): simple quoting,
 * never a shell; and a shell command's words when it is a simple command
 * (probe_simple_command, site.h): the exec form that replaces it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe_int.h"
#include "site.h"

#define RUN_WORDS_MAX 64

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

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
		probe_err(err, errlen, "invalid arguments");
		return -1;
	}
	argv[0] = NULL;
	if (!s) {
		probe_err(err, errlen, "empty command");
		return -1;
	}
	word = malloc(strlen(s) + 1);
	if (!word) {
		probe_err(err, errlen, "out of memory");
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
					probe_err(err, errlen, "unterminated single quote");
					goto fail;
				}
				memcpy(word + len, p + 1, (size_t)(q - p - 1));
				len += (size_t)(q - p - 1);
				p = q + 1;
			} else if (*p == '"') {
				for (p++; *p != '"'; p++) {
					if (!*p) {
						probe_err(err, errlen, "unterminated double quote");
						goto fail;
					}
					if (*p == '\\' && (p[1] == '"' || p[1] == '\\'))
						p++;
					word[len++] = *p;
				}
				p++;
			} else if (*p == '\\') {
				if (!p[1]) {
					probe_err(err, errlen,
						  "backslash at the end of the command");
					goto fail;
				}
				word[len++] = p[1];
				p += 2;
			} else {
				word[len++] = *p++;
			}
		}
		if (argc >= max) {
			probe_err(err, errlen, "too many words (at most %d)", max);
			goto fail;
		}
		argv[argc] = strndup(word, len);
		if (!argv[argc]) {
			probe_err(err, errlen, "out of memory");
			goto fail;
		}
		argv[++argc] = NULL;
	}
	free(word);
	if (argc == 0) {
		probe_err(err, errlen, "empty command");
		return -1;
	}
	return argc;
fail:
	free(word);
	free_words(argv, argc);
	return -1;
}

int probe_simple_command(const char *cmd, char **argv, int max)
{
	char err[96];
	int n, skip = 0;

	if (!cmd || strpbrk(cmd, "|&;<>()$`*?[]{}~#!\\\n\r%") || max < 2)
		return -1;
	n = sbt_split_words(cmd, argv, max - 1, err, sizeof(err));
	if (n <= 0)
		return -1;
	for (int i = 0; i < n; i++)
		/* VAR=value cmd: the environment, not a command; '' an empty word */
		if ((i == 0 && strchr(argv[0], '=')) || !argv[i][0]) {
			for (int k = 0; k < n; k++)
				free(argv[k]);
			return -1;
		}
	if (strcmp(argv[0], "exec") == 0 && n > 1) {
		free(argv[0]);
		skip = 1;
	}
	memmove(argv, argv + skip, (size_t)(n - skip + 1) * sizeof(char *));
	return n - skip;
}

void probe_command_program(const char *const *argv, int argc, const char *text, char *out,
			   size_t len)
{
	char *words[RUN_WORDS_MAX + 1];
	const char *prog = "", *slash;
	int n = 0;

	if (argv && argc > 0)
		prog = argv[0];
	else if ((n = probe_simple_command(text, words, RUN_WORDS_MAX + 1)) > 0)
		prog = words[0];
	slash = strrchr(prog, '/');
	prog = slash ? slash + 1 : prog;
	snprintf(out, len, "%s", sbt_is_shell_name(prog) ? "" : prog);
	for (int i = 0; i < n; i++)
		free(words[i]);
}
