#!/bin/sh
# The ns sandbox's resource limits (issue 25): a fork loop stopped at
# --pids-max and said so, /tmp bounded by --tmpfs-size (ENOSPC), a process
# past --memory-max OOM-killed and said so, the limits held by the host's
# cgroup controllers (v1 on a hybrid host) and recorded in the state file,
# nothing of them left after; the probe's reason resource_limit.
. "$(dirname "$0")/lib.sh"

SHIM="$TOP/build/bin/sbtrace-shim"
STATE="$WORK/state"
P="tl$$"
trap 'remove_sandboxes "$SHIM" "$STATE" "$P"; cleanup' EXIT
run() { _n=$1 && shift && "$SHIM" run --name "$P$_n" --state-dir "$STATE" --no-wait "$@"; }

run f --pids-max 32 -- /bin/sh -c 'i=0; while [ $i -lt 100 ]; do sleep 3 & i=$((i + 1)); done; echo forked' \
	> "$WORK/f.out" 2> "$WORK/f.err"
check_true "a fork loop: stopped at 32 processes, the shim says so" \
	grep -q "forks refused at its pids limit (32 processes; --pids-max raises it)" "$WORK/f.err"
check_true "... the workload saw its forks fail" grep -q -i "fork" "$WORK/f.err"

run t --tmpfs-size 8m -- /bin/sh -c 'dd if=/dev/zero of=/tmp/fill bs=1M count=32 2>&1; ls -l /tmp/fill' \
	> "$WORK/t.out" 2> "$WORK/t.err"
check_true "/tmp bounded: ENOSPC at 8 MiB" grep -q "No space left on device" "$WORK/t.out"
SZ=$(awk '$NF == "/tmp/fill" { print $5 }' "$WORK/t.out")
check_true "... the file holds at most 8 MiB (${SZ:-none})" sh -c "[ '${SZ:-0}' -gt 0 ] && [ '${SZ:-0}' -le 8388608 ]"

run m --memory-max 32m -- /usr/bin/python3 -c 'b = bytearray(256 << 20); print(len(b))' \
	> "$WORK/m.out" 2> "$WORK/m.err"
check "past --memory-max: the process is killed (SIGKILL)" 137 "$?"
check_true "... the shim says the memory limit was reached" \
	grep -q "its memory limit (32 MiB) was reached" "$WORK/m.err"

# the state file while it runs: the limits and how they are held
"$SHIM" run --name "${P}s" --state-dir "$STATE" --no-wait --pids-max 100 -- /bin/sleep 2 &
SPID=$!
wait_for 5 test -s "$STATE/${P}s.json"
check "the state file: the limits" "100 8589934592 4294967296" \
	"$(jq -r '.limits | "\(.pids) \(.memory_bytes) \(.tmpfs_bytes)"' "$STATE/${P}s.json")"
VIA=$(jq -r .limits.via "$STATE/${P}s.json")
check_true "... held by a cgroup controller of this host ($VIA)" sh -c "[ '$VIA' = cgroup2 ] || [ '$VIA' = cgroup1 ]"
wait "$SPID"
# a shim killed by SIGKILL leaves its cgroups; gc removes the v1 ones too
"$SHIM" run --name "${P}k" --state-dir "$STATE" --no-wait -- /bin/sleep 30 &
KPID=$!
wait_for 5 test -s "$STATE/${P}k.json"
kill -KILL "$KPID"
wait "$KPID" 2> /dev/null
"$SHIM" gc --state-dir "$STATE" > /dev/null 2>&1
check "gc after SIGKILL: exit 0" 0 "$?"
left=""
for c in pids memory; do
	[ -d "/sys/fs/cgroup/$c/sbtrace" ] && left="$left$(ls -d /sys/fs/cgroup/$c/sbtrace/"$P"* 2> /dev/null)"
done
check "no v1 cgroup left behind" "" "$left"
"$SHIM" run --name "${P}x" --state-dir "$STATE" --no-wait --pids-max 0 -- /bin/true 2> "$WORK/x.err"
check "--pids-max 0: a usage error" 2 "$?"

# the probe: a build that ran into the limit says so
rm -rf "$WORK/forks" && cp -a "$TOP/tests/fixtures/make-forks" "$WORK/forks"
"$SBTRACE" probe --no-cache --pids-max 32 "$WORK/forks" > "$WORK/probe.json" 2> "$WORK/probe.err"
log "probe: $(jq -c '{verdict, confidence, reason, limits}' "$WORK/probe.json")"
validate_report "$WORK/probe.json"
check "the probe: reason resource_limit, not a bare build failure" "inconclusive resource_limit" \
	"$(jq -r '"\(.verdict) \(.reason)"' "$WORK/probe.json")"
check_true "... limits.hit.pids counts the refused forks" sh -c "[ \"\$(jq -r .limits.hit.pids '$WORK/probe.json')\" -gt 0 ]"
finish
