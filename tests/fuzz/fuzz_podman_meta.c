// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target: containers/storage's containers.json as the agent reads it
 * (sbt_podman_meta_parse(), userspace/sandbox/podman_meta.c), and storage.conf's
 * line parser on the same bytes. The input is tried three ways: as the whole
 * file; as a record's "metadata" string (podman's JSON inside a JSON string);
 * as its names[0]; the last two reach the record checks without a corpus.
 *
 * Invariants: 0 with entries sorted by id, each id 64 lowercase hex, and either
 * err 0 with a non-empty name and an image (maybe "") of at most 255 printable
 * ASCII bytes, or err -EINVAL with both ""; or an error < 0 with why set.
 * storage.conf: both outputs NUL-terminated, a graphroot "" or absolute.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "sandbox/podman_meta.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define ID "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static bool printable(const char *s)
{
	size_t n = strnlen(s, SBT_PODMAN_META_STR_MAX + 1);

	if (n > SBT_PODMAN_META_STR_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] > 0x7e)
			return false;
	return true;
}

static void check_entry(const struct sbt_podman_meta_entry *e)
{
	if (strlen(e->id) != SBT_PODMAN_ID_LEN ||
	    strspn(e->id, "0123456789abcdef") != SBT_PODMAN_ID_LEN)
		abort();
	if (e->err == 0 && (!e->name[0] || !printable(e->name) || !printable(e->image)))
		abort();
	if (e->err != 0 && (e->err != -EINVAL || e->name[0] || e->image[0]))
		abort();
}

static void parse_checked(const char *buf, size_t len)
{
	struct sbt_podman_meta_table t;
	const char *why;
	int ret = sbt_podman_meta_parse(buf, len, &t, &why);

	if (ret < 0) {
		if (!why || t.nr || t.entries)
			abort();
		return;
	}
	if (ret != 0)
		abort();
	for (size_t i = 0; i < t.nr; i++) {
		check_entry(&t.entries[i]);
		if (i && strcmp(t.entries[i - 1].id, t.entries[i].id) > 0)
			abort();
	}
	if (t.nr_bad && !memchr(t.first_bad, '\0', sizeof(t.first_bad)))
		abort();
	sbt_podman_meta_table_free(&t);
}

/* One record with the input as `key` (a string), parsed as a whole file. */
static void parse_as_field(const uint8_t *data, size_t size, const char *key)
{
	json_object *rec = json_object_new_object(), *names = json_object_new_array();
	json_object *arr = json_object_new_array();
	const char *doc;
	size_t len;

	json_object_object_add(rec, "id", json_object_new_string(ID));
	json_object_object_add(rec, "image", json_object_new_string("img"));
	if (strcmp(key, "names") == 0) {
		json_object_array_add(names,
				      json_object_new_string_len((const char *)data, (int)size));
	} else {
		json_object_array_add(names, json_object_new_string("n"));
		json_object_object_add(rec, key,
				       json_object_new_string_len((const char *)data, (int)size));
	}
	json_object_object_add(rec, "names", names);
	json_object_array_add(arr, rec);
	doc = json_object_to_json_string_length(arr, JSON_C_TO_STRING_PLAIN, &len);
	if (doc)
		parse_checked(doc, len);
	json_object_put(arr);
}

static void conf_checked(const uint8_t *data, size_t size)
{
	char root[PATH_MAX], driver[64];

	sbt_podman_storage_conf_parse((const char *)data, size, root, sizeof(root), driver,
				      sizeof(driver));
	if (!memchr(root, '\0', sizeof(root)) || !memchr(driver, '\0', sizeof(driver)) ||
	    (root[0] && root[0] != '/'))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char id[SBT_PODMAN_ID_LEN + 1], *leaf;

	if (size > (1u << 20))
		return 0;
	parse_checked((const char *)data, size);
	parse_as_field(data, size, "metadata");
	parse_as_field(data, size, "names");
	conf_checked(data, size);
	leaf = strndup((const char *)data, size);
	if (leaf && sbt_podman_cgroup_id(leaf, id) &&
	    (strlen(id) != SBT_PODMAN_ID_LEN || strncmp(leaf, "libpod-", 7) != 0 ||
	     memcmp(leaf + 7, id, SBT_PODMAN_ID_LEN) != 0))
		abort();
	free(leaf);
	return 0;
}
