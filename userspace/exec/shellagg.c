// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Shell invocations grouped by (shell, kind, command, ancestor comm chain):
 * one location per distinct shell command, so no command hides behind
 * another of the same chain. Past SBT_SHELLAGG_MAX_LOCATIONS distinct ones,
 * new locations are counted (by their key's hash) but not listed.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "event/envelope.h"
#include "exec/shellagg.h"

#define SHELLAGG_INIT_BUCKETS 64

struct shell_location {
	/* key */
	char shell[SBT_SHELL_NAME_MAX];
	enum sbt_shell_kind kind;
	int failed;    /* the errno of an exec that failed (a shell not there), 0: it ran */
	char *command; /* what the shell was asked to run (see command_text) */
	const char *identified_by; /* a literal: how the first sample was known */
	struct sbt_ancestor *anc;  /* nearest first, comms terminated */
	size_t nanc;
	uint64_t hash;
	/* first sample */
	char *multicall;
	char *filename;
	char **argv;
	size_t argc;
	char *chain; /* outermost first: "make>npm>sh" */
	uint32_t first_pid;
	uint64_t count;
};

struct sbt_shellagg {
	struct shell_location **locs; /* order of first appearance */
	size_t nr_locs;
	size_t locs_cap;
	size_t *buckets;   /* index + 1 into locs, 0 when free; open addressing */
	size_t nr_buckets; /* power of two */
	uint64_t count;
	/* locations past the cap: their keys' hashes (open addressing, 0 = free) */
	uint64_t *omitted;
	size_t nr_omitted, omitted_cap;
	uint64_t omitted_count;
	uint64_t failed_count; /* of count: attempts that failed */
	/* executables that could not be placed (sbt_shellagg_unidentified), by filename */
	struct unidentified_exe *unidentified[SBT_SHELLAGG_MAX_UNIDENTIFIED];
	size_t nr_unidentified;
	uint64_t unidentified_count, unidentified_omitted;
};

struct unidentified_exe {
	char *filename;
	char exe_name[SBT_EXE_NAME_LEN + 1];
	char **argv; /* the first sample's, up to UNIDENTIFIED_ARGS */
	size_t argc;
	bool command_string; /* some sample ran it as `X -c STRING` */
	uint32_t first_pid;
	uint64_t count;
};

#define UNIDENTIFIED_ARGS 8

/* FNV-1a */
static uint64_t hash_bytes(uint64_t h, const void *data, size_t len)
{
	const unsigned char *p = data;
	size_t i;

	for (i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

/* What a location is grouped by. */
struct loc_key {
	const char *shell;
	enum sbt_shell_kind kind;
	int failed;
	const char *command;
	const struct sbt_ancestor *anc;
	size_t nanc;
	uint64_t hash;
};

static uint64_t key_hash(const struct loc_key *k)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	uint32_t kf = (uint32_t)k->kind | (uint32_t)k->failed << 8;
	size_t i;

	/* Lengths are bounded by the fixed arrays; the terminating NUL separates fields. */
	h = hash_bytes(h, k->shell, strnlen(k->shell, SBT_SHELL_NAME_MAX - 1) + 1);
	h = hash_bytes(h, &kf, sizeof(kf));
	h = hash_bytes(h, k->command, strlen(k->command) + 1);
	for (i = 0; i < k->nanc; i++)
		h = hash_bytes(h, k->anc[i].comm, strnlen(k->anc[i].comm, SBT_COMM_LEN - 1) + 1);
	return h;
}

static bool key_equal(const struct shell_location *loc, const struct loc_key *k)
{
	size_t i;

	if (loc->hash != k->hash || loc->kind != k->kind || loc->failed != k->failed ||
	    loc->nanc != k->nanc || strncmp(loc->shell, k->shell, SBT_SHELL_NAME_MAX - 1) != 0 ||
	    strcmp(loc->command, k->command) != 0)
		return false;
	for (i = 0; i < k->nanc; i++) {
		if (strncmp(loc->anc[i].comm, k->anc[i].comm, SBT_COMM_LEN - 1) != 0)
			return false;
	}
	return true;
}

struct sbt_shellagg *sbt_shellagg_new(void)
{
	struct sbt_shellagg *agg = calloc(1, sizeof(*agg));

	if (!agg)
		return NULL;
	agg->buckets = calloc(SHELLAGG_INIT_BUCKETS, sizeof(*agg->buckets));
	if (!agg->buckets) {
		free(agg);
		return NULL;
	}
	agg->nr_buckets = SHELLAGG_INIT_BUCKETS;
	return agg;
}

static void location_free(struct shell_location *loc)
{
	size_t i;

	if (!loc)
		return;
	if (loc->argv) {
		for (i = 0; i < loc->argc; i++)
			free(loc->argv[i]);
		free(loc->argv);
	}
	free(loc->anc);
	free(loc->command);
	free(loc->multicall);
	free(loc->filename);
	free(loc->chain);
	free(loc);
}

static void unidentified_free(struct unidentified_exe *u)
{
	for (size_t i = 0; i < u->argc; i++)
		free(u->argv[i]);
	free(u->argv);
	free(u->filename);
	free(u);
}

void sbt_shellagg_free(struct sbt_shellagg *agg)
{
	size_t i;

	if (!agg)
		return;
	for (i = 0; i < agg->nr_locs; i++)
		location_free(agg->locs[i]);
	for (i = 0; i < agg->nr_unidentified; i++)
		unidentified_free(agg->unidentified[i]);
	free(agg->locs);
	free(agg->buckets);
	free(agg->omitted);
	free(agg);
}

/* The bucket holding the location with this key, or the free one where it would go. */
static size_t *find_bucket(const struct sbt_shellagg *agg, const struct loc_key *k)
{
	size_t mask = agg->nr_buckets - 1;
	size_t i = (size_t)k->hash & mask;

	while (agg->buckets[i] && !key_equal(agg->locs[agg->buckets[i] - 1], k))
		i = (i + 1) & mask;
	return &agg->buckets[i];
}

static int rehash(struct sbt_shellagg *agg)
{
	size_t nr = agg->nr_buckets * 2;
	size_t *buckets, i, j;

	if (nr > SIZE_MAX / sizeof(*buckets))
		return -ENOMEM;
	buckets = calloc(nr, sizeof(*buckets));
	if (!buckets)
		return -ENOMEM;
	for (i = 0; i < agg->nr_locs; i++) {
		j = (size_t)agg->locs[i]->hash & (nr - 1);
		while (buckets[j])
			j = (j + 1) & (nr - 1);
		buckets[j] = i + 1;
	}
	free(agg->buckets);
	agg->buckets = buckets;
	agg->nr_buckets = nr;
	return 0;
}

static char *dup_or_null(const char *s, int *err)
{
	char *d;

	if (!s)
		return NULL;
	d = strdup(s);
	if (!d)
		*err = -ENOMEM;
	return d;
}

/* Comms joined by '>', from the outermost ancestor (last) to the nearest (first). */
static char *build_chain(const struct sbt_ancestor *anc, size_t nanc)
{
	size_t len = 1, i, n;
	char *chain, *p;

	for (i = 0; i < nanc; i++)
		len += strnlen(anc[i].comm, SBT_COMM_LEN - 1) + 1;
	chain = malloc(len);
	if (!chain)
		return NULL;
	p = chain;
	for (i = nanc; i-- > 0;) {
		n = strnlen(anc[i].comm, SBT_COMM_LEN - 1);
		memcpy(p, anc[i].comm, n);
		p += n;
		if (i > 0)
			*p++ = '>';
	}
	*p = '\0';
	return chain;
}

/*
 * What the shell was asked to run, the grouping key's command: the -c
 * argument; otherwise its arguments after argv[0] (a script and its
 * arguments, a shebang script's path and arguments, a direct shell's
 * options), joined by blanks, each with blanks or quotes inside in '...'.
 */
static char *command_text(const struct sbt_shell_class *cls, const char *const *argv, size_t argc)
{
	size_t len = 1, i;
	char *out, *p;

	if (cls->kind == SBT_SHELL_COMMAND && cls->command)
		return strdup(cls->command);
	for (i = 1; i < argc; i++)
		len += 4 * (argv[i] ? strlen(argv[i]) : 0) + 3;
	out = malloc(len);
	if (!out)
		return NULL;
	p = out;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i] ? argv[i] : "";
		bool quote = !*a || strpbrk(a, " \t\n'\"\\");

		if (i > 1)
			*p++ = ' ';
		if (quote)
			*p++ = '\'';
		for (; *a; a++) {
			if (quote && *a == '\'') { /* ' becomes '\'' */
				memcpy(p, "'\\''", 4);
				p += 4;
				continue;
			}
			*p++ = *a;
		}
		if (quote)
			*p++ = '\'';
	}
	*p = '\0';
	return out;
}

/* Count an invocation past the cap; its location only by its key's hash. 0 or -ENOMEM. */
static int omit(struct sbt_shellagg *agg, uint64_t hash)
{
	size_t i, mask;

	hash |= 1; /* 0 marks a free slot */
	if ((agg->nr_omitted + 1) * 2 > agg->omitted_cap) {
		size_t cap = agg->omitted_cap ? agg->omitted_cap * 2 : 64;
		uint64_t *n = calloc(cap, sizeof(*n));

		if (!n)
			return -ENOMEM;
		for (i = 0; i < agg->omitted_cap; i++) {
			size_t j = (size_t)agg->omitted[i] & (cap - 1);

			if (!agg->omitted[i])
				continue;
			while (n[j])
				j = (j + 1) & (cap - 1);
			n[j] = agg->omitted[i];
		}
		free(agg->omitted);
		agg->omitted = n;
		agg->omitted_cap = cap;
	}
	mask = agg->omitted_cap - 1;
	for (i = (size_t)hash & mask; agg->omitted[i] && agg->omitted[i] != hash;
	     i = (i + 1) & mask)
		;
	if (!agg->omitted[i]) {
		agg->omitted[i] = hash;
		agg->nr_omitted++;
	}
	agg->omitted_count++;
	agg->count++;
	return 0;
}

static struct shell_location *location_new(const struct sbt_shell_class *cls, uint32_t pid,
					   const char *filename, const char *const *argv,
					   size_t argc, const struct sbt_ancestor *anc, size_t nanc,
					   uint64_t hash, char *command)
{
	struct shell_location *loc = calloc(1, sizeof(*loc));
	size_t i, n;
	int err = 0;

	if (!loc) {
		free(command);
		return NULL;
	}
	n = strnlen(cls->shell, SBT_SHELL_NAME_MAX - 1);
	memcpy(loc->shell, cls->shell, n);
	loc->kind = cls->kind;
	loc->hash = hash;
	loc->command = command; /* taken */
	loc->identified_by = cls->identified_by ? cls->identified_by : "name";
	loc->first_pid = pid;

	if (nanc) {
		loc->anc = calloc(nanc, sizeof(*loc->anc));
		if (!loc->anc)
			goto err;
		for (i = 0; i < nanc; i++) {
			loc->anc[i].pid = anc[i].pid;
			loc->anc[i].source = anc[i].source;
			n = strnlen(anc[i].comm, SBT_COMM_LEN - 1);
			memcpy(loc->anc[i].comm, anc[i].comm, n);
		}
		loc->nanc = nanc;
	}
	loc->chain = build_chain(anc, nanc);
	if (!loc->chain)
		goto err;
	loc->multicall = dup_or_null(cls->multicall, &err);
	loc->filename = dup_or_null(filename, &err);
	if (err)
		goto err;

	if (argv && argc) {
		loc->argv = calloc(argc, sizeof(*loc->argv));
		if (!loc->argv)
			goto err;
		loc->argc = argc;
		for (i = 0; i < argc; i++)
			loc->argv[i] = dup_or_null(argv[i], &err);
		if (err)
			goto err;
	}
	return loc;
err:
	location_free(loc);
	return NULL;
}

static int add_one(struct sbt_shellagg *agg, const struct sbt_shell_class *cls, int failed,
		   uint32_t pid, const char *filename, const char *const *argv, size_t argc,
		   const struct sbt_ancestor *anc, size_t nanc)
{
	struct loc_key k = { .kind = cls ? cls->kind : SBT_SHELL_NONE, .failed = failed };
	struct shell_location *loc, **locs;
	size_t *bucket, cap;
	char *command;

	if (!agg || !cls || (!anc && nanc) || (!argv && argc))
		return -EINVAL;
	command = command_text(cls, argv, argc);
	if (!command)
		return -ENOMEM;
	k.shell = cls->shell;
	k.command = command;
	k.anc = anc;
	k.nanc = nanc;
	k.hash = key_hash(&k);
	if (failed)
		agg->failed_count++;
	bucket = find_bucket(agg, &k);
	if (*bucket) {
		agg->locs[*bucket - 1]->count++;
		agg->count++;
		free(command);
		return 0;
	}
	if (agg->nr_locs >= SBT_SHELLAGG_MAX_LOCATIONS) {
		free(command);
		return omit(agg, k.hash);
	}
	/* Buckets at most half full: probes stay short and a free bucket always exists. */
	if ((agg->nr_locs + 1) * 2 > agg->nr_buckets) {
		if (rehash(agg))
			goto oom;
		bucket = find_bucket(agg, &k);
	}
	if (agg->nr_locs == agg->locs_cap) {
		cap = agg->locs_cap ? agg->locs_cap * 2 : 16;
		locs = realloc(agg->locs, cap * sizeof(struct shell_location *));
		if (!locs)
			goto oom;
		agg->locs = locs;
		agg->locs_cap = cap;
	}
	loc = location_new(cls, pid, filename, argv, argc, anc, nanc, k.hash, command);
	if (!loc)
		return -ENOMEM; /* command freed with it */
	loc->failed = failed;
	loc->count = 1;
	agg->locs[agg->nr_locs++] = loc;
	*bucket = agg->nr_locs;
	agg->count++;
	return 0;
oom:
	free(command);
	return -ENOMEM;
}

int sbt_shellagg_add(struct sbt_shellagg *agg, const struct sbt_shell_class *cls, uint32_t pid,
		     const char *filename, const char *const *argv, size_t argc,
		     const struct sbt_ancestor *anc, size_t nanc)
{
	return add_one(agg, cls, 0, pid, filename, argv, argc, anc, nanc);
}

int sbt_shellagg_add_failed(struct sbt_shellagg *agg, const struct sbt_shell_class *cls, int err,
			    uint32_t pid, const char *filename, const char *const *argv,
			    size_t argc, const struct sbt_ancestor *anc, size_t nanc)
{
	return add_one(agg, cls, err > 0 ? err : EINVAL, pid, filename, argv, argc, anc, nanc);
}

bool sbt_is_command_string(const char *const *argv, size_t argc)
{
	const char *o = argc >= 3 ? argv[1] : NULL;

	/* -c, or an option cluster with c in it (-ec, -euc, -xc), then the string */
	if (!o || o[0] != '-' || o[1] == '-' || !strchr(o, 'c'))
		return false;
	for (const char *p = o + 1; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')))
			return false;
	return true;
}

static struct unidentified_exe *unidentified_new(const char *filename, const char *exe_name,
						 uint32_t pid, const char *const *argv, size_t argc)
{
	struct unidentified_exe *u = calloc(1, sizeof(*u));
	int err = 0;

	if (!u)
		return NULL;
	u->filename = dup_or_null(filename ? filename : "", &err);
	snprintf(u->exe_name, sizeof(u->exe_name), "%s", exe_name ? exe_name : "");
	u->first_pid = pid;
	if (argc > UNIDENTIFIED_ARGS)
		argc = UNIDENTIFIED_ARGS;
	u->argv = argc ? calloc(argc, sizeof(*u->argv)) : NULL;
	if (err || (argc && !u->argv)) {
		free(u->filename);
		free(u->argv);
		free(u);
		return NULL;
	}
	for (size_t i = 0; i < argc; i++) {
		u->argv[i] = dup_or_null(argv[i], &err);
		u->argc = i + 1;
		if (err) {
			unidentified_free(u);
			return NULL;
		}
	}
	return u;
}

int sbt_shellagg_unidentified(struct sbt_shellagg *agg, const char *filename, const char *exe_name,
			      uint32_t pid, const char *const *argv, size_t argc)
{
	bool cmd = sbt_is_command_string(argv, argc);
	struct unidentified_exe *u = NULL;

	if (!agg || (!argv && argc))
		return -EINVAL;
	agg->unidentified_count++;
	for (size_t i = 0; i < agg->nr_unidentified; i++)
		if (strcmp(agg->unidentified[i]->filename, filename ? filename : "") == 0)
			u = agg->unidentified[i];
	if (!u) {
		if (agg->nr_unidentified >= SBT_SHELLAGG_MAX_UNIDENTIFIED) {
			agg->unidentified_omitted++;
			return 0;
		}
		u = unidentified_new(filename, exe_name, pid, argv, argc);
		if (!u)
			return -ENOMEM;
		agg->unidentified[agg->nr_unidentified++] = u;
	}
	u->count++;
	u->command_string = u->command_string || cmd;
	return 0;
}

uint64_t sbt_shellagg_unidentified_count(const struct sbt_shellagg *agg)
{
	return agg ? agg->unidentified_count : 0;
}

uint64_t sbt_shellagg_failed_count(const struct sbt_shellagg *agg)
{
	return agg ? agg->failed_count : 0;
}

uint64_t sbt_shellagg_count(const struct sbt_shellagg *agg)
{
	return agg ? agg->count : 0;
}

size_t sbt_shellagg_nr_locations(const struct sbt_shellagg *agg)
{
	return agg ? agg->nr_locs : 0;
}

/* Add `val` under `key`; a NULL `val` is a JSON null only when `nullable`. Takes `val`. */
static int obj_add(json_object *obj, const char *key, json_object *val, bool nullable)
{
	if (!val && !nullable)
		return -ENOMEM;
	if (json_object_object_add(obj, key, val)) {
		json_object_put(val);
		return -ENOMEM;
	}
	return 0;
}

static int arr_add(json_object *arr, json_object *val, bool nullable)
{
	if (!val && !nullable)
		return -ENOMEM;
	if (json_object_array_add(arr, val)) {
		json_object_put(val);
		return -ENOMEM;
	}
	return 0;
}

static json_object *string_or_null(const char *s, int *err)
{
	json_object *o;

	if (!s)
		return NULL;
	o = sbt_json_string(s);
	if (!o)
		*err = -ENOMEM;
	return o;
}

static const char *source_name(enum sbt_ancestor_source source)
{
	switch (source) {
	case SBT_ANC_EXEC:
		return "exec";
	case SBT_ANC_PROC:
		return "proc";
	case SBT_ANC_EVENT:
		return "event";
	}
	return "unknown";
}

static json_object *ancestor_to_json(const struct sbt_ancestor *a)
{
	json_object *o = json_object_new_object();

	if (!o)
		return NULL;
	if (obj_add(o, "pid", json_object_new_int64(a->pid), false) ||
	    obj_add(o, "comm", sbt_json_string(a->comm), false) ||
	    obj_add(o, "source", json_object_new_string(source_name(a->source)), false)) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

static json_object *location_to_json(const struct shell_location *loc)
{
	json_object *o = json_object_new_object(), *argv = NULL, *anc = NULL, *v;
	size_t i;
	int err = 0;

	if (!o)
		return NULL;
	if (obj_add(o, "shell", json_object_new_string(loc->shell), false))
		goto err;
	v = string_or_null(sbt_shell_kind_name(loc->kind), &err);
	if (err || obj_add(o, "kind", v, true))
		goto err;
	v = string_or_null(loc->multicall, &err);
	if (err || obj_add(o, "multicall", v, true))
		goto err;
	v = string_or_null(loc->filename, &err);
	if (err || obj_add(o, "filename", v, true))
		goto err;
	if (obj_add(o, "command", sbt_json_string(loc->command), false) ||
	    obj_add(o, "identified_by", json_object_new_string(loc->identified_by), false))
		goto err;

	argv = json_object_new_array();
	if (!argv)
		goto err;
	for (i = 0; i < loc->argc; i++) {
		v = string_or_null(loc->argv[i], &err);
		if (err || arr_add(argv, v, true))
			goto err;
	}
	if (obj_add(o, "argv", argv, false)) {
		argv = NULL; /* freed by obj_add */
		goto err;
	}
	argv = NULL;

	anc = json_object_new_array();
	if (!anc)
		goto err;
	for (i = 0; i < loc->nanc; i++) {
		if (arr_add(anc, ancestor_to_json(&loc->anc[i]), false))
			goto err;
	}
	if (obj_add(o, "ancestors", anc, false)) {
		anc = NULL;
		goto err;
	}
	anc = NULL;

	v = loc->failed && strerrorname_np(loc->failed)
		    ? json_object_new_string(strerrorname_np(loc->failed))
		    : NULL;
	if (obj_add(o, "failed", v, !loc->failed) ||
	    obj_add(o, "chain", sbt_json_string(loc->chain), false) ||
	    obj_add(o, "count", json_object_new_int64((int64_t)loc->count), false) ||
	    obj_add(o, "first_pid", json_object_new_int64(loc->first_pid), false))
		goto err;
	return o;
err:
	json_object_put(argv);
	json_object_put(anc);
	json_object_put(o);
	return NULL;
}

static json_object *unidentified_to_json(const struct unidentified_exe *u)
{
	json_object *o = json_object_new_object(), *argv = json_object_new_array();

	if (!o || !argv) {
		json_object_put(o);
		json_object_put(argv);
		return NULL;
	}
	for (size_t i = 0; i < u->argc; i++)
		if (arr_add(argv, sbt_json_string(u->argv[i]), false))
			goto err;
	if (obj_add(o, "filename", sbt_json_string(u->filename), false) ||
	    obj_add(o, "exe_name", sbt_json_string(u->exe_name), false) ||
	    obj_add(o, "argv", argv, false))
		goto err_o;
	if (obj_add(o, "command_string", json_object_new_boolean(u->command_string), false) ||
	    obj_add(o, "count", json_object_new_int64((int64_t)u->count), false) ||
	    obj_add(o, "first_pid", json_object_new_int64(u->first_pid), false))
		goto err_o;
	return o;
err:
	json_object_put(argv);
err_o:
	json_object_put(o);
	return NULL;
}

json_object *sbt_shellagg_unidentified_json(const struct sbt_shellagg *agg)
{
	json_object *o = json_object_new_object(), *list = json_object_new_array();

	if (!o || !list) {
		json_object_put(o);
		json_object_put(list);
		return NULL;
	}
	if (obj_add(o, "count", json_object_new_int64(agg ? (int64_t)agg->unidentified_count : 0),
		    false) ||
	    obj_add(o, "executables", list, false))
		goto err;
	for (size_t i = 0; agg && i < agg->nr_unidentified; i++)
		if (arr_add(list, unidentified_to_json(agg->unidentified[i]), false))
			goto err;
	if (obj_add(o, "omitted",
		    json_object_new_int64(agg ? (int64_t)agg->unidentified_omitted : 0), false))
		goto err;
	return o;
err:
	json_object_put(o);
	return NULL;
}

json_object *sbt_shellagg_to_json(const struct sbt_shellagg *agg)
{
	json_object *root = json_object_new_object(), *locs, *omitted;
	size_t i;

	if (!root)
		return NULL;
	if (obj_add(root, "count", json_object_new_int64(agg ? (int64_t)agg->count : 0), false) ||
	    obj_add(root, "failed", json_object_new_int64(agg ? (int64_t)agg->failed_count : 0),
		    false) ||
	    obj_add(root, "unidentified", sbt_shellagg_unidentified_json(agg), false))
		goto err;
	locs = json_object_new_array();
	if (obj_add(root, "locations", locs, false))
		goto err;
	for (i = 0; agg && i < agg->nr_locs; i++) {
		if (arr_add(locs, location_to_json(agg->locs[i]), false))
			goto err;
	}
	omitted = json_object_new_object();
	if (obj_add(root, "omitted", omitted, false) ||
	    obj_add(omitted, "locations", json_object_new_int64(agg ? (int64_t)agg->nr_omitted : 0),
		    false) ||
	    obj_add(omitted, "count", json_object_new_int64(agg ? (int64_t)agg->omitted_count : 0),
		    false) ||
	    obj_add(root, "grouped_by", json_object_new_string("shell,kind,command,chain"), false))
		goto err;
	return root;
err:
	json_object_put(root);
	return NULL;
}
