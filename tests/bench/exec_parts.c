// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The exec program's cost split into its parts (scripts/bench-exec-parts.sh):
 * builds of bpf/exec.bpf.c that return after part n (-DSBT_STOP_AFTER=n) and
 * the whole program, attached to tp_btf/sched_process_exec next to an empty
 * program (the floor), each watching the same sandbox cgroup; the kernel's
 * own accounting (BPF_ENABLE_STATS: run_time_ns / run_cnt) says what each
 * cost.
 *
 *   exec_parts [--alone] SANDBOX_CG OUTSIDE_CG EXECS ROUNDS NAME=OBJECT...
 *
 * A measure: attach a set of programs in order, EXECS execs of /bin/true in
 * SANDBOX_CG, EXECS in OUTSIDE_CG, detach. A round is one measure of the
 * floor and every build at once (the same execs for all, but a program finds
 * warm what the ones before it touched), or with --alone one measure per
 * build, the floor and that build; the order is reversed every other round.
 * Another empty program is attached first and stays: the first program on a
 * tracepoint pays for warming its dispatch path. Other execs on the machine
 * run the programs too; they are taken out of the sandbox figure with the
 * outside cost of the same program in the same measure. Prints, per round
 * and program (the floor's figures its mean over the round's measures):
 *
 *   round R order fwd|rev prog NAME in_ns X out_ns Y others B
 *
 * and at the end "records N lost L": what the builds sent and what their
 * ring buffers refused (only the whole program sends). Exit codes: 0 ok,
 * 1 a run failed, 2 usage, 3 load or attach failed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "bpf/sbtrace.h"
#include "bench_empty.skel.h"

#define MAX_PROGS 16
#define WORKLOAD  "/bin/true"

struct prog {
	const char *name;
	struct bpf_object *obj; /* NULL: the floor (the empty skeleton's program) */
	struct bpf_program *prog;
	struct bpf_link *link;
	struct ring_buffer *rb;
	__u64 rt, cnt;	     /* stats at the start of a phase */
	__u64 in_rt, in_cnt; /* the sandbox phase: run time and calls */
	double out_ns;	     /* the outside phase: ns per call */
	/* this round: sums of the sandbox and outside ns per exec, how many, other execs */
	double sum_in, sum_out;
	int nr_sums;
	__u64 others;
};

static __u64 records;

static int count_record(void *ctx, void *data, size_t size)
{
	(void)ctx;
	(void)data;
	(void)size;
	records++;
	return 0;
}

/* Offset of global `var` in the data section `sec` (.bss, .rodata), from the object's BTF. */
static long var_offset(struct bpf_object *obj, const char *sec, const char *var)
{
	struct btf *btf = bpf_object__btf(obj);
	const struct btf_var_secinfo *v;
	const struct btf_type *t;
	int id;

	id = btf ? btf__find_by_name_kind(btf, sec, BTF_KIND_DATASEC) : -1;
	if (id <= 0)
		return -1;
	t = btf__type_by_id(btf, id);
	v = btf_var_secinfos(t);
	for (int i = 0; i < btf_vlen(t); i++, v++) {
		const struct btf_type *vt = btf__type_by_id(btf, v->type);

		if (strcmp(btf__name_by_offset(btf, vt->name_off), var) == 0)
			return v->offset;
	}
	return -1;
}

/* The sandbox cgroup's address, by the object's own iterator (as loader/membership.c). */
static int learn_cgroup(struct bpf_object *obj, const char *cg, __u64 cg_id)
{
	struct bpf_map *bss = bpf_object__find_map_by_name(obj, ".bss");
	struct bpf_program *iter = bpf_object__find_program_by_name(obj, "cgroup_ptr");
	long o_ptr = var_offset(obj, ".bss", "found_ptr"),
	     o_id = var_offset(obj, ".bss", "found_id");
	long o_lv = var_offset(obj, ".bss", "found_level"),
	     o_nr = var_offset(obj, ".bss", "nr_fast");
	long o_fast = var_offset(obj, ".bss", "fast");
	DECLARE_LIBBPF_OPTS(bpf_iter_attach_opts, opts);
	union bpf_iter_link_info linfo;
	struct sbt_fast_sandbox fast;
	struct bpf_link *link;
	__u32 zero = 0, nr = 1;
	char buf[64], *val;
	int dfd, ifd, err;

	if (!bss || !iter || o_ptr < 0 || o_id < 0 || o_lv < 0 || o_nr < 0 || o_fast < 0)
		return -ENOENT;
	dfd = open(cg, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	memset(&linfo, 0, sizeof(linfo));
	linfo.cgroup.cgroup_fd = (__u32)dfd;
	linfo.cgroup.order = BPF_CGROUP_ITER_SELF_ONLY;
	opts.link_info = &linfo;
	opts.link_info_len = sizeof(linfo);
	link = bpf_program__attach_iter(iter, &opts);
	err = link ? 0 : -errno;
	ifd = link ? bpf_iter_create(bpf_link__fd(link)) : -1;
	if (ifd >= 0) {
		while (read(ifd, buf, sizeof(buf)) > 0)
			;
		close(ifd);
	} else if (!err) {
		err = -errno;
	}
	bpf_link__destroy(link);
	close(dfd);
	if (err)
		return err;
	val = calloc(1, bpf_map__value_size(bss));
	if (!val)
		return -ENOMEM;
	if (bpf_map_lookup_elem(bpf_map__fd(bss), &zero, val)) {
		free(val);
		return -errno;
	}
	fast = (struct sbt_fast_sandbox){ .slot = 0, .cgroup_id = cg_id };
	memcpy(&fast.cgroup_ptr, val + o_ptr, sizeof(fast.cgroup_ptr));
	memcpy(&fast.level, val + o_lv, sizeof(fast.level));
	if (!fast.cgroup_ptr || memcmp(val + o_id, &cg_id, sizeof(cg_id)) != 0) {
		free(val);
		return -ESRCH;
	}
	memcpy(val + o_fast, &fast, sizeof(fast));
	memcpy(val + o_nr, &nr, sizeof(nr));
	err = bpf_map_update_elem(bpf_map__fd(bss), &zero, val, BPF_ANY) ? -errno : 0;
	free(val);
	return err;
}

/* Load one build with its tp_btf twin and iterator, watching cgroup `cg`. */
static int load_build(struct prog *p, const char *path, const char *cg, __u64 cg_id)
{
	struct bpf_program *q;
	int err;

	p->obj = bpf_object__open_file(path, NULL);
	if (!p->obj)
		return -errno;
	bpf_object__for_each_program(q, p->obj)
	{
		const char *n = bpf_program__name(q);

		bpf_program__set_autoload(q, !strcmp(n, "exec_tp_btf") || !strcmp(n, "cgroup_ptr"));
	}
	p->prog = bpf_object__find_program_by_name(p->obj, "exec_tp_btf");
	/* The loader's default ring buffer (--ringbuf-size 1 MiB); drained after every phase. */
	err = p->prog ? bpf_map__set_max_entries(bpf_object__find_map_by_name(p->obj, "events"),
						 1u << 20)
		      : -ENOENT;
	if (!err)
		err = bpf_object__load(p->obj);
	if (!err)
		err = learn_cgroup(p->obj, cg, cg_id);
	if (!err) {
		p->rb = ring_buffer__new(
			bpf_map__fd(bpf_object__find_map_by_name(p->obj, "events")), count_record,
			NULL, NULL);
		if (!p->rb)
			err = -errno;
	}
	return err;
}

static int prog_stats(const struct prog *p, __u64 *rt, __u64 *cnt)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(bpf_program__fd(p->prog), &info, &len))
		return -errno;
	*rt = info.run_time_ns;
	*cnt = info.run_cnt;
	return 0;
}

/* EXECS execs of /bin/true in `cg`, one at a time, from a child that joined it. */
static int spawn_execs(const char *cg, long n)
{
	char path[4096];
	pid_t pid;
	int st;

	snprintf(path, sizeof(path), "%s/cgroup.procs", cg);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		int fd = open(path, O_WRONLY | O_CLOEXEC);

		if (fd < 0 || write(fd, "0", 1) != 1)
			_exit(1);
		close(fd);
		for (long k = 0; k < n; k++) {
			pid_t c = fork();

			if (c < 0)
				_exit(1);
			if (c == 0) {
				execl(WORKLOAD, WORKLOAD, (char *)NULL);
				_exit(127);
			}
			if (waitpid(c, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
				_exit(1);
		}
		_exit(0);
	}
	if (waitpid(pid, &st, 0) < 0)
		return -errno;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -ECHILD;
}

/* One phase: EXECS execs in `cg`; per program of the set, run time and calls. */
static int phase(struct prog *const *set, int k, const char *cg, long n, bool inside)
{
	int err;

	for (int i = 0; i < k; i++)
		if (prog_stats(set[i], &set[i]->rt, &set[i]->cnt))
			return -errno;
	err = spawn_execs(cg, n);
	for (int i = 0; i < k && !err; i++) {
		struct prog *p = set[i];
		__u64 rt, cnt;

		err = prog_stats(p, &rt, &cnt);
		if (err)
			break;
		if (cnt - p->cnt < (__u64)n)
			return -EPROTO; /* the stats did not count every exec */
		if (inside) {
			p->in_rt = rt - p->rt;
			p->in_cnt = cnt - p->cnt;
		} else {
			p->out_ns = (double)(rt - p->rt) / (double)(cnt - p->cnt);
		}
	}
	for (int i = 0; i < k; i++)
		if (set[i]->rb)
			ring_buffer__consume(set[i]->rb);
	return err;
}

/*
 * Attach the set in its order, run both phases, detach; add each program's
 * sandbox cost (the other execs taken out at its outside cost) to its sums.
 */
static int measure(struct prog *const *set, int k, const char *sb, const char *out, long n)
{
	int err = 0;

	for (int i = 0; i < k && !err; i++) {
		set[i]->link = bpf_program__attach(set[i]->prog);
		if (!set[i]->link)
			err = -errno;
	}
	if (!err)
		err = phase(set, k, sb, n, true);
	if (!err)
		err = phase(set, k, out, n, false);
	for (int i = 0; i < k; i++) {
		struct prog *p = set[i];

		bpf_link__destroy(p->link);
		p->link = NULL;
		if (err)
			continue;
		p->others += p->in_cnt - (__u64)n;
		p->sum_in +=
			((double)p->in_rt - (double)(p->in_cnt - (__u64)n) * p->out_ns) / (double)n;
		p->sum_out += p->out_ns;
		p->nr_sums++;
	}
	return err;
}

/*
 * Together: every program attached at once, in order, reversed every other
 * round. Alone: the floor and one build at a time, the builds in order
 * (reversed every other round).
 */
static int run_rounds(struct prog *progs, int nr, const char *sb, const char *out, long n,
		      int rounds, bool alone)
{
	struct prog *set[MAX_PROGS];

	for (int r = 1; r <= rounds; r++) {
		bool reverse = r % 2 == 0;
		int err = 0;

		for (int i = 0; i < nr; i++) {
			progs[i].sum_in = progs[i].sum_out = 0;
			progs[i].nr_sums = 0;
			progs[i].others = 0;
			set[i] = &progs[reverse ? nr - 1 - i : i];
		}
		if (!alone)
			err = measure(set, nr, sb, out, n);
		for (int i = 1; alone && i < nr && !err; i++) {
			struct prog *pair[2] = { &progs[0], &progs[reverse ? nr - i : i] };

			err = measure(pair, 2, sb, out, n);
		}
		if (err) {
			fprintf(stderr, "exec_parts: round %d: %s\n", r, strerror(-err));
			return 1;
		}
		for (int i = 0; i < nr; i++) {
			const struct prog *p = &progs[i];

			printf("round %d order %s prog %s in_ns %.1f out_ns %.1f others %llu\n", r,
			       reverse ? "rev" : "fwd", p->name, p->sum_in / p->nr_sums,
			       p->sum_out / p->nr_sums, (unsigned long long)p->others);
		}
		fflush(stdout);
	}
	return 0;
}

/* Records the builds' ring buffers refused (only the whole program sends). */
static __u64 lost_of(const struct prog *progs, int nr)
{
	__u64 lost = 0;

	for (int i = 0; i < nr; i++) {
		struct bpf_map *m =
			progs[i].obj ? bpf_object__find_map_by_name(progs[i].obj, "sandbox_stats")
				     : NULL;
		struct sbt_sandbox_stats st = { 0 };
		__u32 slot = 0;

		if (m && bpf_map_lookup_elem(bpf_map__fd(m), &slot, &st) == 0)
			lost += st.lost;
	}
	return lost;
}

int main(int argc, char **argv)
{
	struct bench_empty_bpf *warm = NULL, *floor_skel = NULL;
	struct prog progs[MAX_PROGS];
	struct bpf_link *warm_link = NULL;
	struct stat st;
	long n;
	int rounds, nr = 0, stats_fd, ret = 3;
	bool alone = argc > 1 && strcmp(argv[1], "--alone") == 0;

	if (alone) {
		argc--;
		argv++;
	}
	if (argc < 6 || argc - 5 + 1 > MAX_PROGS) {
		fprintf(stderr, "usage: exec_parts [--alone] SANDBOX_CG OUTSIDE_CG EXECS ROUNDS "
				"NAME=OBJECT...\n");
		return 2;
	}
	n = strtol(argv[3], NULL, 10);
	rounds = atoi(argv[4]);
	if (n < 1 || rounds < 1 || stat(argv[1], &st)) {
		fprintf(stderr, "exec_parts: bad EXECS, ROUNDS or cgroup %s\n", argv[1]);
		return 2;
	}
	stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	if (stats_fd < 0) {
		fprintf(stderr, "exec_parts: enable bpf stats: %s\n", strerror(errno));
		return 3;
	}
	memset(progs, 0, sizeof(progs));
	warm = bench_empty_bpf__open_and_load();
	floor_skel = bench_empty_bpf__open_and_load();
	if (!warm || !floor_skel)
		goto out;
	warm_link = bpf_program__attach(warm->progs.bench_empty_exec);
	if (!warm_link)
		goto out;
	progs[nr].name = "floor";
	progs[nr++].prog = floor_skel->progs.bench_empty_exec;
	for (int i = 5; i < argc; i++) {
		char *eq = strchr(argv[i], '=');
		int err;

		if (!eq) {
			fprintf(stderr, "exec_parts: %s: want NAME=OBJECT\n", argv[i]);
			ret = 2;
			goto out;
		}
		*eq = '\0';
		progs[nr].name = argv[i];
		err = load_build(&progs[nr], eq + 1, argv[1], (__u64)st.st_ino);
		nr++;
		if (err) {
			fprintf(stderr, "exec_parts: load %s: %s\n", eq + 1, strerror(-err));
			goto out;
		}
	}
	ret = run_rounds(progs, nr, argv[1], argv[2], n, rounds, alone);
	printf("records %llu lost %llu\n", (unsigned long long)records,
	       (unsigned long long)lost_of(progs, nr));
out:
	if (ret == 3)
		fprintf(stderr, "exec_parts: cannot load or attach: %s\n", strerror(errno));
	bpf_link__destroy(warm_link);
	for (int i = 0; i < nr; i++) {
		ring_buffer__free(progs[i].rb);
		bpf_object__close(progs[i].obj);
	}
	bench_empty_bpf__destroy(floor_skel);
	bench_empty_bpf__destroy(warm);
	close(stats_fd);
	return ret;
}
