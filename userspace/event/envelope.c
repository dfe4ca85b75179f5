// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* What every event's JSON shares (envelope.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/random.h>
#include <unistd.h>

#include "event/envelope.h"

/* Length of the valid UTF-8 sequence at s (1..4), or 0 if invalid (RFC 3629). */
static size_t utf8_seq(const unsigned char *s)
{
	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		return (s[1] & 0xc0) == 0x80 ? 2 : 0;
	if (s[0] >= 0xe0 && s[0] <= 0xef) {
		if ((s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80)
			return 0;
		if ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] > 0x9f))
			return 0; /* overlong, surrogate */
		return 3;
	}
	if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		if ((s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80 || (s[3] & 0xc0) != 0x80)
			return 0;
		if ((s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] > 0x8f))
			return 0; /* overlong, > U+10FFFF */
		return 4;
	}
	return 0;
}

size_t sbt_utf8_seq(const char *s)
{
	return utf8_seq((const unsigned char *)s);
}

json_object *sbt_json_string(const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t len = 0, bad = 0, n;
	json_object *o;
	char *out, *w;

	for (const unsigned char *p = s; *p; p += n ? n : 1) {
		n = utf8_seq(p);
		len += n ? n : 3;
		bad += !n;
	}
	if (!bad)
		return json_object_new_string(str);
	/* Invalid bytes become U+FFFD: every line stays valid UTF-8 JSON. */
	out = malloc(len + 1);
	if (!out)
		return NULL;
	w = out;
	for (const unsigned char *p = s; *p; p += n ? n : 1) {
		n = utf8_seq(p);
		if (n) {
			memcpy(w, p, n);
			w += n;
		} else {
			memcpy(w, "\xef\xbf\xbd", 3);
			w += 3;
		}
	}
	*w = '\0';
	o = json_object_new_string_len(out, (int)(w - out));
	free(out);
	return o;
}

const char *sbt_rfc3339_ns(uint64_t ts_ns, char *buf, size_t len)
{
	time_t secs = (time_t)(ts_ns / 1000000000u);
	struct tm tm;
	char day[32];

	if (!gmtime_r(&secs, &tm) || !strftime(day, sizeof(day), "%Y-%m-%dT%H:%M:%S", &tm))
		snprintf(day, sizeof(day), "1970-01-01T00:00:00");
	snprintf(buf, len, "%s.%09uZ", day, (unsigned int)(ts_ns % 1000000000u));
	return buf;
}

static char run_id[33];

const char *sbt_run_id(void)
{
	unsigned char b[16];

	if (run_id[0])
		return run_id;
	if (getrandom(b, sizeof(b), 0) != (ssize_t)sizeof(b)) {
		uint64_t t = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);

		memcpy(b, &t, 8);
		memcpy(b + 8, &t, 8);
	}
	for (size_t i = 0; i < sizeof(b); i++)
		snprintf(run_id + 2 * i, 3, "%02x", b[i]);
	return run_id;
}

json_object *sbt_event_new(const char *name, uint64_t ts_ns, const char *sandbox)
{
	json_object *o = json_object_new_object();
	char t[48];

	if (!o)
		return NULL;
	json_object_object_add(o, "event", json_object_new_string(name));
	json_object_object_add(o, "ts", json_object_new_uint64(ts_ns));
	/* ts is above 2^53: jq and JavaScript round it; time is exact text */
	json_object_object_add(o, "time",
			       json_object_new_string(sbt_rfc3339_ns(ts_ns, t, sizeof(t))));
	json_object_object_add(o, "run_id", json_object_new_string(sbt_run_id()));
	json_object_object_add(o, "sandbox", sandbox ? sbt_json_string(sandbox) : NULL);
	return o;
}
