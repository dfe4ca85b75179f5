// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The qemu backend (see sandbox.h): CLONE_INTO_CGROUP alone, like podman's.
 * The caller prepares everything before the clone: STATE_DIR/NAME.vm/initrd
 * (the guest's base initramfs, zero padding to a 4-byte boundary, then a
 * second newc archive with /sbt/run, cpio.h; the kernel unpacks both), the
 * workspace's detached mount tree (idmapped by sbx_userns_setup), the tap
 * (qemu_tap.c), the qemu command line and the console pipe. The child takes
 * stdin /dev/null, stdout the console pipe, fd 3 the tap, fd 4 the initrd,
 * fd 5 the workspace (9p: VM_FS_WS), fd 6 the guest agent's exec stream
 * (VM_STREAM_FD), drops every capability (securebits locked,
 * no_new_privs: qemu needs none, as the tap is open already and its files
 * belong to root), reports
 * ready, waits for go and becomes qemu-system-x86_64
 * (sbt_exec(SBT_EXEC_HOST)), under the workloads' seccomp filter (seccomp.c,
 * installed before the ready report) and its own (-sandbox on). run->pid is
 * qemu. The guest's tsc_early_khz: qemu_tsc.c.
 *
 * The guest agent: the host's sbtrace (next to the shim's executable) goes
 * into the second archive as /sbt/sbtrace; the guest's init runs it as
 * guest root on the workload's cgroup, and it writes its frames
 * (guest_stream.h) to the virtio-serial port "sbt.exec", which qemu appends
 * to STATE_DIR/NAME.vm/exec.stream (run->exec_stream). Without the binary
 * there is no agent and no port: the guest's execs are not visible.
 */
#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <arpa/inet.h>
#include <json-c/json.h>

#include "lib/clock.h"
#include "lib/cpio.h"
#include "lib/io.h"
#include "internal.h"
#include "lib/log.h"

#define VM_TAP_FD    3	/* where qemu finds the tap: -netdev tap,fd=3 */
#define VM_INITRD_FD 4	/* and its initrd: STATE_DIR is the host root's, 0700 */
#define VM_WS_FD     5	/* and the workspace's idmapped, read-only detached mount tree */
#define VM_STREAM_FD 6	/* and the file the guest agent's port goes to */
#define VM_DISK_FD   7	/* and the engine's throw-away disk (spec->vm_disk_mb) */
#define VM_CTL_FD    8	/* a saved boot's (qemu_snap.c): the control port's socket */
#define VM_MON_FD    9	/* and qemu's monitor (QMP) */
#define VM_STATE_FD  10 /* and, restoring, the saved state */
#define STR(x)	     #x
#define XSTR(x)	     STR(x)

#define VM_QEMU	    "qemu-system-x86_64"
#define VM_ARGV_MAX 80
#define VM_MACHINE  "microvm,x-option-roms=off,isa-serial=on,rtc=on"
#define VM_SECCOMP  "on,obsolete=deny,elevateprivileges=deny,spawn=deny,resourcecontrol=deny"
#define VM_CMDLINE  "console=ttyS0 quiet reboot=t panic=-1"
/*
 * The guest's view of the host (9p, read-only: qemu's readonly=on refuses
 * every write, whatever the guest mounts): /usr, the whole tool chain on a
 * merged-/usr host (/bin, /lib... are symlinks into it), and
 * /etc/alternatives (cc, awk, editor...). Not `/`: it would give the guest
 * every world-readable file of the host, /proc's view of its processes,
 * /sys and the device nodes of /dev, which qemu would open for it.
 * multidevs=forbid: nothing mounted below them is reachable.
 */
#define VM_9P_OPTS "readonly=on,security_model=none"
#define VM_FS_USR  "local,id=usr,path=/usr," VM_9P_OPTS ",multidevs=forbid"
#define VM_DEV_USR "virtio-9p-device,fsdev=usr,mount_tag=sbt.usr"
#define VM_ALT_DIR "/etc/alternatives"
#define VM_FS_ALT  "local,id=alt,path=" VM_ALT_DIR "," VM_9P_OPTS ",multidevs=forbid"
#define VM_DEV_ALT "virtio-9p-device,fsdev=alt,mount_tag=sbt.alt"
/* the workspace's tree as the caller cloned it (submounts included: remapped inode numbers) */
#define VM_FS_WS  "local,id=ws,path=/proc/self/fd/" XSTR(VM_WS_FD) "," VM_9P_OPTS ",multidevs=remap"
#define VM_DEV_WS "virtio-9p-device,fsdev=ws,mount_tag=sbt.ws"
/* The guest agent's port (virtio-mmio: microvm), a file qemu opens as /proc/self/fd/6. */
#define VM_AGENT     "sbtrace" /* the agent's binary, next to the shim's */
#define VM_CHR_EXEC  "file,id=sbtx,path=/proc/self/fd/" XSTR(VM_STREAM_FD)
#define VM_PORT_EXEC "virtserialport,chardev=sbtx,name=sbt.exec"
/* A saved boot's control port and qemu's monitor: sockets the host holds the other ends of. */
#define VM_CHR_CTL  "socket,id=sbtc,fd=" XSTR(VM_CTL_FD)
#define VM_PORT_CTL "virtserialport,chardev=sbtc,name=sbt.ctl"
#define VM_CHR_MON  "socket,id=mon,fd=" XSTR(VM_MON_FD)
#define VM_INCOMING "fd:" XSTR(VM_STATE_FD)
/* The engine's disk: raw, writes not flushed to the host's disk (it is thrown away). */
#define VM_DRIVE_DISK                                                                              \
	"file=/proc/self/fd/" XSTR(VM_DISK_FD) ",format=raw,if=none,id=disk,cache=unsafe,"         \
					       "discard=unmap"
#define VM_DEV_DISK "virtio-blk-device,drive=disk"
/*
 * Test hooks (scripts/guest/init): SIGKILL the guest agent N ms (digits)
 * after the workload's release; "1": the workload runs as guest root.
 */
#define VM_KILL_AGENT_ENV "SBTRACE_TEST_GUEST_AGENT_KILL_MS"
#define VM_ROOT_ENV	  "SBTRACE_TEST_GUEST_ROOT"
/* a benchmark's: the guest agent reports its exec program's kernel accounting (--bpf-stats) */
#define VM_BPF_STATS_ENV "SBTRACE_GUEST_BPF_STATS"

/* What the clone needs for the VM; freed by the caller after the clone. */
struct sbx_vm_prep {
	char *argv[VM_ARGV_MAX];
	char *env[2];
	char path_env[4096];
	char mem[16], kernel[PATH_MAX], initrd[PATH_MAX], append[1024], device[96];
	char words[1024]; /* the run's sbt.* words: on append, or a saved boot's sbt/cmdline */
	struct sbx_vm_snap snap;
	int ctl[2], mon[2];   /* a saved boot's socket pairs: [0] the host's, [1] qemu's */
	const char *accel;    /* "kvm" or "tcg" */
	bool alt, ws;	      /* export /etc/alternatives; the workspace (VM_WS_FD) */
	char agent[PATH_MAX]; /* the host's sbtrace for the guest; "" without */
	int tap_fd, initrd_fd, stream_fd, disk_fd;
	int console[2];
};

/* ---- checks ------------------------------------------------------------- */

static int qemu_check(const struct sbt_sandbox_spec *spec, char *err, size_t errlen)
{
	char path[PATH_MAX];
	struct stat st;

	if (spec->cwd)
		return sbx_seterr(err, errlen, -EINVAL, "sandbox %s: a qemu sandbox takes no cwd",
				  spec->name);
	if (!spec->guest_dir || !spec->guest_dir[0])
		return sbx_seterr(err, errlen, -EINVAL,
				  "sandbox %s: no guest: build one with scripts/guest-build.sh and "
				  "give the directory it prints",
				  spec->name);
	if (spec->vm_mem_mb &&
	    (spec->vm_mem_mb < SBT_VM_MEM_MIN_MB || spec->vm_mem_mb > SBT_VM_MEM_MAX_MB))
		return sbx_seterr(err, errlen, -EINVAL, "sandbox %s: VM memory %u MiB: give %d-%d",
				  spec->name, spec->vm_mem_mb, SBT_VM_MEM_MIN_MB,
				  SBT_VM_MEM_MAX_MB);
	if (spec->vm_disk_mb > SBT_VM_DISK_MAX_MB)
		return sbx_seterr(err, errlen, -EINVAL, "sandbox %s: VM disk %u MiB: at most %u",
				  spec->name, spec->vm_disk_mb, SBT_VM_DISK_MAX_MB);
	if (spec->tap_netns && !sbx_netns_name_ok(spec->tap_netns))
		return sbx_seterr(
			err, errlen, -EINVAL,
			"sandbox %s: '%s' is not a network namespace name (ip netns list)",
			spec->name, spec->tap_netns);
	if (spec->tap_netns &&
	    (!sbx_str_fits(path, sizeof(path), "/run/netns/%s", spec->tap_netns) ||
	     stat(path, &st)))
		return sbx_seterr(err, errlen, -ENOENT,
				  "sandbox %s: no network namespace %s (/run/netns/%s); create it "
				  "with 'ip netns add'",
				  spec->name, spec->tap_netns, spec->tap_netns);
	if (spec->vm_accel == SBT_VM_ACCEL_KVM) {
		struct sbt_kvm_probe kp;
		const char *why;

		sbt_vm_kvm_probe(&kp);
		if (!sbt_vm_accel_pick(spec->vm_accel, &kp, &why))
			return sbx_seterr(err, errlen, -ENODEV,
					  "sandbox %s: --vm-accel kvm: KVM is not usable: %s",
					  spec->name, why ? why : "?");
	}
	if (spec->workspace && stat(spec->workspace, &st))
		return sbx_seterr(err, errlen, -errno, "sandbox %s: workspace '%s': %s", spec->name,
				  spec->workspace, strerror(errno));
	if (spec->workspace && !S_ISDIR(st.st_mode))
		return sbx_seterr(err, errlen, -ENOTDIR, "sandbox %s: workspace '%s': %s",
				  spec->name, spec->workspace, strerror(ENOTDIR));
	if (!sbx_which(VM_QEMU, NULL, 0))
		return sbx_seterr(err, errlen, -ENOENT,
				  "sandbox %s: %s is not in PATH (Debian: apt-get install "
				  "qemu-system-x86)",
				  spec->name, VM_QEMU);
	if (!sbx_str_fits(path, sizeof(path), "%s/vmlinux", spec->guest_dir) || stat(path, &st) ||
	    !S_ISREG(st.st_mode))
		return sbx_seterr(err, errlen, -ENOENT,
				  "sandbox %s: no guest kernel %s; build the guest with "
				  "scripts/guest-build.sh and give the directory it prints",
				  spec->name, path);
	return sbx_vm_addrs(spec, NULL, 0, NULL, NULL, err, errlen);
}

/* ---- the caller's preparations ------------------------------------------ */

/* 32-bit FNV-1a: the tap's name and MAC address from the sandbox name. */
static uint32_t fnv1a(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}
/* ---- the VM's files ----------------------------------------------------- */

/* The second archive: /sbt/run (spec's script, else made from argv), the nonce, the agent. */
static int vm_archive(int out, const struct sbt_sandbox_spec *spec, const char *nonce,
		      const char *agent, unsigned int mem_mb, char *msg, size_t msglen)
{
	char *script = NULL;
	int ret;

	if (!spec->vm_script) {
		long n;

		script = malloc(SBT_CPIO_SCRIPT_MAX + 1);
		if (!script)
			return -ENOMEM;
		n = sbt_guest_script(spec->argv, script, SBT_CPIO_SCRIPT_MAX + 1);
		if (n < 0) {
			snprintf(msg, msglen, "the workload's command is longer than 256 KiB");
			free(script);
			return (int)n;
		}
	}
	ret = sbt_guest_archive_script(out, spec->vm_script ? spec->vm_script : script, nonce, NULL,
				       agent[0] ? agent : NULL, ((uint64_t)mem_mb << 20) / 4, msg,
				       msglen);
	free(script);
	return ret;
}

/* STATE_DIR/NAME.vm/initrd: the guest's base initramfs, padding, the second archive. */
static int vm_initrd(const struct sbt_sandbox_spec *spec, const char *path, const char *agent,
		     const char *nonce, unsigned int mem_mb, char *err, size_t errlen)
{
	static const char zeros[4];
	char base[PATH_MAX], msg[PATH_MAX + 256], buf[65536];
	uint64_t total = 0;
	int in, out, ret = 0;
	ssize_t n;

	if (!sbx_str_fits(base, sizeof(base), "%s/initramfs.cpio.gz", spec->guest_dir))
		return sbx_seterr(err, errlen, -ENAMETOOLONG, "guest directory path too long");
	in = open(base, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return sbx_seterr(err, errlen, -errno,
				  "sandbox %s: guest %s: %s; build it with scripts/guest-build.sh",
				  spec->name, base, strerror(errno));
	out = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (out < 0) {
		ret = sbx_seterr(err, errlen, -errno, "sandbox %s: create %s: %s", spec->name, path,
				 strerror(errno));
		close(in);
		return ret;
	}
	while ((n = read(in, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || (ret = sbt_write_all(out, buf, (size_t)n))) {
			ret = ret ? ret : -errno;
			break;
		}
		total += (uint64_t)n;
	}
	close(in);
	/* The kernel looks for the next archive's "070701" at a 4-byte boundary. */
	if (!ret && total % 4)
		ret = sbt_write_all(out, zeros, (size_t)(4 - total % 4));
	if (ret) {
		close(out);
		return sbx_seterr(err, errlen, ret, "sandbox %s: copy %s to %s: %s", spec->name,
				  base, path, strerror(-ret));
	}
	/* the workspace is not copied: the guest mounts it over 9p (VM_FS_WS) */
	msg[0] = '\0';
	ret = vm_archive(out, spec, nonce, agent, mem_mb, msg, sizeof(msg));
	if (close(out) && !ret)
		ret = -errno;
	if (ret)
		return sbx_seterr(err, errlen, ret, "sandbox %s: %s", spec->name,
				  msg[0] ? msg : strerror(-ret));
	return 0;
}

static void vm_prep_free(struct sbx_vm_prep *v)
{
	if (!v)
		return;
	if (v->tap_fd >= 0)
		close(v->tap_fd);
	if (v->initrd_fd >= 0)
		close(v->initrd_fd);
	if (v->stream_fd >= 0)
		close(v->stream_fd);
	if (v->disk_fd >= 0)
		close(v->disk_fd);
	if (v->snap.state_fd >= 0)
		close(v->snap.state_fd);
	for (int i = 0; i < 2; i++) {
		if (v->console[i] >= 0)
			close(v->console[i]);
		if (v->ctl[i] >= 0)
			close(v->ctl[i]);
		if (v->mon[i] >= 0)
			close(v->mon[i]);
	}
	free(v);
}

/* One more word for the guest's kernel command line (v->append, bounded). */
static void cmdline_add(struct sbx_vm_prep *v, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void cmdline_add(struct sbx_vm_prep *v, const char *fmt, ...)
{
	size_t used = strlen(v->words);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(v->words + used, sizeof(v->words) - used, fmt, ap);
	va_end(ap);
}

/* The tap's name, the kernel command line (TSC rate, the guest's addresses). */
static int vm_cmdline(const struct sbt_sandbox_spec *spec, struct sbt_sandbox_run *run,
		      struct sbx_vm_prep *v, uint32_t h, char *err, size_t errlen)
{
	const char *kill = getenv(VM_KILL_AGENT_ENV), *root = getenv(VM_ROOT_ENV);
	const char *stats = getenv(VM_BPF_STATS_ENV);
	unsigned long khz;

	snprintf(run->tap, sizeof(run->tap), "sbt%08x", h);
	if (spec->tap_netns)
		snprintf(run->tap_netns, sizeof(run->tap_netns), "%s", spec->tap_netns);
	khz = sbx_host_tsc_khz();
	snprintf(v->append, sizeof(v->append), "%s", VM_CMDLINE);
	if (khz) /* the same for every run: a saved boot's too */
		snprintf(v->append + strlen(v->append), sizeof(v->append) - strlen(v->append),
			 " tsc_early_khz=%lu", khz);
	v->words[0] = '\0';
	if (kill && kill[0] && strlen(kill) <= 9 && strspn(kill, "0123456789") == strlen(kill))
		cmdline_add(v, " sbt.test.kill_agent_ms=%s", kill);
	if (root && strcmp(root, "1") == 0)
		cmdline_add(v, " sbt.test.root=1");
	if (stats && strcmp(stats, "1") == 0)
		cmdline_add(v, " sbt.bpf_stats=1");
	if (spec->vm_disk_mb)
		cmdline_add(v, " sbt.disk=1");
	if (spec->vm_root)
		cmdline_add(v, " sbt.root=1");
	return sbx_vm_addrs(spec, v->words, sizeof(v->words), run->guest_addrs,
			    &run->nr_guest_addrs, err, errlen);
}

/* The host's sbtrace, next to the shim's own executable: a regular executable file, or false. */
static bool agent_binary(char *out, size_t len)
{
	char self[PATH_MAX], *slash;
	struct stat st;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n <= 0)
		return false;
	self[n] = '\0';
	slash = strrchr(self, '/');
	if (!slash)
		return false;
	*slash = '\0';
	return sbx_str_fits(out, len, "%s/" VM_AGENT, self) && stat(out, &st) == 0 &&
	       S_ISREG(st.st_mode) && access(out, X_OK) == 0;
}

/*
 * The guest agent: its binary for the second archive and STATE_DIR/NAME.vm/exec.stream,
 * new and empty, qemu's (it opens it as /proc/self/fd/6, in its user namespace).
 */
static int vm_agent(const struct sbt_sandbox_spec *spec, struct sbt_sandbox_run *run,
		    struct sbx_vm_prep *v, char *err, size_t errlen)
{
	uint32_t base = sbx_userns_base(spec->name);
	char dir[PATH_MAX];

	if (!agent_binary(v->agent, sizeof(v->agent))) {
		v->agent[0] = '\0';
		sbt_log("sandbox %s: no %s next to the shim: the guest runs no agent, its execs "
			"will not be visible",
			spec->name, VM_AGENT);
		return 0;
	}
	/* absolute: readers check it against the state dir's real path */
	if (!realpath(run->vm_dir, dir) ||
	    !sbx_str_fits(run->exec_stream, sizeof(run->exec_stream), "%s/exec.stream", dir))
		return sbx_seterr(err, errlen, -ENAMETOOLONG, "sandbox %s: path too long",
				  spec->name);
	v->stream_fd =
		open(run->exec_stream, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (v->stream_fd < 0 || fchown(v->stream_fd, base, base)) {
		int ret = sbx_seterr(err, errlen, -errno, "sandbox %s: create %s: %s", spec->name,
				     run->exec_stream, strerror(errno));

		run->exec_stream[0] = '\0';
		return ret;
	}
	return 0;
}

/*
 * The engine's disk: STATE_DIR/NAME.vm/disk, new, sparse, qemu's (it opens
 * it as /proc/self/fd/7, in its user namespace); the guest formats it.
 */
static int vm_disk(const struct sbt_sandbox_spec *spec, const struct sbt_sandbox_run *run,
		   struct sbx_vm_prep *v, char *err, size_t errlen)
{
	uint32_t base = sbx_userns_base(spec->name);
	char path[PATH_MAX];
	int ret;

	if (!spec->vm_disk_mb)
		return 0;
	if (!sbx_str_fits(path, sizeof(path), "%s/disk", run->vm_dir))
		return sbx_seterr(err, errlen, -ENAMETOOLONG, "sandbox %s: path too long",
				  spec->name);
	v->disk_fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (v->disk_fd < 0 || fchown(v->disk_fd, base, base) ||
	    ftruncate(v->disk_fd, (off_t)spec->vm_disk_mb << 20)) {
		ret = sbx_seterr(err, errlen, -errno, "sandbox %s: the VM's disk %s: %s",
				 spec->name, path, strerror(errno));
		return ret;
	}
	return 0;
}

/*
 * Restore, save or a plain cold boot (qemu_snap.c). Saved boots share
 * guest_dir/snap/KEY.initrd; the run's own part goes to STATE_DIR/NAME.vm/ctl
 * (its script, nonce, words), sent down the control port once the guest
 * waits for it.
 */
static int vm_boot_plan(const struct sbt_sandbox_spec *spec, struct sbt_sandbox_run *run,
			struct sbx_vm_prep *v, unsigned int mem, const char *nonce, char *err,
			size_t errlen)
{
	const char *stats = getenv(VM_BPF_STATS_ENV);
	struct sbx_vm_snap_in in = { .spec = spec,
				     .agent = v->agent,
				     .qemu = VM_QEMU,
				     .machine = VM_MACHINE,
				     .accel = v->accel,
				     .append = v->append,
				     .devices = "usr,alt?,ws?,net,exec,ctl,mon",
				     .mem_mb = mem,
				     .alt = v->alt,
				     .ws = v->ws,
				     .bpf_stats = stats && strcmp(stats, "1") == 0 };
	char path[PATH_MAX], msg[512], *script = NULL;
	int fd, ret;

	snprintf(run->boot, sizeof(run->boot), "cold");
	sbx_vm_snap_plan(&in, &v->snap, run->boot_why, sizeof(run->boot_why));
	if (v->snap.mode == SBX_SNAP_NONE)
		return 0;
	snprintf(v->append + strlen(v->append), sizeof(v->append) - strlen(v->append),
		 " sbt.snap=1");
	snprintf(v->initrd, sizeof(v->initrd), "%s", v->snap.initrd);
	if (v->snap.mode == SBX_SNAP_RESTORE) {
		snprintf(run->boot, sizeof(run->boot), "restored");
		run->boot_why[0] = '\0';
	} else if ((ret = sbx_vm_snap_initrd(&v->snap, v->agent, err, errlen))) {
		return ret;
	}
	if (!sbx_str_fits(path, sizeof(path), "%s/ctl", run->vm_dir))
		return sbx_seterr(err, errlen, -ENAMETOOLONG, "sandbox %s: path too long",
				  spec->name);
	if (!spec->vm_script) {
		script = malloc(SBT_CPIO_SCRIPT_MAX + 1);
		if (!script || sbt_guest_script(spec->argv, script, SBT_CPIO_SCRIPT_MAX + 1) < 0) {
			free(script);
			return sbx_seterr(
				err, errlen, -ENAMETOOLONG,
				"sandbox %s: the workload's command is longer than 256 KiB",
				spec->name);
		}
	}
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	msg[0] = '\0';
	ret = fd < 0 ? -errno
		     : sbt_guest_archive_ctl(fd, spec->vm_script ? spec->vm_script : script, nonce,
					     v->words, SBT_CPIO_SCRIPT_MAX + 65536, msg,
					     sizeof(msg));
	free(script);
	if (fd >= 0 && close(fd) && !ret)
		ret = -errno;
	if (ret)
		return sbx_seterr(err, errlen, ret, "sandbox %s: %s: %s", spec->name, path,
				  msg[0] ? msg : strerror(-ret));
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, v->ctl) ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, v->mon))
		return sbx_seterr(err, errlen, -errno, "socketpair: %s", strerror(errno));
	return 0;
}

/* The paths qemu gets, and STATE_DIR/NAME.vm with the per-run initrd. */
static int vm_files(const struct sbt_sandbox_spec *spec, struct sbt_sandbox_run *run,
		    struct sbx_vm_prep *v, const char *sdir, unsigned int mem, char *err,
		    size_t errlen)
{
	const char *path = getenv("PATH");
	unsigned char nonce[16];
	char hex[2 * sizeof(nonce) + 1];
	int ret;

	if (!sbx_str_fits(run->vm_dir, sizeof(run->vm_dir), "%s/%s.vm", sdir, spec->name) ||
	    !sbx_str_fits(v->initrd, sizeof(v->initrd), "%s/initrd", run->vm_dir) ||
	    !sbx_str_fits(v->kernel, sizeof(v->kernel), "%s/vmlinux", spec->guest_dir) ||
	    !sbx_str_fits(v->path_env, sizeof(v->path_env), "PATH=%s",
			  path ? path
			       : "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"))
		return sbx_seterr(err, errlen, -ENAMETOOLONG, "sandbox %s: path too long",
				  spec->name);
	ret = sbx_check_state_dir(sdir, true);
	if (ret)
		return sbx_seterr(err, errlen, ret, "state dir %s: %s", sdir, strerror(-ret));
	sbx_vm_dir_remove(run->vm_dir); /* a killed shim's, of the same name */
	if (mkdir(run->vm_dir, 0700)) {
		ret = sbx_seterr(err, errlen, -errno, "sandbox %s: mkdir %s: %s", spec->name,
				 run->vm_dir, strerror(errno));
		run->vm_dir[0] = '\0';
		return ret;
	}
	ret = vm_agent(spec, run, v, err, errlen);
	if (!ret)
		ret = vm_disk(spec, run, v, err, errlen);
	/* the exit line's nonce: the console takes no other exit line (console.c) */
	if (!ret && getrandom(nonce, sizeof(nonce), 0) != (ssize_t)sizeof(nonce))
		ret = sbx_seterr(err, errlen, -errno, "getrandom: %s", strerror(errno));
	for (size_t i = 0; !ret && i < sizeof(nonce); i++)
		snprintf(hex + 2 * i, 3, "%02x", nonce[i]);
	if (!ret)
		sbt_vm_console_nonce(&run->con, hex);
	if (!ret)
		ret = vm_boot_plan(spec, run, v, mem, hex, err, errlen);
	if (ret || v->snap.mode != SBX_SNAP_NONE)
		return ret;
	/* cold: the run's words on the kernel command line, its files in the initrd */
	snprintf(v->append + strlen(v->append), sizeof(v->append) - strlen(v->append), "%s",
		 v->words);
	return vm_initrd(spec, v->initrd, v->agent, hex, mem, err, errlen);
}

/*
 * qemu's command line: the guest's kernel and initrd, the console on stdio,
 * the tap as fd 3, the host's /usr (and /etc/alternatives) and the
 * workspace (fd 5) over 9p.
 */
static void vm_argv(struct sbx_vm_prep *v)
{
	static const char netdev[] = "tap,id=n0,fd=" XSTR(VM_TAP_FD);
	static const char initrd[] = "/proc/self/fd/" XSTR(VM_INITRD_FD);
	static const char fs_usr[] = VM_FS_USR, fs_alt[] = VM_FS_ALT, fs_ws[] = VM_FS_WS;
	const char *const args[] = { VM_QEMU,
				     "-M",
				     VM_MACHINE,
				     "-accel",
				     v->accel,
				     "-cpu",
				     "max",
				     "-smp",
				     "1",
				     "-m",
				     v->mem,
				     "-nodefaults",
				     "-no-user-config",
				     "-display",
				     "none",
				     "-no-reboot",
				     "-sandbox",
				     VM_SECCOMP,
				     "-kernel",
				     v->kernel,
				     "-initrd",
				     initrd,
				     "-append",
				     v->append,
				     "-serial",
				     "stdio",
				     "-netdev",
				     netdev,
				     "-device",
				     v->device,
				     "-fsdev",
				     fs_usr,
				     "-device",
				     VM_DEV_USR };
	const char *const alt[] = { "-fsdev", fs_alt, "-device", VM_DEV_ALT };
	const char *const ws[] = { "-fsdev", fs_ws, "-device", VM_DEV_WS };
	static const char chr_exec[] = VM_CHR_EXEC;
	const char *const port[] = { "-device",	 "virtio-serial-device",
				     "-chardev", chr_exec,
				     "-device",	 VM_PORT_EXEC };
	const char *const disk[] = { "-drive", VM_DRIVE_DISK, "-device", VM_DEV_DISK };
	const char *const snap[] = {
		"-chardev", VM_CHR_CTL, "-device", VM_PORT_CTL,
		"-chardev", VM_CHR_MON, "-mon",	   "chardev=mon,mode=control"
	};
	const char *const incoming[] = { "-S", "-incoming", VM_INCOMING };
	size_t n = 0;

	_Static_assert(sizeof(args) / sizeof(args[0]) + sizeof(alt) / sizeof(alt[0]) +
				       sizeof(ws) / sizeof(ws[0]) + sizeof(port) / sizeof(port[0]) +
				       sizeof(disk) / sizeof(disk[0]) +
				       sizeof(snap) / sizeof(snap[0]) +
				       sizeof(incoming) / sizeof(incoming[0]) <
			       VM_ARGV_MAX,
		       "VM_ARGV_MAX too small");
	for (size_t i = 0; i < sizeof(args) / sizeof(args[0]); i++)
		v->argv[n++] = (char *)args[i];
	for (size_t i = 0; v->alt && i < sizeof(alt) / sizeof(alt[0]); i++)
		v->argv[n++] = (char *)alt[i];
	for (size_t i = 0; v->ws && i < sizeof(ws) / sizeof(ws[0]); i++)
		v->argv[n++] = (char *)ws[i];
	for (size_t i = 0; v->stream_fd >= 0 && i < sizeof(port) / sizeof(port[0]); i++)
		v->argv[n++] = (char *)port[i];
	for (size_t i = 0; v->disk_fd >= 0 && i < sizeof(disk) / sizeof(disk[0]); i++)
		v->argv[n++] = (char *)disk[i];
	/* a saved boot's devices come after the others: a restore needs the same set */
	for (size_t i = 0; v->snap.mode && i < sizeof(snap) / sizeof(snap[0]); i++)
		v->argv[n++] = (char *)snap[i];
	for (size_t i = 0;
	     v->snap.mode == SBX_SNAP_RESTORE && i < sizeof(incoming) / sizeof(incoming[0]); i++)
		v->argv[n++] = (char *)incoming[i];
	v->argv[n] = NULL;
}

/* KVM or TCG (accel.c), recorded in run->accel for the state file. */
static int vm_accel(const struct sbt_sandbox_spec *spec, struct sbt_sandbox_run *run,
		    struct sbx_vm_prep *v, char *err, size_t errlen)
{
	struct sbt_kvm_probe kp = { .api = -1 };
	const char *why;

	if (spec->vm_accel != SBT_VM_ACCEL_TCG)
		sbt_vm_kvm_probe(&kp);
	v->accel = sbt_vm_accel_pick(spec->vm_accel, &kp, &why);
	if (!v->accel)
		return sbx_seterr(err, errlen, -ENODEV,
				  "sandbox %s: --vm-accel kvm: KVM is not usable: %s", spec->name,
				  why ? why : "?");
	snprintf(run->accel, sizeof(run->accel), "%s", v->accel);
	return 0;
}

/*
 * Everything the VM's child needs, made before the clone: the per-run
 * initrd, the tap (created, addressed, up), the console pipe, qemu's
 * command line and environment (PATH only). On error everything made is
 * undone (release removes run->vm_dir).
 */
static int vm_prepare(const struct sbt_sandbox_spec *spec, struct sbt_sandbox_run *run,
		      const char *sdir, struct sbx_vm_prep **out, char *err, size_t errlen)
{
	unsigned int mem = spec->vm_mem_mb ? spec->vm_mem_mb : SBT_VM_MEM_DEFAULT_MB;
	struct sbx_vm_prep *v;
	uint32_t h = fnv1a(spec->name);
	int ret;

	*out = NULL; /* the spec passed sbt_sandbox_check() */
	v = calloc(1, sizeof(*v));
	if (!v)
		return sbx_seterr(err, errlen, -ENOMEM, "out of memory");
	v->tap_fd = v->initrd_fd = v->stream_fd = v->disk_fd = v->console[0] = v->console[1] = -1;
	v->ctl[0] = v->ctl[1] = v->mon[0] = v->mon[1] = v->snap.state_fd = -1;
	v->alt = access(VM_ALT_DIR, X_OK) == 0;
	v->ws = spec->workspace != NULL;
	ret = vm_accel(spec, run, v, err, errlen);
	if (!ret)
		ret = vm_cmdline(spec, run, v, h, err, errlen);
	if (!ret)
		ret = vm_files(spec, run, v, sdir, mem, err, errlen);
	if (ret)
		goto fail;
	if (pipe2(v->console, O_CLOEXEC) || fcntl(v->console[0], F_SETFL, O_NONBLOCK)) {
		ret = sbx_seterr(err, errlen, -errno, "pipe: %s", strerror(errno));
		goto fail;
	}
	v->tap_fd = sbx_tap_create(spec, run, err, errlen);
	if (v->tap_fd < 0) {
		ret = v->tap_fd;
		goto fail;
	}
	ret = sbx_tap_configure(spec, run, err, errlen);
	if (ret)
		goto fail;
	snprintf(v->mem, sizeof(v->mem), "%u", mem);
	snprintf(v->device, sizeof(v->device),
		 "virtio-net-device,netdev=n0,mac=02:53:42:%02x:%02x:%02x", (h >> 16) & 0xff,
		 (h >> 8) & 0xff, h & 0xff);
	v->env[0] = v->path_env;
	v->env[1] = NULL;
	vm_argv(v);
	*out = v;
	return 0;
fail:
	vm_prep_free(v);
	return ret;
}

static int qemu_prepare(struct sbx_child *c, struct sbt_sandbox_run *run, const char *sdir,
			char *err, size_t errlen)
{
	int ret = vm_prepare(c->spec, run, sdir, &c->vm, err, errlen);
	uint32_t base = sbx_userns_base(c->spec->name);

	if (!ret && !c->vm)
		ret = -ENOMEM;
	if (ret)
		return ret;
	c->envp = c->vm->env;
	/*
	 * The workspace as the ns backend has it: a detached copy of its mount
	 * tree, idmapped to qemu's user namespace (and read-only) by
	 * sbx_userns_setup, so qemu reads it with the rights the ns sandbox's
	 * root has; qemu opens it as /proc/self/fd/5.
	 */
	if (c->spec->workspace) {
		c->ws_fd = open_tree(AT_FDCWD, c->spec->workspace,
				     OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
		if (c->ws_fd < 0)
			return sbx_seterr(err, errlen, -errno, "workspace '%s': %s",
					  c->spec->workspace, strerror(errno));
	}
	/*
	 * qemu runs as the user namespace's root, an unprivileged host id: the
	 * initrd is its, and it opens it through an fd (/proc/self/fd/4), as
	 * STATE_DIR is closed to anyone but the host's root.
	 */
	c->vm->initrd_fd = open(c->vm->initrd, O_RDONLY | O_CLOEXEC);
	/* a saved boot's is shared, everyone's to read (0644) */
	if (c->vm->initrd_fd < 0 || (!c->vm->snap.mode && chown(c->vm->initrd, base, base)))
		return sbx_seterr(err, errlen, -errno, "sandbox %s: %s: %s", c->spec->name,
				  c->vm->initrd, strerror(errno));
	return sbx_userns_prepare(c, err, errlen);
}

/* The child holds the tap and the console's write end now. */
static int qemu_after_clone(struct sbx_child *c, struct sbt_sandbox_run *run, char *err,
			    size_t errlen)
{
	struct sbx_vm_prep *v = c->vm;
	int ret;

	run->console_fd = v->console[0];
	v->console[0] = -1;
	ret = sbx_userns_setup(c, run, err, errlen);
	if (ret || !v->snap.mode)
		return ret;
	run->vm_ctl_fd = v->ctl[0];
	run->vm_mon_fd = v->mon[0];
	v->ctl[0] = v->mon[0] = -1;
	snprintf(run->vm_snap, sizeof(run->vm_snap), "%s", v->snap.state);
	if (v->snap.mode == SBX_SNAP_SAVE) {
		run->vm_snap_fd = v->snap.state_fd;
		v->snap.state_fd = -1;
		return 0;
	}
	/* restoring: qemu loads the state now, paused (-S); the release is its cont */
	ret = sbx_vm_snap_loaded(run, err, errlen);
	run->vm_restored = ret == 0;
	return ret;
}

static void qemu_release(struct sbx_child *c, struct sbt_sandbox_run *run, bool failed)
{
	vm_prep_free(c->vm); /* the tap stays while the child holds it */
	c->vm = NULL;
	if (c->ws_fd >= 0)
		close(c->ws_fd);
	c->ws_fd = -1;
	sbx_userns_release(c);
	if (failed) {
		sbx_vm_snap_close(run);
		sbx_vm_dir_remove(run->vm_dir);
	}
}

/* ---- the child ------------------------------------------------------------ */

/* The console and the tap in place, no capabilities, then qemu. */
static void qemu_main(struct sbx_child *c) __attribute__((noreturn));

static void qemu_main(struct sbx_child *c)
{
	const struct sbt_sandbox_spec *spec = c->spec;
	/* Above the slots they go to (0-4), so no dup2 below overwrites another. */
	int out = fcntl(c->vm->console[1], F_DUPFD_CLOEXEC, 10);
	int tap = fcntl(c->vm->tap_fd, F_DUPFD_CLOEXEC, 10);
	int initrd = fcntl(c->vm->initrd_fd, F_DUPFD_CLOEXEC, 10);
	int ws = c->ws_fd >= 0 ? fcntl(c->ws_fd, F_DUPFD_CLOEXEC, 10) : -1;
	int stream = c->vm->stream_fd >= 0 ? fcntl(c->vm->stream_fd, F_DUPFD_CLOEXEC, 10) : -1;
	int disk = c->vm->disk_fd >= 0 ? fcntl(c->vm->disk_fd, F_DUPFD_CLOEXEC, 10) : -1;
	bool snap = c->vm->snap.mode != SBX_SNAP_NONE;
	bool restore = c->vm->snap.mode == SBX_SNAP_RESTORE;
	int ctl = snap ? fcntl(c->vm->ctl[1], F_DUPFD_CLOEXEC, 11) : -1;
	int mon = snap ? fcntl(c->vm->mon[1], F_DUPFD_CLOEXEC, 11) : -1;
	int state = restore ? fcntl(c->vm->snap.state_fd, F_DUPFD_CLOEXEC, 11) : -1;
	int err = spec->stderr_fd >= 0 ? fcntl(spec->stderr_fd, F_DUPFD_CLOEXEC, 10) : -1;
	int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
	int ready_w = fcntl(c->ready_w, F_DUPFD_CLOEXEC, 10);
	int go_r = fcntl(c->go_r, F_DUPFD_CLOEXEC, 10);
	int keep[] = {
		0,	    1,	       2,	  VM_TAP_FD,   VM_INITRD_FD, VM_WS_FD, VM_STREAM_FD,
		VM_DISK_FD, VM_CTL_FD, VM_MON_FD, VM_STATE_FD, -1,	     -1
	};
	char msg[256];
	int ret;

	if (ready_w >= 0)
		c->ready_w = ready_w;
	if (go_r >= 0)
		c->go_r = go_r;
	keep[11] = c->ready_w;
	keep[12] = c->go_r;
	sbx_child_start(c, "sandbox-vm");
	sbx_userns_enter(c);
	if (out < 0 || tap < 0 || initrd < 0 || ready_w < 0 || go_r < 0 || null < 0 ||
	    dup2(null, 0) < 0 || dup2(out, 1) < 0 || (err >= 0 && dup2(err, 2) < 0) ||
	    dup2(tap, VM_TAP_FD) < 0 || dup2(initrd, VM_INITRD_FD) < 0 ||
	    (c->ws_fd >= 0 && (ws < 0 || dup2(ws, VM_WS_FD) < 0)) ||
	    (c->vm->stream_fd >= 0 && (stream < 0 || dup2(stream, VM_STREAM_FD) < 0)) ||
	    (c->vm->disk_fd >= 0 && (disk < 0 || dup2(disk, VM_DISK_FD) < 0)) ||
	    (snap &&
	     (ctl < 0 || mon < 0 || dup2(ctl, VM_CTL_FD) < 0 || dup2(mon, VM_MON_FD) < 0)) ||
	    (restore && (state < 0 || dup2(state, VM_STATE_FD) < 0)))
		sbx_child_fail(c, errno, "stdio and tap fds: %s", strerror(errno));
	if (chdir("/"))
		sbx_child_fail(c, errno, "chdir /: %s", strerror(errno));
	sbx_close_fds_except(keep, (int)(sizeof(keep) / sizeof(keep[0])));
	sbx_drop_privileges(c);
	/* the workloads' filter (seccomp.c) under qemu's own -sandbox */
	ret = sbx_seccomp_install(msg, sizeof(msg));
	if (ret)
		sbx_child_fail(c, -ret, "%s", msg);

	if (restore)
		sbx_ready(c); /* qemu loads the state paused: its release is the monitor's cont */
	else
		sbx_ready_then_wait_go(c);
	sbx_child_exec(c, SBT_EXEC_HOST, c->vm->argv);
}

/* ---- destroy, state file, gc -------------------------------------------- */

static void qemu_destroy(struct sbt_sandbox_run *run)
{
	/* qemu is gone, and with it the tap's last fd: this only checks */
	sbx_tap_remove(run->tap_netns, run->tap, run->tap_ifindex);
	sbx_vm_snap_close(run);
	sbx_vm_dir_remove(run->vm_dir);
	if (run->console_fd >= 0)
		close(run->console_fd);
	run->console_fd = -1;
	run->tap[0] = run->vm_dir[0] = run->exec_stream[0] = '\0';
}

static const char *const qemu_state_keys[] = { "tap",	      "tap_netns",   "tap_ifindex",
					       "guest_addrs", "accel",	     "boot",
					       "boot_why",    "exec_stream", NULL };

const struct sbt_backend_ops sbx_qemu_ops = {
	.name = "qemu",
	.caps = {
		.execs_on_host = false, /* the guest kernel's: its agent's stream, when it runs one */
		.egress_on_tap = true,
		.net_modes = SBT_NET_MODE(SBT_NET_NONE),
		.no_net_why = "the VM's network is the tap",
		.workspace = SBT_WORKSPACE_EXPORT,
		.guest = true,
		.console = true,
		.wait = SBT_WAIT_CONSOLE,
		.gc_state = true, /* the tap and STATE_DIR/NAME.vm */
	},
	.clone_flags = CLONE_NEWUSER, /* qemu is no host root either: userns.c */
	.check = qemu_check,
	.prepare = qemu_prepare,
	.child_main = qemu_main,
	.after_clone = qemu_after_clone,
	.release = qemu_release,
	.destroy = qemu_destroy,
	.state_write = sbx_qemu_state_write,
	.state_keys = qemu_state_keys,
	.state_parse = sbx_qemu_state_parse,
	.gc = sbx_qemu_gc,
	.gc_orphans = sbx_qemu_gc_orphans,
};
