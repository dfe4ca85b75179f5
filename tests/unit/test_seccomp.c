// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for the workload's seccomp filter (userspace/sandbox/seccomp.c):
 * the rule table is sound (every name known on its ABI, no rule twice, EPERM
 * or ENOSYS only, argument tests that can hold), sbtrace-shim(1)'s table says the
 * same (so the two cannot drift), and the filter installs and judges a few
 * calls in a child process (no privilege needed: no_new_privs).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <seccomp.h>
#include <json-c/json.h>

#include "sandbox/internal.h"
#include "sandbox/sandbox.h"

/* sbtrace-shim(1)'s source: its SECCOMP table; the tests run from the top of the tree (make unit) */
#define SECCOMP_DOC "userspace/shim/sbtrace-shim.help"

static void test_rules_resolve(void **state)
{
	for (size_t i = 0; i < sbx_seccomp_nr_rules; i++) {
		const struct sbx_seccomp_rule *r = &sbx_seccomp_rules[i];
		uint32_t arch = r->flags & SBX_SC_COMPAT ? SCMP_ARCH_X86 : SCMP_ARCH_X86_64;
		int nr = seccomp_syscall_resolve_name_arch(arch, r->syscall);

		if (nr < 0 && (r->flags & SBX_SC_OPTIONAL))
			continue;
		if (nr < 0)
			fail_msg("rule %zu: %s is not a syscall of %s", i, r->syscall,
				 arch == SCMP_ARCH_X86 ? "i386" : "x86_64");
	}
}

static bool same_tests(const struct sbx_seccomp_rule *a, const struct sbx_seccomp_rule *b)
{
	if (a->nr_tests != b->nr_tests)
		return false;
	for (unsigned int t = 0; t < a->nr_tests; t++)
		if (a->tests[t].arg != b->tests[t].arg || a->tests[t].mask != b->tests[t].mask ||
		    a->tests[t].value != b->tests[t].value)
			return false;
	return true;
}

static void test_rules_sound(void **state)
{
	assert_true(sbx_seccomp_nr_rules >= 60);
	for (size_t i = 0; i < sbx_seccomp_nr_rules; i++) {
		const struct sbx_seccomp_rule *r = &sbx_seccomp_rules[i];

		if (r->err != EPERM && r->err != ENOSYS)
			fail_msg("%s: errno %d, not EPERM or ENOSYS", r->syscall, r->err);
		assert_true(r->why && strlen(r->why) > 5);
		assert_true(r->nr_tests <= SBX_SC_MAX_TESTS);
		assert_int_equal(r->flags & ~(SBX_SC_COMPAT | SBX_SC_OPTIONAL | SBX_SC_FAMILIES),
				 0);
		for (unsigned int t = 0; t < r->nr_tests; t++) {
			const struct sbx_seccomp_test *x = &r->tests[t];

			assert_true(x->arg <= 5);
			assert_true(x->mask != 0);
			if (x->value & ~x->mask) /* could never hold */
				fail_msg("%s: test %u: value outside its mask", r->syscall, t);
		}
		/* a call denied whole needs no other rule; a rule never twice */
		for (size_t j = 0; j < i; j++) {
			const struct sbx_seccomp_rule *o = &sbx_seccomp_rules[j];

			if (strcmp(o->syscall, r->syscall))
				continue;
			if (!o->nr_tests || !r->nr_tests || same_tests(o, r))
				fail_msg("%s: rules %zu and %zu overlap", r->syscall, j, i);
			if (o->err != r->err)
				fail_msg("%s: two actions", r->syscall);
		}
	}
}

/* ---- sbtrace-shim(1)'s table ---------------------------------------------- */

struct readme_row {
	char calls[4096]; /* the first cell */
	char action[16];  /* the second */
	bool conditional; /* "... with ...": an argument test */
};

/* The rows of the table headed "| call | action | why |"; how many, at most max. */
static int readme_rows(struct readme_row *rows, int max)
{
	FILE *f = fopen(SECCOMP_DOC, "r");
	char line[4096];
	bool in = false;
	int n = 0;

	if (!f) {
		fail_msg("%s: %s (run from the top of the tree: make unit)", SECCOMP_DOC,
			 strerror(errno));
		return 0;
	}
	while (fgets(line, sizeof(line), f)) {
		char *c1, *c2, *end;

		if (!in) {
			in = strncmp(line, "| call | action | why |", 23) == 0;
			continue;
		}
		if (line[0] != '|')
			break;
		if (strncmp(line, "|---", 4) == 0)
			continue;
		c1 = line + 1;
		c2 = strchr(c1, '|');
		end = c2 ? strchr(c2 + 1, '|') : NULL;
		assert_non_null(end);
		assert_true(n < max);
		*c2 = *end = '\0';
		snprintf(rows[n].calls, sizeof(rows[n].calls), "%s", c1);
		assert_int_equal(sscanf(c2 + 1, " %15s", rows[n].action), 1);
		rows[n].conditional = strstr(c1, " with ") != NULL;
		n++;
	}
	fclose(f);
	return n;
}

/* The calls a cell names: the `lower_case` words (flags are upper case). */
static int cell_calls(const char *cell, char names[][64], int max)
{
	int n = 0;

	for (const char *p = strchr(cell, '`'); p; p = strchr(p + 1, '`')) {
		const char *q = strchr(p + 1, '`');
		size_t len = q ? (size_t)(q - p - 1) : 0;

		if (!q)
			break;
		if (len && len < 64 &&
		    strspn(p + 1, "abcdefghijklmnopqrstuvwxyz0123456789_") == len) {
			assert_true(n < max);
			memcpy(names[n], p + 1, len);
			names[n][len] = '\0';
			n++;
		}
		p = q;
	}
	return n;
}

static const char *errno_name(int e)
{
	return e == EPERM ? "EPERM" : e == ENOSYS ? "ENOSYS" : "?";
}

static void test_readme_table_is_the_code(void **state)
{
	static struct readme_row rows[64];
	char names[32][64];
	int nrows = readme_rows(rows, 64);

	assert_true(nrows >= 20);
	/* every call of the man page is in the table, with its action and kind of rule */
	for (int i = 0; i < nrows; i++) {
		int n = cell_calls(rows[i].calls, names, 32);

		assert_true(n > 0);
		for (int k = 0; k < n; k++) {
			bool found = false;

			for (size_t j = 0; j < sbx_seccomp_nr_rules; j++) {
				const struct sbx_seccomp_rule *r = &sbx_seccomp_rules[j];

				if (strcmp(r->syscall, names[k]))
					continue;
				found = true;
				if (strcmp(errno_name(r->err), rows[i].action))
					fail_msg("sbtrace-shim(1): %s is %s, the code says %s",
						 names[k], rows[i].action, errno_name(r->err));
			}
			if (!found)
				fail_msg("sbtrace-shim(1) names %s, which the filter does not have",
					 names[k]);
		}
	}
	/* every rule of the code is in a row of its kind */
	for (size_t j = 0; j < sbx_seccomp_nr_rules; j++) {
		const struct sbx_seccomp_rule *r = &sbx_seccomp_rules[j];
		bool found = false;

		for (int i = 0; i < nrows && !found; i++) {
			int n = cell_calls(rows[i].calls, names, 32);

			for (int k = 0; k < n && !found; k++)
				found = strcmp(names[k], r->syscall) == 0 &&
					rows[i].conditional == (r->nr_tests > 0);
		}
		if (!found)
			fail_msg("sbtrace-shim(1)'s table has no %s row for %s",
				 r->nr_tests ? "conditional (\"with\")" : "whole-call", r->syscall);
	}
}

/* ---- the filter, in a child ------------------------------------------------- */

/* In the child: whether the call failed with want (want 0: did not fail with EPERM). */
static bool judged(long ret, int want)
{
	if (want)
		return ret == -1 && errno == want;
	return !(ret == -1 && errno == EPERM);
}

/* The verdicts, in order; the child exits with the number of the first wrong one. */
static int verdicts(void)
{
	int n = 0;

	if (++n && !judged(syscall(SYS_keyctl, 0, 0, 0, 0, 0), EPERM))
		return n;
	if (++n && !judged(syscall(SYS_unshare, CLONE_NEWUSER), EPERM))
		return n;
	if (++n && !judged(syscall(SYS_clone3, NULL, 0), ENOSYS))
		return n;
	if (++n && !judged(syscall(SYS_openat2, AT_FDCWD, "/", NULL, 0), ENOSYS))
		return n;
	if (++n && !judged(chmod("/nonexistent/sbt", 04755), EPERM))
		return n;
	if (++n && !judged(chmod("/nonexistent/sbt", 0755), 0)) /* ENOENT, from the kernel */
		return n;
	if (++n && !judged(mknod("/nonexistent/sbt", S_IFCHR | 0600, 0x103), EPERM))
		return n;
	if (++n && !judged(mknod("/nonexistent/sbt", S_IFIFO | 0600, 0), 0))
		return n;
	if (++n && !judged(open("/nonexistent/sbt", O_WRONLY | O_CREAT, 02755), EPERM))
		return n;
	if (++n && !judged(open("/nonexistent/sbt", O_RDONLY), 0))
		return n;
	return 0;
}

static void test_install_in_child(void **state)
{
	pid_t pid = fork();
	int st;

	assert_true(pid >= 0);
	if (pid == 0) {
		char err[256];

		if (sbx_seccomp_install(err, sizeof(err))) {
			fprintf(stderr, "%s\n", err);
			_exit(100);
		}
		_exit(verdicts());
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	if (WEXITSTATUS(st) == 100)
		fail_msg("the filter did not install in the child");
	if (WEXITSTATUS(st))
		fail_msg("in the child, verdict %d of verdicts() was wrong", WEXITSTATUS(st));
}

/* ---- the OCI profile (seccomp_oci.c): the same table, for a container engine ---- */

static struct json_object *oci_profile(void)
{
	char *text = sbt_seccomp_oci_profile();
	struct json_object *p;

	assert_non_null(text);
	p = json_tokener_parse(text);
	free(text);
	if (!p)
		fail_msg("the OCI profile is not JSON");
	return p;
}

static const char *str_of(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		fail_msg("no string %s", key);
	return json_object_get_string(v);
}

static struct json_object *field(struct json_object *o, const char *key, json_type type)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, type))
		fail_msg("no %s of type %s", key, json_type_to_name(type));
	return v;
}

/* Does OCI argument a say what the table's test t says? */
static bool oci_arg_is(struct json_object *a, const struct sbx_seccomp_test *t)
{
	const char *op = str_of(a, "op");
	uint64_t v1 = (uint64_t)json_object_get_int64(field(a, "value", json_type_int));
	uint64_t v2 = (uint64_t)json_object_get_int64(field(a, "valueTwo", json_type_int));

	if (json_object_get_int(field(a, "index", json_type_int)) != (int)t->arg)
		return false;
	if (t->mask == ~(uint64_t)0)
		return strcmp(op, "SCMP_CMP_EQ") == 0 && v1 == t->value;
	return strcmp(op, "SCMP_CMP_MASKED_EQ") == 0 && v1 == t->mask && v2 == t->value;
}

static bool oci_entry_is(struct json_object *e, const struct sbx_seccomp_rule *r)
{
	struct json_object *names = field(e, "names", json_type_array);
	struct json_object *args = field(e, "args", json_type_array);

	if (json_object_array_length(names) != 1 ||
	    strcmp(json_object_get_string(json_object_array_get_idx(names, 0)), r->syscall) ||
	    strcmp(str_of(e, "action"), "SCMP_ACT_ERRNO") ||
	    json_object_get_int(field(e, "errnoRet", json_type_int)) != r->err ||
	    json_object_array_length(args) != r->nr_tests)
		return false;
	for (unsigned int t = 0; t < r->nr_tests; t++)
		if (!oci_arg_is(json_object_array_get_idx(args, t), &r->tests[t]))
			return false;
	return true;
}

/* Default allow, the filter's ABIs, and each rule of the table as one entry, nothing else. */
static void test_oci_profile_is_the_table(void **state)
{
	struct json_object *p = oci_profile(), *arches, *calls;
	bool x86 = false;

	assert_string_equal(str_of(p, "defaultAction"), "SCMP_ACT_ALLOW");
	arches = field(p, "architectures", json_type_array);
	for (size_t i = 0; i < json_object_array_length(arches); i++)
		x86 |= strcmp(json_object_get_string(json_object_array_get_idx(arches, i)),
			      "SCMP_ARCH_X86") == 0;
#if defined(__x86_64__)
	assert_true(x86); /* i386's int 0x80: the classic way around a one-ABI filter */
#endif
	calls = field(p, "syscalls", json_type_array);
	assert_int_equal(json_object_array_length(calls), sbx_seccomp_nr_rules);
	for (size_t i = 0; i < sbx_seccomp_nr_rules; i++)
		if (!oci_entry_is(json_object_array_get_idx(calls, i), &sbx_seccomp_rules[i]))
			fail_msg("entry %zu is not the rule for %s", i,
				 sbx_seccomp_rules[i].syscall);
	json_object_put(p);
}

/* The rules the probe's integration test leans on, spelled out: chmod u+s, mknod of a device. */
static void test_oci_profile_setid_and_devices(void **state)
{
	struct json_object *p = oci_profile(), *calls = field(p, "syscalls", json_type_array);
	bool chmod_suid = false, mknod_chr = false, keyctl = false, bpf = false;

	for (size_t i = 0; i < json_object_array_length(calls); i++) {
		struct json_object *e = json_object_array_get_idx(calls, i);
		const char *name = json_object_get_string(
			json_object_array_get_idx(field(e, "names", json_type_array), 0));
		struct json_object *args = field(e, "args", json_type_array);
		struct json_object *a0 = json_object_array_get_idx(args, 0);
		int64_t v1 = a0 ? json_object_get_int64(field(a0, "value", json_type_int)) : 0;
		int64_t v2 = a0 ? json_object_get_int64(field(a0, "valueTwo", json_type_int)) : 0;

		chmod_suid |= !strcmp(name, "chmod") && v1 == S_ISUID && v2 == S_ISUID;
		mknod_chr |= !strcmp(name, "mknod") && v1 == S_IFMT && v2 == S_IFCHR;
		keyctl |= !strcmp(name, "keyctl") && !a0;
		bpf |= !strcmp(name, "bpf") && !a0;
	}
	assert_true(chmod_suid);
	assert_true(mknod_chr);
	assert_true(keyctl);
	assert_true(bpf);
	json_object_put(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rules_resolve),
		cmocka_unit_test(test_rules_sound),
		cmocka_unit_test(test_readme_table_is_the_code),
		cmocka_unit_test(test_install_in_child),
		cmocka_unit_test(test_oci_profile_is_the_table),
		cmocka_unit_test(test_oci_profile_setid_and_devices),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
