// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* sbtrace-shim's help and usage errors (usage.h). */
#include <stdio.h>

#include "sandbox/sandbox.h"
#include "shim.h"
#include "usage.h"

const char shim_exit_codes_help[] =
	"Exit codes:\n"
	"  0    success; run: the workload's own exit code once it ran (128+N when\n"
	"       killed by signal N, 127 when its command could not be executed)\n"
	"  1    gc: the state dir could not be read\n"
	"  2    usage or input error (unknown option, bad name, missing workspace,\n"
	"       sandbox name in use, backend not available; gc: a --state-dir that\n"
	"       does not exist or is not a directory)\n"
	"  3    the sandbox could not be set up (cgroup, namespaces, mounts, state\n"
	"       file, tap), or it died before the workload started; qemu: the VM\n"
	"       ended without reporting the workload's exit code\n"
	"  124  run --backend qemu: --vm-timeout expired (the VM was killed)\n"
	"  125  run: the tracer went away while the workload ran (it was frozen and\n"
	"       killed: the egress policy must never lapse)\n";

void shim_usage_main(FILE *f)
{
	fprintf(f,
		"Usage: sbtrace-shim [--version] [--help] COMMAND [ARGS]\n"
		"\n"
		"Run a workload in a sandbox that sbtrace can attach to before the\n"
		"workload's first exec.\n"
		"\n"
		"Commands:\n"
		"  run        start a sandbox, wait for a tracer, run the workload in it\n"
		"  gc         clean up what killed shims left (processes, cgroups, state)\n"
		"  version    print the version\n"
		"  help       show help for a command: sbtrace-shim help run\n"
		"\n%s",
		shim_exit_codes_help);
}

void shim_usage_run(FILE *f)
{
	fprintf(f,
		"Usage: sbtrace-shim run --name NAME [OPTIONS] -- CMD [ARGS...]\n"
		"\n"
		"Start sandbox NAME: cgroup <cgroup v2 mount>/sbtrace/NAME; new user, pid,\n"
		"mount, uts, ipc, net and cgroup namespaces (root inside is an unprivileged\n"
		"host id: 65536 ids from 0x70000000 on, by NAME); the host's filesystem\n"
		"read-only; writable tmpfs /tmp and /root (HOME); only lo; no capabilities,\n"
		"no_new_privs; a seccomp filter (keyrings, bpf, io_uring, mounts, new user\n"
		"namespaces, set-id files... fail with EPERM: the README has the table).\n"
		"Write the state file STATE_DIR/NAME.json, wait for a tracer, run CMD, and\n"
		"exit with its exit code; everything is removed on exit.\n"
		"\n"
		"  -n, --name NAME        1-%d characters [A-Za-z0-9_.-], not starting with '.'\n"
		"  -b, --backend ns|podman|qemu  ns: the namespaces above (default); podman:\n"
		"                         CMD must be podman or docker (the exec allowlist)\n"
		"                         and runs on the host inside the sandbox cgroup, e.g.\n"
		"                         podman build --cgroup-parent=/sbtrace/NAME/build ...;\n"
		"                         qemu: CMD runs in a microVM (below)\n"
		"  -w, --workspace DIR[:ro|:overlay]  bind DIR at /workspace (read-only with\n"
		"                         :ro; :overlay: writable, but the writes go to a\n"
		"                         tmpfs of the sandbox's and never reach DIR);\n"
		"                         it is also the workload's working directory\n"
		"                         (qemu: read-only over 9p under a tmpfs overlay,\n"
		"                         whatever the suffix: nothing reaches DIR)\n"
		"      --net none|veth    networking: a new namespace with only lo (none, the\n"
		"                         default), or also eth0, a veth pair's end, with\n"
		"      --veth-addrs HOST/LEN,SANDBOX/LEN  the two ends' addresses (the host\n"
		"                         end is the sandbox's default route) and\n"
		"      --veth-host-netns NAME  the host end in that network namespace\n"
		"                         (default: the shim's own)\n"
		"  -e, --env NAME[=VALUE] pass NAME into the sandbox (the caller's value, or\n"
		"                         VALUE); repeatable. Nothing else of the caller's\n"
		"                         environment enters: the workload gets PATH, HOME\n"
		"                         (/root), LANG, TERM and what --env adds\n"
		"  -s, --state-dir DIR    state files (default %s)\n"
		"      --allow RULE       an egress rule for sbtrace agent, in the allowlist\n"
		"                         grammar: 'cidr ADDR[/LEN] [port N[-M]] [proto\n"
		"                         tcp|udp]' (repeatable); recorded in the state\n"
		"                         file, where the agent reads it and enforces it\n"
		"                         before it releases the workload\n"
		"      --egress enforce|audit  the mode of those rules (default enforce;\n"
		"                         enforce without --allow denies all egress)\n"
		"      --no-wait          run CMD at once, without waiting for a tracer\n"
		"      --timings FILE     at the end, write JSON: accel, boot_ms, workload_ms\n"
		"                         (qemu only, else null) and total_ms, from the release\n"
		"  -h, --help             this help\n"
		"\n"
		"The qemu backend: qemu-system-x86_64 -M microvm (KVM when usable, else\n"
		"TCG) runs in the sandbox cgroup without capabilities, under the seccomp\n"
		"filter and its own (-sandbox on), booting the guest that\n"
		"scripts/guest-build.sh built (a Debian kernel, busybox). CMD runs there as\n"
		"root, in /workspace if given, else /, on a root whose /usr is the host's\n"
		"(read-only over 9p, writes kept in the guest's RAM; /bin, /lib... link\n"
		"into it), with the host's /etc/alternatives and a small /etc of its own:\n"
		"the host's make, gcc, node... run in the guest. Nothing else of the host.\n"
		"      --guest DIR        the guest: the directory scripts/guest-build.sh\n"
		"                         prints (required)\n"
		"      --tap-netns NAME   the tap (the guest's eth0's host side, named\n"
		"                         sbt<hash of NAME>) in that network namespace\n"
		"                         (default: the shim's own)\n"
		"      --tap-addrs HOST/LEN,GUEST/LEN  IPv4 of the tap and of eth0, whose\n"
		"                         default route is the tap (else eth0 has none)\n"
		"      --tap-addrs6 HOST/LEN,GUEST/LEN  the same for IPv6\n"
		"      --vm-mem MB        the VM's memory in MiB, 64-16384 (default %d)\n"
		"      --vm-timeout SEC   kill the VM after SEC seconds from its start (exit 124)\n"
		"      --vm-accel auto|kvm|tcg  KVM when /dev/kvm is usable by qemu's\n"
		"                         unprivileged id (auto, the default), KVM or an\n"
		"                         error (kvm), TCG (tcg); the state file's \"accel\"\n"
		"The VM's console: CMD's output (stdout and stderr together) goes to stdout,\n"
		"the boot messages nowhere unless the VM fails (then their end, on\n"
		"stderr); the exit code is the one the guest reports. The tap, the cgroup\n"
		"and the per-run files (STATE_DIR/NAME.vm) are removed with the sandbox.\n"
		"\n"
		"Waiting for a tracer: before the state file appears, the FIFO\n"
		"STATE_DIR/NAME.attach is created; CMD runs once a line \"attached\" is\n"
		"written to it, which `sbtrace trace --sandbox NAME` does after attaching\n"
		"(\"attached PID\": should that tracer die while the workload runs, the\n"
		"workload is frozen and killed at once, exit 125).\n"
		"The FIFO is removed then. SIGINT, SIGTERM and SIGHUP are forwarded to the\n"
		"workload; whatever still runs %d ms later (or at a second signal) is killed\n"
		"(a VM at once: its guest cannot be signalled).\n"
		"\n%s",
		SBT_SANDBOX_NAME_MAX, SBT_STATE_DIR_DEFAULT, SBT_VM_MEM_DEFAULT_MB, GRACE_MS,
		shim_exit_codes_help);
}

void shim_usage_gc(FILE *f)
{
	fprintf(f,
		"Usage: sbtrace-shim gc [--state-dir DIR] [-v]\n"
		"\n"
		"For every state file whose shim is gone: kill the sandbox's processes,\n"
		"remove its cgroup and state file. Also remove empty cgroups under\n"
		"<cgroup v2 mount>/sbtrace/ that no state file names (older than 10 s).\n"
		"\n"
		"  -s, --state-dir DIR    state files (default %s); a DIR that does not\n"
		"                         exist is an error (exit 2), the default missing\n"
		"                         is not (no sandbox ever ran: nothing to do)\n"
		"  -v, --verbose          name each sandbox removed\n"
		"  -h, --help             this help\n"
		"\n%s",
		SBT_STATE_DIR_DEFAULT, shim_exit_codes_help);
}

int shim_usage_error(const char *cmd, const char *fmt, const char *arg)
{
	fprintf(stderr, "sbtrace-shim %s: ", cmd);
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "; see 'sbtrace-shim %s --help'\n", cmd);
	return SHIM_EXIT_USAGE;
}
