#!/bin/sh
# sbtrace-shim + sbtrace trace --sandbox NAME: the shim holds the workload
# until the tracer has attached (the handshake), so the very first exec of
# the workload is in the trace.
. "$(dirname "$0")/lib.sh"

SHIM="$TOP/build/bin/sbtrace-shim"
STATE="$WORK/state"
NAME="tr$$"
mkdir -p "$WORK/ws"

"$SHIM" run --name "$NAME" --state-dir "$STATE" --workspace "$WORK/ws" -- \
	/bin/busybox sh -c 'echo first > /workspace/marker' 2> "$WORK/shim.err" &
SHIM_PID=$!
i=0
while [ ! -e "$STATE/$NAME.json" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
check_true "state file written" [ -e "$STATE/$NAME.json" ]
sleep 0.3
check_true "the workload waits for a tracer" [ ! -e "$WORK/ws/marker" ]

OUT="$WORK/trace.jsonl"
start_trace "$OUT" --sandbox "$NAME" --state-dir "$STATE" || exit 1
wait "$SHIM_PID"
check "shim exit code is the workload's" 0 $?
check "the workload ran after the handshake" first "$(cat "$WORK/ws/marker" 2> /dev/null)"
i=0
while kill -0 "$TRACE_PID" 2> /dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
check_true "the trace stops by itself once the sandbox has ended" sh -c "! kill -0 $TRACE_PID 2>/dev/null"
stop_trace INT
check "the trace's exit code" 0 "$TRACE_RC"
check "TraceStopped: workload_exited" workload_exited \
	"$(jq -r 'select(.event == "TraceStopped") | .reason' "$OUT")"
check "sandbox key" "sandbox /sbtrace/$NAME" "$(head -n 1 "$OUT" | jq -r '.sandboxes[0] | "\(.key) \(.name)"')"
check "the very first exec is in the trace" "1 /bin/busybox" \
	"$(jq -r 'select(.event == "ProcessExec") | "\(.seq) \(.filename)"' "$OUT" | head -n 1)"
check "the shell is seen" "1 busybox sh command" \
	"$(jq -r 'select(.event == "ShellInvocationObserved") | "\(.count) \(.locations[0].shell) \(.locations[0].kind)"' "$OUT")"
check "complete" true "$(jq -r 'select(.event == "ShellInvocationObserved") | .complete' "$OUT")"
"$SBTRACE" trace --sandbox no-such-sandbox --state-dir "$STATE" --duration 1 > /dev/null 2> "$WORK/err"
check "unknown sandbox: exit 2" 2 $?
check_true "unknown sandbox: says so" grep -q "no-such-sandbox" "$WORK/err"
check "state file removed" 0 "$(ls "$STATE" 2> /dev/null | grep -c "$NAME")"
finish
