/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* `sbtrace top`: a live view of a running agent (its /metrics), ncurses or --once text. */
#ifndef SBT_TOP_H
#define SBT_TOP_H

#include <stdio.h>

int sbt_top_main(int argc, char **argv);
void sbt_top_usage(FILE *f);

#endif
