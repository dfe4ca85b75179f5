// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Test helper: is anything in a tree a shell, as the probe would know it?
 *
 *   sbt-shellscan ROOT
 *
 * Every file and symlink below ROOT (an image's root: `podman image mount`)
 * goes through the probe's own classifiers, as if it were executed at its
 * path in the image: by its name (userspace/exec/shell.c) and, for a
 * regular file, by its content against the host's shells
 * (userspace/exec/shellid.c: the same bytes, or the same ELF layout). One
 * line a finding:
 *
 *   shell PATH HOW SHELL     (HOW: name, file_name or content)
 *   script PATH INTERP       (a #! script whose interpreter is a shell)
 *
 * and last "scanned N files". Exits 0 when nothing was found, 1 when
 * something was, 2 on an error. The classifiers are compiled in (this helper
 * links libc alone).
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "exec/shell.c"
#include "exec/shellid.c"

static struct sbt_shellid host_shells;
static size_t root_len, scanned;
static int found;

/* The #! line's interpreter, `env`'s program after it, when it is a shell; else NULL. */
static const char *shell_interp(const char *head, size_t n, char *buf, size_t len)
{
	char line[128], *w, *save = NULL;

	if (n < 2 || head[0] != '#' || head[1] != '!')
		return NULL;
	snprintf(line, sizeof(line), "%.*s", (int)(n - 2), head + 2);
	line[strcspn(line, "\n")] = '\0';
	w = strtok_r(line, " \t", &save);
	if (w && strcmp(strrchr(w, '/') ? strrchr(w, '/') + 1 : w, "env") == 0)
		w = strtok_r(NULL, " \t", &save);
	if (!w || !sbt_is_shell_name(strrchr(w, '/') ? strrchr(w, '/') + 1 : w))
		return NULL;
	snprintf(buf, len, "%s", w);
	return buf;
}

/* A regular file: its head, classified by content; a #! script of a shell. */
static void scan_file(const char *path, const char *rel, const char *name, const struct stat *st)
{
	const char *argv[] = { rel };
	struct sbt_shell_class cls;
	struct sbt_exec ev;
	char interp[128];
	ssize_t n;
	int fd;

	memset(&ev, 0, sizeof(ev));
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0) {
		fprintf(stderr, "sbt-shellscan: %s: %s\n", path, strerror(errno));
		found = found ? found : 2;
		return;
	}
	n = pread(fd, ev.exe_head, sizeof(ev.exe_head), 0);
	close(fd);
	if (n <= 0)
		return;
	ev.exe_size = (uint64_t)st->st_size;
	snprintf(ev.exe_name, sizeof(ev.exe_name), "%s", name);
	ev.filename = rel;
	ev.interp = "";
	ev.argc = 1;
	ev.argv = argv;
	if (sbt_shellid_classify(&host_shells, &ev, &cls)) {
		printf("shell %s %s %s\n", rel, cls.identified_by, cls.shell);
		found = 1;
	}
	if ((st->st_mode & 0111) &&
	    shell_interp((const char *)ev.exe_head, (size_t)n, interp, sizeof(interp))) {
		printf("script %s %s\n", rel, interp);
		found = 1;
	}
}

static int visit(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	const char *rel = path + root_len, *name = path + ftw->base;
	const char *argv[] = { rel };
	struct sbt_shell_class cls;

	if (type != FTW_F && type != FTW_SL && type != FTW_SLN)
		return 0;
	scanned++;
	/* executed by its path in the image: /bin/sh, /usr/bin/busybox ... */
	if (sbt_shell_classify(rel, NULL, argv, 1, &cls) || is_multicall(name)) {
		printf("shell %s name %s\n", rel, cls.kind ? cls.shell : name);
		found = 1;
	} else if (type == FTW_F && S_ISREG(st->st_mode)) {
		scan_file(path, rel, name, st);
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: sbt-shellscan ROOT\n");
		return 2;
	}
	sbt_shellid_scan(&host_shells, NULL);
	if (host_shells.n == 0) {
		fprintf(stderr, "sbt-shellscan: no shell of the host's found to compare with\n");
		return 2;
	}
	root_len = strlen(argv[1]);
	while (root_len > 1 && argv[1][root_len - 1] == '/')
		root_len--;
	if (nftw(argv[1], visit, 64, FTW_PHYS) != 0) {
		fprintf(stderr, "sbt-shellscan: %s: %s\n", argv[1], strerror(errno));
		return 2;
	}
	printf("scanned %zu files\n", scanned);
	return found;
}
