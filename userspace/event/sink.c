// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>

#include "event/line.h"
#include "event/sink.h"

void sbt_sinks_emit(const struct sbt_trace_opts *opts, const struct sbt_event *ev)
{
	struct sbt_event_line line = { 0 };
	struct sbt_event e = *ev;

	/* one JSON line for every sink that writes it, built by the first that asks */
	if (!e.line)
		e.line = &line;
	for (uint32_t i = 0; i < opts->nr_sinks; i++)
		if (opts->sinks[i]->ops->emit)
			opts->sinks[i]->ops->emit(opts->sinks[i], &e);
	sbt_event_line_release(&line);
}

int sbt_sinks_flush(const struct sbt_trace_opts *opts)
{
	int first = 0;

	for (uint32_t i = 0; i < opts->nr_sinks; i++) {
		int err =
			opts->sinks[i]->ops->flush ? opts->sinks[i]->ops->flush(opts->sinks[i]) : 0;

		if (err && !first)
			first = err;
	}
	return first;
}

int sbt_sinks_reopen(const struct sbt_trace_opts *opts)
{
	int first = 0;

	for (uint32_t i = 0; i < opts->nr_sinks; i++) {
		int err = opts->sinks[i]->ops->reopen ? opts->sinks[i]->ops->reopen(opts->sinks[i])
						      : 0;

		if (err && !first)
			first = err;
	}
	return first;
}

int sbt_sinks_add(struct sbt_trace_opts *opts, struct sbt_sink *sink)
{
	if (opts->nr_sinks >= SBT_MAX_SINKS)
		return -E2BIG;
	opts->sinks[opts->nr_sinks++] = sink;
	return 0;
}

struct sbt_completeness sbt_completeness_of(const struct sbt_target_totals *t, bool exec_visible,
					    uint64_t decode_errors)
{
	struct sbt_completeness c = { 0 };

	c.exec = exec_visible && t->lost == 0 && decode_errors == 0;
	c.egress = t->eg_lost == 0 && decode_errors == 0;
	c.all = c.exec && c.egress;
	return c;
}

bool sbt_lost_since(uint64_t total, uint64_t *reported, const char *kind, struct sbt_ev_lost *ev)
{
	if (total <= *reported)
		return false;
	*ev = (struct sbt_ev_lost){ .lost = total - *reported,
				    .lost_total = total,
				    .has_total = true,
				    .reason = "ringbuf_full",
				    .kind = kind };
	*reported = total;
	return true;
}
