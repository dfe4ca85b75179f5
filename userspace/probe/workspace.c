// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A writable view of the repo without touching it: an overlay whose upper
 * layer is thrown away. The caller falls back to the repo read-only (and
 * reports it) when the overlay cannot be mounted.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "probe_int.h"

int probe_workspace_setup(struct probe_workspace *ws, const char *repo)
{
	char upper[96], work[96], opts[PATH_MAX + 256];

	snprintf(ws->dir, sizeof(ws->dir), "/tmp/sbtrace-probe.XXXXXX");
	if (!mkdtemp(ws->dir))
		return -errno;
	snprintf(upper, sizeof(upper), "%s/upper", ws->dir);
	snprintf(work, sizeof(work), "%s/work", ws->dir);
	snprintf(ws->merged, sizeof(ws->merged), "%s/merged", ws->dir);
	if (mkdir(upper, 0755) || mkdir(work, 0755) || mkdir(ws->merged, 0755))
		return -errno;
	if ((size_t)snprintf(opts, sizeof(opts), "lowerdir=%s,upperdir=%s,workdir=%s", repo, upper,
			     work) >= sizeof(opts))
		return -ENAMETOOLONG;
	if (mount("overlay", ws->merged, "overlay", MS_NODEV | MS_NOSUID, opts) < 0)
		return -errno;
	ws->mounted = true;
	return 0;
}

/* rm -rf without following symlinks (the upper layer holds what the build wrote). */
static int rm_tree(const char *path, int depth)
{
	struct stat st;
	DIR *d;
	struct dirent *e;

	if (lstat(path, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode) || depth > 64)
		return unlink(path) ? -errno : 0;
	d = opendir(path);
	if (d) {
		while ((e = readdir(d))) {
			char sub[PATH_MAX];

			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
				continue;
			if ((size_t)snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name) >=
			    sizeof(sub))
				continue;
			rm_tree(sub, depth + 1);
		}
		closedir(d);
	}
	return rmdir(path) ? -errno : 0;
}

void probe_workspace_teardown(struct probe_workspace *ws)
{
	if (ws->mounted)
		umount2(ws->merged, MNT_DETACH);
	ws->mounted = false;
	if (ws->dir[0])
		rm_tree(ws->dir, 0);
	ws->dir[0] = '\0';
}
