// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <unistd.h>

#include "io.h"

int sbt_write_all(int fd, const void *buf, size_t len)
{
	const char *c = buf;

	while (len) {
		ssize_t n = write(fd, c, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		c += n;
		len -= (size_t)n;
	}
	return 0;
}
