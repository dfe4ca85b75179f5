#!/bin/sh
# A ring buffer too small for a burst: loss is counted in the kernel, reported
# as EventsLost, and ShellInvocationObserved and TraceStopped say complete:
# false, with the kind that was lost (exec_complete, egress_complete).
. "$(dirname "$0")/lib.sh"

# completeness FILE: "complete exec_complete egress_complete" of
# ShellInvocationObserved, then of TraceStopped's first sandbox.
completeness() {
	jq -r 'select(.event == "ShellInvocationObserved") |
		"\(.complete) \(.exec_complete) \(.egress_complete)"' "$1"
	jq -r 'select(.event == "TraceStopped") | .sandboxes[0] |
		"\(.complete) \(.exec_complete) \(.egress_complete)"' "$1"
}

# 1. Execs: 600 through a 4 KiB ring buffer.
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
check "execs lost: complete false, exec_complete false, egress_complete true" \
	"false false true
false false true" "$(completeness "$OUT")"
check "EventsLost reason" ringbuf_full \
	"$(jq -r 'select(.event == "EventsLost") | .reason' "$OUT" | sort -u | head -n 1)"

# 2. Egress: a flood of denied connects (each to another port of the host's
# loopback, the floor: none folds into another) through a 4 KiB ring buffer;
# the one exec comes first and fits.
B=$(mk_cgroup flood)
SB=$(sb_name "$B")
OUT2="$WORK/flood.jsonl"
SBTRACE_TEST_CONSUMER_DELAY_MS=2000 start_trace "$OUT2" --cgroup "$B" --ringbuf-size 4096 \
	--egress enforce || exit 1
"$SPAWN" "$B" -- "$TOP/build/tests/sbt-net" --timeout 200 tcp --ports 2000 127.0.0.1 20000 \
	> "$WORK/flood.out" 2> "$WORK/flood.err"
check "flood: the last connect denied" "err EPERM" "$(cut -d' ' -f1,2 "$WORK/flood.out")"
sleep 2.5
stop_trace INT
check "flood: exit code" 0 "$TRACE_RC"
eg_lost=$(jq -s --arg s "$SB" '[.[] | select(.event == "EventsLost" and .sandbox == $s and
	.kind == "egress") | .lost] | add // 0' "$OUT2")
denied=$(nevents "$OUT2" EgressDenied "$SB")
log "flood: $denied EgressDenied, $eg_lost egress records lost"
check_true "flood: egress records were lost" [ "$eg_lost" -gt 0 ]
check "flood: received + lost = 2000 connects" 2000 $((denied + eg_lost))
check "flood: TraceStopped egress.lost" "$eg_lost" \
	"$(jq -r 'select(.event == "TraceStopped") | .sandboxes[0].egress.lost' "$OUT2")"
check "flood: no exec lost" 0 \
	"$(jq -s --arg s "$SB" '[.[] | select(.event == "EventsLost" and .kind == "exec")] | length' "$OUT2")"
check "flood: the exec arrived" 1 "$(nevents "$OUT2" ProcessExec "$SB")"
check "egress lost: complete false, exec_complete true, egress_complete false" \
	"false true false
false true false" "$(completeness "$OUT2")"
finish
