#!/usr/bin/env bash
# Probe benchmark (run by `make bench`, as root):
#   start-up   `sbtrace probe` start -> the workload's first exec (the kernel's
#              timestamp of it, timings_ms.to_first_exec), median of N cold
#              runs (--no-cache, --cmd /bin/true); target <= 60 ms; and by
#              stage (timings_ms.start): plan, sandbox clone, BPF load and
#              attach (the sandbox sets itself up meanwhile: namespaces, user
#              namespace, overlay), the wait for that set-up, the release to
#              the first exec (go pipe, seccomp, exec)
#   boot       a one-file HTTP server's probe (tests/fixtures/boot-server:
#              --cmd "node build.js" --boot-cmd "node server.js", --boot-seconds
#              30): the whole probe, wall clock, against its boot's readiness
#              (boot.ready_ms: it listens) and how long the boot ran after it
#              (the quiet second and the stop); target <= 1500 ms after the
#              listen; median of BENCH_BOOTS (5) runs
#   warm       a cached probe, the whole process, wall clock, median of N runs;
#              target <= 10 ms on a fixture, <= 50 ms on a repo of 10,000 files
#              (the key digests every file: the stat cache keeps it to a stat each)
#   context    a Dockerfile build's context, the same 10,000 files copied (the
#              ms command.why gives), into /var/tmp and into a tmpfs
#              (SBTRACE_CONTEXT_DIR=/dev/shm), median of BENCH_CONTEXTS (3)
#              runs each; no target (the host's file system decides)
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
	# a boot (--boot-cmd): without one the answer is inconclusive, which is never cached
	"$SBTRACE" probe -q --cache-dir "$CACHE" --boot-cmd /bin/true "$1" > /dev/null ||
		die "priming the cache$2 failed"
	times=()
	for _ in $(seq "$N"); do
		t0=$EPOCHREALTIME
		out=$("$SBTRACE" probe -q --cache-dir "$CACHE" --boot-cmd /bin/true "$1") ||
			die "warm probe$2 failed"
		t1=$EPOCHREALTIME
		[ "$(jq -r .cache.hit <<< "$out")" = true ] || die "warm run$2 missed the cache"
		times+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", (b - a) * 1000 }')")
	done
}
# The server's boot: ends at readiness (+ --boot-quiet-ms), not at --boot-seconds.
: > "$CACHE/boot"
if command -v node > /dev/null; then
	for _ in $(seq "${BENCH_BOOTS:-5}"); do
		t0=$EPOCHREALTIME
		out=$("$SBTRACE" probe -q --no-cache --boot-seconds 30 --cmd "node build.js" \
			--boot-cmd "node server.js" tests/fixtures/boot-server 2> /dev/null) ||
			die "server probe failed"
		t1=$EPOCHREALTIME
		[ "$(jq -r .boot.ended_by <<< "$out")" = ready ] || die "the server's boot did not end at readiness: $out"
		awk -v a="$t0" -v b="$t1" -v r="$(jq -r .boot.ready_ms <<< "$out")" \
			-v s="$(jq -r .boot.seconds <<< "$out")" \
			'BEGIN { printf "%.0f\t%d\t%.0f\n", (b - a) * 1000, r, s * 1000 - r }' >> "$CACHE/boot"
	done
fi
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
# ctx_runs [DIR]: the context copy's ms of BENCH_CONTEXTS Dockerfile probes of $BIG, into $times
ctx_runs() {
	times=()
	for _ in $(seq "${BENCH_CONTEXTS:-3}"); do
		out=$(SBTRACE_CONTEXT_DIR=${1:-} "$SBTRACE" probe -q --no-cache --no-boot "$BIG" 2> /dev/null) ||
			die "Dockerfile probe of 10,000 files failed"
		v=$(jq -r .command.why <<< "$out" | sed -n 's/.*build context: a copy of the repo ([0-9]* files, [0-9]* KiB, \([0-9]*\) ms).*/\1/p')
		[ -n "$v" ] || die "no context copy in the report: $(jq -c .command <<< "$out")"
		times+=("$v")
	done
}
ctx_disk=() ctx_mem=()
if scripts/podman-setup.sh > /dev/null 2>&1; then
	printf 'FROM localhost/sbtrace-busybox:latest\nCMD ["/bin/true"]\n' > "$BIG/Dockerfile"
	ctx_runs ""
	ctx_disk=("${times[@]}")
	[ -d /dev/shm ] && ctx_runs /dev/shm && ctx_mem=("${times[@]}")
fi
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
if [ -s "$CACHE/boot" ]; then
	BW=$(cut -f1 "$CACHE/boot" | median)
	BR=$(cut -f2 "$CACHE/boot" | median)
	BA=$(cut -f3 "$CACHE/boot" | median)
	echo "server probe (wall ms, ready ms, boot after ready ms): $(tr '\t\n' ', ' < "$CACHE/boot")"
	printf 'bench: probe server boot      whole probe median %s ms, ready at %s ms into the boot, ended %s ms after it  (target <= 1500 ms after: %s)\n' \
		"$BW" "$BR" "$BA" "$(v "$BA" 1500)"
else
	echo "bench: probe server boot      skipped (no node)"
fi
printf 'bench: probe warm (cached)    whole process median %s ms  (target <= 10 ms: %s)\n' "$W" "$(v "$W" 10)"
printf 'bench: probe warm, 10k files  whole process median %s ms  (target <= 50 ms: %s)\n' "$B" "$(v "$B" 50)"
if [ ${#ctx_disk[@]} -gt 0 ]; then
	echo "context copy, 10,000 files (ms): /var/tmp ${ctx_disk[*]}; /dev/shm ${ctx_mem[*]:-}"
	printf 'bench: probe context copy     10,000 files median %s ms into /var/tmp, %s ms into /dev/shm\n' \
		"$(printf '%s\n' "${ctx_disk[@]}" | median)" "$(printf '%s\n' "${ctx_mem[@]:-}" | median)"
else
	echo "bench: probe context copy     skipped (scripts/podman-setup.sh failed)"
fi
