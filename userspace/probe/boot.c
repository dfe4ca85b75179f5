// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The boot phase: after the build, what the container runs when it starts,
 * in the same sandbox and under the same trace, for --boot-seconds or until
 * it exits; then SIGTERM, and SIGKILL PROBE_BOOT_GRACE_MS later.
 *
 *  - a Dockerfile: the built image (the final stage, or --target) as its
 *    ENTRYPOINT/CMD say (or --boot-cmd's command instead of CMD), started
 *    by `podman run` as the sandbox's next host tool, its container's cgroup
 *    below the sandbox's (<sandbox>/boot), no network. The SIGTERM goes to
 *    `podman run`, which passes it to the container; the SIGKILL is the
 *    container cgroup's cgroup.kill.
 *  - other repos (the ns backend): --boot-cmd, else package.json's start
 *    script as `npm start`, run by the sandbox's init once the build exited
 *    with 0 (sandbox.h, then_argv), in the build's tree.
 *
 * Where each shell came from is the sites' business (site.h); this file
 * plans them with the boot.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

#include "lib/clock.h"
#include "event/events.h"
#include "kind.h"

/* The start site of a boot in the sandbox: --boot-cmd's argv, or the start script. */
static int boot_site(struct probe_ctx *p)
{
	struct probe_site t = { .phase = PROBE_BOOT,
				.instruction = "boot_cmd",
				.matched = true,
				.affects_final = true };
	int i, n = 0;

	if (p->boot.source == BOOT_NPM_START) {
		for (i = 0; i < p->sites.nr; i++)
			if (p->sites.v[i].phase == PROBE_BOOT)
				break;
		if (i < p->sites.nr) {
			p->sites.boot_other = i;
			return 0;
		}
	}
	while (p->boot.argv[n])
		n++;
	i = probe_site_add(&p->sites, &t, NULL, (const char *const *)p->boot.argv, n);
	if (i < 0)
		return -ENOMEM;
	p->sites.boot_other = i;
	p->boot.line = 0; /* --boot-cmd: not the Dockerfile's ENTRYPOINT/CMD */
	return 0;
}

int probe_boot_plan(struct probe_ctx *p, const struct sbt_build_plan *plan, char *err,
		    size_t errlen)
{
	const struct probe_opts *o = p->o;
	const struct probe_kind *k = probe_kind_of(plan->kind);
	/* the image the build made, else a second workload of the sandbox (its backend's) */
	bool image = k->boots_image, can_boot = image || sbt_backend_caps(p->backend)->then;
	bool boot_start = !o->no_boot && can_boot && !o->boot_cmd, has_start = false;
	int rc = 0;

	probe_sites_init(&p->sites);
	p->boot.healthcheck = -1;
	if (o->boot_cmd) {
		char why[128];
		int n = sbt_split_words(o->boot_cmd, p->boot.argv, SBT_PROBE_MAX_ARGS, why,
					sizeof(why));

		if (n < 0) {
			probe_err(err, errlen, "bad --boot-cmd: %s", why);
			return -1;
		}
	}
	if (k->sites(k, p, plan, boot_start, &has_start, err, errlen) < 0)
		return -1;
	if (o->no_boot)
		p->boot.skipped = "no_boot";
	else if (!can_boot)
		p->boot.skipped = "backend";
	else if (o->boot_cmd)
		p->boot.source = image ? BOOT_DOCKERFILE : BOOT_CMD;
	else if (image)
		p->boot.source = BOOT_DOCKERFILE;
	else if (has_start)
		p->boot.source = BOOT_NPM_START;
	else
		p->boot.skipped = "no_start_command";
	if (p->boot.source == BOOT_NPM_START) {
		static const char *const npm_start[] = { "npm", "start", NULL };

		for (int i = 0; npm_start[i]; i++)
			if (!(p->boot.argv[i] = strdup(npm_start[i])))
				rc = -ENOMEM;
	}
	if (!rc && (o->boot_cmd || p->boot.source == BOOT_NPM_START))
		rc = boot_site(p);
	if (rc) {
		probe_err(err, errlen, "out of memory");
		return -1;
	}
	return 0;
}

void probe_boot_free(struct probe_boot *b)
{
	for (int i = 0; i <= SBT_PROBE_MAX_ARGS; i++) {
		free(b->argv[i]);
		b->argv[i] = NULL;
	}
}

/* ---- the podman backend's boot ------------------------------------------ */

int probe_boot_podman(struct probe_ctx *p)
{
	struct sbt_sandbox_spec spec = {
		.name = p->name,
		.net = SBT_NET_NONE,
		.env = p->o->env_args,
		.stdout_fd = STDERR_FILENO,
		.stderr_fd = STDERR_FILENO,
		.backend = p->backend, /* the next host tool of the build's sandbox */
	};
	char *argv[SBT_PROBE_MAX_ARGS * 2 + 32], cg_parent[SBT_SANDBOX_NAME_MAX + 32];
	char id[65];
	int n;

	if (probe_engine_image(&p->build, id) < 0) {
		snprintf(p->boot_err, sizeof(p->boot_err),
			 "the build left no image to boot (no image id in its iid file)");
		return -1;
	}
	snprintf(p->boot.image, sizeof(p->boot.image), "%s", id);
	snprintf(p->build.container, sizeof(p->build.container), "%s-boot", p->name);
	snprintf(cg_parent, sizeof(cg_parent), "/sbtrace/%s/boot", p->name);
	n = probe_engine_boot_argv(&p->build, id, p->build.container, cg_parent, argv,
				   (int)(sizeof(argv) / sizeof(argv[0])) - SBT_PROBE_MAX_ARGS - 1);
	if (n < 0) {
		snprintf(p->boot_err, sizeof(p->boot_err), "cannot prepare the boot's command");
		return -1;
	}
	for (int i = 0; p->boot.argv[i]; i++) /* --boot-cmd: instead of the image's CMD */
		argv[n++] = p->boot.argv[i];
	argv[n] = NULL;
	spec.argv = argv;
	p->sink.boot_start_ns = sbt_clock_ns(CLOCK_BOOTTIME);
	p->boot.start_ms = sbt_mono_ms();
	p->boot.deadline_ms = p->boot.start_ms + p->o->boot_ms;
	p->boot.ran = p->boot.running = true;
	if (sbt_sandbox_next(&p->run, &spec, p->boot_err, sizeof(p->boot_err)) < 0) {
		p->boot.running = false;
		return -1;
	}
	probe_progress(p, "booting the image: %s", p->build.container);
	return 0;
}

/* Kill every process of the container: its cgroup's (and those below) cgroup.kill. */
static void kill_container(const struct probe_ctx *p)
{
	char path[PATH_MAX + 32];
	int fd;

	snprintf(path, sizeof(path), "%s/boot/cgroup.kill", p->run.cgroup_path);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (write(fd, "1", 1) != 1)
			probe_progress(p, "could not kill the boot's container (%s)", path);
		close(fd);
	}
}

/*
 * The HEALTHCHECK, once, a second into the boot (or halfway when shorter):
 * the engine runs its command inside the container, so the trace sees it.
 * Nothing schedules it here (no systemd timer), so the probe does.
 */
static void healthcheck(struct probe_ctx *p, uint64_t now)
{
	uint64_t at = p->boot.start_ms + (p->o->boot_ms < 2000 ? p->o->boot_ms / 2 : 1000);

	if (!p->boot.has_healthcheck || p->boot.healthcheck != -1 || now < at)
		return;
	p->boot.healthcheck = probe_engine_healthcheck(&p->build);
	if (p->boot.healthcheck < 0)
		p->boot.healthcheck = 255;
	probe_progress(p, "ran the image's HEALTHCHECK once%s", "");
}

void probe_boot_tick(struct probe_ctx *p)
{
	uint64_t now = sbt_mono_ms();

	if (p->boot.running && !p->boot.term_sent)
		healthcheck(p, now);
	if (!p->boot.running || now < p->boot.deadline_ms)
		return;
	if (!p->boot.term_sent) {
		p->boot.term_sent = true;
		if (p->run.pid > 0)
			kill(p->run.pid, SIGTERM); /* podman run passes it to the container */
		p->boot.deadline_ms = now + PROBE_BOOT_GRACE_MS;
		probe_progress(p, "boot time is up: SIGTERM to the container%s", "");
	} else if (!p->boot.kill_sent) {
		p->boot.kill_sent = true;
		kill_container(p);
		p->boot.deadline_ms = now + 10000;
		probe_progress(p, "the container did not stop: SIGKILL%s", "");
	} else if (p->run.pid > 0) {
		kill(p->run.pid, SIGKILL); /* podman itself hangs: the cleanup removes the rest */
		p->boot.deadline_ms = now + 60000;
	}
}

/* ---- the report ---------------------------------------------------------- */

static const char *end_name(enum sbt_then_end e)
{
	switch (e) {
	case SBT_THEN_EXITED:
		return "exited";
	case SBT_THEN_STOPPED:
		return "stopped";
	case SBT_THEN_KILLED:
		return "killed";
	case SBT_THEN_PENDING:
	case SBT_THEN_SKIPPED:
		break;
	}
	return NULL;
}

static const char *source_name(enum probe_boot_source s)
{
	switch (s) {
	case BOOT_DOCKERFILE:
		return "dockerfile";
	case BOOT_CMD:
		return "boot_cmd";
	case BOOT_NPM_START:
		return "npm_start";
	case BOOT_NONE:
		break;
	}
	return NULL;
}

json_object *probe_boot_json(const struct probe_ctx *p)
{
	const struct probe_boot *b = &p->boot;
	json_object *o = json_object_new_object(), *argv = NULL;
	const char *end = b->ran ? end_name(b->end) : NULL, *skipped = b->skipped;
	bool build_ok = p->exited && WIFEXITED(p->status) && WEXITSTATUS(p->status) == 0;
	char secs[32];

	if (!b->ran && !skipped) /* it was to run: the build did not get there */
		skipped = build_ok ? "interrupted" : "build_failed";
	json_object_object_add(o, "ran", json_object_new_boolean(b->ran));
	json_object_object_add(o, "skipped", skipped ? json_object_new_string(skipped) : NULL);
	if (b->argv[0]) {
		argv = json_object_new_array();
		for (int i = 0; b->argv[i]; i++)
			json_object_array_add(argv, sbt_json_string(b->argv[i]));
	}
	json_object_object_add(o, "argv", argv);
	json_object_object_add(
		o, "source",
		source_name(b->source) ? json_object_new_string(source_name(b->source)) : NULL);
	json_object_object_add(o, "line", b->line ? json_object_new_int64(b->line) : NULL);
	json_object_object_add(o, "image", b->image[0] ? json_object_new_string(b->image) : NULL);
	snprintf(secs, sizeof(secs), "%.1f", (double)b->ms / 1000.0);
	json_object_object_add(o, "seconds",
			       json_object_new_double_s((double)b->ms / 1000.0, secs));
	json_object_object_add(o, "ended", end ? json_object_new_string(end) : NULL);
	json_object_object_add(o, "healthcheck_exit_code",
			       b->has_healthcheck && b->healthcheck >= 0
				       ? json_object_new_int64(b->healthcheck)
				       : NULL);
	json_object_object_add(
		o, "exit_code",
		end && WIFEXITED(b->status)	? json_object_new_int64(WEXITSTATUS(b->status))
		: end && WIFSIGNALED(b->status) ? json_object_new_int64(128 + WTERMSIG(b->status))
						: NULL);
	return o;
}
