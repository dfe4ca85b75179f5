// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for the service manager's readiness protocol (userspace/cmd/
 * notify.c: sbt_notify): real datagram sockets, bound at a path in a private
 * directory or at an abstract name, read back with the sender's credentials.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>

#include "cmd/notify.h"

struct listener {
	char dir[64];
	char name[sizeof(((struct sockaddr_un *)0)->sun_path) + 2]; /* as NOTIFY_SOCKET says it */
	int fd;
};

/* Bind a datagram socket at `name` ('/' a path, '@' abstract), credentials passed. */
static int listen_at(struct listener *l, const char *name)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = 2 };
	size_t n = strlen(name);
	int on = 1;
	socklen_t len;

	snprintf(l->name, sizeof(l->name), "%s", name);
	l->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (l->fd < 0 || n > sizeof(sun.sun_path))
		return -1;
	memcpy(sun.sun_path, name, n);
	if (name[0] == '@')
		sun.sun_path[0] = '\0';
	len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + (name[0] != '@'));
	if (bind(l->fd, (struct sockaddr *)&sun, len) ||
	    setsockopt(l->fd, SOL_SOCKET, SO_PASSCRED, &on, sizeof(on)) ||
	    setsockopt(l->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)))
		return -1;
	return setenv(SBT_NOTIFY_ENV, name, 1);
}

static int setup(void **state)
{
	struct listener *l = calloc(1, sizeof(*l));

	if (!l)
		return -1;
	l->fd = -1;
	snprintf(l->dir, sizeof(l->dir), "/tmp/sbt-test-notify.XXXXXX");
	if (!mkdtemp(l->dir)) {
		free(l);
		return -1;
	}
	*state = l;
	return 0;
}

static int teardown(void **state)
{
	struct listener *l = *state;
	char path[128];

	if (l->fd >= 0)
		close(l->fd);
	snprintf(path, sizeof(path), "%s/notify", l->dir);
	unlink(path);
	rmdir(l->dir);
	unsetenv(SBT_NOTIFY_ENV);
	free(l);
	return 0;
}

/* One datagram: its bytes into buf (NUL-terminated), its length; the sender's pid in *pid. */
static ssize_t receive(int fd, char *buf, size_t cap, pid_t *pid)
{
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(sizeof(struct ucred))];
	} ctl;
	struct iovec iov = { .iov_base = buf, .iov_len = cap - 1 };
	struct msghdr msg = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = ctl.b,
		.msg_controllen = sizeof(ctl.b),
	};
	struct cmsghdr *c;
	ssize_t n = recvmsg(fd, &msg, 0);

	*pid = 0;
	if (n < 0)
		return n;
	buf[n] = '\0';
	for (c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS) {
			struct ucred uc;

			memcpy(&uc, CMSG_DATA(c), sizeof(uc));
			*pid = uc.pid;
		}
	return n;
}

static void test_unset_is_noop(void **state)
{
	unsetenv(SBT_NOTIFY_ENV);
	assert_int_equal(sbt_notify("READY=1"), 0);
	setenv(SBT_NOTIFY_ENV, "", 1);
	assert_int_equal(sbt_notify("READY=1"), 0);
}

static void test_path(void **state)
{
	struct listener *l = *state;
	char path[128], buf[256];
	pid_t pid;

	snprintf(path, sizeof(path), "%s/notify", l->dir);
	assert_int_equal(listen_at(l, path), 0);
	assert_int_equal(sbt_notify("READY=1"), 0);
	/* the bytes alone (no NUL), from this process: NotifyAccess=main takes it */
	assert_int_equal(receive(l->fd, buf, sizeof(buf), &pid), 7);
	assert_string_equal(buf, "READY=1");
	assert_int_equal(pid, getpid());
	/* several assignments are one datagram */
	assert_int_equal(sbt_notify("STOPPING=1\nSTATUS=stopping: SIGTERM"), 0);
	assert_int_equal(receive(l->fd, buf, sizeof(buf), &pid), 35);
	assert_string_equal(buf, "STOPPING=1\nSTATUS=stopping: SIGTERM");
}

static void test_abstract(void **state)
{
	struct listener *l = *state;
	char name[64], buf[64];
	pid_t pid;

	snprintf(name, sizeof(name), "@sbt-test-notify/%d/%s", (int)getpid(), l->dir + 5);
	assert_int_equal(listen_at(l, name), 0);
	assert_int_equal(sbt_notify("READY=1"), 0);
	assert_int_equal(receive(l->fd, buf, sizeof(buf), &pid), 7);
	assert_string_equal(buf, "READY=1");
	assert_int_equal(pid, getpid());
}

/* The longest names that fit are sent; one byte more is refused before any socket. */
static void test_lengths(void **state)
{
	struct listener *l = *state;
	size_t max = sizeof(((struct sockaddr_un *)0)->sun_path);
	char name[256], buf[64];
	pid_t pid;

	/* abstract: all of sun_path, '@' standing for its leading NUL */
	memset(name, 'a', max);
	name[0] = '@';
	snprintf(name + max - 12, 13, "%011d.", (int)getpid());
	name[max] = '\0';
	assert_int_equal(listen_at(l, name), 0);
	assert_int_equal(sbt_notify("READY=1"), 0);
	assert_int_equal(receive(l->fd, buf, sizeof(buf), &pid), 7);
	name[max] = 'x';
	name[max + 1] = '\0';
	setenv(SBT_NOTIFY_ENV, name, 1);
	assert_int_equal(sbt_notify("READY=1"), -ENAMETOOLONG);
	/* a path: its NUL must fit too (max - 1 bytes, then max) */
	memset(name, 'p', sizeof(name));
	name[0] = '/';
	name[max - 1] = '\0';
	setenv(SBT_NOTIFY_ENV, name, 1);
	assert_int_equal(sbt_notify("READY=1"), -ENOENT);
	name[max - 1] = 'p';
	name[max] = '\0';
	setenv(SBT_NOTIFY_ENV, name, 1);
	assert_int_equal(sbt_notify("READY=1"), -ENAMETOOLONG);
}

static void test_errors(void **state)
{
	struct listener *l = *state;
	char path[128];

	snprintf(path, sizeof(path), "%s/notify", l->dir);
	setenv(SBT_NOTIFY_ENV, path, 1);
	assert_int_equal(sbt_notify("READY=1"), -ENOENT); /* nothing bound there */
	assert_int_equal(listen_at(l, path), 0);
	close(l->fd);
	l->fd = -1;
	assert_int_equal(sbt_notify("READY=1"), -ECONNREFUSED); /* bound once, nobody now */
	assert_int_equal(sbt_notify(NULL), -EINVAL);
	assert_int_equal(sbt_notify(""), -EINVAL);
	setenv(SBT_NOTIFY_ENV, "run/notify", 1); /* relative: neither form */
	assert_int_equal(sbt_notify("READY=1"), -EINVAL);
	setenv(SBT_NOTIFY_ENV, "@", 1);
	assert_int_equal(sbt_notify("READY=1"), -EINVAL);
	setenv(SBT_NOTIFY_ENV, "vsock:2:1234", 1);
	assert_int_equal(sbt_notify("READY=1"), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unset_is_noop),
		cmocka_unit_test_setup_teardown(test_path, setup, teardown),
		cmocka_unit_test_setup_teardown(test_abstract, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lengths, setup, teardown),
		cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
