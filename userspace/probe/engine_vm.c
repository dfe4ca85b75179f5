// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A Dockerfile build in the microVM (--backend qemu, and --backend auto
 * where KVM is usable): the engine runs in the guest, as guest root (the
 * guest kernel and qemu are the boundary; its containers confine the RUN
 * steps as on the host), never on the host. What the guest gets:
 *
 *  - its workspace (9p, read-only, under a tmpfs overlay), a directory of
 *    the probe's (b->context): context/ (the copy of the repo,
 *    kind_dockerfile.c), Dockerfile (as built: --image-map's FROMs),
 *    store/ (an image store with the base images, copied from the host's
 *    local store: the guest's engine reads it read-only, and pulls
 *    nothing either) and seccomp.json (the RUN steps' and the boot's OCI
 *    profile, the sandboxes' rules);
 *  - a throw-away ext4 disk for the engine's storage, the host's podman
 *    and runc from its /usr, its own /etc/containers (written below);
 *  - /sbt/run, the script below, which the guest's workload shell sources
 *    in the traced cgroup (so no shell of ours is among the traced execs;
 *    each command it runs is): podman's configuration, `podman build` with
 *    --cgroup-parent=/sbt-work/build (each RUN step's container below the
 *    traced cgroup, its execs in the guest stream), then the boot (`podman
 *    run` below /sbt-work/boot, --boot-seconds at most, the HEALTHCHECK
 *    once). Its exit code is the build's; what it says of the rest goes to
 *    the console on lines marked with a nonce (b->vm_mark) that only the
 *    script knows (the RUN steps see neither it nor the workspace), which
 *    the console keeps apart (sbt_vm_console_mark) for
 *    probe_vm_build_results().
 *
 * The RUN steps reach the network through the guest's eth0 (--network=host
 * in the guest): the tap, where the tap program judges every connect by
 * the allowlist and the tap path's DNS proxy answers the names (the guest's
 * resolv.conf names its gateway).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ftw.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/random.h>
#include <sys/stat.h>

#include "dockerfile/dockerfile.h"
#include "kind.h"
#include "lib/clock.h"
#include "lib/extbin.h"
#include "lib/io.h"
#include "lib/log.h"
#include "lib/treecopy.h"

#define VM_WS		"/workspace"
#define VM_BUILD_CG	"/sbt-work/build" /* below the guest agent's cgroup */
#define VM_BOOT_CG	"/sbt-work/boot"
#define VM_BOOT_CG_FS	"/sys/fs/cgroup" VM_BOOT_CG /* the guest's cgroup v2 mount */
#define VM_IID		"/run/sbtrace-iid"
#define VM_IMG_WORD	"@IMAGE@" /* the boot's image: the script's "$img" */
#define COPY_TIMEOUT_MS 600000

/* DIR/NAME with len bytes of data (0600). 0, or -1 with boot_err. */
static int put_file(struct probe_ctx *p, const char *name, const char *data, size_t len)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", p->build.context, name);
	f = fopen(path, "wex");
	if (!f || fwrite(data, 1, len, f) != len || fclose(f)) {
		snprintf(p->boot_err, sizeof(p->boot_err), "cannot write %.300s: %s", path,
			 strerror(errno));
		return -1;
	}
	return 0;
}

/* The Dockerfile as built: the mapped one, else the copy's own. 0, or -1 with boot_err. */
static int put_dockerfile(struct probe_ctx *p)
{
	char path[PATH_MAX], *text = NULL;
	size_t len = 0;
	FILE *f;
	int ret;

	if (p->build.dockerfile[0])
		snprintf(path, sizeof(path), "%s", p->build.dockerfile);
	else if (p->build.df.file[0] == '/') /* --file outside the repo */
		snprintf(path, sizeof(path), "%s", p->build.df.file);
	else
		snprintf(path, sizeof(path), "%s/context/%s", p->build.context, p->build.df.file);
	f = fopen(path, "re");
	if (f) {
		text = malloc(PROBE_TEXT_MAX);
		len = text ? fread(text, 1, PROBE_TEXT_MAX, f) : 0;
		fclose(f);
	}
	if (!text || !len) {
		snprintf(p->boot_err, sizeof(p->boot_err), "cannot read the Dockerfile %.300s",
			 path);
		free(text);
		return -1;
	}
	ret = put_file(p, "Dockerfile", text, len);
	free(text);
	return ret;
}

/* The disk space of the tree at path (st_blocks), for the report. */
static uint64_t tree_bytes;

static int add_bytes(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)path, (void)flag, (void)ftw;
	tree_bytes += (uint64_t)st->st_blocks * 512;
	return 0;
}

void probe_vm_store_umount(const char *dir)
{
	char path[PATH_MAX];

	/* podman's overlay driver bind-mounts its home onto itself, and leaves it so */
	snprintf(path, sizeof(path), "%s/store/overlay", dir);
	umount2(path, MNT_DETACH | UMOUNT_NOFOLLOW);
}

/*
 * The base images (their local refs, each once) copied out of the host's
 * store into an image store of the probe's own, store/ in the guest's
 * workspace (`podman push REF containers-storage:[overlay@STORE+RUN]REF`:
 * the same ids), which the guest's engine reads as an additional image
 * store, read-only: nothing to import in the guest, where TCG makes a
 * `podman load` of a Node image take minutes. 0, or -1 with boot_err.
 */
static int copy_images(struct probe_ctx *p)
{
	const struct probe_df *df = &p->build.df;
	char store[sizeof(p->build.context) + 16], run[sizeof(p->build.context) + 16];
	char dest[sizeof(store) + sizeof(run) + DF_IMAGE_MAX + 64], errout[1024];
	uint64_t t0 = sbt_mono_ms();
	int rc = 0;

	snprintf(store, sizeof(store), "%s/store", p->build.context);
	snprintf(run, sizeof(run), "%s/store-run", p->build.context);
	for (int i = 0; i < df->nr_images && !rc; i++) {
		char *ref = (char *)(df->mapped[i][0] ? df->mapped[i] : df->images[i]);
		char *argv[] = { "podman", "push", "--quiet", ref, dest, NULL };
		struct sbt_run_io io = { .err = errout,
					 .err_len = sizeof(errout),
					 .timeout_ms = COPY_TIMEOUT_MS };
		int status = 0;
		bool seen = false;

		for (int j = 0; j < i; j++)
			seen |= strcmp(df->mapped[j][0] ? df->mapped[j] : df->images[j], ref) == 0;
		if (seen)
			continue;
		snprintf(dest, sizeof(dest), "containers-storage:[overlay@%s+%s]%s", store, run,
			 ref);
		errout[0] = '\0';
		rc = sbt_run(argv, &io, &status);
		rc = rc ? rc : sbt_exit_code(status);
		if (rc) {
			snprintf(p->boot_err, sizeof(p->boot_err),
				 "cannot copy the base image %.120s for the microVM (podman push: "
				 "%s): %.200s",
				 ref, rc == -ETIMEDOUT ? "timed out" : "failed", errout);
			break;
		}
		p->build.vm_images++;
	}
	/* the run root holds locks alone: the guest needs none of it; the driver's own mount goes */
	probe_vm_store_umount(p->build.context);
	if (access(run, F_OK) == 0 && sbt_tree_remove(run) < 0)
		probe_progress(p, "could not remove %s", run);
	if (rc)
		return -1;
	p->build.vm_copy_ms = sbt_mono_ms() - t0;
	tree_bytes = 0;
	if (p->build.vm_images)
		nftw(store, add_bytes, 16, FTW_PHYS | FTW_MOUNT);
	p->build.vm_store_bytes = tree_bytes;
	return 0;
}

/* One shell word, single-quoted (a quote as '\''); VM_IMG_WORD is "$img". */
void probe_vm_word(FILE *f, const char *w)
{
	if (strcmp(w, VM_IMG_WORD) == 0) {
		fputs(" \"$img\"", f);
		return;
	}
	fputs(" '", f);
	for (; *w; w++)
		if (*w == '\'')
			fputs("'\\''", f);
		else
			fputc(*w, f);
	fputc('\'', f);
}

/* The podman configuration the guest's engine reads (its /etc is the guest's own). */
static const char guest_conf[] =
	"mkdir -p /etc/containers\n"
	"printf '%s\\n' '{\"default\":[{\"type\":\"insecureAcceptAnything\"}]}' "
	"> /etc/containers/policy.json\n"
	"printf '%s\\n' 'unqualified-search-registries = []' > /etc/containers/registries.conf\n"
	"printf '%s\\n' '[storage]' 'driver = \"overlay\"' "
	"'graphroot = \"/var/lib/containers/storage\"' 'runroot = \"/run/containers/storage\"' "
	"> /etc/containers/storage.conf\n"
	"printf '%s\\n' '[containers]' 'default_ulimits = []' 'netns = \"none\"' '[engine]' "
	"'runtime = \"runc\"' 'cgroup_manager = \"cgroupfs\"' 'events_logger = \"file\"' "
	"> /etc/containers/containers.conf\n";

/*
 * The guest's readiness watcher, as boot.c's on the host: the container
 * listens (a LISTEN socket in its network namespace: /proc/PID/net/tcp and
 * tcp6, state 0A) or its HEALTHCHECK passed (the file the check's subshell
 * leaves), then --boot-quiet-ms, then whether its PID 1 (NSpid 1) catches
 * or ignores SIGTERM (SigCgt, SigIgn: bit 14, the 4th hex digit from the
 * right's value 4), then the stop. It cannot see execs, so its quiet period
 * is a wait, not the host's "no exec since".
 */
static const char guest_watch[] =
	"watch_ready() {\n"
	"\tquiet=$1 grace=$2 name=$3\n"
	"\twhile :; do\n"
	"\t\tsleep 0.25\n"
	"\t\tpids=$(cat " VM_BOOT_CG_FS "/libpod-*/cgroup.procs 2> /dev/null)\n"
	"\t\tset -- $pids\n"
	"\t\t[ $# -gt 0 ] || continue\n"
	"\t\tif [ -f /run/sbtrace-hc-ok ]; then how=healthcheck; break; fi\n"
	"\t\tif awk '$4 == \"0A\" { f = 1 } END { exit !f }' /proc/$1/net/tcp /proc/$1/net/tcp6 "
	"2> /dev/null; then how=ready; break; fi\n"
	"\tdone\n"
	"\techo \"${M}ready $how $(ms)\"\n"
	"\tsleep \"$quiet\"\n"
	"\tfor p in $pids; do\n"
	"\t\tawk -v m=\"$M\" '/^NSpid:/ { one = $NF == 1 } /^Sig(Cgt|Ign):/ { "
	"d = substr($2, length($2) - 3, 1); v = index(\"0123456789abcdef\", d) - 1; "
	"if (int(v / 4) % 2) h = 1 } END { if (!one) exit 1; print m \"term \" (h ? 1 : 0) }' "
	"/proc/$p/status 2> /dev/null && break\n"
	"\tdone\n"
	"\techo \"${M}stop_ready $(ms)\"\n"
	"\tpodman --runtime runc --cgroup-manager cgroupfs --events-backend file stop -t "
	"\"$grace\" "
	"\"$name\" > /dev/null 2>&1\n"
	"}\n";

/* The boot's part of the script: HEALTHCHECK once, `podman run` for --boot-seconds at most. */
static int put_boot(struct probe_ctx *p, FILE *f, const struct probe_build *g)
{
	char *argv[SBT_PROBE_MAX_ARGS * 2 + 32], name[SBT_SANDBOX_NAME_MAX + 8];
	uint64_t ms = p->o->boot_ms, hc_ms = ms < 2000 ? ms / 2 : 1000;
	int n;

	snprintf(name, sizeof(name), "%s-boot", p->name);
	n = probe_engine_boot_argv(g, VM_IMG_WORD, name, VM_BOOT_CG, argv,
				   (int)(sizeof(argv) / sizeof(argv[0])) - SBT_PROBE_MAX_ARGS - 1);
	if (n < 0)
		return -1;
	for (int i = 0; p->boot.argv[i]; i++) /* --boot-cmd: instead of the image's CMD */
		argv[n++] = p->boot.argv[i];
	argv[n] = NULL;
	snprintf(p->sink.boot_word, sizeof(p->sink.boot_word), "--name=%s", name);
	fputs("hc=\n", f);
	if (p->boot.has_healthcheck)
		fprintf(f,
			"(sleep %llu.%03llu; podman --runtime runc --cgroup-manager cgroupfs "
			"--events-backend file healthcheck run '%s' > /dev/null 2>&1; rc=$?; "
			"[ \"$rc\" -ne 0 ] || : > /run/sbtrace-hc-ok; echo \"${M}healthcheck "
			"$rc\") "
			"< /dev/null &\nhc=$!\n",
			(unsigned long long)(hc_ms / 1000), (unsigned long long)(hc_ms % 1000),
			name);
	fprintf(f, "%s(watch_ready %llu.%03llu %u '%s') < /dev/null &\nwatcher=$!\n", guest_watch,
		(unsigned long long)(p->o->boot_quiet_ms / 1000),
		(unsigned long long)(p->o->boot_quiet_ms % 1000),
		(unsigned int)(PROBE_BOOT_GRACE_MS / 1000), name);
	/*
	 * At the time limit a stopper says so and stops the container (SIGTERM,
	 * SIGKILL after the grace): the end is the container's, not podman's
	 * own clean-up, which under TCG takes seconds.
	 */
	fprintf(f,
		"t0=$(ms)\n(sleep %llu.%03llu; echo \"${M}stop $(($(ms) - t0))\"; podman --runtime "
		"runc --cgroup-manager cgroupfs --events-backend file stop -t %u '%s' > /dev/null "
		"2>&1) < /dev/null &\nstopper=$!\n",
		(unsigned long long)(ms / 1000), (unsigned long long)(ms % 1000),
		(unsigned int)(PROBE_BOOT_GRACE_MS / 1000), name);
	for (int i = 0; argv[i]; i++)
		probe_vm_word(f, argv[i]);
	fputs(" < /dev/null\nrc=$?\nkill \"$stopper\" \"$watcher\" 2> /dev/null\n"
	      "echo \"${M}boot $rc $(($(ms) - t0))\"\n[ -z \"$hc\" ] || wait \"$hc\"\n",
	      f);
	return 0;
}

/*
 * The guest's /sbt/run into b->vm_script, and plan->argv the guest's
 * `podman build` (what the report names). 0, or -1 with boot_err.
 */
static int put_script(struct probe_ctx *p, struct sbt_build_plan *plan)
{
	struct probe_build g = p->build; /* the guest's paths */
	char *text = NULL;
	size_t len = 0;
	FILE *f;
	int ret;

	snprintf(g.network, sizeof(g.network), "host");
	snprintf(g.seccomp, sizeof(g.seccomp), VM_WS "/seccomp.json");
	snprintf(g.iidfile, sizeof(g.iidfile), VM_IID);
	snprintf(g.dockerfile, sizeof(g.dockerfile), VM_WS "/Dockerfile");
	ret = probe_engine_build_argv(plan, &g, VM_WS "/context", VM_BUILD_CG);
	f = ret ? NULL : open_memstream(&text, &len);
	if (!f) {
		snprintf(p->boot_err, sizeof(p->boot_err), "cannot prepare the guest's script");
		return -1;
	}
	fprintf(f,
		"# sbtrace probe: the Dockerfile build in the microVM, as guest root "
		"(userspace/probe/engine_vm.c)\nM='%s'\n"
		"ms() { awk '{ printf \"%%d\", $1 * 1000 }' /proc/uptime; }\n%s",
		p->build.vm_mark, guest_conf);
	/* the base images: the probe's image store, read-only, beside the engine's own */
	if (p->build.vm_images)
		fputs("printf '%s\\n' '[storage.options]' "
		      "'additionalimagestores = [\"" VM_WS
		      "/store\"]' >> /etc/containers/storage.conf\n",
		      f);
	fputs("t0=$(ms)\n", f);
	for (int i = 0; plan->argv[i]; i++)
		probe_vm_word(f, plan->argv[i]);
	fputs(" < /dev/null\nrc=$?\necho \"${M}built $rc $(($(ms) - t0))\"\n"
	      "[ \"$rc\" -eq 0 ] || exit \"$rc\"\n"
	      "img=$(cat " VM_IID ")\necho \"${M}image $img\"\n",
	      f);
	if (p->boot.source == BOOT_DOCKERFILE && !p->boot.skipped && put_boot(p, f, &g) < 0)
		ret = -1;
	fputs("exit 0\n", f);
	if (fclose(f) || ret) {
		free(text);
		snprintf(p->boot_err, sizeof(p->boot_err), "cannot prepare the guest's script");
		return -1;
	}
	p->build.vm_script = text;
	return 0;
}

int probe_vm_build_prepare(struct probe_ctx *p, struct sbt_build_plan *plan)
{
	unsigned char nonce[12];
	char *json;
	int ret;

	p->boot.term_handled = -1; /* until the guest's script says */
	if (getrandom(nonce, sizeof(nonce), 0) != (ssize_t)sizeof(nonce)) {
		snprintf(p->boot_err, sizeof(p->boot_err), "getrandom: %s", strerror(errno));
		return -1;
	}
	snprintf(p->build.vm_mark, sizeof(p->build.vm_mark), "SBT-PROBE-");
	for (size_t i = 0; i < sizeof(nonce); i++)
		snprintf(p->build.vm_mark + strlen(p->build.vm_mark), 3, "%02x", nonce[i]);
	strcat(p->build.vm_mark, " ");
	json = sbt_seccomp_oci_profile();
	if (!json) {
		snprintf(p->boot_err, sizeof(p->boot_err), "out of memory");
		return -1;
	}
	ret = put_file(p, "seccomp.json", json, strlen(json));
	free(json);
	if (ret < 0 || put_dockerfile(p) < 0)
		return -1;
	probe_progress(p, "copying the base images for the microVM%s", "");
	if (copy_images(p) < 0)
		return -1;
	probe_progress(p, "base images copied (%d, %llu MiB in %llu ms)", p->build.vm_images,
		       (unsigned long long)(p->build.vm_store_bytes >> 20),
		       (unsigned long long)p->build.vm_copy_ms);
	return put_script(p, plan);
}

/* ---- what the script said ------------------------------------------------ */

/* One marked line: "WORD N [M]". */
static void take_mark(struct probe_ctx *p, const char *line)
{
	struct probe_boot *b = &p->boot;
	char word[16], img[80];
	long long a = -1, c = -1;

	if (sscanf(line, "image %79s", img) == 1) {
		snprintf(b->image, sizeof(b->image), "%.71s", img);
		return;
	}
	if (sscanf(line, "ready %15s %lld", word, &a) == 2 && a >= 0 && !b->ready_ns) {
		/* the guest's CLOCK_BOOTTIME, as its exec records' (the boot's start is one) */
		b->ready_ns = (uint64_t)a * 1000000ull;
		b->ready_by = strcmp(word, "healthcheck") == 0 ? "healthcheck" : "ready";
		return;
	}
	if (sscanf(line, "%15s %lld %lld", word, &a, &c) < 2 || a < 0)
		return;
	if (strcmp(word, "built") == 0 && c >= 0) {
		p->build.vm_build_ms = (uint64_t)c;
	} else if (strcmp(word, "healthcheck") == 0) {
		b->healthcheck = (int)(a > 255 ? 255 : a);
	} else if (strcmp(word, "stop") == 0 || strcmp(word, "stop_ready") == 0) {
		/* the time limit, or readiness, came before the container's end */
		if (!b->term_sent)
			b->end_asked = strcmp(word, "stop_ready") == 0;
		b->term_sent = true;
	} else if (strcmp(word, "term") == 0) {
		b->term_handled = a != 0;
	} else if (strcmp(word, "boot") == 0 && c >= 0) {
		b->ran = true;
		b->ms = (uint64_t)c;
		b->status = (int)((a & 0xff) << 8);
		/* stopped at the time limit, or killed after the grace */
		b->end = !b->term_sent ? SBT_THEN_EXITED
			 : a == 137    ? SBT_THEN_KILLED
				       : SBT_THEN_STOPPED;
		b->kill_sent = b->end == SBT_THEN_KILLED;
	}
}

void probe_vm_build_results(struct probe_ctx *p)
{
	const struct sbt_vm_console *con = &p->run.con;
	char lines[sizeof(con->marks)];

	snprintf(lines, sizeof(lines), "%s", con->marks);
	for (char *l = lines, *nl; *l; l = nl + 1) {
		nl = strchr(l, '\n');
		if (!nl)
			break;
		*nl = '\0';
		take_mark(p, l);
	}
	if (p->boot.ran && p->build_ms > p->boot.ms)
		p->build_ms -= p->boot.ms;
	if (con->marks_dropped)
		probe_progress(p, "the guest's script said more than was kept (%u lines dropped)",
			       con->marks_dropped);
}
