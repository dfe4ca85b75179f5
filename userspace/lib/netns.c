// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <unistd.h>
#include <sys/socket.h>

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

struct ns_socket_req {
	int nsfd, domain, type, fd, err;
};

static void *ns_socket_thread(void *arg)
{
	struct ns_socket_req *r = arg;

	/* setns() changes only this thread; the socket keeps the namespace */
	if (setns(r->nsfd, CLONE_NEWNET) < 0) {
		r->err = -errno;
		return NULL;
	}
	r->fd = socket(r->domain, r->type | SOCK_CLOEXEC, 0);
	if (r->fd < 0)
		r->err = -errno;
	return NULL;
}

int sbt_socket_in_netns(int nsfd, int domain, int type)
{
	struct ns_socket_req r = { .nsfd = nsfd, .domain = domain, .type = type, .fd = -1 };
	pthread_t t;
	int fd;

	if (nsfd < 0) {
		fd = socket(domain, type | SOCK_CLOEXEC, 0);
		return fd < 0 ? -errno : fd;
	}
	if (pthread_create(&t, NULL, ns_socket_thread, &r) != 0)
		return -EAGAIN;
	pthread_join(t, NULL);
	return r.fd >= 0 ? r.fd : r.err;
}
