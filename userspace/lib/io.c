// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "lib/io.h"

int sbt_write_all(int fd, const void *buf, size_t len)
{
	const char *c = buf;

	while (len) {
		ssize_t n = write(fd, c, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO; /* no progress: never spin */
		c += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Read all of fd, at most `cap` bytes, NUL-terminated; NULL with *errp (EFBIG beyond cap). */
char *sbt_read_capped(int fd, size_t cap, size_t *lenp, int *errp)
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

static const char *file_kind(mode_t mode)
{
	if (S_ISDIR(mode))
		return "a directory";
	if (S_ISCHR(mode))
		return "a character device";
	if (S_ISBLK(mode))
		return "a block device";
	if (S_ISFIFO(mode))
		return "a FIFO";
	if (S_ISSOCK(mode))
		return "a socket";
	return "not a regular file";
}

char *sbt_read_regular(int dirfd, const char *path, size_t cap, size_t *lenp, int *errp,
		       const char **kind)
{
	int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	struct stat st;
	char *buf = NULL;

	*lenp = 0;
	*kind = NULL;
	if (fd < 0) {
		*errp = errno;
		return NULL;
	}
	if (fstat(fd, &st) < 0) {
		*errp = errno;
	} else if (!S_ISREG(st.st_mode)) {
		*kind = file_kind(st.st_mode);
		*errp = EINVAL;
	} else if ((unsigned long long)st.st_size > cap) {
		*errp = EFBIG; /* refused before reading a byte */
	} else {
		buf = sbt_read_capped(fd, cap, lenp, errp); /* EFBIG still if it grew */
	}
	close(fd);
	return buf;
}

/* fsync a directory (opened read-only: a directory cannot be opened for writing). */
static int sync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), ret = 0;

	if (fd < 0)
		return -errno;
	if (fsync(fd) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

/* The bytes into the new file `fd`: all of them, with its mode, on disk. */
static int fill_tmp(int fd, const void *buf, size_t len, mode_t mode)
{
	int ret = sbt_write_all(fd, buf, len);

	if (!ret && fchmod(fd, mode) < 0)
		ret = -errno;
	if (!ret && fsync(fd) < 0)
		ret = -errno;
	return ret;
}

int sbt_write_atomic(const char *path, const void *buf, size_t len, mode_t mode, unsigned int flags)
{
	const char *slash, *base;
	char tmp[PATH_MAX], dir[PATH_MAX];
	size_t dlen;
	int fd, ret;

	if (!path || !path[0] || path[strlen(path) - 1] == '/' || (!buf && len))
		return -EINVAL;
	if (strlen(path) >= PATH_MAX)
		return -ENAMETOOLONG;
	slash = strrchr(path, '/');
	base = slash ? slash + 1 : path;
	dlen = slash ? (size_t)(slash - path) : 0;
	if ((size_t)snprintf(tmp, sizeof(tmp), "%.*s%s.%s.tmp.XXXXXX", (int)dlen, path,
			     slash ? "/" : "", base) >= sizeof(tmp))
		return -ENAMETOOLONG;
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = fill_tmp(fd, buf, len, mode);
	if (close(fd) < 0 && !ret)
		ret = -errno;
	if (!ret && rename(tmp, path) < 0)
		ret = -errno;
	if (ret) {
		unlink(tmp);
		return ret;
	}
	if (!(flags & SBT_ATOMIC_SYNC_DIR))
		return 0;
	if (!slash)
		return sync_dir(".");
	if (!dlen)
		return sync_dir("/");
	snprintf(dir, sizeof(dir), "%.*s", (int)dlen, path); /* fits: tmp did */
	return sync_dir(dir);
}

void sbt_strbuf_add(struct sbt_strbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->failed)
		return;
	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || b->len + (size_t)n + 1 > b->cap) {
		size_t cap = (b->len + (size_t)(n < 0 ? 0 : n) + 1) * 2;
		char *s = n < 0 ? NULL : realloc(b->s, cap);

		if (!s) {
			free(b->s);
			b->s = NULL;
			b->failed = true;
			return;
		}
		b->s = s;
		b->cap = cap;
	}
	va_start(ap, fmt);
	vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

char *sbt_strbuf_done(struct sbt_strbuf *b)
{
	if (!b->failed && !b->s)
		sbt_strbuf_add(b, "%s", "");
	return b->s;
}
