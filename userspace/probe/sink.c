// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The probe's sink: what the report needs from the trace, taken from the
 * typed events as they pass (nothing is written out and read back): each
 * exec's phase (build, or boot from the boot's start on) and site (site.h:
 * where each shell came from), the shell count and its completeness, egress
 * verdicts and denied destinations, whether a RUN step's container was
 * seen, the first exec and the tracer's attach time.
 */
#include <errno.h>
#include <string.h>

#include "event/events.h"
#include "probe_int.h"
#include "exec/shellagg.h"

static json_object *denied_json(const struct sbt_egress *e)
{
	json_object *d = json_object_new_object();
	const char *proto;
	char addr[64], pbuf[8];
	bool has_addr = sbt_egress_has_daddr(e);

	if (has_addr)
		sbt_addr_str(e->daddr, addr, sizeof(addr));
	proto = sbt_egress_proto_str(e, pbuf, sizeof(pbuf));
	json_object_object_add(d, "daddr", has_addr ? json_object_new_string(addr) : NULL);
	json_object_object_add(d, "dport", has_addr ? json_object_new_int64(e->dport) : NULL);
	json_object_object_add(d, "proto", proto ? json_object_new_string(proto) : NULL);
	json_object_object_add(d, "reason",
			       json_object_new_string(sbt_egress_reason_name(e->reason)));
	json_object_object_add(d, "comm", sbt_json_string(e->comm));
	return d;
}

/* Is there an object in `arr` whose `key` is the string `val`, or (with key2) both? */
static bool has_entry(json_object *arr, const char *key, const char *val, const char *key2,
		      json_object *val2)
{
	for (size_t i = 0; i < json_object_array_length(arr); i++) {
		json_object *o = json_object_array_get_idx(arr, i), *a = NULL, *b = NULL;

		if (json_object_object_get_ex(o, key, &a) && a && val &&
		    strcmp(json_object_get_string(a), val) == 0 &&
		    (!key2 ||
		     (json_object_object_get_ex(o, key2, &b) && json_object_equal(b, val2))))
			return true;
	}
	return false;
}

/* An allowed destination, once (address, port and protocol). */
static void take_allowed(struct probe_sink *ps, const struct sbt_egress *e)
{
	json_object *d = denied_json(e), *addr = NULL, *port = NULL;

	json_object_object_del(d, "reason");
	json_object_object_get_ex(d, "daddr", &addr);
	json_object_object_get_ex(d, "dport", &port);
	if (json_object_array_length(ps->allowed_dests) >= PROBE_MAX_DENIED ||
	    has_entry(ps->allowed_dests, "daddr", addr ? json_object_get_string(addr) : NULL,
		      "dport", port)) {
		json_object_put(d);
		return;
	}
	json_object_array_add(ps->allowed_dests, d);
}

/* A name the DNS proxy would not answer, once. */
static void take_dns(struct probe_sink *ps, const struct sbt_dns_event *ev)
{
	json_object *n;

	if (ev->allowed || json_object_array_length(ps->refused_names) >= PROBE_MAX_DENIED ||
	    has_entry(ps->refused_names, "name", ev->name, NULL, NULL))
		return;
	n = json_object_new_object();
	json_object_object_add(n, "name", sbt_json_string(ev->name));
	json_object_object_add(n, "reason", ev->reason ? json_object_new_string(ev->reason) : NULL);
	json_object_object_add(n, "reply", ev->reply ? json_object_new_string(ev->reply) : NULL);
	json_object_array_add(ps->refused_names, n);
}

static void take_egress(struct probe_sink *ps, const struct sbt_egress *e)
{
	switch (e->verdict) {
	case SBT_VERDICT_ALLOWED:
		ps->allowed += e->count;
		take_allowed(ps, e);
		break;
	case SBT_VERDICT_OBSERVED:
		ps->observed += e->count;
		break;
	case SBT_VERDICT_DENIED:
		ps->denied += e->count;
		if (json_object_array_length(ps->denied_dests) < PROBE_MAX_DENIED)
			json_object_array_add(ps->denied_dests, denied_json(e));
		break;
	}
}

static void take_summary(struct probe_sink *ps, const struct sbt_ev_summary *s)
{
	ps->summary_seen = true;
	ps->shells = sbt_shellagg_count(s->agg);
	ps->failed_shells = sbt_shellagg_failed_count(s->agg);
	ps->nr_unidentified = sbt_shellagg_unidentified_count(s->agg);
	ps->complete = s->complete;
	json_object_put(ps->unidentified);
	ps->unidentified = sbt_shellagg_unidentified_json(s->agg);
}

/* TraceStarted: is there a failed-exec hook? */
static void take_started(struct probe_sink *ps, const struct sbt_ev_started *st)
{
	ps->attach_ms = st->attach_ms;
	ps->failed_unseen = true;
	for (size_t i = 0; st->hooks && st->hooks[i]; i++)
		if (st->hooks[i]->capability &&
		    strcmp(st->hooks[i]->capability, "exec_failed") == 0 && st->hooks[i]->mode)
			ps->failed_unseen = false;
}

/*
 * The phase of an exec: boot from the boot's start on (its time is known
 * before its first exec). The ns backend's boot command is a child of the
 * sandbox's init, so init's phase pipe is read only for such an exec, not
 * for every exec of the build.
 */
static enum probe_phase phase_of(struct probe_sink *ps, const struct sbt_exec *rec)
{
	if (!ps->boot_start_ns && ps->run && ps->run->phase_fd >= 0 &&
	    rec->ppid == (uint32_t)ps->run->pid && sbt_sandbox_then_poll(ps->run) > 0 &&
	    ps->run->then.started)
		ps->boot_start_ns = ps->run->then.start_ns;
	return ps->boot_start_ns && rec->ts_boot_ns >= ps->boot_start_ns ? PROBE_BOOT : PROBE_BUILD;
}

/* A microVM's boot: the engine's exec with boot_word in the sandbox's own cgroup. */
static void vm_boot_start(struct probe_sink *ps, const struct sbt_exec *rec)
{
	if (!ps->boot_word[0] || ps->boot_start_ns || rec->cgroup_id != ps->cgroup_id)
		return;
	for (size_t i = 1; i < rec->argc; i++)
		if (strcmp(rec->argv[i], ps->boot_word) == 0) {
			ps->boot_start_ns = rec->ts_boot_ns;
			return;
		}
}

/* Tie the exec to its site; a shell is counted there. */
static void take_exec(struct probe_sink *ps, const struct sbt_ev_exec *ex)
{
	enum probe_phase ph;
	int site;

	vm_boot_start(ps, ex->rec);
	ph = phase_of(ps, ex->rec);

	if (ex->rec->ts_boot_ns > ps->last_exec_ns)
		ps->last_exec_ns = ex->rec->ts_boot_ns;
	if (ph == PROBE_BUILD)
		ps->execs++;
	if (!ps->sites)
		return;
	site = probe_site_of(ps->sites, ph, ex->rec, ex->shell, ex->anc, ex->nanc, ps->cgroup_id);
	if (ex->shell && (site < 0 || probe_site_count(ps->sites, site, ex->rec, ex->shell, 0,
						       ex->anc, ex->nanc)))
		ps->sites_failed = true;
}

/*
 * A shell tried and not there (the image has none): a shell the build or
 * the boot would have run, at its site like any, marked failed.
 */
static void take_exec_failed(struct probe_sink *ps, const struct sbt_ev_exec_failed *f)
{
	struct sbt_exec rec;
	enum probe_phase ph;
	int site;

	if (!f->shell || !ps->sites)
		return;
	memset(&rec, 0, sizeof(rec));
	rec.ts_boot_ns = f->rec->ts_boot_ns;
	rec.cgroup_id = f->rec->cgroup_id;
	rec.pid = f->rec->pid;
	rec.tid = f->rec->tid;
	rec.ppid = f->rec->ppid;
	rec.uid = f->rec->uid;
	rec.flags = SBT_EXEC_EXE_UNAVAILABLE | SBT_EXEC_INTERP_UNAVAILABLE | SBT_EXEC_CWD_FAULT;
	memcpy(rec.comm, f->rec->comm, sizeof(rec.comm));
	memcpy(rec.parent_comm, f->rec->comm, sizeof(rec.parent_comm));
	rec.filename = f->rec->filename;
	rec.interp = "";
	rec.argc = f->rec->argc;
	rec.argv = (const char **)f->rec->argv;
	ph = phase_of(ps, &rec);
	site = probe_site_of(ps->sites, ph, &rec, f->shell, f->anc, f->nanc, ps->cgroup_id);
	if (site < 0 || probe_site_count(ps->sites, site, &rec, f->shell,
					 f->err > 0 ? f->err : EINVAL, f->anc, f->nanc))
		ps->sites_failed = true;
}

/* --egress learn: the sandbox's proposal, as the event has it but for the envelope. */
static void take_proposal(struct probe_sink *ps, const struct sbt_event *ev)
{
	static const char *const envelope[] = { "event", "ts", "time", "run_id", "sandbox" };

	if (!ev->sandbox || ev->sandbox->cgroup_id != ps->cgroup_id)
		return;
	json_object_put(ps->proposal);
	ps->proposal = sbt_json_allowlist(ev);
	for (size_t i = 0; ps->proposal && i < sizeof(envelope) / sizeof(envelope[0]); i++)
		json_object_object_del(ps->proposal, envelope[i]);
}

static void probe_emit(struct sbt_sink *sink, const struct sbt_event *ev)
{
	struct probe_sink *ps = (struct probe_sink *)sink;

	switch (ev->kind) {
	case SBT_EV_EXEC:
		/* Every RUN step runs in a container below the sandbox cgroup. */
		if (ev->exec.rec->cgroup_id != ps->cgroup_id)
			ps->exec_below = true;
		take_exec(ps, &ev->exec);
		break;
	case SBT_EV_EXEC_FAILED:
		take_exec_failed(ps, &ev->exec_failed);
		break;
	case SBT_EV_EGRESS:
		take_egress(ps, ev->egress.rec);
		break;
	case SBT_EV_DNS:
		take_dns(ps, ev->dns.rec);
		break;
	case SBT_EV_SUMMARY:
		take_summary(ps, &ev->summary);
		break;
	case SBT_EV_STOPPED:
		if (ev->stopped.nr > 0)
			ps->first_exec_ts = ev->stopped.totals[0].first_exec_ts;
		break;
	case SBT_EV_STARTED:
		take_started(ps, &ev->started);
		break;
	case SBT_EV_ALLOWLIST:
		take_proposal(ps, ev);
		break;
	default: /* the other kinds tell the probe nothing */
		break;
	}
}

static const struct sbt_sink_ops probe_ops = {
	.name = "probe",
	.emit = probe_emit,
};

void probe_sink_init(struct probe_sink *ps, uint64_t cgroup_id)
{
	memset(ps, 0, sizeof(*ps));
	ps->base.ops = &probe_ops;
	ps->cgroup_id = cgroup_id;
	ps->denied_dests = json_object_new_array();
	ps->allowed_dests = json_object_new_array();
	ps->refused_names = json_object_new_array();
}

void probe_sink_free(struct probe_sink *ps)
{
	json_object_put(ps->denied_dests);
	json_object_put(ps->allowed_dests);
	json_object_put(ps->refused_names);
	json_object_put(ps->unidentified);
	json_object_put(ps->proposal);
	ps->denied_dests = ps->allowed_dests = ps->refused_names = ps->unidentified = NULL;
	ps->proposal = NULL;
}
