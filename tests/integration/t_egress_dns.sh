#!/bin/sh
# The per-sandbox DNS proxy (issue 13) on the cgroup path, against a server
# of our own (tests/helpers/sbt-dns.c: what dnsmasq cannot make) in the test
# world's host namespace:
#  - rot.test answers 2 of 6 addresses, another pair each time, TTL 1: 100
#    lookups-then-connects by name, 0 denied (the proxy learns each answer
#    before the sandbox sees it);
#  - big.test has 40 records: the UDP answer is truncated, the sandbox
#    retries over TCP through the proxy, and all 40 are usable;
#  - a name no host rule allows is refused by the proxy and never reaches
#    the upstream (its log); a hard-coded IP of a non-allowed host is EPERM;
#  - the sandbox names its own "resolver" (over TCP: use-vc) and gains
#    nothing: its DNS still goes to the proxy, nothing reaches that address;
#  - events: DnsQuery (dns_name), DnsAnswer (learned addresses), and every
#    EgressAllowed by a host rule names the name its address came from;
#  - the upstream gets the question, not the sandbox's bytes (issue 26): a
#    0x20-cased query with EDNS options and an additional record arrives
#    lower-case with sbtrace's own bare EDNS record only.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/netlib.sh"
# Our server on 192.0.2.54, and the 46 test hosts its names point at.
net_dns_test_world 6

C=$(mk_cgroup sbx)
in_sandbox "$C" /bin/sleep 120 &
HOLDER=$!
sleep 0.3

OUT="$WORK/trace.jsonl"
start_trace "$OUT" --cgroup "$C" --resolver 192.0.2.54 --allow-host 'rot.test port 80 proto tcp' \
	--allow-host big.test --dns-grace 2 || exit 1
check "TraceStarted shows the proxy" true \
	"$(head -n 1 "$OUT" | jq -r '.egress.sandboxes[0].dns_proxy.udp4 > 0')"

r=$(in_sandbox "$C" "$LOOKUP" connect rot.test 80 100)
log "rot.test x100: $r"
check "100 lookups-then-connects by name, rotating pairs, TTL 1: 0 false denies" \
	"ok 100 eperm 0 other 0 nxname 0" "$r"

r=$(in_sandbox "$C" "$LOOKUP" all big.test 80)
log "big.test: $r"
check "40 records, truncated over UDP: all usable" "addrs 40 ok 40 eperm 0 other 0" "$r"
check "the truncated answer was retried over TCP upstream" 1 "$(grep -c '^tcp big.test 1$' "$UP_LOG")"

r=$(in_sandbox "$C" "$SBTNET" resolve blocked.test)
log "blocked.test: $r"
check "a non-allowed name is refused" err "${r%% *}"
r=$(in_sandbox "$C" "$SBTNET" tcp 198.51.100.7 80)
check "a hard-coded IP of a non-allowed host: EPERM" EPERM "$(echo "$r" | cut -d' ' -f2)"
r=$(in_sandbox "$C" "$SBTNET" tcp 198.51.100.16 80)
check "a neighbour of the rotating pool: EPERM" EPERM "$(echo "$r" | cut -d' ' -f2)"

# A query with something to smuggle (0x20 case, CD/AD, EDNS with DO, a cookie
# and padding, a TXT record): the upstream gets the question only, the
# sandbox its own question back.
cp "$UP_LOG" "$WORK/up-before"
r=$(in_sandbox "$C" "$LOOKUP" raw rot.test 203.0.113.5)
log "raw rot.test: $r"
check "0x20/EDNS/additional query: answered, its own case" "ok rOt.TeSt an 2 ar 0 tc 0" "$r"
check "... the upstream saw only the question: lower case, RD, our bare EDNS record" \
	"hdr udp rot.test flags=0100 ar=1 extra=11" \
	"$(diff "$WORK/up-before" "$UP_LOG" | sed -n 's/^> //p' | grep '^hdr')"

# The sandbox's own resolv.conf names a test host, over TCP: nothing gained.
printf 'nameserver 203.0.113.5\noptions use-vc\n' > "/etc/netns/$NET_SBX/resolv.conf"
net_logs_reset
r=$(in_sandbox "$C" "$LOOKUP" connect rot.test 80 3)
check "its own 'resolver' over TCP: still the proxy's answers" "ok 3 eperm 0 other 0 nxname 0" "$r"
r=$(in_sandbox "$C" "$SBTNET" resolve blocked.test)
check "its own 'resolver': a non-allowed name still refused" err "${r%% *}"
net_settle
check "nothing reached the sandbox's 'resolver'" 0 "$(sniffed_to 203.0.113.5)"
check_true "the TCP queries reached the upstream over TCP" grep -q '^tcp rot.test 1$' "$UP_LOG"

stop_trace INT
check "exit code" 0 "$TRACE_RC"
check "the upstream never saw blocked.test" 0 "$(grep -c blocked "$UP_LOG")"
check "DnsQuery refused blocked.test" "blocked.test A dns_name refused denied,blocked.test AAAA dns_name refused denied" \
	"$(jq -s -r '[.[] | select(.event == "DnsQuery") | "\(.name) \(.qtype) \(.reason) \(.reply) \(.verdict)"] | unique | join(",")' "$OUT")"
check "DnsAnswer big.test: 40 addresses learned" 40 \
	"$(jq -s -r '[.[] | select(.event == "DnsAnswer" and .name == "big.test" and .proto == "tcp")][0].addrs | length' "$OUT")"
check "DnsAnswer rot.test: its rule, ttl, grace" "host rot.test port 80 proto tcp 1 2" \
	"$(jq -s -r '[.[] | select(.event == "DnsAnswer" and .name == "rot.test" and .qtype == "A")][0] | "\(.rule.text) \(.ttl) \(.grace_s)"' "$OUT")"
check "every EgressAllowed to a rotating address names rot.test" "rot.test" \
	"$(jq -s -r '[.[] | select(.event == "EgressAllowed" and (.daddr | startswith("198.51.100.1"))) | .dns.name] | unique | join(",")' "$OUT")"
check "the sandbox's DNS went to the proxy" "dns_proxy" \
	"$(jq -s -r '[.[] | select(.event == "EgressAllowed" and .dport == 53) | .reason] | unique | join(",")' "$OUT")"
# (glibc's getaddrinfo connects a UDP socket to each answer, port 0, to sort
# them (RFC 6724): the rule is port 80 proto tcp, so those are denied; no
# packet is sent either way)
check "no EgressDenied for the names but glibc's sorting probes" "" \
	"$(jq -s -r '[.[] | select(.event == "EgressDenied" and .daddr != "198.51.100.7" and .daddr != "198.51.100.16" and .dport != 0) | .daddr] | unique | join(",")' "$OUT")"

# The per-sandbox limit says so, and --dns-deny-reply nxdomain.
printf 'nameserver 192.0.2.53\n' > "/etc/netns/$NET_SBX/resolv.conf"
OUT="$WORK/limit.jsonl"
start_trace "$OUT" --cgroup "$C" --resolver 192.0.2.54 --allow-host big.test --allow-host rot.test \
	--dns-max-learned 10 --dns-deny-reply nxdomain || exit 1
r=$(in_sandbox "$C" "$SBTNET" resolve big.test)
check "40 records past a limit of 10: no answer" err "${r%% *}"
r=$(in_sandbox "$C" "$LOOKUP" connect rot.test 80 1)
check "below the limit names still work" "ok 1 eperm 0 other 0 nxname 0" "$r"
r=$(in_sandbox "$C" "$SBTNET" resolve blocked.test)
check "--dns-deny-reply nxdomain" "err EAI_NONAME" "$(echo "$r" | cut -d' ' -f1,2)"
stop_trace INT
check "DnsAnswer says limit" "limit servfail" \
	"$(jq -s -r '[.[] | select(.event == "DnsAnswer" and .name == "big.test" and .qtype == "A" and .proto == "tcp")][0] | "\(.reason) \(.reply)"' "$OUT")"
check "DnsQuery says nxdomain" "nxdomain" \
	"$(jq -s -r '[.[] | select(.event == "DnsQuery") | .reply] | unique | join(",")' "$OUT")"

echo 1 > "$C/cgroup.kill" # the holder and what it runs (sbt-spawn forks it)
kill "$HOLDER" 2> /dev/null
wait "$HOLDER" 2> /dev/null
finish
