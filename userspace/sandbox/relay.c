// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The workload never holds the operator's terminal. Where its output would
 * go to a terminal, it gets a pipe instead, and a relay of ours (a forked
 * process on the host, outside the sandbox and its cgroup) copies what
 * comes down the pipe to the terminal with every control byte but tab, line
 * feed and carriage return written as \xNN (C1 controls and bytes that are
 * no UTF-8 too): no title, clipboard or screen escape, no ioctl on the tty
 * (stty, TIOCSTI: the workload has no terminal fd to call them on), nothing
 * read of what the operator types (its stdin is /dev/null). Output to a
 * file or a pipe goes to it directly, unchanged.
 *
 * The relay ends when every write end is closed: the workload's own (at its
 * exit; a daemon it left is killed with the cgroup) and the run's, which
 * sbt_sandbox_destroy() closes before it waits for the relay.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "internal.h"

#define RELAY_WAIT_MS 2000

/* The length of the valid UTF-8 sequence at s (n bytes there), 0 if none, -1 if cut short. */
static int utf8_len(const unsigned char *s, size_t n)
{
	int len = s[0] < 0xc2 ? 0 : s[0] < 0xe0 ? 2 : s[0] < 0xf0 ? 3 : s[0] < 0xf5 ? 4 : 0;

	if (!len)
		return 0;
	for (int i = 1; i < len; i++) {
		if ((size_t)i >= n)
			return -1;
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	}
	/* overlong, surrogates and above U+10FFFF are no UTF-8 */
	if ((len == 3 && s[0] == 0xe0 && s[1] < 0xa0) ||
	    (len == 3 && s[0] == 0xed && s[1] >= 0xa0) ||
	    (len == 4 && s[0] == 0xf0 && s[1] < 0x90) || (len == 4 && s[0] == 0xf4 && s[1] >= 0x90))
		return 0;
	return len;
}

size_t sbx_term_escape(const char *in, size_t n, char *out, size_t *keep)
{
	const unsigned char *s = (const unsigned char *)in;
	size_t o = 0, i = 0;

	while (i < n) {
		unsigned char c = s[i];
		int len = c < 0x80 ? 1 : utf8_len(s + i, n - i);

		if (len < 0 && keep) /* a sequence the next read completes */
			break;
		if (len == 1 && (c >= 0x20 || c == '\t' || c == '\n' || c == '\r') && c != 0x7f) {
			out[o++] = (char)c;
		} else if (len > 1 && !(len == 2 && c == 0xc2 && s[i + 1] < 0xa0)) {
			memcpy(out + o, s + i, (size_t)len);
			o += (size_t)len;
		} else { /* C0, DEL, C1, or a byte that is no UTF-8: each byte as \xNN */
			if (len < 1)
				len = 1;
			for (int k = 0; k < len; k++)
				o += (size_t)snprintf(out + o, 5, "\\x%02x", s[i + k]);
		}
		i += (size_t)len;
	}
	if (keep)
		*keep = n - i;
	return o;
}

static int write_all(int fd, const char *buf, size_t n)
{
	while (n) {
		ssize_t w = write(fd, buf, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		buf += w;
		n -= (size_t)w;
	}
	return 0;
}

/* The relay's loop: from r to dest, escaped, until EOF. Never returns. */
static void relay_loop(int r, int dest) __attribute__((noreturn));
static void relay_loop(int r, int dest)
{
	static char in[16384 + 4], out[4 * (16384 + 4)];
	size_t have = 0, keep;
	ssize_t n;

	for (;;) {
		n = read(r, in + have, sizeof(in) - 4 - have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) { /* EOF: what was held back is written as it is, escaped */
			_exit(write_all(dest, out, sbx_term_escape(in, have, out, NULL)) ? 1 : 0);
		}
		have += (size_t)n;
		n = (ssize_t)sbx_term_escape(in, have, out, &keep);
		if (write_all(dest, out, (size_t)n))
			_exit(1);
		memmove(in, in + have - keep, keep);
		have = keep;
	}
}

/* A relay from a new pipe to dest: its write end in *w, its pid in *pid. 0 or -errno. */
static int relay_start(int dest, int *w, pid_t *pid)
{
	int p[2];
	pid_t child;

	if (pipe2(p, O_CLOEXEC))
		return -errno;
	child = fork();
	if (child < 0) {
		int e = -errno;

		close(p[0]);
		close(p[1]);
		return e;
	}
	if (child == 0) {
		/* the shim's Ctrl-C stops the sandbox; the relay drains it to the end */
		signal(SIGINT, SIG_IGN);
		signal(SIGTERM, SIG_IGN);
		prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
		prctl(PR_SET_NAME, "sbt-relay", 0, 0, 0);
		/* above 3 and 4 first: dest may be fd 3, which the first dup2 would replace */
		int in = fcntl(p[0], F_DUPFD_CLOEXEC, 10), out = fcntl(dest, F_DUPFD_CLOEXEC, 10);

		if (in < 0 || out < 0 || dup2(in, 3) < 0 || dup2(out, 4) < 0)
			_exit(1);
		syscall(SYS_close_range, 5U, ~0U, 0U);
		close(0);
		relay_loop(3, 4);
	}
	close(p[0]);
	*w = p[1];
	*pid = child;
	return 0;
}

static bool same_tty(int a, int b)
{
	struct stat sa, sb;

	return fstat(a, &sa) == 0 && fstat(b, &sb) == 0 && sa.st_rdev == sb.st_rdev &&
	       S_ISCHR(sa.st_mode) && S_ISCHR(sb.st_mode);
}

int sbx_relay_wrap(struct sbt_sandbox_spec *spec, struct sbt_sandbox_run *run, char *err,
		   size_t errlen)
{
	int *fds[2] = { &spec->stdout_fd, &spec->stderr_fd };

	for (int i = 0; i < 2; i++) {
		int dest = *fds[i] >= 0 ? *fds[i] : i + 1, ret, j;

		if (!isatty(dest))
			continue;
		/* a relay to that terminal already (stdout's, or the run's first command's) */
		for (j = 0; j < 2; j++)
			if (run->relay_w[j] >= 0 && same_tty(dest, run->relay_dest[j]))
				break;
		if (j < 2) {
			*fds[i] = run->relay_w[j];
			continue;
		}
		run->relay_dest[i] = dest;
		ret = relay_start(dest, &run->relay_w[i], &run->relay_pid[i]);
		if (ret)
			return sbx_seterr(err, errlen, ret,
					  "the relay of the workload's output: %s", strerror(-ret));
		*fds[i] = run->relay_w[i];
	}
	return 0;
}

void sbx_relay_end(struct sbt_sandbox_run *run)
{
	for (int i = 0; i < 2; i++) {
		if (run->relay_w[i] >= 0)
			close(run->relay_w[i]);
		run->relay_w[i] = -1;
	}
	/* it drains what is left; a writer outside the cgroup (a daemon's heir) is not waited for */
	for (int i = 0; i < 2; i++) {
		for (int t = 0; run->relay_pid[i] > 0 && t < RELAY_WAIT_MS / 10; t++) {
			if (waitpid(run->relay_pid[i], NULL, WNOHANG) != 0)
				run->relay_pid[i] = 0;
			else
				usleep(10000);
		}
		if (run->relay_pid[i] > 0) {
			kill(run->relay_pid[i], SIGKILL);
			waitpid(run->relay_pid[i], NULL, 0);
		}
		run->relay_pid[i] = 0;
	}
}
