// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* `sbtrace probe`'s command line: options, help, the microVM's guest and tap. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "egress/egress_args.h"
#include "lib/io.h"
#include "probe_int.h"
#include "help/sbtrace-probe.h"
#include "kind.h"
#include "lib/log.h"

void sbt_probe_usage(FILE *f)
{
	sbt_help_probe(f);
}

enum probe_opt {
	OPT_CMD = 256,
	OPT_TARGET,
	OPT_FILE,
	OPT_CACHE_DIR,
	OPT_NO_CACHE,
	OPT_TRACE_OUT,
	OPT_TIMEOUT,
	OPT_ALLOW_CIDR,
	OPT_ALLOW_HOST,
	OPT_ALLOWLIST,
	OPT_EGRESS,
	OPT_RESOLVER,
	OPT_NO_DNS_PROXY,
	OPT_DNS_GRACE,
	OPT_DNS_DENY_REPLY,
	OPT_DNS_MAX_LEARNED,
	OPT_LEARN_FORMAT,
	OPT_LEARN_OUT,
	OPT_BACKEND,
	OPT_GUEST,
	OPT_TAP_ADDRS,
	OPT_ENV,
	OPT_BOOT_SECONDS,
	OPT_PIDS_MAX,
	OPT_MEMORY_MAX,
	OPT_TMPFS_SIZE,
	OPT_BOOT_QUIET_MS,
	OPT_BOOT_CMD,
	OPT_NO_BOOT,
	OPT_IMAGE_MAP,
	OPT_PULL,
	OPT_FAIL_ON,
	OPT_FORMAT,
	OPT_MIGRATE,
	OPT_MIGRATE_OUT,
	OPT_DISTROLESS_BASE,
};

static const struct option longopts[] = {
	{ "cmd", required_argument, NULL, OPT_CMD },
	{ "target", required_argument, NULL, OPT_TARGET },
	{ "migrate", no_argument, NULL, OPT_MIGRATE },
	{ "migrate-out", required_argument, NULL, OPT_MIGRATE_OUT },
	{ "distroless-base", required_argument, NULL, OPT_DISTROLESS_BASE },
	{ "file", required_argument, NULL, OPT_FILE },
	{ "cache-dir", required_argument, NULL, OPT_CACHE_DIR },
	{ "no-cache", no_argument, NULL, OPT_NO_CACHE },
	{ "trace-out", required_argument, NULL, OPT_TRACE_OUT },
	{ "timeout", required_argument, NULL, OPT_TIMEOUT },
	{ "allow-cidr", required_argument, NULL, OPT_ALLOW_CIDR },
	{ "allow-host", required_argument, NULL, OPT_ALLOW_HOST },
	{ "allowlist", required_argument, NULL, OPT_ALLOWLIST },
	{ "egress", required_argument, NULL, OPT_EGRESS },
	{ "resolver", required_argument, NULL, OPT_RESOLVER },
	{ "no-dns-proxy", no_argument, NULL, OPT_NO_DNS_PROXY },
	{ "dns-grace", required_argument, NULL, OPT_DNS_GRACE },
	{ "dns-deny-reply", required_argument, NULL, OPT_DNS_DENY_REPLY },
	{ "dns-max-learned", required_argument, NULL, OPT_DNS_MAX_LEARNED },
	{ "learn-format", required_argument, NULL, OPT_LEARN_FORMAT },
	{ "learn-out", required_argument, NULL, OPT_LEARN_OUT },
	{ "backend", required_argument, NULL, OPT_BACKEND },
	{ "guest", required_argument, NULL, OPT_GUEST },
	{ "tap-addrs", required_argument, NULL, OPT_TAP_ADDRS },
	{ "env", required_argument, NULL, OPT_ENV },
	{ "boot-seconds", required_argument, NULL, OPT_BOOT_SECONDS },
	{ "pids-max", required_argument, NULL, OPT_PIDS_MAX },
	{ "memory-max", required_argument, NULL, OPT_MEMORY_MAX },
	{ "tmpfs-size", required_argument, NULL, OPT_TMPFS_SIZE },
	{ "boot-quiet-ms", required_argument, NULL, OPT_BOOT_QUIET_MS },
	{ "boot-cmd", required_argument, NULL, OPT_BOOT_CMD },
	{ "no-boot", no_argument, NULL, OPT_NO_BOOT },
	{ "image-map", required_argument, NULL, OPT_IMAGE_MAP },
	{ "pull", no_argument, NULL, OPT_PULL },
	{ "fail-on", required_argument, NULL, OPT_FAIL_ON },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ 0 },
};

/* One REF=LOCAL pair (where: "FILE:LINE: " or ""). 0, or -1 after a message. */
static int map_pair(struct probe_opts *o, const char *pair, size_t len, const char *where)
{
	const char *eq = memchr(pair, '=', len);
	struct probe_image_map *m;

	if (!eq || eq == pair || eq + 1 == pair + len || (size_t)(eq - pair) >= sizeof(m->ref) ||
	    (size_t)(pair + len - eq - 1) >= sizeof(m->local) || memchr(pair, ' ', len) ||
	    memchr(pair, '\t', len)) {
		sbt_log("--image-map %s'%.*s': give REF=LOCAL (no blanks, each at most 255 "
			"characters)",
			where, (int)(len > 200 ? 200 : len), pair);
		return -1;
	}
	if (o->nr_image_map >= PROBE_MAX_IMAGE_MAP) {
		sbt_log("--image-map: at most %d mappings", PROBE_MAX_IMAGE_MAP);
		return -1;
	}
	m = &o->image_map[o->nr_image_map++];
	snprintf(m->ref, sizeof(m->ref), "%.*s", (int)(eq - pair), pair);
	snprintf(m->local, sizeof(m->local), "%.*s", (int)(pair + len - eq - 1), eq + 1);
	return 0;
}

/* --image-map FILE: REF=LOCAL lines, blank lines and # comments. 0, or -1 after a message. */
static int map_file(struct probe_opts *o, const char *path)
{
	char where[PATH_MAX + 32], *buf;
	const char *kind = NULL;
	unsigned int line = 1;
	size_t len;
	int err;

	buf = sbt_read_regular(AT_FDCWD, path, 64u << 10, &len, &err, &kind);
	if (!buf) {
		sbt_log("--image-map '%s': %s%s", path,
			err == EINVAL && kind ? "not a regular file: " : strerror(err),
			err == EINVAL && kind ? kind : "");
		return -1;
	}
	for (size_t i = 0; i < len; line++) {
		const char *nl = memchr(buf + i, '\n', len - i);
		size_t end = nl ? (size_t)(nl - buf) : len, b = i, e = end;

		while (b < e && (buf[b] == ' ' || buf[b] == '\t'))
			b++;
		while (e > b && (buf[e - 1] == ' ' || buf[e - 1] == '\t' || buf[e - 1] == '\r'))
			e--;
		snprintf(where, sizeof(where), "%s:%u: ", path, line);
		if (e > b && buf[b] != '#' && map_pair(o, buf + b, e - b, where) < 0) {
			free(buf);
			return -1;
		}
		i = end + 1;
	}
	free(buf);
	return 0;
}

/* "A, B or C" from the n words of v[] that keep says (printed into buf). */
static const char *word_list(const char *const *v, const bool *keep, int n, char *buf, size_t len)
{
	int last = -1, used = 0;

	buf[0] = '\0';
	for (int i = 0; i < n; i++)
		last = keep[i] ? i : last;
	for (int i = 0; i < n && (size_t)used < len; i++)
		if (keep[i])
			used += snprintf(buf + used, len - (size_t)used, "%s%s",
					 !used	     ? ""
					 : i == last ? " or "
						     : ", ",
					 v[i]);
	return buf;
}

/*
 * --backend: auto (the default: the kind's pick, probe_backend_options), or
 * a backend by name; which kinds run on which is probe_backend_options'.
 */
static int backend_option(struct probe_opts *o, const char *arg)
{
	if (strcmp(arg, "auto") == 0) {
		o->backend_given = false;
		return -1;
	}
	if (sbt_backend_parse(arg, &o->backend) == 0) {
		o->backend_given = true;
		return -1;
	}
	sbt_log("--backend '%s': use auto, ns, qemu or podman", arg);
	return SBT_EXIT_USAGE;
}

/* One option. -1 to go on, else an exit code. */
static int file_cmd_refused(void)
{
	sbt_log("--cmd and --file exclude each other: --file names the Dockerfile to build, --cmd "
		"replaces the build");
	return -1;
}

/*
 * --file PATH: the Dockerfile's path in the repo (as `docker build -f` names
 * one in the context), or an absolute path, inside it or not (docker build
 * -f takes one outside the context too: what --migrate's check builds), into
 * o->file_buf (o->file then points there). 0, or -1 said.
 */
static int file_in_repo(struct probe_opts *o)
{
	const char *f = o->file;
	size_t rl = strlen(o->repo);

	if (f[0] == '/' && (strncmp(f, o->repo, rl) != 0 || f[rl] != '/')) {
		/* outside the repo, as docker build -f allows: by its real path */
		if (!realpath(f, o->file_buf) || strlen(o->file_buf) >= 128) {
			sbt_log("--file %s: %s", f,
				errno == ENOENT ? "no such file" : "cannot resolve it");
			return -1;
		}
		o->file = o->file_buf;
		return o->cmd ? file_cmd_refused() : 0;
	}
	if (f[0] == '/')
		f += rl + 1;
	if (!probe_normalize_rel(f, o->file_buf, sizeof(o->file_buf))) {
		sbt_log("--file %s: %s", o->file,
			f[0] ? "climbs out of the repo or is too long: give the Dockerfile's path "
			       "in the repo"
			     : "no file named");
		return -1;
	}
	o->file = o->file_buf;
	return o->cmd ? file_cmd_refused() : 0;
}

/* --migrate, --migrate-out FILE, --distroless-base REF. -1 to go on, else an exit code. */
static int migrate_option(struct probe_opts *o, int c, const char *arg)
{
	if (c == OPT_MIGRATE)
		o->migrate = true;
	else if (c == OPT_MIGRATE_OUT)
		o->migrate_out = arg;
	else if (!arg[0] || strlen(arg) > 200 || strpbrk(arg, " \t\n\r\"'\\")) {
		sbt_log("--distroless-base '%.64s': give an image reference (no blanks or quotes, "
			"at most 200 characters)",
			arg);
		return SBT_EXIT_USAGE;
	} else
		o->distroless_base = arg;
	return -1;
}

static int option(struct probe_opts *o, int c, int idx, const char *arg)
{
	char *end;
	double d;

	switch (c) {
	case OPT_CMD:
		o->cmd = arg;
		return -1;
	case OPT_TARGET:
		o->target = arg;
		return -1;
	case OPT_MIGRATE:
	case OPT_MIGRATE_OUT:
	case OPT_DISTROLESS_BASE:
		return migrate_option(o, c, arg);
	case 'f':
	case OPT_FILE:
		o->file = arg;
		return -1;
	case OPT_CACHE_DIR:
		o->cache_dir = arg;
		return -1;
	case OPT_NO_CACHE:
		o->no_cache = true;
		return -1;
	case OPT_TRACE_OUT:
		o->trace_out = arg;
		return -1;
	case OPT_TIMEOUT:
		d = strtod(arg, &end);
		if (*end || !(d > 0) || d > 86400 * 7) {
			sbt_log("--timeout '%s': give seconds > 0", arg);
			return SBT_EXIT_USAGE;
		}
		o->timeout_ms = (uint64_t)(d * 1000);
		return -1;
	case OPT_ALLOW_CIDR:
	case OPT_ALLOW_HOST:
	case OPT_ALLOWLIST:
	case OPT_EGRESS:
	case OPT_RESOLVER:
	case OPT_NO_DNS_PROXY:
	case OPT_DNS_GRACE:
	case OPT_DNS_DENY_REPLY:
	case OPT_DNS_MAX_LEARNED:
	case OPT_LEARN_FORMAT:
	case OPT_LEARN_OUT:
		if (sbt_egress_option(&o->egress, &o->egress_mode, longopts[idx].name, arg))
			return SBT_EXIT_USAGE;
		return -1;
	case OPT_BACKEND:
		return backend_option(o, arg);
	case OPT_GUEST:
		o->guest = arg;
		return -1;
	case OPT_TAP_ADDRS:
		o->tap_addrs = arg;
		return -1;
	case OPT_ENV: {
		char err[160];

		if (o->nr_env >= SBT_ENV_MAX || sbt_env_set(&o->env, arg, err, sizeof(err))) {
			sbt_log("--env '%s': %s", arg, o->nr_env >= SBT_ENV_MAX ? "too many" : err);
			return SBT_EXIT_USAGE;
		}
		o->env_args[o->nr_env++] = (char *)arg;
		return -1;
	}
	case OPT_PIDS_MAX:
	case OPT_MEMORY_MAX:
	case OPT_TMPFS_SIZE:
		if (sbt_sandbox_limit_parse(&o->limits,
					    c == OPT_PIDS_MAX	  ? "pids"
					    : c == OPT_MEMORY_MAX ? "memory"
								  : "tmpfs",
					    arg)) {
			sbt_log("%s '%s': give %s",
				c == OPT_PIDS_MAX     ? "--pids-max"
				: c == OPT_MEMORY_MAX ? "--memory-max"
						      : "--tmpfs-size",
				arg,
				c == OPT_PIDS_MAX ? "a number of processes, 1-4194304, or max"
						  : "bytes, at least 1m, with k, m, g or t (8g)");
			return SBT_EXIT_USAGE;
		}
		return -1;
	case OPT_BOOT_SECONDS:
		d = strtod(arg, &end);
		if (*end || !(d > 0) || d > 3600) {
			sbt_log("--boot-seconds '%s': give seconds > 0 (at most 3600)", arg);
			return SBT_EXIT_USAGE;
		}
		o->boot_ms = (uint64_t)(d * 1000);
		return -1;
	case OPT_BOOT_QUIET_MS: {
		unsigned long v;

		errno = 0;
		v = strtoul(arg, &end, 10);
		if (errno || end == arg || *end || arg[0] == '-' || v > 600000) {
			sbt_log("--boot-quiet-ms '%s': give milliseconds 0 to 600000", arg);
			return SBT_EXIT_USAGE;
		}
		o->boot_quiet_ms = v;
		return -1;
	}
	case OPT_BOOT_CMD:
		o->boot_cmd = arg;
		return -1;
	case OPT_NO_BOOT:
		o->no_boot = true;
		return -1;
	case OPT_IMAGE_MAP:
		if (strchr(arg, '=') ? map_pair(o, arg, strlen(arg), "") : map_file(o, arg))
			return SBT_EXIT_USAGE;
		return -1;
	case OPT_PULL:
		o->pull = true;
		return -1;
	case OPT_FAIL_ON:
		if (strcmp(arg, "unsafe") == 0) {
			o->fail_on = FAIL_ON_UNSAFE;
		} else if (strcmp(arg, "inconclusive") == 0) {
			o->fail_on = FAIL_ON_INCONCLUSIVE;
		} else {
			sbt_log("--fail-on '%s': use unsafe or inconclusive", arg);
			return SBT_EXIT_USAGE;
		}
		return -1;
	case OPT_FORMAT:
		if (strcmp(arg, "json") != 0 && strcmp(arg, "sarif") != 0) {
			sbt_log("--format '%s': use json or sarif", arg);
			return SBT_EXIT_USAGE;
		}
		o->sarif = strcmp(arg, "sarif") == 0;
		return -1;
	case 'q':
		o->quiet = true;
		return -1;
	case 'h':
		sbt_probe_usage(stdout);
		return SBT_EXIT_OK;
	}
	sbt_log("see '%s --help'", sbt_log_name());
	return SBT_EXIT_USAGE;
}

int probe_options(int argc, char **argv, struct probe_opts *o)
{
	int c, idx = 0, ret;

	free(o->egress.rules);
	sbt_env_free(&o->env);
	memset(o, 0, sizeof(*o));
	if (sbt_env_default(&o->env, SBT_ENV_WORKLOAD)) {
		sbt_log("out of memory");
		return SBT_EXIT_RUNTIME;
	}
	o->timeout_ms = 1800ull * 1000;
	o->boot_ms = 5000;
	o->boot_quiet_ms = PROBE_BOOT_QUIET_MS;
	o->egress_mode = SBT_EGRESS_ENFORCE;
	o->tap_addrs = "198.18.255.1/30,198.18.255.2/30";
	optind = 1;
	while ((c = getopt_long(argc, argv, "qhf:", longopts, &idx)) != -1) {
		ret = option(o, c, idx, optarg);
		if (ret >= 0)
			return ret;
	}
	if (optind != argc - 1) {
		sbt_log("give exactly one REPO directory; see 'sbtrace probe --help'");
		return SBT_EXIT_USAGE;
	}
	if (o->no_boot && o->boot_cmd) {
		sbt_log("--no-boot and --boot-cmd exclude each other");
		return SBT_EXIT_USAGE;
	}
	if ((o->migrate_out || o->distroless_base) && !o->migrate) {
		sbt_log("--migrate-out and --distroless-base need --migrate");
		return SBT_EXIT_USAGE;
	}
	if (sbt_egress_learn_refused(&o->egress)) {
		sbt_log_usage("%s", sbt_egress_learn_refused(&o->egress));
		return SBT_EXIT_USAGE;
	}
	if (o->cmd && o->target) {
		sbt_log("--cmd and --target exclude each other: --target picks a Dockerfile stage, "
			"--cmd replaces the build");
		return SBT_EXIT_USAGE;
	}
	if (!realpath(argv[optind], o->repo)) {
		sbt_log("%s: %s", argv[optind], strerror(errno));
		return SBT_EXIT_USAGE;
	}
	if (o->file && file_in_repo(o) < 0)
		return SBT_EXIT_USAGE;
	if (!o->cache_dir && !o->no_cache &&
	    sbt_cache_default_dir(o->cache_buf, sizeof(o->cache_buf)) == 0)
		o->cache_dir = o->cache_buf;
	return -1;
}

/* The newest guest scripts/guest-build.sh left in the cache. 0, or -ENOENT. */
static int newest_guest(char *out, size_t len)
{
	const char *dir = getenv("SBTRACE_GUEST_CACHE");
	struct dirent *de;
	time_t best = 0;
	DIR *d;

	if (!dir || !*dir)
		dir = "/var/cache/sbtrace/guest";
	d = opendir(dir);
	if (!d)
		return -ENOENT;
	while ((de = readdir(d))) {
		char path[PATH_MAX], vmlinux[PATH_MAX + 16];
		struct stat st;

		if (strncmp(de->d_name, "guest-", 6) != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		snprintf(vmlinux, sizeof(vmlinux), "%s/vmlinux", path);
		if (stat(vmlinux, &st) == 0 && st.st_mtime >= best) {
			best = st.st_mtime;
			snprintf(out, len, "%s", path);
		}
	}
	closedir(d);
	return best ? 0 : -ENOENT;
}

/* "--cmd, npm or make": the kinds that run on the namespaces backend. */
static const char *ns_kinds(char *buf, size_t len)
{
	const char *labels[SBT_BUILD__MAX] = { NULL };
	bool keep[SBT_BUILD__MAX] = { false };

	for (int k = SBT_BUILD_NONE + 1; k < SBT_BUILD__MAX; k++) {
		const struct probe_kind *kind = probe_kind_of((enum sbt_build_kind)k);

		labels[k] = kind->label;
		keep[k] = !kind->own_backend;
	}
	return word_list(labels, keep, SBT_BUILD__MAX, buf, len);
}

/* The tap's addresses (--tap-addrs HOST,GUEST). 0, or -EINVAL after a message. */
static int tap_options(struct probe_opts *o)
{
	const char *tap_addrs = o->tap_addrs, *comma = strchr(tap_addrs, ',');

	if (!comma || comma == tap_addrs || !comma[1] || comma - tap_addrs >= 64 ||
	    strlen(comma + 1) >= 64 || !strchr(tap_addrs, '/') || !strchr(comma + 1, '/')) {
		sbt_log("--tap-addrs '%s': give HOST/LEN,GUEST/LEN (e.g. "
			"198.18.255.1/30,198.18.255.2/30)",
			tap_addrs);
		return -EINVAL;
	}
	snprintf(o->tap_host, sizeof(o->tap_host), "%.*s", (int)(comma - tap_addrs), tap_addrs);
	snprintf(o->tap_guest, sizeof(o->tap_guest), "%s", comma + 1);
	return 0;
}

/*
 * An engine's kind (a Dockerfile) with --backend auto: the microVM where
 * KVM is usable and a guest is built, else the host engine, and the report
 * says why the isolation is reduced (o->isolation).
 */
static enum sbt_sandbox_backend engine_auto(struct probe_opts *o, const struct probe_kind *k)
{
	struct sbt_kvm_probe kp;
	const char *why = NULL;

	sbt_vm_kvm_probe(&kp);
	if (strcmp(sbt_vm_accel_pick(SBT_VM_ACCEL_AUTO, &kp, &why), "kvm") == 0) {
		if (o->guest || newest_guest(o->guest_buf, sizeof(o->guest_buf)) == 0)
			return SBT_BACKEND_QEMU;
		why = "no microVM guest is built (scripts/guest-build.sh)";
	}
	snprintf(o->isolation, sizeof(o->isolation),
		 "the %s build ran on the host's container engine (%s, the hardened host path: "
		 "a copy of the repo, seccomp rules, no set-id or device nodes), not in a "
		 "microVM: KVM is not usable here (%s); --backend qemu runs it in the microVM "
		 "under TCG (slow), --backend podman says this is meant",
		 k->label, sbt_backend_name(k->backend), why ? why : "?");
	return k->backend;
}

int probe_backend_options(struct probe_opts *o, const struct probe_kind *k,
			  enum sbt_sandbox_backend *backend)
{
	const struct sbt_backend_caps *caps;
	char kinds[128];

	o->isolation[0] = '\0';
	if (k->own_backend && o->backend_given && o->backend != k->backend &&
	    !(k->in_vm && sbt_backend_caps(o->backend)->guest)) {
		sbt_log("--backend %s runs %s builds; a %s build runs on %s (the host's engine) or "
			"qemu (the microVM), or drop --backend (auto)",
			sbt_backend_name(o->backend), ns_kinds(kinds, sizeof(kinds)), k->label,
			sbt_backend_name(k->backend));
		return -EINVAL;
	}
	if (!k->own_backend && o->backend_given && sbt_backend_caps(o->backend)->host_tools) {
		sbt_log("--backend %s runs Dockerfile builds (a host engine's); a %s build runs "
			"on ns or qemu",
			sbt_backend_name(o->backend), k->label);
		return -EINVAL;
	}
	if (!o->backend_given)
		*backend = k->own_backend ? engine_auto(o, k) : PROBE_BACKEND_DEFAULT;
	else
		*backend = o->backend;
	caps = sbt_backend_caps(*backend);
	if (caps->guest && !o->guest) {
		if (newest_guest(o->guest_buf, sizeof(o->guest_buf)) < 0) {
			sbt_log("--backend %s: no guest built; run scripts/guest-build.sh (or give "
				"--guest DIR)",
				sbt_backend_name(*backend));
			return -EINVAL;
		}
		o->guest = o->guest_buf;
	}
	if (caps->egress_on_tap && o->egress.learn) {
		sbt_log("--egress learn with --backend %s: the microVM's egress is its tap's, and "
			"learn mode is for cgroup sandboxes for now; use --backend ns (or podman)",
			sbt_backend_name(*backend));
		return -EINVAL;
	}
	return caps->egress_on_tap ? tap_options(o) : 0;
}
