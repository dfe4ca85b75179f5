/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A declared environment: what enters a sandbox, and nothing else (the
 * caller's tokens, CC, CFLAGS, make's MAKEFLAGS stay out). The default set
 * is PATH, HOME, LANG and TERM; --env NAME (the caller's value) or
 * --env NAME=VALUE adds or replaces one. Kept sorted by name, each name
 * once, so the same declaration is the same list (it is part of the
 * probe's cache key).
 */
#ifndef SBT_ENVSET_H
#define SBT_ENVSET_H

#include <stdbool.h>
#include <stddef.h>

#define SBT_ENV_MAX	  64
#define SBT_ENV_VALUE_MAX 4096

struct sbt_env {
	char *vars[SBT_ENV_MAX + 1]; /* "NAME=VALUE", sorted by NAME, NULL-terminated; owned */
	int n;
};

enum sbt_env_for {
	SBT_ENV_WORKLOAD = 0, /* inside a sandbox: HOME=/root, a fixed PATH unless the caller's */
	SBT_ENV_HOST_TOOL,    /* a host tool (podman): the caller's HOME, its config variables */
};

/*
 * The default set: PATH (the caller's, else the system's), HOME (/root in
 * a sandbox, the caller's for a host tool), LANG (C.UTF-8 in a sandbox, the
 * caller's for a host tool), TERM (dumb, or the caller's); for a host tool also the
 * container tools' configuration variables the caller set (CONTAINERS_CONF,
 * CONTAINERS_STORAGE_CONF, CONTAINERS_REGISTRIES_CONF, XDG_RUNTIME_DIR).
 * 0 or -ENOMEM.
 */
int sbt_env_default(struct sbt_env *env, enum sbt_env_for who);

/*
 * Add or replace one variable from an --env value: "NAME=VALUE", or "NAME"
 * for the caller's value. 0, or -EINVAL / -E2BIG with err saying what is
 * wrong (a bad name, NAME not set in the caller's environment, too many,
 * too long), -ENOMEM.
 */
int sbt_env_set(struct sbt_env *env, const char *arg, char *err, size_t errlen);

/* The value of NAME in the set, NULL if absent. */
const char *sbt_env_get(const struct sbt_env *env, const char *name);

void sbt_env_free(struct sbt_env *env);

#endif
