// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/envset.h"

#define SYSTEM_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

/* A name a shell can export: a letter or '_', then letters, digits, '_'. */
static bool name_ok(const char *s, size_t n)
{
	if (n == 0 || n > 128 || (s[0] >= '0' && s[0] <= '9'))
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_'))
			return false;
	}
	return true;
}

/* Set NAME (n bytes) to value, in name order. 0, -E2BIG or -ENOMEM. */
static int put(struct sbt_env *env, const char *name, size_t n, const char *value)
{
	size_t vlen = strlen(value);
	char *var;
	int i;

	if (vlen > SBT_ENV_VALUE_MAX)
		return -E2BIG;
	var = malloc(n + vlen + 2);
	if (!var)
		return -ENOMEM;
	memcpy(var, name, n);
	var[n] = '=';
	memcpy(var + n + 1, value, vlen + 1);
	for (i = 0; i < env->n; i++) {
		size_t m = strcspn(env->vars[i], "=");
		int c = memcmp(env->vars[i], name, m < n ? m : n);

		if (c == 0 && m == n) { /* replace */
			free(env->vars[i]);
			env->vars[i] = var;
			return 0;
		}
		if (c > 0 || (c == 0 && m > n))
			break;
	}
	if (env->n >= SBT_ENV_MAX) {
		free(var);
		return -E2BIG;
	}
	memmove(&env->vars[i + 1], &env->vars[i], (size_t)(env->n - i) * sizeof(char *));
	env->vars[i] = var;
	env->vars[++env->n] = NULL;
	return 0;
}

static int put_caller(struct sbt_env *env, const char *name, const char *dflt)
{
	const char *v = getenv(name);

	if (!v || !*v)
		v = dflt;
	return v ? put(env, name, strlen(name), v) : 0;
}

int sbt_env_default(struct sbt_env *env, enum sbt_env_for who)
{
	static const char *const tool_conf[] = { "CONTAINERS_CONF", "CONTAINERS_STORAGE_CONF",
						 "CONTAINERS_REGISTRIES_CONF", "XDG_RUNTIME_DIR",
						 NULL };
	int rc;

	memset(env, 0, sizeof(*env));
	rc = put_caller(env, "PATH", SYSTEM_PATH);
	if (!rc)
		rc = who == SBT_ENV_WORKLOAD ? put(env, "HOME", 4, "/root")
					     : put_caller(env, "HOME", "/root");
	/* A workload's LANG and TERM are fixed: the same build wherever it is started from. */
	if (!rc)
		rc = who == SBT_ENV_WORKLOAD ? put(env, "LANG", 4, "C.UTF-8")
					     : put_caller(env, "LANG", "C.UTF-8");
	if (!rc)
		rc = who == SBT_ENV_WORKLOAD ? put(env, "TERM", 4, "dumb")
					     : put_caller(env, "TERM", "dumb");
	for (const char *const *c = tool_conf; !rc && who == SBT_ENV_HOST_TOOL && *c; c++)
		rc = put_caller(env, *c, NULL);
	if (rc)
		sbt_env_free(env);
	return rc;
}

int sbt_env_set(struct sbt_env *env, const char *arg, char *err, size_t errlen)
{
	const char *eq = strchr(arg, '='), *value;
	size_t n = eq ? (size_t)(eq - arg) : strlen(arg);
	int rc;

	if (!name_ok(arg, n)) {
		snprintf(err, errlen,
			 "'%.*s' is not a variable name (a letter or _, then letters, digits, _)",
			 (int)(n > 64 ? 64 : n), arg);
		return -EINVAL;
	}
	if (eq) {
		value = eq + 1;
	} else {
		value = getenv(arg);
		if (!value) {
			snprintf(err, errlen, "%s is not set here; give %s=VALUE", arg, arg);
			return -EINVAL;
		}
	}
	rc = put(env, arg, n, value);
	if (rc == -E2BIG)
		snprintf(err, errlen, "%.*s: more than %d variables, or a value over %d bytes",
			 (int)n, arg, SBT_ENV_MAX, SBT_ENV_VALUE_MAX);
	else if (rc)
		snprintf(err, errlen, "out of memory");
	return rc;
}

const char *sbt_env_get(const struct sbt_env *env, const char *name)
{
	size_t n = strlen(name);

	for (int i = 0; i < env->n; i++)
		if (strncmp(env->vars[i], name, n) == 0 && env->vars[i][n] == '=')
			return env->vars[i] + n + 1;
	return NULL;
}

void sbt_env_free(struct sbt_env *env)
{
	for (int i = 0; i < env->n; i++)
		free(env->vars[i]);
	memset(env, 0, sizeof(*env));
}
