#!/bin/sh
# The guest agent in a real microVM (Debian's kernel, under TCG), started by
# the guest's init, not by the workload: the shim puts the host's sbtrace
# into the guest, the init runs it as guest root on the workload's cgroup
# before READY, and its frames reach the host through the virtio-serial
# port sbt.exec, which qemu writes to STATE/NAME.vm/exec.stream (read here
# while the shim runs; decoded with sbt-gsread, the host's own decoder).
# The stream: HELLO (tp_btf, the guest's kernel), the workload's own argv[0]
# as the first exec (nothing of the init's, the agent's or a wrapper
# shell), its children's execs in order, BYE with the guest kernel's counts.
# The workload runs as uid 1000, no capabilities, no_new_privs, and can
# write /workspace (an overlay on the read-only share) and its HOME. The
# state file says visibility.exec guest_kernel and where the stream is.
. "$(dirname "$0")/lib.sh"

STATE="$WORK/state"
NAME="qg$$"
[ -x "$TOP/build/bin/sbtrace-shim" ] || { log "sbtrace-shim missing: run make"; exit 1; }
[ -x "$SBTRACE" ] || { log "$SBTRACE missing: run make"; exit 1; }
require_qemu_guest
mkdir -p "$STATE" "$WORK/ws"

# Builtins but for the two execs at the end (so the stream's list is exact).
cat > "$WORK/ws/run.sh" << 'EOF2'
while read -r k v; do
	case $k in Uid: | NoNewPrivs: | CapBnd: | CapEff:) echo "status $k $v" ;; esac
done < /proc/self/status
echo ws > /workspace/out.txt && echo "ws-write ok"
echo home > "$HOME/h.txt" && echo "home-write ok"
echo "home=$HOME pwd=$PWD"
/bin/true
/usr/bin/ls / > /dev/null
EOF2
start=$(date +%s)
qemu_run_stream "$STATE" "$NAME" "$WORK/out" "$WORK/err" "$WORK/stream" -- \
	--guest "$GUEST" --no-wait --vm-timeout 180 --vm-mem 512 --timings "$WORK/timings.json" \
	--workspace "$WORK/ws:ro" -- /usr/bin/env sh /workspace/run.sh
log "the VM ran $(($(date +%s) - start)) s: $(cat "$WORK/timings.json" 2> /dev/null)"
check "the workload's exit code is 0" 0 "$QRC"
[ "$QRC" -eq 0 ] || log "stdout: $(cat "$WORK/out"); stderr: $(tail -c 2000 "$WORK/err")"
check "the state file: visibility.exec guest_kernel" guest_kernel \
	"$(jq -r '.visibility.exec' "$WORK/stream.json" 2> /dev/null)"
check "the state file: exec_stream is STATE/NAME.vm/exec.stream" \
	"$(cd "$STATE" && pwd -P)/$NAME.vm/exec.stream" \
	"$(jq -r '.exec_stream' "$WORK/stream.json" 2> /dev/null)"
"$TOP/build/tests/sbt-gsread" "$WORK/stream" | grep -v '^beat ' > "$WORK/gs"
log "stream: $(tr '\n' '|' < "$WORK/gs")"
check "HELLO first: tp_btf on the guest's kernel" "hello mode=tp_btf kernel=$(cat "$GUEST/release")" \
	"$(head -n 1 "$WORK/gs" | sed -n 's/^hello abi=[0-9]* \(mode=[^ ]*\) hb_ms=500 \(kernel=.*\)/hello \1 \2/p')"
check "the cgroup's execs: the workload's argv[0] first, then its children, in order" \
	"1 /usr/bin/env|2 /usr/bin/sh|3 /bin/true|4 /usr/bin/ls|" \
	"$(sed -n 's/^exec seq=\([0-9]*\) .* filename=\([^ ]*\) .*/\1 \2/p' "$WORK/gs" | tr '\n' '|')"
check "BYE with the guest kernel's counts" "bye execs=4 lost=0 records=4" "$(grep '^bye ' "$WORK/gs")"
check "the stream ends whole" "end ok" "$(tail -n 1 "$WORK/gs")"
check "the workload's uid is 1000" "1000 1000 1000 1000" \
	"$(sed -n 's/^status Uid: //p' "$WORK/out" | tr -s ' \t' '    ')"
check "no_new_privs" 1 "$(sed -n 's/^status NoNewPrivs: //p' "$WORK/out")"
check "no capabilities, bounding set empty" "0000000000000000 0000000000000000" \
	"$(sed -n 's/^status CapEff: //p' "$WORK/out") $(sed -n 's/^status CapBnd: //p' "$WORK/out")"
check "it writes the workspace" "ws-write ok" "$(grep '^ws-write' "$WORK/out")"
check "it writes its HOME" "home-write ok" "$(grep '^home-write' "$WORK/out")"
check "HOME and cwd" "home=/home/sbt pwd=/workspace" "$(grep '^home=' "$WORK/out")"
check "the host's workspace untouched" "" "$(ls "$WORK/ws" | grep -v '^run.sh$')"
check "nothing left in the state dir" "" "$(ls "$STATE")"

# sbtrace agent does not follow a guest's stream: for a microVM it sees only
# qemu's exec, and says so — never a complete count (it released the VM).
AOUT="$WORK/agent.jsonl"
"$SBTRACE" agent --state-dir "$STATE" --out "$AOUT" --poll-ms 20 2> "$WORK/agent.err" &
TRACE_PID=$! # lib.sh stops it on any exit
agent_up() { [ -s "$AOUT" ] && head -n 1 "$AOUT" | grep -q '"TraceStarted"'; }
wait_for 20 agent_up || log "agent did not start: $(cat "$WORK/agent.err")"
"$TOP/build/bin/sbtrace-shim" run --backend qemu --name "${NAME}a" --state-dir "$STATE" --guest "$GUEST" \
	--vm-timeout 180 -- /usr/bin/true > "$WORK/out5" 2> "$WORK/err5"
check "under sbtrace agent: the VM was released and ran" 0 $?
agent_removed() { jq -e -n 'any(inputs; .event == "SandboxRemoved")' "$AOUT" > /dev/null 2>&1; }
wait_for 20 agent_removed
kill -TERM "$TRACE_PID" && wait "$TRACE_PID"
TRACE_PID=""
check "sbtrace agent: the microVM's execs not visible, not complete" "false false false" \
	"$(jq -r -n '[inputs | select(.event == "ShellInvocationObserved")][0] | "\(.exec_visible) \(.exec_complete) \(.complete)"' "$AOUT")"
check_true "sbtrace agent: stderr says where the guest's execs go" \
	grep -q "its guest streams them to 'sbtrace trace --sandbox'" "$WORK/agent.err"
finish
