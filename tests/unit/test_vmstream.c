// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for the bound on a microVM's exec stream file (sandbox.h,
 * sbt_vm_stream_trim) and for a reader meeting what it dropped: a gap,
 * never a silently cut stream (guest_feed.h).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "exec/guest_feed.h"
#include "sandbox/sandbox.h"

static uint64_t on_disk(const char *path)
{
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	return (uint64_t)st.st_blocks * 512;
}

static void fill(const char *path, size_t mib, unsigned char byte)
{
	static unsigned char buf[1 << 20];
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	assert_true(fd >= 0);
	memset(buf, byte, sizeof(buf));
	for (size_t i = 0; i < mib; i++)
		assert_int_equal(write(fd, buf, sizeof(buf)), (ssize_t)sizeof(buf));
	assert_int_equal(fsync(fd), 0);
	close(fd);
}

static void test_trim_bounds_the_disk(void **state)
{
	char dir[] = "/var/tmp/sbt-vmstream.XXXXXX";
	static struct sbt_sandbox_run run;
	struct stat st;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(run.exec_stream, sizeof(run.exec_stream), "%s/exec.stream", dir);
	fill(run.exec_stream, 8, 0x5a);
	assert_int_equal(sbt_vm_stream_trim(&run, 16u << 20), 0); /* under the cap */
	assert_int_equal(sbt_vm_stream_trim(&run, 2u << 20), 1);
	assert_true(on_disk(run.exec_stream) <= (1u << 20) + 8192); /* half the cap kept */
	assert_int_equal(stat(run.exec_stream, &st), 0);
	assert_int_equal(st.st_size, 8u << 20); /* the size stays: the writer appends on */
	assert_int_equal(sbt_vm_stream_trim(&run, 2u << 20), 0);
	unlink(run.exec_stream);
	rmdir(dir);
}

static void on_record(void *arg, const void *data, size_t size)
{
	(void)data;
	(void)size;
	(*(int *)arg)++;
}

/* A reader at the punched start reads zeros: the stream is refused, its reason said. */
static void test_reader_sees_the_gap(void **state)
{
	char dir[] = "/var/tmp/sbt-vmstream.XXXXXX", path[64];
	struct sbt_guest_feed f;
	struct sbt_guest_account ga;
	int records = 0;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/exec.stream", dir);
	fill(path, 1, 0); /* what a punched file reads as */
	assert_int_equal(sbt_guest_feed_open(&f, path, on_record, &records), 0);
	sbt_guest_feed_poll(&f, SIZE_MAX, 1000, 1);
	sbt_guest_feed_account(&f, 1000, &ga);
	assert_non_null(ga.reason);
	assert_true(strncmp(ga.reason, "guest_stream_", 13) == 0);
	assert_int_equal(records, 0);
	sbt_guest_feed_close(&f);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_trim_bounds_the_disk),
		cmocka_unit_test(test_reader_sees_the_gap),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
