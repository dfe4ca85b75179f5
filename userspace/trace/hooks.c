// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The attach plan's pure decisions: the modes' names, which hooks a trace
 * needs, what the environment disables, how a fallback is told, and which
 * views of a sandbox the host has. loader/plan.c does the loading.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/tracer.h"

static const char *const exec_modes[SBT_EXEC_NR_MODES] = {
	[SBT_EXEC_TP_BTF] = "tp_btf",
	[SBT_EXEC_RAW_TP] = "raw_tp",
	[SBT_EXEC_TRACEPOINT] = "tracepoint",
};

const char *sbt_exec_mode_name(enum sbt_exec_mode m)
{
	return m < SBT_EXEC_NR_MODES ? exec_modes[m] : "?";
}

int sbt_exec_mode_parse(const char *s, enum sbt_exec_mode *m)
{
	for (int i = 0; i < SBT_EXEC_NR_MODES; i++) {
		if (strcmp(s, exec_modes[i]) == 0) {
			*m = (enum sbt_exec_mode)i;
			return 0;
		}
	}
	return -EINVAL;
}

/*
 * SBTRACE_DISABLE_HOOKS=item[,item...] takes modes out of the automatic
 * choice: "capability:mode" (connect:kprobe) or a bare mode, which applies to
 * every capability (tp_btf). For an operator avoiding a hook, and for tests
 * of the fallback paths on kernels where every mode works.
 */
bool sbt_hook_disabled(const char *capability, const char *mode)
{
	const char *env = getenv("SBTRACE_DISABLE_HOOKS");
	char qualified[64];

	snprintf(qualified, sizeof(qualified), "%s:%s", capability, mode);
	for (const char *p = env; p && *p;) {
		const char *end = strchr(p, ',');
		size_t n = end ? (size_t)(end - p) : strlen(p);

		if ((n == strlen(mode) && strncmp(p, mode, n) == 0) ||
		    (n == strlen(qualified) && strncmp(p, qualified, n) == 0))
			return true;
		p = end ? end + 1 : NULL;
	}
	return false;
}

void sbt_hook_record(struct sbt_hook_result *res, const char *mode, const char *stage, int err)
{
	if (res->nr_tries >= SBT_MAX_TRIES)
		return;
	res->tries[res->nr_tries].mode = mode;
	res->tries[res->nr_tries].stage = stage;
	res->tries[res->nr_tries].err = err;
	res->nr_tries++;
}

const char *sbt_hook_try_error(const struct sbt_hook_result *res, unsigned int i)
{
	if (strcmp(res->tries[i].stage, "disabled") == 0)
		return "disabled by SBTRACE_DISABLE_HOOKS";
	return res->tries[i].err ? strerror(-res->tries[i].err) : NULL;
}

const char *sbt_hook_fallback_line(const struct sbt_hook_result *res, char *buf, size_t len)
{
	unsigned int i;

	buf[0] = '\0';
	if (res->nr_tries < 2 && res->mode)
		return buf;
	for (i = 0; i < res->nr_tries; i++)
		if (strcmp(res->tries[i].stage, "unsupported") != 0)
			break;
	if (i == res->nr_tries || (res->mode && strcmp(res->tries[i].stage, "attached") == 0))
		return buf;
	if (res->mode)
		snprintf(buf, len, "%s hook: fell back to %s (%s %s: %s)", res->capability,
			 res->mode, res->tries[i].mode, res->tries[i].stage,
			 sbt_hook_try_error(res, i));
	else
		snprintf(buf, len, "%s hook: not available (%s %s: %s); not observed",
			 res->capability, res->tries[i].mode, res->tries[i].stage,
			 sbt_hook_try_error(res, i));
	return buf;
}

void sbt_exec_opts_decide(struct sbt_exec_opts *eo, int egress_mode,
			  const struct sbt_target *targets, uint32_t nr)
{
	bool any_cgroup = false, any_tap = false;

	for (uint32_t i = 0; i < nr; i++) {
		any_cgroup = any_cgroup || sbt_target_has_cgroup(&targets[i]);
		any_tap = any_tap || targets[i].has_tap;
	}
	/*
	 * The tcp_connect observation serves observe-only mode; with a policy the
	 * sock_addr hooks see every connect (and it would cost ~0.5 us per
	 * connection: inet_sock_set_state fires six times).
	 */
	eo->observe = egress_mode != SBT_EGRESS_OFF;
	eo->observe_connect = egress_mode == SBT_EGRESS_OBSERVE;
	eo->policy = egress_mode == SBT_EGRESS_AUDIT || egress_mode == SBT_EGRESS_ENFORCE;
	eo->tap = any_tap;
	eo->no_exec_attach = false;
	/* Taps only: the host-wide exec hook, socket observations and cgroup hooks would watch nothing. */
	if (!any_cgroup) {
		eo->observe = false;
		eo->observe_connect = false;
		eo->policy = false;
		eo->no_exec_attach = true;
	}
}

const char *sbt_target_vis_exec(const struct sbt_target *sb)
{
	if (sb->exec_stream[0])
		return "guest_kernel"; /* a microVM whose guest agent streams its execs */
	return sb->exec_hidden || !sbt_target_has_cgroup(sb) ? "none" : "host";
}

const char *sbt_target_vis_network(const struct sbt_target *sb, int egress_mode)
{
	if (sb->has_tap)
		return "tap";
	return egress_mode == SBT_EGRESS_OFF ? "none" : "cgroup";
}
