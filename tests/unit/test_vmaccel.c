// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for the qemu backend's accelerator choice (sbt_vm_accel_pick,
 * sbt_vm_accel_parse; userspace/sandbox/accel.c): KVM only when every fact
 * of the probe says qemu's unprivileged id can use it, TCG otherwise, an
 * error (NULL) when KVM was asked for and cannot be had; TCG asked for is
 * TCG whatever /dev/kvm offers.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "sandbox/sandbox.h"

/* A host whose KVM qemu can use. */
static struct sbt_kvm_probe usable(void)
{
	struct sbt_kvm_probe p = { .present = true,
				   .others_rw = true,
				   .openable = true,
				   .api = 12,
				   .vm_ok = true,
				   .hw_virt = true };
	return p;
}

static void test_usable_kvm(void **state)
{
	struct sbt_kvm_probe p = usable();
	const char *why = "x";

	(void)state;
	assert_string_equal(sbt_vm_accel_pick(SBT_VM_ACCEL_AUTO, &p, &why), "kvm");
	assert_null(why);
	assert_string_equal(sbt_vm_accel_pick(SBT_VM_ACCEL_KVM, &p, &why), "kvm");
	assert_string_equal(sbt_vm_accel_pick(SBT_VM_ACCEL_TCG, &p, &why), "tcg");
	assert_null(why);
}

/* Each missing fact alone: auto falls back to TCG with a reason naming it; kvm is refused. */
static void test_each_fact_matters(void **state)
{
	static const struct {
		size_t off;
		const char *word;
	} facts[] = {
		{ offsetof(struct sbt_kvm_probe, present), "no /dev/kvm" },
		{ offsetof(struct sbt_kvm_probe, openable), "cannot be opened" },
		{ offsetof(struct sbt_kvm_probe, vm_ok), "cannot create a VM" },
		{ offsetof(struct sbt_kvm_probe, hw_virt), "vmx or svm" },
		{ offsetof(struct sbt_kvm_probe, others_rw), "not read-write for others" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(facts) / sizeof(facts[0]); i++) {
		struct sbt_kvm_probe p = usable();
		const char *why = NULL;

		*(bool *)((char *)&p + facts[i].off) = false;
		assert_string_equal(sbt_vm_accel_pick(SBT_VM_ACCEL_AUTO, &p, &why), "tcg");
		assert_non_null(why);
		assert_non_null(strstr(why, facts[i].word));
		assert_null(sbt_vm_accel_pick(SBT_VM_ACCEL_KVM, &p, &why));
		assert_non_null(why);
		assert_string_equal(sbt_vm_accel_pick(SBT_VM_ACCEL_TCG, &p, &why), "tcg");
	}
}

/* This machine's case: a /dev/kvm that opens and makes a VM, 0600, on a CPU without vmx/svm. */
static void test_kvm_device_without_hw_virt(void **state)
{
	struct sbt_kvm_probe p = usable();
	const char *why = NULL;

	(void)state;
	p.others_rw = false;
	p.hw_virt = false;
	assert_string_equal(sbt_vm_accel_pick(SBT_VM_ACCEL_AUTO, &p, &why), "tcg");
	assert_non_null(strstr(why, "vmx or svm"));
}

static void test_wrong_api(void **state)
{
	struct sbt_kvm_probe p = usable();
	const char *why = NULL;

	(void)state;
	p.api = 11;
	assert_string_equal(sbt_vm_accel_pick(SBT_VM_ACCEL_AUTO, &p, &why), "tcg");
	assert_non_null(strstr(why, "API version"));
	p.api = -1;
	assert_null(sbt_vm_accel_pick(SBT_VM_ACCEL_KVM, &p, &why));
}

static void test_parse(void **state)
{
	enum sbt_vm_accel a = SBT_VM_ACCEL_TCG;

	(void)state;
	assert_int_equal(sbt_vm_accel_parse("auto", &a), 0);
	assert_int_equal(a, SBT_VM_ACCEL_AUTO);
	assert_int_equal(sbt_vm_accel_parse("kvm", &a), 0);
	assert_int_equal(a, SBT_VM_ACCEL_KVM);
	assert_int_equal(sbt_vm_accel_parse("tcg", &a), 0);
	assert_int_equal(a, SBT_VM_ACCEL_TCG);
	assert_int_equal(sbt_vm_accel_parse("KVM", &a), -EINVAL);
	assert_int_equal(sbt_vm_accel_parse("", &a), -EINVAL);
	assert_int_equal(sbt_vm_accel_parse(NULL, &a), -EINVAL);
	assert_int_equal(a, SBT_VM_ACCEL_TCG);
}

/* The probe on this host: facts only, never a crash; whatever it finds, the pick is consistent. */
static void test_probe_consistent(void **state)
{
	struct sbt_kvm_probe p;
	const char *why = NULL, *a;

	(void)state;
	sbt_vm_kvm_probe(&p);
	a = sbt_vm_accel_pick(SBT_VM_ACCEL_AUTO, &p, &why);
	assert_non_null(a);
	assert_true((strcmp(a, "kvm") == 0) == (why == NULL));
	if (!p.openable)
		assert_int_equal(p.api, -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_usable_kvm),
		cmocka_unit_test(test_each_fact_matters),
		cmocka_unit_test(test_kvm_device_without_hw_virt),
		cmocka_unit_test(test_wrong_api),
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_probe_consistent),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
