// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The qemu backend's accelerator: KVM when the host has a usable one, TCG
 * otherwise (sandbox.h). The probe (sbt_vm_kvm_probe) gathers the facts,
 * the pick (sbt_vm_accel_pick) is a pure function of them, unit-tested.
 *
 * "Usable" is what qemu, as the sandbox's unprivileged id without
 * capabilities or supplementary groups (userns.c), needs: /dev/kvm a
 * character device that its "other" bits let read and write (Debian's udev
 * makes it 0666; a 0660 root:kvm device cannot be opened by that id), a
 * KVM of API version 12 that creates a VM, and a CPU that says it has
 * hardware virtualization (vmx or svm in /proc/cpuinfo's flags). The last
 * is no formality: a host can have a /dev/kvm whose VM creation works and
 * whose vCPUs do not boot a kernel (qemu then aborts on an MSR or hangs).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <linux/kvm.h>

#include "sandbox/sandbox.h"

#define KVM_DEV "/dev/kvm"

int sbt_vm_accel_parse(const char *s, enum sbt_vm_accel *out)
{
	if (!s)
		return -EINVAL;
	if (strcmp(s, "auto") == 0)
		*out = SBT_VM_ACCEL_AUTO;
	else if (strcmp(s, "kvm") == 0)
		*out = SBT_VM_ACCEL_KVM;
	else if (strcmp(s, "tcg") == 0)
		*out = SBT_VM_ACCEL_TCG;
	else
		return -EINVAL;
	return 0;
}

/* "vmx" or "svm" as a whole word in a "flags" line of /proc/cpuinfo. */
static bool cpu_has_virt(void)
{
	char line[8192];
	bool yes = false;
	FILE *f = fopen("/proc/cpuinfo", "re");

	if (!f)
		return false;
	while (!yes && fgets(line, sizeof(line), f)) {
		char *tok, *save = NULL;

		if (strncmp(line, "flags", 5) != 0)
			continue;
		for (tok = strtok_r(line, " \t\n", &save); tok;
		     tok = strtok_r(NULL, " \t\n", &save))
			if (strcmp(tok, "vmx") == 0 || strcmp(tok, "svm") == 0)
				yes = true;
		break; /* the first CPU's flags */
	}
	fclose(f);
	return yes;
}

void sbt_vm_kvm_probe(struct sbt_kvm_probe *p)
{
	struct stat st;
	int fd, vm;

	memset(p, 0, sizeof(*p));
	p->api = -1;
	p->hw_virt = cpu_has_virt();
	if (stat(KVM_DEV, &st))
		return;
	p->present = S_ISCHR(st.st_mode);
	p->others_rw = (st.st_mode & (S_IROTH | S_IWOTH)) == (S_IROTH | S_IWOTH);
	fd = open(KVM_DEV, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return;
	p->openable = true;
	p->api = ioctl(fd, KVM_GET_API_VERSION, 0);
	if (p->api == KVM_API_VERSION) {
		vm = ioctl(fd, KVM_CREATE_VM, 0);
		if (vm >= 0) {
			p->vm_ok = true;
			close(vm);
		}
	}
	close(fd);
}

const char *sbt_vm_accel_pick(enum sbt_vm_accel req, const struct sbt_kvm_probe *p,
			      const char **why)
{
	const char *no = NULL;

	*why = NULL;
	if (req == SBT_VM_ACCEL_TCG)
		return "tcg";
	if (!p->present)
		no = "no " KVM_DEV;
	else if (!p->openable)
		no = KVM_DEV " cannot be opened";
	else if (p->api != KVM_API_VERSION)
		no = KVM_DEV " is not KVM API version 12";
	else if (!p->vm_ok)
		no = KVM_DEV " cannot create a VM";
	else if (!p->hw_virt)
		no = "the CPU has no hardware virtualization (no vmx or svm flag)";
	else if (!p->others_rw)
		no = KVM_DEV " is not read-write for others (qemu runs as an unprivileged id "
			     "without groups; Debian's udev makes it 0666)";
	*why = no;
	if (!no)
		return "kvm";
	return req == SBT_VM_ACCEL_KVM ? NULL : "tcg";
}

int sbt_vm_boot_parse(const char *s, enum sbt_vm_boot *out)
{
	if (s && strcmp(s, "auto") == 0)
		*out = SBT_VM_BOOT_AUTO;
	else if (s && strcmp(s, "cold") == 0)
		*out = SBT_VM_BOOT_COLD;
	else
		return -EINVAL;
	return 0;
}
