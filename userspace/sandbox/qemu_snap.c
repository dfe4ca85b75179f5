// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The qemu backend's saved boot (see sandbox.h, spec.vm_boot). A guest
 * booted with sbt.snap=1 (scripts/guest/init) goes as far as it can without
 * anything of a run: modules, mounts, the guest agent attached from the
 * initramfs (its libraries copied from the host's /usr, the 9p share
 * unmounted again: qemu will not save a guest with one mounted), and then
 * prints SBT-GUEST-HOLD and waits on its control port (virtio-serial
 * "sbt.ctl"). The host saves that guest once (QMP migrate to a file,
 * guest_dir/snap/KEY.state, with the initrd it booted, KEY.initrd), and
 * starts later runs of the same KEY from it: qemu -S -incoming, the state
 * loaded before the release (a failure there is a cold boot, start retries),
 * the release QMP's cont. Every run then gets its own part down the
 * control port: SBT-CTL <len> and an archive (sbt/run, sbt/nonce,
 * sbt/cmdline: the sbt.* words a cold boot has on its kernel command line);
 * when the guest asks (SBT-GUEST-CLOCK), the host's time and 32 random
 * bytes, which the guest agent turns into the guest's clock and a reseeded
 * RNG before its HELLO (sbtrace-guest-agent --resume-fd).
 *
 * KEY: what the saved guest depends on (qemu's binary, the guest's kernel
 * and initramfs, the agent's binary, memory, accelerator, the devices, the
 * TSC rate on the command line), as identities of files (device, inode,
 * size, mtime) and values, hashed. At most SNAP_KEEP states are kept.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <json-c/json.h>

#include "lib/clock.h"
#include "lib/cpio.h"
#include "lib/io.h"
#include "internal.h"
#include "lib/log.h"

#define SNAP_DIR     "snap"
#define SNAP_KEEP    4
#define SNAP_LOAD_MS 60000 /* the state's load before the release (TCG, a loaded host) */
#define SNAP_SAVE_MS 120000
#define SNAP_CTL_MAX (SBT_CPIO_SCRIPT_MAX + 65536)
#define SNAP_SEND_MS 20000 /* the guest reads its control port promptly */
#define SNAP_KEY_FMT "%016llx"
#define SNAP_NOSAVE  "the guest agent failed before the hold: nothing saved"

/* ---- the key and the files ---------------------------------------------- */

static uint64_t fnv64(uint64_t h, const char *s)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

/* A file's identity into the key; false when it cannot be stat'ed. */
static bool key_file(uint64_t *h, const char *what, const char *path)
{
	char buf[PATH_MAX + 160];
	struct stat st;

	if (stat(path, &st))
		return false;
	snprintf(buf, sizeof(buf), "|%s:%s:%llu:%llu:%lld:%lld.%09ld", what, path,
		 (unsigned long long)st.st_dev, (unsigned long long)st.st_ino,
		 (long long)st.st_size, (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
	*h = fnv64(*h, buf);
	return true;
}

/* The qemu binary execvp will run (PATH's first), into the key. */
static bool key_qemu(uint64_t *h, const char *prog)
{
	char full[PATH_MAX];

	return sbx_which(prog, full, sizeof(full)) && key_file(h, "qemu", full);
}

int sbx_vm_snap_plan(const struct sbx_vm_snap_in *in, struct sbx_vm_snap *sn, char *why,
		     size_t whylen)
{
	char dir[PATH_MAX], shape[PATH_MAX + 256];
	uint64_t h = 14695981039346656037ull;
	struct stat st;

	memset(sn, 0, sizeof(*sn));
	sn->state_fd = -1;
	if (in->spec->vm_boot == SBT_VM_BOOT_COLD)
		return snprintf(why, whylen, "--vm-boot cold"), 0;
	if (!in->agent[0])
		return snprintf(why, whylen, "no guest agent (sbtrace next to the shim)"), 0;
	if (in->spec->vm_disk_mb || in->spec->vm_root)
		return snprintf(why, whylen, "engine mode (its disk and root): not saved"), 0;
	if (in->bpf_stats)
		return snprintf(why, whylen, "the guest agent's --bpf-stats: not saved"), 0;
	snprintf(shape, sizeof(shape), "v1|%s|%s|%s|%u MiB|alt %d|ws %d|%s", in->machine,
		 in->append, in->accel, in->mem_mb, in->alt, in->ws, in->devices);
	h = fnv64(h, shape);
	if (!sbx_str_fits(sn->kernel, sizeof(sn->kernel), "%s/vmlinux", in->spec->guest_dir) ||
	    !sbx_str_fits(sn->base, sizeof(sn->base), "%s/initramfs.cpio.gz",
			  in->spec->guest_dir) ||
	    !key_file(&h, "kernel", sn->kernel) || !key_file(&h, "initramfs", sn->base) ||
	    !key_file(&h, "agent", in->agent) || !key_qemu(&h, in->qemu))
		return snprintf(why, whylen, "the guest, its agent or qemu cannot be stat'ed"), 0;
	if (!sbx_str_fits(dir, sizeof(dir), "%s/" SNAP_DIR, in->spec->guest_dir) ||
	    !sbx_str_fits(sn->state, sizeof(sn->state), "%s/" SNAP_KEY_FMT ".state", dir,
			  (unsigned long long)h) ||
	    !sbx_str_fits(sn->initrd, sizeof(sn->initrd), "%s/" SNAP_KEY_FMT ".initrd", dir,
			  (unsigned long long)h))
		return snprintf(why, whylen, "the guest directory's path is too long"), 0;
	if (mkdir(dir, 0700) && errno != EEXIST)
		return snprintf(why, whylen, "mkdir %s: %s", dir, strerror(errno)), 0;
	sn->state_fd = open(sn->state, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (sn->state_fd >= 0 && !fstat(sn->state_fd, &st) && S_ISREG(st.st_mode) &&
	    st.st_size > 0 && stat(sn->initrd, &st) == 0) {
		sn->mode = SBX_SNAP_RESTORE;
		return 0;
	}
	if (sn->state_fd >= 0)
		close(sn->state_fd);
	/* none yet: boot cold, to the hold, and save it there */
	sn->state_fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (sn->state_fd < 0)
		return snprintf(why, whylen, "%s: O_TMPFILE: %s", dir, strerror(errno)), 0;
	sn->mode = SBX_SNAP_SAVE;
	snprintf(why, whylen, "no saved guest yet: this boot saves one");
	return 0;
}

/* KEY.initrd: the base initramfs and the agent's archive, made once (mode 0644: qemu opens it). */
int sbx_vm_snap_initrd(const struct sbx_vm_snap *sn, const char *agent, char *err, size_t errlen)
{
	static const char zeros[4];
	char tmp[PATH_MAX + 32], buf[65536];
	uint64_t total = 0;
	int in, out, ret = 0;
	ssize_t n;

	if (access(sn->initrd, R_OK) == 0)
		return 0;
	if (!sbx_str_fits(tmp, sizeof(tmp), "%s.%d", sn->initrd, (int)getpid()))
		return sbx_seterr(err, errlen, -ENAMETOOLONG, "path too long");
	in = open(sn->base, O_RDONLY | O_CLOEXEC);
	out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	while (in >= 0 && out >= 0 && !ret && (n = read(in, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		ret = n < 0 ? -errno : sbt_write_all(out, buf, (size_t)n);
		total += n > 0 ? (uint64_t)n : 0;
	}
	if (in < 0 || out < 0)
		ret = -errno;
	if (!ret && total % 4) /* the next archive starts at a 4-byte boundary */
		ret = sbt_write_all(out, zeros, (size_t)(4 - total % 4));
	if (!ret)
		ret = sbt_guest_archive_agent(out, agent, err, errlen);
	else
		sbx_seterr(err, errlen, ret, "%s: %s", sn->initrd, strerror(-ret));
	if (in >= 0)
		close(in);
	if (out >= 0 && close(out) && !ret)
		ret = sbx_seterr(err, errlen, -errno, "%s: %s", tmp, strerror(errno));
	if (!ret && fchmodat(AT_FDCWD, tmp, 0644, 0) == 0 && rename(tmp, sn->initrd))
		ret = sbx_seterr(err, errlen, -errno, "rename %s: %s", tmp, strerror(errno));
	if (ret)
		unlink(tmp);
	return ret;
}

/* Keep the SNAP_KEEP newest states (and their initrds) in the directory of `keep`. */
static void snap_prune(const char *keep)
{
	struct ent {
		char name[64];
		time_t mtime;
	} ents[64];
	char dir[PATH_MAX], p[PATH_MAX + 80];
	const char *slash = strrchr(keep, '/');
	struct dirent *de;
	struct stat st;
	int n = 0;
	DIR *d;

	if (!slash || !sbx_str_fits(dir, sizeof(dir), "%.*s", (int)(slash - keep), keep))
		return;
	d = opendir(dir);
	while (d && (de = readdir(d)) && n < (int)(sizeof(ents) / sizeof(ents[0]))) {
		size_t len = strlen(de->d_name);

		if (len != 16 + 6 || strcmp(de->d_name + 16, ".state") != 0 ||
		    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW))
			continue;
		snprintf(ents[n].name, sizeof(ents[n].name), "%.16s", de->d_name);
		ents[n++].mtime = st.st_mtime;
	}
	if (d)
		closedir(d);
	for (int kept = 0; kept < SNAP_KEEP && kept < n; kept++) { /* the newest first */
		int best = kept;

		for (int i = kept + 1; i < n; i++)
			if (ents[i].mtime > ents[best].mtime)
				best = i;
		struct ent t = ents[kept];
		ents[kept] = ents[best];
		ents[best] = t;
	}
	for (int i = SNAP_KEEP; i < n; i++) {
		if (sbx_str_fits(p, sizeof(p), "%s/%s.state", dir, ents[i].name))
			unlink(p);
		if (sbx_str_fits(p, sizeof(p), "%s/%s.initrd", dir, ents[i].name))
			unlink(p);
	}
}

/* ---- QMP: qemu's monitor, one command at a time ------------------------- */

struct qmp {
	int fd;
	size_t len;
	char buf[16384];
};

/* The next reply ("return" or "error"; events and the greeting skipped) within ms. */
static int qmp_reply(struct qmp *q, int ms, json_object **out)
{
	uint64_t end = sbt_mono_ms() + (uint64_t)ms;

	*out = NULL;
	for (;;) {
		char *nl = memchr(q->buf, '\n', q->len);

		if (nl) {
			json_object *o, *r;

			*nl = '\0';
			o = json_tokener_parse(q->buf);
			q->len -= (size_t)(nl + 1 - q->buf);
			memmove(q->buf, nl + 1, q->len);
			if (o && (json_object_object_get_ex(o, "return", &r) ||
				  json_object_object_get_ex(o, "error", &r))) {
				*out = o;
				return 0;
			}
			json_object_put(o);
			continue;
		}
		if (q->len == sizeof(q->buf))
			return -EMSGSIZE;
		uint64_t now = sbt_mono_ms();
		struct pollfd p = { .fd = q->fd, .events = POLLIN };
		int r = now >= end ? 0 : poll(&p, 1, (int)(end - now));
		ssize_t n;

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? -errno : -ETIMEDOUT;
		n = read(q->fd, q->buf + q->len, sizeof(q->buf) - q->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EPIPE; /* qemu is gone */
		q->len += (size_t)n;
	}
}

/* Run one command (JSON text); its "return" in *ret (the caller's), or -EPROTO with the error. */
static int qmp_cmd(struct qmp *q, const char *cmd, int pass_fd, json_object **ret, char *err,
		   size_t errlen)
{
	char ctrl[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = (void *)cmd, .iov_len = strlen(cmd) };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
	json_object *o, *e, *d;
	ssize_t n;
	int r;

	if (ret)
		*ret = NULL;
	if (pass_fd >= 0) { /* getfd: the fd travels with the command */
		struct cmsghdr *c;

		memset(ctrl, 0, sizeof(ctrl));
		m.msg_control = ctrl;
		m.msg_controllen = sizeof(ctrl);
		c = CMSG_FIRSTHDR(&m);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &pass_fd, sizeof(int));
	}
	do
		n = sendmsg(q->fd, &m, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)iov.iov_len)
		return sbx_seterr(err, errlen, n < 0 ? -errno : -EIO, "qemu's monitor: %s",
				  n < 0 ? strerror(errno) : "short write");
	r = qmp_reply(q, 10000, &o);
	if (r)
		return sbx_seterr(err, errlen, r, "qemu's monitor: %s", strerror(-r));
	if (json_object_object_get_ex(o, "error", &e)) {
		r = sbx_seterr(err, errlen, -EPROTO, "qemu: %s",
			       json_object_object_get_ex(e, "desc", &d) ? json_object_get_string(d)
									: "error");
		json_object_put(o);
		return r;
	}
	if (ret)
		*ret = o;
	else
		json_object_put(o);
	return 0;
}

/* The greeting and qmp_capabilities, once per run. */
static int qmp_open(struct sbt_sandbox_run *run, struct qmp *q, char *err, size_t errlen)
{
	q->fd = run->vm_mon_fd;
	q->len = 0;
	if (q->fd < 0)
		return sbx_seterr(err, errlen, -EBADF, "no monitor");
	if (run->vm_qmp_up)
		return 0;
	run->vm_qmp_up = true;
	return qmp_cmd(q, "{\"execute\":\"qmp_capabilities\"}\n", -1, NULL, err, errlen);
}

/* query-migrate until "completed" (0), "failed" or another end, or ms. */
static int qmp_migrated(struct qmp *q, int ms, char *err, size_t errlen)
{
	uint64_t end = sbt_mono_ms() + (uint64_t)ms;

	for (;;) {
		json_object *o, *r, *st;
		const char *s;
		int ret = qmp_cmd(q, "{\"execute\":\"query-migrate\"}\n", -1, &o, err, errlen);

		if (ret)
			return ret;
		json_object_object_get_ex(o, "return", &r);
		s = json_object_object_get_ex(r, "status", &st) ? json_object_get_string(st) : "";
		if (strcmp(s, "completed") == 0) {
			json_object_put(o);
			return 0;
		}
		if (strcmp(s, "failed") == 0 || strcmp(s, "cancelled") == 0) {
			json_object *d;

			ret = sbx_seterr(err, errlen, -EIO, "migration %s%s%s", s,
					 json_object_object_get_ex(r, "error-desc", &d) ? ": " : "",
					 d ? json_object_get_string(d) : "");
			json_object_put(o);
			return ret;
		}
		json_object_put(o);
		if (sbt_mono_ms() >= end)
			return sbx_seterr(err, errlen, -ETIMEDOUT, "migration: still %s after %d s",
					  s[0] ? s : "not started", ms / 1000);
		usleep(10000);
	}
}

/* ---- the run's side ------------------------------------------------------ */

/* SBT-CTL <len>\n and the run's archive (STATE_DIR/NAME.vm/ctl) down the control port. */
static int send_ctl(struct sbt_sandbox_run *run, char *err, size_t errlen)
{
	struct timeval tv = { SNAP_SEND_MS / 1000, 0 };
	char path[PATH_MAX], hdr[48], *buf;
	size_t len = 0;
	int fd, e = 0, ret;

	if (!sbx_str_fits(path, sizeof(path), "%s/ctl", run->vm_dir))
		return sbx_seterr(err, errlen, -ENAMETOOLONG, "path too long");
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	buf = fd >= 0 ? sbt_read_capped(fd, SNAP_CTL_MAX, &len, &e) : NULL;
	if (fd < 0)
		e = errno;
	else
		close(fd);
	unlink(path);
	if (!buf)
		return sbx_seterr(err, errlen, -e, "%s: %s", path, strerror(e));
	setsockopt(run->vm_ctl_fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	snprintf(hdr, sizeof(hdr), "SBT-CTL %zu\n", len);
	ret = sbt_write_all(run->vm_ctl_fd, hdr, strlen(hdr));
	if (!ret)
		ret = sbt_write_all(run->vm_ctl_fd, buf, len);
	free(buf);
	return ret ? sbx_seterr(err, errlen, ret, "the guest's control port: %s", strerror(-ret))
		   : 0;
}

/* The guest asked for the time: "go EPOCH_NS SEED\n" (sbtrace-guest-agent --resume-fd). */
static int send_clock(struct sbt_sandbox_run *run)
{
	unsigned char seed[32];
	char line[128];
	int n;

	if (getrandom(seed, sizeof(seed), 0) != (ssize_t)sizeof(seed))
		return -errno;
	n = snprintf(line, sizeof(line), "go %llu ",
		     (unsigned long long)sbt_clock_ns(CLOCK_REALTIME));
	for (size_t i = 0; i < sizeof(seed); i++)
		n += snprintf(line + n, sizeof(line) - (size_t)n, "%02x", seed[i]);
	line[n++] = '\n';
	memset(seed, 0, sizeof(seed));
	return sbt_write_all(run->vm_ctl_fd, line, (size_t)n);
}

/* Done with it: nothing the guest does then makes qemu queue events for a reader that is gone. */
static void close_monitor(struct sbt_sandbox_run *run)
{
	if (run->vm_mon_fd >= 0)
		close(run->vm_mon_fd);
	run->vm_mon_fd = -1;
}

/* The hold of a boot that saves: migrate to the O_TMPFILE, link it in, cont. */
static int save(struct sbt_sandbox_run *run, char *err, size_t errlen)
{
	char tmp[PATH_MAX + 32], link[64];
	struct qmp q;
	int ret = qmp_open(run, &q, err, errlen);

	if (!ret)
		ret = qmp_cmd(&q, "{\"execute\":\"getfd\",\"arguments\":{\"fdname\":\"snap\"}}\n",
			      run->vm_snap_fd, NULL, err, errlen);
	if (!ret)
		ret = qmp_cmd(&q, "{\"execute\":\"migrate\",\"arguments\":{\"uri\":\"fd:snap\"}}\n",
			      -1, NULL, err, errlen);
	if (!ret)
		ret = qmp_migrated(&q, SNAP_SAVE_MS, err, errlen);
	snprintf(link, sizeof(link), "/proc/self/fd/%d", run->vm_snap_fd);
	if (!ret &&
	    (!sbx_str_fits(tmp, sizeof(tmp), "%s.%d", run->vm_snap, (int)getpid()) ||
	     fsync(run->vm_snap_fd) || linkat(AT_FDCWD, link, AT_FDCWD, tmp, AT_SYMLINK_FOLLOW) ||
	     rename(tmp, run->vm_snap)))
		ret = sbx_seterr(err, errlen, -errno, "%s: %s", run->vm_snap, strerror(errno));
	if (ret)
		unlink(tmp);
	/* saved or not, the guest goes on (migration leaves it paused) */
	if (qmp_cmd(&q, "{\"execute\":\"cont\"}\n", -1, NULL, NULL, 0) && !ret)
		ret = sbx_seterr(err, errlen, -EIO, "qemu did not continue after the save");
	if (!ret)
		snap_prune(run->vm_snap);
	return ret;
}

void sbx_vm_snap_console(struct sbt_sandbox_run *run)
{
	char err[256];

	if (run->con.hold) {
		bool nosave = run->con.hold == 2;

		run->con.hold = 0;
		if (nosave) {
			snprintf(run->boot_why, sizeof(run->boot_why), SNAP_NOSAVE);
		} else if (run->vm_snap_fd >= 0 && save(run, err, sizeof(err))) {
			sbt_log("sandbox %s: the guest was not saved: %s", run->name, err);
			snprintf(run->boot_why, sizeof(run->boot_why),
				 "no saved guest yet; saving this one failed: %.140s", err);
		} else if (run->vm_snap_fd >= 0) {
			snprintf(run->boot_why, sizeof(run->boot_why),
				 "no saved guest yet: this boot saved one");
		}
		if (run->vm_snap_fd >= 0)
			close(run->vm_snap_fd);
		run->vm_snap_fd = -1;
		close_monitor(run);
		if (send_ctl(run, err, sizeof(err)))
			sbt_log("sandbox %s: %s", run->name, err);
	}
	if (run->con.clock_asked) {
		run->con.clock_asked = false;
		if (send_clock(run))
			sbt_log("sandbox %s: the guest's clock: %s", run->name, strerror(errno));
	}
}

int sbx_vm_snap_loaded(struct sbt_sandbox_run *run, char *err, size_t errlen)
{
	char msg[256];
	struct qmp q;
	int ret = qmp_open(run, &q, msg, sizeof(msg));

	if (!ret)
		ret = qmp_migrated(&q, SNAP_LOAD_MS, msg, sizeof(msg));
	if (!ret)
		return 0;
	/* a state that does not load is not tried again: the next boot saves a new one */
	unlink(run->vm_snap);
	run->vm_restore_failed = true;
	snprintf(run->boot_why, sizeof(run->boot_why), "restore failed: %.170s", msg);
	return sbx_seterr(err, errlen, ret, "sandbox %s: restore failed: %s", run->name, msg);
}

int sbx_vm_snap_go(struct sbt_sandbox_run *run)
{
	char err[256];
	struct qmp q;
	int ret = qmp_open(run, &q, err, sizeof(err));

	if (!ret)
		ret = qmp_cmd(&q, "{\"execute\":\"cont\"}\n", -1, NULL, err, sizeof(err));
	run->go_ns = sbt_clock_ns(CLOCK_MONOTONIC);
	if (!ret)
		ret = send_ctl(run, err, sizeof(err));
	if (ret)
		sbt_log("sandbox %s: releasing the restored guest: %s", run->name, err);
	if (run->go_fd >= 0)
		close(run->go_fd); /* qemu never reads it */
	run->go_fd = -1;
	close_monitor(run);
	return ret;
}

void sbx_vm_snap_close(struct sbt_sandbox_run *run)
{
	if (run->vm_ctl_fd >= 0)
		close(run->vm_ctl_fd);
	if (run->vm_mon_fd >= 0)
		close(run->vm_mon_fd);
	if (run->vm_snap_fd >= 0)
		close(run->vm_snap_fd);
	run->vm_ctl_fd = run->vm_mon_fd = run->vm_snap_fd = -1;
}
