#!/bin/sh
# Tap benchmark (run by `make bench`, as root): the tap program's cost per
# frame from BPF_PROG_TEST_RUN (the kernel's clock), next to an empty tc
# program measured the same way in the same run. (The qemu backend's boot
# to its first packet on the tap is scripts/bench-qemu.sh.)
# Each figure is the median of tap_pps's 5 rounds, printed with its range;
# each round measures its own floors. Targets (issue 5): allowed v4 TCP
# <= 60 ns, allowed v6 <= 80 ns, denied SYN with its RST built <= 200 ns.
# bpf_stats is switched off while measuring (it adds two clock reads to
# every run). Prints "met" / "TARGET MISSED"; exits 1 only on a harness
# failure.
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
echo "== tap program: ns per frame (BPF_PROG_TEST_RUN), medians of $(echo "$OUT" | awk '{ print $2 }' | sort -u | wc -l) rounds, range in parentheses"
# Runs once per call carry the clock reads and cold caches of a single run:
# the empty program measured alike, in the same round, shows that overhead.
echo "$OUT" | awk '
	function med(v, n,   i, j, t) {
		for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j - 1] > v[j]; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
		return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
	}
	{ r = $2; name = $4; ns[name, r] = $6; fl[name, r] = $8; if (!(name in seen)) { seen[name] = 1; order[++nn] = name } if (r > nr) nr = r }
	END {
		for (r = 1; r <= nr; r++) { rep[r] = ns["empty_tc", r]; sgl[r] = ns["empty_tc_single", r] }
		for (r = 1; r <= nr; r++) { a[r] = rep[r]; b[r] = sgl[r] }
		printf "   empty tc program: %d ns with repeat, %d ns run once per call\n", med(a, nr), med(b, nr)
		printf "%-26s %6s %9s %16s %7s  %s\n", "case", "raw", "overhead", "program", "target", "verdict"
		for (k = 1; k <= nn; k++) {
			name = order[k]
			if (name ~ /^empty_tc/) continue
			lo = hi = ""
			for (r = 1; r <= nr; r++) {
				over = (fl[name, r] == sgl[r] && sgl[r] != rep[r]) ? sgl[r] - rep[r] : 0
				raw[r] = ns[name, r]; ov[r] = over; p[r] = ns[name, r] - over
				if (lo == "" || p[r] < lo) lo = p[r]
				if (hi == "" || p[r] > hi) hi = p[r]
			}
			target = name == "allowed_v4_tcp" ? 60 : name == "allowed_v6_tcp" ? 80 : name ~ /^denied_v[46]_syn_rst$/ ? 200 : ""
			m = med(p, nr)
			verdict = target == "" ? "" : (m <= target ? "met" : "TARGET MISSED")
			printf "%-26s %6d %9d %16s %7s  %s\n", name, med(raw, nr), med(ov, nr),
				sprintf("%d (%d-%d)", m, lo, hi), target == "" ? "-" : target, verdict
			if (target != "")
				summary = summary sprintf("bench: tap %-22s %d ns (%d-%d), empty tc program %d ns, median of %d rounds  (target <= %d ns: %s)\n",
					name, m, lo, hi, med(a, nr), nr, target, verdict)
		}
		printf "%s", summary
	}'
cat << 'EOF2'
allowed_*_tcp: established segments of one flow (verdict from the flow cache, no event);
*_uncached: the policy generation bumped before each frame (every frame walks the trie);
*_syn_folded: a SYN whose event folds; denied_*_syn_rst: the RST built and redirected, its
event folded. "program" = raw minus the overhead of a single run (empty_tc_single - empty_tc),
each round with its own floors.
EOF2
