#!/bin/sh
# The agent as a service (issue 27): what `make install` ships for it, and
# that each piece holds.
#   - the unit passes `systemd-analyze verify` without a warning (and a
#     broken copy does not), Type=notify, journald's rate limit raised (not
#     "0", which systemd 252 takes for unset);
#   - the logrotate snippet rotates a running agent's --out file twice
#     (rename, create 0600, SIGHUP; the older file compressed one rotation
#     later): every exec of a sandbox once across the files, seq 1..N;
#   - the sample agent.conf names every option of the agent's getopt table
#     (but help, config, unpin) and nothing else; a second install keeps an
#     operator's agent.conf;
#   - sbt-notify-listen (the service manager's end of sd_notify, for the
#     agent's readiness test) reads what systemd's own systemd-notify sends,
#     at a path and at an abstract name, with the sender's pid.
. "$(dirname "$0")/lib.sh"

ROOT="$WORK/root"
UNIT="$ROOT/usr/lib/systemd/system/sbtrace-agent.service"
NL="$TOP/build/tests/sbt-notify-listen"
NL_PID=""

unit_cleanup() {
	[ -n "$NL_PID" ] && kill "$NL_PID" 2> /dev/null
	cleanup
}
trap unit_cleanup EXIT

command -v systemd-analyze > /dev/null || fail "systemd-analyze missing (Debian: systemd)"
command -v systemd-notify > /dev/null || fail "systemd-notify missing (Debian: systemd)"
command -v logrotate > /dev/null || fail "logrotate missing (Debian: logrotate)"
[ -x "$NL" ] || fail "$NL missing (make all)"
[ "$T_FAILS" -eq 0 ] || finish

# --- make install, into a root of our own -------------------------------------
install_here() {
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u MAKEOVERRIDES make --no-print-directory \
		-C "$TOP" install PREFIX="$ROOT/usr" SYSCONFDIR="$ROOT/etc" > "$WORK/install.log" 2>&1
}
install_here || fail "make install: $(tail -n 5 "$WORK/install.log")"
for f in usr/bin/sbtrace usr/bin/sbtrace-shim usr/share/man/man1/sbtrace-agent.1 \
	usr/lib/systemd/system/sbtrace-agent.service etc/logrotate.d/sbtrace-agent \
	etc/sbtrace/agent.conf.example etc/sbtrace/agent.conf; do
	check_true "installed: $f" test -f "$ROOT/$f"
done
check "agent.conf: root's, writable by nobody else (as the agent demands)" "root 644" \
	"$(stat -c '%U %a' "$ROOT/etc/sbtrace/agent.conf")"
echo "no-shim" >> "$ROOT/etc/sbtrace/agent.conf"
install_here || fail "make install (again): $(tail -n 5 "$WORK/install.log")"
check "a second install keeps the operator's agent.conf" "no-shim" \
	"$(tail -n 1 "$ROOT/etc/sbtrace/agent.conf")"
check_true "a second install refreshes agent.conf.example" \
	cmp -s "$TOP/scripts/dist/agent.conf" "$ROOT/etc/sbtrace/agent.conf.example"

# --- the unit ---------------------------------------------------------------------
check "unit: ExecStart is the installed binary" \
	"ExecStart=$ROOT/usr/bin/sbtrace agent \$SBTRACE_AGENT_ARGS" "$(grep '^ExecStart=' "$UNIT")"
# warnings (unknown keys, bad values, missing binaries) go to stderr with exit 0
systemd-analyze verify --man=no "$UNIT" > "$WORK/verify.out" 2>&1
check "systemd-analyze verify: exit 0" 0 $?
check "systemd-analyze verify: not a word" "" "$(cat "$WORK/verify.out")"
sed -e 's/^Type=notify$/Type=notifyy/' -e 's/^NotifyAccess=main$/&\nNotifyAcess=all/' "$UNIT" \
	> "$WORK/broken.service"
systemd-analyze verify --man=no "$WORK/broken.service" > "$WORK/broken.out" 2>&1
check_true "verify catches a bad Type= in a broken copy" \
	grep -q 'Failed to parse service type' "$WORK/broken.out"
check_true "verify catches an unknown key in a broken copy" \
	grep -q "Unknown key 'NotifyAcess'" "$WORK/broken.out"
# what a verify cannot judge: the values that make it a notify service with the journal open
check "unit: Type, NotifyAccess" "Type=notify NotifyAccess=main" \
	"$(grep -E '^(Type|NotifyAccess)=' "$UNIT" | tr '\n' ' ' | sed 's/ $//')"
check "unit: journald's per-unit limit raised, not '0' (unset in systemd 252)" \
	"LogRateLimitIntervalSec=1s LogRateLimitBurst=1000000" \
	"$(grep -E '^LogRateLimit' "$UNIT" | tr '\n' ' ' | sed 's/ $//')"

# --- the sample config names the agent's options, all of them -----------------------
awk '/agent_longopts\[\] = \{/ { on = 1; next }
	on && /^\};/ { exit }
	on && match($0, /\{ "[a-z0-9-]+"/) { print substr($0, RSTART + 3, RLENGTH - 4) }' \
	"$TOP/userspace/cmd/agent_cmd.c" | grep -v -x -e help -e config -e unpin | sort \
	> "$WORK/table"
sed -n -E 's/^#?([a-z][a-z0-9-]*)( = .*)?$/\1/p' "$TOP/scripts/dist/agent.conf" | sort -u \
	> "$WORK/sample"
check_true "the agent's option table read ($(wc -l < "$WORK/table") options)" \
	test "$(wc -l < "$WORK/table")" -ge 20
check "agent.conf: every option of the table, nothing else" "" \
	"$(diff "$WORK/table" "$WORK/sample" | grep '^[<>]' | tr '\n' ' ')"

# --- logrotate on a running agent's --out -------------------------------------------
PARENT=$(mk_cgroup pods)
mkdir -m 0700 "$WORK/log"
EV="$WORK/log/events.jsonl"
"$SBTRACE" agent --cgroup-parent "$PARENT" --no-shim --no-socket --out "$EV" \
	--stats-interval 1 --poll-ms 20 2> "$WORK/agent.err" &
TRACE_PID=$!
has_started() { [ -s "$EV" ] && head -n 1 "$EV" | grep -q '"TraceStarted"'; }
if ! wait_for 10 has_started; then
	fail "agent did not start: $(tail -n 5 "$WORK/agent.err")"
	finish
fi
# the shipped snippet, its file here and its reload sent to this agent (no systemd here)
awk -v ev="$EV" -v pid="$TRACE_PID" '
	/^[ \t]*postrotate$/ { print; print "\t\tkill -HUP " pid; skip = 1; next }
	/^[ \t]*endscript$/ { skip = 0 }
	!skip { gsub("/var/log/sbtrace/events.jsonl", ev); print }' \
	"$ROOT/etc/logrotate.d/sbtrace-agent" > "$WORK/logrotate.conf"
check_true "the snippet, pointed here, names the file" grep -q "^$EV {" "$WORK/logrotate.conf"
logrotate -d -s "$WORK/lr.state" "$WORK/logrotate.conf" > "$WORK/lr-debug.out" 2>&1
check "logrotate -d: the snippet parses" 0 $?
check "logrotate -d: no error" "" "$(grep -i 'error' "$WORK/lr-debug.out")"

mkdir "$PARENT/job"
added() { grep -q '"SandboxAdded"' "$EV"; }
wait_for 10 added || fail "no SandboxAdded for $PARENT/job: $(tail -n 3 "$WORK/agent.err")"
# stats in the file now in place (every second): the agent writes there
stats_in() { [ -s "$EV" ] && grep -q '"TraceStats"' "$EV"; }
for round in 1 2; do
	"$SPAWN" "$PARENT/job" -n 5 -- /bin/true || fail "round $round: sbt-spawn failed"
	logrotate -f -s "$WORK/lr.state" "$WORK/logrotate.conf" > "$WORK/lr$round.out" 2>&1
	check "rotation $round: logrotate exit 0" 0 $?
	check "rotation $round: the new file made 0600" 600 "$(stat -c %a "$EV" 2> /dev/null)"
	wait_for 5 stats_in || fail "rotation $round: nothing written to the new file"
done
check_true "rotation 1's file compressed at rotation 2 (delaycompress)" \
	gzip -t "$EV.2.gz"
check_true "rotation 2's file not yet compressed" test -s "$EV.1"
"$SPAWN" "$PARENT/job" -n 5 -- /bin/true || fail "round 3: sbt-spawn failed"
rmdir "$PARENT/job"
removed() { grep -q '"SandboxRemoved"' "$EV"; }
wait_for 10 removed || fail "no SandboxRemoved for $PARENT/job"
kill -TERM "$TRACE_PID"
wait "$TRACE_PID"
check "agent: exit 0 on SIGTERM" 0 $?
TRACE_PID=""
{ gzip -dc "$EV.2.gz"; cat "$EV.1" "$EV"; } > "$WORK/all.jsonl"
check "the files in order: TraceStarted first, TraceStopped last" "TraceStarted TraceStopped" \
	"$(head -n 1 "$WORK/all.jsonl" | jq -r .event) $(tail -n 1 "$WORK/all.jsonl" | jq -r .event)"
check "every exec of the sandbox once, across the rotations (seq 1..15)" \
	"$(seq 1 15 | tr '\n' ' ')" \
	"$(jq -r 'select(.event == "ProcessExec") | .seq' "$WORK/all.jsonl" | sort -n | tr '\n' ' ')"
check "SandboxRemoved counts them" 15 \
	"$(jq -r 'select(.event == "SandboxRemoved") | .totals.execs' "$WORK/all.jsonl")"
check "no line twice" "" "$(sort "$WORK/all.jsonl" | uniq -d | head -c 300)"
validate_schema "$WORK/all.jsonl"

# --- sbt-notify-listen against systemd-notify ---------------------------------------
listening() { grep -q 'listening on' "$WORK/nl.err"; }
SOCK="$WORK/notify.sock"
"$NL" "$SOCK" 10 > "$WORK/nl.out" 2> "$WORK/nl.err" &
NL_PID=$!
wait_for 5 listening || fail "sbt-notify-listen did not bind $SOCK: $(cat "$WORK/nl.err")"
check_true "a path: the socket file is there while it listens" test -S "$SOCK"
NOTIFY_SOCKET="$SOCK" systemd-notify --no-block --status=attaching
NOTIFY_SOCKET="$SOCK" systemd-notify --no-block --ready
wait "$NL_PID"
check "a path: exit 0 once READY=1 came" 0 $?
NL_PID=""
# systemd-notify sends in its parent's name (root may): this shell's pid
check "a path: each assignment a line, the sender's pid first" "$$ STATUS=attaching|$$ READY=1" \
	"$(tr '\n' '|' < "$WORK/nl.out" | sed 's/|$//')"
check_true "a path: the socket file removed at exit" test ! -e "$SOCK"

ABS="@sbt-notify-listen/$$"
"$NL" "$ABS" 10 STOPPING=1 > "$WORK/nl.out" 2> "$WORK/nl.err" &
NL_PID=$!
wait_for 5 listening || fail "sbt-notify-listen did not bind $ABS: $(cat "$WORK/nl.err")"
NOTIFY_SOCKET="$ABS" systemd-notify --no-block --ready
NOTIFY_SOCKET="$ABS" systemd-notify --no-block STOPPING=1
wait "$NL_PID"
check "an abstract name, UNTIL STOPPING=1: exit 0" 0 $?
NL_PID=""
check "an abstract name: both lines" "$$ READY=1|$$ STOPPING=1" \
	"$(tr '\n' '|' < "$WORK/nl.out" | sed 's/|$//')"

# --- the agent's readiness (Type=notify, NotifyAccess=main) -------------------------
# READY=1 from the agent's own pid once its hooks are attached (TraceStarted
# is out), STOPPING=1 at its stop; its options from a --config file.
SOCK="$WORK/agent-notify.sock"
"$NL" "$SOCK" 20 STOPPING=1 > "$WORK/nl.out" 2> "$WORK/nl.err" &
NL_PID=$!
wait_for 5 listening || fail "sbt-notify-listen did not bind $SOCK: $(cat "$WORK/nl.err")"
printf '# the test agent\nno-shim\nno-socket\nout = %s\n' "$WORK/ready.jsonl" > "$WORK/agent.conf"
chmod 0644 "$WORK/agent.conf"
NOTIFY_SOCKET="$SOCK" "$SBTRACE" agent --config "$WORK/agent.conf" --cgroup-parent "$(mk_cgroup rdy)" \
	> "$WORK/ready.stdout" 2> "$WORK/ready.err" &
RDY_PID=$!
ready() { grep -q "READY=1" "$WORK/nl.out"; }
wait_for 20 ready
check "the agent: READY=1 from its own pid" "$RDY_PID READY=1" "$(grep READY=1 "$WORK/nl.out")"
check_true "... after its TraceStarted was written" sh -c "head -n 1 '$WORK/ready.jsonl' | grep -q TraceStarted"
check "... with the --config file's options (its events to the file's out, none on stdout)" 0 \
	"$(wc -c < "$WORK/ready.stdout")"
kill -TERM "$RDY_PID"
wait "$RDY_PID"
check "the agent: exit 0" 0 $?
wait "$NL_PID"
check "the agent: STOPPING=1 at its stop" "$RDY_PID STOPPING=1" "$(grep STOPPING=1 "$WORK/nl.out")"
NL_PID=""
chmod 0666 "$WORK/agent.conf"
"$SBTRACE" agent --config "$WORK/agent.conf" --duration 1 > /dev/null 2> "$WORK/badconf.err"
check "a --config file anyone may write: exit 2" 2 $?
check_true "... naming the file" grep -q "$WORK/agent.conf" "$WORK/badconf.err"
printf 'no-shim\nbogus-option = 1\n' > "$WORK/agent2.conf"
chmod 0644 "$WORK/agent2.conf"
"$SBTRACE" agent --config "$WORK/agent2.conf" --duration 1 > /dev/null 2> "$WORK/badconf2.err"
check "an unknown option in the file: exit 2" 2 $?
check_true "... naming FILE:LINE" grep -q "$WORK/agent2.conf:2" "$WORK/badconf2.err"

"$NL" "$WORK/quiet.sock" 0.3 > /dev/null 2> "$WORK/nl.err"
check "no READY=1 in time: exit 1" 1 $?
check_true "no READY=1 in time: said so" grep -q 'no READY=1 within 0.3 s' "$WORK/nl.err"
: > "$WORK/taken"
"$NL" "$WORK/taken" 1 > /dev/null 2>&1
check "a path that exists: exit 2" 2 $?

finish
