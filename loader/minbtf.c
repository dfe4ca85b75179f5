// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The kernel BTF the object's CO-RE relocations are matched against: the
 * cut-down copy scripts/min-btf.sh made for this kernel (`bpftool gen
 * min_core_btf`: a few KiB instead of the whole kernel's, ~15 ms less
 * start-up), when its id file names the running kernel (the SHA-256 of
 * /sys/kernel/notes, which holds the kernel's GNU build id, and the size of
 * /sys/kernel/btf/vmlinux); else NULL and libbpf reads the kernel's own, as
 * it always did. Tracing programs' attach targets are looked up in the
 * kernel's BTF either way.
 *
 * Where: <dir of the sbtrace binary>/../bpf/min_core.btf (the build tree:
 * build/bin/sbtrace -> build/bpf/), or SBTRACE_MIN_BTF (a path; "" for none).
 */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "loader.h"
#include "lib/sha256.h"

#define NOTES_MAX 4096

/* "SHA256(/sys/kernel/notes)|BTF size": the running kernel. 0, or -1. */
static int kernel_id(char *out, size_t len)
{
	char notes[NOTES_MAX], hex[65];
	struct stat st;
	ssize_t n, got = 0;
	int fd = open("/sys/kernel/notes", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	while (got < NOTES_MAX && (n = read(fd, notes + got, NOTES_MAX - (size_t)got)) > 0)
		got += n;
	close(fd);
	if (got <= 0 || got == NOTES_MAX || stat("/sys/kernel/btf/vmlinux", &st))
		return -1;
	sbt_sha256_bytes(notes, (size_t)got, hex);
	return (size_t)snprintf(out, len, "%s|%lld", hex, (long long)st.st_size) < len ? 0 : -1;
}

/* The id file next to `path` says the running kernel. */
static bool for_this_kernel(const char *path)
{
	char idpath[PATH_MAX + 8], want[128], have[128];
	ssize_t n;
	int fd;

	if ((size_t)snprintf(idpath, sizeof(idpath), "%s.id", path) >= sizeof(idpath) ||
	    kernel_id(want, sizeof(want)))
		return false;
	fd = open(idpath, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, have, sizeof(have) - 1);
	close(fd);
	if (n <= 0)
		return false;
	have[n] = '\0';
	return strcmp(have, want) == 0;
}

const char *sbt_min_btf(char *buf, size_t len)
{
	const char *env = getenv("SBTRACE_MIN_BTF");
	char exe[PATH_MAX], *slash;
	ssize_t n;

	if (env) {
		if (!env[0] || (size_t)snprintf(buf, len, "%s", env) >= len)
			return NULL;
	} else {
		n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		if (n <= 0)
			return NULL;
		exe[n] = '\0';
		slash = strrchr(exe, '/');
		if (!slash)
			return NULL;
		*slash = '\0';
		if ((size_t)snprintf(buf, len, "%s/../bpf/min_core.btf", exe) >= len)
			return NULL;
	}
	return access(buf, R_OK) == 0 && for_this_kernel(buf) ? buf : NULL;
}
