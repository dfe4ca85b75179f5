/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A podman container's name and image, for the agent's events: from the
 * cgroup's last path component (libpod-<id>, libpod-<id>.scope) to the
 * record containers/storage keeps of it, <graphroot>/<driver>-containers/
 * containers.json (a JSON array of {"id", "names": [..], "image": image id,
 * "metadata": a JSON *string* holding {"name", "image-name", ...}}). The
 * file is root's, but read as untrusted input: size-capped, types checked,
 * strings length-capped and printable ASCII only, ids exactly 64 lowercase
 * hex. A cache keeps the parsed table until the file changes.
 */
#ifndef SBT_PODMAN_META_H
#define SBT_PODMAN_META_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <time.h>

#define SBT_PODMAN_ID_LEN	      64	  /* lowercase hex digits */
#define SBT_PODMAN_META_STR_MAX	      255	  /* a name's or image's bytes, without NUL */
#define SBT_PODMAN_META_MAX_BYTES     (16u << 20) /* containers.json beyond it: -EFBIG */
#define SBT_PODMAN_STORAGE_CONF_MAX   (1u << 20)  /* storage.conf beyond it: ignored */
#define SBT_PODMAN_GRAPHROOT_DEFAULT  "/var/lib/containers/storage"
#define SBT_PODMAN_DRIVER_DEFAULT     "overlay"
#define SBT_PODMAN_STORAGE_CONF_ETC   "/etc/containers/storage.conf"
#define SBT_PODMAN_STORAGE_CONF_SHARE "/usr/share/containers/storage.conf"

/* One record of containers.json: err 0 with name and image, or why it is unusable (-EINVAL). */
struct sbt_podman_meta_entry {
	char id[SBT_PODMAN_ID_LEN + 1];
	int err;
	const char *name;  /* "" when err */
	const char *image; /* "" when err or the container has none */
	char *strings;	   /* name and image, back to back (NULL when err) */
};

/* The parsed file: entries sorted by id; records without a valid id are counted, not kept. */
struct sbt_podman_meta_table {
	struct sbt_podman_meta_entry *entries;
	size_t nr;
	size_t nr_bad;	     /* records unusable (no valid id, or err set) */
	char first_bad[128]; /* what was wrong with the first of them */
};

struct sbt_podman_meta_cache {
	char path[PATH_MAX]; /* <graphroot>/<driver>-containers/containers.json; "" if too long */
	/*
	 * The file as last read: (dev, ino, mtime, size) and what its parse gave.
	 * containers/storage replaces it by a rename, so each version is a new inode.
	 */
	bool have_file;
	dev_t dev;
	ino_t ino;
	struct timespec mtime;
	off_t size;
	int file_err; /* 0, or the file's error (-EFBIG, -EINVAL ...), kept until it changes */
	struct sbt_podman_meta_table table;
	unsigned long nr_parses; /* times the file was read and parsed */
};

/*
 * The container id of a cgroup's last path component: "libpod-<id>" or
 * "libpod-<id>.scope", <id> exactly 64 lowercase hex digits, into id
 * (NUL-terminated). False for anything else, "libpod-conmon-<id>" included.
 */
bool sbt_podman_cgroup_id(const char *cgroup_leaf, char id[SBT_PODMAN_ID_LEN + 1]);

/*
 * storage.conf's [storage] graphroot and driver (a line parser for those two keys,
 * no TOML beyond: "key = \"value\"" or 'value', comments, other tables skipped).
 * Each out buffer is left "" when its key is absent or its value unusable (graphroot
 * not absolute, driver not [a-z0-9_]+, a line or value too long, an escape).
 */
void sbt_podman_storage_conf_parse(const char *text, size_t len, char *graphroot, size_t glen,
				   char *driver, size_t dlen);

/*
 * Parse containers.json's bytes into t (emptied first; freed with
 * sbt_podman_meta_table_free, also on error). 0, -EINVAL (not a JSON array;
 * a NUL byte), -EFBIG (beyond SBT_PODMAN_META_MAX_BYTES) or -ENOMEM; why says
 * what was wrong. A record that is not right is kept as unusable (err) or
 * skipped (no id), not fatal to the others.
 */
int sbt_podman_meta_parse(const char *buf, size_t len, struct sbt_podman_meta_table *t,
			  const char **why);
void sbt_podman_meta_table_free(struct sbt_podman_meta_table *t);

/*
 * Set up c for <graphroot>/<driver>-containers/containers.json. graphroot NULL:
 * storage.conf's ($CONTAINERS_STORAGE_CONF, else /etc/containers/storage.conf,
 * else /usr/share/containers/storage.conf, as containers/storage looks for root),
 * else the default; the driver is storage.conf's, else overlay. Reads nothing yet.
 */
void sbt_podman_meta_cache_init(struct sbt_podman_meta_cache *c, const char *graphroot);
void sbt_podman_meta_cache_free(struct sbt_podman_meta_cache *c);

/*
 * The name and image of container `id` (64 lowercase hex), NUL-terminated.
 * The file is read again only when its (dev, ino, mtime, size) changed since
 * the last read. 0; -ENOENT when no such container is recorded (or there is
 * no file); -EINVAL for an invalid id or an unusable record of it; -ERANGE
 * when nlen or ilen is too small (SBT_PODMAN_META_STR_MAX + 1 always fits);
 * the file's error (-EFBIG, -EINVAL, -EACCES ...), said once on stderr per
 * change of the file.
 */
int sbt_podman_meta_lookup(struct sbt_podman_meta_cache *c, const char *id, char *name, size_t nlen,
			   char *image, size_t ilen);

#endif
