// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target: the probe's word splitter, build plan (Dockerfile and
 * package.json parsing) and cache reader (userspace/probe/).
 *
 * Input: byte 0 selects, bit 0: the rest is the Dockerfile; bit 1: the rest
 * is package.json; bit 2: a Makefile exists; bits 3-4: --target (none,
 * "builder", "Test", "a b"); bit 5: the rest is also --cmd; bits 6-7: the
 * splitter's max (SBT_PROBE_MAX_ARGS, 0, 1, 3). The rest, up to its first
 * NUL, is split into words; all of it is also a cache entry to read.
 *
 * Invariants: the splitter returns -1 with an error, or 1..max words, all
 * non-NULL and NULL-terminated; a plan is a valid kind with a NULL-terminated
 * argv of argc words (none for DOCKERFILE, which names its stage: --target's, or
 * "" for an unnamed final stage), inputs with
 * 64-hex digests; a failed plan says why and is left empty; a cache read is
 * 0 with an object holding the key, or -EBADMSG.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "probe/probe.h"

#define KEY "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char repo[64];
static char cache_dir[128];

static const char *const targets[] = { NULL, "builder", "Test", "a b" };
static const int maxes[] = { SBT_PROBE_MAX_ARGS, 0, 1, 3 };

static void check(int cond)
{
	if (!cond)
		abort();
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

static void cleanup(void)
{
	if (repo[0])
		nftw(repo, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	strcpy(repo, "/tmp/sbt-fuzz-probe.XXXXXX");
	check(mkdtemp(repo) != NULL);
	snprintf(cache_dir, sizeof(cache_dir), "%s/.cache", repo);
	check(mkdir(cache_dir, 0700) == 0);
	atexit(cleanup);
	return 0;
}

/* Plain write(), no fsync: this runs for every input. */
static void put(const char *dir, const char *name, const uint8_t *data, size_t len, int present)
{
	char path[256];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (!present) {
		check(unlink(path) == 0 || errno == ENOENT);
		return;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	check(fd >= 0);
	while (len > 0) {
		ssize_t n = write(fd, data, len);

		check(n > 0);
		data += n;
		len -= (size_t)n;
	}
	close(fd);
}

static int is_hex64(const char *s)
{
	return strlen(s) == 64 && strspn(s, "0123456789abcdef") == 64;
}

static void split(const char *text, int max)
{
	char *argv[SBT_PROBE_MAX_ARGS + 1], err[128];
	int n;

	err[0] = '\0';
	n = sbt_split_words(text, argv, max, err, sizeof(err));
	if (n < 0) {
		check(n == -1 && err[0] != '\0' && argv[0] == NULL);
		return;
	}
	check(n >= 1 && n <= max && argv[n] == NULL);
	for (int i = 0; i < n; i++) {
		check(argv[i] != NULL && strlen(argv[i]) <= strlen(text));
		free(argv[i]);
	}
}

static void plan(const char *cmd, const char *target)
{
	struct sbt_build_plan p;
	char err[512], key[65];
	int rc;

	err[0] = '\0';
	rc = sbt_probe_plan(repo, cmd, target, NULL, &p, err, sizeof(err));
	if (rc != 0) {
		check(rc == -1 && err[0] != '\0');
		check(p.argc == 0 && p.argv[0] == NULL && p.nr_inputs == 0);
		sbt_build_plan_free(&p);
		return;
	}
	check(p.kind >= SBT_BUILD_CMD && p.kind <= SBT_BUILD_MAKE);
	check(p.argc >= 0 && p.argc <= SBT_PROBE_MAX_ARGS && p.argv[p.argc] == NULL);
	for (int i = 0; i < p.argc; i++)
		check(p.argv[i] != NULL);
	/* DOCKERFILE: the stage asked for, or the default one ("" is an unnamed final stage) */
	if (p.kind == SBT_BUILD_DOCKERFILE)
		check(p.argc == 0 && strlen(p.target) < sizeof(p.target) &&
		      (!target || strcasecmp(p.target, target) == 0));
	else
		check(p.argc > 0 && p.target[0] == '\0');
	if (p.kind == SBT_BUILD_CMD)
		check(cmd != NULL);
	check(p.nr_inputs >= 0 && p.nr_inputs <= SBT_PROBE_MAX_INPUTS);
	for (int i = 0; i < p.nr_inputs; i++)
		check(p.inputs[i].name[0] != '\0' && is_hex64(p.inputs[i].sha256));
	sbt_probe_cache_key(&p, "fuzz", key);
	check(is_hex64(key));
	sbt_build_plan_free(&p);
}

static void cache_read(void)
{
	json_object *report = NULL, *cache, *k;
	int rc = sbt_cache_read(cache_dir, KEY, &report);

	if (rc != 0) {
		check(rc == -EBADMSG && report == NULL);
		return;
	}
	check(json_object_is_type(report, json_type_object));
	check(json_object_object_get_ex(report, "cache", &cache));
	check(json_object_object_get_ex(cache, "key", &k));
	check(strcmp(json_object_get_string(k), KEY) == 0);
	json_object_put(report);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t sel = size ? data[0] : 0;
	const uint8_t *rest = size ? data + 1 : data;
	size_t rlen = size ? size - 1 : 0;
	char *text = malloc(rlen + 1);

	check(text != NULL);
	memcpy(text, rest, rlen);
	text[rlen] = '\0';

	split(text, maxes[sel >> 6]);

	put(repo, "Dockerfile", rest, rlen, sel & 1);
	put(repo, "package.json", rest, rlen, sel & 2);
	put(repo, "Makefile", (const uint8_t *)"all:\n", 5, sel & 4);
	plan(sel & 0x20 ? text : NULL, targets[(sel >> 3) & 3]);

	put(cache_dir, KEY ".json", rest, rlen, 1);
	cache_read();

	free(text);
	return 0;
}
