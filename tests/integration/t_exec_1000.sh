#!/bin/sh
# 1,000 execs inside the sandbox -> exactly 1,000 ProcessExec, complete: true.
. "$(dirname "$0")/lib.sh"

A=$(mk_cgroup storm)
SA=$(sb_name "$A")
OUT="$WORK/trace.jsonl"
start_trace "$OUT" --cgroup "$A" || exit 1
"$SPAWN" "$A" -n 1000 -- /bin/true || fail "spawn"
stop_trace TERM
check "exit code on SIGTERM" 0 "$TRACE_RC"
check "exactly 1000 ProcessExec" 1000 "$(nevents "$OUT" ProcessExec "$SA")"
check "sequence numbers 1..1000 without a gap" "1 1000 1000" \
	"$(jq -s -r '[.[] | select(.event == "ProcessExec") | .seq] | "\(min) \(max) \(unique | length)"' "$OUT")"
check "complete" true "$(jq -r 'select(.event == "ShellInvocationObserved") | .complete' "$OUT")"
check "no shell" 0 "$(jq -r 'select(.event == "ShellInvocationObserved") | .count' "$OUT")"
check "no EventsLost" 0 "$(nevents "$OUT" EventsLost)"

# Even SIGKILL leaves nothing attached: sbtrace pins nothing for a --cgroup sandbox, so its programs
# and links go with its file descriptors.
OUT2="$WORK/killed.jsonl"
start_trace "$OUT2" --cgroup "$A" || exit 1
check_true "program loaded while running" [ "$(nr_our_progs)" -ge 1 ]
kill -KILL "$TRACE_PID"; wait "$TRACE_PID" 2>/dev/null; TRACE_PID=""
i=0
while [ "$(nr_our_progs)" -ne 0 ] && [ $i -lt 40 ]; do sleep 0.05; i=$((i + 1)); done
check "nothing loaded after SIGKILL" 0 "$(nr_our_progs)"
check "nothing pinned" 0 "$(find /sys/fs/bpf -name '*sbtrace*' | wc -l)"
finish
