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

/* The tc floor for the tap benchmark: a classifier that lets every frame pass. */
SEC("tc")
int bench_empty_tc(struct __sk_buff *skb)
{
	return 0;
}
