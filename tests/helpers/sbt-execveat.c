// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Test helper: run a program the way the red team hid one, through
 * execveat(AT_EMPTY_PATH) on an O_PATH descriptor, so the kernel's
 * filename is "/dev/fd/N" and no path names the file:
 *
 *   sbt-execveat FILE ARG0 [ARG...]
 *
 * Exits 127 with the error when the exec fails (that failed exec is an
 * execveat the trace reports too).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

extern char **environ;

int main(int argc, char **argv)
{
	int fd;

	if (argc < 3) {
		fprintf(stderr, "usage: sbt-execveat FILE ARG0 [ARG...]\n");
		return 2;
	}
	fd = open(argv[1], O_PATH | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "sbt-execveat: %s: %s\n", argv[1], strerror(errno));
		return 127;
	}
	syscall(SYS_execveat, fd, "", &argv[2], environ, AT_EMPTY_PATH);
	fprintf(stderr, "sbt-execveat: execveat %s: %s\n", argv[1], strerror(errno));
	return 127;
}
