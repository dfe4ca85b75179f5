#!/bin/sh
# Text output, --duration, argv truncation, and ancestor chains in
# ShellInvocationObserved (nested shells).
. "$(dirname "$0")/lib.sh"

A=$(mk_cgroup out)
SA=$(sb_name "$A")

# --duration stops by itself with exit 0; text format has a header and marks shells.
"$SBTRACE" trace --cgroup "$A" --output text --duration 1.5 > "$WORK/text.out" 2> "$WORK/text.err" &
TP=$!
sleep 0.5
"$SPAWN" "$A" -- /bin/sh -c '/bin/true; exec /bin/echo "hello world"' > /dev/null
wait "$TP"
check "--duration: exit 0" 0 $?
check_true "text: header" grep -qE '^SANDBOX +COMM +PID +PPID +UID +SHELL +ARGS' "$WORK/text.out"
check_true "text: shell marked" grep -qE "^$SA +sh .*\*sh/command +/bin/sh -c " "$WORK/text.out"
check_true "text: quoted argument" grep -q "/bin/echo 'hello world'" "$WORK/text.out"
check_true "text: TraceStopped line" grep -q '^# TraceStopped .*"reason":"duration"' "$WORK/text.out"

# argv cut at --argv-max and flagged.
OUT="$WORK/trace.jsonl"
cat > "$WORK/inner.sh" <<'S'
#!/bin/sh
/bin/true
S
chmod +x "$WORK/inner.sh"
# A shell already inside the sandbox before attach (its exec is not traced):
# the snapshot at attach must still name it in its descendants' chains.
"$SPAWN" "$A" --exec -- /bin/sh -c "sleep 1; /bin/bash -c '$WORK/inner.sh; /bin/true'; /bin/true" &
PRE=$!
sleep 0.3
start_trace "$OUT" --cgroup "$A" --argv-max 16 || exit 1
"$SPAWN" "$A" -- /bin/echo 0123456789 abcdefghij > /dev/null
wait "$PRE"
sleep 0.2
stop_trace INT
check "argv cut at 16 bytes" '["/bin/echo","012345"]' \
	"$(jq -c 'select(.event == "ProcessExec" and .filename == "/bin/echo") | .argv' "$OUT")"
check "argv_truncated" true \
	"$(jq -c 'select(.event == "ProcessExec" and .filename == "/bin/echo") | .argv_truncated' "$OUT")"
check "two shells traced (bash -c, the script)" 2 \
	"$(jq -r 'select(.event == "ShellInvocationObserved") | .count' "$OUT")"
check "script's chain" "sh>bash" \
	"$(jq -r 'select(.event == "ShellInvocationObserved") | .locations[] | select(.kind == "shebang") | .chain' "$OUT")"
check "bash's chain: the pre-attach shell, from the snapshot" "sh proc" \
	"$(jq -r 'select(.event == "ShellInvocationObserved") | .locations[] | select(.shell == "bash") | "\(.chain) \(.ancestors[0].source)"' "$OUT")"
check "script's nearest ancestor is bash, seen by exec" "bash exec" \
	"$(jq -r 'select(.event == "ShellInvocationObserved") | .locations[] | select(.kind == "shebang") | .ancestors[0] | "\(.comm) \(.source)"' "$OUT")"
# --out appends; SIGHUP after a rename: a new file, nothing lost or twice; TraceStats.
ROT="$WORK/rot.jsonl"
echo '{"kept":true}' > "$ROT"
"$SBTRACE" trace --out "$ROT" --cgroup "$A" --stats-interval 0.2 2> "$ROT.err" &
TRACE_PID=$!
TRACE_OUT=$ROT
rot_started() { grep -q '"TraceStarted"' "$ROT"; }
wait_for 5 rot_started || { log "sbtrace did not start: $(cat "$ROT.err")"; exit 1; }
check "--out appends: what was there stays" '{"kept":true}' "$(head -n 1 "$ROT")"
"$SPAWN" "$A" -- /bin/echo before > /dev/null
sleep 0.4
mv "$ROT" "$ROT.1"
kill -HUP "$TRACE_PID"
sleep 0.3
"$SPAWN" "$A" -- /bin/echo after > /dev/null
sleep 0.3
stop_trace INT
check "SIGHUP: the trace goes on (exit 0)" 0 "$TRACE_RC"
sed -i 1d "$ROT.1" # the line that was there before
validate_schema "$ROT.1"
check "before the rename: in the old file" "/bin/echo before" \
	"$(jq -r 'select(.event == "ProcessExec") | .argv | join(" ")' "$ROT.1")"
check "after SIGHUP: in the new file" "/bin/echo after" \
	"$(jq -r 'select(.event == "ProcessExec") | .argv | join(" ")' "$ROT")"
check "TraceStarted in the old file, TraceStopped in the new" "1 0 0 1" \
	"$(nevents "$ROT.1" TraceStarted) $(nevents "$ROT.1" TraceStopped) $(nevents "$ROT" TraceStarted) $(nevents "$ROT" TraceStopped)"
check "seqs 1, 2 across both files" "1 2" "$(cat "$ROT.1" "$ROT" | jq -r 'select(.event == "ProcessExec") | .seq' | tr '\n' ' ' | sed 's/ $//')"
check_true "TraceStats every --stats-interval" sh -c "[ \$(cat '$ROT.1' '$ROT' | jq -s '[.[] | select(.event == \"TraceStats\")] | length') -ge 2 ]"
finish
