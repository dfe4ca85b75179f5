/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A small newc ("070701") cpio writer, and the second initramfs archive of a
 * qemu sandbox built with it: /sbt/run (the workload's argv, shell-quoted)
 * and, optionally, a host directory tree at /workspace. The kernel unpacks
 * it after the guest's base initramfs (scripts/guest-build.sh), into the
 * same rootfs.
 *
 * Entries are written to an fd as they come (nothing is held in memory);
 * every size is checked against the format's 32-bit fields and against the
 * caller's bound on the archive's total size. Owner and group are 0; inode
 * numbers count up from 1; names are relative ("sbt/run"), without "." or
 * ".." components, parents before children.
 */
#ifndef SBT_CPIO_H
#define SBT_CPIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SBT_CPIO_NAME_MAX   4096 /* a name's length, the NUL excluded */
#define SBT_CPIO_SCRIPT_MAX 262144u

struct sbt_cpio {
	int fd;
	uint64_t written; /* bytes so far, padding included */
	uint64_t max;	  /* refuse to grow past this many bytes (-EFBIG) */
	uint32_t ino;
	int err; /* the first error (-errno); every later call returns it */
	bool finished;
};

/* Start an archive on fd (written from its current offset); max: the bound on its size. */
void sbt_cpio_init(struct sbt_cpio *c, int fd, uint64_t max);

/* A directory (perm: the permission bits, e.g. 0755). 0 or -errno. */
int sbt_cpio_dir(struct sbt_cpio *c, const char *name, uint32_t perm, uint32_t mtime);

/* A regular file with `size` bytes of data. 0 or -errno. */
int sbt_cpio_file(struct sbt_cpio *c, const char *name, uint32_t perm, uint32_t mtime,
		  const void *data, size_t size);

/* A symbolic link to `target` (1..4095 bytes, not checked further). 0 or -errno. */
int sbt_cpio_symlink(struct sbt_cpio *c, const char *name, const char *target, uint32_t mtime);

/*
 * A regular file whose `size` bytes are read from fd `src` (from its current
 * offset); -EIO when it ends early (the file shrank while being copied).
 */
int sbt_cpio_file_fd(struct sbt_cpio *c, const char *name, uint32_t perm, uint32_t mtime, int src,
		     uint64_t size);

/* The TRAILER!!! entry. 0 or -errno (also the first error of any earlier call). */
int sbt_cpio_finish(struct sbt_cpio *c);

/* True when `name` is acceptable: relative, no empty, "." or ".." component, short enough. */
bool sbt_cpio_name_ok(const char *name);

/*
 * The guest's /sbt/run: "exec 'ARG0' 'ARG1' ...\n", each argument in single
 * quotes (a quote inside as '\''), which every POSIX shell, busybox's
 * included, reads back as the same words. Returns the length written (NUL
 * excluded), -EINVAL for an empty argv, -ENAMETOOLONG when it does not fit
 * in len (or in SBT_CPIO_SCRIPT_MAX).
 */
long sbt_guest_script(char *const *argv, char *out, size_t len);

/*
 * The whole second archive on fd: sbt/ and sbt/run (the script above, mode
 * 0755) and, with a workspace, workspace/ and the tree below the host
 * directory `workspace`: directories, regular files and symbolic links (not
 * followed), modes' permission bits and mtimes kept, owner root. Anything
 * else (a socket, a device, a FIFO) is refused by name, as is a tree deeper
 * than 64 levels. With `agent` (a regular file: the host's sbtrace), also
 * sbt/sbtrace, mode 0755. The archive stays within max_bytes, or -EFBIG. 0,
 * or -errno with err filled (one line, naming the path).
 */
int sbt_guest_archive(int fd, char *const *argv, const char *workspace, const char *agent,
		      uint64_t max_bytes, char *err, size_t errlen);
/*
 * The same with sbt/run as given (a script the guest's shell sources), not
 * from an argv, and with `nonce` (NULL: none) as sbt/nonce, mode 0600: the
 * init's exit line's (sbt_vm_console_nonce).
 */
int sbt_guest_archive_script(int fd, const char *script, const char *nonce, const char *workspace,
			     const char *agent, uint64_t max_bytes, char *err, size_t errlen);
/*
 * A restored guest's (the qemu backend's saved boot): what the host sends
 * down its control port, as one archive: sbt/run (the script), sbt/nonce and
 * sbt/cmdline (the init's sbt.* words, which a cold boot has on the kernel
 * command line), both 0600. 0 or -errno with err filled.
 */
int sbt_guest_archive_ctl(int fd, const char *script, const char *nonce, const char *cmdline,
			  uint64_t max_bytes, char *err, size_t errlen);
/* The saved boot's own second archive: sbt/ and sbt/sbtrace (agent) alone. */
int sbt_guest_archive_agent(int fd, const char *agent, char *err, size_t errlen);

#endif
