// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <string.h>

#include "event/decode.h"

const char *sbt_decode_strerror(enum sbt_decode_err err)
{
	switch (err) {
	case SBT_DECODE_OK:
		return "ok";
	case SBT_DECODE_SHORT:
		return "record shorter than its fixed part";
	case SBT_DECODE_BAD_TYPE:
		return "unknown record type";
	case SBT_DECODE_BAD_ABI:
		return "record ABI version mismatch";
	case SBT_DECODE_BAD_SIZE:
		return "record size field disagrees with the bytes received";
	case SBT_DECODE_BAD_LENGTHS:
		return "string lengths overrun the record";
	case SBT_DECODE_BAD_STRING:
		return "string not NUL-terminated";
	case SBT_DECODE_BAD_FIELD:
		return "field out of range";
	}
	return "unknown decode error";
}

int sbt_record_type(const void *data, size_t len)
{
	struct sbt_record_hdr hdr;

	if (!data || len < sizeof(hdr))
		return -1;
	memcpy(&hdr, data, sizeof(hdr));
	return hdr.type;
}

static void copy_comm(char *dst, const char *src)
{
	memcpy(dst, src, SBT_COMM_LEN);
	dst[SBT_COMM_LEN - 1] = '\0';
}

/* Split the NUL-separated argv area into argument pointers. */
static size_t split_argv(const char *buf, size_t len, const char **argv, char *tail)
{
	size_t argc = 0, start = 0;

	for (size_t i = 0; i < len; i++) {
		if (buf[i] == '\0') {
			argv[argc++] = buf + start;
			start = i + 1;
		}
	}
	/* A last argument cut without its NUL: copy it to get one. */
	if (start < len) {
		size_t n = len - start;

		if (n > SBT_ARGV_CAP)
			n = SBT_ARGV_CAP;
		memcpy(tail, buf + start, n);
		tail[n] = '\0';
		argv[argc++] = tail;
	}
	return argc;
}

enum sbt_decode_err sbt_decode_exec(const void *data, size_t len, struct sbt_exec *out,
				    const char **argv_store, char *tail)
{
	struct sbt_exec_record rec;
	const char *payload;
	size_t fl, il, al;

	if (!data || len < sizeof(rec))
		return SBT_DECODE_SHORT;
	/* Copy the fixed part: the ring buffer guarantees only 8-byte alignment. */
	memcpy(&rec, data, sizeof(rec));
	if (rec.hdr.type != SBT_REC_EXEC)
		return SBT_DECODE_BAD_TYPE;
	if (rec.hdr.abi != SBT_ABI_VERSION)
		return SBT_DECODE_BAD_ABI;
	if (rec.hdr.size != len)
		return SBT_DECODE_BAD_SIZE;

	fl = rec.filename_len;
	il = rec.interp_len;
	al = rec.argv_len;
	if (fl < 1 || fl > SBT_PATH_MAX || il < 1 || il > SBT_PATH_MAX || al > SBT_ARGV_CAP)
		return SBT_DECODE_BAD_LENGTHS;
	if (sizeof(rec) + fl + il + al != len)
		return SBT_DECODE_BAD_LENGTHS;

	payload = (const char *)data + sizeof(rec);
	if (payload[fl - 1] != '\0' || payload[fl + il - 1] != '\0')
		return SBT_DECODE_BAD_STRING;

	memset(out, 0, sizeof(*out));
	out->ts_boot_ns = rec.ts_boot_ns;
	out->cgroup_id = rec.cgroup_id;
	out->seq = rec.seq;
	out->slot = rec.slot;
	out->pid = rec.pid;
	out->tid = rec.tid;
	out->ppid = rec.ppid;
	out->uid = rec.uid;
	out->gid = rec.gid;
	out->flags = rec.flags;
	copy_comm(out->comm, rec.comm);
	copy_comm(out->parent_comm, rec.parent_comm);
	out->exe_size = rec.exe_size;
	memcpy(out->exe_head, rec.exe_head, sizeof(out->exe_head));
	memcpy(out->exe_name, rec.exe_name, sizeof(out->exe_name) - 1);
	out->filename = payload;
	out->interp = payload + fl;
	out->argv_truncated = rec.flags & SBT_EXEC_ARGV_TRUNCATED;
	out->argv = argv_store;
	out->argc = split_argv(payload + fl + il, al, argv_store, tail);
	return SBT_DECODE_OK;
}

enum sbt_decode_err sbt_decode_egress(const void *data, size_t len, struct sbt_egress *out)
{
	struct sbt_egress_record rec;

	if (!data || len < sizeof(rec.hdr))
		return SBT_DECODE_SHORT;
	memcpy(&rec.hdr, data, sizeof(rec.hdr));
	if (rec.hdr.type != SBT_REC_EGRESS)
		return SBT_DECODE_BAD_TYPE;
	if (rec.hdr.abi != SBT_ABI_VERSION)
		return SBT_DECODE_BAD_ABI;
	if (len < sizeof(rec))
		return SBT_DECODE_SHORT;
	if (rec.hdr.size != len || len != sizeof(rec))
		return SBT_DECODE_BAD_SIZE;
	memcpy(&rec, data, sizeof(rec));
	if (rec.hook < SBT_HOOK_CONNECT4 || rec.hook >= SBT_HOOK__MAX ||
	    rec.verdict < SBT_VERDICT_ALLOWED || rec.verdict >= SBT_VERDICT__MAX ||
	    rec.reason < SBT_REASON_RULE || rec.reason >= SBT_REASON__MAX ||
	    rec.reply >= SBT_REPLY__MAX || rec.count == 0)
		return SBT_DECODE_BAD_FIELD;
	memset(out, 0, sizeof(*out));
	out->ts_boot_ns = rec.ts_boot_ns;
	out->cgroup_id = rec.cgroup_id;
	out->count = rec.count;
	out->slot = rec.slot;
	out->pid = rec.pid;
	out->tid = rec.tid;
	out->uid = rec.uid;
	out->rule_id = rec.rule_id;
	out->floor_idx = rec.floor_idx;
	out->dport = rec.dport;
	out->family = rec.family;
	out->proto = rec.proto;
	out->hook = rec.hook;
	out->verdict = rec.verdict;
	out->reason = rec.reason;
	out->would_deny = rec.would_deny;
	out->sock_type = rec.sock_type;
	out->reply = rec.reply;
	out->ethertype = rec.ethertype;
	out->ifindex = rec.ifindex;
	memcpy(out->daddr, rec.daddr, sizeof(out->daddr));
	memcpy(out->saddr, rec.saddr, sizeof(out->saddr));
	copy_comm(out->comm, rec.comm);
	return SBT_DECODE_OK;
}
