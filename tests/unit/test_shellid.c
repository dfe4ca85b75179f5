// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for shells known by their file (exec/shellid.h): the ELF
 * layout survives a copy with bytes appended or patched outside the program
 * headers, and changes with the code's place.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "exec/shellid.h"

/* A little 64-bit ELF head: 3 program headers (PHDR, INTERP, LOAD) after the header. */
static void make_head(uint64_t head[SBT_EXE_HEAD_WORDS])
{
	uint8_t *b = (uint8_t *)head;
	uint8_t *ph;

	memset(head, 0, SBT_EXE_HEAD_BYTES);
	memcpy(b, "\177ELF", 4);
	b[4] = 2;				  /* 64-bit */
	b[5] = 1;				  /* little-endian */
	b[6] = 1;				  /* EV_CURRENT */
	b[16] = 3;				  /* ET_DYN */
	b[18] = 62;				  /* EM_X86_64 */
	memcpy(b + 24, &(uint64_t){ 0x4321 }, 8); /* e_entry */
	memcpy(b + 32, &(uint64_t){ 64 }, 8);	  /* e_phoff */
	memcpy(b + 40, &(uint64_t){ 99999 }, 8);  /* e_shoff */
	b[54] = 56;				  /* e_phentsize */
	b[56] = 3;				  /* e_phnum */
	for (int i = 0; i < 3; i++) {
		static const uint32_t types[] = { 6, 3, 1 };

		ph = b + 64 + 56 * i;
		memcpy(ph, &types[i], 4);
		memcpy(ph + 4, &(uint32_t){ 5 }, 4);		/* R X */
		memcpy(ph + 8, &(uint64_t){ 0x318u * i }, 8);	/* p_offset */
		memcpy(ph + 16, &(uint64_t){ 0x318u * i }, 8);	/* p_vaddr */
		memcpy(ph + 24, &(uint64_t){ 0x7777 }, 8);	/* p_paddr */
		memcpy(ph + 32, &(uint64_t){ 0x1000u + i }, 8); /* p_filesz */
		memcpy(ph + 40, &(uint64_t){ 0x2000u + i }, 8); /* p_memsz */
	}
}

static void test_layout_survives(void **state)
{
	uint64_t head[SBT_EXE_HEAD_WORDS], copy[SBT_EXE_HEAD_WORDS], a, b;
	uint8_t *c = (uint8_t *)copy;

	(void)state;
	make_head(head);
	assert_true(sbt_exe_layout(head, &a));
	memcpy(copy, head, sizeof(copy));
	memset(c + 9, 0xff, 7);				   /* e_ident's padding */
	c[7] = 3;					   /* EI_OSABI */
	memcpy(c + 40, &(uint64_t){ 1 }, 8);		   /* e_shoff (a section table moved) */
	memcpy(c + 64 + 56 * 2 + 24, &(uint64_t){ 0 }, 8); /* the LOAD's p_paddr */
	memcpy(c + 64 + 56 * 2 + 40, &(uint64_t){ 1 << 20 }, 8); /* its p_memsz */
	memcpy(c + 64 + 8, &(uint64_t){ 5 }, 8); /* PT_PHDR's offset: not loaded as such */
	assert_true(sbt_exe_layout(copy, &b));
	assert_true(a == b);
}

static void test_layout_changes(void **state)
{
	uint64_t head[SBT_EXE_HEAD_WORDS], copy[SBT_EXE_HEAD_WORDS], a, b;
	uint8_t *c = (uint8_t *)copy;

	(void)state;
	make_head(head);
	assert_true(sbt_exe_layout(head, &a));
	memcpy(copy, head, sizeof(copy));
	memcpy(c + 24, &(uint64_t){ 0x4322 }, 8); /* another entry point */
	assert_true(sbt_exe_layout(copy, &b));
	assert_false(a == b);
	memcpy(copy, head, sizeof(copy));
	memcpy(c + 64 + 56 * 2 + 32, &(uint64_t){ 0x1003 }, 8); /* the LOAD's file size */
	assert_true(sbt_exe_layout(copy, &b));
	assert_false(a == b);
	/* program headers out of the head, or no ELF: no layout */
	memcpy(copy, head, sizeof(copy));
	memcpy(c + 32, &(uint64_t){ 4096 }, 8);
	assert_false(sbt_exe_layout(copy, &b));
	memcpy(copy, head, sizeof(copy));
	c[1] = 'X';
	assert_false(sbt_exe_layout(copy, &b));
	memcpy(copy, head, sizeof(copy));
	c[56] = 2; /* only PHDR and INTERP: nothing loaded */
	assert_false(sbt_exe_layout(copy, &b));
}

/* A host shell's copy with bytes appended: the same size no more, the same layout still. */
static void test_classify_copy(void **state)
{
	struct sbt_shellid t;
	struct sbt_shell_class cls;
	struct sbt_exec ev;
	const char *argv[] = { "tool", "-c", "id" };
	int fd = open("/bin/dash", O_RDONLY | O_CLOEXEC);

	(void)state;
	if (fd < 0)
		skip();
	memset(&t, 0, sizeof(t));
	assert_int_equal(sbt_shellid_add(&t, "/bin/dash", "dash"), 0);
	memset(&ev, 0, sizeof(ev));
	assert_int_equal(pread(fd, ev.exe_head, sizeof(ev.exe_head), 0), sizeof(ev.exe_head));
	close(fd);
	ev.exe_size = t.known[0].size + 2;
	strcpy(ev.exe_name, "tool");
	ev.filename = "/tmp/tool";
	ev.interp = "/tmp/tool";
	ev.argv = argv;
	ev.argc = 3;
	((uint8_t *)ev.exe_head)[10] = 0x5a; /* and its e_ident padding patched */
	assert_true(sbt_shellid_classify(&t, &ev, &cls));
	assert_string_equal(cls.shell, "dash");
	assert_string_equal(cls.identified_by, "content");
	((uint64_t *)ev.exe_head)[3] ^= 0x10; /* e_entry moved: another program */
	assert_false(sbt_shellid_classify(&t, &ev, &cls));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout_survives),
		cmocka_unit_test(test_layout_changes),
		cmocka_unit_test(test_classify_copy),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
