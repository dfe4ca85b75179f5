// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for the boot's readiness parsers (userspace/probe/ready.c):
 * /proc/PID/net/{tcp,tcp6,unix} lines and /proc/PID/status fields.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "../../userspace/probe/kind.h"

static void test_tcp_listen(void **state)
{
	(void)state;
	/* the header, a listener on 127.0.0.1:8080, an established connection */
	assert_false(probe_tcp_line_listens(
		"  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   "
		"uid  timeout inode\n"));
	assert_true(probe_tcp_line_listens(
		"   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     "
		"0        0 51234 1 0000000000000000 100 0 0 10 0\n"));
	assert_false(probe_tcp_line_listens(
		"   1: 0100007F:1F90 0100007F:C350 01 00000000:00000000 00:00000000 00000000     "
		"0        0 51235 1 0000000000000000 20 4 30 10 -1\n"));
	/* TIME_WAIT (06) and CLOSE (07) are not listening */
	assert_false(probe_tcp_line_listens(
		"  12: 0100007F:1F90 0100007F:C350 06 00000000:00000000 03:00000F9A 00000000     "
		"0        0 0 3 0000000000000000\n"));
	assert_false(probe_tcp_line_listens("   2: 00000000:0016 00000000:0000 07 0\n"));
	assert_false(probe_tcp_line_listens(""));
	assert_false(probe_tcp_line_listens("garbage 0A\n"));
}

/* The socket's inode: which process holds the listener is what counts (the DNS proxy's is not). */
static void test_line_inode(void **state)
{
	(void)state;
	assert_int_equal(probe_net_line_inode("   0: 0100007F:1F90 00000000:0000 0A "
					      "00000000:00000000 00:00000000 00000000     0   "
					      "     0 51234 1 0000000000000000 100 0 0 10 0\n",
					      PROBE_TCP_INODE_FIELD),
			 51234);
	assert_int_equal(probe_net_line_inode("0000000000000000: 00000002 00000000 00010000 0001 "
					      "01 71234 /run/app.sock\n",
					      PROBE_UNIX_INODE_FIELD),
			 71234);
	/* a line too short, or not a number there */
	assert_int_equal(probe_net_line_inode("   2: 00000000:0016 00000000:0000 07 0\n",
					      PROBE_TCP_INODE_FIELD),
			 0);
	assert_int_equal(probe_net_line_inode("a b c d e f x7 h\n", PROBE_UNIX_INODE_FIELD), 0);
	assert_int_equal(probe_net_line_inode("", 1), 0);
}

static void test_tcp6_listen(void **state)
{
	(void)state;
	assert_true(probe_tcp_line_listens(
		"   0: 00000000000000000000000000000000:1F90 00000000000000000000000000000000:0000 "
		"0A 00000000:00000000 00:00000000 00000000     0        0 61234 1 "
		"0000000000000000 100 0 0 10 0\n"));
	assert_false(probe_tcp_line_listens(
		"   1: 0000000000000000FFFF00000100007F:1F90 0000000000000000FFFF00000100007F:D431 "
		"01 00000000:00000000 00:00000000 00000000     0        0 61235 1\n"));
}

static void test_unix_listen(void **state)
{
	(void)state;
	assert_false(probe_unix_line_listens(
		"Num       RefCount Protocol Flags    Type St Inode Path\n"));
	/* a listening stream socket, a connected one, an unbound datagram socket */
	assert_true(probe_unix_line_listens(
		"0000000000000000: 00000002 00000000 00010000 0001 01 71234 /run/app.sock\n"));
	assert_true(probe_unix_line_listens(
		"0000000000000000: 00000002 00000000 00010000 0005 01 71236 @abstract\n"));
	assert_false(probe_unix_line_listens(
		"0000000000000000: 00000003 00000000 00000000 0001 03 71235\n"));
	assert_false(probe_unix_line_listens(
		"0000000000000000: 00000002 00000000 00000000 0002 01 71237\n"));
	assert_false(probe_unix_line_listens("0000: 2\n"));
}

static void test_status_pid1(void **state)
{
	(void)state;
	assert_true(probe_status_pid1("Name:\tnode\nNSpid:\t4711\t1\nSigIgn:\t0\n"));
	assert_true(probe_status_pid1("NSpid:\t1\n"));
	assert_false(probe_status_pid1("Name:\tnode\nNSpid:\t4711\t7\n"));
	assert_false(probe_status_pid1("Name:\tnode\nNSpid:\t4711\n"));
	assert_false(probe_status_pid1("Name:\tnode\nNSpid:\t11\n"));
	assert_false(probe_status_pid1("Name:\tnode\n"));
	/* a field whose name only begins the same is not NSpid */
	assert_false(probe_status_pid1("NSpidX:\t1\n"));
}

static void test_status_term(void **state)
{
	(void)state;
	/* node: SIGINT, SIGUSR1, SIGSEGV, SIGTERM caught (bit 14 is signal 15) */
	assert_true(probe_status_term_handled("SigIgn:\t0000000001001000\n"
					      "SigCgt:\t0000000100004602\n"));
	/* ignored, not caught */
	assert_true(probe_status_term_handled("SigIgn:\t0000000000004000\n"
					      "SigCgt:\t0000000000000000\n"));
	/* sleep: nothing caught; node once its one-shot handler ran */
	assert_false(probe_status_term_handled("SigIgn:\t0000000000000000\n"
					       "SigCgt:\t0000000000000000\n"));
	assert_false(probe_status_term_handled("SigIgn:\t0000000001001000\n"
					       "SigCgt:\t0000000100000602\n"));
	assert_false(probe_status_term_handled("Name:\tx\n"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tcp_listen),  cmocka_unit_test(test_tcp6_listen),
		cmocka_unit_test(test_unix_listen), cmocka_unit_test(test_status_pid1),
		cmocka_unit_test(test_status_term), cmocka_unit_test(test_line_inode),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
