#!/bin/sh
# sbtrace guest-agent in a real microVM's kernel (Debian's, under TCG): the
# exec hook loads there (tp_btf on the guest's own BTF), says "attached"
# before the workload's first exec, and streams the execs of the guest
# cgroup it is given, in order, from seq 1, with the guest kernel's counts
# and a BYE; a process outside that cgroup is not in the stream. The host
# decodes the stream (sbt-gsread, the host's own decoder).
#
# Issue 15, in part: here the workload starts the agent itself (it is root in
# the guest); the guest's init starting it, the workload unprivileged, and
# the stream read by the host's trace over a virtio-serial port are not built
# yet.
. "$(dirname "$0")/lib.sh"

SHIM="$TOP/build/bin/sbtrace-shim"
STATE="$WORK/state"
NAME="qg$$"
[ -x "$SHIM" ] || { log "$SHIM missing: run make"; exit 1; }
require_qemu_guest
mkdir -p "$STATE" "$WORK/ws"
cp "$SBTRACE" "$TOP/build/tests/sbt-gsread" "$WORK/ws/"

# The workload (guest root): a cgroup, the agent, one process in it, one outside.
cat > "$WORK/ws/run.sh" << 'EOF2'
mkdir -p /tmp/cg && /sbt/bin/mount -t cgroup2 none /tmp/cg && mkdir /tmp/cg/work || exit 3
: > /tmp/stream
/workspace/sbtrace guest-agent --port /tmp/stream --cgroup /tmp/cg/work --ready-fd 7 \
	--heartbeat-ms 200 7> /tmp/ready 2> /tmp/agent.err &
A=$!
i=0
while [ $i -lt 300 ] && ! grep -q attached /tmp/ready; do sleep 0.1; i=$((i + 1)); done
echo "ready=$(cat /tmp/ready)"
sh -c 'echo $$ > /tmp/cg/work/cgroup.procs && exec sh -c "/bin/true; ls / > /dev/null"'
/bin/true
sleep 0.5
kill -TERM $A
wait $A
echo "agent-rc=$?"
sed 's/^/agent-err=/' /tmp/agent.err
/workspace/sbt-gsread /tmp/stream | grep -v '^beat ' | sed 's/^/gs=/'
EOF2
"$SHIM" run --backend qemu --name "$NAME" --state-dir "$STATE" --guest "$GUEST" --no-wait \
	--vm-timeout 180 --vm-mem 512 --workspace "$WORK/ws:ro" -- sh /workspace/run.sh \
	> "$WORK/out" 2> "$WORK/err"
rc=$?
check "the workload's exit code is 0" 0 "$rc"
[ "$rc" -eq 0 ] || log "stdout: $(cat "$WORK/out"); stderr: $(tail -c 2000 "$WORK/err")"
gs() { sed -n 's/^gs=//p' "$WORK/out"; }
check "the agent attached in the guest kernel, then said so" attached "$(sed -n 's/^ready=//p' "$WORK/out")"
check "HELLO: tp_btf on the guest's kernel" "hello mode=tp_btf kernel=$(cat "$GUEST/release")" \
	"$(gs | sed -n 's/^hello abi=[0-9]* \(mode=[^ ]*\) hb_ms=200 \(kernel=.*\)/hello \1 \2/p')"
check "the cgroup's execs, from seq 1, in order" \
	"1 /usr/bin/sh|2 /bin/true|3 /usr/bin/ls|" \
	"$(gs | sed -n 's/^exec seq=\([0-9]*\) .* filename=\([^ ]*\) .*/\1 \2/p' | tr '\n' '|')"
check "BYE with the guest kernel's counts" "bye execs=3 lost=0 records=3" "$(gs | grep '^bye ')"
check "the stream ends whole" "end ok" "$(gs | tail -n 1)"
check "the agent stopped cleanly (exit 0)" 0 "$(sed -n 's/^agent-rc=//p' "$WORK/out")"
check "nothing left in the state dir" "" "$(ls "$STATE")"
finish
