// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* sd_notify(3)'s protocol, plain (notify.h). */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>

#include "cmd/notify.h"

/* A service manager that stopped reading must not hang the agent: 5 s, then -EAGAIN. */
#define NOTIFY_SEND_TIMEOUT_SEC 5

/* $NOTIFY_SOCKET as an address: '/' a path, '@' an abstract name. Its length, or -errno. */
static int notify_addr(const char *name, struct sockaddr_un *sun)
{
	size_t n = strlen(name);

	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	if (name[0] != '/' && name[0] != '@')
		return -EINVAL;
	if (name[0] == '@' && n == 1)
		return -EINVAL;
	/* a path keeps its NUL inside sun_path; an abstract name is counted, not terminated */
	if (n >= sizeof(sun->sun_path) + (name[0] == '@'))
		return -ENAMETOOLONG;
	memcpy(sun->sun_path, name, n);
	if (name[0] == '@') {
		sun->sun_path[0] = '\0';
		return (int)(offsetof(struct sockaddr_un, sun_path) + n);
	}
	return (int)(offsetof(struct sockaddr_un, sun_path) + n + 1);
}

int sbt_notify(const char *state)
{
	const char *name = getenv(SBT_NOTIFY_ENV);
	struct timeval tv = { .tv_sec = NOTIFY_SEND_TIMEOUT_SEC };
	struct sockaddr_un sun;
	int fd, len, ret = 0;

	if (!state || !state[0])
		return -EINVAL;
	if (!name || !name[0])
		return 0;
	len = notify_addr(name, &sun);
	if (len < 0)
		return len;
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	(void)setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	while (sendto(fd, state, strlen(state), MSG_NOSIGNAL, (struct sockaddr *)&sun,
		      (socklen_t)len) < 0) {
		if (errno == EINTR)
			continue;
		ret = errno == EWOULDBLOCK ? -EAGAIN : -errno;
		break;
	}
	close(fd);
	return ret;
}
