#!/usr/bin/env bash
# Probe benchmark (run by `make bench`, as root):
#   start-up   `sbtrace probe` start -> the workload's first exec (the kernel's
#              timestamp of it, timings_ms.to_first_exec), median of N cold
#              runs (--no-cache, --cmd /bin/true); target <= 60 ms; and by
#              stage (timings_ms.start): plan, sandbox clone, BPF load and
#              attach (the sandbox sets itself up meanwhile: namespaces, user
#              namespace, overlay), the wait for that set-up, the release to
#              the first exec (go pipe, seccomp, exec)
#   warm       a cached probe, the whole process, wall clock, median of N runs;
#              target <= 10 ms on a fixture, <= 50 ms on a repo of 10,000 files
#              (the key digests every file: the stat cache keeps it to a stat each)
# Prints "met" / "TARGET MISSED"; exits 1 only on a harness failure.
set -u
cd "$(dirname "$0")/.."
SBTRACE=build/bin/sbtrace
REPO=tests/fixtures/make-noshell
N=${BENCH_PROBES:-15}
CACHE=$(mktemp -d /tmp/sbtrace-bench-probe.XXXXXX)
BIG=$(mktemp -d /tmp/sbtrace-bench-repo.XXXXXX)
trap 'rm -rf "$CACHE" "$BIG"' EXIT
die() { echo "bench-probe: $*" >&2; exit 1; }
[ -x "$SBTRACE" ] || die "build first (make)"

median() { sort -g | awk '{ a[NR] = $1 } END { if (!NR) { print "nan"; exit } if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

STAGES="plan sandbox_clone bpf_load_attach sandbox_setup_wait release_to_first_exec"
cold=()
: > "$CACHE/stages"
for _ in $(seq "$N"); do
	out=$("$SBTRACE" probe -q --no-cache --cmd /bin/true "$REPO") || die "probe failed"
	v=$(jq -r '.timings_ms.to_first_exec' <<< "$out")
	[ "$v" != null ] || die "no first exec in the report: $out"
	cold+=("$v")
	jq -r '.timings_ms.start | [.plan, .sandbox_clone, .bpf_load_attach, .sandbox_setup_wait, .release_to_first_exec] | @tsv' <<< "$out" >> "$CACHE/stages"
done
# warm_runs REPO WHAT: prime the cache, then N cached probes of REPO, wall clock in ms, into $times.
warm_runs() {
	"$SBTRACE" probe -q --cache-dir "$CACHE" "$1" > /dev/null || die "priming the cache$2 failed"
	times=()
	for _ in $(seq "$N"); do
		t0=$EPOCHREALTIME
		out=$("$SBTRACE" probe -q --cache-dir "$CACHE" "$1") || die "warm probe$2 failed"
		t1=$EPOCHREALTIME
		[ "$(jq -r .cache.hit <<< "$out")" = true ] || die "warm run$2 missed the cache"
		times+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", (b - a) * 1000 }')")
	done
}
warm_runs "$REPO" ""
warm=("${times[@]}")
# A repo of 10,000 files in 100 directories; files younger than 2 s are hashed
# every time (racily clean), so the tree settles before the cache is primed.
for d in $(seq 100); do
	mkdir "$BIG/d$d"
	(cd "$BIG/d$d" && seq 100 | xargs -n 100 touch)
done
printf 'all:\n\tcp d1/1 out\n' > "$BIG/Makefile"
sleep 2.2
warm_runs "$BIG" " (10,000 files)"
big=("${times[@]}")
C=$(printf '%s\n' "${cold[@]}" | median)
W=$(printf '%s\n' "${warm[@]}" | median)
B=$(printf '%s\n' "${big[@]}" | median)
v() { awk -v v="$1" -v t="$2" 'BEGIN { print (v <= t) ? "met" : "TARGET MISSED" }'; }
echo "cold start -> first exec (ms): ${cold[*]}"
echo "warm probe (ms): ${warm[*]}"
echo "warm probe, 10,000 files (ms): ${big[*]}"
printf 'bench: probe start-up         start -> first exec median %s ms  (target <= 60 ms: %s)\n' "$C" "$(v "$C" 60)"
i=0
for st in $STAGES; do
	i=$((i + 1))
	col=$(cut -f"$i" "$CACHE/stages")
	printf 'bench: probe start-up stage   %-22s median %s ms  (range %s-%s)\n' "$st" \
		"$(median <<< "$col")" "$(sort -g <<< "$col" | head -1)" "$(sort -g <<< "$col" | tail -1)"
done
printf 'bench: probe warm (cached)    whole process median %s ms  (target <= 10 ms: %s)\n' "$W" "$(v "$W" 10)"
printf 'bench: probe warm, 10k files  whole process median %s ms  (target <= 50 ms: %s)\n' "$B" "$(v "$B" 50)"
