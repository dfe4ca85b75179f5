/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * SHA-256 (FIPS 180-4), for content digests and cache keys. Self-contained:
 * linking libcrypto cost the loader 1.2 MiB of RSS at start-up (relocated
 * pages) for a hash only the probe uses.
 */
#ifndef SBT_SHA256_H
#define SBT_SHA256_H

#include <stddef.h>
#include <stdint.h>

struct sbt_sha256 {
	uint32_t h[8];
	uint64_t len; /* bytes hashed so far */
	uint8_t buf[64];
	size_t nbuf;
};

void sbt_sha256_init(struct sbt_sha256 *s);
void sbt_sha256_update(struct sbt_sha256 *s, const void *data, size_t len);
void sbt_sha256_final(struct sbt_sha256 *s, uint8_t out[32]);
/* Lower-case hex of a digest (65 bytes with the NUL). */
void sbt_sha256_hex(const uint8_t md[32], char hex[65]);

/* SHA-256 of an open file (read to its end): the digest / lower-case hex. 0 or -errno. */
int sbt_sha256_fd_raw(int fd, uint8_t md[32]);
int sbt_sha256_fd(int fd, char hex[65]);
/* SHA-256 of a regular file / of bytes, lower-case hex. 0 or -errno. */
int sbt_sha256_file(const char *path, char hex[65]);
void sbt_sha256_bytes(const void *data, size_t len, char hex[65]);

#endif
