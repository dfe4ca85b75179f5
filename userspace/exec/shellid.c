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

static uint64_t get_le(const uint8_t *b, size_t n)
{
	uint64_t v = 0;

	for (size_t i = n; i > 0; i--)
		v = v << 8 | b[i - 1];
	return v;
}

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v;
	h *= 0x100000001b3ULL;
	return h ^ (h >> 29);
}

/*
 * What the kernel and the loader act on, of the program headers the head
 * holds: PT_LOAD and PT_INTERP, each by type, flags, file offset, address
 * and file size (not p_paddr, p_align or p_memsz, which a copy may change
 * and still run the same code), with e_type, e_machine and e_entry.
 * e_ident past the magic, the section table, notes and every byte outside
 * the head are left out: a copy with bytes appended or padding patched
 * keeps its layout. 64- and 32-bit little-endian ELF.
 */
bool sbt_exe_layout(const uint64_t head[SBT_EXE_HEAD_WORDS], uint64_t *out)
{
	const uint8_t *b = (const uint8_t *)head;
	const size_t n = SBT_EXE_HEAD_BYTES;
	bool wide = b[4] == 2;
	uint64_t h = 0xcbf29ce484222325ULL, phoff, entsz, phnum, entry;
	size_t w = wide ? 8 : 4, loads = 0;

	if (memcmp(b, "\177ELF", 4) != 0 || (b[4] != 1 && b[4] != 2) || b[5] != 1)
		return false;
	entry = get_le(b + 24, w);
	phoff = get_le(b + (wide ? 32 : 28), w);
	entsz = get_le(b + (wide ? 54 : 42), 2);
	phnum = get_le(b + (wide ? 56 : 44), 2);
	if (entsz < (wide ? 56u : 32u) || phoff >= n)
		return false;
	h = mix(h, get_le(b + 16, 2) | get_le(b + 18, 2) << 16 | (uint64_t)wide << 32);
	h = mix(h, entry);
	for (uint64_t i = 0; i < phnum && phoff + (i + 1) * entsz <= n; i++) {
		const uint8_t *ph = b + phoff + i * entsz;
		uint64_t type = get_le(ph, 4);

		if (type != 1 && type != 3) /* PT_LOAD, PT_INTERP */
			continue;
		loads += type == 1;
		h = mix(h, type | get_le(ph + (wide ? 4 : 24), 4) << 32);
		h = mix(h, get_le(ph + (wide ? 8 : 4), w));   /* p_offset */
		h = mix(h, get_le(ph + (wide ? 16 : 8), w));  /* p_vaddr */
		h = mix(h, get_le(ph + (wide ? 32 : 16), w)); /* p_filesz */
	}
	*out = h;
	return loads > 0;
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
	t->known[t->n].has_layout = sbt_exe_layout(w, &t->known[t->n].layout);
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
	uint64_t fp, layout;
	bool has_layout;

	if (ev->flags & SBT_EXEC_EXE_UNAVAILABLE)
		return false;
	if (ev->exe_name[0] && (sbt_is_shell_name(ev->exe_name) || is_multicall(ev->exe_name)) &&
	    classify_as(ev, ev->exe_name, "file_name", out))
		return true;
	fp = sbt_exe_fingerprint(ev->exe_head, ev->exe_size);
	has_layout = sbt_exe_layout(ev->exe_head, &layout);
	for (int i = 0; t && i < t->n; i++)
		if ((t->known[i].size == ev->exe_size && t->known[i].fp == fp) ||
		    (has_layout && t->known[i].has_layout && t->known[i].layout == layout))
			return classify_as(ev, t->known[i].name, "content", out);
	return false;
}
