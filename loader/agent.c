// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * `sbtrace agent`: one set of host-wide hooks, sandboxes added and removed
 * while it runs. Every sandbox is in the sandbox_cgroups hash map (the mkdir
 * program puts a child of --cgroup-parent there itself); the first
 * SBT_FAST_SANDBOXES the agent knows are also in the programs' in-place
 * table, as the trace's are, changed under fast_seq (bpf/common.bpf.h). With
 * every sandbox in the table an exec costs what it costs the trace; beyond
 * it, one ancestor-id helper and one lookup per distinct sandbox level.
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

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "sbtrace.h"
#include "sbtrace.skel.h"
#include "agent_int.h"
#include "egress.h"
#include "cmd/notify.h"
#include "event/sink.h"
#include "event/sink_sub.h"
#include "lib/clock.h"
#include "lib/io.h"
#include "loader.h"
#include "sandbox/pins.h"
#include "sandbox/sandbox.h"
#include "lib/log.h"
#include "lib/peeruid.h"

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
	__atomic_fetch_add(&a->plan.skel->bss->hash_only, 1,
			   __ATOMIC_SEQ_CST); /* as the mkdir program */
	*by = "agent";
	return (int)slot;
}

/*
 * Sandboxes in the hash map only, into the fast table while it has room (no
 * longer counted in hash_only then). From the tick: a new sandbox's policy
 * and its shim's answer do not wait for the iterator that learns its address.
 */
static void fast_fill(struct agent *a)
{
	for (uint32_t i = 0; i < a->max; i++) {
		struct agent_sb *s = a->slots[i];

		if (a->plan.skel->bss->nr_fast >= SBT_FAST_SANDBOXES)
			return;
		if (!s || s->fast || sbt_membership_fast_add(&a->plan, &a->membership, &s->sb))
			continue;
		s->fast = true;
		__atomic_fetch_sub(&a->plan.skel->bss->hash_only, 1, __ATOMIC_SEQ_CST);
	}
}

static void release_slot(struct agent *a, struct agent_sb *s)
{
	struct sbt_sandbox_stats zero = { 0 };
	uint32_t slot = s->sb.slot;
	bool was_fast = s->fast;

	sbt_agent_pol_free(&a->eg, s->pol, slot); /* before the slot can be taken again */
	s->pol = NULL;
	if (was_fast)
		sbt_membership_fast_del(a->plan.skel, s->sb.cgroup_id);
	s->fast = false;
	if (bpf_map_delete_elem(a->cgroups_fd, &s->sb.cgroup_id) == 0 && !was_fast)
		__atomic_fetch_sub(&a->plan.skel->bss->hash_only, 1, __ATOMIC_SEQ_CST);
	bpf_map_update_elem(a->stats_fd, &slot, &zero, BPF_ANY);
	bpf_map_update_elem(a->free_fd, NULL, &slot, 0);
}

/* A podman container's cgroup (libpod-<id>): its name and image, when podman's storage says. */
static void container_of(struct agent *a, struct agent_sb *s)
{
	const char *leaf = strrchr(s->sb.path, '/');

	if (!leaf || !sbt_podman_cgroup_id(leaf + 1, s->cid) ||
	    sbt_podman_meta_lookup(&a->podman, s->cid, s->cname, sizeof(s->cname), s->cimage,
				   sizeof(s->cimage)))
		return;
	s->container = (struct sbt_container){
		.runtime = "podman", .id = s->cid, .name = s->cname, .image = s->cimage
	};
	s->has_container = true;
}

/* Tell a waiting shim we are attached (its workload then runs). True if one waited. */
static bool release_shim(struct agent *a, const char *name)
{
	char fifo[PATH_MAX], line[48];
	/* --persist: our enforcement outlives us (pinned), the shim may wait for the next agent */
	int fd, n = snprintf(line, sizeof(line), "attached %d%s\n", (int)getpid(),
			     a->o->persist ? " handover" : "");
	bool ok;

	if ((size_t)snprintf(fifo, sizeof(fifo), "%s/%s.attach", a->o->state_dir, name) >=
	    sizeof(fifo))
		return false;
	fd = open(fifo, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return false; /* ENXIO/ENOENT: nobody waits (--no-wait, or it went on) */
	ok = write(fd, line, (size_t)n) == n;
	if (!ok)
		sbt_log("handshake with %s: %s", fifo, strerror(errno));
	close(fd);
	return ok;
}

/*
 * Register the sandbox of cgroup `path` (a shim's, of backend caps, when
 * shim is set). 0 (also when already known), or -errno after a message.
 */
static int add_sandbox(struct agent *a, const char *path, const char *source,
		       const struct sbt_sandbox_state *shim, const struct sbt_backend_caps *caps)
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
	slot = take_slot(a, &s->sb, &s->registered_by);
	if (slot < 0) {
		sbt_log("cannot register sandbox %s: %s%s", s->sb.name, strerror(-slot),
			slot == -ENOSPC	 ? "; raise --max-sandboxes"
			: slot == -E2BIG ? "; sandboxes sit at too many cgroup levels"
					 : "");
		free(s);
		return slot;
	}
	s->sb.slot = (uint32_t)slot;
	s->sb.origin = strcmp(source, "shim") == 0 ? "sandbox" : "cgroup";
	/* a microVM: its execs are in the guest kernel (whose stream only `sbtrace trace` follows) */
	s->sb.exec_hidden = caps && !caps->execs_on_host;
	s->source = source;
	if (shim_name) /* its links pinned as they are attached: they outlive this agent */
		snprintf(s->sb.pin_name, sizeof(s->sb.pin_name), "%s", shim_name);
	err = shim ? sbt_agent_pol_from_state(shim, a->o->state_dir, &s->pol)
		   : sbt_agent_pol_from_dir(&a->eg, s->sb.name, strrchr(path, '/') + 1, &s->pol);
	/* in place before the answer; else not registered (a shim: not released) */
	if (err || sbt_agent_pol_apply(&a->eg, s->pol, s->sb.slot, &s->sb, shim != NULL)) {
		sbt_log("sandbox %s: its egress policy cannot be enforced: not registered%s",
			s->sb.name, shim ? ", its workload not released" : "");
		release_slot(a, s);
		free(s);
		return -EPERM;
	}
	/* ours enforce now: a previous agent's pins (its process gone) are unpinned */
	if (shim_name && s->pol && sbt_pin_prune(shim_name) > 0)
		sbt_log("sandbox %s: taken over from the previous agent (its pinned links "
			"unpinned)",
			shim_name);
	err = sbt_session_add(&a->sess.core, &s->sb, s->pol ? &s->pol->cfg : NULL);
	if (err) {
		sbt_log("cannot register sandbox %s: %s", s->sb.name, strerror(-err));
		release_slot(a, s);
		free(s);
		return err;
	}
	a->slots[slot] = s;
	a->added++;
	sbt_session_snapshot(&a->sess.core, s->sb.slot);
	ev.ts = sbt_now_epoch_ns();
	ev.sandbox_change.source = source;
	ev.sandbox_change.registered_by = s->registered_by;
	sbt_agent_pol_describe(&a->eg, s->pol, s->sb.slot, &ev.sandbox_change);
	if (!shim)
		container_of(a, s);
	ev.sandbox_change.container = s->has_container ? &s->container : NULL;
	/* registered before the answer: the workload's first exec finds it */
	ev.sandbox_change.released = shim_name && release_shim(a, shim_name);
	/*
	 * Running before we looked (the agent's start), or released to another
	 * tracer before (a restart: it ran on in the gap): say what was not seen.
	 */
	s->sb.adopted = (a->adopting && !ev.sandbox_change.released) ||
			(shim && shim->tracer_pid > 0 && shim->tracer_pid != getpid());
	s->sb.observed_since_ns = s->sb.adopted ? ev.ts : 0;
	sbt_session_emit(&a->sess.core, &ev, &s->sb);
	return 0;
}

/* The sandbox's cgroup is gone: nothing more can come from it. */
static void remove_sandbox(struct agent *a, struct agent_sb *s)
{
	struct sbt_event ev = { .kind = SBT_EV_SANDBOX_REMOVED };
	struct sbt_target_totals t;

	sbt_session_bpf_consume(&a->sess); /* its records are all in the buffer by now */
	sbt_session_final(&a->sess.core, s->sb.slot, &t);
	ev.ts = sbt_now_epoch_ns();
	ev.sandbox_change.source = s->source;
	ev.sandbox_change.totals = &t;
	release_slot(a, s); /* free before it is said: a reader may reuse it at once */
	sbt_session_emit(&a->sess.core, &ev, &s->sb);
	sbt_session_remove(&a->sess.core, s->sb.slot);
	a->slots[s->sb.slot] = NULL;
	a->removed++;
	free(s);
}

static void rescan(struct agent *a);

/* The hash map's entries of no sandbox the agent knows: up to max of their cgroup ids. */
static uint32_t unknown_entries(struct agent *a, uint64_t *ids, uint32_t max)
{
	uint64_t key, next, *prev = NULL;
	struct sbt_sandbox_key_val v;
	uint32_t n = 0;

	while (n < max && bpf_map_get_next_key(a->cgroups_fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(a->cgroups_fd, &key, &v) == 0 &&
		    !(v.slot < a->max && a->slots[v.slot] && a->slots[v.slot]->sb.cgroup_id == key))
			ids[n++] = key;
	}
	return n;
}

static bool id_in(uint64_t id, const uint64_t *ids, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (ids[i] == id)
			return true;
	return false;
}

/* Drop the entry of cgroup id `id`, which no sandbox of ours is: its slot back to the queue. */
static void reap_entry(struct agent *a, uint64_t id)
{
	struct sbt_sandbox_stats zero = { 0 };
	struct sbt_sandbox_key_val v;

	if (bpf_map_lookup_elem(a->cgroups_fd, &id, &v) || bpf_map_delete_elem(a->cgroups_fd, &id))
		return;
	__atomic_fetch_sub(&a->plan.skel->bss->hash_only, 1, __ATOMIC_SEQ_CST);
	if (v.slot >= a->max || a->slots[v.slot])
		return;
	bpf_map_update_elem(a->stats_fd, &v.slot, &zero, BPF_ANY);
	bpf_map_update_elem(a->free_fd, NULL, &v.slot, 0);
	sbt_log("a child cgroup (id %llu) was gone before it was seen: its slot %u is free again",
		(unsigned long long)id, v.slot);
}

/*
 * A child the mkdir program registered and that was gone before the agent
 * looked (mkdir and rmdir between two reads of inotify) would keep its
 * entry, its slot and its count in hash_only, and every exec of the host
 * would pay the hash lookups again. When hash_only counts more than the
 * sandboxes we know in the hash only, an entry unknown in two sweeps in a
 * row (250 ms apart, inotify read between them, a rescan just before) goes.
 */
static void reap_unknown(struct agent *a)
{
	uint32_t known = 0, n, kept = 0;
	uint64_t ids[AGENT_REAP_MAX];
	bool again = false;

	for (uint32_t i = 0; i < a->max; i++)
		known += a->slots[i] && !a->slots[i]->fast;
	if (__atomic_load_n(&a->plan.skel->bss->hash_only, __ATOMIC_ACQUIRE) <= known) {
		a->nr_unknown = 0;
		return;
	}
	n = unknown_entries(a, ids, AGENT_REAP_MAX);
	for (uint32_t i = 0; i < n && !again; i++)
		again = id_in(ids[i], a->unknown, a->nr_unknown);
	if (again) {
		rescan(a); /* what is still there is registered now */
		n = unknown_entries(a, ids, AGENT_REAP_MAX);
	}
	for (uint32_t i = 0; i < n; i++) {
		if (again && id_in(ids[i], a->unknown, a->nr_unknown))
			reap_entry(a, ids[i]);
		else
			ids[kept++] = ids[i];
	}
	memcpy(a->unknown, ids, kept * sizeof(ids[0]));
	a->nr_unknown = kept;
}

static void check_gone(struct agent *a)
{
	for (uint32_t i = 0; i < a->max; i++)
		if (a->slots[i] && access(a->slots[i]->sb.path, F_OK) != 0 && errno == ENOENT)
			remove_sandbox(a, a->slots[i]);
	reap_unknown(a);
}

/* A state file NAME.json appeared: its sandbox. */
static void add_shim(struct agent *a, const char *file)
{
	const struct sbt_backend_caps *caps;
	struct sbt_sandbox_state st;
	char name[SBT_SANDBOX_NAME_MAX + 1], err[256];
	size_t n = strlen(file);

	if (n > 7 && n - 7 <= SBT_SANDBOX_NAME_MAX && strcmp(file + n - 7, ".attach") == 0) {
		/* a known sandbox's shim waits again (its tracer went away): we are attached */
		memcpy(name, file, n - 7);
		name[n - 7] = '\0';
		for (uint32_t i = 0; i < a->max; i++)
			if (a->slots[i] && strcmp(a->slots[i]->sb.pin_name, name) == 0)
				release_shim(a, name);
		return;
	}
	if (file[0] == '.' || n <= 5 || n - 5 > SBT_SANDBOX_NAME_MAX ||
	    strcmp(file + n - 5, ".json") != 0)
		return;
	memcpy(name, file, n - 5);
	name[n - 5] = '\0';
	if (sbt_state_read(a->o->state_dir, name, &st, err, sizeof(err))) {
		sbt_log("shim sandbox %s: %s", name, err);
		return;
	}
	/* what the backend makes visible and enforceable, whatever its state file says */
	caps = sbt_backend_caps_by_name(st.backend);
	if (!caps) { /* fail closed: nothing is known of what it can see */
		sbt_log("shim sandbox %s: backend '%s' unknown to this build: not released", name,
			st.backend);
		return;
	}
	if (caps->egress_on_tap && st.egress_mode[0]) {
		/* its traffic passes the tap, not a socket hook: unenforceable here */
		sbt_log("shim sandbox %s runs in a microVM with an egress policy the agent cannot "
			"enforce (it does not watch taps): not released; run 'sbtrace trace "
			"--sandbox %s' with its policy instead",
			name, name);
		return;
	}
	if (!caps->execs_on_host)
		sbt_log("shim sandbox %s runs in a microVM: its execs are not visible to the agent "
			"(%s)%s",
			name,
			st.exec_stream[0] ? "its guest streams them to 'sbtrace trace --sandbox'"
					  : "the guest runs no agent",
			caps->egress_on_tap ? "; its tap is not watched by the agent" : "");
	add_sandbox(a, st.cgroup_path, "shim", &st, caps);
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
			add_sandbox(a, path, "cgroup_parent", NULL, NULL);
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

/* A record of a slot the mkdir program gave a child that inotify did not report yet. */
static void unknown_slot(void *arg, uint32_t slot)
{
	struct agent *a = arg;

	if (slot < a->max && !a->slots[slot])
		rescan(a);
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
					add_sandbox(a, path, "cgroup_parent", NULL, NULL);
			}
		}
	}
	if (gone)
		check_gone(a);
}

static void fill_runtime(struct agent *a, struct sbt_metrics_runtime *rt)
{
	memset(rt, 0, sizeof(*rt));
	rt->version = SBTRACE_VERSION;
	rt->abi = SBT_ABI_VERSION;
	rt->exec_mode = a->plan.exec.mode;
	rt->start_time_seconds = a->start_epoch;
	rt->attach_duration_seconds = (double)a->attach_ms / 1000.0;
	rt->targets = a->sess.core.nr;
	rt->sandboxes_unregistered = a->plan.skel->bss->agent_mkdir_no_slot;
	sbt_agent_obs_fill(&a->obs, rt);
	if (a->o->sub) {
		const struct sbt_sub_sink *sub = a->o->sub;

		rt->has_subscribers = 1;
		for (int i = 0; i < SBT_SUB_MAX_CLIENTS; i++)
			rt->subscribers += sub->clients[i].fd >= 0;
		rt->subscribers_accepted = sub->accepted;
		rt->subscribers_refused = sub->refused;
		rt->subscriber_dropped = sub->dropped;
	}
}

static char *render_metrics(void *arg, size_t *len)
{
	struct agent *a = arg;
	struct sbt_metrics_runtime rt;

	fill_runtime(a, &rt);
	sbt_metrics_sink_expire(a->o->metrics, sbt_now_epoch_ns());
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
	/* node_exporter's textfile collector never reads half a file */
	err = text ? sbt_write_atomic(a->o->metrics_file, text, len, 0644, 0) : -ENOMEM;
	if (err)
		sbt_log("--metrics-file %s: %s", a->o->metrics_file, strerror(-err));
	free(text);
}

static void emit_stats(struct agent *a)
{
	struct sbt_ev_stats base = {
		.uptime_ms = sbt_mono_ms() - a->start_ms,
		.ringbuf_pending_bytes = a->obs.rb_last, /* before the last drain: after it, 0 */
		.ringbuf_size_bytes = a->o->trace.exec.ringbuf_bytes,
		.sandboxes_added = a->added,
		.sandboxes_removed = a->removed,
		.sandboxes_unregistered = a->plan.skel->bss->agent_mkdir_no_slot,
	};

	sbt_session_stats(&a->sess.core, &base);
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
	sbt_podman_meta_cache_init(&a->podman, NULL);
	for (int i = 0; i < SBT_AGENT_MAX_PARENTS; i++)
		a->wd_parent[i] = -1;
	a->slots = calloc(a->max, sizeof(struct agent_sb *));
	if (!a->slots) {
		free(a);
		return NULL;
	}
	return a;
}

static void agent_free(struct agent *a)
{
	sbt_http_stop(a->http);
	sbt_agent_obs_free(&a->obs);
	for (uint32_t i = 0; i < a->max; i++) {
		struct agent_sb *s = a->slots[i];

		if (!s || !a->plan.skel)
			continue;
		/*
		 * A sandbox that lives on keeps its policy: a shim's (pinned links;
		 * the shim ends its workload unless we hand over), any with
		 * --persist (until the next agent took over). Else it is lifted.
		 */
		if (a->o->persist || s->sb.pin_name[0])
			sbt_agent_pol_release(s->pol);
		else
			sbt_agent_pol_free(&a->eg, s->pol, i);
		s->pol = NULL;
	}
	sbt_agent_egress_free(&a->eg);
	bpf_link__destroy(a->mkdir_link);
	sbt_session_bpf_close(&a->sess);
	sbt_plan_destroy(&a->plan);
	if (a->ino >= 0)
		close(a->ino);
	for (uint32_t i = 0; i < a->max; i++)
		free(a->slots[i]);
	free(a->slots);
	sbt_podman_meta_cache_free(&a->podman);
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
			sbt_log("--cgroup-parent %s: too many distinct cgroup levels", p->name);
			return SBT_EXIT_USAGE;
		}
		if (bpf_map_update_elem(a->parents_fd, &p->cgroup_id, &one, BPF_ANY)) {
			sbt_log("cannot register --cgroup-parent %s: %s", p->name, strerror(errno));
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
	sbt_log("the cgroup_mkdir hook is not available: child cgroups are registered when inotify "
		"reports them, and their first execs may be missed");
}

static int fill_free_slots(struct agent *a)
{
	for (uint32_t i = 0; i < a->max; i++) {
		if (bpf_map_update_elem(a->free_fd, NULL, &i, 0)) {
			sbt_log("cannot fill the slot queue: %s", strerror(errno));
			return SBT_EXIT_KERNEL;
		}
	}
	return SBT_EXIT_OK;
}

static int watch_dirs(struct agent *a)
{
	a->ino = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (a->ino < 0) {
		sbt_log("inotify: %s", strerror(errno));
		return SBT_EXIT_RUNTIME;
	}
	if (a->o->state_dir) {
		if (mkdir(a->o->state_dir, 0700) && errno != EEXIST) {
			sbt_log("--state-dir %s: %s", a->o->state_dir, strerror(errno));
			return SBT_EXIT_USAGE;
		}
		a->wd_state = inotify_add_watch(a->ino, a->o->state_dir,
						IN_CREATE | IN_MOVED_TO | IN_DELETE |
							IN_MOVED_FROM | IN_ONLYDIR);
		if (a->wd_state < 0) {
			sbt_log("watching --state-dir %s: %s", a->o->state_dir, strerror(errno));
			return SBT_EXIT_USAGE;
		}
	}
	for (int i = 0; i < a->o->nr_parents; i++) {
		a->wd_parent[i] = inotify_add_watch(a->ino, a->parent[i].path,
						    IN_CREATE | IN_DELETE | IN_ONLYDIR);
		if (a->wd_parent[i] < 0) {
			sbt_log("watching --cgroup-parent %s: %s", a->parent[i].path,
				strerror(errno));
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
		sbt_log("cannot attach the exec hook: %s; are you root, on a Linux >= 5.8 kernel? "
			"run 'sbtrace features' for details",
			strerror(-err));
		return SBT_EXIT_KERNEL;
	}
	skel = a->plan.skel;
	a->stats_fd = bpf_map__fd(skel->maps.sandbox_stats);
	a->cgroups_fd = bpf_map__fd(skel->maps.sandbox_cgroups);
	a->free_fd = bpf_map__fd(skel->maps.agent_free_slots);
	a->parents_fd = bpf_map__fd(skel->maps.agent_parents);
	sbt_membership_agent(&a->plan, &a->membership);
	a->sess.unknown_slot = unknown_slot;
	a->sess.arg = a;
	err = sbt_session_bpf_open(&a->sess, skel, &a->o->trace, a->max);
	if (err)
		return err == -ENOMEM ? SBT_EXIT_RUNTIME : SBT_EXIT_KERNEL;
	err = fill_free_slots(a);
	if (!err)
		err = register_parents(a);
	if (err)
		return err;
	if (sbt_agent_egress_init(&a->eg, &a->plan, a->o->policy_dir, a->parent, a->o->nr_parents,
				  a->o->persist ? a->o->pin_key : NULL))
		return SBT_EXIT_KERNEL;
	a->sess.egress = a->eg.eg; /* the names its proxies' answers taught */
	attach_mkdir(a);
	sbt_agent_obs_init(&a->obs, bpf_map__fd(skel->maps.events), a->o->trace.exec.ringbuf_bytes);
	bpf_object__for_each_program(prog, skel->obj)
		sbt_agent_obs_add_prog(&a->obs, prog); /* every one loaded (an fd): their cost */
	if (a->obs.stats_fd < 0)
		sbt_log("BPF_ENABLE_STATS refused (%s): program run times read 0", strerror(errno));
	return watch_dirs(a);
}

static void emit_started(struct agent *a)
{
	const struct sbt_hook_result *hooks[] = { &a->plan.exec,	&a->membership,
						  &a->mkdir_res,	&a->eg.res,
						  &a->plan.exec_failed, NULL };

	sbt_session_started(&a->sess.core, NULL, hooks, a->attach_ms);
}

/* ---- the loop ---------------------------------------------------------------------- */

/* A DNS proxy's event (queued by its thread), to the sinks. */
static void emit_dns(void *arg, const struct sbt_dns_event *rec)
{
	struct agent *a = arg;

	sbt_session_dns(&a->sess.core, rec);
}

/*
 * SIGHUP (before the flush reopens --out): every --cgroup-parent child's
 * policy file read again; a changed one (new, edited, removed) replaces
 * what is in force.
 */
static void reload_policies(struct agent *a)
{
	int changed = 0, kept = 0;

	if (!a->o->policy_dir)
		return;
	sbt_session_bpf_consume(&a->sess); /* records of the old rules name the old texts */
	for (uint32_t i = 0; i < a->max; i++) {
		struct agent_sb *s = a->slots[i];
		struct sbt_agent_pol *np;

		if (!s || strcmp(s->source, "cgroup_parent") != 0 ||
		    sbt_agent_pol_from_dir(&a->eg, s->sb.name, strrchr(s->sb.path, '/') + 1, &np))
			continue;
		if (sbt_agent_pol_same(s->pol, np)) {
			sbt_agent_pol_release(np);
			kept++;
			continue;
		}
		if (sbt_agent_pol_replace(&a->eg, s->pol, np, i, &s->sb))
			sbt_log("sandbox %s: its new policy cannot be applied: all its egress is "
				"denied",
				s->sb.name);
		s->pol = np;
		sbt_session_set_egress(&a->sess.core, i, np ? &np->cfg : NULL);
		sbt_log("sandbox %s: policy reloaded (%s, %zu rule%s)", s->sb.name,
			np ? sbt_agent_pol_mode_name(np) : "none: not confined",
			np ? np->cfg.nr_rules : 0, np && np->cfg.nr_rules == 1 ? "" : "s");
		changed++;
	}
	sbt_log("SIGHUP: --policy-dir %s read again: %d policies changed, %d kept",
		a->o->policy_dir, changed, kept);
}

/* One tick's housekeeping. NULL to go on, else why the agent stops. */
static const char *tick(struct agent *a, uint64_t *next_gone, uint64_t *next_stats)
{
	const struct sbt_trace_opts *t = &a->o->trace;
	uint64_t now = sbt_mono_ms();

	sbt_egress_gate(a->eg.eg); /* first: a process may wait for it */
	sbt_session_drops(&a->sess.core);
	sbt_session_tick(&a->sess.core);
	sbt_egress_dns_drain(a->eg.eg, emit_dns, a);
	sbt_egress_tick(a->eg.eg);
	if (now >= *next_gone) {
		check_gone(a);
		*next_gone = now + 250;
	}
	fast_fill(a); /* what came or went in this round */
	if (a->o->trace.stats_interval_ms && now >= *next_stats) {
		emit_stats(a);
		write_metrics_file(a);
		*next_stats = now + a->o->trace.stats_interval_ms;
	}
	if (sbt_hup_pending)
		reload_policies(a); /* the flush clears it, reopening --out */
	if (sbt_session_bpf_flush(&a->sess))
		return "output_error";
	if (t->duration_ms && now - a->start_ms >= t->duration_ms)
		return "duration";
	return NULL;
}

static const char *agent_loop(struct agent *a)
{
	uint64_t next_gone = 0, next_stats = sbt_mono_ms() + a->o->trace.stats_interval_ms;
	int timeout = a->o->trace.exec.poll_ms ? (int)a->o->trace.exec.poll_ms : 100;
	const char *why = NULL;

	while (!sbt_stop_signal && !why) {
		struct pollfd p[3] = { { .fd = sbt_session_bpf_fd(&a->sess), .events = POLLIN },
				       { .fd = a->ino, .events = POLLIN },
				       { .fd = a->http ? sbt_http_fd(a->http) : -1,
					 .events = POLLIN } };
		int err;

		if (poll(p, 3, timeout) < 0 && errno != EINTR)
			return "error";
		/* new sandboxes first: their records may be in this batch */
		handle_inotify(a);
		sbt_agent_obs_sample(&a->obs);
		err = sbt_session_bpf_consume(&a->sess);
		if (err) {
			sbt_log("reading the ring buffer failed: %s", strerror(-err));
			return "error";
		}
		why = tick(a, &next_gone, &next_stats);
		if (a->http)
			sbt_http_run(a->http);
	}
	return why ? why : "signal";
}

int sbt_agent_run(struct sbt_agent_opts *o)
{
	struct agent *a = agent_new(o);
	uint64_t t0 = sbt_mono_ms();
	char why[256];
	const char *reason;
	int ret, err;

	if (!a) {
		sbt_log("out of memory");
		return SBT_EXIT_RUNTIME;
	}
	sbt_signals_install(true);
	if (o->policy_dir && sbt_agent_policy_dir_check(o->policy_dir, why, sizeof(why))) {
		sbt_log("--policy-dir %s: %s", o->policy_dir, why);
		agent_free(a);
		return SBT_EXIT_USAGE;
	}
	ret = agent_attach(a);
	if (ret == SBT_EXIT_OK && o->metrics_addr) {
		struct sbt_http_access acc = { .nr_uids = o->nr_metrics_uids,
					       .token_file = o->metrics_token_file };
		struct sockaddr_storage ss;
		unsigned int sslen;

		memcpy(acc.uids, o->metrics_uids, sizeof(acc.uids));
		/* an address other peers reach, without a token: as open as it always was */
		acc.open = !o->metrics_token_file &&
			   !sbt_parse_hostport(o->metrics_addr, &ss, &sslen) &&
			   !sbt_sockaddr_loopback((const struct sockaddr *)&ss);
		a->http = sbt_http_start(o->metrics_addr, &acc, render_metrics, a);
		if (!a->http)
			ret = SBT_EXIT_USAGE;
	}
	if (ret != SBT_EXIT_OK)
		goto out;
	a->sess.core.boot_offset = sbt_boot_epoch_offset_ns();
	a->start_ms = sbt_mono_ms();
	a->attach_ms = a->start_ms - t0;
	a->start_epoch = (double)sbt_now_epoch_ns() / 1e9;
	emit_started(a);
	a->adopting = true; /* what is already there (watched since before this scan) */
	rescan(a);
	a->adopting = false;
	/* every policy is ours now: a previous agent's pinned parent links go */
	if (a->o->pin_key[0] && (err = sbt_pin_agent_prune(a->o->pin_key)) > 0)
		sbt_log("took over from the previous agent: its %d pinned links unpinned", err);
	/* systemd's Type=notify: every hook attached, what runs adopted and taken over */
	err = sbt_notify("READY=1");
	if (err)
		sbt_log("telling the service manager we are ready ($NOTIFY_SOCKET): %s",
			strerror(-err));
	reason = agent_loop(a);
	sbt_notify("STOPPING=1");
	if (strcmp(reason, "error") == 0 || strcmp(reason, "output_error") == 0)
		ret = SBT_EXIT_RUNTIME;
	bpf_link__destroy(a->mkdir_link);
	a->mkdir_link = NULL;
	sbt_plan_detach(&a->plan);
	sbt_session_bpf_drain(&a->sess);
	sbt_session_stopped(&a->sess.core, reason, sbt_mono_ms() - a->start_ms);
	write_metrics_file(a);
	err = sbt_sinks_flush(&o->trace);
	if (err && ret == SBT_EXIT_OK) {
		sbt_log("writing output failed: %s", strerror(-err));
		ret = SBT_EXIT_RUNTIME;
	}
out:
	agent_free(a);
	return ret;
}
