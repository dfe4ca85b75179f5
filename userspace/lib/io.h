/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef SBT_IO_H
#define SBT_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Write all `len` bytes (short writes continued, EINTR retried). 0 or -errno. */
int sbt_write_all(int fd, const void *buf, size_t len);

/*
 * Read all of fd, at most `cap` bytes, into a malloc'd NUL-terminated buffer.
 * NULL with *errp set (EFBIG beyond cap, ENOMEM, or read's errno).
 */
char *sbt_read_capped(int fd, size_t cap, size_t *lenp, int *errp);

/*
 * A regular file's content (`path` relative to `dirfd`, or AT_FDCWD), at most
 * `cap` bytes, NUL-terminated. Opened O_NONBLOCK (a FIFO cannot hang the
 * caller) and refused unless regular, and before a byte is read when its
 * size is beyond cap. NULL with *errp: open's errno, EINVAL (not a regular
 * file: *kind says what it is, e.g. "a character device"), EFBIG (beyond
 * cap), ENOMEM or read's.
 */
char *sbt_read_regular(int dirfd, const char *path, size_t cap, size_t *lenp, int *errp,
		       const char **kind);

/* sbt_write_atomic's flags. */
#define SBT_ATOMIC_SYNC_DIR 0x1u /* fsync the directory too: the rename itself survives a crash */

/*
 * Replace `path` with `len` bytes of `buf` at once: a reader sees the old file
 * or the new one, never a part. The bytes go to a new file in path's
 * directory (.NAME.tmp.XXXXXX, permissions `mode` as given, the umask not
 * applied), which is fsync'd and renamed over path (a symlink there is
 * replaced, not followed); with SBT_ATOMIC_SYNC_DIR the directory is fsync'd
 * after. 0, or -errno with nothing left behind: the temporary file removed,
 * path as it was. The one exception: -errno from the directory's fsync comes
 * when the new content is already in place (it may not survive a crash).
 * -EINVAL for an empty path or one that ends in '/'.
 */
int sbt_write_atomic(const char *path, const void *buf, size_t len, mode_t mode,
		     unsigned int flags);

/*
 * A growing string, for text made in memory (a report's dialects, a
 * Dockerfile): printf-appended; on ENOMEM s is freed and stays NULL, and
 * failed is set (later adds do nothing).
 */
struct sbt_strbuf {
	char *s;
	size_t len, cap;
	bool failed;
};

void sbt_strbuf_add(struct sbt_strbuf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* The text (never NULL unless it failed: "" for nothing added); the caller frees it. */
char *sbt_strbuf_done(struct sbt_strbuf *b);

#endif
