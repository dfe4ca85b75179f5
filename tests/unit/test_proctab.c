// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for the process table and the /proc lookup. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "exec/proctab.h"

/* --- a mock lookup callback ------------------------------------------ */

struct mock_proc {
	uint32_t pid;
	uint32_t ppid;
	const char *comm;
	bool in_sandbox;
};

struct mock_ctx {
	const struct mock_proc *procs;
	size_t nr;
	unsigned int calls;
};

static bool mock_lookup(uint32_t pid, struct sbt_proc_info *out, void *ctx)
{
	struct mock_ctx *m = ctx;
	size_t i;

	m->calls++;
	for (i = 0; i < m->nr; i++) {
		if (m->procs[i].pid != pid)
			continue;
		out->pid = pid;
		out->ppid = m->procs[i].ppid;
		/* Fill every byte so the table must terminate the comm itself. */
		memset(out->comm, 'Z', sizeof(out->comm));
		memcpy(out->comm, m->procs[i].comm,
		       strnlen(m->procs[i].comm, sizeof(out->comm) - 1) + 1);
		out->in_sandbox = m->procs[i].in_sandbox;
		return true;
	}
	return false;
}

static void assert_anc(const struct sbt_ancestor *a, uint32_t pid, const char *comm,
		       enum sbt_ancestor_source source)
{
	assert_int_equal(a->pid, pid);
	assert_non_null(memchr(a->comm, '\0', sizeof(a->comm)));
	assert_string_equal(a->comm, comm);
	assert_int_equal(a->source, source);
}

/* True when the table alone knows `pid` (no callback, no parent comm). */
static bool table_has(struct sbt_proctab *tab, uint32_t pid, char comm[SBT_COMM_LEN])
{
	struct sbt_ancestor a;

	if (sbt_proctab_ancestors(tab, pid, NULL, &a, 1) != 1)
		return false;
	assert_int_equal(a.source, SBT_ANC_EXEC);
	if (comm)
		memcpy(comm, a.comm, SBT_COMM_LEN);
	return true;
}

/* --- proctab ---------------------------------------------------------- */

static void test_chain_from_exec(void **state)
{
	struct sbt_proctab *tab = sbt_proctab_new(NULL, NULL);
	struct sbt_ancestor out[SBT_MAX_ANCESTORS];
	size_t n;

	assert_non_null(tab);
	sbt_proctab_exec(tab, 50, 40, "make");
	sbt_proctab_exec(tab, 60, 50, "npm");
	sbt_proctab_exec(tab, 70, 60, "node");
	sbt_proctab_exec(tab, 999, 3, "unrelated");

	/* The child of 70: its parent first, then outwards; 40 is unknown. */
	n = sbt_proctab_ancestors(tab, 70, "node", out, SBT_MAX_ANCESTORS);
	assert_int_equal(n, 3);
	assert_anc(&out[0], 70, "node", SBT_ANC_EXEC);
	assert_anc(&out[1], 60, "npm", SBT_ANC_EXEC);
	assert_anc(&out[2], 50, "make", SBT_ANC_EXEC);

	/* The event's parent comm is ignored once the parent is known. */
	n = sbt_proctab_ancestors(tab, 60, "other", out, SBT_MAX_ANCESTORS);
	assert_int_equal(n, 2);
	assert_anc(&out[0], 60, "npm", SBT_ANC_EXEC);
	sbt_proctab_free(tab);
}

static void test_unknown_parent_event(void **state)
{
	struct mock_ctx m = { 0 };
	struct sbt_proctab *tab = sbt_proctab_new(mock_lookup, &m);
	struct sbt_ancestor out[SBT_MAX_ANCESTORS];
	size_t n;

	assert_non_null(tab);
	n = sbt_proctab_ancestors(tab, 99, "bash", out, SBT_MAX_ANCESTORS);
	assert_int_equal(n, 1);
	assert_anc(&out[0], 99, "bash", SBT_ANC_EVENT);
	assert_int_equal(m.calls, 1);

	assert_int_equal(sbt_proctab_ancestors(tab, 99, NULL, out, SBT_MAX_ANCESTORS), 0);
	assert_int_equal(sbt_proctab_ancestors(tab, 99, "", out, SBT_MAX_ANCESTORS), 0);

	/* Over-long parent comm: cut and terminated. */
	n = sbt_proctab_ancestors(tab, 99, "0123456789abcdefghij", out, SBT_MAX_ANCESTORS);
	assert_int_equal(n, 1);
	assert_anc(&out[0], 99, "0123456789abcde", SBT_ANC_EVENT);

	/* Unknown further up: no EVENT entry, just the known part. */
	sbt_proctab_exec(tab, 99, 98, "bash");
	n = sbt_proctab_ancestors(tab, 99, "zsh", out, SBT_MAX_ANCESTORS);
	assert_int_equal(n, 1);
	assert_anc(&out[0], 99, "bash", SBT_ANC_EXEC);

	/* No callback at all. */
	sbt_proctab_free(tab);
	tab = sbt_proctab_new(NULL, NULL);
	assert_non_null(tab);
	n = sbt_proctab_ancestors(tab, 7, "sh", out, SBT_MAX_ANCESTORS);
	assert_int_equal(n, 1);
	assert_anc(&out[0], 7, "sh", SBT_ANC_EVENT);
	sbt_proctab_free(tab);
}

static void test_lookup_fallback(void **state)
{
	static const struct mock_proc procs[] = {
		{ 60, 50, "npm", true },  { 50, 45, "make", true },	{ 45, 40, "bash", true },
		{ 40, 1, "sshd", false }, { 30, 20, "outside", false }, { 80, 1, "runner", true },
		{ 1, 0, "init", true },
	};
	struct mock_ctx m = { procs, sizeof(procs) / sizeof(procs[0]), 0 };
	struct sbt_proctab *tab = sbt_proctab_new(mock_lookup, &m);
	struct sbt_ancestor out[SBT_MAX_ANCESTORS];
	size_t n;

	assert_non_null(tab);
	sbt_proctab_exec(tab, 70, 60, "node");
	/* The table entry of 45 wins over the callback. */
	sbt_proctab_exec(tab, 45, 40, "bash-exec");

	n = sbt_proctab_ancestors(tab, 70, "node", out, SBT_MAX_ANCESTORS);
	assert_int_equal(n, 4);
	assert_anc(&out[0], 70, "node", SBT_ANC_EXEC);
	assert_anc(&out[1], 60, "npm", SBT_ANC_PROC);
	assert_anc(&out[2], 50, "make", SBT_ANC_PROC);
	assert_anc(&out[3], 45, "bash-exec", SBT_ANC_EXEC);
	/* 60, 50 and 40 (out of the sandbox: the walk stops, 40 excluded). */
	assert_int_equal(m.calls, 3);

	/* The immediate parent known but out of the sandbox: nothing, no EVENT. */
	n = sbt_proctab_ancestors(tab, 30, "outside", out, SBT_MAX_ANCESTORS);
	assert_int_equal(n, 0);

	/* Once 45 has exited, the callback describes it. */
	sbt_proctab_exit(tab, 45);
	n = sbt_proctab_ancestors(tab, 50, NULL, out, SBT_MAX_ANCESTORS);
	assert_int_equal(n, 2);
	assert_anc(&out[0], 50, "make", SBT_ANC_PROC);
	assert_anc(&out[1], 45, "bash", SBT_ANC_PROC);

	/* In the sandbox up to init, which is included and ends the walk. */
	n = sbt_proctab_ancestors(tab, 80, NULL, out, SBT_MAX_ANCESTORS);
	assert_int_equal(n, 2);
	assert_anc(&out[0], 80, "runner", SBT_ANC_PROC);
	assert_anc(&out[1], 1, "init", SBT_ANC_PROC);
	sbt_proctab_free(tab);
}

static void test_cycle(void **state)
{
	struct sbt_proctab *tab = sbt_proctab_new(NULL, NULL);
	struct sbt_ancestor out[SBT_MAX_ANCESTORS];
	size_t n;

	assert_non_null(tab);
	sbt_proctab_exec(tab, 10, 20, "a");
	sbt_proctab_exec(tab, 20, 30, "b");
	sbt_proctab_exec(tab, 30, 10, "c");
	n = sbt_proctab_ancestors(tab, 10, NULL, out, SBT_MAX_ANCESTORS);
	assert_int_equal(n, 3);
	assert_anc(&out[0], 10, "a", SBT_ANC_EXEC);
	assert_anc(&out[1], 20, "b", SBT_ANC_EXEC);
	assert_anc(&out[2], 30, "c", SBT_ANC_EXEC);

	/* A process that is its own parent. */
	sbt_proctab_exec(tab, 5, 5, "self");
	n = sbt_proctab_ancestors(tab, 5, NULL, out, SBT_MAX_ANCESTORS);
	assert_int_equal(n, 1);
	assert_anc(&out[0], 5, "self", SBT_ANC_EXEC);
	sbt_proctab_free(tab);
}

static void test_max_bound(void **state)
{
	struct sbt_proctab *tab = sbt_proctab_new(NULL, NULL);
	struct sbt_ancestor out[SBT_MAX_ANCESTORS + 1];
	char comm[SBT_COMM_LEN];
	uint32_t pid;
	size_t n, i;

	assert_non_null(tab);
	/* 100 <- 101 <- ... <- 139: 40 levels. */
	for (pid = 100; pid < 140; pid++) {
		snprintf(comm, sizeof(comm), "p%u", pid);
		sbt_proctab_exec(tab, pid, pid == 100 ? 2 : pid - 1, comm);
	}
	memset(out, 0xa5, sizeof(out));
	n = sbt_proctab_ancestors(tab, 139, NULL, out, SBT_MAX_ANCESTORS);
	assert_int_equal(n, SBT_MAX_ANCESTORS);
	for (i = 0; i < n; i++) {
		snprintf(comm, sizeof(comm), "p%zu", 139 - i);
		assert_anc(&out[i], (uint32_t)(139 - i), comm, SBT_ANC_EXEC);
	}
	/* Nothing written past `max`. */
	assert_int_equal(out[SBT_MAX_ANCESTORS].pid, 0xa5a5a5a5);

	assert_int_equal(sbt_proctab_ancestors(tab, 139, "x", out, 0), 0);
	assert_int_equal(out[0].pid, 139); /* untouched from the call above */
	assert_int_equal(sbt_proctab_ancestors(tab, 139, NULL, out, 1), 1);
	assert_int_equal(sbt_proctab_ancestors(tab, 500, "sh", out, 0), 0);
	sbt_proctab_free(tab);
}

static void test_pid1_and_pid0(void **state)
{
	static const struct mock_proc procs[] = {
		{ 1, 0, "systemd", false },
	};
	struct mock_ctx m = { procs, 1, 0 };
	struct sbt_proctab *tab = sbt_proctab_new(NULL, NULL);
	struct sbt_ancestor out[SBT_MAX_ANCESTORS];
	size_t n;

	assert_non_null(tab);
	/* pid 1 from the table is included, and the walk never goes past it. */
	sbt_proctab_exec(tab, 1, 5, "init");
	sbt_proctab_exec(tab, 5, 0, "beyond");
	sbt_proctab_exec(tab, 100, 1, "sh");
	n = sbt_proctab_ancestors(tab, 100, NULL, out, SBT_MAX_ANCESTORS);
	assert_int_equal(n, 2);
	assert_anc(&out[0], 100, "sh", SBT_ANC_EXEC);
	assert_anc(&out[1], 1, "init", SBT_ANC_EXEC);

	/* ppid 0 (a kernel thread's child): nothing, not even an EVENT. */
	assert_int_equal(sbt_proctab_ancestors(tab, 0, "swapper", out, SBT_MAX_ANCESTORS), 0);
	/* pid 0 from the table ends the walk and is not included. */
	n = sbt_proctab_ancestors(tab, 5, NULL, out, SBT_MAX_ANCESTORS);
	assert_int_equal(n, 1);
	assert_anc(&out[0], 5, "beyond", SBT_ANC_EXEC);
	sbt_proctab_exec(tab, 0, 1, "ignored");
	sbt_proctab_free(tab);

	/* pid 1 from the callback, outside the sandbox: excluded. */
	tab = sbt_proctab_new(mock_lookup, &m);
	assert_non_null(tab);
	sbt_proctab_exec(tab, 100, 1, "sh");
	n = sbt_proctab_ancestors(tab, 100, NULL, out, SBT_MAX_ANCESTORS);
	assert_int_equal(n, 1);
	assert_anc(&out[0], 100, "sh", SBT_ANC_EXEC);
	sbt_proctab_free(tab);
}

static void test_exit_removes(void **state)
{
	struct sbt_proctab *tab = sbt_proctab_new(NULL, NULL);
	struct sbt_ancestor out[SBT_MAX_ANCESTORS];
	size_t n;

	assert_non_null(tab);
	sbt_proctab_exec(tab, 10, 2, "bash");
	sbt_proctab_exec(tab, 11, 10, "make");
	assert_true(table_has(tab, 10, NULL));
	sbt_proctab_exit(tab, 10);
	assert_false(table_has(tab, 10, NULL));
	assert_true(table_has(tab, 11, NULL));

	n = sbt_proctab_ancestors(tab, 11, "make", out, SBT_MAX_ANCESTORS);
	assert_int_equal(n, 1);
	n = sbt_proctab_ancestors(tab, 10, "bash", out, SBT_MAX_ANCESTORS);
	assert_int_equal(n, 1);
	assert_anc(&out[0], 10, "bash", SBT_ANC_EVENT);

	/* Unknown pid, pid 0, twice: no-ops. */
	sbt_proctab_exit(tab, 12345);
	sbt_proctab_exit(tab, 0);
	sbt_proctab_exit(tab, 10);
	assert_true(table_has(tab, 11, NULL));
	sbt_proctab_free(tab);

	/* NULL is tolerated everywhere. */
	sbt_proctab_exec(NULL, 1, 0, "x");
	sbt_proctab_exit(NULL, 1);
	assert_int_equal(sbt_proctab_ancestors(NULL, 1, "x", out, SBT_MAX_ANCESTORS), 0);
	sbt_proctab_free(NULL);
}

static void test_many_entries(void **state)
{
	const uint32_t nr = SBT_PROCTAB_MAX_ENTRIES - 1;
	struct sbt_proctab *tab = sbt_proctab_new(NULL, NULL);
	char comm[SBT_COMM_LEN], want[SBT_COMM_LEN];
	uint32_t i, pid;

	assert_non_null(tab);
	/* Strided pids collide in any naive modulo hash. */
	for (i = 0; i < nr; i++) {
		pid = 2 + i * 64;
		snprintf(want, sizeof(want), "c%u", pid);
		sbt_proctab_exec(tab, pid, pid - 1, want);
	}
	for (i = 0; i < nr; i++) {
		pid = 2 + i * 64;
		snprintf(want, sizeof(want), "c%u", pid);
		assert_true(table_has(tab, pid, comm));
		assert_string_equal(comm, want);
	}
	/* Drop every other entry: the rest must stay reachable. */
	for (i = 0; i < nr; i += 2)
		sbt_proctab_exit(tab, 2 + i * 64);
	for (i = 0; i < nr; i++) {
		pid = 2 + i * 64;
		if (i % 2 == 0) {
			assert_false(table_has(tab, pid, NULL));
		} else {
			snprintf(want, sizeof(want), "c%u", pid);
			assert_true(table_has(tab, pid, comm));
			assert_string_equal(comm, want);
		}
	}
	assert_false(table_has(tab, 3, NULL));
	sbt_proctab_free(tab);
}

static void test_memory_cap(void **state)
{
	const uint32_t cap = SBT_PROCTAB_MAX_ENTRIES;
	struct sbt_proctab *tab = sbt_proctab_new(NULL, NULL);
	uint32_t pid;

	assert_non_null(tab);
	for (pid = 2; pid < 2 + cap; pid++)
		sbt_proctab_exec(tab, pid, 1, "p");
	assert_true(table_has(tab, 2, NULL));
	assert_true(table_has(tab, 1 + cap, NULL));
	/* Overwriting an entry at the cap keeps the table. */
	sbt_proctab_exec(tab, 2, 1, "q");
	assert_true(table_has(tab, 1 + cap, NULL));
	/* One more pid: the table is cleared and holds only the newcomer. */
	sbt_proctab_exec(tab, 2 + cap, 1, "new");
	assert_false(table_has(tab, 2, NULL));
	assert_false(table_has(tab, 1 + cap, NULL));
	assert_true(table_has(tab, 2 + cap, NULL));
	sbt_proctab_free(tab);
}

static void test_overwrite_on_reexec(void **state)
{
	struct sbt_proctab *tab = sbt_proctab_new(NULL, NULL);
	struct sbt_ancestor out[SBT_MAX_ANCESTORS];
	size_t n;

	assert_non_null(tab);
	sbt_proctab_exec(tab, 2, 0, "parent-a");
	sbt_proctab_exec(tab, 3, 0, "parent-b");
	sbt_proctab_exec(tab, 10, 2, "bash");
	sbt_proctab_exec(tab, 10, 3, "python3");
	n = sbt_proctab_ancestors(tab, 10, NULL, out, SBT_MAX_ANCESTORS);
	assert_int_equal(n, 2);
	assert_anc(&out[0], 10, "python3", SBT_ANC_EXEC);
	assert_anc(&out[1], 3, "parent-b", SBT_ANC_EXEC);

	/* Over-long and NULL comms. */
	sbt_proctab_exec(tab, 10, 3, "a-very-long-command-name");
	n = sbt_proctab_ancestors(tab, 10, NULL, out, 1);
	assert_int_equal(n, 1);
	assert_anc(&out[0], 10, "a-very-long-com", SBT_ANC_EXEC);
	sbt_proctab_exec(tab, 10, 3, NULL);
	n = sbt_proctab_ancestors(tab, 10, NULL, out, 1);
	assert_int_equal(n, 1);
	assert_anc(&out[0], 10, "", SBT_ANC_EXEC);
	sbt_proctab_free(tab);
}

/* --- procfs ----------------------------------------------------------- */

struct fake_proc {
	char root[64];
};

static void write_file(const char *root, uint32_t pid, const char *name, const char *data,
		       size_t len)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%u", root, pid);
	if (mkdir(path, 0755) && errno != EEXIST)
		fail_msg("mkdir %s: %s", path, strerror(errno));
	snprintf(path, sizeof(path), "%s/%u/%s", root, pid, name);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

static void write_str(const char *root, uint32_t pid, const char *name, const char *data)
{
	write_file(root, pid, name, data, strlen(data));
}

static int setup_fake_proc(void **state)
{
	struct fake_proc *fp = calloc(1, sizeof(*fp));

	if (!fp)
		return -1;
	strcpy(fp->root, "/tmp/sbt-proctab-XXXXXX");
	if (!mkdtemp(fp->root)) {
		free(fp);
		return -1;
	}
	*state = fp;
	return 0;
}

static int rm_entry(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
	return remove(path);
}

static int teardown_fake_proc(void **state)
{
	struct fake_proc *fp = *state;
	int err = nftw(fp->root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);

	free(fp);
	return err ? -1 : 0;
}

static const char *const sandbox_x[] = { "/sbtrace/x" };

static void test_procfs_parse(void **state)
{
	struct fake_proc *fp = *state;
	struct sbt_procfs_ctx ctx = { fp->root, sandbox_x, 1 };
	struct sbt_proc_info info;

	write_str(fp->root, 100, "stat", "100 (a) b (c) S 42 100 100 0 -1 4194560 0 0\n");
	write_str(fp->root, 100, "cgroup",
		  "12:cpuset:/\n11:memory:/sbtrace/x\n1:name=systemd:/init.scope\n"
		  "0::/sbtrace/x/child\n");
	memset(&info, 0xff, sizeof(info));
	assert_true(sbt_proc_lookup_procfs(100, &info, &ctx));
	assert_int_equal(info.pid, 100);
	assert_int_equal(info.ppid, 42);
	assert_string_equal(info.comm, "a) b (c");
	assert_true(info.in_sandbox);

	/* A sibling whose name extends the sandbox's is not below it. */
	write_str(fp->root, 101, "stat", "101 (sh) R 100 1 1 0");
	write_str(fp->root, 101, "cgroup", "0::/sbtrace/xy\n");
	assert_true(sbt_proc_lookup_procfs(101, &info, &ctx));
	assert_int_equal(info.ppid, 100);
	assert_string_equal(info.comm, "sh");
	assert_false(info.in_sandbox);

	/* The sandbox itself, no trailing newline; ppid at the very end. */
	write_str(fp->root, 102, "stat", "102 (x) S 7");
	write_str(fp->root, 102, "cgroup", "0::/sbtrace/x");
	assert_true(sbt_proc_lookup_procfs(102, &info, &ctx));
	assert_int_equal(info.ppid, 7);
	assert_true(info.in_sandbox);

	/* Comm longer than the kernel's: cut, terminated. */
	write_str(fp->root, 103, "stat", "103 (abcdefghijklmnopqrstuvwxyz) S 1 1\n");
	write_str(fp->root, 103, "cgroup", "0::/\n");
	assert_true(sbt_proc_lookup_procfs(103, &info, &ctx));
	assert_string_equal(info.comm, "abcdefghijklmno");
	assert_false(info.in_sandbox);

	/* Empty comm, ppid 0. */
	write_str(fp->root, 104, "stat", "104 () S 0 0\n");
	write_str(fp->root, 104, "cgroup", "0::/sbtrace/x/a/b/c\n");
	assert_true(sbt_proc_lookup_procfs(104, &info, &ctx));
	assert_string_equal(info.comm, "");
	assert_int_equal(info.ppid, 0);
	assert_true(info.in_sandbox);
}

static void test_procfs_sandbox_match(void **state)
{
	struct fake_proc *fp = *state;
	static const char *const root_sb[] = { "/" };
	static const char *const multi[] = { NULL, "", "/other", "/sbtrace/x/" };
	struct sbt_procfs_ctx ctx = { fp->root, root_sb, 1 };
	struct sbt_proc_info info;

	write_str(fp->root, 200, "stat", "200 (p) S 1\n");
	write_str(fp->root, 200, "cgroup", "0::/user.slice/session-1.scope\n");
	write_str(fp->root, 201, "stat", "201 (p) S 1\n");
	write_str(fp->root, 201, "cgroup", "0::/\n");
	write_str(fp->root, 202, "stat", "202 (p) S 1\n");
	write_str(fp->root, 202, "cgroup", "4:pids:/sbtrace/x\n3:cpu:/\n");
	write_str(fp->root, 203, "stat", "203 (p) S 1\n");
	write_str(fp->root, 203, "cgroup", "");
	write_str(fp->root, 204, "stat", "204 (p) S 1\n");
	write_str(fp->root, 204, "cgroup", "0::/other/deep\n");
	write_str(fp->root, 205, "stat", "205 (p) S 1\n");
	write_str(fp->root, 205, "cgroup", "0::\n");

	/* "/" matches every cgroup. */
	assert_true(sbt_proc_lookup_procfs(200, &info, &ctx));
	assert_true(info.in_sandbox);
	assert_true(sbt_proc_lookup_procfs(201, &info, &ctx));
	assert_true(info.in_sandbox);
	/* v1 only, or empty: known, but not in any sandbox. */
	assert_true(sbt_proc_lookup_procfs(202, &info, &ctx));
	assert_false(info.in_sandbox);
	assert_true(sbt_proc_lookup_procfs(203, &info, &ctx));
	assert_false(info.in_sandbox);
	assert_true(sbt_proc_lookup_procfs(205, &info, &ctx));
	assert_false(info.in_sandbox);

	/* Several sandboxes; NULL/empty entries ignored; trailing slash tolerated. */
	ctx.targets = multi;
	ctx.nr_targets = 4;
	assert_true(sbt_proc_lookup_procfs(204, &info, &ctx));
	assert_true(info.in_sandbox);
	assert_true(sbt_proc_lookup_procfs(200, &info, &ctx));
	assert_false(info.in_sandbox);
	write_str(fp->root, 206, "stat", "206 (p) S 1\n");
	write_str(fp->root, 206, "cgroup", "0::/sbtrace/x/leaf\n");
	assert_true(sbt_proc_lookup_procfs(206, &info, &ctx));
	assert_true(info.in_sandbox);

	/* No sandboxes at all. */
	ctx.targets = NULL;
	ctx.nr_targets = 0;
	assert_true(sbt_proc_lookup_procfs(206, &info, &ctx));
	assert_false(info.in_sandbox);
}

static void test_procfs_garbage(void **state)
{
	struct fake_proc *fp = *state;
	struct sbt_procfs_ctx ctx = { fp->root, sandbox_x, 1 };
	static const char *const bad_stats[] = {
		"",
		"garbage",
		"300 (sh",
		"300 sh) S 1",
		"300 )sh( S 1",
		"300 (sh)",
		"300 (sh) S",
		"300 (sh) S ",
		"300 (sh) S abc",
		"300 (sh)S 1",
		"300 (sh) S  1",
		"300 (sh) S 1x",
		"300 (sh) S 99999999999",
		"300 (sh) S -1",
	};
	struct sbt_proc_info info;
	size_t i;
	char *big;

	write_str(fp->root, 300, "cgroup", "0::/sbtrace/x\n");
	for (i = 0; i < sizeof(bad_stats) / sizeof(bad_stats[0]); i++) {
		write_str(fp->root, 300, "stat", bad_stats[i]);
		if (sbt_proc_lookup_procfs(300, &info, &ctx))
			fail_msg("accepted stat \"%s\"", bad_stats[i]);
	}
	/* ppid exactly UINT32_MAX still fits. */
	write_str(fp->root, 300, "stat", "300 (sh) S 4294967295 1");
	assert_true(sbt_proc_lookup_procfs(300, &info, &ctx));
	assert_int_equal(info.ppid, UINT32_MAX);

	/* Embedded NULs and a huge file: bounded, no overflow. */
	write_file(fp->root, 301, "stat", "301 (s\0h) S 5\n", 14);
	write_str(fp->root, 301, "cgroup", "0::/sbtrace/x\n");
	assert_true(sbt_proc_lookup_procfs(301, &info, &ctx));
	assert_string_equal(info.comm, "s");
	assert_int_equal(info.ppid, 5);

	big = malloc(100000);
	assert_non_null(big);
	memset(big, '(', 100000);
	write_file(fp->root, 302, "stat", big, 100000);
	write_str(fp->root, 302, "cgroup", "0::/sbtrace/x\n");
	assert_false(sbt_proc_lookup_procfs(302, &info, &ctx));
	memset(big, ')', 100000);
	write_file(fp->root, 302, "stat", big, 100000);
	assert_false(sbt_proc_lookup_procfs(302, &info, &ctx));

	/* The v2 line beyond the cgroup buffer, or cut by it: not in the sandbox. */
	write_str(fp->root, 303, "stat", "303 (sh) S 1\n");
	memset(big, 'a', 100000);
	memcpy(big, "1:name=x:/", 10);
	memcpy(big + 99980, "\n0::/sbtrace/x\n", 15);
	write_file(fp->root, 303, "cgroup", big, 99995);
	assert_true(sbt_proc_lookup_procfs(303, &info, &ctx));
	assert_false(info.in_sandbox);
	memset(big, '/', 100000);
	memcpy(big, "0::/sbtrace/x", 13);
	write_file(fp->root, 303, "cgroup", big, 100000);
	assert_true(sbt_proc_lookup_procfs(303, &info, &ctx));
	assert_false(info.in_sandbox);
	/* A NUL inside the v2 path. */
	write_file(fp->root, 303, "cgroup", "0::/sbtrace/x\0/y\n", 17);
	assert_true(sbt_proc_lookup_procfs(303, &info, &ctx));
	assert_false(info.in_sandbox);
	free(big);
}

static void test_procfs_missing(void **state)
{
	struct fake_proc *fp = *state;
	struct sbt_procfs_ctx ctx = { fp->root, sandbox_x, 1 };
	struct sbt_procfs_ctx long_root = { NULL, sandbox_x, 1 };
	struct sbt_proc_info info;
	char *root;

	/* No directory, stat only, cgroup only. */
	assert_false(sbt_proc_lookup_procfs(400, &info, &ctx));
	write_str(fp->root, 401, "stat", "401 (sh) S 1\n");
	assert_false(sbt_proc_lookup_procfs(401, &info, &ctx));
	write_str(fp->root, 402, "cgroup", "0::/sbtrace/x\n");
	assert_false(sbt_proc_lookup_procfs(402, &info, &ctx));
	assert_false(sbt_proc_lookup_procfs(0, &info, &ctx));

	/* A root too long for a path. */
	root = malloc(8192);
	assert_non_null(root);
	memset(root, 'r', 8191);
	root[8191] = '\0';
	long_root.root = root;
	assert_false(sbt_proc_lookup_procfs(401, &info, &long_root));
	free(root);
}

static void test_procfs_real_self(void **state)
{
	static const char *const everything[] = { "/" };
	struct sbt_procfs_ctx ctx = { NULL, everything, 1 }; /* NULL root: /proc */
	struct sbt_proc_info info;

	if (access("/proc/self/stat", R_OK) != 0)
		skip();
	assert_true(sbt_proc_lookup_procfs((uint32_t)getpid(), &info, &ctx));
	assert_int_equal(info.pid, (uint32_t)getpid());
	assert_int_equal(info.ppid, (uint32_t)getppid());
	assert_non_null(memchr(info.comm, '\0', sizeof(info.comm)));
}

static void test_procfs_as_callback(void **state)
{
	struct fake_proc *fp = *state;
	struct sbt_procfs_ctx ctx = { fp->root, sandbox_x, 1 };
	struct sbt_proctab *tab = sbt_proctab_new(sbt_proc_lookup_procfs, &ctx);
	struct sbt_ancestor out[SBT_MAX_ANCESTORS];
	size_t n;

	assert_non_null(tab);
	write_str(fp->root, 500, "stat", "500 (make) S 501 500 500\n");
	write_str(fp->root, 500, "cgroup", "0::/sbtrace/x/build\n");
	write_str(fp->root, 501, "stat", "501 (bash) S 502\n");
	write_str(fp->root, 501, "cgroup", "0::/sbtrace/x\n");
	write_str(fp->root, 502, "stat", "502 (sshd) S 1\n");
	write_str(fp->root, 502, "cgroup", "0::/system.slice/ssh.service\n");
	sbt_proctab_exec(tab, 510, 500, "npm");

	n = sbt_proctab_ancestors(tab, 510, "npm", out, SBT_MAX_ANCESTORS);
	assert_int_equal(n, 3);
	assert_anc(&out[0], 510, "npm", SBT_ANC_EXEC);
	assert_anc(&out[1], 500, "make", SBT_ANC_PROC);
	assert_anc(&out[2], 501, "bash", SBT_ANC_PROC);

	/* Gone from /proc and never exec'd: the event's parent comm. */
	n = sbt_proctab_ancestors(tab, 520, "sh", out, SBT_MAX_ANCESTORS);
	assert_int_equal(n, 1);
	assert_anc(&out[0], 520, "sh", SBT_ANC_EVENT);
	sbt_proctab_free(tab);
}

/* A parent that renamed itself (npm's node) shows its current name in chains. */
static void test_rename(void **state)
{
	struct sbt_proctab *tab = sbt_proctab_new(NULL, NULL);
	struct sbt_ancestor anc[4];

	(void)state;
	sbt_proctab_exec(tab, 10, 1, "node");
	sbt_proctab_rename(tab, 10, "npm run build");
	sbt_proctab_rename(tab, 99, "ghost"); /* unknown: ignored */
	assert_int_equal(sbt_proctab_ancestors(tab, 10, "x", anc, 4), 1);
	assert_string_equal(anc[0].comm, "npm run build");
	assert_int_equal(sbt_proctab_ancestors(tab, 99, "", anc, 4), 0);
	sbt_proctab_free(tab);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_chain_from_exec),
		cmocka_unit_test(test_unknown_parent_event),
		cmocka_unit_test(test_lookup_fallback),
		cmocka_unit_test(test_cycle),
		cmocka_unit_test(test_max_bound),
		cmocka_unit_test(test_pid1_and_pid0),
		cmocka_unit_test(test_exit_removes),
		cmocka_unit_test(test_many_entries),
		cmocka_unit_test(test_memory_cap),
		cmocka_unit_test(test_rename),
		cmocka_unit_test(test_overwrite_on_reexec),
		cmocka_unit_test_setup_teardown(test_procfs_parse, setup_fake_proc,
						teardown_fake_proc),
		cmocka_unit_test_setup_teardown(test_procfs_sandbox_match, setup_fake_proc,
						teardown_fake_proc),
		cmocka_unit_test_setup_teardown(test_procfs_garbage, setup_fake_proc,
						teardown_fake_proc),
		cmocka_unit_test_setup_teardown(test_procfs_missing, setup_fake_proc,
						teardown_fake_proc),
		cmocka_unit_test(test_procfs_real_self),
		cmocka_unit_test_setup_teardown(test_procfs_as_callback, setup_fake_proc,
						teardown_fake_proc),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
