// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* --egress learn in the session (session_learn.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/log.h"
#include "session/session_learn.h"

struct sbt_learn *sbt_session_learn_new(const struct sbt_egress_cfg *egress)
{
	struct sbt_learn *l;

	if (!egress || !egress->learn)
		return NULL;
	l = malloc(sizeof(*l));
	if (l)
		sbt_learn_init(l);
	return l;
}

void sbt_session_learn_free(struct sbt_learn *l)
{
	if (!l)
		return;
	sbt_learn_free(l);
	free(l);
}

/*
 * What ran and a rule could allow: TCP and UDP, allowed by a rule or only by
 * audit. Port 0 is no destination: glibc's getaddrinfo connects a UDP socket
 * there to sort the answers (RFC 6724) and sends nothing.
 */
bool sbt_session_learn_wants(const struct sbt_learn *l, const struct sbt_egress *rec)
{
	return l && rec->dport && (rec->proto == SBT_PROTO_TCP || rec->proto == SBT_PROTO_UDP) &&
	       (rec->reason == SBT_REASON_RULE || rec->reason == SBT_REASON_NOT_IN_ALLOWLIST);
}

void sbt_session_learn_connect(struct sbt_learn *l, const struct sbt_egress *rec, const char *name)
{
	if (!sbt_session_learn_wants(l, rec))
		return;
	/* -ENOSPC is counted in dropped (the proposal says it is not complete) */
	if (sbt_learn_add(l, name, rec->daddr, rec->dport, rec->proto,
			  rec->count ? rec->count : 1) == -ENOMEM)
		l->dropped++;
}

/*
 * --learn-out FILE: the sbtrace rules; the first sandbox of the session
 * writes the file anew, others follow under a "# sandbox NAME" line.
 */
static const char *write_out(bool *written, const char *path, const char *name, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | (*written ? O_APPEND : O_TRUNC), 0644);
	char head[128];
	size_t o = 0, len = strlen(text);
	bool ok;

	if (fd < 0) {
		sbt_log("--learn-out '%s': %s; the proposal is in AllowlistProposed only", path,
			strerror(errno));
		return NULL;
	}
	if (*written) { /* a name as a comment: printable bytes only */
		o = (size_t)snprintf(head, sizeof(head), "\n# sandbox ");
		for (const char *c = name; *c && o + 2 < sizeof(head); c++)
			head[o++] = *c >= 0x20 && *c < 0x7f ? *c : '?';
		head[o++] = '\n';
	}
	ok = write(fd, head, o) == (ssize_t)o && write(fd, text, len) == (ssize_t)len;
	if (!ok)
		sbt_log("--learn-out '%s': %s", path, strerror(errno));
	if (close(fd) && ok) {
		sbt_log("--learn-out '%s': %s", path, strerror(errno));
		ok = false;
	}
	*written = true;
	return ok ? path : NULL;
}

int sbt_learn_final_make(const struct sbt_learn *l, const struct sbt_egress_cfg *cfg,
			 const char *name, bool *out_written, bool egress_complete,
			 struct sbt_learn_final *f)
{
	unsigned int formats = cfg->learn_formats ? cfg->learn_formats : SBT_LEARN_SBTRACE;

	memset(f, 0, sizeof(*f));
	if (sbt_learn_propose(l, &f->p)) {
		sbt_log("sandbox %s: out of memory: no AllowlistProposed", name);
		return -ENOMEM;
	}
	for (unsigned int i = 0; i < SBT_LEARN_FORMATS; i++)
		if (formats & (1u << i) || (i == 0 && cfg->learn_out))
			f->texts[i] = sbt_learn_render(&f->p, 1u << i, name);
	for (size_t i = 0; i < l->n; i++)
		f->ev.connects += l->d[i].connects;
	if (cfg->learn_out && f->texts[0])
		f->ev.out = write_out(out_written, cfg->learn_out, name, f->texts[0]);
	if (!(formats & SBT_LEARN_SBTRACE)) { /* written to the file, not asked for in the event */
		free(f->texts[0]);
		f->texts[0] = NULL;
	}
	f->ev.p = &f->p;
	f->ev.texts = (const char *const *)f->texts;
	f->ev.dropped = l->dropped;
	f->ev.egress_complete = egress_complete;
	return 0;
}

void sbt_learn_final_free(struct sbt_learn_final *f)
{
	for (unsigned int i = 0; i < SBT_LEARN_FORMATS; i++)
		free(f->texts[i]);
	sbt_learn_proposal_free(&f->p);
	memset(f, 0, sizeof(*f));
}
