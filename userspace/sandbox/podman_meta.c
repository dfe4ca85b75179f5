// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Podman container metadata (podman_meta.h): a cgroup leaf to a container id,
 * the id to the name and image containers/storage records in containers.json,
 * the parsed table cached until the file's (dev, ino, mtime, size) change.
 */
#include <errno.h>
#include <stdint.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <json-c/json.h>

#include "lib/io.h"
#include "lib/jsondoc.h"
#include "lib/log.h"
#include "sandbox/podman_meta.h"

#define CONF_LINE_MAX 4096 /* longer storage.conf lines hold no usable value: skipped */

static const char out_of_memory[] = "out of memory";

static bool is_lower_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

bool sbt_podman_cgroup_id(const char *leaf, char id[SBT_PODMAN_ID_LEN + 1])
{
	static const char prefix[] = "libpod-";
	size_t n;

	id[0] = '\0';
	if (!leaf || strncmp(leaf, prefix, sizeof(prefix) - 1) != 0)
		return false;
	leaf += sizeof(prefix) - 1;
	n = strlen(leaf);
	/* "libpod-conmon-<id>" fails here: 'o', 'n', 'm' are not hex */
	if (!(n == SBT_PODMAN_ID_LEN ||
	      (n == SBT_PODMAN_ID_LEN + 6 && strcmp(leaf + SBT_PODMAN_ID_LEN, ".scope") == 0)) ||
	    !is_lower_hex(leaf, SBT_PODMAN_ID_LEN))
		return false;
	memcpy(id, leaf, SBT_PODMAN_ID_LEN);
	id[SBT_PODMAN_ID_LEN] = '\0';
	return true;
}

/* ---- storage.conf: [storage] graphroot and driver ----------------------- */

static const char *skip_blank(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	return p;
}

/* Nothing left but blanks and a comment. */
static bool rest_empty(const char *p, const char *end)
{
	p = skip_blank(p, end);
	return p == end || *p == '#' || *p == '\r';
}

/* A table header "[ name ]": its name into sect ("" for [[arrays]] or a bad one). */
static void conf_table(const char *p, const char *end, char *sect, size_t slen)
{
	const char *name, *close;
	size_t n;

	sect[0] = '\0';
	p++;
	if (p < end && *p == '[')
		return;
	name = skip_blank(p, end);
	close = memchr(name, ']', (size_t)(end - name));
	if (!close || !rest_empty(close + 1, end))
		return;
	while (close > name && (close[-1] == ' ' || close[-1] == '\t'))
		close--;
	n = (size_t)(close - name);
	if (n < slen) {
		memcpy(sect, name, n);
		sect[n] = '\0';
	}
}

static bool bare_key_char(char ch)
{
	return ch == '_' || ch == '-' || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
	       (ch >= '0' && ch <= '9');
}

/* The key of "key = value" (bare or "quoted"), p moved past '='; false if not such a line. */
static bool conf_key(const char **pp, const char *end, char *key, size_t klen)
{
	const char *p = *pp, *k;
	bool quoted = p < end && *p == '"';
	size_t n;

	if (quoted)
		p++;
	k = p;
	while (p < end && (quoted ? *p != '"' : bare_key_char(*p)))
		p++;
	n = (size_t)(p - k);
	if (quoted && (p == end || *p++ != '"'))
		return false;
	p = skip_blank(p, end);
	if (n == 0 || n >= klen || p == end || *p != '=')
		return false;
	memcpy(key, k, n);
	key[n] = '\0';
	*pp = p + 1;
	return true;
}

/* A "basic" (no escapes taken) or 'literal' string value and nothing after it but a comment. */
static bool conf_string(const char *p, const char *end, char *out, size_t olen)
{
	const char *v, *close;
	char q;
	size_t n;

	out[0] = '\0';
	p = skip_blank(p, end);
	if (p == end || (*p != '"' && *p != '\''))
		return false;
	q = *p++;
	v = p;
	close = memchr(v, q, (size_t)(end - v));
	if (!close || !rest_empty(close + 1, end))
		return false;
	n = (size_t)(close - v);
	if (n >= olen || (q == '"' && memchr(v, '\\', n)) || memchr(v, '\0', n))
		return false;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)v[i] < 0x20 || v[i] == 0x7f)
			return false;
	memcpy(out, v, n);
	out[n] = '\0';
	return true;
}

static bool driver_ok(const char *d)
{
	return d[0] && strspn(d, "abcdefghijklmnopqrstuvwxyz0123456789_") == strlen(d);
}

/* One line of storage.conf, sect the table it is in. */
static void conf_line(const char *p, const char *end, char *sect, size_t slen, char *graphroot,
		      size_t glen, char *driver, size_t dlen)
{
	char key[32];

	p = skip_blank(p, end);
	if (p == end || *p == '#')
		return;
	if (*p == '[') {
		conf_table(p, end, sect, slen);
		return;
	}
	if (strcmp(sect, "storage") != 0 || !conf_key(&p, end, key, sizeof(key)))
		return;
	if (strcmp(key, "graphroot") == 0) {
		if (!conf_string(p, end, graphroot, glen) || graphroot[0] != '/')
			graphroot[0] = '\0';
	} else if (strcmp(key, "driver") == 0) {
		if (!conf_string(p, end, driver, dlen) || !driver_ok(driver))
			driver[0] = '\0';
		else if (strcmp(driver, "overlay2") == 0)
			driver[strlen("overlay")] =
				'\0'; /* containers/storage's alias: overlay-* */
	}
}

void sbt_podman_storage_conf_parse(const char *text, size_t len, char *graphroot, size_t glen,
				   char *driver, size_t dlen)
{
	const char *p = text, *end = text + len, *nl;
	char sect[64] = "";

	if (glen)
		graphroot[0] = '\0';
	if (dlen)
		driver[0] = '\0';
	if (!glen || !dlen)
		return;
	while (p < end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			nl = end;
		if (nl - p <= CONF_LINE_MAX)
			conf_line(p, nl, sect, sizeof(sect), graphroot, glen, driver, dlen);
		p = nl + (nl < end);
	}
}

/* The storage.conf containers/storage would read as root, as its first usable file says. */
static void conf_read(char *graphroot, size_t glen, char *driver, size_t dlen)
{
	const char *env = secure_getenv("CONTAINERS_STORAGE_CONF"), *kind, *path;
	char *text;
	size_t len;
	int err;

	graphroot[0] = driver[0] = '\0';
	path = env && env[0] ? env : SBT_PODMAN_STORAGE_CONF_ETC;
	text = sbt_read_regular(AT_FDCWD, path, SBT_PODMAN_STORAGE_CONF_MAX, &len, &err, &kind);
	if (!text && err == ENOENT && path != env) {
		path = SBT_PODMAN_STORAGE_CONF_SHARE;
		text = sbt_read_regular(AT_FDCWD, path, SBT_PODMAN_STORAGE_CONF_MAX, &len, &err,
					&kind);
	}
	if (!text) {
		if (err != ENOENT || path == env)
			sbt_log("podman metadata: %s: %s; using the default graphroot %s", path,
				kind ? kind : strerror(err), SBT_PODMAN_GRAPHROOT_DEFAULT);
		return;
	}
	sbt_podman_storage_conf_parse(text, len, graphroot, glen, driver, dlen);
	free(text);
}

/* ---- containers.json ---------------------------------------------------- */

/* A string of at most SBT_PODMAN_META_STR_MAX printable ASCII bytes (no NUL within). */
static bool meta_str_ok(struct json_object *s)
{
	const char *v = json_object_get_string(s);
	size_t n = (size_t)json_object_get_string_len(s);

	if (n == 0 || n > SBT_PODMAN_META_STR_MAX || strlen(v) != n)
		return false;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)v[i] < 0x20 || (unsigned char)v[i] > 0x7e)
			return false;
	return true;
}

/* A string field of obj, or NULL when absent or (lenient: podman's metadata) not a string. */
static struct json_object *get_string(struct json_object *obj, const char *key)
{
	struct json_object *f;

	if (!json_object_object_get_ex(obj, key, &f) || !json_object_is_type(f, json_type_string))
		return NULL;
	return f;
}

/* "metadata" is podman's own: a JSON string holding an object; name and image-name from it. */
static const char *parse_metadata(struct json_object *rec, struct json_object **mdp,
				  struct json_object **namep, struct json_object **imagep)
{
	struct json_object *f;
	const char *why;

	*mdp = *namep = *imagep = NULL;
	if (!json_object_object_get_ex(rec, "metadata", &f))
		return NULL;
	if (!json_object_is_type(f, json_type_string))
		return "'metadata' is not a string";
	/* not JSON, not an object: no name or image from it, the record's own fields stay */
	*mdp = sbt_json_parse_doc(json_object_get_string(f), (size_t)json_object_get_string_len(f),
				  &why);
	if (*mdp && json_object_is_type(*mdp, json_type_object)) {
		*namep = get_string(*mdp, "name");
		*imagep = get_string(*mdp, "image-name");
	}
	return NULL;
}

/* names: an array of strings; its first one, or NULL (absent, empty). */
static const char *parse_names(struct json_object *rec, struct json_object **first)
{
	struct json_object *f;
	size_t n;

	*first = NULL;
	if (!json_object_object_get_ex(rec, "names", &f))
		return NULL;
	if (!json_object_is_type(f, json_type_array))
		return "'names' is not an array";
	n = json_object_array_length(f);
	for (size_t i = 0; i < n; i++)
		if (!json_object_is_type(json_object_array_get_idx(f, i), json_type_string))
			return "'names' holds a non-string";
	if (n)
		*first = json_object_array_get_idx(f, 0);
	return NULL;
}

/* name and img (NULL: "") into one allocation of e's. */
static bool entry_strings(struct sbt_podman_meta_entry *e, struct json_object *name,
			  struct json_object *img)
{
	size_t nn = (size_t)json_object_get_string_len(name);
	size_t ni = img ? (size_t)json_object_get_string_len(img) : 0;

	e->strings = malloc(nn + ni + 2);
	if (!e->strings)
		return false;
	memcpy(e->strings, json_object_get_string(name), nn + 1);
	memcpy(e->strings + nn + 1, img ? json_object_get_string(img) : "", ni + 1);
	e->name = e->strings;
	e->image = e->strings + nn + 1;
	return true;
}

/* e unusable: why is the caller's to tell. */
static void entry_unusable(struct sbt_podman_meta_entry *e)
{
	free(e->strings);
	e->strings = NULL;
	e->name = e->image = "";
	e->err = -EINVAL;
}

/* A non-empty string, or NULL. */
static struct json_object *non_empty(struct json_object *s)
{
	return s && json_object_get_string_len(s) > 0 ? s : NULL;
}

/*
 * name: names[0], else metadata's (one is needed); image: metadata's image-name,
 * else the image id, else "" (a container of a rootfs has none).
 */
static const char *parse_record_fields(struct json_object *rec, struct sbt_podman_meta_entry *e)
{
	struct json_object *names0 = NULL, *md = NULL, *md_name = NULL, *md_image = NULL;
	struct json_object *image = NULL, *name, *img;
	const char *why = parse_names(rec, &names0);

	if (!why)
		why = parse_metadata(rec, &md, &md_name, &md_image);
	if (!why && json_object_object_get_ex(rec, "image", &image) &&
	    !json_object_is_type(image, json_type_string))
		why = "'image' is not a string";
	name = names0 ? names0 : md_name;
	img = non_empty(md_image) ? md_image : non_empty(image);
	if (!why && !name)
		why = "no name ('names' nor metadata's 'name')";
	else if (!why && !meta_str_ok(name))
		why = "the name is empty, over 255 bytes or not printable ASCII";
	else if (!why && img && !meta_str_ok(img))
		why = "the image is over 255 bytes or not printable ASCII";
	if (!why && !entry_strings(e, name, img))
		why = out_of_memory;
	json_object_put(md); /* names0, image are rec's; md_name, md_image md's */
	return why;
}

/* One unusable record more; the first one's place and why kept for the message. */
static void note_bad(struct sbt_podman_meta_table *t, size_t idx, const char *id, const char *why)
{
	char where[64];

	if (t->nr_bad++)
		return;
	if (idx == SIZE_MAX) /* after the sort: the id alone says which */
		snprintf(where, sizeof(where), "id %.12s...", id);
	else if (id)
		snprintf(where, sizeof(where), "record %zu (id %.12s...)", idx, id);
	else
		snprintf(where, sizeof(where), "record %zu", idx);
	snprintf(t->first_bad, sizeof(t->first_bad), "%s: %s", where, why);
}

/* The record's "id" when it is 64 lowercase hex digits, else NULL. */
static const char *record_id(struct json_object *rec)
{
	struct json_object *id;

	if (!json_object_is_type(rec, json_type_object) ||
	    !json_object_object_get_ex(rec, "id", &id) ||
	    !json_object_is_type(id, json_type_string) ||
	    json_object_get_string_len(id) != SBT_PODMAN_ID_LEN ||
	    !is_lower_hex(json_object_get_string(id), SBT_PODMAN_ID_LEN))
		return NULL;
	return json_object_get_string(id);
}

/* One record: kept (usable or not) when it has a valid id, else only counted. 0 or -ENOMEM. */
static int parse_record(struct sbt_podman_meta_table *t, struct json_object *rec, size_t idx)
{
	struct sbt_podman_meta_entry *e = &t->entries[t->nr];
	const char *id = record_id(rec), *why;

	if (!id) {
		note_bad(t, idx, NULL,
			 json_object_is_type(rec, json_type_object)
				 ? "no 'id' of 64 lowercase hex digits"
				 : "not an object");
		return 0;
	}
	memset(e, 0, sizeof(*e));
	memcpy(e->id, id, SBT_PODMAN_ID_LEN);
	why = parse_record_fields(rec, e);
	if (why == out_of_memory)
		return -ENOMEM;
	if (why) {
		entry_unusable(e);
		note_bad(t, idx, e->id, why);
	}
	t->nr++;
	return 0;
}

static int entry_cmp(const void *a, const void *b)
{
	return strcmp(((const struct sbt_podman_meta_entry *)a)->id,
		      ((const struct sbt_podman_meta_entry *)b)->id);
}

/* Sorted by id; an id recorded twice is ambiguous: every record of it made unusable. */
static void sort_entries(struct sbt_podman_meta_table *t)
{
	qsort(t->entries, t->nr, sizeof(t->entries[0]), entry_cmp);
	for (size_t i = 0; i + 1 < t->nr; i++) {
		struct sbt_podman_meta_entry *a = &t->entries[i], *b = a + 1;

		if (strcmp(a->id, b->id) != 0)
			continue;
		for (struct sbt_podman_meta_entry *e = a; e <= b; e++) {
			if (!e->err)
				note_bad(t, SIZE_MAX, e->id, "recorded twice");
			entry_unusable(e);
		}
	}
}

void sbt_podman_meta_table_free(struct sbt_podman_meta_table *t)
{
	for (size_t i = 0; i < t->nr; i++)
		free(t->entries[i].strings);
	free(t->entries);
	memset(t, 0, sizeof(*t));
}

int sbt_podman_meta_parse(const char *buf, size_t len, struct sbt_podman_meta_table *t,
			  const char **why)
{
	struct json_object *root;
	size_t n, want = 0;
	int ret = 0;

	memset(t, 0, sizeof(*t));
	*why = NULL;
	if (len > SBT_PODMAN_META_MAX_BYTES) {
		*why = "larger than 16 MiB";
		return -EFBIG;
	}
	root = sbt_json_parse_doc(buf, len, why);
	if (!root)
		return strcmp(*why, out_of_memory) == 0 ? -ENOMEM : -EINVAL;
	if (!json_object_is_type(root, json_type_array)) {
		json_object_put(root);
		*why = "not a JSON array";
		return -EINVAL;
	}
	n = json_object_array_length(root);
	/* as many entries as records with an id: not one per element of [1,1,...] */
	for (size_t i = 0; i < n; i++)
		if (record_id(json_object_array_get_idx(root, i)))
			want++;
	t->entries = calloc(want ? want : 1, sizeof(t->entries[0]));
	if (!t->entries) {
		json_object_put(root);
		*why = out_of_memory;
		return -ENOMEM;
	}
	for (size_t i = 0; i < n && !ret; i++)
		ret = parse_record(t, json_object_array_get_idx(root, i), i);
	json_object_put(root);
	if (ret) {
		sbt_podman_meta_table_free(t);
		*why = out_of_memory;
		return ret;
	}
	sort_entries(t);
	return 0;
}

/* ---- the cache ---------------------------------------------------------- */

void sbt_podman_meta_cache_init(struct sbt_podman_meta_cache *c, const char *graphroot)
{
	char conf_root[PATH_MAX], driver[64];
	int n;

	memset(c, 0, sizeof(*c));
	conf_read(conf_root, sizeof(conf_root), driver, sizeof(driver));
	if (!graphroot)
		graphroot = conf_root[0] ? conf_root : SBT_PODMAN_GRAPHROOT_DEFAULT;
	n = snprintf(c->path, sizeof(c->path), "%s/%s-containers/containers.json", graphroot,
		     driver[0] ? driver : SBT_PODMAN_DRIVER_DEFAULT);
	if (n < 0 || (size_t)n >= sizeof(c->path))
		c->path[0] = '\0';
}

void sbt_podman_meta_cache_free(struct sbt_podman_meta_cache *c)
{
	sbt_podman_meta_table_free(&c->table);
	c->have_file = false;
}

static bool same_file(const struct sbt_podman_meta_cache *c, const struct stat *st)
{
	return c->have_file && c->dev == st->st_dev && c->ino == st->st_ino &&
	       c->mtime.tv_sec == st->st_mtim.tv_sec && c->mtime.tv_nsec == st->st_mtim.tv_nsec &&
	       c->size == st->st_size;
}

/* The file as it is now: read and parsed into c->table, or its error in c->file_err. */
static void cache_reload(struct sbt_podman_meta_cache *c)
{
	int fd = open(c->path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK), err = 0;
	int prev = c->file_err;
	const char *why = NULL;
	struct stat st;
	size_t len;
	char *buf;

	sbt_podman_meta_table_free(&c->table);
	c->have_file = false;
	if (fd < 0 || fstat(fd, &st) < 0) {
		err = -errno;
		if (err != -ENOENT && err != prev)
			sbt_log("podman metadata: %s: %s", c->path, strerror(-err));
		c->file_err = err;
		if (fd >= 0)
			close(fd);
		return;
	}
	c->have_file = true; /* whatever follows is this file's, until it changes */
	c->dev = st.st_dev;
	c->ino = st.st_ino;
	c->mtime = st.st_mtim;
	c->size = st.st_size;
	c->nr_parses++;
	if (!S_ISREG(st.st_mode)) {
		c->file_err = -EINVAL;
		why = "not a regular file";
	} else if ((unsigned long long)st.st_size > SBT_PODMAN_META_MAX_BYTES) {
		c->file_err = -EFBIG; /* refused before a byte is read */
	} else if (!(buf = sbt_read_capped(fd, SBT_PODMAN_META_MAX_BYTES, &len, &err))) {
		c->file_err = -err;
	} else {
		c->file_err = sbt_podman_meta_parse(buf, len, &c->table, &why);
		free(buf);
	}
	close(fd);
	/* what the content says stays until it changes; ENOMEM, EIO ... are tried again */
	if (c->file_err && c->file_err != -EINVAL && c->file_err != -EFBIG) {
		c->have_file = false;
		if (c->file_err != prev)
			sbt_log("podman metadata: %s: %s", c->path, strerror(-c->file_err));
		return;
	}
	if (c->file_err == -EFBIG)
		sbt_log("podman metadata: %s: larger than %u MiB (%lld bytes): refused; containers "
			"get no name or image until it is smaller",
			c->path, SBT_PODMAN_META_MAX_BYTES >> 20, (long long)st.st_size);
	else if (c->file_err)
		sbt_log("podman metadata: %s: %s; containers get no name or image until it changes",
			c->path, why ? why : strerror(-c->file_err));
	else if (c->table.nr_bad)
		sbt_log("podman metadata: %s: unusable records: %zu, the first: %s", c->path,
			c->table.nr_bad, c->table.first_bad);
}

/* c->table up to date with the file; 0 or the file's error (-ENOENT: none). */
static int cache_refresh(struct sbt_podman_meta_cache *c)
{
	struct stat st;
	int err;

	if (!c->path[0])
		return -ENAMETOOLONG;
	if (stat(c->path, &st) < 0) {
		err = -errno;
		if (err != -ENOENT && err != c->file_err)
			sbt_log("podman metadata: %s: %s", c->path, strerror(-err));
		sbt_podman_meta_table_free(&c->table);
		c->have_file = false;
		c->file_err = err;
		return err;
	}
	if (!same_file(c, &st))
		cache_reload(c);
	return c->file_err;
}

static int copy_out(char *dst, size_t dlen, const char *src)
{
	size_t n = strlen(src);

	if (!dst || n >= dlen)
		return -ERANGE;
	memcpy(dst, src, n + 1);
	return 0;
}

int sbt_podman_meta_lookup(struct sbt_podman_meta_cache *c, const char *id, char *name, size_t nlen,
			   char *image, size_t ilen)
{
	struct sbt_podman_meta_entry key, *e;
	int ret;

	if (name && nlen)
		name[0] = '\0';
	if (image && ilen)
		image[0] = '\0';
	if (!id || strnlen(id, SBT_PODMAN_ID_LEN + 1) != SBT_PODMAN_ID_LEN ||
	    !is_lower_hex(id, SBT_PODMAN_ID_LEN))
		return -EINVAL;
	ret = cache_refresh(c);
	if (ret)
		return ret;
	if (!c->table.nr)
		return -ENOENT;
	memcpy(key.id, id, SBT_PODMAN_ID_LEN + 1);
	e = bsearch(&key, c->table.entries, c->table.nr, sizeof(key), entry_cmp);
	if (!e)
		return -ENOENT;
	if (e->err)
		return e->err;
	ret = copy_out(name, nlen, e->name);
	if (!ret)
		ret = copy_out(image, ilen, e->image);
	if (ret && name && nlen)
		name[0] = '\0';
	return ret;
}
