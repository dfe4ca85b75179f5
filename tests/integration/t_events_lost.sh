#!/bin/sh
# A ring buffer too small for a burst: loss is counted in the kernel, reported
# as EventsLost, and ShellInvocationObserved says complete: false.
. "$(dirname "$0")/lib.sh"

A=$(mk_cgroup lossy)
SA=$(sb_name "$A")
OUT="$WORK/trace.jsonl"
SBTRACE_TEST_CONSUMER_DELAY_MS=2000 start_trace "$OUT" --cgroup "$A" --ringbuf-size 4096 || exit 1
"$SPAWN" "$A" -n 300 -- /bin/sh -c 'exec /bin/true' || fail "spawn"
sleep 2.5
stop_trace INT
check "exit code" 0 "$TRACE_RC"
got=$(nevents "$OUT" ProcessExec "$SA")
lost=$(jq -s '[.[] | select(.event == "EventsLost" and .sandbox != null) | .lost] | add // 0' "$OUT")
log "received $got, lost $lost"
check_true "some events were lost" [ "$lost" -gt 0 ]
check "received + lost = 600 execs" 600 $((got + lost))
check "TraceStopped execs" 600 "$(jq -r 'select(.event == "TraceStopped") | .sandboxes[0].execs' "$OUT")"
check "ShellInvocationObserved complete is false" false \
	"$(jq -r 'select(.event == "ShellInvocationObserved") | .complete' "$OUT")"
check "EventsLost reason" ringbuf_full \
	"$(jq -r 'select(.event == "EventsLost") | .reason' "$OUT" | sort -u | head -n 1)"
finish
