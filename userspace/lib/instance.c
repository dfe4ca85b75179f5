// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* One instance per state (instance.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "lib/instance.h"

int sbt_instance_lock(const char *path, pid_t *holder)
{
	char buf[32];
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600), n;

	*holder = 0;
	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		int err = errno == EWOULDBLOCK ? -EWOULDBLOCK : -errno;

		n = (int)pread(fd, buf, sizeof(buf) - 1, 0);
		if (n > 0) {
			buf[n] = '\0';
			*holder = (pid_t)strtol(buf, NULL, 10);
		}
		close(fd);
		return err;
	}
	n = snprintf(buf, sizeof(buf), "%d\n", (int)getpid());
	if (ftruncate(fd, 0) || pwrite(fd, buf, (size_t)n, 0) != n) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

int sbt_unix_socket_live(const char *path, pid_t *peer)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct ucred cred;
	socklen_t len = sizeof(cred);
	int fd, live;

	*peer = 0;
	if (strlen(path) >= sizeof(sa.sun_path))
		return 0;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return 0;
	live = connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 || errno == EAGAIN;
	if (live && getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0)
		*peer = cred.pid;
	close(fd);
	return live;
}
