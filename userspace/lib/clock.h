/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The one place the tree reads a clock or sleeps. */
#ifndef SBT_CLOCK_H
#define SBT_CLOCK_H

#include <stdint.h>
#include <time.h>

/* `clk` in ns (CLOCK_MONOTONIC, CLOCK_REALTIME, CLOCK_BOOTTIME, ...). */
uint64_t sbt_clock_ns(clockid_t clk);

static inline uint64_t sbt_mono_ns(void)
{
	return sbt_clock_ns(CLOCK_MONOTONIC);
}

static inline uint64_t sbt_mono_ms(void)
{
	return sbt_clock_ns(CLOCK_MONOTONIC) / 1000000u;
}

/* Wall-clock ns since the epoch. */
static inline uint64_t sbt_now_epoch_ns(void)
{
	return sbt_clock_ns(CLOCK_REALTIME);
}

/* realtime - boottime now: add it to a bpf_ktime_get_boot_ns() value for epoch ns. */
int64_t sbt_boot_epoch_offset_ns(void);

/* Wall-clock ns since the epoch for a bpf_ktime_get_boot_ns() value. */
static inline uint64_t sbt_boot_to_epoch_ns(uint64_t boot_ns, int64_t offset_ns)
{
	return boot_ns + (uint64_t)offset_ns;
}

/* Sleep `ms` milliseconds (EINTR resumed). */
void sbt_sleep_ms(long ms);

#endif
