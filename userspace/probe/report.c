// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The probe's verdict and its report (the founding ADR-0002: typed failures, warning ids). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "lib/clock.h"
#include "event/events.h"
#include "exec/shellagg.h"
#include "kind.h"

static void add_warning(json_object *warnings, const char *id, const char *message)
{
	json_object *w = json_object_new_object();
	char full[96];

	snprintf(full, sizeof(full), WARN_PREFIX "%s", id);
	json_object_object_add(w, "id", json_object_new_string(full));
	json_object_object_add(w, "message", sbt_json_string(message));
	json_object_array_add(warnings, w);
}

static json_object *argv_json(char *const *argv)
{
	json_object *a = json_object_new_array();

	for (; argv && *argv; argv++)
		json_object_array_add(a, sbt_json_string(*argv));
	return a;
}

/* Why the build did not succeed, as the build_failed warning says it. */
static void build_failure(const struct probe_ctx *p, char *msg, size_t len)
{
	if (p->timed_out)
		snprintf(msg, len, "the build did not finish within --timeout");
	else if (p->exited && WIFEXITED(p->status))
		snprintf(msg, len, "the build exited with status %d", WEXITSTATUS(p->status));
	else if (p->exited && WIFSIGNALED(p->status))
		snprintf(msg, len, "the build was killed by signal %d", WTERMSIG(p->status));
	else
		snprintf(msg, len, "the build was interrupted");
}

/* The reason the answer is not confident, with its warning. */
static void because(struct probe_verdict *v, const char *reason, const char *message)
{
	v->reason = reason;
	snprintf(v->message, sizeof(v->message), "%s", message);
	add_warning(v->warnings, reason, message);
}

/* The events_lost warning: which kind of record may be missing, and what that costs. */
static const char *lost_message(const struct sbt_completeness *c, char *buf, size_t len)
{
	if (c->exec_reason) {
		snprintf(buf, len,
			 "the guest agent's exec stream from the microVM is not whole (%s): the "
			 "shell count is a lower bound",
			 c->exec_reason);
		return buf;
	}
	if (!c->exec && !c->egress)
		return "some exec and egress events of the sandbox may be missing: the shell count "
		       "and the egress counts are lower bounds";
	if (!c->exec)
		return "some exec events of the sandbox may be missing: the shell count is a lower "
		       "bound";
	return "some egress events of the sandbox may be missing (every exec arrived): the "
	       "egress counts and denied destinations are lower bounds";
}

/* Shells that affect the final image: the sites' count, and any the sites could not place. */
static uint64_t affecting(const struct probe_ctx *p)
{
	struct probe_site_totals t;
	uint64_t unplaced;

	probe_sites_count(&p->sites, &t);
	unplaced = p->sink.shells > t.count ? p->sink.shells - t.count : 0;
	return t.affecting + unplaced + (p->sink.sites_failed ? 1 : 0);
}

/* Append to buf (as much as fits). */
static void append(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void append(char *buf, size_t len, const char *fmt, ...)
{
	size_t used = strlen(buf);
	va_list ap;

	if (used + 1 >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + used, len - used, fmt, ap);
	va_end(ap);
}

/*
 * A build that failed while it was refused the network: what it was
 * refused (the names the DNS proxy would not answer, the addresses denied)
 * and the rules that would allow them, for the operator to judge.
 */
static void refused_note(const struct probe_sink *ps, json_object *warnings)
{
	size_t nn = json_object_array_length(ps->refused_names);
	size_t nd = json_object_array_length(ps->denied_dests);
	char msg[600] = "", flags[400] = "";

	if (!nn && !nd)
		return;
	append(msg, sizeof(msg), "the build was refused the network it asked for:");
	for (size_t i = 0; i < nn && i < 8; i++) {
		json_object *n = json_object_array_get_idx(ps->refused_names, i), *name;
		const char *s = json_object_object_get_ex(n, "name", &name)
					? json_object_get_string(name)
					: "?";

		append(msg, sizeof(msg), "%s name %s", i ? "," : "", s);
		append(flags, sizeof(flags), " --allow-host '%s'", s);
	}
	for (size_t i = 0; i < nd && i < 8; i++) {
		json_object *d = json_object_array_get_idx(ps->denied_dests, i), *a, *port;

		if (!json_object_object_get_ex(d, "daddr", &a) || !a)
			continue;
		json_object_object_get_ex(d, "dport", &port);
		append(msg, sizeof(msg), "%s %s port %d", nn || i ? "," : "",
		       json_object_get_string(a), json_object_get_int(port));
		append(flags, sizeof(flags), " --allow-cidr '%s%s port %d'",
		       json_object_get_string(a),
		       strchr(json_object_get_string(a), ':') ? "/128" : "/32",
		       json_object_get_int(port));
	}
	append(msg, sizeof(msg),
	       " (egress.refused_names, egress.denied_destinations); if the build needs them, "
	       "allow them:%s",
	       flags);
	add_warning(warnings, "egress_refused", msg);
}

/*
 * A killed boot that still lets the answer be confident: it was ready and
 * quiet (the probe ended it), and its PID 1 had no SIGTERM handler, so the
 * kernel dropped the SIGTERM: the kill missed nothing of its own. Any other
 * kill (at the time limit, or of a boot that traps SIGTERM) cut it short.
 */
static bool killed_when_idle(const struct probe_boot *b)
{
	return b->source == BOOT_DOCKERFILE && b->term_handled == 0 && b->end_asked;
}

/* Warnings that do not change the verdict: stand-in base images, the boot not run. */
static bool limit_hit(const struct sbt_sandbox_run *run, char *buf, size_t len);

static const char *boot_missing(const struct probe_ctx *p, char *buf, size_t len);

static void notes(const struct probe_ctx *p, const struct sbt_build_plan *plan,
		  json_object *warnings, const char *reason)
{
	const struct probe_df *df = &p->build.df;
	char msg[700];

	for (int i = 0; i < plan->nr_inputs; i++) {
		const struct sbt_probe_input *in = &plan->inputs[i];
		const char *note;

		if (!in->substituted_by[0])
			continue;
		note = probe_image_note_of(df, in->name + 6);
		snprintf(msg, sizeof(msg),
			 "FROM %.200s was built on %.200s, a local stand-in (--image-map%s%.224s): "
			 "the real image's files, and so its shells, may differ",
			 in->name + 6, in->substituted_by, note && note[0] ? "; " : "",
			 note ? note : "");
		add_warning(warnings, "base_image_substituted", msg);
	}
	/* a proven shell, or another reason first: still said (else the reason's own warning) */
	if (!(reason && strcmp(reason, "boot_not_run") == 0) && boot_missing(p, msg, sizeof(msg)))
		add_warning(warnings, "boot_not_run", msg);
	if (!probe_kind_of(plan->kind)->boots_image) {
		struct probe_site_totals t;

		probe_sites_count(&p->sites, &t);
		if (t.build) {
			snprintf(
				msg, sizeof(msg),
				"%llu shell(s) ran in the build of a repo without a Dockerfile: "
				"evidence for a builder stage (a distroless packaging builds there "
				"and copies the output), not for the final image; the verdict is "
				"the boot's, what the runtime starts",
				(unsigned long long)t.build);
			add_warning(warnings, "builder_stage_shells", msg);
		}
	}
	if (p->boot.ran && p->boot.end == SBT_THEN_KILLED && killed_when_idle(&p->boot))
		add_warning(
			warnings, "boot_stop_unhandled",
			"the container's PID 1 has no SIGTERM handler, so the kernel dropped the "
			"boot's SIGTERM and it was killed after the grace: it had nothing of its "
			"own to run on a clean stop");
	if (df->lacks_tool && !p->boot_failed &&
	    (p->timed_out || !p->exited || !WIFEXITED(p->status) || WEXITSTATUS(p->status))) {
		snprintf(msg, sizeof(msg),
			 "%s:%u runs %s, which the stand-in %.160s for %.160s does not have "
			 "(it is Debian underneath: no apk, yum, dnf or microdnf): build on the "
			 "real "
			 "image (--pull where a registry is reachable), or map it to a local image "
			 "that has %s with an --image-map line",
			 df->file, df->lacks_line, df->lacks_tool, df->mapped[df->lacks_image],
			 df->images[df->lacks_image], df->lacks_tool);
		add_warning(warnings, "stand_in_lacks_tool", msg);
	}
	if (p->boot.ran && !p->boot.ready_ns && p->boot.end != SBT_THEN_EXITED &&
	    p->boot.end != SBT_THEN_KILLED)
		add_warning(
			warnings, "boot_not_ready",
			"the boot never became ready (it neither listened nor passed a "
			"HEALTHCHECK) and was stopped at --boot-seconds: the answer covers what "
			"it ran until then, not a shell it starts later");
	if (p->o->isolation[0])
		add_warning(warnings, "isolation_reduced", p->o->isolation);
	if (p->run.hits.pids || p->run.hits.memory || p->run.hits.oom_kills) {
		char m[256];

		if (limit_hit(&p->run, m, sizeof(m)))
			add_warning(warnings, "resource_limit_hit",
				    m); /* also when the build coped */
	}
	if (p->sink.failed_unseen || !sbt_backend_caps(p->backend)->execs_on_host)
		add_warning(warnings, "exec_failures_unseen",
			    !sbt_backend_caps(p->backend)->execs_on_host
				    ? "execs that failed in the guest kernel are not seen (its "
				      "agent streams successful execs only): a shell tried where "
				      "there is none is not counted"
				    : "no failed-exec hook (TraceStarted hooks.exec_failed): a "
				      "shell tried where there is none is not counted");
	if (p->sink.sites_failed)
		add_warning(warnings, "shell_unplaced",
			    "some shells could not be tied to where they came from: they are "
			    "counted as affecting the final image");
}

/* The first executable sbtrace could not tell from a shell, and how many ran. */
static const char *unidentified_message(const struct probe_sink *ps, char *buf, size_t len)
{
	json_object *list = NULL, *first, *f, *c;

	json_object_object_get_ex(ps->unidentified, "executables", &list);
	first = list ? json_object_array_get_idx(list, 0) : NULL;
	json_object_object_get_ex(first, "filename", &f);
	json_object_object_get_ex(first, "command_string", &c);
	snprintf(buf, len,
		 "%llu exec(s) of ELF files the build wrote (first %.72s%s) that sbtrace cannot "
		 "tell from a shell (shell_invocation.unidentified)",
		 (unsigned long long)ps->nr_unidentified, first ? json_object_get_string(f) : "?",
		 first && json_object_get_boolean(c) ? ", with -c" : "");
	return buf;
}

/* The sandbox's limit the workload ran into, as a message; false when none was hit. */
static bool limit_hit(const struct sbt_sandbox_run *run, char *buf, size_t len)
{
	const struct sbt_limit_hits *h = &run->hits;

	if (h->pids)
		snprintf(buf, len,
			 "the build ran into the sandbox's pids limit (%u processes: %llu forks "
			 "refused); raise it with --pids-max",
			 run->limits.pids, (unsigned long long)h->pids);
	else if (h->oom_kills || h->memory)
		snprintf(buf, len,
			 "the build ran into the sandbox's memory limit (%llu MiB%s); raise it "
			 "with --memory-max",
			 (unsigned long long)(run->limits.memory >> 20),
			 h->oom_kills ? ", a process OOM-killed" : "");
	else
		return false;
	return true;
}

/*
 * A boot that died: its command not found or not runnable (126, 127), or an
 * exit by a signal or non-zero before it was ready. The message; NULL when
 * it did not die.
 */
static const char *boot_died(const struct probe_ctx *p, char *buf, size_t len)
{
	const struct probe_boot *b = &p->boot;
	int code = WIFEXITED(b->status) ? WEXITSTATUS(b->status) : -1;
	char cmd[160] = "";

	if (!b->ran || b->end != SBT_THEN_EXITED || (code == 0 && WIFEXITED(b->status)))
		return NULL;
	/* 125: podman could not start it; 126, 127: its command not runnable, not found */
	if (code != 125 && code != 126 && code != 127 && b->ready_ns)
		return NULL; /* it ran, was ready, then ended: what it ran is seen */
	if (b->source == BOOT_DOCKERFILE && b->line)
		snprintf(cmd, sizeof(cmd), "the container's start command, %.100s:%u",
			 p->build.df.file, b->line);
	else if (b->source == BOOT_DOCKERFILE)
		snprintf(cmd, sizeof(cmd), "the container's start command");
	for (int i = 0; b->source != BOOT_DOCKERFILE && i < 8 && b->argv[i]; i++)
		append(cmd, sizeof(cmd), "%s%s", i ? " " : "", b->argv[i]);
	if (WIFSIGNALED(b->status))
		snprintf(buf, len,
			 "the boot (%s) died on signal %d after %llu ms, before it was ready: what "
			 "the container runs once up was not seen",
			 cmd, WTERMSIG(b->status), (unsigned long long)b->ms);
	else
		snprintf(buf, len,
			 "the boot (%s) exited %d after %llu ms%s: what the container runs once up "
			 "was not seen",
			 cmd, code, (unsigned long long)b->ms,
			 code == 127   ? " (command not found)"
			 : code == 126 ? " (found, not runnable)"
			 : code == 125 && b->source == BOOT_DOCKERFILE
				 ? " (the container runtime could not start it)"
				 : ", before it was ready");
	return buf;
}

/* The boot did not run (--no-boot, the backend, no start command): its message; NULL when it ran. */
static const char *boot_missing(const struct probe_ctx *p, char *buf, size_t len)
{
	const char *skipped = p->boot.skipped;

	if (!skipped && p->boot.in_vm && !p->boot.ran) {
		snprintf(buf, len,
			 "the boot in the microVM never said it ended (the guest's script "
			 "stopped before): what the container runs was not seen");
		return buf;
	}
	if (!skipped || strcmp(skipped, "build_failed") == 0 || strcmp(skipped, "failed") == 0)
		return NULL;
	snprintf(buf, len,
		 "the boot did not run (%s): what the container runs when it starts was not "
		 "seen, so no answer is a confident safe",
		 strcmp(skipped, "no_boot") == 0   ? "--no-boot"
		 : strcmp(skipped, "backend") == 0 ? "this --backend runs no boot"
		 : strcmp(skipped, "no_start_command") == 0
			 ? "no start command: give --boot-cmd, or a package.json start script"
			 : skipped);
	return buf;
}

/* A microVM's writable space (a tmpfs in its RAM) ran out: a console line said ENOSPC. */
static bool vm_space_out(const struct probe_ctx *p, char *buf, size_t len)
{
	if (!p->vm_mem_mb || !p->run.con.no_space)
		return false;
	snprintf(buf, len,
		 "the microVM's writable space ran out (its console said No space left on "
		 "device): the build's writes land in a tmpfs of at most half its %u MiB of RAM "
		 "(sized from the repo); a build that writes more needs --backend ns",
		 p->vm_mem_mb);
	return true;
}

void probe_decide(const struct probe_ctx *p, const struct sbt_build_plan *plan,
		  struct probe_verdict *v)
{
	const struct probe_kind *k = probe_kind_of(plan->kind);
	bool build_ok = p->exited && WIFEXITED(p->status) && WEXITSTATUS(p->status) == 0;
	bool complete = p->sink.complete.all, lost = p->sink.summary_seen && !complete;
	const char *doubt = NULL, *doubt_msg = NULL;
	char msg[256];

	memset(v, 0, sizeof(*v));
	v->warnings = json_object_new_array();
	if (p->boot_failed) {
		because(v, p->boot_reason ? p->boot_reason : "sandbox_boot_failed", p->boot_err);
	} else if (!sbt_backend_caps(p->backend)->execs_on_host && !p->run.exec_stream[0]) {
		/* No guest agent: the host saw only qemu, no exec, no shell. */
		because(v, "exec_not_visible",
			"the build ran in a microVM without the guest agent: host BPF cannot "
			"see execs in the guest kernel, so no shell count is evidence "
			"(visibility.exec none)");
		if (p->timed_out || !build_ok)
			add_warning(v->warnings, "build_failed",
				    p->timed_out
					    ? "the build did not finish within --timeout"
					    : "the build in the VM did not exit with status 0");
	} else if ((p->boot.ran && p->boot.end == SBT_THEN_PENDING) ||
		   (!p->exited && p->run.then.started)) {
		because(v, "boot_interrupted",
			p->timed_out ? "the boot was stopped at --timeout before its end: what the "
				       "container runs later was not seen"
				     : "the probe was stopped during the boot: what the container "
				       "runs later was not seen");
	} else if (!build_ok && vm_space_out(p, msg, sizeof(msg))) {
		because(v, "resource_limit", msg);
	} else if (!build_ok && limit_hit(&p->run, msg, sizeof(msg))) {
		because(v, "resource_limit", msg); /* not a bare build failure: what stopped it */
		refused_note(&p->sink, v->warnings);
	} else if (p->timed_out || !build_ok) {
		build_failure(p, msg, sizeof(msg));
		because(v, "build_failed", msg);
		refused_note(&p->sink, v->warnings);
	} else if (p->boot.skipped && strcmp(p->boot.skipped, "failed") == 0) {
		char why[sizeof(p->boot_err) + 64];

		snprintf(why, sizeof(why), "the built image could not be started: %s", p->boot_err);
		because(v, "boot_failed", why);
	} else if (p->boot.ran && p->boot.end == SBT_THEN_KILLED && !killed_when_idle(&p->boot)) {
		because(v, "boot_killed",
			p->boot.end_asked
				? "the boot ignored SIGTERM and was killed after the grace: what "
				  "it "
				  "would have run on a clean stop was not seen"
				: "the boot never became ready (it neither listened nor passed a "
				  "HEALTHCHECK) and was killed at --boot-seconds: what it would "
				  "run "
				  "later (a shell started late, or once it sees a network) was not "
				  "seen");
	} else if (boot_died(p, msg, sizeof(msg))) {
		because(v, "boot_failed", msg);
	} else if (lost) {
		because(v, "events_lost", lost_message(&p->sink.complete, msg, sizeof(msg)));
	} else if (p->sink.nr_unidentified && !affecting(p)) {
		because(v, "executable_unidentified",
			unidentified_message(&p->sink, msg, sizeof(msg)));
	} else if (k->doubt && (doubt = k->doubt(p, plan, &doubt_msg))) {
		because(v, doubt, doubt_msg); /* the kind's own: steps not seen, nothing done */
	} else if (!affecting(p) && boot_missing(p, msg, sizeof(msg))) {
		/* a proven shell stays proof; "no shell" needs what the container starts */
		because(v, "boot_not_run", msg);
	}
	notes(p, plan, v->warnings, v->reason);
	/*
	 * A shell at boot, or in a build step that makes the final image, is
	 * proof; "no such shell" needs a complete trace of a build that worked.
	 */
	if (affecting(p) > 0)
		v->verdict = "unsafe";
	else if (!v->reason && complete)
		v->verdict = "safe";
	else
		v->verdict = "inconclusive";
	v->confidence = !v->reason && complete ? "high" : "low";
}

static json_object *command_json(const struct sbt_build_plan *plan)
{
	json_object *c = json_object_new_object();

	json_object_object_add(c, "kind", json_object_new_string(probe_kind_of(plan->kind)->name));
	json_object_object_add(c, "argv", argv_json(plan->argv));
	/* the install step run before argv (npm ci), or null */
	json_object_object_add(c, "install",
			       plan->install ? argv_json((char *const *)plan->install) : NULL);
	/* a Dockerfile's stage, when it is named: only that kind sets one */
	json_object_object_add(c, "target",
			       plan->target[0] ? json_object_new_string(plan->target) : NULL);
	json_object_object_add(c, "why", sbt_json_string(plan->why));
	return c;
}

static json_object *inputs_json(const struct sbt_build_plan *plan)
{
	json_object *in = json_object_new_array();

	for (int i = 0; i < plan->nr_inputs; i++) {
		json_object *o = json_object_new_object();

		json_object_object_add(o, "name", sbt_json_string(plan->inputs[i].name));
		json_object_object_add(o, "sha256", json_object_new_string(plan->inputs[i].sha256));
		if (plan->inputs[i].substituted_by[0])
			json_object_object_add(o, "substituted_by",
					       sbt_json_string(plan->inputs[i].substituted_by));
		json_object_array_add(in, o);
	}
	return in;
}

/*
 * The shells: count, those affecting the final image, per phase, the
 * locations (each with its site: phase, stage, source, remediation), what
 * was omitted, and whether the trace was complete.
 */
static json_object *shells_json(const struct probe_ctx *p)
{
	const struct probe_sink *ps = &p->sink;
	struct probe_site_totals t;
	json_object *locs = probe_sites_json(&p->sites, &t);
	json_object *sio = json_object_new_object(), *phase = json_object_new_object(), *om;

	json_object_object_add(sio, "count", json_object_new_uint64(ps->shells));
	json_object_object_add(sio, "failed", json_object_new_uint64(ps->failed_shells));
	json_object_object_add(sio, "affecting_final_image", json_object_new_uint64(affecting(p)));
	json_object_object_add(phase, "build", json_object_new_uint64(t.build));
	json_object_object_add(phase, "boot", json_object_new_uint64(t.boot));
	json_object_object_add(sio, "by_phase", phase);
	json_object_object_add(sio, "locations", locs ? locs : json_object_new_array());
	om = json_object_new_object();
	json_object_object_add(om, "locations", json_object_new_uint64(t.omitted_locations));
	json_object_object_add(om, "count", json_object_new_uint64(t.omitted_count));
	json_object_object_add(sio, "omitted", om);
	json_object_object_add(sio, "grouped_by",
			       json_object_new_string("site,shell,kind,command,chain"));
	json_object_object_add(sio, "complete", json_object_new_boolean(ps->complete.all));
	json_object_object_add(sio, "unidentified", json_object_get(ps->unidentified));
	return sio;
}

/* Allowed/denied counts and denied destinations. */
static json_object *egress_json(const struct probe_ctx *p, int mode)
{
	const struct probe_sink *ps = &p->sink;
	json_object *o = json_object_new_object();

	/* learn is audit with the proxy and the floor: said as itself (as TraceStarted says it) */
	json_object_object_add(
		o, "mode",
		json_object_new_string(p->o->egress.learn ? "learn" : sbt_egress_mode_name(mode)));
	json_object_object_add(o, "allowed", json_object_new_uint64(ps->allowed));
	json_object_object_add(o, "denied", json_object_new_uint64(ps->denied));
	json_object_object_add(o, "observed", json_object_new_uint64(ps->observed));
	json_object_object_add(o, "denied_destinations", json_object_get(ps->denied_dests));
	json_object_object_add(o, "allowed_destinations", json_object_get(ps->allowed_dests));
	json_object_object_add(o, "refused_names", json_object_get(ps->refused_names));
	/* --egress learn: the allowlist that would have allowed what ran (AllowlistProposed) */
	json_object_object_add(o, "proposal", json_object_get(ps->proposal));
	/* the build's way out (net.c), null where the backend has its own (a microVM's tap) */
	json_object_object_add(o, "build_network",
			       p->net.why[0] ? json_object_new_string(p->net.why) : NULL);
	return o;
}

/* What the host could see, as the backend's capabilities say (and the run: a guest's stream). */
/* The ns sandbox's limits, how they are held and what was hit; null for another backend. */
static json_object *limits_json(const struct sbt_sandbox_run *run)
{
	json_object *o, *hit;

	if (!run->limits_via[0])
		return NULL;
	o = json_object_new_object();
	hit = json_object_new_object();
	json_object_object_add(o, "pids",
			       run->limits.pids ? json_object_new_int64(run->limits.pids) : NULL);
	json_object_object_add(o, "memory_bytes",
			       run->limits.memory ? json_object_new_uint64(run->limits.memory)
						  : NULL);
	json_object_object_add(o, "tmpfs_bytes", json_object_new_uint64(run->limits.tmpfs));
	json_object_object_add(o, "via", json_object_new_string(run->limits_via));
	json_object_object_add(hit, "pids", json_object_new_uint64(run->hits.pids));
	json_object_object_add(hit, "memory", json_object_new_uint64(run->hits.memory));
	json_object_object_add(hit, "oom_kills", json_object_new_uint64(run->hits.oom_kills));
	json_object_object_add(o, "hit", hit);
	return o;
}

static json_object *visibility_json(const struct probe_ctx *p)
{
	const struct sbt_backend_caps *caps = sbt_backend_caps(p->backend);
	json_object *vis = json_object_new_object();

	json_object_object_add(
		vis, "exec",
		json_object_new_string(sbt_backend_vis_exec(caps, p->run.exec_stream[0] != '\0')));
	json_object_object_add(
		vis, "network",
		json_object_new_string(!caps->egress_on_tap && p->o->egress_mode == SBT_EGRESS_OFF
					       ? "none"
					       : sbt_backend_vis_network(caps)));
	/* the VM's accelerator, once it was started */
	if (caps->guest && p->run.accel[0])
		json_object_object_add(vis, "accel", json_object_new_string(p->run.accel));
	if (caps->guest && p->run.boot[0]) {
		json_object *boot = json_object_new_object();

		json_object_object_add(boot, "mode", json_object_new_string(p->run.boot));
		json_object_object_add(boot, "why",
				       p->run.boot_why[0] ? json_object_new_string(p->run.boot_why)
							  : NULL);
		json_object_object_add(vis, "boot", boot);
	}
	return vis;
}

static json_object *ms_json(uint64_t from_ns, uint64_t to_ns)
{
	char buf[32];
	double ms;

	if (!from_ns || to_ns < from_ns)
		return NULL;
	ms = (double)(to_ns - from_ns) / 1e6;
	snprintf(buf, sizeof(buf), "%.1f", ms);
	return json_object_new_double_s(ms, buf);
}

/*
 * Start-up, stage by stage: the plan (options, repo digest, base images),
 * the sandbox's clone, the trace's BPF load and attach (while the sandbox
 * sets itself up: namespaces, user namespace, overlay, mounts), the wait
 * for that set-up once attached (0 when it was done first), and the
 * release to the first exec (the go pipe, seccomp, the exec).
 */
static json_object *start_json(const struct probe_ctx *p)
{
	uint64_t t0 = p->t0_ms * 1000000ull;
	json_object *s = json_object_new_object();

	json_object_object_add(s, "plan", ms_json(t0, p->ts_run));
	json_object_object_add(s, "sandbox_clone", ms_json(p->ts_run, p->ts_cloned));
	json_object_object_add(s, "bpf_load_attach", ms_json(p->ts_trace, p->ts_attached));
	json_object_object_add(s, "sandbox_setup_wait", ms_json(p->ts_attached, p->ts_ready));
	json_object_object_add(s, "release_to_first_exec",
			       ms_json(p->go_epoch_ns, p->sink.first_exec_ts));
	return s;
}

static json_object *timings_json(const struct probe_ctx *p)
{
	json_object *t = json_object_new_object();
	uint64_t first_exec = p->sink.first_exec_ts;
	const struct sbt_sandbox_run *run = &p->run;

	json_object_object_add(t, "total", json_object_new_uint64(sbt_mono_ms() - p->t0_ms));
	/* probe start to the workload's first exec, as the kernel timestamped it */
	if (first_exec > p->t0_epoch_ns) {
		char buf[32];
		double ms = (double)(first_exec - p->t0_epoch_ns) / 1e6;

		snprintf(buf, sizeof(buf), "%.1f", ms);
		json_object_object_add(t, "to_first_exec", json_object_new_double_s(ms, buf));
	} else {
		json_object_object_add(t, "to_first_exec", NULL);
	}
	json_object_object_add(t, "start", start_json(p));
	json_object_object_add(t, "build", json_object_new_uint64(p->build_ms));
	json_object_object_add(t, "boot", json_object_new_uint64(p->boot.ms));
	/* the VM: go to the guest's SBT-GUEST-READY (kernel boot and init) */
	if (sbt_backend_caps(p->backend)->console && run->con.ready_ns && run->go_ns &&
	    run->con.ready_ns > run->go_ns)
		json_object_object_add(
			t, "vm_boot",
			json_object_new_uint64((run->con.ready_ns - run->go_ns) / 1000000));
	else
		json_object_object_add(t, "vm_boot", NULL);
	if (p->build.in_vm) {
		json_object *im = json_object_new_object();

		json_object_object_add(im, "count", json_object_new_int(p->build.vm_images));
		json_object_object_add(im, "copy", json_object_new_uint64(p->build.vm_copy_ms));
		json_object_object_add(im, "bytes",
				       json_object_new_uint64(p->build.vm_store_bytes));
		json_object_object_add(t, "vm_images", im);
		json_object_object_add(t, "vm_build", json_object_new_uint64(p->build.vm_build_ms));
	}
	return t;
}

json_object *probe_report(const struct probe_ctx *p, const struct sbt_build_plan *plan,
			  struct probe_verdict *v)
{
	json_object *r = json_object_new_object(), *cache = json_object_new_object();

	json_object_object_add(r, "probe", json_object_new_string(PROBE_NAME));
	json_object_object_add(r, "version", json_object_new_string(SBTRACE_VERSION));
	json_object_object_add(r, "repo", sbt_json_string(p->o->repo));
	json_object_object_add(r, "command", command_json(plan));
	json_object_object_add(r, "inputs", inputs_json(plan));
	json_object_object_add(cache, "key", json_object_new_string(p->key));
	json_object_object_add(cache, "hit", json_object_new_boolean(false));
	json_object_object_add(r, "cache", cache);
	json_object_object_add(r, "confidence", json_object_new_string(v->confidence));
	json_object_object_add(r, "reason", v->reason ? json_object_new_string(v->reason) : NULL);
	json_object_object_add(r, "verdict", json_object_new_string(v->verdict));
	json_object_object_add(r, "shell_invocation", shells_json(p));
	json_object_object_add(r, "boot", probe_boot_json(p));
	json_object_object_add(r, "egress", egress_json(p, p->o->egress_mode));
	json_object_object_add(r, "warnings", v->warnings);
	v->warnings = NULL;
	json_object_object_add(r, "visibility", visibility_json(p));
	json_object_object_add(r, "limits", limits_json(&p->run));
	json_object_object_add(r, "timings_ms", timings_json(p));
	json_object_object_add(r, "migration", NULL); /* --migrate's, after the report (main.c) */
	return r;
}
