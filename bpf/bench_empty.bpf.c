// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Benchmark floor: a tp_btf program on the same hook as the exec tracer that
 * returns at once. Its bpf_stats run time is the cost of merely being attached.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

SEC("tp_btf/sched_process_exec")
int BPF_PROG(bench_empty_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	return 0;
}
