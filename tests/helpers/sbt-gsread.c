// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * sbt-gsread FILE: read a guest stream (userspace/guest_stream.h) from FILE
 * (a FIFO the agent writes, or "-" for stdin) and print one line per frame,
 * the records decoded like the host's own:
 *
 *   hello abi=2 mode=tp_btf hb_ms=500 kernel=6.1.0-...
 *   exec seq=1 slot=0 pid=123 ppid=100 filename=/bin/true argc=1 argv0=/bin/true
 *   beat execs=1 lost=0 records=1
 *   bye execs=1 lost=0 records=1
 *   end ok | end no_bye | end half_frame | end error=gap ...
 *
 * Exit 0 after "end ok", 1 otherwise (the test reads the lines).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sbtrace.h"
#include "event/decode.h"
#include "exec/guest_stream.h"

static const char **argv_store;
static char *tail;

static int on_frame(void *arg, const struct sbt_gs_frame *f)
{
	struct sbt_gs_hello h;
	struct sbt_gs_counters c;
	struct sbt_exec ev;
	enum sbt_decode_err e;

	(void)arg;
	switch (f->type) {
	case SBT_GS_HELLO:
		if (sbt_gs_hello_of(f, &h))
			return -1;
		printf("hello abi=%u mode=%s hb_ms=%u kernel=%s\n", h.abi, h.mode, h.hb_ms,
		       h.kernel);
		break;
	case SBT_GS_RECORD:
		e = sbt_decode_exec(f->payload, f->len, &ev, argv_store, tail);
		if (e != SBT_DECODE_OK) {
			printf("bad_record %s\n", sbt_decode_strerror(e));
			break;
		}
		printf("exec seq=%llu slot=%u pid=%u ppid=%u filename=%s argc=%zu argv0=%s\n",
		       (unsigned long long)ev.seq, ev.slot, ev.pid, ev.ppid, ev.filename, ev.argc,
		       ev.argc ? ev.argv[0] : "");
		break;
	default:
		if (sbt_gs_counters_of(f, &c))
			return -1;
		printf("%s execs=%llu lost=%llu records=%llu\n",
		       f->type == SBT_GS_BEAT ? "beat" : "bye", (unsigned long long)c.execs,
		       (unsigned long long)c.lost, (unsigned long long)c.records);
	}
	fflush(stdout);
	return 0;
}

int main(int argc, char **argv)
{
	struct sbt_gs_reader r;
	unsigned char buf[4096];
	int fd;
	ssize_t n;

	if (argc != 2) {
		fprintf(stderr, "usage: sbt-gsread FILE|-\n");
		return 2;
	}
	fd = strcmp(argv[1], "-") == 0 ? 0 : open(argv[1], O_RDONLY);
	argv_store = calloc(SBT_ARGV_MAX_ARGS, sizeof(*argv_store));
	tail = malloc(SBT_ARGV_CAP + 1);
	if (fd < 0 || !argv_store || !tail || sbt_gs_reader_init(&r)) {
		perror("sbt-gsread");
		return 2;
	}
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		if (sbt_gs_feed(&r, buf, (size_t)n, on_frame, NULL) != SBT_GS_OK)
			break;
	if (r.err)
		printf("end error=%s\n", sbt_gs_err_name(r.err));
	else if (!sbt_gs_at_boundary(&r))
		printf("end half_frame\n");
	else if (!r.bye)
		printf("end no_bye\n");
	else
		printf("end ok\n");
	return r.err || !r.bye ? 1 : 0;
}
