// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * State files: STATE_DIR/NAME.json, written by the sandbox's controller (the
 * shim, the probe), read by `sbtrace trace --sandbox NAME` and by gc. What is
 * read is untrusted input: sizes, types, values and the cgroup are checked.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <linux/magic.h>
#include <json-c/json.h>

#include "lib/cgroupfs.h"
#include "lib/io.h"
#include "internal.h"

#define STATE_MAX_BYTES 65536u
#define PID_LIMIT	4194304 /* PID_MAX_LIMIT on 64-bit */

void sbx_attach_path(const char *state_file, char *out, size_t len)
{
	size_t n = strlen(state_file);

	out[0] = '\0';
	if (n > 5 && strcmp(state_file + n - 5, ".json") == 0 && n + 2 < len)
		snprintf(out, len, "%.*s.attach", (int)(n - 5), state_file);
}

/* ---- writing ------------------------------------------------------------ */

static struct json_object *state_json(const struct sbt_sandbox_run *run,
				      const struct sbt_backend_ops *ops)
{
	struct json_object *o = json_object_new_object(), *vis;
	char netns[64];

	if (!o)
		return NULL;
	snprintf(netns, sizeof(netns), "/proc/%d/ns/net", (int)run->pid);
	json_object_object_add(o, "name", json_object_new_string(run->name));
	json_object_object_add(o, "backend", json_object_new_string(ops->name));
	json_object_object_add(o, "cgroup", json_object_new_string(run->cgroup_path));
	json_object_object_add(o, "cgroup_id", json_object_new_int64((int64_t)run->cgroup_id));
	json_object_object_add(o, "pid", json_object_new_int(run->pid));
	json_object_object_add(o, "shim_pid", json_object_new_int(getpid()));
	json_object_object_add(o, "netns", json_object_new_string(netns));
	json_object_object_add(o, "start_ns", json_object_new_int64((int64_t)run->start_ns));
	json_object_object_add(o, "tracer_pid", json_object_new_int(run->tracer_pid));
	if (run->tracer_lost)
		json_object_object_add(o, "tracer_lost", json_object_new_boolean(1));
	if (run->egress_mode) {
		struct json_object *eg = json_object_new_object(), *rules = json_object_new_array();

		for (int i = 0; i < run->nr_egress_rules; i++)
			json_object_array_add(rules, json_object_new_string(run->egress_rules[i]));
		json_object_object_add(eg, "mode", json_object_new_string(run->egress_mode));
		json_object_object_add(eg, "rules", rules);
		json_object_object_add(o, "egress", eg);
	}
	if (run->limits_via[0]) { /* the ns backend's limits, and how they are held */
		struct json_object *l = json_object_new_object();

		json_object_object_add(l, "pids",
				       run->limits.pids ? json_object_new_int64(run->limits.pids)
							: NULL);
		json_object_object_add(l, "memory_bytes",
				       run->limits.memory
					       ? json_object_new_int64((int64_t)run->limits.memory)
					       : NULL);
		json_object_object_add(l, "tmpfs_bytes",
				       json_object_new_int64((int64_t)run->limits.tmpfs));
		json_object_object_add(l, "via", json_object_new_string(run->limits_via));
		json_object_object_add(o, "limits", l);
	}
	vis = json_object_new_object();
	/* a guest agent's stream makes the guest's execs visible (qemu) */
	json_object_object_add(
		vis, "exec",
		json_object_new_string(sbt_backend_vis_exec(&ops->caps, run->exec_stream[0])));
	json_object_object_add(vis, "network",
			       json_object_new_string(sbt_backend_vis_network(&ops->caps)));
	json_object_object_add(o, "visibility", vis);
	if (ops->state_write)
		ops->state_write(o, run);
	return o;
}

/* `s` and a newline as path, at once (readers never see half a file), root's alone. */
static int write_replace(const char *path, const char *s)
{
	size_t n = strlen(s);
	char *line = malloc(n + 1);
	int ret;

	if (!line)
		return -ENOMEM;
	memcpy(line, s, n + 1);
	line[n] = '\n'; /* in place of the NUL: the file is the line */
	ret = sbt_write_atomic(path, line, n + 1, 0600, 0);
	free(line);
	return ret;
}

int sbt_state_write(const char *state_dir, const struct sbt_sandbox_run *run)
{
	const struct sbt_backend_ops *ops = run ? sbx_backend(run->backend) : NULL;
	char path[PATH_MAX];
	struct json_object *o;
	int ret;

	if (!state_dir)
		state_dir = SBT_STATE_DIR_DEFAULT;
	if (!ops || !sbt_sandbox_name_ok(run->name) || run->pid <= 0)
		return -EINVAL;
	ret = sbx_check_state_dir(state_dir, true);
	if (ret)
		return ret;
	if (!sbx_str_fits(path, sizeof(path), "%s/%s.json", state_dir, run->name))
		return -ENAMETOOLONG;
	o = state_json(run, ops);
	if (!o)
		return -ENOMEM;
	ret = write_replace(path,
			    json_object_to_json_string_ext(
				    o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
	return ret;
}

int sbt_state_update(const struct sbt_sandbox_run *run)
{
	char dir[PATH_MAX], *slash;

	if (!run->state_file[0] || !sbx_str_fits(dir, sizeof(dir), "%s", run->state_file) ||
	    !(slash = strrchr(dir, '/')))
		return -EINVAL;
	*slash = '\0';
	return sbt_state_write(dir, run);
}

/* ---- reading ------------------------------------------------------------ */

/* One of `allowed` (NULL-terminated) as visibility.KEY, into out. */
static int get_vis(struct json_object *vis, const char *key, const char *const *allowed, char *out,
		   size_t len, const struct sbx_state_ctx *v)
{
	char what[32];
	struct json_object *f;
	const char *s;

	snprintf(what, sizeof(what), "visibility.%s", key);
	if (!json_object_object_get_ex(vis, key, &f))
		return sbx_state_bad(v, -EINVAL, "' is missing", what);
	s = json_object_is_type(f, json_type_string) ? json_object_get_string(f) : NULL;
	for (; s && *allowed; allowed++)
		if (strcmp(s, *allowed) == 0 && strlen(s) < len) {
			memcpy(out, s, strlen(s) + 1);
			return 0;
		}
	return sbx_state_bad(v, -EINVAL, "' is not one of the known values", what);
}

/* "visibility": {"exec": "host"|"guest_kernel"|"none", "network": "cgroup"|"tap"}, optional. */
static int parse_visibility(struct json_object *root, struct sbt_sandbox_state *st,
			    const struct sbx_state_ctx *v)
{
	static const char *const exec[] = { "host", "guest_kernel", "none", NULL };
	static const char *const network[] = { "cgroup", "tap", NULL };
	struct json_object *vis;
	int ret;

	if (!json_object_object_get_ex(root, "visibility", &vis))
		return 0;
	if (!json_object_is_type(vis, json_type_object))
		return sbx_state_bad(v, -EINVAL, "' must be an object", "visibility");
	ret = get_vis(vis, "exec", exec, st->visibility_exec, sizeof(st->visibility_exec), v);
	if (!ret)
		ret = get_vis(vis, "network", network, st->visibility_network,
			      sizeof(st->visibility_network), v);
	return ret;
}

/* "egress": {"mode": "enforce"|"audit", "rules": [STRING...]}, optional. */
static int parse_egress(struct json_object *root, struct sbt_sandbox_state *st,
			const struct sbx_state_ctx *v)
{
	struct json_object *eg, *mode, *rules;
	const char *m;
	size_t used = 0, n;

	if (!json_object_object_get_ex(root, "egress", &eg))
		return 0;
	if (!json_object_is_type(eg, json_type_object) ||
	    !json_object_object_get_ex(eg, "mode", &mode) ||
	    !json_object_object_get_ex(eg, "rules", &rules) ||
	    !json_object_is_type(rules, json_type_array))
		return sbx_state_bad(v, -EINVAL, "' must be {\"mode\": ..., \"rules\": [...]}",
				     "egress");
	m = json_object_is_type(mode, json_type_string) ? json_object_get_string(mode) : "";
	if (strcmp(m, "enforce") != 0 && strcmp(m, "audit") != 0)
		return sbx_state_bad(v, -EINVAL, ".mode' must be enforce or audit", "egress");
	snprintf(st->egress_mode, sizeof(st->egress_mode), "%s", m);
	n = json_object_array_length(rules);
	if (n > SBT_STATE_EGRESS_RULES)
		return sbx_state_bad(v, -E2BIG, ".rules' has too many rules", "egress");
	for (size_t i = 0; i < n; i++) {
		struct json_object *r = json_object_array_get_idx(rules, i);
		const char *s =
			json_object_is_type(r, json_type_string) ? json_object_get_string(r) : NULL;
		size_t len = s ? strlen(s) : 0;

		if (!s || (int)len != json_object_get_string_len(r) || strchr(s, '\n') ||
		    used + len + 1 >= sizeof(st->egress_rules))
			return sbx_state_bad(v, -EINVAL,
					     ".rules' must be strings of one line, 16 KiB in all",
					     "egress");
		memcpy(st->egress_rules + used, s, len);
		used += len;
		st->egress_rules[used++] = '\n';
	}
	st->egress_rules[used] = '\0';
	st->nr_egress_rules = (int)n;
	return 0;
}

/* A canonical absolute path strictly below `top`: no //, no . or .. component. */
static bool path_below(const char *path, const char *top)
{
	size_t n = strlen(top);

	while (n > 1 && top[n - 1] == '/')
		n--;
	if (strncmp(path, top, n) != 0 || path[n] != '/' || !path[n + 1])
		return false;
	for (const char *p = path + n; *p; p++) {
		if (*p != '/')
			continue;
		if (p[1] == '/' || p[1] == '\0')
			return false;
		if (p[1] == '.' && (p[2] == '/' || p[2] == '\0'))
			return false;
		if (p[1] == '.' && p[2] == '.' && (p[3] == '/' || p[3] == '\0'))
			return false;
	}
	return true;
}

/* The backend's own fields (its parser), and none of another backend's. */
static int parse_backend_fields(struct json_object *root, struct sbt_sandbox_state *st,
				const struct sbx_state_ctx *v)
{
	const struct sbt_backend_ops *own = sbx_backend_by_name(st->backend), *other;
	struct json_object *f;
	char what[64];

	for (int b = 0; b < SBT_BACKEND__MAX; b++) {
		other = sbx_backend((enum sbt_sandbox_backend)b);
		if (other == own || !other->state_keys)
			continue;
		for (const char *const *k = other->state_keys; *k; k++)
			if (json_object_object_get_ex(root, *k, &f)) {
				snprintf(what, sizeof(what), "' belongs to backend %s only",
					 other->name);
				return sbx_state_bad(v, -EINVAL, what, *k);
			}
	}
	return own && own->state_parse ? own->state_parse(root, st, v) : 0;
}

/* STATE_DIR/NAME.json into buf (NUL-free, at most STATE_MAX_BYTES): a regular file, no link. */
static int read_state_file(const struct sbx_state_ctx *v, const char *name, char *buf, size_t *lenp)
{
	struct stat sb;
	size_t len = 0;
	ssize_t n;
	int fd = open(v->path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY), ret;

	if (fd < 0) {
		ret = -errno;
		if (ret == -ENOENT)
			return sbx_seterr(v->err, v->errlen, ret,
					  "no sandbox %s: %s does not exist", name, v->path);
		return sbx_state_bad(
			v, ret, ret == -ELOOP ? "a symbolic link (refused)" : strerror(-ret), NULL);
	}
	if (fstat(fd, &sb) || !S_ISREG(sb.st_mode)) {
		close(fd);
		return sbx_state_bad(v, -EINVAL, "not a regular file", NULL);
	}
	while (len <= STATE_MAX_BYTES) {
		n = read(fd, buf + len, STATE_MAX_BYTES + 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
		if (len == STATE_MAX_BYTES + 1)
			break;
	}
	close(fd);
	if (len > STATE_MAX_BYTES)
		return sbx_state_bad(v, -EFBIG, "larger than 64 KiB", NULL);
	if (memchr(buf, '\0', len))
		return sbx_state_bad(v, -EINVAL, "contains a NUL byte", NULL);
	*lenp = len;
	return 0;
}

/* One JSON object and nothing after it but white space. */
static int parse_json(const struct sbx_state_ctx *v, const char *buf, size_t len,
		      struct json_object **rootp)
{
	struct json_tokener *tok = json_tokener_new_ex(8);
	struct json_object *root;
	int ret = 0;

	if (!tok)
		return sbx_state_bad(v, -ENOMEM, "out of memory", NULL);
	root = json_tokener_parse_ex(tok, buf, (int)len);
	if (!root || json_tokener_get_error(tok) != json_tokener_success ||
	    strspn(buf + json_tokener_get_parse_end(tok), " \t\r\n") !=
		    len - json_tokener_get_parse_end(tok))
		ret = sbx_state_bad(v, -EINVAL, "not a single JSON document", NULL);
	else if (!json_object_is_type(root, json_type_object))
		ret = sbx_state_bad(v, -EINVAL, "not a JSON object", NULL);
	json_tokener_free(tok);
	*rootp = root; /* the caller puts it, also on error */
	return ret;
}

/* name (the file's), backend, cgroup, cgroup_id, pid, shim_pid, netns, start_ns, the rest. */
static int parse_fields(struct json_object *root, const char *name, struct sbt_sandbox_state *st,
			const struct sbx_state_ctx *v)
{
	char want[64];
	int64_t i;
	int ret;

	ret = sbx_state_str(root, "name", st->name, sizeof(st->name), v);
	if (!ret && strcmp(st->name, name) != 0)
		ret = sbx_state_bad(v, -EINVAL, "' does not match the file's name", "name");
	if (!ret)
		ret = sbx_state_str(root, "backend", st->backend, sizeof(st->backend), v);
	if (!ret &&
	    strspn(st->backend, "abcdefghijklmnopqrstuvwxyz0123456789") != strlen(st->backend))
		ret = sbx_state_bad(v, -EINVAL, "' must be [a-z0-9]+", "backend");
	if (!ret)
		ret = sbx_state_str(root, "cgroup", st->cgroup_path, sizeof(st->cgroup_path), v);
	if (!ret)
		ret = sbx_state_int(root, "cgroup_id", 1, INT64_MAX, &i, v);
	if (!ret) {
		st->cgroup_id = (uint64_t)i;
		ret = sbx_state_int(root, "pid", 1, PID_LIMIT, &i, v);
	}
	if (!ret) {
		st->pid = (pid_t)i;
		ret = sbx_state_int(root, "shim_pid", 1, PID_LIMIT, &i, v);
	}
	if (!ret) {
		st->shim_pid = (pid_t)i;
		ret = sbx_state_str(root, "netns", st->netns, sizeof(st->netns), v);
	}
	if (!ret) {
		snprintf(want, sizeof(want), "/proc/%d/ns/net", (int)st->pid);
		if (strcmp(st->netns, want) != 0)
			ret = sbx_state_bad(v, -EINVAL, "' must be /proc/PID/ns/net of its pid",
					    "netns");
	}
	if (!ret)
		ret = sbx_state_int(root, "start_ns", 0, INT64_MAX, &i, v);
	if (!ret)
		st->start_ns = (uint64_t)i;
	/* the tracer it ran under (0: none yet); absent in a file older than the field */
	if (!ret && json_object_object_get_ex(root, "tracer_pid", NULL)) {
		ret = sbx_state_int(root, "tracer_pid", 0, PID_LIMIT, &i, v);
		st->tracer_pid = ret ? 0 : (pid_t)i;
	}
	if (!ret)
		ret = parse_visibility(root, st, v);
	if (!ret)
		ret = parse_egress(root, st, v);
	if (!ret)
		ret = parse_backend_fields(root, st, v);
	return ret;
}

/* The cgroup: below the v2 mount, <v2>/sbtrace/NAME; with `live`, there with the recorded id. */
static int check_cgroup(const struct sbt_sandbox_state *st, const char *name, bool live,
			const struct sbx_state_ctx *v)
{
	char mnt_point[PATH_MAX], want_cg[PATH_MAX];
	struct stat sb;
	struct statfs sf;
	int ret = sbx_cgroup2_mount(mnt_point, sizeof(mnt_point));

	if (ret)
		return sbx_state_bad(v, ret, "': no cgroup v2 mount to check it against", "cgroup");
	if (!path_below(st->cgroup_path, mnt_point))
		return sbx_state_bad(v, -EINVAL,
				     "' is not a canonical path below the cgroup v2 mount",
				     "cgroup");
	/* Every backend's cgroup is <v2>/sbtrace/NAME (lifecycle.c makes it). */
	if (sbx_backend_by_name(st->backend) &&
	    (!sbx_str_fits(want_cg, sizeof(want_cg), "%s/sbtrace/%s", mnt_point, name) ||
	     strcmp(st->cgroup_path, want_cg) != 0))
		return sbx_state_bad(v, -EINVAL,
				     "' must be <cgroup v2 mount>/sbtrace/NAME, as every backend's "
				     "is",
				     "cgroup");
	if (!live)
		return 0;
	if (stat(st->cgroup_path, &sb) || !S_ISDIR(sb.st_mode) || statfs(st->cgroup_path, &sf) ||
	    sf.f_type != CGROUP2_SUPER_MAGIC)
		return sbx_state_bad(v, -ENOENT,
				     "': the cgroup no longer exists (run sbtrace-shim gc)",
				     "cgroup");
	if (sbt_cgroup_id(st->cgroup_path) != st->cgroup_id)
		return sbx_state_bad(v, -ESTALE,
				     "' does not match the cgroup's id (it was recreated)",
				     "cgroup_id");
	return 0;
}

int sbx_state_parse(const char *dir, const char *name, struct sbt_sandbox_state *st, bool live,
		    char *err, size_t errlen)
{
	char path[PATH_MAX], buf[STATE_MAX_BYTES + 1];
	struct sbx_state_ctx v = { path, err, errlen };
	struct json_object *root = NULL;
	size_t len = 0;
	int ret;

	memset(st, 0, sizeof(*st));
	if (!sbt_sandbox_name_ok(name))
		return sbx_seterr(err, errlen, -EINVAL, "sandbox name '%s' is not valid", name);
	if (!sbx_str_fits(path, sizeof(path), "%s/%s.json", dir, name))
		return sbx_seterr(err, errlen, -ENAMETOOLONG, "state dir '%s': path too long", dir);
	ret = sbx_check_state_dir(dir, false);
	if (ret)
		return sbx_seterr(err, errlen, ret,
				  "state dir %s: %s (it must be a directory owned by you or root, "
				  "writable by nobody else)",
				  dir, strerror(-ret));
	ret = read_state_file(&v, name, buf, &len);
	if (!ret)
		ret = parse_json(&v, buf, len, &root);
	if (!ret)
		ret = parse_fields(root, name, st, &v);
	if (!ret)
		ret = check_cgroup(st, name, live, &v);
	json_object_put(root);
	return ret;
}

int sbt_state_read(const char *state_dir, const char *name, struct sbt_sandbox_state *st, char *err,
		   size_t errlen)
{
	return sbx_state_parse(state_dir ? state_dir : SBT_STATE_DIR_DEFAULT, name, st, true, err,
			       errlen);
}
