#!/bin/sh
# The exec the trace must not miss (issue 24's red-team classes, on the trace):
#  - a shell changed by a byte: copies of dash with bytes appended, with its
#    e_ident padding patched, run by path and through execveat(AT_EMPTY_PATH)
#    on an O_PATH descriptor: dash each time, identified_by content (its ELF
#    layout);
#  - an ELF the sandbox wrote that is no known shell, run with -c and a
#    string: unidentified on its ProcessExec and in ShellInvocationObserved
#    (a file older than the trace is not);
#  - failed execs: a shell where there is none (ENOENT by path; a PATH search
#    that found none: one event, every path tried), a file without execute
#    permission (EACCES), an execveat that failed; a PATH search that found
#    its program is no failure. The failed shells are counted, as failed;
#  - no failed-exec hook (disabled): said, in TraceStarted and on stderr.
. "$(dirname "$0")/lib.sh"

EXECVEAT="$TOP/build/tests/sbt-execveat"
[ -x "$EXECVEAT" ] || fail "sbt-execveat missing: make all builds it"
CG=$(mk_cgroup identity)
OUT="$WORK/trace.jsonl"
D="$WORK/bin"
mkdir -p "$D"
start_trace "$OUT" --cgroup "$(sb_name "$CG")" || exit 1
check "TraceStarted: the failed-exec hook is attached" "tracepoint" \
	"$(jq -r 'select(.event == "TraceStarted") | .hooks.exec_failed.mode' "$OUT")"
# every file below is written after the trace began
cat > "$WORK/steps.sh" << STEPS
cp /bin/dash '$D/appended' && truncate -s +5 '$D/appended'
'$D/appended' -c 'exit 0'
cp /bin/dash '$D/patched' && printf 'Z' | dd of='$D/patched' bs=1 seek=10 conv=notrunc 2> /dev/null
'$D/patched' -c 'exit 0'
'$EXECVEAT' '$D/appended' hidden -c 'exit 0'
cp /bin/true '$D/tool'
'$D/tool' -c 'id'
/bin/true -c old
env /nonexistent/sh -c 'echo hi'
env PATH=/nonexistent-a:/nonexistent-b sh -c 'echo hi'
env PATH=/nonexistent-a:/bin sh -c 'exit 0'
printf 'x' > '$D/noexec' && chmod 644 '$D/noexec'
env '$D/noexec'
'$EXECVEAT' '$D/noexec' hidden
exit 0
STEPS
sh -c "echo \$\$ > '$CG/cgroup.procs' && exec sh '$WORK/steps.sh'" > "$WORK/steps.out" 2>&1
stop_trace INT

shell_of() { jq -r "select(.event == \"ProcessExec\" and .argv[0] == \"$1\") | \"\(.shell.name) \(.shell.identified_by)\"" "$OUT" | head -n 1; }
check "bytes appended: dash by its content" "dash content" "$(shell_of "$D/appended")"
check "e_ident padding patched: dash by its content" "dash content" "$(shell_of "$D/patched")"
check "execveat(AT_EMPTY_PATH) of an O_PATH fd: dash by its content" "dash content" "$(shell_of hidden)"
check "a written ELF run with -c: unidentified, no shell" "true null" \
	"$(jq -r "select(.event == \"ProcessExec\" and .argv[0] == \"$D/tool\") | \"\(.exe.unidentified) \(.shell)\"" "$OUT")"
check "a file older than the trace: not unidentified" "false" \
	"$(jq -r 'select(.event == "ProcessExec" and .argv[2] == "old") | .exe.unidentified' "$OUT")"
check "ShellInvocationObserved: the written ELF, with its -c string" "1 $D/tool true" \
	"$(jq -r 'select(.event == "ShellInvocationObserved") | .unidentified | "\(.count) \(.executables[0].filename) \(.executables[0].command_string)"' "$OUT")"

failed() { jq -r "select(.event == \"ProcessExecFailed\") | $1" "$OUT"; }
check "a shell by path where there is none: ENOENT, a shell" "/nonexistent/sh ENOENT sh execve" \
	"$(failed 'select(.filename == "/nonexistent/sh") | "\(.filename) \(.error) \(.shell.name) \(.syscall)"')"
check "a PATH search that found no shell: one event, every path tried" \
	"/nonexistent-a/sh,/nonexistent-b/sh ENOENT sh" \
	"$(failed 'select(.filename == "/nonexistent-a/sh") | "\(.tried | join(",")) \(.error) \(.shell.name)"' | head -n 1)"
check "a PATH search that found its shell: no failure" 1 \
	"$(failed 'select(.filename == "/nonexistent-a/sh") | .pid' | wc -l)"
check "no execute permission: EACCES, not a shell" "EACCES null" \
	"$(failed "select(.filename == \"$D/noexec\") | \"\(.error) \(.shell)\"")"
check "a failed execveat (AT_EMPTY_PATH of an O_PATH fd): EACCES" "execveat EACCES  4096" \
	"$(failed 'select(.syscall == "execveat") | "\(.syscall) \(.error) \(.filename) \(.at_flags)"')"
# ran: sh (the steps), dash 3 times, sh -c 'exit 0'; tried and failed: sh twice
check "ShellInvocationObserved: 5 shells ran, 2 tried and failed" "7 2" \
	"$(jq -r 'select(.event == "ShellInvocationObserved") | "\(.count) \(.failed)"' "$OUT")"
check "... the failed ones a location of their own" "ENOENT 2" \
	"$(jq -r 'select(.event == "ShellInvocationObserved") | [.locations[] | select(.failed != null) | "\(.failed) \(.count)"] | join(",")' "$OUT")"
check "the trace is complete" "true" \
	"$(jq -r 'select(.event == "ShellInvocationObserved") | .exec_complete' "$OUT")"

# Without the failed-exec hook: said in TraceStarted and on stderr, never silent.
OUT2="$WORK/nohook.jsonl"
SBTRACE_DISABLE_HOOKS=exec_failed:tracepoint start_trace "$OUT2" --cgroup "$(sb_name "$CG")" || exit 1
stop_trace INT
check "no failed-exec hook: its mode is null, its try disabled" "null disabled" \
	"$(jq -r 'select(.event == "TraceStarted") | "\(.hooks.exec_failed.mode) \(.hooks.exec_failed.tried[0].stage)"' "$OUT2")"
check_true "... and stderr says so" grep -q "exec_failed hook: not available" "$OUT2.err"
finish
