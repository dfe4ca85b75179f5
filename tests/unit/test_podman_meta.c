// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for podman container metadata (userspace/sandbox/podman_meta.c):
 * cgroup leaf -> id, storage.conf's graphroot, containers.json records (good,
 * missing fields, wrong types, bad metadata, over-long and unprintable
 * strings), the cache's re-read on a change and only then; last, a real
 * podman container when there is root, podman and the project's image.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <json-c/json.h>

#include "sandbox/podman_meta.h"

/* The record `podman create --name pmx localhost/sbtrace-busybox:latest true` wrote (4.3.1). */
#define REAL_ID	   "14953d94d2bb2df39cac144bc18916e75dd81205c32a05957e29cbbabd48ee23"
#define REAL_IMAGE "9915e6020dfd616bc0105313cadbc49bf0f929e272c618df27e92b2724b2bf78"
static const char real_record[] =
	"[{\"id\":\"" REAL_ID "\",\"names\":[\"pmx\"],\"image\":\"" REAL_IMAGE "\","
	"\"layer\":\"5724a69cd0050d08f3ad67f9c1b793a811eea546d2baa955965b876048b3438c\","
	"\"metadata\":\"{\\\"image-name\\\":\\\"localhost/sbtrace-busybox:latest\\\","
	"\\\"image-id\\\":\\\"" REAL_IMAGE "\\\",\\\"name\\\":\\\"pmx\\\","
	"\\\"created-at\\\":1796291459}\",\"created\":\"2026-12-03T09:50:59.237430167Z\","
	"\"flags\":{\"MountLabel\":\"\",\"ProcessLabel\":\"\"}}]\n";

#define ID_A "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define ID_B "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
#define ID_C "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

#define STR	 (SBT_PODMAN_META_STR_MAX + 1)
#define CONF_BIG 4200 /* a line beyond podman_meta.c's 4096 */

/* ---- cgroup leaf -> id ------------------------------------------------ */

static void test_cgroup_id(void **state)
{
	char id[SBT_PODMAN_ID_LEN + 1];

	(void)state;
	assert_true(sbt_podman_cgroup_id("libpod-" ID_C, id));
	assert_string_equal(id, ID_C);
	assert_true(sbt_podman_cgroup_id("libpod-" ID_A ".scope", id));
	assert_string_equal(id, ID_A);

	assert_false(sbt_podman_cgroup_id("libpod-conmon-" ID_C, id));
	assert_string_equal(id, "");
	assert_false(sbt_podman_cgroup_id("libpod-conmon-" ID_C ".scope", id));
	assert_false(sbt_podman_cgroup_id("libpod-" ID_C "0", id)); /* 65 digits */
	assert_false(sbt_podman_cgroup_id("libpod-" ID_C ".scop", id));
	assert_false(sbt_podman_cgroup_id("libpod-" ID_C ".scope/x", id));
	assert_false(sbt_podman_cgroup_id("libpod-" ID_C ".slice", id));
	assert_false(sbt_podman_cgroup_id("libpod-0123456789ABCDEF0123456789abcdef0123456789abcdef"
					  "0123456789abcdef",
					  id)); /* uppercase */
	assert_false(sbt_podman_cgroup_id("libpod-0123", id));
	assert_false(sbt_podman_cgroup_id("libpod-", id));
	assert_false(sbt_podman_cgroup_id("libpod_parent", id));
	assert_false(sbt_podman_cgroup_id(ID_C, id));
	assert_false(sbt_podman_cgroup_id("docker-" ID_C ".scope", id));
	assert_false(sbt_podman_cgroup_id("", id));
	assert_false(sbt_podman_cgroup_id(NULL, id));
}

/* ---- storage.conf ----------------------------------------------------- */

static void conf(const char *text, const char *want_root, const char *want_driver)
{
	char root[PATH_MAX], driver[64];

	memset(root, 'X', sizeof(root));
	memset(driver, 'X', sizeof(driver));
	sbt_podman_storage_conf_parse(text, strlen(text), root, sizeof(root), driver,
				      sizeof(driver));
	assert_string_equal(root, want_root);
	assert_string_equal(driver, want_driver);
}

static void test_storage_conf(void **state)
{
	char big[CONF_BIG];

	(void)state;
	conf("", "", "");
	/* Debian's /usr/share/containers/storage.conf, abridged */
	conf("# This file is the configuration file for all tools\n"
	     "[storage]\n"
	     "\n# Default Storage Driver, Must be set for proper operation.\n"
	     "driver = \"overlay\"\n"
	     "# Temporary storage location\n"
	     "runroot = \"/run/containers/storage\"\n"
	     "graphroot = \"/var/lib/containers/storage\"\n"
	     "[storage.options]\n"
	     "additionalimagestores = [\n"
	     "]\n"
	     "[storage.options.overlay]\n"
	     "mountopt = \"nodev\"\n",
	     "/var/lib/containers/storage", "overlay");
	conf("[storage]\ngraphroot='/srv/c s' # literal\n\tdriver\t=\t\"vfs\"\t\r\n", "/srv/c s",
	     "vfs");
	conf("[ storage ] # spaced\n\"graphroot\" = \"/q\"\n", "/q", "");
	conf("[storage]\ndriver = \"overlay2\"\n", "", "overlay");
	/* another table's, a table array's, outside any table */
	conf("graphroot = \"/top\"\n[storage.options]\ngraphroot = \"/opt\"\n", "", "");
	conf("[[storage]]\ngraphroot = \"/arr\"\n", "", "");
	conf("[storage]\n[other]\ngraphroot = \"/other\"\n", "", "");
	/* unusable values: relative, escaped, unterminated, trailing junk, not a string */
	conf("[storage]\ngraphroot = \"rel/dir\"\n", "", "");
	conf("[storage]\ngraphroot = \"/a\\\\b\"\n", "", "");
	conf("[storage]\ngraphroot = \"/open\n", "", "");
	conf("[storage]\ngraphroot = \"/x\" junk\n", "", "");
	conf("[storage]\ngraphroot = 42\ndriver = \"Over/lay\"\n", "", "");
	conf("[storage]\ngraphroot = \"/\x01\"\n", "", "");
	conf("[storage]\ngraphrootx = \"/x\"\ngraph = \"/y\"\n", "", "");
	/* a later line wins, also when it is unusable */
	conf("[storage]\ngraphroot = \"/one\"\ngraphroot = \"/two\"\n", "/two", "");
	conf("[storage]\ngraphroot = \"/one\"\ngraphroot = \"two\"\n", "", "");
	/* no newline at the end; a line longer than any usable one is skipped */
	conf("[storage]\ngraphroot = \"/end\"", "/end", "");
	memset(big, 'a', sizeof(big));
	memcpy(big, "[storage]\ngraphroot = \"/", 24);
	memcpy(big + sizeof(big) - 3, "\"\n", 3);
	conf(big, "", "");
}

/* ---- containers.json -------------------------------------------------- */

struct parsed {
	struct sbt_podman_meta_table t;
	int ret;
	const char *why;
};

static void parse(struct parsed *p, const char *json)
{
	p->ret = sbt_podman_meta_parse(json, strlen(json), &p->t, &p->why);
}

/* The entry of id in a parsed table (its err, name, image), NULL when there is none. */
static const struct sbt_podman_meta_entry *find(const struct parsed *p, const char *id)
{
	for (size_t i = 0; i < p->t.nr; i++)
		if (strcmp(p->t.entries[i].id, id) == 0)
			return &p->t.entries[i];
	return NULL;
}

static void expect_entry(const char *json, const char *id, int err, const char *name,
			 const char *image)
{
	const struct sbt_podman_meta_entry *e;
	struct parsed p;

	parse(&p, json);
	assert_int_equal(p.ret, 0);
	e = find(&p, id);
	assert_non_null(e);
	assert_int_equal(e->err, err);
	assert_string_equal(e->name, name);
	assert_string_equal(e->image, image);
	assert_int_equal(p.t.nr_bad, err ? 1 : 0);
	sbt_podman_meta_table_free(&p.t);
}

/* A record: names (JSON text or NULL: absent), image (NULL: absent), metadata's object. */
static char *record(const char *id, const char *names, const char *image, json_object *md)
{
	json_object *o = json_object_new_object();
	char *s;

	json_object_object_add(o, "id", json_object_new_string(id));
	if (names)
		json_object_object_add(o, "names", json_tokener_parse(names));
	if (image)
		json_object_object_add(o, "image", json_object_new_string(image));
	if (md) {
		json_object_object_add(o, "metadata",
				       json_object_new_string(json_object_to_json_string(md)));
		json_object_put(md);
	}
	s = strdup(json_object_to_json_string(o));
	json_object_put(o);
	assert_non_null(s);
	return s;
}

/* metadata {"image-name": image, "name": name}, each NULL: absent. */
static json_object *md(const char *image, const char *name)
{
	json_object *o = json_object_new_object();

	if (image)
		json_object_object_add(o, "image-name", json_object_new_string(image));
	if (name)
		json_object_object_add(o, "name", json_object_new_string(name));
	return o;
}

static void expect_record(char *rec, int err, const char *name, const char *image)
{
	char doc[8192];

	snprintf(doc, sizeof(doc), "[%s]", rec);
	free(rec);
	expect_entry(doc, ID_A, err, name, image);
}

static void test_parse_real(void **state)
{
	(void)state;
	expect_entry(real_record, REAL_ID, 0, "pmx", "localhost/sbtrace-busybox:latest");
}

static void test_parse_fallbacks(void **state)
{
	(void)state;
	/* names[0] over metadata's name (a rename changes names) */
	expect_record(record(ID_A, "[\"new\",\"alias\"]", "img", md("i:1", "old")), 0, "new",
		      "i:1");
	/* no names: metadata's name; no metadata: the image id */
	expect_record(record(ID_A, NULL, "img", md("i:1", "mdname")), 0, "mdname", "i:1");
	expect_record(record(ID_A, "[]", "img", md(NULL, "mdname")), 0, "mdname", "img");
	expect_record(record(ID_A, "[\"n\"]", REAL_IMAGE, NULL), 0, "n", REAL_IMAGE);
	/* no image anywhere (a --rootfs container): "" */
	expect_record(record(ID_A, "[\"n\"]", NULL, md(NULL, NULL)), 0, "n", "");
	expect_record(record(ID_A, "[\"n\"]", "", md("", NULL)), 0, "n", "");
	/* metadata: podman's and read leniently, its fields of the wrong type ignored */
	expect_entry("[{\"id\":\"" ID_A "\",\"names\":[\"n\"],\"image\":\"img\","
		     "\"metadata\":\"{\\\"image-name\\\":7,\\\"name\\\":[]}\"}]",
		     ID_A, 0, "n", "img");
}

static void test_parse_bad_metadata(void **state)
{
	(void)state;
	/* a string that is not JSON, or JSON that is not an object: the record's fields */
	expect_entry("[{\"id\":\"" ID_A "\",\"names\":[\"n\"],\"image\":\"img\","
		     "\"metadata\":\"{not json\"}]",
		     ID_A, 0, "n", "img");
	expect_entry("[{\"id\":\"" ID_A "\",\"names\":[\"n\"],\"image\":\"img\","
		     "\"metadata\":\"[1,2]\"}]",
		     ID_A, 0, "n", "img");
	expect_entry("[{\"id\":\"" ID_A "\",\"names\":[\"n\"],\"image\":\"img\","
		     "\"metadata\":\"{}trailing\"}]",
		     ID_A, 0, "n", "img");
	/* and nothing to fall back on: unusable */
	expect_entry("[{\"id\":\"" ID_A "\",\"metadata\":\"nope\"}]", ID_A, -EINVAL, "", "");
	/* metadata must be a string (containers/storage's type) */
	expect_entry("[{\"id\":\"" ID_A "\",\"names\":[\"n\"],\"metadata\":{\"name\":\"x\"}}]",
		     ID_A, -EINVAL, "", "");
}

static void test_parse_wrong_types(void **state)
{
	(void)state;
	expect_entry("[{\"id\":\"" ID_A "\",\"names\":\"n\",\"image\":\"img\"}]", ID_A, -EINVAL, "",
		     "");
	expect_entry("[{\"id\":\"" ID_A "\",\"names\":[\"n\",3],\"image\":\"img\"}]", ID_A, -EINVAL,
		     "", "");
	expect_entry("[{\"id\":\"" ID_A "\",\"names\":[null],\"image\":\"img\"}]", ID_A, -EINVAL,
		     "", "");
	expect_entry("[{\"id\":\"" ID_A "\",\"names\":[\"n\"],\"image\":{}}]", ID_A, -EINVAL, "",
		     "");
	expect_entry("[{\"id\":\"" ID_A "\",\"names\":[\"\"],\"image\":\"img\"}]", ID_A, -EINVAL,
		     "", "");
	/* missing: no name at all */
	expect_entry("[{\"id\":\"" ID_A "\",\"image\":\"img\"}]", ID_A, -EINVAL, "", "");
}

/* Records without a valid id are counted and dropped; the others stay. */
static void test_parse_ids(void **state)
{
	struct parsed p;

	(void)state;
	parse(&p, "[{\"id\":\"" ID_B "\",\"names\":[\"b\"]},"
		  "{\"names\":[\"noid\"]},"
		  "{\"id\":42,\"names\":[\"num\"]},"
		  "{\"id\":\"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\"},"
		  "{\"id\":\"" ID_A "0\"},"
		  "{\"id\":\"aaaa\"},"
		  "{\"id\":\"" ID_A "\\u0000\"},"
		  "\"a string\", 7, null, [],"
		  "{\"id\":\"" ID_C "\",\"names\":[\"c\"],\"image\":\"i\"}]");
	assert_int_equal(p.ret, 0);
	assert_int_equal(p.t.nr, 2);
	assert_int_equal(p.t.nr_bad, 10);
	assert_string_equal(p.t.entries[0].id, ID_C); /* sorted */
	assert_string_equal(p.t.entries[0].name, "c");
	assert_string_equal(p.t.entries[1].name, "b");
	assert_string_equal(p.t.entries[1].image, "");
	assert_non_null(strstr(p.t.first_bad, "record 1"));
	assert_null(find(&p, ID_A));
	sbt_podman_meta_table_free(&p.t);

	/* an id twice: neither record is believed */
	parse(&p,
	      "[{\"id\":\"" ID_A "\",\"names\":[\"one\"]},{\"id\":\"" ID_B "\",\"names\":[\"b\"]},"
	      "{\"id\":\"" ID_A "\",\"names\":[\"two\"]}]");
	assert_int_equal(p.ret, 0);
	assert_int_equal(p.t.nr, 3);
	assert_int_equal(p.t.nr_bad, 2);
	for (size_t i = 0; i < 2; i++) {
		assert_string_equal(p.t.entries[i].id, ID_A);
		assert_int_equal(p.t.entries[i].err, -EINVAL);
		assert_string_equal(p.t.entries[i].name, "");
	}
	assert_int_equal(p.t.entries[2].err, 0);
	sbt_podman_meta_table_free(&p.t);
}

static void test_parse_long_and_unprintable(void **state)
{
	char name[SBT_PODMAN_META_STR_MAX + 2], names[SBT_PODMAN_META_STR_MAX + 8];

	(void)state;
	memset(name, 'n', sizeof(name));
	name[SBT_PODMAN_META_STR_MAX] = '\0'; /* 255: fits */
	snprintf(names, sizeof(names), "[\"%s\"]", name);
	expect_record(record(ID_A, names, "img", NULL), 0, name, "img");
	expect_record(record(ID_A, "[\"n\"]", name, NULL), 0, "n", name);
	name[SBT_PODMAN_META_STR_MAX] = 'n'; /* 256: too long */
	name[SBT_PODMAN_META_STR_MAX + 1] = '\0';
	snprintf(names, sizeof(names), "[\"%s\"]", name);
	expect_record(record(ID_A, names, "img", NULL), -EINVAL, "", "");
	expect_record(record(ID_A, "[\"n\"]", "img", md(name, NULL)), -EINVAL, "", "");
	expect_record(record(ID_A, NULL, "img", md(NULL, name)), -EINVAL, "", "");

	/* control bytes, DEL, a NUL within, bytes beyond ASCII: refused, never copied */
	expect_record(record(ID_A, "[\"a\\u001b[31mred\"]", "img", NULL), -EINVAL, "", "");
	expect_record(record(ID_A, "[\"a\\nb\"]", "img", NULL), -EINVAL, "", "");
	expect_record(record(ID_A, "[\"a\\u007f\"]", "img", NULL), -EINVAL, "", "");
	expect_record(record(ID_A, "[\"cut\\u0000hidden\"]", "img", NULL), -EINVAL, "", "");
	expect_record(record(ID_A, "[\"caf\\u00e9\"]", "img", NULL), -EINVAL, "", "");
	expect_record(record(ID_A, "[\"n\"]", "img", md("i\tmg", NULL)), -EINVAL, "", "");
	expect_record(record(ID_A, "[\"n\"]", "i\x01mg", NULL), -EINVAL, "", "");
	/* printable punctuation and a space are kept as they are */
	expect_record(record(ID_A, "[\"a b~\\\"q\\\"\"]", "r.example/x:1@sha256:ab", NULL), 0,
		      "a b~\"q\"", "r.example/x:1@sha256:ab");
}

static void test_parse_bad_files(void **state)
{
	static const char *const bad[] = {
		"",    "  ",  "{}",    "{\"id\":\"" ID_A "\"}", "\"x\"", "null", "[",
		"[1,", "[]x", "[] []",
	};
	struct parsed p;
	static const char nul[] = "[]\0";

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		parse(&p, bad[i]);
		assert_int_equal(p.ret, -EINVAL);
		assert_non_null(p.why);
		assert_int_equal(p.t.nr, 0);
		sbt_podman_meta_table_free(&p.t);
	}
	p.ret = sbt_podman_meta_parse(nul, sizeof(nul) - 1, &p.t, &p.why);
	assert_int_equal(p.ret, -EINVAL);
	p.ret = sbt_podman_meta_parse("[]", SBT_PODMAN_META_MAX_BYTES + 1ul, &p.t, &p.why);
	assert_int_equal(p.ret, -EFBIG);
	parse(&p, "[]\n");
	assert_int_equal(p.ret, 0);
	assert_int_equal(p.t.nr, 0);
	sbt_podman_meta_table_free(&p.t);
}

/* ---- the cache, on files ---------------------------------------------- */

struct dir {
	char path[64];
	char conf[128]; /* an empty storage.conf */
	char cdir[128]; /* path/overlay-containers */
	char file[192]; /* cdir/containers.json */
	struct sbt_podman_meta_cache c;
	char name[STR], image[STR];
};

static void write_file(const char *path, const char *text)
{
	char tmp[PATH_MAX + 8];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, strlen(text), f), strlen(text));
	assert_int_equal(fclose(f), 0);
	assert_int_equal(rename(tmp, path), 0); /* as containers/storage does: a new inode */
}

static int dir_setup(void **state)
{
	struct dir *d = calloc(1, sizeof(*d));

	if (!d)
		return -1;
	snprintf(d->path, sizeof(d->path), "/tmp/sbt-test-podman-meta.XXXXXX");
	if (!mkdtemp(d->path)) {
		free(d);
		return -1;
	}
	snprintf(d->conf, sizeof(d->conf), "%s/storage.conf", d->path);
	snprintf(d->cdir, sizeof(d->cdir), "%s/overlay-containers", d->path);
	snprintf(d->file, sizeof(d->file), "%s/containers.json", d->cdir);
	if (mkdir(d->cdir, 0700) || setenv("CONTAINERS_STORAGE_CONF", d->conf, 1)) {
		free(d);
		return -1;
	}
	write_file(d->conf, "");
	sbt_podman_meta_cache_init(&d->c, d->path);
	*state = d;
	return 0;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

static int dir_teardown(void **state)
{
	struct dir *d = *state;
	int ret = nftw(d->path, remove_one, 8, FTW_DEPTH | FTW_PHYS);

	sbt_podman_meta_cache_free(&d->c);
	unsetenv("CONTAINERS_STORAGE_CONF");
	free(d);
	return ret;
}

static int lookup(struct dir *d, const char *id)
{
	return sbt_podman_meta_lookup(&d->c, id, d->name, sizeof(d->name), d->image,
				      sizeof(d->image));
}

static void test_cache_path(void **state)
{
	struct dir *d = *state;
	struct sbt_podman_meta_cache c;
	char want[PATH_MAX + 64];

	assert_string_equal(d->c.path, d->file);
	/* NULL: storage.conf's graphroot and driver */
	write_file(d->conf, "[storage]\ndriver = \"vfs\"\ngraphroot = \"/srv/store\"\n");
	sbt_podman_meta_cache_init(&c, NULL);
	assert_string_equal(c.path, "/srv/store/vfs-containers/containers.json");
	sbt_podman_meta_cache_free(&c);
	/* a graphroot given: storage.conf's driver still */
	sbt_podman_meta_cache_init(&c, "/g");
	assert_string_equal(c.path, "/g/vfs-containers/containers.json");
	sbt_podman_meta_cache_free(&c);
	/* none in it: the default */
	write_file(d->conf, "# nothing\n");
	sbt_podman_meta_cache_init(&c, NULL);
	snprintf(want, sizeof(want), "%s/overlay-containers/containers.json",
		 SBT_PODMAN_GRAPHROOT_DEFAULT);
	assert_string_equal(c.path, want);
	sbt_podman_meta_cache_free(&c);
}

/* Found, then again without a parse; unknown ids do not re-read an unchanged file. */
static void test_cache_unchanged_not_reread(void **state)
{
	struct dir *d = *state;

	write_file(d->file, real_record);
	assert_int_equal(lookup(d, REAL_ID), 0);
	assert_string_equal(d->name, "pmx");
	assert_string_equal(d->image, "localhost/sbtrace-busybox:latest");
	assert_int_equal(d->c.nr_parses, 1);
	for (int i = 0; i < 5; i++) {
		assert_int_equal(lookup(d, REAL_ID), 0);
		assert_int_equal(lookup(d, ID_B), -ENOENT);
		assert_string_equal(d->name, "");
	}
	assert_int_equal(d->c.nr_parses, 1);
}

/* A container created after the last parse: the file changed, one re-read finds it. */
static void test_cache_changed_reread(void **state)
{
	struct dir *d = *state;
	char doc[4096];
	char *rec = record(ID_B, "[\"later\"]", REAL_IMAGE, md("localhost/later:1", "later"));
	struct timespec ts[2] = { { 0, UTIME_OMIT }, { 1700000000, 0 } };

	write_file(d->file, real_record);
	assert_int_equal(lookup(d, ID_B), -ENOENT);
	assert_int_equal(d->c.nr_parses, 1);
	snprintf(doc, sizeof(doc), "%.*s,%s]", (int)strlen(real_record) - 2, real_record, rec);
	free(rec);
	write_file(d->file, doc);
	assert_int_equal(lookup(d, ID_B), 0);
	assert_string_equal(d->name, "later");
	assert_string_equal(d->image, "localhost/later:1");
	assert_int_equal(lookup(d, REAL_ID), 0);
	assert_int_equal(d->c.nr_parses, 2);

	/* the same inode and size, another mtime (rewritten in place): read again */
	assert_int_equal(utimensat(AT_FDCWD, d->file, ts, 0), 0);
	assert_int_equal(lookup(d, ID_B), 0);
	assert_int_equal(d->c.nr_parses, 3);
	assert_int_equal(lookup(d, ID_B), 0);
	assert_int_equal(d->c.nr_parses, 3);

	/* removed: nothing known; back: read again */
	assert_int_equal(unlink(d->file), 0);
	assert_int_equal(lookup(d, REAL_ID), -ENOENT);
	write_file(d->file, real_record);
	assert_int_equal(lookup(d, REAL_ID), 0);
	assert_int_equal(lookup(d, ID_B), -ENOENT);
	assert_int_equal(d->c.nr_parses, 4);
}

/* No file (podman never ran), a broken one (its error until it changes, one parse). */
static void test_cache_errors(void **state)
{
	struct dir *d = *state;
	char small[4];

	assert_int_equal(lookup(d, REAL_ID), -ENOENT);
	assert_int_equal(d->c.nr_parses, 0);
	write_file(d->file, "[{\"id\":");
	assert_int_equal(lookup(d, REAL_ID), -EINVAL);
	assert_int_equal(lookup(d, REAL_ID), -EINVAL);
	assert_int_equal(d->c.nr_parses, 1);
	write_file(d->file, real_record);
	assert_int_equal(lookup(d, REAL_ID), 0);
	assert_int_equal(d->c.nr_parses, 2);

	/* invalid ids, buffers too small */
	assert_int_equal(lookup(d, "pmx"), -EINVAL);
	assert_int_equal(lookup(d, REAL_ID "0"), -EINVAL);
	assert_int_equal(
		lookup(d, "14953D94D2BB2DF39CAC144BC18916E75DD81205C32A05957E29CBBABD48EE23"),
		-EINVAL);
	assert_int_equal(lookup(d, NULL), -EINVAL);
	assert_int_equal(sbt_podman_meta_lookup(&d->c, REAL_ID, small, sizeof(small), d->image,
						sizeof(d->image)),
			 0); /* "pmx" fits in 4 */
	assert_int_equal(
		sbt_podman_meta_lookup(&d->c, REAL_ID, small, 3, d->image, sizeof(d->image)),
		-ERANGE);
	assert_string_equal(small, "");
	assert_int_equal(sbt_podman_meta_lookup(&d->c, REAL_ID, d->name, sizeof(d->name), small,
						sizeof(small)),
			 -ERANGE);
	assert_string_equal(d->name, "");

	/* a directory in its place */
	assert_int_equal(unlink(d->file), 0);
	assert_int_equal(mkdir(d->file, 0700), 0);
	assert_int_equal(lookup(d, REAL_ID), -EINVAL);
	assert_int_equal(rmdir(d->file), 0);
}

/* Beyond 16 MiB: -EFBIG without reading it (a sparse file), once, until it changes. */
static void test_cache_too_big(void **state)
{
	struct dir *d = *state;
	int fd = open(d->file, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, SBT_PODMAN_META_MAX_BYTES + 1), 0);
	close(fd);
	assert_int_equal(lookup(d, REAL_ID), -EFBIG);
	assert_int_equal(lookup(d, REAL_ID), -EFBIG);
	assert_int_equal(d->c.nr_parses, 1);
	write_file(d->file, real_record);
	assert_int_equal(lookup(d, REAL_ID), 0);
}

/* A bad record among good ones: only its own lookup fails. */
static void test_cache_bad_record(void **state)
{
	struct dir *d = *state;

	write_file(d->file, "[{\"id\":\"" ID_A "\",\"names\":[\"a\\u0007\"],\"image\":\"i\"},"
			    "{\"id\":\"" ID_B "\",\"names\":[\"b\"],\"image\":\"i\"}]");
	assert_int_equal(lookup(d, ID_A), -EINVAL);
	assert_int_equal(lookup(d, ID_B), 0);
	assert_string_equal(d->name, "b");
	assert_int_equal(d->c.nr_parses, 1);
}

/* ---- a real podman container ------------------------------------------ */

#define PODMAN	     "podman --runtime runc --cgroup-manager cgroupfs --events-backend file "
#define PODMAN_IMAGE "localhost/sbtrace-busybox:latest"

/* cmd's first line of stdout into out (stderr dropped); false when it fails. */
static bool run_line(const char *cmd, char *out, size_t len)
{
	FILE *p = popen(cmd, "r");
	bool ok;

	out[0] = '\0';
	if (!p)
		return false;
	ok = fgets(out, (int)len, p) != NULL;
	if (pclose(p) != 0)
		ok = false;
	out[strcspn(out, "\n")] = '\0';
	return ok;
}

static void test_real_podman(void **state)
{
	struct sbt_podman_meta_cache c;
	char cmd[256], id[128], name[64], got_name[STR], got_image[STR];
	int ret;

	(void)state;
	if (geteuid() != 0 || system("command -v podman > /dev/null 2>&1") != 0 ||
	    system(PODMAN "image exists " PODMAN_IMAGE " > /dev/null 2>&1") != 0) {
		printf("test_real_podman: skipped (needs root, podman and " PODMAN_IMAGE
		       ": scripts/podman-setup.sh)\n");
		skip();
	}
	snprintf(name, sizeof(name), "sbt-test-podman-meta-%d", (int)getpid());
	snprintf(cmd, sizeof(cmd),
		 PODMAN "create --network none --name %s " PODMAN_IMAGE " true 2> /dev/null", name);
	if (!run_line(cmd, id, sizeof(id))) {
		printf("test_real_podman: skipped (podman create fails here)\n");
		skip();
	}
	unsetenv("CONTAINERS_STORAGE_CONF");
	sbt_podman_meta_cache_init(&c, NULL); /* the host's storage.conf, as the agent's */
	ret = sbt_podman_meta_lookup(&c, id, got_name, sizeof(got_name), got_image,
				     sizeof(got_image));
	sbt_podman_meta_cache_free(&c);
	snprintf(cmd, sizeof(cmd), PODMAN "rm -f %s > /dev/null 2>&1", name);
	if (system(cmd) != 0)
		printf("test_real_podman: could not remove container %s\n", name);
	assert_int_equal(ret, 0);
	assert_string_equal(got_name, name);
	assert_string_equal(got_image, PODMAN_IMAGE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cgroup_id),
		cmocka_unit_test(test_storage_conf),
		cmocka_unit_test(test_parse_real),
		cmocka_unit_test(test_parse_fallbacks),
		cmocka_unit_test(test_parse_bad_metadata),
		cmocka_unit_test(test_parse_wrong_types),
		cmocka_unit_test(test_parse_ids),
		cmocka_unit_test(test_parse_long_and_unprintable),
		cmocka_unit_test(test_parse_bad_files),
		cmocka_unit_test_setup_teardown(test_cache_path, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(test_cache_unchanged_not_reread, dir_setup,
						dir_teardown),
		cmocka_unit_test_setup_teardown(test_cache_changed_reread, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(test_cache_errors, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(test_cache_too_big, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(test_cache_bad_record, dir_setup, dir_teardown),
		cmocka_unit_test(test_real_podman),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
