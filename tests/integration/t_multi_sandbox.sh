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
# More sandboxes than the in-place table holds (8): the rest go through the
# hash map. The deepest come first, so a/inner still beats a, and the last
# siblings (in the hash map) are still seen.
OUT2="$WORK/many.jsonl"
set -- --cgroup "$A" --cgroup "$C"
for i in 1 2 3 4 5 6 7 8 9 10; do
	mk_cgroup "s$i" > /dev/null
	set -- "$@" --cgroup "$CG_PARENT/s$i"
done
start_trace "$OUT2" "$@" || exit 1
check "12 sandboxes" 12 "$(head -n 1 "$OUT2" | jq '.sandboxes | length')"
for i in 1 5 9 10; do
	"$SPAWN" "$CG_PARENT/s$i" -n "$i" -- /bin/true || fail "spawn s$i"
done
"$SPAWN" "$C" -n 4 -- /bin/true || fail "spawn inner"
"$SPAWN" "$A" -n 2 -- /bin/true || fail "spawn a"
sleep 0.2
stop_trace INT
for i in 1 5 9 10; do
	check "sandbox s$i" "$i" "$(nevents "$OUT2" ProcessExec "$(sb_name "$CG_PARENT/s$i")")"
done
check "nested a/inner with 12 sandboxes" 4 "$(nevents "$OUT2" ProcessExec "$SC")"
check "a with 12 sandboxes" 2 "$(nevents "$OUT2" ProcessExec "$SA")"
check "nothing else" 31 "$(nevents "$OUT2" ProcessExec)"

# The same through the ancestor-id helper only.
OUT3="$WORK/many-id.jsonl"
SBTRACE_DISABLE_HOOKS=cgroup_ptr start_trace "$OUT3" "$@" || exit 1
"$SPAWN" "$CG_PARENT/s10" -n 3 -- /bin/true || fail "spawn s10"
"$SPAWN" "$C" -n 2 -- /bin/true || fail "spawn inner"
sleep 0.2
stop_trace INT
check "ancestor_id: s10 (hash map)" 3 "$(nevents "$OUT3" ProcessExec "$(sb_name "$CG_PARENT/s10")")"
check "ancestor_id: nested" 2 "$(nevents "$OUT3" ProcessExec "$SC")"
finish
