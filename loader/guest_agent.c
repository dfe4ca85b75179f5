// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * `sbtrace guest-agent` (guest_agent_cmd.h): the exec hook in the guest
 * kernel, for one cgroup, its records sent down a port in the guest
 * stream's frames (guest_stream.h). The same object and the same attach
 * plan as the host's trace: what the host decodes is what its own hook
 * would have written. No egress hooks (the host judges the tap).
 *
 * Order: attach, register the cgroup, then HELLO and the ready line: the
 * init releases the workload only after both, so its first exec is seen.
 * Every write is whole or the agent stops: a port that fails leaves a gap
 * the host sees (no BYE), never a quiet stream.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <time.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/utsname.h>
#include <linux/random.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "sbtrace.h"
#include "sbtrace.skel.h"
#include "lib/clock.h"
#include "guest_agent.h"
#include "exec/guest_stream.h"
#include "lib/io.h"
#include "loader.h"
#include "lib/log.h"

struct gagent {
	const struct sbt_guest_agent_opts *o;
	struct sbt_plan plan;
	struct sbt_target sb;
	uint64_t own_cg; /* HELLO's: --own-cgroup's id, else --cgroup's */
	struct ring_buffer *rb;
	int port;
	uint32_t seq;
	uint64_t records, start_ms;
	int err;      /* the first write error, -errno */
	int stats_fd; /* --bpf-stats: the kernel's run-time accounting held on, -1 */
	bool drop;    /* --resume-fd: records of the saved boot are not this guest's */
};

/* One frame, whole (a port may take it in parts), or g->err. */
static int send_frame(struct gagent *g, enum sbt_gs_type type, const void *payload, uint32_t len)
{
	uint8_t hdr[SBT_GS_HDR_LEN];

	if (g->err)
		return g->err;
	if (sbt_gs_header(hdr, type, g->seq + 1, len))
		return g->err = -EINVAL;
	/* the port's only writer: header and payload need not be one write */
	g->err = sbt_write_all(g->port, hdr, sizeof(hdr));
	if (!g->err && len)
		g->err = sbt_write_all(g->port, payload, len);
	if (!g->err)
		g->seq++;
	return g->err;
}

static int on_record(void *ctx, void *data, size_t size)
{
	struct gagent *g = ctx;

	if (g->drop)
		return 0;
	if (size > SBT_GS_PAYLOAD_MAX || send_frame(g, SBT_GS_RECORD, data, (uint32_t)size))
		return -1; /* stops the drain: the error ends the agent */
	g->records++;
	return 0;
}

static void counters(struct gagent *g, struct sbt_gs_counters *c)
{
	struct sbt_sandbox_stats st = { 0 };
	struct bpf_program *prog;
	uint32_t slot = 0;

	memset(c, 0, sizeof(*c));
	bpf_map_lookup_elem(bpf_map__fd(g->plan.skel->maps.sandbox_stats), &slot, &st);
	c->uptime_ms = sbt_mono_ms() - g->start_ms;
	c->execs = st.execs;
	c->lost = st.lost;
	c->records = g->records;
	if (g->stats_fd < 0)
		return;
	bpf_object__for_each_program(prog, g->plan.skel->obj)
	{
		uint64_t ns, cnt;

		if (sbt_prog_run_stats(prog, &ns, &cnt) == 0) {
			c->bpf_run_ns += ns;
			c->bpf_run_cnt += cnt;
		}
	}
}

static int send_hello(struct gagent *g)
{
	struct sbt_gs_hello h;
	struct utsname u;

	memset(&h, 0, sizeof(h));
	h.abi = SBT_ABI_VERSION;
	h.hb_ms = g->o->hb_ms;
	h.boot_to_epoch_ns = sbt_boot_epoch_offset_ns();
	h.sent_boot_ns = sbt_clock_ns(CLOCK_BOOTTIME);
	snprintf(h.mode, sizeof(h.mode), "%s", g->plan.exec.mode ? g->plan.exec.mode : "");
	if (uname(&u) == 0)
		snprintf(h.kernel, sizeof(h.kernel), "%s", u.release);
	h.cgroup_id = g->own_cg;
	return send_frame(g, SBT_GS_HELLO, &h, sizeof(h));
}

/* One line to the init; the fd closed unless `keep`. */
static void say_ready(int fd, const char *line, bool keep)
{
	size_t n = strlen(line);

	if (fd < 0)
		return;
	if (write(fd, line, n) != (ssize_t)n)
		sbt_log("--ready-fd %d: %s", fd, strerror(errno));
	if (!keep)
		close(fd);
}

/*
 * --resume-fd: the guest was saved after "attached" and may be one of many
 * restored from that state. Wait for the host's "go" (sbtrace-shim writes it
 * to the guest's control port when the restored guest asks; the init passes
 * it on), then make this guest its own: the clock to the host's time, the
 * host's randomness into the kernel's pool and the RNG reseeded from it (a
 * restored guest's RNG state is the saved one's, shared by every guest
 * restored from it). Events of the wait are the saved boot's: dropped. An
 * exit code.
 */
static int resume(struct gagent *g)
{
	struct {
		struct rand_pool_info info;
		uint8_t buf[SBT_GUEST_SEED_LEN];
	} pool;
	struct sbt_guest_resume r;
	struct timespec ts;
	char line[128];
	size_t len = 0;
	ssize_t n;
	int fd;

	while (len < sizeof(line) - 1) {
		n = read(g->o->resume_fd, line + len, 1);
		if (n < 0 && errno == EINTR && !sbt_stop_signal)
			continue;
		if (n <= 0)
			break;
		if (line[len++] == '\n')
			break;
	}
	close(g->o->resume_fd);
	if (sbt_guest_resume_parse(line, len, &r)) {
		sbt_log("--resume-fd: no 'go EPOCH_NS SEED' line (%zu bytes)", len);
		return SBT_EXIT_USAGE;
	}
	ts.tv_sec = (time_t)(r.epoch_ns / 1000000000ull);
	ts.tv_nsec = (long)(r.epoch_ns % 1000000000ull);
	if (clock_settime(CLOCK_REALTIME, &ts)) {
		sbt_log("--resume-fd: setting the clock: %s", strerror(errno));
		return SBT_EXIT_RUNTIME;
	}
	pool.info.entropy_count = 8 * SBT_GUEST_SEED_LEN;
	pool.info.buf_size = SBT_GUEST_SEED_LEN;
	memcpy(pool.buf, r.seed, sizeof(pool.buf));
	fd = open("/dev/urandom", O_WRONLY | O_CLOEXEC);
	if (fd < 0 || ioctl(fd, RNDADDENTROPY, &pool) || ioctl(fd, RNDRESEEDCRNG)) {
		sbt_log("--resume-fd: reseeding the RNG: %s", strerror(errno));
		if (fd >= 0)
			close(fd);
		return SBT_EXIT_RUNTIME;
	}
	close(fd);
	memset(&pool, 0, sizeof(pool));
	g->drop = true; /* (none expected: nothing runs in the cgroup yet) */
	ring_buffer__consume(g->rb);
	g->drop = false;
	return SBT_EXIT_OK;
}

/* Attach and register: an exit code. */
static int attach(struct gagent *g)
{
	struct sbt_hook_result membership;
	struct sbt_exec_opts eo;
	int err = sbt_target_from_cgroup(g->o->cgroup, &g->sb);

	if (err)
		return SBT_EXIT_USAGE; /* it said why */
	g->own_cg = g->sb.cgroup_id;
	if (g->o->own_cgroup) {
		struct sbt_target own;

		if (sbt_target_from_cgroup(g->o->own_cgroup, &own))
			return SBT_EXIT_USAGE;
		g->own_cg = own.cgroup_id;
	}
	g->sb.slot = 0;
	eo = g->o->exec;
	eo.no_exec_failed = true; /* its stream carries execs only (guest_stream.h) */
	err = sbt_plan_attach(&eo, &g->plan);
	if (err) {
		sbt_log("cannot attach the exec hook: %s; does the guest kernel have BPF and BTF? "
			"run 'sbtrace features' in the guest",
			strerror(-err));
		return SBT_EXIT_KERNEL;
	}
	if (sbt_register_targets(&g->plan, &g->sb, 1, &membership))
		return SBT_EXIT_KERNEL;
	g->rb = ring_buffer__new(bpf_map__fd(g->plan.skel->maps.events), on_record, g, NULL);
	if (!g->rb) {
		sbt_log("cannot set up the ring buffer: %s", strerror(errno));
		return SBT_EXIT_KERNEL;
	}
	return SBT_EXIT_OK;
}

static int stream(struct gagent *g)
{
	struct sbt_gs_counters c;
	uint64_t next_beat = g->start_ms + g->o->hb_ms;

	while (!sbt_stop_signal && !g->err) {
		uint64_t now = sbt_mono_ms();
		int n = ring_buffer__poll(g->rb, next_beat > now ? (int)(next_beat - now) : 0);

		if (n < 0 && n != -EINTR && !g->err) {
			sbt_log("ring buffer: %s", strerror(-n));
			return SBT_EXIT_RUNTIME;
		}
		if (sbt_mono_ms() >= next_beat && !g->err) {
			counters(g, &c);
			send_frame(g, SBT_GS_BEAT, &c, sizeof(c));
			next_beat = sbt_mono_ms() + g->o->hb_ms;
		}
	}
	if (!g->err)
		ring_buffer__consume(g->rb);
	counters(g, &c);
	if (!g->err)
		send_frame(g, SBT_GS_BYE, &c, sizeof(c));
	if (g->err) {
		sbt_log("writing to %s: %s", g->o->port, strerror(-g->err));
		return SBT_EXIT_RUNTIME;
	}
	return SBT_EXIT_OK;
}

int sbt_guest_agent_run(const struct sbt_guest_agent_opts *o)
{
	struct gagent g = { .o = o, .port = -1, .stats_fd = -1 };
	int ret;

	sbt_signals_install(false);
	/* a saved boot's init starts it through ld.so (ld-linux-x86-64 would be its name) */
	prctl(PR_SET_NAME, "sbtrace", 0, 0, 0);
	g.port = open(o->port, O_WRONLY | O_CLOEXEC | O_NOCTTY);
	if (g.port < 0) {
		sbt_log("--port %s: %s", o->port, strerror(errno));
		return SBT_EXIT_USAGE;
	}
	if (o->bpf_stats) {
		g.stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
		if (g.stats_fd < 0)
			sbt_log("--bpf-stats: %s (no figures sent)", strerror(errno));
	}
	ret = attach(&g);
	if (ret == SBT_EXIT_OK && o->resume_fd >= 0) {
		say_ready(o->ready_fd, "attached\n", true);
		ret = resume(&g);
	}
	g.start_ms = sbt_mono_ms();
	if (ret == SBT_EXIT_OK && send_hello(&g) == 0) {
		say_ready(o->ready_fd, o->resume_fd >= 0 ? "resumed\n" : "attached\n", false);
		ret = stream(&g);
	} else if (ret == SBT_EXIT_OK) {
		sbt_log("writing to %s: %s", o->port, strerror(-g.err));
		ret = SBT_EXIT_RUNTIME;
	}
	ring_buffer__free(g.rb);
	sbt_plan_detach(&g.plan);
	sbt_plan_destroy(&g.plan);
	close(g.port);
	if (g.stats_fd >= 0)
		close(g.stats_fd);
	return ret;
}
