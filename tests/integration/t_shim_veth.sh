#!/bin/sh
# sbtrace-shim run --net veth: eth0 in the sandbox, the other end in a test
# host's network namespace (documentation range, no other route anywhere);
# the sandbox reaches the test host and nothing else; the pair goes away with
# the sandbox.
. "$(dirname "$0")/lib.sh"

SHIM="$TOP/build/bin/sbtrace-shim"
SBTNET="$TOP/build/tests/sbt-net"
HOSTNS="sbt-vethhost-$$"
STATE="$WORK/state"
NAME="v$$"
ip netns add "$HOSTNS" || skip "ip netns add failed"
cleanup_veth() { [ -n "${SRV:-}" ] && kill "$SRV" 2> /dev/null; wait 2> /dev/null; ip netns del "$HOSTNS" 2> /dev/null; cleanup; }
trap cleanup_veth EXIT
ip -n "$HOSTNS" link set lo up
# The server listens on any address of the test host: the veth end arrives later.
ip netns exec "$HOSTNS" "$SBTNET" serve --log "$WORK/server.log" --tcp 0.0.0.0:8080 > "$WORK/ready" &
SRV=$!
sleep 0.3

# The checkout may sit below /tmp, which the sandbox replaces by a tmpfs:
# hand the client in through the workspace.
mkdir -p "$WORK/ws"
cp "$SBTNET" "$WORK/ws/sbt-net"
"$SHIM" run --name "$NAME" --state-dir "$STATE" --no-wait --net veth --workspace "$WORK/ws:ro" \
	--veth-addrs 192.0.2.1/24,192.0.2.100/24 --veth-host-netns "$HOSTNS" -- \
	/bin/busybox sh -c "cat /proc/net/dev | cut -d: -f1 | tr -d ' ' | grep -v '|' | sort | tr '\n' ' '; echo; /workspace/sbt-net --timeout 1000 tcp 192.0.2.1 8080; /workspace/sbt-net --timeout 500 tcp 203.0.113.5 80" \
	> "$WORK/out" 2> "$WORK/err"
check "shim exit" 1 $?   # the last command (unreachable test address) fails
check "interfaces in the sandbox" "eth0 lo " "$(sed -n 1p "$WORK/out")"
check "the test host is reachable" ok "$(sed -n 2p "$WORK/out" | cut -d' ' -f1)"
check "nothing else is" err "$(sed -n 3p "$WORK/out" | cut -d' ' -f1)"
check "the test host saw the sandbox" "tcp 192.0.2.100" "$(cut -d' ' -f1,2 "$WORK/server.log" | sed 's/:[0-9]*$//' | head -n 1)"
# The kernel tears a network namespace down asynchronously: give it a moment.
i=0
while [ "$(ip -n "$HOSTNS" -o link show | grep -c sbh)" -ne 0 ] && [ $i -lt 40 ]; do
	sleep 0.05
	i=$((i + 1))
done
check "the veth pair went away with the sandbox" 0 "$(ip -n "$HOSTNS" -o link show | grep -c sbh)"
check "no sandbox netns name left" 0 "$(ip netns list | grep -c sbtrace-veth)"
"$SHIM" run --name "x$$" --state-dir "$STATE" --no-wait --net veth -- /bin/true 2> "$WORK/err2"
check "veth without addresses: exit 2" 2 $?
finish
