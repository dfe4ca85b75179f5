#!/bin/sh
# sbtrace agent past the trace's 64 sandboxes: 100 child cgroups of a
# --cgroup-parent, each its own sandbox with its first exec traced; beyond
# --max-sandboxes a child is counted and named, never silently untraced.
. "$(dirname "$0")/lib.sh"

PARENT=$(mk_cgroup many)
PNAME=$(sb_name "$PARENT")
OUT="$WORK/agent.jsonl"
PROM="$WORK/agent.prom"

"$SBTRACE" agent --no-shim --no-socket --cgroup-parent "$PARENT" --max-sandboxes 100 \
	--out "$OUT" --metrics-file "$PROM" --stats-interval 0.5 --poll-ms 20 2> "$WORK/agent.err" &
TRACE_PID=$!
TRACE_OUT=$OUT
has_started() { [ -s "$OUT" ] && head -n 1 "$OUT" | grep -q '"TraceStarted"'; }
wait_for 10 has_started || { log "agent did not start: $(cat "$WORK/agent.err")"; exit 1; }

i=0
while [ $i -lt 100 ]; do
	mkdir "$PARENT/c$i" && "$SPAWN" "$PARENT/c$i" -- /bin/true > /dev/null
	i=$((i + 1))
done
# two more than the slots: counted, named on stderr
mkdir "$PARENT/x0" "$PARENT/x1"
"$SPAWN" "$PARENT/x0" -- /bin/true > /dev/null
sleep 1

first_execs() { jq -s '[.[] | select(.event == "ProcessExec" and .seq == 1 and .filename == "/bin/true")] | length' "$OUT"; }
all_in() { [ "$(first_execs)" -ge 100 ]; }
wait_for 10 all_in
check "100 sandboxes, each its first exec traced (seq 1)" 100 "$(first_execs)"
check "100 sandboxes added" 100 "$(nevents "$OUT" SandboxAdded)"
check "the last one is its own sandbox" "1 /bin/true" \
	"$(jq -r --arg s "$PNAME/c99" 'select(.event == "ProcessExec" and .sandbox == $s) | "\(.seq) \(.filename)"' "$OUT")"
check "children beyond --max-sandboxes: not traced" 0 \
	"$(jq -s --arg s "$PNAME/x0" '[.[] | select(.sandbox == $s)] | length' "$OUT")"
stats_unreg() { jq -s '[.[] | select(.event == "TraceStats")] | last | .sandboxes_unregistered' "$OUT"; }
check "... but counted in TraceStats" 2 "$(stats_unreg)"
check "... and in the metrics" "sbtrace_sandboxes_unregistered_total 2" \
	"$(grep '^sbtrace_sandboxes_unregistered_total ' "$PROM")"
check_true "... and named on stderr" grep -q "cannot register sandbox $PNAME/x0: .*raise --max-sandboxes" "$WORK/agent.err"

# a slot comes back when its sandbox ends
rmdir "$PARENT/c0"
rmdir "$PARENT/x0" "$PARENT/x1"
gone() { jq -e -n --arg s "$PNAME/c0" 'any(inputs; .event == "SandboxRemoved" and .sandbox == $s)' "$OUT" > /dev/null 2>&1; }
wait_for 20 gone ||
	log "c0 not removed yet: dir $([ -d "$PARENT/c0" ] && echo present || echo gone); agent: $(tail -n 3 "$WORK/agent.err" | tr '\n' ' ')"
check_true "an ended sandbox is removed" gone
mkdir "$PARENT/y0" && "$SPAWN" "$PARENT/y0" -- /bin/true > /dev/null
y_seen() { jq -e -n --arg s "$PNAME/y0" 'any(inputs; .event == "ProcessExec" and .sandbox == $s and .seq == 1)' "$OUT" > /dev/null 2>&1; }
wait_for 5 y_seen
check_true "its slot serves a new sandbox, from its first exec" y_seen
# c0 left the programs' fast table (c1..c7 moved up, another took its room): each still itself
i=1
while [ $i -le 9 ]; do "$SPAWN" "$PARENT/c$i" -- /bin/true > /dev/null; i=$((i + 1)); done
second_execs() { jq -s --arg p "$PNAME/c" '[.[] | select(.event == "ProcessExec" and .seq == 2 and
	(.sandbox | startswith($p)) and ((.sandbox | ltrimstr($p) | tonumber) <= 9))] | length' "$OUT"; }
all_second() { [ "$(second_execs)" -ge 9 ]; }
wait_for 5 all_second
check "after the fast table changed, c1..c9's second execs are theirs" 9 "$(second_execs)"

stop_trace INT
check "agent exit code" 0 "$TRACE_RC"
check "TraceStopped lists the 100 live sandboxes" 100 \
	"$(jq -r 'select(.event == "TraceStopped") | .sandboxes | length' "$OUT")"
check "nothing lost" 0 "$(nevents "$OUT" EventsLost)"
finish
