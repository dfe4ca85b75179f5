// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Every kind of event through the JSON/text sink, byte for byte: the lines
 * of tests/fixtures/events/ (run from the top of the tree). They pin the
 * output while the code behind it changes, and scripts/check-schemas.sh
 * validates kinds.jsonl against the events schema (every name once at least).
 * The metrics sink's /metrics after them is pinned the same way.
 *
 * test_event_kinds DIR   write the lines into DIR instead (kinds.jsonl,
 *                        kinds.txt, metrics.prom), to look at a deliberate change
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
#include <sys/socket.h>
#include <unistd.h>

#include "egress/dnsev.h"
#include "egress/learn.h"
#include "egress/policy.h"
#include "event/events.h"
#include "event/line.h"
#include "event/metrics.h"
#include "event/sink.h"
#include "event/sink_json.h"
#include "event/sink_sub.h"
#include "exec/shell.h"
#include "exec/shellagg.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#define FIXTURES "tests/fixtures/events"
/* The run id every line of the fixtures has (the real one is random). */
#define FIXED_RUN_ID "0123456789abcdef0123456789abcdef"
#define T0	     1700000000000000000ull
#define MAX_EVENTS   32

static const char *out_dir;

/* ---- what the events carry ------------------------------------------------- */

static struct sbt_target targets[2];
static struct sbt_target_view views[2];
static struct sbt_rule rules[2];
static struct sbt_host_state hosts[1];
static struct sbt_trace_opts opts;
static struct sbt_hook_result hook_exec, hook_membership;
static const struct sbt_hook_result *const hooks[] = { &hook_exec, &hook_membership, NULL };

static const char *const make_argv[] = { "make", "-j8", "", "hello world", "x;y" };
static const char *const sh_argv[] = { "/bin/sh", "-c", "echo 'hi' \x01", "bad\xff" };
static struct sbt_exec exec_make, exec_sh;
static struct sbt_exec_fail fail_sh;
static const char *const fail_tried[] = { "/usr/local/bin/sh", "/usr/bin/sh", "/bin/sh" };
static struct sbt_shell_class sh_class;
static struct sbt_ancestor sh_anc[2];
static struct sbt_egress eg_allowed, eg_denied, eg_observed;
static struct sbt_dns_addr dns_addrs[2], dns_floored[1];
static uint32_t dns_floored_idx[1];
static struct sbt_dns_event dns_query, dns_answer;
static struct sbt_target_totals totals[2];
static struct sbt_guest_info guest;
static struct sbt_stats_sandbox stats_sbs[2];
static struct sbt_shellagg *agg;

static void v4(uint8_t a[16], uint8_t b0, uint8_t b1, uint8_t b2, uint8_t b3)
{
	memset(a, 0, 16);
	a[10] = a[11] = 0xff;
	a[12] = b0;
	a[13] = b1;
	a[14] = b2;
	a[15] = b3;
}

static void setup_targets(void)
{
	struct sbt_target *c = &targets[0], *t = &targets[1];

	memset(targets, 0, sizeof(targets));
	snprintf(c->name, sizeof(c->name), "/sbtrace/build");
	snprintf(c->path, sizeof(c->path), "/sys/fs/cgroup/sbtrace/build");
	c->cgroup_id = 4242;
	c->level = 2;
	c->origin = "cgroup";
	snprintf(t->name, sizeof(t->name), "vm-1");
	snprintf(t->path, sizeof(t->path), "/sys/fs/cgroup/sbtrace/vm-1");
	t->cgroup_id = 4343;
	t->level = 2;
	t->slot = 1;
	t->origin = "sandbox";
	t->has_tap = true;
	t->exec_hidden = true;
	snprintf(t->accel, sizeof(t->accel), "tcg");
	snprintf(t->tap.ifname, sizeof(t->tap.ifname), "sbt-tap1");
	snprintf(t->tap.netns, sizeof(t->tap.netns), "sbt-vm-1");
	v4(t->tap.guest[0], 198, 18, 0, 2);
	t->tap.nr_guest = 1;
	t->tap.has_resolver = true;
	v4(t->tap.resolver, 198, 18, 0, 1);
}

static void setup_started(void)
{
	memset(&opts, 0, sizeof(opts));
	opts.targets = targets;
	opts.nr_targets = 2;
	opts.exec.argv_max = 4096;
	opts.exec.ringbuf_bytes = 1u << 22;
	opts.exec.poll_ms = 100;
	opts.egress.mode = SBT_EGRESS_ENFORCE;
	memset(rules, 0, sizeof(rules));
	rules[0].id = 1;
	snprintf(rules[0].text, sizeof(rules[0].text), "cidr 192.0.2.0/24 port 443 proto tcp");
	rules[1].id = 2;
	snprintf(rules[1].text, sizeof(rules[1].text), "host example.test");
	opts.egress.rules = rules;
	opts.egress.nr_rules = 2;

	memset(hosts, 0, sizeof(hosts));
	snprintf(hosts[0].name, sizeof(hosts[0].name), "example.test");
	hosts[0].rule_idx = 1;
	v4(hosts[0].addrs[0], 203, 0, 113, 7);
	hosts[0].nr_addrs = 1;
	v4(hosts[0].floored[0], 169, 254, 169, 254);
	hosts[0].floored_idx[0] = 1;
	hosts[0].nr_floored = 1;
	hosts[0].ttl = 300;

	memset(views, 0, sizeof(views));
	views[0].egress.hosts = hosts;
	views[0].egress.nr_hosts = 1;
	views[0].egress.has_resolver = true;
	views[0].egress.resolver = targets[1].tap.resolver;
	views[0].egress.resolver_source = "/etc/resolv.conf";
	views[0].egress.nr_entries = 5;
	views[0].egress.dns_proxy = true;
	views[0].egress.dns_proxy_ports[0] = 5353;
	views[0].egress.dns_proxy_ports[1] = 5354;
	views[1].tap_ifindex = 17;
	views[1].tap_mode = "tcx";
	views[1].egress.nr_entries = 2;
	views[1].egress.dns_proxy = true;
	views[1].egress.dns_proxy_tap = true;
	views[1].egress.dns_proxy_tap_ports[0] = 53;
	v4(views[1].egress.dns_proxy_tap_addrs[0], 198, 18, 0, 1);
	views[1].egress.nr_dns_proxy_tap_addrs = 1;

	memset(&hook_exec, 0, sizeof(hook_exec));
	hook_exec.capability = "exec";
	sbt_hook_record(&hook_exec, "tp_btf", "load", -EOPNOTSUPP);
	sbt_hook_record(&hook_exec, "raw_tp", "attached", 0);
	hook_exec.mode = "raw_tp";
	memset(&hook_membership, 0, sizeof(hook_membership));
	hook_membership.capability = "membership";
	sbt_hook_record(&hook_membership, "ancestor_id", "attached", 0);
	hook_membership.mode = "ancestor_id";
}

static void init_exec(struct sbt_exec *e, const char *const *argv, size_t argc)
{
	memset(e, 0, sizeof(*e));
	e->cgroup_id = 4242;
	e->seq = 7;
	e->pid = 1001;
	e->tid = 1001;
	e->ppid = 1000;
	e->uid = 1000;
	e->gid = 1000;
	e->argv = (const char **)argv;
	e->argc = argc;
}

static void setup_execs(void)
{
	init_exec(&exec_make, make_argv, ARRAY_SIZE(make_argv));
	strcpy(exec_make.comm, "make");
	strcpy(exec_make.parent_comm, "bash");
	exec_make.filename = "/usr/bin/make";
	exec_make.interp = "/usr/bin/make";
	strcpy(exec_make.cwd, "src/app");
	exec_make.cwd_top = true;
	init_exec(&exec_sh, sh_argv, ARRAY_SIZE(sh_argv));
	exec_sh.pid = exec_sh.tid = 1002;
	exec_sh.ppid = 1001;
	exec_sh.seq = 8;
	strcpy(exec_sh.comm, "s\xe9h");
	strcpy(exec_sh.parent_comm, "make");
	exec_sh.filename = "/bin/sh";
	exec_sh.interp = "";
	exec_sh.flags = SBT_EXEC_INTERP_UNAVAILABLE | SBT_EXEC_ARGV_FAULT;
	exec_sh.argv_truncated = true;
	assert_true(sbt_shell_classify(exec_sh.filename, exec_sh.interp, exec_sh.argv, exec_sh.argc,
				       &sh_class));
	memset(sh_anc, 0, sizeof(sh_anc));
	sh_anc[0].pid = 1001;
	strcpy(sh_anc[0].comm, "make");
	sh_anc[0].source = SBT_ANC_EXEC;
	sh_anc[1].pid = 1000;
	strcpy(sh_anc[1].comm, "bash");
	sh_anc[1].source = SBT_ANC_PROC;
	agg = sbt_shellagg_new();
	assert_non_null(agg);
	assert_int_equal(sbt_shellagg_add(agg, &sh_class, exec_sh.pid, exec_sh.filename,
					  exec_sh.argv, exec_sh.argc, sh_anc, 2),
			 0);
	/* a shell tried where there is none, and an ELF the build wrote */
	memset(&fail_sh, 0, sizeof(fail_sh));
	fail_sh.cgroup_id = 4242;
	fail_sh.pid = fail_sh.tid = 1003;
	fail_sh.ppid = 1001;
	fail_sh.uid = 1000;
	fail_sh.err = ENOENT;
	fail_sh.dirfd = -100;
	strcpy(fail_sh.comm, "make");
	fail_sh.filename = "/usr/local/bin/sh";
	fail_sh.argv[0] = "sh";
	fail_sh.argv[1] = "-c";
	fail_sh.argv[2] = "echo hi";
	fail_sh.argc = 3;
	assert_int_equal(sbt_shellagg_add_failed(agg, &sh_class, ENOENT, fail_sh.pid,
						 fail_sh.filename, fail_sh.argv, fail_sh.argc,
						 sh_anc, 1),
			 0);
	assert_int_equal(sbt_shellagg_unidentified(agg, "/app/bin/tool", "tool", 1004, sh_argv,
						   ARRAY_SIZE(sh_argv)),
			 0);
}

static void setup_egress(void)
{
	struct sbt_egress *a = &eg_allowed, *d = &eg_denied, *o = &eg_observed;

	memset(a, 0, sizeof(*a));
	a->cgroup_id = 4242;
	a->count = 1;
	a->pid = a->tid = 1003;
	a->uid = 1000;
	a->rule_id = 2;
	a->dport = 443;
	a->family = AF_INET;
	a->proto = 6;
	a->sock_type = SOCK_STREAM;
	a->hook = SBT_HOOK_CONNECT4;
	a->verdict = SBT_VERDICT_ALLOWED;
	a->reason = SBT_REASON_RULE;
	v4(a->daddr, 203, 0, 113, 7);
	strcpy(a->comm, "curl");

	*d = *a;
	d->rule_id = 0;
	d->count = 3;
	d->verdict = SBT_VERDICT_DENIED;
	d->reason = SBT_REASON_FLOOR;
	d->floor_idx = 1;
	d->dport = 80;
	v4(d->daddr, 169, 254, 169, 254);

	*o = *a;
	o->rule_id = 0;
	o->slot = 1;
	o->cgroup_id = 0;
	o->hook = SBT_HOOK_TAP;
	o->verdict = SBT_VERDICT_OBSERVED;
	o->reason = SBT_REASON_NOT_IN_ALLOWLIST;
	o->would_deny = 1;
	o->reply = SBT_REPLY_TCP_RST;
	o->ifindex = 17;
	o->ethertype = 0x0800;
	o->proto = 17;
	o->sock_type = 0;
	o->dport = 53;
	v4(o->saddr, 198, 18, 0, 2);
	v4(o->daddr, 198, 51, 100, 9);
	strcpy(o->comm, "");
}

static void setup_dns(void)
{
	memset(&dns_query, 0, sizeof(dns_query));
	dns_query.ts = T0 + 5000;
	snprintf(dns_query.name, sizeof(dns_query.name), "other.test");
	dns_query.qtype = SBT_DNS_TYPE_AAAA;
	dns_query.proto = 6;
	dns_query.reason = "dns_name";
	dns_query.reply = "refused";
	dns_answer = dns_query;
	snprintf(dns_answer.name, sizeof(dns_answer.name), "example.test");
	dns_answer.qtype = SBT_DNS_TYPE_A;
	dns_answer.proto = 17;
	dns_answer.allowed = true;
	dns_answer.reason = NULL;
	dns_answer.rule_id = 2;
	dns_answer.answer = true;
	dns_answer.ts = T0 + 6000;
	dns_answer.reply = "answer";
	dns_answer.status = "ok";
	dns_answer.ttl = 300;
	dns_answer.grace_s = 5;
	v4(dns_addrs[0].addr, 203, 0, 113, 7);
	dns_addrs[0].ttl = 300;
	v4(dns_addrs[1].addr, 203, 0, 113, 8);
	dns_addrs[1].ttl = 60;
	dns_answer.addrs = dns_addrs;
	dns_answer.nr_addrs = 2;
	v4(dns_floored[0].addr, 169, 254, 169, 254);
	dns_floored_idx[0] = 1;
	dns_answer.floored = dns_floored;
	dns_answer.floored_idx = dns_floored_idx;
	dns_answer.nr_floored = 1;
}

/* --egress learn's proposal: a name, and an address never resolved. */
static struct sbt_learn_rule learn_rules[2];
static struct sbt_learn_proposal learn_prop = { .r = learn_rules, .n = 2, .nr_unresolved = 1 };
static const char *const learn_texts[SBT_LEARN_FORMATS] = {
	"# proposed by sbtrace --egress learn: what ran, allowed (--allowlist FILE)\n"
	"host example.test port 443 proto tcp\n"
	"# never resolved: a hard-coded address\n"
	"cidr 198.51.100.7/32 port 80 proto tcp\n",
	"--allow-host 'example.test port 443 proto tcp' \\\n"
	"--allow-cidr '198.51.100.7/32 port 80 proto tcp'\n",
};

static void setup_learn(void)
{
	struct sbt_parse_error err;

	assert_int_equal(
		sbt_rule_parse("host example.test port 443 proto tcp", &learn_rules[0].rule, &err),
		1);
	learn_rules[0].resolved = true;
	learn_rules[0].connects = 3;
	assert_int_equal(sbt_rule_parse("cidr 198.51.100.7/32 port 80 proto tcp",
					&learn_rules[1].rule, &err),
			 1);
	learn_rules[1].connects = 1;
}

static void setup_totals(void)
{
	memset(totals, 0, sizeof(totals));
	totals[0].execs = 12;
	totals[0].received = 11;
	totals[0].lost = 1;
	totals[0].complete = (struct sbt_completeness){ .egress = true };
	totals[0].first_exec_ts = T0 + 1000;
	totals[0].eg_records = 4;
	totals[0].eg_events = 3;
	totals[0].eg_denied = 1;
	totals[1].complete =
		(struct sbt_completeness){ .egress = true, .exec_reason = "guest_agent_gone" };
	memset(&guest, 0, sizeof(guest));
	guest.hello = true;
	guest.mode = "tp_btf";
	guest.kernel = "6.1.0";
	guest.hb_ms = 500;
	guest.attached_ts = T0 + 200;
	guest.frames = 9;
	guest.bytes = 4096;
	guest.bpf_run_ns = 94000;
	guest.bpf_run_cnt = 3;
	totals[1].guest = &guest;
	stats_sbs[0] = (struct sbt_stats_sandbox){
		.name = "/sbtrace/build", .execs = 12, .received = 11, .lost = 1, .shells = 1
	};
	stats_sbs[1] = (struct sbt_stats_sandbox){ .name = "vm-1" };
}

/* Every kind (every name of each), in the order a run could have them. */
static size_t build_events(struct sbt_event *evs)
{
	const struct sbt_target *c = &targets[0], *t = &targets[1];
	size_t n = 0;

	static const struct sbt_container ctr = {
		.runtime = "podman",
		.id = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
		.name = "web-1",
		.image = "localhost/app:1"
	};

	evs[n++] = (struct sbt_event){ .kind = SBT_EV_STARTED,
				       .ts = T0,
				       .started = { .opts = &opts,
						    .views = views,
						    .hooks = hooks,
						    .kernel = "6.18.0-test",
						    .attach_ms = 42 } };
	evs[n++] = (struct sbt_event){ .kind = SBT_EV_SANDBOX_ADDED,
				       .ts = T0 + 10,
				       .sandbox = c,
				       .sandbox_change = { .source = "cgroup_parent",
							   .registered_by = "cgroup_mkdir",
							   .egress_source = "policy_dir",
							   .egress_mode = "enforce",
							   .egress_rules = 2,
							   .container = &ctr } };
	evs[n++] = (struct sbt_event){
		.kind = SBT_EV_SANDBOX_ADDED,
		.ts = T0 + 20,
		.sandbox = t,
		.sandbox_change = { .source = "shim", .registered_by = "agent", .released = true }
	};
	evs[n++] = (struct sbt_event){
		.kind = SBT_EV_EXEC, .ts = T0 + 1000, .sandbox = c, .exec = { .rec = &exec_make }
	};
	evs[n++] = (struct sbt_event){
		.kind = SBT_EV_EXEC,
		.ts = T0 + 2000,
		.sandbox = c,
		.exec = { .rec = &exec_sh, .shell = &sh_class, .anc = sh_anc, .nanc = 2 }
	};
	evs[n++] = (struct sbt_event){ .kind = SBT_EV_EXEC_FAILED,
				       .ts = T0 + 3000,
				       .sandbox = c,
				       .exec_failed = { .rec = &fail_sh,
							.tried = fail_tried,
							.ntried = ARRAY_SIZE(fail_tried),
							.err = ENOENT,
							.shell = &sh_class,
							.anc = sh_anc,
							.nanc = 1 } };
	evs[n++] = (struct sbt_event){
		.kind = SBT_EV_DNS, .ts = dns_query.ts, .sandbox = c, .dns = { .rec = &dns_query }
	};
	evs[n++] = (struct sbt_event){ .kind = SBT_EV_DNS,
				       .ts = dns_answer.ts,
				       .sandbox = c,
				       .dns = { .rec = &dns_answer, .rule = "host example.test" } };
	evs[n++] = (struct sbt_event){ .kind = SBT_EV_EGRESS,
				       .ts = T0 + 7000,
				       .sandbox = c,
				       .egress = { .rec = &eg_allowed,
						   .rule = "host example.test",
						   .dns_name = "example.test",
						   .dns_ts = dns_answer.ts } };
	evs[n++] = (struct sbt_event){ .kind = SBT_EV_EGRESS,
				       .ts = T0 + 8000,
				       .sandbox = c,
				       .egress = { .rec = &eg_denied, .floor = "metadata" } };
	evs[n++] = (struct sbt_event){ .kind = SBT_EV_EGRESS,
				       .ts = T0 + 9000,
				       .sandbox = t,
				       .egress = { .rec = &eg_observed } };
	evs[n++] = (struct sbt_event){ .kind = SBT_EV_LOST,
				       .ts = T0 + 10000,
				       .lost = { .lost = 3,
						 .lost_total = 5,
						 .has_total = true,
						 .reason = "ringbuf_full",
						 .kind = "exec" } };
	evs[n++] = (struct sbt_event){
		.kind = SBT_EV_LOST,
		.ts = T0 + 11000,
		.sandbox = c,
		.lost = { .lost = 1, .reason = "decode_error", .detail = "exec record: short" }
	};
	evs[n++] = (struct sbt_event){ .kind = SBT_EV_STATS,
				       .ts = T0 + 12000,
				       .stats = { .uptime_ms = 1500,
						  .ringbuf_pending_bytes = 128,
						  .ringbuf_size_bytes = 1u << 22,
						  .sandboxes_added = 2,
						  .targets = stats_sbs,
						  .nr = 2 } };
	evs[n++] = (struct sbt_event){
		.kind = SBT_EV_SUMMARY,
		.ts = T0 + 13000,
		.sandbox = c,
		.summary = { .agg = agg, .complete = totals[0].complete, .exec_visible = true }
	};
	evs[n++] = (struct sbt_event){ .kind = SBT_EV_ALLOWLIST,
				       .ts = T0 + 13500,
				       .sandbox = c,
				       .allowlist = { .p = &learn_prop,
						      .texts = learn_texts,
						      .connects = 4,
						      .egress_complete = true,
						      .out = "/tmp/allowlist" } };
	evs[n++] =
		(struct sbt_event){ .kind = SBT_EV_SANDBOX_REMOVED,
				    .ts = T0 + 14000,
				    .sandbox = t,
				    .sandbox_change = { .source = "shim", .totals = &totals[1] } };
	evs[n++] = (struct sbt_event){ .kind = SBT_EV_STOPPED,
				       .ts = T0 + 15000,
				       .stopped = { .reason = "signal",
						    .duration_ms = 15,
						    .decode_errors = 1,
						    .targets = targets,
						    .totals = totals,
						    .nr = 2 } };
	assert_true(n <= MAX_EVENTS);
	return n;
}

/* ---- the check ---------------------------------------------------------------- */

/* `s` with every run id replaced by FIXED_RUN_ID (the same length). */
static void fix_run_id(char *s)
{
	const char *id = sbt_run_id();
	size_t len = strlen(id);

	assert_int_equal(len, strlen(FIXED_RUN_ID));
	for (char *p = strstr(s, id); p; p = strstr(p + len, id))
		memcpy(p, FIXED_RUN_ID, len);
}

static char *read_file(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t size = 0;
	FILE *m = open_memstream(&buf, &size);
	int c;

	if (!f)
		fail_msg("cannot read %s (run from the top of the tree)", path);
	assert_non_null(m);
	while ((c = fgetc(f)) != EOF)
		fputc(c, m);
	fclose(f);
	assert_int_equal(fclose(m), 0);
	return buf;
}

/* The first line where got and want differ, both printed: what to look at. */
static void assert_same_lines(const char *got, const char *want, const char *what)
{
	size_t line = 1;
	const char *g = got, *w = want;

	while (*g && *g == *w) {
		line += *g == '\n';
		g++;
		w++;
	}
	if (*g == *w)
		return;
	while (g > got && g[-1] != '\n' && w > want && w[-1] != '\n') {
		g--;
		w--;
	}
	fail_msg("%s: line %zu differs:\n got: %.*s\nwant: %.*s", what, line, (int)strcspn(g, "\n"),
		 g, (int)strcspn(w, "\n"), w);
}

/* Every event through one sink of `format`; its output, run id fixed. */
static char *sink_output(enum sbt_format format)
{
	struct sbt_event evs[MAX_EVENTS];
	struct sbt_json_sink sink;
	struct sbt_trace_opts sinks;
	char *buf = NULL;
	size_t size = 0, n = build_events(evs);
	FILE *f = open_memstream(&buf, &size);

	assert_non_null(f);
	memset(&sinks, 0, sizeof(sinks));
	sbt_json_sink_init(&sink, f, format);
	assert_int_equal(sbt_sinks_add(&sinks, &sink.base), 0);
	for (size_t i = 0; i < n; i++)
		sbt_sinks_emit(&sinks, &evs[i]);
	assert_int_equal(sbt_sinks_flush(&sinks), 0);
	assert_int_equal(sink.written, n);
	assert_int_equal(fclose(f), 0);
	fix_run_id(buf);
	return buf;
}

/* got (freed) against the fixture `name`, or written into out_dir. */
static void check_fixture(char *got, const char *name)
{
	char path[512], *want;

	if (out_dir) {
		FILE *f;

		snprintf(path, sizeof(path), "%s/%s", out_dir, name);
		f = fopen(path, "w");
		assert_non_null(f);
		fputs(got, f);
		assert_int_equal(fclose(f), 0);
		free(got);
		return;
	}
	snprintf(path, sizeof(path), "%s/%s", FIXTURES, name);
	want = read_file(path);
	assert_same_lines(got, want, path);
	free(want);
	free(got);
}

static void test_json_lines(void **state)
{
	(void)state;
	check_fixture(sink_output(SBT_FORMAT_JSON), "kinds.jsonl");
}

static void test_text_lines(void **state)
{
	(void)state;
	check_fixture(sink_output(SBT_FORMAT_TEXT), "kinds.txt");
}

/* The metrics sink after every kind, rendered with the loader's part: every family. */
static void test_metrics_lines(void **state)
{
	static const struct sbt_prog_stats progs[] = {
		{ .name = "sbt_exec", .run_time_ns = 1500000, .run_cnt = 1000 },
		{ .name = "sbt_connect4", .run_time_ns = 2000, .run_cnt = 4 },
	};
	const struct sbt_metrics_runtime rt = { .version = "0.1.0",
						.abi = 3,
						.exec_mode = "tp_btf",
						.start_time_seconds = 1700000000.5,
						.attach_duration_seconds = 0.042,
						.targets = 1,
						.sandboxes_unregistered = 2,
						.ringbuf_pending_bytes = 128,
						.ringbuf_size_bytes = 1u << 22,
						.progs = progs,
						.nr_progs = 2,
						.stats_enabled = 1 };
	struct sbt_metrics_sink *ms = sbt_metrics_sink_new();
	struct sbt_event evs[MAX_EVENTS];
	struct sbt_trace_opts sinks;
	size_t n = build_events(evs), len;
	char *text;

	(void)state;
	assert_non_null(ms);
	memset(&sinks, 0, sizeof(sinks));
	assert_int_equal(sbt_sinks_add(&sinks, sbt_metrics_sink_base(ms)), 0);
	for (size_t i = 0; i < n; i++)
		sbt_sinks_emit(&sinks, &evs[i]);
	text = sbt_metrics_render_str(ms, &rt, &len);
	assert_non_null(text);
	assert_int_equal(strlen(text), len);
	sbt_metrics_sink_free(ms);
	check_fixture(text, "metrics.prom");
}

/* A sink that takes the event's line, as the JSON and subscriber sinks do. */
struct line_sink {
	struct sbt_sink base;
	uintptr_t text; /* where the line was (its memory is the event's) */
	size_t len;
};

static void line_emit(struct sbt_sink *s, const struct sbt_event *ev)
{
	struct line_sink *ls = (struct line_sink *)s;

	ls->text = (uintptr_t)sbt_event_line(ev, &ls->len);
}

static const struct sbt_sink_ops line_ops = { .name = "line", .emit = line_emit };

/*
 * Serialized once: every sink of an event gets the same line, and the
 * subscriber socket's clients the JSON sink's bytes.
 */
static void test_line_once(void **state)
{
	struct sbt_event evs[MAX_EVENTS];
	struct line_sink a = { .base.ops = &line_ops }, b = { .base.ops = &line_ops };
	struct sbt_json_sink js;
	struct sbt_sub_sink *sub = calloc(1, sizeof(*sub));
	struct sbt_trace_opts sinks;
	char dir[] = "/tmp/test_event_kinds.XXXXXX", path[64], *buf = NULL;
	size_t size = 0, n = build_events(evs);
	FILE *f = open_memstream(&buf, &size);
	int sv[2];

	(void)state;
	assert_non_null(sub);
	assert_non_null(f);
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/sub.sock", dir);
	assert_int_equal(sbt_sub_sink_open(sub, path, SBT_SUB_BUF_BYTES), 0);
	/* one client, as if accepted */
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	sub->clients[0].fd = sv[0];
	sub->clients[0].buf = malloc(sub->buf_bytes);
	assert_non_null(sub->clients[0].buf);
	memset(&sinks, 0, sizeof(sinks));
	sbt_json_sink_init(&js, f, SBT_FORMAT_JSON);
	assert_int_equal(sbt_sinks_add(&sinks, &a.base), 0);
	assert_int_equal(sbt_sinks_add(&sinks, &js.base), 0);
	assert_int_equal(sbt_sinks_add(&sinks, &sub->base), 0);
	assert_int_equal(sbt_sinks_add(&sinks, &b.base), 0);
	for (size_t i = 0; i < n; i++) {
		sbt_sinks_emit(&sinks, &evs[i]);
		assert_true(a.text != 0);
		assert_true(a.text == b.text);
		assert_int_equal(a.len, b.len);
	}
	assert_int_equal(fclose(f), 0);
	assert_int_equal(sub->clients[0].len, size);
	assert_memory_equal(sub->clients[0].buf, buf, size);
	/* a sink handed an event directly (no sbt_sinks_emit) builds a line of its own */
	line_emit(&a.base, &evs[0]);
	assert_true(a.text != 0);
	assert_true(a.len > 0);
	sbt_sub_sink_close(sub);
	close(sv[1]);
	rmdir(dir);
	free(sub);
	free(buf);
}

static int setup(void **state)
{
	(void)state;
	setup_targets();
	setup_started();
	setup_execs();
	setup_egress();
	setup_dns();
	setup_learn();
	setup_totals();
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	sbt_shellagg_free(agg);
	return 0;
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json_lines),
		cmocka_unit_test(test_text_lines),
		cmocka_unit_test(test_metrics_lines),
		cmocka_unit_test(test_line_once),
	};

	if (argc > 1)
		out_dir = argv[1];
	return cmocka_run_group_tests(tests, setup, teardown);
}
