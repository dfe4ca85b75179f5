// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Small helpers of the sandbox's parts: error text, bounded formatting, files, `ip`. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include "lib/extbin.h"
#include "internal.h"
#include "lib/io.h"

int sbx_seterr(char *err, size_t errlen, int ret, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return ret;
}

bool sbx_str_fits(char *dst, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(dst, len, fmt, ap);
	va_end(ap);
	return n >= 0 && (size_t)n < len;
}

char *sbx_slurp(const char *path, size_t max, size_t *lenp)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK), e;
	size_t len;
	char *buf;

	if (fd < 0)
		return NULL;
	buf = sbt_read_capped(fd, max, &len, &e);
	close(fd);
	if (!buf) {
		errno = e;
		return NULL;
	}
	if (lenp)
		*lenp = len;
	return buf;
}

/* Run `ip ARGS...` (allowlisted host tool); 0, or -EIO with err naming the command. */
static int ip_cmd(char *err, size_t errlen, char **argv)
{
	int st = 0, rc = sbt_run(argv, NULL, &st);
	char cmd[256] = "";

	if (rc == 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 0;
	for (char **a = argv; *a; a++)
		if (strlen(cmd) + strlen(*a) + 2 < sizeof(cmd)) {
			strcat(cmd, *a);
			strcat(cmd, " ");
		}
	return sbx_seterr(err, errlen, -EIO, "'%s' failed (%s)", cmd,
			  rc ? strerror(-rc) : "non-zero exit");
}

int sbx_ip(const char *netns, char *const *args, char *err, size_t errlen)
{
	char *argv[16];
	int n = 0;

	argv[n++] = (char *)"ip";
	if (netns) {
		argv[n++] = (char *)"-n";
		argv[n++] = (char *)netns;
	}
	for (; *args && n < 15; args++)
		argv[n++] = *args;
	argv[n] = NULL;
	return ip_cmd(err, errlen, argv);
}

/* An executable `prog` in one of PATH's directories (as execvp will look); its path to out (NULL: no). */
bool sbx_which(const char *prog, char *out, size_t outlen)
{
	const char *path = getenv("PATH"), *p, *end;
	char full[PATH_MAX];

	for (p = path && *path ? path : "/usr/local/bin:/usr/bin:/bin"; *p; p = end) {
		end = strchr(p, ':');
		if (!end)
			end = p + strlen(p);
		if (end > p &&
		    sbx_str_fits(full, sizeof(full), "%.*s/%s", (int)(end - p), p, prog) &&
		    access(full, X_OK) == 0)
			return !out || sbx_str_fits(out, outlen, "%s", full);
		if (*end == ':')
			end++;
	}
	return false;
}
