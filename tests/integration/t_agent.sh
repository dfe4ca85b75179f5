#!/bin/sh
# sbtrace agent (issue 14's acceptance): the agent starts first; three shim
# sandboxes and two podman containers (under --cgroup-parent) start after
# it; each one's first exec is in the stream (seq 1); /metrics counts equal
# the events and pass `promtool check metrics`; stopping a sandbox removes
# it with its final events; SIGHUP after a rename starts a new file with
# nothing lost and nothing twice.
. "$(dirname "$0")/lib.sh"

SHIM="$TOP/build/bin/sbtrace-shim"
STATE="$WORK/state"
P="ag$$"
IMAGE=localhost/sbtrace-busybox:latest
PORT=$((20000 + $$ % 30000))
OUT="$WORK/agent.jsonl"
PROM="$WORK/agent.prom"
SHIM_PIDS=""
CTRS=""
SUB_PID=""
TMUX_S="sbt-agent-$$"

command -v promtool > /dev/null || fail "promtool missing (make deps: prometheus)"
command -v curl > /dev/null || fail "curl missing (make deps: curl)"
if PODMAN_ENV=$("$TOP/scripts/podman-setup.sh" 2> "$WORK/podman-setup.err"); then
	eval "$PODMAN_ENV"
else
	fail "scripts/podman-setup.sh failed: $(tail -n 3 "$WORK/podman-setup.err")"
	finish
fi
PODMAN="podman --runtime runc --cgroup-manager cgroupfs --events-backend file"

agent_cleanup() {
	tmux kill-session -t "$TMUX_S" 2> /dev/null
	[ -n "$SUB_PID" ] && kill "$SUB_PID" 2> /dev/null
	for c in $CTRS; do $PODMAN rm -f -t 0 "$c" > /dev/null 2>&1; done
	for p in $SHIM_PIDS; do kill -TERM "$p" 2> /dev/null; done
	for p in $SHIM_PIDS; do wait "$p" 2> /dev/null; done
	remove_sandboxes "$SHIM" "$STATE" "$P"
	cleanup
}
trap agent_cleanup EXIT

PARENT=$(mk_cgroup pods)
PARENT_NAME=$(sb_name "$PARENT")

"$SBTRACE" agent --cgroup-parent "$PARENT" --state-dir "$STATE" --out "$OUT" \
	--metrics-addr "127.0.0.1:$PORT" --metrics-file "$PROM" --stats-interval 1 \
	--socket "$WORK/agent.sock" --poll-ms 20 2> "$WORK/agent.err" &
TRACE_PID=$!
TRACE_OUT=$OUT
has_started() { [ -s "$OUT" ] && head -n 1 "$OUT" | grep -q '"TraceStarted"'; }
wait_for 10 has_started || { log "agent did not start: $(cat "$WORK/agent.err")"; exit 1; }
check "TraceStarted: the mkdir hook attached" tp_btf \
	"$(head -n 1 "$OUT" | jq -r '.hooks.cgroup_mkdir.mode')"
check "TraceStarted: membership by cgroup address (the fast table, as the trace's)" cgroup_ptr \
	"$(head -n 1 "$OUT" | jq -r '.hooks.membership.mode')"

# --- five sandboxes, all started after the agent ---------------------------
for n in 1 2 3; do
	mkdir -p "$WORK/ws$n"
	"$SHIM" run --name "$P-$n" --state-dir "$STATE" --workspace "$WORK/ws$n" -- \
		/bin/busybox sh -c "echo s$n > /workspace/m; exec /bin/busybox sleep 60" \
		2> "$WORK/shim$n.err" &
	SHIM_PIDS="$SHIM_PIDS $!"
done
for n in 1 2; do
	c="$P-c$n"
	CTRS="$CTRS $c"
	$PODMAN run -d --name "$c" --network=none --cgroup-parent="$PARENT_NAME" "$IMAGE" \
		/bin/sh -c "echo c$n; exec sleep 60" > "$WORK/$c.id" 2> "$WORK/$c.err" ||
		fail "podman run $c: $(cat "$WORK/$c.err")"
done

nadded() { jq -s '[.[] | select(.event == "SandboxAdded")] | length' "$OUT"; }
five_added() { [ "$(nadded)" -ge 5 ]; }
wait_for 30 five_added
check "five sandboxes added" 5 "$(nadded)"
for n in 1 2 3; do
	ran() { [ -s "$WORK/ws$n/m" ]; }
	wait_for 10 ran
	check "shim $n: its workload ran (released by the agent)" "s$n" "$(cat "$WORK/ws$n/m" 2> /dev/null)"
	check "shim $n: SandboxAdded, released" "shim agent true" \
		"$(jq -r --arg s "/sbtrace/$P-$n" 'select(.event == "SandboxAdded" and .sandbox == $s) | "\(.source) \(.registered_by) \(.released)"' "$OUT")"
done
for n in 1 2; do
	id=$(cat "$WORK/$P-c$n.id")
	SB="$PARENT_NAME/libpod-$id"
	check "container $n: SandboxAdded by the BPF mkdir hook" "cgroup_parent cgroup_mkdir" \
		"$(jq -r --arg s "$SB" 'select(.event == "SandboxAdded" and .sandbox == $s) | "\(.source) \(.registered_by)"' "$OUT")"
done

# The first exec of each sandbox is in the stream: seq 1, the workload's own command.
first_exec() { jq -r --arg s "$1" 'select(.event == "ProcessExec" and .sandbox == $s) | "\(.seq) \(.filename) \(.argv | join(" "))"' "$OUT" | head -n 1; }
for n in 1 2 3; do
	has_exec() { [ -n "$(first_exec "/sbtrace/$P-$n")" ]; }
	wait_for 5 has_exec
	check "shim $n: its first exec (seq 1) is in the stream" \
		"1 /bin/busybox /bin/busybox sh -c echo s$n > /workspace/m; exec /bin/busybox sleep 60" \
		"$(first_exec "/sbtrace/$P-$n")"
done
# A container's first exec may be runc's own re-exec of itself (runc init,
# from a sealed copy) in the new cgroup: the container's command comes after
# it, and seq 1 shows nothing came before.
workload_exec() { jq -r --arg s "$1" --arg c "$2" 'select(.event == "ProcessExec" and .sandbox == $s and (.argv | join(" ")) == $c) | .filename' "$OUT" | head -n 1; }
for n in 1 2; do
	SB="$PARENT_NAME/libpod-$(cat "$WORK/$P-c$n.id")"
	has_exec() { [ -n "$(workload_exec "$SB" "/bin/sh -c echo c$n; exec sleep 60")" ]; }
	wait_for 5 has_exec
	check "container $n: the first record of its cgroup is seq 1" 1 "$(first_exec "$SB" | cut -d' ' -f1)"
	check "container $n: its command's exec is in the stream" /bin/sh \
		"$(workload_exec "$SB" "/bin/sh -c echo c$n; exec sleep 60")"
done

# --- /metrics: Prometheus text, counts equal to the events -------------------
sleep 0.3
curl -sf "http://127.0.0.1:$PORT/metrics" > "$WORK/scrape.txt"
check "GET /metrics answers" 0 $?
check_true "promtool check metrics passes on /metrics" sh -c "promtool check metrics < '$WORK/scrape.txt' > '$WORK/promtool.out' 2>&1"
[ -s "$WORK/promtool.out" ] && log "promtool: $(cat "$WORK/promtool.out")"
check "/metrics: five sandboxes" "sbtrace_sandboxes 5" "$(grep '^sbtrace_sandboxes ' "$WORK/scrape.txt")"
curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/nope" > "$WORK/404"
check "another path: 404" 404 "$(cat "$WORK/404")"
metric() { # metric NAME LABELS: the sample's value, 0 if absent (label values may hold blanks)
	awk -v k="$1{$2} " 'index($0, k) == 1 { print $NF; f = 1 } END { if (!f) print 0 }' "$WORK/scrape.txt"
}
for sb in $(jq -r 'select(.event == "SandboxAdded") | .sandbox' "$OUT"); do
	check "/metrics execs of $sb equal its ProcessExec events" \
		"$(nevents "$OUT" ProcessExec "$sb")" "$(metric sbtrace_sandbox_execs_total "sandbox=\"$sb\"")"
	check "/metrics shells of $sb equal its shell execs" \
		"$(jq -s --arg s "$sb" '[.[] | select(.event == "ProcessExec" and .sandbox == $s and .shell != null)] | length' "$OUT")" \
		"$(awk -v p="sbtrace_shell_invocations_total{sandbox=\"$sb\"," 'index($0, p) == 1 { n += $NF } END { print n + 0 }' "$WORK/scrape.txt")"
done
check "/metrics ProcessExec events equal the file's" "$(nevents "$OUT" ProcessExec)" \
	"$(metric sbtrace_events_total 'event="ProcessExec"')"
check_true "/metrics: BPF_ENABLE_STATS run counts for the exec hook" \
	awk '$1 ~ /^sbtrace_bpf_program_runs_total\{program="exec_/ && $2 > 0 { f = 1 } END { exit !f }' "$WORK/scrape.txt"
check "/metrics: nothing lost (every lost series present, at 0)" "12 0" \
	"$(awk '/^sbtrace_events_lost_total\{/ { n++; s += $NF } END { print n + 0, s + 0 }' "$WORK/scrape.txt")"
has_prom() { [ -s "$PROM" ]; }
wait_for 3 has_prom
check_true "--metrics-file written, promtool passes" sh -c "promtool check metrics < '$PROM' > /dev/null 2>&1"
check_true "TraceStats comes every interval" sh -c "[ \$(jq -s '[.[] | select(.event == \"TraceStats\")] | length' '$OUT') -ge 1 ]"

# --- subscribers: sbtrace events, sbtrace top ----------------------------------
check "the subscriber socket is root's alone" "srwx------" "$(stat -c %A "$WORK/agent.sock")"
"$SBTRACE" events --socket "$WORK/agent.sock" --event ProcessExec > "$WORK/sub.jsonl" 2> "$WORK/sub.err" &
SUB_PID=$!
sleep 0.5
C2=$P-c2
SB2="$PARENT_NAME/libpod-$(cat "$WORK/$C2.id")"
$PODMAN exec "$C2" /bin/true > /dev/null 2>&1
sub_has() { jq -e -n --arg s "$SB2" 'any(inputs; .sandbox == $s and .filename == "/bin/true")' "$WORK/sub.jsonl" > /dev/null 2>&1; }
wait_for 5 sub_has
check_true "sbtrace events: a subscriber gets the stream live" sub_has
check "sbtrace events --event ProcessExec: nothing else" "ProcessExec" \
	"$(jq -r .event "$WORK/sub.jsonl" | sort -u | tr '\n' ' ' | sed 's/ $//')"
"$SBTRACE" top --metrics-addr "127.0.0.1:$PORT" --once --interval 0.5 > "$WORK/top.txt" 2> "$WORK/top.err"
check "sbtrace top --once: exit 0" 0 $?
ALL5=$(jq -r 'select(.event == "SandboxAdded") | .sandbox' "$OUT")
for sb in $ALL5; do
	check "sbtrace top --once shows $sb" 1 "$(awk -v s="$sb" '$1 == s' "$WORK/top.txt" | wc -l)"
done
tmux new-session -d -s "$TMUX_S" -x 220 -y 40 "$SBTRACE top --metrics-addr 127.0.0.1:$PORT --interval 0.5"
sleep 2
tmux capture-pane -p -t "$TMUX_S" > "$WORK/tmux.txt" 2> /dev/null
for sb in $ALL5; do
	short=$(printf '%.48s' "$sb")
	check "sbtrace top (ncurses, in tmux) shows $short" 1 "$(grep -cF "$short" "$WORK/tmux.txt")"
done
tmux send-keys -t "$TMUX_S" q 2> /dev/null

# --- rotation: rename, SIGHUP, new execs go to a new file ----------------------
mv "$OUT" "$OUT.1"
kill -HUP "$TRACE_PID"
C1=$P-c1
SB1="$PARENT_NAME/libpod-$(cat "$WORK/$C1.id")"
reopened() { [ -s "$OUT" ]; }
$PODMAN exec "$C1" /bin/true > /dev/null 2>&1
wait_for 5 reopened
check_true "after SIGHUP: a new file" test -s "$OUT"
check_true "after SIGHUP: the exec is in the new file" sh -c "jq -e -n --arg s '$SB1' 'any(inputs; .event == \"ProcessExec\" and .sandbox == \$s and .filename == \"/bin/true\")' '$OUT' > /dev/null"

# --- stopping sandboxes: removed, with their final events ---------------------
S1=$(echo $SHIM_PIDS | cut -d' ' -f1)
T0=$(date +%s)
kill -TERM "$S1"
wait "$S1" 2> /dev/null
T1=$(date +%s)
removed() { jq -e -n --arg s "$1" 'any(inputs; .event == "SandboxRemoved" and .sandbox == $s)' "$OUT" > /dev/null 2>&1; }
wait_for 30 removed "/sbtrace/$P-1"
log "shim 1: exited $((T1 - T0)) s after SIGTERM, removed $(($(date +%s) - T1)) s later"
check_true "shim 1 stopped: SandboxRemoved" removed "/sbtrace/$P-1"
check "shim 1: ShellInvocationObserved, then SandboxRemoved" "ShellInvocationObserved SandboxRemoved" \
	"$(jq -r --arg s "/sbtrace/$P-1" 'select(.sandbox == $s and (.event == "ShellInvocationObserved" or .event == "SandboxRemoved")) | .event' "$OUT" | tr '\n' ' ' | sed 's/ $//')"
check "shim 1: its totals count every exec, none lost" \
	"$(cat "$OUT.1" "$OUT" | jq -s --arg s "/sbtrace/$P-1" '[.[] | select(.event == "ProcessExec" and .sandbox == $s)] | length') 0 true" \
	"$(jq -r --arg s "/sbtrace/$P-1" 'select(.event == "SandboxRemoved" and .sandbox == $s) | "\(.totals.received) \(.totals.lost) \(.totals.complete)"' "$OUT")"
$PODMAN rm -f -t 0 "$C1" > /dev/null 2>&1
wait_for 30 removed "$SB1"
check_true "container 1 removed: SandboxRemoved" removed "$SB1"
sleep 0.3
curl -sf "http://127.0.0.1:$PORT/metrics" > "$WORK/scrape.txt"
check "/metrics: three sandboxes left" "sbtrace_sandboxes 3" "$(grep '^sbtrace_sandboxes ' "$WORK/scrape.txt")"

stop_trace INT
check "agent exit code" 0 "$TRACE_RC"
wait "$SUB_PID"
check "sbtrace events ends with the agent: exit 0" 0 $?
SUB_PID=""
check_true "the subscriber socket is removed at stop" test ! -e "$WORK/agent.sock"
validate_schema "$OUT.1"
cat "$OUT.1" "$OUT" > "$WORK/all.jsonl"
check "one TraceStarted, one TraceStopped across both files" "1 1" \
	"$(nevents "$WORK/all.jsonl" TraceStarted) $(nevents "$WORK/all.jsonl" TraceStopped)"
check "one run id" 1 "$(jq -r .run_id "$WORK/all.jsonl" | sort -u | wc -l)"
check "no event twice" 0 "$(jq -c . "$WORK/all.jsonl" | sort | uniq -d | wc -l)"
check "per sandbox, exec seqs are 1..N without a gap" "" \
	"$(jq -s -r '[.[] | select(.event == "ProcessExec")] | group_by(.sandbox)[] | select(([.[].seq] | sort) != [range(1; length + 1)]) | .[0].sandbox' "$WORK/all.jsonl")"
check "no EventsLost" 0 "$(nevents "$WORK/all.jsonl" EventsLost)"
check_true "time is RFC 3339 with ns and matches ts" sh -c \
	"jq -e -s 'all(.[]; (.time | test(\"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}\\\\.[0-9]{9}Z$\")))' '$WORK/all.jsonl' > /dev/null"
finish
