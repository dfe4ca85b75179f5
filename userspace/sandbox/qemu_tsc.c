// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The qemu backend's guest kernel gets tsc_early_khz=<the host's TSC rate>: TCG's guest
 * TSC runs at the host TSC's rate, and without the hint the guest calibrates
 * it against emulated timers, which under TCG stalls about one boot in
 * five. The rate comes from the host kernel's own log (/dev/kmsg: "tsc:
 * Refined TSC clocksource calibration: N MHz", else "tsc: Detected N MHz
 * processor"), else from counting TSC ticks over 20 ms of CLOCK_MONOTONIC_RAW
 * (x86); /proc/cpuinfo's "cpu MHz" is not used, as with cpufreq it is the
 * current core clock, not the TSC's.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/clock.h"
#include "internal.h"

/* "2596.122 MHz..." -> 2596122 (kHz); 0 when it does not read like that. */
static unsigned long mhz_to_khz(const char *s)
{
	unsigned long mhz = 0, frac = 0;
	int digits = 0, whole = 0;

	for (; *s >= '0' && *s <= '9' && whole < 7; s++, whole++)
		mhz = mhz * 10 + (unsigned long)(*s - '0');
	if (!whole)
		return 0;
	if (*s == '.')
		for (s++; *s >= '0' && *s <= '9'; s++)
			if (digits < 3) {
				frac = frac * 10 + (unsigned long)(*s - '0');
				digits++;
			}
	for (; digits < 3; digits++)
		frac *= 10;
	if (strncmp(s, " MHz", 4) != 0 || mhz == 0 || mhz > 100000)
		return 0;
	return mhz * 1000 + frac;
}

/* The host kernel's own figure, from its log: the refined calibration, else the first one. */
static unsigned long tsc_khz_from_kmsg(void)
{
	static const char refined[] = "tsc: Refined TSC clocksource calibration: ";
	static const char detected[] = "tsc: Detected ";
	unsigned long r = 0, d = 0;
	char rec[2048];
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0)
		return 0;
	for (int i = 0; i < 1000000; i++) {
		ssize_t n = read(fd, rec, sizeof(rec) - 1);
		char *msg, *p;

		if (n < 0 && (errno == EPIPE || errno == EINTR || errno == EINVAL))
			continue; /* overwritten meanwhile, or a record longer than rec */
		if (n <= 0)
			break;
		rec[n] = '\0';
		msg = strchr(rec, ';');
		if (!msg)
			continue;
		if ((p = strstr(msg, refined)))
			r = mhz_to_khz(p + sizeof(refined) - 1);
		else if (!d && (p = strstr(msg, detected)) && strstr(p, " MHz processor"))
			d = mhz_to_khz(p + sizeof(detected) - 1);
	}
	close(fd);
	return r ? r : d;
}

/* TSC ticks per ms of CLOCK_MONOTONIC_RAW over 20 ms (x86 only). */
static unsigned long tsc_khz_measured(void)
{
#if defined(__x86_64__) || defined(__i386__)
	uint64_t c0, c1, t0, t1;

	t0 = sbt_clock_ns(CLOCK_MONOTONIC_RAW);
	c0 = __builtin_ia32_rdtsc();
	sbt_sleep_ms(20);
	c1 = __builtin_ia32_rdtsc();
	t1 = sbt_clock_ns(CLOCK_MONOTONIC_RAW);
	if (t1 <= t0 || c1 <= c0)
		return 0;
	return (unsigned long)((c1 - c0) * 1000000ull / (t1 - t0));
#else
	return 0;
#endif
}

unsigned long sbx_host_tsc_khz(void)
{
	unsigned long khz = tsc_khz_from_kmsg();

	return khz ? khz : tsc_khz_measured();
}
