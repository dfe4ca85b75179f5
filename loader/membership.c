// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The membership capability: how the exec hook recognises a sandbox task.
 * Preferred: by the sandbox cgroup's kernel address (learnt once with a
 * cgroup iterator), compared against the task's ancestor pointer; fallback:
 * the bpf_get_current_ancestor_cgroup_id() helper. Only tp_btf can use the
 * address (it has the task as a BTF pointer).
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
