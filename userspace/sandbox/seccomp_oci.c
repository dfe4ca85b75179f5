// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The workloads' seccomp rules (seccomp.c's table) as an OCI seccomp profile:
 * the JSON podman's --security-opt seccomp=FILE takes, so a container
 * engine's RUN steps and containers get the same deny list as the ns
 * backend's workloads, from the one table. Default allow; each rule one
 * entry, SCMP_ACT_ERRNO with the table's errno; its argument tests as
 * "args" (SCMP_CMP_MASKED_EQ: value is the mask, valueTwo the datum; a
 * test of every bit as SCMP_CMP_EQ), which the runtime ANDs as the filter
 * does (the tests of one rule are on different arguments).
 *
 * What the profile cannot say as the filter does: the action for a foreign
 * ABI (the filter returns ENOSYS; under OCI it is the runtime's choice), and
 * a name this runtime's libseccomp does not know (the filter refuses to load
 * unless the rule is optional; runc leaves the entry out). The podman
 * containers still run under the engine's own confinement besides: their
 * namespaces and capability set.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "internal.h"

/* The ABIs the filter covers (seccomp.c add_arches), by the one this was built for. */
static const char *const oci_arches[] = {
#if defined(__x86_64__)
	"SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32",
#elif defined(__aarch64__)
	"SCMP_ARCH_AARCH64", "SCMP_ARCH_ARM",
#endif
	NULL
};

static int add(struct json_object *o, const char *key, struct json_object *v)
{
	if (!v)
		return -ENOMEM;
	if (json_object_object_add(o, key, v)) {
		json_object_put(v);
		return -ENOMEM;
	}
	return 0;
}

static int push(struct json_object *a, struct json_object *v)
{
	if (!v)
		return -ENOMEM;
	if (json_object_array_add(a, v)) {
		json_object_put(v);
		return -ENOMEM;
	}
	return 0;
}

static struct json_object *oci_arg(const struct sbx_seccomp_test *t)
{
	struct json_object *a = json_object_new_object();
	bool eq = t->mask == ~(uint64_t)0;
	int ret;

	if (!a)
		return NULL;
	ret = add(a, "index", json_object_new_int((int)t->arg));
	if (!ret)
		ret = add(a, "value", json_object_new_int64((int64_t)(eq ? t->value : t->mask)));
	if (!ret)
		ret = add(a, "valueTwo", json_object_new_int64(eq ? 0 : (int64_t)t->value));
	if (!ret)
		ret = add(a, "op",
			  json_object_new_string(eq ? "SCMP_CMP_EQ" : "SCMP_CMP_MASKED_EQ"));
	if (ret) {
		json_object_put(a);
		return NULL;
	}
	return a;
}

static struct json_object *oci_syscall(const struct sbx_seccomp_rule *r)
{
	struct json_object *s = json_object_new_object(), *names = json_object_new_array(),
			   *args = json_object_new_array();
	int ret = s && names && args ? 0 : -ENOMEM;

	if (!ret)
		ret = push(names, json_object_new_string(r->syscall));
	for (unsigned int i = 0; !ret && i < r->nr_tests; i++)
		ret = push(args, oci_arg(&r->tests[i]));
	if (!ret) {
		ret = add(s, "names", names);
		names = NULL;
	}
	if (!ret)
		ret = add(s, "action", json_object_new_string("SCMP_ACT_ERRNO"));
	if (!ret)
		ret = add(s, "errnoRet", json_object_new_int(r->err));
	if (!ret) {
		ret = add(s, "args", args);
		args = NULL;
	}
	if (!ret)
		ret = add(s, "comment", json_object_new_string(r->why));
	json_object_put(names);
	json_object_put(args);
	if (ret) {
		json_object_put(s);
		return NULL;
	}
	return s;
}

char *sbt_seccomp_oci_profile(void)
{
	struct json_object *p = json_object_new_object(), *arches = json_object_new_array(),
			   *calls = json_object_new_array();
	char *out = NULL;
	int ret = p && arches && calls ? 0 : -ENOMEM;

	for (const char *const *a = oci_arches; !ret && *a; a++)
		ret = push(arches, json_object_new_string(*a));
	for (size_t i = 0; !ret && i < sbx_seccomp_nr_rules; i++)
		ret = push(calls, oci_syscall(&sbx_seccomp_rules[i]));
	if (!ret)
		ret = add(p, "defaultAction", json_object_new_string("SCMP_ACT_ALLOW"));
	if (!ret) {
		ret = add(p, "architectures", arches);
		arches = NULL;
	}
	if (!ret) {
		ret = add(p, "syscalls", calls);
		calls = NULL;
	}
	if (!ret)
		out = strdup(json_object_to_json_string_ext(
			p, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(arches);
	json_object_put(calls);
	json_object_put(p);
	return out;
}
