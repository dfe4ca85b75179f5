// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The exec capability: three program twins share one handler; keep the
 * preferred one that loads and attaches, fall back otherwise, report all.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/libbpf.h>

#include "sbtrace.h"
#include "sbtrace.skel.h"
#include "loader.h"

static const char *const mode_names[SBT_EXEC_NR_MODES] = {
	[SBT_EXEC_TP_BTF] = "tp_btf",
	[SBT_EXEC_RAW_TP] = "raw_tp",
	[SBT_EXEC_TRACEPOINT] = "tracepoint",
};

const char *sbt_exec_mode_name(enum sbt_exec_mode m)
{
	return m < SBT_EXEC_NR_MODES ? mode_names[m] : "?";
}

int sbt_exec_mode_parse(const char *s, enum sbt_exec_mode *m)
{
	for (int i = 0; i < SBT_EXEC_NR_MODES; i++) {
		if (strcmp(s, mode_names[i]) == 0) {
			*m = (enum sbt_exec_mode)i;
			return 0;
		}
	}
	return -EINVAL;
}

static struct bpf_program *mode_prog(struct sbtrace_bpf *skel, enum sbt_exec_mode m)
{
	switch (m) {
	case SBT_EXEC_TP_BTF:
		return skel->progs.exec_tp_btf;
	case SBT_EXEC_RAW_TP:
		return skel->progs.exec_raw_tp;
	default:
		return skel->progs.exec_tracepoint;
	}
}

static void record_try(struct sbt_hook_result *res, enum sbt_exec_mode m, const char *stage,
		       int err)
{
	if (res->nr_tries >= SBT_MAX_TRIES)
		return;
	res->tries[res->nr_tries].mode = mode_names[m];
	res->tries[res->nr_tries].stage = stage;
	res->tries[res->nr_tries].err = err;
	res->nr_tries++;
}

/* Open and load with only program `m` enabled (plus the cgroup iterator if asked). */
static struct sbtrace_bpf *open_load(const struct sbt_exec_opts *opts, enum sbt_exec_mode m,
				  bool with_iter, int *errp)
{
	struct sbtrace_bpf *skel = sbtrace_bpf__open();
	int err;

	if (!skel) {
		*errp = -errno;
		return NULL;
	}
	for (int i = 0; i < SBT_EXEC_NR_MODES; i++)
		bpf_program__set_autoload(mode_prog(skel, (enum sbt_exec_mode)i), i == (int)m);
	bpf_program__set_autoload(skel->progs.cgroup_ptr, with_iter);
	skel->rodata->argv_max = opts->argv_max;
	skel->rodata->wakeup_each = opts->poll_ms == 0;
	skel->rodata->wakeup_watermark = opts->ringbuf_bytes / 4;
	err = bpf_map__set_max_entries(skel->maps.events, opts->ringbuf_bytes);
	if (!err)
		err = sbtrace_bpf__load(skel);
	if (err) {
		sbtrace_bpf__destroy(skel);
		*errp = err;
		return NULL;
	}
	return skel;
}

/*
 * tp_btf can use the cgroup iterator (membership by address); on kernels
 * without cgroup iterators the object loads without it. One object, one
 * parse of the kernel's BTF: a second object would double the loader's peak
 * memory.
 */
static int try_mode(const struct sbt_exec_opts *opts, enum sbt_exec_mode m, struct sbtrace_bpf **skelp,
		    struct bpf_link **linkp, struct sbt_hook_result *res)
{
	bool with_iter = m == SBT_EXEC_TP_BTF && !sbt_hook_disabled("cgroup_ptr");
	struct sbtrace_bpf *skel;
	struct bpf_link *link;
	int err = 0;

	skel = open_load(opts, m, with_iter, &err);
	if (!skel && with_iter) {
		res->iter_err = err;
		skel = open_load(opts, m, false, &err);
	}
	if (!skel) {
		record_try(res, m, "load", err);
		return err;
	}
	link = bpf_program__attach(mode_prog(skel, m));
	if (!link) {
		err = -errno;
		record_try(res, m, "attach", err);
		sbtrace_bpf__destroy(skel);
		return err;
	}
	record_try(res, m, "attached", 0);
	*skelp = skel;
	*linkp = link;
	res->mode = mode_names[m];
	return 0;
}

/*
 * SBTRACE_DISABLE_HOOKS=mode[,mode...] takes modes out of the automatic
 * choice: for an operator avoiding a hook, and for tests of the fallback path
 * on kernels where every mode works.
 */
bool sbt_hook_disabled(const char *mode)
{
	const char *env = getenv("SBTRACE_DISABLE_HOOKS");
	size_t len = strlen(mode);

	for (const char *p = env; p && *p;) {
		const char *end = strchr(p, ',');
		size_t n = end ? (size_t)(end - p) : strlen(p);

		if (n == len && strncmp(p, mode, len) == 0)
			return true;
		p = end ? end + 1 : NULL;
	}
	return false;
}

int sbt_exec_attach(const struct sbt_exec_opts *opts, struct sbtrace_bpf **skel,
		    struct bpf_link **link, struct sbt_hook_result *res)
{
	int err = -ENOENT;

	memset(res, 0, sizeof(*res));
	res->capability = "exec";
	if (opts->forced_mode >= 0)
		return try_mode(opts, (enum sbt_exec_mode)opts->forced_mode, skel, link, res);
	for (int m = 0; m < SBT_EXEC_NR_MODES; m++) {
		if (sbt_hook_disabled(mode_names[m])) {
			record_try(res, (enum sbt_exec_mode)m, "disabled", -EPERM);
			continue;
		}
		err = try_mode(opts, (enum sbt_exec_mode)m, skel, link, res);
		if (!err)
			return 0;
	}
	return err;
}
