#!/bin/sh
# The exec program's cost by part (run by `make bench`, as root): builds of
# bpf/exec.bpf.c that return after each part (-DSBT_STOP_AFTER=n, see its
# enum exec_part) and the whole program, each measured by the kernel's own
# accounting (BPF_ENABLE_STATS: run_time_ns / run_cnt) on execs of /bin/true
# in a sandbox cgroup, next to an empty tp_btf program (the floor).
#
# Each round measures every build once, alternating the order of the builds
# from round to round (build/bench/exec_parts). By default a build is
# attached alone with the floor: attached together, a build finds the cache
# lines the builds before it touched warm (the earlier whole program measured
# 1.45 us when attached last, 2.11 us when first). BENCH_PARTS_MODE=together
# attaches them all at once instead (the same execs for all, with that bias).
# Prints per part the median over the rounds of its cumulative cost and of
# its increment over the part before (each round's difference), with the
# range over the rounds. (The cost outside every sandbox is bench.sh's.)
# Exits 1 only on a harness failure.
#
# Environment: BENCH_PARTS_EXECS (default 1000 per build and round),
#              BENCH_PARTS_ROUNDS (default 5, at least 3), BENCH_PARTS_MODE.
set -u
cd "$(dirname "$0")/.." || exit 1
BIN=build/bench/exec_parts
OBJ=build/bpf
N=${BENCH_PARTS_EXECS:-1000}
ROUNDS=${BENCH_PARTS_ROUNDS:-5}
MODE=${BENCH_PARTS_MODE:-alone}
# The parts in program order (bpf/exec.bpf.c, enum exec_part), then the send.
PARTS="membership header comm exe filename interp cwd argv"

die() { echo "bench-exec-parts: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || die "needs root"
[ -x "$BIN" ] || die "build first (make bench)"
[ "$ROUNDS" -ge 3 ] 2> /dev/null || die "BENCH_PARTS_ROUNDS must be at least 3"
case "$MODE" in alone) flag=--alone ;; together) flag="" ;; *) die "BENCH_PARTS_MODE: alone or together" ;; esac
set --
k=1
for p in $PARTS; do
	[ -f "$OBJ/exec_stop$k.bpf.o" ] || die "$OBJ/exec_stop$k.bpf.o missing (make bench builds it)"
	set -- "$@" "$p=$OBJ/exec_stop$k.bpf.o"
	k=$((k + 1))
done
[ -f "$OBJ/exec.bpf.o" ] || die "$OBJ/exec.bpf.o missing (make bench builds it)"
set -- "$@" "send=$OBJ/exec.bpf.o"

CG2=$(awk '$0 ~ / - cgroup2 / { print $5; exit }' /proc/self/mountinfo)
[ -n "$CG2" ] || die "no cgroup v2 mount"
CG="$CG2/sbtrace-bench-parts.$$"
WORK=$(mktemp -d /tmp/sbtrace-bench-parts.XXXXXX)
cleanup() {
	rmdir "$CG/sb" "$CG/out" "$CG" 2> /dev/null
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
mkdir -p "$CG/sb" "$CG/out" || die "mkdir $CG"

load0=$(cut -d' ' -f1 /proc/loadavg)
# $flag is empty or one word
# shellcheck disable=SC2086
"$BIN" $flag "$CG/sb" "$CG/out" "$N" "$ROUNDS" "$@" > "$WORK/out" ||
	die "exec_parts failed"
load1=$(cut -d' ' -f1 /proc/loadavg)

echo "== exec program by part: tp_btf, $N execs of /bin/true per build and round, $ROUNDS rounds ($MODE)"
echo "   kernel $(uname -r), load average $load0 before, $load1 after"
awk -v parts="floor $PARTS send" '
	function median(v, n,   i, j, t) {
		for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j - 1] > v[j]; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
		return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
	}
	function stats(v, n,   i, lo, hi) {
		lo = hi = v[1]
		for (i = 2; i <= n; i++) { if (v[i] < lo) lo = v[i]; if (v[i] > hi) hi = v[i] }
		return sprintf("%6.0f (%.0f to %.0f)", median(v, n), lo, hi)
	}
	$1 == "round" { r = $2; if (r > nr) nr = r; in_ns[$6, r] = $8 }
	$1 == "records" { rec = $2; lost = $4 }
	END {
		np = split(parts, p, " ")
		printf "%-12s %-26s %-26s\n", "part", "cumulative ns/exec", "increment ns"
		for (i = 1; i <= np; i++) {
			for (r = 1; r <= nr; r++) c[r] = in_ns[p[i], r]
			for (r = 1; r <= nr; r++) d[r] = in_ns[p[i], r] - in_ns[p[i - 1], r]
			printf "%-12s %-26s %-26s\n", p[i] (i == 1 ? " (empty)" : ""), stats(c, nr), i == 1 ? "" : stats(d, nr)
		}
		printf "records: %d sent by the whole program for %d execs, %d lost\n", rec, '"$N"' * nr, lost
		if (rec != '"$N"' * nr || lost) exit 1
	}' "$WORK/out" || die "the whole program did not send exactly one record per exec"
echo "(medians over the rounds, range in parentheses; an increment is the difference between"
echo " two builds in the same round. The floor is what any program on this hook costs.)"
