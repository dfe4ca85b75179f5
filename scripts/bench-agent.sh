#!/bin/sh
# sbtrace agent benchmark (root): what one agent costs the host as sandboxes
# come, read from the agent's own /metrics (BPF_ENABLE_STATS: the exec
# program's run time and run count; no global sysctl flipped).
#
#   vs trace bench-agent-trace.sh first: the agent's exec program and the
#            trace's attached at once to the same execs in one sandbox and
#            outside it, rounds alternating their order, the ratio agent /
#            trace per pair of rounds (kernel.bpf_stats_enabled; skipped
#            with BENCH_AGENT_TRACE=0)
#   exec     BENCH_EXECS execs of /bin/true outside every sandbox (the
#            host-wide hot path), with 1 sandbox registered, then with 100:
#            ns per run of the exec program, and the ratio 100 / 1 (1: in the
#            programs' in-place table, as the trace's; 100: 8 there, the rest
#            in the hash map, which every exec then looks up: one ancestor-id
#            helper and one lookup per distinct level, whatever their number)
#   RSS      the agent's VmRSS and VmHWM with 100 sandboxes (an exec in each)
#   scrape   BENCH_SCRAPES GETs of /metrics with 100 sandboxes: median and max
#
# Other processes of the host exec too while this runs: their runs count in
# the same average (they are host execs as well). Environment: BENCH_EXECS
# (default 2000), BENCH_SCRAPES (default 50), BENCH_PORT (default 19464),
# BENCH_AGENT_TRACE (0: no side-by-side section; its own knobs are in
# bench-agent-trace.sh).
set -u

TOP=$(cd "$(dirname "$0")/.." && pwd)
SBTRACE=$TOP/build/bin/sbtrace
SPAWN=$TOP/build/tests/sbt-spawn
N=${BENCH_EXECS:-2000}
SCRAPES=${BENCH_SCRAPES:-50}
PORT=${BENCH_PORT:-19464}
CG2=$(awk '$0 ~ / - cgroup2 / { print $5; exit }' /proc/self/mountinfo)
PARENT="$CG2/sbtrace-bench-agent.$$"
WORK=$(mktemp -d /tmp/sbtrace-bench-agent.XXXXXX)
AGENT=""

log() { printf 'bench-agent: %s\n' "$*" >&2; }
cleanup() {
	[ -n "$AGENT" ] && kill -INT "$AGENT" 2> /dev/null && wait "$AGENT" 2> /dev/null
	for d in "$PARENT"/*/; do [ -d "$d" ] && rmdir "$d"; done
	[ -d "$PARENT" ] && rmdir "$PARENT"
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

[ "$(id -u)" -eq 0 ] || { log "needs root"; exit 1; }
[ -x "$SBTRACE" ] || { log "build first (make)"; exit 1; }
command -v curl > /dev/null || { log "curl missing (make deps)"; exit 1; }
if [ "${BENCH_AGENT_TRACE:-1}" != 0 ]; then
	"$TOP/scripts/bench-agent-trace.sh" || exit 1
	echo
fi
mkdir "$PARENT" || exit 1

"$SBTRACE" agent --no-shim --cgroup-parent "$PARENT" --out /dev/null \
	--metrics-addr "127.0.0.1:$PORT" --stats-interval 0 2> "$WORK/agent.err" &
AGENT=$!
i=0
until curl -sf "http://127.0.0.1:$PORT/metrics" > /dev/null 2>&1; do
	i=$((i + 1))
	[ $i -gt 100 ] && { log "agent did not start: $(cat "$WORK/agent.err")"; exit 1; }
	sleep 0.05
done

# exec_cost: "ns-per-run runs" of the exec program over N execs outside the sandboxes
prog_sample() {
	curl -sf "http://127.0.0.1:$PORT/metrics" |
		awk '$1 ~ /^sbtrace_bpf_program_run_seconds_total\{program="exec_/ { s = $2 }
		     $1 ~ /^sbtrace_bpf_program_runs_total\{program="exec_/ { r = $2 }
		     END { printf "%.9f %d\n", s, r }'
}
exec_cost() {
	before=$(prog_sample)
	j=0
	while [ $j -lt "$N" ]; do /bin/true; j=$((j + 1)); done
	after=$(prog_sample)
	echo "$before $after" | awk '{ runs = $4 - $2; printf "%.1f %d\n", ($3 - $1) * 1e9 / runs, runs }'
}
sandboxes() { grep '^sbtrace_sandboxes ' | awk '{ print $2 }'; }

mkdir "$PARENT/sb0"
sleep 0.3
set -- $(exec_cost)
NS1=$1
RUNS1=$2
k=1
while [ $k -lt 100 ]; do mkdir "$PARENT/sb$k"; k=$((k + 1)); done
# an exec in each: every sandbox has its series in /metrics
k=0
while [ $k -lt 100 ]; do "$SPAWN" "$PARENT/sb$k" -- /bin/true > /dev/null; k=$((k + 1)); done
sleep 0.5
NSB=$(curl -sf "http://127.0.0.1:$PORT/metrics" | sandboxes)
[ "$NSB" = 100 ] || { log "expected 100 sandboxes registered, the agent has $NSB"; exit 1; }
set -- $(exec_cost)
NS100=$1
RUNS100=$2
RSS=$(awk '/^VmRSS/ { print $2 }' "/proc/$AGENT/status")
HWM=$(awk '/^VmHWM/ { print $2 }' "/proc/$AGENT/status")
k=0
while [ $k -lt "$SCRAPES" ]; do
	curl -sf -o /dev/null -w '%{time_total}\n' "http://127.0.0.1:$PORT/metrics"
	k=$((k + 1))
done | sort -n > "$WORK/scrape"
MED=$(awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] * 1000 }' "$WORK/scrape")
MAX=$(tail -n 1 "$WORK/scrape" | awk '{ print $1 * 1000 }')
BYTES=$(curl -sf "http://127.0.0.1:$PORT/metrics" | wc -c)

printf 'agent exec program, host execs outside any sandbox (%d execs of /bin/true):\n' "$N"
printf '  1 sandbox:     %6.1f ns per run (%d runs)\n' "$NS1" "$RUNS1"
printf '  100 sandboxes: %6.1f ns per run (%d runs)\n' "$NS100" "$RUNS100"
printf '  ratio 100/1:   %6.2f\n' "$(echo "$NS100 $NS1" | awk '{ print $1 / $2 }')"
printf 'agent RSS with 100 sandboxes: VmRSS %.1f MiB, VmHWM %.1f MiB\n' \
	"$(echo "$RSS" | awk '{ print $1 / 1024 }')" "$(echo "$HWM" | awk '{ print $1 / 1024 }')"
printf '/metrics scrape with 100 sandboxes (%d GETs, %d bytes): median %.2f ms, max %.2f ms\n' \
	"$SCRAPES" "$BYTES" "$MED" "$MAX"
