// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The membership capability: how the exec hook recognises a sandbox task.
 * Preferred: by the sandbox cgroup's kernel address (learnt once with a
 * cgroup iterator), compared against the task's ancestor pointer; fallback:
 * the bpf_get_current_ancestor_cgroup_id() helper. Only tp_btf can use the
 * address (it has the task as a BTF pointer).
 *
 * The trace fills the fast table once (trace.c); the agent changes it while
 * the programs run (sbt_membership_fast_add/_del, under fast_seq: see
 * bpf/common.bpf.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "sbtrace.h"
#include "sbtrace.skel.h"
#include "loader.h"

/* Run the iterator over one cgroup; 0 and *ptr set, or -errno. */
static int learn_one(struct sbtrace_bpf *skel, const struct sbt_target *sb, uint64_t *ptr)
{
	DECLARE_LIBBPF_OPTS(bpf_iter_attach_opts, opts);
	union bpf_iter_link_info linfo;
	struct bpf_link *link;
	char buf[64];
	int dfd, ifd, err = 0;
	ssize_t n;

	dfd = open(sb->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	memset(&linfo, 0, sizeof(linfo));
	linfo.cgroup.cgroup_fd = (__u32)dfd;
	linfo.cgroup.order = BPF_CGROUP_ITER_SELF_ONLY;
	opts.link_info = &linfo;
	opts.link_info_len = sizeof(linfo);
	link = bpf_program__attach_iter(skel->progs.cgroup_ptr, &opts);
	if (!link) {
		err = -errno;
		close(dfd);
		return err;
	}
	skel->bss->found_ptr = 0;
	skel->bss->found_id = 0;
	ifd = bpf_iter_create(bpf_link__fd(link));
	if (ifd < 0) {
		err = -errno;
	} else {
		while ((n = read(ifd, buf, sizeof(buf))) > 0)
			;
		if (n < 0)
			err = -errno;
		close(ifd);
	}
	bpf_link__destroy(link);
	close(dfd);
	if (err)
		return err;
	if (!skel->bss->found_ptr || skel->bss->found_id != sb->cgroup_id ||
	    (uint32_t)skel->bss->found_level != sb->level)
		return -ESRCH; /* the iterator saw another cgroup: do not trust it */
	*ptr = skel->bss->found_ptr;
	return 0;
}

void sbt_membership_learn(const struct sbt_plan *plan, const struct sbt_target *const *targets,
			  uint32_t nr, uint64_t *ptrs, struct sbt_hook_result *res)
{
	memset(res, 0, sizeof(*res));
	res->capability = "membership";
	memset(ptrs, 0, nr * sizeof(*ptrs));
	if (!plan->exec.mode || strcmp(plan->exec.mode, "tp_btf") != 0) {
		sbt_hook_record(res, "cgroup_ptr", "unsupported", -EOPNOTSUPP);
	} else if (sbt_hook_disabled("membership", "cgroup_ptr")) {
		sbt_hook_record(res, "cgroup_ptr", "disabled", -EPERM);
	} else if (plan->iter_err || bpf_program__fd(plan->skel->progs.cgroup_ptr) < 0) {
		sbt_hook_record(res, "cgroup_ptr", "load",
				plan->iter_err ? plan->iter_err : -ENOENT);
	} else {
		int err = 0;

		for (uint32_t i = 0; i < nr && !err; i++)
			err = learn_one(plan->skel, targets[i], &ptrs[i]);
		if (!err) {
			sbt_hook_record(res, "cgroup_ptr", "attached", 0);
			res->mode = "cgroup_ptr";
			return;
		}
		sbt_hook_record(res, "cgroup_ptr", "attach", err);
		memset(ptrs, 0, nr * sizeof(*ptrs));
	}
	sbt_hook_record(res, "ancestor_id", "attached", 0);
	res->mode = "ancestor_id";
}

/*
 * The readers' check of fast_seq (bpf/common.bpf.h) holds where loads are
 * not reordered with loads; elsewhere the agent keeps to the hash map.
 */
#if defined(__x86_64__)
#define FAST_DYNAMIC 1
#else
#define FAST_DYNAMIC 0
#endif

/* One entry, a field at a time: a reader may look at it meanwhile (fast_seq tells it). */
static void fast_store(struct sbt_fast_sandbox *dst, const struct sbt_fast_sandbox *src)
{
	__atomic_store_n(&dst->cgroup_id, src->cgroup_id, __ATOMIC_RELAXED);
	__atomic_store_n(&dst->cgroup_ptr, src->cgroup_ptr, __ATOMIC_RELAXED);
	__atomic_store_n(&dst->level, src->level, __ATOMIC_RELAXED);
	__atomic_store_n(&dst->slot, src->slot, __ATOMIC_RELAXED);
}

/* fast_seq odd: the entries' stores come after it. */
static void fast_write_begin(struct sbtrace_bpf *skel)
{
	__atomic_store_n(&skel->bss->fast_seq, skel->bss->fast_seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
}

/* fast_seq even again, after the entries' stores. */
static void fast_write_end(struct sbtrace_bpf *skel)
{
	__atomic_store_n(&skel->bss->fast_seq, skel->bss->fast_seq + 1, __ATOMIC_RELEASE);
}

void sbt_membership_agent(const struct sbt_plan *plan, struct sbt_hook_result *res)
{
	uint64_t none = 0;

	if (FAST_DYNAMIC) {
		sbt_membership_learn(plan, NULL, 0, &none, res);
		return;
	}
	memset(res, 0, sizeof(*res));
	res->capability = "membership";
	sbt_hook_record(res, "ancestor_id", "attached", 0);
	res->mode = "ancestor_id";
}

int sbt_membership_fast_add(const struct sbt_plan *plan, const struct sbt_hook_result *mode,
			    const struct sbt_target *sb)
{
	struct sbtrace_bpf *skel = plan->skel;
	struct sbt_fast_sandbox e = { .cgroup_id = sb->cgroup_id,
				      .level = sb->level,
				      .slot = sb->slot };
	uint32_t n = skel->bss->nr_fast, i;
	uint64_t ptr;

	if (!FAST_DYNAMIC)
		return -EOPNOTSUPP;
	if (n >= SBT_FAST_SANDBOXES)
		return -ENOSPC;
	/* by id if its address cannot be learnt: still no map lookup */
	if (mode->mode && strcmp(mode->mode, "cgroup_ptr") == 0 && learn_one(skel, sb, &ptr) == 0)
		e.cgroup_ptr = ptr;
	fast_write_begin(skel);
	for (i = n; i > 0 && skel->bss->fast[i - 1].level < e.level; i--) /* deepest first */
		fast_store(&skel->bss->fast[i], &skel->bss->fast[i - 1]);
	fast_store(&skel->bss->fast[i], &e);
	__atomic_store_n(&skel->bss->nr_fast, n + 1, __ATOMIC_RELAXED);
	fast_write_end(skel);
	return 0;
}

bool sbt_membership_fast_del(struct sbtrace_bpf *skel, uint64_t cgroup_id)
{
	uint32_t n = skel->bss->nr_fast, i;

	for (i = 0; i < n && skel->bss->fast[i].cgroup_id != cgroup_id; i++)
		;
	if (i == n)
		return false;
	fast_write_begin(skel);
	for (; i + 1 < n; i++)
		fast_store(&skel->bss->fast[i], &skel->bss->fast[i + 1]);
	__atomic_store_n(&skel->bss->nr_fast, n - 1, __ATOMIC_RELAXED);
	fast_write_end(skel);
	return true;
}
