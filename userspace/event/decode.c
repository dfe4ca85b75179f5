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

/* A variable-length record's header: its type, ABI and size (the bytes received). */
static enum sbt_decode_err check_hdr(const struct sbt_record_hdr *h, unsigned int type, size_t len)
{
	if (h->type != type)
		return SBT_DECODE_BAD_TYPE;
	if (h->abi != SBT_ABI_VERSION)
		return SBT_DECODE_BAD_ABI;
	return h->size == len ? SBT_DECODE_OK : SBT_DECODE_BAD_SIZE;
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

/*
 * The cwd tail's names (innermost first, each NUL-terminated, none empty
 * nor holding a '/') joined outermost first into out (SBT_CWD_TAIL_MAX
 * bytes: the joined text is one byte shorter than the tail).
 */
static enum sbt_decode_err join_cwd(const char *buf, size_t len, size_t names, char *out)
{
	size_t end = len, o = 0, seen = 0;

	out[0] = '\0';
	if (len && buf[len - 1] != '\0')
		return SBT_DECODE_BAD_STRING;
	while (end > 0) {
		size_t start = end - 1; /* at the name's NUL */

		while (start > 0 && buf[start - 1] != '\0')
			start--;
		if (start == end - 1 || memchr(buf + start, '/', end - 1 - start))
			return SBT_DECODE_BAD_STRING;
		if (o)
			out[o++] = '/';
		memcpy(out + o, buf + start, end - 1 - start);
		o += end - 1 - start;
		seen++;
		end = start;
	}
	out[o] = '\0';
	return seen == names ? SBT_DECODE_OK : SBT_DECODE_BAD_LENGTHS;
}

enum sbt_decode_err sbt_decode_exec(const void *data, size_t len, struct sbt_exec *out,
				    const char **argv_store, char *tail)
{
	struct sbt_exec_record rec;
	const char *payload;
	enum sbt_decode_err err;
	size_t fl, il, cl, al;

	if (!data || len < sizeof(rec))
		return SBT_DECODE_SHORT;
	/* Copy the fixed part: the ring buffer guarantees only 8-byte alignment. */
	memcpy(&rec, data, sizeof(rec));
	err = check_hdr(&rec.hdr, SBT_REC_EXEC, len);
	if (err != SBT_DECODE_OK)
		return err;

	fl = rec.filename_len;
	il = rec.interp_len;
	cl = rec.cwd_len;
	al = rec.argv_len;
	if (fl < 1 || fl > SBT_PATH_MAX || il < 1 || il > SBT_PATH_MAX || cl > SBT_CWD_TAIL_MAX ||
	    al > SBT_ARGV_CAP)
		return SBT_DECODE_BAD_LENGTHS;
	if (sizeof(rec) + fl + il + cl + al != len)
		return SBT_DECODE_BAD_LENGTHS;

	payload = (const char *)data + sizeof(rec);
	if (payload[fl - 1] != '\0' || payload[fl + il - 1] != '\0')
		return SBT_DECODE_BAD_STRING;

	memset(out, 0, sizeof(*out));
	err = join_cwd(payload + fl + il, cl, rec.cwd_names, out->cwd);
	if (err != SBT_DECODE_OK)
		return err;
	out->cwd_top = rec.flags & SBT_EXEC_CWD_TOP;
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
	out->exe_ctime = rec.exe_ctime;
	memcpy(out->exe_head, rec.exe_head, sizeof(out->exe_head));
	memcpy(out->exe_name, rec.exe_name, sizeof(out->exe_name) - 1);
	out->filename = payload;
	out->interp = payload + fl;
	out->argv_truncated = rec.flags & SBT_EXEC_ARGV_TRUNCATED;
	out->argv = argv_store;
	out->argc = split_argv(payload + fl + il + cl, al, argv_store, tail);
	return SBT_DECODE_OK;
}

enum sbt_decode_err sbt_decode_exec_failed(const void *data, size_t len, struct sbt_exec_fail *out)
{
	struct sbt_exec_fail_record rec;
	const char *payload, *p;
	enum sbt_decode_err err;
	size_t fl, al;

	if (!data || len < sizeof(rec))
		return SBT_DECODE_SHORT;
	memcpy(&rec, data, sizeof(rec));
	err = check_hdr(&rec.hdr, SBT_REC_EXEC_FAILED, len);
	if (err != SBT_DECODE_OK)
		return err;
	fl = rec.filename_len;
	al = rec.argv_len;
	if (fl < 1 || fl > SBT_PATH_MAX || al > (size_t)SBT_FAIL_ARGS * SBT_FAIL_ARG_MAX ||
	    rec.argc > SBT_FAIL_ARGS || sizeof(rec) + fl + al != len)
		return SBT_DECODE_BAD_LENGTHS;
	if (rec.err >= 0 || rec.err < -4095)
		return SBT_DECODE_BAD_FIELD;
	payload = (const char *)data + sizeof(rec);
	if (payload[fl - 1] != '\0' || (al && payload[fl + al - 1] != '\0'))
		return SBT_DECODE_BAD_STRING;
	memset(out, 0, sizeof(*out));
	/* exactly argc NUL-terminated arguments fill the argv area */
	p = payload + fl;
	for (size_t i = 0; i < rec.argc; i++) {
		const char *end = memchr(p, '\0', (size_t)(payload + fl + al - p));

		if (!end)
			return SBT_DECODE_BAD_LENGTHS;
		out->argv[i] = p;
		p = end + 1;
	}
	if (p != payload + fl + al)
		return SBT_DECODE_BAD_LENGTHS;
	out->argc = rec.argc;
	out->ts_boot_ns = rec.ts_boot_ns;
	out->cgroup_id = rec.cgroup_id;
	out->slot = rec.slot;
	out->pid = rec.pid;
	out->tid = rec.tid;
	out->ppid = rec.ppid;
	out->uid = rec.uid;
	out->err = -rec.err;
	out->dirfd = rec.dirfd;
	out->at_flags = rec.at_flags;
	out->flags = rec.flags;
	copy_comm(out->comm, rec.comm);
	out->filename = payload;
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
