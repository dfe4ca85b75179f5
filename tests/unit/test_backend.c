// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for the sandbox backends' names and capabilities
 * (sbt_backend_name/parse/caps, userspace/sandbox/backend.c), the
 * combinations the capabilities rule out (sbt_sandbox_check) and the state
 * file's backend fields (userspace/sandbox/state.c): one backend's fields
 * are refused in another's.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sandbox/sandbox.h"

static void test_names_round_trip(void **state)
{
	static const char *const names[] = { "ns", "podman", "qemu" };
	enum sbt_sandbox_backend b;

	for (int i = 0; i < SBT_BACKEND__MAX; i++) {
		assert_string_equal(sbt_backend_name((enum sbt_sandbox_backend)i), names[i]);
		assert_int_equal(sbt_backend_parse(names[i], &b), 0);
		assert_int_equal(b, i);
	}
	assert_int_equal(SBT_BACKEND_NS, 0); /* a zeroed spec is an ns one */
}

static void test_parse_refuses(void **state)
{
	enum sbt_sandbox_backend b = SBT_BACKEND_QEMU;

	assert_int_equal(sbt_backend_parse("", &b), -EINVAL);
	assert_int_equal(sbt_backend_parse("NS", &b), -EINVAL);
	assert_int_equal(sbt_backend_parse("qemu ", &b), -EINVAL);
	assert_int_equal(sbt_backend_parse("docker", &b), -EINVAL);
	assert_int_equal(sbt_backend_parse(NULL, &b), -EINVAL);
	assert_int_equal(b, SBT_BACKEND_QEMU); /* untouched */
	assert_null(sbt_backend_name(SBT_BACKEND__MAX));
	assert_null(sbt_backend_name((enum sbt_sandbox_backend) - 1));
}

/* Write NAME.json into a private state dir and read it back; the error text. */
static int read_state(const char *json, char *err, size_t errlen)
{
	char dir[] = "/tmp/sbt-test-backend.XXXXXX", path[PATH_MAX];
	struct sbt_sandbox_state st;
	int fd, ret;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/x.json", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, json, strlen(json)), (ssize_t)strlen(json));
	close(fd);
	err[0] = '\0';
	ret = sbt_state_read(dir, "x", &st, err, errlen);
	unlink(path);
	rmdir(dir);
	return ret;
}

#define STATE_HEAD                                                                                 \
	"{\"name\":\"x\",\"backend\":\"%s\",\"cgroup\":\"/sys/fs/cgroup/sbtrace/x\","              \
	"\"cgroup_id\":42,\"pid\":100,\"shim_pid\":99,\"netns\":\"/proc/100/ns/net\","             \
	"\"start_ns\":1%s}"

static void test_state_foreign_fields(void **state)
{
	char json[1024], err[PATH_MAX + 512];

	snprintf(json, sizeof(json), STATE_HEAD, "ns", ",\"tap\":\"sbt1\"");
	assert_int_equal(read_state(json, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "field 'tap' belongs to backend qemu only"));
	snprintf(json, sizeof(json), STATE_HEAD, "podman", ",\"guest_addrs\":[]");
	assert_int_equal(read_state(json, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "field 'guest_addrs' belongs to backend qemu only"));
	/* an unknown backend has none of the known backends' fields either */
	snprintf(json, sizeof(json), STATE_HEAD, "other", ",\"tap_ifindex\":3");
	assert_int_equal(read_state(json, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "field 'tap_ifindex' belongs to backend qemu only"));
}

static void test_state_qemu_needs_its_fields(void **state)
{
	char json[1024], err[PATH_MAX + 512];

	snprintf(json, sizeof(json), STATE_HEAD, "qemu", "");
	assert_int_equal(read_state(json, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "field 'tap' is missing"));
}

/* "egress" (sbtrace-shim run --allow): refused unless {mode: enforce|audit, rules: [one-line strings]}. */
static void test_state_egress_refused(void **state)
{
	static const char *const bad[] = {
		",\"egress\":[]",
		",\"egress\":{\"mode\":\"enforce\"}",
		",\"egress\":{\"mode\":\"allow\",\"rules\":[]}",
		",\"egress\":{\"mode\":\"enforce\",\"rules\":[1]}",
		",\"egress\":{\"mode\":\"audit\",\"rules\":[\"cidr 192.0.2.1\\ncidr 0.0.0.0/0\"]}",
	};
	char json[1024], err[PATH_MAX + 512];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(json, sizeof(json), STATE_HEAD, "ns", bad[i]);
		assert_int_equal(read_state(json, err, sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, "field 'egress"));
	}
}

/* "exec_stream" (qemu with a guest agent): STATE_DIR/NAME.vm/exec.stream, absolute, only. */
static void test_state_exec_stream(void **state)
{
	static const char qemu[] = ",\"tap\":\"sbt1\",\"tap_netns\":\"\",\"tap_ifindex\":3,"
				   "\"guest_addrs\":[],\"visibility\":{\"exec\":\"guest_kernel\","
				   "\"network\":\"tap\"},\"exec_stream\":\"%.4200s\"";
	char dir[] = "/tmp/sbt-test-backend.XXXXXX", real[PATH_MAX], path[PATH_MAX],
	     tail[PATH_MAX * 2], json[PATH_MAX * 3], err[PATH_MAX + 512], cand[5][PATH_MAX + 64];
	struct sbt_sandbox_state st;
	int fd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	assert_non_null(realpath(dir, real));
	snprintf(path, sizeof(path), "%s/x.json", dir);
	snprintf(cand[0], sizeof(cand[0]), "%s/x.vm/exec.stream", real); /* the one */
	snprintf(cand[1], sizeof(cand[1]), "/etc/passwd");
	snprintf(cand[2], sizeof(cand[2]), "%s/y.vm/exec.stream", real);
	snprintf(cand[3], sizeof(cand[3]), "%s/x.vm/../x.vm/exec.stream", real);
	snprintf(cand[4], sizeof(cand[4]), "x.vm/exec.stream");
	for (int i = 0; i < 5; i++) {
		snprintf(tail, sizeof(tail), qemu, cand[i]);
		snprintf(json, sizeof(json), STATE_HEAD, "qemu", tail);
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		assert_true(fd >= 0);
		assert_int_equal(write(fd, json, strlen(json)), (ssize_t)strlen(json));
		close(fd);
		err[0] = '\0';
		/* the first parses (then its cgroup is missing); the others are refused */
		assert_int_not_equal(sbt_state_read(dir, "x", &st, err, sizeof(err)), 0);
		if (i == 0) {
			assert_null(strstr(err, "exec_stream"));
			assert_null(strstr(err, "visibility"));
		} else {
			assert_non_null(strstr(err, "field 'exec_stream' is not"));
		}
	}
	unlink(path);
	rmdir(dir);
}

/* Each backend's row: what its sandboxes show the host, and how one waits for them. */
static void test_caps(void **state)
{
	const struct sbt_backend_caps *ns = sbt_backend_caps(SBT_BACKEND_NS),
				      *pod = sbt_backend_caps(SBT_BACKEND_PODMAN),
				      *vm = sbt_backend_caps(SBT_BACKEND_QEMU);

	(void)state;
	assert_non_null(ns);
	assert_non_null(pod);
	assert_non_null(vm);
	assert_null(sbt_backend_caps(SBT_BACKEND__MAX));
	assert_ptr_equal(sbt_backend_caps_by_name("qemu"), vm);
	assert_ptr_equal(sbt_backend_caps_by_name("podman"), pod);
	assert_null(sbt_backend_caps_by_name("firecracker"));
	assert_null(sbt_backend_caps_by_name(NULL));
	/* the two an agent asks: execs seen by host BPF, egress on a tap */
	assert_true(ns->execs_on_host && pod->execs_on_host);
	assert_false(vm->execs_on_host);
	assert_false(ns->egress_on_tap || pod->egress_on_tap);
	assert_true(vm->egress_on_tap);
	assert_string_equal(sbt_backend_vis_exec(ns, false), "host");
	assert_string_equal(sbt_backend_vis_exec(ns, true), "host");
	assert_string_equal(sbt_backend_vis_exec(vm, false), "none");
	assert_string_equal(sbt_backend_vis_exec(vm, true), "guest_kernel");
	assert_string_equal(sbt_backend_vis_network(ns), "cgroup");
	assert_string_equal(sbt_backend_vis_network(vm), "tap");
	assert_true(ns->net_modes & SBT_NET_MODE(SBT_NET_VETH));
	assert_false(pod->net_modes & SBT_NET_MODE(SBT_NET_VETH));
	assert_false(vm->net_modes & SBT_NET_MODE(SBT_NET_VETH));
	assert_int_equal(ns->workspace, SBT_WORKSPACE_BIND);
	assert_int_equal(pod->workspace, SBT_WORKSPACE_NONE);
	assert_int_equal(vm->workspace, SBT_WORKSPACE_EXPORT);
	assert_non_null(pod->host_tools);
	assert_null(ns->host_tools);
	assert_null(vm->host_tools);
	assert_true(vm->guest && vm->console && vm->wait == SBT_WAIT_CONSOLE);
	assert_false(ns->guest || ns->console || ns->wait != SBT_WAIT_STATUS);
	assert_true(ns->then);
	assert_false(pod->then || vm->then);
}

/* sbt_sandbox_check: what a backend's capabilities rule out, before anything is made. */
static void test_check_by_caps(void **state)
{
	char *sh[] = { "/bin/true", NULL }, *pod[] = { "/usr/bin/podman", "--version", NULL };
	struct sbt_sandbox_spec spec = { .name = "x", .argv = sh, .backend = SBT_BACKEND_PODMAN };
	char err[512];

	(void)state;
	assert_int_equal(sbt_sandbox_check(&spec, err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "a podman sandbox runs podman or docker, not '/bin/true'"));
	spec.argv = pod;
	assert_int_equal(sbt_sandbox_check(&spec, err, sizeof(err)), 0);
	spec.workspace = "/tmp";
	assert_int_equal(sbt_sandbox_check(&spec, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "a podman sandbox has no workspace"));
	spec.workspace = NULL;
	spec.net = SBT_NET_VETH;
	spec.veth_host_cidr = "192.0.2.1/24";
	spec.veth_sandbox_cidr = "192.0.2.100/24";
	assert_int_equal(sbt_sandbox_check(&spec, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "takes no network mode 1 (podman has its own)"));
	spec.backend = SBT_BACKEND_QEMU;
	spec.argv = sh;
	assert_int_equal(sbt_sandbox_check(&spec, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "a qemu sandbox takes no network mode 1"));
	spec.backend = SBT_BACKEND_NS;
	spec.then_argv = sh;
	spec.then_ms = 1000;
	assert_int_equal(sbt_sandbox_check(&spec, err, sizeof(err)), 0);
	spec.net = SBT_NET_NONE;
	spec.backend = SBT_BACKEND_PODMAN;
	spec.argv = pod;
	assert_int_equal(sbt_sandbox_check(&spec, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "a second workload needs"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names_round_trip),
		cmocka_unit_test(test_parse_refuses),
		cmocka_unit_test(test_caps),
		cmocka_unit_test(test_check_by_caps),
		cmocka_unit_test(test_state_foreign_fields),
		cmocka_unit_test(test_state_qemu_needs_its_fields),
		cmocka_unit_test(test_state_egress_refused),
		cmocka_unit_test(test_state_exec_stream),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
