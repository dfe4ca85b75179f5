// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The boot in a microVM without the engine (--backend qemu, a repo built by
 * its own command: make, npm, --cmd): the guest's /sbt/run runs the build,
 * then, when it exited 0, the boot (--boot-cmd, or npm start) for
 * --boot-seconds, then SIGTERM and SIGKILL after the grace. Its lines that
 * start with the probe's mark (a nonce) are kept apart by the console
 * (sbt_vm_console_mark) and read as the Dockerfile path's are
 * (probe_vm_build_results(): built, stop, boot). The boot's first exec
 * carries the mark in its argv (env SBT_PROBE_BOOT=MARK): from it on, the
 * guest's execs are the boot's (the sink's boot_word). No exec of its own
 * before the build's first: the clock is the shell's read of /proc/uptime.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "probe_int.h"

/* The guest's clock in ms, from /proc/uptime without an exec ("12.34": 1 before the fraction, no octal). */
static const char vm_clock[] = "ms() { read -r u _ < /proc/uptime; echo $(( ${u%%.*} * 1000 + "
			       "1${u#*.}0 - 1000 )); }\n";

int probe_boot_vm_script(struct probe_ctx *p, const struct sbt_build_plan *plan)
{
	struct probe_boot *b = &p->boot;
	unsigned char nonce[12];
	uint64_t ms = p->o->boot_ms;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	if (getrandom(nonce, sizeof(nonce), 0) != (ssize_t)sizeof(nonce)) {
		snprintf(p->boot_err, sizeof(p->boot_err), "getrandom: %s", strerror(errno));
		return -1;
	}
	snprintf(b->vm_mark, sizeof(b->vm_mark), "SBT-BOOT-");
	for (size_t i = 0; i < sizeof(nonce); i++)
		snprintf(b->vm_mark + strlen(b->vm_mark), 3, "%02x", nonce[i]);
	snprintf(p->sink.boot_word, sizeof(p->sink.boot_word), "SBT_PROBE_BOOT=%s", b->vm_mark);
	strcat(b->vm_mark, " ");
	f = open_memstream(&text, &len);
	if (!f) {
		snprintf(p->boot_err, sizeof(p->boot_err), "cannot prepare the guest's script");
		return -1;
	}
	fprintf(f,
		"# sbtrace probe: the build, then the boot (userspace/probe/boot_vm.c)\nM='%s'\n",
		b->vm_mark);
	fputs(vm_clock, f);
	for (int i = 0; plan->argv[i]; i++)
		probe_vm_word(f, plan->argv[i]);
	fputs(" < /dev/null\nrc=$?\necho \"${M}built $rc 0\"\n[ \"$rc\" -eq 0 ] || exit \"$rc\"\n"
	      "t0=$(ms)\n",
	      f);
	probe_vm_word(f, "/usr/bin/env");
	probe_vm_word(f, p->sink.boot_word);
	for (int i = 0; b->argv[i]; i++)
		probe_vm_word(f, b->argv[i]);
	/* the stopper: the time limit, SIGTERM, SIGKILL after the grace */
	fprintf(f,
		" < /dev/null &\nb=$!\n(sleep %llu.%03llu; echo \"${M}stop $(($(ms) - t0))\"; "
		"kill -TERM \"$b\" 2> /dev/null; sleep %u; kill -KILL \"$b\" 2> /dev/null) "
		"< /dev/null &\ns=$!\nwait \"$b\"\nrc=$?\nkill -KILL \"$s\" 2> "
		"/dev/null\n"
		"echo \"${M}boot $rc $(($(ms) - t0))\"\nexit 0\n",
		(unsigned long long)(ms / 1000), (unsigned long long)(ms % 1000),
		(unsigned int)(PROBE_BOOT_GRACE_MS / 1000));
	if (fclose(f)) {
		free(text);
		snprintf(p->boot_err, sizeof(p->boot_err), "cannot prepare the guest's script");
		return -1;
	}
	free(b->vm_script);
	b->vm_script = text;
	b->in_vm = true;
	return 0;
}
