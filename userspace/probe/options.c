// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* `sbtrace probe`'s command line: options, help, the microVM's guest and tap. */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "egress_args.h"
#include "probe_int.h"

void sbt_probe_usage(FILE *f)
{
	fprintf(f, "Usage: sbtrace probe [OPTIONS] REPO\n"
		   "\n"
		   "Run REPO's build in a fresh sandbox under trace and print one JSON report on\n"
		   "stdout: does the build invoke a shell (can the image go distroless)? The\n"
		   "build is --cmd if given, else a Dockerfile's --target stage, 'builder' stage\n"
		   "or final stage (podman/docker), else package.json scripts.build (npm run\n"
		   "build), else a Makefile (make -B: everything is remade, so outputs already\n"
		   "in the tree hide nothing); command.why in the report says which and why.\n"
		   "\n"
		   "  --cmd \"PROG ARGS\"     the build command, split into words with simple\n"
		   "                         quoting ('...', \"...\", \\), never given to a shell\n"
		   "  --target STAGE        the Dockerfile stage (default builder, else the last)\n"
		   "  --env NAME[=VALUE]    pass NAME into the build (the caller's value, or\n"
		   "                         VALUE); repeatable. The build gets PATH, HOME\n"
		   "                         (/root), LANG, TERM and nothing else by default\n"
		   "  --backend ns|qemu     ns (default): namespaces and a cgroup, execs seen;\n"
		   "                         qemu: a microVM (qemu -M microvm, busybox guest),\n"
		   "                         whose execs the host cannot see: the report is\n"
		   "                         never a confident 'safe' (exec_not_visible)\n"
		   "  --guest DIR           the guest scripts/guest-build.sh built (default:\n"
		   "                         the newest in $SBTRACE_GUEST_CACHE or\n"
		   "                         /var/cache/sbtrace/guest)\n"
		   "  --tap-addrs HOST,GUEST  the VM's tap addresses (CIDR; default\n"
		   "                         198.18.255.1/30,198.18.255.2/30), in a network\n"
		   "                         namespace of the probe's own: nothing is routed\n"
		   "                         beyond it; the tap program judges every frame\n"
		   "  --allow-cidr, --allow-host, --allowlist, --egress, --resolver\n"
		   "                         egress policy as for 'sbtrace trace'; default:\n"
		   "                         enforce with an empty allowlist (no network)\n"
		   "  --cache-dir DIR       default $XDG_CACHE_HOME/sbtrace or ~/.cache/sbtrace\n"
		   "  --no-cache            neither read nor write the cache\n"
		   "  --trace-out FILE      also keep the trace's JSON Lines events\n"
		   "  --timeout SEC         stop the build after SEC seconds (default 1800)\n"
		   "  -q, --quiet           no progress on stderr (the build's own output and\n"
		   "                         errors still go there)\n"
		   "  -h, --help            this help\n"
		   "\n"
		   "The evidence: one location per distinct shell command (shell, kind, the\n"
		   "command text, the ancestor chain) with its count; at most 200 listed, the\n"
		   "rest counted in 'omitted'. A shell is known by its file too: a symlink,\n"
		   "hard link or copy of a shell under another name is that shell.\n"
		   "\n"
		   "The cache answers only when nothing that could change the answer changed:\n"
		   "its key covers every file of the repo (dependency folders and .git\n"
		   "included; a stat cache keeps that fast), the build command and kind, the\n"
		   "environment passed in, the build tool's identity, the base images, the\n"
		   "backend and the probe's version. Only confident answers (no reason) are\n"
		   "stored; a repo the key cannot cover (a symlink out of it, a special file)\n"
		   "is never answered from, nor stored in, the cache.\n"
		   "\n"
		   "Exit codes: 0 a report was printed (whatever its verdict); 2 usage error or\n"
		   "no build found; 3 kernel capability missing (no report possible).\n");
}

enum probe_opt {
	OPT_CMD = 256,
	OPT_TARGET,
	OPT_CACHE_DIR,
	OPT_NO_CACHE,
	OPT_TRACE_OUT,
	OPT_TIMEOUT,
	OPT_ALLOW_CIDR,
	OPT_ALLOW_HOST,
	OPT_ALLOWLIST,
	OPT_EGRESS,
	OPT_RESOLVER,
	OPT_BACKEND,
	OPT_GUEST,
	OPT_TAP_ADDRS,
	OPT_ENV,
};

static const struct option longopts[] = {
	{ "cmd", required_argument, NULL, OPT_CMD },
	{ "target", required_argument, NULL, OPT_TARGET },
	{ "cache-dir", required_argument, NULL, OPT_CACHE_DIR },
	{ "no-cache", no_argument, NULL, OPT_NO_CACHE },
	{ "trace-out", required_argument, NULL, OPT_TRACE_OUT },
	{ "timeout", required_argument, NULL, OPT_TIMEOUT },
	{ "allow-cidr", required_argument, NULL, OPT_ALLOW_CIDR },
	{ "allow-host", required_argument, NULL, OPT_ALLOW_HOST },
	{ "allowlist", required_argument, NULL, OPT_ALLOWLIST },
	{ "egress", required_argument, NULL, OPT_EGRESS },
	{ "resolver", required_argument, NULL, OPT_RESOLVER },
	{ "backend", required_argument, NULL, OPT_BACKEND },
	{ "guest", required_argument, NULL, OPT_GUEST },
	{ "tap-addrs", required_argument, NULL, OPT_TAP_ADDRS },
	{ "env", required_argument, NULL, OPT_ENV },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ 0 },
};

/* One option. -1 to go on, else an exit code. */
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
			fprintf(stderr, "sbtrace probe: --timeout '%s': give seconds > 0\n", arg);
			return SBT_EXIT_USAGE;
		}
		o->timeout_ms = (uint64_t)(d * 1000);
		return -1;
	case OPT_ALLOW_CIDR:
	case OPT_ALLOW_HOST:
	case OPT_ALLOWLIST:
	case OPT_EGRESS:
	case OPT_RESOLVER:
		if (sbt_egress_option(&o->egress, &o->egress_mode, "probe", longopts[idx].name,
				      arg))
			return SBT_EXIT_USAGE;
		return -1;
	case OPT_BACKEND:
		if (sbt_backend_parse(arg, &o->backend) || o->backend == SBT_BACKEND_PODMAN) {
			fprintf(stderr,
				"sbtrace probe: --backend '%s': use ns or qemu (a Dockerfile build "
				"always runs on podman)\n",
				arg);
			return SBT_EXIT_USAGE;
		}
		return -1;
	case OPT_GUEST:
		o->guest = arg;
		return -1;
	case OPT_TAP_ADDRS:
		o->tap_addrs = arg;
		return -1;
	case OPT_ENV: {
		char err[160];

		if (o->nr_env >= SBT_ENV_MAX || sbt_env_set(&o->env, arg, err, sizeof(err))) {
			fprintf(stderr, "sbtrace probe: --env '%s': %s\n", arg,
				o->nr_env >= SBT_ENV_MAX ? "too many" : err);
			return SBT_EXIT_USAGE;
		}
		o->env_args[o->nr_env++] = (char *)arg;
		return -1;
	}
	case 'q':
		o->quiet = true;
		return -1;
	case 'h':
		sbt_probe_usage(stdout);
		return SBT_EXIT_OK;
	}
	fprintf(stderr, "see 'sbtrace probe --help'\n");
	return SBT_EXIT_USAGE;
}

int probe_options(int argc, char **argv, struct probe_opts *o)
{
	int c, idx = 0, ret;

	free(o->egress.rules);
	sbt_env_free(&o->env);
	memset(o, 0, sizeof(*o));
	if (sbt_env_default(&o->env, SBT_ENV_WORKLOAD)) {
		fprintf(stderr, "sbtrace probe: out of memory\n");
		return SBT_EXIT_RUNTIME;
	}
	o->timeout_ms = 1800ull * 1000;
	o->egress_mode = SBT_EGRESS_ENFORCE;
	o->tap_addrs = "198.18.255.1/30,198.18.255.2/30";
	optind = 1;
	while ((c = getopt_long(argc, argv, "qh", longopts, &idx)) != -1) {
		ret = option(o, c, idx, optarg);
		if (ret >= 0)
			return ret;
	}
	if (optind != argc - 1) {
		fprintf(stderr,
			"sbtrace probe: give exactly one REPO directory; see 'sbtrace probe "
			"--help'\n");
		return SBT_EXIT_USAGE;
	}
	if (o->cmd && o->target) {
		fprintf(stderr,
			"sbtrace probe: --cmd and --target exclude each other: --target picks "
			"a Dockerfile stage, --cmd replaces the build\n");
		return SBT_EXIT_USAGE;
	}
	if (!realpath(argv[optind], o->repo)) {
		fprintf(stderr, "sbtrace probe: %s: %s\n", argv[optind], strerror(errno));
		return SBT_EXIT_USAGE;
	}
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

/* --backend qemu: the build kind, the guest, the tap's addresses. 0, or -EINVAL after a message. */
int probe_vm_options(struct probe_opts *o, const struct sbt_build_plan *plan)
{
	const char *tap_addrs = o->tap_addrs, *comma = strchr(tap_addrs, ',');

	if (plan->kind == SBT_BUILD_DOCKERFILE) {
		fprintf(stderr,
			"sbtrace probe: --backend qemu runs --cmd, npm or make builds in a "
			"busybox guest; a Dockerfile build runs on podman (drop --backend)\n");
		return -EINVAL;
	}
	if (!o->guest) {
		if (newest_guest(o->guest_buf, sizeof(o->guest_buf)) < 0) {
			fprintf(stderr, "sbtrace probe: --backend qemu: no guest built; run "
					"scripts/guest-build.sh (or give --guest DIR)\n");
			return -EINVAL;
		}
		o->guest = o->guest_buf;
	}
	if (!comma || comma == tap_addrs || !comma[1] || comma - tap_addrs >= 64 ||
	    strlen(comma + 1) >= 64 || !strchr(tap_addrs, '/') || !strchr(comma + 1, '/')) {
		fprintf(stderr,
			"sbtrace probe: --tap-addrs '%s': give HOST/LEN,GUEST/LEN (e.g. "
			"198.18.255.1/30,198.18.255.2/30)\n",
			tap_addrs);
		return -EINVAL;
	}
	snprintf(o->tap_host, sizeof(o->tap_host), "%.*s", (int)(comma - tap_addrs), tap_addrs);
	snprintf(o->tap_guest, sizeof(o->tap_guest), "%s", comma + 1);
	return 0;
}
