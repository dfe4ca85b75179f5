// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The boot phase: after the build, what the container runs when it starts,
 * in the same sandbox and under the same trace, until it is ready and quiet
 * (it listens or its HEALTHCHECK passed, then --boot-quiet-ms without an
 * exec: readiness()), until it exits, or for --boot-seconds at most; then
 * SIGTERM, and SIGKILL PROBE_BOOT_GRACE_MS later.
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
#include <sys/random.h>
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
	const struct sbt_backend_caps *caps = sbt_backend_caps(p->backend);
	/* the microVM's guest runs the boot after the build in its script (boot.c) */
	bool image = k->boots_image, can_boot = image || caps->then || caps->guest;
	bool boot_start = !o->no_boot && can_boot && !o->boot_cmd, has_start = false;
	int rc = 0;

	probe_sites_init(&p->sites);
	if (probe_sites_lockfile(&p->sites, p->o->repo)) {
		probe_err(err, errlen, "out of memory");
		return -1;
	}
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
	/*
	 * Without a Dockerfile nothing says what the final image holds: a
	 * distroless packaging builds in a builder stage and copies the output.
	 * The build's shells are that stage's evidence; the verdict is the
	 * boot's, what the runtime starts.
	 */
	for (int i = 0; !image && i < p->sites.nr; i++)
		if (p->sites.v[i].phase == PROBE_BUILD)
			p->sites.v[i].affects_final = false;
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
	free(b->vm_script);
	b->vm_script = NULL;
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
 * The HEALTHCHECK, once, a second into the boot (or halfway when shorter),
 * or as soon as the boot listens: the engine runs its command inside the
 * container, so the trace sees it. Nothing schedules it here (no systemd
 * timer), so the probe does.
 */
static void healthcheck(struct probe_ctx *p, uint64_t now)
{
	uint64_t at = p->boot.start_ms + (p->o->boot_ms < 2000 ? p->o->boot_ms / 2 : 1000);

	if (!p->boot.has_healthcheck || p->boot.healthcheck != -1 ||
	    (now < at && !p->boot.ready_ns))
		return;
	p->boot.healthcheck = probe_engine_healthcheck(&p->build);
	if (p->boot.healthcheck < 0)
		p->boot.healthcheck = 255;
	probe_progress(p, "ran the image's HEALTHCHECK once%s", "");
}

/* The boot's start (CLOCK_BOOTTIME) while it runs and was not stopped, else 0. */
static uint64_t running_since(struct probe_ctx *p)
{
	struct sbt_sandbox_then *t = &p->run.then;

	if (p->boot.source == BOOT_DOCKERFILE)
		return p->boot.running && !p->boot.term_sent ? p->sink.boot_start_ns : 0;
	if (!p->sink.run || p->run.phase_fd < 0)
		return 0;
	sbt_sandbox_then_poll(&p->run);
	if (!t->started || t->end != SBT_THEN_PENDING)
		return 0;
	if (!p->sink.boot_start_ns) /* this poll took init's record: the sink's phase from it */
		p->sink.boot_start_ns = t->start_ns;
	return t->start_ns;
}

#define READY_POLL_MS 50 /* how often the boot's sockets are looked at */

/*
 * The boot ends at readiness, not at --boot-seconds: once it listens (or
 * its HEALTHCHECK passed, and an image's HEALTHCHECK ran in any case: it is
 * part of what the image runs) and no exec came for --boot-quiet-ms, it is
 * stopped as at its time limit: SIGTERM, SIGKILL after the grace.
 */
static void readiness(struct probe_ctx *p, uint64_t now_ms)
{
	struct probe_boot *b = &p->boot;
	uint64_t since = running_since(p), now, quiet = p->o->boot_quiet_ms * 1000000ull;

	if (!since || b->end_asked)
		return;
	now = sbt_clock_ns(CLOCK_BOOTTIME);
	if (!b->ready_ns && now_ms >= b->next_poll_ms) {
		b->next_poll_ms = now_ms + READY_POLL_MS;
		if (probe_boot_listening(p) > 0) {
			b->ready_ns = now;
			b->ready_by = "ready";
			probe_progress(p, "the boot listens: ready%s", "");
		}
	}
	if (!b->ready_ns && b->has_healthcheck && b->healthcheck == 0) {
		b->ready_ns = now;
		b->ready_by = "healthcheck";
	}
	if (!b->ready_ns || (b->has_healthcheck && b->healthcheck == -1) ||
	    now < b->ready_ns + quiet || now < p->sink.last_exec_ns + quiet)
		return;
	b->end_asked = true;
	probe_progress(p, "ready, and no exec since: ending the boot%s", "");
	if (b->source != BOOT_DOCKERFILE) {
		if (sbt_sandbox_then_end(&p->run) < 0) /* init is gone: the boot ended already */
			b->end_asked = false;
		return;
	}
	b->term_sent = true;
	if (p->run.pid > 0)
		kill(p->run.pid, SIGTERM); /* podman run passes it to the container */
	b->deadline_ms = now_ms + PROBE_BOOT_GRACE_MS;
}

#define TERM_DROPPED_MS 250 /* podman's SIGTERM has reached the container by then */

/*
 * In the grace after the SIGTERM: a container's PID 1 whose SIGTERM is at
 * the default now (it had no handler, or node's one-shot one ran) will not
 * end by it (the kernel drops it for a PID 1): the SIGKILL at once.
 */
static void term_dropped(struct probe_ctx *p, uint64_t now)
{
	struct probe_boot *b = &p->boot;

	if (!b->running || !b->term_sent || b->kill_sent || now >= b->deadline_ms ||
	    now + PROBE_BOOT_GRACE_MS < b->deadline_ms + TERM_DROPPED_MS || now < b->next_poll_ms)
		return;
	b->next_poll_ms = now + READY_POLL_MS;
	if (probe_boot_term_handled(p) == 0)
		b->deadline_ms = now;
}

void probe_boot_tick(struct probe_ctx *p)
{
	uint64_t now = sbt_mono_ms();

	if (p->boot.running && !p->boot.term_sent)
		healthcheck(p, now);
	readiness(p, now);
	term_dropped(p, now);
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
		p->boot.term_handled = probe_boot_term_handled(p);
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

/* What ended the boot: itself, the probe at readiness, or its time limit. */
static const char *ended_by(const struct probe_boot *b)
{
	if (!b->ran || b->end == SBT_THEN_PENDING || b->end == SBT_THEN_SKIPPED)
		return NULL;
	if (b->end == SBT_THEN_EXITED)
		return "exited";
	return b->end_asked ? b->ready_by : "time_limit";
}

/* When it was seen ready, in ms since its start; -1 never. */
static int64_t ready_ms(const struct probe_ctx *p)
{
	uint64_t start = p->boot.source == BOOT_DOCKERFILE || p->boot.in_vm ? p->sink.boot_start_ns
									    : p->run.then.start_ns;

	if (!p->boot.ready_ns || !start || p->boot.ready_ns < start)
		return -1;
	return (int64_t)((p->boot.ready_ns - start) / 1000000);
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
	json_object_object_add(o, "ended_by",
			       ended_by(b) ? json_object_new_string(ended_by(b)) : NULL);
	json_object_object_add(o, "ready_ms",
			       ready_ms(p) >= 0 ? json_object_new_int64(ready_ms(p)) : NULL);
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

/* ---- the boot in a microVM without the engine -------------------------------- */

/*
 * The boot in a microVM without the engine (--backend qemu, a repo built by
 * its own command: make, npm, --cmd): the guest's /sbt/run runs the build,
 * then, when it exited 0, the boot (--boot-cmd, or npm start) for
 * --boot-seconds, then SIGTERM and SIGKILL after the grace. Its lines that
 * start with the probe's mark (a nonce) are kept apart by the console
 * (sbt_vm_console_mark) and read as the Dockerfile path's are
 * (probe_vm_build_results(): built, stop, boot). The boot's first exec
 * carries the mark in its argv (env SBT_PROBE_BOOT=MARK): from it on, the
 * guest's execs are the boot's (the sink's boot_word). No exec of its own
 * before the build's first: the clock is the shell's read of /proc/uptime.
 */

/* The guest's clock in ms, from /proc/uptime without an exec ("12.34": 1 before the fraction, no octal). */
static const char vm_clock[] = "ms() { read -r u _ < /proc/uptime; echo $(( ${u%%.*} * 1000 + "
			       "1${u#*.}0 - 1000 )); }\n";

int probe_boot_vm_script(struct probe_ctx *p, const struct sbt_build_plan *plan)
{
	struct probe_boot *b = &p->boot;
	unsigned char nonce[12];
	uint64_t ms = p->o->boot_ms;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	if (getrandom(nonce, sizeof(nonce), 0) != (ssize_t)sizeof(nonce)) {
		snprintf(p->boot_err, sizeof(p->boot_err), "getrandom: %s", strerror(errno));
		return -1;
	}
	snprintf(b->vm_mark, sizeof(b->vm_mark), "SBT-BOOT-");
	for (size_t i = 0; i < sizeof(nonce); i++)
		snprintf(b->vm_mark + strlen(b->vm_mark), 3, "%02x", nonce[i]);
	snprintf(p->sink.boot_word, sizeof(p->sink.boot_word), "SBT_PROBE_BOOT=%s", b->vm_mark);
	strcat(b->vm_mark, " ");
	f = open_memstream(&text, &len);
	if (!f) {
		snprintf(p->boot_err, sizeof(p->boot_err), "cannot prepare the guest's script");
		return -1;
	}
	fprintf(f, "# sbtrace probe: the build, then the boot (userspace/probe/boot.c)\nM='%s'\n",
		b->vm_mark);
	fputs(vm_clock, f);
	for (int i = 0; plan->argv[i]; i++)
		probe_vm_word(f, plan->argv[i]);
	fputs(" < /dev/null\nrc=$?\necho \"${M}built $rc 0\"\n[ \"$rc\" -eq 0 ] || exit \"$rc\"\n"
	      "t0=$(ms)\n",
	      f);
	probe_vm_word(f, "/usr/bin/env");
	probe_vm_word(f, p->sink.boot_word);
	for (int i = 0; b->argv[i]; i++)
		probe_vm_word(f, b->argv[i]);
	/* the stopper: the time limit, SIGTERM, SIGKILL after the grace */
	fprintf(f,
		" < /dev/null &\nb=$!\n(sleep %llu.%03llu; echo \"${M}stop $(($(ms) - t0))\"; "
		"kill -TERM \"$b\" 2> /dev/null; sleep %u; kill -KILL \"$b\" 2> /dev/null) "
		"< /dev/null &\ns=$!\nwait \"$b\"\nrc=$?\nkill -KILL \"$s\" 2> "
		"/dev/null\n"
		"echo \"${M}boot $rc $(($(ms) - t0))\"\nexit 0\n",
		(unsigned long long)(ms / 1000), (unsigned long long)(ms % 1000),
		(unsigned int)(PROBE_BOOT_GRACE_MS / 1000));
	if (fclose(f)) {
		free(text);
		snprintf(p->boot_err, sizeof(p->boot_err), "cannot prepare the guest's script");
		return -1;
	}
	free(b->vm_script);
	b->vm_script = text;
	b->in_vm = true;
	return 0;
}
