// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for what `sbtrace agent` adds in userspace: its options, the
 * Prometheus metrics (counters, label escaping, the sink, rendering), the
 * RFC 3339 time of every event and the JSON sink's reopen (log rotation).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <dirent.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "cmd/agent_cmd.h"
#include "event/events.h"
#include "event/sink_json.h"
#include "event/metrics.h"
#include "lib/io.h"
#include "event/sink.h"
#include "event/sink_sub.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static int parse(struct sbt_agent_opts *o, const char **args, int n)
{
	char *argv[16];

	for (int i = 0; i < n; i++)
		argv[i] = (char *)args[i];
	argv[n] = NULL;
	return sbt_agent_args_parse(n, argv, o);
}

static void test_agent_args(void **state)
{
	static struct sbt_agent_opts o;
	const char *ok[] = { "agent",
			     "--cgroup-parent",
			     "/machine.slice",
			     "--metrics-addr",
			     "127.0.0.1:9464",
			     "--stats-interval",
			     "2.5",
			     "--max-sandboxes",
			     "4096" };
	const char *noshim[] = { "agent", "--no-shim" };
	const char *badaddr[] = { "agent", "--metrics-addr", "localhost:9464" };
	const char *badmax[] = { "agent", "--max-sandboxes", "0" };
	const char *pdir_alone[] = { "agent", "--policy-dir", "/etc/sbtrace/policies" };
	const char *pdir[] = { "agent", "--cgroup-parent", "/pods", "--policy-dir", "/etc/p" };

	(void)state;
	assert_int_equal(parse(&o, ok, ARRAY_SIZE(ok)), -1);
	assert_int_equal(o.nr_parents, 1);
	assert_string_equal(o.parents[0], "/machine.slice");
	assert_int_equal(o.trace.stats_interval_ms, 2500);
	assert_int_equal(o.max_sandboxes, 4096);
	assert_int_equal(o.trace.exec.max_sandboxes, 4096);
	assert_true(o.trace.exec.agent);
	assert_int_equal(o.trace.egress.mode, SBT_EGRESS_OFF);
	assert_true(o.trace.exec.policy); /* the egress hooks, for sandboxes with a policy */
	assert_int_equal(o.trace.exec.agent_mkdir_mode, SBT_EGRESS_OBSERVE);
	assert_null(o.policy_dir);
	assert_non_null(o.state_dir);
	assert_int_equal(parse(&o, noshim, ARRAY_SIZE(noshim)), SBT_EXIT_USAGE);
	assert_int_equal(parse(&o, badaddr, ARRAY_SIZE(badaddr)), SBT_EXIT_USAGE);
	assert_int_equal(parse(&o, badmax, ARRAY_SIZE(badmax)), SBT_EXIT_USAGE);
	/* --policy-dir is for --cgroup-parent children; their new slots start denied */
	assert_int_equal(parse(&o, pdir_alone, ARRAY_SIZE(pdir_alone)), SBT_EXIT_USAGE);
	assert_int_equal(parse(&o, pdir, ARRAY_SIZE(pdir)), -1);
	assert_string_equal(o.policy_dir, "/etc/p");
	assert_int_equal(o.trace.exec.agent_mkdir_mode, SBT_EGRESS_PENDING);
}

static void test_hostport(void **state)
{
	struct sockaddr_storage ss;
	unsigned int len;

	(void)state;
	assert_int_equal(sbt_parse_hostport("127.0.0.1:9464", &ss, &len), 0);
	assert_int_equal(ss.ss_family, AF_INET);
	assert_int_equal(ntohs(((struct sockaddr_in *)&ss)->sin_port), 9464);
	assert_int_equal(sbt_parse_hostport("[::1]:80", &ss, &len), 0);
	assert_int_equal(ss.ss_family, AF_INET6);
	assert_int_equal(sbt_parse_hostport("::1:80", &ss, &len), -EINVAL); /* brackets */
	assert_int_equal(sbt_parse_hostport("127.0.0.1", &ss, &len), -EINVAL);
	assert_int_equal(sbt_parse_hostport("127.0.0.1:65536", &ss, &len), -EINVAL);
	assert_int_equal(sbt_parse_hostport("127.0.0.1:", &ss, &len), -EINVAL);
}

static void test_rfc3339(void **state)
{
	char buf[48];

	(void)state;
	assert_string_equal(sbt_rfc3339_ns(0, buf, sizeof(buf)), "1970-01-01T00:00:00.000000000Z");
	/* above 2^53: exact in the text, where a double would round */
	assert_string_equal(sbt_rfc3339_ns(1700000000123456789ull, buf, sizeof(buf)),
			    "2023-11-14T22:13:20.123456789Z");
	assert_int_equal(strlen(sbt_run_id()), 32);
	assert_string_equal(sbt_run_id(), sbt_run_id());
}

static void test_counters(void **state)
{
	struct sbt_counters cs = { 0 };
	char l[256];
	size_t o = 0;

	(void)state;
	for (int i = 0; i < 1000; i++) { /* grows past its first table */
		char k[32];

		snprintf(k, sizeof(k), "sandbox=\"s%d\"", i % 300);
		assert_int_equal(sbt_counters_add(&cs, k, 1), 0);
	}
	assert_int_equal(cs.n, 300);
	assert_int_equal(sbt_counters_get(&cs, "sandbox=\"s7\""), 4);
	assert_int_equal(sbt_counters_get(&cs, "sandbox=\"s299\""), 3);
	sbt_metrics_label(l, sizeof(l), &o, "sandbox", "a\"b\\c\nd");
	assert_string_equal(l, "sandbox=\"a\\\"b\\\\c\\nd\"");
	sbt_metrics_label(l, sizeof(l), &o, "kind", "x");
	assert_string_equal(l, "sandbox=\"a\\\"b\\\\c\\nd\",kind=\"x\"");
	/* a sandbox's series go with it, and only its own (s1 is no prefix of s10) */
	sbt_counters_add(&cs, "sandbox=\"s1\",shell=\"sh\"", 5);
	sbt_counters_drop_prefix(&cs, "sandbox=\"s1\"");
	assert_int_equal(sbt_counters_get(&cs, "sandbox=\"s1\""), 0);
	assert_int_equal(sbt_counters_get(&cs, "sandbox=\"s1\",shell=\"sh\""), 0);
	assert_int_equal(sbt_counters_get(&cs, "sandbox=\"s10\""), 4);
	assert_int_equal(cs.n, 299);
	sbt_counters_free(&cs);
}

static void test_metrics_sink(void **state)
{
	struct sbt_metrics_sink *ms = sbt_metrics_sink_new();
	struct sbt_sink *s = sbt_metrics_sink_base(ms);
	struct sbt_target sb = { .name = "/machine.slice/a" };
	struct sbt_shell_class cls = { .kind = SBT_SHELL_COMMAND, .shell = "busybox sh" };
	struct sbt_prog_stats progs[] = { { "exec_tp_btf", 2500000000ull, 10 } };
	struct sbt_metrics_runtime rt = { .version = "0.1.0",
					  .abi = 2,
					  .exec_mode = "tp_btf",
					  .targets = 1,
					  .progs = progs,
					  .nr_progs = 1 };
	struct sbt_exec rec = { 0 };
	struct sbt_event ev = { .kind = SBT_EV_EXEC, .sandbox = &sb };
	size_t len;
	char *text;

	(void)state;
	assert_non_null(ms);
	ev.exec.rec = &rec;
	s->ops->emit(s, &ev);
	ev.exec.shell = &cls;
	s->ops->emit(s, &ev);
	ev = (struct sbt_event){ .kind = SBT_EV_LOST };
	ev.lost = (struct sbt_ev_lost){ .lost = 3, .reason = "ringbuf_full", .kind = "exec" };
	s->ops->emit(s, &ev);
	text = sbt_metrics_render_str(ms, &rt, &len);
	assert_non_null(text);
	assert_int_equal(strlen(text), len);
	assert_non_null(strstr(text, "# TYPE sbtrace_sandbox_execs_total counter\n"));
	assert_non_null(
		strstr(text, "sbtrace_sandbox_execs_total{sandbox=\"/machine.slice/a\"} 2\n"));
	assert_non_null(strstr(text, "sbtrace_shell_invocations_total{sandbox=\"/machine.slice/a\","
				     "shell=\"busybox sh\",kind=\"command\"} 1\n"));
	assert_non_null(strstr(
		text, "sbtrace_events_lost_total{kind=\"exec\",reason=\"ringbuf_full\"} 3\n"));
	assert_non_null(strstr(text,
			       "sbtrace_bpf_program_run_seconds_total{program=\"exec_tp_btf\"} "
			       "2.500000000\n"));
	assert_non_null(strstr(
		text, "sbtrace_build_info{version=\"0.1.0\",abi=\"2\",exec_hook=\"tp_btf\"} 1\n"));
	/* the host counters: no sandbox label; label sets never seen are there at 0 */
	assert_non_null(strstr(text, "\nsbtrace_execs_total 2\n"));
	assert_non_null(
		strstr(text, "sbtrace_shells_total{shell=\"busybox sh\",kind=\"command\"} 1\n"));
	assert_non_null(strstr(text, "sbtrace_shells_total{shell=\"bash\",kind=\"script\"} 0\n"));
	assert_non_null(strstr(
		text, "sbtrace_egress_total{verdict=\"denied\",reason=\"not_in_allowlist\"} 0\n"));
	assert_non_null(
		strstr(text, "sbtrace_egress_would_deny_total{reason=\"not_in_allowlist\"} 0\n"));
	assert_non_null(strstr(
		text, "sbtrace_events_lost_total{kind=\"egress\",reason=\"ringbuf_full\"} 0\n"));
	free(text);
	/* a removed sandbox: its info at once, its counters after the retention */
	sbt_metrics_sink_config(ms, 30ull * 1000000000ull, 1);
	ev = (struct sbt_event){ .kind = SBT_EV_SANDBOX_REMOVED, .sandbox = &sb, .ts = 1000 };
	s->ops->emit(s, &ev);
	sbt_metrics_sink_expire(ms, 1000 + 29ull * 1000000000ull);
	text = sbt_metrics_render_str(ms, NULL, &len);
	assert_non_null(
		strstr(text, "sbtrace_sandbox_execs_total{sandbox=\"/machine.slice/a\"} 2\n"));
	assert_null(strstr(text, "sbtrace_sandbox_info{"));
	free(text);
	sbt_metrics_sink_expire(ms, 1000 + 31ull * 1000000000ull);
	text = sbt_metrics_render_str(ms, NULL, &len);
	assert_null(strstr(text, "/machine.slice/a"));
	assert_non_null(strstr(text, "\nsbtrace_execs_total 2\n")); /* the host's stay */
	free(text);
	sbt_metrics_sink_free(ms);
}

/* --metrics-no-sandbox-label: the host families alone. */
static void test_metrics_no_sandbox(void **state)
{
	struct sbt_metrics_sink *ms = sbt_metrics_sink_new();
	struct sbt_sink *s = sbt_metrics_sink_base(ms);
	struct sbt_target sb = { .name = "/machine.slice/b" };
	struct sbt_exec rec = { 0 };
	struct sbt_egress eg = { .verdict = SBT_VERDICT_OBSERVED,
				 .reason = SBT_REASON_NOT_IN_ALLOWLIST,
				 .would_deny = 1,
				 .count = 4 };
	struct sbt_event ev = { .kind = SBT_EV_EXEC, .sandbox = &sb };
	size_t len;
	char *text;

	(void)state;
	sbt_metrics_sink_config(ms, 0, 0);
	ev.exec.rec = &rec;
	s->ops->emit(s, &ev);
	ev = (struct sbt_event){ .kind = SBT_EV_EGRESS, .sandbox = &sb };
	ev.egress.rec = &eg;
	s->ops->emit(s, &ev);
	text = sbt_metrics_render_str(ms, NULL, &len);
	assert_null(strstr(text, "machine.slice"));
	assert_non_null(strstr(text, "\nsbtrace_execs_total 1\n"));
	assert_non_null(strstr(
		text,
		"sbtrace_egress_total{verdict=\"observed\",reason=\"not_in_allowlist\"} 4\n"));
	assert_non_null(
		strstr(text, "sbtrace_egress_would_deny_total{reason=\"not_in_allowlist\"} 4\n"));
	free(text);
	sbt_metrics_sink_free(ms);
}

/* --metrics-container-label: a container's name and image on its info series, "" for others. */
static void test_metrics_container_labels(void **state)
{
	static const struct sbt_container ctr = {
		.runtime = "podman", .id = "ab", .name = "web-\"1\"", .image = "localhost/app:1"
	};
	struct sbt_metrics_sink *ms = sbt_metrics_sink_new();
	struct sbt_sink *s = sbt_metrics_sink_base(ms);
	struct sbt_target a = { .name = "/pods/libpod-ab" }, b = { .name = "/pods/job" };
	struct sbt_event ev = { .kind = SBT_EV_SANDBOX_ADDED, .sandbox = &a };
	size_t len;
	char *text;

	(void)state;
	sbt_metrics_sink_config(ms, 0, 1);
	sbt_metrics_sink_container_labels(ms, true);
	ev.sandbox_change = (struct sbt_ev_sandbox){ .source = "cgroup_parent", .container = &ctr };
	s->ops->emit(s, &ev);
	ev.sandbox = &b;
	ev.sandbox_change.container = NULL;
	s->ops->emit(s, &ev);
	text = sbt_metrics_render_str(ms, NULL, &len);
	assert_non_null(strstr(
		text, "sbtrace_sandbox_info{sandbox=\"/pods/libpod-ab\",source=\"cgroup_"
		      "parent\",container=\"web-\\\"1\\\"\",image=\"localhost/app:1\"} 1\n"));
	assert_non_null(strstr(text, "sbtrace_sandbox_info{sandbox=\"/pods/job\",source=\"cgroup_"
				     "parent\",container=\"\",image=\"\"} 1\n"));
	free(text);
	sbt_metrics_sink_free(ms);
}

static void test_metrics_file(void **state)
{
	char dir[] = "/tmp/sbt-test-metrics.XXXXXX", path[128], buf[160];
	struct dirent *e;
	struct stat st;
	int n = 0;
	DIR *d;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/m.prom", dir);
	/* what the agent does with --metrics-file */
	assert_int_equal(sbt_write_atomic(path, "a 1\n", 4, 0644, 0), 0);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_non_null(fgets(buf, sizeof(buf), f));
	assert_string_equal(buf, "a 1\n");
	fclose(f);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777,
			 0644); /* readable by the collector, whatever the umask */
	d = opendir(dir);
	assert_non_null(d);
	while ((e = readdir(d)))
		n += e->d_name[0] != '.' || (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."));
	closedir(d);
	assert_int_equal(n, 1); /* renamed, no temporary file left */
	unlink(path);
	rmdir(dir);
}

/* Rename, reopen: the old file keeps what was written, the new one gets the rest. */
static void test_sink_reopen(void **state)
{
	char dir[] = "/tmp/sbt-test-reopen.XXXXXX", path[128], old[140];
	struct sbt_json_sink js;
	char line[256];
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/out.jsonl", dir);
	snprintf(old, sizeof(old), "%s.1", path);
	f = fopen(path, "w");
	fputs("{\"before\":1}\n", f);
	fclose(f);
	assert_int_equal(sbt_json_sink_open(&js, path, SBT_FORMAT_JSON), 0);
	assert_int_equal(sbt_json_sink_write(&js, json_tokener_parse("{\"n\":1}")), 0);
	assert_int_equal(rename(path, old), 0);
	assert_int_equal(js.base.ops->reopen(&js.base), 0);
	assert_int_equal(sbt_json_sink_write(&js, json_tokener_parse("{\"n\":2}")), 0);
	assert_int_equal(sbt_json_sink_close(&js), 0);
	f = fopen(old, "r");
	assert_non_null(fgets(line, sizeof(line), f)); /* appended, not truncated */
	assert_string_equal(line, "{\"before\":1}\n");
	assert_non_null(fgets(line, sizeof(line), f));
	assert_string_equal(line, "{\"n\":1}\n");
	assert_null(fgets(line, sizeof(line), f));
	fclose(f);
	f = fopen(path, "r");
	assert_non_null(fgets(line, sizeof(line), f));
	assert_string_equal(line, "{\"n\":2}\n");
	assert_null(fgets(line, sizeof(line), f));
	fclose(f);
	unlink(path);
	unlink(old);
	rmdir(dir);
}

/* A file's writes end at line ends, also past the stdio buffer: tailing readers see whole lines. */
static void test_sink_whole_lines(void **state)
{
	char dir[] = "/tmp/sbt-test-lines.XXXXXX", path[128], pad[600];
	struct sbt_json_sink js;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/out.jsonl", dir);
	memset(pad, 'x', sizeof(pad) - 1);
	pad[sizeof(pad) - 1] = '\0';
	assert_int_equal(sbt_json_sink_open(&js, path, SBT_FORMAT_JSON), 0);
	for (int i = 0; i < 4000; i++) { /* ~2.4 MB: the 256 KiB buffer fills nine times */
		json_object *o = json_object_new_object();

		json_object_object_add(o, "i", json_object_new_int(i));
		json_object_object_add(o, "pad", json_object_new_string(pad));
		assert_int_equal(sbt_json_sink_write(&js, o), 0);
		if (i % 97 == 0) {
			FILE *f = fopen(path, "r");
			long size;
			int last = '\n';

			assert_non_null(f);
			fseek(f, 0, SEEK_END);
			size = ftell(f);
			if (size > 0) {
				fseek(f, size - 1, SEEK_SET);
				last = fgetc(f);
			}
			fclose(f);
			assert_int_equal(last, '\n');
		}
	}
	assert_int_equal(sbt_json_sink_close(&js), 0);
	unlink(path);
	rmdir(dir);
}

/* A client that does not read loses lines, is told how many, and never blocks the writer. */
static void test_sub_slow_client(void **state)
{
	struct sbt_sub_sink s;
	int sp[2];
	char line[64], got[4096];
	ssize_t n;

	(void)state;
	memset(&s, 0, sizeof(s));
	s.listen_fd = -1;
	s.buf_bytes = 300;
	for (int i = 0; i < SBT_SUB_MAX_CLIENTS; i++)
		s.clients[i].fd = -1;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sp), 0);
	s.clients[0].fd = sp[0];
	s.clients[0].buf = malloc(s.buf_bytes);
	for (int i = 0; i < 12; i++) { /* 12 x 30 bytes into a 300-byte buffer: 10 fit */
		snprintf(line, sizeof(line), "{\"n\":%02d,\"pad\":\"xxxxxxxxxxxx\"}\n", i);
		assert_int_equal(strlen(line), 30);
		sbt_sub_sink_line(&s, line, strlen(line));
	}
	assert_int_equal(s.clients[0].lost, 2);
	assert_int_equal(s.clients[0].len, 300);
	s.listen_fd = sp[1]; /* pump needs a listener; accept on a connected socket fails */
	sbt_sub_sink_pump(&s);
	assert_int_equal(s.clients[0].len, 0);
	sbt_sub_sink_line(&s, "{\"n\":5}\n", 8); /* first the EventsLost, then the line */
	assert_int_equal(s.clients[0].lost, 0);
	assert_int_equal(s.clients[0].lost_total, 2);
	sbt_sub_sink_pump(&s);
	n = read(sp[1], got, sizeof(got) - 1);
	assert_true(n > 0);
	got[n] = '\0';
	assert_non_null(strstr(got, "{\"n\":09,"));
	assert_null(strstr(got, "{\"n\":10,"));
	assert_non_null(strstr(got, "\"event\":\"EventsLost\""));
	assert_non_null(strstr(got, "\"lost\":2,"));
	assert_non_null(strstr(got, "\"reason\":\"subscriber_slow\""));
	assert_true(strstr(got, "EventsLost") < strstr(got, "{\"n\":5}"));
	s.listen_fd = -1;
	close(sp[1]);
	sbt_sub_sink_close(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_agent_args),
		cmocka_unit_test(test_hostport),
		cmocka_unit_test(test_rfc3339),
		cmocka_unit_test(test_counters),
		cmocka_unit_test(test_metrics_sink),
		cmocka_unit_test(test_metrics_no_sandbox),
		cmocka_unit_test(test_metrics_container_labels),
		cmocka_unit_test(test_metrics_file),
		cmocka_unit_test(test_sink_reopen),
		cmocka_unit_test(test_sub_slow_client),
		cmocka_unit_test(test_sink_whole_lines),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
