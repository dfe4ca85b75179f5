#!/bin/sh
# sbtrace top and sbtrace events on an agent with 45 live sandboxes (issue 27):
#  - top in an 80x24 terminal (tmux): every column header, no line longer than
#    80, a "N more" line, and scrolling shows all 45; a name holding ESC is
#    shown escaped; a removed sandbox (its counters retained) is no row; the
#    agent killed: the last table stays, "agent unreachable, retrying", and a
#    new agent is picked up; --once (and stdout no terminal) prints the table.
#  - sbtrace events connecting late is greeted with TraceStarted and one
#    SandboxAdded per live sandbox (none for the removed one); the agent
#    killed: exit 1; --follow reconnects to the restarted agent, stdout only
#    events; an agent that stops (TraceStopped): exit 0.
. "$(dirname "$0")/lib.sh"

PORT=$((20000 + $$ % 30000))
ADDR="127.0.0.1:$PORT"
SOCK="$WORK/agent.sock"
TM="tmux -S $WORK/tmux.sock" # its own server, its socket gone with WORK
EV_PID=""
FOLLOW_PID=""

top_cleanup() {
	$TM kill-server 2> /dev/null
	[ -n "$EV_PID" ] && kill "$EV_PID" 2> /dev/null
	[ -n "$FOLLOW_PID" ] && kill "$FOLLOW_PID" 2> /dev/null
	cleanup # the agent (TRACE_PID), the cgroups and their sleeps
}
trap top_cleanup EXIT

command -v tmux > /dev/null || { fail "tmux missing (make deps: tmux)"; finish; }
command -v curl > /dev/null || { fail "curl missing (make deps: curl)"; finish; }

PARENT=$(mk_cgroup top)
PNAME=$(sb_name "$PARENT")
EVIL=$(printf 'e\033[2Jx') # ESC [ 2 J: "clear the screen", were it sent raw

# reap PID: its exit code, waited for at most 5 s (then killed: 137)
reap() {
	wait_for 5 sh -c "! kill -0 $1 2> /dev/null" || kill -KILL "$1" 2> /dev/null
	wait "$1"
}

started_in() { [ -s "$1" ] && head -n 1 "$1" | grep -q '"TraceStarted"'; }

# agent OUT: start one on the same socket and metrics address (TRACE_PID)
agent() {
	"$SBTRACE" agent --no-shim --cgroup-parent "$PARENT" --socket "$SOCK" \
		--metrics-addr "$ADDR" --out "$1" --poll-ms 20 --stats-interval 1 \
		2>> "$WORK/agent.err" &
	TRACE_PID=$!
	TRACE_OUT=$1
	wait_for 20 started_in "$1" || { log "agent did not start: $(tail -n 5 "$WORK/agent.err")"; exit 1; }
}

agent "$WORK/a1.jsonl"

# --- 45 live sandboxes, each with a process; one more made and removed -----------
i=0
while [ $i -lt 44 ]; do
	n=$(printf %02d $i)
	mkdir "$PARENT/sb-$n" && "$SPAWN" "$PARENT/sb-$n" --exec -- /bin/sleep 300 &
	i=$((i + 1))
done
mkdir "$PARENT/$EVIL" && "$SPAWN" "$PARENT/$EVIL" --exec -- /bin/sleep 300 &
mkdir "$PARENT/gone" && "$SPAWN" "$PARENT/gone" -- /bin/true # one exec, then empty
nadded() { jq -s '[.[] | select(.event == "SandboxAdded")] | length' "$1"; }
all_added() { [ "$(nadded "$WORK/a1.jsonl")" -ge 46 ]; }
wait_for 20 all_added
check "46 sandboxes added" 46 "$(nadded "$WORK/a1.jsonl")"
rmdir "$PARENT/gone"
gone() { [ "$(nevents "$WORK/a1.jsonl" SandboxRemoved "$PNAME/gone")" -ge 1 ]; }
wait_for 20 gone
check_true "the removed one: SandboxRemoved" gone
execs_in() { [ "$(jq -s '[.[] | select(.event == "ProcessExec")] | length' "$WORK/a1.jsonl")" -ge 46 ]; }
wait_for 20 execs_in
# the live ones, as JSON (an ESC in a name stays \u001b in the logs)
LIVE=$(jq -cn '[inputs] | ([.[] | select(.event == "SandboxAdded") | .sandbox] -
	[.[] | select(.event == "SandboxRemoved") | .sandbox]) | sort' "$WORK/a1.jsonl")
check "45 live sandboxes" 45 "$(printf '%s' "$LIVE" | jq length)"

# --- sbtrace events, connecting late: the greeting ----------------------------------
"$SBTRACE" events --socket "$SOCK" > "$WORK/ev1.jsonl" 2> "$WORK/ev1.err" &
EV_PID=$!
"$SBTRACE" events --follow --socket "$SOCK" > "$WORK/follow.jsonl" 2> "$WORK/follow.err" &
FOLLOW_PID=$!
greeted() { [ "$(wc -l < "$1")" -ge 46 ]; }
wait_for 10 greeted "$WORK/ev1.jsonl"
check "greeting: TraceStarted first" TraceStarted "$(head -n 1 "$WORK/ev1.jsonl" | jq -r .event)"
check "greeting: then a SandboxAdded per live sandbox, the removed one not among them" "$LIVE" \
	"$(sed -n '2,46p' "$WORK/ev1.jsonl" | jq -cs '[.[] | select(.event == "SandboxAdded") | .sandbox] | sort')"
check "greeting: nothing else before the live stream" '["SandboxAdded"]' \
	"$(sed -n '2,46p' "$WORK/ev1.jsonl" | jq -cs 'map(.event) | unique')"
check "greeting: one TraceStarted" 1 "$(nevents "$WORK/ev1.jsonl" TraceStarted)"
wait_for 10 greeted "$WORK/follow.jsonl"
check "events --follow: greeted too" 45 "$(nevents "$WORK/follow.jsonl" SandboxAdded)"

# --- sbtrace top in 80x24 -------------------------------------------------------------
$TM new-session -d -s top -x 80 -y 24 \
	"env LC_ALL=C.UTF-8 $SBTRACE top --metrics-addr $ADDR --interval 0.5 2> $WORK/top.err"
cap() { $TM capture-pane -p -t top > "$WORK/cap.$1.txt" 2> /dev/null; }
shows() { cap now && grep -q "$1" "$WORK/cap.now.txt"; }
wait_for 10 shows 'sandboxes 45' || log "top: $(cat "$WORK/cap.now.txt" "$WORK/top.err" 2> /dev/null)"
cap 0
HEAD=$(sed -n 3p "$WORK/cap.0.txt")
for h in SANDBOX SOURCE EXECS/S EXECS SHELLS ALLOWED DENIED LOST; do
	check_true "top at 80 columns: the $h column" sh -c "printf '%s\n' '$HEAD' | grep -qw -- '$h'"
done
# columns, not bytes: the ellipsis is one
long_lines() { sed 's/…/./g' "$1" | awk 'length > 80' | wc -l; }
check "top at 80 columns: no line longer" 0 "$(long_lines "$WORK/cap.0.txt")"
check_true "top: a 'N more' line" grep -qE -- '^-- [0-9]+ more \(rows 1-[0-9]+ of 45' "$WORK/cap.0.txt"
check_true "top: a long name elided in its middle" grep -qE "^/sbtra…[^ ]*/top/sb-[0-9]{2} " "$WORK/cap.0.txt"
k=1
for key in j Down NPage NPage NPage NPage NPage NPage End; do
	$TM send-keys -t top "$key"
	sleep 0.3
	cap $k
	k=$((k + 1))
done
seen=$(cat "$WORK"/cap.[0-9]*.txt | grep -oE '/top/sb-[0-9]{2} ' | sort -u | wc -l)
check "top: scrolling shows every sb-NN" 44 "$seen"
check_true "top: the ESC in a name shown as \\x1b" grep -qF '/top/e\x1b[2Jx ' "$WORK"/cap.[0-9]*.txt
check_true "top: at the end, the rows above counted" grep -qE -- '^-- [0-9]+ more above \(rows [0-9]+-45 of 45' "$WORK/cap.$((k - 1)).txt"
check "top: the removed sandbox is no row (its counters retained)" 0 \
	"$(cat "$WORK"/cap.[0-9]*.txt | grep -c '/top/gone')"
curl -s "http://$ADDR/metrics" > "$WORK/metrics.txt"
check "... though the agent keeps its counters (--metrics-retain)" 1 \
	"$(grep -cF "sbtrace_sandbox_execs_total{sandbox=\"$PNAME/gone\"} 1" "$WORK/metrics.txt")"

# --- top --once, and top with no terminal ------------------------------------------------
timeout 10 "$SBTRACE" top --metrics-addr "$ADDR" --once --interval 0.3 > "$WORK/once.txt" 2> "$WORK/once.err"
check "top --once: exit 0" 0 $?
check "top --once: 45 rows, whole names" 45 "$(grep -c "^$PNAME/" "$WORK/once.txt")"
check_true "top --once: the name escaped" grep -qF "$PNAME/e\\x1b[2Jx " "$WORK/once.txt"
check_true "top --once: the LOST column" grep -qE '^SANDBOX .* LOST$' "$WORK/once.txt"
timeout 10 "$SBTRACE" top --metrics-addr "$ADDR" --interval 0.3 2> /dev/null | cat > "$WORK/pipe.txt"
check "top, stdout a pipe: the text table" 45 "$(grep -c "^$PNAME/" "$WORK/pipe.txt")"

# --- the agent killed ------------------------------------------------------------------------
kill -KILL "$TRACE_PID"
wait "$TRACE_PID" 2> /dev/null
TRACE_PID=""
reap "$EV_PID"
check "events: the agent killed (no TraceStopped): exit 1" 1 $?
EV_PID=""
check_true "... said on stderr" grep -q "without a TraceStopped" "$WORK/ev1.err"
wait_for 5 shows 'agent unreachable, retrying'
cap dead
check_true "top: the agent killed: 'agent unreachable, retrying'" grep -q '^sbtrace top .* agent unreachable, retrying' "$WORK/cap.dead.txt"
check_true "... its last table still there" grep -qE '/top/(sb-[0-9]{2}|e\\x1b)' "$WORK/cap.dead.txt"
check_true "events --follow: still running" kill -0 "$FOLLOW_PID"
sleep 1
check_true "top: still running, retrying" sh -c "$TM has-session -t top 2> /dev/null"

# --- a new agent on the same socket and address ------------------------------------------
agent "$WORK/a2.jsonl"
wait_for 10 shows 'sandboxes 45'
cap back
check_true "top: the new agent's table" grep -q '^sbtrace top .* sandboxes 45' "$WORK/cap.back.txt"
check "top: nothing unreachable now" 0 "$(grep -c unreachable "$WORK/cap.back.txt")"
two_starts() { [ "$(nevents "$WORK/follow.jsonl" TraceStarted)" -ge 2 ] &&
	[ "$(nevents "$WORK/follow.jsonl" SandboxAdded)" -ge 90 ]; }
wait_for 15 two_starts
check "events --follow: the new agent's greeting too" "2 90" \
	"$(nevents "$WORK/follow.jsonl" TraceStarted) $(nevents "$WORK/follow.jsonl" SandboxAdded)"
check_true "events --follow: the loss and the reconnect on stderr" sh -c \
	"grep -q 'went away without a TraceStopped' '$WORK/follow.err' && grep -q 'connected to the agent' '$WORK/follow.err'"
"$SBTRACE" events --socket "$SOCK" --event TraceStopped > "$WORK/ev2.jsonl" 2> "$WORK/ev2.err" &
EV_PID=$!
sleep 0.5

# --- the agent stopped: TraceStopped ------------------------------------------------------
stop_trace INT
check "agent exit code" 0 "$TRACE_RC"
reap "$EV_PID"
check "events: the agent stopped (TraceStopped): exit 0" 0 $?
EV_PID=""
check "... and got it" TraceStopped "$(jq -r .event "$WORK/ev2.jsonl")"
stopped_said() { grep -q 'the agent stopped (TraceStopped)' "$WORK/follow.err"; }
wait_for 5 stopped_said
check_true "events --follow: the stop said, still waiting" sh -c "kill -0 $FOLLOW_PID"
kill -TERM "$FOLLOW_PID"
reap "$FOLLOW_PID"
check "events --follow: SIGTERM: exit 0" 0 $?
FOLLOW_PID=""
validate_schema "$WORK/follow.jsonl" # stdout: whole event lines only
$TM send-keys -t top q
quit() { ! $TM has-session -t top 2> /dev/null; }
wait_for 5 quit
check_true "top: q quits" quit
finish
