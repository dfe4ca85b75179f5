// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * `sbtrace agent`: one set of host-wide hooks, sandboxes added and removed
 * while it runs. Membership lives in the sandbox_cgroups hash map only (the
 * trace's in-place fast table cannot change under a running program), so a
 * host exec costs one ancestor-id helper and one lookup per distinct
 * sandbox level, however many sandboxes there are.
 *
 * Not missing a new sandbox's first exec:
 *  - a shim sandbox's workload waits for "attached" on its FIFO: the agent
 *    registers the cgroup in the map first, then answers;
 *  - a child cgroup of --cgroup-parent is put in the map by the BPF program
 *    on cgroup:cgroup_mkdir (agent.bpf.c), before the directory is visible;
 *    the agent learns it from inotify (or an exec record of its slot).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/utsname.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "agent.h"
#include "agent_int.h"
#include "lib/clock.h"
#include "event/decode.h"
#include "loader.h"
#include "exec/proctab.h"
#include "sandbox/sandbox.h"
#include "sbtrace.h"
#include "sbtrace.skel.h"
#include "exec/shell.h"
#include "exec/shellagg.h"
#include "exec/shellid.h"
#include "event/sink.h"

static void emit(struct agent *a, struct sbt_event *ev, const struct sbt_target *sb)
{
	ev->sandbox = sb;
	sbt_sinks_emit(&a->o->trace, ev);
}

static void emit_lost(struct agent *a, const struct sbt_target *sb, const struct sbt_ev_lost *l)
{
	struct sbt_event ev = { .kind = SBT_EV_LOST, .ts = sbt_now_epoch_ns() };

	ev.lost = *l;
	emit(a, &ev, sb);
}

static void rebuild_names(struct agent *a)
{
	size_t n = 0;

	for (uint32_t i = 0; i < a->max; i++)
		if (a->slots[i])
			a->names[n++] = a->slots[i]->sb.name;
	a->procfs.nr_targets = n;
}

/* The sandbox of cgroup id `id`, if the agent knows it. */
static struct agent_sb *find_by_id(struct agent *a, uint64_t id)
{
	for (uint32_t i = 0; i < a->max; i++)
		if (a->slots[i] && a->slots[i]->sb.cgroup_id == id)
			return a->slots[i];
	return NULL;
}

/* The sandbox's level among the hash levels the programs look at. 0 or -E2BIG. */
static int ensure_level(struct agent *a, uint32_t level)
{
	struct sbtrace_bpf *skel = a->plan.skel;
	uint32_t n = skel->bss->nr_hash_levels;

	for (uint32_t i = 0; i < n; i++)
		if (skel->bss->hash_levels[i] == level)
			return 0;
	if (n >= SBT_MAX_HASH_LEVELS)
		return -E2BIG;
	skel->bss->hash_levels[n] = level;
	__atomic_store_n(&skel->bss->nr_hash_levels, n + 1, __ATOMIC_RELEASE);
	return 0;
}

/* A slot for the cgroup: the one the mkdir program gave it, else a free one, mapped. */
static int take_slot(struct agent *a, const struct sbt_target *sb, const char **by)
{
	struct sbt_sandbox_key_val v;
	struct sbt_sandbox_stats zero = { 0 };
	uint32_t slot;
	int err;

	if (bpf_map_lookup_elem(a->cgroups_fd, &sb->cgroup_id, &v) == 0 && v.slot < a->max) {
		*by = "cgroup_mkdir";
		return (int)v.slot;
	}
	if (bpf_map_lookup_and_delete_elem(a->free_fd, NULL, &slot))
		return -ENOSPC;
	err = ensure_level(a, sb->level);
	if (!err) /* before it is a member, as the mkdir program does */
		err = sbt_agent_egress_set_mode(&a->eg, slot, a->o->trace.exec.agent_mkdir_mode);
	v.slot = slot;
	v.level = sb->level;
	if (!err && bpf_map_update_elem(a->stats_fd, &slot, &zero, BPF_ANY))
		err = -errno;
	if (!err && bpf_map_update_elem(a->cgroups_fd, &sb->cgroup_id, &v, BPF_ANY))
		err = -errno;
	if (err) {
		bpf_map_update_elem(a->free_fd, NULL, &slot, 0);
		return err;
	}
	*by = "agent";
	return (int)slot;
}

static void release_slot(struct agent *a, struct agent_sb *s)
{
	struct sbt_sandbox_stats zero = { 0 };
	uint32_t slot = s->sb.slot;

	sbt_agent_pol_free(&a->eg, s->pol, slot); /* before the slot can be taken again */
	s->pol = NULL;
	bpf_map_delete_elem(a->cgroups_fd, &s->sb.cgroup_id);
	bpf_map_update_elem(a->stats_fd, &slot, &zero, BPF_ANY);
	bpf_map_update_elem(a->free_fd, NULL, &slot, 0);
}

/* Tell a waiting shim we are attached (its workload then runs). True if one waited. */
static bool release_shim(struct agent *a, const char *name)
{
	char fifo[PATH_MAX], line[32];
	int fd, n = snprintf(line, sizeof(line), "attached %d\n", (int)getpid());
	bool ok;

	if ((size_t)snprintf(fifo, sizeof(fifo), "%s/%s.attach", a->o->state_dir, name) >=
	    sizeof(fifo))
		return false;
	fd = open(fifo, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return false; /* ENXIO/ENOENT: nobody waits (--no-wait, or it went on) */
	ok = write(fd, line, (size_t)n) == n;
	if (!ok)
		fprintf(stderr, "sbtrace agent: handshake with %s: %s\n", fifo, strerror(errno));
	close(fd);
	return ok;
}

/*
 * Register the sandbox of cgroup `path` (a shim's when shim_name is set).
 * 0 (also when already known), or -errno after a message.
 */
static int add_sandbox(struct agent *a, const char *path, const char *source,
		       const struct sbt_sandbox_state *shim)
{
	const char *shim_name = shim ? shim->name : NULL;
	struct sbt_event ev = { .kind = SBT_EV_SANDBOX_ADDED };
	struct agent_sb *s = calloc(1, sizeof(*s));
	int slot, err;

	if (!s)
		return -ENOMEM;
	if (sbt_target_from_cgroup(path, &s->sb) < 0 || find_by_id(a, s->sb.cgroup_id)) {
		free(s);
		return 0; /* gone already (a message said so), or known */
	}
	s->agg = sbt_shellagg_new();
	slot = s->agg ? take_slot(a, &s->sb, &s->registered_by) : -ENOMEM;
	if (slot < 0) {
		fprintf(stderr, "sbtrace agent: cannot register sandbox %s: %s%s\n", s->sb.name,
			strerror(-slot),
			slot == -ENOSPC	 ? "; raise --max-sandboxes"
			: slot == -E2BIG ? "; sandboxes sit at too many cgroup levels"
					 : "");
		sbt_shellagg_free(s->agg);
		free(s);
		return slot;
	}
	s->sb.slot = (uint32_t)slot;
	s->sb.origin = strcmp(source, "shim") == 0 ? "sandbox" : "cgroup";
	/* a microVM: its execs are in the guest kernel (whose stream only `sbtrace trace` follows) */
	s->sb.exec_hidden = shim && strcmp(shim->backend, "qemu") == 0;
	s->source = source;
	err = shim ? sbt_agent_pol_from_state(shim, a->o->state_dir, &s->pol)
		   : sbt_agent_pol_from_dir(&a->eg, s->sb.name, strrchr(path, '/') + 1, &s->pol);
	/* in place before the answer; else not registered (a shim: not released) */
	if (err || sbt_agent_pol_apply(&a->eg, s->pol, s->sb.slot, &s->sb, shim != NULL)) {
		fprintf(stderr,
			"sbtrace agent: sandbox %s: its egress policy cannot be enforced: "
			"not registered%s\n",
			s->sb.name, shim ? ", its workload not released" : "");
		release_slot(a, s);
		sbt_shellagg_free(s->agg);
		free(s);
		return -EPERM;
	}
	if (shim_name)
		snprintf(s->sb.pin_name, sizeof(s->sb.pin_name), "%s", shim_name);
	a->slots[slot] = s;
	a->nr++;
	a->added++;
	rebuild_names(a);
	ev.ts = sbt_now_epoch_ns();
	ev.sandbox_change.source = source;
	ev.sandbox_change.registered_by = s->registered_by;
	sbt_agent_pol_describe(s->pol, &ev.sandbox_change);
	/* registered before the answer: the workload's first exec finds it */
	ev.sandbox_change.released = shim_name && release_shim(a, shim_name);
	emit(a, &ev, &s->sb);
	return 0;
}

/* Emit EventsLost for ring-buffer drops the kernel counted since the last look. */
static void report_drops(struct agent *a, struct agent_sb *s)
{
	struct sbt_sandbox_stats st;
	struct sbt_ev_lost ev;
	uint32_t slot = s->sb.slot;

	if (bpf_map_lookup_elem(a->stats_fd, &slot, &st))
		return;
	s->kernel_execs = st.execs;
	s->kernel_lost = st.lost;
	if (sbt_lost_since(st.egress_lost, &s->eg_lost_reported, "egress", &ev))
		emit_lost(a, &s->sb, &ev);
	if (sbt_lost_since(st.lost, &s->lost_reported, "exec", &ev))
		emit_lost(a, &s->sb, &ev);
}

static void emit_folded(void *arg, const struct sbt_egress *rec);

/* A sandbox's final events: what never arrived, its shells; its totals into t. */
static void final_events(struct agent *a, struct agent_sb *s, struct sbt_target_totals *t)
{
	struct sbt_event ev = { .kind = SBT_EV_SUMMARY };
	uint64_t missing;

	report_drops(a, s);
	sbt_agent_egress_flush_folds(&a->eg, s->sb.slot, emit_folded, a);
	missing = s->kernel_execs > s->received ? s->kernel_execs - s->received : 0;
	if (missing > s->lost_reported)
		emit_lost(a, &s->sb,
			  &(struct sbt_ev_lost){ .lost = missing - s->lost_reported,
						 .lost_total = missing,
						 .has_total = true,
						 .reason = a->decode_errors ? "decode_error"
									    : "not_received",
						 .kind = "exec" });
	memset(t, 0, sizeof(*t));
	t->execs = s->kernel_execs;
	t->received = s->received;
	t->lost = missing;
	t->first_exec_ts = s->first_exec_ts;
	t->complete = sbt_completeness_of(t, !s->sb.exec_hidden, a->decode_errors);
	ev.ts = sbt_now_epoch_ns();
	ev.summary.agg = s->agg;
	ev.summary.complete = t->complete;
	ev.summary.exec_visible = !s->sb.exec_hidden;
	emit(a, &ev, &s->sb);
}

/* The sandbox's cgroup is gone: nothing more can come from it. */
static void remove_sandbox(struct agent *a, struct agent_sb *s)
{
	struct sbt_event ev = { .kind = SBT_EV_SANDBOX_REMOVED };
	struct sbt_target_totals t;

	ring_buffer__consume(a->rb); /* its records are all in the buffer by now */
	final_events(a, s, &t);
	ev.ts = sbt_now_epoch_ns();
	ev.sandbox_change.source = s->source;
	ev.sandbox_change.totals = &t;
	release_slot(a, s); /* free before it is said: a reader may reuse it at once */
	emit(a, &ev, &s->sb);
	a->slots[s->sb.slot] = NULL;
	a->nr--;
	a->removed++;
	rebuild_names(a);
	sbt_shellagg_free(s->agg);
	free(s);
}

static void check_gone(struct agent *a)
{
	for (uint32_t i = 0; i < a->max; i++)
		if (a->slots[i] && access(a->slots[i]->sb.path, F_OK) != 0 && errno == ENOENT)
			remove_sandbox(a, a->slots[i]);
}

/* A state file NAME.json appeared: its sandbox. */
static void add_shim(struct agent *a, const char *file)
{
	struct sbt_sandbox_state st;
	char name[SBT_SANDBOX_NAME_MAX + 1], err[256];
	size_t n = strlen(file);

	if (file[0] == '.' || n <= 5 || n - 5 > SBT_SANDBOX_NAME_MAX ||
	    strcmp(file + n - 5, ".json") != 0)
		return;
	memcpy(name, file, n - 5);
	name[n - 5] = '\0';
	if (sbt_state_read(a->o->state_dir, name, &st, err, sizeof(err))) {
		fprintf(stderr, "sbtrace agent: shim sandbox %s: %s\n", name, err);
		return;
	}
	/* a microVM: the backend, whatever its guest makes visible */
	if (strcmp(st.backend, "qemu") == 0 && st.egress_mode[0]) {
		/* its guest's traffic passes the tap, not a socket hook: unenforceable here */
		fprintf(stderr,
			"sbtrace agent: shim sandbox %s runs in a microVM with an egress policy "
			"the agent cannot enforce (it does not watch taps): not released; run "
			"'sbtrace trace --sandbox %s' with its policy instead\n",
			name, name);
		return;
	}
	if (strcmp(st.backend, "qemu") == 0)
		fprintf(stderr,
			"sbtrace agent: shim sandbox %s runs in a microVM: its execs are not "
			"visible to the agent (%s); its tap is not watched by the agent\n",
			name,
			st.exec_stream[0] ? "its guest streams them to 'sbtrace trace --sandbox'"
					  : "the guest runs no agent");
	add_sandbox(a, st.cgroup_path, "shim", &st);
}

static void scan_dir(struct agent *a, const char *dir, int parent_idx)
{
	DIR *d = opendir(dir);
	char path[PATH_MAX];

	if (!d)
		return;
	for (struct dirent *e; (e = readdir(d));) {
		if (e->d_name[0] == '.')
			continue;
		if (parent_idx < 0) {
			add_shim(a, e->d_name);
			continue;
		}
		if (e->d_type != DT_DIR)
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) < sizeof(path))
			add_sandbox(a, path, "cgroup_parent", NULL);
	}
	closedir(d);
}

static void rescan(struct agent *a)
{
	for (int i = 0; i < a->o->nr_parents; i++)
		scan_dir(a, a->parent[i].path, i);
	if (a->o->state_dir)
		scan_dir(a, a->o->state_dir, -1);
}

static void handle_inotify(struct agent *a)
{
	char buf[8192] __attribute__((aligned(__alignof__(struct inotify_event))));
	bool gone = false;
	ssize_t n;

	while ((n = read(a->ino, buf, sizeof(buf))) > 0) {
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *e = (const struct inotify_event *)p;

			p += sizeof(*e) + e->len;
			if (e->mask & IN_Q_OVERFLOW) {
				rescan(a);
				gone = true;
				continue;
			}
			if (e->mask & (IN_DELETE | IN_MOVED_FROM)) {
				gone = true;
				continue;
			}
			if (!e->len)
				continue;
			if (e->wd == a->wd_state) {
				add_shim(a, e->name);
				continue;
			}
			for (int i = 0; i < a->o->nr_parents; i++) {
				char path[PATH_MAX];

				if (e->wd != a->wd_parent[i] || !(e->mask & IN_ISDIR))
					continue;
				if ((size_t)snprintf(path, sizeof(path), "%s/%s", a->parent[i].path,
						     e->name) < sizeof(path))
					add_sandbox(a, path, "cgroup_parent", NULL);
			}
		}
	}
	if (gone)
		check_gone(a);
}

static void handle_exec(struct agent *a, const void *data, size_t size)
{
	struct sbt_event out = { .kind = SBT_EV_EXEC };
	struct sbt_ancestor anc[SBT_MAX_ANCESTORS];
	struct sbt_shell_class cls;
	enum sbt_decode_err derr;
	struct agent_sb *s = NULL;
	struct sbt_exec ev;
	bool is_shell;

	derr = sbt_decode_exec(data, size, &ev, a->argv_store, a->tail);
	if (derr == SBT_DECODE_OK && ev.slot < a->max && !a->slots[ev.slot])
		rescan(a); /* registered at mkdir, not yet seen by inotify */
	if (derr == SBT_DECODE_OK && ev.slot < a->max)
		s = a->slots[ev.slot];
	if (derr == SBT_DECODE_OK && !s)
		derr = SBT_DECODE_BAD_FIELD;
	if (derr != SBT_DECODE_OK) {
		if (!a->decode_errors++)
			a->first_decode_err = derr;
		return;
	}
	s->received++;
	out.ts = sbt_boot_to_epoch_ns(ev.ts_boot_ns, a->boot_offset);
	if (!s->first_exec_ts)
		s->first_exec_ts = out.ts;
	sbt_proctab_rename(a->proc, ev.ppid, ev.parent_comm);
	is_shell = sbt_shell_classify(ev.filename, ev.interp, ev.argv, ev.argc, &cls) ||
		   sbt_shellid_classify(&a->shellid, &ev, &cls);
	if (is_shell) {
		s->shells++;
		out.exec.nanc = sbt_proctab_ancestors(a->proc, ev.ppid, ev.parent_comm, anc,
						      SBT_MAX_ANCESTORS);
		out.exec.anc = anc;
		if (sbt_shellagg_add(s->agg, &cls, ev.pid, ev.filename, ev.argv, ev.argc, anc,
				     out.exec.nanc) < 0)
			fprintf(stderr, "sbtrace agent: out of memory aggregating shells\n");
	}
	sbt_proctab_exec(a->proc, ev.pid, ev.ppid, ev.comm);
	out.exec.rec = &ev;
	out.exec.shell = is_shell ? &cls : NULL;
	emit(a, &out, &s->sb);
}

static void emit_egress(struct agent *a, struct sbt_event *out, struct agent_sb *s)
{
	out->egress.rule = sbt_agent_pol_rule_text(s->pol, out->egress.rec->rule_id);
	out->egress.floor = sbt_egress_floor_text(out->egress.rec->floor_idx);
	emit(a, out, &s->sb);
}

/* A verdict of a sandbox's egress hooks: EgressAllowed/Denied/Observed (counted by /metrics). */
static void handle_egress(struct agent *a, const void *data, size_t size)
{
	struct sbt_event out = { .kind = SBT_EV_EGRESS };
	struct sbt_egress r;
	const struct sbt_egress *rec = &r;
	enum sbt_decode_err derr = sbt_decode_egress(data, size, &r);
	struct agent_sb *s = NULL;

	if (derr == SBT_DECODE_OK && rec->slot < a->max)
		s = a->slots[rec->slot];
	if (derr == SBT_DECODE_OK && !s)
		derr = SBT_DECODE_BAD_FIELD;
	if (derr != SBT_DECODE_OK) {
		if (!a->decode_errors++)
			a->first_decode_err = derr;
		return;
	}
	out.ts = sbt_boot_to_epoch_ns(rec->ts_boot_ns, a->boot_offset);
	out.egress.rec = rec;
	emit_egress(a, &out, s);
}

/* The tail of a folded key (sbt_agent_egress_flush_folds), now. */
static void emit_folded(void *arg, const struct sbt_egress *rec)
{
	struct agent *a = arg;
	struct sbt_event out = { .kind = SBT_EV_EGRESS, .ts = sbt_now_epoch_ns() };

	out.egress.rec = rec;
	if (rec->slot < a->max && a->slots[rec->slot])
		emit_egress(a, &out, a->slots[rec->slot]);
}

static int handle_record(void *ctx, void *data, size_t size)
{
	struct agent *a = ctx;
	int t = sbt_record_type(data, size);

	if (t == SBT_REC_EXEC)
		handle_exec(a, data, size);
	else if (t == SBT_REC_EGRESS)
		handle_egress(a, data, size);
	else if (!a->decode_errors++)
		a->first_decode_err = SBT_DECODE_BAD_FIELD;
	return 0;
}

static void fill_runtime(struct agent *a, struct sbt_metrics_runtime *rt)
{
	memset(rt, 0, sizeof(*rt));
	rt->version = SBTRACE_VERSION;
	rt->abi = SBT_ABI_VERSION;
	rt->exec_mode = a->plan.exec.mode;
	rt->start_time_seconds = a->start_epoch;
	rt->attach_duration_seconds = (double)a->attach_ms / 1000.0;
	rt->targets = a->nr;
	rt->sandboxes_unregistered = a->plan.skel->bss->agent_mkdir_no_slot;
	sbt_agent_obs_fill(&a->obs, rt);
}

static char *render_metrics(void *arg, size_t *len)
{
	struct agent *a = arg;
	struct sbt_metrics_runtime rt;

	fill_runtime(a, &rt);
	return sbt_metrics_render_str(a->o->metrics, &rt, len);
}

static void write_metrics_file(struct agent *a)
{
	size_t len = 0;
	char *text;
	int err;

	if (!a->o->metrics_file)
		return;
	text = render_metrics(a, &len);
	err = text ? sbt_metrics_write_file(a->o->metrics_file, text, len) : -ENOMEM;
	if (err)
		fprintf(stderr, "sbtrace agent: --metrics-file %s: %s\n", a->o->metrics_file,
			strerror(-err));
	free(text);
}

static void emit_stats(struct agent *a)
{
	struct sbt_event ev = { .kind = SBT_EV_STATS, .ts = sbt_now_epoch_ns() };
	struct sbt_stats_sandbox *sbs = calloc(a->nr ? a->nr : 1, sizeof(*sbs));
	uint32_t n = 0;

	if (!sbs)
		return;
	for (uint32_t i = 0; i < a->max && n < a->nr; i++) {
		struct agent_sb *s = a->slots[i];

		if (!s)
			continue;
		sbs[n++] = (struct sbt_stats_sandbox){ .name = s->sb.name,
						       .execs = s->kernel_execs,
						       .received = s->received,
						       .lost = s->kernel_lost,
						       .shells = s->shells };
	}
	ev.stats.uptime_ms = sbt_mono_ms() - a->start_ms;
	ev.stats.ringbuf_pending_bytes = sbt_agent_obs_pending(&a->obs);
	ev.stats.ringbuf_size_bytes = a->o->trace.exec.ringbuf_bytes;
	ev.stats.decode_errors = a->decode_errors;
	ev.stats.sandboxes_added = a->added;
	ev.stats.sandboxes_removed = a->removed;
	ev.stats.sandboxes_unregistered = a->plan.skel->bss->agent_mkdir_no_slot;
	ev.stats.targets = sbs;
	ev.stats.nr = n;
	emit(a, &ev, NULL);
	free(sbs);
}

/* ---- set-up --------------------------------------------------------------------- */

static struct agent *agent_new(struct sbt_agent_opts *o)
{
	struct agent *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	a->o = o;
	a->max = o->max_sandboxes;
	a->ino = -1;
	a->wd_state = -1;
	a->obs.stats_fd = -1;
	a->eg.dir_fd = -1;
	a->eg.mode_fd = -1;
	for (int i = 0; i < SBT_AGENT_MAX_PARENTS; i++)
		a->wd_parent[i] = -1;
	a->slots = calloc(a->max, sizeof(struct agent_sb *));
	a->names = calloc(a->max, sizeof(*a->names));
	a->argv_store = calloc(SBT_ARGV_MAX_ARGS, sizeof(*a->argv_store));
	a->tail = malloc(SBT_ARGV_CAP + 1);
	sbt_shellid_scan(&a->shellid, NULL);
	a->procfs.root = "/proc";
	a->procfs.targets = a->names;
	if (a->slots && a->names && a->argv_store && a->tail)
		a->proc = sbt_proctab_new(sbt_proc_lookup_procfs, &a->procfs);
	return a;
}

static void agent_free(struct agent *a)
{
	sbt_http_stop(a->http);
	sbt_agent_obs_free(&a->obs);
	for (uint32_t i = 0; a->slots && i < a->max; i++)
		if (a->slots[i] && a->plan.skel) {
			sbt_agent_pol_free(&a->eg, a->slots[i]->pol, i);
			a->slots[i]->pol = NULL;
		}
	sbt_agent_egress_free(&a->eg);
	bpf_link__destroy(a->mkdir_link);
	ring_buffer__free(a->rb);
	sbt_plan_destroy(&a->plan);
	if (a->ino >= 0)
		close(a->ino);
	for (uint32_t i = 0; a->slots && i < a->max; i++) {
		if (!a->slots[i])
			continue;
		sbt_shellagg_free(a->slots[i]->agg);
		free(a->slots[i]);
	}
	sbt_proctab_free(a->proc);
	free(a->slots);
	free(a->names);
	free(a->argv_store);
	free(a->tail);
	free(a);
}

/* Each --cgroup-parent: in the parents map, its children's level in the programs' levels. */
static int register_parents(struct agent *a)
{
	for (int i = 0; i < a->o->nr_parents; i++) {
		struct sbt_target *p = &a->parent[i];
		uint32_t one = 1;

		if (sbt_target_from_cgroup(a->o->parents[i], p) < 0)
			return SBT_EXIT_USAGE;
		if (ensure_level(a, p->level + 1)) {
			fprintf(stderr,
				"sbtrace agent: --cgroup-parent %s: too many distinct "
				"cgroup levels\n",
				p->name);
			return SBT_EXIT_USAGE;
		}
		if (bpf_map_update_elem(a->parents_fd, &p->cgroup_id, &one, BPF_ANY)) {
			fprintf(stderr, "sbtrace agent: cannot register --cgroup-parent %s: %s\n",
				p->name, strerror(errno));
			return SBT_EXIT_KERNEL;
		}
	}
	return SBT_EXIT_OK;
}

/*
 * The mkdir hook: without it a child cgroup is registered when inotify says
 * so, and its first execs may be missed. Said on stderr and in hooks.
 */
static void attach_mkdir(struct agent *a)
{
	struct sbt_hook_result *res = &a->mkdir_res;
	int fd = bpf_program__fd(a->plan.skel->progs.agent_cgroup_mkdir);

	res->capability = "cgroup_mkdir";
	if (a->o->nr_parents == 0) {
		sbt_hook_record(res, "tp_btf", "disabled", -ENOENT);
		return;
	}
	if (fd < 0 || sbt_hook_disabled("cgroup_mkdir", "tp_btf")) {
		sbt_hook_record(res, "tp_btf", fd < 0 ? "load" : "disabled",
				fd < 0 ? -EOPNOTSUPP : -EPERM);
	} else {
		a->mkdir_link = bpf_program__attach(a->plan.skel->progs.agent_cgroup_mkdir);
		if (a->mkdir_link) {
			sbt_hook_record(res, "tp_btf", "attached", 0);
			res->mode = "tp_btf";
			return;
		}
		sbt_hook_record(res, "tp_btf", "attach", -errno);
	}
	sbt_hook_record(res, "inotify", "attached", 0);
	res->mode = "inotify";
	fprintf(stderr, "sbtrace agent: the cgroup_mkdir hook is not available: child cgroups "
			"are registered when inotify reports them, and their first execs may be "
			"missed\n");
}

static int fill_free_slots(struct agent *a)
{
	for (uint32_t i = 0; i < a->max; i++) {
		if (bpf_map_update_elem(a->free_fd, NULL, &i, 0)) {
			fprintf(stderr, "sbtrace agent: cannot fill the slot queue: %s\n",
				strerror(errno));
			return SBT_EXIT_KERNEL;
		}
	}
	return SBT_EXIT_OK;
}

static int watch_dirs(struct agent *a)
{
	a->ino = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (a->ino < 0) {
		fprintf(stderr, "sbtrace agent: inotify: %s\n", strerror(errno));
		return SBT_EXIT_RUNTIME;
	}
	if (a->o->state_dir) {
		if (mkdir(a->o->state_dir, 0700) && errno != EEXIST) {
			fprintf(stderr, "sbtrace agent: --state-dir %s: %s\n", a->o->state_dir,
				strerror(errno));
			return SBT_EXIT_USAGE;
		}
		a->wd_state = inotify_add_watch(a->ino, a->o->state_dir,
						IN_CREATE | IN_MOVED_TO | IN_DELETE |
							IN_MOVED_FROM | IN_ONLYDIR);
		if (a->wd_state < 0) {
			fprintf(stderr, "sbtrace agent: watching --state-dir %s: %s\n",
				a->o->state_dir, strerror(errno));
			return SBT_EXIT_USAGE;
		}
	}
	for (int i = 0; i < a->o->nr_parents; i++) {
		a->wd_parent[i] = inotify_add_watch(a->ino, a->parent[i].path,
						    IN_CREATE | IN_DELETE | IN_ONLYDIR);
		if (a->wd_parent[i] < 0) {
			fprintf(stderr, "sbtrace agent: watching --cgroup-parent %s: %s\n",
				a->parent[i].path, strerror(errno));
			return SBT_EXIT_USAGE;
		}
	}
	return SBT_EXIT_OK;
}

/* Load, attach, watch: everything before TraceStarted. An exit code. */
static int agent_attach(struct agent *a)
{
	struct sbtrace_bpf *skel;
	struct bpf_program *prog;
	int err = sbt_plan_attach(&a->o->trace.exec, &a->plan);

	if (err) {
		fprintf(stderr,
			"sbtrace agent: cannot attach the exec hook: %s; are you root, on a "
			"Linux >= 5.8 kernel? run 'sbtrace features' for details\n",
			strerror(-err));
		return SBT_EXIT_KERNEL;
	}
	skel = a->plan.skel;
	a->stats_fd = bpf_map__fd(skel->maps.sandbox_stats);
	a->cgroups_fd = bpf_map__fd(skel->maps.sandbox_cgroups);
	a->free_fd = bpf_map__fd(skel->maps.agent_free_slots);
	a->parents_fd = bpf_map__fd(skel->maps.agent_parents);
	a->membership.capability = "membership";
	sbt_hook_record(&a->membership, "ancestor_id", "attached", 0);
	a->membership.mode = "ancestor_id";
	a->rb = ring_buffer__new(bpf_map__fd(skel->maps.events), handle_record, a, NULL);
	if (!a->rb) {
		fprintf(stderr, "sbtrace agent: cannot set up the ring buffer: %s\n",
			strerror(errno));
		return SBT_EXIT_KERNEL;
	}
	err = fill_free_slots(a);
	if (!err)
		err = register_parents(a);
	if (err)
		return err;
	if (sbt_agent_egress_init(&a->eg, skel, a->o->policy_dir, a->parent, a->o->nr_parents))
		return SBT_EXIT_KERNEL;
	attach_mkdir(a);
	sbt_agent_obs_init(&a->obs, bpf_map__fd(skel->maps.events), a->o->trace.exec.ringbuf_bytes);
	bpf_object__for_each_program(prog, skel->obj)
	{
		if (strncmp(bpf_program__name(prog), "exec_", 5) == 0 ||
		    prog == skel->progs.agent_cgroup_mkdir)
			sbt_agent_obs_add_prog(&a->obs, prog);
	}
	if (a->obs.stats_fd < 0)
		fprintf(stderr,
			"sbtrace agent: BPF_ENABLE_STATS refused (%s): program run "
			"times read 0\n",
			strerror(errno));
	return watch_dirs(a);
}

static void emit_started(struct agent *a)
{
	const struct sbt_hook_result *hooks[] = { &a->plan.exec, &a->membership, &a->mkdir_res,
						  &a->eg.res, NULL };
	struct sbt_event ev = { .kind = SBT_EV_STARTED, .ts = sbt_now_epoch_ns() };
	struct utsname u;

	ev.started.opts = &a->o->trace;
	ev.started.hooks = hooks;
	ev.started.kernel = uname(&u) == 0 ? u.release : NULL;
	ev.started.attach_ms = a->attach_ms;
	emit(a, &ev, NULL);
	sbt_sinks_flush(&a->o->trace);
}

/* ---- the loop ---------------------------------------------------------------------- */

/* One tick's housekeeping. NULL to go on, else why the agent stops. */
static const char *tick(struct agent *a, uint64_t *next_gone, uint64_t *next_stats)
{
	const struct sbt_trace_opts *t = &a->o->trace;
	uint64_t now = sbt_mono_ms();
	int err;

	for (uint32_t i = 0; i < a->max; i++)
		if (a->slots[i])
			report_drops(a, a->slots[i]);
	if (now >= *next_gone) {
		check_gone(a);
		*next_gone = now + 250;
	}
	if (a->o->stats_interval_ms && now >= *next_stats) {
		emit_stats(a);
		write_metrics_file(a);
		*next_stats = now + a->o->stats_interval_ms;
	}
	err = sbt_sinks_flush(t);
	if (!err && sbt_hup_pending) {
		sbt_hup_pending = 0;
		err = sbt_sinks_reopen(t);
	}
	if (err) {
		fprintf(stderr, "sbtrace agent: writing output failed: %s\n", strerror(-err));
		return "output_error";
	}
	if (t->duration_ms && now - a->start_ms >= t->duration_ms)
		return "duration";
	return NULL;
}

static const char *agent_loop(struct agent *a)
{
	uint64_t next_gone = 0, next_stats = sbt_mono_ms() + a->o->stats_interval_ms;
	int timeout = a->o->trace.exec.poll_ms ? (int)a->o->trace.exec.poll_ms : 100;
	const char *why = NULL;

	while (!sbt_stop_signal && !why) {
		struct pollfd p[3] = { { .fd = ring_buffer__epoll_fd(a->rb), .events = POLLIN },
				       { .fd = a->ino, .events = POLLIN },
				       { .fd = a->http ? sbt_http_fd(a->http) : -1,
					 .events = POLLIN } };
		int err;

		if (poll(p, 3, timeout) < 0 && errno != EINTR)
			return "error";
		/* new sandboxes first: their records may be in this batch */
		handle_inotify(a);
		err = ring_buffer__consume(a->rb);
		if (err < 0 && err != -EINTR) {
			fprintf(stderr, "sbtrace agent: reading the ring buffer failed: %s\n",
				strerror(-err));
			return "error";
		}
		why = tick(a, &next_gone, &next_stats);
		if (a->http)
			sbt_http_run(a->http);
	}
	return why ? why : "signal";
}

/* After detach: consume until every counted exec arrived or was counted lost. */
static void drain(struct agent *a)
{
	uint64_t deadline = sbt_mono_ms() + 250;

	for (;;) {
		bool pending = false;

		ring_buffer__consume(a->rb);
		for (uint32_t i = 0; i < a->max; i++) {
			struct sbt_sandbox_stats st;
			uint32_t slot = i;

			if (a->slots[i] && bpf_map_lookup_elem(a->stats_fd, &slot, &st) == 0 &&
			    a->slots[i]->received + st.lost < st.execs)
				pending = true;
		}
		if (!pending || sbt_mono_ms() >= deadline)
			break;
		sbt_sleep_ms(2);
	}
}

static void emit_final(struct agent *a, const char *reason)
{
	struct sbt_target_totals *tot = calloc(a->nr ? a->nr : 1, sizeof(*tot));
	const char **names = calloc(a->nr ? a->nr : 1, sizeof(*names));
	struct sbt_event ev = { .kind = SBT_EV_STOPPED };
	uint32_t n = 0;

	for (uint32_t i = 0; tot && names && i < a->max; i++) {
		if (!a->slots[i])
			continue;
		final_events(a, a->slots[i], &tot[n]);
		names[n++] = a->slots[i]->sb.name;
	}
	if (a->decode_errors)
		emit_lost(a, NULL,
			  &(struct sbt_ev_lost){
				  .lost = a->decode_errors,
				  .reason = "decode_error",
				  .detail = sbt_decode_strerror(a->first_decode_err) });
	ev.ts = sbt_now_epoch_ns();
	ev.stopped.reason = reason;
	ev.stopped.duration_ms = sbt_mono_ms() - a->start_ms;
	ev.stopped.decode_errors = a->decode_errors;
	ev.stopped.totals = tot;
	ev.stopped.names = names;
	ev.stopped.nr = n;
	emit(a, &ev, NULL);
	free(tot);
	free(names);
}

int sbt_agent_run(struct sbt_agent_opts *o)
{
	struct agent *a = agent_new(o);
	uint64_t t0 = sbt_mono_ms();
	char why[256];
	const char *reason;
	int ret, err;

	if (!a || !a->proc) {
		fprintf(stderr, "sbtrace agent: out of memory\n");
		if (a)
			agent_free(a);
		return SBT_EXIT_RUNTIME;
	}
	sbt_signals_install(true);
	if (o->policy_dir && sbt_agent_policy_dir_check(o->policy_dir, why, sizeof(why))) {
		fprintf(stderr, "sbtrace agent: --policy-dir %s: %s\n", o->policy_dir, why);
		agent_free(a);
		return SBT_EXIT_USAGE;
	}
	ret = agent_attach(a);
	if (ret == SBT_EXIT_OK && o->metrics_addr) {
		a->http = sbt_http_start(o->metrics_addr, render_metrics, a);
		if (!a->http)
			ret = SBT_EXIT_USAGE;
	}
	if (ret != SBT_EXIT_OK)
		goto out;
	a->boot_offset = sbt_boot_epoch_offset_ns();
	a->start_ms = sbt_mono_ms();
	a->attach_ms = a->start_ms - t0;
	a->start_epoch = (double)sbt_now_epoch_ns() / 1e9;
	emit_started(a);
	rescan(a); /* what is already there (watched since before this scan) */
	reason = agent_loop(a);
	if (strcmp(reason, "error") == 0 || strcmp(reason, "output_error") == 0)
		ret = SBT_EXIT_RUNTIME;
	bpf_link__destroy(a->mkdir_link);
	a->mkdir_link = NULL;
	sbt_plan_detach(&a->plan);
	drain(a);
	emit_final(a, reason);
	write_metrics_file(a);
	err = sbt_sinks_flush(&o->trace);
	if (err && ret == SBT_EXIT_OK) {
		fprintf(stderr, "sbtrace agent: writing output failed: %s\n", strerror(-err));
		ret = SBT_EXIT_RUNTIME;
	}
out:
	agent_free(a);
	return ret;
}
