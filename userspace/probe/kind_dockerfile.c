// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The Dockerfile build kind: the final stage (or --target) built by podman
 * (or docker) on the podman backend, then booted as the image it made. The
 * engine runs on the host, in the sandbox's cgroup (no namespaces of ours:
 * it makes its own), and puts every RUN step's container in <sandbox
 * cgroup>/build (--cgroup-parent; runc's cgroupfs manager mirrors it into
 * the cgroup v2 hierarchy), so the trace sees them. Its build context is a
 * copy of the repo in a directory of the probe's (CONTEXT_PARENT), never the
 * repo: nothing a RUN step does through a bind mount reaches the repo, and
 * no symlink leads out of it (a repo with one is refused, as RUN flags the
 * probe cannot confine are). The engine's parts are engine.c's.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "dockerfile/dockerfile.h"
#include "kind.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "lib/treecopy.h"

#define CONTEXT_PARENT "/var/tmp" /* on disk, not in memory as /tmp and /run may be */

/* Where the copies go: $SBTRACE_CONTEXT_DIR (an absolute path), else CONTEXT_PARENT. */
static const char *context_parent(void)
{
	const char *d = getenv("SBTRACE_CONTEXT_DIR");

	return d && d[0] == '/' ? d : CONTEXT_PARENT;
}

#define STAGE_LIST_MAX 256 /* stage names listed in an error message */

static const char *const df_inputs[] = { "Dockerfile", NULL };

/* Docker's stage-name rule: a letter, then letters, digits, '.', '_', '-'. */
static bool valid_stage_name(const char *t)
{
	size_t n = strlen(t);

	if (n == 0 || n >= sizeof(((struct sbt_build_plan *)0)->target))
		return false;
	if (!((t[0] >= 'a' && t[0] <= 'z') || (t[0] >= 'A' && t[0] <= 'Z')))
		return false;
	for (size_t i = 1; i < n; i++) {
		char c = t[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '_' || c == '-'))
			return false;
	}
	return true;
}

/* The named stages of a Dockerfile, for an error message. */
static void stage_list(const struct sbt_dockerfile *df, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int i = 0; i < df->nr_stages; i++) {
		const char *n = df->stages[i].name;
		int w;

		if (!n[0])
			continue;
		if (used + strlen(n) + 8 > len) {
			snprintf(buf + used, len - used, "%s...", used ? ", " : "");
			return;
		}
		w = snprintf(buf + used, len - used, "%s%s", used ? ", " : "", n);
		used += (size_t)w;
	}
}

/* The refusal of a repo with a symlink that leads out of it (the build context's rule). */
static int context_refused(const char *repo, char *err, size_t errlen)
{
	struct sbt_tree_copy st = { 0 };
	char why[512];

	if (sbt_tree_copy(repo, NULL, &st, why, sizeof(why)) != -EXDEV)
		return 0; /* anything else is the copy's to report */
	probe_err(err, errlen,
		  "%s/%s: a symlink to %s, outside the repo: a Dockerfile build's context holds "
		  "none (the engine would read the host through it); make it point inside the "
		  "repo, or remove it",
		  repo, st.escape, st.escape_target);
	return -1;
}

/*
 * 1: the --target stage, else the final stage (the image a container runs);
 * 0: no Dockerfile, or one without FROM; -1: unreadable, unparsable, a bad
 * or missing --target.
 */
static int df_detect(const struct probe_plan_in *in, struct sbt_build_plan *plan, char *err,
		     size_t errlen)
{
	const char *target = in->target, *name = plan->dockerfile; /* sbt_probe_plan set it */
	struct sbt_dockerfile df;
	struct sbt_df_error derr;
	char list[STAGE_LIST_MAX];
	const struct sbt_df_stage *st;
	size_t len;
	char *buf;
	int rc, idx;

	if (target && !valid_stage_name(target)) {
		probe_err(err, errlen,
			  "bad --target '%.64s': a stage name is a letter, then letters, digits, "
			  "'.', '_' or '-' (at most %zu characters)",
			  target, sizeof(plan->target) - 1);
		return -1;
	}
	rc = probe_read_repo_text(in->root, name, &buf, &len, err, errlen);
	if (rc < 0)
		return -1;
	if (rc == 0 && in->file) {
		probe_err(err, errlen,
			  "--file %s: no such regular file in %s (the path is the repo's, as "
			  "`docker build -f` is the context's)",
			  name, in->repo);
		return -1;
	}
	if (rc == 0) {
		if (target) {
			probe_err(err, errlen, "no Dockerfile in %s (needed for --target '%s')",
				  in->repo, target);
			return -1;
		}
		probe_why(plan, "no Dockerfile, so ");
		return 0;
	}
	rc = sbt_dockerfile_parse(buf, len, NULL, &df, &derr);
	free(buf);
	if (rc < 0) {
		probe_err(err, errlen, "%s:%u: %s", name, derr.line, derr.msg);
		sbt_dockerfile_free(&df);
		return -1;
	}
	idx = target ? sbt_dockerfile_stage_index(&df, target) : df.nr_stages - 1;
	if (idx < 0 && target) {
		stage_list(&df, list, sizeof(list));
		probe_err(err, errlen, "%s has no stage '%s' (stages: %s)", name, target,
			  list[0] ? list : "none named");
		sbt_dockerfile_free(&df);
		return -1;
	}
	if (df.nr_stages == 0 && in->file) {
		probe_err(err, errlen, "--file %s: no FROM in it, so no image to build", name);
		sbt_dockerfile_free(&df);
		return -1;
	}
	if (df.nr_stages == 0) {
		probe_why(plan, "a Dockerfile without FROM, so ");
		sbt_dockerfile_free(&df);
		return 0;
	}
	/* before anything runs: what the host engine's RUN steps could do outside the sandbox */
	if (sbt_dockerfile_unconfined_run(&df, idx, &derr) < 0) {
		probe_err(err, errlen, "%s:%u: %s", name, derr.line, derr.msg);
		sbt_dockerfile_free(&df);
		return -1;
	}
	if (context_refused(in->root, err, errlen) < 0) {
		sbt_dockerfile_free(&df);
		return -1;
	}
	st = &df.stages[idx];
	snprintf(plan->target, sizeof(plan->target), "%s", st->name);
	if (target)
		probe_why(plan, "%s: stage '%s' (--target, line %u)", name, st->name, st->line);
	else
		probe_why(plan, "%s: the final stage%s%s%s (line %u), the image a container runs",
			  name, st->name[0] ? " '" : "", st->name, st->name[0] ? "'" : "",
			  st->line);
	sbt_dockerfile_free(&df);
	return 1;
}

/* Every RUN of the stages the build runs, the target's ENTRYPOINT/CMD and HEALTHCHECK. */
static int df_sites(const struct probe_kind *k, struct probe_ctx *p,
		    const struct sbt_build_plan *plan, bool boot_start, bool *has_start, char *err,
		    size_t errlen)
{
	struct sbt_dockerfile df;
	struct sbt_df_error derr;
	char *buf;
	size_t len;
	int target, ret = -1;

	snprintf(p->sites.dockerfile, sizeof(p->sites.dockerfile), "%s", plan->dockerfile);
	if (probe_read_repo_text(p->o->repo, plan->dockerfile, &buf, &len, err, errlen) <= 0)
		return -1;
	if (sbt_dockerfile_parse(buf, len, NULL, &df, &derr) == 0) {
		target = plan->target[0] ? sbt_dockerfile_stage_index(&df, plan->target)
					 : df.nr_stages - 1;
		ret = probe_sites_dockerfile(&p->sites, &df, target);
		if (!ret && p->sites.boot_other >= 0)
			p->boot.line = p->sites.v[p->sites.boot_other].line;
		p->boot.has_healthcheck = !ret && sbt_dockerfile_healthcheck(&df, target);
		if (ret)
			probe_err(err, errlen, "out of memory");
	} else {
		probe_err(err, errlen, "%s:%u: %s", plan->dockerfile, derr.line, derr.msg);
	}
	sbt_dockerfile_free(&df);
	free(buf);
	return ret ? -1 : 0;
}

/* --file's Dockerfile, when it is not "Dockerfile" (an input of every kind): its digest. */
static int df_more_inputs(const char *root, struct sbt_build_plan *plan, char *err, size_t errlen)
{
	if (strcmp(plan->dockerfile, "Dockerfile") == 0)
		return 0;
	return probe_input_file(root, plan->dockerfile, plan, err, errlen);
}

/*
 * The engine and the base images (their ids are inputs) before the key; an
 * ENTRYPOINT the final image inherits from its base image is a site of its own.
 */
static int df_prepare(struct probe_ctx *p, struct sbt_build_plan *plan)
{
	const struct probe_df *df = &p->build.df;
	const char *entry[DF_MAX_ENTRY];

	if (probe_engine_prepare(p->o, plan, &p->build, p->boot_err, sizeof(p->boot_err)) < 0) {
		p->boot_reason = p->build.fail_reason; /* base_image_missing */
		return -1;
	}
	/* the microVM's engine is the guest's podman, with the base images of the host's */
	p->build.in_vm = sbt_backend_caps(p->backend)->guest;
	if (p->build.in_vm && p->build.eng != ENGINE_PODMAN) {
		snprintf(p->boot_err, sizeof(p->boot_err),
			 "a Dockerfile build in the microVM needs podman on the host (the guest "
			 "runs the host's, and takes the base images from its store); install "
			 "it with 'make deps', or use --backend podman for docker");
		return -1;
	}
	for (int i = 0; i < df->entry_argc; i++)
		entry[i] = df->entry[i];
	if (df->entry_argc &&
	    probe_sites_base_entry(&p->sites, df->images[df->entry_image], entry, df->entry_argc)) {
		snprintf(p->boot_err, sizeof(p->boot_err), "out of memory");
		return -1;
	}
	return 0;
}

/* Where the RUN steps' containers go: below the sandbox's cgroup (sbtrace/NAME). */
static void build_parent(const struct probe_ctx *p, char *buf, size_t len)
{
	snprintf(buf, len, "/sbtrace/%s/build", p->name);
}

/* What the copy left out or changed, on stderr once each (the build sees the copy). */
static void context_notes(const struct sbt_tree_copy *st)
{
	if (st->skipped)
		sbt_log("build context: %llu special file%s left out (device nodes, FIFOs, "
			"sockets are not copied), the first: %s",
			(unsigned long long)st->skipped, st->skipped == 1 ? "" : "s",
			st->first_skipped);
	if (st->setid)
		sbt_log("build context: set-uid/set-gid bits dropped from %llu entr%s, the "
			"first: %s",
			(unsigned long long)st->setid, st->setid == 1 ? "y" : "ies",
			st->first_setid);
}

/*
 * The build context: the repo copied into a directory of ours (0700,
 * removed by probe_engine_cleanup). SIGINT and SIGTERM wait while it is
 * made: one that comes ends the copy, which is removed before it acts.
 * 0, or -1 with boot_err.
 */
static int df_context(struct probe_ctx *p, struct sbt_build_plan *plan)
{
	struct probe_build *b = &p->build;
	struct sbt_tree_copy st = { .stop_on_signal = true };
	const char *parent = context_parent();
	uint64_t t0 = sbt_mono_ms();
	sigset_t block, old;
	char err[512], dest[sizeof(b->context) + 16];
	int rc, n;

	n = snprintf(b->context, sizeof(b->context), "%s/sbtrace-ctx-%d.XXXXXX", parent,
		     (int)getpid());
	if (n >= (int)sizeof(b->context) || !mkdtemp(b->context)) {
		snprintf(p->boot_err, sizeof(p->boot_err),
			 "cannot make the build context's directory in %.200s: %s", parent,
			 n >= (int)sizeof(b->context) ? "path too long" : strerror(errno));
		b->context[0] = '\0';
		return -1;
	}
	/* the microVM's workspace holds more than the context: the copy is its context/ */
	snprintf(dest, sizeof(dest), "%s%s", b->context, b->in_vm ? "/context" : "");
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_BLOCK, &block, &old);
	rc = b->in_vm && mkdir(dest, 0755) ? -errno : 0;
	if (rc)
		snprintf(err, sizeof(err), "mkdir %.300s: %s", dest, strerror(-rc));
	else
		rc = sbt_tree_copy(p->o->repo, dest, &st, err, sizeof(err));
	if (rc < 0) {
		sbt_tree_remove(b->context);
		b->context[0] = '\0';
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (rc < 0) {
		snprintf(p->boot_err, sizeof(p->boot_err),
			 "cannot copy the repo as the build context: %.400s", err);
		return -1;
	}
	context_notes(&st);
	probe_why(plan, "; build context: a copy of the repo (%llu files, %llu KiB, %llu ms)",
		  (unsigned long long)st.files, (unsigned long long)(st.bytes >> 10),
		  (unsigned long long)(sbt_mono_ms() - t0));
	probe_progress(p, "build context: the repo copied to %s", b->context);
	return 0;
}

static int df_argv(struct probe_ctx *p, struct sbt_build_plan *plan)
{
	char cg_parent[SBT_SANDBOX_NAME_MAX + 32];

	if (df_context(p, plan) < 0)
		return -1;
	if (p->build.in_vm)
		return probe_vm_build_prepare(p, plan);
	build_parent(p, cg_parent, sizeof(cg_parent));
	/* podman's RUN steps join a namespace of ours; docker's get none */
	if (p->build.eng == ENGINE_PODMAN && probe_net_build_ns(p, &p->build) < 0)
		return -1;
	if (probe_engine_argv(plan, &p->build, p->build.context, cg_parent) < 0) {
		snprintf(p->boot_err, sizeof(p->boot_err), "cannot prepare the %s command",
			 p->build.eng == ENGINE_PODMAN ? "podman" : "docker");
		return -1;
	}
	return 0;
}

/* --cgroup-parent must name a descendant of the sandbox cgroup. */
static int df_started(struct probe_ctx *p)
{
	const char *cg = p->run.cgroup_name;
	char cg_parent[SBT_SANDBOX_NAME_MAX + 32];

	if (p->build.in_vm) { /* the guest's script's console lines, kept apart */
		sbt_vm_console_mark(&p->run.con, p->build.vm_mark);
		return 0;
	}
	build_parent(p, cg_parent, sizeof(cg_parent));
	if (strncmp(cg_parent, cg, strlen(cg)) != 0 || cg_parent[strlen(cg)] != '/') {
		snprintf(p->boot_err, sizeof(p->boot_err),
			 "sandbox cgroup %.200s is not where --cgroup-parent=%s points", cg,
			 cg_parent);
		return -1;
	}
	return 0;
}

/* Every RUN step runs in a container below the sandbox cgroup: were they seen? */
static const char *df_doubt(const struct probe_ctx *p, const struct sbt_build_plan *plan,
			    const char **message)
{
	if (!p->exited || p->build.df.nr_runs == 0 || p->sink.exec_below)
		return NULL;
	*message = "the Dockerfile's RUN steps ran outside the sandbox cgroup (the engine "
		   "ignored --cgroup-parent): their execs were not traced";
	return "exec_not_visible";
}

const struct probe_kind probe_kind_dockerfile = {
	.name = "dockerfile",
	.label = "Dockerfile",
	.looked_for = "a Dockerfile",
	.inputs = df_inputs,
	.more_inputs = df_more_inputs,
	.own_backend = true,
	.in_vm = true,
	.backend = SBT_BACKEND_PODMAN,
	.boots_image = true,
	.detect = df_detect,
	.sites = df_sites,
	.prepare = df_prepare,
	.argv = df_argv,
	.started = df_started,
	.doubt = df_doubt,
};
