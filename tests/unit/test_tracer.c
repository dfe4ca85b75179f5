// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The pure parts of a trace: the attach plan's decisions (hooks.c), the
 * trace command's options (trace_cmd.c), the sink interface (sink.c), the
 * run events as JSON (events_run.c) and the probe's sink — with no BPF.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/socket.h>

#include "event/events.h"
#include "event/line.h"
#include "exec/shellagg.h"
#include "event/sink.h"
#include "cmd/trace_cmd.h"
#include "../../userspace/probe/probe_int.h"

static struct sbt_target cgroup_sb(uint32_t slot)
{
	struct sbt_target sb;

	memset(&sb, 0, sizeof(sb));
	snprintf(sb.name, sizeof(sb.name), "/sbtrace/t%u", slot);
	sb.cgroup_id = 1000 + slot;
	sb.slot = slot;
	sb.origin = "cgroup";
	return sb;
}

static struct sbt_target tap_sb(uint32_t slot)
{
	struct sbt_target sb;

	memset(&sb, 0, sizeof(sb));
	snprintf(sb.name, sizeof(sb.name), "tap:tap%u", slot);
	sb.slot = slot;
	sb.has_tap = true;
	sb.exec_hidden = true;
	sb.origin = "tap";
	return sb;
}

/* Which hooks a trace loads, from what it watches. */
static void test_decide(void **state)
{
	struct sbt_target sbs[2] = { cgroup_sb(0), tap_sb(1) };
	struct sbt_exec_opts eo;

	(void)state;
	memset(&eo, 0, sizeof(eo));
	sbt_exec_opts_decide(&eo, SBT_EGRESS_OBSERVE, sbs, 1);
	assert_true(eo.observe && eo.observe_connect);
	assert_false(eo.policy || eo.tap || eo.no_exec_attach);
	sbt_exec_opts_decide(&eo, SBT_EGRESS_ENFORCE, sbs, 1);
	assert_true(eo.observe && eo.policy);
	assert_false(eo.observe_connect);
	sbt_exec_opts_decide(&eo, SBT_EGRESS_AUDIT, sbs, 2);
	assert_true(eo.policy && eo.tap);
	assert_false(eo.no_exec_attach);
	sbt_exec_opts_decide(&eo, SBT_EGRESS_OFF, sbs, 1);
	assert_false(eo.observe || eo.observe_connect || eo.policy);
	/* taps only: nothing host-wide */
	sbt_exec_opts_decide(&eo, SBT_EGRESS_ENFORCE, &sbs[1], 1);
	assert_true(eo.tap && eo.no_exec_attach);
	assert_false(eo.observe || eo.observe_connect || eo.policy);
}

/* A fallback is told in one line; the preferred mode or an unsupported capability is not. */
static void test_fallback_line(void **state)
{
	struct sbt_hook_result r = { .capability = "exec" };
	char line[256];

	(void)state;
	sbt_hook_record(&r, "tp_btf", "attached", 0);
	r.mode = "tp_btf";
	assert_string_equal(sbt_hook_fallback_line(&r, line, sizeof(line)), "");
	memset(&r, 0, sizeof(r));
	r.capability = "exec";
	sbt_hook_record(&r, "tp_btf", "load", -EINVAL);
	sbt_hook_record(&r, "raw_tp", "attached", 0);
	r.mode = "raw_tp";
	assert_string_equal(sbt_hook_fallback_line(&r, line, sizeof(line)),
			    "exec hook: fell back to raw_tp (tp_btf load: Invalid argument)");
	memset(&r, 0, sizeof(r));
	r.capability = "connect";
	sbt_hook_record(&r, "fentry", "disabled", -EPERM);
	assert_string_equal(sbt_hook_try_error(&r, 0), "disabled by SBTRACE_DISABLE_HOOKS");
	assert_non_null(strstr(sbt_hook_fallback_line(&r, line, sizeof(line)), "not available"));
	memset(&r, 0, sizeof(r));
	r.capability = "tap";
	sbt_hook_record(&r, "tcx", "unsupported", -EOPNOTSUPP);
	assert_string_equal(sbt_hook_fallback_line(&r, line, sizeof(line)), "");
}

static void test_hook_disabled(void **state)
{
	(void)state;
	setenv("SBTRACE_DISABLE_HOOKS", "tp_btf,connect:kprobe", 1);
	assert_true(sbt_hook_disabled("exec", "tp_btf"));
	assert_true(sbt_hook_disabled("connect", "tp_btf"));
	assert_true(sbt_hook_disabled("connect", "kprobe"));
	assert_false(sbt_hook_disabled("exec", "kprobe"));
	assert_false(sbt_hook_disabled("exec", "tp_bt"));
	unsetenv("SBTRACE_DISABLE_HOOKS");
	assert_false(sbt_hook_disabled("exec", "tp_btf"));
}

static void test_exec_mode_and_vis(void **state)
{
	struct sbt_target c = cgroup_sb(0), t = tap_sb(1);
	enum sbt_exec_mode m;

	(void)state;
	assert_int_equal(sbt_exec_mode_parse("raw_tp", &m), 0);
	assert_int_equal(m, SBT_EXEC_RAW_TP);
	assert_string_equal(sbt_exec_mode_name(SBT_EXEC_TRACEPOINT), "tracepoint");
	assert_int_equal(sbt_exec_mode_parse("fentry", &m), -EINVAL);
	assert_string_equal(sbt_target_vis_exec(&c), "host");
	assert_string_equal(sbt_target_vis_exec(&t), "none");
	assert_string_equal(sbt_target_vis_network(&c, SBT_EGRESS_OFF), "none");
	assert_string_equal(sbt_target_vis_network(&c, SBT_EGRESS_ENFORCE), "cgroup");
	assert_string_equal(sbt_target_vis_network(&t, SBT_EGRESS_ENFORCE), "tap");
}

static int parse(struct sbt_trace_args *a, const char *const *words)
{
	char *argv[32];
	int argc = 0;

	for (; *words && argc < 31; words++)
		argv[argc++] = (char *)*words;
	argv[argc] = NULL;
	return sbt_trace_args_parse(argc, argv, a);
}

/* The trace command's options, without a cgroup: taps are parsed purely. */
static void test_trace_args(void **state)
{
	static struct sbt_trace_args a;
	const char *ok[] = { "trace",
			     "--tap",
			     "tap0,guest=192.0.2.2,resolver=192.0.2.53",
			     "--allow-cidr",
			     "198.51.100.0/24 port 443",
			     "-d",
			     "0.25",
			     "--argv-max",
			     "100",
			     "--ringbuf-size",
			     "8192",
			     "-o",
			     "text",
			     "--exec-hook",
			     "raw_tp",
			     "--poll-ms",
			     "0",
			     NULL };

	(void)state;
	assert_int_equal(parse(&a, ok), -1);
	assert_int_equal(a.opts.nr_targets, 1);
	assert_string_equal(a.opts.targets[0].name, "tap:tap0");
	assert_int_equal(a.opts.targets[0].tap.nr_guest, 1);
	assert_true(a.opts.targets[0].tap.has_resolver);
	assert_int_equal(a.opts.duration_ms, 250);
	assert_int_equal(a.opts.exec.argv_max, 100);
	assert_int_equal(a.opts.exec.ringbuf_bytes, 8192);
	assert_int_equal(a.opts.exec.forced_mode, SBT_EXEC_RAW_TP);
	assert_int_equal(a.opts.exec.poll_ms, 0);
	assert_int_equal(a.format, SBT_FORMAT_TEXT);
	/* a rule given: enforce by default; the resolver rule id follows the rules */
	assert_int_equal(a.opts.egress.mode, SBT_EGRESS_ENFORCE);
	assert_int_equal(a.opts.egress.nr_rules, 1);
	assert_int_equal(a.opts.egress.resolver_rule_id, 2);
	assert_true(a.opts.exec.tap && a.opts.exec.no_exec_attach);
	sbt_trace_args_free(&a);
}

static void test_trace_args_errors(void **state)
{
	static struct sbt_trace_args a;
	const char *none[] = { "trace", NULL };
	const char *twice[] = { "trace", "--tap", "t0", "--tap", "t0", NULL };
	const char *off_rules[] = { "trace", "--tap",	     "t0",	     "--egress",
				    "off",   "--allow-cidr", "192.0.2.0/24", NULL };
	const char *off_tap[] = { "trace", "--tap", "t0", "--egress", "off", NULL };
	const char *ringbuf[] = { "trace", "--tap", "t0", "--ringbuf-size", "5000", NULL };
	const char *argvmax[] = { "trace", "--tap", "t0", "--argv-max", "16385", NULL };
	const char *dur[] = { "trace", "--tap", "t0", "-d", "-1", NULL };
	const char *hook[] = { "trace", "--tap", "t0", "--exec-hook", "kprobe", NULL };
	const char *extra[] = { "trace", "--tap", "t0", "stray", NULL };
	const char *help[] = { "trace", "--help", NULL };
	const char *const *usage[] = { none,	twice, off_rules, off_tap, ringbuf,
				       argvmax, dur,   hook,	  extra };
	FILE *saved = stdout;

	(void)state;
	for (size_t i = 0; i < sizeof(usage) / sizeof(usage[0]); i++) {
		assert_int_equal(parse(&a, usage[i]), SBT_EXIT_USAGE);
		sbt_trace_args_free(&a);
	}
	stdout = fopen("/dev/null", "w");
	assert_int_equal(parse(&a, help), SBT_EXIT_OK);
	fclose(stdout);
	stdout = saved;
}

struct count_sink {
	struct sbt_sink base;
	unsigned int seen[SBT_EV__MAX];
	int flush_ret;
};

static void count_emit(struct sbt_sink *s, const struct sbt_event *ev)
{
	((struct count_sink *)s)->seen[ev->kind]++;
}

static int count_flush(struct sbt_sink *s)
{
	return ((struct count_sink *)s)->flush_ret;
}

static const struct sbt_sink_ops count_ops = { .name = "count",
					       .emit = count_emit,
					       .flush = count_flush };

/* Every sink sees every event, in order; the first flush error is returned. */
static void test_sinks(void **state)
{
	static struct sbt_trace_opts opts;
	struct count_sink a = { .base.ops = &count_ops }, b = { .base.ops = &count_ops };
	struct sbt_sink quiet = { .ops = &(const struct sbt_sink_ops){ .name = "quiet" } };
	struct sbt_event ev = { .kind = SBT_EV_LOST };

	(void)state;
	memset(&opts, 0, sizeof(opts));
	assert_int_equal(sbt_sinks_add(&opts, &a.base), 0);
	assert_int_equal(sbt_sinks_add(&opts, &quiet), 0);
	assert_int_equal(sbt_sinks_add(&opts, &b.base), 0);
	sbt_sinks_emit(&opts, &ev);
	ev.kind = SBT_EV_EXEC;
	sbt_sinks_emit(&opts, &ev);
	assert_int_equal(a.seen[SBT_EV_LOST], 1);
	assert_int_equal(b.seen[SBT_EV_EXEC], 1);
	assert_int_equal(sbt_sinks_flush(&opts), 0);
	b.flush_ret = -ENOSPC;
	a.flush_ret = -EIO;
	assert_int_equal(sbt_sinks_flush(&opts), -EIO);
	assert_int_equal(sbt_sinks_add(&opts, &a.base), 0);
	assert_int_equal(sbt_sinks_add(&opts, &a.base), -E2BIG);
}

static const char *json_str(json_object *o, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v) && v ? json_object_get_string(v) : NULL;
}

/* A boolean member: 1 or 0, -1 when absent or not a boolean. */
static int json_flag(json_object *o, const char *key)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_boolean))
		return -1;
	return json_object_get_boolean(v);
}

/* The run's events as JSON from the typed events. */
static void test_run_events_json(void **state)
{
	struct sbt_target sb = cgroup_sb(0);
	struct sbt_target_totals tot = {
		.execs = 3, .received = 2, .lost = 1, .eg_denied = 4, .complete = { .egress = true }
	};
	struct sbt_event ev = { .kind = SBT_EV_LOST, .ts = 7, .sandbox = &sb };
	struct sbt_shellagg *agg = sbt_shellagg_new();
	json_object *o, *v;

	(void)state;
	ev.lost = (struct sbt_ev_lost){ .lost = 2, .reason = "not_received", .kind = "egress" };
	o = sbt_event_json(&ev);
	assert_string_equal(json_str(o, "event"), "EventsLost");
	assert_string_equal(json_str(o, "sandbox"), "/sbtrace/t0");
	assert_false(json_object_object_get_ex(o, "lost_total", &v));
	assert_string_equal(json_str(o, "kind"), "egress");
	json_object_put(o);

	/* egress lost, every exec there: not complete, and the JSON says which kind */
	ev.kind = SBT_EV_SUMMARY;
	ev.summary = (struct sbt_ev_summary){ .agg = agg,
					      .complete = { .exec = true },
					      .exec_visible = true };
	o = sbt_event_json(&ev);
	assert_string_equal(json_str(o, "event"), "ShellInvocationObserved");
	assert_true(json_flag(o, "complete") == 0 && json_flag(o, "exec_complete") == 1 &&
		    json_flag(o, "egress_complete") == 0);
	assert_true(json_object_object_get_ex(o, "count", &v) && json_object_get_int(v) == 0);
	json_object_put(o);

	ev.kind = SBT_EV_STOPPED;
	ev.sandbox = NULL;
	ev.stopped = (struct sbt_ev_stopped){
		.reason = "signal", .targets = &sb, .totals = &tot, .nr = 1
	};
	o = sbt_event_json(&ev);
	assert_string_equal(json_str(o, "event"), "TraceStopped");
	assert_true(json_object_object_get_ex(o, "sandboxes", &v));
	v = json_object_array_get_idx(v, 0);
	assert_string_equal(json_str(v, "name"), "/sbtrace/t0");
	assert_null(json_str(v, "first_exec_ts"));
	assert_true(json_flag(v, "complete") == 0 && json_flag(v, "exec_complete") == 0 &&
		    json_flag(v, "egress_complete") == 1);
	json_object_put(o);
	sbt_shellagg_free(agg);
}

/* Completeness per kind: exec and egress losses each spoil their own kind and the whole. */
static void test_completeness(void **state)
{
	struct sbt_target_totals t = { .execs = 5, .received = 5 };
	struct sbt_completeness c;

	(void)state;
	c = sbt_completeness_of(&t, true, 0);
	assert_true(c.all && c.exec && c.egress);
	/* a microVM: execs never complete, egress may be */
	c = sbt_completeness_of(&t, false, 0);
	assert_true(!c.all && !c.exec && c.egress);
	/* 21,000 denied connects through a small ring buffer: only egress records lost */
	t.eg_lost = 20950;
	c = sbt_completeness_of(&t, true, 0);
	assert_true(!c.all && c.exec && !c.egress);
	t.eg_lost = 0;
	t.lost = 1;
	c = sbt_completeness_of(&t, true, 0);
	assert_true(!c.all && !c.exec && c.egress);
	/* a record that failed to decode may be anyone's, of either kind */
	t.lost = 0;
	c = sbt_completeness_of(&t, true, 1);
	assert_true(!c.all && !c.exec && !c.egress);
}

/* The probe's sink takes what the report needs from typed events, nothing from text. */
static void test_probe_sink(void **state)
{
	struct sbt_target sb = cgroup_sb(0);
	struct sbt_shellagg *agg = sbt_shellagg_new();
	struct sbt_shell_class cls = { .kind = SBT_SHELL_COMMAND, .shell = "sh" };
	const char *argv[] = { "sh", "-c", "true" };
	struct sbt_egress denied = { .verdict = SBT_VERDICT_DENIED,
				     .count = 3,
				     .family = AF_INET6,
				     .hook = SBT_HOOK_CONNECT6,
				     .proto = 6,
				     .dport = 443,
				     .reason = SBT_REASON_NOT_IN_ALLOWLIST,
				     .comm = "curl" };
	struct sbt_egress allowed = { .verdict = SBT_VERDICT_ALLOWED,
				      .count = 2,
				      .family = AF_INET6,
				      .hook = SBT_HOOK_CONNECT6 };
	struct sbt_exec rec = { .cgroup_id = 1000 };
	struct sbt_target_totals tot = { .first_exec_ts = 42 };
	struct sbt_event ev = { .sandbox = &sb };
	struct probe_sink ps;
	json_object *d;

	struct probe_sites sites;
	struct probe_site_totals t;

	(void)state;
	memcpy(denied.daddr, "\0\0\0\0\0\0\0\0\0\0\xff\xff\xc6\x33\x64\x07", 16);
	probe_sink_init(&ps, 1000);
	probe_sites_init(&sites);
	assert_int_equal(probe_sites_other(&sites, "cmd", NULL), 0);
	ps.sites = &sites;
	ev.kind = SBT_EV_EXEC;
	ev.exec.rec = &rec;
	ps.base.ops->emit(&ps.base, &ev);
	assert_false(ps.exec_below);
	rec.cgroup_id = 1001; /* a RUN step's container, below the sandbox */
	ps.base.ops->emit(&ps.base, &ev);
	assert_true(ps.exec_below);
	assert_int_equal(ps.execs, 2); /* the build's: no boot started */
	/* a shell: tied to its site (here the build's catch-all) and counted there */
	rec.argv = argv;
	rec.argc = 3;
	rec.filename = "/bin/sh";
	rec.pid = 7;
	ev.exec.shell = &cls;
	ps.base.ops->emit(&ps.base, &ev);
	ev.exec.shell = NULL;
	json_object_put(probe_sites_json(&sites, &t));
	assert_int_equal(t.count, 1);
	assert_int_equal(t.build, 1);
	assert_int_equal(t.affecting, 1);
	assert_false(ps.sites_failed);
	ev.kind = SBT_EV_EGRESS;
	ev.egress.rec = &denied;
	ps.base.ops->emit(&ps.base, &ev);
	ev.egress.rec = &allowed;
	ps.base.ops->emit(&ps.base, &ev);
	assert_int_equal(ps.denied, 3);
	assert_int_equal(ps.allowed, 2);
	d = json_object_array_get_idx(ps.denied_dests, 0);
	assert_string_equal(json_str(d, "daddr"), "198.51.100.7");
	assert_string_equal(json_str(d, "proto"), "tcp");
	assert_string_equal(json_str(d, "reason"), "not_in_allowlist");
	assert_string_equal(json_str(d, "comm"), "curl");
	assert_int_equal(sbt_shellagg_add(agg, &cls, 5, "/bin/sh", argv, 3, NULL, 0), 0);
	ev.kind = SBT_EV_SUMMARY;
	ev.summary =
		(struct sbt_ev_summary){ .agg = agg,
					 .complete = { .all = true, .exec = true, .egress = true },
					 .exec_visible = true };
	ps.base.ops->emit(&ps.base, &ev);
	assert_true(ps.summary_seen && ps.complete.all);
	assert_int_equal(ps.shells, 1);
	ev.kind = SBT_EV_STOPPED;
	ev.stopped = (struct sbt_ev_stopped){ .totals = &tot, .nr = 1, .targets = &sb };
	ps.base.ops->emit(&ps.base, &ev);
	assert_int_equal(ps.first_exec_ts, 42);
	probe_sink_free(&ps);
	probe_sites_free(&sites);
	sbt_shellagg_free(agg);
}

/* A probe of a build that exited 0 under a complete trace: backend b, kind k. */
static void build_worked(struct probe_opts *o, struct probe_ctx *p, struct sbt_build_plan *plan,
			 enum sbt_sandbox_backend b, enum sbt_build_kind k)
{
	o->backend = b;
	p->o = o;
	p->exited = true; /* status 0 */
	p->sink.summary_seen = true;
	p->sink.execs = 5;
	p->sink.complete = (struct sbt_completeness){ .all = true, .exec = true, .egress = true };
	plan->kind = k;
}

/* The probe's events_lost follows the same rule: an egress loss spoils the answer too. */
static void test_probe_verdict_lost(void **state)
{
	static struct probe_opts o;
	static struct probe_ctx p;
	static struct sbt_build_plan plan;
	const struct sbt_completeness cases[] = {
		{ .exec = true },   /* egress records lost */
		{ .egress = true }, /* exec records lost */
		{ 0 },		    /* both */
	};
	const char *says[] = { "some egress events", "some exec events", "exec and egress" };
	struct probe_verdict v;

	(void)state;
	build_worked(&o, &p, &plan, SBT_BACKEND_NS, SBT_BUILD_MAKE);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		p.sink.complete = cases[i];
		probe_decide(&p, &plan, &v);
		assert_string_equal(v.reason, "events_lost");
		assert_string_equal(v.verdict, "inconclusive");
		assert_non_null(strstr(v.message, says[i]));
		json_object_put(v.warnings);
	}
	p.sink.complete = (struct sbt_completeness){ .all = true, .exec = true, .egress = true };
	probe_decide(&p, &plan, &v);
	assert_null(v.reason);
	assert_string_equal(v.verdict, "safe");
	json_object_put(v.warnings);
}

/*
 * Until a boot ran, no answer is a confident safe (the microVM backend, which
 * runs none, said safe/high); a boot that died is not a clean boot; a shell
 * seen stays proof either way.
 */
static void test_probe_verdict_boot(void **state)
{
	static struct probe_opts o;
	static struct probe_ctx p;
	static struct sbt_build_plan plan;
	struct probe_verdict v;

	(void)state;
	build_worked(&o, &p, &plan, SBT_BACKEND_NS, SBT_BUILD_MAKE);
	probe_sites_init(&p.sites);

	p.boot.skipped = "backend";
	probe_decide(&p, &plan, &v);
	assert_string_equal(v.verdict, "inconclusive");
	assert_string_equal(v.confidence, "low");
	assert_string_equal(v.reason, "boot_not_run");
	json_object_put(v.warnings);
	p.boot.skipped = "no_start_command";
	probe_decide(&p, &plan, &v);
	assert_string_equal(v.reason, "boot_not_run");
	assert_non_null(strstr(v.message, "--boot-cmd"));
	json_object_put(v.warnings);
	p.sink.shells = 1; /* a shell seen (tied to no site: affecting): proof without a boot */
	probe_decide(&p, &plan, &v);
	assert_string_equal(v.verdict, "unsafe");
	assert_null(v.reason);
	json_object_put(v.warnings);
	p.sink.shells = 0;

	p.boot.skipped = NULL;
	p.boot.ran = true;
	p.boot.source = BOOT_CMD;
	p.boot.argv[0] = "./server";
	p.boot.end = SBT_THEN_EXITED;
	p.boot.status = 127 << 8;
	p.boot.ms = 100;
	probe_decide(&p, &plan, &v);
	assert_string_equal(v.verdict, "inconclusive");
	assert_string_equal(v.reason, "boot_failed");
	assert_non_null(strstr(v.message, "./server"));
	assert_non_null(strstr(v.message, "exited 127"));
	assert_non_null(strstr(v.message, "command not found"));
	json_object_put(v.warnings);
	p.boot.ready_ns = 1; /* 127 even after it was ready */
	probe_decide(&p, &plan, &v);
	assert_string_equal(v.reason, "boot_failed");
	json_object_put(v.warnings);
	p.boot.status = 1 << 8; /* it listened, then exited 1: what it ran was seen */
	probe_decide(&p, &plan, &v);
	assert_string_equal(v.verdict, "safe");
	json_object_put(v.warnings);
	p.boot.ready_ns = 0; /* exited 1 before it was ready */
	probe_decide(&p, &plan, &v);
	assert_string_equal(v.reason, "boot_failed");
	assert_non_null(strstr(v.message, "before it was ready"));
	json_object_put(v.warnings);
	p.boot.status = SIGSEGV; /* a signal */
	probe_decide(&p, &plan, &v);
	assert_string_equal(v.reason, "boot_failed");
	assert_non_null(strstr(v.message, "signal 11"));
	json_object_put(v.warnings);
	p.boot.status = 0;
	probe_decide(&p, &plan, &v);
	assert_string_equal(v.verdict, "safe");
	assert_string_equal(v.confidence, "high");
	json_object_put(v.warnings);
	p.boot.argv[0] = NULL;
	probe_sites_free(&p.sites);
}

/* A microVM's tmpfs full: the build's failure has a reason of its own, naming the space. */
static void test_probe_verdict_vm_space(void **state)
{
	static struct probe_opts o;
	static struct probe_ctx p;
	static struct sbt_build_plan plan;
	struct probe_verdict v;

	(void)state;
	probe_sites_init(&p.sites);
	probe_sink_init(&p.sink, 0);
	build_worked(&o, &p, &plan, SBT_BACKEND_QEMU, SBT_BUILD_NPM);
	p.status = 1 << 8; /* npm ci failed */
	p.run.exec_stream[0] = 's';
	p.vm_mem_mb = 1666;
	p.run.con.no_space = true; /* a console line said so (the parser: test_vmconsole) */
	probe_decide(&p, &plan, &v);
	assert_string_equal(v.reason, "resource_limit");
	assert_non_null(strstr(v.message, "writable space"));
	assert_non_null(strstr(v.message, "1666 MiB"));
	json_object_put(v.warnings);
	p.run.con.no_space = false; /* another failure: build_failed */
	probe_decide(&p, &plan, &v);
	assert_string_equal(v.reason, "build_failed");
	json_object_put(v.warnings);
	probe_sink_free(&p.sink);
	probe_sites_free(&p.sites);
}

/* EventsLost from the kernel's drop counter: only what is new, once. */
static void test_lost_since(void **state)
{
	struct sbt_ev_lost ev = { 0 };
	uint64_t reported = 0;

	(void)state;
	assert_false(sbt_lost_since(0, &reported, "exec", &ev));
	assert_true(sbt_lost_since(5, &reported, "exec", &ev));
	assert_int_equal(ev.lost, 5);
	assert_int_equal(ev.lost_total, 5);
	assert_true(ev.has_total);
	assert_string_equal(ev.reason, "ringbuf_full");
	assert_string_equal(ev.kind, "exec");
	assert_int_equal(reported, 5);
	assert_false(sbt_lost_since(5, &reported, "exec", &ev)); /* said already */
	assert_true(sbt_lost_since(7, &reported, "egress", &ev));
	assert_int_equal(ev.lost, 2);
	assert_int_equal(ev.lost_total, 7);
	assert_string_equal(ev.kind, "egress");
	assert_false(sbt_lost_since(6, &reported, "exec", &ev)); /* never backwards */
	assert_int_equal(reported, 7);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lost_since),
		cmocka_unit_test(test_decide),
		cmocka_unit_test(test_fallback_line),
		cmocka_unit_test(test_hook_disabled),
		cmocka_unit_test(test_exec_mode_and_vis),
		cmocka_unit_test(test_trace_args),
		cmocka_unit_test(test_trace_args_errors),
		cmocka_unit_test(test_sinks),
		cmocka_unit_test(test_run_events_json),
		cmocka_unit_test(test_probe_sink),
		cmocka_unit_test(test_completeness),
		cmocka_unit_test(test_probe_verdict_lost),
		cmocka_unit_test(test_probe_verdict_boot),
		cmocka_unit_test(test_probe_verdict_vm_space),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
