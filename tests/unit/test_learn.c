// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for learn mode's aggregation and proposal (userspace/egress/learn.c). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "egress/learn.h"
#include "egress/policy.h"

static void addr4(const char *s, uint8_t a[16])
{
	bool v4;

	assert_int_equal(sbt_addr_parse(s, a, &v4), 0);
}

static void add(struct sbt_learn *l, const char *name, const char *addr, uint16_t port,
		uint8_t proto)
{
	uint8_t a[16];

	addr4(addr, a);
	assert_int_equal(sbt_learn_add(l, name, a, port, proto, 1), 0);
}

/* The proposal's rule texts, one a line. */
static void expect_rules(const struct sbt_learn *l, const char *want)
{
	struct sbt_learn_proposal p;
	char got[4096] = "";
	size_t o = 0;

	assert_int_equal(sbt_learn_propose(l, &p), 0);
	for (size_t i = 0; i < p.n; i++)
		o += (size_t)snprintf(got + o, sizeof(got) - o, "%s%s\n",
				      p.r[i].resolved ? "" : "! ", p.r[i].rule.text);
	assert_string_equal(got, want);
	sbt_learn_proposal_free(&p);
}

static void test_dedup_and_ports(void **state)
{
	struct sbt_learn l;

	(void)state;
	sbt_learn_init(&l);
	/* rotating subsets: other addresses, the same name */
	add(&l, "b.test", "192.0.2.10", 443, SBT_PROTO_TCP);
	add(&l, "b.test", "192.0.2.11", 443, SBT_PROTO_TCP);
	add(&l, "B.Test.", "192.0.2.12", 443, SBT_PROTO_TCP);
	/* consecutive ports merge into a range, others stay apart */
	add(&l, "a.test", "192.0.2.20", 8080, SBT_PROTO_TCP);
	add(&l, "a.test", "192.0.2.20", 8081, SBT_PROTO_TCP);
	add(&l, "a.test", "192.0.2.20", 8082, SBT_PROTO_TCP);
	add(&l, "a.test", "192.0.2.20", 80, SBT_PROTO_TCP);
	/* the same port over TCP and UDP: one rule without proto */
	add(&l, "c.test", "192.0.2.30", 53, SBT_PROTO_TCP);
	add(&l, "c.test", "192.0.2.30", 53, SBT_PROTO_UDP);
	add(&l, "c.test", "192.0.2.30", 443, SBT_PROTO_UDP);
	assert_int_equal(l.n, 8);
	assert_int_equal(l.d[0].connects, 3);
	add(&l, "b.test", "192.0.2.10", 443, SBT_PROTO_TCP);
	assert_int_equal(l.n, 8);
	assert_int_equal(l.d[0].connects, 4);
	expect_rules(&l, "host a.test port 80 proto tcp\n"
			 "host a.test port 8080-8082 proto tcp\n"
			 "host b.test port 443 proto tcp\n"
			 "host c.test port 443 proto udp\n"
			 "host c.test port 53\n");
	sbt_learn_free(&l);
}

static void test_unresolved_apart(void **state)
{
	struct sbt_learn l;
	struct sbt_learn_proposal p;
	uint8_t a[16];

	(void)state;
	sbt_learn_init(&l);
	add(&l, NULL, "203.0.113.7", 80, SBT_PROTO_TCP);
	add(&l, "z.test", "192.0.2.1", 443, SBT_PROTO_TCP);
	add(&l, NULL, "2001:db8::7", 443, SBT_PROTO_TCP);
	/* a name no host rule can hold is kept by its address */
	add(&l, "bad name'\n#x", "198.51.100.9", 22, SBT_PROTO_TCP);
	addr4("192.0.2.1", a);
	assert_int_equal(sbt_learn_add(&l, "z.test", a, 1, 1 /* ICMP */, 1), -EINVAL);
	assert_int_equal(sbt_learn_add(&l, "z.test", a, 0, SBT_PROTO_UDP, 1), -EINVAL);
	expect_rules(&l, "host z.test port 443 proto tcp\n"
			 "! cidr 198.51.100.9/32 port 22 proto tcp\n"
			 "! cidr 2001:db8::7/128 port 443 proto tcp\n"
			 "! cidr 203.0.113.7/32 port 80 proto tcp\n");
	assert_int_equal(sbt_learn_propose(&l, &p), 0);
	assert_int_equal(p.nr_unresolved, 3);
	sbt_learn_proposal_free(&p);
	sbt_learn_free(&l);
}

/* A name behind a CNAME is learned under the name asked: the one a host rule matches. */
static void test_cname(void **state)
{
	struct sbt_learn l;

	(void)state;
	sbt_learn_init(&l);
	add(&l, "alias.test", "192.0.2.40", 443, SBT_PROTO_TCP);
	expect_rules(&l, "host alias.test port 443 proto tcp\n");
	sbt_learn_free(&l);
}

static void test_formats_parse(void **state)
{
	unsigned int m = 0;
	const char *bad;
	size_t len;

	(void)state;
	assert_int_equal(sbt_learn_formats_parse("flags,cilium", &m, &bad, &len), 0);
	assert_int_equal(m, SBT_LEARN_FLAGS | SBT_LEARN_CILIUM);
	assert_int_equal(sbt_learn_formats_parse("systemd", &m, &bad, &len), 0);
	assert_int_equal(m, SBT_LEARN_FLAGS | SBT_LEARN_CILIUM | SBT_LEARN_SYSTEMD);
	assert_int_equal(sbt_learn_formats_parse("sbtrace,yaml", &m, &bad, &len), -EINVAL);
	assert_int_equal(len, 4);
	assert_memory_equal(bad, "yaml", 4);
	assert_int_equal(sbt_learn_formats_parse("", &m, &bad, &len), -EINVAL);
	assert_int_equal(sbt_learn_formats_parse("flags,", &m, &bad, &len), -EINVAL);
	assert_string_equal(sbt_learn_format_name(SBT_LEARN_SYSTEMD), "systemd");
	assert_null(sbt_learn_format_name(3));
}

/* Two names and a hard-coded address, the sample every dialect renders. */
static void sample(struct sbt_learn *l, struct sbt_learn_proposal *p)
{
	sbt_learn_init(l);
	add(l, "api.test", "192.0.2.10", 443, SBT_PROTO_TCP);
	add(l, "cdn.test", "192.0.2.11", 80, SBT_PROTO_TCP);
	add(l, "cdn.test", "192.0.2.11", 81, SBT_PROTO_TCP);
	add(l, NULL, "203.0.113.7", 8443, SBT_PROTO_TCP);
	assert_int_equal(sbt_learn_propose(l, p), 0);
}

static void test_render_sbtrace(void **state)
{
	struct sbt_learn l;
	struct sbt_learn_proposal p;
	char *s;

	(void)state;
	sample(&l, &p);
	s = sbt_learn_render(&p, SBT_LEARN_SBTRACE, "sb");
	assert_non_null(s);
	assert_string_equal(
		s, "# proposed by sbtrace --egress learn: what ran, allowed (--allowlist FILE)\n"
		   "host api.test port 443 proto tcp\n"
		   "host cdn.test port 80-81 proto tcp\n"
		   "# never resolved: a hard-coded address\n"
		   "cidr 203.0.113.7/32 port 8443 proto tcp\n");
	/* every line parses back as the rule it came from */
	for (char *line = strtok(s, "\n"); line; line = strtok(NULL, "\n")) {
		struct sbt_parse_error err;
		struct sbt_rule r;

		assert_int_not_equal(sbt_rule_parse(line, &r, &err), -1);
	}
	free(s);
	sbt_learn_proposal_free(&p);
	sbt_learn_free(&l);
}

static void test_render_flags(void **state)
{
	struct sbt_learn l;
	struct sbt_learn_proposal p;
	char *s;

	(void)state;
	sample(&l, &p);
	s = sbt_learn_render(&p, SBT_LEARN_FLAGS, "sb");
	assert_string_equal(s, "--allow-host 'api.test port 443 proto tcp' \\\n"
			       "--allow-host 'cdn.test port 80-81 proto tcp' \\\n"
			       "--allow-cidr '203.0.113.7/32 port 8443 proto tcp'\n");
	free(s);
	sbt_learn_proposal_free(&p);
	sbt_learn_free(&l);
}

static json_object *at(json_object *o, const char *key)
{
	json_object *v = NULL;

	assert_true(json_object_object_get_ex(o, key, &v));
	return v;
}

static void test_render_cilium(void **state)
{
	struct sbt_learn l;
	struct sbt_learn_proposal p;
	json_object *doc, *eg, *r, *port;
	char *s;

	(void)state;
	sample(&l, &p);
	/* the policy's name is DNS-1123, whatever the sandbox is called */
	s = sbt_learn_render(&p, SBT_LEARN_CILIUM, "My Sandbox\"/\n");
	doc = json_tokener_parse(s);
	assert_non_null(doc);
	assert_string_equal(json_object_get_string(at(doc, "kind")), "CiliumNetworkPolicy");
	assert_string_equal(json_object_get_string(at(at(doc, "metadata"), "name")),
			    "sbtrace-learned-my-sandbox");
	eg = at(at(doc, "spec"), "egress");
	assert_int_equal(json_object_array_length(eg), 4); /* kube-dns, two names, one address */
	r = json_object_array_get_idx(eg, 1);
	assert_string_equal(json_object_get_string(at(
				    json_object_array_get_idx(at(r, "toFQDNs"), 0), "matchName")),
			    "api.test");
	r = json_object_array_get_idx(eg, 2);
	port = json_object_array_get_idx(
		at(json_object_array_get_idx(at(r, "toPorts"), 0), "ports"), 0);
	assert_string_equal(json_object_get_string(at(port, "port")), "80");
	assert_int_equal(json_object_get_int(at(port, "endPort")), 81);
	assert_string_equal(json_object_get_string(at(port, "protocol")), "TCP");
	r = json_object_array_get_idx(eg, 3);
	assert_string_equal(json_object_get_string(json_object_array_get_idx(at(r, "toCIDR"), 0)),
			    "203.0.113.7/32");
	json_object_put(doc);
	free(s);
	sbt_learn_proposal_free(&p);
	sbt_learn_free(&l);
}

static void test_render_systemd(void **state)
{
	struct sbt_learn l;
	struct sbt_learn_proposal p;
	char *s;

	(void)state;
	sample(&l, &p);
	s = sbt_learn_render(&p, SBT_LEARN_SYSTEMD, "sb");
	assert_string_equal(s, "# proposed by sbtrace --egress learn; systemd filters addresses "
			       "only:\n"
			       "# names and ports are not expressible here\n"
			       "# not expressible: host api.test port 443 proto tcp\n"
			       "# not expressible: host cdn.test port 80-81 proto tcp\n"
			       "IPAddressDeny=any\n"
			       "# never resolved: a hard-coded address (cidr 203.0.113.7/32 port "
			       "8443 proto tcp)\n"
			       "IPAddressAllow=203.0.113.7/32\n");
	free(s);
	sbt_learn_proposal_free(&p);
	sbt_learn_free(&l);
}

static void test_empty(void **state)
{
	struct sbt_learn l;
	struct sbt_learn_proposal p;
	char *s;

	(void)state;
	sbt_learn_init(&l);
	assert_int_equal(sbt_learn_propose(&l, &p), 0);
	assert_int_equal(p.n, 0);
	for (unsigned int f = 1; f < 1u << SBT_LEARN_FORMATS; f <<= 1) {
		s = sbt_learn_render(&p, f, NULL);
		assert_non_null(s);
		free(s);
	}
	s = sbt_learn_render(&p, SBT_LEARN_FLAGS, NULL);
	assert_string_equal(s, "");
	free(s);
	sbt_learn_proposal_free(&p);
	sbt_learn_free(&l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dedup_and_ports), cmocka_unit_test(test_unresolved_apart),
		cmocka_unit_test(test_cname),		cmocka_unit_test(test_formats_parse),
		cmocka_unit_test(test_render_sbtrace),	cmocka_unit_test(test_render_flags),
		cmocka_unit_test(test_render_cilium),	cmocka_unit_test(test_render_systemd),
		cmocka_unit_test(test_empty),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
