// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for --egress learn in the session (userspace/session/session_learn.c
 * through session.c): egress records built here, the DNS proxy's learned
 * names faked through the ops, AllowlistProposed caught by a sink of the
 * test's own, at TraceStopped (the trace) and at a slot's end (the agent).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>

#include "egress/learn.h"
#include "session/session.h"

#define MAX_SLOTS  4
#define MAX_EVENTS 32

struct world {
	struct sbt_sink sink;
	enum sbt_event_kind kinds[MAX_EVENTS];
	size_t nr_ev;
	char rules[1024];    /* the proposal's rule texts, '|' between */
	char texts[2][512];  /* its sbtrace and flags texts */
	char dns_names[256]; /* the egress events' dns names, ',' between */
	char out_path[64];   /* the learn_out the event names */
	uint64_t connects;
	size_t never_resolved;
	struct sbt_trace_opts opts;
	struct sbt_session s;
	struct sbt_target t[MAX_SLOTS];
};

static void catch_event(struct sbt_sink *sink, const struct sbt_event *ev)
{
	struct world *w = (struct world *)sink;
	const struct sbt_ev_allowlist *al = &ev->allowlist;
	size_t o = 0;

	assert_true(w->nr_ev < MAX_EVENTS);
	w->kinds[w->nr_ev++] = ev->kind;
	if (ev->kind == SBT_EV_EGRESS && ev->egress.dns_name) {
		size_t l = strlen(w->dns_names);

		snprintf(w->dns_names + l, sizeof(w->dns_names) - l, "%s%s", l ? "," : "",
			 ev->egress.dns_name);
	}
	if (ev->kind != SBT_EV_ALLOWLIST)
		return;
	w->rules[0] = '\0';
	for (size_t i = 0; i < al->p->n; i++)
		o += (size_t)snprintf(w->rules + o, sizeof(w->rules) - o, "%s%s%s", i ? "|" : "",
				      al->p->r[i].resolved ? "" : "! ", al->p->r[i].rule.text);
	for (int i = 0; i < 2; i++)
		snprintf(w->texts[i], sizeof(w->texts[i]), "%s",
			 al->texts[i] ? al->texts[i] : "(none)");
	snprintf(w->out_path, sizeof(w->out_path), "%s", al->out ? al->out : "(none)");
	w->connects = al->connects;
	w->never_resolved = al->p->nr_unresolved;
}

static const struct sbt_sink_ops catch_ops = { .name = "test", .emit = catch_event };

/* The proxy's answers: 198.51.100.7 and .8 for api.test, nothing else. */
static bool fake_learned(void *arg, uint32_t slot, const uint8_t addr[16], char *name, size_t len,
			 uint64_t *ts)
{
	(void)arg;
	(void)slot;
	if (addr[12] != 198 || (addr[15] != 7 && addr[15] != 8))
		return false;
	snprintf(name, len, "api.test");
	*ts = 42;
	return true;
}

static int setup(void **state)
{
	struct world *w = calloc(1, sizeof(*w));
	const struct sbt_session_ops ops = { .learned_name = fake_learned, .arg = w };

	assert_non_null(w);
	w->sink.ops = &catch_ops;
	assert_int_equal(sbt_sinks_add(&w->opts, &w->sink), 0);
	assert_int_equal(sbt_session_init(&w->s, &w->opts, MAX_SLOTS, &ops), 0);
	*state = w;
	return 0;
}

static int teardown(void **state)
{
	struct world *w = *state;

	sbt_session_free(&w->s);
	free(w);
	return 0;
}

static void add_target(struct world *w, uint32_t slot, const struct sbt_egress_cfg *eg)
{
	struct sbt_target *t = &w->t[slot];

	memset(t, 0, sizeof(*t));
	snprintf(t->name, sizeof(t->name), "/test/sb%u", slot);
	t->cgroup_id = 1000 + slot;
	t->slot = slot;
	assert_int_equal(sbt_session_add(&w->s, t, eg), 0);
}

/* An audit-mode verdict record of `slot` to a.b.c.d:port. */
static void egress(struct world *w, uint32_t slot, const uint8_t a[4], uint16_t port, uint8_t proto,
		   uint8_t reason, uint64_t count)
{
	struct sbt_egress_record r;

	memset(&r, 0, sizeof(r));
	r.hdr.type = SBT_REC_EGRESS;
	r.hdr.abi = SBT_ABI_VERSION;
	r.hdr.size = sizeof(r);
	r.ts_boot_ns = 5000;
	r.count = count;
	r.slot = slot;
	r.pid = 77;
	r.dport = port;
	r.family = AF_INET;
	r.proto = proto;
	r.hook = proto == 6 ? SBT_HOOK_CONNECT4 : SBT_HOOK_SENDMSG4;
	r.reason = reason;
	r.verdict = reason == SBT_REASON_FLOOR	     ? SBT_VERDICT_DENIED
		    : reason == SBT_REASON_DNS_PROXY ? SBT_VERDICT_ALLOWED
						     : SBT_VERDICT_OBSERVED;
	r.would_deny = r.verdict == SBT_VERDICT_OBSERVED;
	r.sock_type = proto == 6 ? SOCK_STREAM : SOCK_DGRAM;
	r.daddr[10] = r.daddr[11] = 0xff;
	memcpy(r.daddr + 12, a, 4);
	memcpy(r.comm, "curl", 5);
	assert_int_equal(sbt_session_record(&w->s, &r, sizeof(r)), 0);
}

static const uint8_t api1[4] = { 198, 51, 100, 7 }, api2[4] = { 198, 51, 100, 8 },
		     hard[4] = { 203, 0, 113, 9 }, meta[4] = { 169, 254, 169, 254 },
		     lo[4] = { 127, 0, 0, 1 };

/* What a workload did: a name on two addresses, a hard-coded address, what is left out. */
static void workload(struct world *w, uint32_t slot)
{
	egress(w, slot, lo, 53, 17, SBT_REASON_DNS_PROXY, 1);		/* its DNS: the proxy's */
	egress(w, slot, api1, 443, 6, SBT_REASON_NOT_IN_ALLOWLIST, 2);	/* api.test */
	egress(w, slot, api2, 443, 6, SBT_REASON_NOT_IN_ALLOWLIST, 1);	/* api.test, rotated */
	egress(w, slot, api1, 0, 17, SBT_REASON_NOT_IN_ALLOWLIST, 1);	/* glibc's sorting */
	egress(w, slot, hard, 8443, 6, SBT_REASON_NOT_IN_ALLOWLIST, 1); /* never resolved */
	egress(w, slot, meta, 80, 6, SBT_REASON_FLOOR, 1);		/* the floor: denied */
}

static void test_trace_stop(void **state)
{
	struct world *w = *state;
	char path[] = "/tmp/test_session_learn.XXXXXX", file[512] = "";
	struct sbt_egress_cfg cfg = { .mode = SBT_EGRESS_AUDIT,
				      .learn = true,
				      .learn_formats = SBT_LEARN_SBTRACE | SBT_LEARN_FLAGS };
	int fd = mkstemp(path);
	FILE *f;

	assert_true(fd >= 0);
	close(fd);
	cfg.learn_out = path;
	add_target(w, 0, &cfg);
	workload(w, 0);
	assert_string_equal(w->dns_names, "api.test,api.test");
	sbt_session_stopped(&w->s, "test", 1);
	/* after the slot's ShellInvocationObserved, before TraceStopped */
	assert_int_equal(w->kinds[w->nr_ev - 3], SBT_EV_SUMMARY);
	assert_int_equal(w->kinds[w->nr_ev - 2], SBT_EV_ALLOWLIST);
	assert_int_equal(w->kinds[w->nr_ev - 1], SBT_EV_STOPPED);
	assert_string_equal(w->rules, "host api.test port 443 proto tcp|"
				      "! cidr 203.0.113.9/32 port 8443 proto tcp");
	assert_int_equal(w->never_resolved, 1);
	assert_int_equal(w->connects, 4);
	assert_string_equal(w->texts[1], "--allow-host 'api.test port 443 proto tcp' \\\n"
					 "--allow-cidr '203.0.113.9/32 port 8443 proto tcp'\n");
	assert_string_equal(w->out_path, path);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_true(fread(file, 1, sizeof(file) - 1, f) > 0);
	fclose(f);
	unlink(path);
	assert_string_equal(file, w->texts[0]);
}

/* The agent's path: a slot's end (sbt_session_final) has it too; a slot not learning has none. */
static void test_slot_end(void **state)
{
	struct world *w = *state;
	struct sbt_egress_cfg learn = { .mode = SBT_EGRESS_AUDIT, .learn = true },
			      audit = { .mode = SBT_EGRESS_AUDIT };
	struct sbt_target_totals tot;

	add_target(w, 1, &learn);
	add_target(w, 2, &audit);
	workload(w, 1);
	workload(w, 2);
	/* audit without learn: names only for what a host rule allowed */
	assert_string_equal(w->dns_names, "api.test,api.test");
	sbt_session_final(&w->s, 2, &tot);
	sbt_session_remove(&w->s, 2);
	assert_int_equal(w->kinds[w->nr_ev - 1], SBT_EV_SUMMARY);
	sbt_session_final(&w->s, 1, &tot);
	sbt_session_remove(&w->s, 1);
	assert_int_equal(w->kinds[w->nr_ev - 1], SBT_EV_ALLOWLIST);
	assert_string_equal(w->rules, "host api.test port 443 proto tcp|"
				      "! cidr 203.0.113.9/32 port 8443 proto tcp");
	assert_string_equal(w->out_path, "(none)");
	assert_string_equal(w->texts[1], "(none)"); /* flags not asked */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_trace_stop, setup, teardown),
		cmocka_unit_test_setup_teardown(test_slot_end, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
