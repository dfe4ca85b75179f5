// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target: sbtrace-shim state files (sbt_state_read(), userspace/
 * sandbox/state.c), which `sbtrace trace --sandbox` and `sbtrace-shim gc` read: the
 * input is the file NAME.json in a private state dir.
 *
 * Invariants: 0 with every string field NUL-terminated within its buffer, a
 * known backend, pids > 0, at most SBT_VM_MAX_ADDRS guest addresses (each
 * NUL-terminated) and a tap name under 16 bytes; or an error < 0 whose
 * message names the file.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox/sandbox.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[64];

static bool terminated(const char *s, size_t cap)
{
	return memchr(s, '\0', cap) != NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sbt_sandbox_state st;
	char path[128], err[PATH_MAX + 512];
	int fd, ret;

	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "/tmp/sbtrace-fuzz-state.XXXXXX");
		if (!mkdtemp(dir))
			abort();
	}
	snprintf(path, sizeof(path), "%s/fz.json", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || (size && write(fd, data, size) != (ssize_t)size))
		abort();
	close(fd);
	err[0] = '\0';
	ret = sbt_state_read(dir, "fz", &st, err, sizeof(err));
	if (ret < 0) {
		if (!err[0] || !terminated(err, sizeof(err)))
			abort();
		return 0;
	}
	if (ret != 0 || !terminated(st.name, sizeof(st.name)) ||
	    !terminated(st.backend, sizeof(st.backend)) ||
	    !terminated(st.cgroup_path, sizeof(st.cgroup_path)) ||
	    !terminated(st.netns, sizeof(st.netns)) || !terminated(st.tap, sizeof(st.tap)) ||
	    !terminated(st.tap_netns, sizeof(st.tap_netns)) || st.pid <= 0 || st.shim_pid <= 0 ||
	    st.nr_guest_addrs < 0 || st.nr_guest_addrs > SBT_VM_MAX_ADDRS)
		abort();
	for (int i = 0; i < st.nr_guest_addrs; i++)
		if (!terminated(st.guest_addrs[i], sizeof(st.guest_addrs[i])))
			abort();
	return 0;
}
