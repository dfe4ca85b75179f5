#!/bin/sh
# sbtrace agent in production (issue 27): one agent per state dir, restarts
# that harm nothing, egress loss accounted.
#  1. A second agent on the same state dir exits 2 naming the holder; one on
#     another state dir but the same socket exits 2 too; the first's socket
#     (same inode, still served) and its shim workload are untouched.
#  2. SIGTERM + restart of a --persist agent while a shim workload (with a
#     policy) and a --policy-dir child connect in a loop to a host their
#     policy does not allow: the workload keeps running, every connect of
#     the gap is EPERM, the new agent adopts both (adopted, observed_since;
#     at removal exec_complete false, reason adopted) and unpins the old
#     agent's links; --unpin lifts what the last one left.
#  3. An egress flood with loss (an agent with a 4 KiB ring buffer stopped
#     while a child is denied 2000 times): its SandboxRemoved says
#     egress_complete false and the lost count.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/netlib.sh"

SHIM="$TOP/build/bin/sbtrace-shim"
STATE="$WORK/state"
PDIR="$WORK/policies"
SOCK="$WORK/agent.sock"
P="ar$$"
SHIM_PID="" LOOP_PID=""
SB_SHIM="/sbtrace/$P-s"

net_require_tools
command -v bpftool > /dev/null || fail "bpftool missing (make deps)"
net_world_up || exit 1

restart_cleanup() {
	[ -n "$TRACE_PID" ] && kill -TERM "$TRACE_PID" 2> /dev/null && wait "$TRACE_PID" 2> /dev/null
	TRACE_PID=""
	touch "$WORK/stop"
	[ -n "$LOOP_PID" ] && kill -TERM "$LOOP_PID" 2> /dev/null && wait "$LOOP_PID" 2> /dev/null
	[ -n "$SHIM_PID" ] && kill -TERM "$SHIM_PID" 2> /dev/null && wait "$SHIM_PID" 2> /dev/null
	remove_sandboxes "$SHIM" "$STATE" "$P"
	[ -d "$STATE" ] && "$SBTRACE" agent --unpin --state-dir "$STATE" --no-socket 2> /dev/null
	net_cleanup_hook
}
trap restart_cleanup EXIT

PARENT=$(mk_cgroup pods)
PNAME=$(sb_name "$PARENT")
PARENT_ID=$(stat -c %i "$PARENT")
mkdir -m 0755 "$PDIR"
printf 'cidr %s/32 port 80 proto tcp\n' "$NET_T1_V4" > "$PDIR/c1.policy"
printf 'cidr %s/32 port 80 proto tcp\n' "$NET_T1_V4" > "$PDIR/flood.policy"
links_on() { bpftool -j link show 2> /dev/null | jq --argjson c "$1" '[.[] | select(.type == "cgroup" and .cgroup_id == $c)] | length'; }

# agent OUT [ARGS...]: start one (TRACE_PID), wait for its TraceStarted
agent() {
	_out=$1
	shift
	"$SBTRACE" agent --cgroup-parent "$PARENT" --state-dir "$STATE" --policy-dir "$PDIR" \
		--socket "$SOCK" --out "$_out" --poll-ms 20 --stats-interval 1 "$@" 2>> "$WORK/agent.err" &
	TRACE_PID=$!
	TRACE_OUT=$_out
	wait_for 20 started_in "$_out" || { log "agent did not start: $(tail -n 5 "$WORK/agent.err")"; return 1; }
}
started_in() { [ -s "$1" ] && head -n 1 "$1" | grep -q '"TraceStarted"'; }
added() { jq -e -n --arg s "$2" 'any(inputs; .event == "SandboxAdded" and .sandbox == $s)' "$1" > /dev/null 2>&1; }
removed() { jq -e -n --arg s "$2" 'any(inputs; .event == "SandboxRemoved" and .sandbox == $s)' "$1" > /dev/null 2>&1; }

OUT1="$WORK/agent1.jsonl"
agent "$OUT1" --persist || exit 1
AGENT1=$TRACE_PID

# a shim sandbox with a policy: its workload connects to a host it may not reach, in a loop
mkdir -p "$WORK/ws"
cp "$SBTNET" "$WORK/ws/sbt-net"
"$SHIM" run --name "$P-s" --state-dir "$STATE" --workspace "$WORK/ws" --net veth \
	--veth-addrs 203.0.113.254/30,203.0.113.253/30 --veth-host-netns "$NET_HOST" \
	--allow "cidr $NET_T1_V4/32 port 80 proto tcp" -- /bin/busybox sh -c \
	"while [ ! -e /workspace/stop ]; do /workspace/sbt-net --timeout 1000 tcp $NET_T2_V4 80 >> /workspace/denied; /bin/busybox sleep 0.2; done" \
	2> "$WORK/shim.err" &
SHIM_PID=$!
wait_for 20 added "$OUT1" "$SB_SHIM" || fail "the shim sandbox was not added: $(tail -n 3 "$WORK/shim.err")"
# a --policy-dir child, the same
mkdir "$PARENT/c1"
wait_for 10 added "$OUT1" "$PNAME/c1"
in_sandbox "$PARENT/c1" /bin/sh -c "while [ ! -e '$WORK/stop' ]; do '$SBTNET' --timeout 1000 tcp $NET_T2_V4 80; sleep 0.2; done" \
	> "$WORK/c1.denied" 2>&1 &
LOOP_PID=$!
lines() { wc -l < "$1" 2> /dev/null || echo 0; }
going() { [ "$(lines "$WORK/ws/denied")" -ge 3 ] && [ "$(lines "$WORK/c1.denied")" -ge 3 ]; }
wait_for 20 going || fail "the connect loops did not run: $(cat "$WORK/c1.denied" | tail -n 2)"

# --- 1. a second agent -------------------------------------------------------------
SOCK_INO=$(stat -c %i "$SOCK")
"$SBTRACE" agent --state-dir "$STATE" --socket "$WORK/other.sock" --duration 2 \
	> "$WORK/second.out" 2> "$WORK/second.err" < /dev/null
check "a second agent on the same state dir: exit 2" 2 $?
check_true "... naming the holder's pid" grep -q "another agent (pid $AGENT1) runs on --state-dir $STATE" "$WORK/second.err"
check "... it wrote no event" 0 "$(lines "$WORK/second.out")"
mkdir -p "$WORK/state2"
"$SBTRACE" agent --state-dir "$WORK/state2" --socket "$SOCK" --duration 2 \
	> /dev/null 2> "$WORK/third.err" < /dev/null
check "another state dir, the same live socket: exit 2" 2 $?
check_true "... saying who serves it" grep -q "$SOCK" "$WORK/third.err"
check "the first agent's socket: the same inode" "$SOCK_INO" "$(stat -c %i "$SOCK" 2> /dev/null)"
check_true "... still served" python3 -c "import socket; s = socket.socket(socket.AF_UNIX); s.connect('$SOCK')"
check_true "the first agent runs on" kill -0 "$AGENT1"
check_true "the shim workload runs on" kill -0 "$SHIM_PID"
check "one SandboxAdded for the shim sandbox (nothing doubled)" 1 \
	"$(jq -s --arg s "$SB_SHIM" '[.[] | select(.event == "SandboxAdded" and .sandbox == $s)] | length' "$OUT1")"

# --- 2. SIGTERM + restart -------------------------------------------------------------
BEFORE_S=$(lines "$WORK/ws/denied") BEFORE_C=$(lines "$WORK/c1.denied")
kill -TERM "$AGENT1"
wait "$AGENT1"
check "agent 1: exit 0 on SIGTERM" 0 $?
TRACE_PID=""
check_true "agent 1 left its parent links pinned" sh -c "ls /sys/fs/bpf/sbtrace-agent/*/ | grep -q '^$AGENT1-'"
T_GAP=$(date +%s%N)
sleep 2 # the gap: nobody watches
GAP_S=$(lines "$WORK/ws/denied") GAP_C=$(lines "$WORK/c1.denied")
check_true "in the gap: the shim workload runs on (no exit 125)" kill -0 "$SHIM_PID"
check_true "in the gap: the shim says it runs on" grep -q "handed over: its policy stays enforced" "$WORK/shim.err"
check_true "in the gap: the shim workload connected again" [ "$GAP_S" -gt "$BEFORE_S" ]
check_true "in the gap: the --policy-dir child connected again" [ "$GAP_C" -gt "$BEFORE_C" ]
OUT2="$WORK/agent2.jsonl"
agent "$OUT2" --persist || exit 1
AGENT2=$TRACE_PID
wait_for 10 added "$OUT2" "$SB_SHIM"
wait_for 10 added "$OUT2" "$PNAME/c1"
sleep 1
check "every connect of the shim workload to a host not allowed: EPERM (before, in the gap, after)" \
	"" "$(grep -v '^err EPERM' "$WORK/ws/denied")"
check "every connect of the --policy-dir child to a host not allowed: EPERM" \
	"" "$(grep -v '^err EPERM' "$WORK/c1.denied")"
check "the test host never served them" 0 "$(awk -v h="$NET_T2_V4" '$1 == "tcp" && index($0, h)' "$NET_SERVER_LOG" | wc -l)"
check "agent 2 adopts the shim sandbox: adopted, released to it" "true true" \
	"$(jq -r --arg s "$SB_SHIM" 'select(.event == "SandboxAdded" and .sandbox == $s) | "\(.adopted) \(.released)"' "$OUT2")"
check "... with observed_since (ns since the epoch, after agent 1 stopped)" true \
	"$(jq -r --arg s "$SB_SHIM" --argjson t "$T_GAP" 'select(.event == "SandboxAdded" and .sandbox == $s) | .observed_since > $t' "$OUT2")"
check "agent 2 adopts the --policy-dir child, its policy applied" "true enforce" \
	"$(jq -r --arg s "$PNAME/c1" 'select(.event == "SandboxAdded" and .sandbox == $s) | "\(.adopted) \(.egress.mode)"' "$OUT2")"
check_true "the shim took agent 2 as its tracer" grep -q "tracer pid $AGENT2 attached" "$WORK/shim.err"
check "agent 1's pins are gone, agent 2's are there (parents)" "0 yes" \
	"$(ls /sys/fs/bpf/sbtrace-agent/*/ | grep -c "^$AGENT1-") $(ls /sys/fs/bpf/sbtrace-agent/*/ | grep -q "^$AGENT2-" && echo yes)"
check "agent 1's pins are gone, agent 2's are there (shim sandbox)" "0 yes" \
	"$(ls "/sys/fs/bpf/sbtrace/$P-s/" | grep -c "^$AGENT1-") $(ls "/sys/fs/bpf/sbtrace/$P-s/" | grep -q "^$AGENT2-" && echo yes)"
check "links on the parent: agent 2's 8 alone (agent 1's unpinned, detached)" 8 "$(links_on "$PARENT_ID")"
check "c1 reaches the allowed host under agent 2" ok \
	"$(in_sandbox "$PARENT/c1" "$SBTNET" --timeout 2000 tcp "$NET_T1_V4" 80 | cut -d' ' -f1)"

# the adopted sandboxes end: what was not observed is said
touch "$WORK/stop" "$WORK/ws/stop"
wait "$LOOP_PID"
LOOP_PID=""
rmdir "$PARENT/c1"
wait "$SHIM_PID"
check "the shim workload ended by itself: exit 0" 0 $?
SHIM_PID=""
wait_for 10 removed "$OUT2" "$SB_SHIM"
wait_for 10 removed "$OUT2" "$PNAME/c1"
for sb in "$SB_SHIM" "$PNAME/c1"; do
	check "$sb removed: exec_complete false (adopted), egress_complete false" "false adopted false" \
		"$(jq -r --arg s "$sb" 'select(.event == "SandboxRemoved" and .sandbox == $s) | .totals | "\(.exec_complete) \(.exec_incomplete_reason) \(.egress_complete)"' "$OUT2")"
done

# --- stop for good: --unpin lifts what is left -------------------------------------------
stop_trace TERM
check "agent 2: exit 0" 0 "$TRACE_RC"
validate_schema "$OUT1"
validate_schema "$OUT2"
check "agent 2 (--persist) stopped: its 8 parent links stay" 8 "$(links_on "$PARENT_ID")"
"$SBTRACE" agent --unpin --state-dir "$STATE" --socket "$SOCK" 2> "$WORK/unpin.err"
check "--unpin: exit 0" 0 $?
check "--unpin: no link left on the parent" 0 "$(links_on "$PARENT_ID")"
check "--unpin: nothing left under /sys/fs/bpf/sbtrace-agent" "" \
	"$(find /sys/fs/bpf/sbtrace-agent -mindepth 1 2> /dev/null | head -n 3)"

# --- 3. an egress flood with loss ---------------------------------------------------
# A third agent (without --persist: it lifts all at its exit) with a 4 KiB
# ring buffer, stopped while the child is denied 2000 times.
OUT3="$WORK/agent3.jsonl"
agent "$OUT3" --ringbuf-size 4096 || exit 1
AGENT3=$TRACE_PID
mkdir "$PARENT/flood"
wait_for 10 added "$OUT3" "$PNAME/flood"
kill -STOP "$AGENT3" # the ring buffer fills; the kernel still denies
in_sandbox "$PARENT/flood" "$SBTNET" --timeout 200 tcp --ports 2000 "$NET_T2_V4" 20000 \
	> "$WORK/flood.out" 2>&1
kill -CONT "$AGENT3"
check "flood: the last connect denied" "err EPERM" "$(cut -d' ' -f1,2 "$WORK/flood.out")"
rmdir "$PARENT/flood"
wait_for 10 removed "$OUT3" "$PNAME/flood"
FL=$(jq -c --arg s "$PNAME/flood" 'select(.event == "SandboxRemoved" and .sandbox == $s) | .totals' "$OUT3")
log "flood: totals $FL"
check "flood: egress_complete false" false "$(printf '%s' "$FL" | jq -r .egress_complete)"
check_true "flood: egress records lost, counted" [ "$(printf '%s' "$FL" | jq -r '.egress.lost')" -gt 0 ]
check "flood: received + lost = 2000 connects" 2000 \
	"$(printf '%s' "$FL" | jq -r '.egress.records + .egress.lost')"
check "flood: EventsLost (egress) says the same count" "$(printf '%s' "$FL" | jq -r '.egress.lost')" \
	"$(jq -s --arg s "$PNAME/flood" '[.[] | select(.event == "EventsLost" and .sandbox == $s and .kind == "egress") | .lost] | add // 0' "$OUT3")"

# --- 4. SIGHUP reads the policy dir again ---------------------------------------------
conn() { in_sandbox "$PARENT/$1" "$SBTNET" --timeout 2000 tcp "$2" 80 | awk '{ print ($1 == "ok") ? "ok" : $1 " " $2 }'; }
reloaded() { [ "$(grep -c "SIGHUP: --policy-dir" "$WORK/agent.err")" -ge "$1" ]; }
printf 'cidr %s/32 port 80 proto tcp\n' "$NET_T1_V4" > "$PDIR/c2.policy"
mkdir "$PARENT/c2"
wait_for 10 added "$OUT3" "$PNAME/c2"
check "c2: its policy denies the second test host" "err EPERM" "$(conn c2 "$NET_T2_V4")"
printf 'cidr %s/32 port 80 proto tcp\n' "$NET_T2_V4" > "$PDIR/c2.policy"
kill -HUP "$AGENT3"
wait_for 10 reloaded 1
check_true "SIGHUP: the agent says c2's policy was reloaded" grep -q "sandbox $PNAME/c2: policy reloaded (enforce, 1 rule)" "$WORK/agent.err"
check "c2 after SIGHUP: the newly allowed host answers" ok "$(conn c2 "$NET_T2_V4")"
check "c2 after SIGHUP: the formerly allowed one is refused" "err EPERM" "$(conn c2 "$NET_T1_V4")"
check "c2 after SIGHUP: the allowance names the new rule" "cidr $NET_T2_V4/32 port 80 proto tcp" \
	"$(jq -r --arg s "$PNAME/c2" 'select(.sandbox == $s and .event == "EgressAllowed") | .rule.text' "$OUT3" | tail -n 1)"
rm "$PDIR/c2.policy"
kill -HUP "$AGENT3"
wait_for 10 reloaded 2
check "c2, its policy file removed, SIGHUP: not confined" ok "$(conn c2 "$NET_T1_V4")"
check_true "... and --out still written after two SIGHUPs" sh -c "tail -n 1 '$OUT3' | jq -e . > /dev/null"
rmdir "$PARENT/c2"

stop_trace TERM
check "agent 3: exit 0" 0 "$TRACE_RC"
check "agent 3 (no --persist) stopped: no link left on the parent" 0 "$(links_on "$PARENT_ID")"
check "... nor a pin" "" "$(find /sys/fs/bpf/sbtrace-agent -mindepth 1 2> /dev/null | head -n 3)"

finish
