// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The probe's sink: what the report needs from the trace, taken from the
 * typed events as they pass (nothing is written out and read back): each
 * exec's phase (build, or boot from the boot's start on) and site (site.h:
 * where each shell came from), the shell count and its completeness, egress
 * verdicts and denied destinations, whether a RUN step's container was
 * seen, the first exec and the tracer's attach time.
 */
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

static void take_egress(struct probe_sink *ps, const struct sbt_egress *e)
{
	switch (e->verdict) {
	case SBT_VERDICT_ALLOWED:
		ps->allowed += e->count;
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
	ps->complete = s->complete;
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

/* Tie the exec to its site; a shell is counted there. */
static void take_exec(struct probe_sink *ps, const struct sbt_ev_exec *ex)
{
	enum probe_phase ph = phase_of(ps, ex->rec);
	int site;

	if (ph == PROBE_BUILD)
		ps->execs++;
	if (!ps->sites)
		return;
	site = probe_site_of(ps->sites, ph, ex->rec, ex->shell, ex->anc, ex->nanc, ps->cgroup_id);
	if (ex->shell &&
	    (site < 0 || probe_site_count(ps->sites, site, ex->rec, ex->shell, ex->anc, ex->nanc)))
		ps->sites_failed = true;
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
	case SBT_EV_EGRESS:
		take_egress(ps, ev->egress.rec);
		break;
	case SBT_EV_SUMMARY:
		take_summary(ps, &ev->summary);
		break;
	case SBT_EV_STOPPED:
		if (ev->stopped.nr > 0)
			ps->first_exec_ts = ev->stopped.totals[0].first_exec_ts;
		break;
	case SBT_EV_STARTED:
		ps->attach_ms = ev->started.attach_ms;
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
}

void probe_sink_free(struct probe_sink *ps)
{
	json_object_put(ps->denied_dests);
	ps->denied_dests = NULL;
}
