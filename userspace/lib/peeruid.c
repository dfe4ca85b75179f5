// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Who is at the other end of a loopback TCP connection (peeruid.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <netinet/in.h>

#include "lib/peeruid.h"

/* ADDR:PORT the way /proc/net/tcp{,6} prints a local address: each 32-bit word as %08X. */
static int proc_hex(const struct sockaddr *sa, char *out, size_t len, bool *v6)
{
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const void *)sa;

		*v6 = false;
		return snprintf(out, len, "%08X:%04X", (unsigned)in->sin_addr.s_addr,
				ntohs(in->sin_port)) < (int)len
			       ? 0
			       : -ENAMETOOLONG;
	}
	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const void *)sa;
		uint32_t w[4];

		memcpy(w, &in6->sin6_addr, sizeof(w));
		*v6 = true;
		return snprintf(out, len, "%08X%08X%08X%08X:%04X", (unsigned)w[0], (unsigned)w[1],
				(unsigned)w[2], (unsigned)w[3], ntohs(in6->sin6_port)) < (int)len
			       ? 0
			       : -ENAMETOOLONG;
	}
	return -EAFNOSUPPORT;
}

int sbt_proc_tcp_uid(FILE *f, const char *local, unsigned int *uid)
{
	char line[512], addr[64];
	unsigned int u;

	while (fgets(line, sizeof(line), f))
		/* "sl local_address rem_address st tx:rx tr:when retrnsmt uid ..." */
		if (sscanf(line, " %*s %63s %*s %*s %*s %*s %*s %u", addr, &u) == 2 &&
		    strcmp(addr, local) == 0) {
			*uid = u;
			return 0;
		}
	return -ENOENT;
}

bool sbt_sockaddr_loopback(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)(const void *)sa)->sin_addr.s_addr) >>
			24) == 127;
	if (sa->sa_family == AF_INET6) {
		const struct in6_addr *a =
			&((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr;

		return IN6_IS_ADDR_LOOPBACK(a) ||
		       (IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127);
	}
	return false;
}

int sbt_tcp_peer_uid(const struct sockaddr *peer, unsigned int *uid)
{
	char local[64];
	bool v6;
	int ret = proc_hex(peer, local, sizeof(local), &v6);
	FILE *f;

	if (ret)
		return ret;
	f = fopen(v6 ? "/proc/net/tcp6" : "/proc/net/tcp", "re");
	if (!f)
		return -errno;
	ret = sbt_proc_tcp_uid(f, local, uid);
	fclose(f);
	return ret;
}
