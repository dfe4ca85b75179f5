#!/bin/sh
# The qemu backend's boot, measured where it matters for egress: from the
# moment the tracer releases the microVM (TraceStarted) to the guest's first
# packet on the tap (the first tap event, timestamped by the kernel), for
# BENCH_QEMU_BOOTS boots (default 5); prints each and the median. The guest
# connects to the tap's host side (203.0.113.253, in a network namespace of
# this script's own; nothing is routed beyond it). TCG here: no KVM.
# Exits 1 only on a harness failure.
set -u
cd "$(dirname "$0")/.."
SBTRACE=build/bin/sbtrace
SHIM=build/bin/sbtrace-shim
N=${BENCH_QEMU_BOOTS:-5}

die() { echo "bench-qemu: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || die "needs root"
[ -x "$SBTRACE" ] && [ -x "$SHIM" ] || die "build first (make)"
command -v qemu-system-x86_64 > /dev/null || die "qemu-system-x86_64 missing (make deps)"
GUEST=$(scripts/guest-build.sh) || die "scripts/guest-build.sh failed"
NS=sbt-bq-$$
WORK=$(mktemp -d /tmp/sbtrace-bench-qemu.XXXXXX)
SHIM_PID=""
cleanup() {
	[ -n "$SHIM_PID" ] && kill -TERM "$SHIM_PID" 2> /dev/null && wait "$SHIM_PID" 2> /dev/null
	ip netns del "$NS" 2> /dev/null
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
ip netns add "$NS" || die "cannot create netns $NS"
ip -n "$NS" link set lo up

echo "== qemu backend: release to the guest's first packet on the tap ($N boots, TCG)"
i=1
while [ "$i" -le "$N" ]; do
	name=bq$$-$i
	"$SHIM" run --backend qemu --name "$name" --state-dir "$WORK" --guest "$GUEST" --vm-timeout 90 \
		--tap-netns "$NS" --tap-addrs 203.0.113.253/30,203.0.113.254/30 -- \
		sh -c 'timeout 5 wget -q -O /dev/null http://203.0.113.253:9/; true' \
		> "$WORK/shim.out" 2> "$WORK/shim.err" &
	SHIM_PID=$!
	j=0
	while [ ! -e "$WORK/$name.json" ] && [ $j -lt 200 ]; do sleep 0.05; j=$((j + 1)); done
	[ -e "$WORK/$name.json" ] || die "shim did not start: $(cat "$WORK/shim.err")"
	timeout 120 "$SBTRACE" trace --sandbox "$name" --state-dir "$WORK" \
		--allow-cidr 203.0.113.253/32 --out "$WORK/t$i.jsonl" 2> "$WORK/trace.err" ||
		die "trace failed: $(cat "$WORK/trace.err")"
	wait "$SHIM_PID"
	SHIM_PID=""
	ms=$(jq -s -r '([.[] | select(.event == "TraceStarted")][0].ts) as $t0 |
		([.[] | select(.source == "tap")][0].ts) as $t1 |
		if $t1 == null then "none" else (($t1 - $t0) / 1e6 | floor) end' "$WORK/t$i.jsonl")
	[ "$ms" != none ] || die "boot $i: no packet from the guest on the tap: $(tail -n 3 "$WORK/shim.err")"
	echo "boot $i: $ms ms"
	echo "$ms" >> "$WORK/boots"
	i=$((i + 1))
done
sort -n "$WORK/boots" | awk '{ a[NR] = $1 } END { printf "qemu boot to first guest packet: median %d ms (min %d, max %d, %d boots)\n", a[int((NR + 1) / 2)], a[1], a[NR], NR }'
