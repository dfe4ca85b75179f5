// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The tap capability: tap_ingress (bpf/tap.bpf.c) on the host side of a
 * microVM's tap, or on any device whose ingress is a sandbox's egress (the
 * host end of a veth). Attached with tcx where the kernel has it (a link: it
 * goes with the loader, even after SIGKILL), else as a clsact ingress filter
 * (detached at stop; the qdisc removed when the loader created it).
 * The device may live in another network namespace: the loader enters it
 * for the lookup and the attach, then comes back.
 */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "egress.h"
#include "loader.h"
#include "lib/netns.h"
#include "egress/policy.h"
#include "sbtrace.skel.h"
#include "lib/log.h"

#define SBT_BPF_TCX_INGRESS 46 /* enum bpf_attach_type, Linux 6.6; older headers lack it */
#define SBT_BPF_TCX_EGRESS  47
#define TAP_TC_PRIO	    0xbeef

/* Back to the loader's network namespace, or say why not. */
static void netns_back(int saved)
{
	int err = sbt_netns_leave(saved);

	if (err)
		sbt_log("tap: cannot return to the loader's netns: %s", strerror(-err));
}

static void fill_entry(struct sbt_tap *e, const struct sbt_target *sb, int ifindex,
		       const uint8_t *cfg_res, const struct sbt_egress_sandbox *es)
{
	static const uint8_t v4pre[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	const struct sbt_tap_spec *t = &sb->tap;

	memset(e, 0, sizeof(*e));
	e->ifindex = (uint32_t)ifindex;
	e->slot = sb->slot;
	for (uint32_t g = 0; g < t->nr_guest; g++) {
		e->flags |= SBT_TAP_CHECK_SRC;
		if (memcmp(t->guest[g], v4pre, 12) == 0) {
			memcpy(e->guest4, t->guest[g] + 12, 4);
			e->flags |= SBT_TAP_GUEST4;
		} else {
			memcpy(e->guest6, t->guest[g], 16);
			e->flags |= SBT_TAP_GUEST6;
		}
	}
	if (t->has_resolver) {
		memcpy(e->resolver, t->resolver, 16);
		e->flags |= SBT_TAP_RESOLVER;
	} else if (cfg_res) {
		memcpy(e->resolver, cfg_res, 16);
		e->flags |= SBT_TAP_RESOLVER;
	}
	/* the DNS proxy, per family that has both its sockets */
	if (es && es->tap_proxy) {
		memcpy(e->host4, es->tap.host4, 4);
		memcpy(e->host6, es->tap.host6, 16);
		memcpy(e->proxy_port, es->tap.port, sizeof(e->proxy_port));
		if (es->tap.port[SBT_DNS_UDP4] && es->tap.port[SBT_DNS_TCP4])
			e->flags |= SBT_TAP_PROXY4;
		if (es->tap.port[SBT_DNS_UDP6] && es->tap.port[SBT_DNS_TCP6])
			e->flags |= SBT_TAP_PROXY6;
	}
}

/*
 * tap_egress (the DNS proxy's replies get the source the guest asked), the
 * way tap_ingress went: a tcx link, or a filter on the same clsact qdisc.
 */
static int attach_egress(struct sbt_tap_state *ts, uint32_t k, int prog_fd, int ifindex,
			 const struct sbt_target *sb)
{
	DECLARE_LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = ifindex, .attach_point = BPF_TC_EGRESS);
	DECLARE_LIBBPF_OPTS(bpf_tc_opts, tco, .handle = 1, .priority = TAP_TC_PRIO,
			    .prog_fd = prog_fd);
	int err;

	if (ts->link_fd[k] >= 0) {
		static const char *const what[] = { "tap_egress" };
		int fd = bpf_link_create(prog_fd, ifindex, SBT_BPF_TCX_EGRESS, NULL);

		if (fd < 0)
			return fd;
		ts->eg_link_fd[k] = fd;
		if (sb->pin_name[0])
			sbt_pin_enforcers(sb, &fd, what, 1);
		return 0;
	}
	err = bpf_tc_attach(&hook, &tco);
	if (err)
		return err;
	ts->eg_clsact[k] = true;
	return 0;
}

/* tcx first (a link), then clsact. 0 or -errno; the hook result says what was tried. */
static int attach_one(struct sbt_tap_state *ts, uint32_t k, int prog_fd, int ifindex,
		      const struct sbt_target *sb)
{
	struct sbt_hook_result *res = &ts->res[k];
	DECLARE_LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = ifindex, .attach_point = BPF_TC_INGRESS);
	DECLARE_LIBBPF_OPTS(bpf_tc_opts, tco, .handle = 1, .priority = TAP_TC_PRIO,
			    .prog_fd = prog_fd);
	int err;

	res->capability = "tap";
	if (sbt_hook_disabled("tap", "tcx")) {
		sbt_hook_record(res, "tcx", "attach", -EPERM);
	} else {
		int fd = bpf_link_create(prog_fd, ifindex, SBT_BPF_TCX_INGRESS, NULL);

		if (fd >= 0) {
			static const char *const what[] = { "tap_ingress" };

			ts->link_fd[k] = fd;
			if (sb->pin_name[0])
				sbt_pin_enforcers(sb, &fd, what, 1);
			sbt_hook_record(res, "tcx", "attached", 0);
			res->mode = "tcx";
			return 0;
		}
		sbt_hook_record(res, "tcx", "attach", fd);
	}
	if (sbt_hook_disabled("tap", "clsact")) {
		sbt_hook_record(res, "clsact", "attach", -EPERM);
		return -EPERM;
	}
	err = bpf_tc_hook_create(&hook);
	if (err && err != -EEXIST) {
		sbt_hook_record(res, "clsact", "attach", err);
		return err;
	}
	ts->qdisc_made[k] = err == 0;
	err = bpf_tc_attach(&hook, &tco);
	if (err) {
		sbt_hook_record(res, "clsact", "attach", err);
		if (ts->qdisc_made[k]) {
			hook.attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS;
			bpf_tc_hook_destroy(&hook);
		}
		return err;
	}
	ts->clsact[k] = true;
	sbt_hook_record(res, "clsact", "attached", 0);
	res->mode = "clsact";
	return 0;
}

void sbt_tap_probe(const struct sbt_plan *plan, struct sbt_hook_result *res)
{
	int prog_fd = bpf_program__fd(plan->skel->progs.tap_ingress), fd;

	memset(res, 0, sizeof(*res));
	res->capability = "tap";
	if (prog_fd < 0) {
		sbt_hook_record(res, "tcx", "load", prog_fd);
		return;
	}
	/*
	 * Without a device: a kernel with tcx looks the (absent) device up
	 * and says ENODEV; one without refuses the attach type (EINVAL).
	 */
	fd = bpf_link_create(prog_fd, 0x7fffffff, SBT_BPF_TCX_INGRESS, NULL);
	if (fd >= 0) {
		close(fd);
		fd = -ENODEV;
	}
	if (fd == -ENODEV) {
		sbt_hook_record(res, "tcx", "probed", 0);
		res->mode = "tcx";
		return;
	}
	sbt_hook_record(res, "tcx", "probe", fd);
	/* clsact needs a device to attach to: the program loaded, the rest is assumed */
	sbt_hook_record(res, "clsact", "loaded", 0);
	res->mode = "clsact";
}

int sbt_tap_attach(struct sbt_tap_state *ts, struct sbt_plan *plan,
		   const struct sbt_target *targets, uint32_t nr, const uint8_t *cfg_resolver,
		   const struct sbt_egress_state *eg)
{
	struct sbtrace_bpf *skel = plan->skel;
	int prog_fd = bpf_program__fd(skel->progs.tap_ingress);
	int eg_fd = bpf_program__fd(skel->progs.tap_egress);

	memset(ts, 0, sizeof(*ts));
	for (uint32_t i = 0; i < SBT_MAX_TAPS; i++)
		ts->link_fd[i] = ts->eg_link_fd[i] = -1;
	for (uint32_t i = 0; i < nr; i++) {
		const struct sbt_target *sb = &targets[i];
		uint32_t k = ts->nr;
		int saved, err, ifindex;

		if (!sb->has_tap)
			continue;
		if (k >= SBT_MAX_TAPS) {
			sbt_log("tap: more than %d taps", SBT_MAX_TAPS);
			return -EINVAL;
		}
		err = sbt_netns_enter(sb->tap.netns, &saved);
		if (err) {
			sbt_log("tap %s: cannot enter netns '%s': %s", sb->tap.ifname,
				sb->tap.netns, strerror(-err));
			return err == -ENOENT ? -ENODEV : err;
		}
		ifindex = (int)if_nametoindex(sb->tap.ifname);
		if (!ifindex) {
			err = -errno;
			netns_back(saved);
			sbt_log("tap %s: no such device%s%s: %s", sb->tap.ifname,
				sb->tap.netns[0] ? " in netns " : "", sb->tap.netns,
				strerror(-err));
			return -ENODEV;
		}
		for (uint32_t j = 0; j < k; j++)
			if (ts->ifindex[j] == ifindex &&
			    strcmp(targets[ts->idx[j]].tap.netns, sb->tap.netns) == 0) {
				netns_back(saved);
				sbt_log("tap %s given twice", sb->tap.ifname);
				return -ENODEV;
			}
		/* Registered before the attach: no frame goes unjudged. */
		ts->ifindex[k] = ifindex;
		fill_entry(&skel->bss->taps[k], sb, ifindex, cfg_resolver,
			   eg && i < eg->nr ? &eg->sb[i] : NULL);
		__atomic_store_n(&skel->bss->nr_taps, k + 1, __ATOMIC_RELEASE);
		ts->idx[k] = i;
		ts->nr = k + 1;
		err = attach_one(ts, k, prog_fd, ifindex, sb);
		/* the replies' rewrite first: the guest's queries go to the proxy after */
		if (!err && skel->bss->taps[k].flags & (SBT_TAP_PROXY4 | SBT_TAP_PROXY6)) {
			int e2 = attach_egress(ts, k, eg_fd, ifindex, sb);

			if (e2) {
				sbt_log("tap %s: cannot attach tap_egress (%s): no DNS proxy for "
					"the guest, its DNS goes only to the resolver",
					sb->tap.ifname, strerror(-e2));
				skel->bss->taps[k].flags &= ~(SBT_TAP_PROXY4 | SBT_TAP_PROXY6);
			}
		}
		netns_back(saved);
		if (err) {
			sbt_log("tap %s: cannot attach the tc program (tcx: %s, clsact: %s); the "
				"kernel needs CONFIG_NET_CLS_BPF / CONFIG_NET_SCH_INGRESS (or tcx, "
				"Linux >= 6.6)",
				sb->tap.ifname, strerror(-ts->res[k].tries[0].err), strerror(-err));
			return err;
		}
	}
	return 0;
}

void sbt_tap_detach(struct sbt_tap_state *ts, const struct sbt_target *targets)
{
	for (uint32_t k = 0; k < ts->nr; k++) {
		const struct sbt_tap_spec *t = &targets[ts->idx[k]].tap;
		DECLARE_LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = ts->ifindex[k],
				    .attach_point = BPF_TC_INGRESS);
		DECLARE_LIBBPF_OPTS(bpf_tc_opts, tco, .handle = 1, .priority = TAP_TC_PRIO);
		int saved;

		if (ts->link_fd[k] >= 0) {
			close(ts->link_fd[k]);
			ts->link_fd[k] = -1;
		}
		if (ts->eg_link_fd[k] >= 0) {
			close(ts->eg_link_fd[k]);
			ts->eg_link_fd[k] = -1;
		}
		/* A sandbox's own tap goes with its sandbox: the filter judges until then. */
		if (!ts->clsact[k] || targets[ts->idx[k]].pin_name[0])
			continue;
		if (sbt_netns_enter(t->netns, &saved)) {
			sbt_log("tap %s: netns '%s' is gone", t->ifname, t->netns);
			continue;
		}
		if (bpf_tc_detach(&hook, &tco) && errno != ENODEV && errno != ENOENT)
			sbt_log("tap %s: cannot detach the tc filter: %s", t->ifname,
				strerror(errno));
		if (ts->eg_clsact[k]) {
			hook.attach_point = BPF_TC_EGRESS;
			bpf_tc_detach(&hook, &tco);
			ts->eg_clsact[k] = false;
		}
		if (ts->qdisc_made[k]) {
			hook.attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS;
			bpf_tc_hook_destroy(&hook);
		}
		ts->clsact[k] = false;
		netns_back(saved);
	}
}
