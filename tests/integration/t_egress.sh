#!/bin/sh
# Egress enforcement in a test world (README, "Set-up and tests": the network rules):
# the spike's five-case matrix (allowed name, non-allowed name, non-allowed
# hard-coded IP, allowed raw IP, ICMP), IPv6, IPv4-mapped IPv6 on a dual-stack
# socket, UDP sendto without connect, connected UDP then sendto elsewhere,
# TCP Fast Open, a raw socket, an exec in a child cgroup, folding, and the
# re-resolution of host rules when their TTL expires.
# For every denied case: the call fails within 1 s, the test host never
# received anything, and one event names sandbox, destination and verdict.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/netlib.sh"
net_require_tools
net_world_up || exit 1

C=$(mk_cgroup sbx)
mkdir "$C/child"
SC=$(sb_name "$C")
ip netns exec "$NET_SBX" sysctl -qw net.ipv4.ping_group_range="0 0"
ip netns exec "$NET_SBX" sysctl -qw net.ipv4.tcp_fastopen=1
ip netns exec "$NET_HOST" sysctl -qw net.ipv4.tcp_fastopen=3

# A process already in the sandbox: sbtrace resolves host rules as it would
# (its network namespace) with the resolver the operator names.
in_sandbox "$C" /bin/sleep 120 &
HOLDER=$!
sleep 0.3

OUT="$WORK/trace.jsonl"
start_trace "$OUT" --cgroup "$C" --resolver 192.0.2.53 --allow-host allowed.test \
	--allow-cidr 203.0.113.5/32 \
	--allow-cidr "2001:db8:3::/48 port 80 proto tcp" || exit 1
net_logs_reset
check "egress mode" enforce "$(head -n 1 "$OUT" | jq -r .egress.mode)"
check "host resolved in the sandbox's netns by its resolver" "192.0.2.53 sandbox 192.0.2.1" \
	"$(head -n 1 "$OUT" | jq -r '.egress.sandboxes[0] | "\(.resolver.addr) \(.resolver.netns) \(.hosts[0].addrs[0])"')"

# run_case NAME EXPECT(ok|err) CMD...: run in the sandbox; EXPECT err also
# requires the failure within 1 s.
run_case() {
	_name=$1 _want=$2
	shift 2
	_res=$(in_sandbox "$C" "$SBTNET" "$@")
	log "$_name: $_res"
	set -- $_res
	check "$_name: $_want" "$_want" "$1"
	if [ "$_want" = err ]; then
		check_true "$_name: failed within 1 s ($3 ms)" awk -v t="$3" 'BEGIN { exit !(t < 1000) }'
	fi
	RES_ERR=$2
}

run_case "1 allowed name: resolve" ok resolve allowed.test
run_case "1 allowed name: connect" ok tcp 192.0.2.1 80
run_case "2 non-allowed name: resolve (refused by the sandbox's DNS proxy)" err resolve blocked.test
run_case "2 non-allowed name: connect" err tcp 198.51.100.7 80
check "2: EPERM" EPERM "$RES_ERR"
run_case "3 non-allowed hard-coded IP" err tcp 198.51.100.7 8080
run_case "4 allowed raw IP" ok tcp 203.0.113.5 80
run_case "5 ICMP to a non-allowed host" err ping 198.51.100.7
run_case "5 ICMP to an allowed host" ok ping 203.0.113.5
run_case "6 IPv6 non-allowed" err tcp 2001:db8:2::7 80
run_case "6 IPv6 allowed (port 80 tcp)" ok tcp 2001:db8:3::5 80
run_case "6 IPv6 allowed range, other port" err tcp 2001:db8:3::5 8080
run_case "7 IPv4-mapped, non-allowed" err tcp-mapped 198.51.100.7 80
run_case "7 IPv4-mapped, allowed by the IPv4 rule" ok tcp-mapped 203.0.113.5 80
run_case "8 UDP sendto, non-allowed" err udp-sendto 198.51.100.7 9999
run_case "8 UDP sendto, allowed" ok udp-sendto 203.0.113.5 9999
run_case "9 connected UDP, then sendto elsewhere" err udp-connect-sendto 203.0.113.5 9999 198.51.100.7 9999
run_case "10 TCP Fast Open, non-allowed" err tfo 198.51.100.7 83
run_case "11 raw socket" err raw 203.0.113.5
check "11: raw socket refused with EPERM" EPERM "$RES_ERR"
_res=$(ip netns exec "$NET_SBX" "$SPAWN" "/proc/$$/root$C/child" --exec -- "$SBTNET" tcp 198.51.100.7 84)
check "12 child cgroup: denied" err "$(echo "$_res" | cut -d' ' -f1)"
run_case "13 link-local floor" err tcp 169.254.169.254 80

# A retry loop of identical denials folds into few events with counts.
run_case "14 retry loop" err tcp --repeat 200 198.51.100.7 82
net_settle
sleep 2.5 # one TTL (2 s) passes: the host rule is resolved again
stop_trace INT
check "exit code" 0 "$TRACE_RC"

check "the test host received nothing for 198.51.100.7" 0 "$(sniffed_to 198.51.100.7)"
check "the test host received nothing for 2001:db8:2::7" 0 "$(sniffed_to 2001:db8:2::7)"
check "allowed host served" 1 "$(served_from_sandbox 192.0.2.1 80 tcp)"
check "allowed raw IP served (v4 + mapped)" 2 "$(served_from_sandbox 203.0.113.5 80 tcp)"

# one_event DESC JQ_FILTER EXPECTED: exactly the expected summary of matching events
ev() { jq -r -c "select($1) | $2" "$OUT" | sort | tr '\n' ' ' | sed 's/ $//'; }
check "allowed by the host rule" "connect4 host allowed.test" \
	"$(ev '.event == "EgressAllowed" and .daddr == "192.0.2.1" and .dport == 80' '"\(.hook) \(.rule.text)"')"
check "allowed by the CIDR rule" "connect4 cidr 203.0.113.5/32" \
	"$(ev '.event == "EgressAllowed" and .daddr == "203.0.113.5" and .dport == 80 and .family == "ipv4"' '"\(.hook) \(.rule.text)"')"
check "DNS to the sandbox's resolver went to the proxy" "dns_proxy" \
	"$(jq -s -r '[.[] | select(.event == "EgressAllowed" and .daddr == "192.0.2.53") | .reason] | unique | join(",")' "$OUT")"
check "2: the non-allowed name never reached dnsmasq" 0 "$(grep -c 'blocked\.test' "$NET_DNS_LOG")"
check "2: DnsQuery refused it" "dns_name refused" \
	"$(jq -s -r '[.[] | select(.event == "DnsQuery" and .name == "blocked.test") | "\(.reason) \(.reply)"] | unique | join(",")' "$OUT")"
check "1: the allowed name's address names its answer" "allowed.test" \
	"$(ev '.event == "EgressAllowed" and .daddr == "192.0.2.1" and .dport == 80' '.dns.name')"
check "2: one event for the denied name" "$SC connect4 not_in_allowlist 1" \
	"$(ev '.event == "EgressDenied" and .daddr == "198.51.100.7" and .dport == 80 and .hook == "connect4"' '"\(.sandbox) \(.hook) \(.reason) \(.count)"')"
check "3: hard-coded IP denied" "connect4 not_in_allowlist" \
	"$(ev '.event == "EgressDenied" and .daddr == "198.51.100.7" and .dport == 8080' '"\(.hook) \(.reason)"')"
check_true "5: ICMP denied by the backstop" [ "$(ev '.event == "EgressDenied" and .daddr == "198.51.100.7" and .proto == "icmp"' '.hook' | wc -w)" -ge 1 ]
check "6: IPv6 denied" "connect6 ipv6" \
	"$(ev '.event == "EgressDenied" and .daddr == "2001:db8:2::7"' '"\(.hook) \(.family)"')"
check "6: IPv6 port not in the rule" "connect6 not_in_allowlist" \
	"$(ev '.event == "EgressDenied" and .daddr == "2001:db8:3::5" and .dport == 8080' '"\(.hook) \(.reason)"')"
check "7: mapped address normalized to IPv4" "connect6 ipv6" \
	"$(ev '.event == "EgressDenied" and .daddr == "198.51.100.7" and .family == "ipv6"' '"\(.hook) \(.family)"')"
check "8, 9: UDP sendto denied (unconnected, and after connect)" "sendmsg4 udp" \
	"$(jq -s -r '[.[] | select(.event == "EgressDenied" and .daddr == "198.51.100.7" and .dport == 9999) | "\(.hook) \(.proto)"] | unique | join(",")' "$OUT")"
check "8, 9: two denials" 2 \
	"$(jq -s '[.[] | select(.event == "EgressDenied" and .daddr == "198.51.100.7" and .dport == 9999) | .count] | add' "$OUT")"
check_true "10: TFO denied" [ "$(ev '.event == "EgressDenied" and .daddr == "198.51.100.7" and .dport == 83' '.hook' | wc -w)" -ge 1 ]
check "12: child cgroup denial attributed to the sandbox" "$SC" \
	"$(ev '.event == "EgressDenied" and .daddr == "198.51.100.7" and .dport == 84' '.sandbox')"
check "11: raw socket event" "sock_create raw_socket raw" \
	"$(ev '.event == "EgressDenied" and .reason == "raw_socket"' '"\(.hook) \(.reason) \(.sock_type)"')"
check "13: floor" "floor link-local" \
	"$(ev '.event == "EgressDenied" and .daddr == "169.254.169.254"' '"\(.reason) \(.floor)"')"
check "14: 200 denials, folded" "200" \
	"$(jq -s '[.[] | select(.event == "EgressDenied" and .dport == 82) | .count] | add' "$OUT")"
check_true "14: into few events" [ "$(jq -s '[.[] | select(.event == "EgressDenied" and .dport == 82)] | length' "$OUT")" -le 3 ]
check_true "TTL refresh: the resolver was asked again" \
	[ "$(grep -c 'query\[A\] allowed.test from 192.0.2.100' "$NET_DNS_LOG")" -ge 3 ]
check "nothing lost" 0 "$(nevents "$OUT" EventsLost)"
check "TraceStopped egress lost" 0 "$(jq -r 'select(.event == "TraceStopped") | .sandboxes[0].egress.lost' "$OUT")"

kill "$HOLDER" 2> /dev/null
wait "$HOLDER" 2> /dev/null
check "no sbtrace program left loaded" 0 "$(nr_our_progs)"
check "no cgroup program left on the sandbox" 0 "$(bpftool cgroup show "$C" 2> /dev/null | grep -c egress_)"
finish
