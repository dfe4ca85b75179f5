// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Libraries loaded on demand (see dl.h). */
#include <dlfcn.h>

#include "lib/dl.h"

void *sbt_dl_load(const char *const *sonames, size_t n_sonames, const struct sbt_dl_sym *syms,
		  size_t n_syms, const char **err, int *lacks)
{
	void *h = NULL;

	*lacks = 0;
	for (size_t i = 0; !h && i < n_sonames; i++)
		h = dlopen(sonames[i], RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		*err = dlerror();
		return NULL;
	}
	for (size_t i = 0; i < n_syms; i++) {
		*syms[i].slot = dlsym(h, syms[i].name);
		if (*syms[i].slot)
			continue;
		*err = dlerror();
		*lacks = 1;
		for (size_t j = 0; j < n_syms; j++)
			*syms[j].slot = NULL;
		dlclose(h);
		return NULL;
	}
	return h;
}
