#!/bin/sh
# Tap benchmark (run by `make bench`, as root): the tap program's cost per
# frame from BPF_PROG_TEST_RUN (the kernel's clock), next to an empty tc
# program measured the same way in the same run. (The qemu backend's boot
# to its first packet on the tap is scripts/bench-qemu.sh.)
# Targets (issue 5): allowed v4 TCP <= 60 ns, allowed v6 <= 80 ns, denied SYN
# with its RST built <= 200 ns. bpf_stats is switched off while measuring
# (it adds two clock reads to every run). Prints "met" / "TARGET MISSED";
# exits 1 only on a harness failure.
set -u
cd "$(dirname "$0")/.."
BIN=build/bench/tap_pps
RUNS=${BENCH_TAP_RUNS:-200000}

die() { echo "bench-tap: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || die "needs root"
[ -x "$BIN" ] || die "build first (make)"
OLD_STATS=$(sysctl -n kernel.bpf_stats_enabled)
trap 'sysctl -qw kernel.bpf_stats_enabled="$OLD_STATS"' EXIT INT TERM
sysctl -qw kernel.bpf_stats_enabled=0

OUT=$("$BIN" "$RUNS") || die "tap_pps failed"
REP=$(echo "$OUT" | awk '$2 == "empty_tc" { print $4 }')
SGL=$(echo "$OUT" | awk '$2 == "empty_tc_single" { print $4 }')
echo "== tap program: ns per frame (BPF_PROG_TEST_RUN, median of 5 rounds)"
echo "   empty tc program: $REP ns with repeat, $SGL ns run once per call"
printf '%-26s %6s %9s %9s %7s  %s\n' case raw "overhead" "program" target verdict
echo "$OUT" | while read -r _ name _ ns _ floor; do
	case $name in empty_tc*) continue ;; esac
	# Runs once per call carry the clock reads and cold caches of a single
	# run: the empty program measured alike shows that overhead.
	over=0
	[ "$floor" = "$SGL" ] && [ "$SGL" != "$REP" ] && over=$((SGL - REP))
	prog=$((ns - over))
	case $name in
	allowed_v4_tcp) target=60 ;;
	allowed_v6_tcp) target=80 ;;
	denied_v4_syn_rst | denied_v6_syn_rst) target=200 ;;
	*) target="" ;;
	esac
	verdict=""
	if [ -n "$target" ]; then
		if [ "$prog" -le "$target" ]; then verdict=met; else verdict="TARGET MISSED"; fi
	fi
	printf '%-26s %6s %9s %9s %7s  %s\n' "$name" "$ns" "$over" "$prog" "${target:--}" "$verdict"
done
cat << 'EOF2'
allowed_*_tcp: established segments of one flow (verdict from the flow cache, no event);
*_uncached: the policy generation bumped before each frame (every frame walks the trie);
*_syn_folded: a SYN whose event folds; denied_*_syn_rst: the RST built and redirected, its
event folded. "program" = raw minus the overhead of a single run (empty_tc_single - empty_tc).
EOF2
