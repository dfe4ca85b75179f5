#!/bin/sh
# Host rules never open the floor, and the sandbox never picks its resolver
# (issue 13, findings 2 and 3):
#  - an allowed name whose answers lie inside the floor (169.254.169.254,
#    fd00:ec2::254, loopback, their NAT64 and 6to4 forms) allows none of
#    them: the connect gets EPERM with reason floor, TraceStarted lists the
#    answer under the host's `floored`;
#  - without --resolver the resolver comes from the host's configuration
#    (SBTRACE_RESOLV_CONF here: the test must not use the host's real one),
#    never from the sandbox's resolv.conf: a sandbox that names its own
#    "resolver" gains no rule for it.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/netlib.sh"
net_require_tools
net_world_up || exit 1

C=$(mk_cgroup sbx)
in_sandbox "$C" /bin/sleep 120 &
HOLDER=$!
sleep 0.3

# run_case NAME EXPECT(ok|err) CMD...: as t_egress.sh; RES_ERR is the errno name.
run_case() {
	_name=$1 _want=$2
	shift 2
	_res=$(in_sandbox "$C" "$SBTNET" "$@")
	log "$_name: $_res"
	set -- $_res
	check "$_name: $_want" "$_want" "$1"
	RES_ERR=$2
}
ev() { jq -r -c "select($1) | $2" "$OUT" | sort -u | tr '\n' ' ' | sed 's/ $//'; }

# --- 1. floor first ------------------------------------------------------------
OUT="$WORK/floor.jsonl"
start_trace "$OUT" --cgroup "$C" --resolver 192.0.2.53 --allow-host floor.test \
	--allow-host lo.test --allow-host nat64.test --allow-host sixtofour.test \
	--allow-host siit.test --allow-host compat.test --allow-host localnat64.test \
	--allow-host teredo.test --allow-host bcast.test --allow-host mcast.test \
	--allow-host mcastok.test --allow-cidr 239.1.2.3/32 \
	--allow-host allowed.test || exit 1
hosts() { head -n 1 "$OUT" | jq -r --arg h "$1" ".egress.sandboxes[0].hosts[] | select(.name == \$h) | $2"; }
check "floor.test: no address allowed" "" "$(hosts floor.test '.addrs | join(" ")')"
check "floor.test: both answers floored" "169.254.169.254 link-local,fd00:ec2::254 metadata" \
	"$(hosts floor.test '[.floored[] | "\(.addr) \(.floor)"] | sort | join(",")')"
check "lo.test: loopback floored" "127.0.0.1 loopback,::1 loopback" \
	"$(hosts lo.test '[.floored[] | "\(.addr) \(.floor)"] | sort | join(",")')"
check "nat64.test: the NAT64 form floored" "64:ff9b::a9fe:a9fe link-local" \
	"$(hosts nat64.test '[.floored[] | "\(.addr) \(.floor)"] | join(",")')"
check "sixtofour.test: the 6to4 form floored" "2002:a9fe:a9fe::1 link-local" \
	"$(hosts sixtofour.test '[.floored[] | "\(.addr) \(.floor)"] | join(",")')"
check "allowed.test still allowed" "192.0.2.1 2001:db8:1::1" "$(hosts allowed.test '.addrs | join(" ")')"
check_true "stderr names the floored answer" grep -q 'floor.test .* resolves to 169.254.169.254, inside the floor (link-local)' "$OUT.err"

run_case "metadata v4 by name" err tcp 169.254.169.254 80
check "metadata v4: EPERM" EPERM "$RES_ERR"
run_case "metadata v6 by name" err tcp fd00:ec2::254 80
check "metadata v6: EPERM" EPERM "$RES_ERR"
run_case "NAT64 form" err tcp 64:ff9b::a9fe:a9fe 80
check "NAT64 form: EPERM" EPERM "$RES_ERR"
run_case "6to4 form" err tcp 2002:a9fe:a9fe::1 80
check "6to4 form: EPERM" EPERM "$RES_ERR"
run_case "SIIT form" err tcp ::ffff:0:a9fe:a9fe 80
run_case "IPv4-compatible form" err tcp ::a9fe:a9fe 80
run_case "allowed name" ok tcp 192.0.2.1 80
# Through the sandbox's DNS proxy: an answer into the floor is refused, nothing learned.
run_case "floor.test looked up by the sandbox: refused" err resolve floor.test
run_case "nat64.test looked up by the sandbox: refused" err resolve nat64.test
for _n in siit compat localnat64 teredo bcast mcast; do
	run_case "$_n.test looked up by the sandbox: refused" err resolve "$_n.test"
done
run_case "mcastok.test (its address named by a cidr rule)" ok resolve mcastok.test
run_case "allowed.test looked up by the sandbox" ok resolve allowed.test
stop_trace INT
check "DnsAnswer: every embedding of the floor, broadcast and multicast refused as the floor" \
	"bcast.test A broadcast,compat.test AAAA link-local,localnat64.test AAAA link-local,mcast.test A multicast,mcast.test AAAA multicast,siit.test AAAA link-local,teredo.test AAAA link-local" \
	"$(jq -s -r '[.[] | select(.event == "DnsAnswer" and .reason == "floor" and (.name | test("^(siit|compat|localnat64|teredo|bcast|mcast)\\.test$"))) | "\(.name) \(.qtype) \(.floored[0].floor)"] | unique | join(",")' "$OUT")"
check "DnsAnswer: a multicast address a cidr rule names is an answer" "answer 239.1.2.3" \
	"$(jq -s -r '[.[] | select(.event == "DnsAnswer" and .name == "mcastok.test" and .qtype == "A")][0] | "\(.reply) \(.addrs[0].addr // .addrs[0])"' "$OUT")"
check "DnsAnswer: floor.test refused as the floor" "floor refused 0 169.254.169.254 link-local" \
	"$(jq -s -r '[.[] | select(.event == "DnsAnswer" and .name == "floor.test" and .qtype == "A")][0] | "\(.reason) \(.reply) \(.addrs | length) \(.floored[0].addr) \(.floored[0].floor)"' "$OUT")"
check "DnsAnswer: the NAT64 form refused as the floor" "floor 64:ff9b::a9fe:a9fe" \
	"$(jq -s -r '[.[] | select(.event == "DnsAnswer" and .name == "nat64.test" and .qtype == "AAAA")][0] | "\(.reason) \(.floored[0].addr)"' "$OUT")"
check "exit code" 0 "$TRACE_RC"
check "denied as the floor, never by the host rules" \
	"169.254.169.254 floor link-local,2002:a9fe:a9fe::1 floor link-local,64:ff9b::a9fe:a9fe floor link-local,::a9fe:a9fe floor link-local,::ffff:0:a9fe:a9fe floor link-local,fd00:ec2::254 floor metadata" \
	"$(jq -s -r '[.[] | select(.event == "EgressDenied" and .dport == 80) | "\(.daddr) \(.reason) \(.floor)"] | unique | join(",")' "$OUT")"
check "no EgressAllowed into the floor" "" \
	"$(ev '.event == "EgressAllowed" and (.daddr | test("^(169\\.254|fd00:ec2|64:ff9b|2002:|127\\.)"))' .daddr)"

# --- 2. the sandbox's resolv.conf chooses nothing ---------------------------------
# The sandbox names a test host as its resolver; the host's configuration has
# no nameserver (the operator gave none): no resolver at all, not the sandbox's.
printf 'nameserver 203.0.113.5\n' > "/etc/netns/$NET_SBX/resolv.conf"
printf '# no nameserver\n' > "$WORK/host-resolv.conf"
OUT="$WORK/resolv.jsonl"
net_logs_reset
SBTRACE_RESOLV_CONF="$WORK/host-resolv.conf" start_trace "$OUT" --cgroup "$C" \
	--allow-host allowed.test --no-dns-proxy || exit 1
check "no resolver taken from the sandbox" "null" "$(head -n 1 "$OUT" | jq -c '.egress.sandboxes[0].resolver')"
check "the host rule says why it is empty" "no resolver: give --resolver ADDR" \
	"$(head -n 1 "$OUT" | jq -r '.egress.sandboxes[0].hosts[0].error')"
run_case "no proxy: TCP/53 to the sandbox's own 'resolver'" err tcp 203.0.113.5 53
check "TCP/53: EPERM" EPERM "$RES_ERR"
run_case "no proxy: UDP/53 to the sandbox's own 'resolver'" err udp-sendto 203.0.113.5 53
check "UDP/53: EPERM" EPERM "$RES_ERR"
stop_trace INT

# With the proxy its DNS goes to sbtrace, whatever address it names: no
# resolver, so no answer (SERVFAIL), and nothing reaches that address.
OUT="$WORK/resolv-proxy.jsonl"
SBTRACE_RESOLV_CONF="$WORK/host-resolv.conf" start_trace "$OUT" --cgroup "$C" \
	--allow-host allowed.test || exit 1
run_case "proxy: TCP/53 to the sandbox's own 'resolver' is the proxy" err tcp 203.0.113.5 53
run_case "proxy: no resolver, no answer" err resolve allowed.test
stop_trace INT
check "DnsAnswer: no upstream" "upstream_error servfail" \
	"$(jq -s -r '[.[] | select(.event == "DnsAnswer" and .name == "allowed.test")][0] | "\(.reason) \(.reply)"' "$OUT")"
net_settle
check "nothing reached 203.0.113.5" 0 "$(sniffed_to 203.0.113.5)"

# With --resolver the operator's server answers, whatever the sandbox wrote.
OUT="$WORK/operator.jsonl"
start_trace "$OUT" --cgroup "$C" --resolver 192.0.2.53 --allow-host allowed.test || exit 1
check "the operator's resolver" "192.0.2.53 --resolver 192.0.2.1" \
	"$(head -n 1 "$OUT" | jq -r '.egress.sandboxes[0] | "\(.resolver.addr) \(.resolver.source) \(.hosts[0].addrs[0])"')"
r=$(in_sandbox "$C" "$SBTNET" resolve allowed.test)
check "the sandbox's lookup gets the operator's answer" "ok 192.0.2.1" \
	"$(echo "$r" | tr ' ' '\n' | grep -x -e ok -e 192.0.2.1 | tr '\n' ' ' | sed 's/ $//')"
run_case "the allowed name connects" ok tcp 192.0.2.1 80
stop_trace INT
net_settle
check "still nothing reached 203.0.113.5" 0 "$(sniffed_to 203.0.113.5)"

kill "$HOLDER" 2> /dev/null
wait "$HOLDER" 2> /dev/null
finish
