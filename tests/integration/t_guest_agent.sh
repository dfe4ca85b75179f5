#!/bin/sh
# sbtrace guest-agent, run here on the host kernel (in a microVM the guest's
# init runs it): the exec hook for one cgroup, every record sent down a port
# in the guest stream's frames, decoded by tests/helpers/sbt-gsread like the
# host's own records. HELLO and the ready line come only once the hook is
# attached (the first exec is seen); heartbeats carry the kernel's counts; a
# clean stop ends with BYE; a killed agent leaves a stream without BYE; a
# port that closes stops the agent with exit 1.
. "$(dirname "$0")/lib.sh"

GSREAD="$TOP/build/tests/sbt-gsread"
CG=$(mk_cgroup work)
OTHER=$(mk_cgroup other)
NPROGS=$(nr_our_progs)

# start_agent NAME [ARGS...]: the agent on FIFO $WORK/NAME.port, its reader's lines in
# $WORK/NAME.out; waits for the ready line (AGENT, READER: pids).
start_agent() {
	name=$1
	shift
	mkfifo "$WORK/$name.port"
	"$GSREAD" "$WORK/$name.port" > "$WORK/$name.out" &
	READER=$!
	"$SBTRACE" guest-agent --port "$WORK/$name.port" --cgroup "$CG" --ready-fd 7 "$@" \
		7> "$WORK/$name.ready" 2> "$WORK/$name.err" &
	AGENT=$!
	TRACE_PID=$AGENT # the EXIT trap stops it
	ready() { grep -q '^attached$' "$WORK/$name.ready"; }
	wait_for 10 ready || log "$name: no ready line: $(cat "$WORK/$name.err")"
}

# --- a clean run ---------------------------------------------------------------
start_agent clean --heartbeat-ms 100
check "ready line once attached" "attached" "$(cat "$WORK/clean.ready")"
check "HELLO first, after the hook is attached" "hello" "$(head -n 1 "$WORK/clean.out" | cut -d' ' -f1)"
check_true "HELLO names the exec hook's mode and the event ABI" \
	grep -qE '^hello abi=[0-9]+ mode=(tp_btf|raw_tp|tracepoint) hb_ms=100 kernel=' "$WORK/clean.out"
"$SPAWN" "$CG" -- /bin/sh -c '/bin/true; /bin/echo guest > /dev/null' > /dev/null
"$SPAWN" "$OTHER" -- /bin/true > /dev/null
/bin/true
sleep 0.5
kill -TERM "$AGENT"
wait "$AGENT"
check "SIGTERM: exit 0" 0 "$?"
wait "$READER"
check "the reader saw a whole stream" 0 "$?"
execs() { grep '^exec ' "$WORK/clean.out"; }
check "the workload's first exec is seq 1" "exec seq=1 slot=0" "$(execs | head -n 1 | cut -d' ' -f1-3)"
check "... it is the workload's own" "/bin/sh" "$(execs | head -n 1 | sed 's/.* filename=\([^ ]*\) .*/\1/')"
check "every exec of the cgroup, in order" "/bin/sh /bin/true /bin/echo" \
	"$(execs | sed 's/.* filename=\([^ ]*\) .*/\1/' | tr '\n' ' ' | sed 's/ $//')"
check "nothing from outside the cgroup" 3 "$(execs | wc -l)"
check_true "heartbeats between (100 ms)" test "$(grep -c '^beat ' "$WORK/clean.out")" -ge 3
check "the last heartbeat counts the kernel's execs" "beat execs=3 lost=0 records=3" \
	"$(grep '^beat ' "$WORK/clean.out" | tail -n 1)"
check "BYE with the final counts" "bye execs=3 lost=0 records=3" "$(grep '^bye ' "$WORK/clean.out")"
check "the stream ends with BYE, no gap" "end ok" "$(tail -n 1 "$WORK/clean.out")"
# (the kernel frees a program after an RCU grace period: bpftool may list it a moment longer)
progs_gone() { [ "$(nr_our_progs)" = "$NPROGS" ]; }
check_true "its programs are gone (within 5 s)" wait_for 5 progs_gone

# --- a killed agent: no BYE, the host can tell ---------------------------------
start_agent killed
"$SPAWN" "$CG" -- /bin/true > /dev/null
sleep 0.3
kill -KILL "$AGENT"
wait "$AGENT" 2> /dev/null
wait "$READER"
check "SIGKILL: the stream ends without BYE" "end no_bye" "$(tail -n 1 "$WORK/killed.out")"
check "... after the exec it did send" 1 "$(grep -c '^exec seq=1 ' "$WORK/killed.out")"

# --- the port closes: the agent stops and says so ------------------------------
start_agent closed --heartbeat-ms 50
kill -TERM "$READER"
wait "$READER" 2> /dev/null
wait_for 5 sh -c "! kill -0 $AGENT 2> /dev/null"
wait "$AGENT"
check "a closed port: exit 1" 1 "$?"
check_true "... naming the port" grep -q "writing to $WORK/closed.port: Broken pipe" "$WORK/closed.err"
TRACE_PID=""

# --- bad usage: exit 2, said on stderr, nothing attached -----------------------
"$SBTRACE" guest-agent --cgroup "$CG" > "$WORK/u.out" 2> "$WORK/u.err"
check "no --port: exit 2" 2 "$?"
check_true "... said" grep -q -- "--port is required" "$WORK/u.err"
: > "$WORK/plain.port"
"$SBTRACE" guest-agent --port "$WORK/plain.port" --cgroup "$CG2/sbtrace-no-such-cgroup" 2> "$WORK/u.err"
check "a cgroup that does not exist: exit 2" 2 "$?"
"$SBTRACE" guest-agent --port "$WORK/no/such/port" --cgroup "$CG" 2> "$WORK/u.err"
check "a port that cannot be opened: exit 2" 2 "$?"
check_true "... names it" grep -q "no/such/port" "$WORK/u.err"
"$SBTRACE" guest-agent --port "$WORK/plain.port" --cgroup "$CG" --heartbeat-ms 5 2> "$WORK/u.err"
check "--heartbeat-ms out of range: exit 2" 2 "$?"
check "bad usage writes no frame" 0 "$(wc -c < "$WORK/plain.port")"
check "bad usage: nothing on stdout" "" "$(cat "$WORK/u.out")"
check_true "no program left loaded (within 5 s)" wait_for 5 progs_gone
finish
