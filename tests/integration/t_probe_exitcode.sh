#!/bin/sh
# The probe's exit codes reach CI with the documented command (issue 31):
# scripts/probe.sh REPO [ARGS...] does make probe's set-up and execs the probe,
# so its status is the probe's own (4 unsafe, 5 inconclusive with --fail-on, 0,
# 2); make probe ends with make's 2 for any of them (GNU make cannot pass a
# recipe's status on) and says the probe's own code on stderr.
. "$(dirname "$0")/lib.sh"

FIX="$TOP/tests/fixtures"
PROBE="$TOP/scripts/probe.sh"

# run NAME ARGS...: scripts/probe.sh ARGS; report in $WORK/NAME.json, stderr in .err, status in RC
run() {
	_n=$1
	shift
	"$PROBE" "$@" > "$WORK/$_n.json" 2> "$WORK/$_n.err"
	RC=$?
	log "$_n: rc $RC, $(jq -c '{verdict, confidence, reason}' "$WORK/$_n.json" 2> /dev/null)"
}
verdict() { jq -r .verdict "$WORK/$1.json"; }

# ---- scripts/probe.sh: the probe's own status --------------------------------
# make-shell's recipe runs sh, and its boot a shell: unsafe whatever the build counts for
run unsafe "$FIX/make-shell" --no-cache --fail-on unsafe --boot-cmd "sh -c true"
check "unsafe, --fail-on unsafe: scripts/probe.sh exits 4" 4 "$RC"
check "unsafe: the report is on stdout, and says so" unsafe "$(verdict unsafe)"
validate_report "$WORK/unsafe.json"
check_true "unsafe: the set-up is on stderr" grep -q "^deps: " "$WORK/unsafe.err"

run safe "$FIX/make-noshell" --no-cache --fail-on unsafe --boot-cmd true
check "safe, --fail-on unsafe: exits 0" "0 safe" "$RC $(verdict safe)"
validate_report "$WORK/safe.json"

run incon "$FIX/failing" --no-cache --fail-on inconclusive
check "inconclusive, --fail-on inconclusive: exits 5" "5 inconclusive" "$RC $(verdict incon)"
run incon_unsafe "$FIX/failing" --no-cache --fail-on unsafe
check "inconclusive, --fail-on unsafe only: exits 0" "0 inconclusive" "$RC $(verdict incon_unsafe)"

run unsafe_nogate "$FIX/make-shell" --no-cache --boot-cmd "sh -c true"
check "unsafe without --fail-on: a report is 0" "0 unsafe" "$RC $(verdict unsafe_nogate)"

mkdir "$WORK/nobuild"
run nobuild "$WORK/nobuild" --no-cache
check "no build found: exits 2" 2 "$RC"
check "no build found: stdout is empty" 0 "$(wc -c < "$WORK/nobuild.json")"
"$PROBE" > /dev/null 2> "$WORK/usage.err"
check "no REPO: usage, exit 2" "2 1" "$? $(grep -c '^usage: scripts/probe.sh REPO' "$WORK/usage.err")"

# ---- make probe: make's 2, the probe's code said --------------------------------
make -s -C "$TOP" probe REPO="$FIX/make-shell" \
	PROBE_ARGS="--no-cache --fail-on unsafe --boot-cmd 'sh -c true'" \
	> "$WORK/make_unsafe.json" 2> "$WORK/make_unsafe.err"
check "make probe, unsafe: make exits 2" 2 "$?"
check_true "make probe, unsafe: stderr states the probe's own code" \
	grep -q "^make probe: sbtrace probe exited 4 (unsafe); make itself exits 2 for any failure: for the probe's own exit code run scripts/probe.sh REPO" \
	"$WORK/make_unsafe.err"
check "make probe, unsafe: stdout is the report alone" unsafe "$(verdict make_unsafe)"

make -s -C "$TOP" probe REPO="$FIX/failing" PROBE_ARGS="--no-cache --fail-on inconclusive" \
	> "$WORK/make_incon.json" 2> "$WORK/make_incon.err"
check "make probe, inconclusive: make exits 2" 2 "$?"
check "make probe, inconclusive: says 5" 1 \
	"$(grep -c '^make probe: sbtrace probe exited 5 (inconclusive)' "$WORK/make_incon.err")"

make -s -C "$TOP" probe REPO="$FIX/make-noshell" PROBE_ARGS="--no-cache --fail-on unsafe --boot-cmd true" \
	> "$WORK/make_safe.json" 2> "$WORK/make_safe.err"
check "make probe, safe: make exits 0" "0 safe" "$? $(verdict make_safe)"
check "make probe, safe: no exit line" 0 "$(grep -c '^make probe: ' "$WORK/make_safe.err")"

# make -n runs nothing of the probe (no recipe line of the rule is a recursive make's)
make -n -C "$TOP" probe REPO="$FIX/make-shell" > "$WORK/dry.out" 2>&1
check "make -n probe: no report, no set-up run" 0 "$(grep -c -e '"verdict"' -e '^deps: ' "$WORK/dry.out")"

# the sandboxes these probes said they started (other tests' may run meanwhile)
left=0
for sb in $(sed -n 's/.*sandbox \(probe-[0-9a-f]*-[0-9]*\) starting.*/\1/p' "$WORK"/*.err); do
	[ ! -d "$CG2/sbtrace/$sb" ] || left=$((left + 1))
done
check "no sandbox cgroup left" 0 "$left"
check_true "the sandboxes were named on stderr" grep -q "sandbox probe-.* starting" "$WORK/unsafe.err"
finish
