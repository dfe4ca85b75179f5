#!/bin/sh
# Host rules under sbtrace agent (issue 26): a --policy-dir child with host
# rules and a shim sandbox with `--allow 'host ...'` get the session core's
# DNS proxy (as under sbtrace trace), each registered before its first
# process: rot.test (2 of 6 addresses, another pair each time, TTL 1) used
# by lookups-then-connects with 0 false denies, big.test's 40 records
# usable, a non-allowed name refused and never asked upstream; SandboxAdded
# shows the proxy; nothing is denied for want of one.
#
# The agent runs in the test world's sandbox netns (nsenter --net: /sys, and
# so the cgroup v2 mount, stay): the host's resolver it asks is the world's
# (SBTRACE_RESOLV_CONF), never one outside it.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/netlib.sh"

SHIM="$TOP/build/bin/sbtrace-shim"
LOOKUP="$TOP/build/tests/sbt-lookup"
STATE="$WORK/state"
PDIR="$WORK/policies"
P="ad$$"
OUT="$WORK/agent.jsonl"
SHIM_PID=""
net_require_tools
net_world_up || exit 1
UP_LOG="$WORK/upstream.log"
: > "$UP_LOG"
net_dns_world 6 "$UP_LOG" || { fail "the DNS world did not start"; finish; }
printf 'nameserver 192.0.2.54\n' > "$WORK/resolv.conf"

dns_cleanup() {
	[ -n "$SHIM_PID" ] && kill -TERM "$SHIM_PID" 2> /dev/null && wait "$SHIM_PID" 2> /dev/null
	remove_sandboxes "$SHIM" "$STATE" "$P"
	net_cleanup_hook
}
trap dns_cleanup EXIT

PARENT=$(mk_cgroup pods)
PARENT_NAME=$(sb_name "$PARENT")
mkdir -m 0755 "$PDIR"
printf 'host rot.test port 80 proto tcp\nhost big.test\n' > "$PDIR/cdns.policy"

nsenter --net="/run/netns/$NET_SBX" env SBTRACE_RESOLV_CONF="$WORK/resolv.conf" \
	"$SBTRACE" agent --cgroup-parent "$PARENT" --state-dir "$STATE" --policy-dir "$PDIR" \
	--out "$OUT" --no-socket --poll-ms 20 --stats-interval 0 2> "$WORK/agent.err" &
TRACE_PID=$!
TRACE_OUT=$OUT
has_started() { [ -s "$OUT" ] && head -n 1 "$OUT" | grep -q '"TraceStarted"'; }
wait_for 10 has_started || { log "agent did not start: $(cat "$WORK/agent.err")"; exit 1; }

# --- a --policy-dir child with host rules ---------------------------------------
mkdir "$PARENT/cdns"
added() { jq -e -n --arg s "$1" 'any(inputs; .event == "SandboxAdded" and .sandbox == $s)' "$OUT" > /dev/null 2>&1; }
wait_for 5 added "$PARENT_NAME/cdns"
check "child: SandboxAdded, host rules accepted, a proxy in no namespace yet" "enforce 2 null true 0" \
	"$(jq -r --arg s "$PARENT_NAME/cdns" 'select(.event == "SandboxAdded" and .sandbox == $s) | .egress | "\(.mode) \(.rules) \(.error) \(.dns_proxy != null) \(.dns_proxy.netns)"' "$OUT")"
r=$(in_sandbox "$PARENT/cdns" "$LOOKUP" connect rot.test 80 60)
log "child: rot.test x60: $r"
check "child: 60 lookups-then-connects, rotating pairs, TTL 1: 0 false denies" \
	"ok 60 eperm 0 other 0 nxname 0" "$r"
r=$(in_sandbox "$PARENT/cdns" "$LOOKUP" all big.test 80)
check "child: 40 records, all usable" "addrs 40 ok 40 eperm 0 other 0" "$r"
r=$(in_sandbox "$PARENT/cdns" "$SBTNET" resolve blocked.test)
check "child: a non-allowed name is refused" err "${r%% *}"
r=$(in_sandbox "$PARENT/cdns" "$SBTNET" tcp 198.51.100.7 80)
check "child: a hard-coded IP of a non-allowed host: EPERM" EPERM "$(echo "$r" | cut -d' ' -f2)"

# --- a --policy-dir child in learn mode (issue 29) ---------------------------------
# rot.test (rotating pairs), alias.test (a CNAME) and a hard-coded address:
# nothing refused but the floor; at its removal AllowlistProposed (before
# SandboxRemoved) lists both names and the address apart; written back as its
# policy (without `egress learn`) the same workload gets 0 denies.
learn_workload() {
	echo "rot $(in_sandbox "$1" "$LOOKUP" connect rot.test 80 6)"
	echo "alias $(in_sandbox "$1" "$LOOKUP" all alias.test 80)"
	echo "ip $(in_sandbox "$1" "$SBTNET" tcp 198.51.100.7 80 | cut -d' ' -f1,2)"
}
printf 'egress learn # propose, refuse nothing\nlearn-format flags,systemd\n' > "$PDIR/clearn.policy"
mkdir "$PARENT/clearn"
wait_for 5 added "$PARENT_NAME/clearn"
check "learn child: SandboxAdded, mode learn, its proxy" "learn 0 null true" \
	"$(jq -r --arg s "$PARENT_NAME/clearn" 'select(.event == "SandboxAdded" and .sandbox == $s) | .egress | "\(.mode) \(.rules) \(.error) \(.dns_proxy != null)"' "$OUT")"
r=$(learn_workload "$PARENT/clearn")
log "learn child: $r"
check "learn child: nothing refused" "rot ok 6 eperm 0 other 0 nxname 0|alias addrs 2 ok 2 eperm 0 other 0|ip ok" \
	"$(echo "$r" | tr '\n' '|' | sed 's/|$//; s/ip ok .*/ip ok/')"
r=$(in_sandbox "$PARENT/clearn" "$SBTNET" tcp 169.254.169.254 80)
check "learn child: the floor still denied" EPERM "$(echo "$r" | cut -d' ' -f2)"
rmdir "$PARENT/clearn"
removed() { jq -e -n --arg s "$1" 'any(inputs; .event == "SandboxRemoved" and .sandbox == $s)' "$OUT" > /dev/null 2>&1; }
wait_for 10 removed "$PARENT_NAME/clearn"
PROP="$WORK/clearn.proposal.json"
jq -c --arg s "$PARENT_NAME/clearn" 'select(.event == "AllowlistProposed" and .sandbox == $s)' "$OUT" > "$PROP"
check "learn child: one AllowlistProposed, before its SandboxRemoved" "AllowlistProposed SandboxRemoved" \
	"$(jq -r --arg s "$PARENT_NAME/clearn" 'select(.sandbox == $s and (.event == "AllowlistProposed" or .event == "SandboxRemoved")) | .event' "$OUT" | tr '\n' ' ' | sed 's/ $//')"
check "learn child: the names with their port, the address apart" \
	"host alias.test port 80 proto tcp true|host rot.test port 80 proto tcp true|cidr 198.51.100.7/32 port 80 proto tcp false" \
	"$(jq -r '[.rules[] | "\(.rule) \(.resolved)"] | join("|")' "$PROP")"
check "learn child: complete; the flags and systemd texts asked for, the sbtrace one always" \
	"true true true true" \
	"$(jq -r '"\(.complete) \(.formats.flags | contains("--allow-host")) \(.formats.systemd | contains("IPAddressAllow=198.51.100.7/32")) \(.formats.sbtrace | contains("host rot.test port 80 proto tcp"))"' "$PROP")"
jq -r '.formats.sbtrace' "$PROP" > "$PDIR/cround.policy"
mkdir "$PARENT/cround"
wait_for 5 added "$PARENT_NAME/cround"
r=$(learn_workload "$PARENT/cround")
log "the proposal enforced: $r"
check "the proposal enforced (mode enforce): the same workload, 0 denies" \
	"enforce|rot ok 6 eperm 0 other 0 nxname 0|alias addrs 2 ok 2 eperm 0 other 0|ip ok" \
	"$(jq -r --arg s "$PARENT_NAME/cround" 'select(.event == "SandboxAdded" and .sandbox == $s) | .egress.mode' "$OUT")|$(echo "$r" | tr '\n' '|' | sed 's/|$//; s/ip ok .*/ip ok/')"
check "... no EgressDenied for it but glibc's sorting probes (port 0)" 0 \
	"$(jq -s --arg s "$PARENT_NAME/cround" '[.[] | select(.event == "EgressDenied" and .sandbox == $s and .dport != 0)] | length' "$OUT")"
rmdir "$PARENT/cround"
printf 'egress learning\n' > "$PDIR/cbadlearn.policy"
mkdir "$PARENT/cbadlearn"
wait_for 5 added "$PARENT_NAME/cbadlearn"
check "a policy file's bad egress word: denied, the error names file:line" "denied true" \
	"$(jq -r --arg s "$PARENT_NAME/cbadlearn" 'select(.event == "SandboxAdded" and .sandbox == $s) | .egress | "\(.mode) \(.error | contains("cbadlearn.policy:1:"))"' "$OUT")"
rmdir "$PARENT/cbadlearn"

# --- a shim sandbox with --allow 'host ...' ---------------------------------------
mkdir -p "$WORK/ws"
cp "$LOOKUP" "$WORK/ws/sbt-lookup"
SB_SHIM="/sbtrace/$P-s"
"$SHIM" run --name "$P-s" --state-dir "$STATE" --workspace "$WORK/ws" --net veth \
	--veth-addrs 203.0.113.254/30,203.0.113.253/30 --veth-host-netns "$NET_HOST" \
	--allow "host rot.test port 80 proto tcp" -- /bin/busybox sh -c \
	"/workspace/sbt-lookup connect rot.test 80 60 > /workspace/rot.tmp; mv /workspace/rot.tmp /workspace/rot; exec /bin/busybox sleep 60" \
	2> "$WORK/shim.err" &
SHIM_PID=$!
ran() { [ -s "$WORK/ws/rot" ]; }
wait_for 30 ran || log "shim: $(tail -n 5 "$WORK/shim.err")"
check "shim: 60 lookups-then-connects by name through its proxy: 0 false denies" \
	"ok 60 eperm 0 other 0 nxname 0" "$(cat "$WORK/ws/rot" 2> /dev/null)"
check "shim: SandboxAdded shows its proxy" "state_file enforce true" \
	"$(jq -r --arg s "$SB_SHIM" 'select(.event == "SandboxAdded" and .sandbox == $s) | "\(.egress.source) \(.egress.mode) \(.egress.dns_proxy != null)"' "$OUT")"
kill -TERM "$SHIM_PID" 2> /dev/null
wait "$SHIM_PID" 2> /dev/null
SHIM_PID=""

kill -INT "$TRACE_PID"
wait "$TRACE_PID"
check "agent: exit 0" 0 "$?"
TRACE_PID=""
validate_schema "$OUT"
check "the upstream never saw blocked.test" 0 "$(grep -c blocked "$UP_LOG")"
check "no query denied for want of a proxy" 0 \
	"$(jq -s '[.[] | select(.event == "EgressDenied" and .reason == "dns_no_proxy")] | length' "$OUT")"
check "DnsAnswer events name the four sandboxes with host rules or learn mode" "$PARENT_NAME/cdns,$PARENT_NAME/clearn,$PARENT_NAME/cround,$SB_SHIM" \
	"$(jq -s -r '[.[] | select(.event == "DnsAnswer" and .name == "rot.test") | .sandbox] | unique | join(",")' "$OUT")"
check "every EgressAllowed to a rotating address names rot.test" "rot.test" \
	"$(jq -s -r '[.[] | select(.event == "EgressAllowed" and (.daddr | startswith("198.51.100.1"))) | .dns.name] | unique | join(",")' "$OUT")"
finish
