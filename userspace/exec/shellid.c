// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "exec/shellid.h"

static const char *const default_dirs[] = { "/bin",	 "/usr/bin",	   "/sbin",
					    "/usr/sbin", "/usr/local/bin", NULL };

static bool is_multicall(const char *name)
{
	return strcmp(name, "busybox") == 0 || strcmp(name, "toybox") == 0;
}

uint64_t sbt_exe_fingerprint(const uint64_t head[SBT_EXE_HEAD_WORDS], uint64_t size)
{
	uint64_t h = 0xcbf29ce484222325ULL ^ size;

	for (int i = 0; i < SBT_EXE_HEAD_WORDS; i++) {
		h ^= head[i];
		h *= 0x100000001b3ULL;
		h ^= h >> 29;
	}
	return h;
}

int sbt_shellid_add(struct sbt_shellid *t, const char *path, const char *name)
{
	uint64_t w[SBT_EXE_HEAD_WORDS];
	struct stat st;
	ssize_t n;
	int fd;

	if (t->n >= SBT_SHELLID_MAX)
		return -ENOSPC;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -errno;
	memset(w, 0,
	       sizeof(w)); /* a file shorter than the window: the kernel's buffer is zeroed too */
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	n = pread(fd, w, sizeof(w), 0);
	close(fd);
	if (n < 0)
		return -errno;
	for (int i = 0; i < t->n; i++) /* a hard link or a symlink met twice */
		if (t->known[i].size == (uint64_t)st.st_size &&
		    t->known[i].fp == sbt_exe_fingerprint(w, (uint64_t)st.st_size))
			return 0;
	t->known[t->n].size = (uint64_t)st.st_size;
	t->known[t->n].fp = sbt_exe_fingerprint(w, (uint64_t)st.st_size);
	snprintf(t->known[t->n].name, sizeof(t->known[0].name), "%s", name);
	t->n++;
	return 0;
}

/* One candidate: the file PATH names, under the name of what it is (/bin/sh -> dash is dash). */
static void scan_one(struct sbt_shellid *t, const char *dir, const char *name)
{
	char path[4096], real[4096], *base;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (!realpath(path, real))
		return;
	base = strrchr(real, '/') ? strrchr(real, '/') + 1 : real;
	sbt_shellid_add(t, real, sbt_is_shell_name(base) || is_multicall(base) ? base : name);
}

void sbt_shellid_scan(struct sbt_shellid *t, const char *const *dirs)
{
	static const char *const multicall[] = { "busybox", "toybox", NULL };

	memset(t, 0, sizeof(*t));
	/* Each known name in each directory: a stat each, not a listing of /usr/bin. */
	for (const char *const *d = dirs ? dirs : default_dirs; *d; d++) {
		const char *name;

		for (size_t i = 0; (name = sbt_shell_name_at(i)); i++)
			scan_one(t, *d, name);
		for (const char *const *m = multicall; *m; m++)
			scan_one(t, *d, *m);
	}
}

/* Classify as if `name` had been executed under its own name. */
static bool classify_as(const struct sbt_exec *ev, const char *name, const char *how,
			struct sbt_shell_class *out)
{
	char path[SBT_SHELL_NAME_MAX + 2];
	bool shebang = ev->interp && ev->interp[0] && strcmp(ev->interp, ev->filename) != 0;
	bool ok;

	snprintf(path, sizeof(path), "/%s", name);
	/* a #! script whose interpreter is a shell under another name, or the shell itself */
	if (shebang)
		ok = sbt_shell_classify(ev->filename, path, ev->argv, ev->argc, out);
	else
		ok = sbt_shell_classify(path, NULL, ev->argv, ev->argc, out);
	if (ok)
		out->identified_by = how;
	return ok;
}

bool sbt_shellid_classify(const struct sbt_shellid *t, const struct sbt_exec *ev,
			  struct sbt_shell_class *out)
{
	uint64_t fp;

	if (ev->flags & SBT_EXEC_EXE_UNAVAILABLE)
		return false;
	if (ev->exe_name[0] && (sbt_is_shell_name(ev->exe_name) || is_multicall(ev->exe_name)) &&
	    classify_as(ev, ev->exe_name, "file_name", out))
		return true;
	fp = sbt_exe_fingerprint(ev->exe_head, ev->exe_size);
	for (int i = 0; t && i < t->n; i++)
		if (t->known[i].size == ev->exe_size && t->known[i].fp == fp)
			return classify_as(ev, t->known[i].name, "content", out);
	return false;
}
