#!/bin/sh
# Host rules when the trace is attached before the sandbox's first process
# (issue 26), the way the README recommends: until a process appears the
# sandbox's DNS is denied (no proxy yet, never passed to a resolver); the
# first exec in a network namespace waits (the exec hook stops it) until the
# proxy is open there, so not one query of it meets a namespace without one.
#  - rot.test answers 2 of 6 addresses, another pair each time, TTL 1: 60
#    lookups-then-connects from a process started after the trace, 0 denied;
#  - big.test (40 records, truncated over UDP, retried over TCP) usable;
#  - blocked.test refused and never in the upstream's log;
#  - a process of the same cgroup in a second network namespace is served
#    by a proxy of its own there;
#  - no query was denied for want of a proxy, and nothing stays stopped.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/netlib.sh"
net_dns_test_world 6

# A second network namespace of ours (loopback only): its DNS can only be
# the proxy's, which asks the upstream from the sandbox's first namespace.
NS2="sbt-sbx2-$$"
ip netns add "$NS2" || { fail "ip netns add $NS2"; finish; }
ip -n "$NS2" link set lo up
trap 'ip netns del "$NS2" 2> /dev/null; net_cleanup_hook' EXIT

C=$(mk_cgroup sbx) # empty: the trace comes first
OUT="$WORK/trace.jsonl"
start_trace "$OUT" --cgroup "$C" --resolver 192.0.2.54 --allow-host 'rot.test port 80 proto tcp' \
	--allow-host big.test --dns-grace 2 || exit 1
check "TraceStarted: a proxy, in no network namespace yet" "true 0" \
	"$(head -n 1 "$OUT" | jq -r '.egress.sandboxes[0].dns_proxy | "\(. != null) \(.netns)"')"
check_true "stderr says DNS is denied until a process appears" grep -q "no process in it yet: its DNS is denied" "$OUT.err"

r=$(in_sandbox "$C" "$LOOKUP" connect rot.test 80 60)
log "rot.test x60, attached first: $r"
check "60 lookups-then-connects, rotating pairs, TTL 1, the trace first: 0 false denies" \
	"ok 60 eperm 0 other 0 nxname 0" "$r"
r=$(in_sandbox "$C" "$LOOKUP" all big.test 80)
log "big.test: $r"
check "40 records: all usable" "addrs 40 ok 40 eperm 0 other 0" "$r"
r=$(in_sandbox "$C" "$SBTNET" resolve blocked.test)
check "a non-allowed name is refused" err "${r%% *}"

r=$(ip netns exec "$NS2" "$SPAWN" "/proc/$$/root$C" --exec -- "$LOOKUP" bench rot.test 5)
log "rot.test from a second network namespace: $r"
check "a second network namespace of the same cgroup is served" "failed 0" "$(echo "$r" | grep -o 'failed [0-9]*')"

stop_trace INT
check "exit code" 0 "$TRACE_RC"
check "the upstream never saw blocked.test" 0 "$(grep -c blocked "$UP_LOG")"
check "no query denied for want of a proxy" 0 \
	"$(jq -s '[.[] | select(.event == "EgressDenied" and .reason == "dns_no_proxy")] | length' "$OUT")"
check "the sandbox's DNS went to the proxy" "dns_proxy" \
	"$(jq -s -r '[.[] | select(.event == "EgressAllowed" and .dport == 53) | .reason] | unique | join(",")' "$OUT")"
check "the second namespace's queries reached the upstream" true \
	"$(test "$(grep -c '^udp rot.test' "$UP_LOG")" -ge 60 && echo true)"

# A process that changes namespace without an exec (nothing stops it): its
# DNS there is denied (EPERM, reason dns_no_proxy), never passed on.
C2=$(mk_cgroup late)
OUT="$WORK/late.jsonl"
start_trace "$OUT" --cgroup "$C2" --resolver 192.0.2.54 --allow-host rot.test || exit 1
r=$(in_sandbox "$C2" /usr/bin/python3 -c '
import ctypes, socket
libc = ctypes.CDLL(None, use_errno=True)
assert libc.unshare(0x40000000) == 0  # CLONE_NEWNET, in this process
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
try:
    s.sendto(b"x", ("192.0.2.53", 53))
    print("sent")
except OSError as e:
    print("errno", e.errno)
')
check "DNS from a namespace with no proxy (no exec there): EPERM" "errno 1" "$r"
stop_trace INT
check "... reported as EgressDenied dns_no_proxy" 1 \
	"$(jq -s '[.[] | select(.event == "EgressDenied" and .reason == "dns_no_proxy" and .dport == 53)] | length' "$OUT")"
finish
