#!/usr/bin/env bash
# Probe cold time against the bare build (run by `make bench`, as root), the
# same build side by side in one run, median of N each:
#   npm         `npm ci && npm run build` in a fresh copy of an npm repo (a
#               lockfile, no node_modules; its dependency a local tarball, so
#               no network) vs `sbtrace probe --no-cache --no-boot` of it (npm ci
#               then the build, in the sandbox, traced)
#   Dockerfile  `podman build --no-cache --layers=false` of a two-step
#               Dockerfile on the local busybox image vs the probe's (--no-boot)
#   microVM     the same Dockerfile's probe with its boot (--boot-seconds 2) in
#               the microVM (--backend qemu: TCG without KVM) vs on the host
#               engine (--backend podman), BENCH_VM_PROBES (3) each, and the
#               microVM's stages from its report (timings_ms: the guest's
#               boot, the base image's copy into the probe's store, the
#               guest's podman build, the container's boot)
# Prints each median and the ratio probe / bare (microVM / host engine). No target: the figures are
# for the README and BENCHMARKS.md. Exits 1 only on a harness failure.
set -u
cd "$(dirname "$0")/.."
TOP=$(pwd)
SBTRACE=build/bin/sbtrace
N=${BENCH_PROBES:-5}
W=$(mktemp -d /tmp/sbtrace-bench-build.XXXXXX)
trap 'rm -rf "$W"' EXIT
die() { echo "bench-probe-build: $*" >&2; exit 1; }
[ -x "$SBTRACE" ] || die "build first (make)"
command -v npm > /dev/null || die "npm missing"
eval "$(scripts/podman-setup.sh)" || die "scripts/podman-setup.sh failed"

median() { sort -g | awk '{ a[NR] = $1 } END { if (!NR) { print "nan"; exit } if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
ms() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.0f", (b - a) * 1000 }'; }

# The npm repo: one dependency from a tarball next to it (file:), a build script.
mkdir -p "$W/dep" "$W/npm"
printf '{"name":"dep","version":"1.0.0","main":"index.js"}\n' > "$W/dep/package.json"
printf 'module.exports = 42;\n' > "$W/dep/index.js"
(cd "$W/dep" && npm pack --silent --pack-destination "$W/npm" > /dev/null 2>&1) || die "npm pack"
INTEGRITY="sha512-$(openssl dgst -sha512 -binary "$W/npm/dep-1.0.0.tgz" | base64 -w0)"
cat > "$W/npm/package.json" << 'EOF'
{"name":"app","version":"1.0.0","dependencies":{"dep":"file:dep-1.0.0.tgz"},"scripts":{"build":"node build.js"}}
EOF
cat > "$W/npm/package-lock.json" << EOF
{"name":"app","version":"1.0.0","lockfileVersion":3,"requires":true,"packages":{
"":{"name":"app","version":"1.0.0","dependencies":{"dep":"file:dep-1.0.0.tgz"}},
"node_modules/dep":{"version":"1.0.0","resolved":"file:dep-1.0.0.tgz","integrity":"$INTEGRITY"}}}
EOF
printf 'audit=false\nfund=false\nupdate-notifier=false\n' > "$W/npm/.npmrc"
printf 'require("fs").mkdirSync("dist", { recursive: true });\nrequire("fs").writeFileSync("dist/out.txt", String(require("dep")));\n' > "$W/npm/build.js"

mkdir -p "$W/df"
printf 'FROM localhost/sbtrace-busybox:latest\nRUN ["/bin/cp", "/etc/passwd", "/copy"]\nRUN ["/bin/ls", "/copy"]\n' > "$W/df/Dockerfile"

bare_npm=() probe_npm=() bare_df=() probe_df=()
for i in $(seq "$N"); do
	rm -rf "$W/run" && cp -r "$W/npm" "$W/run"
	t0=$EPOCHREALTIME
	(cd "$W/run" && npm ci --silent > /dev/null 2>&1 && npm run --silent build > /dev/null 2>&1) || die "bare npm build failed"
	bare_npm+=("$(ms "$t0" "$EPOCHREALTIME")")
	t0=$EPOCHREALTIME
	out=$("$SBTRACE" probe -q --no-cache --no-boot "$W/npm" 2> /dev/null) || die "probe (npm) failed"
	probe_npm+=("$(ms "$t0" "$EPOCHREALTIME")")
	# --no-boot: the build alone is timed; its answer is inconclusive for that reason only
	jq -e '.confidence == "high" or .reason == "boot_not_run"' <<< "$out" > /dev/null ||
		die "probe (npm) not confident: $(jq -c '{reason, warnings}' <<< "$out")"
	t0=$EPOCHREALTIME
	podman --runtime runc --cgroup-manager cgroupfs build -q --no-cache --layers=false --network=none \
		--iidfile "$W/iid" "$W/df" > /dev/null 2>&1 || die "bare podman build failed"
	bare_df+=("$(ms "$t0" "$EPOCHREALTIME")")
	podman rmi -f "$(cat "$W/iid")" > /dev/null 2>&1
	t0=$EPOCHREALTIME
	out=$("$SBTRACE" probe -q --no-cache --no-boot "$W/df" 2> /dev/null) || die "probe (Dockerfile) failed"
	probe_df+=("$(ms "$t0" "$EPOCHREALTIME")")
	# --no-boot: the build alone is timed; its answer is inconclusive for that reason only
	jq -e '.confidence == "high" or .reason == "boot_not_run"' <<< "$out" > /dev/null ||
		die "probe (Dockerfile) not confident: $(jq -c '{reason, warnings}' <<< "$out")"
done
# The microVM against the host engine, with the boot; its stages from the report.
VN=${BENCH_VM_PROBES:-3}
host_df=() vm_df=() vm_boot=() vm_copy=() vm_build=() vm_cboot=()
GUEST=$(scripts/guest-build.sh 2> /dev/null) || die "scripts/guest-build.sh failed"
for i in $(seq "$VN"); do
	t0=$EPOCHREALTIME
	out=$("$SBTRACE" probe -q --no-cache --backend podman --boot-seconds 2 "$W/df" 2> /dev/null) ||
		die "probe (host engine) failed"
	host_df+=("$(ms "$t0" "$EPOCHREALTIME")")
	t0=$EPOCHREALTIME
	out=$("$SBTRACE" probe -q --no-cache --backend qemu --guest "$GUEST" --boot-seconds 2 "$W/df" 2> /dev/null) ||
		die "probe (microVM) failed"
	vm_df+=("$(ms "$t0" "$EPOCHREALTIME")")
	[ "$(jq -r .confidence <<< "$out")" = high ] || die "probe (microVM) not confident: $(jq -c '{reason, warnings}' <<< "$out")"
	vm_boot+=("$(jq -r .timings_ms.vm_boot <<< "$out")")
	vm_copy+=("$(jq -r .timings_ms.vm_images.copy <<< "$out")")
	vm_build+=("$(jq -r .timings_ms.vm_build <<< "$out")")
	vm_cboot+=("$(jq -r .timings_ms.boot <<< "$out")")
done
HD=$(printf '%s\n' "${host_df[@]}" | median)
VD=$(printf '%s\n' "${vm_df[@]}" | median)
ACCEL=$(jq -r .visibility.accel <<< "$out")

BN=$(printf '%s\n' "${bare_npm[@]}" | median)
PN=$(printf '%s\n' "${probe_npm[@]}" | median)
BD=$(printf '%s\n' "${bare_df[@]}" | median)
PD=$(printf '%s\n' "${probe_df[@]}" | median)
echo "npm ci && npm run build (ms): bare ${bare_npm[*]}; probe ${probe_npm[*]}"
echo "podman build (ms): bare ${bare_df[*]}; probe ${probe_df[*]}"
printf 'bench: probe cold vs bare    npm ci + build   bare %s ms, probe %s ms, ratio %s\n' "$BN" "$PN" \
	"$(awk -v p="$PN" -v b="$BN" 'BEGIN { printf "%.2f", p / b }')"
printf 'bench: probe cold vs bare    podman build     bare %s ms, probe %s ms, ratio %s\n' "$BD" "$PD" \
	"$(awk -v p="$PD" -v b="$BD" 'BEGIN { printf "%.2f", p / b }')"
echo "Dockerfile probe with its boot (ms): host engine ${host_df[*]}; microVM ${vm_df[*]}"
printf 'bench: Dockerfile probe      microVM (%s) vs host engine   host %s ms, microVM %s ms, ratio %s\n' \
	"$ACCEL" "$HD" "$VD" "$(awk -v p="$VD" -v b="$HD" 'BEGIN { printf "%.1f", p / b }')"
printf 'bench: microVM stages (ms, medians)   guest boot %s, base image copy %s, guest build %s, container boot %s\n' \
	"$(printf '%s\n' "${vm_boot[@]}" | median)" "$(printf '%s\n' "${vm_copy[@]}" | median)" \
	"$(printf '%s\n' "${vm_build[@]}" | median)" "$(printf '%s\n' "${vm_cboot[@]}" | median)"
echo "bench: kernel $(uname -r), $(nproc) CPUs ($TOP)"
