// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The content cache: its key and its entries (see probe.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/io.h"
#include "lib/jsondoc.h"
#include "probe_int.h"
#include "lib/sha256.h"

#define CACHE_MAX	 (4u << 20) /* one cache entry */
#define CACHE_KEY_DOMAIN "sbtrace probe cache key v2"

/* --- cache key ---------------------------------------------------------- */

static void key_u64(struct sbt_sha256 *ctx, uint64_t v)
{
	unsigned char b[8];

	for (int i = 7; i >= 0; i--) {
		b[i] = (unsigned char)v;
		v >>= 8;
	}
	sbt_sha256_update(ctx, b, sizeof(b));
}

/* Length-prefixed: no two different plans collide by concatenation. */
static void key_bytes(struct sbt_sha256 *ctx, const char *s, size_t n)
{
	key_u64(ctx, n);
	sbt_sha256_update(ctx, s, n);
}

void sbt_probe_cache_key(const struct sbt_build_plan *plan, const char *version, char hex[65])
{
	struct sbt_sha256 ctx;
	uint8_t md[32];
	int argc = 0, nin;

	hex[0] = '\0';
	if (!plan)
		return;
	while (argc < plan->argc && argc < SBT_PROBE_MAX_ARGS && plan->argv[argc])
		argc++;
	nin = plan->nr_inputs < 0		       ? 0
	      : plan->nr_inputs > SBT_PROBE_MAX_INPUTS ? SBT_PROBE_MAX_INPUTS
						       : plan->nr_inputs;
	if (!version)
		version = "";
	sbt_sha256_init(&ctx);
	key_bytes(&ctx, CACHE_KEY_DOMAIN, sizeof(CACHE_KEY_DOMAIN) - 1);
	key_bytes(&ctx, version, strlen(version));
	key_u64(&ctx, (uint64_t)plan->kind);
	key_u64(&ctx, (uint64_t)argc);
	for (int i = 0; i < argc; i++)
		key_bytes(&ctx, plan->argv[i], strlen(plan->argv[i]));
	key_bytes(&ctx, plan->target, strnlen(plan->target, sizeof(plan->target)));
	if (plan->install) { /* none: the key as before; a NUL no input name holds tags it */
		key_bytes(&ctx, "\0install", 8);
		for (const char *const *w = plan->install; *w; w++)
			key_bytes(&ctx, *w, strlen(*w));
	}
	key_u64(&ctx, (uint64_t)nin);
	for (int i = 0; i < nin; i++) {
		const struct sbt_probe_input *in = &plan->inputs[i];

		key_bytes(&ctx, in->name, strnlen(in->name, sizeof(in->name)));
		key_bytes(&ctx, in->sha256, strnlen(in->sha256, sizeof(in->sha256)));
	}
	sbt_sha256_final(&ctx, md);
	sbt_sha256_hex(md, hex);
}

/* --- cache files -------------------------------------------------------- */

static bool valid_key(const char *key)
{
	if (!key)
		return false;
	for (int i = 0; i < 64; i++) {
		if (!((key[i] >= '0' && key[i] <= '9') || (key[i] >= 'a' && key[i] <= 'f')))
			return false;
	}
	return key[64] == '\0';
}

static int entry_path(char *buf, size_t len, const char *dir, const char *prefix, const char *key,
		      const char *suffix)
{
	int n = snprintf(buf, len, "%s/%s%s.json%s", dir, prefix, key, suffix);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int sbt_cache_read(const char *dir, const char *key, json_object **report)
{
	char path[PATH_MAX], *buf;
	json_object *obj, *cache, *k;
	const char *why, *kind;
	size_t len;
	int rc, e;

	if (report)
		*report = NULL;
	if (!report || !dir || !dir[0] || !valid_key(key))
		return -EINVAL;
	rc = entry_path(path, sizeof(path), dir, "", key, "");
	if (rc < 0)
		return rc;
	buf = sbt_read_regular(AT_FDCWD, path, CACHE_MAX, &len, &e, &kind);
	if (!buf && kind) /* not a regular file: no entry of ours */
		return -EBADMSG;
	if (!buf)
		return e == EFBIG ? -EBADMSG : e > 0 ? -e : -EIO;
	obj = sbt_json_parse_doc(buf, len, &why);
	free(buf);
	if (!obj)
		return -EBADMSG;
	if (!json_object_is_type(obj, json_type_object) ||
	    !json_object_object_get_ex(obj, "cache", &cache) ||
	    !json_object_is_type(cache, json_type_object) ||
	    !json_object_object_get_ex(cache, "key", &k) ||
	    !json_object_is_type(k, json_type_string) ||
	    strcmp(json_object_get_string(k), key) != 0) {
		json_object_put(obj);
		return -EBADMSG;
	}
	*report = obj;
	return 0;
}

/* mkdir -p; directories it creates are 0700. */
static int mkdir_p(const char *dir)
{
	char path[PATH_MAX];
	size_t len = strlen(dir);
	struct stat st;

	if (len == 0 || len >= sizeof(path))
		return len ? -ENAMETOOLONG : -EINVAL;
	memcpy(path, dir, len + 1);
	for (size_t i = 1; i <= len; i++) {
		if (path[i] != '/' && path[i] != '\0')
			continue;
		if (path[i - 1] == '/')
			continue;
		path[i] = '\0';
		if (mkdir(path, 0700) < 0 && errno != EEXIST) {
			int e = errno;

			/* e.g. EROFS or EACCES for a directory that exists */
			if (stat(path, &st) < 0 || !S_ISDIR(st.st_mode))
				return -e;
		}
		path[i] = dir[i];
	}
	if (stat(dir, &st) < 0)
		return -errno;
	return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}

int sbt_cache_write(const char *dir, const char *key, json_object *report)
{
	char path[PATH_MAX], *line;
	const char *text;
	size_t len;
	int rc;

	if (!report || !dir || !dir[0] || !valid_key(key))
		return -EINVAL;
	rc = entry_path(path, sizeof(path), dir, "", key, "");
	if (rc < 0)
		return rc;
	text = json_object_to_json_string_ext(report, JSON_C_TO_STRING_PLAIN);
	if (!text)
		return -ENOMEM;
	len = strlen(text);
	if (len + 1 > CACHE_MAX)
		return -EFBIG; /* sbt_cache_read would refuse it */
	rc = mkdir_p(dir);
	if (rc < 0)
		return rc;
	line = malloc(len + 1);
	if (!line)
		return -ENOMEM;
	memcpy(line, text, len);
	line[len] = '\n';
	/* a crash leaves the old entry or the whole new one, and the rename durable */
	rc = sbt_write_atomic(path, line, len + 1, 0600, SBT_ATOMIC_SYNC_DIR);
	free(line);
	return rc;
}

int sbt_cache_default_dir(char *buf, size_t len)
{
	/* secure_getenv: a privileged (setuid / file-capability) sbtrace ignores them. */
	const char *xdg = secure_getenv("XDG_CACHE_HOME");
	const char *home = secure_getenv("HOME");
	int n;

	if (!buf || len == 0)
		return -EINVAL;
	buf[0] = '\0';
	if (xdg && xdg[0] == '/')
		n = snprintf(buf, len, "%s/sbtrace", xdg);
	else if (home && home[0] == '/')
		n = snprintf(buf, len, "%s/.cache/sbtrace", home);
	else
		return -ENOENT;
	if (n < 0 || (size_t)n >= len) {
		buf[0] = '\0';
		return -ENAMETOOLONG;
	}
	return 0;
}
