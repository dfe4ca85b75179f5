#!/bin/sh
# The DNS proxy (issue 13) on the tap path. The guest is the test world's
# sandbox netns, a full IP stack behind the veth whose host end (host0, in
# the host netns) sbtrace traces as a tap: the same tap_ingress / tap_egress
# programs a microVM's tap gets. The guest's resolv.conf names 198.51.100.53,
# an address nobody has: every answer it gets comes from sbtrace's proxy on
# the tap's host-side address, which asks the operator's upstream (sbt-dns,
# --resolver 192.0.2.54, its log shows what reached it):
#  - 100 lookups-then-connects of rot.test (2 of 6, TTL 1): 0 false denies;
#  - big.test (40 records) is truncated over UDP: the guest retries over TCP
#    through the proxy, all 40 usable, though one of them was denied (and
#    that verdict cached per CPU) right before the lookup; an explicit TCP
#    resolver (use-vc) works too;
#  - a non-allowed name is refused and never reaches the upstream; a floor
#    address in an answer refuses it; a hard-coded IP of a non-allowed host
#    gets the RST;
#  - a learned address expires (tc.test: TTL 1 + grace 2, over TCP only so
#    sbtrace's own lookups never see it): allowed after the lookup, denied
#    again afterwards (no stale allow in the flow cache);
#  - events: EgressAllowed dns_proxy on the tap, DnsQuery / DnsAnswer of the
#    tap's sandbox, connects name the name their address came from; the
#    programs are gone after the stop.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/netlib.sh"
net_dns_test_world 11

printf 'nameserver 198.51.100.53\n' > "/etc/netns/$NET_SBX/resolv.conf"
guest() { ip netns exec "$NET_SBX" "$@"; }

OUT="$WORK/trace.jsonl"
start_trace "$OUT" --tap "$NET_HOST_IF,netns=$NET_HOST,guest=$NET_SBX_V4,guest=$NET_SBX_V6" \
	--resolver 192.0.2.54 --allow-host 'rot.test port 80 proto tcp' --allow-host big.test \
	--allow-host floor.test --allow-host 'tc.test port 80 proto tcp' --dns-grace 2 || exit 1
check "TraceStarted: the tap's proxy on its host-side address" "true 192.0.2.1" \
	"$(head -n 1 "$OUT" | jq -r '.egress.sandboxes[0].dns_proxy | "\(.tap.udp4 > 0 and .tap.tcp4 > 0) \(.tap.addrs[0])"')"
refused() { [ "$(guest "$SBTNET" --timeout 1000 tcp "$1" 80 | cut -d' ' -f1,2)" = "err ECONNREFUSED" ]; }

r=$(guest "$LOOKUP" connect rot.test 80 100)
log "rot.test x100: $r"
check "100 lookups-then-connects, rotating pairs, TTL 1: 0 false denies" \
	"ok 100 eperm 0 other 0 nxname 0" "$r"
check "the lookups reached the operator's upstream" 1 \
	"$(awk '$2 == "rot.test" && $3 == 1 { n++ } END { print (n >= 100) }' "$UP_LOG")"

# Not learned yet (sbtrace's own UDP lookup got the truncated answer): denied,
# and that verdict is now in the tap's flow cache.
check_true "a big.test address before the guest's lookup: refused" refused 203.0.113.100
r=$(guest "$LOOKUP" all big.test 80)
log "big.test: $r"
check "40 records, truncated over UDP, retried over TCP: all usable" \
	"addrs 40 ok 40 eperm 0 other 0" "$r"
check "the truncated answer was retried over TCP upstream" 1 "$(grep -c '^tcp big.test 1$' "$UP_LOG")"

r=$(guest "$SBTNET" resolve blocked.test)
check "a non-allowed name: refused" err "${r%% *}"
r=$(guest "$SBTNET" resolve floor.test)
check "an answer with a floor address: refused" err "${r%% *}"
r=$(guest "$SBTNET" --timeout 1000 tcp 198.51.100.7 80)
check "a hard-coded IP of a non-allowed host: refused" "err ECONNREFUSED" "$(echo "$r" | cut -d' ' -f1,2)"

# TCP from the start (use-vc), to another address nobody has.
printf 'nameserver 203.0.113.53\noptions use-vc\n' > "/etc/netns/$NET_SBX/resolv.conf"
r=$(guest "$LOOKUP" connect rot.test 80 3)
check "DNS over TCP to any address: the proxy answers" "ok 3 eperm 0 other 0 nxname 0" "$r"
check_true "the TCP queries reached the upstream over TCP" grep -q '^tcp rot.test 1$' "$UP_LOG"
r=$(guest "$SBTNET" resolve blocked.test)
check "over TCP a non-allowed name is refused too" err "${r%% *}"

# tc.test: learned only through the guest's lookup, for TTL 1 + grace 2.
check_true "tc.test's address before its lookup: refused" refused 198.51.100.20
r=$(guest "$LOOKUP" connect tc.test 80 1)
check "tc.test looked up (over TCP), then connected" "ok 1 eperm 0 other 0 nxname 0" "$r"
sleep 4.5
check_true "tc.test's address after TTL + grace: refused again (no stale cached allow)" \
	refused 198.51.100.20

stop_trace INT
check "exit code" 0 "$TRACE_RC"
check "the upstream never saw blocked.test" 0 "$(grep -c blocked "$UP_LOG")"
check "nothing reached the non-allowed host" 0 "$(grep -c '198\.51\.100\.7:' "$NET_SERVER_LOG")"
check "EgressAllowed: the guest's DNS went to the proxy, on the tap" "tap dns_proxy" \
	"$(jq -s -r '[.[] | select(.event == "EgressAllowed" and .dport == 53) | "\(.source) \(.reason)"] | unique | join(",")' "$OUT")"
check "DnsQuery refused blocked.test, for the tap's sandbox" "tap:$NET_HOST_IF blocked.test dns_name refused" \
	"$(jq -s -r '[.[] | select(.event == "DnsQuery" and .name == "blocked.test") | "\(.sandbox) \(.name) \(.reason) \(.reply)"] | unique | join(",")' "$OUT")"
check "DnsAnswer floor.test: refused, the floor address reported" "floor 169.254.169.254" \
	"$(jq -s -r '[.[] | select(.event == "DnsAnswer" and .name == "floor.test" and .qtype == "A")][0] | "\(.reason) \(.floored[0].addr // .floored[0])"' "$OUT")"
check "DnsAnswer big.test over TCP: 40 addresses learned" 40 \
	"$(jq -s -r '[.[] | select(.event == "DnsAnswer" and .name == "big.test" and .proto == "tcp")][0].addrs | length' "$OUT")"
# (the first event of each address: the folded counts flushed at the stop
# come after the learned addresses expired, when no name is known any more)
check "EgressAllowed to each rotating address names rot.test" "rot.test" \
	"$(jq -s -r '[.[] | select(.event == "EgressAllowed" and .source == "tap" and (.daddr | startswith("198.51.100.1")))] | group_by(.daddr) | map(.[0].dns.name) | unique | join(",")' "$OUT")"
check "DnsAnswer tc.test: learned for TTL 1 + grace 2" "198.51.100.20 1 2" \
	"$(jq -s -r '[.[] | select(.event == "DnsAnswer" and .name == "tc.test" and .proto == "tcp")][0] | "\(.addrs[0].addr // .addrs[0]) \(.ttl) \(.grace_s)"' "$OUT")"
finish
