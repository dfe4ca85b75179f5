// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Egress: observation, policy verdicts and enforcement for sandbox sockets. */
#include "common.bpf.h"

SEC("cgroup/connect4")
int egress_connect4(struct bpf_sock_addr *ctx)
{
	return 1;
}
