/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * --egress learn for the session (session.c): each slot's connects into its
 * struct sbt_learn, and at the slot's end what its AllowlistProposed says
 * (and the --learn-out file). Trace and agent alike: a slot learns when its
 * policy says learn.
 */
#ifndef SBT_SESSION_LEARN_H
#define SBT_SESSION_LEARN_H

#include <stdbool.h>

#include "egress/learn.h"
#include "event/decode.h"
#include "event/kinds.h"
#include "trace/tracer.h"

/* A slot's table when its policy learns (NULL: it does not, or no memory). */
struct sbt_learn *sbt_session_learn_new(const struct sbt_egress_cfg *egress);
void sbt_session_learn_free(struct sbt_learn *l);
/* A verdict record: a connect the proposal must allow (`name`: its address's, NULL: none). */
void sbt_session_learn_connect(struct sbt_learn *l, const struct sbt_egress *rec, const char *name);
/* Does the proposal want the name of rec's address? */
bool sbt_session_learn_wants(const struct sbt_learn *l, const struct sbt_egress *rec);
/* A slot's AllowlistProposed, what it points into. */
struct sbt_learn_final {
	struct sbt_learn_proposal p;
	char *texts[SBT_LEARN_FORMATS];
	struct sbt_ev_allowlist ev; /* points into p and texts */
};

/*
 * The AllowlistProposed of a slot's table l under policy cfg, for sandbox
 * `name`, written to cfg->learn_out (anew when *out_written is false, then
 * set); egress_complete: none of its records was lost. 0, or -ENOMEM after
 * a message. Free f with sbt_learn_final_free.
 */
int sbt_learn_final_make(const struct sbt_learn *l, const struct sbt_egress_cfg *cfg,
			 const char *name, bool *out_written, bool egress_complete,
			 struct sbt_learn_final *f);
void sbt_learn_final_free(struct sbt_learn_final *f);

#endif
