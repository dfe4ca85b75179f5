/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A library loaded only by the command that needs it (dlopen): its symbols
 * into the caller's table of function pointers, all or none. Used for
 * libmicrohttpd (agent --metrics-addr) and ncurses (top's live view), which
 * linked would weigh on every sbtrace process.
 */
#ifndef SBT_DL_H
#define SBT_DL_H

#include <stddef.h>

struct sbt_dl_sym {
	const char *name;
	void **slot; /* where its address goes: (void **)&table.fn */
};

/*
 * The first of sonames[n_sonames] that loads, then every symbol of
 * syms[n_syms] into its slot. The handle (kept for the process's life), or
 * NULL with *err dlerror()'s text and, when the library loaded but lacks a
 * symbol, *lacks true; no slot is left set then.
 */
void *sbt_dl_load(const char *const *sonames, size_t n_sonames, const struct sbt_dl_sym *syms,
		  size_t n_syms, const char **err, int *lacks);

#endif
