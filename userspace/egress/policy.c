// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Egress policy: rule parsing and compilation to LPM entries (see policy.h).
 *
 * Parsing is strict on purpose: an allowlist that silently means something
 * else than what was written is worse than one that is refused.
 */
#include "egress/policy.h"
#include "egress/policy_int.h"
#include "sbtrace.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define QUOTE_MAX     48 /* bytes of a token shown in an error message */
#define ADDR_TEXT_MAX 64

/* --- small helpers ------------------------------------------------------ */

void sbt_policy_set_err(struct sbt_parse_error *err, size_t col, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return;
	err->col = (unsigned int)col;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
}

/* A token for an error message: non-printable bytes as \xNN, long ones cut with "...". */
static const char *quote(char *buf, size_t size, const char *s, size_t len)
{
	size_t o = 0, i;

	for (i = 0; i < len && o + 8 < size; i++) {
		unsigned char c = (unsigned char)s[i];

		if (o >= QUOTE_MAX) {
			memcpy(buf + o, "...", 3);
			o += 3;
			break;
		}
		if (c < 0x20 || c >= 0x7f || c == '\\')
			o += (size_t)snprintf(buf + o, size - o, "\\x%02x", c);
		else
			buf[o++] = (char)c;
	}
	buf[o] = '\0';
	return buf;
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_alpha(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static char to_lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

static bool tok_eq(const char *s, size_t len, const char *word)
{
	return strlen(word) == len && memcmp(s, word, len) == 0;
}

static bool tok_eq_nocase(const char *s, size_t len, const char *word)
{
	size_t i;

	if (strlen(word) != len)
		return false;
	for (i = 0; i < len; i++)
		if (to_lower(s[i]) != word[i])
			return false;
	return true;
}

bool sbt_addr_is_mapped(const uint8_t a[16])
{
	static const uint8_t pfx[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	return memcmp(a, pfx, sizeof(pfx)) == 0;
}

/* Does the network addr/prefix contain `x`? */
bool sbt_prefix_covers(const uint8_t net[16], unsigned int prefix, const uint8_t x[16])
{
	unsigned int full = prefix / 8, bits = prefix % 8;

	if (memcmp(net, x, full) != 0)
		return false;
	if (bits) {
		uint8_t mask = (uint8_t)(0xff << (8 - bits));

		if ((net[full] & mask) != (x[full] & mask))
			return false;
	}
	return true;
}

void sbt_prefix_mask(uint8_t a[16], unsigned int prefix)
{
	unsigned int i;

	for (i = 0; i < 16; i++) {
		if (prefix >= 8 * (i + 1))
			continue;
		if (prefix <= 8 * i)
			a[i] = 0;
		else
			a[i] &= (uint8_t)(0xff << (8 - (prefix - 8 * i)));
	}
}

/* --- addresses ------------------------------------------------------------ */

/* RFC 5952: lower-case hex, no leading zeros, the first longest run of >= 2 zero groups as "::" */
static void v6_str(const uint8_t a[16], char *buf, size_t len)
{
	unsigned int w[8], i, best = 0, best_len = 0, run = 0;
	size_t o = 0;

	for (i = 0; i < 8; i++) {
		w[i] = (unsigned int)a[(size_t)i * 2] << 8 | a[(size_t)i * 2 + 1];
		run = w[i] ? 0 : run + 1;
		if (run > best_len) {
			best_len = run;
			best = i + 1 - run;
		}
	}
	if (best_len < 2)
		best_len = 0;
	buf[0] = '\0';
	for (i = 0; i < 8 && o < len; i++) {
		int k;

		if (best_len && i == best) {
			k = snprintf(buf + o, len - o, "::");
			i += best_len - 1;
		} else {
			k = snprintf(buf + o, len - o, "%s%x",
				     i && !(best_len && i == best + best_len) ? ":" : "", w[i]);
		}
		if (k < 0)
			break;
		o += (size_t)k;
	}
}

void sbt_addr_str(const uint8_t addr[16], char *buf, size_t len)
{
	if (!buf || !len)
		return;
	if (sbt_addr_is_mapped(addr))
		snprintf(buf, len, "%u.%u.%u.%u", addr[12], addr[13], addr[14], addr[15]);
	else
		v6_str(addr, buf, len);
}

/* Dotted quad syntax: four parts of 1-3 digits, no leading zeros (inet_pton checks values) */
static bool v4_syntax_ok(const char *s)
{
	int parts = 0, digits = 0;

	for (;; s++) {
		if (is_digit(*s)) {
			if (digits == 1 && s[-1] == '0')
				return false;
			if (++digits > 3)
				return false;
		} else if (*s == '.' || *s == '\0') {
			if (!digits)
				return false;
			parts++;
			digits = 0;
			if (!*s)
				break;
		} else {
			return false;
		}
	}
	return parts == 4;
}

int sbt_addr_parse(const char *s, uint8_t addr[16], bool *v4)
{
	char buf[ADDR_TEXT_MAX];
	size_t len, i;
	uint8_t a[16] = { 0 };

	if (!s)
		return -EINVAL;
	len = strlen(s);
	if (!len || len >= sizeof(buf))
		return -EINVAL;
	for (i = 0; i < len; i++) {
		char c = s[i];

		if (!is_digit(c) && !(to_lower(c) >= 'a' && to_lower(c) <= 'f') && c != ':' &&
		    c != '.')
			return -EINVAL;
	}
	memcpy(buf, s, len + 1);
	if (!strchr(buf, ':')) {
		if (!v4_syntax_ok(buf) || inet_pton(AF_INET, buf, a + 12) != 1)
			return -EINVAL;
		a[10] = a[11] = 0xff;
	} else {
		const char *dot = strchr(buf, '.');

		/* an embedded dotted quad is the last group, after the last ':' */
		if (dot && !v4_syntax_ok(strrchr(buf, ':') + 1))
			return -EINVAL;
		if (inet_pton(AF_INET6, buf, a) != 1)
			return -EINVAL;
	}
	memcpy(addr, a, 16);
	if (v4)
		*v4 = sbt_addr_is_mapped(a);
	return 0;
}

/* "192.0.2.0/24" for mapped prefixes of /96 and longer, else "2001:db8::/32". */
void sbt_prefix_str(const uint8_t addr[16], unsigned int prefix, char *buf, size_t len)
{
	char a[ADDR_TEXT_MAX];

	if (sbt_addr_is_mapped(addr) && prefix >= 96) {
		sbt_addr_str(addr, a, sizeof(a));
		snprintf(buf, len, "%s/%u", a, prefix - 96);
	} else {
		v6_str(addr, a, sizeof(a));
		snprintf(buf, len, "%s/%u", a, prefix);
	}
}

/* --- tokens ------------------------------------------------------------- */

struct lexer {
	const char *s;
	size_t len; /* without a trailing newline */
	size_t pos;
};

struct token {
	const char *s;
	size_t len;
	size_t col; /* 1-based */
};

/* Next token, or false at the end of the line or at a comment. */
static bool next_token(struct lexer *lx, struct token *t)
{
	while (lx->pos < lx->len && (lx->s[lx->pos] == ' ' || lx->s[lx->pos] == '\t'))
		lx->pos++;
	if (lx->pos >= lx->len || lx->s[lx->pos] == '#') {
		lx->pos = lx->len;
		return false;
	}
	t->s = lx->s + lx->pos;
	t->col = lx->pos + 1;
	while (lx->pos < lx->len && lx->s[lx->pos] != ' ' && lx->s[lx->pos] != '\t')
		lx->pos++;
	t->len = (size_t)(lx->s + lx->pos - t->s);
	return true;
}

/* Strips one trailing "\n" / "\r\n"; any other control character is an error. */
static int lexer_init(struct lexer *lx, const char *s, struct sbt_parse_error *err)
{
	size_t i;

	lx->s = s;
	lx->len = strlen(s);
	lx->pos = 0;
	if (lx->len && s[lx->len - 1] == '\n')
		lx->len--;
	if (lx->len && s[lx->len - 1] == '\r')
		lx->len--;
	for (i = 0; i < lx->len; i++) {
		unsigned char c = (unsigned char)s[i];

		if ((c < 0x20 && c != '\t') || c == 0x7f) {
			sbt_policy_set_err(err, i + 1,
					   "control character 0x%02x in the rule: remove it", c);
			return -1;
		}
	}
	return 0;
}

/* --- rule parts ------------------------------------------------------------ */

static int parse_prefix(const struct token *t, size_t slash, bool text_v4, unsigned int *out,
			struct sbt_parse_error *err)
{
	const char *p = t->s + slash + 1;
	size_t n = t->len - slash - 1, i;
	unsigned int max = text_v4 ? 32 : 128, v = 0;
	char q[QUOTE_MAX + 16];

	quote(q, sizeof(q), t->s + slash, t->len - slash);
	for (i = 0; i < n; i++)
		if (!is_digit(p[i]))
			break;
	if (!n || i < n)
		goto bad;
	if (n > 1 && p[0] == '0') {
		sbt_policy_set_err(err, t->col + slash,
				   "bad prefix length '%s': leading zeros are not allowed", q);
		return -1;
	}
	if (n > 3)
		goto bad;
	for (i = 0; i < n; i++)
		v = v * 10 + (unsigned int)(p[i] - '0');
	if (v > max)
		goto bad;
	*out = v;
	return 0;
bad:
	sbt_policy_set_err(err, t->col + slash, "bad prefix length '%s': %s allows 0..%u", q,
			   text_v4 ? "IPv4" : "IPv6", max);
	return -1;
}

static int parse_cidr(const struct token *t, struct sbt_rule *rule, struct sbt_parse_error *err)
{
	char q[QUOTE_MAX + 16], a[ADDR_TEXT_MAX], want[ADDR_TEXT_MAX + 8];
	const char *slash = memchr(t->s, '/', t->len);
	size_t alen = slash ? (size_t)(slash - t->s) : t->len, i;
	unsigned int plen;
	uint8_t addr[16], net[16];
	bool text_v4 = memchr(t->s, ':', alen) == NULL, letters = false;

	quote(q, sizeof(q), t->s, t->len);
	if (memchr(t->s, '%', alen)) {
		sbt_policy_set_err(err, t->col, "bad address '%s': scope ids are not allowed", q);
		return -1;
	}
	for (i = 0; i < alen; i++)
		letters |= is_alpha(t->s[i]);
	if (alen >= sizeof(a)) {
		sbt_policy_set_err(err, t->col, "bad address '%s': too long", q);
		return -1;
	}
	memcpy(a, t->s, alen);
	a[alen] = '\0';
	if (sbt_addr_parse(a, addr, NULL)) {
		if (!alen)
			sbt_policy_set_err(err, t->col,
					   "bad address '%s': missing address before '/'", q);
		else if (text_v4 && letters)
			sbt_policy_set_err(err, t->col, "bad address '%s': use 'host' for names",
					   q);
		else if (text_v4)
			sbt_policy_set_err(
				err, t->col,
				"bad IPv4 address '%s': use a.b.c.d, each 0..255 without leading "
				"zeros",
				q);
		else
			sbt_policy_set_err(err, t->col, "bad IPv6 address '%s': use RFC 4291 text",
					   q);
		return -1;
	}
	if (slash) {
		if (parse_prefix(t, alen, text_v4, &plen, err))
			return -1;
	} else {
		plen = text_v4 ? 32 : 128;
	}
	if (text_v4)
		plen += 96;
	memcpy(net, addr, 16);
	sbt_prefix_mask(net, plen);
	if (memcmp(net, addr, 16) != 0) {
		if (text_v4) {
			sbt_addr_str(net, want, sizeof(want));
		} else if (sbt_addr_is_mapped(net)) {
			char v4[ADDR_TEXT_MAX];

			sbt_addr_str(net, v4, sizeof(v4));
			snprintf(want, sizeof(want), "::ffff:%s", v4);
		} else {
			v6_str(net, want, sizeof(want));
		}
		sbt_policy_set_err(err, t->col, "host bits set in %s: did you mean %s/%u?", q, want,
				   text_v4 ? plen - 96 : plen);
		return -1;
	}
	memcpy(rule->addr, net, 16);
	rule->prefix = (uint8_t)plen;
	rule->v4 = sbt_addr_is_mapped(net) && plen >= 96;
	return 0;
}

static int parse_host(const struct token *t, struct sbt_rule *rule, struct sbt_parse_error *err)
{
	char q[QUOTE_MAX + 16];
	size_t len = t->len, i, label = 0, last = 0;
	bool last_numeric = true;
	uint8_t dummy[16];

	quote(q, sizeof(q), t->s, t->len);
	for (i = 0; i < len; i++) {
		char c = t->s[i];

		if ((unsigned char)c >= 0x80) {
			sbt_policy_set_err(
				err, t->col + i,
				"bad host name '%s': not ASCII, use its punycode (xn--) form", q);
			return -1;
		}
		if (!is_alpha(c) && !is_digit(c) && c != '-' && c != '_' && c != '.') {
			char cq[16];

			sbt_policy_set_err(
				err, t->col + i,
				"bad host name '%s': '%s' is not allowed (letters, digits, '-', "
				"'_', '.')",
				q, quote(cq, sizeof(cq), &t->s[i], 1));
			return -1;
		}
	}
	if (len && t->s[len - 1] == '.')
		len--; /* the root label */
	if (len > SBT_HOST_MAX - 1) {
		sbt_policy_set_err(err, t->col, "bad host name '%s': longer than %d bytes", q,
				   SBT_HOST_MAX - 1);
		return -1;
	}
	for (i = 0; i <= len; i++) {
		if (i < len && t->s[i] != '.') {
			if (!label) {
				last = i;
				last_numeric = true;
			}
			last_numeric &= is_digit(t->s[i]);
			label++;
			continue;
		}
		if (!label) {
			sbt_policy_set_err(err, t->col, "bad host name '%s': empty label", q);
			return -1;
		}
		if (label > 63) {
			sbt_policy_set_err(err, t->col,
					   "bad host name '%s': a label is longer than 63 bytes",
					   q);
			return -1;
		}
		if (t->s[last] == '-' || t->s[i - 1] == '-') {
			sbt_policy_set_err(err, t->col,
					   "bad host name '%s': a label starts or ends with '-'",
					   q);
			return -1;
		}
		label = 0;
	}
	if (last_numeric) {
		char a[SBT_HOST_MAX];

		memcpy(a, t->s, len);
		a[len] = '\0';
		if (sbt_addr_parse(a, dummy, NULL) == 0)
			sbt_policy_set_err(err, t->col,
					   "'%s' is an address, not a host name: use cidr %s", q,
					   a);
		else
			sbt_policy_set_err(
				err, t->col,
				"bad host name '%s': the last label is numeric (use cidr for "
				"addresses)",
				q);
		return -1;
	}
	for (i = 0; i < len; i++)
		rule->host[i] = to_lower(t->s[i]);
	rule->host[len] = '\0';
	return 0;
}

/* One port number: the digits at s[0..n). */
static int parse_port_num(const char *s, size_t n, size_t col, const char *whole, uint16_t *out,
			  struct sbt_parse_error *err)
{
	char q[QUOTE_MAX + 16];
	unsigned long v = 0;
	size_t i;

	for (i = 0; i < n; i++)
		if (!is_digit(s[i]))
			break;
	if (!n || i < n) {
		sbt_policy_set_err(err, col,
				   "bad port '%s': use port N or port N-M with N, M in 1..65535",
				   whole);
		return -1;
	}
	if (n > 1 && s[0] == '0') {
		sbt_policy_set_err(err, col, "bad port '%s': leading zeros are not allowed", whole);
		return -1;
	}
	for (i = 0; i < n && v <= 65535; i++)
		v = v * 10 + (unsigned long)(s[i] - '0');
	if (v < 1 || v > 65535) {
		sbt_policy_set_err(err, col, "port '%s' out of range: use 1..65535",
				   quote(q, sizeof(q), s, n));
		return -1;
	}
	*out = (uint16_t)v;
	return 0;
}

static int parse_port(const struct token *t, struct sbt_rule *rule, struct sbt_parse_error *err)
{
	char q[QUOTE_MAX + 16];
	const char *dash = memchr(t->s, '-', t->len);
	uint16_t lo, hi;

	quote(q, sizeof(q), t->s, t->len);
	if (!dash) {
		if (parse_port_num(t->s, t->len, t->col, q, &lo, err))
			return -1;
		hi = lo;
	} else {
		size_t d = (size_t)(dash - t->s);

		if (!d || d + 1 == t->len) {
			sbt_policy_set_err(
				err, t->col,
				"bad port '%s': use port N or port N-M with N, M in 1..65535", q);
			return -1;
		}
		if (parse_port_num(t->s, d, t->col, q, &lo, err) ||
		    parse_port_num(dash + 1, t->len - d - 1, t->col + d + 1, q, &hi, err))
			return -1;
		if (lo > hi) {
			sbt_policy_set_err(err, t->col, "port range %u-%u is reversed: use %u-%u",
					   (unsigned)lo, (unsigned)hi, (unsigned)hi, (unsigned)lo);
			return -1;
		}
	}
	rule->port_lo = lo;
	rule->port_hi = hi;
	return 0;
}

static int parse_proto(const struct token *t, struct sbt_rule *rule, struct sbt_parse_error *err)
{
	char q[QUOTE_MAX + 16];

	if (tok_eq(t->s, t->len, "tcp")) {
		rule->proto = SBT_PROTO_TCP;
	} else if (tok_eq(t->s, t->len, "udp")) {
		rule->proto = SBT_PROTO_UDP;
	} else {
		bool upper =
			tok_eq_nocase(t->s, t->len, "tcp") || tok_eq_nocase(t->s, t->len, "udp");

		sbt_policy_set_err(err, t->col, "unknown protocol '%s': use tcp or udp%s",
				   quote(q, sizeof(q), t->s, t->len), upper ? " (lower-case)" : "");
		return -1;
	}
	return 0;
}

static void rule_text(struct sbt_rule *rule)
{
	char a[SBT_RULE_TEXT_MAX];
	size_t o;

	if (rule->kind == SBT_RULE_CIDR) {
		sbt_prefix_str(rule->addr, rule->prefix, a, sizeof(a));
		o = (size_t)snprintf(rule->text, sizeof(rule->text), "cidr %s", a);
	} else {
		o = (size_t)snprintf(rule->text, sizeof(rule->text), "host %s", rule->host);
	}
	if (o < sizeof(rule->text) && !(rule->port_lo == 0 && rule->port_hi == 65535)) {
		if (rule->port_lo == rule->port_hi)
			o += (size_t)snprintf(rule->text + o, sizeof(rule->text) - o, " port %u",
					      rule->port_lo);
		else
			o += (size_t)snprintf(rule->text + o, sizeof(rule->text) - o, " port %u-%u",
					      rule->port_lo, rule->port_hi);
	}
	if (o < sizeof(rule->text) && rule->proto != SBT_PROTO_ANY)
		snprintf(rule->text + o, sizeof(rule->text) - o, " proto %s",
			 rule->proto == SBT_PROTO_TCP ? "tcp" : "udp");
}

/*
 * Everything after the rule keyword: target, then options. `kw` is the
 * keyword token (NULL for --allow-* arguments, which have none).
 */
static int parse_body(enum sbt_rule_kind kind, struct lexer *lx, const struct token *kw,
		      struct sbt_rule *rule, struct sbt_parse_error *err)
{
	const char *what = kind == SBT_RULE_CIDR ? "address" : "host name";
	bool have_port = false, have_proto = false;
	struct token t, v;
	char q[QUOTE_MAX + 16];

	rule->kind = kind;
	rule->port_lo = 0;
	rule->port_hi = 65535;
	rule->proto = SBT_PROTO_ANY;
	if (!next_token(lx, &t)) {
		if (kw)
			sbt_policy_set_err(err, kw->col, "missing %s after '%s'", what,
					   kind == SBT_RULE_CIDR ? "cidr" : "host");
		else
			sbt_policy_set_err(err, 1, "missing %s", what);
		return -1;
	}
	if (kind == SBT_RULE_CIDR ? parse_cidr(&t, rule, err) : parse_host(&t, rule, err))
		return -1;

	while (next_token(lx, &t)) {
		bool is_port = tok_eq(t.s, t.len, "port"), is_proto = tok_eq(t.s, t.len, "proto");

		quote(q, sizeof(q), t.s, t.len);
		if ((is_port && have_port) || (is_proto && have_proto)) {
			sbt_policy_set_err(err, t.col, "'%s' given twice", q);
			return -1;
		}
		if (!is_port && !is_proto) {
			const char *expect = have_port	  ? "proto"
					     : have_proto ? "port"
							  : "port or proto";

			if (have_port && have_proto)
				sbt_policy_set_err(err, t.col, "trailing text '%s' after the rule",
						   q);
			else if (tok_eq_nocase(t.s, t.len, "port") ||
				 tok_eq_nocase(t.s, t.len, "proto"))
				sbt_policy_set_err(
					err, t.col,
					"unknown keyword '%s': keywords are lower-case, expected "
					"%s",
					q, expect);
			else
				sbt_policy_set_err(err, t.col, "unknown keyword '%s': expected %s",
						   q, expect);
			return -1;
		}
		if (!next_token(lx, &v)) {
			if (is_port)
				sbt_policy_set_err(
					err, t.col,
					"missing port number after 'port': use port N or port N-M");
			else
				sbt_policy_set_err(
					err, t.col,
					"missing protocol after 'proto': use proto tcp or proto "
					"udp");
			return -1;
		}
		if (is_port) {
			if (parse_port(&v, rule, err))
				return -1;
			have_port = true;
		} else {
			if (parse_proto(&v, rule, err))
				return -1;
			have_proto = true;
		}
	}
	rule_text(rule);
	return 1;
}

int sbt_rule_parse(const char *line, struct sbt_rule *rule, struct sbt_parse_error *err)
{
	struct lexer lx;
	struct token t;

	if (err)
		memset(err, 0, sizeof(*err));
	memset(rule, 0, sizeof(*rule));
	if (!line) {
		sbt_policy_set_err(err, 1, "no rule text");
		return -1;
	}
	if (lexer_init(&lx, line, err))
		return -1;
	if (!next_token(&lx, &t))
		return 0;
	if (tok_eq(t.s, t.len, "cidr"))
		return parse_body(SBT_RULE_CIDR, &lx, &t, rule, err);
	if (tok_eq(t.s, t.len, "host"))
		return parse_body(SBT_RULE_HOST, &lx, &t, rule, err);
	/* Only a keyword in the wrong case is shown: a line that is no rule may be a secret. */
	if (tok_eq_nocase(t.s, t.len, "cidr") || tok_eq_nocase(t.s, t.len, "host"))
		sbt_policy_set_err(
			err, t.col,
			"unknown rule '%.4s': keywords are lower-case, expected cidr or host", t.s);
	else
		sbt_policy_set_err(err, t.col, "not a rule: a rule starts with cidr or host");
	return -1;
}

int sbt_rule_parse_arg(enum sbt_rule_kind kind, const char *arg, struct sbt_rule *rule,
		       struct sbt_parse_error *err)
{
	struct lexer lx, lx2;
	struct token t, t2;

	if (err)
		memset(err, 0, sizeof(*err));
	memset(rule, 0, sizeof(*rule));
	if (kind != SBT_RULE_CIDR && kind != SBT_RULE_HOST) {
		sbt_policy_set_err(err, 1, "unknown rule kind %d", (int)kind);
		return -1;
	}
	if (!arg) {
		sbt_policy_set_err(err, 1, "missing %s",
				   kind == SBT_RULE_CIDR ? "address" : "host name");
		return -1;
	}
	if (lexer_init(&lx, arg, err))
		return -1;
	/*
	 * "--allow-cidr 'cidr 10.0.0.0/8'" is a likely slip: say so rather than
	 * "bad address" (but "host" alone, or "host port 80", is a host name).
	 */
	lx2 = lx;
	if (next_token(&lx2, &t) && (tok_eq(t.s, t.len, "cidr") || tok_eq(t.s, t.len, "host")) &&
	    next_token(&lx2, &t2) && !tok_eq(t2.s, t2.len, "port") &&
	    !tok_eq(t2.s, t2.len, "proto")) {
		sbt_policy_set_err(err, t.col,
				   "unexpected keyword '%.4s': give the rule without it", t.s);
		return -1;
	}
	return parse_body(kind, &lx, NULL, rule, err);
}
