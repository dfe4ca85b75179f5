// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* --cmd's and --boot-cmd's words (sbt_split_words, probe.h): simple quoting, never a shell. */
#include <stdlib.h>
#include <string.h>

#include "probe_int.h"

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
