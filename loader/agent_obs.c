// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * What `sbtrace agent` serves about itself: each BPF program's run time and
 * count (BPF_ENABLE_STATS: on while this process holds the fd, never the
 * global kernel.bpf_stats_enabled sysctl), the ring buffer's pending bytes,
 * and /metrics over HTTP with libmicrohttpd in its external-epoll mode, so
 * a scrape is answered by the agent's own poll loop (no thread, no lock:
 * the counters it reads are the ones the events were written from).
 *
 * libmicrohttpd is loaded when a metrics server is asked for (dlopen), not
 * linked: it brings gnutls and friends, ~3 MiB of resident memory that
 * every `sbtrace trace` would carry otherwise.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/socket.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <microhttpd.h>

#include "agent_obs.h"
#include "cmd/agent_cmd.h"
#include "lib/dl.h"
#include "loader.h"
#include "lib/log.h"
#include "lib/peeruid.h"

#define MHD_SONAME "libmicrohttpd.so.12"

static struct {
	__typeof__(&MHD_start_daemon) start_daemon;
	__typeof__(&MHD_stop_daemon) stop_daemon;
	__typeof__(&MHD_run) run;
	__typeof__(&MHD_get_daemon_info) get_daemon_info;
	__typeof__(&MHD_create_response_from_buffer) create_response_from_buffer;
	__typeof__(&MHD_add_response_header) add_response_header;
	__typeof__(&MHD_queue_response) queue_response;
	__typeof__(&MHD_destroy_response) destroy_response;
	__typeof__(&MHD_lookup_connection_value) lookup_connection_value;
} mhd;

/* The library's functions, once. 0, or -1 after a message. */
static int mhd_load(void)
{
	static const char *const soname[] = { MHD_SONAME };
	const struct sbt_dl_sym syms[] = {
		{ "MHD_stop_daemon", (void **)&mhd.stop_daemon },
		{ "MHD_run", (void **)&mhd.run },
		{ "MHD_get_daemon_info", (void **)&mhd.get_daemon_info },
		{ "MHD_create_response_from_buffer", (void **)&mhd.create_response_from_buffer },
		{ "MHD_add_response_header", (void **)&mhd.add_response_header },
		{ "MHD_queue_response", (void **)&mhd.queue_response },
		{ "MHD_destroy_response", (void **)&mhd.destroy_response },
		{ "MHD_lookup_connection_value", (void **)&mhd.lookup_connection_value },
		{ "MHD_start_daemon", (void **)&mhd.start_daemon }, /* last: set means loaded */
	};
	const char *err;
	int lacks;

	if (mhd.start_daemon)
		return 0;
	if (sbt_dl_load(soname, 1, syms, sizeof(syms) / sizeof(syms[0]), &err, &lacks))
		return 0;
	if (lacks)
		sbt_log("%s lacks a function: %s", MHD_SONAME, err);
	else
		sbt_log("--metrics-addr needs %s (Debian's libmicrohttpd12: make deps): %s",
			MHD_SONAME, err);
	return -1;
}

#define MHD_start_daemon		(*mhd.start_daemon)
#define MHD_stop_daemon			(*mhd.stop_daemon)
#define MHD_run				(*mhd.run)
#define MHD_get_daemon_info		(*mhd.get_daemon_info)
#define MHD_create_response_from_buffer (*mhd.create_response_from_buffer)
#define MHD_add_response_header		(*mhd.add_response_header)
#define MHD_queue_response		(*mhd.queue_response)
#define MHD_lookup_connection_value	(*mhd.lookup_connection_value)
#define MHD_destroy_response		(*mhd.destroy_response)

void sbt_agent_obs_init(struct sbt_agent_obs *ob, int ringbuf_fd, uint64_t ringbuf_size)
{
	memset(ob, 0, sizeof(*ob));
	ob->stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	ob->page = sysconf(_SC_PAGESIZE);
	ob->rb_size = ringbuf_size;
	/* the consumer page, then the producer page: read-only second views */
	ob->rb_consumer = mmap(NULL, (size_t)ob->page, PROT_READ, MAP_SHARED, ringbuf_fd, 0);
	ob->rb_producer =
		mmap(NULL, (size_t)ob->page, PROT_READ, MAP_SHARED, ringbuf_fd, (off_t)ob->page);
	if (ob->rb_consumer == MAP_FAILED)
		ob->rb_consumer = NULL;
	if (ob->rb_producer == MAP_FAILED)
		ob->rb_producer = NULL;
}

void sbt_agent_obs_add_prog(struct sbt_agent_obs *ob, const struct bpf_program *prog)
{
	if (prog && bpf_program__fd(prog) >= 0 && ob->nr_progs < SBT_AGENT_OBS_PROGS)
		ob->progs[ob->nr_progs++] = prog;
}

uint64_t sbt_agent_obs_pending(const struct sbt_agent_obs *ob)
{
	uint64_t cons, prod;

	if (!ob->rb_consumer || !ob->rb_producer)
		return 0;
	cons = __atomic_load_n((const uint64_t *)ob->rb_consumer, __ATOMIC_ACQUIRE);
	prod = __atomic_load_n((const uint64_t *)ob->rb_producer, __ATOMIC_ACQUIRE);
	return prod > cons ? prod - cons : 0;
}

void sbt_agent_obs_sample(struct sbt_agent_obs *ob)
{
	ob->rb_last = sbt_agent_obs_pending(ob);
	if (ob->rb_last > ob->rb_high)
		ob->rb_high = ob->rb_last;
}

/* The process_* series from /proc/self (field numbers of proc(5)). */
static void process_fill(struct sbt_metrics_runtime *rt)
{
	char buf[1024], *p;
	unsigned long long ut, st, start, vsize;
	long long rss;
	struct rlimit rl;
	struct timespec now, mono;
	DIR *d;
	FILE *f = fopen("/proc/self/stat", "re");
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
	long hz = sysconf(_SC_CLK_TCK), page = sysconf(_SC_PAGESIZE);

	if (f)
		fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')'); /* the comm may hold spaces and parentheses */
	if (!p || hz <= 0 ||
	    sscanf(p + 2,
		   "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %*d %*d %*d %*d "
		   "%*d %*d %llu %llu %lld",
		   &ut, &st, &start, &vsize, &rss) != 5)
		return;
	clock_gettime(CLOCK_REALTIME, &now);
	clock_gettime(CLOCK_BOOTTIME, &mono);
	rt->has_process = 1;
	rt->cpu_seconds = (double)(ut + st) / (double)hz;
	rt->vsize_bytes = vsize;
	rt->rss_bytes = rss > 0 ? (uint64_t)rss * (uint64_t)page : 0;
	rt->process_start_seconds = (double)now.tv_sec + (double)now.tv_nsec / 1e9 -
				    ((double)mono.tv_sec + (double)mono.tv_nsec / 1e9) +
				    (double)start / (double)hz;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0)
		rt->max_fds = rl.rlim_cur;
	d = opendir("/proc/self/fd");
	if (d) {
		for (struct dirent *e; (e = readdir(d));)
			rt->open_fds += e->d_name[0] != '.';
		closedir(d);
		rt->open_fds--; /* the directory's own */
	}
}

void sbt_agent_obs_fill(struct sbt_agent_obs *ob, struct sbt_metrics_runtime *rt)
{
	for (size_t i = 0; i < ob->nr_progs; i++) {
		ob->prog_stats[i].name = bpf_program__name(ob->progs[i]);
		sbt_prog_run_stats(ob->progs[i], &ob->prog_stats[i].run_time_ns,
				   &ob->prog_stats[i].run_cnt);
	}
	rt->progs = ob->prog_stats;
	rt->nr_progs = ob->nr_progs;
	rt->stats_enabled = ob->stats_fd >= 0;
	rt->ringbuf_pending_bytes = ob->rb_last;
	rt->ringbuf_high_water_bytes = ob->rb_high;
	rt->ringbuf_size_bytes = ob->rb_size;
	process_fill(rt);
}

void sbt_agent_obs_free(struct sbt_agent_obs *ob)
{
	if (ob->stats_fd >= 0)
		close(ob->stats_fd);
	if (ob->rb_consumer)
		munmap(ob->rb_consumer, (size_t)ob->page);
	if (ob->rb_producer)
		munmap(ob->rb_producer, (size_t)ob->page);
	ob->stats_fd = -1;
	ob->rb_consumer = ob->rb_producer = NULL;
}

/* ---- HTTP ---------------------------------------------------------------------- */

struct sbt_http {
	struct MHD_Daemon *d;
	sbt_http_render_fn render;
	void *arg;
	struct sbt_http_access acc;
	char token[256]; /* "Bearer TOKEN", "" without */
};

/*
 * Before a connection takes one of the 64 slots: a loopback peer is served
 * only when its socket is root's or an --metrics-allow-uid's (any local
 * user's idle connections would otherwise hold every slot and stop root's
 * scrape, and read every sandbox's names); a peer from elsewhere when a
 * token is set (each request must carry it).
 */
static enum MHD_Result accept_peer(void *cls, const struct sockaddr *addr, socklen_t addrlen)
{
	const struct sbt_http *h = cls;
	unsigned int uid;

	(void)addrlen;
	if (!sbt_sockaddr_loopback(addr))
		return h->token[0] || h->acc.open ? MHD_YES : MHD_NO;
	if (sbt_tcp_peer_uid(addr, &uid))
		return MHD_NO; /* not to be found: not served */
	if (uid == 0)
		return MHD_YES;
	for (int i = 0; i < h->acc.nr_uids; i++)
		if (h->acc.uids[i] == uid)
			return MHD_YES;
	return MHD_NO;
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned int code, char *body, size_t len,
			     const char *type)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	enum MHD_Result ret;

	if (!r) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	ret = MHD_queue_response(c, code, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version, const char *upload_data,
				  size_t *upload_size, void **state)
{
	struct sbt_http *h = cls;
	char *body;
	size_t len = 0;

	(void)version;
	(void)upload_data;
	if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
		return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, strdup("GET /metrics\n"), 13,
			     "text/plain");
	if (!*state) { /* the headers: answer on the next call */
		*state = h;
		return MHD_YES;
	}
	if (*upload_size)
		return MHD_NO;
	if (h->token[0]) {
		const char *auth = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
							       MHD_HTTP_HEADER_AUTHORIZATION);

		if (!auth || strcmp(auth, h->token) != 0)
			return reply(c, MHD_HTTP_UNAUTHORIZED,
				     strdup("give Authorization: Bearer TOKEN\n"), 34,
				     "text/plain");
	}
	if (strcmp(url, "/metrics") != 0)
		return reply(c, MHD_HTTP_NOT_FOUND, strdup("not found: try /metrics\n"), 24,
			     "text/plain");
	body = h->render(h->arg, &len);
	if (!body)
		return reply(c, MHD_HTTP_INTERNAL_SERVER_ERROR, strdup("out of memory\n"), 14,
			     "text/plain");
	return reply(c, MHD_HTTP_OK, body, len, "text/plain; version=0.0.4; charset=utf-8");
}

/* The token file: root's alone, one line. 0, or -1 after a message. */
static int read_token(const char *path, char *out, size_t len)
{
	char tok[200];
	struct stat st;
	FILE *f = fopen(path, "re");
	size_t n;

	if (!f || fstat(fileno(f), &st) || !S_ISREG(st.st_mode) || (st.st_mode & 077)) {
		sbt_log("--metrics-token-file %s: %s", path,
			!f ? strerror(errno)
			   : "not a regular file readable by its owner alone (chmod 600)");
		if (f)
			fclose(f);
		return -1;
	}
	n = fgets(tok, sizeof(tok), f) ? strcspn(tok, "\r\n") : 0;
	fclose(f);
	tok[n] = '\0';
	if (n < 16) {
		sbt_log("--metrics-token-file %s: give a token of 16 characters or more", path);
		return -1;
	}
	snprintf(out, len, "Bearer %s", tok);
	return 0;
}

struct sbt_http *sbt_http_start(const char *hostport, const struct sbt_http_access *acc,
				sbt_http_render_fn render, void *arg)
{
	struct sockaddr_storage ss;
	unsigned int sslen;
	struct sbt_http *h;
	unsigned int flags = MHD_USE_EPOLL | MHD_USE_ERROR_LOG;

	if (sbt_parse_hostport(hostport, &ss, &sslen)) {
		sbt_log("--metrics-addr '%s': not HOST:PORT", hostport);
		return NULL;
	}
	if (mhd_load())
		return NULL;
	h = calloc(1, sizeof(*h));
	if (!h)
		return NULL;
	h->render = render;
	h->arg = arg;
	if (acc)
		h->acc = *acc;
	if (h->acc.token_file && read_token(h->acc.token_file, h->token, sizeof(h->token))) {
		free(h);
		return NULL;
	}
	if (ss.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	h->d = MHD_start_daemon(flags, 0, accept_peer, h, on_request, h, MHD_OPTION_SOCK_ADDR, &ss,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)10,
				MHD_OPTION_CONNECTION_LIMIT, (unsigned int)64, MHD_OPTION_END);
	if (!h->d) {
		sbt_log("--metrics-addr %s: cannot listen (%s); is the port in use?", hostport,
			strerror(errno ? errno : EADDRINUSE));
		free(h);
		return NULL;
	}
	return h;
}

int sbt_http_fd(const struct sbt_http *h)
{
	const union MHD_DaemonInfo *i = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_EPOLL_FD);

	return i ? i->epoll_fd : -1;
}

void sbt_http_run(struct sbt_http *h)
{
	MHD_run(h->d);
}

void sbt_http_stop(struct sbt_http *h)
{
	if (!h)
		return;
	MHD_stop_daemon(h->d);
	free(h);
}
