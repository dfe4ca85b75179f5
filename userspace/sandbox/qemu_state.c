// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The qemu backend's state file fields (the tap, its netns, the guest's
 * addresses, the accelerator, the boot, the exec stream) and its gc: what a
 * shim that is gone left (the tap, STATE_DIR/NAME.vm). qemu.c's table
 * points here.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <arpa/inet.h>
#include <json-c/json.h>

#include "internal.h"
#include "lib/log.h"

void sbx_vm_dir_remove(const char *dir)
{
	char p[PATH_MAX];

	if (!dir[0])
		return;
	if (sbx_str_fits(p, sizeof(p), "%s/initrd", dir))
		unlink(p);
	if (sbx_str_fits(p, sizeof(p), "%s/exec.stream", dir))
		unlink(p);
	if (sbx_str_fits(p, sizeof(p), "%s/disk", dir))
		unlink(p);
	if (sbx_str_fits(p, sizeof(p), "%s/ctl", dir))
		unlink(p);
	rmdir(dir);
}

void sbx_qemu_state_write(struct json_object *o, const struct sbt_sandbox_run *run)
{
	struct json_object *addrs;

	json_object_object_add(o, "tap", json_object_new_string(run->tap));
	json_object_object_add(o, "tap_netns", json_object_new_string(run->tap_netns));
	json_object_object_add(o, "tap_ifindex", json_object_new_int(run->tap_ifindex));
	addrs = json_object_new_array();
	for (int i = 0; i < run->nr_guest_addrs && i < SBT_VM_MAX_ADDRS; i++)
		json_object_array_add(addrs, json_object_new_string(run->guest_addrs[i]));
	json_object_object_add(o, "guest_addrs", addrs);
	json_object_object_add(o, "accel", json_object_new_string(run->accel));
	json_object_object_add(o, "boot", json_object_new_string(run->boot));
	if (run->boot_why[0])
		json_object_object_add(o, "boot_why", json_object_new_string(run->boot_why));
	if (run->exec_stream[0])
		json_object_object_add(o, "exec_stream", json_object_new_string(run->exec_stream));
}

/*
 * "exec_stream", optional: STATE_DIR/NAME.vm/exec.stream, absolute, in the
 * real path of the directory the state file is in.
 */
static int parse_exec_stream(struct json_object *root, struct sbt_sandbox_state *st,
			     const struct sbx_state_ctx *v)
{
	const char *slash = strrchr(v->path, '/');
	char dir[PATH_MAX], real[PATH_MAX], want[PATH_MAX];
	int ret =
		sbx_state_opt_str(root, "exec_stream", st->exec_stream, sizeof(st->exec_stream), v);

	if (ret)
		return ret < 0 ? ret : 0;
	if (!slash || !sbx_str_fits(dir, sizeof(dir), "%.*s", (int)(slash - v->path), v->path) ||
	    !realpath(dir[0] ? dir : "/", real) ||
	    !sbx_str_fits(want, sizeof(want), "%s/%s.vm/exec.stream", strcmp(real, "/") ? real : "",
			  st->name) ||
	    strcmp(st->exec_stream, want) != 0) {
		st->exec_stream[0] = '\0';
		return sbx_state_bad(v, -EINVAL, "' is not STATE_DIR/NAME.vm/exec.stream",
				     "exec_stream");
	}
	return 0;
}

/* The tap, its netns and the guest's addresses: required (state.c refuses them elsewhere). */
int sbx_qemu_state_parse(struct json_object *root, struct sbt_sandbox_state *st,
			 const struct sbx_state_ctx *v)
{
	struct json_object *arr;
	int64_t i;
	size_t n;
	int ret;

	ret = sbx_state_str(root, "tap", st->tap, sizeof(st->tap), v);
	if (!ret && !sbx_ifname_ok(st->tap))
		ret = sbx_state_bad(v, -EINVAL, "' is not an interface name", "tap");
	if (!ret) {
		ret = sbx_state_opt_str(root, "tap_netns", st->tap_netns, sizeof(st->tap_netns), v);
		if (ret == 1)
			ret = sbx_state_bad(v, -EINVAL, "' is missing", "tap_netns");
	}
	if (!ret && st->tap_netns[0] && !sbx_netns_name_ok(st->tap_netns))
		ret = sbx_state_bad(v, -EINVAL, "' is not a network namespace name", "tap_netns");
	if (!ret)
		ret = sbx_state_int(root, "tap_ifindex", 1, INT32_MAX, &i, v);
	if (ret)
		return ret;
	st->tap_ifindex = (int)i;
	if (!json_object_object_get_ex(root, "guest_addrs", &arr))
		return sbx_state_bad(v, -EINVAL, "' is missing", "guest_addrs");
	if (!json_object_is_type(arr, json_type_array))
		return sbx_state_bad(v, -EINVAL, "' must be an array", "guest_addrs");
	n = json_object_array_length(arr);
	if (n > SBT_VM_MAX_ADDRS)
		return sbx_state_bad(v, -EINVAL, "' has more than 4 addresses", "guest_addrs");
	for (size_t k = 0; k < n; k++) {
		struct json_object *a = json_object_array_get_idx(arr, k);
		unsigned char bin[16];
		const char *s;

		if (!json_object_is_type(a, json_type_string))
			return sbx_state_bad(v, -EINVAL, "' must hold strings", "guest_addrs");
		s = json_object_get_string(a);
		if ((size_t)json_object_get_string_len(a) >= sizeof(st->guest_addrs[0]) ||
		    strlen(s) != (size_t)json_object_get_string_len(a) ||
		    (inet_pton(AF_INET, s, bin) != 1 && inet_pton(AF_INET6, s, bin) != 1))
			return sbx_state_bad(v, -EINVAL, "' must hold IP addresses", "guest_addrs");
		memcpy(st->guest_addrs[k], s, strlen(s) + 1);
		st->nr_guest_addrs++;
	}
	/* optional (a shim from before it had none) */
	ret = sbx_state_opt_str(root, "accel", st->accel, sizeof(st->accel), v);
	if (ret < 0)
		return ret;
	if (ret == 0 && strcmp(st->accel, "kvm") != 0 && strcmp(st->accel, "tcg") != 0)
		return sbx_state_bad(v, -EINVAL, "' must be \"kvm\" or \"tcg\"", "accel");
	ret = sbx_state_opt_str(root, "boot", st->boot, sizeof(st->boot), v);
	if (ret < 0)
		return ret;
	if (ret == 0 && strcmp(st->boot, "restored") != 0 && strcmp(st->boot, "cold") != 0)
		return sbx_state_bad(v, -EINVAL, "' must be \"restored\" or \"cold\"", "boot");
	ret = sbx_state_opt_str(root, "boot_why", st->boot_why, sizeof(st->boot_why), v);
	if (ret < 0)
		return ret;
	return parse_exec_stream(root, st, v);
}

void sbx_qemu_gc(const char *dir, const struct sbt_sandbox_state *st)
{
	char path[PATH_MAX];

	/* qemu died with the cgroup, and the tap with it; delete what is left */
	sbx_tap_remove(st->tap_netns, st->tap, st->tap_ifindex);
	if (sbx_str_fits(path, sizeof(path), "%s/%s.vm", dir, st->name))
		sbx_vm_dir_remove(path);
}
/* STATE_DIR/NAME.vm directories that no state file names (a shim killed while starting). */
void sbx_qemu_gc_orphans(const char *dir, bool verbose)
{
	char name[SBT_SANDBOX_NAME_MAX + 1], sf[PATH_MAX], vd[PATH_MAX];
	struct dirent *de;
	struct stat st;
	time_t now = time(NULL);
	DIR *d = opendir(dir);

	if (!d)
		return;
	while ((de = readdir(d))) {
		size_t n = strlen(de->d_name);

		if (n <= 3 || n - 3 > SBT_SANDBOX_NAME_MAX ||
		    strcmp(de->d_name + n - 3, ".vm") != 0)
			continue;
		snprintf(name, sizeof(name), "%.*s", (int)(n - 3), de->d_name);
		if (!sbt_sandbox_name_ok(name) ||
		    !sbx_str_fits(sf, sizeof(sf), "%s/%s.json", dir, name) ||
		    !sbx_str_fits(vd, sizeof(vd), "%s/%s", dir, de->d_name))
			continue;
		if (lstat(sf, &st) == 0 || lstat(vd, &st) || !S_ISDIR(st.st_mode) ||
		    now - st.st_ctime < GC_MIN_AGE_SEC)
			continue;
		sbx_vm_dir_remove(vd);
		if (verbose && lstat(vd, &st))
			sbt_log("removed %s", vd);
	}
	closedir(d);
}
