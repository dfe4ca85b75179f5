// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The subscriber socket's greeting (sink_sub.h): a new client's first
 * lines are TraceStarted and the SandboxAdded of the sandboxes live now,
 * then the live stream; the table is bounded and its overflow told.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "event/sink_sub.h"

#define NR_SB 8

static struct sbt_target targets[NR_SB];
static struct sbt_trace_opts opts;
static const struct sbt_hook_result *const no_hooks[] = { NULL };

static void setup_targets(void)
{
	memset(targets, 0, sizeof(targets));
	for (int i = 0; i < NR_SB; i++) {
		snprintf(targets[i].name, sizeof(targets[i].name), "/sbtrace/sb-%d", i);
		targets[i].cgroup_id = 1000 + (uint64_t)i;
		targets[i].slot = (uint32_t)i;
		targets[i].origin = "cgroup";
	}
}

static char dir[] = "/tmp/test_sink_sub.XXXXXX";

/* A sink on a socket in dir, `buf` bytes per client (its clients: socketpairs). */
static struct sbt_sub_sink *sink_new(size_t buf)
{
	struct sbt_sub_sink *s = calloc(1, sizeof(*s));
	char path[64];

	assert_non_null(s);
	snprintf(path, sizeof(path), "%s/sub.sock", dir);
	assert_int_equal(sbt_sub_sink_open(s, path, buf), 0);
	return s;
}

static void emit_sb(struct sbt_sub_sink *s, enum sbt_event_kind kind, struct sbt_target *sb)
{
	struct sbt_target_totals t = { 0 };
	struct sbt_event ev = { .kind = kind, .ts = 1700000000000000000ull };

	if (kind == SBT_EV_STARTED) {
		ev.started.opts = &opts;
		ev.started.hooks = no_hooks;
	} else {
		ev.sandbox = sb;
		ev.sandbox_change.source = "cgroup_parent";
		ev.sandbox_change.registered_by = "cgroup_mkdir";
		ev.sandbox_change.totals = &t;
	}
	s->base.ops->emit(&s->base, &ev);
}

static void emit(struct sbt_sub_sink *s, enum sbt_event_kind kind, int sb)
{
	emit_sb(s, kind, &targets[sb]);
}

/* A client on a socketpair: the sink's end added, ours returned in *peer. */
static struct sbt_sub_client *connect_client(struct sbt_sub_sink *s, int *peer)
{
	int sv[2];

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv), 0);
	assert_int_equal(sbt_sub_sink_add_client(s, sv[0]), 0);
	*peer = sv[1];
	for (int i = 0; i < SBT_SUB_MAX_CLIENTS; i++)
		if (s->clients[i].fd == sv[0])
			return &s->clients[i];
	fail();
	return NULL;
}

/* The client's queued lines as "Event[:sandbox]" words, space-separated. */
static void queued(const struct sbt_sub_client *c, char *out, size_t len)
{
	char *copy = strndup(c->buf, c->len), *save = NULL;
	size_t o = 0;

	assert_non_null(copy);
	out[0] = '\0';
	for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		json_object *ev = json_tokener_parse(l), *e, *sb;

		assert_non_null(ev);
		assert_true(json_object_object_get_ex(ev, "event", &e));
		o += (size_t)snprintf(out + o, len - o, "%s%s", o ? " " : "",
				      json_object_get_string(e));
		if (json_object_object_get_ex(ev, "sandbox", &sb) && sb)
			o += (size_t)snprintf(out + o, len - o, ":%s",
					      json_object_get_string(sb) + strlen("/sbtrace/"));
		json_object_put(ev);
	}
	free(copy);
}

static void sink_free(struct sbt_sub_sink *s)
{
	sbt_sub_sink_close(s);
	free(s);
}

/* TraceStarted, then the sandboxes added and not removed, in order; then the stream. */
static void test_greeting(void **state)
{
	struct sbt_sub_sink *s = sink_new(SBT_SUB_BUF_BYTES);
	struct sbt_sub_client *first, *late;
	struct sbt_target again = targets[0];
	char got[1024];
	int p1, p2;

	(void)state;
	first = connect_client(s, &p1);
	assert_int_equal(first->len, 0); /* nothing happened yet: nothing to greet with */
	emit(s, SBT_EV_STARTED, 0);
	emit(s, SBT_EV_SANDBOX_ADDED, 0);
	emit(s, SBT_EV_SANDBOX_ADDED, 1);
	emit(s, SBT_EV_SANDBOX_ADDED, 2);
	emit(s, SBT_EV_SANDBOX_REMOVED, 1);
	queued(first, got, sizeof(got));
	assert_string_equal(got, "TraceStarted SandboxAdded:sb-0 SandboxAdded:sb-1 "
				 "SandboxAdded:sb-2 SandboxRemoved:sb-1");

	late = connect_client(s, &p2);
	queued(late, got, sizeof(got));
	assert_string_equal(got, "TraceStarted SandboxAdded:sb-0 SandboxAdded:sb-2");
	emit(s, SBT_EV_SANDBOX_ADDED, 3);
	queued(late, got, sizeof(got));
	assert_string_equal(got, "TraceStarted SandboxAdded:sb-0 SandboxAdded:sb-2 "
				 "SandboxAdded:sb-3");
	/* made again under the same name (another cgroup) before the old one's removal */
	again.cgroup_id = 9999;
	emit_sb(s, SBT_EV_SANDBOX_ADDED, &again);
	emit(s, SBT_EV_SANDBOX_REMOVED, 0);
	emit(s, SBT_EV_SANDBOX_REMOVED, 0); /* twice: nothing more to forget */
	assert_int_equal(s->greet.nr, 3);
	assert_int_equal(s->greet.not_kept, 0);
	close(p2);
	late = connect_client(s, &p2);
	queued(late, got, sizeof(got));
	assert_string_equal(got, "TraceStarted SandboxAdded:sb-2 SandboxAdded:sb-3 "
				 "SandboxAdded:sb-0");
	sink_free(s);
	close(p1);
	close(p2);
}

/* Sandboxes beyond the greeting's bytes are counted, and a late client told how many. */
static void test_greeting_bounded(void **state)
{
	/* TraceStarted ~1700 bytes, each SandboxAdded ~320: half of 6000 holds four */
	struct sbt_sub_sink *s = sink_new(6000);
	struct sbt_sub_client *c;
	char got[1024], want[1024];
	size_t o;
	int p;

	(void)state;
	emit(s, SBT_EV_STARTED, 0);
	for (int i = 0; i < 6; i++)
		emit(s, SBT_EV_SANDBOX_ADDED, i);
	assert_true(s->greet.nr >= 2 && s->greet.nr < 6);
	assert_int_equal(s->greet.nr + s->greet.not_kept, 6);
	assert_true(s->greet.started_len + 1 + s->greet.bytes <= 3000);
	emit(s, SBT_EV_SANDBOX_REMOVED, 5); /* one of those not kept */
	assert_int_equal(s->greet.nr + s->greet.not_kept, 5);
	c = connect_client(s, &p);
	queued(c, got, sizeof(got));
	o = (size_t)snprintf(want, sizeof(want), "TraceStarted");
	for (size_t i = 0; i < s->greet.nr; i++)
		o += (size_t)snprintf(want + o, sizeof(want) - o, " SandboxAdded:sb-%zu", i);
	snprintf(want + o, sizeof(want) - o, " EventsLost");
	assert_string_equal(got, want);
	assert_int_equal(c->lost, 0); /* all of it in the buffer */
	assert_non_null(strstr(c->buf, "\"reason\":\"subscriber_slow\""));
	assert_non_null(strstr(c->buf, "\"detail\":\"greeting: the SandboxAdded of "));
	/* every live one removed: the count goes back to none */
	for (int i = 0; i < 5; i++)
		emit(s, SBT_EV_SANDBOX_REMOVED, i);
	assert_int_equal(s->greet.nr, 0);
	assert_int_equal(s->greet.not_kept, 0);
	assert_int_equal(s->greet.bytes, 0);
	sink_free(s);
	close(p);
}

/* At most SBT_SUB_GREET_MAX sandboxes, however large the buffer. */
static void test_greeting_count_cap(void **state)
{
	struct sbt_sub_sink *s = sink_new(64u << 20);
	struct sbt_target t = targets[0];
	struct sbt_event ev = { .kind = SBT_EV_SANDBOX_ADDED, .ts = 1, .sandbox = &t };

	(void)state;
	ev.sandbox_change.source = "cgroup_parent";
	ev.sandbox_change.registered_by = "cgroup_mkdir";
	for (int i = 0; i < SBT_SUB_GREET_MAX + 3; i++) {
		t.cgroup_id = 5000 + (uint64_t)i;
		s->base.ops->emit(&s->base, &ev);
	}
	assert_int_equal(s->greet.nr, SBT_SUB_GREET_MAX);
	assert_int_equal(s->greet.not_kept, 3);
	sink_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_greeting),
		cmocka_unit_test(test_greeting_bounded),
		cmocka_unit_test(test_greeting_count_cap),
	};

	int ret;

	setup_targets();
	if (!mkdtemp(dir))
		return 1;
	ret = cmocka_run_group_tests(tests, NULL, NULL);
	rmdir(dir);
	return ret;
}
