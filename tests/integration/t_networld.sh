#!/bin/sh
# The network test world without sbtrace: the control for the egress tests.
# From the sandbox netns (in a cgroup) every test host answers over TCP
# (v4, v6, v4-mapped, Fast Open), UDP (sendto, connected + sendto), ICMP
# (ping socket, raw socket), AF_PACKET works and DNS resolves; the server and
# the sniffer see it all. And the sandbox has no way out: no default route,
# only documentation-range routes, and an unrouted or unassigned in-range
# address fails without any packet leaving our namespaces.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/netlib.sh"

net_require_tools
net_world_up || { fail "network world did not come up"; finish; }
C=$(mk_cgroup net)

# Ping sockets: allow root's group, in the sandbox netns only.
ip netns exec "$NET_SBX" sysctl -qw net.ipv4.ping_group_range="0 0" ||
	fail "ping_group_range in $NET_SBX"

# net DESC EXPECT ARGS...: run sbt-net ARGS in the sandbox, compare the first
# word of its line ("ok", or "err" / the errno name with EXPECT=err:NAME).
net() {
	_desc=$1 _want=$2
	shift 2
	_r=$(in_sandbox "$C" "$SBTNET" "$@")
	log "  $* -> $_r"
	case $_want in
	ok) check "$_desc" ok "${_r%% *}" ;;
	err:*)
		_e=${_r#err }
		check "$_desc" "${_want#err:}" "${_e%% *}"
		;;
	esac
}

has_word() { case " $1 " in *" $2 "*) echo yes ;; *) echo no ;; esac; }

# --- everything is reachable -----------------------------------------------
net "tcp 192.0.2.1:80" ok tcp 192.0.2.1 80
net "tcp 198.51.100.7:80" ok tcp 198.51.100.7 80
net "tcp 198.51.100.7:8080" ok tcp 198.51.100.7 8080
net "tcp 203.0.113.5:80" ok tcp 203.0.113.5 80
net "tcp [2001:db8:1::1]:80" ok tcp 2001:db8:1::1 80
net "tcp [2001:db8:2::7]:80" ok tcp 2001:db8:2::7 80
net "tcp [2001:db8:3::5]:8080" ok tcp '[2001:db8:3::5]' 8080
net "tcp-mapped ::ffff:198.51.100.7:80" ok tcp-mapped 198.51.100.7 80
net "tcp to a closed port is refused" err:ECONNREFUSED tcp 198.51.100.7 81
net "udp-sendto 198.51.100.7:9999 echoes" ok udp-sendto 198.51.100.7 9999
net "udp-sendto [2001:db8:2::7]:9999 echoes" ok udp-sendto 2001:db8:2::7 9999
net "udp-connect-sendto v4" ok udp-connect-sendto 198.51.100.7 9999 203.0.113.5 9999
net "udp-connect-sendto v6" ok udp-connect-sendto 2001:db8:2::7 9999 2001:db8:3::5 9999
net "ping 198.51.100.7" ok ping 198.51.100.7
net "ping 2001:db8:2::7" ok ping 2001:db8:2::7
net "raw icmp 203.0.113.5" ok raw 203.0.113.5
net "raw icmp6 2001:db8:3::5" ok raw 2001:db8:3::5
net "AF_PACKET socket" ok packet

# TCP Fast Open: the first connect fetches a cookie, the second carries data
# in its SYN (server side enabled in the host netns only).
ip netns exec "$NET_HOST" sysctl -qw net.ipv4.tcp_fastopen=3 || fail "tcp_fastopen in $NET_HOST"
net "tfo 198.51.100.7:80 (cookie)" ok tfo 198.51.100.7 80
net "tfo 198.51.100.7:80 (data in SYN)" ok tfo 198.51.100.7 80

r=$(in_sandbox "$C" "$SBTNET" resolve allowed.test)
log "  resolve allowed.test -> $r"
check "resolve allowed.test" ok "${r%% *}"
check "allowed.test has 192.0.2.1" yes "$(has_word "$r" 192.0.2.1)"
check "allowed.test has 2001:db8:1::1" yes "$(has_word "$r" 2001:db8:1::1)"
r=$(in_sandbox "$C" "$SBTNET" resolve blocked.test)
log "  resolve blocked.test -> $r"
check "resolve blocked.test" "ok 198.51.100.7" "$(echo "$r" | awk '{ print $1, $3 }')"
net "resolve nosuch.test" err:EAI_NONAME resolve nosuch.test
check "dnsmasq saw the sandbox's query" 1 \
	"$(grep -c 'query\[A\] blocked\.test from 192\.0\.2\.100' "$NET_DNS_LOG")"

# --- what arrived ------------------------------------------------------------
net_settle
check "a SYN with data reached the host (TFO)" 1 \
	"$(grep -c '^tcp 192\.0\.2\.100 -> 198\.51\.100\.7:80 SYN len=[1-9]' "$NET_SNIFF_LOG")"
check "server: tcp to 198.51.100.7:80 (tcp, tcp-mapped, 2 x tfo)" 4 \
	"$(served_from_sandbox 198.51.100.7 80 tcp)"
check "server: tcp to [2001:db8:2::7]:80" 1 "$(served_from_sandbox 2001:db8:2::7 80 tcp)"
check "server: tcp to [2001:db8:3::5]:8080" 1 "$(served_from_sandbox '[2001:db8:3::5]' 8080 tcp)"
check "server: udp to 198.51.100.7:9999 (sendto, connected send)" 2 \
	"$(served_from_sandbox 198.51.100.7 9999 udp)"
check "server: udp to 203.0.113.5:9999 (sendto on the connected socket)" 1 \
	"$(served_from_sandbox 203.0.113.5 9999 udp)"
check "server: udp to [2001:db8:3::5]:9999" 1 "$(served_from_sandbox 2001:db8:3::5 9999 udp)"
for a in 192.0.2.1 198.51.100.7 203.0.113.5 2001:db8:1::1 2001:db8:2::7 2001:db8:3::5 192.0.2.53; do
	check_true "sniffer saw packets to $a" [ "$(sniffed_to "$a")" -gt 0 ]
done
check_true "sniffer saw ICMP echo requests to 203.0.113.5" \
	grep -q '^icmp 192\.0\.2\.100 -> 203\.0\.113\.5 type=8' "$NET_SNIFF_LOG"
check_true "sniffer saw a SYN to [2001:db8:2::7]:80" \
	grep -q '^tcp 2001:db8:1::100 -> \[2001:db8:2::7\]:80 SYN len=0' "$NET_SNIFF_LOG"

# --- and nothing else is reachable --------------------------------------------
for ns in "$NET_SBX" "$NET_HOST"; do
	check "no IPv4 default route in $ns" "" "$(ip -n "$ns" -4 route show table all default)"
	check "no IPv6 default route in $ns" "" "$(ip -n "$ns" -6 route show table all default)"
	check "no forwarding in $ns" "0 0" \
		"$(ip netns exec "$ns" sysctl -n net.ipv4.ip_forward net.ipv6.conf.all.forwarding | tr '\n' ' ' | sed 's/ $//')"
done
# Every sandbox route is loopback, link-local, multicast or documentation.
bad=$( { ip -n "$NET_SBX" -4 route show table all; ip -n "$NET_SBX" -6 route show table all; } |
	awk '{ d = ($1 ~ /^(local|broadcast|multicast|anycast|unreachable|prohibit|blackhole|throw)$/) ? $2 : $1 }
	d !~ /^(127\.|192\.0\.2\.|198\.51\.100\.|203\.0\.113\.|::1(\/|$)|fe80::|ff00::|2001:db8:)/ { print }')
check "only documentation-range routes in the sandbox" "" "$bad"

net "unrouted 2001:db8:4::1 fails at once" err:ENETUNREACH tcp 2001:db8:4::1 80
check "nothing sent to 2001:db8:4::1" 0 "$(sniffed_to 2001:db8:4::1)"
# Unassigned on the link: ARP gets no answer, so the SYN never leaves.
r=$(in_sandbox "$C" "$SBTNET" --timeout 1500 tcp 192.0.2.250 80)
log "  tcp 192.0.2.250 80 -> $r"
case $r in "err EHOSTUNREACH "* | "err ETIMEDOUT "*) r=unreachable ;; esac
check "unassigned 192.0.2.250 is unreachable" unreachable "$r"
net_settle
check "no IP packet to 192.0.2.250" 0 "$(sniffed_to 192.0.2.250)"
# Routed to the host netns, which does not forward: it lands there, dead end.
r=$(in_sandbox "$C" "$SBTNET" --timeout 1500 tcp 203.0.113.99 80)
log "  tcp 203.0.113.99 80 -> $r"
case $r in "err EHOSTUNREACH "* | "err ENETUNREACH "* | "err ETIMEDOUT "*) r=unreachable ;; esac
check "unassigned 203.0.113.99 is unreachable" unreachable "$r"
check_true "the SYN to 203.0.113.99 landed on our host" [ "$(sniffed_to 203.0.113.99)" -gt 0 ]
check "the server never saw 203.0.113.99" 0 "$(served_from_sandbox 203.0.113.99 80 tcp)"

finish
