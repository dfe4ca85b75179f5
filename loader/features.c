// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* `sbtrace features`: the attach plan on this kernel, with nothing traced. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/utsname.h>

#include "lib/cgroupfs.h"
#include "event/events_run.h"
#include "loader.h"
#include "trace.h"

int sbt_features_run(const struct sbt_exec_opts *exec_opts, FILE *out)
{
	struct sbt_plan plan = { 0 };
	struct sbt_hook_result membership, tap;
	json_object *o = json_object_new_object(), *cg = json_object_new_object();
	char mnt[PATH_MAX], root[PATH_MAX];
	struct sbt_target top;
	struct utsname u;
	uint64_t ptr;
	int err;

	err = sbt_plan_attach(exec_opts, &plan);

	json_object_object_add(o, "version", json_object_new_string(SBTRACE_VERSION));
	if (uname(&u) == 0)
		json_object_object_add(o, "kernel", json_object_new_string(u.release));
	json_object_object_add(
		o, "btf", json_object_new_boolean(access("/sys/kernel/btf/vmlinux", R_OK) == 0));
	memset(&membership, 0, sizeof(membership));
	membership.capability = "membership";
	if (sbt_cgroup2_mount(mnt, sizeof(mnt), root, sizeof(root)) == 0) {
		json_object_object_add(cg, "mount", json_object_new_string(mnt));
		json_object_object_add(cg, "root", json_object_new_string(root));
		/* Probe the membership modes on the hierarchy's own top cgroup. */
		if (!err && sbt_target_from_cgroup(mnt, &top) == 0) {
			const struct sbt_target *one = &top;

			sbt_membership_learn(&plan, &one, 1, &ptr, &membership);
		}
	}
	memset(&tap, 0, sizeof(tap));
	if (!err)
		sbt_tap_probe(&plan, &tap);
	sbt_plan_destroy(&plan);
	json_object_object_add(o, "cgroup2", cg);
	json_object_object_add(o, "hooks",
			       sbt_hooks_json((const struct sbt_hook_result *const[]){
				       &plan.exec, &membership, &plan.connect, &plan.packet,
				       &plan.exec_failed, tap.capability ? &tap : NULL, NULL }));
	fprintf(out, "%s\n",
		json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
							  JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
	return err ? SBT_EXIT_KERNEL : SBT_EXIT_OK;
}
