// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * sbtrace-shim run: options -> spec (run_spec()), then the run: start the
 * sandbox, the attach FIFO, the state file, ready (run_start()), wait for a
 * tracer, go (run_release()), and the wait loops (wait.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "lib/clock.h"
#include "lib/envset.h"
#include "egress/policy.h"
#include "sandbox/sandbox.h"
#include "shim.h"
#include "usage.h"
#include "lib/log.h"

/* The long options without a short one: getopt_long's codes, above any character. */
enum run_opt {
	OPT_NET = 256,
	OPT_NO_WAIT,
	OPT_VETH_ADDRS,
	OPT_VETH_HOST_NETNS,
	OPT_GUEST,
	OPT_TAP_NETNS,
	OPT_TAP_ADDRS,
	OPT_TAP_ADDRS6,
	OPT_VM_MEM,
	OPT_VM_DISK,
	OPT_VM_ROOT,
	OPT_VM_TIMEOUT,
	OPT_VM_ACCEL,
	OPT_VM_BOOT,
	OPT_VM_STREAM_MAX,
	OPT_TIMINGS,
	OPT_ALLOW,
	OPT_EGRESS,
	OPT_PIDS_MAX,
	OPT_MEMORY_MAX,
	OPT_TMPFS_SIZE,
};

/* What the options say: the spec, and what the run itself takes. */
struct run_opts {
	struct sbt_sandbox_spec spec;
	const char *state_dir, *timings;
	int vm_timeout;
	uint64_t vm_stream_max; /* --vm-stream-max: the exec stream's disk, bytes */
	bool vm_accel;		/* --vm-accel given */
	bool no_wait, tap_opts;
	char workspace[PATH_MAX], veth[128], tap4[128], tap6[128]; /* the spec points here */
	struct sbt_env env_check; /* --env values as given, checked as they come */
	char *env[SBT_ENV_MAX + 1];
	int nr_env;
	const char *allow[SBT_STATE_EGRESS_RULES]; /* --allow, checked */
	int nr_allow;
	const char *egress; /* --egress, or "enforce" with --allow */
};

/* What a run holds; run_end() releases it. */
struct run_ctx {
	struct sbt_sandbox_run run;
	bool started;
	int fifo, sfd, pidfd;
	struct shim_tracer tracer; /* the one that attached (wait.c) */
	char fifo_path[PATH_MAX];
};

/* --timings FILE: the phases in ms (null: not reached; the console's are 0 but for qemu's). */
static void write_timings(const char *path, const struct sbt_sandbox_run *run, uint64_t end_ns)
{
	const struct sbt_vm_console *con = &run->con;
	char boot[32] = "null", work[32] = "null", total[32] = "null";
	FILE *f;
	bool ok = false;

	if (con->ready_ns && run->go_ns)
		snprintf(boot, sizeof(boot), "%.1f", (double)(con->ready_ns - run->go_ns) / 1e6);
	if (con->exit_ns && con->ready_ns)
		snprintf(work, sizeof(work), "%.1f", (double)(con->exit_ns - con->ready_ns) / 1e6);
	if (run->go_ns && end_ns > run->go_ns)
		snprintf(total, sizeof(total), "%.1f", (double)(end_ns - run->go_ns) / 1e6);
	f = fopen(path, "we");
	if (f) {
		fprintf(f,
			"{\"sandbox\":\"%s\",\"backend\":\"%s\",\"accel\":%s%s%s,\"boot\":%s%s%s,"
			"\"boot_ms\":%s,\"workload_ms\":%s,\"total_ms\":%s}\n",
			run->name, sbt_backend_name(run->backend), run->accel[0] ? "\"" : "",
			run->accel[0] ? run->accel : "null", run->accel[0] ? "\"" : "",
			run->boot[0] ? "\"" : "", run->boot[0] ? run->boot : "null",
			run->boot[0] ? "\"" : "", boot, work, total);
		ok = !ferror(f);
		if (fclose(f))
			ok = false;
	}
	if (!ok)
		sbt_log("--timings %s: %s", path, strerror(errno));
}

/* ---- options -> spec ---------------------------------------------------- */

/* "A,B" copied into buf (len bytes), split at the first comma. False: too long or no comma. */
static bool split_pair(const char *arg, char *buf, size_t len, const char **a, const char **b)
{
	const char *comma = strchr(arg, ',');

	if (strlen(arg) >= len || !comma)
		return false;
	memcpy(buf, arg, strlen(arg) + 1);
	buf[comma - arg] = '\0';
	*a = buf;
	*b = buf + (comma - arg) + 1;
	return true;
}

/* A decimal number min..max. */
static bool parse_num(const char *arg, long min, long max, long *out)
{
	char *end;

	errno = 0;
	*out = strtol(arg, &end, 10);
	return !errno && end != arg && !*end && *out >= min && *out <= max;
}

/* DIR[:ro|:rw] */
static int opt_workspace(const char *arg, struct run_opts *o)
{
	size_t n = strlen(arg);

	if (n >= sizeof(o->workspace))
		return shim_usage_error("--workspace '%.64s...': path too long", arg);
	memcpy(o->workspace, arg, n + 1);
	if (n > 3 && (strcmp(o->workspace + n - 3, ":ro") == 0 ||
		      strcmp(o->workspace + n - 3, ":rw") == 0)) {
		o->spec.workspace_ro = o->workspace[n - 1] == 'o';
		o->workspace[n - 3] = '\0';
	} else if (n > 8 && strcmp(o->workspace + n - 8, ":overlay") == 0) {
		o->spec.workspace_overlay = true;
		o->workspace[n - 8] = '\0';
	}
	o->spec.workspace = o->workspace;
	return -1;
}

/* The options of the qemu backend. -1, or the exit code of an error. */
static int opt_vm(int c, const char *arg, struct run_opts *o)
{
	struct sbt_sandbox_spec *spec = &o->spec;
	long num;

	switch (c) {
	case OPT_GUEST:
		spec->guest_dir = arg;
		return -1;
	case OPT_TAP_NETNS:
		spec->tap_netns = arg;
		break;
	case OPT_TAP_ADDRS:
		if (!split_pair(arg, o->tap4, sizeof(o->tap4), &spec->tap_host_cidr,
				&spec->tap_guest_cidr))
			return shim_usage_error("--tap-addrs '%s': give HOST/LEN,GUEST/LEN, e.g. "
						"203.0.113.253/30,203.0.113.254/30",
						arg);
		break;
	case OPT_TAP_ADDRS6:
		if (!split_pair(arg, o->tap6, sizeof(o->tap6), &spec->tap_host_cidr6,
				&spec->tap_guest_cidr6))
			return shim_usage_error("--tap-addrs6 '%s': give HOST/LEN,GUEST/LEN, e.g. "
						"2001:db8:9::1/64,2001:db8:9::2/64",
						arg);
		break;
	case OPT_VM_MEM:
		if (!parse_num(arg, SBT_VM_MEM_MIN_MB, SBT_VM_MEM_MAX_MB, &num))
			return shim_usage_error("--vm-mem '%s': give MiB, 64-16384", arg);
		spec->vm_mem_mb = (unsigned int)num;
		return -1;
	case OPT_VM_DISK:
		if (!parse_num(arg, 64, SBT_VM_DISK_MAX_MB, &num))
			return shim_usage_error("--vm-disk '%s': give MiB, 64-%u", arg,
						SBT_VM_DISK_MAX_MB);
		spec->vm_disk_mb = (unsigned int)num;
		return -1;
	case OPT_VM_ROOT:
		spec->vm_root = true;
		return -1;
	case OPT_VM_TIMEOUT:
		if (!parse_num(arg, 1, 86400, &num))
			return shim_usage_error("--vm-timeout '%s': give seconds, 1-86400", arg);
		o->vm_timeout = (int)num;
		return -1;
	case OPT_VM_ACCEL:
		if (sbt_vm_accel_parse(arg, &spec->vm_accel))
			return shim_usage_error("--vm-accel '%s': give auto, kvm or tcg", arg);
		o->vm_accel = true;
		return -1;
	case OPT_VM_BOOT:
		if (sbt_vm_boot_parse(arg, &spec->vm_boot))
			return shim_usage_error("--vm-boot '%s': give auto or cold", arg);
		o->vm_accel = true; /* a qemu option, like it */
		return -1;
	case OPT_VM_STREAM_MAX:
		if (!parse_num(arg, 1, 1048576, &num))
			return shim_usage_error("--vm-stream-max '%s': give MiB, 1-1048576", arg);
		o->vm_stream_max = (uint64_t)num << 20;
		return -1;
	}
	o->tap_opts = true;
	return -1;
}

/* One option. -1 to go on, or the exit code (--help, an error). */
static int run_option(int c, const char *arg, struct run_opts *o)
{
	struct sbt_sandbox_spec *spec = &o->spec;

	switch (c) {
	case 'n':
		spec->name = arg;
		return -1;
	case 'b':
		/* podman: CMD (podman or docker, e.g. a build with --cgroup-parent)
		 * runs as a host tool inside the sandbox cgroup, no namespaces */
		if (sbt_backend_parse(arg, &spec->backend))
			return shim_usage_error("--backend '%s': use ns, podman or qemu", arg);
		return -1;
	case 'w':
		return opt_workspace(arg, o);
	case OPT_NET:
		if (strcmp(arg, "veth") == 0)
			spec->net = SBT_NET_VETH;
		else if (strcmp(arg, "none") == 0)
			spec->net = SBT_NET_NONE;
		else
			return shim_usage_error("--net '%s': use none or veth", arg);
		return -1;
	case OPT_VETH_ADDRS:
		if (!split_pair(arg, o->veth, sizeof(o->veth), &spec->veth_host_cidr,
				&spec->veth_sandbox_cidr))
			return shim_usage_error(
				"--veth-addrs '%s': give HOST/LEN,SANDBOX/LEN, e.g. "
				"192.0.2.1/24,192.0.2.100/24",
				arg);
		return -1;
	case OPT_VETH_HOST_NETNS:
		spec->veth_host_netns = arg;
		return -1;
	case OPT_PIDS_MAX:
		if (sbt_sandbox_limit_parse(&spec->limits, "pids", arg))
			return shim_usage_error("--pids-max '%s': give a number of processes, "
						"1-4194304, or max",
						arg);
		return -1;
	case OPT_MEMORY_MAX:
	case OPT_TMPFS_SIZE:
		if (sbt_sandbox_limit_parse(&spec->limits, c == OPT_MEMORY_MAX ? "memory" : "tmpfs",
					    arg))
			return shim_usage_error("%s '%s': give bytes, at least 1m, with k, m, g "
						"or t (e.g. 8g)%s",
						c == OPT_MEMORY_MAX ? "--memory-max"
								    : "--tmpfs-size",
						arg, c == OPT_MEMORY_MAX ? ", or max" : "");
		return -1;
	case OPT_GUEST:
	case OPT_TAP_NETNS:
	case OPT_TAP_ADDRS:
	case OPT_TAP_ADDRS6:
	case OPT_VM_MEM:
	case OPT_VM_DISK:
	case OPT_VM_ROOT:
	case OPT_VM_TIMEOUT:
	case OPT_VM_ACCEL:
	case OPT_VM_BOOT:
	case OPT_VM_STREAM_MAX:
		return opt_vm(c, arg, o);
	case OPT_ALLOW: {
		struct sbt_parse_error perr;
		struct sbt_rule rule;
		char msg[512];
		int got = strchr(arg, '\n') ? 0 : sbt_rule_parse(arg, &rule, &perr);

		if (got <= 0) {
			snprintf(msg, sizeof(msg), "--allow '%.200s': %s", arg,
				 got < 0 ? perr.msg
					 : "give one rule, e.g. 'cidr 192.0.2.0/24 port 443'");
			return shim_usage_error("%s", msg);
		}
		if (o->nr_allow >= SBT_STATE_EGRESS_RULES)
			return shim_usage_error("--allow '%s': more than 256 rules", arg);
		o->allow[o->nr_allow++] = arg;
		return -1;
	}
	case OPT_EGRESS:
		if (strcmp(arg, "enforce") != 0 && strcmp(arg, "audit") != 0)
			return shim_usage_error("--egress '%s': use enforce or audit", arg);
		o->egress = arg;
		return -1;
	case OPT_TIMINGS:
		if (!arg[0])
			return shim_usage_error("--timings '%s': give a file", arg);
		o->timings = arg;
		return -1;
	case 's':
		if (!arg[0])
			return shim_usage_error("--state-dir '%s': give a directory", arg);
		o->state_dir = arg;
		return -1;
	case OPT_NO_WAIT:
		o->no_wait = true;
		return -1;
	case 'e': {
		char err[160];

		if (o->nr_env >= SBT_ENV_MAX || sbt_env_set(&o->env_check, arg, err, sizeof(err)))
			return shim_usage_error("--env: %s",
						o->nr_env >= SBT_ENV_MAX ? "too many" : err);
		o->env[o->nr_env++] = (char *)arg;
		return -1;
	}
	case 'h':
		shim_usage_run(stdout);
		return SHIM_EXIT_OK;
	default:
		sbt_log("see '%s --help'", sbt_log_name());
		return SHIM_EXIT_USAGE;
	}
}

/* What the options say together: -1 when they fit, or SHIM_EXIT_USAGE. */
static int run_check(const struct run_opts *o, int argc, char **argv)
{
	const struct sbt_sandbox_spec *spec = &o->spec;
	const struct sbt_backend_caps *caps = sbt_backend_caps(spec->backend);
	const char *name = sbt_backend_name(spec->backend);
	char err[PATH_MAX + 512];
	struct stat st;

	if (!spec->name)
		return shim_usage_error("--name NAME is required");
	if (!sbt_sandbox_name_ok(spec->name))
		return shim_usage_error("--name '%s': use 1-64 characters [A-Za-z0-9_.-], not "
					"starting with '.'",
					spec->name);
	if (spec->workspace) {
		const char *why = stat(spec->workspace, &st) ? strerror(errno)
				  : !S_ISDIR(st.st_mode)     ? "not a directory"
							     : NULL;

		if (why) {
			snprintf(err, sizeof(err),
				 "--workspace '%s': %s; give an existing directory",
				 spec->workspace, why);
			return shim_usage_error("%s", err);
		}
	}
	if (optind >= argc)
		return shim_usage_error("no command: give it after --, e.g. -- make test");
	/*
	 * What the backend cannot give (its capabilities, sandbox.h), in the
	 * options' words; the rest of what they rule out (a host tool that is
	 * none of the backend's) sbt_sandbox_check() says below.
	 */
	if ((spec->workspace && caps->workspace == SBT_WORKSPACE_NONE) ||
	    !(caps->net_modes & SBT_NET_MODE(spec->net))) {
		snprintf(err, sizeof(err), "--backend %s takes no %s: %s%s", name,
			 caps->workspace == SBT_WORKSPACE_NONE ? "--workspace or --net" : "--net",
			 caps->no_net_why ? caps->no_net_why : "it gives none",
			 caps->guest ? " (--tap-addrs)" : "");
		return shim_usage_error("%s", err);
	}
	if (spec->net == SBT_NET_VETH && !spec->veth_host_cidr)
		return shim_usage_error("--net veth needs --veth-addrs HOST/LEN,SANDBOX/LEN%s", "");
	if (spec->net != SBT_NET_VETH && (spec->veth_host_cidr || spec->veth_host_netns))
		return shim_usage_error("--veth-addrs and --veth-host-netns need --net veth%s", "");
	if (!caps->guest && (spec->guest_dir || o->tap_opts || spec->vm_mem_mb ||
			     spec->vm_disk_mb || spec->vm_root || o->vm_timeout || o->vm_accel ||
			     o->vm_stream_max != SBT_VM_STREAM_MAX_DEFAULT))
		return shim_usage_error(
			"--guest, --tap-netns, --tap-addrs, --tap-addrs6, --vm-mem, --vm-disk, "
			"--vm-root, --vm-timeout, --vm-accel, --vm-boot and --vm-stream-max need "
			"--backend "
			"qemu");
	if (caps->guest && !spec->guest_dir)
		return shim_usage_error("--backend %s needs --guest DIR: build the guest with "
					"scripts/guest-build.sh, which prints DIR",
					name);
	return -1;
}

/* The options into o->spec, checked. -1 to run, or the exit code. */
static int run_spec(int argc, char **argv, struct run_opts *o)
{
	static const struct option longopts[] = {
		{ "name", required_argument, NULL, 'n' },
		{ "backend", required_argument, NULL, 'b' },
		{ "workspace", required_argument, NULL, 'w' },
		{ "net", required_argument, NULL, OPT_NET },
		{ "state-dir", required_argument, NULL, 's' },
		{ "no-wait", no_argument, NULL, OPT_NO_WAIT },
		{ "veth-addrs", required_argument, NULL, OPT_VETH_ADDRS },
		{ "veth-host-netns", required_argument, NULL, OPT_VETH_HOST_NETNS },
		{ "guest", required_argument, NULL, OPT_GUEST },
		{ "tap-netns", required_argument, NULL, OPT_TAP_NETNS },
		{ "tap-addrs", required_argument, NULL, OPT_TAP_ADDRS },
		{ "tap-addrs6", required_argument, NULL, OPT_TAP_ADDRS6 },
		{ "vm-mem", required_argument, NULL, OPT_VM_MEM },
		{ "vm-disk", required_argument, NULL, OPT_VM_DISK },
		{ "vm-root", no_argument, NULL, OPT_VM_ROOT },
		{ "vm-timeout", required_argument, NULL, OPT_VM_TIMEOUT },
		{ "vm-accel", required_argument, NULL, OPT_VM_ACCEL },
		{ "vm-boot", required_argument, NULL, OPT_VM_BOOT },
		{ "vm-stream-max", required_argument, NULL, OPT_VM_STREAM_MAX },
		{ "timings", required_argument, NULL, OPT_TIMINGS },
		{ "allow", required_argument, NULL, OPT_ALLOW },
		{ "egress", required_argument, NULL, OPT_EGRESS },
		{ "pids-max", required_argument, NULL, OPT_PIDS_MAX },
		{ "memory-max", required_argument, NULL, OPT_MEMORY_MAX },
		{ "tmpfs-size", required_argument, NULL, OPT_TMPFS_SIZE },
		{ "env", required_argument, NULL, 'e' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	char err[PATH_MAX + 512];
	int c, ret;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+n:b:w:s:e:h", longopts, NULL)) != -1) {
		ret = run_option(c, optarg, o);
		if (ret >= 0) {
			sbt_env_free(&o->env_check);
			return ret;
		}
	}
	sbt_env_free(&o->env_check);
	o->spec.env = o->env;
	ret = run_check(o, argc, argv);
	if (ret >= 0)
		return ret;
	o->spec.argv = argv + optind;
	o->spec.state_dir = o->state_dir;
	/* What the user can fix (addresses, the guest...): a usage error, before anything is made. */
	if (sbt_sandbox_check(&o->spec, err, sizeof(err)))
		return shim_usage_error("%s", err);
	return -1;
}

/* ---- the run ------------------------------------------------------------ */

/* SIGINT, SIGTERM and SIGHUP to a signalfd (the sandbox's init resets its mask); -1: errno. */
static int block_signals(bool vm)
{
	sigset_t sigs;

	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGHUP);
	sigprocmask(SIG_BLOCK, &sigs, NULL);
	/* The VM's output goes through us: a closed stdout must not kill the shim. */
	if (vm)
		signal(SIGPIPE, SIG_IGN);
	return signalfd(-1, &sigs, SFD_CLOEXEC | SFD_NONBLOCK);
}

/* Start the sandbox, the attach FIFO, the state file; wait for ready. -1, or the exit code. */
static int run_start(const struct run_opts *o, struct run_ctx *r)
{
	char err[PATH_MAX + 512];
	int ret = sbt_sandbox_start(&o->spec, &r->run, err, sizeof(err));

	if (ret) {
		sbt_log("%s", err);
		/* a name in use, a workspace too large for the VM: the user can fix them */
		return ret == -EEXIST || ret == -EFBIG ? SHIM_EXIT_USAGE : SHIM_EXIT_SETUP;
	}
	r->started = true;
	if (o->egress || o->nr_allow) {
		r->run.egress_mode = o->egress ? o->egress : "enforce";
		r->run.egress_rules = o->allow;
		r->run.nr_egress_rules = o->nr_allow;
	}
	if (!o->no_wait) {
		r->fifo = shim_make_fifo(o->state_dir, o->spec.name, r->fifo_path,
					 sizeof(r->fifo_path));
		if (r->fifo < 0) {
			sbt_log("cannot create the attach FIFO in %s: %s; check --state-dir",
				o->state_dir, strerror(-r->fifo));
			r->fifo_path[0] = '\0';
			return SHIM_EXIT_SETUP;
		}
	}
	ret = sbt_state_write(o->state_dir, &r->run);
	if (ret) {
		sbt_log("cannot write the state file %s: %s; the state dir must be a directory "
			"owned by you or root and writable by nobody else",
			r->run.state_file, strerror(-ret));
		return SHIM_EXIT_SETUP;
	}
	ret = sbt_sandbox_ready(&r->run, err, sizeof(err));
	if (ret) {
		sbt_log("%s", err);
		return SHIM_EXIT_SETUP;
	}
	r->pidfd = (int)syscall(SYS_pidfd_open, r->run.pid, 0);
	return -1;
}

/* Wait for a tracer (unless --no-wait), then let the workload exec. -1, or the exit code. */
static int run_release(const struct run_opts *o, struct run_ctx *r)
{
	struct sbt_sandbox_run *run = &r->run;
	enum attach_result res;
	pid_t tracer = 0;
	int ret, sig = 0;

	if (!o->no_wait) {
		if (run->tap[0]) /* the qemu backend: the tap to trace */
			sbt_log("sandbox %s up (cgroup %s, pid %d, tap %s); waiting for a tracer: "
				"sbtrace trace --sandbox %s",
				run->name, run->cgroup_path, (int)run->pid, run->tap, run->name);
		else
			sbt_log("sandbox %s up (cgroup %s, pid %d); waiting for a tracer: sbtrace "
				"trace --sandbox %s",
				run->name, run->cgroup_path, (int)run->pid, run->name);
		res = shim_wait_attach(run->name, r->fifo, r->sfd, r->pidfd, &sig, &tracer,
				       &r->tracer.handover);
		close(r->fifo);
		r->fifo = -1;
		unlink(r->fifo_path);
		r->fifo_path[0] = '\0';
		if (res == SIGNALLED)
			return 128 + sig;
		if (res == INIT_DIED) {
			sbt_log("sandbox %s died (killed?) before a tracer attached; the workload "
				"did not run; run it again",
				run->name);
			return SHIM_EXIT_SETUP;
		}
		/* Its death ends the workload (wait.c): the policy it enforces must never lapse. */
		if (tracer > 0) {
			r->tracer.pidfd = (int)syscall(SYS_pidfd_open, tracer, 0);
			if (r->tracer.pidfd < 0) {
				sbt_log("sandbox %s: the tracer (pid %d) is gone already; the "
					"workload did not run",
					run->name, (int)tracer);
				return SHIM_EXIT_TRACER_LOST;
			}
			run->tracer_pid = tracer;
			sbt_state_update(run); /* who enforces, for operators */
		}
	}
	ret = sbt_sandbox_go(run);
	if (ret) {
		sbt_log("sandbox %s: cannot start the workload: %s", run->name, strerror(-ret));
		return SHIM_EXIT_SETUP;
	}
	return -1;
}

/* A limit the workload ran into: said, with the option that raises it. */
static void limits_said(const struct sbt_sandbox_run *run)
{
	const struct sbt_limit_hits *h = &run->hits;

	if (h->pids)
		sbt_log("sandbox %s: %llu forks refused at its pids limit (%u processes; "
			"--pids-max raises it)",
			run->name, (unsigned long long)h->pids, run->limits.pids);
	if (h->oom_kills || h->memory)
		sbt_log("sandbox %s: its memory limit (%llu MiB) was reached%s (--memory-max "
			"raises it)",
			run->name, (unsigned long long)(run->limits.memory >> 20),
			h->oom_kills ? ", and the OOM killer ended a process" : "");
	if (strcmp(run->limits_via, "none") == 0)
		sbt_log("sandbox %s: no cgroup controller for its pids and memory limits on "
			"this host: none were set",
			run->name);
}

static void run_end(struct run_ctx *r)
{
	if (r->fifo >= 0)
		close(r->fifo);
	if (r->fifo_path[0])
		unlink(r->fifo_path);
	if (r->started) {
		sbt_sandbox_destroy(&r->run);
		limits_said(&r->run);
	}
	if (r->pidfd >= 0)
		close(r->pidfd);
	shim_tracer_close(&r->tracer);
	if (r->sfd >= 0)
		close(r->sfd);
}

int shim_cmd_run(int argc, char **argv)
{
	struct run_opts o = {
		.spec = { .net = SBT_NET_NONE, .stdout_fd = -1, .stderr_fd = -1 },
		.state_dir = SBT_STATE_DIR_DEFAULT,
		.vm_stream_max = SBT_VM_STREAM_MAX_DEFAULT,
	};
	struct run_ctx r = { .fifo = -1, .sfd = -1, .pidfd = -1 };
	int code = run_spec(argc, argv, &o);
	const struct sbt_backend_caps *caps = sbt_backend_caps(o.spec.backend);

	if (code >= 0)
		return code;
	shim_tracer_init(&r.tracer, o.state_dir);
	r.sfd = block_signals(caps->console);
	if (r.sfd < 0) {
		sbt_log("signalfd: %s", strerror(errno));
		return SHIM_EXIT_SETUP;
	}
	code = run_start(&o, &r);
	if (code < 0)
		code = run_release(&o, &r);
	if (code < 0) {
		/* a VM: the workload's exit code comes from the console */
		code = caps->wait == SBT_WAIT_CONSOLE
			       ? shim_wait_vm(&r.run, r.sfd, r.pidfd, o.vm_timeout, &r.tracer,
					      o.vm_stream_max)
			       : shim_wait_workload(&r.run, r.sfd, r.pidfd, &r.tracer);
		if (o.timings)
			write_timings(o.timings, &r.run, sbt_mono_ns());
	}
	run_end(&r);
	return code;
}
