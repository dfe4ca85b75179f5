#!/bin/sh
# The tap path end to end with a fake VMM: a tap inside the test world's host
# netns (where the test hosts live), sbtrace trace --tap on it, and sbt-tapvm
# playing the guest — it writes real frames into the tap fd and reads what
# comes back. Allowed flows reach the test hosts (their SYN-ACK and UDP echo
# come back); denied ones never do (no packet reaches the host's IP stack)
# and the guest gets a RST / ICMP prohibited on the tap fd, at once; spoofed,
# truncated and VLAN-tagged frames are dropped and reported; tcx and the
# clsact fallback both work; nothing stays attached after a stop or SIGKILL.
. "$(dirname "$0")/lib.sh"
# The test resolver's answers live an hour: the trace re-resolves its host
# rule when they expire (in the tap's netns), and those answers would count
# among the host stack's datagrams while the denied checks below look for
# the guest's.
NET_DNS_TTL=3600
. "$(dirname "$0")/netlib.sh"

TAPVM="$TOP/build/tests/sbt-tapvm"
[ -x "$TAPVM" ] || { log "$TAPVM missing: run make"; exit 1; }
net_require_tools
net_world_up || exit 1

TAP=sbtap0
GMAC=02:00:00:00:00:02
# Guest 203.0.113.254/30 and 2001:db8:9::2/64; the tap's host side .253 / ::1.
ip -n "$NET_HOST" tuntap add "$TAP" mode tap || { log "cannot create a tap"; exit 1; }
ip -n "$NET_HOST" addr add 203.0.113.253/30 dev "$TAP"
ip -n "$NET_HOST" addr add 2001:db8:9::1/64 dev "$TAP" nodad
ip -n "$NET_HOST" link set "$TAP" up
# A second tap, traced at the same time: its own sandbox and slot.
ip -n "$NET_HOST" tuntap add sbtap1 mode tap
IFINDEX=$(ip netns exec "$NET_HOST" cat "/sys/class/net/$TAP/ifindex")

# vm ARGS...: one sbt-tapvm command as the guest; prints its result line.
vm() {
	ip netns exec "$NET_HOST" "$TAPVM" --tap "$TAP" --mac "$GMAC" --ip 203.0.113.254 \
		--gw 203.0.113.253 --ip6 2001:db8:9::2 --gw6 2001:db8:9::1 --timeout-ms 2000 "$@" \
		2>> "$WORK/tapvm.err" | head -n 1
}
field() { printf '%s\n' "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }
# What the host's stack received: IPv4 packets (ARP is not IP), and TCP
# segments, UDP datagrams and ICMP messages of both families (IPv6 neighbour
# discovery is IP too, so IPv6 is counted above the network layer).
# Ip: Forwarding DefaultTTL InReceives ...: packets the host's IPv4 stack received
ip_in() { ip netns exec "$NET_HOST" awk '/^Ip: [0-9]/ { print $4 }' /proc/net/snmp; }
l4_in() {
	ip netns exec "$NET_HOST" sh -c 'cat /proc/net/snmp /proc/net/snmp6' | awk '
	/^Tcp: [0-9]/ { n += $11 }
	/^Udp: [0-9]/ { n += $2 + $3 + $4 }
	$1 == "Udp6InDatagrams" || $1 == "Udp6NoPorts" || $1 == "Udp6InErrors" { n += $2 }
	$1 == "Icmp6InEchos" { n += $2 }
	END { print n + 0 }'
}

POLICY="--allow-cidr 198.51.100.7/32 port 80 proto tcp"
OUT="$WORK/trace.jsonl"
start_trace "$OUT" --tap "$TAP,netns=$NET_HOST,guest=203.0.113.254,guest=2001:db8:9::2,resolver=192.0.2.53" \
	--allow-cidr '198.51.100.7/32 port 80 proto tcp' \
	--allow-cidr '198.51.100.7/32 port 9999 proto udp' \
	--allow-cidr '2001:db8:2::7/128' --allow-host 'allowed.test port 80' \
	--tap "sbtap1,netns=$NET_HOST,guest=198.51.100.77" || exit 1
check "features: the tap capability, probed without a device" tcx \
	"$("$SBTRACE" features | jq -r .hooks.tap.mode)"
check "TraceStarted: tap attached with tcx" tcx \
	"$(head -n 1 "$OUT" | jq -r '.sandboxes[0].tap.mode')"
check "TraceStarted: the tap's ifindex" "$IFINDEX" \
	"$(head -n 1 "$OUT" | jq -r '.sandboxes[0].tap.ifindex')"
check "TraceStarted: visibility exec none, network tap" "none tap" \
	"$(head -n 1 "$OUT" | jq -r '.sandboxes[0].visibility | "\(.exec) \(.network)"')"

check "two taps: two sandboxes, their own slots, both tcx" "tap:sbtap0 0 tcx tap:sbtap1 1 tcx" \
	"$(head -n 1 "$OUT" | jq -r '[.sandboxes[] | "\(.name) \(.slot) \(.tap.mode)"] | join(" ")')"
check "host rule resolved in the tap's netns with its resolver" "192.0.2.1" \
	"$(head -n 1 "$OUT" | jq -r '.egress.sandboxes[0].hosts[0].addrs[0]')"

# Allowed: the test host answers.
R=$(vm syn 198.51.100.7 80)
check "allowed v4 SYN reaches the test host (SYN-ACK back)" synack "$(field "$R" result)"
R=$(vm udp 198.51.100.7 9999 hello)
check "allowed v4 UDP reaches the echo server" reply "$(field "$R" result)"
R=$(vm syn 2001:db8:2::7 80)
check "allowed v6 SYN reaches the test host" synack "$(field "$R" result)"
R=$(vm syn 192.0.2.1 80)
check "allowed by a host rule (allowed.test): reaches the test host" synack "$(field "$R" result)"
R=$(vm --sport 40123 --isn 1000 syn 2001:db8:2::7 8080)
check "allowed v6 (any port) reaches the test host" synack "$(field "$R" result)"

# DNS (host rules, enforce): any destination port 53 goes to sbtrace's proxy
# on the tap's host side; the answer comes back from the address the guest
# asked (its checksum right after both rewrites); other names are refused.
R=$(vm udp 198.51.100.99 53 dns:allowed.test)
check "DNS to any address: the proxy answers from that address" "reply ok 0 1" \
	"$(field "$R" result) $(field "$R" csum) $(field "$R" rcode) $(field "$R" an)"
R=$(vm udp 2001:db8:3::53 53 dns:allowed.test)
check "DNS over IPv6 to any address: the proxy answers from that address" "reply ok 0 1" \
	"$(field "$R" result) $(field "$R" csum) $(field "$R" rcode) $(field "$R" an)"
R=$(vm udp 192.0.2.1 53 dns:other.test)
check "DNS for a name no rule allows: REFUSED" "reply 5 0" \
	"$(field "$R" result) $(field "$R" rcode) $(field "$R" an)"

# Denied: nothing reaches the host's IP stack; the guest is told at once.
sleep 0.3
IN4=$(ip_in) L4=$(l4_in)
R=$(vm --sport 40001 --isn 4000000000 syn 203.0.113.5 80)
check "denied v4 SYN: RST back on the tap" rst "$(field "$R" result)"
check "denied v4 SYN: RST from the destination" 203.0.113.5 "$(field "$R" src)"
check "denied v4 SYN: RST to the guest's port" 40001 "$(field "$R" dport)"
check "denied v4 SYN: RST acks the SYN" 4000000001 "$(field "$R" ack)"
check "denied v4 SYN: RST checksum" ok "$(field "$R" csum)"
MS=$(field "$R" ms)
check_true "denied v4 SYN: refused in under 1 s ($MS ms)" awk "BEGIN { exit !($MS < 1000) }"
R=$(vm syn 198.51.100.7 443)
check "allowed host, other port: RST" rst "$(field "$R" result)"
R=$(vm udp 203.0.113.5 9999 secret)
check "denied v4 UDP: ICMP back" "icmp 3 13" \
	"$(field "$R" result) $(field "$R" type) $(field "$R" code)"
check "denied v4 UDP: the ICMP quotes the datagram" "203.0.113.5 9999" \
	"$(field "$R" quoted_dst) $(field "$R" quoted_dport)"
R=$(vm syn 2001:db8:3::5 80)
check "denied v6 SYN: RST back" rst "$(field "$R" result)"
R=$(vm udp 2001:db8:3::5 9999)
check "denied v6 UDP: ICMPv6 prohibited back" "icmp 1 1" \
	"$(field "$R" result) $(field "$R" type) $(field "$R" code)"
R=$(vm ping 203.0.113.5)
check "denied v4 echo: ICMP prohibited" "icmp 3 13" \
	"$(field "$R" result) $(field "$R" type) $(field "$R" code)"
# Identical denials fold: five SYNs to one closed destination, one event now,
# the rest counted in the kernel and reported at stop.
for _ in 1 2 3 4 5; do vm --timeout-ms 500 syn 203.0.113.5 8080 > /dev/null; done
sleep 0.3
check "denied v4: no packet reached the host's IPv4 stack" "$IN4" "$(ip_in)"
check "denied v4/v6: no segment, datagram or echo reached the host's stack" "$L4" "$(l4_in)"
check "denied: the servers saw nothing from the guest to a denied host" 0 \
	"$(grep -cE '203\.0\.113\.5|2001:db8:3::5|192\.0\.2\.1:53' "$NET_SERVER_LOG")"

# Spoofed, truncated, tagged: dropped, never answered, reported.
IN4=$(ip_in)
R=$(vm --src 203.0.113.99 --timeout-ms 700 syn 198.51.100.7 80)
check "spoofed source: dropped (no answer)" timeout "$(field "$R" result)"
GWMAC=$(ip -n "$NET_HOST" link show "$TAP" | awk '/link\/ether/ { print $2 }')
# Ethernet + 10 bytes of an IPv4 header to 198.51.100.7
R=$(vm --ignore-noise --timeout-ms 500 frame "$(echo "$GWMAC" | tr -d :)0200000000020800450000280000400040065555")
check "truncated IPv4 header: dropped" "frames n=0" "$(field "$R" result) n=$(field "$R" n)"
R=$(vm --vlan 7 --gw-mac "$GWMAC" --timeout-ms 700 syn 203.0.113.5 80)
check "VLAN-tagged denied SYN: RST back (tag kept)" rst "$(field "$R" result)"
sleep 0.3
check "spoofed/truncated: nothing reached the host's IPv4 stack" "$IN4" "$(ip_in)"

stop_trace INT
check "sbtrace: exit 0 on SIGINT" 0 "$TRACE_RC"
sel() { jq -c "select(.event == \"$1\" and .source == \"tap\") | $2" "$OUT"; }
check "EgressAllowed v4 SYN, by rule 1, keyed by the tap" "1 $IFINDEX tap" \
	"$(sel EgressAllowed 'select(.daddr == "198.51.100.7" and .dport == 80) | "\(.rule.id) \(.ifindex) \(.hook)"' | head -n 1 | tr -d '"')"
check "EgressDenied v4 SYN: reply tcp_rst" '"tcp_rst"' \
	"$(sel EgressDenied 'select(.daddr == "203.0.113.5" and .dport == 80 and .proto == "tcp") | .reply' | head -n 1)"
# (one event, then at most one per second-long window and the flush at stop)
check "five identical denials: counts sum to 5 in at most 3 events" "5 yes" \
	"$(sel EgressDenied 'select(.daddr == "203.0.113.5" and .dport == 8080) | .count' |
		awk '{ s += $1; n++ } END { print s, (n <= 3 ? "yes" : "no") }')"
check "EgressDenied v4 UDP: reply icmp_prohibited" '"icmp_prohibited"' \
	"$(sel EgressDenied 'select(.daddr == "203.0.113.5" and .proto == "udp") | .reply' | head -n 1)"
check "EgressAllowed: the guest's DNS went to the proxy" "dns_proxy" \
	"$(jq -s -r '[.[] | select(.event == "EgressAllowed" and .source == "tap" and .dport == 53) | .reason] | unique | join(",")' "$OUT")"
check "the upstream never saw other.test" 0 "$(grep -c 'other\.test' "$NET_DNS_LOG")"
check "EgressDenied spoofed source, with the source" '"203.0.113.99"' \
	"$(sel EgressDenied 'select(.reason == "spoofed_source") | .saddr' | head -n 1)"
check_true "EgressDenied malformed (the truncated frame)" \
	sh -c "[ \$(jq -c 'select(.event == \"EgressDenied\" and .reason == \"malformed\")' '$OUT' | wc -l) -ge 1 ]"
check "EgressAllowed by the host rule" '"host allowed.test port 80"' \
	"$(sel EgressAllowed 'select(.daddr == "192.0.2.1") | .rule.text' | head -n 1)"
check "events name the tap sandbox" '"tap:sbtap0"' \
	"$(sel EgressDenied .sandbox | sort -u)"
check "ShellInvocationObserved: exec not visible, incomplete" "false false" \
	"$(jq -r 'select(.event == "ShellInvocationObserved") | "\(.exec_visible) \(.complete)"' "$OUT" | sort -u)"
check "tcx: nothing left on the tap" "" \
	"$(ip netns exec "$NET_HOST" bpftool net show dev "$TAP" 2>/dev/null | grep -E 'tap_ingress' || true)"

# The clsact fallback, and a SIGKILL with tcx.
OUT2="$WORK/trace2.jsonl"
SBTRACE_DISABLE_HOOKS=tap:tcx start_trace "$OUT2" \
	--tap "$TAP,netns=$NET_HOST,guest=203.0.113.254,resolver=192.0.2.53" \
	--allow-cidr '198.51.100.7/32 port 80 proto tcp' --allow-host 'allowed.test port 80' || exit 1
check "fallback: clsact when tcx is disabled" "clsact true" \
	"$(head -n 1 "$OUT2" | jq -r '"\(.sandboxes[0].tap.mode) \(.hooks.tap.fallback)"')"
R=$(vm syn 203.0.113.5 80)
check "clsact: denied SYN gets its RST" rst "$(field "$R" result)"
R=$(vm syn 198.51.100.7 80)
check "clsact: allowed SYN reaches the test host" synack "$(field "$R" result)"
R=$(vm udp 198.51.100.99 53 dns:allowed.test)
check "clsact: the proxy answers from the address asked (tap_egress as a clsact filter)" \
	"reply ok 0 1" "$(field "$R" result) $(field "$R" csum) $(field "$R" rcode) $(field "$R" an)"
check "clsact: ingress and egress filters" "tap_egress tap_ingress" \
	"$({ ip netns exec "$NET_HOST" tc filter show dev "$TAP" ingress
		ip netns exec "$NET_HOST" tc filter show dev "$TAP" egress; } |
		grep -oE 'tap_(ingress|egress)' | sort -u | tr '\n' ' ' | sed 's/ $//')"
stop_trace TERM
check "clsact: exit 0 on SIGTERM" 0 "$TRACE_RC"
check "clsact: filter and qdisc removed at stop" "" \
	"$(ip netns exec "$NET_HOST" tc qdisc show dev "$TAP" | grep clsact || true)"

# No host rule: no proxy, DNS only to the designated resolver.
OUT4="$WORK/trace4.jsonl"
start_trace "$OUT4" --tap "$TAP,netns=$NET_HOST,guest=203.0.113.254,resolver=192.0.2.53" \
	--allow-cidr '198.51.100.7/32 port 80 proto tcp' || exit 1
check "no host rule: no DNS proxy" null "$(head -n 1 "$OUT4" | jq -c '.egress.sandboxes[0].dns_proxy')"
R=$(vm udp 192.0.2.53 53 dns:allowed.test)
check "no proxy: the designated resolver answers itself" "reply 0 1" \
	"$(field "$R" result) $(field "$R" rcode) $(field "$R" an)"
R=$(vm udp 192.0.2.1 53)
check "no proxy: DNS to another address gets ICMP prohibited" "icmp 3 13" \
	"$(field "$R" result) $(field "$R" type) $(field "$R" code)"
stop_trace INT
check "EgressDenied DNS to a non-resolver" '"not_resolver"' \
	"$(jq -c 'select(.event == "EgressDenied" and .dport == 53) | .reason' "$OUT4" | head -n 1)"

OUT3="$WORK/trace3.jsonl"
start_trace "$OUT3" --tap "$TAP,netns=$NET_HOST" --allow-cidr 198.51.100.7/32 \
	--allow-host 'allowed.test port 80' --resolver 192.0.2.53 || exit 1
check "no guest address: sources not checked (said so)" false \
	"$(head -n 1 "$OUT3" | jq -r '.sandboxes[0].tap.source_check')"
R=$(vm udp 198.51.100.99 53 dns:allowed.test)
check "--resolver (not the tap's): the proxy answers" "reply 0 1" \
	"$(field "$R" result) $(field "$R" rcode) $(field "$R" an)"
kill -KILL "$TRACE_PID"
wait "$TRACE_PID" 2> /dev/null
TRACE_PID=""
sleep 0.2
check "SIGKILL with tcx: nothing left attached" "" \
	"$(ip netns exec "$NET_HOST" bpftool net show dev "$TAP" 2>/dev/null | grep -E 'tap_ingress' || true)"
R=$(vm syn 203.0.113.5 80)
check "after SIGKILL the tap is open again (the kernel answers)" synack "$(field "$R" result)"
R=$(vm --timeout-ms 700 udp 198.51.100.99 53 dns:allowed.test)
check "after SIGKILL DNS is not diverted any more (nobody answers)" timeout "$(field "$R" result)"
check "SIGKILL with tcx: no tcx link left on the tap" 0 \
	"$(bpftool -j link show 2> /dev/null | jq "[.[] | select(.type == \"tcx\" and .ifindex == $IFINDEX)] | length")"

# Bad input: a device that is not there, a bad spec.
"$SBTRACE" trace --tap "nosuch0,netns=$NET_HOST" --duration 1 > "$WORK/bad.out" 2> "$WORK/bad.err"
check "missing tap: exit 2" 2 $?
check_true "missing tap: says which device" grep -q "nosuch0: no such device" "$WORK/bad.err"
"$SBTRACE" trace --tap "$TAP,guest=not-an-ip" --duration 1 > "$WORK/bad.out" 2> "$WORK/bad.err"
check "bad guest address: exit 2" 2 $?
check_true "bad guest address: named" grep -q "guest 'not-an-ip'" "$WORK/bad.err"
check "bad input: nothing on stdout" 0 "$(wc -c < "$WORK/bad.out")"
"$SBTRACE" trace --tap "$TAP,netns=$NET_HOST" --egress off --duration 1 > /dev/null 2> "$WORK/bad.err"
check "--tap with --egress off: exit 2" 2 $?
"$SBTRACE" trace --tap "$TAP,netns=$NET_HOST" --tap "$TAP,netns=$NET_HOST" --duration 1 \
	> /dev/null 2> "$WORK/bad.err"
check "the same tap twice: exit 2" 2 $?
"$SBTRACE" trace --tap "$TAP,netns=no-such-ns-$$" --duration 1 > /dev/null 2> "$WORK/bad.err"
check "a tap in a netns that does not exist: exit 2" 2 $?
check_true "a tap in a netns that does not exist: named" grep -q "no-such-ns-$$" "$WORK/bad.err"
finish
