// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The backends: one row each, indexed by enum sbt_sandbox_backend. A row is
 * the backend's operations and capabilities (struct sbt_backend_ops,
 * internal.h), defined in the backend's own file; a new backend is that
 * file, its enum value (sandbox.h) and its row here.
 */
#include <errno.h>
#include <string.h>

#include "internal.h"

extern const struct sbt_backend_ops sbx_ns_ops, sbx_podman_ops, sbx_qemu_ops;

static const struct sbt_backend_ops *const backends[SBT_BACKEND__MAX] = {
	[SBT_BACKEND_NS] = &sbx_ns_ops,
	[SBT_BACKEND_PODMAN] = &sbx_podman_ops,
	[SBT_BACKEND_QEMU] = &sbx_qemu_ops,
};

const struct sbt_backend_ops *sbx_backend(enum sbt_sandbox_backend b)
{
	return (unsigned int)b < SBT_BACKEND__MAX ? backends[b] : NULL;
}

const struct sbt_backend_ops *sbx_backend_by_name(const char *name)
{
	enum sbt_sandbox_backend b;

	return sbt_backend_parse(name, &b) ? NULL : backends[b];
}

const char *sbt_backend_name(enum sbt_sandbox_backend b)
{
	const struct sbt_backend_ops *ops = sbx_backend(b);

	return ops ? ops->name : NULL;
}

int sbt_backend_parse(const char *s, enum sbt_sandbox_backend *out)
{
	for (int b = 0; s && b < SBT_BACKEND__MAX; b++)
		if (strcmp(s, backends[b]->name) == 0) {
			*out = (enum sbt_sandbox_backend)b;
			return 0;
		}
	return -EINVAL;
}

const struct sbt_backend_caps *sbt_backend_caps(enum sbt_sandbox_backend b)
{
	const struct sbt_backend_ops *ops = sbx_backend(b);

	return ops ? &ops->caps : NULL;
}

const struct sbt_backend_caps *sbt_backend_caps_by_name(const char *name)
{
	const struct sbt_backend_ops *ops = sbx_backend_by_name(name);

	return ops ? &ops->caps : NULL;
}

const char *sbt_backend_vis_exec(const struct sbt_backend_caps *caps, bool exec_stream)
{
	return caps->execs_on_host ? "host" : exec_stream ? "guest_kernel" : "none";
}

const char *sbt_backend_vis_network(const struct sbt_backend_caps *caps)
{
	return caps->egress_on_tap ? "tap" : "cgroup";
}
