#!/bin/sh
# Several sandboxes at once, each its own slot: sibling cgroups, a nested
# sandbox inside another (the nearest one wins), and --pid.
. "$(dirname "$0")/lib.sh"

A=$(mk_cgroup a)
B=$(mk_cgroup deep/er/b)
C=$(mk_cgroup a/inner)
D=$(mk_cgroup d)
SA=$(sb_name "$A"); SB=$(sb_name "$B"); SC=$(sb_name "$C"); SD=$(sb_name "$D")

# A process already inside D before attach, found by --pid.
"$SPAWN" "$D" --exec -- /bin/sleep 30 &
SLEEPER=$!
sleep 0.2

OUT="$WORK/trace.jsonl"
start_trace "$OUT" --cgroup "$A" --cgroup "$B" --cgroup "$C" --pid "$SLEEPER" || exit 1
check "four sandboxes registered" 4 "$(head -n 1 "$OUT" | jq '.sandboxes | length')"
check "--pid resolves to the cgroup" "$SD pid $SLEEPER" \
	"$(head -n 1 "$OUT" | jq -r '.sandboxes[3] | "\(.name) \(.key) \(.pid)"')"

"$SPAWN" "$A" -n 3 -- /bin/true || fail spawn-a
"$SPAWN" "$B" -n 5 -- /bin/true || fail spawn-b
"$SPAWN" "$C" -n 7 -- /bin/true || fail spawn-c
"$SPAWN" "$D" -n 2 -- /bin/true || fail spawn-d
kill "$SLEEPER"; wait "$SLEEPER" 2>/dev/null
sleep 0.2
stop_trace INT

check "sandbox a" 3 "$(nevents "$OUT" ProcessExec "$SA")"
check "sandbox b (level 4)" 5 "$(nevents "$OUT" ProcessExec "$SB")"
check "nested sandbox a/inner wins over a" 7 "$(nevents "$OUT" ProcessExec "$SC")"
check "sandbox from --pid" 2 "$(nevents "$OUT" ProcessExec "$SD")"
check "four ShellInvocationObserved" 4 "$(nevents "$OUT" ShellInvocationObserved)"
check "all complete" true \
	"$(jq -s '[.[] | select(.event == "ShellInvocationObserved") | .complete] | all' "$OUT")"
check "TraceStopped per-sandbox execs" "3 5 7 2" \
	"$(jq -r 'select(.event == "TraceStopped") | [.sandboxes[].execs] | map(tostring) | join(" ")' "$OUT")"
finish
