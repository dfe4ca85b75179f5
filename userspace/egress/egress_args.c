// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The egress options trace and probe share, and the policy's names. */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "egress/egress_args.h"
#include "egress/learn.h"
#include "lib/io.h"
#include "egress/policy.h"
#include "egress/policy_compile.h"
#include "lib/log.h"

const char *sbt_egress_mode_name(int mode)
{
	switch (mode) {
	case SBT_EGRESS_OFF:
		return "off";
	case SBT_EGRESS_OBSERVE:
		return "observe";
	case SBT_EGRESS_AUDIT:
		return "audit";
	case SBT_EGRESS_ENFORCE:
		return "enforce";
	}
	return "?";
}

static int add_rule(struct sbt_egress_cfg *cfg, const struct sbt_rule *r)
{
	struct sbt_rule *n;

	if (cfg->nr_rules >= 100000) {
		sbt_log("more than 100000 allow rules");
		return -E2BIG;
	}
	n = realloc(cfg->rules, (cfg->nr_rules + 1) * sizeof(*n));
	if (!n) {
		sbt_log("out of memory");
		return -ENOMEM;
	}
	cfg->rules = n;
	n[cfg->nr_rules] = *r;
	n[cfg->nr_rules].id = (uint32_t)cfg->nr_rules + 1;
	cfg->nr_rules++;
	return 0;
}

static int add_rule_arg(struct sbt_egress_cfg *cfg, enum sbt_rule_kind kind, const char *opt,
			const char *arg)
{
	struct sbt_parse_error err;
	struct sbt_rule r;
	int n = sbt_rule_parse_arg(kind, arg, &r, &err);

	if (n < 0) {
		sbt_log("%s '%s':%u: %s", opt, arg, err.col, err.msg);
		return -EINVAL;
	}
	if (n == 0) {
		sbt_log("%s needs a value", opt);
		return -EINVAL;
	}
	return add_rule(cfg, &r);
}

/*
 * The egress options trace and probe share (--allow-cidr, --allow-host,
 * --allowlist, --egress, --resolver), by long name. 0, or -EINVAL after a
 * one-line message.
 */
int sbt_egress_option(struct sbt_egress_cfg *cfg, int *mode, const char *opt, const char *arg)
{
	bool v4;

	if (strcmp(opt, "allow-cidr") == 0)
		return add_rule_arg(cfg, SBT_RULE_CIDR, "--allow-cidr", arg);
	if (strcmp(opt, "allow-host") == 0)
		return add_rule_arg(cfg, SBT_RULE_HOST, "--allow-host", arg);
	if (strcmp(opt, "allowlist") == 0)
		return sbt_allowlist_load(cfg, arg);
	if (strcmp(opt, "egress") == 0) {
		/* learn: audit, with the proxy passing every name on and the floor enforced */
		cfg->learn = strcmp(arg, "learn") == 0;
		if (strcmp(arg, "enforce") == 0)
			*mode = SBT_EGRESS_ENFORCE;
		else if (strcmp(arg, "audit") == 0 || cfg->learn)
			*mode = SBT_EGRESS_AUDIT;
		else if (strcmp(arg, "off") == 0)
			*mode = SBT_EGRESS_OFF;
		else {
			sbt_log_usage("--egress '%s': use enforce, audit, learn or off", arg);
			return -EINVAL;
		}
		return 0;
	}
	if (strcmp(opt, "learn-out") == 0) {
		if (!*arg) {
			sbt_log_usage("--learn-out needs a file name");
			return -EINVAL;
		}
		cfg->learn_out = arg;
		return 0;
	}
	if (strcmp(opt, "learn-format") == 0) {
		const char *bad;
		size_t len;

		if (sbt_learn_formats_parse(arg, &cfg->learn_formats, &bad, &len) == 0)
			return 0;
		sbt_log_usage("--learn-format '%.*s': use sbtrace, flags, cilium or systemd (a "
			      "comma list, or the option again)",
			      (int)(len > 32 ? 32 : len), bad);
		return -EINVAL;
	}
	if (strcmp(opt, "no-dns-proxy") == 0) {
		cfg->dns_proxy_off = true;
		return 0;
	}
	if (strcmp(opt, "dns-deny-reply") == 0) {
		if (strcmp(arg, "refused") == 0)
			cfg->dns_deny_rcode = 5;
		else if (strcmp(arg, "nxdomain") == 0)
			cfg->dns_deny_rcode = 3;
		else {
			sbt_log("--dns-deny-reply '%s': use refused or nxdomain", arg);
			return -EINVAL;
		}
		return 0;
	}
	if (strcmp(opt, "dns-grace") == 0 || strcmp(opt, "dns-max-learned") == 0) {
		bool grace = opt[4] == 'g';
		char *end;
		unsigned long v;

		errno = 0;
		v = strtoul(arg, &end, 10);
		if (errno || end == arg || *end || arg[0] == '-' ||
		    v > (grace ? 3600ul : 1000000ul) || (!grace && v == 0)) {
			sbt_log("--%s '%s': give %s", opt, arg,
				grace ? "seconds, 0..3600" : "a count, 1..1000000");
			return -EINVAL;
		}
		if (grace) {
			cfg->dns_grace_s = (uint32_t)v;
			cfg->dns_grace_set = true;
		} else
			cfg->dns_learn_max = (uint32_t)v;
		return 0;
	}
	if (strcmp(opt, "resolver") == 0) {
		if (sbt_addr_parse(arg, cfg->resolver, &v4)) {
			sbt_log_usage("--resolver '%s': give an IPv4 or IPv6 address", arg);
			return -EINVAL;
		}
		cfg->has_resolver = true;
		return 0;
	}
	return -EINVAL;
}

const char *sbt_egress_learn_refused(const struct sbt_egress_cfg *cfg)
{
	if (!cfg->learn)
		return cfg->learn_formats || cfg->learn_out
			       ? "--learn-format and --learn-out need --egress learn"
			       : NULL;
	if (cfg->dns_proxy_off)
		return "--egress learn with --no-dns-proxy: learn mode names each connect from "
		       "the proxy's answers; drop --no-dns-proxy";
	return NULL;
}

/* Why an allowlist could not be read, in one line. */
static int allowlist_unreadable(const char *path, int e, const char *kind)
{
	if (e == EINVAL && kind)
		sbt_log("--allowlist '%s': %s, not a regular file; give a text file of rules", path,
			kind);
	else if (e == EFBIG)
		sbt_log("--allowlist '%s': larger than %u MiB; an allowlist is a text file of "
			"rules, "
			"one a line",
			path, SBT_ALLOWLIST_MAX >> 20);
	else
		sbt_log("--allowlist '%s': %s", path, strerror(e));
	return -e;
}

/*
 * --allowlist FILE: one rule a line; errors as FILE:LINE:COL: what is wrong.
 * The file may be anything (a secret given by mistake): no message shows
 * more of it than the offending token, cut and escaped by the parser.
 */
int sbt_allowlist_load(struct sbt_egress_cfg *cfg, const char *path)
{
	unsigned int lineno = 0;
	const char *kind;
	int ret = 0, e;
	size_t len;
	char *buf = sbt_read_regular(AT_FDCWD, path, SBT_ALLOWLIST_MAX, &len, &e, &kind);

	if (!buf)
		return allowlist_unreadable(path, e, kind);
	for (char *line = buf, *end = buf + len; line < end && !ret;) {
		char *nl = memchr(line, '\n', (size_t)(end - line));
		size_t n = nl ? (size_t)(nl - line) : (size_t)(end - line);
		struct sbt_parse_error err;
		struct sbt_rule r;
		char *nul;
		int got;

		lineno++;
		line[n] = '\0'; /* the newline, or the buffer's own terminator */
		nul = memchr(line, '\0', n);
		if (nul) {
			sbt_log_at(path, lineno, (unsigned int)(nul - line) + 1,
				   "NUL byte in the line; allowlists are text");
			ret = -EINVAL;
			break;
		}
		got = sbt_rule_parse(line, &r, &err);
		if (got < 0) {
			sbt_log_at(path, lineno, err.col, "%s", err.msg);
			ret = -EINVAL;
		} else if (got > 0 && add_rule(cfg, &r)) {
			ret = -ENOMEM;
		}
		line += n + 1;
	}
	free(buf);
	return ret;
}

const char *sbt_egress_rule_text(const struct sbt_egress_cfg *cfg, uint32_t id)
{
	if (id == cfg->resolver_rule_id)
		return "resolver port 53";
	for (size_t i = 0; i < cfg->nr_rules; i++)
		if (cfg->rules[i].id == id)
			return cfg->rules[i].text;
	return NULL;
}

const char *sbt_egress_floor_text(uint32_t idx)
{
	size_t n;
	const struct sbt_floor *f = sbt_policy_floor(&n);

	return idx < n ? f[idx].what : NULL;
}
