#!/usr/bin/env bash
# The agent's exec program against the trace's, side by side (root; run by
# bench-agent.sh first, or alone). Each round starts both on the same host:
#
#   sbtrace agent --cgroup-parent P     (P/sb is its sandbox)
#   sbtrace trace --cgroup P/sb
#
# attached in turn, the agent first in odd rounds and the trace first in even
# ones (the program that runs first on the tracepoint meets the exec's cache
# lines cold), then with kernel.bpf_stats_enabled=1:
#   inside   BENCH_EXECS execs of /bin/true in P/sb, seen by both: each exec
#            program's ns per exec (other execs on the host during the phase
#            taken out at that program's outside cost of the same round)
#   outside  BENCH_EXECS execs in a cgroup outside P: ns per run of each
# then both stopped, and their ProcessExec events for the sandbox compared:
# the same execs with the same content (ts, time and run_id aside).
# Printed per round: the ns per exec of each program and the ratio agent /
# trace inside and outside. The program that runs second pays less (measured
# here: 1.5-2x less inside), so a round's ratio mostly says which came first;
# the figure is per pair of rounds (one each way), the geometric mean of the
# pair's two ratios (the order's factor cancels): its median over the pairs
# with their range (targets: inside <= 1.10, outside <= 1.00). Exits 1 on a
# harness failure only (a tracer that does not start, missing or different
# events).
#
# Environment: BENCH_EXECS (default 2000 per phase), BENCH_ROUNDS (default 6,
#              even, at least 4), BPFTOOL (default bpftool); for before/after
#              runs: AGENT_BIN and TRACE_BIN (the sbtrace of each side, default
#              this tree's), BENCH_AGENT_ENV and BENCH_TRACE_ENV (NAME=value
#              words for one side, e.g. SBTRACE_DISABLE_HOOKS=membership:
#              cgroup_ptr), BENCH_A=trace (the first side a second trace:
#              two builds of the trace against each other, or the harness's
#              own bias).
# shellcheck disable=SC2317 # functions called from traps
set -u

TOP=$(cd "$(dirname "$0")/.." && pwd)
AGENT_BIN=${AGENT_BIN:-$TOP/build/bin/sbtrace}
TRACE_BIN=${TRACE_BIN:-$TOP/build/bin/sbtrace}
SIDE_A=${BENCH_A:-agent}
SPAWN=$TOP/build/tests/sbt-spawn
BPFTOOL=${BPFTOOL:-bpftool}
N=${BENCH_EXECS:-2000}
ROUNDS=${BENCH_ROUNDS:-6}
WORKLOAD=/bin/true
T_IN=1.10
T_OUT=1.00

PIDS=" "
STATS_OLD=""
PARENT=""
OUT=""
WORK=""

log() { printf 'bench-agent-trace: %s\n' "$*" >&2; }
die() {
	log "HARNESS FAILURE: $*"
	exit 1
}

alive() {
	local st
	{ read -r st < "/proc/$1/stat"; } 2> /dev/null || return 1
	st=${st##*) }
	[ "${st%% *}" != Z ]
}

# stop_pid PID: SIGINT, up to 5 s, then SIGKILL; STOP_RC its exit code.
stop_pid() {
	local pid=$1 i=0
	kill -INT "$pid" 2> /dev/null
	while alive "$pid" && [ $i -lt 50 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	alive "$pid" && kill -KILL "$pid" 2> /dev/null
	wait "$pid" 2> /dev/null
	STOP_RC=$?
	PIDS=${PIDS/ $pid / }
}

cleanup() {
	local rc=$? pid d
	trap - EXIT INT TERM
	for pid in $PIDS; do stop_pid "$pid"; done
	[ -n "$STATS_OLD" ] && sysctl -q -w kernel.bpf_stats_enabled="$STATS_OLD" > /dev/null
	for d in "$PARENT/sb" "$PARENT" "$OUT"; do
		[ -n "$d" ] && [ -d "$d" ] && { rmdir "$d" 2> /dev/null || log "warning: cannot remove $d"; }
	done
	[ -n "$WORK" ] && rm -rf "$WORK"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

case "$N" in '' | *[!0-9]* | 0) die "BENCH_EXECS must be a positive integer" ;; esac
case "$ROUNDS" in '' | *[!0-9]* | [0-3]) die "BENCH_ROUNDS must be an even integer >= 4" ;; esac
[ $((ROUNDS % 2)) -eq 0 ] || die "BENCH_ROUNDS must be even (pairs of rounds, one each way)"
[ "$(id -u)" -eq 0 ] || die "needs root"
for t in "$BPFTOOL" jq sysctl awk; do command -v "$t" > /dev/null 2>&1 || die "$t not found"; done
case "$SIDE_A" in agent | trace) ;; *) die "BENCH_A: agent or trace" ;; esac
for b in "$AGENT_BIN" "$TRACE_BIN" "$SPAWN"; do [ -x "$b" ] || die "$b missing (make first)"; done

CG2=$(awk '{ for (i = 7; i <= NF; i++) if ($i == "-") { if ($(i + 1) == "cgroup2") { print $5; exit } break } }' \
	/proc/self/mountinfo)
if [ -z "$CG2" ] || [ ! -d "$CG2" ]; then die "no cgroup v2 mount"; fi
WORK=$(mktemp -d /tmp/sbtrace-bench-agent-trace.XXXXXX) || die "mktemp failed"
PARENT="$CG2/sbtrace-bench-at.$$"
OUT="$CG2/sbtrace-bench-at-out.$$"
mkdir "$PARENT" "$PARENT/sb" "$OUT" || die "cannot create cgroups under $CG2"
SB="$PARENT/sb"
STATS_OLD=$(sysctl -n kernel.bpf_stats_enabled) || die "cannot read kernel.bpf_stats_enabled"
sysctl -q -w kernel.bpf_stats_enabled=1 > /dev/null || die "cannot set kernel.bpf_stats_enabled"

# wait_line FILE PATTERN PID: until a line of FILE matches PATTERN (10 s).
wait_line() {
	local i=0
	until grep -q "$2" "$1" 2> /dev/null; do
		alive "$3" || return 1
		[ $i -lt 1000 ] || return 2
		sleep 0.01
		i=$((i + 1))
	done
}

# exec_prog_of PID: the id of the exec program PID holds.
exec_prog_of() {
	local id
	"$BPFTOOL" prog show -j > "$WORK/progs.json" || die "bpftool prog show failed"
	for id in $(grep -h '^prog_id:' /proc/"$1"/fdinfo/* 2> /dev/null | awk '{ print $2 }' | sort -un); do
		case "$(jq -r --argjson id "$id" '.[] | select(.id == $id) | .name' "$WORK/progs.json")" in
		exec_tp_btf | exec_raw_tp | exec_tracepoint) echo "$id" && return 0 ;;
		esac
	done
	return 1
}

start_agent() { # ROUND
	local ready='"SandboxAdded"'
	# shellcheck disable=SC2086 # BENCH_AGENT_ENV: words of NAME=value
	if [ "$SIDE_A" = agent ]; then
		env ${BENCH_AGENT_ENV:-} "$AGENT_BIN" agent --no-shim --cgroup-parent "$PARENT" \
			--socket "$WORK/agent.sock" --out "$WORK/agent.$1.jsonl" --stats-interval 0 \
			2> "$WORK/agent.$1.err" &
	else
		ready='"TraceStarted"'
		env ${BENCH_AGENT_ENV:-} "$AGENT_BIN" trace --cgroup "$SB" --out "$WORK/agent.$1.jsonl" \
			2> "$WORK/agent.$1.err" &
	fi
	A_PID=$!
	PIDS="$PIDS$A_PID "
	wait_line "$WORK/agent.$1.jsonl" "$ready" "$A_PID" ||
		die "the $SIDE_A (first side) did not start on $SB: $(cat "$WORK/agent.$1.err")"
	A_ID=$(exec_prog_of "$A_PID") || die "no exec program among the $SIDE_A's fds"
}
start_trace() { # ROUND
	# shellcheck disable=SC2086 # BENCH_TRACE_ENV: words of NAME=value
	env ${BENCH_TRACE_ENV:-} "$TRACE_BIN" trace --cgroup "$SB" --out "$WORK/trace.$1.jsonl" 2> "$WORK/trace.$1.err" &
	T_PID=$!
	PIDS="$PIDS$T_PID "
	wait_line "$WORK/trace.$1.jsonl" '"TraceStarted"' "$T_PID" ||
		die "the trace did not start: $(cat "$WORK/trace.$1.err")"
	T_ID=$(exec_prog_of "$T_PID") || die "no exec program among the trace's fds"
}

# foreign: how many exec programs of other processes are attached (they change the order's effect)
foreign() {
	"$BPFTOOL" prog show -j | jq -r --argjson a "$A_ID" --argjson t "$T_ID" \
		'[.[] | select((.name | test("^exec_(tp_btf|raw_tp|tracepoint)$")) and .id != $a and .id != $t)] | length'
}

# stats ID...: "run_time_ns run_cnt" of each, one line
stats() {
	local id
	"$BPFTOOL" prog show -j > "$WORK/snap.json" || die "bpftool prog show failed"
	for id in "$@"; do
		jq -r --argjson id "$id" '.[] | select(.id == $id) | "\(.run_time_ns // 0) \(.run_cnt // 0)"' \
			"$WORK/snap.json"
	done | tr '\n' ' '
}

# phase CGROUP: "a_rt a_cnt t_rt t_cnt" over N execs in CGROUP
phase() {
	local s0 s1
	s0=$(stats "$A_ID" "$T_ID")
	"$SPAWN" "$1" -n "$N" -- "$WORKLOAD" || die "sbt-spawn $1 failed"
	s1=$(stats "$A_ID" "$T_ID")
	echo "$s0 $s1" | awk '{ print $5 - $1, $6 - $2, $7 - $3, $8 - $4 }'
}

# The sandbox's ProcessExec events of one output, without what differs by run.
execs_of() {
	jq -c 'select(.event == "ProcessExec") | del(.ts, .time, .run_id, .sandbox)' "$1" | sort
}

log "kernel $(uname -r), $(nproc) CPUs; $ROUNDS rounds of $N execs in $SB, then $N in $OUT"
: > "$WORK/rounds"
for r in $(seq 1 "$ROUNDS"); do
	if [ $((r % 2)) -eq 1 ]; then
		first=agent
		start_agent "$r"
		start_trace "$r"
	else
		first=trace
		start_trace "$r"
		start_agent "$r"
	fi
	sleep 0.2 # the agent moves a sandbox it registered into its fast table on its next tick
	"$SPAWN" "$SB" -n 20 -- "$WORKLOAD" || die "sbt-spawn failed"
	"$SPAWN" "$OUT" -n 20 -- "$WORKLOAD" || die "sbt-spawn failed"
	others=$(foreign)
	read -r ia_rt ia_n it_rt it_n < <(phase "$SB")
	read -r oa_rt oa_n ot_rt ot_n < <(phase "$OUT")
	others=$((others + $(foreign)))
	[ "$others" -eq 0 ] || log "round $r: another process's exec program was attached too (the figures of this round are less comparable)"
	for v in "$ia_n" "$it_n" "$oa_n" "$ot_n"; do
		[ "$v" -ge "$N" ] ||
			die "round $r: fewer runs than execs ($ia_n $it_n $oa_n $ot_n; stats not counting?)"
	done
	sleep 0.3 # both drain their ring buffers
	stop_pid "$A_PID"
	[ "$STOP_RC" -eq 0 ] || die "round $r: the agent exited $STOP_RC: $(cat "$WORK/agent.$r.err")"
	stop_pid "$T_PID"
	[ "$STOP_RC" -eq 0 ] || die "round $r: the trace exited $STOP_RC: $(cat "$WORK/trace.$r.err")"
	execs_of "$WORK/agent.$r.jsonl" > "$WORK/agent.$r.execs"
	execs_of "$WORK/trace.$r.jsonl" > "$WORK/trace.$r.execs"
	ne=$(wc -l < "$WORK/agent.$r.execs")
	[ "$ne" -eq $((N + 20)) ] || die "round $r: the agent reported $ne ProcessExec, expected $((N + 20))"
	cmp -s "$WORK/agent.$r.execs" "$WORK/trace.$r.execs" ||
		die "round $r: the agent's and the trace's ProcessExec events differ: $(diff "$WORK/agent.$r.execs" "$WORK/trace.$r.execs" | head -n 4)"
	echo "$r $first $ia_rt $ia_n $it_rt $it_n $oa_rt $oa_n $ot_rt $ot_n $others" |
		awk -v n="$N" '{
			oa = $7 / $8; ot = $9 / $10
			ia = ($3 - ($4 - n) * oa) / n; it = ($5 - ($6 - n) * ot) / n
			printf "%d %s %.1f %.1f %.3f %.1f %.1f %.3f %d %s\n", $1, $2, ia, it, ia / it, oa, ot, oa / ot, $4 - n, $11 ? "*" : ""
		}' >> "$WORK/rounds"
done

echo
echo "$SIDE_A vs trace, exec program: $ROUNDS rounds of $N execs of $WORKLOAD; kernel $(uname -r), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-6s %-6s %10s %10s %7s   %10s %10s %7s %7s\n' round first "agent in" "trace in" ratio "agent out" "trace out" ratio others
awk '{ printf "%-6d %-6s %10.1f %10.1f %7.3f   %10.1f %10.1f %7.3f %7d %s\n", $1, $2, $3, $4, $5, $6, $7, $8, $9, $10 }' "$WORK/rounds"
grep -q '[*]$' "$WORK/rounds" && echo "(*: another process's exec program was attached during the round)"
[ "$SIDE_A" = agent ] || echo "(BENCH_A=trace: the agent's columns are the first trace's, $AGENT_BIN)"
echo "(ns per exec inside the sandbox, other execs on the host taken out at the round's outside cost;"
echo " ns per run outside; both programs see the same execs; ProcessExec events identical in every round)"
# The pairs: "agent_in trace_in ratio_in agent_out trace_out ratio_out", each
# program's cost the pair's mean, each ratio the geometric mean of the pair's.
awk '{ a[NR] = $0 } END { for (i = 1; i < NR; i += 2) { split(a[i], x); split(a[i + 1], y)
	printf "%.1f %.1f %.4f %.1f %.1f %.4f\n", (x[3] + y[3]) / 2, (x[4] + y[4]) / 2, sqrt(x[5] * y[5]),
		(x[6] + y[6]) / 2, (x[7] + y[7]) / 2, sqrt(x[8] * y[8]) } }' "$WORK/rounds" > "$WORK/pairs"
echo "pairs (rounds 1+2, 3+4, ...): mean ns of each program, geometric mean of the two ratios:"
awk '{ printf "  pair %d: inside %8.1f / %8.1f = %.3f   outside %7.1f / %7.1f = %.3f\n", NR, $1, $2, $3, $4, $5, $6 }' "$WORK/pairs"
# col N: "median min max" of column N of the pairs
col() {
	awk -v c="$1" '{ print $c }' "$WORK/pairs" | sort -g |
		awk '{ a[NR] = $1 } END { m = NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2
			printf "%.3f %.3f %.3f\n", m, a[1], a[NR] }'
}
verdict() { awk -v v="$1" -v t="$2" 'BEGIN { print (v <= t ? "met" : "TARGET MISSED") }'; }
read -r ia ia_lo ia_hi < <(col 1)
read -r it it_lo it_hi < <(col 2)
read -r ri ri_lo ri_hi < <(col 3)
read -r oa oa_lo oa_hi < <(col 4)
read -r ot ot_lo ot_hi < <(col 5)
read -r ro ro_lo ro_hi < <(col 6)
printf 'bench: agent/trace inside   agent %.0f ns (%.0f-%.0f)  trace %.0f ns (%.0f-%.0f)  ratio %.3f (%.3f-%.3f), median of %d pairs  (target <= %s: %s)\n' \
	"$ia" "$ia_lo" "$ia_hi" "$it" "$it_lo" "$it_hi" "$ri" "$ri_lo" "$ri_hi" $((ROUNDS / 2)) "$T_IN" "$(verdict "$ri" "$T_IN")"
printf 'bench: agent/trace outside  agent %.0f ns (%.0f-%.0f)  trace %.0f ns (%.0f-%.0f)  ratio %.3f (%.3f-%.3f), median of %d pairs  (target <= %s: %s)\n' \
	"$oa" "$oa_lo" "$oa_hi" "$ot" "$ot_lo" "$ot_hi" "$ro" "$ro_lo" "$ro_hi" $((ROUNDS / 2)) "$T_OUT" "$(verdict "$ro" "$T_OUT")"
exit 0
