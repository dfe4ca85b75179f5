// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Reading the repo. Everything read from it is untrusted: sizes are capped,
 * only regular files are read, and a path that resolves outside the repo is
 * refused (its content would not be covered by the cache key, yet the build
 * would use it).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/io.h"
#include "probe_int.h"

void probe_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || errlen == 0)
		return;
	va_start(ap, fmt);
	// NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized)
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/*
 * Open `name` (relative, already normalized) in the repo whose real path is
 * `root`. Returns 1 and *fdp for a regular file, 0 when it is absent or not a
 * regular file, -1 with err set when it cannot be read or resolves outside
 * the repo. An absolute name is the operator's (--file outside the repo) and
 * opened as it is: no name read from the repo is ever absolute.
 */
int probe_open_repo_file(const char *root, const char *name, int *fdp, char *err, size_t errlen)
{
	char path[PATH_MAX], *real;
	size_t rlen = strlen(root);
	struct stat st;
	bool inside;
	int fd, n;

	*fdp = -1;
	/* absolute: a file the operator named outside the repo (--file), never a repo's name */
	n = name[0] == '/' ? snprintf(path, sizeof(path), "%s", name)
			   : snprintf(path, sizeof(path), "%s/%s", strcmp(root, "/") ? root : "", name);
	if (n < 0 || (size_t)n >= sizeof(path)) {
		probe_err(err, errlen, "%s: path too long", name);
		return -1;
	}
	real = realpath(path, NULL);
	if (!real) {
		if (errno == ENOENT || errno == ENOTDIR)
			return 0;
		probe_err(err, errlen, "%s: %s", name, strerror(errno));
		return -1;
	}
	if (strcmp(real, root) == 0) {
		free(real); /* the repo itself: a directory */
		return 0;
	}
	inside = name[0] == '/' || strcmp(root, "/") == 0 ||
		 (strncmp(real, root, rlen) == 0 && real[rlen] == '/');
	if (!inside) {
		probe_err(err, errlen,
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
		probe_err(err, errlen, "%s: %s", name, strerror(e));
		return -1;
	}
	free(real);
	if (fstat(fd, &st) < 0) {
		probe_err(err, errlen, "%s: %s", name, strerror(errno));
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

/* Read a repo text file (at most PROBE_TEXT_MAX). 1 = read, 0 = absent, -1 = error. */
int probe_read_repo_text(const char *root, const char *name, char **bufp, size_t *lenp, char *err,
			 size_t errlen)
{
	int fd, rc, e;

	*bufp = NULL;
	*lenp = 0;
	rc = probe_open_repo_file(root, name, &fd, err, errlen);
	if (rc <= 0)
		return rc;
	*bufp = sbt_read_capped(fd, PROBE_TEXT_MAX, lenp, &e);
	close(fd);
	if (!*bufp && e == EFBIG) {
		probe_err(err, errlen, "%s: larger than %u KiB; refusing to parse it", name,
			  PROBE_TEXT_MAX >> 10);
		return -1;
	}
	if (!*bufp) {
		probe_err(err, errlen, "%s: %s", name, strerror(e));
		return -1;
	}
	return 1;
}

/*
 * Normalize a relative path lexically ("./a//b/../c" -> "a/c"). Returns false
 * when it is absolute, empty or climbs out of the repo.
 */
bool probe_normalize_rel(const char *in, char *out, size_t outlen)
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
