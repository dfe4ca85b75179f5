// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * newc cpio writer and the qemu sandbox's second initramfs archive (cpio.h).
 *
 * newc: a 110-byte ASCII header ("070701", then 13 fields of 8 hex digits:
 * ino, mode, uid, gid, nlink, mtime, filesize, devmajor, devminor,
 * rdevmajor, rdevminor, namesize with its NUL, check), the name and its
 * NUL padded to 4 bytes, the data padded to 4 bytes. The last entry is
 * "TRAILER!!!". A symbolic link's data is its target.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "lib/cpio.h"

#define HDR_LEN	      110u
#define TRAILER	      "TRAILER!!!"
#define TRAILER_BYTES 124u /* align4(110 + 11) */
#define TREE_DEPTH    64
#define COPY_CHUNK    65536u

static uint64_t align4(uint64_t n)
{
	return (n + 3) & ~(uint64_t)3;
}

void sbt_cpio_init(struct sbt_cpio *c, int fd, uint64_t max)
{
	memset(c, 0, sizeof(*c));
	c->fd = fd;
	c->max = max;
}

static int put(struct sbt_cpio *c, const void *p, size_t len)
{
	const char *b = p;

	while (len) {
		ssize_t n = write(c->fd, b, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return c->err = n < 0 ? -errno : -EIO;
		b += n;
		len -= (size_t)n;
		c->written += (uint64_t)n;
	}
	return 0;
}

static int pad(struct sbt_cpio *c)
{
	static const char zeros[4];
	size_t n = (size_t)(align4(c->written) - c->written);

	return n ? put(c, zeros, n) : 0;
}

bool sbt_cpio_name_ok(const char *name)
{
	size_t n;

	if (!name || !name[0] || name[0] == '/')
		return false;
	n = strnlen(name, SBT_CPIO_NAME_MAX + 1);
	if (n > SBT_CPIO_NAME_MAX)
		return false;
	for (const char *p = name; *p;) {
		size_t seg = strcspn(p, "/");

		if (seg == 0 || (seg == 1 && p[0] == '.') ||
		    (seg == 2 && p[0] == '.' && p[1] == '.'))
			return false;
		p += seg;
		if (*p == '/')
			p++;
		if (!*p && p[-1] == '/')
			return false; /* a trailing slash */
	}
	return true;
}

/* The header and the name; checks that the whole entry (and a trailer) fits. */
static int header(struct sbt_cpio *c, const char *name, uint32_t mode, uint32_t mtime,
		  uint64_t size, uint32_t nlink)
{
	char hdr[HDR_LEN + 1];
	size_t nsize = strlen(name) + 1;
	uint64_t entry = align4(HDR_LEN + nsize) + align4(size);

	if (c->err)
		return c->err;
	if (c->finished)
		return c->err = -EINVAL;
	if (size > UINT32_MAX)
		return -EFBIG; /* this entry only: the archive is still usable */
	if (c->written + entry + TRAILER_BYTES > c->max)
		return -EFBIG;
	snprintf(hdr, sizeof(hdr), "070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
		 c->ino + 1, mode, 0u, 0u, nlink, mtime, (uint32_t)size, 0u, 0u, 0u, 0u,
		 (uint32_t)nsize, 0u);
	c->ino++;
	if (put(c, hdr, HDR_LEN) || put(c, name, nsize) || pad(c))
		return c->err;
	return 0;
}

static int entry(struct sbt_cpio *c, const char *name, uint32_t mode, uint32_t mtime,
		 const void *data, size_t size)
{
	int ret;

	if (c->err)
		return c->err;
	if (!sbt_cpio_name_ok(name))
		return -EINVAL;
	ret = header(c, name, mode, mtime, size, S_ISDIR(mode) ? 2 : 1);
	if (ret)
		return ret;
	if (size && put(c, data, size))
		return c->err;
	return pad(c);
}

int sbt_cpio_dir(struct sbt_cpio *c, const char *name, uint32_t perm, uint32_t mtime)
{
	return entry(c, name, S_IFDIR | (perm & 07777), mtime, NULL, 0);
}

int sbt_cpio_file(struct sbt_cpio *c, const char *name, uint32_t perm, uint32_t mtime,
		  const void *data, size_t size)
{
	if (size && !data)
		return -EINVAL;
	return entry(c, name, S_IFREG | (perm & 07777), mtime, data, size);
}

int sbt_cpio_symlink(struct sbt_cpio *c, const char *name, const char *target, uint32_t mtime)
{
	size_t n = target ? strnlen(target, SBT_CPIO_NAME_MAX) : 0;

	if (n == 0 || n >= SBT_CPIO_NAME_MAX)
		return -EINVAL;
	return entry(c, name, S_IFLNK | 0777, mtime, target, n);
}

int sbt_cpio_file_fd(struct sbt_cpio *c, const char *name, uint32_t perm, uint32_t mtime, int src,
		     uint64_t size)
{
	char *buf;
	uint64_t left = size;
	int ret;

	if (c->err)
		return c->err;
	if (!sbt_cpio_name_ok(name))
		return -EINVAL;
	ret = header(c, name, S_IFREG | (perm & 07777), mtime, size, 1);
	if (ret)
		return ret;
	buf = malloc(COPY_CHUNK);
	if (!buf)
		return c->err = -ENOMEM;
	while (left) {
		size_t want = left < COPY_CHUNK ? (size_t)left : COPY_CHUNK;
		ssize_t n = read(src, buf, want);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			/* The header promised `size` bytes: the archive is unusable now. */
			c->err = n < 0 ? -errno : -EIO;
			break;
		}
		if (put(c, buf, (size_t)n))
			break;
		left -= (uint64_t)n;
	}
	free(buf);
	return c->err ? c->err : pad(c);
}

int sbt_cpio_finish(struct sbt_cpio *c)
{
	char hdr[HDR_LEN + 1];

	if (c->err)
		return c->err;
	if (c->finished)
		return 0;
	snprintf(hdr, sizeof(hdr), "070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X", 0u,
		 0u, 0u, 0u, 1u, 0u, 0u, 0u, 0u, 0u, 0u, (uint32_t)sizeof(TRAILER), 0u);
	if (put(c, hdr, HDR_LEN) || put(c, TRAILER, sizeof(TRAILER)) || pad(c))
		return c->err;
	c->finished = true;
	return 0;
}

/* ---- the guest's archive ------------------------------------------------ */

/* Append n bytes at *o, leaving room for the NUL; false when they do not fit. */
static bool emit(char *out, size_t len, size_t *o, const char *p, size_t n)
{
	if (*o + n >= len)
		return false;
	memcpy(out + *o, p, n);
	*o += n;
	return true;
}

long sbt_guest_script(char *const *argv, char *out, size_t len)
{
	size_t o = 0;

	if (!argv || !argv[0] || !argv[0][0] || !out)
		return -EINVAL;
	if (len > SBT_CPIO_SCRIPT_MAX + 1)
		len = SBT_CPIO_SCRIPT_MAX + 1;
	if (!emit(out, len, &o, "exec", 4))
		return -ENAMETOOLONG;
	for (char *const *a = argv; *a; a++) {
		if (!emit(out, len, &o, " '", 2))
			return -ENAMETOOLONG;
		for (const char *p = *a; *p; p++)
			if (!(*p == '\'' ? emit(out, len, &o, "'\\''", 4)
					 : emit(out, len, &o, p, 1)))
				return -ENAMETOOLONG;
		if (!emit(out, len, &o, "'", 1))
			return -ENAMETOOLONG;
	}
	if (!emit(out, len, &o, "\n", 1))
		return -ENAMETOOLONG;
	out[o] = '\0';
	return (long)o;
}

struct walk {
	struct sbt_cpio *c;
	const char *root; /* the host directory, for messages */
	char name[SBT_CPIO_NAME_MAX + 1];
	char *err;
	size_t errlen;
};

static int walk_err(struct walk *w, int ret, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int walk_err(struct walk *w, int ret, const char *fmt, ...)
{
	char what[256];
	va_list ap;
	/* name is "workspace" or "workspace/REL": the host path is root + REL */
	const char *rel = strchr(w->name, '/');

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (w->err && w->errlen)
		snprintf(w->err, w->errlen, "workspace %s%s: %s", w->root, rel ? rel : "", what);
	return ret;
}

static uint32_t mtime_of(const struct stat *st)
{
	if (st->st_mtim.tv_sec < 0)
		return 0;
	if ((uint64_t)st->st_mtim.tv_sec > UINT32_MAX)
		return UINT32_MAX;
	return (uint32_t)st->st_mtim.tv_sec;
}

static int too_big(struct walk *w)
{
	return walk_err(w, -EFBIG,
			"the copy for the VM would exceed %llu MiB; give a smaller tree or "
			"more memory (--vm-mem)",
			(unsigned long long)(w->c->max >> 20));
}

static int no_dots(const struct dirent *de)
{
	return !(de->d_name[0] == '.' &&
		 (!de->d_name[1] || (de->d_name[1] == '.' && !de->d_name[2])));
}

static int walk_dir(struct walk *w, int dfd, size_t nlen, int depth);

/* One directory entry `de` of dfd, whose archive name is w->name. */
static int walk_one(struct walk *w, int dfd, const char *de, size_t nlen, int depth)
{
	char target[SBT_CPIO_NAME_MAX];
	struct stat st;
	ssize_t tl;
	int fd, ret;

	if (fstatat(dfd, de, &st, AT_SYMLINK_NOFOLLOW))
		return walk_err(w, -errno, "%s", strerror(errno));
	switch (st.st_mode & S_IFMT) {
	case S_IFDIR:
		if (depth >= TREE_DEPTH)
			return walk_err(w, -ELOOP, "deeper than %d levels", TREE_DEPTH);
		ret = sbt_cpio_dir(w->c, w->name, st.st_mode & 01777, mtime_of(&st));
		if (ret == -EFBIG)
			return too_big(w);
		if (ret)
			return walk_err(w, ret, "%s", strerror(-ret));
		fd = openat(dfd, de, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			return walk_err(w, -errno, "%s", strerror(errno));
		return walk_dir(w, fd, nlen, depth + 1);
	case S_IFREG:
		fd = openat(dfd, de, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
		if (fd < 0)
			return walk_err(w, -errno, "%s", strerror(errno));
		if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
			close(fd);
			return walk_err(w, -EINVAL, "changed while being copied");
		}
		ret = sbt_cpio_file_fd(w->c, w->name, st.st_mode & 0777, mtime_of(&st), fd,
				       (uint64_t)st.st_size);
		close(fd);
		if (ret == -EFBIG)
			return (uint64_t)st.st_size > UINT32_MAX
				       ? walk_err(w, ret, "larger than 4 GiB (the cpio limit)")
				       : too_big(w);
		if (ret == -EIO)
			return walk_err(w, ret, "shrank while being copied");
		return ret ? walk_err(w, ret, "%s", strerror(-ret)) : 0;
	case S_IFLNK:
		tl = readlinkat(dfd, de, target, sizeof(target) - 1);
		if (tl <= 0)
			return walk_err(w, tl < 0 ? -errno : -EINVAL, "readlink: %s",
					tl < 0 ? strerror(errno) : "empty target");
		target[tl] = '\0';
		ret = sbt_cpio_symlink(w->c, w->name, target, mtime_of(&st));
		if (ret == -EFBIG)
			return too_big(w);
		return ret ? walk_err(w, ret, "%s", strerror(-ret)) : 0;
	default:
		return walk_err(w, -EINVAL,
				"not a regular file, directory or symbolic link (only those are "
				"copied into the VM)");
	}
}

/* Every entry of dfd (taken over and closed), sorted by name, below w->name[0..nlen). */
static int walk_dir(struct walk *w, int dfd, size_t nlen, int depth)
{
	struct dirent **list = NULL;
	int n, ret = 0;

	n = scandirat(dfd, ".", &list, no_dots, alphasort);
	if (n < 0) {
		ret = walk_err(w, -errno, "%s", strerror(errno));
		close(dfd);
		return ret;
	}
	for (int i = 0; i < n; i++) {
		size_t len = strlen(list[i]->d_name);

		if (!ret && nlen + 1 + len > SBT_CPIO_NAME_MAX)
			ret = walk_err(w, -ENAMETOOLONG, "a path below it is too long");
		if (!ret) {
			w->name[nlen] = '/';
			memcpy(w->name + nlen + 1, list[i]->d_name, len + 1);
			ret = walk_one(w, dfd, list[i]->d_name, nlen + 1 + len, depth);
			w->name[nlen] = '\0';
		}
		free(list[i]);
	}
	free(list);
	close(dfd);
	return ret;
}

/* sbt/sbtrace: the host's binary at `path` (the guest agent), 0755. */
static int archive_agent(struct sbt_cpio *c, const char *path, char *err, size_t errlen)
{
	struct stat st = { 0 };
	int ret = 0, src = open(path, O_RDONLY | O_CLOEXEC);

	if (src < 0 || fstat(src, &st))
		ret = -errno;
	else if (!S_ISREG(st.st_mode))
		ret = -EINVAL;
	if (ret) {
		if (src >= 0)
			close(src);
		if (err && errlen)
			snprintf(err, errlen, "the guest agent %s: %s", path, strerror(-ret));
		return ret;
	}
	ret = sbt_cpio_file_fd(c, "sbt/sbtrace", 0755, mtime_of(&st), src, (uint64_t)st.st_size);
	close(src);
	if (ret && err && errlen)
		snprintf(err, errlen, "writing the VM's /sbt/sbtrace (%s): %s", path,
			 ret == -EFBIG ? "the archive would exceed its size bound"
				       : strerror(-ret));
	return ret;
}

int sbt_guest_archive(int fd, char *const *argv, const char *workspace, const char *agent,
		      uint64_t max_bytes, char *err, size_t errlen)
{
	char *script = malloc(SBT_CPIO_SCRIPT_MAX + 1);
	long slen;
	int ret;

	if (!script)
		return -ENOMEM;
	slen = sbt_guest_script(argv, script, SBT_CPIO_SCRIPT_MAX + 1);
	if (slen < 0) {
		free(script);
		if (err && errlen)
			snprintf(err, errlen, "the workload's command %s",
				 slen == -EINVAL ? "is empty" : "is longer than 256 KiB");
		return (int)slen;
	}
	ret = sbt_guest_archive_script(fd, script, NULL, workspace, agent, max_bytes, err, errlen);
	free(script);
	return ret;
}

/* An empty script, or one past SBT_CPIO_SCRIPT_MAX: the error. */
static int script_bad(size_t slen, char *err, size_t errlen)
{
	if (err && errlen)
		snprintf(err, errlen, "the workload's script %s",
			 slen ? "is longer than 256 KiB" : "is empty");
	return slen ? -ENAMETOOLONG : -EINVAL;
}

int sbt_guest_archive_script(int fd, const char *script, const char *nonce, const char *workspace,
			     const char *agent, uint64_t max_bytes, char *err, size_t errlen)
{
	size_t slen = strlen(script);
	struct sbt_cpio c;
	struct walk *w;
	struct stat st;
	int ret, dfd;

	if (!slen || slen > SBT_CPIO_SCRIPT_MAX)
		return script_bad(slen, err, errlen);
	sbt_cpio_init(&c, fd, max_bytes);
	ret = sbt_cpio_dir(&c, "sbt", 0755, 0);
	if (!ret)
		ret = sbt_cpio_file(&c, "sbt/run", 0755, 0, script, slen);
	if (ret) {
		if (err && errlen)
			snprintf(err, errlen, "writing the VM's /sbt/run: %s", strerror(-ret));
		return ret;
	}
	/* the exit line's nonce: root's alone (0600), never copied into the workload's root */
	if (nonce && (ret = sbt_cpio_file(&c, "sbt/nonce", 0600, 0, nonce, strlen(nonce)))) {
		if (err && errlen)
			snprintf(err, errlen, "writing the VM's /sbt/nonce: %s", strerror(-ret));
		return ret;
	}
	if (agent && (ret = archive_agent(&c, agent, err, errlen)))
		return ret;
	if (workspace) {
		dfd = open(workspace, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dfd < 0 || fstat(dfd, &st)) {
			ret = -errno;
			if (dfd >= 0)
				close(dfd);
			if (err && errlen)
				snprintf(err, errlen, "workspace %s: %s", workspace,
					 strerror(-ret));
			return ret;
		}
		w = calloc(1, sizeof(*w));
		if (!w) {
			close(dfd);
			return -ENOMEM;
		}
		w->c = &c;
		w->root = workspace;
		w->err = err;
		w->errlen = errlen;
		strcpy(w->name, "workspace");
		ret = sbt_cpio_dir(&c, w->name, st.st_mode & 01777, mtime_of(&st));
		if (ret) {
			close(dfd);
			ret = ret == -EFBIG ? too_big(w) : walk_err(w, ret, "%s", strerror(-ret));
		} else {
			ret = walk_dir(w, dfd, strlen(w->name), 1);
		}
		free(w);
		if (ret)
			return ret;
	}
	ret = sbt_cpio_finish(&c);
	if (ret && err && errlen)
		snprintf(err, errlen, "writing the VM's archive: %s", strerror(-ret));
	return ret;
}

int sbt_guest_archive_ctl(int fd, const char *script, const char *nonce, const char *cmdline,
			  uint64_t max_bytes, char *err, size_t errlen)
{
	size_t slen = strlen(script);
	struct sbt_cpio c;
	int ret;

	if (!slen || slen > SBT_CPIO_SCRIPT_MAX)
		return script_bad(slen, err, errlen);
	sbt_cpio_init(&c, fd, max_bytes);
	sbt_cpio_dir(&c, "sbt", 0755, 0);
	sbt_cpio_file(&c, "sbt/run", 0755, 0, script, slen);
	sbt_cpio_file(&c, "sbt/nonce", 0600, 0, nonce, strlen(nonce));
	sbt_cpio_file(&c, "sbt/cmdline", 0600, 0, cmdline, strlen(cmdline));
	ret = sbt_cpio_finish(&c); /* the first error of any entry */
	if (ret && err && errlen)
		snprintf(err, errlen, "writing the VM's control archive: %s", strerror(-ret));
	return ret;
}

int sbt_guest_archive_agent(int fd, const char *agent, char *err, size_t errlen)
{
	struct sbt_cpio c;
	int ret;

	sbt_cpio_init(&c, fd, UINT32_MAX);
	ret = sbt_cpio_dir(&c, "sbt", 0755, 0);
	if (!ret)
		ret = archive_agent(&c, agent, err, errlen);
	else if (err && errlen)
		snprintf(err, errlen, "writing the VM's archive: %s", strerror(-ret));
	if (ret)
		return ret;
	ret = sbt_cpio_finish(&c);
	if (ret && err && errlen)
		snprintf(err, errlen, "writing the VM's archive: %s", strerror(-ret));
	return ret;
}
