// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* SHA-256 known answers (FIPS 180-4 examples, NIST CAVP short/long messages). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "lib/sha256.h"

static void digest(const void *d, size_t n, size_t chunk, char hex[65])
{
	struct sbt_sha256 s;
	uint8_t md[32];
	const uint8_t *p = d;

	sbt_sha256_init(&s);
	while (n) {
		size_t k = n < chunk ? n : chunk;

		sbt_sha256_update(&s, p, k);
		p += k, n -= k;
	}
	sbt_sha256_final(&s, md);
	sbt_sha256_hex(md, hex);
}

static void test_vectors(void **state)
{
	static const struct {
		const char *msg, *hex;
	} v[] = {
		{ "", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" },
		{ "abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" },
		{ "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
		  "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1" },
		{ "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopq"
		  "klmnopqrlmnopqrsmnopqrstnopqrstu",
		  "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1" },
	};
	char hex[65];

	(void)state;
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		/* whole, byte by byte, and in odd chunks: the buffering must not matter */
		static const size_t chunks[] = { 1000000, 1, 7, 63, 64, 65 };

		for (size_t c = 0; c < sizeof(chunks) / sizeof(chunks[0]); c++) {
			digest(v[i].msg, strlen(v[i].msg), chunks[c], hex);
			assert_string_equal(hex, v[i].hex);
		}
	}
}

static void test_million_a(void **state)
{
	char *m = malloc(1000000), hex[65];

	(void)state;
	assert_non_null(m);
	memset(m, 'a', 1000000);
	digest(m, 1000000, 4096, hex);
	assert_string_equal(hex,
			    "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
	free(m);
}

/* Lengths around the padding boundary (55, 56, 63, 64 bytes) against one-shot. */
static void test_boundaries(void **state)
{
	uint8_t m[130];
	char a[65], b[65];

	(void)state;
	for (size_t i = 0; i < sizeof(m); i++)
		m[i] = (uint8_t)(i * 31 + 7);
	for (size_t n = 50; n <= 130; n++) {
		digest(m, n, n, a);
		digest(m, n, 3, b);
		assert_string_equal(a, b);
	}
	digest(m, 55, 55, a);
	assert_int_equal(strlen(a), 64);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vectors),
		cmocka_unit_test(test_million_a),
		cmocka_unit_test(test_boundaries),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
