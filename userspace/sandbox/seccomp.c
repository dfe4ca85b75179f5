// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The seccomp filter of the sandboxes' workloads (the ns backend's, and qemu
 * in the qemu backend): default allow, since a build needs most of the
 * syscall table, and a deny list of what a build does not need and a sandbox
 * must not have. A denied call fails with EPERM, never kills: a build must
 * fail visibly. clone3 and openat2 fail with ENOSYS instead: their flags and
 * mode are behind a pointer the filter cannot read, and libc falls back to
 * clone and openat, which it can. The rules are the table below; sbtrace-shim(1)'s
 * table (userspace/shim/sbtrace-shim.help) is checked against it by tests/unit/test_seccomp.c.
 *
 * The filter covers every ABI the CPU can enter the kernel with: on x86-64
 * the native one, i386 (int 0x80, with its own syscall numbers: the classic
 * way around a filter written for one ABI) and x32; on arm64, arm. Any other
 * architecture cannot reach the filter; should one, it gets ENOSYS.
 *
 * It is built with libseccomp in the process it will confine, right before
 * the exec, so the sandbox's set-up is unaffected. libseccomp allocates: that
 * is safe in a raw clone's child because the caller is single-threaded
 * (lifecycle.c), so no allocator lock can have been held at the clone.
 * no_new_privs is set already (sbx_drop_privileges()); libseccomp sets it
 * again, which is harmless.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <seccomp.h>

#include "internal.h"

/* O_TMPFILE without the O_DIRECTORY it carries: the bit that makes open create a file. */
#define O_TMPFILE_BIT (O_TMPFILE & ~O_DIRECTORY)

#define WHY_KEYS  "kernel keyrings are not namespaced: uid 0's keyring is the host root's"
#define WHY_URING "io_uring does the work of syscalls without passing this filter"
#define WHY_MOD	  "code into the host kernel, or a new kernel"
#define WHY_USERNS                                                                                 \
	"a new user namespace gives every capability back inside it, and with them the "           \
	"kernel's namespaced attack surface"
#define WHY_MOUNT "the file system view the sandbox was given is final"
#define WHY_SETID                                                                                  \
	"a set-id file of uid 0 left in /workspace (a host directory) is a set-id root file on "   \
	"the host"
#define WHY_DEV	  "a device node is the device itself, wherever it is later found"
#define WHY_TIME  "the host's clock"
#define WHY_QUOTA "the host file systems' quotas"
#define WHY_FAMILY                                                                                 \
	"a socket family outside every allowlist: AF_VSOCK is not network-namespaced (one "        \
	"port space for the whole VM; CID 2 is the hypervisor), the others kernel attack surface " \
	"a build does not need"

/* A whole call; one argument test; two, both of which must hold. */
#define WHOLE(name, e, w)                                                                          \
	{                                                                                          \
		.syscall = (name), .err = (e), .why = (w)                                          \
	}
#define WHOLE_FLAGS(name, f, w)                                                                    \
	{                                                                                          \
		.syscall = (name), .err = EPERM, .flags = (f), .why = (w)                          \
	}
#define TEST1(name, a, m, v, w)                                                                    \
	{                                                                                          \
		.syscall = (name), .err = EPERM, .nr_tests = 1, .tests = { { (a), (m), (v) } },    \
		.why = (w)                                                                         \
	}
#define TEST2(name, a, m, v, b, mb, vb, w)                                                         \
	{                                                                                          \
		.syscall = (name), .err = EPERM, .nr_tests = 2,                                    \
		.tests = { { (a), (m), (v) }, { (b), (mb), (vb) } }, .why = (w)                    \
	}
/* Every argument bit of a (long) request: equality. */
#define ALL_BITS (~(uint64_t)0)

const struct sbx_seccomp_rule sbx_seccomp_rules[] = {
	WHOLE("add_key", EPERM, WHY_KEYS),
	WHOLE("request_key", EPERM, WHY_KEYS),
	WHOLE("keyctl", EPERM, WHY_KEYS),

	WHOLE("bpf", EPERM, "programs into the host kernel; the tracer outside is BPF's only user"),
	WHOLE("perf_event_open", EPERM, "watches other processes and the kernel"),
	WHOLE("userfaultfd", EPERM, "holds a kernel page fault at will: widens kernel races"),
	WHOLE("io_uring_setup", EPERM, WHY_URING),
	WHOLE("io_uring_enter", EPERM, WHY_URING),
	WHOLE("io_uring_register", EPERM, WHY_URING),

	WHOLE("init_module", EPERM, WHY_MOD),
	WHOLE("finit_module", EPERM, WHY_MOD),
	WHOLE("delete_module", EPERM, WHY_MOD),
	WHOLE("kexec_load", EPERM, WHY_MOD),
	WHOLE("kexec_file_load", EPERM, WHY_MOD),

	TEST1("unshare", 0, CLONE_NEWUSER, CLONE_NEWUSER, WHY_USERNS),
	TEST1("clone", 0, CLONE_NEWUSER, CLONE_NEWUSER, WHY_USERNS),
	WHOLE("clone3", ENOSYS, "its flags are behind a pointer; libc falls back to clone"),
	WHOLE("setns", EPERM, "joins another namespace"),

	WHOLE("mount", EPERM, WHY_MOUNT),
	WHOLE("umount2", EPERM, WHY_MOUNT),
	WHOLE_FLAGS("umount", SBX_SC_COMPAT, WHY_MOUNT),
	WHOLE("pivot_root", EPERM, WHY_MOUNT),
	WHOLE("move_mount", EPERM, WHY_MOUNT),
	WHOLE("open_tree", EPERM, WHY_MOUNT),
	WHOLE_FLAGS("open_tree_attr", SBX_SC_OPTIONAL, WHY_MOUNT),
	WHOLE("fsopen", EPERM, WHY_MOUNT),
	WHOLE("fsconfig", EPERM, WHY_MOUNT),
	WHOLE("fsmount", EPERM, WHY_MOUNT),
	WHOLE("fspick", EPERM, WHY_MOUNT),
	WHOLE("mount_setattr", EPERM, WHY_MOUNT),

	TEST1("ptrace", 0, ALL_BITS, PTRACE_ATTACH, "attaches to a process that is not its child"),
	TEST1("ptrace", 0, ALL_BITS, PTRACE_SEIZE, "attaches to a process that is not its child"),
	WHOLE("process_vm_readv", EPERM, "reads another process's memory"),
	WHOLE("process_vm_writev", EPERM, "writes another process's memory"),
	WHOLE("kcmp", EPERM, "compares kernel pointers of two processes"),
	WHOLE("pidfd_getfd", EPERM, "takes a file descriptor from another process"),

	TEST1("chmod", 1, S_ISUID, S_ISUID, WHY_SETID),
	TEST1("chmod", 1, S_ISGID, S_ISGID, WHY_SETID),
	TEST1("fchmod", 1, S_ISUID, S_ISUID, WHY_SETID),
	TEST1("fchmod", 1, S_ISGID, S_ISGID, WHY_SETID),
	TEST1("fchmodat", 2, S_ISUID, S_ISUID, WHY_SETID),
	TEST1("fchmodat", 2, S_ISGID, S_ISGID, WHY_SETID),
	TEST1("fchmodat2", 2, S_ISUID, S_ISUID, WHY_SETID),
	TEST1("fchmodat2", 2, S_ISGID, S_ISGID, WHY_SETID),
	TEST2("open", 1, O_CREAT, O_CREAT, 2, S_ISUID, S_ISUID, WHY_SETID),
	TEST2("open", 1, O_CREAT, O_CREAT, 2, S_ISGID, S_ISGID, WHY_SETID),
	TEST2("open", 1, O_TMPFILE_BIT, O_TMPFILE_BIT, 2, S_ISUID, S_ISUID, WHY_SETID),
	TEST2("open", 1, O_TMPFILE_BIT, O_TMPFILE_BIT, 2, S_ISGID, S_ISGID, WHY_SETID),
	TEST2("openat", 2, O_CREAT, O_CREAT, 3, S_ISUID, S_ISUID, WHY_SETID),
	TEST2("openat", 2, O_CREAT, O_CREAT, 3, S_ISGID, S_ISGID, WHY_SETID),
	TEST2("openat", 2, O_TMPFILE_BIT, O_TMPFILE_BIT, 3, S_ISUID, S_ISUID, WHY_SETID),
	TEST2("openat", 2, O_TMPFILE_BIT, O_TMPFILE_BIT, 3, S_ISGID, S_ISGID, WHY_SETID),
	TEST1("creat", 1, S_ISUID, S_ISUID, WHY_SETID),
	TEST1("creat", 1, S_ISGID, S_ISGID, WHY_SETID),
	WHOLE("openat2", ENOSYS, "its mode is behind a pointer; libc falls back to openat"),
	TEST1("mknod", 1, S_IFMT, S_IFCHR, WHY_DEV),
	TEST1("mknod", 1, S_IFMT, S_IFBLK, WHY_DEV),
	TEST1("mknod", 1, S_ISUID, S_ISUID, WHY_SETID),
	TEST1("mknod", 1, S_ISGID, S_ISGID, WHY_SETID),
	TEST1("mknodat", 2, S_IFMT, S_IFCHR, WHY_DEV),
	TEST1("mknodat", 2, S_IFMT, S_IFBLK, WHY_DEV),
	TEST1("mknodat", 2, S_ISUID, S_ISUID, WHY_SETID),
	TEST1("mknodat", 2, S_ISGID, S_ISGID, WHY_SETID),

	WHOLE("reboot", EPERM, "the host"),
	WHOLE("swapon", EPERM, "the host's swap"),
	WHOLE("swapoff", EPERM, "the host's swap"),
	WHOLE("settimeofday", EPERM, WHY_TIME),
	WHOLE("clock_settime", EPERM, WHY_TIME),
	WHOLE_FLAGS("clock_settime64", SBX_SC_COMPAT, WHY_TIME),
	WHOLE("clock_adjtime", EPERM, WHY_TIME),
	WHOLE_FLAGS("clock_adjtime64", SBX_SC_COMPAT, WHY_TIME),
	WHOLE("adjtimex", EPERM, WHY_TIME),
	WHOLE_FLAGS("stime", SBX_SC_COMPAT, WHY_TIME),
	WHOLE("acct", EPERM, "the host's process accounting"),
	WHOLE("quotactl", EPERM, WHY_QUOTA),
	WHOLE("quotactl_fd", EPERM, WHY_QUOTA),
	WHOLE("syslog", EPERM, "reads and clears the host kernel's log"),
	WHOLE("vhangup", EPERM, "hangs up the terminal"),
	WHOLE("lookup_dcookie", EPERM, "names host files by kernel cookie"),
	WHOLE("name_to_handle_at", EPERM, "file handles: the way past a mount namespace"),
	WHOLE("open_by_handle_at", EPERM, "file handles: the way past a mount namespace"),
	WHOLE("iopl", EPERM, "raw I/O ports"),
	WHOLE("ioperm", EPERM, "raw I/O ports"),

	{ .syscall = "socket",
	  .err = EPERM,
	  .nr_tests = 1,
	  .tests = { { 0, ALL_BITS, 0 } },
	  .flags = SBX_SC_FAMILIES,
	  .why = WHY_FAMILY },
	{ .syscall = "socketpair",
	  .err = EPERM,
	  .nr_tests = 1,
	  .tests = { { 0, ALL_BITS, 0 } },
	  .flags = SBX_SC_FAMILIES,
	  .why = WHY_FAMILY },
	WHOLE_FLAGS("socketcall", SBX_SC_COMPAT,
		    "its arguments are behind a pointer, so the family cannot be read; i386 has "
		    "socket(2) itself since Linux 4.3"),
};

/* AF_UNIX, AF_INET, AF_INET6, AF_NETLINK: what a build, a package manager and libc need. */
const int sbx_seccomp_families[] = { AF_UNIX, AF_INET, AF_INET6, AF_NETLINK, -1 };

/* Deny every family of arg 0 but the allowed ones: one rule per family below AF_MAX, one above. */
static int add_families(scmp_filter_ctx ctx, int nr, uint32_t action)
{
	int ret = seccomp_rule_add(ctx, action, nr, 1, SCMP_A0(SCMP_CMP_GE, AF_MAX));

	for (int af = 0; !ret && af < AF_MAX; af++) {
		bool allowed = false;

		for (const int *a = sbx_seccomp_families; *a >= 0; a++)
			allowed = allowed || *a == af;
		if (!allowed)
			ret = seccomp_rule_add(ctx, action, nr, 1,
					       SCMP_A0(SCMP_CMP_EQ, (uint64_t)af));
	}
	return ret;
}

const size_t sbx_seccomp_nr_rules = sizeof(sbx_seccomp_rules) / sizeof(sbx_seccomp_rules[0]);

/* The other ABIs the CPU can enter the kernel with, by the native one. */
static int add_arches(scmp_filter_ctx ctx)
{
	static const uint32_t x86_64[] = { SCMP_ARCH_X86, SCMP_ARCH_X32, 0 };
	static const uint32_t aarch64[] = { SCMP_ARCH_ARM, 0 };
	uint32_t native = seccomp_arch_native();
	const uint32_t *other = native == SCMP_ARCH_X86_64    ? x86_64
				: native == SCMP_ARCH_AARCH64 ? aarch64
							      : NULL;
	int ret;

	for (; other && *other; other++) {
		ret = seccomp_arch_add(ctx, *other);
		if (ret && ret != -EEXIST)
			return ret;
	}
	return 0;
}

static int add_rule(scmp_filter_ctx ctx, const struct sbx_seccomp_rule *r, char *err, size_t errlen)
{
	struct scmp_arg_cmp cmp[SBX_SC_MAX_TESTS];
	int nr = seccomp_syscall_resolve_name(r->syscall), ret;

	if (nr == __NR_SCMP_ERROR) {
		if (r->flags & SBX_SC_OPTIONAL)
			return 0; /* this libseccomp predates it */
		return sbx_seterr(err, errlen, -ENOSYS,
				  "seccomp: libseccomp %u.%u does not know the syscall %s",
				  seccomp_version()->major, seccomp_version()->minor, r->syscall);
	}
	for (unsigned int i = 0; i < r->nr_tests; i++)
		cmp[i] = SCMP_CMP(r->tests[i].arg, SCMP_CMP_MASKED_EQ, r->tests[i].mask,
				  r->tests[i].value);
	if (r->flags & SBX_SC_FAMILIES)
		ret = add_families(ctx, nr, SCMP_ACT_ERRNO((uint32_t)r->err));
	else
		ret = seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO((uint32_t)r->err), nr, r->nr_tests,
					     cmp);
	if (ret)
		return sbx_seterr(err, errlen, ret, "seccomp: the rule for %s: %s", r->syscall,
				  strerror(-ret));
	return 0;
}

int sbx_seccomp_install(char *err, size_t errlen)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	int ret;

	if (!ctx)
		return sbx_seterr(err, errlen, -ENOMEM, "seccomp: cannot make a filter");
	/* the real errno of a failed load; a binary tree of syscall numbers */
	ret = seccomp_attr_set(ctx, SCMP_FLTATR_API_SYSRAWRC, 1);
	if (!ret)
		ret = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
	if (!ret)
		ret = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_ERRNO(ENOSYS));
	if (!ret)
		ret = add_arches(ctx);
	if (ret) {
		sbx_seterr(err, errlen, ret, "seccomp: filter attributes: %s", strerror(-ret));
		goto out;
	}
	for (size_t i = 0; i < sbx_seccomp_nr_rules; i++) {
		ret = add_rule(ctx, &sbx_seccomp_rules[i], err, errlen);
		if (ret)
			goto out;
	}
	ret = seccomp_load(ctx);
	if (ret)
		sbx_seterr(err, errlen, ret, "seccomp: loading the filter: %s (needs Linux 3.17+)",
			   strerror(-ret));
out:
	seccomp_release(ctx);
	return ret;
}
