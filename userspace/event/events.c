// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* ProcessExec and Egress* as JSON (events.h). */
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/socket.h>

#include "egress/policy.h"
#include "event/events.h"
#include "event/kinds.h"

static json_object *shell_json(const struct sbt_shell_class *shell)
{
	json_object *o;

	if (!shell || shell->kind == SBT_SHELL_NONE)
		return NULL;
	o = json_object_new_object();
	json_object_object_add(o, "name", sbt_json_string(shell->shell));
	json_object_object_add(o, "kind", json_object_new_string(sbt_shell_kind_name(shell->kind)));
	json_object_object_add(o, "command",
			       shell->command ? sbt_json_string(shell->command) : NULL);
	json_object_object_add(o, "script", shell->script ? sbt_json_string(shell->script) : NULL);
	json_object_object_add(o, "multicall",
			       shell->multicall ? json_object_new_string(shell->multicall) : NULL);
	json_object_object_add(
		o, "identified_by",
		json_object_new_string(shell->identified_by ? shell->identified_by : "name"));
	return o;
}

/* The cwd's tail (decode.h): {"tail", "complete"}, null when none could be read. */
static json_object *cwd_json(const struct sbt_exec *ev)
{
	json_object *o;

	if (!ev->cwd[0] && !ev->cwd_top)
		return NULL;
	o = json_object_new_object();
	json_object_object_add(o, "tail", sbt_json_string(ev->cwd));
	json_object_object_add(o, "complete", json_object_new_boolean(ev->cwd_top));
	return o;
}

json_object *sbt_event_exec(const struct sbt_exec *ev, uint64_t ts_ns, const char *sandbox,
			    const struct sbt_shell_class *shell)
{
	json_object *o = sbt_event_new(sbt_event_kind_name(SBT_EV_EXEC, 0), ts_ns, sandbox);
	json_object *argv;

	if (!o)
		return NULL;
	json_object_object_add(o, "pid", json_object_new_int64(ev->pid));
	json_object_object_add(o, "tid", json_object_new_int64(ev->tid));
	json_object_object_add(o, "ppid", json_object_new_int64(ev->ppid));
	json_object_object_add(o, "uid", json_object_new_int64(ev->uid));
	json_object_object_add(o, "gid", json_object_new_int64(ev->gid));
	json_object_object_add(o, "comm", sbt_json_string(ev->comm));
	json_object_object_add(o, "parent_comm", sbt_json_string(ev->parent_comm));
	json_object_object_add(o, "cgroup_id", json_object_new_uint64(ev->cgroup_id));
	json_object_object_add(o, "seq", json_object_new_uint64(ev->seq));
	json_object_object_add(o, "filename", sbt_json_string(ev->filename));
	json_object_object_add(
		o, "interp",
		(ev->flags & SBT_EXEC_INTERP_UNAVAILABLE) ? NULL : sbt_json_string(ev->interp));
	argv = json_object_new_array_ext((int)ev->argc);
	for (size_t i = 0; i < ev->argc; i++)
		json_object_array_add(argv, sbt_json_string(ev->argv[i]));
	json_object_object_add(o, "argv", argv);
	json_object_object_add(o, "argv_truncated", json_object_new_boolean(ev->argv_truncated));
	json_object_object_add(o, "cwd", cwd_json(ev));
	if (ev->flags &
	    (SBT_EXEC_ARGV_FAULT | SBT_EXEC_FILENAME_FAULT | SBT_EXEC_INTERP_FAULT |
	     SBT_EXEC_FILENAME_TRUNCATED | SBT_EXEC_INTERP_TRUNCATED | SBT_EXEC_CWD_FAULT)) {
		json_object *w = json_object_new_array();

		if (ev->flags & SBT_EXEC_ARGV_FAULT)
			json_object_array_add(w, json_object_new_string("argv_unreadable"));
		if (ev->flags & SBT_EXEC_FILENAME_FAULT)
			json_object_array_add(w, json_object_new_string("filename_unreadable"));
		if (ev->flags & SBT_EXEC_INTERP_FAULT)
			json_object_array_add(w, json_object_new_string("interp_unreadable"));
		if (ev->flags & SBT_EXEC_FILENAME_TRUNCATED)
			json_object_array_add(w, json_object_new_string("filename_truncated"));
		if (ev->flags & SBT_EXEC_INTERP_TRUNCATED)
			json_object_array_add(w, json_object_new_string("interp_truncated"));
		if (ev->flags & SBT_EXEC_CWD_FAULT)
			json_object_array_add(w, json_object_new_string("cwd_unreadable"));
		json_object_object_add(o, "capture_issues", w);
	}
	json_object_object_add(o, "shell", shell_json(shell));
	return o;
}

const char *sbt_egress_hook_name(unsigned int hook)
{
	static const char *const names[] = {
		[SBT_HOOK_CONNECT4] = "connect4",
		[SBT_HOOK_CONNECT6] = "connect6",
		[SBT_HOOK_SENDMSG4] = "sendmsg4",
		[SBT_HOOK_SENDMSG6] = "sendmsg6",
		[SBT_HOOK_SOCK_CREATE] = "sock_create",
		[SBT_HOOK_CGROUP_SKB] = "cgroup_skb",
		[SBT_HOOK_TCP_CONNECT] = "tcp_connect",
		[SBT_HOOK_SOCKET_SYSCALL] = "socket_syscall",
		[SBT_HOOK_TAP] = "tap",
	};
	_Static_assert(sizeof(names) / sizeof(names[0]) == SBT_HOOK__MAX, "a name per hook");

	return hook < sizeof(names) / sizeof(names[0]) && names[hook] ? names[hook] : "unknown";
}

const char *sbt_egress_reason_name(unsigned int reason)
{
	static const char *const names[] = {
		[SBT_REASON_RULE] = "rule",
		[SBT_REASON_NOT_IN_ALLOWLIST] = "not_in_allowlist",
		[SBT_REASON_FLOOR] = "floor",
		[SBT_REASON_RAW_SOCKET] = "raw_socket",
		[SBT_REASON_PACKET_SOCKET] = "packet_socket",
		[SBT_REASON_OWN_LOOPBACK] = "own_loopback",
		[SBT_REASON_NO_POLICY] = "no_policy",
		[SBT_REASON_RESOLVER] = "resolver",
		[SBT_REASON_NOT_RESOLVER] = "not_resolver",
		[SBT_REASON_DNS_PROXY] = "dns_proxy",
		[SBT_REASON_SPOOFED_SOURCE] = "spoofed_source",
		[SBT_REASON_MALFORMED] = "malformed",
		[SBT_REASON_FRAGMENT] = "fragment",
		[SBT_REASON_UNSUPPORTED] = "unsupported",
		[SBT_REASON_POLICY_PENDING] = "policy_pending",
		[SBT_REASON_POLICY_ERROR] = "policy_error",
		[SBT_REASON_DNS_NO_PROXY] = "dns_no_proxy",
	};
	_Static_assert(sizeof(names) / sizeof(names[0]) == SBT_REASON__MAX, "a name per reason");

	return reason < sizeof(names) / sizeof(names[0]) && names[reason] ? names[reason]
									  : "unknown";
}

const char *sbt_egress_event_name(unsigned int verdict)
{
	return sbt_event_kind_name(SBT_EV_EGRESS, sbt_egress_variant(verdict));
}

static const char *proto_name(uint8_t proto, char *buf, size_t len)
{
	switch (proto) {
	case 6:
		return "tcp";
	case 17:
		return "udp";
	case 1:
		return "icmp";
	case 58:
		return "icmpv6";
	default:
		snprintf(buf, len, "%u", proto);
		return buf;
	}
}

static const char *family_name(uint8_t family)
{
	switch (family) {
	case AF_INET:
		return "ipv4";
	case AF_INET6:
		return "ipv6";
	case AF_PACKET:
		return "packet";
	default:
		return "unknown";
	}
}

static const char *sock_type_name(uint8_t type)
{
	switch (type) {
	case SOCK_STREAM:
		return "stream";
	case SOCK_DGRAM:
		return "dgram";
	case SOCK_RAW:
		return "raw";
	case 0:
		return NULL;
	default:
		return "other";
	}
}

bool sbt_egress_has_daddr(const struct sbt_egress *ev)
{
	return (ev->family == AF_INET || ev->family == AF_INET6) &&
	       ev->hook != SBT_HOOK_SOCK_CREATE;
}

const char *sbt_egress_proto_str(const struct sbt_egress *ev, char *buf, size_t len)
{
	return ev->family == AF_PACKET ? NULL : proto_name(ev->proto, buf, len);
}

json_object *sbt_event_egress(const struct sbt_egress *ev, uint64_t ts_ns, const char *sandbox,
			      const char *rule, const char *floor)
{
	json_object *o = sbt_event_new(sbt_egress_event_name(ev->verdict), ts_ns, sandbox);
	const char *proto, *type = sock_type_name(ev->sock_type);
	char addr[64], pbuf[8];

	if (!o)
		return NULL;
	json_object_object_add(o, "pid", json_object_new_int64(ev->pid));
	json_object_object_add(o, "tid", json_object_new_int64(ev->tid));
	json_object_object_add(o, "uid", json_object_new_int64(ev->uid));
	json_object_object_add(o, "comm", sbt_json_string(ev->comm));
	json_object_object_add(o, "cgroup_id", json_object_new_uint64(ev->cgroup_id));
	json_object_object_add(o, "hook", json_object_new_string(sbt_egress_hook_name(ev->hook)));
	json_object_object_add(o, "source",
			       json_object_new_string(ev->hook == SBT_HOOK_TAP ? "tap" : "cgroup"));
	if (ev->hook == SBT_HOOK_TAP) {
		static const char *const replies[] = { [SBT_REPLY_NONE] = NULL,
						       [SBT_REPLY_TCP_RST] = "tcp_rst",
						       [SBT_REPLY_ICMP] = "icmp_prohibited" };
		_Static_assert(sizeof(replies) / sizeof(replies[0]) == SBT_REPLY__MAX,
			       "a name per reply");
		const char *rep = ev->reply < SBT_REPLY__MAX ? replies[ev->reply] : NULL;
		bool ip = ev->family == AF_INET || ev->family == AF_INET6;

		json_object_object_add(o, "ifindex", json_object_new_int64(ev->ifindex));
		json_object_object_add(o, "ethertype", json_object_new_int64(ev->ethertype));
		if (ip || ev->reason == SBT_REASON_SPOOFED_SOURCE) {
			sbt_addr_str(ev->saddr, addr, sizeof(addr));
			json_object_object_add(o, "saddr", json_object_new_string(addr));
		} else {
			json_object_object_add(o, "saddr", NULL);
		}
		json_object_object_add(o, "reply", rep ? json_object_new_string(rep) : NULL);
	}
	json_object_object_add(o, "family", json_object_new_string(family_name(ev->family)));
	json_object_object_add(o, "sock_type", type ? json_object_new_string(type) : NULL);
	proto = sbt_egress_proto_str(ev, pbuf, sizeof(pbuf));
	json_object_object_add(o, "proto", proto ? json_object_new_string(proto) : NULL);
	if (sbt_egress_has_daddr(ev)) {
		sbt_addr_str(ev->daddr, addr, sizeof(addr));
		json_object_object_add(o, "daddr", json_object_new_string(addr));
		json_object_object_add(o, "dport", json_object_new_int64(ev->dport));
	} else {
		json_object_object_add(o, "daddr", NULL);
		json_object_object_add(o, "dport", NULL);
	}
	json_object_object_add(o, "reason",
			       json_object_new_string(sbt_egress_reason_name(ev->reason)));
	if (ev->rule_id) {
		json_object *r = json_object_new_object();

		json_object_object_add(r, "id", json_object_new_int64(ev->rule_id));
		json_object_object_add(r, "text", rule ? sbt_json_string(rule) : NULL);
		json_object_object_add(o, "rule", r);
	} else {
		json_object_object_add(o, "rule", NULL);
	}
	json_object_object_add(
		o, "floor",
		ev->reason == SBT_REASON_FLOOR && floor ? json_object_new_string(floor) : NULL);
	if (ev->verdict == SBT_VERDICT_OBSERVED)
		json_object_object_add(o, "would_deny", json_object_new_boolean(ev->would_deny));
	json_object_object_add(o, "count", json_object_new_uint64(ev->count));
	return o;
}

/* The file that ran: {"name", "size", "ctime_ns", "unidentified"}; null when the hook cannot see it. */
static json_object *exe_json(const struct sbt_ev_exec *ex)
{
	const struct sbt_exec *rec = ex->rec;
	json_object *o;

	if (rec->flags & SBT_EXEC_EXE_UNAVAILABLE)
		return NULL;
	o = json_object_new_object();
	json_object_object_add(o, "name", sbt_json_string(rec->exe_name));
	json_object_object_add(o, "size", json_object_new_uint64(rec->exe_size));
	json_object_object_add(o, "ctime_ns", json_object_new_uint64(rec->exe_ctime));
	json_object_object_add(o, "unidentified", json_object_new_boolean(ex->unidentified));
	return o;
}

json_object *sbt_json_exec(const struct sbt_event *ev)
{
	json_object *o = sbt_event_exec(ev->exec.rec, ev->ts,
					ev->sandbox ? ev->sandbox->name : NULL, ev->exec.shell);

	if (o)
		json_object_object_add(o, "exe", exe_json(&ev->exec));
	return o;
}

/* ProcessExecFailed (kinds.h: struct sbt_ev_exec_failed). */
json_object *sbt_json_exec_failed(const struct sbt_event *ev)
{
	const struct sbt_ev_exec_failed *f = &ev->exec_failed;
	const struct sbt_exec_fail *rec = f->rec;
	json_object *o = sbt_event_new(sbt_event_kind_name(SBT_EV_EXEC_FAILED, 0), ev->ts,
				       ev->sandbox ? ev->sandbox->name : NULL);
	json_object *argv, *tried;
	const char *name = strerrorname_np(f->err);

	if (!o)
		return NULL;
	json_object_object_add(o, "pid", json_object_new_int64(rec->pid));
	json_object_object_add(o, "tid", json_object_new_int64(rec->tid));
	json_object_object_add(o, "ppid", json_object_new_int64(rec->ppid));
	json_object_object_add(o, "uid", json_object_new_int64(rec->uid));
	json_object_object_add(o, "comm", sbt_json_string(rec->comm));
	json_object_object_add(o, "cgroup_id", json_object_new_uint64(rec->cgroup_id));
	json_object_object_add(o, "syscall",
			       json_object_new_string(rec->flags & SBT_EXEC_FAIL_EXECVEAT
							      ? "execveat"
							      : "execve"));
	json_object_object_add(o, "filename", sbt_json_string(rec->filename));
	tried = json_object_new_array_ext((int)f->ntried);
	for (size_t i = 0; i < f->ntried; i++)
		json_object_array_add(tried, sbt_json_string(f->tried[i]));
	json_object_object_add(o, "tried", tried);
	argv = json_object_new_array_ext((int)rec->argc);
	for (size_t i = 0; i < rec->argc; i++)
		json_object_array_add(argv, sbt_json_string(rec->argv[i]));
	json_object_object_add(o, "argv", argv);
	json_object_object_add(o, "argv_truncated",
			       json_object_new_boolean(rec->flags & SBT_EXEC_FAIL_ARGV_MORE));
	json_object_object_add(o, "errno", json_object_new_int(f->err));
	json_object_object_add(o, "error", name ? json_object_new_string(name) : NULL);
	if (rec->flags & SBT_EXEC_FAIL_EXECVEAT) {
		json_object_object_add(o, "dirfd", json_object_new_int(rec->dirfd));
		json_object_object_add(o, "at_flags", json_object_new_int64(rec->at_flags));
	}
	if (rec->flags & (SBT_EXEC_FAIL_PATH_FAULT | SBT_EXEC_FAIL_ARGV_FAULT |
			  SBT_EXEC_FAIL_REGS_UNAVAILABLE)) {
		json_object *w = json_object_new_array();

		if (rec->flags & SBT_EXEC_FAIL_PATH_FAULT)
			json_object_array_add(w, json_object_new_string("filename_unreadable"));
		if (rec->flags & SBT_EXEC_FAIL_ARGV_FAULT)
			json_object_array_add(w, json_object_new_string("argv_unreadable"));
		if (rec->flags & SBT_EXEC_FAIL_REGS_UNAVAILABLE)
			json_object_array_add(w, json_object_new_string("arguments_unavailable"));
		json_object_object_add(o, "capture_issues", w);
	}
	json_object_object_add(o, "shell", shell_json(f->shell));
	return o;
}

/* Egress*; an allowance for an address the DNS proxy passed on names the answer. */
json_object *sbt_json_egress(const struct sbt_event *ev)
{
	json_object *o =
		sbt_event_egress(ev->egress.rec, ev->ts, ev->sandbox ? ev->sandbox->name : NULL,
				 ev->egress.rule, ev->egress.floor);

	if (o && ev->egress.dns_name) {
		json_object *d = json_object_new_object();

		json_object_object_add(d, "name", json_object_new_string(ev->egress.dns_name));
		json_object_object_add(d, "answer_ts", json_object_new_uint64(ev->egress.dns_ts));
		json_object_object_add(o, "dns", d);
	}
	return o;
}
