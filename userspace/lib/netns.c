// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <unistd.h>

#include "lib/netns.h"

int sbt_netns_path(const char *ns, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s%s", ns[0] == '/' ? "" : "/run/netns/", ns);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int sbt_netns_enter(const char *ns, int *back)
{
	char path[PATH_MAX];
	int fd, self, err;

	*back = -1;
	if (!ns || !ns[0])
		return 0;
	err = sbt_netns_path(ns, path, sizeof(path));
	if (err)
		return err;
	self = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (self < 0)
		return -errno;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || setns(fd, CLONE_NEWNET)) {
		err = -errno;
		if (fd >= 0)
			close(fd);
		close(self);
		return err;
	}
	close(fd);
	*back = self;
	return 0;
}

int sbt_netns_leave(int back)
{
	int ret = 0;

	if (back < 0)
		return 0;
	if (setns(back, CLONE_NEWNET))
		ret = -errno;
	close(back);
	return ret;
}
