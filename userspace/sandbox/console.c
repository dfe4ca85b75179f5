// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The qemu backend's serial console, as the caller reads it (see sandbox.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "lib/clock.h"
#include "lib/io.h"
#include "internal.h"
#include "lib/log.h"

#define READY_LINE "SBT-GUEST-READY"
#define EXIT_LINE  "SBT-GUEST-EXIT "
/* A saved boot's init (qemu_snap.c): at the hold (without an agent: nothing to save), and its clock. */
#define HOLD_LINE	 "SBT-GUEST-HOLD"
#define HOLD_NOSAVE_LINE "SBT-GUEST-HOLD-NOSAVE"
#define CLOCK_LINE	 "SBT-GUEST-CLOCK"
/* The init's word that the guest's execs will not be visible: said on stderr too. */
#define AGENT_FAILED "sbt-guest: guest agent failed: "

void sbt_vm_console_init(struct sbt_vm_console *con)
{
	memset(con, 0, sizeof(*con));
}

/* Keep the last bytes of what was not the workload's, for error messages. */
static void con_tail(struct sbt_vm_console *con, const char *p, size_t n, bool nl)
{
	size_t cap = sizeof(con->tail) - 1, add = n + (nl ? 1 : 0);

	if (add > cap) { /* only the end of a long line */
		p += add - cap;
		n -= add - cap;
		add = cap;
	}
	if (con->tail_len + add > cap) {
		size_t drop = con->tail_len + add - cap;

		memmove(con->tail, con->tail + drop, con->tail_len - drop);
		con->tail_len -= drop;
	}
	memcpy(con->tail + con->tail_len, p, n);
	con->tail_len += n;
	if (nl)
		con->tail[con->tail_len++] = '\n';
	con->tail[con->tail_len] = '\0';
}

/* The workload's bytes to fd; to a terminal with its controls escaped (relay.c). */
static void con_out(struct sbt_vm_console *con, int fd, const char *p, size_t n)
{
	char esc[4 * 512];

	if (con->out_failed || !n)
		return;
	if (isatty(fd)) {
		for (size_t o = 0; o < n && !con->out_failed; o += 512) {
			size_t k = n - o < 512 ? n - o : 512;

			if (sbt_write_all(fd, esc, sbx_term_escape(p + o, k, esc, NULL)))
				con->out_failed = true;
		}
		return;
	}
	if (sbt_write_all(fd, p, n))
		con->out_failed = true; /* e.g. EPIPE: the VM runs on, its output is dropped */
}

/*
 * "SBT-GUEST-EXIT-<nonce> <0-255>" with the console's nonce, else (none
 * set) "SBT-GUEST-EXIT <0-255>"; a CR before the end tolerated. The code or -1.
 */
static int exit_marker(const struct sbt_vm_console *con, const char *l, size_t n)
{
	char want[sizeof(EXIT_LINE) + sizeof(con->exit_nonce) + 2];
	size_t k;
	int code = 0;

	if (con->exit_nonce[0])
		snprintf(want, sizeof(want), "SBT-GUEST-EXIT-%s ", con->exit_nonce);
	else
		snprintf(want, sizeof(want), "%s", EXIT_LINE);
	k = strlen(want);
	if (n && l[n - 1] == '\r')
		n--;
	if (n <= k || n > k + 3 || memcmp(l, want, k) != 0)
		return -1;
	for (size_t i = k; i < n; i++) {
		if (l[i] < '0' || l[i] > '9')
			return -1;
		code = code * 10 + (l[i] - '0');
	}
	return code <= 255 ? code : -1;
}

void sbt_vm_console_nonce(struct sbt_vm_console *con, const char *nonce)
{
	snprintf(con->exit_nonce, sizeof(con->exit_nonce), "%s", nonce);
}

void sbt_vm_console_mark(struct sbt_vm_console *con, const char *mark)
{
	snprintf(con->mark, sizeof(con->mark), "%s", mark);
	con->mark_len = strlen(con->mark);
}

/* A complete workload line with the caller's mark: kept, not forwarded. */
static bool con_marked(struct sbt_vm_console *con, const char *l, size_t n)
{
	if (!con->mark_len || n < con->mark_len || memcmp(l, con->mark, con->mark_len) != 0)
		return false;
	l += con->mark_len;
	n -= con->mark_len;
	if (n && l[n - 1] == '\r')
		n--;
	if (con->marks_len + n + 2 > sizeof(con->marks)) {
		con->marks_dropped++;
		return true;
	}
	memcpy(con->marks + con->marks_len, l, n);
	con->marks_len += n;
	con->marks[con->marks_len++] = '\n';
	con->marks[con->marks_len] = '\0';
	return true;
}

/* l (n bytes, a CR at its end tolerated) is exactly the marker m. */
static bool is_line(const char *l, size_t n, const char *m)
{
	size_t k = strlen(m);

	if (n == k + 1 && l[k] == '\r')
		n--;
	return n == k && memcmp(l, m, k) == 0;
}

/* One line (without its newline; `complete`: it had one). */
static void con_line(struct sbt_vm_console *con, int out_fd, bool complete)
{
	const char *l = con->line;
	size_t n = con->len;
	int code;

	/* whoever said it: the caller names it as what the console said */
	if (memmem(l, n, "No space left on device", 23))
		con->no_space = true;
	switch (con->phase) {
	case SBT_VM_BOOTING:
		if (complete && is_line(l, n, READY_LINE)) {
			con->phase = SBT_VM_RUNNING;
			con->ready_ns = sbt_clock_ns(CLOCK_MONOTONIC);
			con->pending_nl = false;
			con->mid_line = false;
			break;
		}
		if (complete && (is_line(l, n, HOLD_LINE) || is_line(l, n, HOLD_NOSAVE_LINE))) {
			con->hold = is_line(l, n, HOLD_LINE) ? 1 : 2;
			break;
		}
		if (complete && is_line(l, n, CLOCK_LINE)) {
			con->clock_asked = true;
			break;
		}
		if (n >= sizeof(AGENT_FAILED) - 1 &&
		    memcmp(l, AGENT_FAILED, sizeof(AGENT_FAILED) - 1) == 0)
			sbt_log("%.*s", (int)n, l);
		con_tail(con, l, n, complete);
		break;
	case SBT_VM_RUNNING:
		code = con->mid_line ? -1 : exit_marker(con, l, n);
		if (code >= 0 && complete) {
			/* the newline before the marker is init's, not the workload's */
			con->phase = SBT_VM_EXITED;
			con->exit_code = code;
			con->exit_ns = sbt_clock_ns(CLOCK_MONOTONIC);
			con->pending_nl = false;
			break;
		}
		if (complete && !con->mid_line && con_marked(con, l, n))
			break;
		if (con->pending_nl)
			con_out(con, out_fd, "\n", 1);
		con_out(con, out_fd, l, n);
		con->pending_nl = complete;
		con->mid_line = !complete;
		break;
	case SBT_VM_EXITED:
		con_tail(con, l, n, complete);
		break;
	}
	con->len = 0;
}

void sbt_vm_console_feed(struct sbt_vm_console *con, const char *buf, size_t n, int out_fd)
{
	for (size_t i = 0; i < n; i++) {
		if (buf[i] == '\n') {
			con_line(con, out_fd, true);
			continue;
		}
		/* A full buffer is no marker: pass it on as part of a longer line. */
		if (con->len == sizeof(con->line))
			con_line(con, out_fd, false);
		con->line[con->len++] = buf[i];
	}
}

void sbt_vm_console_eof(struct sbt_vm_console *con, int out_fd)
{
	if (con->len)
		con_line(con, out_fd, false);
	if (con->phase == SBT_VM_RUNNING && con->pending_nl) {
		con_out(con, out_fd, "\n", 1); /* the VM died: the workload's line stays whole */
		con->pending_nl = false;
	}
}

long sbt_sandbox_console(struct sbt_sandbox_run *run, int out_fd)
{
	char buf[16384];
	ssize_t n;

	if (run->console_fd < 0)
		return 0;
	do
		n = read(run->console_fd, buf, sizeof(buf));
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK ? -EAGAIN : -errno;
	if (n == 0) {
		sbt_vm_console_eof(&run->con, out_fd);
		close(run->console_fd);
		run->console_fd = -1;
		return 0;
	}
	sbt_vm_console_feed(&run->con, buf, (size_t)n, out_fd);
	if (run->con.hold || run->con.clock_asked)
		sbx_vm_snap_console(run); /* the guest waits for the host's answer */
	return (long)n;
}

int sbt_vm_stream_trim(struct sbt_sandbox_run *run, uint64_t cap)
{
	struct stat st;
	off_t upto;
	int fd, ret = 0;

	if (!run->exec_stream[0] || !cap)
		return 0;
	fd = open(run->exec_stream, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) == 0 && (uint64_t)st.st_blocks * 512 > cap) {
		/* the oldest data goes: a reader that comes to it finds a gap, never a cut stream */
		upto = (off_t)(((uint64_t)st.st_size - cap / 2) & ~(uint64_t)4095);
		if (upto > 0 && fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, upto))
			ret = -errno;
		else if (upto > 0)
			ret = 1;
	}
	close(fd);
	return ret;
}
