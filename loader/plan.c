// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The attach plan: one BPF object, loaded once, holding for each capability
 * the program twins that may work on this kernel; the preferred twin that
 * loads and attaches wins, and every failed try is reported.
 *
 *   exec        tp_btf, raw_tp, tracepoint             (required)
 *   exec_failed tracepoint syscalls/sys_exit_execve(at)  (optional: reported)
 *   connect     fentry, kprobe, tp_btf, tracepoint     (observation; optional)
 *   packet      tracepoint syscalls/sys_enter_socket   (observation; optional)
 *   egress      cgroup sock_addr/sock_create/skb       (with a policy; attached per sandbox)
 *
 * A load failure cannot be traced to one program, so the optional parts that
 * can fail at load (fentry; the cgroup iterator) are tried first and dropped
 * on a retry; each retry is a full load (~20 ms here).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "sbtrace.h"
#include "sbtrace.skel.h"
#include "loader.h"

static bool verbose;

/*
 * libbpf's own messages only with -v: the attach plan expects some tries to
 * fail (fentry where the kernel has no trampolines ...) and reports every
 * failure itself, in TraceStarted and on stderr.
 */
static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list args)
	__attribute__((format(printf, 2, 0)));
static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list args)
{
	if (!verbose)
		return 0;
	return vfprintf(stderr, fmt, args);
}

static struct bpf_program *exec_prog(struct sbtrace_bpf *skel, enum sbt_exec_mode m)
{
	switch (m) {
	case SBT_EXEC_TP_BTF:
		return skel->progs.exec_tp_btf;
	case SBT_EXEC_RAW_TP:
		return skel->progs.exec_raw_tp;
	default:
		return skel->progs.exec_tracepoint;
	}
}

/* The connect twins in order of preference. */
enum { CONNECT_FENTRY, CONNECT_KPROBE, CONNECT_TP_BTF, CONNECT_TRACEPOINT, NR_CONNECT };
static const char *const connect_modes[NR_CONNECT] = { "fentry", "kprobe", "tp_btf", "tracepoint" };

static struct bpf_program *connect_prog(struct sbtrace_bpf *skel, int i)
{
	switch (i) {
	case CONNECT_FENTRY:
		return skel->progs.connect_fentry;
	case CONNECT_KPROBE:
		return skel->progs.connect_kprobe;
	case CONNECT_TP_BTF:
		return skel->progs.connect_tp_btf;
	default:
		return skel->progs.connect_tracepoint;
	}
}

struct bpf_program *const *sbt_egress_progs(struct sbtrace_bpf *skel, size_t *n)
{
	static struct bpf_program *progs[SBT_EGRESS_PROGS];

	progs[0] = skel->progs.egress_connect4;
	progs[1] = skel->progs.egress_connect6;
	progs[2] = skel->progs.egress_sendmsg4;
	progs[3] = skel->progs.egress_sendmsg6;
	progs[4] = skel->progs.egress_sock_create;
	progs[5] = skel->progs.egress_skb;
	progs[6] = skel->progs.egress_recvmsg4; /* DNS proxy: the reply's source restored */
	progs[7] = skel->progs.egress_recvmsg6;
	*n = SBT_EGRESS_PROGS;
	return progs;
}

/*
 * Can a fentry program attach to `func` here? Loads a two-instruction
 * program with the function's BTF id; the verdict of BPF_PROG_LOAD is the
 * same the real twin would get (no trampolines, lockdown, no BTF ...).
 */
static int probe_fentry(const char *func)
{
	const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, o, .expected_attach_type = BPF_TRACE_FENTRY);
	struct btf *vmlinux = btf__load_vmlinux_btf();
	int id, fd, err;

	if (!vmlinux)
		return -errno ? -errno : -ENOENT;
	id = btf__find_by_name_kind(vmlinux, func, BTF_KIND_FUNC);
	btf__free(vmlinux);
	if (id <= 0)
		return -ENOENT;
	o.attach_btf_id = (__u32)id;
	fd = bpf_prog_load(BPF_PROG_TYPE_TRACING, "sbt_fentry_probe", "GPL", insns, 2, &o);
	if (fd < 0) {
		err = -errno;
		return err ? err : -EINVAL;
	}
	close(fd);
	return 0;
}

struct load_set {
	enum sbt_exec_mode exec;
	bool fentry;
	bool iter;
	bool failed; /* the failed-exec programs (their helpers may be refused here) */
};

static struct sbtrace_bpf *open_load_btf(const struct sbt_exec_opts *opts,
					 const struct load_set *ls, const char *btf, int *errp)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .btf_custom_path = btf);
	struct sbtrace_bpf *skel = sbtrace_bpf__open_opts(&oo);
	struct bpf_program *prog;
	const char *fold;
	struct bpf_program *const *eg;
	size_t neg;
	int err;

	if (!skel) {
		*errp = -errno;
		return NULL;
	}
	bpf_object__for_each_program(prog, skel->obj) bpf_program__set_autoload(prog, false);
	bpf_program__set_autoload(exec_prog(skel, ls->exec), true);
	bpf_program__set_autoload(skel->progs.failed_execve, ls->failed);
	bpf_program__set_autoload(skel->progs.failed_execveat, ls->failed);
	bpf_program__set_autoload(skel->progs.cgroup_ptr, ls->iter);
	if (opts->observe) {
		/* the BTF-typed twins only where the kernel has BTF for tp_btf */
		bpf_program__set_autoload(skel->progs.connect_fentry, ls->fentry);
		bpf_program__set_autoload(skel->progs.connect_kprobe, true);
		bpf_program__set_autoload(skel->progs.connect_tp_btf, ls->exec == SBT_EXEC_TP_BTF);
		bpf_program__set_autoload(skel->progs.connect_tracepoint, true);
		bpf_program__set_autoload(skel->progs.packet_socket, true);
	}
	eg = sbt_egress_progs(skel, &neg);
	for (size_t i = 0; i < neg; i++)
		bpf_program__set_autoload(eg[i], opts->policy);
	bpf_program__set_autoload(skel->progs.tap_ingress, opts->tap);
	bpf_program__set_autoload(skel->progs.tap_egress, opts->tap);
	bpf_program__set_autoload(skel->progs.agent_cgroup_mkdir, opts->agent);
	skel->rodata->argv_max = opts->argv_max;
	skel->rodata->wakeup_each = opts->poll_ms == 0;
	skel->rodata->wakeup_watermark = opts->ringbuf_bytes / 4;
	skel->rodata->host_netns_cookie = opts->host_netns_cookie;
	skel->rodata->agent_modes = opts->agent;
	skel->rodata->agent_mkdir_mode = opts->agent_mkdir_mode;
	/* SBTRACE_FOLD_WINDOW_MS: a benchmark knob (0 sends every egress event) */
	fold = getenv("SBTRACE_FOLD_WINDOW_MS");
	if (fold)
		skel->rodata->fold_window_ns = strtoull(fold, NULL, 10) * 1000000ull;
	err = bpf_map__set_max_entries(skel->maps.events, opts->ringbuf_bytes);
	/* the agent: slots beyond the trace's fixed table (membership by hash map only) */
	if (!err && opts->max_sandboxes)
		err = bpf_map__set_max_entries(skel->maps.sandbox_cgroups, opts->max_sandboxes);
	if (!err && opts->max_sandboxes)
		err = bpf_map__set_max_entries(skel->maps.sandbox_stats, opts->max_sandboxes);
	if (!err && opts->max_sandboxes)
		err = bpf_map__set_max_entries(skel->maps.agent_free_slots, opts->max_sandboxes);
	if (!err && opts->max_sandboxes)
		err = bpf_map__set_max_entries(skel->maps.agent_egress_mode, opts->max_sandboxes);
	if (!err)
		err = sbtrace_bpf__load(skel);
	if (err) {
		sbtrace_bpf__destroy(skel);
		*errp = err;
		return NULL;
	}
	return skel;
}

/*
 * Open and load with the cut-down kernel BTF when there is one for this
 * kernel (minbtf.c); should that fail, with the kernel's own: a stale or
 * damaged copy costs start-up time, never the trace.
 */
static struct sbtrace_bpf *open_load(const struct sbt_exec_opts *opts, const struct load_set *ls,
				     int *errp)
{
	char path[PATH_MAX];
	const char *btf = sbt_min_btf(path, sizeof(path));
	struct sbtrace_bpf *skel = open_load_btf(opts, ls, btf, errp);

	if (!skel && btf)
		skel = open_load_btf(opts, ls, NULL, errp);
	return skel;
}

/*
 * Load for exec mode m, dropping the optional parts that may be what failed:
 * first fentry, then the iterator. Records what was dropped and why.
 */
static struct sbtrace_bpf *load_for_mode(const struct sbt_exec_opts *opts, enum sbt_exec_mode m,
					 struct sbt_plan *plan, int *errp)
{
	struct load_set ls = {
		.exec = m,
		.fentry = opts->observe && !sbt_hook_disabled("connect", "fentry"),
		.iter = m == SBT_EXEC_TP_BTF && !sbt_hook_disabled("membership", "cgroup_ptr"),
		.failed = !opts->no_exec_attach && !opts->no_exec_failed &&
			  !sbt_hook_disabled("exec_failed", "tracepoint"),
	};
	struct sbtrace_bpf *skel;

	/* A failed fentry costs a whole reload: ask the kernel with a tiny program first. */
	if (ls.fentry && !plan->fentry_probed) {
		plan->fentry_probed = true;
		plan->fentry_err = probe_fentry("tcp_connect");
	}
	if (ls.fentry && plan->fentry_err)
		ls.fentry = false;

	for (;;) {
		skel = open_load(opts, &ls, errp);
		if (skel)
			break;
		if (ls.fentry) {
			plan->fentry_err = *errp;
			ls.fentry = false;
		} else if (ls.failed) {
			plan->failed_err = *errp;
			ls.failed = false;
		} else if (ls.iter) {
			plan->iter_err = *errp;
			ls.iter = false;
		} else {
			return NULL;
		}
	}
	plan->fentry_loaded = ls.fentry;
	return skel;
}

static void attach_connect(struct sbt_plan *plan)
{
	struct sbt_hook_result *res = &plan->connect;

	for (int i = 0; i < NR_CONNECT; i++) {
		struct bpf_program *prog = connect_prog(plan->skel, i);

		if (sbt_hook_disabled("connect", connect_modes[i])) {
			sbt_hook_record(res, connect_modes[i], "disabled", -EPERM);
			continue;
		}
		if (i == CONNECT_FENTRY && !plan->fentry_loaded) {
			sbt_hook_record(res, connect_modes[i], "load",
					plan->fentry_err ? plan->fentry_err : -EOPNOTSUPP);
			continue;
		}
		if (bpf_program__fd(prog) < 0) {
			sbt_hook_record(res, connect_modes[i], "unsupported", -EOPNOTSUPP);
			continue;
		}
		plan->connect_link = bpf_program__attach(prog);
		if (!plan->connect_link) {
			sbt_hook_record(res, connect_modes[i], "attach", -errno);
			continue;
		}
		sbt_hook_record(res, connect_modes[i], "attached", 0);
		res->mode = connect_modes[i];
		return;
	}
}

static void attach_packet(struct sbt_plan *plan)
{
	struct sbt_hook_result *res = &plan->packet;

	if (sbt_hook_disabled("packet_socket", "tracepoint")) {
		sbt_hook_record(res, "tracepoint", "disabled", -EPERM);
		return;
	}
	plan->packet_link = bpf_program__attach(plan->skel->progs.packet_socket);
	if (!plan->packet_link) {
		sbt_hook_record(res, "tracepoint", "attach", -errno);
		return;
	}
	sbt_hook_record(res, "tracepoint", "attached", 0);
	res->mode = "tracepoint";
}

/*
 * Failed execs (a shell that is not there): both syscalls' exit tracepoints
 * or neither, so that "no failed exec" never means "half of them unseen".
 */
static void attach_failed(const struct sbt_exec_opts *opts, struct sbt_plan *plan)
{
	struct sbt_hook_result *res = &plan->exec_failed;
	struct bpf_program *progs[2] = { plan->skel->progs.failed_execve,
					 plan->skel->progs.failed_execveat };

	if (opts->no_exec_failed) {
		sbt_hook_record(res, "tracepoint", "disabled", -EOPNOTSUPP);
		return;
	}
	if (sbt_hook_disabled("exec_failed", "tracepoint")) {
		sbt_hook_record(res, "tracepoint", "disabled", -EPERM);
		return;
	}
	if (plan->failed_err) { /* the object loaded only without them */
		sbt_hook_record(res, "tracepoint", "load", plan->failed_err);
		return;
	}
	for (int i = 0; i < 2; i++) {
		plan->failed_link[i] =
			bpf_program__fd(progs[i]) < 0 ? NULL : bpf_program__attach(progs[i]);
		if (!plan->failed_link[i]) {
			int err = bpf_program__fd(progs[i]) < 0 ? -EOPNOTSUPP : -errno;

			sbt_hook_record(res, "tracepoint", "attach", err);
			bpf_link__destroy(plan->failed_link[0]);
			plan->failed_link[0] = NULL;
			return;
		}
	}
	sbt_hook_record(res, "tracepoint", "attached", 0);
	res->mode = "tracepoint";
}

static int try_exec_mode(const struct sbt_exec_opts *opts, enum sbt_exec_mode m,
			 struct sbt_plan *plan)
{
	int err = 0;

	plan->skel = load_for_mode(opts, m, plan, &err);
	if (!plan->skel) {
		sbt_hook_record(&plan->exec, sbt_exec_mode_name(m), "load", err);
		return err;
	}
	/* No cgroup to watch (taps only): host-wide exec tracing would cost every exec for nothing. */
	if (opts->no_exec_attach)
		return 0;
	plan->exec_link = bpf_program__attach(exec_prog(plan->skel, m));
	if (!plan->exec_link) {
		err = -errno;
		sbt_hook_record(&plan->exec, sbt_exec_mode_name(m), "attach", err);
		sbtrace_bpf__destroy(plan->skel);
		plan->skel = NULL;
		return err;
	}
	sbt_hook_record(&plan->exec, sbt_exec_mode_name(m), "attached", 0);
	plan->exec.mode = sbt_exec_mode_name(m);
	attach_failed(opts, plan);
	return 0;
}

int sbt_plan_attach(const struct sbt_exec_opts *opts, struct sbt_plan *plan)
{
	int err = -ENOENT;

	verbose = opts->verbose;
	libbpf_set_print(libbpf_print);
	memset(plan, 0, sizeof(*plan));
	plan->exec.capability = "exec";
	plan->connect.capability = "connect";
	plan->packet.capability = "packet_socket";
	plan->exec_failed.capability = "exec_failed";
	if (opts->forced_mode >= 0) {
		err = try_exec_mode(opts, (enum sbt_exec_mode)opts->forced_mode, plan);
	} else {
		for (int m = 0; m < SBT_EXEC_NR_MODES; m++) {
			if (sbt_hook_disabled("exec", sbt_exec_mode_name((enum sbt_exec_mode)m))) {
				sbt_hook_record(&plan->exec,
						sbt_exec_mode_name((enum sbt_exec_mode)m),
						"disabled", -EPERM);
				continue;
			}
			err = try_exec_mode(opts, (enum sbt_exec_mode)m, plan);
			if (!err)
				break;
		}
	}
	if (err)
		return err;
	if (!plan->skel)
		return -ENOENT;
	/* With a policy the sock_addr hooks see every connect: no observation needed. */
	if (opts->observe_connect)
		attach_connect(plan);
	else if (opts->policy) {
		sbt_hook_record(&plan->connect, "cgroup_sock_addr", "attached", 0);
		plan->connect.mode = "cgroup_sock_addr";
	}
	if (opts->observe)
		attach_packet(plan);
	return 0;
}

void sbt_plan_destroy(struct sbt_plan *plan)
{
	bpf_link__destroy(plan->packet_link);
	bpf_link__destroy(plan->connect_link);
	bpf_link__destroy(plan->exec_link);
	bpf_link__destroy(plan->failed_link[0]);
	bpf_link__destroy(plan->failed_link[1]);
	plan->failed_link[0] = plan->failed_link[1] = NULL;
	sbtrace_bpf__destroy(plan->skel);
	plan->packet_link = plan->connect_link = plan->exec_link = NULL;
	plan->skel = NULL;
}

/* Detach the tracing programs (first step of a stop: no new events). */
void sbt_plan_detach(struct sbt_plan *plan)
{
	bpf_link__destroy(plan->packet_link);
	bpf_link__destroy(plan->connect_link);
	bpf_link__destroy(plan->exec_link);
	bpf_link__destroy(plan->failed_link[0]);
	bpf_link__destroy(plan->failed_link[1]);
	plan->failed_link[0] = plan->failed_link[1] = NULL;
	plan->packet_link = plan->connect_link = plan->exec_link = NULL;
}

int sbt_prog_run_stats(const struct bpf_program *prog, uint64_t *run_ns, uint64_t *run_cnt)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info);

	if (bpf_program__fd(prog) < 0)
		return -EBADF;
	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len))
		return -errno;
	*run_ns = info.run_time_ns;
	*run_cnt = info.run_cnt;
	return 0;
}
