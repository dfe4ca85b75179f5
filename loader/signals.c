// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The signals of the loader's long-running commands (see loader.h). */
#include <signal.h>
#include <stdbool.h>

#include "loader.h"

volatile sig_atomic_t sbt_stop_signal;
volatile sig_atomic_t sbt_hup_pending;

static void on_stop(int sig)
{
	sbt_stop_signal = sig;
}

static void on_hup(int sig)
{
	(void)sig;
	sbt_hup_pending = 1;
}

void sbt_signals_install(bool hup)
{
	struct sigaction sa = { .sa_handler = on_stop };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (hup) {
		sa.sa_handler = on_hup;
		sigaction(SIGHUP, &sa, NULL);
	}
	signal(SIGPIPE, SIG_IGN);
}
