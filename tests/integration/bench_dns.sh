#!/bin/sh
# DNS proxy benchmark (scripts/bench-dns.sh runs it; not a t_* test): in the
# test world, getaddrinfo latency from a sandbox against our own server
# (tests/helpers/sbt-dns.c) directly (no sbtrace) and through sbtrace's
# proxy (median, p99 over BENCH_LOOKUPS lookups); then connect4's cost per
# call (the kernel's bpf_stats) with the proxy's learned entries in the trie;
# then the same lookups through the tap path's proxy (the sandbox's veth
# traced as a tap: tap_ingress / tap_egress rewrite the queries and replies).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/netlib.sh"
N=${BENCH_LOOKUPS:-500}
net_require_tools
net_world_up || exit 1
OLD_STATS=$(sysctl -n kernel.bpf_stats_enabled)
net_dns_world 0 /dev/null || exit 1
printf 'nameserver 192.0.2.54\n' > "/etc/netns/$NET_SBX/resolv.conf"
C=$(mk_cgroup sbx)
in_sandbox "$C" /bin/sleep 120 &
HOLDER=$!
sleep 0.3
LOOKUP="$TOP/build/tests/sbt-lookup"

direct=$(in_sandbox "$C" "$LOOKUP" bench rot.test "$N")
direct_big=$(in_sandbox "$C" "$LOOKUP" bench big.test "$N")
start_trace "$WORK/t.jsonl" --cgroup "$C" --resolver 192.0.2.54 --allow-host big.test \
	--allow-host rot.test || exit 1
proxied=$(in_sandbox "$C" "$LOOKUP" bench rot.test "$N")
proxied_big=$(in_sandbox "$C" "$LOOKUP" bench big.test "$N")
sysctl -qw kernel.bpf_stats_enabled=1
in_sandbox "$C" "$LOOKUP" all big.test 80 > /dev/null
i=0
while [ $i -lt 10 ]; do in_sandbox "$C" "$LOOKUP" all big.test 80 > /dev/null; i=$((i + 1)); done
stats=$(bpftool prog show name egress_connect4 --json 2> /dev/null)
sysctl -qw kernel.bpf_stats_enabled="$OLD_STATS"
stop_trace INT
learned=$(jq -s '[.[] | select(.event == "DnsAnswer") | .addrs[].addr] | unique | length' "$WORK/t.jsonl")
start_trace "$WORK/tap.jsonl" --tap "$NET_HOST_IF,netns=$NET_HOST,guest=$NET_SBX_V4" \
	--resolver 192.0.2.54 --allow-host big.test --allow-host rot.test || exit 1
tap=$(ip netns exec "$NET_SBX" "$LOOKUP" bench rot.test "$N")
tap_big=$(ip netns exec "$NET_SBX" "$LOOKUP" bench big.test "$N")
stop_trace INT
echo "lookups from the sandbox, $N each (getaddrinfo AF_INET, microseconds):"
echo "  rot.test (UDP, 2 records), direct:            $direct"
echo "  rot.test (UDP, 2 records), through the proxy: $proxied"
echo "  big.test (40 records: TC, then TCP), direct:  $direct_big"
echo "  big.test (40 records: TC, then TCP), proxy:   $proxied_big"
echo "  rot.test, through the tap path's proxy:       $tap"
echo "  big.test, through the tap path's proxy:       $tap_big"
echo "$stats" | jq -r --arg l "$learned" '"connect4 with \($l) learned addresses in the trie: \(.run_cnt) calls, \((.run_time_ns / .run_cnt) | floor) ns per call (bpf_stats)"'
echo 1 > "$C/cgroup.kill" # the holder and what it runs (sbt-spawn forks it)
kill "$HOLDER" 2> /dev/null
wait "$HOLDER" 2> /dev/null
exit 0
