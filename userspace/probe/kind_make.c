// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The make build kind: a Makefile, run as `make -B` (every target remade:
 * outputs already in the tree hide nothing); its recipe lines are sites.
 */
#include <stdlib.h>
#include <unistd.h>

#include "kind.h"

static const char *const makefiles[] = { "Makefile", "makefile", "GNUmakefile", NULL };

static int make_detect(const struct probe_plan_in *in, struct sbt_build_plan *plan, char *err,
		       size_t errlen)
{
	static const char *const make[] = { "make", "-B" };

	for (int i = 0; makefiles[i]; i++) {
		int fd, rc = probe_open_repo_file(in->root, makefiles[i], &fd, err, errlen);

		if (rc < 0)
			return -1;
		if (rc == 0)
			continue;
		close(fd);
		probe_why(plan, "%s (make -B: every target remade)", makefiles[i]);
		return probe_set_argv(plan, make, 2, err, errlen) < 0 ? -1 : 1;
	}
	return 0;
}

/* package.json's scripts, the first makefile's recipe lines, the catch-all. */
static int make_sites(const struct probe_kind *k, struct probe_ctx *p,
		      const struct sbt_build_plan *plan, bool boot_start, bool *has_start,
		      char *err, size_t errlen)
{
	char *buf, rerr[256];
	size_t len;
	int rc = probe_scripts_sites(p, boot_start, has_start);

	for (int i = 0; !rc && makefiles[i]; i++) {
		if (probe_read_repo_text(p->o->repo, makefiles[i], &buf, &len, rerr,
					 sizeof(rerr)) <= 0)
			continue;
		rc = probe_sites_make(&p->sites, makefiles[i], buf, len);
		free(buf);
		break;
	}
	if (rc || probe_sites_other(&p->sites, k->instruction, k->file)) {
		probe_err(err, errlen, "out of memory");
		return -1;
	}
	return 0;
}

const struct probe_kind probe_kind_make = {
	.name = "make",
	.label = "make",
	.looked_for = "a Makefile",
	.inputs = makefiles,
	.instruction = "recipe",
	.detect = make_detect,
	.sites = make_sites,
};
