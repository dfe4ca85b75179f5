# Network test world (POSIX sh, sourced AFTER lib.sh).
#
# Rules (README, "Set-up and tests": the network rules): tests reach
# only loopback and test hosts inside network namespaces created here, on the
# documentation ranges 192.0.2.0/24, 198.51.100.0/24, 203.0.113.0/24 and
# 2001:db8::/32. Neither namespace has a default route or any route outside
# those ranges; the host's root netns (routes, interfaces, iptables) is never
# touched: the veth pair is created directly inside the namespaces.
#
#   sandbox netns $NET_SBX                 host netns $NET_HOST
#   $NET_SBX_IF 192.0.2.100/24  <-veth->   $NET_HOST_IF 192.0.2.1/24, 192.0.2.53/32 (DNS)
#               2001:db8:1::100/64                      2001:db8:1::1/64
#   routes: 198.51.100.0/24, 203.0.113.0/24 lo: 198.51.100.7, 203.0.113.5,
#     via 192.0.2.1; 2001:db8:2::/48,           2001:db8:2::7, 2001:db8:3::5
#     2001:db8:3::/48 via 2001:db8:1::1     forwarding off (the default)
#
# In the host netns: `sbt-net serve` (TCP 80 and 8080, UDP 9999 echo, on every
# test-host address, log $NET_SERVER_LOG), `sbt-net sniff` on $NET_HOST_IF
# (log $NET_SNIFF_LOG: every packet that arrived from the sandbox), dnsmasq on
# 192.0.2.53:53 (log $NET_DNS_LOG; no upstream, answers only *.test):
#   allowed.test -> 192.0.2.1, 2001:db8:1::1   blocked.test -> 198.51.100.7
#   other.test -> 203.0.113.5                  anything else.test -> NXDOMAIN
#   registry.test -> 198.51.100.80 (t_probe_net.sh serves it)
#   inside the floor: floor.test -> 169.254.169.254, fd00:ec2::254; lo.test -> 127.0.0.1, ::1;
#   nat64.test -> 64:ff9b::a9fe:a9fe; sixtofour.test -> 2002:a9fe:a9fe::1
#   and its other embeddings of 169.254.169.254: siit.test -> ::ffff:0:a9fe:a9fe,
#   compat.test -> ::a9fe:a9fe, localnat64.test -> 64:ff9b:1::a9fe:a9fe,
#   teredo.test -> 2001:0:c633:6407::5601:5601 (its client, inverted)
#   broadcast, multicast: bcast.test -> 255.255.255.255; mcast.test -> 224.0.0.251,
#   ff02::fb; mcastok.test -> 239.1.2.3
# (dnsmasq answers AAAA for blocked.test/other.test, which have only an IPv4
# --address, with NXDOMAIN; getaddrinfo still returns the A record.)
# TTL of those answers: $NET_DNS_TTL (default 2 s). Processes started with
# in_sandbox (which uses `ip netns exec`) see /etc/netns/$NET_SBX/resolv.conf
# as /etc/resolv.conf.
#
# Use:  . lib.sh; . netlib.sh; net_require_tools; net_world_up || exit 1
#       C=$(mk_cgroup x); in_sandbox "$C" "$SBTNET" tcp 198.51.100.7 80
# Sourcing this file replaces lib.sh's EXIT trap with net_cleanup_hook
# (net_world_down, then lib.sh's cleanup); a test that sets its own EXIT trap
# must call net_cleanup_hook from it.

# Variables here are for the sourcing tests.
# shellcheck disable=SC2034
SBTNET="$TOP/build/tests/sbt-net"
DNSMASQ=/usr/sbin/dnsmasq

NET_SBX="sbt-sbx-$$"
NET_HOST="sbt-host-$$"
NET_SBX_IF=sbx0
NET_HOST_IF=host0

# Addresses of the world, for the tests.
NET_SBX_V4=192.0.2.100
NET_SBX_V6=2001:db8:1::100
NET_HOST_V4=192.0.2.1
NET_HOST_V6=2001:db8:1::1
NET_DNS=192.0.2.53
NET_T1_V4=198.51.100.7
NET_T2_V4=203.0.113.5
NET_T1_V6=2001:db8:2::7
NET_T2_V6=2001:db8:3::5

NET_SERVER_LOG="$WORK/server.log"
NET_SNIFF_LOG="$WORK/sniff.log"
NET_DNS_LOG="$WORK/dnsmasq.log"
NET_DNS_TTL=${NET_DNS_TTL:-2}

NET_PIDS=""
NET_SBX_MADE=""
NET_HOST_MADE=""
NET_ETC_MADE=""

# Skip (77) when a tool the world needs is not installed.
net_require_tools() {
	for _t in ip sysctl awk; do
		command -v "$_t" > /dev/null 2>&1 || skip "$_t not installed (iproute2/procps)"
	done
	[ -x "$DNSMASQ" ] || skip "$DNSMASQ not installed (dnsmasq-base)"
	[ -x "$SBTNET" ] || { log "$SBTNET missing: run make"; exit 1; }
	[ -x "$SPAWN" ] || { log "$SPAWN missing: run make"; exit 1; }
}

# _net_alive PID: true while PID runs (a zombie counts as gone).
_net_alive() {
	[ -r "/proc/$1/stat" ] || return 1
	case $(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null) in
	Z* | X* | "") return 1 ;;
	esac
	return 0
}

# _net_bg NS LOGFILE CMD...: start CMD in netns NS in the background and
# remember its PID (ip netns exec execs in place, so $! is CMD itself).
_net_bg() {
	_ns=$1 _out=$2
	shift 2
	ip netns exec "$_ns" "$@" > "$_out" 2>&1 &
	NET_PIDS="$NET_PIDS $!"
	_net_last=$!
}

# _net_run DESC CMD...: run a set-up step, log it when it fails.
_net_run() {
	_desc=$1
	shift
	if ! "$@" > "$WORK/net-step.err" 2>&1; then
		log "net_world_up: $_desc failed: $* : $(cat "$WORK/net-step.err")"
		return 1
	fi
}

_net_sysctls() {
	# In the given (test) netns only: no DAD, no RA/RS, no forwarding.
	ip netns exec "$1" sysctl -qw \
		net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0 \
		net.ipv6.conf.all.accept_ra=0 net.ipv6.conf.default.accept_ra=0 \
		net.ipv6.conf.all.router_solicitations=0 \
		net.ipv6.conf.default.router_solicitations=0 \
		net.ipv4.ip_forward=0 net.ipv6.conf.all.forwarding=0
}

_net_topology() {
	_S=$NET_SBX _H=$NET_HOST
	_net_run "netns $_S" ip netns add "$_S" || return 1
	NET_SBX_MADE=1
	_net_run "netns $_H" ip netns add "$_H" || return 1
	NET_HOST_MADE=1
	_net_run "sysctls $_S" _net_sysctls "$_S" || return 1
	_net_run "sysctls $_H" _net_sysctls "$_H" || return 1
	_net_run "lo up $_S" ip -n "$_S" link set lo up || return 1
	_net_run "lo up $_H" ip -n "$_H" link set lo up || return 1
	# Created inside the sandbox netns, the peer moved straight into ours.
	_net_run "veth" ip -n "$_S" link add "$NET_SBX_IF" type veth \
		peer name "$NET_HOST_IF" netns "$_H" || return 1
	_net_run "addr" ip -n "$_H" addr add 192.0.2.1/24 dev "$NET_HOST_IF" || return 1
	_net_run "addr" ip -n "$_H" addr add 192.0.2.53/32 dev "$NET_HOST_IF" || return 1
	_net_run "addr" ip -n "$_H" addr add 2001:db8:1::1/64 dev "$NET_HOST_IF" nodad || return 1
	_net_run "addr" ip -n "$_H" addr add 198.51.100.7/32 dev lo || return 1
	_net_run "addr" ip -n "$_H" addr add 203.0.113.5/32 dev lo || return 1
	_net_run "addr" ip -n "$_H" addr add 2001:db8:2::7/128 dev lo nodad || return 1
	_net_run "addr" ip -n "$_H" addr add 2001:db8:3::5/128 dev lo nodad || return 1
	_net_run "addr" ip -n "$_S" addr add 192.0.2.100/24 dev "$NET_SBX_IF" || return 1
	_net_run "addr" ip -n "$_S" addr add 2001:db8:1::100/64 dev "$NET_SBX_IF" nodad || return 1
	_net_run "link up" ip -n "$_H" link set "$NET_HOST_IF" up || return 1
	_net_run "link up" ip -n "$_S" link set "$NET_SBX_IF" up || return 1
	# Test-host prefixes via the host side; deliberately no default route.
	_net_run "route" ip -n "$_S" route add 198.51.100.0/24 via 192.0.2.1 dev "$NET_SBX_IF" || return 1
	_net_run "route" ip -n "$_S" route add 203.0.113.0/24 via 192.0.2.1 dev "$NET_SBX_IF" || return 1
	_net_run "route" ip -n "$_S" -6 route add 2001:db8:2::/48 via 2001:db8:1::1 dev "$NET_SBX_IF" || return 1
	_net_run "route" ip -n "$_S" -6 route add 2001:db8:3::/48 via 2001:db8:1::1 dev "$NET_SBX_IF" || return 1
}

_net_services() {
	# serve: every test-host address, v4 and v6.
	set --
	for _a in 192.0.2.1 198.51.100.7 203.0.113.5 \
		'[2001:db8:1::1]' '[2001:db8:2::7]' '[2001:db8:3::5]'; do
		set -- "$@" --tcp "$_a:80" --tcp "$_a:8080" --udp "$_a:9999"
	done
	: > "$NET_SERVER_LOG"
	_net_bg "$NET_HOST" "$WORK/serve.out" "$SBTNET" serve --log "$NET_SERVER_LOG" "$@"
	NET_SERVE_PID=$_net_last
	: > "$NET_SNIFF_LOG"
	_net_bg "$NET_HOST" "$WORK/sniff.out" "$SBTNET" sniff --iface "$NET_HOST_IF" \
		--log "$NET_SNIFF_LOG"
	NET_SNIFF_PID=$_net_last
	# No upstream (--no-resolv, no --server), nothing else read (--conf-file=
	# /dev/null --no-hosts), only 192.0.2.53; *.test answered locally.
	_net_bg "$NET_HOST" "$WORK/dnsmasq.out" "$DNSMASQ" --keep-in-foreground \
		--conf-file=/dev/null --no-resolv --no-hosts --bind-interfaces \
		--listen-address=192.0.2.53 --port=53 --local-ttl="$NET_DNS_TTL" \
		--local=/test/ \
		--address=/allowed.test/192.0.2.1 --address=/allowed.test/2001:db8:1::1 \
		--address=/blocked.test/198.51.100.7 --address=/other.test/203.0.113.5 \
		--address=/floor.test/169.254.169.254 --address=/floor.test/fd00:ec2::254 \
		--address=/lo.test/127.0.0.1 --address=/lo.test/::1 --address=/registry.test/198.51.100.80 \
		--address=/nat64.test/64:ff9b::a9fe:a9fe --address=/sixtofour.test/2002:a9fe:a9fe::1 \
		--address=/siit.test/::ffff:0:a9fe:a9fe --address=/compat.test/::a9fe:a9fe \
		--address=/localnat64.test/64:ff9b:1::a9fe:a9fe \
		--address=/teredo.test/2001:0:c633:6407::5601:5601 \
		--address=/bcast.test/255.255.255.255 --address=/mcast.test/224.0.0.251 \
		--address=/mcast.test/ff02::fb --address=/mcastok.test/239.1.2.3 \
		--pid-file="$WORK/dnsmasq.pid" --log-queries --log-facility="$NET_DNS_LOG"
	NET_DNS_PID=$_net_last

	printf 'nameserver 192.0.2.53\noptions timeout:1 attempts:2\n' > "$WORK/resolv.conf"
	# ip netns exec bind-mounts /etc/netns/<name>/* over /etc/*.
	[ -d /etc/netns ] || NET_ETC_MADE=1
	mkdir -p "/etc/netns/$NET_SBX" || { log "net_world_up: mkdir /etc/netns/$NET_SBX"; return 1; }
	cp "$WORK/resolv.conf" "/etc/netns/$NET_SBX/resolv.conf" || return 1
}

_net_wait_ready() {
	_i=0
	while [ $_i -lt 100 ]; do
		for _p in $NET_SERVE_PID $NET_SNIFF_PID $NET_DNS_PID; do
			if ! _net_alive "$_p"; then
				log "net_world_up: a service died: serve: $(cat "$WORK/serve.out")" \
					"sniff: $(cat "$WORK/sniff.out") dnsmasq: $(cat "$WORK/dnsmasq.out")"
				return 1
			fi
		done
		if grep -qx ready "$WORK/serve.out" && grep -qx ready "$WORK/sniff.out" &&
			[ "$(cat "$WORK/dnsmasq.pid" 2>/dev/null)" = "$NET_DNS_PID" ] &&
			ip netns exec "$NET_SBX" "$SBTNET" --timeout 500 resolve allowed.test \
				2> /dev/null | grep -qw 192.0.2.1; then
			return 0
		fi
		sleep 0.1
		_i=$((_i + 1))
	done
	log "net_world_up: not ready within 10 s: serve: $(cat "$WORK/serve.out")" \
		"sniff: $(cat "$WORK/sniff.out") dnsmasq: $(cat "$WORK/dnsmasq.out")" \
		"$(tail -n 5 "$NET_DNS_LOG" 2>/dev/null)"
	return 1
}

# net_world_up: build the world, wait until it answers. 0, or 1 after logging.
net_world_up() {
	[ -x "$SBTNET" ] || { log "net_world_up: $SBTNET missing (make)"; return 1; }
	_net_topology || return 1
	_net_services || return 1
	_net_wait_ready || return 1
	net_logs_reset
	log "network world up: sandbox netns $NET_SBX, host netns $NET_HOST"
}

# net_settle: let the sniffer catch up (it logs asynchronously): wait until its
# log has not grown for 0.2 s (at most ~3 s).
# net_dns_world N LOG: the upstream DNS server (tests/helpers/sbt-dns) on
# 192.0.2.54 in the host namespace, its queries logged to LOG, and the test
# hosts its names point at, each serving TCP 80 (sbt-net serve):
# 198.51.100.10 .. 198.51.100.(9+N) and 203.0.113.100 .. 203.0.113.139.
# 0 when both answer, else 1 after a message.
# net_dns_test_world N: the tools, the world, and sbt-dns as the upstream
# (net_dns_world N, its log $UP_LOG); $LOOKUP is sbt-lookup. Exits on failure.
net_dns_test_world() {
	net_require_tools
	LOOKUP="$TOP/build/tests/sbt-lookup"
	[ -x "$TOP/build/tests/sbt-dns" ] && [ -x "$LOOKUP" ] || { log "sbt-dns/sbt-lookup missing: run make"; exit 1; }
	net_world_up || exit 1
	UP_LOG="$WORK/upstream.log"
	: > "$UP_LOG"
	net_dns_world "$1" "$UP_LOG" || { fail "the DNS world did not start"; finish; }
}

net_dns_world() {
	_nd_n=$1
	_nd_log=$2
	ip -n "$NET_HOST" addr add 192.0.2.54/32 dev "$NET_HOST_IF" || return 1
	set --
	_nd_i=10
	while [ $_nd_i -lt $((10 + _nd_n)) ]; do
		ip -n "$NET_HOST" addr add "198.51.100.$_nd_i/32" dev lo && set -- "$@" --tcp "198.51.100.$_nd_i:80"
		_nd_i=$((_nd_i + 1))
	done
	_nd_i=100
	while [ $_nd_i -le 139 ]; do
		ip -n "$NET_HOST" addr add "203.0.113.$_nd_i/32" dev lo && set -- "$@" --tcp "203.0.113.$_nd_i:80"
		_nd_i=$((_nd_i + 1))
	done
	_net_bg "$NET_HOST" "$WORK/serve2.out" "$SBTNET" serve --log "$WORK/serve2.log" "$@"
	_net_bg "$NET_HOST" "$WORK/sbtdns.out" "$TOP/build/tests/sbt-dns" --listen 192.0.2.54 --log "$_nd_log"
	wait_for 5 grep -qx ready "$WORK/serve2.out" || { log "the DNS world's test hosts are not ready"; return 1; }
	wait_for 5 grep -qx ready "$WORK/sbtdns.out" || { log "sbt-dns is not ready"; return 1; }
}

net_settle() {
	_i=0 _last=-1 _same=0
	while [ $_i -lt 30 ] && [ $_same -lt 2 ]; do
		sleep 0.1
		_sz=$(wc -c < "$NET_SNIFF_LOG")
		if [ "$_sz" = "$_last" ]; then _same=$((_same + 1)); else _same=0; fi
		_last=$_sz
		_i=$((_i + 1))
	done
}

# Forget the traffic so far (readiness probes): empty server and sniffer logs.
# Both writers append, so truncation is safe while they run.
net_logs_reset() {
	net_settle
	: > "$NET_SERVER_LOG"
	: > "$NET_SNIFF_LOG"
}

# net_world_down: stop exactly the processes net_world_up started, delete the
# namespaces and /etc/netns/<sandbox>. Idempotent.
net_world_down() {
	for _p in $NET_PIDS; do
		kill -TERM "$_p" 2> /dev/null
	done
	for _p in $NET_PIDS; do
		_i=0
		while _net_alive "$_p" && [ $_i -lt 50 ]; do
			sleep 0.1
			_i=$((_i + 1))
		done
		_net_alive "$_p" && kill -KILL "$_p" 2> /dev/null
		wait "$_p" 2> /dev/null
	done
	NET_PIDS=""
	for _ns in ${NET_SBX_MADE:+"$NET_SBX"} ${NET_HOST_MADE:+"$NET_HOST"}; do
		_left=$(ip netns pids "$_ns" 2> /dev/null | tr '\n' ' ')
		[ -z "$_left" ] || log "net_world_down: processes still in $_ns: $_left"
		ip netns del "$_ns" 2> /dev/null
	done
	NET_SBX_MADE="" NET_HOST_MADE=""
	if [ -d "/etc/netns/$NET_SBX" ]; then
		rm -f "/etc/netns/$NET_SBX/resolv.conf"
		rmdir "/etc/netns/$NET_SBX" 2> /dev/null
	fi
	# Only if we created it and nobody else uses it now.
	if [ -n "$NET_ETC_MADE" ]; then
		rmdir /etc/netns 2> /dev/null
		NET_ETC_MADE=""
	fi
	return 0
}

net_cleanup_hook() {
	net_world_down
	cleanup
}
trap net_cleanup_hook EXIT

# in_sandbox CGROUP_DIR CMD [ARGS...]: run CMD in the sandbox netns and in the
# cgroup (sbt-spawn joins it, then execs CMD: only CMD's exec lands there).
# A CMD without a slash is looked up in PATH here (sbt-spawn uses execv).
# `ip netns exec` mounts a fresh sysfs on /sys in its own mount namespace,
# which hides the cgroup2 mount below /sys/fs/cgroup; so the cgroup is named
# through /proc/$$/root (this shell's root, in the original mount namespace).
in_sandbox() {
	_cg=$1 _cmd=$2
	shift 2
	case $_cmd in
	*/*) ;;
	*) _cmd=$(command -v "$_cmd") || { log "in_sandbox: $_cmd not found"; return 127; } ;;
	esac
	case $_cg in
	/*) ;;
	*) _cg=$(pwd)/$_cg ;;
	esac
	ip netns exec "$NET_SBX" "$SPAWN" "/proc/$$/root$_cg" --exec -- "$_cmd" "$@"
}

# _net_unbracket ADDR: strip [ ] around an IPv6 address.
_net_unbracket() { printf '%s\n' "$1" | tr -d '[]'; }

# sniffed_to ADDR: number of packets seen arriving on the host's veth whose
# destination is ADDR (any protocol, any port).
sniffed_to() {
	awk -v a="$(_net_unbracket "$1")" '
	$3 == "->" {
		d = $4
		if (d ~ /^\[/) { sub(/^\[/, "", d); sub(/\].*$/, "", d) }
		else if (d !~ /:.*:/) sub(/:[0-9]+$/, "", d)
		if (d == a) n++
	}
	END { print n + 0 }' "$NET_SNIFF_LOG"
}

# served_from_sandbox ADDR PORT PROTO: number of server log lines (TCP accepts
# or UDP datagrams, PROTO tcp|udp) from a sandbox address to ADDR:PORT.
served_from_sandbox() {
	_a=$(_net_unbracket "$1")
	case $_a in
	*:*) _d="[$_a]:$2" ;;
	*) _d="$_a:$2" ;;
	esac
	awk -v p="$3" -v d="$_d" -v s4="$NET_SBX_V4" -v s6="$NET_SBX_V6" '
	$1 == p && $3 == d && ($2 == s4 || $2 == s6) { n++ }
	END { print n + 0 }' "$NET_SERVER_LOG"
}
