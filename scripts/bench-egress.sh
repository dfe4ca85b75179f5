#!/usr/bin/env bash
# Egress benchmark (run by `make bench`, as root): a TCP connect storm on
# loopback inside a sandbox cgroup, with enforcement on (--allow-cidr
# 127.0.0.1/32) vs no sbtrace, alternating rounds in one run; and the
# connect4 program's cost from the kernel's accounting (bpf_stats), with
# folding (identical verdicts within a second fold into one event) and
# without (SBTRACE_FOLD_WINDOW_MS=0: an event per connect).
# Each figure is the median of BENCH_ROUNDS (default 3, at least 3) rounds,
# printed with its range. Targets: throughput ratio >= 0.95; connect4 <= 1000
# ns per call including its event. Prints "met" / "TARGET MISSED"; exits 1
# only on a harness failure.
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
[ "$ROUNDS" -ge 3 ] 2> /dev/null || die "BENCH_ROUNDS must be at least 3"
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

# med_range VALUE...: "median (min-max)"
med_range() {
	printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END {
		m = NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2
		printf "%s (%s-%s)", m, a[1], a[NR] }'
}
median() { med_range "$@" | cut -d' ' -f1; }

# Throughput: a storm without sbtrace, then one with it, alternating.
base=() with=() ratios=()
for r in $(seq "$ROUNDS"); do
	sysctl -qw kernel.bpf_stats_enabled=0
	b=$(storm) || die "storm failed"
	measure 1000 0
	base+=("$b") with+=("$RATE")
	ratios+=("$(awk -v a="$RATE" -v b="$b" 'BEGIN { printf "%.3f", a / b }')")
	echo "round $r: no sbtrace $b connects/s; enforcing $RATE connects/s ($RECORDS events standing for $EVENTS connects): ratio ${ratios[-1]}"
done
# connect4's cost: folded, then an event for every connect, alternating.
ns_fold=() ns_each=()
for r in $(seq "$ROUNDS"); do
	measure 1000 1
	ns_fold+=("$NS")
	f="$NS ns/call over $CALLS calls"
	measure 0 1
	ns_each+=("$NS")
	[ "$RECORDS" -eq "$EVENTS" ] || die "SBTRACE_FOLD_WINDOW_MS=0 still folded: $RECORDS events for $EVENTS connects"
	echo "cost round $r: connect4 folded $f; with an event each $NS ns/call over $CALLS calls ($RECORDS events) (bpf_stats on)"
done

v() { awk -v v="$1" -v t="$2" -v dir="$3" 'BEGIN { ok = dir == "ge" ? v >= t : v <= t; print ok ? "met" : "TARGET MISSED" }'; }
RATIO=$(median "${ratios[@]}") NS_EACH=$(median "${ns_each[@]}")
echo
printf 'bench: connect storm          no sbtrace %s/s  enforcing %s/s  ratio %s, median of %s rounds  (target >= 0.95: %s)\n' \
	"$(median "${base[@]}")" "$(median "${with[@]}")" "$(med_range "${ratios[@]}")" "$ROUNDS" "$(v "$RATIO" 0.95 ge)"
printf 'bench: connect4 per call      %s ns folded, %s ns with an event each, medians of %s rounds  (target <= 1000 ns: %s)\n' \
	"$(med_range "${ns_fold[@]}")" "$(med_range "${ns_each[@]}")" "$ROUNDS" "$(v "$NS_EACH" 1000 le)"
