// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The ns backend's user namespace: the sandbox's root is not the host's.
 *
 * Ids 0..65535 inside map to 65536 host ids from SBX_USERNS_FIRST up, a
 * fixed high range chosen by the sandbox's name (FNV-1a over 4095 slots):
 * no /etc/subuid entry to configure or to collide with (subordinate ranges
 * start at 100000, systemd's container ranges end at 0x6FFFFFFF, and ids
 * from 0x80000000 on are unsafe as signed ints). No host file, process or
 * keyring belongs to an id in it, so owner rights, peer credentials
 * (SO_PEERCRED shows the mapped id) and keyrings are no longer root's. Two
 * sandboxes of the same slot share a range; their pid, mount, ipc and
 * network namespaces still keep them apart.
 *
 * The caller writes the maps once the child exists (it is privileged in the
 * parent namespace, so setgroups stays allowed for the child to clear its
 * host groups), idmaps the workspace's detached mount tree to the same
 * range (so the repo's root-owned files are the sandbox root's, and what
 * the sandbox writes there is stored under the host ids it had), then lets
 * the child go on. The child becomes id 0 of the namespace before anything
 * else.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <string.h>
#include <signal.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/mount.h>

#include "internal.h"
#include "lib/io.h"

#define SBX_USERNS_FIRST 0x70000000u
#define SBX_USERNS_SLOTS 4095u

uint32_t sbx_userns_base(const char *name)
{
	uint32_t h = 2166136261u;

	for (; *name; name++)
		h = (h ^ (unsigned char)*name) * 16777619u;
	return SBX_USERNS_FIRST + (h % SBX_USERNS_SLOTS) * SBX_USERNS_SIZE;
}

static int write_map(pid_t pid, const char *which, uint32_t base)
{
	char path[64], map[64];
	int fd, ret;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, which);
	snprintf(map, sizeof(map), "0 %u %u\n", base, SBX_USERNS_SIZE);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = sbt_write_all(fd, map, strlen(map));
	close(fd);
	return ret;
}

/* The workspace's tree, idmapped to the child's namespace (and nosuid, nodev, maybe ro). */
static int idmap_workspace(const struct sbx_child *c, pid_t pid, char *err, size_t errlen)
{
	struct mount_attr a = { .attr_set =
					MOUNT_ATTR_IDMAP | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV };
	char path[64];
	int fd, ret = 0;

	if (c->ws_fd < 0)
		return 0;
	/*
	 * An overlay's lower layer is read-only by nature; the overlay itself is
	 * mounted inside. qemu's 9p export of it is read-only in every mode.
	 */
	if ((c->spec->workspace_ro && !c->spec->workspace_overlay) ||
	    sbt_backend_caps(c->spec->backend)->workspace == SBT_WORKSPACE_EXPORT)
		a.attr_set |= MOUNT_ATTR_RDONLY;
	snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return sbx_seterr(err, errlen, -errno, "sandbox %s: %s: %s", c->spec->name, path,
				  strerror(errno));
	a.userns_fd = (uint64_t)fd;
	if (mount_setattr(c->ws_fd, "", AT_EMPTY_PATH | AT_RECURSIVE, &a, sizeof(a)))
		ret = sbx_seterr(err, errlen, -errno,
				 "sandbox %s: idmap the workspace %s for the sandbox's user "
				 "namespace: %s (needs Linux 5.12 and a filesystem that supports "
				 "idmapped mounts)",
				 c->spec->name, c->spec->workspace, strerror(errno));
	close(fd);
	return ret;
}

int sbx_userns_prepare(struct sbx_child *c, char *err, size_t errlen)
{
	int p[2];

	if (pipe2(p, O_CLOEXEC))
		return sbx_seterr(err, errlen, -errno, "pipe: %s", strerror(errno));
	c->sync_r = p[0];
	c->sync_w = p[1];
	return 0;
}

void sbx_userns_release(struct sbx_child *c)
{
	if (c->sync_r >= 0)
		close(c->sync_r);
	if (c->sync_w >= 0)
		close(c->sync_w);
	c->sync_r = c->sync_w = -1;
}

int sbx_userns_setup(struct sbx_child *c, struct sbt_sandbox_run *run, char *err, size_t errlen)
{
	uint32_t base = sbx_userns_base(c->spec->name);
	int ret = write_map(run->pid, "uid_map", base);

	if (!ret)
		ret = write_map(run->pid, "gid_map", base);
	if (ret)
		return sbx_seterr(err, errlen, ret,
				  "sandbox %s: write the user namespace's id maps: %s",
				  c->spec->name, strerror(-ret));
	run->userns_base = base;
	ret = idmap_workspace(c, run->pid, err, errlen);
	if (ret)
		return ret;
	/* the child waits for this byte before it does anything */
	if (write(c->sync_w, "u", 1) != 1)
		return sbx_seterr(err, errlen, -EPIPE, "sandbox %s: the child is gone",
				  c->spec->name);
	return 0;
}

void sbx_userns_enter(const struct sbx_child *c)
{
	char b;
	ssize_t n;

	do
		n = read(c->sync_r, &b, 1);
	while (n < 0 && errno == EINTR);
	if (n != 1)
		_exit(126); /* the caller failed, or went away, before the maps were written */
	close(c->sync_r);
	/* id 0 of the new namespace, with none of the host's supplementary groups */
	if (setresgid(0, 0, 0) || setgroups(0, NULL) || setresuid(0, 0, 0))
		sbx_child_fail(c, errno, "become root of the user namespace: %s", strerror(errno));
	/* a change of credentials clears the parent-death signal: the sandbox dies with its caller */
	/* (had it died in between, the ready and go pipes end the child: EPIPE, EOF) */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0))
		sbx_child_fail(c, errno, "PR_SET_PDEATHSIG: %s", strerror(errno));
}
