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
finish
