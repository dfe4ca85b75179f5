// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* One slot's egress in the kernel (egress_slot.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "sbtrace.h"
#include "sbtrace.skel.h"
#include "egress_slot.h"
#include "loader.h"
#include "sandbox/pins.h"
#include "lib/log.h"

int sbt_slot_set_mode(struct sbtrace_bpf *skel, uint32_t slot, uint32_t mode)
{
	if (skel->rodata->agent_modes)
		return bpf_map_update_elem(bpf_map__fd(skel->maps.agent_egress_mode), &slot, &mode,
					   BPF_ANY)
			       ? -errno
			       : 0;
	if (slot >= SBT_MAX_SANDBOXES)
		return -EINVAL;
	skel->bss->egress_mode[slot] = (uint8_t)mode;
	return 0;
}

/* The compiler's order: prefix, then address. */
static int entry_cmp(const struct sbt_policy_entry *a, const struct sbt_policy_entry *b)
{
	if (a->prefix != b->prefix)
		return a->prefix < b->prefix ? -1 : 1;
	return memcmp(a->addr, b->addr, 16);
}

static bool same_entry(const struct sbt_policy_entry *a, const struct sbt_policy_entry *b)
{
	if (a->floor != b->floor || a->floor_idx != b->floor_idx || a->nr_ports != b->nr_ports)
		return false;
	for (size_t k = 0; k < a->nr_ports && k < SBT_POLICY_PORTS; k++)
		if (a->ports[k].lo != b->ports[k].lo || a->ports[k].hi != b->ports[k].hi ||
		    a->ports[k].proto != b->ports[k].proto ||
		    a->ports[k].rule_id != b->ports[k].rule_id)
			return false;
	return true;
}

/*
 * Both lists are sorted by (prefix, address): one walk writes what changed
 * and removes what is gone (a learned address costs its own entry, not a
 * rewrite of the whole trie). Stops at the first failed write (-errno).
 */
static int sync_entries(int fd, uint32_t slot, const struct sbt_slot_policy *have,
			const struct sbt_policy_entry *want, size_t n)
{
	for (size_t i = 0, j = 0; i < n || j < have->nr;) {
		const struct sbt_policy_entry *o = j < have->nr ? &have->entries[j] : NULL;
		int c = !o ? -1 : i >= n ? 1 : entry_cmp(&want[i], o);
		struct sbt_policy_key key;
		struct sbt_policy_val val;

		if (c > 0) { /* gone now */
			sbt_policy_bpf_entry(o, slot, &key, &val);
			bpf_map_delete_elem(fd, &key);
			j++;
			continue;
		}
		if (c == 0 && same_entry(&want[i], o)) {
			i++, j++;
			continue;
		}
		sbt_policy_bpf_entry(&want[i], slot, &key, &val);
		if (bpf_map_update_elem(fd, &key, &val, BPF_ANY))
			return -errno;
		i++;
		j += c == 0;
	}
	return 0;
}

int sbt_slot_policy_write(struct sbtrace_bpf *skel, uint32_t slot, struct sbt_slot_policy *p,
			  const struct sbt_rule *rules, size_t nr_rules, char *err, size_t errlen)
{
	int fd = bpf_map__fd(skel->maps.egress_policy);
	struct sbt_policy_entry *entries;
	struct sbt_parse_error perr;
	size_t nfloor, cap;
	int n, rc;

	sbt_policy_floor(&nfloor);
	cap = nr_rules * 2 + nfloor + 1;
	entries = calloc(cap, sizeof(*entries));
	if (!entries) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	n = sbt_policy_compile(rules, nr_rules, entries, cap, &perr);
	if (n < 0) {
		snprintf(err, errlen, "%s", perr.msg);
		free(entries);
		return n;
	}
	rc = sync_entries(fd, slot, p, entries, (size_t)n);
	if (rc) {
		/* what the trie holds now is unknown between the two: clear it (denied) */
		snprintf(err, errlen, "policy map update: %s", strerror(-rc));
		sbt_slot_policy_clear(skel, slot, p);
		for (int i = 0; i < n; i++) {
			struct sbt_policy_key key;
			struct sbt_policy_val val;

			sbt_policy_bpf_entry(&entries[i], slot, &key, &val);
			bpf_map_delete_elem(fd, &key);
		}
		free(entries);
		return rc;
	}
	free(p->entries);
	p->entries = entries;
	p->nr = (size_t)n;
	/* Cached verdicts (the tap's flow cache) of the old trie are stale now. */
	__atomic_add_fetch(&skel->bss->policy_gen, 1, __ATOMIC_RELEASE);
	return 0;
}

void sbt_slot_policy_clear(struct sbtrace_bpf *skel, uint32_t slot, struct sbt_slot_policy *p)
{
	int fd = bpf_map__fd(skel->maps.egress_policy);

	for (size_t i = 0; i < p->nr; i++) {
		struct sbt_policy_key key;
		struct sbt_policy_val val;

		sbt_policy_bpf_entry(&p->entries[i], slot, &key, &val);
		bpf_map_delete_elem(fd, &key);
	}
	free(p->entries);
	p->entries = NULL;
	p->nr = 0;
	__atomic_add_fetch(&skel->bss->policy_gen, 1, __ATOMIC_RELEASE);
}

/*
 * A shim's or the probe's sandbox: pin its links under <bpffs>/sbtrace/NAME
 * (one directory lookup for all of them) so the policy outlives this
 * process (the sandbox's controller unpins it when the sandbox has ended).
 * Without bpffs the policy lasts as long as this tracer, and the shim's
 * freeze is what stops the workload: say so.
 */
void sbt_pin_enforcers(const struct sbt_target *sb, const int *link_fds, const char *const *what,
		       size_t n)
{
	char dir[PATH_MAX], path[PATH_MAX + 64];
	int dir_err = sbt_pin_dir(sb->pin_name, true, dir, sizeof(dir)), err = dir_err;

	for (size_t i = 0; !dir_err && i < n; i++) {
		snprintf(path, sizeof(path), "%s/%d-%s", dir, (int)getpid(), what[i]);
		if (bpf_obj_pin(link_fds[i], path) && !err)
			err = -errno; /* the first failure is said; the other links are still tried */
	}
	if (err)
		sbt_log("sandbox %s: cannot pin its enforcing links under bpffs (%s): should this "
			"tracer be killed, only the shim's freeze stops the workload; mount bpffs "
			"at /sys/fs/bpf",
			sb->pin_name, strerror(-err));
}

int sbt_slot_attach(struct sbtrace_bpf *skel, const struct sbt_target *t, size_t n,
		    struct bpf_link **links, size_t *nr)
{
	size_t nprogs;
	struct bpf_program *const *progs = sbt_egress_progs(skel, &nprogs);
	int cgfd = open(t->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC), err = 0;
	int fds[SBT_EGRESS_PROGS];
	const char *names[SBT_EGRESS_PROGS];
	size_t done = 0;

	if (cgfd < 0) {
		err = -errno;
		sbt_log("egress: cannot open cgroup %s: %s", t->path, strerror(-err));
		return err;
	}
	for (size_t i = 0; i < n && i < nprogs; i++) {
		struct bpf_link *l = bpf_program__attach_cgroup(progs[i], cgfd);

		if (!l) {
			err = -errno;
			sbt_log("egress: cannot attach %s to %s: %s; the kernel needs cgroup BPF "
				"(CONFIG_CGROUP_BPF)",
				bpf_program__name(progs[i]), t->name, strerror(-err));
			break;
		}
		links[(*nr)++] = l;
		fds[done] = bpf_link__fd(l);
		names[done++] = bpf_program__name(progs[i]);
	}
	close(cgfd);
	if (!err && t->pin_name[0])
		sbt_pin_enforcers(t, fds, names, done);
	return err;
}
