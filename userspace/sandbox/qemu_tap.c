// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The qemu backend's network (see qemu.c): the guest's address pairs, the
 * tap and the names they may have.
 *
 * The tap: the caller enters spec->tap_netns (setns on /run/netns/NAME, and
 * back), opens /dev/net/tun, TUNSETIFF IFF_TAP | IFF_NO_PI | IFF_VNET_HDR
 * (qemu probes the vnet header on a tap fd= and uses it) | IFF_TUN_EXCL (an
 * existing device of that name is an error, never attached to), and gives
 * the host side its addresses with `ip`. Not persistent: the tap exists as
 * long as an fd is attached, i.e. as long as qemu runs; destroy and gc
 * delete it by name only if it is still there with the recorded ifindex.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <arpa/inet.h>
#include <linux/if_tun.h>

#include "lib/netns.h"
#include "internal.h"

/* A name `ip netns` can have made: /run/netns/NAME, one path component. */
bool sbx_netns_name_ok(const char *n)
{
	size_t len = n ? strnlen(n, NAME_MAX + 1) : 0;

	if (len == 0 || len > NAME_MAX || strcmp(n, ".") == 0 || strcmp(n, "..") == 0)
		return false;
	for (size_t i = 0; i < len; i++)
		if (n[i] == '/' || (unsigned char)n[i] <= ' ' || n[i] == 0x7f)
			return false;
	return true;
}

/* An interface name as the kernel accepts it (dev_valid_name). */
bool sbx_ifname_ok(const char *n)
{
	size_t len = n ? strnlen(n, IFNAMSIZ) : 0;

	if (len == 0 || len >= IFNAMSIZ || strcmp(n, ".") == 0 || strcmp(n, "..") == 0)
		return false;
	for (size_t i = 0; i < len; i++)
		if (n[i] == '/' || n[i] == ':' || (unsigned char)n[i] <= ' ' || n[i] == 0x7f)
			return false;
	return true;
}

/* "ADDR/LEN" of `family`: the address (binary and text, without /LEN) and LEN. */
static bool cidr_parse(const char *cidr, int family, unsigned char bin[16], char *text,
		       size_t textlen, int *plen)
{
	const char *slash = cidr ? strchr(cidr, '/') : NULL;
	int max = family == AF_INET ? 32 : 128, len = 0;
	char a[INET6_ADDRSTRLEN];

	if (!slash || slash == cidr || (size_t)(slash - cidr) >= sizeof(a) || !slash[1])
		return false;
	memcpy(a, cidr, (size_t)(slash - cidr));
	a[slash - cidr] = '\0';
	if (inet_pton(family, a, bin) != 1)
		return false;
	for (const char *p = slash + 1; *p; p++) {
		if (*p < '0' || *p > '9' || p - slash > 3)
			return false;
		len = len * 10 + (*p - '0');
	}
	if (len < 1 || len > max || strlen(a) >= textlen)
		return false;
	memcpy(text, a, strlen(a) + 1);
	*plen = len;
	return true;
}

static bool same_prefix(const unsigned char *a, const unsigned char *b, int plen)
{
	int bytes = plen / 8, bits = plen % 8;

	if (memcmp(a, b, (size_t)bytes) != 0)
		return false;
	return !bits || ((a[bytes] ^ b[bytes]) & (0xff << (8 - bits))) == 0;
}

/*
 * The tap's address pairs: the guest's half goes on the kernel command line
 * (sbt.ip= sbt.gw=, sbt.ip6= sbt.gw6=, appended to `append`) and into
 * guest[] (each may be NULL: only checked). Both of a pair, one subnet, two
 * different addresses.
 */
int sbx_vm_addrs(const struct sbt_sandbox_spec *spec, char *append, size_t len, char (*guest)[64],
		 int *nr_guest, char *err, size_t errlen)
{
	static const struct {
		int family;
		const char *ip, *gw, *example;
	} fam[2] = { { AF_INET, "sbt.ip", "sbt.gw", "203.0.113.253/30,203.0.113.254/30" },
		     { AF_INET6, "sbt.ip6", "sbt.gw6", "2001:db8:9::1/64,2001:db8:9::2/64" } };
	const char *pair[2][2] = { { spec->tap_host_cidr, spec->tap_guest_cidr },
				   { spec->tap_host_cidr6, spec->tap_guest_cidr6 } };

	for (int i = 0; i < 2; i++) {
		unsigned char hb[16], gb[16];
		char ht[INET6_ADDRSTRLEN], gt[INET6_ADDRSTRLEN];
		int hl, gl, bytes = fam[i].family == AF_INET ? 4 : 16;
		size_t n = append ? strlen(append) : 0;
		const char *h = pair[i][0], *g = pair[i][1];

		if (!h && !g)
			continue;
		if (!cidr_parse(h, fam[i].family, hb, ht, sizeof(ht), &hl) ||
		    !cidr_parse(g, fam[i].family, gb, gt, sizeof(gt), &gl))
			return sbx_seterr(
				err, errlen, -EINVAL,
				"sandbox %s: tap addresses '%s,%s': give HOST/LEN,GUEST/LEN of "
				"IPv%d, e.g. %s",
				spec->name, h ? h : "", g ? g : "", i ? 6 : 4, fam[i].example);
		if (hl != gl || !same_prefix(hb, gb, hl) || memcmp(hb, gb, (size_t)bytes) == 0)
			return sbx_seterr(
				err, errlen, -EINVAL,
				"sandbox %s: tap addresses '%s,%s': two different addresses of "
				"one subnet (the same /LEN), e.g. %s",
				spec->name, h, g, fam[i].example);
		if (append &&
		    !sbx_str_fits(append + n, len - n, " %s=%s %s=%s", fam[i].ip, g, fam[i].gw, ht))
			return sbx_seterr(err, errlen, -ENAMETOOLONG,
					  "kernel command line too long");
		if (guest)
			memcpy(guest[(*nr_guest)++], gt, strlen(gt) + 1);
	}
	return 0;
}

/*
 * Create run->tap in spec->tap_netns and return its fd (or -errno): an fd
 * of /dev/net/tun opened in that namespace, so the device is born there.
 */
int sbx_tap_create(const struct sbt_sandbox_spec *spec, struct sbt_sandbox_run *run, char *err,
		   size_t errlen)
{
	const char *ns = spec->tap_netns ? spec->tap_netns : "(the shim's)";
	struct ifreq ifr;
	int back, fd = -1, ret, e;

	ret = sbt_netns_enter(spec->tap_netns, &back);
	if (ret)
		return sbx_seterr(err, errlen, ret,
				  "sandbox %s: network namespace %s (/run/netns/%s): %s; create it "
				  "with 'ip netns add'",
				  spec->name, ns, ns, strerror(-ret));
	fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		ret = sbx_seterr(err, errlen, -errno,
				 "sandbox %s: /dev/net/tun: %s (modprobe tun?)", spec->name,
				 strerror(errno));
		goto out;
	}
	memset(&ifr, 0, sizeof(ifr));
	memcpy(ifr.ifr_name, run->tap, strlen(run->tap) + 1);
	ifr.ifr_flags =
		(short)(IFF_TAP | IFF_NO_PI | IFF_VNET_HDR | IFF_TUN_EXCL); /* 0x8000: a short */
	if (ioctl(fd, TUNSETIFF, &ifr)) {
		e = errno;
		if (e == EBUSY || e == EEXIST)
			ret = sbx_seterr(
				err, errlen, -EEXIST,
				"sandbox %s: a network device %s exists already in network "
				"namespace %s (a sandbox of the same name? sbtrace-shim gc)",
				spec->name, run->tap, ns);
		else
			ret = sbx_seterr(err, errlen, -e,
					 "sandbox %s: create tap %s in network namespace %s: %s",
					 spec->name, run->tap, ns, strerror(e));
		goto out;
	}
	run->tap_ifindex = (int)if_nametoindex(run->tap);
	if (run->tap_ifindex <= 0)
		ret = sbx_seterr(err, errlen, -ENODEV, "sandbox %s: tap %s has no ifindex",
				 spec->name, run->tap);
out:
	e = sbt_netns_leave(back);
	if (e && !ret)
		ret = sbx_seterr(err, errlen, e,
				 "sandbox %s: cannot return to the shim's network namespace: %s",
				 spec->name, strerror(-e));
	if (ret && fd >= 0)
		close(fd);
	return ret ? ret : fd;
}

/* The host side's addresses, then up. */
int sbx_tap_configure(const struct sbt_sandbox_spec *spec, struct sbt_sandbox_run *run, char *err,
		      size_t errlen)
{
	char *addr4[] = { "addr", "add", (char *)spec->tap_host_cidr, "dev", run->tap, NULL };
	char *addr6[] = { "addr",  "add", (char *)spec->tap_host_cidr6, "dev", run->tap,
			  "nodad", NULL };
	char *up[] = { "link", "set", run->tap, "up", NULL };
	int ret = 0;

	if (spec->tap_host_cidr)
		ret = sbx_ip(spec->tap_netns, addr4, err, errlen);
	if (!ret && spec->tap_host_cidr6)
		ret = sbx_ip(spec->tap_netns, addr6, err, errlen);
	if (!ret)
		ret = sbx_ip(spec->tap_netns, up, err, errlen);
	return ret;
}

/* Delete the tap if it is still there with the recorded ifindex (a killed shim's). */
void sbx_tap_remove(const char *netns, const char *tap, int ifindex)
{
	const char *ns = netns && netns[0] ? netns : NULL;
	char err[64];
	int back;
	unsigned int idx;

	if (!tap[0] || ifindex <= 0 || sbt_netns_enter(ns, &back))
		return;
	idx = if_nametoindex(tap);
	if (sbt_netns_leave(back) || idx == 0 || (int)idx != ifindex)
		return;
	{
		char *del[] = { "link", "del", (char *)tap, NULL };

		sbx_ip(ns, del, err, sizeof(err));
	}
}
