// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Process table: pid -> (ppid, comm), and the ancestor walk over it. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exec/proctab.h"

#define PROCTAB_INIT_CAP 64

/* Bounded reads of untrusted /proc files. */
#define PROCFS_STAT_BUF	  4096
#define PROCFS_CGROUP_BUF 8192

/* pid 0 never execs, so it marks a free slot. */
struct proc_entry {
	uint32_t pid;
	uint32_t ppid;
	char comm[SBT_COMM_LEN];
	enum sbt_ancestor_source source;
};

struct sbt_proctab {
	struct proc_entry *slots;
	size_t cap; /* power of two */
	size_t count;
	sbt_proc_lookup_fn lookup;
	void *ctx;
};

static size_t pid_hash(uint32_t pid, size_t mask)
{
	uint32_t h = pid;

	h ^= h >> 16;
	h *= 0x7feb352dU;
	h ^= h >> 15;
	h *= 0x846ca68bU;
	h ^= h >> 16;
	return h & mask;
}

static void copy_comm(char dst[SBT_COMM_LEN], const char *src)
{
	size_t len = src ? strnlen(src, SBT_COMM_LEN - 1) : 0;

	memcpy(dst, src ? src : "", len);
	memset(dst + len, 0, SBT_COMM_LEN - len);
}

struct sbt_proctab *sbt_proctab_new(sbt_proc_lookup_fn lookup, void *ctx)
{
	struct sbt_proctab *tab = calloc(1, sizeof(*tab));

	if (!tab)
		return NULL;
	tab->slots = calloc(PROCTAB_INIT_CAP, sizeof(*tab->slots));
	if (!tab->slots) {
		free(tab);
		return NULL;
	}
	tab->cap = PROCTAB_INIT_CAP;
	tab->lookup = lookup;
	tab->ctx = ctx;
	return tab;
}

void sbt_proctab_free(struct sbt_proctab *tab)
{
	if (!tab)
		return;
	free(tab->slots);
	free(tab);
}

/* The slot holding `pid`, or the free slot where it would go. */
static struct proc_entry *find_slot(const struct sbt_proctab *tab, uint32_t pid)
{
	size_t mask = tab->cap - 1;
	size_t i = pid_hash(pid, mask);

	while (tab->slots[i].pid && tab->slots[i].pid != pid)
		i = (i + 1) & mask;
	return &tab->slots[i];
}

static const struct proc_entry *find_entry(const struct sbt_proctab *tab, uint32_t pid)
{
	const struct proc_entry *e = find_slot(tab, pid);

	return e->pid ? e : NULL;
}

static int grow(struct sbt_proctab *tab)
{
	struct proc_entry *old = tab->slots;
	size_t old_cap = tab->cap;
	size_t i;

	if (old_cap > SIZE_MAX / 2 / sizeof(*old))
		return -ENOMEM;
	tab->slots = calloc(old_cap * 2, sizeof(*old));
	if (!tab->slots) {
		tab->slots = old;
		return -ENOMEM;
	}
	tab->cap = old_cap * 2;
	for (i = 0; i < old_cap; i++) {
		if (old[i].pid)
			*find_slot(tab, old[i].pid) = old[i];
	}
	free(old);
	return 0;
}

static void put(struct sbt_proctab *tab, uint32_t pid, uint32_t ppid, const char *comm,
		enum sbt_ancestor_source source)
{
	struct proc_entry *e;

	if (!tab || !pid)
		return;
	e = find_slot(tab, pid);
	if (!e->pid) {
		if (tab->count >= SBT_PROCTAB_MAX_ENTRIES) {
			memset(tab->slots, 0, tab->cap * sizeof(*tab->slots));
			tab->count = 0;
		}
		/* Load stays under 3/4; if growing fails, insert while a slot stays free. */
		if ((tab->count + 1) * 4 > tab->cap * 3 && grow(tab) && tab->count + 2 > tab->cap)
			return;
		e = find_slot(tab, pid);
		e->pid = pid;
		tab->count++;
	}
	e->ppid = ppid;
	e->source = source;
	copy_comm(e->comm, comm);
}

void sbt_proctab_exec(struct sbt_proctab *tab, uint32_t pid, uint32_t ppid, const char *comm)
{
	put(tab, pid, ppid, comm, SBT_ANC_EXEC);
}

void sbt_proctab_seen(struct sbt_proctab *tab, uint32_t pid, uint32_t ppid, const char *comm)
{
	put(tab, pid, ppid, comm, SBT_ANC_PROC);
}

void sbt_proctab_rename(struct sbt_proctab *tab, uint32_t pid, const char *comm)
{
	struct proc_entry *e;

	if (!tab || !pid || !comm || !comm[0])
		return;
	e = find_slot(tab, pid);
	if (e->pid == pid)
		copy_comm(e->comm, comm);
}

void sbt_proctab_exit(struct sbt_proctab *tab, uint32_t pid)
{
	size_t mask, i, j, home;

	if (!tab || !pid)
		return;
	mask = tab->cap - 1;
	i = (size_t)(find_slot(tab, pid) - tab->slots);
	if (!tab->slots[i].pid)
		return;
	/* Backward-shift deletion: no tombstones, probe chains stay intact. */
	for (j = (i + 1) & mask; tab->slots[j].pid; j = (j + 1) & mask) {
		home = pid_hash(tab->slots[j].pid, mask);
		if (i <= j ? (i < home && home <= j) : (i < home || home <= j))
			continue;
		tab->slots[i] = tab->slots[j];
		i = j;
	}
	memset(&tab->slots[i], 0, sizeof(tab->slots[i]));
	tab->count--;
}

static bool in_chain(const struct sbt_ancestor *out, size_t n, uint32_t pid)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (out[i].pid == pid)
			return true;
	}
	return false;
}

size_t sbt_proctab_ancestors(struct sbt_proctab *tab, uint32_t ppid, const char *parent_comm,
			     struct sbt_ancestor *out, size_t max)
{
	uint32_t pid = ppid;
	size_t n = 0;

	if (!tab || !out)
		return 0;
	while (n < max && pid != 0 && !in_chain(out, n, pid)) {
		const struct proc_entry *e = find_entry(tab, pid);
		struct sbt_proc_info info;
		uint32_t next;

		if (e) {
			out[n].pid = pid;
			copy_comm(out[n].comm, e->comm);
			out[n].source = e->source;
			next = e->ppid;
		} else {
			memset(&info, 0, sizeof(info));
			if (tab->lookup && tab->lookup(pid, &info, tab->ctx)) {
				if (!info.in_sandbox)
					break;
				info.comm[SBT_COMM_LEN - 1] = '\0';
				out[n].pid = pid;
				copy_comm(out[n].comm, info.comm);
				out[n].source = SBT_ANC_PROC;
				next = info.ppid;
				/* Remember it: the process may be gone at the next lookup. */
				put(tab, pid, info.ppid, info.comm, SBT_ANC_PROC);
			} else {
				if (n == 0 && parent_comm && parent_comm[0]) {
					out[n].pid = pid;
					copy_comm(out[n].comm, parent_comm);
					out[n].source = SBT_ANC_EVENT;
					n++;
				}
				break;
			}
		}
		n++;
		if (pid == 1)
			break;
		pid = next;
	}
	return n;
}

/* Read at most size - 1 bytes of root/pid/name, NUL-terminated; *truncated when more followed. */
static ssize_t read_proc_file(const char *root, uint32_t pid, const char *name, char *buf,
			      size_t size, bool *truncated)
{
	char path[4096];
	size_t len = 0;
	ssize_t r;
	char extra;
	int fd, n;

	n = snprintf(path, sizeof(path), "%s/%u/%s", root, pid, name);
	if (n < 0 || (size_t)n >= sizeof(path))
		return -1;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	while (len < size - 1) {
		r = read(fd, buf + len, size - 1 - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			close(fd);
			return -1;
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	*truncated = false;
	if (len == size - 1) {
		do {
			r = read(fd, &extra, 1);
		} while (r < 0 && errno == EINTR);
		*truncated = r != 0;
	}
	close(fd);
	buf[len] = '\0';
	return (ssize_t)len;
}

/* "pid (comm) S ppid ...": comm runs from the first '(' to the last ')'. */
static bool parse_stat(const char *buf, size_t len, struct sbt_proc_info *out)
{
	const char *open_paren = memchr(buf, '(', len);
	const char *close_paren = memrchr(buf, ')', len);
	const char *end = buf + len;
	const char *p;
	uint64_t ppid = 0;
	size_t comm_len;

	if (!open_paren || !close_paren || close_paren < open_paren)
		return false;
	comm_len = (size_t)(close_paren - open_paren - 1);
	if (comm_len > SBT_COMM_LEN - 1)
		comm_len = SBT_COMM_LEN - 1;
	memset(out->comm, 0, sizeof(out->comm));
	memcpy(out->comm, open_paren + 1, comm_len);

	p = close_paren + 1;
	if (end - p < 4 || p[0] != ' ' || p[1] == ' ' || p[1] == '\0' || p[2] != ' ')
		return false;
	p += 3;
	if (p == end || *p < '0' || *p > '9')
		return false;
	for (; p < end && *p >= '0' && *p <= '9'; p++) {
		ppid = ppid * 10 + (uint64_t)(*p - '0');
		if (ppid > UINT32_MAX)
			return false;
	}
	if (p < end && *p != ' ' && *p != '\n')
		return false;
	out->ppid = (uint32_t)ppid;
	return true;
}

static bool cgroup_in_sandbox(const char *path, size_t len, const struct sbt_procfs_ctx *pctx)
{
	size_t i, slen;

	for (i = 0; i < pctx->nr_targets; i++) {
		const char *s = pctx->targets ? pctx->targets[i] : NULL;

		if (!s || !s[0])
			continue;
		/* "/x/" is "/x"; "/" shrinks to "", which every absolute path lies below. */
		slen = strlen(s);
		while (slen > 0 && s[slen - 1] == '/')
			slen--;
		if (slen > len || memcmp(path, s, slen) != 0)
			continue;
		if (slen == len || path[slen] == '/')
			return true;
	}
	return false;
}

/* The cgroup v2 ("0::") line of /proc/<pid>/cgroup; hybrid systems list v1 lines too. */
static bool parse_cgroup(const char *buf, size_t len, bool truncated,
			 const struct sbt_procfs_ctx *pctx)
{
	const char *p = buf, *end = buf + len;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *line_end = nl ? nl : end;

		if (line_end - p >= 3 && memcmp(p, "0::", 3) == 0) {
			/* A line cut by the buffer could turn "/sbtrace/xy" into "/sbtrace/x". */
			if (!nl && truncated)
				return false;
			p += 3;
			if (p == line_end || *p != '/' || memchr(p, '\0', (size_t)(line_end - p)))
				return false;
			return cgroup_in_sandbox(p, (size_t)(line_end - p), pctx);
		}
		if (!nl)
			break;
		p = nl + 1;
	}
	return false;
}

bool sbt_proc_lookup_procfs(uint32_t pid, struct sbt_proc_info *out, void *ctx)
{
	const struct sbt_procfs_ctx *pctx = ctx;
	const char *root = pctx && pctx->root ? pctx->root : "/proc";
	char stat_buf[PROCFS_STAT_BUF];
	char cg_buf[PROCFS_CGROUP_BUF];
	struct sbt_proc_info info;
	bool truncated;
	ssize_t len;

	if (!out || !pid)
		return false;
	memset(&info, 0, sizeof(info));
	info.pid = pid;

	len = read_proc_file(root, pid, "stat", stat_buf, sizeof(stat_buf), &truncated);
	if (len < 0 || !parse_stat(stat_buf, (size_t)len, &info))
		return false;

	len = read_proc_file(root, pid, "cgroup", cg_buf, sizeof(cg_buf), &truncated);
	if (len < 0)
		return false;
	info.in_sandbox = pctx && parse_cgroup(cg_buf, (size_t)len, truncated, pctx);

	*out = info;
	return true;
}
