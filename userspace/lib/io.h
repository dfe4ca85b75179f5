/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef SBT_IO_H
#define SBT_IO_H

#include <stddef.h>

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

#endif
