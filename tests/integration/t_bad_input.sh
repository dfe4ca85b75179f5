#!/bin/sh
# Bad input: one-line error naming the problem, documented exit code, nothing
# left attached or loaded.
. "$(dirname "$0")/lib.sh"

A=$(mk_cgroup ok)
before=$(nr_our_progs)

# expect_fail DESC CODE PATTERN ARGS... (input accepted by mistake must not hang the test)
expect_fail() {
	desc=$1 code=$2 pat=$3; shift 3
	timeout 10 "$SBTRACE" "$@" > "$WORK/out" 2> "$WORK/err"
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

# Issue 12, item 10: bounded, typed input, refused before anything is loaded.
# 1. --allowlist /dev/zero: refused at once (it was read without bound: 4.5 GB in 6 s).
/usr/bin/time -f '%M %e' -o "$WORK/time" timeout 5 \
	"$SBTRACE" trace --cgroup "$A" --allowlist /dev/zero > "$WORK/out" 2> "$WORK/err"
check "--allowlist /dev/zero: exit 2" 2 $?
check_true "--allowlist /dev/zero: says what it is" \
	grep -q "'/dev/zero': a character device, not a regular file" "$WORK/err"
check "--allowlist /dev/zero: one line" 1 "$(wc -l < "$WORK/err" | tr -d ' ')"
rss_kib=$(tail -n 1 "$WORK/time" | cut -d' ' -f1)
secs=$(tail -n 1 "$WORK/time" | cut -d' ' -f2)
log "--allowlist /dev/zero: peak RSS $rss_kib KiB, $secs s"
check_true "--allowlist /dev/zero: peak RSS <= 32 MiB ($rss_kib KiB)" [ "$rss_kib" -le 32768 ]
check_true "--allowlist /dev/zero: within 1 s ($secs s)" awk -v t="$secs" 'BEGIN { exit !(t < 1) }'
mkfifo "$WORK/fifo"
timeout 5 "$SBTRACE" trace --cgroup "$A" --allowlist "$WORK/fifo" > "$WORK/out" 2> "$WORK/err"
check "--allowlist FIFO: exit 2, no hang" 2 $?
check_true "--allowlist FIFO: says so" grep -q 'a FIFO, not a regular file' "$WORK/err"
head -c 1048577 /dev/zero | tr '\0' '#' > "$WORK/big.txt"
expect_fail "--allowlist over 1 MiB" 2 "larger than 1 MiB" trace --cgroup "$A" --allowlist "$WORK/big.txt"
expect_fail "--allowlist a directory" 2 "a directory, not a regular file" \
	trace --cgroup "$A" --allowlist "$WORK"
expect_fail "probe --allowlist /dev/zero" 2 "sbtrace probe: --allowlist '/dev/zero': a character" \
	probe --allowlist /dev/zero "$WORK"

# 2. A file that is no allowlist (a password file given by mistake): the
# error names the place, never the content.
printf '# users\nroot:$6$Zq9sEcReTsAlT$S3cr3tH4shS3cr3tH4sh:19000:0:99999:7:::\n' > "$WORK/shadow"
expect_fail "secret-looking allowlist" 2 "shadow:2:1: not a rule" trace --cgroup "$A" \
	--allowlist "$WORK/shadow"
check "secret-looking allowlist: nothing of the line shown" 0 \
	"$(grep -c -F -e 'root' -e '$6$' -e 'Zq9s' -e 'S3cr3t' "$WORK/err")"
printf 'cidr 192.0.2.0/24 port %0100d\n' 7 > "$WORK/longtok"
expect_fail "long bad token" 2 "longtok:1:24: bad port '0000" trace --cgroup "$A" \
	--allowlist "$WORK/longtok"
check_true "long bad token: cut at 48 bytes" grep -q "'0\{48\}\.\.\.'" "$WORK/err"

# 3. A file of the cgroup hierarchy is no cgroup (it has an id, so it was taken).
expect_fail "--cgroup cgroup.procs" 2 "is a file, not a cgroup" trace --cgroup "$A/cgroup.procs"

# 4. --tap with no such device: refused before any BPF is loaded (it was
# refused only at attach time, after loading the programs).
expect_fail "--tap nonexistent device" 2 "--tap nonexist0: no such device" trace --tap nonexist0
expect_fail "--tap nonexistent netns" 2 "no network namespace 'sbt-nonexistent-$$'" \
	trace --tap "tap0,netns=sbt-nonexistent-$$"
strace -f -e trace=bpf -o "$WORK/strace" "$SBTRACE" trace --tap nonexist0 > /dev/null 2>&1
check "--tap nonexistent device: no bpf() call at all" 0 "$(grep -c 'bpf(' "$WORK/strace")"
check "--tap nonexistent device: nothing loaded" "$before" "$(nr_our_progs)"

# 5. sbtrace-shim gc with a --state-dir that does not exist: an input error,
# not "nothing to do" (the default /run/sbtrace missing still is: no shim ran).
"$TOP/build/bin/sbtrace-shim" gc --state-dir "/nonexistent-$$" > "$WORK/out" 2> "$WORK/err"
check "gc --state-dir missing: exit 2" 2 $?
check_true "gc --state-dir missing: says so" \
	grep -q -- "--state-dir /nonexistent-$$: No such file or directory" "$WORK/err"
check "gc --state-dir missing: one line" 1 "$(wc -l < "$WORK/err" | tr -d ' ')"
"$TOP/build/bin/sbtrace-shim" gc --state-dir "$WORK/shadow" > "$WORK/out" 2> "$WORK/err"
check "gc --state-dir a file: exit 2" 2 $?
mkdir -m 700 "$WORK/state"
"$TOP/build/bin/sbtrace-shim" gc --state-dir "$WORK/state" > "$WORK/out" 2> "$WORK/err"
check "gc --state-dir empty: exit 0" 0 $?

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
