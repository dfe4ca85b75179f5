// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The repo as one digest, for the cache key: every entry below the repo
 * (dependency folders and .git included: a build may read any of them) by
 * path, type, executable bit and content (a symlink by its target text),
 * walked depth first in name order.
 *
 * The warm path is a stat per file: a stat cache (as git's index does) maps
 * (path, size, mtime, ctime, inode, device) to the content digest and is
 * merged with the walk in the same order. An entry is only trusted when its
 * file was last changed well before it was hashed (a change within the same
 * clock tick could otherwise keep the old stat): younger files are hashed
 * again every time. Anything the digest cannot cover makes the tree
 * uncacheable (probe_tree.cacheable false, with the reason): a symlink that
 * leads out of the repo, a special file, an unreadable entry, a tree beyond
 * the limits.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/io.h"
#include "probe_int.h"
#include "lib/sha256.h"
#include "lib/treecopy.h"

#define TREE_MAX_ENTRIES (1u << 20)
#define TREE_MAX_DEPTH	 256
#define TREE_DOMAIN	 "sbtrace tree v1"
#define STATCACHE_MAGIC	 "SBTSTAT1"
#define STATCACHE_MAX	 (256u << 20)
#define RACY_NS		 2000000000ull /* a file changed this close to its hashing is re-hashed */

/* One stat cache entry (also the on-disk record after the path). */
struct stat_entry {
	uint64_t size, ino, dev;
	int64_t mtime_ns, ctime_ns;
	uint8_t digest[32];
};

struct old_cache {
	char *buf; /* the whole file */
	size_t len, pos;
	const char *path; /* the current entry's path (in buf), NULL at the end */
	uint16_t path_len;
	struct stat_entry e;
};

struct walk {
	struct probe_tree *t;
	struct sbt_sha256 tree;
	struct old_cache old;
	FILE *new_cache; /* the stat cache being written, NULL when none */
	uint64_t new_entries;
	uint64_t hash_start_ns; /* CLOCK_REALTIME */
	char path[PATH_MAX];
};

static void uncacheable(struct probe_tree *t, const char *why, const char *path)
{
	if (!t->cacheable)
		return;
	t->cacheable = false;
	snprintf(t->why, sizeof(t->why), "%s: %.200s", why, path);
}

/* Depth-first name order: '/' sorts before every other byte. */
static int dfs_cmp(const char *a, size_t alen, const char *b, size_t blen)
{
	for (size_t i = 0; i < alen && i < blen; i++) {
		unsigned char x = a[i] == '/' ? 1 : (unsigned char)a[i];
		unsigned char y = b[i] == '/' ? 1 : (unsigned char)b[i];

		if (x != y)
			return x < y ? -1 : 1;
	}
	return alen < blen ? -1 : alen > blen;
}

static void old_next(struct old_cache *o)
{
	uint16_t n;

	o->path = NULL;
	if (!o->buf || o->pos + sizeof(n) > o->len)
		return;
	memcpy(&n, o->buf + o->pos, sizeof(n));
	if (n == 0 || o->pos + sizeof(n) + n + sizeof(o->e) > o->len)
		return; /* cut or corrupt: the rest is not trusted */
	o->path = o->buf + o->pos + sizeof(n);
	o->path_len = n;
	memcpy(&o->e, o->buf + o->pos + sizeof(n) + n, sizeof(o->e));
	o->pos += sizeof(n) + n + sizeof(o->e);
}

static void old_open(struct old_cache *o, const char *file)
{
	int fd = file ? open(file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW) : -1;
	int e;

	memset(o, 0, sizeof(*o));
	if (fd < 0)
		return;
	o->buf = sbt_read_capped(fd, STATCACHE_MAX, &o->len, &e);
	close(fd);
	if (!o->buf || o->len < 8 || memcmp(o->buf, STATCACHE_MAGIC, 8) != 0) {
		free(o->buf);
		o->buf = NULL;
		return;
	}
	o->pos = 8;
	old_next(o);
}

/* The cached digest of `path` when its stat is unchanged. */
static bool old_lookup(struct old_cache *o, const char *path, const struct stat_entry *now,
		       uint8_t digest[32])
{
	size_t n = strlen(path);
	int c = 1;

	while (o->path && (c = dfs_cmp(o->path, o->path_len, path, n)) < 0)
		old_next(o);
	if (!o->path || c != 0)
		return false;
	if (o->e.size != now->size || o->e.ino != now->ino || o->e.dev != now->dev ||
	    o->e.mtime_ns != now->mtime_ns || o->e.ctime_ns != now->ctime_ns)
		return false;
	memcpy(digest, o->e.digest, 32);
	return true;
}

static void cache_put(struct walk *w, const char *path, const struct stat_entry *e)
{
	uint16_t n = (uint16_t)strlen(path);

	/* Racily clean: a change in the same tick as the hash would keep this stat. */
	if (!w->new_cache || (uint64_t)e->mtime_ns + RACY_NS > w->hash_start_ns ||
	    (uint64_t)e->ctime_ns + RACY_NS > w->hash_start_ns)
		return;
	if (fwrite(&n, sizeof(n), 1, w->new_cache) != 1 || fwrite(path, n, 1, w->new_cache) != 1 ||
	    fwrite(e, sizeof(*e), 1, w->new_cache) != 1)
		return;
	w->new_entries++;
}

static void entry_of(const struct stat *st, struct stat_entry *e)
{
	memset(e, 0, sizeof(*e));
	e->size = (uint64_t)st->st_size;
	e->ino = (uint64_t)st->st_ino;
	e->dev = (uint64_t)st->st_dev;
	e->mtime_ns = (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
	e->ctime_ns = (int64_t)st->st_ctim.tv_sec * 1000000000 + st->st_ctim.tv_nsec;
}

static void add_record(struct walk *w, char type, mode_t mode, const void *data, size_t n)
{
	uint8_t hdr[2] = { (uint8_t)type, (uint8_t)((mode & 0111) ? 1 : 0) };
	uint64_t plen = strlen(w->path), dlen = n;

	sbt_sha256_update(&w->tree, hdr, sizeof(hdr));
	sbt_sha256_update(&w->tree, &plen, sizeof(plen));
	sbt_sha256_update(&w->tree, w->path, plen);
	sbt_sha256_update(&w->tree, &dlen, sizeof(dlen));
	sbt_sha256_update(&w->tree, data, n);
}

static int hash_file(int dirfd, const char *name, uint8_t digest[32])
{
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
	int rc;

	if (fd < 0)
		return -errno;
	rc = sbt_sha256_fd_raw(fd, digest);
	close(fd);
	return rc;
}

static void visit_file(struct walk *w, int dirfd, const char *name, const struct stat *st)
{
	struct stat_entry e;

	entry_of(st, &e);
	w->t->bytes += e.size;
	if (old_lookup(&w->old, w->path, &e, e.digest)) {
		w->t->cached++;
	} else {
		if (hash_file(dirfd, name, e.digest)) {
			uncacheable(w->t, "cannot read", w->path);
			return;
		}
		w->t->hashed++;
		w->t->bytes_hashed += e.size;
	}
	add_record(w, 'f', st->st_mode, e.digest, sizeof(e.digest));
	cache_put(w, w->path, &e);
}

static void visit_link(struct walk *w, int dirfd, const char *name, const struct stat *st)
{
	char target[PATH_MAX];
	ssize_t n = readlinkat(dirfd, name, target, sizeof(target) - 1);

	if (n < 0) {
		uncacheable(w->t, "cannot read the symlink", w->path);
		return;
	}
	target[n] = '\0';
	if (sbt_link_escapes(w->path, target))
		uncacheable(w->t, "a symlink leads out of the repo", w->path);
	add_record(w, 'l', st->st_mode, target, (size_t)n);
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The sorted names of a directory (malloc'd, NULL-terminated), or NULL. */
static char **sorted_names(int fd, size_t *nr)
{
	DIR *d = fdopendir(fd);
	char **v = NULL, **nv;
	size_t n = 0, cap = 0;
	struct dirent *de;

	if (!d) {
		close(fd);
		return NULL;
	}
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (n + 1 >= cap) {
			cap = cap ? cap * 2 : 32;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv)
				goto fail;
			v = nv;
		}
		v[n] = strdup(de->d_name);
		if (!v[n])
			goto fail;
		n++;
	}
	closedir(d);
	if (v)
		qsort(v, n, sizeof(*v), name_cmp);
	*nr = n;
	return v ? v : calloc(1, sizeof(*v));
fail:
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
	closedir(d);
	return NULL;
}

static void walk_dir(struct walk *w, int dirfd, size_t plen, int depth);

static void visit(struct walk *w, int dirfd, const char *name, size_t plen, int depth)
{
	size_t n = strlen(name);
	struct stat st;

	if (plen + n + 2 > sizeof(w->path)) {
		uncacheable(w->t, "path too long", w->path);
		return;
	}
	if (plen)
		w->path[plen++] = '/';
	memcpy(w->path + plen, name, n + 1);
	if (++w->t->files > TREE_MAX_ENTRIES) {
		uncacheable(w->t, "more entries than the cache key covers", "the repo");
		return;
	}
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW)) {
		uncacheable(w->t, "cannot stat", w->path);
		return;
	}
	if (S_ISREG(st.st_mode)) {
		visit_file(w, dirfd, name, &st);
	} else if (S_ISLNK(st.st_mode)) {
		visit_link(w, dirfd, name, &st);
	} else if (S_ISDIR(st.st_mode)) {
		int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);

		add_record(w, 'd', st.st_mode, "", 0);
		if (fd < 0 || depth >= TREE_MAX_DEPTH) {
			if (fd >= 0)
				close(fd);
			uncacheable(w->t, "cannot walk", w->path);
			return;
		}
		walk_dir(w, fd, plen + n, depth + 1);
	} else {
		add_record(w, 'x', st.st_mode, "", 0);
		uncacheable(w->t, "a special file (fifo, socket or device)", w->path);
	}
}

/* Walk the directory open as `fd` (taken); w->path holds its path, plen bytes. */
static void walk_dir(struct walk *w, int fd, size_t plen, int depth)
{
	size_t nr = 0;
	int dfd = dup(fd);
	char **names = dfd >= 0 ? sorted_names(dfd, &nr) : NULL;

	if (!names) {
		uncacheable(w->t, "cannot list", plen ? w->path : ".");
		close(fd);
		return;
	}
	for (size_t i = 0; i < nr; i++) {
		w->path[plen] = '\0';
		visit(w, fd, names[i], plen, depth);
		free(names[i]);
	}
	w->path[plen] = '\0';
	free(names);
	close(fd);
}

/* Write the new stat cache next to the old one, atomically. */
/* The new stat cache is built in memory, then replaces the old one at once (keep). */
struct cache_out {
	FILE *f;
	char *buf;
	size_t len;
};

static FILE *cache_begin(const char *file, struct cache_out *c)
{
	memset(c, 0, sizeof(*c));
	c->f = file ? open_memstream(&c->buf, &c->len) : NULL;
	return c->f;
}

static void cache_end(struct cache_out *c, const char *file, bool keep)
{
	if (!c->f)
		return;
	if (fclose(c->f) == 0 && keep)
		sbt_write_atomic(file, c->buf, c->len, 0600,
				 0); /* a cache: a failure costs a rehash */
	free(c->buf);
	memset(c, 0, sizeof(*c));
}

int probe_tree_digest(const char *repo, const char *statcache, struct probe_tree *t)
{
	static struct walk w;
	struct cache_out out;
	uint8_t md[32];
	int fd;

	memset(t, 0, sizeof(*t));
	memset(&w, 0, sizeof(w));
	t->cacheable = true;
	w.t = t;
	w.hash_start_ns = sbt_now_epoch_ns();
	fd = open(repo, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	old_open(&w.old, statcache);
	w.new_cache = cache_begin(statcache, &out);
	if (w.new_cache && fwrite(STATCACHE_MAGIC, 8, 1, w.new_cache) != 1) {
		cache_end(&out, statcache, false);
		w.new_cache = NULL;
	}
	sbt_sha256_init(&w.tree);
	sbt_sha256_update(&w.tree, TREE_DOMAIN, sizeof(TREE_DOMAIN));
	walk_dir(&w, fd, 0, 0);
	sbt_sha256_final(&w.tree, md);
	sbt_sha256_hex(md, t->digest);
	cache_end(&out, statcache, t->cacheable);
	free(w.old.buf);
	return 0;
}
