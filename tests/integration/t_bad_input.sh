#!/bin/sh
# Bad input: one-line error naming the problem, documented exit code, nothing
# left attached or loaded.
. "$(dirname "$0")/lib.sh"

A=$(mk_cgroup ok)
before=$(nr_our_progs)

# expect_fail DESC CODE PATTERN ARGS...
expect_fail() {
	desc=$1 code=$2 pat=$3; shift 3
	"$SBTRACE" "$@" > "$WORK/out" 2> "$WORK/err"
	rc=$?
	check "$desc: exit $code" "$code" "$rc"
	check_true "$desc: message names it ('$pat')" grep -q -- "$pat" "$WORK/err"
	check "$desc: one line" 1 "$(wc -l < "$WORK/err" | tr -d ' ')"
	check "$desc: nothing on stdout" 0 "$(wc -c < "$WORK/out" | tr -d ' ')"
}

expect_fail "nonexistent cgroup" 2 "no-such-cgroup" trace --cgroup /sbtrace-no-such-cgroup-$$
expect_fail "cgroup outside cgroupfs" 2 "not in the cgroup v2 hierarchy" trace --cgroup /tmp
expect_fail "nonexistent pid" 2 "no such process" trace --pid 999999999
expect_fail "pid not a number" 2 "not a process id" trace --pid 12ab
expect_fail "pid in the root cgroup" 2 "root cgroup" trace --pid 1
expect_fail "no sandbox" 2 "no sandbox given" trace --duration 1
expect_fail "bad output format" 2 "use json or text" trace --cgroup "$A" --output yaml
expect_fail "bad duration" 2 "duration" trace --cgroup "$A" --duration -1
expect_fail "bad argv-max" 2 "argv-max" trace --cgroup "$A" --argv-max 99999
expect_fail "ringbuf not a power of two" 2 "ringbuf-size" trace --cgroup "$A" --ringbuf-size 5000
expect_fail "bad exec hook" 2 "exec-hook" trace --cgroup "$A" --exec-hook kprobe
expect_fail "cgroup given twice" 2 "given twice" trace --cgroup "$A" --cgroup "$A"
expect_fail "unknown command" 2 "unknown command" frobnicate
expect_fail "unexpected argument" 2 "unexpected argument" trace --cgroup "$A" extra
expect_fail "unwritable --out" 2 "--out" trace --cgroup "$A" --out /nonexistent-dir/x.jsonl

# What the --pid message advises works: --cgroup / is the root cgroup (the whole host).
"$SBTRACE" trace --cgroup / --duration 0.3 > "$WORK/root.jsonl" 2> /dev/null
check "--cgroup /: exit 0" 0 $?
check "--cgroup /: the root cgroup" "/ 0" "$(head -n 1 "$WORK/root.jsonl" | jq -r '.sandboxes[0] | "\(.name) \(.level)"')"

# No privileges: loading BPF fails -> exit 3, one line that says what to do.
if command -v setpriv > /dev/null; then
	chmod o+rx "$WORK"
	setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --bounding-set=-all \
		"$SBTRACE" trace --cgroup "$A" --duration 1 > "$WORK/out" 2> "$WORK/err"
	check "unprivileged: exit 3" 3 $?
	check_true "unprivileged: message says what to do" grep -q 'are you root' "$WORK/err"
else
	fail "setpriv missing (util-linux)"
fi

# Help and version work and document the exit codes.
"$SBTRACE" --version | grep -q '^sbtrace ' ; check "--version" 0 $?
"$SBTRACE" trace --help | grep -q '3  kernel capability missing' ; check "trace --help has exit codes" 0 $?
"$SBTRACE" features --help > /dev/null; check "features --help" 0 $?
"$SBTRACE" help trace | grep -q -- '--cgroup PATH' ; check "help trace" 0 $?
"$SBTRACE" > /dev/null 2>&1; check "no command: usage, exit 2" 2 $?

check "nothing left loaded" "$before" "$(nr_our_progs)"
check "no link left" 0 "$(bpftool link show 2>/dev/null | grep -c 'exec_tp_btf\|exec_raw_tp\|exec_tracepoint')"
finish
