// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * DNS query building and response parsing (RFC 1035, RFC 2181, RFC 2308).
 *
 * Responses are untrusted: every read is bounded by `len`, names are decoded
 * into a fixed 255-byte wire-format buffer, and compression pointers must
 * point strictly backwards (and past the header) with at most 16 jumps per
 * name, so decoding always terminates.
 *
 * Choices where dns.h leaves room (the stricter/safer side each time):
 *  - Names are compared in wire form (labels), ASCII case-insensitively;
 *    query names are taken literally (no "\." escapes), any byte but '.'
 *    may appear in a label.
 *  - A reply whose opcode is not QUERY is a MISMATCH (it does not answer
 *    our query), as are QDCOUNT != 1 and a question of another class.  An
 *    error rcode (not 0/3) with QDCOUNT 0 is SERVFAIL; with a question, the
 *    question must still match.  An invalid query `name` gives MISMATCH.
 *  - TC is reported (TRUNCATED) right after the id/QR/opcode checks, before
 *    anything else is parsed.
 *  - The answer section is fully validated first; any record that overruns
 *    the message, an IN A whose rdlength is not 4, an IN AAAA whose rdlength
 *    is not 16 or an IN CNAME whose rdata is not exactly one valid name makes
 *    the whole response MALFORMED, even if the record would not be used.
 *    Records of other classes are skipped unchecked (their rdata format is
 *    class-specific).
 *  - CNAME chains: the first CNAME (in section order) of the current name is
 *    followed; a chain that loops, or needs a 9th link, is MALFORMED.
 *    Addresses are collected when their owner is ANY name of the chain (the
 *    queried name included), of type qtype, class IN; only A and AAAA are
 *    decoded (other qtypes never yield addresses).
 *  - min_ttl covers every matching address record, including those beyond
 *    `max`, and the CNAMEs of the chain.  For NXDOMAIN/NODATA it is the
 *    smallest min(SOA TTL, SOA MINIMUM) over the IN SOA records of the
 *    authority section (their owner is not checked), lowered further by the
 *    chain's CNAME TTLs; 0 when there is no SOA.  TTLs with the top bit set
 *    count as 0.  A malformed authority section (only parsed for
 *    NXDOMAIN/NODATA) or SOA rdata that is not exactly two names and 20
 *    bytes is MALFORMED.  The additional section is never read.
 *  - *n and *min_ttl are 0 on every status but OK (and NXDOMAIN's
 *    min_ttl); `out` is only written when the status is OK.  A NULL `out`
 *    counts as max 0; `n` and `min_ttl` may be NULL.
 *  - Pointers into the 12-byte header are MALFORMED.
 *  - resolv.conf: "nameserver" (case-sensitive) at the start of a line
 *    (after blanks), blanks, then the address up to the next blank; the rest
 *    of the line is ignored.  '#'/';' lines are comments.  An IPv6 "%scope"
 *    suffix is dropped (it must not be empty; IPv4 takes none).  Lines that
 *    don't parse are skipped; `addr` is only written on success.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "egress/dns.h"

#define HDR_LEN	      12
#define MAX_WIRE_NAME 255 /* RFC 1035 3.1, including the root label */
#define MAX_TEXT_NAME 253
#define MAX_LABEL     63
#define MAX_JUMPS     16
#define MAX_CHAIN     8
#define CLASS_IN      1
#define TYPE_SOA      6
#define TYPE_OPT      41
#define OPT_LEN	      11 /* root name, type, class, TTL, RDLENGTH */
#define SOA_FIXED     20 /* serial, refresh, retry, expire, minimum */

#define FLAG_QR	    0x8000
#define FLAG_TC	    0x0200
#define FLAG_RD	    0x0100
#define OPCODE(f)   (((f) >> 11) & 0xf)
#define RCODE(f)    ((f)&0xf)
#define RCODE_NXDOM 3

struct wname {
	uint8_t b[MAX_WIRE_NAME];
	size_t len;
};

struct rr {
	uint16_t type;
	uint16_t class;
	uint32_t ttl; /* top bit already cleared to 0 */
	size_t rdata;
	size_t rdlen;
	size_t next;
};

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)((p[0] << 8) | p[1]);
}

static uint32_t get32(const uint8_t *p)
{
	return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* RFC 2181 8: a TTL with the most significant bit set is treated as zero. */
static uint32_t ttl_value(uint32_t raw)
{
	return (raw & 0x80000000u) ? 0 : raw;
}

static uint8_t fold(uint8_t c)
{
	return (c >= 'A' && c <= 'Z') ? (uint8_t)(c + ('a' - 'A')) : c;
}

/* Length bytes are <= 63, below 'A': folding them is harmless. */
static bool names_equal(const struct wname *a, const struct wname *b)
{
	if (a->len != b->len)
		return false;
	for (size_t i = 0; i < a->len; i++) {
		if (fold(a->b[i]) != fold(b->b[i]))
			return false;
	}
	return true;
}

/* Dotted text (optional trailing dot) to wire form. */
static int name_to_wire(const char *name, struct wname *w)
{
	size_t n, start = 0, o = 0;

	if (!name)
		return -EINVAL;
	n = strnlen(name, MAX_TEXT_NAME + 3);
	if (n > 0 && name[n - 1] == '.')
		n--;
	if (n == 0 || n > MAX_TEXT_NAME)
		return -EINVAL;
	for (size_t i = 0; i <= n; i++) {
		size_t l;

		if (i < n && name[i] != '.')
			continue;
		l = i - start;
		if (l == 0 || l > MAX_LABEL)
			return -EINVAL;
		w->b[o++] = (uint8_t)l;
		memcpy(w->b + o, name + start, l);
		o += l;
		start = i + 1;
	}
	w->b[o++] = 0;
	w->len = o;
	return 0;
}

/*
 * Decode the (possibly compressed) name at `off`. *next receives the offset
 * just past the name's bytes at `off` (past the first pointer if any).
 */
static int read_name(const uint8_t *msg, size_t len, size_t off, struct wname *w, size_t *next)
{
	size_t pos = off, o = 0, end = 0;
	unsigned int jumps = 0;
	bool jumped = false;

	for (;;) {
		uint8_t c;

		if (pos >= len)
			return -1;
		c = msg[pos];
		if ((c & 0xc0) == 0xc0) {
			size_t ptr;

			if (len - pos < 2)
				return -1;
			ptr = ((size_t)(c & 0x3f) << 8) | msg[pos + 1];
			if (ptr >= pos || ptr < HDR_LEN || ++jumps > MAX_JUMPS)
				return -1;
			if (!jumped) {
				end = pos + 2;
				jumped = true;
			}
			pos = ptr;
			continue;
		}
		if (c & 0xc0) /* 0x40 (extended) and 0x80 (reserved) label types */
			return -1;
		if (c == 0) {
			w->b[o++] = 0;
			if (!jumped)
				end = pos + 1;
			break;
		}
		if (len - pos - 1 < c || o + 1 + c + 1 > MAX_WIRE_NAME)
			return -1;
		w->b[o] = c;
		memcpy(w->b + o + 1, msg + pos + 1, c);
		o += 1 + (size_t)c;
		pos += 1 + (size_t)c;
	}
	w->len = o;
	*next = end;
	return 0;
}

static int read_rr(const uint8_t *msg, size_t len, size_t off, struct wname *owner, struct rr *rr)
{
	size_t p;

	if (read_name(msg, len, off, owner, &p) || len - p < 10)
		return -1;
	rr->type = get16(msg + p);
	rr->class = get16(msg + p + 2);
	rr->ttl = ttl_value(get32(msg + p + 4));
	rr->rdlen = get16(msg + p + 8);
	rr->rdata = p + 10;
	if (len - rr->rdata < rr->rdlen)
		return -1;
	rr->next = rr->rdata + rr->rdlen;
	return 0;
}

/* The rdata of `rr` is exactly one name: decode it. */
static int read_rdata_name(const uint8_t *msg, size_t len, const struct rr *rr, struct wname *w)
{
	size_t end;

	if (read_name(msg, len, rr->rdata, w, &end) || end != rr->rdata + rr->rdlen)
		return -1;
	return 0;
}

/* Validate `count` records from `off`; *end receives the section's end. */
static int check_answers(const uint8_t *msg, size_t len, size_t off, unsigned int count,
			 size_t *end)
{
	struct wname owner, target;
	struct rr rr;

	for (unsigned int i = 0; i < count; i++) {
		if (read_rr(msg, len, off, &owner, &rr))
			return -1;
		if (rr.class == CLASS_IN) {
			if (rr.type == SBT_DNS_TYPE_A && rr.rdlen != 4)
				return -1;
			if (rr.type == SBT_DNS_TYPE_AAAA && rr.rdlen != 16)
				return -1;
			if (rr.type == SBT_DNS_TYPE_CNAME &&
			    read_rdata_name(msg, len, &rr, &target))
				return -1;
		}
		off = rr.next;
	}
	*end = off;
	return 0;
}

/* First IN CNAME owned by `cur` in the (validated) answer section: 1, 0 or -1. */
static int find_cname(const uint8_t *msg, size_t len, size_t off, unsigned int count,
		      const struct wname *cur, struct wname *target, uint32_t *ttl)
{
	struct wname owner;
	struct rr rr;

	for (unsigned int i = 0; i < count; i++) {
		if (read_rr(msg, len, off, &owner, &rr))
			return -1;
		if (rr.class == CLASS_IN && rr.type == SBT_DNS_TYPE_CNAME &&
		    names_equal(&owner, cur)) {
			if (read_rdata_name(msg, len, &rr, target))
				return -1;
			*ttl = rr.ttl;
			return 1;
		}
		off = rr.next;
	}
	return 0;
}

/*
 * Smallest min(TTL, MINIMUM) over the IN SOA records of the authority
 * section: 1 (found), 0 (none) or -1 (malformed section).
 */
static int scan_soa(const uint8_t *msg, size_t len, size_t off, unsigned int count, uint32_t *ttl)
{
	struct wname owner, w;
	struct rr rr;
	int found = 0;

	for (unsigned int i = 0; i < count; i++) {
		size_t p, rdend;
		uint32_t v;

		if (read_rr(msg, len, off, &owner, &rr))
			return -1;
		off = rr.next;
		if (rr.class != CLASS_IN || rr.type != TYPE_SOA)
			continue;
		rdend = rr.rdata + rr.rdlen;
		if (read_name(msg, len, rr.rdata, &w, &p) || p > rdend) /* MNAME */
			return -1;
		if (read_name(msg, len, p, &w, &p) || p > rdend) /* RNAME */
			return -1;
		if (rdend - p != SOA_FIXED)
			return -1;
		v = ttl_value(get32(msg + p + 16));
		if (rr.ttl < v)
			v = rr.ttl;
		if (!found || v < *ttl)
			*ttl = v;
		found = 1;
	}
	return found;
}

static size_t chain_index(const struct wname *chain, size_t nchain, const struct wname *w)
{
	for (size_t i = 0; i < nchain; i++) {
		if (names_equal(&chain[i], w))
			return i;
	}
	return nchain;
}

int sbt_dns_build_query(uint16_t id, const char *name, uint16_t qtype, uint8_t *buf, size_t len)
{
	struct wname w;
	size_t total;

	if (name_to_wire(name, &w))
		return -EINVAL;
	total = HDR_LEN + w.len + 4;
	if (!buf || len < total)
		return -ENOSPC;
	memset(buf, 0, HDR_LEN);
	put16(buf, id);
	put16(buf + 2, FLAG_RD);
	put16(buf + 4, 1);
	memcpy(buf + HDR_LEN, w.b, w.len);
	put16(buf + HDR_LEN + w.len, qtype);
	put16(buf + HDR_LEN + w.len + 2, CLASS_IN);
	return (int)total;
}

const char *sbt_dns_status_str(enum sbt_dns_status st)
{
	switch (st) {
	case SBT_DNS_OK:
		return "ok";
	case SBT_DNS_NXDOMAIN:
		return "nxdomain";
	case SBT_DNS_SERVFAIL:
		return "servfail";
	case SBT_DNS_TRUNCATED:
		return "truncated";
	case SBT_DNS_MALFORMED:
		return "malformed";
	case SBT_DNS_MISMATCH:
		return "mismatch";
	}
	return "unknown";
}

enum sbt_dns_status sbt_dns_parse_response(const uint8_t *msg, size_t len, uint16_t id,
					   const char *name, uint16_t qtype,
					   struct sbt_dns_addr *out, size_t max, size_t *n,
					   uint32_t *min_ttl)
{
	struct wname chain[MAX_CHAIN + 1], w;
	size_t nchain = 1, p, an_off, ns_off, written = 0, matched = 0;
	unsigned int qd, an, ns, rcode;
	uint32_t ttl = UINT32_MAX, soa_ttl = 0;
	uint16_t flags;
	int rc;

	if (n)
		*n = 0;
	if (min_ttl)
		*min_ttl = 0;
	if (!out)
		max = 0;
	if (!msg || len < HDR_LEN)
		return SBT_DNS_MALFORMED;
	flags = get16(msg + 2);
	if (get16(msg) != id || !(flags & FLAG_QR) || OPCODE(flags) != 0)
		return SBT_DNS_MISMATCH;
	if (flags & FLAG_TC)
		return SBT_DNS_TRUNCATED;
	rcode = RCODE(flags);
	qd = get16(msg + 4);
	an = get16(msg + 6);
	ns = get16(msg + 8);
	if (name_to_wire(name, &chain[0]))
		return SBT_DNS_MISMATCH;
	if (qd == 0 && rcode != 0 && rcode != RCODE_NXDOM)
		return SBT_DNS_SERVFAIL;
	if (qd != 1)
		return SBT_DNS_MISMATCH;

	/* Question: must echo ours. */
	if (read_name(msg, len, HDR_LEN, &w, &p) || len - p < 4)
		return SBT_DNS_MALFORMED;
	if (!names_equal(&w, &chain[0]) || get16(msg + p) != qtype ||
	    get16(msg + p + 2) != CLASS_IN)
		return SBT_DNS_MISMATCH;
	if (rcode != 0 && rcode != RCODE_NXDOM)
		return SBT_DNS_SERVFAIL;
	an_off = p + 4;
	if (check_answers(msg, len, an_off, an, &ns_off))
		return SBT_DNS_MALFORMED;

	/* CNAME chain from the queried name, at most MAX_CHAIN links. */
	for (;;) {
		uint32_t cttl = 0;

		rc = find_cname(msg, len, an_off, an, &chain[nchain - 1], &w, &cttl);
		if (rc < 0)
			return SBT_DNS_MALFORMED;
		if (rc == 0)
			break;
		if (nchain == MAX_CHAIN + 1 || chain_index(chain, nchain, &w) < nchain)
			return SBT_DNS_MALFORMED; /* too long, or a loop */
		chain[nchain++] = w;
		if (cttl < ttl)
			ttl = cttl;
	}

	if (rcode == 0 && (qtype == SBT_DNS_TYPE_A || qtype == SBT_DNS_TYPE_AAAA)) {
		struct rr rr;

		p = an_off;
		for (unsigned int i = 0; i < an; i++, p = rr.next) {
			if (read_rr(msg, len, p, &w, &rr))
				return SBT_DNS_MALFORMED;
			if (rr.class != CLASS_IN || rr.type != qtype ||
			    chain_index(chain, nchain, &w) == nchain)
				continue;
			matched++;
			if (rr.ttl < ttl)
				ttl = rr.ttl;
			if (written >= max)
				continue;
			memset(&out[written], 0, sizeof(out[written]));
			if (qtype == SBT_DNS_TYPE_A) {
				out[written].addr[10] = 0xff;
				out[written].addr[11] = 0xff;
				memcpy(out[written].addr + 12, msg + rr.rdata, 4);
			} else {
				memcpy(out[written].addr, msg + rr.rdata, 16);
			}
			out[written].ttl = rr.ttl;
			written++;
		}
		if (matched) {
			if (n)
				*n = written;
			if (min_ttl)
				*min_ttl = ttl;
			return SBT_DNS_OK;
		}
	}

	/* NXDOMAIN or NODATA: the negative TTL comes from the SOA (RFC 2308 5). */
	rc = scan_soa(msg, len, ns_off, ns, &soa_ttl);
	if (rc < 0)
		return SBT_DNS_MALFORMED;
	if (rc > 0 && min_ttl)
		*min_ttl = soa_ttl < ttl ? soa_ttl : ttl;
	return rcode == RCODE_NXDOM ? SBT_DNS_NXDOMAIN : SBT_DNS_OK;
}

/* --- queries from the sandbox (the proxy) ------------------------------- */

/*
 * The client's EDNS: an OPT record among the records after its question
 * (its class is the UDP size it takes, RFC 6891 6.2.3). Records that do not
 * parse end the search: then 512, as without EDNS.
 */
static void query_edns(const uint8_t *msg, size_t len, struct sbt_dns_question *q)
{
	unsigned int count = (unsigned int)get16(msg + 6) + get16(msg + 8) + get16(msg + 10);
	size_t off = q->end;
	struct wname owner;
	struct rr rr;

	q->udp_size = 512;
	for (unsigned int i = 0; i < count && !read_rr(msg, len, off, &owner, &rr); i++) {
		if (rr.type == TYPE_OPT && owner.len == 1) {
			q->edns = true;
			if (rr.class > 512)
				q->udp_size = rr.class;
			return;
		}
		off = rr.next;
	}
}

static bool ldh(uint8_t c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

/* Wire name to lower-case text; name_ok false when a byte could never match a rule. */
static void wire_to_text(const struct wname *w, char *out, size_t outlen, bool *ok)
{
	size_t i = 0, o = 0;

	*ok = true;
	while (i < w->len && w->b[i]) {
		size_t l = w->b[i++];

		if (o && o + 1 < outlen)
			out[o++] = '.';
		for (size_t k = 0; k < l && i < w->len; k++, i++) {
			uint8_t c = fold(w->b[i]);

			*ok = *ok && ldh(c);
			if (o + 1 < outlen)
				out[o++] = ldh(c) ? (char)c : '?';
		}
	}
	out[o < outlen ? o : outlen - 1] = '\0';
	if (o > MAX_TEXT_NAME)
		*ok = false;
}

int sbt_dns_parse_query(const uint8_t *msg, size_t len, struct sbt_dns_question *q)
{
	struct wname w;
	uint16_t flags;
	size_t p;

	if (!msg || !q || len < HDR_LEN)
		return -EINVAL;
	memset(q, 0, sizeof(*q));
	flags = get16(msg + 2);
	if ((flags & FLAG_QR) || OPCODE(flags) != 0 || get16(msg + 4) != 1)
		return -EINVAL;
	if (read_name(msg, len, HDR_LEN, &w, &p) || len - p < 4)
		return -EINVAL;
	q->id = get16(msg);
	q->qtype = get16(msg + p);
	q->qclass = get16(msg + p + 2);
	q->end = p + 4;
	wire_to_text(&w, q->name, sizeof(q->name), &q->name_ok);
	query_edns(msg, len, q);
	return 0;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)(v >> 16));
	put16(p + 2, (uint16_t)v);
}

int sbt_dns_build_upstream(uint16_t id, const struct sbt_dns_question *q, uint8_t *buf, size_t len)
{
	int n;

	if (!q || !q->name_ok || !q->name[0])
		return -EINVAL;
	n = sbt_dns_build_query(id, q->name, q->qtype, buf, len);
	if (n < 0)
		return n;
	put16(buf + n - 2, q->qclass);
	if (len - (size_t)n < OPT_LEN)
		return -ENOSPC;
	buf[n] = 0; /* the root owns the OPT record */
	put16(buf + n + 1, TYPE_OPT);
	put16(buf + n + 3, SBT_DNS_EDNS_UDP);
	put32(buf + n + 5, 0); /* extended rcode, version 0, no DO bit */
	put16(buf + n + 9, 0); /* no option */
	put16(buf + 10, 1);    /* ARCOUNT */
	return n + (int)OPT_LEN;
}

bool sbt_dns_same_question(const uint8_t *qmsg, const struct sbt_dns_question *q,
			   const uint8_t *resp, size_t rlen)
{
	size_t name_end;

	if (!qmsg || !q || !resp || q->end < HDR_LEN + 5)
		return false;
	name_end = q->end - 4;
	if (rlen < q->end || get16(resp + 4) != 1 ||
	    memcmp(resp + name_end, qmsg + name_end, 4) != 0)
		return false;
	for (size_t i = HDR_LEN; i < name_end; i++)
		if (fold(resp[i]) != fold(qmsg[i]))
			return false;
	return true;
}

int sbt_dns_build_answer(const uint8_t *qmsg, const struct sbt_dns_question *q, const uint8_t *resp,
			 size_t rlen, size_t max, uint8_t *out, size_t cap)
{
	unsigned int an, ns;
	size_t end = q ? q->end : 0;
	struct wname owner;
	struct rr rr;
	bool cut;

	if (!sbt_dns_same_question(qmsg, q, resp, rlen))
		return -EINVAL;
	an = get16(resp + 6);
	ns = get16(resp + 8);
	for (unsigned int i = 0; i < an + ns; i++, end = rr.next)
		if (read_rr(resp, rlen, end, &owner, &rr))
			return -EINVAL;
	if (q->edns)
		end = rlen;
	cut = end > max;
	if (cut)
		end = q->end;
	if (end > cap)
		return -ENOSPC;
	memcpy(out, resp, end);
	memcpy(out + HDR_LEN, qmsg + HDR_LEN, q->end - HDR_LEN); /* as the client asked it */
	put16(out, q->id);
	if (cut) { /* tell the client to ask over TCP */
		put16(out + 2, get16(out + 2) | FLAG_TC);
		put16(out + 6, 0);
		put16(out + 8, 0);
	}
	if (!q->edns || cut)
		put16(out + 10, 0);
	return (int)end;
}

int sbt_dns_build_refusal(const uint8_t *msg, const struct sbt_dns_question *q, uint8_t rcode,
			  uint8_t *out, size_t outlen)
{
	uint16_t flags;

	if (!msg || !q || q->end < HDR_LEN || q->end > outlen || q->end > 0xffff)
		return -ENOSPC;
	memcpy(out, msg, q->end);
	flags = get16(msg + 2);
	flags = (uint16_t)(FLAG_QR | (flags & FLAG_RD) | 0x0080 /* RA */ | (rcode & 0xf));
	put16(out + 2, flags);
	put16(out + 4, 1);
	put16(out + 6, 0);
	put16(out + 8, 0);
	put16(out + 10, 0);
	return (int)q->end;
}

uint16_t sbt_dns_msg_id(const uint8_t *msg)
{
	return get16(msg);
}

void sbt_dns_set_id(uint8_t *msg, uint16_t id)
{
	put16(msg, id);
}

/* --- resolv.conf ------------------------------------------------------- */

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

static int parse_ns_addr(char *tok, uint8_t addr[16])
{
	uint8_t a[16];
	char *pct;

	if (strchr(tok, ':')) {
		pct = strchr(tok, '%');
		if (pct) {
			if (pct[1] == '\0')
				return -1;
			*pct = '\0';
		}
		if (inet_pton(AF_INET6, tok, a) != 1)
			return -1;
	} else {
		if (inet_pton(AF_INET, tok, a + 12) != 1)
			return -1;
		memset(a, 0, 10);
		a[10] = 0xff;
		a[11] = 0xff;
	}
	memcpy(addr, a, 16);
	return 0;
}

/* One line (without its '\n'): "nameserver ADDR [ignored...]". */
static int parse_ns_line(const char *s, size_t n, uint8_t addr[16])
{
	static const char kw[] = "nameserver";
	const size_t kwlen = sizeof(kw) - 1;
	char tok[64];
	size_t i = 0, start;

	while (i < n && is_blank(s[i]))
		i++;
	if (n - i < kwlen || memcmp(s + i, kw, kwlen) != 0)
		return -1; /* also comments: '#' or ';' */
	i += kwlen;
	if (i >= n || !is_blank(s[i]))
		return -1;
	while (i < n && is_blank(s[i]))
		i++;
	start = i;
	while (i < n && !is_blank(s[i]))
		i++;
	if (i == start || i - start >= sizeof(tok))
		return -1;
	memcpy(tok, s + start, i - start);
	tok[i - start] = '\0';
	return parse_ns_addr(tok, addr);
}

int sbt_resolv_conf_nameserver(const char *text, uint8_t addr[16])
{
	const char *p = text;

	if (!text || !addr)
		return -ENOENT;
	while (*p) {
		const char *eol = strchr(p, '\n');
		size_t ll = eol ? (size_t)(eol - p) : strlen(p);

		if (parse_ns_line(p, ll, addr) == 0)
			return 0;
		p += ll;
		if (*p)
			p++;
	}
	return -ENOENT;
}
