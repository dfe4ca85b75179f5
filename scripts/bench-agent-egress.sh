#!/usr/bin/env bash
# The agent's egress enforcement vs the trace's (root; not part of `make bench`):
# the same TCP connect storm on loopback (--allow cidr 127.0.0.1/32), in a
# cgroup traced by `sbtrace trace --cgroup` (hooks on that cgroup, the slot
# from the in-place fast table) and in a --cgroup-parent child of `sbtrace
# agent --policy-dir` (hooks linked once to the parent, the slot from the
# membership hash map, the mode from the per-slot map), alternating rounds.
# Prints connect4's ns per call (bpf_stats, folded events) and connects/s,
# medians of BENCH_ROUNDS (default 3) rounds with their ranges.
set -u
cd "$(dirname "$0")/.." || exit 1
SBTRACE=build/bin/sbtrace
STORM=build/bench/connect_storm
ROUNDS=${BENCH_ROUNDS:-3}
SECS=${BENCH_STORM_SECONDS:-2}
PORT=${BENCH_PORT:-18091}

die() { echo "bench-agent-egress: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || die "needs root"
[ -x "$SBTRACE" ] && [ -x "$STORM" ] || die "build first (make)"
CG2=$(awk '$0 ~ / - cgroup2 / { print $5; exit }' /proc/self/mountinfo)
[ -n "$CG2" ] || die "no cgroup v2 mount"
SB="$CG2/sbtrace-bench-ae.$$"
PARENT="$CG2/sbtrace-bench-aep.$$"
WORK=$(mktemp -d /tmp/sbtrace-bench-ae.XXXXXX)
OLD_STATS=$(sysctl -n kernel.bpf_stats_enabled)
TP=""
cleanup() {
	[ -n "$TP" ] && kill -INT "$TP" 2> /dev/null && wait "$TP" 2> /dev/null
	sysctl -qw kernel.bpf_stats_enabled="$OLD_STATS"
	rmdir "$SB" "$PARENT/c" "$PARENT" 2> /dev/null
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
mkdir -p "$SB" "$PARENT" "$WORK/pol" || die "mkdir"
chmod 0755 "$WORK/pol"
echo "cidr 127.0.0.1/32" > "$WORK/pol/c.policy"

started() { head -n 1 "$WORK/out.jsonl" 2> /dev/null | grep -q TraceStarted; }
wait_started() {
	for _ in $(seq 100); do started && return; sleep 0.05; done
	die "sbtrace did not start: $(cat "$WORK/err")"
}
# start trace|agent: sbtrace in the background; PROG: its egress_connect4; CG: the storm's cgroup.
start() {
	rm -f "$WORK/out.jsonl"
	if [ "$1" = trace ]; then
		"$SBTRACE" trace --cgroup "$SB" --allow-cidr 127.0.0.1/32 --out "$WORK/out.jsonl" 2> "$WORK/err" &
		TP=$!
		CG=$SB
		wait_started
	else
		"$SBTRACE" agent --cgroup-parent "$PARENT" --no-shim --no-socket --policy-dir "$WORK/pol" \
			--out "$WORK/out.jsonl" 2> "$WORK/err" &
		TP=$!
		wait_started
		mkdir "$PARENT/c"
		CG=$PARENT/c
		for _ in $(seq 100); do grep -q '"SandboxAdded"' "$WORK/out.jsonl" && break; sleep 0.05; done
		grep -q '"mode":"enforce"' "$WORK/out.jsonl" || die "the agent did not apply the policy: $(cat "$WORK/err")"
	fi
	PROG=$(bpftool prog show -j | jq --argjson p "$TP" '[.[] | select(.name == "egress_connect4" and (.pids // [] | map(.pid) | index($p)))] | .[0].id // empty')
	[ -n "$PROG" ] || PROG=$(bpftool prog show -j | jq '[.[] | select(.name == "egress_connect4")] | last | .id // empty')
	[ -n "$PROG" ] || die "no egress_connect4 loaded"
}
stop() {
	kill -INT "$TP"; wait "$TP"; TP=""
	[ -d "$PARENT/c" ] && rmdir "$PARENT/c"
	DENIED=$(jq -s '[.[] | select(.event == "EgressDenied")] | length' "$WORK/out.jsonl")
	[ "$DENIED" -eq 0 ] || die "loopback connects were denied: $(grep -m1 EgressDenied "$WORK/out.jsonl")"
}
prog_stats() { bpftool prog show id "$PROG" -j | jq -r '"\(.run_time_ns // 0) \(.run_cnt // 0)"'; }
# measure trace|agent STATS: RATE (connects/s), NS (connect4 ns/call when STATS is 1)
measure() {
	sysctl -qw kernel.bpf_stats_enabled="$2"
	start "$1"
	read -r rt0 c0 < <(prog_stats)
	RATE=$("$STORM" "$CG" "$SECS" "$PORT" | awk '{ print $6 }')
	read -r rt1 c1 < <(prog_stats)
	stop
	NS=$(awk -v a="$rt0" -v b="$rt1" -v c="$c0" -v d="$c1" 'BEGIN { if (d > c) printf "%.0f", (b - a) / (d - c); else print 0 }')
}
med_range() {
	printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END {
		m = NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2
		printf "%s (%s-%s)", m, a[1], a[NR] }'
}
t_ns=() a_ns=() t_rate=() a_rate=()
for r in $(seq "$ROUNDS"); do
	measure trace 1; t_ns+=("$NS")
	measure agent 1; a_ns+=("$NS")
	measure trace 0; t_rate+=("$RATE")
	measure agent 0; a_rate+=("$RATE")
	echo "round $r: connect4 trace ${t_ns[-1]} ns, agent ${a_ns[-1]} ns; storm trace ${t_rate[-1]}/s, agent ${a_rate[-1]}/s"
done
printf 'bench: connect4 per call   trace %s ns  agent %s ns  (medians of %s rounds, bpf_stats on)\n' \
	"$(med_range "${t_ns[@]}")" "$(med_range "${a_ns[@]}")" "$ROUNDS"
printf 'bench: connect storm       trace %s/s  agent %s/s\n' "$(med_range "${t_rate[@]}")" "$(med_range "${a_rate[@]}")"
