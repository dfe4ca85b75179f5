// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The RUN flags a build on the host engine cannot confine: what a RUN step
 * could write outside its container (a read-write bind of the build context,
 * a cache that outlives the build), read from outside the context (a bind
 * from another image or stage, whose symlinks buildah follows on the host:
 * CVE-2024-1753; an absolute or `..` source), or ask for outside the sandbox
 * (another network, an insecure security mode, secrets or an ssh agent that
 * the probe never passes). A closed list: a flag this file does not know is
 * refused too. Pure: the parsed file in, the first refusal out.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "dockerfile/dockerfile.h"
#include "dockerfile/context.h"

#define FIELD_MAX 256 /* a --mount field (key=value) kept for the checks */

/* One --mount field (comma-separated, "..." quoting as BuildKit's CSV): next field or NULL. */
static const char *mount_field(const char *v, char *buf, size_t len)
{
	size_t n = 0;

	if (!*v)
		return NULL;
	if (*v == '"') {
		for (v++; *v && !(v[0] == '"' && v[1] != '"'); v++) {
			v += v[0] == '"'; /* "" is a quote */
			if (n + 1 < len)
				buf[n++] = *v;
		}
		v += *v == '"';
	}
	for (; *v && *v != ','; v++)
		if (n + 1 < len)
			buf[n++] = *v;
	buf[n] = '\0';
	return v + (*v == ',');
}

/* A boolean field: bare "rw", "rw=true" (BuildKit's ParseBool: 1, t, T, TRUE, true, True). */
static bool field_true(const char *field, const char *key)
{
	size_t k = strlen(key);
	static const char *const yes[] = { "1", "t", "T", "TRUE", "true", "True", NULL };

	if (strncasecmp(field, key, k) != 0)
		return false;
	if (field[k] == '\0')
		return true;
	if (field[k] != '=')
		return false;
	for (int i = 0; yes[i]; i++)
		if (strcmp(field + k + 1, yes[i]) == 0)
			return true;
	return false;
}

/* The value of field `key=` (case-insensitive key), else NULL. */
static const char *field_value(const char *field, const char *key)
{
	size_t k = strlen(key);

	return strncasecmp(field, key, k) == 0 && field[k] == '=' ? field + k + 1 : NULL;
}

/* A source that names something outside the context: absolute, or with a `..` part. */
static bool source_leaves(const char *s)
{
	if (s[0] == '/')
		return true;
	for (const char *p = s; *p;) {
		size_t n = strcspn(p, "/");

		if (n == 2 && p[0] == '.' && p[1] == '.')
			return true;
		p += n;
		p += *p == '/';
	}
	return false;
}

struct mount_spec {
	char type[32];
	char source[FIELD_MAX];
	bool rw, from, has_source;
};

static void mount_spec(const char *v, struct mount_spec *m)
{
	char f[FIELD_MAX] = { 0 };
	const char *x;

	memset(m, 0, sizeof(*m));
	snprintf(m->type, sizeof(m->type), "bind"); /* BuildKit's default */
	while ((v = mount_field(v, f, sizeof(f)))) {
		if ((x = field_value(f, "type")))
			snprintf(m->type, sizeof(m->type), "%.24s", x);
		else if ((x = field_value(f, "source")) || (x = field_value(f, "src")))
			m->has_source = snprintf(m->source, sizeof(m->source), "%s", x) >= 0;
		else if (field_value(f, "from"))
			m->from = true;
		else if (field_true(f, "rw") || field_true(f, "readwrite"))
			m->rw = true;
	}
}

/* Why one --mount cannot be confined ("" when it can), and what to do. */
static const char *mount_refusal(const char *v, char *shown, size_t len)
{
	struct mount_spec m;

	mount_spec(v, &m);
	snprintf(shown, len, "--mount=type=%.24s", m.type);
	if (!strcasecmp(m.type, "tmpfs"))
		return "";
	if (!strcasecmp(m.type, "cache"))
		return "a cache mount keeps what the build writes on the host after the probe; "
		       "drop it (the probe builds without caches)";
	if (!strcasecmp(m.type, "secret") || !strcasecmp(m.type, "ssh"))
		return "the probe passes no secrets or ssh agent to a build; drop the mount";
	if (strcasecmp(m.type, "bind") != 0)
		return "a mount type the probe cannot confine; use bind (read-only) or tmpfs";
	if (m.rw)
		return "a read-write bind lets the step write the build context on the host; "
		       "drop rw (COPY what it needs, write elsewhere)";
	if (m.from)
		return "a bind from another image or stage is read on the host (its symlinks "
		       "are followed there); COPY --from what the step needs";
	if (m.has_source && source_leaves(m.source))
		return "its source leaves the build context (absolute or ..); name a path "
		       "inside the repo";
	return "";
}

/* Why one RUN flag cannot be confined ("" when it can); `shown` names it. */
static const char *flag_refusal(const char *flag, char *shown, size_t len)
{
	const char *v;

	if ((v = sbt_df_flag_value(flag, "mount")))
		return mount_refusal(v, shown, len);
	snprintf(shown, len, "%.40s", flag);
	if ((v = sbt_df_flag_value(flag, "network")))
		return strcmp(v, "none") == 0 ? ""
					      : "the step's network is the sandbox's, through the "
						"allowlist; drop the flag (or use --network=none)";
	if ((v = sbt_df_flag_value(flag, "security")))
		return strcmp(v, "sandbox") == 0 ? "" : "a RUN step runs sandboxed; drop the flag";
	return "a RUN flag the probe does not know cannot be confined; drop it";
}

int sbt_dockerfile_unconfined_run(const struct sbt_dockerfile *df, int target,
				  struct sbt_df_error *err)
{
	for (int i = 0; i < df->nr_instrs; i++) {
		const struct sbt_df_instr *in = &df->instrs[i];

		if (in->stage < 0 || in->stage > target || strcmp(in->keyword, "RUN") != 0)
			continue;
		for (int f = 0; f < in->nr_flags; f++) {
			char shown[64], q[DF_SHOWN_MAX * 2];
			const char *why = flag_refusal(in->flags[f], shown, sizeof(shown));

			if (!why[0])
				continue;
			return df_error_at(err, in->line, "RUN %s: %s",
					   DF_SHOWN(q, shown, strlen(shown)), why);
		}
	}
	return 0;
}
