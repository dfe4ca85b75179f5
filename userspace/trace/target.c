// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Sandbox keys: --cgroup PATH and --pid PID resolved to a cgroup v2
 * directory, --tap SPEC parsed and its device looked up, a shim microVM's tap.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>
#include <linux/magic.h>
#include <net/if.h>

#include "lib/cgroupfs.h"
#include "lib/netns.h"
#include "trace/tracer.h"
#include "lib/log.h"

static int read_text(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t off = 0;

	if (fd < 0)
		return -errno;
	while (off + 1 < len) {
		ssize_t n = read(fd, buf + off, len - 1 - off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			n = -errno;
			close(fd);
			return (int)n;
		}
		if (n == 0)
			break;
		off += (size_t)n;
	}
	buf[off] = '\0';
	close(fd);
	return (int)off;
}

/* Fill `sb` from an absolute directory path inside the v2 mount. */
static int fill_sandbox(const char *arg, const char *dir, struct sbt_target *sb)
{
	char mnt[PATH_MAX], root[PATH_MAX], real[PATH_MAX];
	const char *rel;
	struct statfs sfs;
	struct stat st;
	size_t ml;
	int err;

	err = sbt_cgroup2_mount(mnt, sizeof(mnt), root, sizeof(root));
	if (err) {
		sbt_log("no cgroup v2 hierarchy is mounted (%s); mount one, e.g. 'mount -t cgroup2 "
			"none /sys/fs/cgroup/unified'",
			strerror(-err));
		return err;
	}
	if (!realpath(dir, real)) {
		err = -errno;
		sbt_log("cgroup '%s': %s; give an existing cgroup v2 directory (under %s) or a "
			"path relative to it",
			arg, strerror(errno), mnt);
		return err;
	}
	if (statfs(real, &sfs) < 0 || sfs.f_type != CGROUP2_SUPER_MAGIC) {
		sbt_log("cgroup '%s': %s is not in the cgroup v2 hierarchy (%s)", arg, real, mnt);
		return -EINVAL;
	}
	/* A file of the hierarchy (cgroup.procs) has an id too, but is no cgroup. */
	if (stat(real, &st) < 0 || !S_ISDIR(st.st_mode)) {
		sbt_log("cgroup '%s': %s is a file, not a cgroup; give its directory", arg, real);
		return -ENOTDIR;
	}
	ml = strlen(mnt);
	if (strncmp(real, mnt, ml) != 0 || (real[ml] != '/' && real[ml] != '\0')) {
		sbt_log("cgroup '%s': %s is not below the cgroup v2 mount %s", arg, real, mnt);
		return -EINVAL;
	}
	rel = real + ml;
	/* The name is the path within the whole hierarchy: mounted root + rel. */
	if (snprintf(sb->name, sizeof(sb->name), "%s%s", strcmp(root, "/") ? root : "",
		     *rel ? rel : (strcmp(root, "/") ? "" : "/")) >= (int)sizeof(sb->name))
		return -ENAMETOOLONG;
	snprintf(sb->path, sizeof(sb->path), "%s", real);
	sb->level = (uint32_t)sbt_cgroup_path_level(sb->name);
	sb->cgroup_id = sbt_cgroup_id(real);
	if (!sb->cgroup_id) {
		err = -errno;
		sbt_log("cgroup '%s': cannot read its id: %s", arg, strerror(errno));
		return err;
	}
	return 0;
}

int sbt_target_from_cgroup(const char *arg, struct sbt_target *sb)
{
	char mnt[PATH_MAX], root[PATH_MAX], dir[PATH_MAX];
	struct stat st;
	int err;

	memset(sb, 0, sizeof(*sb));
	sb->origin = "cgroup";
	if (!arg || !*arg) {
		sbt_log("--cgroup needs a path");
		return -EINVAL;
	}
	/*
	 * A path below the v2 mount as given; else relative to the v2 root when
	 * that exists ("/" is the root cgroup, "sbtrace/x"); else as given, for
	 * the error message.
	 */
	err = sbt_cgroup2_mount(mnt, sizeof(mnt), root, sizeof(root));
	if (err)
		return fill_sandbox(arg, arg, sb); /* reports the missing mount */
	if (strncmp(arg, mnt, strlen(mnt)) == 0)
		return fill_sandbox(arg, arg, sb);
	if (snprintf(dir, sizeof(dir), "%s/%s", mnt, arg[0] == '/' ? arg + 1 : arg) >=
	    (int)sizeof(dir)) {
		sbt_log("cgroup '%s': path too long", arg);
		return -ENAMETOOLONG;
	}
	if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
		return fill_sandbox(arg, dir, sb);
	if (stat(arg, &st) == 0 && S_ISDIR(st.st_mode) && (arg[0] == '/' || arg[0] == '.'))
		return fill_sandbox(arg, arg, sb);
	return fill_sandbox(arg, dir, sb);
}

int sbt_target_from_pid(const char *arg, struct sbt_target *sb)
{
	char path[64], text[8192], cg[PATH_MAX], mnt[PATH_MAX], root[PATH_MAX], dir[PATH_MAX];
	const char *rel;
	char *end;
	long pid;
	int err;

	errno = 0;
	pid = arg ? strtol(arg, &end, 10) : 0;
	if (!arg || errno || *end || end == arg || pid <= 0 || pid > 0x3fffffff) {
		sbt_log("--pid '%s': not a process id (a positive integer)", arg ? arg : "");
		return -EINVAL;
	}
	snprintf(path, sizeof(path), "/proc/%ld/cgroup", pid);
	err = read_text(path, text, sizeof(text));
	if (err < 0) {
		sbt_log("--pid %ld: no such process (%s)", pid, strerror(-err));
		return err;
	}
	err = sbt_parse_proc_cgroup_v2(text, cg, sizeof(cg));
	if (err) {
		sbt_log("--pid %ld: the process has no cgroup v2 membership", pid);
		return err;
	}
	if (strcmp(cg, "/") == 0) {
		sbt_log("--pid %ld: the process is in the root cgroup, which is the whole host, "
			"not a sandbox; use --cgroup / to mean that",
			pid);
		return -EINVAL;
	}
	err = sbt_cgroup2_mount(mnt, sizeof(mnt), root, sizeof(root));
	if (err)
		return fill_sandbox(arg, "/nonexistent", sb);
	/* /proc shows the path within the hierarchy; strip the mounted root. */
	rel = cg;
	if (strcmp(root, "/") != 0) {
		size_t rl = strlen(root);

		if (strncmp(cg, root, rl) != 0) {
			sbt_log("--pid %ld: cgroup %s is outside the mounted v2 root %s", pid, cg,
				root);
			return -EINVAL;
		}
		rel = cg + rl;
	}
	if (snprintf(dir, sizeof(dir), "%s%s", mnt, rel) >= (int)sizeof(dir))
		return -ENAMETOOLONG;
	memset(sb, 0, sizeof(*sb));
	err = fill_sandbox(arg, dir, sb);
	sb->origin = "pid";
	sb->origin_pid = (uint32_t)pid;
	return err;
}

#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE 71
#endif

uint64_t sbt_netns_cookie(void)
{
	uint64_t cookie = 0;
	socklen_t len = sizeof(cookie);
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return 0;
	if (getsockopt(fd, SOL_SOCKET, SO_NETNS_COOKIE, &cookie, &len) < 0)
		cookie = 0;
	close(fd);
	return cookie;
}

static bool ifname_ok(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n >= IFNAMSIZ || strcmp(s, ".") == 0 || strcmp(s, "..") == 0)
		return false;
	for (; *s; s++)
		if (*s == '/' || *s == ':' || *s == ',' || *s == '=' || *s <= ' ' || *s == 0x7f)
			return false;
	return true;
}

int sbt_tap_parse(const char *arg, struct sbt_tap_spec *t, char *err, size_t errlen)
{
	char buf[1024], *save = NULL, *tok;
	bool first = true, v4;

	memset(t, 0, sizeof(*t));
	if (strlen(arg) >= sizeof(buf)) {
		snprintf(err, errlen, "too long");
		return -EINVAL;
	}
	snprintf(buf, sizeof(buf), "%s", arg);
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save), first = false) {
		char *eq = strchr(tok, '=');

		if (first) {
			if (eq || !ifname_ok(tok)) {
				snprintf(err, errlen,
					 "'%s' is not a device name (1..15 characters, no / : , =)",
					 tok);
				return -EINVAL;
			}
			snprintf(t->ifname, sizeof(t->ifname), "%s", tok);
			continue;
		}
		if (!eq) {
			snprintf(err, errlen, "'%s': expected KEY=VALUE (netns, guest, resolver)",
				 tok);
			return -EINVAL;
		}
		*eq++ = '\0';
		if (strcmp(tok, "netns") == 0) {
			if (!*eq || (strchr(eq, '/') && eq[0] != '/') || strlen(eq) >= PATH_MAX) {
				snprintf(err, errlen, "netns '%s': give a name or an absolute path",
					 eq);
				return -EINVAL;
			}
			snprintf(t->netns, sizeof(t->netns), "%s", eq);
		} else if (strcmp(tok, "guest") == 0) {
			if (t->nr_guest >= SBT_TAP_GUESTS) {
				snprintf(err, errlen, "more than %d guest addresses",
					 SBT_TAP_GUESTS);
				return -EINVAL;
			}
			if (sbt_addr_parse(eq, t->guest[t->nr_guest], &v4)) {
				snprintf(err, errlen, "guest '%s' is not an IPv4 or IPv6 address",
					 eq);
				return -EINVAL;
			}
			t->nr_guest++;
		} else if (strcmp(tok, "resolver") == 0) {
			if (sbt_addr_parse(eq, t->resolver, &v4)) {
				snprintf(err, errlen,
					 "resolver '%s' is not an IPv4 or IPv6 address", eq);
				return -EINVAL;
			}
			t->has_resolver = true;
		} else {
			snprintf(err, errlen, "unknown key '%s' (netns, guest, resolver)", tok);
			return -EINVAL;
		}
	}
	if (!t->ifname[0]) {
		snprintf(err, errlen, "no device name");
		return -EINVAL;
	}
	return 0;
}

int sbt_tap_ifindex(const struct sbt_tap_spec *t, char *err, size_t errlen)
{
	int back, ifindex, ret = sbt_netns_enter(t->netns, &back);

	if (ret == -ENOENT) {
		snprintf(err, errlen, "no network namespace '%s'", t->netns);
		return ret;
	}
	if (ret) {
		snprintf(err, errlen, "cannot enter network namespace '%s': %s", t->netns,
			 strerror(-ret));
		return ret;
	}
	ifindex = (int)if_nametoindex(t->ifname);
	ret = ifindex ? ifindex : -errno;
	if (sbt_netns_leave(back)) {
		snprintf(err, errlen, "cannot return from network namespace '%s'", t->netns);
		return -EIO;
	}
	if (ret == -ENODEV)
		snprintf(err, errlen, "no such device%s%s", t->netns[0] ? " in netns " : "",
			 t->netns);
	else if (ret < 0)
		snprintf(err, errlen, "cannot look the device up: %s", strerror(-ret));
	return ret;
}

int sbt_tap_from_shim(struct sbt_target *sb, const char *tap, const char *netns,
		      const char (*guest_addrs)[64], int nr, int *bad)
{
	struct sbt_tap_spec *t = &sb->tap;

	memset(t, 0, sizeof(*t));
	snprintf(t->ifname, sizeof(t->ifname), "%s", tap);
	snprintf(t->netns, sizeof(t->netns), "%s", netns);
	for (int i = 0; i < nr && t->nr_guest < SBT_TAP_GUESTS; i++) {
		bool v4;

		if (sbt_addr_parse(guest_addrs[i], t->guest[t->nr_guest], &v4)) {
			*bad = i;
			return -EINVAL;
		}
		t->nr_guest++;
	}
	sb->has_tap = true;
	return 0;
}

struct sbt_target *sbt_trace_target_next(struct sbt_trace_opts *opts)
{
	if (opts->nr_targets >= SBT_MAX_SANDBOXES) {
		errno = E2BIG;
		return NULL;
	}
	if (opts->nr_targets == opts->cap_targets) {
		uint32_t cap = opts->cap_targets ? opts->cap_targets * 2 : 4;
		struct sbt_target *n;

		if (cap > SBT_MAX_SANDBOXES)
			cap = SBT_MAX_SANDBOXES;
		n = realloc(opts->targets, cap * sizeof(*n));
		if (!n)
			return NULL;
		opts->targets = n;
		opts->cap_targets = cap;
	}
	memset(&opts->targets[opts->nr_targets], 0, sizeof(*opts->targets));
	return &opts->targets[opts->nr_targets];
}

void sbt_trace_target_commit(struct sbt_trace_opts *opts)
{
	opts->targets[opts->nr_targets].slot = opts->nr_targets;
	opts->nr_targets++;
}

void sbt_trace_targets_free(struct sbt_trace_opts *opts)
{
	free(opts->targets);
	opts->targets = NULL;
	opts->nr_targets = opts->cap_targets = 0;
}
