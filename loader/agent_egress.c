// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * `sbtrace agent`: per-sandbox egress policy. The policy of a sandbox comes
 * from the shim's state file (sbtrace-shim run --allow) or, for a child of
 * --cgroup-parent, from --policy-dir DIR/<child>.policy; it is compiled like
 * the trace's (policy_compile.c) into the LPM trie under the sandbox's slot.
 *
 * Where the programs run:
 *  - a shim sandbox: attached to its cgroup (BPF links, one per hook) before
 *    the shim is told "attached": its workload never runs unconfined;
 *  - the children of --cgroup-parent: attached once to each parent (links
 *    are multi-attach: they run for every descendant) when --policy-dir is
 *    given. The cgroup_mkdir program gives a new child's slot the mode
 *    PENDING before the child exists for anyone: every destination is denied
 *    (reason policy_pending) until the agent applied its policy file, or found
 *    none (then OBSERVE: the hooks let everything through, say nothing).
 * Host rules: the policy goes to the session's egress set-up (egress.c, as
 * for `sbtrace trace`): its names resolved, a DNS proxy in each network
 * namespace its processes use (an exec in a new one waits for it), what the
 * proxy passes on learned into its trie; the agent's links judge as ever.
 * A policy file's `egress learn` (audit, every name passed on by the proxy,
 * the floor still denied) gets the same proxy, and the session core its
 * AllowlistProposed at the sandbox's end (session_learn.h).
 * Fail closed: a policy that cannot be parsed or applied leaves the sandbox
 * in mode FAILED (everything denied, reason policy_error), never allowed.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "agent_egress.h"
#include "egress.h"
#include "event/decode.h"
#include "egress/egress_args.h"
#include "egress_slot.h"
#include "loader.h"
#include "egress/policy.h"
#include "egress/policy_compile.h"
#include "sbtrace.h"
#include "sbtrace.skel.h"
#include "event/sink.h"
#include "sandbox/pins.h"
#include "sandbox/sandbox.h"
#include "lib/log.h"

_Static_assert(SBT_AGENT_EGRESS_PROGS == SBT_EGRESS_PROGS, "the agent links every egress program");

int sbt_agent_egress_set_mode(struct sbt_agent_egress *ae, uint32_t slot, uint32_t mode)
{
	return sbt_slot_set_mode(ae->skel, slot, mode);
}

/* --policy-dir: a directory owned by root that nobody else may write. 0 or -errno. */
int sbt_agent_policy_dir_check(const char *dir, char *why, size_t len)
{
	struct stat st;

	if (stat(dir, &st)) {
		snprintf(why, len, "%s", strerror(errno));
		return -errno;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(why, len, "not a directory");
		return -ENOTDIR;
	}
	if (st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH))) {
		snprintf(why, len,
			 "owned by uid %u, mode %03o: it must be owned by root and writable by "
			 "nobody else (a sandbox must not choose its own policy)",
			 (unsigned int)st.st_uid, (unsigned int)(st.st_mode & 0777));
		return -EPERM;
	}
	return 0;
}

/*
 * --persist: the parent's links pinned under <bpffs>/sbtrace-agent/KEY as
 * "<pid>-<program>-<cgroup id>", so that the policies in force outlive this
 * agent until the next one took over (then it unpins them). 0 or -errno.
 */
static int pin_parent_links(struct sbtrace_bpf *skel, const char *key,
			    const struct sbt_target *parent, struct bpf_link *const *links,
			    size_t n)
{
	char dir[PATH_MAX], path[PATH_MAX + 128];
	int err = sbt_pin_agent_dir(key, true, dir, sizeof(dir));
	size_t nprogs;
	struct bpf_program *const *progs = sbt_egress_progs(skel, &nprogs);

	for (size_t i = 0; !err && i < n && i < nprogs; i++) { /* attached in the programs' order */
		snprintf(path, sizeof(path), "%s/%d-%s-%llu", dir, (int)getpid(),
			 bpf_program__name(progs[i]), (unsigned long long)parent->cgroup_id);
		if (bpf_obj_pin(bpf_link__fd(links[i]), path))
			err = -errno;
	}
	if (err)
		sbt_log("--persist: cannot pin the links on %s under bpffs (%s): mount bpffs at "
			"/sys/fs/bpf",
			parent->name, strerror(-err));
	return err;
}

int sbt_agent_egress_init(struct sbt_agent_egress *ae, struct sbt_plan *plan,
			  const char *policy_dir, const struct sbt_target *parents, int nr,
			  const char *pin_key)
{
	struct sbtrace_bpf *skel = plan->skel;

	memset(ae, 0, sizeof(*ae));
	ae->skel = skel;
	ae->eg = calloc(1, sizeof(*ae->eg));
	if (!ae->eg) {
		sbt_log("out of memory");
		return -ENOMEM;
	}
	sbt_egress_init(ae->eg, plan);
	ae->policy_dir = policy_dir;
	ae->dir_fd = -1;
	/* loaded; linked to a sandbox's cgroup with its policy, to the parents with --policy-dir */
	ae->res.capability = "egress";
	sbt_hook_record(&ae->res, "cgroup_link", "attached", 0);
	ae->res.mode = "cgroup_link";
	if (!policy_dir)
		return 0;
	ae->dir_fd = open(policy_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (ae->dir_fd < 0) {
		sbt_log("--policy-dir %s: %s", policy_dir, strerror(errno));
		return -errno;
	}
	for (int i = 0; i < nr; i++) {
		size_t first = ae->nr_parent_links;
		int err = sbt_slot_attach(skel, &parents[i], SBT_AGENT_EGRESS_PROGS,
					  ae->parent_links, &ae->nr_parent_links);

		if (!err && pin_key)
			err = pin_parent_links(skel, pin_key, &parents[i], ae->parent_links + first,
					       ae->nr_parent_links - first);
		if (err)
			return err;
	}
	return 0;
}

void sbt_agent_egress_free(struct sbt_agent_egress *ae)
{
	if (ae->eg) {
		sbt_egress_detach(ae->eg);
		sbt_egress_teardown(ae->eg);
		free(ae->eg);
		ae->eg = NULL;
	}
	for (size_t i = 0; i < ae->nr_parent_links; i++)
		bpf_link__destroy(ae->parent_links[i]);
	ae->nr_parent_links = 0;
	if (ae->dir_fd >= 0)
		close(ae->dir_fd);
	ae->dir_fd = -1;
}

/* ---- policies ------------------------------------------------------------- */

static struct sbt_agent_pol *pol_new(const char *source)
{
	struct sbt_agent_pol *p = calloc(1, sizeof(*p));

	if (p) {
		p->source = source;
		p->mode = SBT_EGRESS_ENFORCE;
		p->cfg.resolver_rule_id = UINT32_MAX; /* no implicit resolver rule in the agent */
	}
	return p;
}

/* Fail closed: FAILED, no rules, the reason (also on stderr). */
static void pol_fail(struct sbt_agent_pol *p, const char *sandbox, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void pol_fail(struct sbt_agent_pol *p, const char *sandbox, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(p->error, sizeof(p->error), fmt, ap);
	va_end(ap);
	free(p->cfg.rules);
	p->cfg.rules = NULL;
	p->cfg.nr_rules = 0;
	p->mode = SBT_EGRESS_FAILED;
	sbt_log("sandbox %s: egress policy refused: %s; all its egress is denied", sandbox,
		p->error);
}

/*
 * "egress enforce|audit|learn" (learn: audit, every name through the proxy,
 * an AllowlistProposed at the sandbox's end) or "learn-format LIST" (its
 * dialects, learn.h). 0, or -1 with msg.
 */
static int parse_directive(struct sbt_agent_pol *p, const char *word, const char *line, char *msg,
			   size_t len)
{
	char arg[64], extra[2];
	int got = sscanf(line, " %*s %63s %1s", arg, extra);
	const char *bad;
	size_t blen;

	if (got != 1 && !(got == 2 && extra[0] == '#')) {
		snprintf(msg, len, "1: '%s' takes one word%s", word,
			 word[0] == 'e' ? ": enforce, audit or learn" : "");
		return -1;
	}
	if (word[0] == 'l') {
		/* the sbtrace text always: it is what the child's policy file takes */
		p->cfg.learn_formats |= SBT_LEARN_SBTRACE;
		if (sbt_learn_formats_parse(arg, &p->cfg.learn_formats, &bad, &blen) == 0)
			return 0;
		snprintf(msg, len, "1: learn-format '%.*s': use sbtrace, flags, cilium or systemd",
			 (int)(blen > 32 ? 32 : blen), bad);
		return -1;
	}
	if (strcmp(arg, "enforce") != 0 && strcmp(arg, "audit") != 0 && strcmp(arg, "learn") != 0) {
		snprintf(msg, len, "1: 'egress' takes enforce, audit or learn");
		return -1;
	}
	p->mode = arg[0] == 'e' ? SBT_EGRESS_ENFORCE : SBT_EGRESS_AUDIT;
	p->cfg.learn = arg[0] == 'l';
	return 0;
}

/* One line: a rule, a directive (parse_directive), blank or a comment. 0, or -1 with msg. */
static int parse_line(struct sbt_agent_pol *p, char *line, char *msg, size_t len)
{
	struct sbt_parse_error err;
	struct sbt_rule r, *n;
	char word[16];
	int got;

	if (sscanf(line, " %15s", word) == 1 &&
	    (strcmp(word, "egress") == 0 || strcmp(word, "learn-format") == 0))
		return parse_directive(p, word, line, msg, len);
	got = sbt_rule_parse(line, &r, &err);
	if (got < 0) {
		snprintf(msg, len, "%u: %s", err.col, err.msg);
		return -1;
	}
	if (got == 0)
		return 0;
	p->hosts |= r.kind == SBT_RULE_HOST;
	n = realloc(p->cfg.rules, (p->cfg.nr_rules + 1) * sizeof(*n));
	if (!n) {
		snprintf(msg, len, "1: out of memory");
		return -1;
	}
	p->cfg.rules = n;
	r.id = (uint32_t)p->cfg.nr_rules + 1;
	n[p->cfg.nr_rules++] = r;
	return 0;
}

/* Lines of `text` (modified) into p; an error names where:LINE:COL. */
static void parse_text(struct sbt_agent_pol *p, const char *sandbox, const char *where, char *text)
{
	unsigned int lineno = 0;

	for (char *line = text; line && *line;) {
		char *nl = strchr(line, '\n'), msg[300];

		lineno++;
		if (nl)
			*nl = '\0';
		if (parse_line(p, line, msg, sizeof(msg))) {
			pol_fail(p, sandbox, "%s:%u:%s", where, lineno, msg);
			return;
		}
		line = nl ? nl + 1 : NULL;
	}
}

int sbt_agent_pol_from_state(const struct sbt_sandbox_state *st, const char *state_dir,
			     struct sbt_agent_pol **out)
{
	struct sbt_agent_pol *p;
	char where[PATH_MAX + 32], *text;

	*out = NULL;
	if (!st->egress_mode[0])
		return 0;
	p = pol_new("state_file");
	text = strdup(st->egress_rules);
	if (!p || !text) {
		free(text);
		free(p);
		return -ENOMEM;
	}
	snprintf(where, sizeof(where), "%s/%s.json egress.rules", state_dir, st->name);
	parse_text(p, st->name, where, text);
	free(text);
	p->cfg.learn = false; /* the shim's --egress is the mode: learn is a policy file's */
	p->cfg.learn_formats = 0;
	if (p->mode != SBT_EGRESS_FAILED)
		p->mode = strcmp(st->egress_mode, "audit") == 0 ? SBT_EGRESS_AUDIT
								: SBT_EGRESS_ENFORCE;
	*out = p;
	return 0;
}

/* DIR/<child>.policy into a NUL-terminated buffer; NULL and *err (-ENOENT: no file). */
static char *read_policy_file(int dir_fd, const char *file, int *err, char *why, size_t len)
{
	int fd = openat(dir_fd, file, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	size_t used = 0;
	struct stat st;
	char *buf;

	if (fd < 0) {
		*err = -errno;
		snprintf(why, len, "%s",
			 errno == ELOOP ? "a symbolic link (refused)" : strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != 0 ||
	    (st.st_mode & (S_IWGRP | S_IWOTH)) || st.st_size > (off_t)SBT_ALLOWLIST_MAX) {
		snprintf(why, len,
			 "not a regular file owned by root, writable by nobody else, of at most "
			 "1 MiB");
		close(fd);
		*err = -EPERM;
		return NULL;
	}
	buf = malloc((size_t)st.st_size + 1);
	while (buf && used < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + used, (size_t)st.st_size - used);

		if (n <= 0)
			break;
		used += (size_t)n;
	}
	close(fd);
	if (!buf || memchr(buf, '\0', used)) {
		snprintf(why, len,
			 buf ? "contains a NUL byte: policies are text" : "out of memory");
		free(buf);
		*err = -EINVAL;
		return NULL;
	}
	buf[used] = '\0';
	return buf;
}

int sbt_agent_pol_from_dir(struct sbt_agent_egress *ae, const char *sandbox, const char *child,
			   struct sbt_agent_pol **out)
{
	char file[PATH_MAX], where[2 * PATH_MAX], why[200];
	struct sbt_agent_pol *p;
	char *text;
	int err = 0;

	*out = NULL;
	if (!ae->policy_dir)
		return 0;
	if ((size_t)snprintf(file, sizeof(file), "%s.policy", child) >= sizeof(file))
		err = -ENAMETOOLONG;
	snprintf(where, sizeof(where), "%s/%s", ae->policy_dir, file);
	text = err ? NULL : read_policy_file(ae->dir_fd, file, &err, why, sizeof(why));
	if (err == -ENOENT)
		return 0; /* no policy: the sandbox is not confined */
	p = pol_new("policy_dir");
	if (!p) {
		free(text);
		return -ENOMEM;
	}
	if (!text)
		pol_fail(p, sandbox, "%s: %s", where, err == -ENAMETOOLONG ? "name too long" : why);
	else
		parse_text(p, sandbox, where, text);
	free(text);
	*out = p;
	return 0;
}

/* Host rules or learn mode: the session core's DNS proxy (and trie), as the trace's. */
static bool pol_proxied(const struct sbt_agent_pol *p)
{
	return p->mode != SBT_EGRESS_FAILED && (p->hosts || p->cfg.learn);
}

void sbt_agent_pol_describe(const struct sbt_agent_egress *ae, const struct sbt_agent_pol *p,
			    uint32_t slot, struct sbt_ev_sandbox *c)
{
	struct sbt_egress_view v;

	if (!p)
		return;
	c->egress_source = p->source;
	c->egress_mode = sbt_agent_pol_mode_name(p);
	c->egress_error = p->error[0] ? p->error : NULL;
	c->egress_rules = p->cfg.nr_rules;
	if (!pol_proxied(p) || !ae->eg)
		return;
	sbt_egress_view(ae->eg, slot, &v);
	c->dns_proxy = v.dns_proxy;
	memcpy(c->dns_proxy_ports, v.dns_proxy_ports, sizeof(c->dns_proxy_ports));
	c->dns_proxy_netns = v.dns_proxy_netns;
}

const char *sbt_agent_pol_mode_name(const struct sbt_agent_pol *p)
{
	return !p			      ? NULL
	       : p->mode == SBT_EGRESS_FAILED ? "denied"
	       : p->cfg.learn		      ? "learn"
	       : p->mode == SBT_EGRESS_AUDIT  ? "audit"
					      : "enforce";
}

int sbt_agent_pol_apply(struct sbt_agent_egress *ae, struct sbt_agent_pol *p, uint32_t slot,
			const struct sbt_target *sb, bool attach)
{
	char why[sizeof(p->error)];
	int err;

	if (!p)
		return sbt_agent_egress_set_mode(ae, slot, SBT_EGRESS_OBSERVE);
	/* denied while it is being written: no half-written trie decides */
	err = sbt_agent_egress_set_mode(ae, slot, SBT_EGRESS_PENDING);
	if (!err && pol_proxied(p)) {
		/* resolved, proxied and learned as the trace does; the links are ours */
		p->cfg.mode = p->mode;
		if (sbt_egress_add(ae->eg, slot, &p->cfg, sb, false)) {
			sbt_egress_remove(ae->eg, slot);
			pol_fail(p, sb->name, "cannot apply its host rules (see above)");
		}
		sbt_agent_egress_set_mode(ae, slot, SBT_EGRESS_PENDING); /* until attached */
	} else if (!err && p->mode != SBT_EGRESS_FAILED &&
		   sbt_slot_policy_write(ae->skel, slot, &p->policy, p->cfg.rules, p->cfg.nr_rules,
					 why, sizeof(why))) {
		pol_fail(p, sb->name, "cannot apply: %s", why);
	}
	if (!err && attach)
		err = sbt_slot_attach(ae->skel, sb, SBT_AGENT_EGRESS_PROGS, p->links, &p->nr_links);
	if (!err) /* FAILED (denied) when it was refused */
		err = sbt_agent_egress_set_mode(ae, slot, (uint32_t)p->mode);
	return err;
}

/* What p put in the kernel for the slot taken out: its proxies and learned entries, its trie. */
static void pol_unapply(struct sbt_agent_egress *ae, struct sbt_agent_pol *p, uint32_t slot)
{
	if (!p)
		return;
	if ((p->hosts || p->cfg.learn) && ae->eg)
		sbt_egress_remove(ae->eg, slot);
	sbt_slot_policy_clear(ae->skel, slot, &p->policy);
}

bool sbt_agent_pol_same(const struct sbt_agent_pol *a, const struct sbt_agent_pol *b)
{
	if (!a || !b)
		return a == b;
	if (a->mode != b->mode || a->cfg.nr_rules != b->cfg.nr_rules ||
	    a->cfg.learn != b->cfg.learn || a->cfg.learn_formats != b->cfg.learn_formats ||
	    strcmp(a->error, b->error) != 0)
		return false;
	for (size_t i = 0; i < a->cfg.nr_rules; i++)
		if (strcmp(a->cfg.rules[i].text, b->cfg.rules[i].text) != 0)
			return false;
	return true;
}

int sbt_agent_pol_replace(struct sbt_agent_egress *ae, struct sbt_agent_pol *old,
			  struct sbt_agent_pol *p, uint32_t slot, const struct sbt_target *sb)
{
	/* denied from here until the new one is in place: never the old trie half-cleared */
	int err = sbt_agent_egress_set_mode(ae, slot, SBT_EGRESS_PENDING);

	if (err)
		return err;
	pol_unapply(ae, old, slot);
	sbt_agent_pol_release(old); /* a child's links are the parent's: it has none */
	return sbt_agent_pol_apply(ae, p, slot, sb, false);
}

void sbt_agent_pol_release(struct sbt_agent_pol *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nr_links; i++)
		bpf_link__destroy(p->links[i]); /* our fd closed: a pinned link stays */
	free(p->cfg.rules);
	free(p->policy.entries);
	free(p);
}

void sbt_agent_pol_free(struct sbt_agent_egress *ae, struct sbt_agent_pol *p, uint32_t slot)
{
	if (p) {
		for (size_t i = 0; i < p->nr_links; i++)
			bpf_link__destroy(p->links[i]);
		p->nr_links = 0;
		pol_unapply(ae, p, slot);
	}
	sbt_agent_egress_set_mode(ae, slot, SBT_EGRESS_OBSERVE);
	sbt_agent_pol_release(p);
}
