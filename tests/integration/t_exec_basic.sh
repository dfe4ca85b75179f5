#!/bin/sh
# A fresh cgroup: sh -c, /bin/true, a #!/bin/sh script, busybox sh -c, an exec
# in a child cgroup, argv boundaries; an exec in another cgroup must not appear.
. "$(dirname "$0")/lib.sh"

A=$(mk_cgroup a)
mkdir "$A/child"
B=$(mk_cgroup b)
SA=$(sb_name "$A")

cat > "$WORK/build.sh" <<'S'
#!/bin/sh
exec /bin/echo from-script
S
chmod +x "$WORK/build.sh"

OUT="$WORK/trace.jsonl"
start_trace "$OUT" --cgroup "$A" || exit 1

"$SPAWN" "$A" -- /bin/sh -c 'exec /bin/true' || fail "sh -c"
"$SPAWN" "$A" -- /bin/true || fail "true"
"$SPAWN" "$A" -- "$WORK/build.sh" > /dev/null || fail "script"
"$SPAWN" "$A" -- /bin/busybox sh -c 'exec /bin/true' || fail "busybox"
"$SPAWN" "$A/child" -- /usr/bin/env MARK=child /bin/true || fail "child cgroup"
"$SPAWN" "$A" -- /bin/echo 'a b' c '' > /dev/null || fail "echo"
"$SPAWN" "$B" -- /bin/echo MARKER-OUTSIDE > /dev/null || fail "outside"
sleep 0.3
stop_trace INT
check "exit code on SIGINT" 0 "$TRACE_RC"

# Expected execs in A: sh, true | true | build.sh, echo | busybox, true |
# env, true | echo  = 10
check "ProcessExec count" 10 "$(nevents "$OUT" ProcessExec "$SA")"
check "nothing from the other cgroup" 0 \
	"$(jq -s '[.[] | select(.event == "ProcessExec") | select(.argv | index("MARKER-OUTSIDE"))] | length' "$OUT")"
check "first event" TraceStarted "$(head -n 1 "$OUT" | jq -r .event)"
check "last event" TraceStopped "$(tail -n 1 "$OUT" | jq -r .event)"
check "exec hook mode reported" tp_btf "$(head -n 1 "$OUT" | jq -r .hooks.exec.mode)"

check "argv boundaries kept" '["/bin/echo","a b","c",""]' \
	"$(jq -c 'select(.event == "ProcessExec" and .filename == "/bin/echo" and .argv[1] != "from-script") | .argv' "$OUT")"
check "argv not truncated" false \
	"$(jq -c 'select(.event == "ProcessExec" and .filename == "/bin/echo" and .argv[1] != "from-script") | .argv_truncated' "$OUT")"

check "script interp" "/bin/sh" \
	"$(jq -r --arg f "$WORK/build.sh" 'select(.event == "ProcessExec" and .filename == $f) | .interp' "$OUT")"
check "script classified shebang" "sh/shebang" \
	"$(jq -r --arg f "$WORK/build.sh" 'select(.event == "ProcessExec" and .filename == $f) | "\(.shell.name)/\(.shell.kind)"' "$OUT")"
check "sh -c classified" "sh/command/exec /bin/true" \
	"$(jq -r 'select(.event == "ProcessExec" and .filename == "/bin/sh") | "\(.shell.name)/\(.shell.kind)/\(.shell.command)"' "$OUT")"
check "busybox sh -c classified" "busybox sh/command" \
	"$(jq -r 'select(.event == "ProcessExec" and .filename == "/bin/busybox") | "\(.shell.name)/\(.shell.kind)"' "$OUT")"
check "true is not a shell" "null" \
	"$(jq -r 'select(.event == "ProcessExec" and .filename == "/bin/true") | .shell' "$OUT" | sort -u)"
check "interp equals filename for a binary" "/bin/true" \
	"$(jq -r 'select(.event == "ProcessExec" and .filename == "/bin/true") | .interp' "$OUT" | sort -u)"

CHILD_ID=$(stat -c %i "$A/child")
check "child cgroup exec attributed to the sandbox" "$SA $CHILD_ID" \
	"$(jq -r 'select(.event == "ProcessExec" and .filename == "/usr/bin/env") | "\(.sandbox) \(.cgroup_id)"' "$OUT")"
check "exec in place keeps the pid (sh -c 'exec true')" 1 \
	"$(jq -s '[.[] | select(.event == "ProcessExec")] as $e | [range(0; $e | length - 1) | select($e[.].filename == "/bin/sh" and $e[. + 1].filename == "/bin/true" and $e[.].pid == $e[. + 1].pid)] | length' "$OUT")"
check "parent comm of a direct child" "sbt-spawn" \
	"$(jq -r 'select(.event == "ProcessExec" and .filename == "/usr/bin/env") | .parent_comm' "$OUT")"
check "uid" 0 "$(jq -r 'select(.event == "ProcessExec") | .uid' "$OUT" | sort -u)"

check "ShellInvocationObserved count" 3 \
	"$(jq -r 'select(.event == "ShellInvocationObserved") | .count' "$OUT")"
check "ShellInvocationObserved complete" true \
	"$(jq -r 'select(.event == "ShellInvocationObserved") | .complete' "$OUT")"
check "three locations" 3 \
	"$(jq -r 'select(.event == "ShellInvocationObserved") | .locations | length' "$OUT")"
check "no EventsLost" 0 "$(nevents "$OUT" EventsLost)"
check "TraceStopped counts" "10 10 0" \
	"$(jq -r 'select(.event == "TraceStopped") | .sandboxes[0] | "\(.execs) \(.received) \(.lost)"' "$OUT")"
check "no sbtrace program left loaded" 0 "$(nr_our_progs)"
finish
