#!/usr/bin/env bash
# Egress benchmark (run by `make bench`, as root): a TCP connect storm on
# loopback inside a sandbox cgroup, with enforcement on (--allow-cidr
# 127.0.0.1/32) vs no sbtrace, alternating rounds in one run; and the
# connect4 program's cost from the kernel's accounting (bpf_stats), with
# folding (identical verdicts within a second fold into one event) and
# without (SBTRACE_FOLD_WINDOW_MS=0: an event per connect).
# Targets: throughput ratio >= 0.95; connect4 <= 1000 ns per call including
# its event. Prints "met" / "TARGET MISSED"; exits 1 only on a harness failure.
set -u
cd "$(dirname "$0")/.."
SBTRACE=build/bin/sbtrace
STORM=build/bench/connect_storm
ROUNDS=${BENCH_ROUNDS:-3}
SECS=${BENCH_STORM_SECONDS:-2}
PORT=${BENCH_PORT:-18090}

die() { echo "bench-egress: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || die "needs root"
[ -x "$SBTRACE" ] && [ -x "$STORM" ] || die "build first (make)"
CG2=$(awk '$0 ~ / - cgroup2 / { print $5; exit }' /proc/self/mountinfo)
[ -n "$CG2" ] || die "no cgroup v2 mount"
SB="$CG2/sbtrace-bench-egress.$$"
WORK=$(mktemp -d /tmp/sbtrace-bench-egress.XXXXXX)
OLD_STATS=$(sysctl -n kernel.bpf_stats_enabled)
TP=""
cleanup() {
	[ -n "$TP" ] && kill -INT "$TP" 2> /dev/null && wait "$TP" 2> /dev/null
	sysctl -qw kernel.bpf_stats_enabled="$OLD_STATS"
	rmdir "$SB" 2> /dev/null
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
mkdir -p "$SB" || die "mkdir $SB"
sysctl -qw kernel.bpf_stats_enabled=1

storm() { "$STORM" "$SB" "$SECS" "$PORT" | awk '{ print $6 }'; }

start_sbtrace() {
	rm -f "$WORK/trace.jsonl"
	"$SBTRACE" trace --cgroup "$SB" --allow-cidr 127.0.0.1/32 --out "$WORK/trace.jsonl" \
		2> "$WORK/trace.err" &
	TP=$!
	for _ in $(seq 100); do
		head -n 1 "$WORK/trace.jsonl" 2> /dev/null | grep -q TraceStarted && break
		sleep 0.05
	done
	head -n 1 "$WORK/trace.jsonl" | grep -q TraceStarted || die "sbtrace did not start: $(cat "$WORK/trace.err")"
	PROG=$(bpftool prog show -j | jq --argjson p "$TP" '[.[] | select(.name == "egress_connect4" and (.pids // [] | map(.pid) | index($p)))] | .[0].id // empty')
	[ -n "$PROG" ] || PROG=$(bpftool prog show -j | jq '[.[] | select(.name == "egress_connect4")] | last | .id')
}
prog_stats() { bpftool prog show id "$PROG" -j | jq -r '"\(.run_time_ns // 0) \(.run_cnt // 0)"'; }
stop_sbtrace() {
	kill -INT "$TP"; wait "$TP"; rc=$?; TP=""
	[ "$rc" -eq 0 ] || die "sbtrace exited $rc: $(cat "$WORK/trace.err")"
}

# measure FOLD_MS STATS: one storm with sbtrace; sets RATE, NS (connect4 ns/call), EVENTS.
# Throughput is measured with bpf_stats off (its clock reads are not sbtrace's
# cost), the per-call figure with it on.
measure() {
	sysctl -qw kernel.bpf_stats_enabled="$2"
	SBTRACE_FOLD_WINDOW_MS=$1 start_sbtrace
	read -r rt0 c0 < <(prog_stats)
	RATE=$(storm)
	read -r rt1 c1 < <(prog_stats)
	stop_sbtrace
	NS=$(awk -v a="$rt0" -v b="$rt1" -v c="$c0" -v d="$c1" 'BEGIN { printf "%.0f", (b - a) / (d - c) }')
	CALLS=$((c1 - c0))
	EVENTS=$(jq -s '[.[] | select(.event == "EgressAllowed") | .count] | add // 0' "$WORK/trace.jsonl")
	RECORDS=$(jq -s '[.[] | select(.event == "EgressAllowed")] | length' "$WORK/trace.jsonl")
	DENIED=$(jq -s '[.[] | select(.event == "EgressDenied")] | length' "$WORK/trace.jsonl")
	[ "$DENIED" -eq 0 ] || die "loopback connects were denied: $(grep -m1 EgressDenied "$WORK/trace.jsonl")"
}

base=() with=() ns_fold=()
for r in $(seq "$ROUNDS"); do
	sysctl -qw kernel.bpf_stats_enabled=0
	b=$(storm) || die "storm failed"
	measure 1000 0
	base+=("$b") with+=("$RATE")
	echo "round $r: no sbtrace $b connects/s; enforcing $RATE connects/s ($RECORDS events standing for $EVENTS connects)"
done
for r in $(seq "$ROUNDS"); do
	measure 1000 1
	ns_fold+=("$NS")
	echo "cost round $r: connect4 $NS ns/call over $CALLS calls (bpf_stats on)"
done
measure 0 1
NS_EACH=$NS
echo "no folding: enforcing $RATE connects/s; connect4 $NS ns/call over $CALLS calls, $RECORDS events for $EVENTS connects"

mean() { printf '%s\n' "$@" | awk '{ s += $1 } END { printf "%.1f", s / NR }'; }
B=$(mean "${base[@]}") W=$(mean "${with[@]}") NSF=$(mean "${ns_fold[@]}")
RATIO=$(awk -v a="$W" -v b="$B" 'BEGIN { printf "%.3f", a / b }')
v() { awk -v v="$1" -v t="$2" -v dir="$3" 'BEGIN { ok = dir == "ge" ? v >= t : v <= t; print ok ? "met" : "TARGET MISSED" }'; }
echo
printf 'bench: connect storm          no sbtrace %s/s  enforcing %s/s  ratio %s  (target >= 0.95: %s)\n' "$B" "$W" "$RATIO" "$(v "$RATIO" 0.95 ge)"
printf 'bench: connect4 per call      %s ns folded, %s ns with an event each  (target <= 1000 ns: %s)\n' "$NSF" "$NS_EACH" "$(v "$NS_EACH" 1000 le)"
