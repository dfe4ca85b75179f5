// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Is the boot's workload ready? It listens: a TCP (v4 or v6) socket in
 * LISTEN, or a listening unix socket, in the boot's network namespace.
 *
 * Seen by polling /proc/PID/net/{tcp,tcp6,unix} of one process of the boot
 * from the probe's tick, not by a BPF hook (sock:inet_sock_set_state to
 * TCP_LISTEN): the tracepoint sees no unix socket, and a hook would widen
 * the event ABI for a question the sandbox's own network namespace answers
 * (every process of a netns shares these files). A socket counts only when
 * a process of the boot's cgroup holds it (its inode among their fds): the
 * namespace also holds sbtrace's own DNS proxy, listening on its loopback.
 * The cost is one tick's delay and a few small reads per poll.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "probe_int.h"

#define TCP_LISTEN_STATE 0x0A	  /* include/net/tcp_states.h: TCP_LISTEN */
#define UNIX_ACCEPTCON	 0x10000u /* __SO_ACCEPTCON: listen() was called */
#define UNIX_UNCONNECTED 1	  /* SS_UNCONNECTED, as a listening socket is */

bool probe_tcp_line_listens(const char *line)
{
	unsigned int st;

	/* "  0: 0100007F:1F90 00000000:0000 0A ...": sl, local, remote, st */
	return sscanf(line, " %*[0-9]: %*[0-9A-Fa-f]:%*x %*[0-9A-Fa-f]:%*x %x", &st) == 1 &&
	       st == TCP_LISTEN_STATE;
}

bool probe_unix_line_listens(const char *line)
{
	unsigned long flags;
	unsigned int type, st;

	/* "0000000000000000: 00000002 00000000 00010000 0001 01 12345 /path" */
	return sscanf(line, "%*[0-9A-Fa-f]: %*x %*x %lx %x %x", &flags, &type, &st) == 3 &&
	       (flags & UNIX_ACCEPTCON) && st == UNIX_UNCONNECTED;
}

unsigned long probe_net_line_inode(const char *line, int field)
{
	const char *p = line;
	char *end;
	unsigned long v;

	for (int i = 1; i < field; i++) { /* skip field-1 blank-separated fields */
		p += strspn(p, " \t");
		if (!*p)
			return 0;
		p += strcspn(p, " \t\n");
	}
	p += strspn(p, " \t");
	v = strtoul(p, &end, 10);
	return end != p && (*end == ' ' || *end == '\t' || *end == '\n' || !*end) ? v : 0;
}

#define OWNED_MAX 4096

/* The socket inodes the boot's processes hold (their fds). */
struct owned {
	unsigned long ino[OWNED_MAX];
	size_t n;
};

static void owned_add_pid(struct owned *o, pid_t pid)
{
	char path[64], link[64], full[PATH_MAX];
	struct dirent *e;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	d = opendir(path);
	while (d && (e = readdir(d)) && o->n < OWNED_MAX) {
		ssize_t n;

		if (e->d_name[0] == '.' ||
		    (size_t)snprintf(full, sizeof(full), "%s/%s", path, e->d_name) >= sizeof(full))
			continue;
		n = readlink(full, link, sizeof(link) - 1);
		if (n <= 0)
			continue;
		link[n] = '\0';
		if (strncmp(link, "socket:[", 8) == 0)
			o->ino[o->n++] = strtoul(link + 8, NULL, 10);
	}
	if (d)
		closedir(d);
}

/*
 * Each process of the cgroup dir and below (depth levels at most) to fn,
 * until it returns true: that pid, or 0.
 */
static pid_t each_pid(const char *dir, int depth, bool (*fn)(pid_t pid, void *arg), void *arg)
{
	char path[PATH_MAX];
	pid_t found = 0;
	struct dirent *e;
	FILE *f;
	DIR *d;
	int pid;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	f = fopen(path, "re");
	while (f && !found && fscanf(f, "%d", &pid) == 1)
		if (pid > 0 && fn(pid, arg))
			found = pid;
	if (f)
		fclose(f);
	if (found || depth <= 0 || !(d = opendir(dir)))
		return found;
	while (!found && (e = readdir(d)))
		if (e->d_type == DT_DIR && e->d_name[0] != '.' &&
		    (size_t)snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) < sizeof(path))
			found = each_pid(path, depth - 1, fn, arg);
	closedir(d);
	return found;
}

static bool owned_add(pid_t pid, void *arg)
{
	owned_add_pid(arg, pid);
	return false;
}

static bool owned_has(const struct owned *o, unsigned long ino)
{
	for (size_t i = 0; ino && i < o->n; i++)
		if (o->ino[i] == ino)
			return true;
	return false;
}

/*
 * 1 when a line of /proc/PID/net/NAME listens on a socket the boot holds
 * (inode in field ino_field), 0 when none, -1 unreadable.
 */
static int file_listens(pid_t pid, const char *name, bool (*listens)(const char *), int ino_field,
			const struct owned *o)
{
	char path[64], *line = NULL;
	size_t cap = 0;
	int found = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/net/%s", (int)pid, name);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (!found && getline(&line, &cap, f) > 0)
		found = listens(line) && owned_has(o, probe_net_line_inode(line, ino_field));
	free(line);
	fclose(f);
	return found;
}

static bool other_netns(pid_t pid, const struct stat *own)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d/ns/net", (int)pid);
	return stat(path, &st) == 0 && (st.st_ino != own->st_ino || st.st_dev != own->st_dev);
}

/*
 * A process of the cgroup dir (or below, depth levels at most) that the
 * test takes: in another network namespace than the probe's (podman's
 * conmon, in the host's, is not the container), or its PID 1. Or 0.
 */
typedef bool (*pid_test)(pid_t pid, const struct stat *own);

struct pid_find {
	const struct stat *own;
	pid_test ok;
};

static bool find_one(pid_t pid, void *arg)
{
	const struct pid_find *f = arg;

	return f->ok(pid, f->own);
}

static pid_t pid_below(const char *dir, const struct stat *own, int depth, pid_test ok)
{
	struct pid_find f = { .own = own, .ok = ok };

	return each_pid(dir, depth, find_one, &f);
}

int probe_boot_listening(const struct probe_ctx *p)
{
	static struct owned o; /* 32 KiB, one tick at a time */
	char dir[PATH_MAX + 8];
	struct stat own;
	pid_t pid;
	int tcp, tcp6, unx;

	if (stat("/proc/self/ns/net", &own))
		return -1;
	if (p->boot.source == BOOT_DOCKERFILE) {
		snprintf(dir, sizeof(dir), "%s/boot", p->run.cgroup_path);
		pid = pid_below(dir, &own, 4, other_netns);
	} else {
		/* the ns backend's init: the sandbox's network namespace, which the boot shares */
		pid = p->run.pid > 0 && other_netns(p->run.pid, &own) ? p->run.pid : 0;
	}
	if (pid <= 0)
		return -1;
	o.n = 0;
	each_pid(p->boot.source == BOOT_DOCKERFILE ? dir : p->run.cgroup_path, 4, owned_add, &o);
	tcp = file_listens(pid, "tcp", probe_tcp_line_listens, PROBE_TCP_INODE_FIELD, &o);
	tcp6 = tcp > 0 ? 0
		       : file_listens(pid, "tcp6", probe_tcp_line_listens, PROBE_TCP_INODE_FIELD,
				      &o);
	unx = tcp > 0 || tcp6 > 0 ? 0
				  : file_listens(pid, "unix", probe_unix_line_listens,
						 PROBE_UNIX_INODE_FIELD, &o);
	if (tcp > 0 || tcp6 > 0 || unx > 0)
		return 1;
	return tcp < 0 && tcp6 < 0 && unx < 0 ? -1 : 0;
}

/* The value of a "Name:\tvalue" line of /proc/PID/status, or NULL. */
static const char *status_field(const char *status, const char *name)
{
	size_t n = strlen(name);

	for (const char *l = status; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL)
		if (strncmp(l, name, n) == 0 && l[n] == ':')
			return l + n + 1;
	return NULL;
}

bool probe_status_pid1(const char *status)
{
	const char *v = status_field(status, "NSpid"), *last = NULL;
	char *end;

	/* "NSpid:\t4711\t1": the last number is its pid in its own namespace */
	while (v && *v && *v != '\n') {
		while (*v == ' ' || *v == '\t')
			v++;
		if (*v < '0' || *v > '9')
			break;
		last = v;
		strtol(v, &end, 10);
		v = end;
	}
	return last && strtol(last, NULL, 10) == 1;
}

bool probe_status_term_handled(const char *status)
{
	const char *fields[] = { "SigCgt", "SigIgn" };
	unsigned long long bit = 1ull << (SIGTERM - 1);

	for (int i = 0; i < 2; i++) {
		const char *v = status_field(status, fields[i]);

		if (v && strtoull(v, NULL, 16) & bit)
			return true;
	}
	return false;
}

/* /proc/PID/status into buf. 0, or -1. */
static int read_status(pid_t pid, char *buf, size_t len)
{
	char path[64];
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = '\0';
	return 0;
}

static bool ns_pid1(pid_t pid, const struct stat *own)
{
	char status[4096];

	(void)own;
	return read_status(pid, status, sizeof(status)) == 0 && probe_status_pid1(status);
}

int probe_boot_term_handled(const struct probe_ctx *p)
{
	char dir[PATH_MAX + 8], status[4096];
	pid_t pid;

	if (p->boot.source != BOOT_DOCKERFILE)
		return 1; /* init's child, not a PID 1: the kernel delivers its SIGTERM */
	snprintf(dir, sizeof(dir), "%s/boot", p->run.cgroup_path);
	pid = pid_below(dir, NULL, 4, ns_pid1);
	if (pid <= 0 || read_status(pid, status, sizeof(status)))
		return -1;
	return probe_status_term_handled(status);
}
