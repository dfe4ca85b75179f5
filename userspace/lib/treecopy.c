// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A filtered copy of a directory tree (treecopy.h). Every entry is reached
 * by name from its directory's fd (openat, O_NOFOLLOW), so no symlink is
 * ever followed by the copy itself; file contents go by copy_file_range
 * (read/write where the file systems do not support it), each to the size
 * the file had when it was opened.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lib/io.h"
#include "lib/treecopy.h"

#define COPY_CHUNK	   (1u << 20)
#define SIGNAL_CHECK_EVERY 256 /* entries between two looks at the pending signals */

enum sbt_copy_action sbt_copy_action(mode_t mode)
{
	if (S_ISDIR(mode))
		return SBT_COPY_DIR;
	if (S_ISREG(mode))
		return SBT_COPY_FILE;
	if (S_ISLNK(mode))
		return SBT_COPY_LINK;
	return SBT_COPY_SKIP;
}

mode_t sbt_copy_mode(mode_t mode)
{
	return mode & 0777;
}

bool sbt_link_escapes(const char *path, const char *target)
{
	int depth = 0;

	if (target[0] == '/')
		return true;
	for (const char *p = path; *p; p++) /* the link's own directory depth */
		depth += *p == '/';
	for (const char *p = target; *p;) {
		size_t n = strcspn(p, "/");

		if (n == 2 && p[0] == '.' && p[1] == '.')
			depth--;
		else if (n && !(n == 1 && p[0] == '.'))
			depth++;
		if (depth < 0)
			return true;
		p += n + (p[n] == '/');
	}
	return false;
}

struct walk {
	struct sbt_tree_copy *st;
	int root; /* the source tree's fd: links are resolved beneath it */
	char path[PATH_MAX];
	size_t entries;
	char *err;
	size_t errlen;
};

static int fail(struct walk *w, int rc, const char *what)
{
	snprintf(w->err, w->errlen, "%s %s: %s", what, w->path[0] ? w->path : ".", strerror(-rc));
	return rc;
}

static void note(char *first, size_t len, uint64_t *count, const char *path)
{
	if ((*count)++ == 0)
		snprintf(first, len, "%s", path);
}

/* Does the link at w->path (its target read) resolve outside the tree? */
static int check_link(struct walk *w, const char *target)
{
	struct open_how how = { .flags = O_PATH | O_CLOEXEC,
				.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS };
	long fd = syscall(SYS_openat2, w->root, w->path, &how, sizeof(how));
	int e = fd < 0 ? errno : 0;

	if (fd >= 0)
		close((int)fd);
	if (e == ENOSYS)
		return fail(w, -ENOSYS, "cannot resolve symlink (openat2 needs Linux 5.6)");
	/* EXDEV: it escapes; ELOOP: too many links to tell; dangling: as written */
	if (e == EXDEV || e == ELOOP || (e == ENOENT && sbt_link_escapes(w->path, target)) ||
	    (e == ENOTDIR && sbt_link_escapes(w->path, target))) {
		snprintf(w->st->escape, sizeof(w->st->escape), "%s", w->path);
		snprintf(w->st->escape_target, sizeof(w->st->escape_target), "%.250s", target);
		snprintf(w->err, w->errlen, "symlink %s -> %.200s leads out of the tree", w->path,
			 target);
		return -EXDEV;
	}
	return 0;
}

static int copy_link(struct walk *w, int sfd, int dfd, const char *name, const struct stat *sb)
{
	char target[PATH_MAX];
	ssize_t n = readlinkat(sfd, name, target, sizeof(target) - 1);
	int rc;

	if (n < 0)
		return fail(w, -errno, "cannot read symlink");
	target[n] = '\0';
	rc = check_link(w, target);
	if (rc < 0 || dfd < 0)
		return rc;
	if (symlinkat(target, dfd, name) < 0)
		return fail(w, -errno, "cannot create symlink");
	if (fchownat(dfd, name, sb->st_uid, sb->st_gid, AT_SYMLINK_NOFOLLOW) < 0 && errno != EPERM)
		return fail(w, -errno, "cannot chown symlink");
	utimensat(dfd, name, (struct timespec[]){ sb->st_atim, sb->st_mtim }, AT_SYMLINK_NOFOLLOW);
	w->st->links++;
	return 0;
}

/* size bytes from in to out: copy_file_range, else read/write. 0 or -errno. */
static int copy_bytes(int in, int out, off_t size)
{
	static char buf[64 * 1024];
	bool plain = false;

	while (size > 0) {
		size_t want = size > COPY_CHUNK ? COPY_CHUNK : (size_t)size;
		ssize_t n = plain ? -1 : copy_file_range(in, NULL, out, NULL, want, 0);

		if (n < 0 && !plain &&
		    (errno == EXDEV || errno == EINVAL || errno == EOPNOTSUPP || errno == ENOSYS))
			plain = true;
		if (plain) {
			n = read(in, buf, want < sizeof(buf) ? want : sizeof(buf));
			if (n > 0 && sbt_write_all(out, buf, (size_t)n) < 0)
				return -errno;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0) /* it shrank: what there was */
			break;
		size -= n;
	}
	return 0;
}

/* Owner, mode (no set-id bits), times of the copy at fd. */
static int set_meta(int fd, const struct stat *sb)
{
	if (fchown(fd, sb->st_uid, sb->st_gid) < 0 && errno != EPERM)
		return -errno;
	if (fchmod(fd, sbt_copy_mode(sb->st_mode)) < 0)
		return -errno;
	if (futimens(fd, (struct timespec[]){ sb->st_atim, sb->st_mtim }) < 0)
		return -errno;
	return 0;
}

static int copy_file(struct walk *w, int sfd, int dfd, const char *name)
{
	struct stat sb;
	int in, out, rc;

	in = openat(sfd, name, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	if (in < 0)
		return fail(w, -errno, "cannot open");
	if (fstat(in, &sb) < 0 || !S_ISREG(sb.st_mode)) { /* replaced since the walk saw it */
		rc = errno ? -errno : -EAGAIN;
		close(in);
		return fail(w, rc, "changed while copied");
	}
	out = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (out < 0) {
		rc = -errno;
		close(in);
		return fail(w, rc, "cannot create");
	}
	rc = copy_bytes(in, out, sb.st_size);
	if (!rc)
		rc = set_meta(out, &sb);
	if (sb.st_mode & (S_ISUID | S_ISGID))
		note(w->st->first_setid, sizeof(w->st->first_setid), &w->st->setid, w->path);
	close(in);
	if (close(out) < 0 && !rc)
		rc = -errno;
	if (rc)
		return fail(w, rc, "cannot copy");
	w->st->files++;
	w->st->bytes += (uint64_t)sb.st_size;
	return 0;
}

static int copy_dir(struct walk *w, int sfd, int dfd, int depth);

/* One entry of a directory: w->path names it. */
static int copy_entry(struct walk *w, int sfd, int dfd, const char *name, int depth)
{
	struct stat sb;
	int csfd, cdfd = -1, rc;

	if (fstatat(sfd, name, &sb, AT_SYMLINK_NOFOLLOW) < 0)
		return fail(w, -errno, "cannot stat");
	switch (sbt_copy_action(sb.st_mode)) {
	case SBT_COPY_SKIP:
		note(w->st->first_skipped, sizeof(w->st->first_skipped), &w->st->skipped, w->path);
		return 0;
	case SBT_COPY_LINK:
		return copy_link(w, sfd, dfd, name, &sb);
	case SBT_COPY_FILE:
		return dfd < 0 ? 0 : copy_file(w, sfd, dfd, name);
	case SBT_COPY_DIR:
		break;
	}
	if (depth >= SBT_TREECOPY_MAX_DEPTH)
		return fail(w, -E2BIG, "too deep at");
	csfd = openat(sfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (csfd < 0)
		return fail(w, -errno, "cannot open directory");
	if (dfd >= 0 &&
	    (mkdirat(dfd, name, 0700) < 0 ||
	     (cdfd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)) {
		rc = fail(w, -errno, "cannot create directory");
		close(csfd);
		return rc;
	}
	rc = copy_dir(w, csfd, cdfd, depth + 1);
	if (!rc && cdfd >= 0 && fstat(csfd, &sb) == 0 && (rc = set_meta(cdfd, &sb)) < 0)
		fail(w, rc, "cannot set the mode of");
	if (!rc && sb.st_mode & (S_ISUID | S_ISGID))
		note(w->st->first_setid, sizeof(w->st->first_setid), &w->st->setid, w->path);
	w->st->dirs += !rc;
	close(csfd);
	if (cdfd >= 0)
		close(cdfd);
	return rc;
}

static bool signal_pending(void)
{
	sigset_t set;

	return sigpending(&set) == 0 && (sigismember(&set, SIGINT) || sigismember(&set, SIGTERM));
}

/* Every entry of the directory at sfd into dfd (-1: check only). */
static int copy_dir(struct walk *w, int sfd, int dfd, int depth)
{
	DIR *d = fdopendir(dup(sfd));
	size_t plen = strlen(w->path);
	struct dirent *de;
	int rc = 0;

	if (!d)
		return fail(w, -errno, "cannot read directory");
	while (!rc && (errno = 0, de = readdir(d))) {
		const char *n = de->d_name;

		if (n[0] == '.' && (!n[1] || (n[1] == '.' && !n[2])))
			continue;
		if (++w->entries > SBT_TREECOPY_MAX_ENTRIES)
			rc = fail(w, -E2BIG, "too many entries at");
		else if (w->st->stop_on_signal && w->entries % SIGNAL_CHECK_EVERY == 0 &&
			 signal_pending())
			rc = -EINTR;
		else if (plen + 1 + strlen(n) >= sizeof(w->path))
			rc = fail(w, -ENAMETOOLONG, "path too long at");
		else if (dfd < 0 && de->d_type != DT_DIR && de->d_type != DT_LNK &&
			 de->d_type != DT_UNKNOWN)
			continue; /* a check looks at links only */
		if (rc)
			break;
		snprintf(w->path + plen, sizeof(w->path) - plen, "%s%s", plen ? "/" : "", n);
		rc = copy_entry(w, sfd, dfd, n, depth);
		w->path[plen] = '\0';
	}
	if (!rc && errno)
		rc = fail(w, -errno, "cannot read directory");
	closedir(d);
	return rc;
}

int sbt_tree_copy(const char *src, const char *dst, struct sbt_tree_copy *st, char *err,
		  size_t errlen)
{
	struct walk w = { .st = st, .err = err, .errlen = errlen };
	int dfd = -1, rc;

	memset(st, 0, offsetof(struct sbt_tree_copy, stop_on_signal));
	err[0] = '\0';
	w.root = open(src, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (w.root < 0)
		return fail(&w, -errno, "cannot open the tree");
	if (dst && (dfd = open(dst, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
		rc = -errno;
		snprintf(err, errlen, "cannot open %s: %s", dst, strerror(-rc));
		close(w.root);
		return rc;
	}
	rc = copy_dir(&w, w.root, dfd, 0);
	if (rc == -EINTR)
		snprintf(err, errlen, "interrupted");
	close(w.root);
	if (dfd >= 0)
		close(dfd);
	return rc;
}

/* Every entry below the directory at fd (consumed). */
static int remove_below(int fd, int depth)
{
	DIR *d = fdopendir(fd);
	struct dirent *de;
	int rc = 0;

	if (!d) {
		close(fd);
		return -errno;
	}
	fchmod(fd, 0700); /* a copied 0555 directory: its entries can go */
	while ((errno = 0, de = readdir(d))) {
		const char *n = de->d_name;
		int cfd;

		if (n[0] == '.' && (!n[1] || (n[1] == '.' && !n[2])))
			continue;
		if (unlinkat(fd, n, 0) == 0)
			continue;
		if (errno != EISDIR && errno != EPERM) {
			rc = rc ? rc : -errno;
			continue;
		}
		cfd = depth < SBT_TREECOPY_MAX_DEPTH + 1
			      ? openat(fd, n, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
			      : -1;
		if (cfd < 0) {
			rc = rc ? rc : -(errno ? errno : E2BIG);
			continue;
		}
		remove_below(cfd, depth + 1);
		if (unlinkat(fd, n, AT_REMOVEDIR) < 0 && !rc)
			rc = -errno;
	}
	closedir(d);
	return rc;
}

int sbt_tree_remove(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), rc;

	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	rc = remove_below(fd, 0);
	if (rmdir(path) < 0 && !rc)
		rc = -errno;
	return rc;
}
