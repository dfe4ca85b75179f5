#!/bin/sh
# Learn mode (issue 29), the round trip on the cgroup path, against the test
# world's own DNS server (tests/helpers/sbt-dns.c) in its host namespace:
#  - --egress learn: a workload resolves and connects to rot.test (rotating
#    pairs of addresses) and alias.test (a CNAME to cdn.test, two addresses),
#    and once to a hard-coded address (198.51.100.7, never resolved): nothing
#    is refused but the floor; AllowlistProposed lists both names with their
#    port, the address apart (resolved false, its comment); --learn-out
#    writes the same rules; each --learn-format's text is in the event;
#  - the systemd text passes systemd-analyze verify in a small unit, the
#    Cilium one is a CiliumNetworkPolicy (jq structure checks);
#  - the same workload under --egress enforce --allowlist FILE: 0 denies for
#    the names, the hard-coded address allowed while its cidr line is kept,
#    EPERM once the flagged line is removed;
#  - every event validates against the schema.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/netlib.sh"
net_dns_test_world 6
# never the host's resolver: the proxy asks --resolver, from the sandbox's namespace
printf 'nameserver 192.0.2.54\n' > "$WORK/resolv.conf"
SBTRACE_RESOLV_CONF="$WORK/resolv.conf"
export SBTRACE_RESOLV_CONF

C=$(mk_cgroup sbx)
in_sandbox "$C" /bin/sleep 120 &
HOLDER=$!
sleep 0.3

# workload: prints one line per step
workload() {
	echo "rot $(in_sandbox "$C" "$LOOKUP" connect rot.test 80 6)"
	echo "alias $(in_sandbox "$C" "$LOOKUP" all alias.test 80)"
	_r=$(in_sandbox "$C" "$SBTNET" tcp 198.51.100.7 80)
	case $_r in
	ok*) echo "ip ok" ;;
	*) echo "ip $(echo "$_r" | cut -d' ' -f2)" ;;
	esac
}

AL="$WORK/allowlist"
OUT="$WORK/learn.jsonl"
start_trace "$OUT" --cgroup "$C" --resolver 192.0.2.54 --egress learn --learn-out "$AL" \
	--learn-format sbtrace,flags --learn-format cilium --learn-format systemd || exit 1
check "TraceStarted: mode learn, the proxy on" "learn true" \
	"$(head -n 1 "$OUT" | jq -r '"\(.egress.mode) \(.egress.sandboxes[0].dns_proxy.udp4 > 0)"')"
r=$(workload)
log "learn: $r"
check "learn: rot.test x6 connects" "rot ok 6 eperm 0 other 0 nxname 0" "$(echo "$r" | sed -n 1p)"
check "learn: alias.test (CNAME) both addresses" "alias addrs 2 ok 2 eperm 0 other 0" "$(echo "$r" | sed -n 2p)"
check "learn: the hard-coded address is not refused" "ip ok" "$(echo "$r" | sed -n 3p)"
r=$(in_sandbox "$C" "$SBTNET" tcp 169.254.169.254 80)
check "learn: the floor is still denied" EPERM "$(echo "$r" | cut -d' ' -f2)"
stop_trace INT
check "learn: exit code" 0 "$TRACE_RC"
P="$WORK/proposed.json"
jq -c 'select(.event == "AllowlistProposed")' "$OUT" > "$P"
check "one AllowlistProposed" 1 "$(wc -l < "$P")"
check "... before TraceStopped" "AllowlistProposed TraceStopped" \
	"$(jq -r 'select(.event == "AllowlistProposed" or .event == "TraceStopped") | .event' "$OUT" | tr '\n' ' ' | sed 's/ $//')"
check "the proposal: the names with their port, the address apart" \
	"host alias.test port 80 proto tcp true|host rot.test port 80 proto tcp true|cidr 198.51.100.7/32 port 80 proto tcp false" \
	"$(jq -r '[.rules[] | "\(.rule) \(.resolved)"] | join("|")' "$P")"
check "never_resolved 1, complete" "1 true" "$(jq -r '"\(.never_resolved) \(.complete)"' "$P")"
check "the floor is in no rule" 0 "$(jq '[.rules[] | select(.rule | test("169.254"))] | length' "$P")"
check "--learn-out: the sbtrace text" "$(jq -r '.formats.sbtrace' "$P")" "$(cat "$AL")"
check "the flagged line's comment" "# never resolved: a hard-coded address" \
	"$(grep -B1 '^cidr 198.51.100.7/32' "$AL" | head -n 1)"
check "learn_out names the file" "$AL" "$(jq -r '.learn_out' "$P")"
check "every EgressObserved to a name carries it" "alias.test,rot.test" \
	"$(jq -s -r '[.[] | select(.event == "EgressObserved" and .dport == 80 and .daddr != "198.51.100.7") | .dns.name] | unique | join(",")' "$OUT")"
check "the flags text" "--allow-host 'alias.test port 80 proto tcp' \\|--allow-host 'rot.test port 80 proto tcp' \\|--allow-cidr '198.51.100.7/32 port 80 proto tcp'" \
	"$(jq -r '.formats.flags' "$P" | tr '\n' '|' | sed 's/|*$//')"

# Cilium: the structure of a CiliumNetworkPolicy egress rule
jq -r '.formats.cilium' "$P" > "$WORK/cilium.json"
check "cilium: kind, apiVersion, name" "CiliumNetworkPolicy cilium.io/v2 true" \
	"$(jq -r '"\(.kind) \(.apiVersion) \(.metadata.name | test("^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"))"' "$WORK/cilium.json")"
check "cilium: toFQDNs matchName with toPorts" "alias.test:80/TCP,rot.test:80/TCP" \
	"$(jq -r '[.spec.egress[] | select(.toFQDNs) | "\(.toFQDNs[0].matchName):\(.toPorts[0].ports[0].port)/\(.toPorts[0].ports[0].protocol)"] | join(",")' "$WORK/cilium.json")"
check "cilium: toCIDR for the address" "198.51.100.7/32" \
	"$(jq -r '[.spec.egress[] | select(.toCIDR) | .toCIDR[]] | join(",")' "$WORK/cilium.json")"
check "cilium: the DNS rule that lets it see names" "53 *" \
	"$(jq -r '.spec.egress[] | select(.toEndpoints) | "\(.toPorts[0].ports[0].port) \(.toPorts[0].rules.dns[0].matchPattern)"' "$WORK/cilium.json")"
check "cilium: every rule has toPorts, each port a string" "true" \
	"$(jq -r '[.spec.egress[] | .toPorts[].ports[].port | type == "string"] | all' "$WORK/cilium.json")"

# systemd: a small unit with the lines
if command -v systemd-analyze > /dev/null; then
	{
		printf '[Unit]\nDescription=sbtrace learn test\n\n[Service]\nType=oneshot\nExecStart=/bin/true\n'
		jq -r '.formats.systemd' "$P"
	} > "$WORK/learn-test.service"
	check "systemd: IPAddressAllow= for the address only" "IPAddressDeny=any|IPAddressAllow=198.51.100.7/32" \
		"$(grep '^IPAddress' "$WORK/learn-test.service" | tr '\n' '|' | sed 's/|$//')"
	systemd-analyze verify --man=no "$WORK/learn-test.service" > "$WORK/verify.out" 2>&1
	check "systemd-analyze verify: exit 0" 0 $?
	check "systemd-analyze verify: not a word" "" "$(cat "$WORK/verify.out")"
else
	log "systemd-analyze not installed: the systemd text unchecked"
fi

# The round trip: the proposal enforced
OUT="$WORK/enforce.jsonl"
start_trace "$OUT" --cgroup "$C" --resolver 192.0.2.54 --egress enforce --allowlist "$AL" || exit 1
r=$(workload)
log "enforce, the address kept: $r"
check "enforce: rot.test" "rot ok 6 eperm 0 other 0 nxname 0" "$(echo "$r" | sed -n 1p)"
check "enforce: alias.test" "alias addrs 2 ok 2 eperm 0 other 0" "$(echo "$r" | sed -n 2p)"
check "enforce: the kept address allowed" "ip ok" "$(echo "$r" | sed -n 3p)"
stop_trace INT
# (glibc's getaddrinfo connects a UDP socket to each answer, port 0, to sort
# them: no rule allows port 0, nothing is sent, learn mode leaves them out)
check "enforce: 0 denies but glibc's sorting probes" "" \
	"$(jq -s -r '[.[] | select(.event == "EgressDenied" and .dport != 0) | "\(.daddr):\(.dport)"] | unique | join(",")' "$OUT")"

grep -v -e '^# never resolved' -e '^cidr ' "$AL" > "$WORK/allowlist.names"
OUT="$WORK/enforce-names.jsonl"
start_trace "$OUT" --cgroup "$C" --resolver 192.0.2.54 --allowlist "$WORK/allowlist.names" || exit 1
r=$(workload)
log "enforce, the address removed: $r"
check "names only: rot.test" "rot ok 6 eperm 0 other 0 nxname 0" "$(echo "$r" | sed -n 1p)"
check "names only: alias.test" "alias addrs 2 ok 2 eperm 0 other 0" "$(echo "$r" | sed -n 2p)"
check "names only: the hard-coded address EPERM" "ip EPERM" "$(echo "$r" | sed -n 3p)"
stop_trace INT
check "names only: the one deny is the address" "198.51.100.7:80" \
	"$(jq -s -r '[.[] | select(.event == "EgressDenied" and .dport != 0) | "\(.daddr):\(.dport)"] | unique | join(",")' "$OUT")"

# options that need learn mode, and learn's own refusals
"$SBTRACE" trace --cgroup "$C" --learn-out "$WORK/x" > /dev/null 2> "$WORK/usage.err"
check "--learn-out without --egress learn: usage error" 2 $?
"$SBTRACE" trace --cgroup "$C" --egress learn --learn-format yaml > /dev/null 2> "$WORK/usage.err"
check "--learn-format yaml: usage error" 2 $?
check_true "... naming it" grep -q "'yaml'" "$WORK/usage.err"

echo 1 > "$C/cgroup.kill"
kill "$HOLDER" 2> /dev/null
wait "$HOLDER" 2> /dev/null
finish
