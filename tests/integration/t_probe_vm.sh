#!/bin/sh
# Dockerfile builds in the microVM (issue 23): `sbtrace probe --backend qemu`
# runs podman in the guest (TCG here), its RUN steps below the guest agent's
# cgroup, the boot there too, and answers as the host engine does: the same
# verdicts, phases, lines and final-image flags on the boot fixtures, with
# visibility.exec guest_kernel and whole streams. The guest agent killed
# mid-build: inconclusive. --backend auto (the default) on a host without
# KVM: the hardened host engine, with the warning isolation_reduced. A Node
# app's RUN ["npm","ci"] reaches the test registry through the VM's tap with
# --allow-host (the relay behind the tap), and a postinstall's connect to a
# non-allowed IP is refused at the tap. Nothing is left: no context copy, no
# VM directory or disk, no tap namespace, no cgroup, no relay.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/netlib.sh"

FIX="$TOP/tests/fixtures"
STATE_DIR=/run/sbtrace
require_qemu_guest
. "$(dirname "$0")/npmreg.sh"
npmreg_world || exit 1

# Leftovers of a probe whose pid was $1: context copy (and a mount in it), VM dir, tap netns,
# cgroup, relay, qemu.
leftovers() {
	_l=""
	[ -z "$(ls -d /var/tmp/sbtrace-ctx-"$1".* 2> /dev/null)" ] || _l="$_l context"
	[ -z "$(grep "sbtrace-ctx-$1\." /proc/self/mountinfo)" ] || _l="$_l mount"
	[ -z "$(ls -d "$STATE_DIR"/probe-*-"$1".vm 2> /dev/null)" ] || _l="$_l vm_dir"
	[ -z "$(ip netns list 2> /dev/null | grep -e "sbtrace-probe-$1\b")" ] || _l="$_l netns"
	[ -z "$(ls -d "$CG2"/sbtrace/probe-*-"$1" 2> /dev/null)" ] || _l="$_l cgroup"
	[ -z "$(pgrep -f "[s]lirp4netns.*sbtrace-probe-$1")" ] || _l="$_l relay"
	[ -z "$(pgrep -f "[q]emu-system.*probe-.*-$1")" ] || _l="$_l qemu"
	printf '%s\n' "${_l:-none}"
}

# probe NAME ARGS...: the probe in the test's sandbox netns; report $WORK/NAME.json
probe() {
	_n=$1
	shift
	nsenter --net="/run/netns/$NET_SBX" env SBTRACE_RESOLV_CONF="$WORK/resolv.conf" \
		"$SBTRACE" probe --no-cache --boot-seconds 3 --image-map "$TOP/scripts/image-map" \
		"$@" > "$WORK/$_n.json" 2> "$WORK/$_n.err" 3>&- 4>&- 5>&- &
	PROBE_PID=$!
	relay_watch "$PROBE_PID" "$_n" &
	wait "$PROBE_PID"
	PROBE_RC=$?
	log "$_n: rc $PROBE_RC, $(jq -c '{verdict, confidence, reason, count: .shell_invocation.count, vis: .visibility.exec, t: .timings_ms | {total, build, boot, vm_boot, vm_images}}' "$WORK/$_n.json" 2> /dev/null)"
	[ -s "$WORK/$_n.json" ] || log "$_n: stderr: $(tail -c 1500 "$WORK/$_n.err")"
	case "$(jq -r .reason "$WORK/$_n.json" 2> /dev/null)" in
	build_failed | sandbox_boot_failed | boot_failed | boot_killed)
		npm_key "$_n" "$WORK/$_n.err"
		diag "$_n" "$WORK/$_n.err"
		diag "$_n: the registry's log" "$WORK/httpd.log"
		;;
	esac
	validate_report "$WORK/$_n.json"
	check "$_n: nothing left behind" none "$(leftovers "$PROBE_PID")"
}
# --boot-seconds 20: under TCG a boot may take that long to become ready (it ends at readiness)
vm() { _n=$1 && shift && probe "$_n" --backend qemu --guest "$GUEST" --boot-seconds 20 "$@"; }
field() { jq -r "$2" "$WORK/$1.json"; }
# what both paths must say alike: verdict, confidence, reason, count, each location
answer() {
	field "$1" '"\(.verdict) \(.confidence) \(.reason) \(.shell_invocation.count) \([.shell_invocation.locations[] | "\(.phase):\(.source.instruction):\(.source.line):\(.affects_final_image)"] | sort | join(","))"'
}

# ---- the boot fixtures: the microVM answers as the host engine --------------
for fx in boot-multistage boot-shell-cmd boot-entrypoint-script boot-healthcheck boot-final-run; do
	probe "$fx-host" --backend podman "$FIX/$fx"
	vm "$fx-vm" "$FIX/$fx"
	check "$fx: the host engine answers with confidence" "high" "$(field "$fx-host" .confidence)"
	check "$fx: the microVM's answer is the host engine's" "$(answer "$fx-host")" "$(answer "$fx-vm")"
	check "$fx: the microVM's execs came from the guest kernel, its stream whole" \
		"guest_kernel tcg" "$(field "$fx-vm" '"\(.visibility.exec) \(.visibility.accel)"')"
	check "$fx: the boot ran in the guest" "true dockerfile" \
		"$(field "$fx-vm" '"\(.boot.ran) \(.boot.source)"')"
done
check "HEALTHCHECK in the guest: run once, exit 0" 0 "$(field boot-healthcheck-vm .boot.healthcheck_exit_code)"
check "the exec-form CMD exited by itself in the guest" "exited 0" \
	"$(field boot-multistage-vm '"\(.boot.ended) \(.boot.exit_code)"')"
check_true "the base image's copy into the probe's store is timed and sized" \
	jq -e '.timings_ms.vm_images | .count == 1 and .copy >= 0 and .bytes > 0' "$WORK/boot-multistage-vm.json" > /dev/null
check "the report names the guest's podman build" "podman --cgroup-parent=/sbt-work/build /workspace/context" \
	"$(field boot-multistage-vm '"\(.command.argv[0]) \(.command.argv[] | select(startswith("--cgroup-parent"))) \(.command.argv[-1])"')"

# ---- the guest agent killed mid-build: never safe ----------------------------
SBTRACE_TEST_GUEST_AGENT_KILL_MS=5000 vm killed "$FIX/boot-multistage"
check "the agent killed during the build: inconclusive, low, events_lost" "inconclusive low events_lost" \
	"$(field killed '"\(.verdict) \(.confidence) \(.reason)"')"

# ---- SIGKILL of the probe during a RUN step in the guest: the watchdog ends the
# VM, `sbtrace-shim gc` removes the rest ------------------------------------------
mkdir -p "$WORK/slow"
printf 'FROM localhost/sbtrace-busybox:latest\nRUN ["/bin/sleep", "60"]\n' > "$WORK/slow/Dockerfile"
"$SBTRACE" probe --no-cache --backend qemu --guest "$GUEST" "$WORK/slow" > "$WORK/slow.json" 2> "$WORK/slow.err" &
SLOW=$!
wait_for 120 grep -q 'RUN \["/bin/sleep", "60"\]' "$WORK/slow.err" || fail "the slow build never reached its RUN step"
kill -KILL "$SLOW"
wait "$SLOW"
check_true "SIGKILL: the VM is gone within 5 s (the watchdog)" wait_for 5 sh -c "! pgrep -f '[q]emu-system.*probe-.*-$SLOW' > /dev/null"
"$TOP/build/bin/sbtrace-shim" gc 2> "$WORK/gc.err"
check "SIGKILL + gc: exit 0" 0 "$?"
check "SIGKILL + gc: nothing left" none "$(leftovers "$SLOW")"

# ---- --backend auto: the microVM with KVM, else the host engine and why --------
probe auto "$FIX/boot-multistage"
if [ "$(field auto .visibility.exec)" = host ]; then
	check "auto without usable KVM: the host engine, still confident" "safe high" \
		"$(field auto '"\(.verdict) \(.confidence)"')"
	check_true "... the warning isolation_reduced says why" sh -c \
		"jq -r '.warnings[] | select(.id | endswith(\"isolation_reduced\")) | .message' '$WORK/auto.json' | grep -q 'KVM is not usable'"
else
	check "auto with KVM: the microVM, accelerated, no warning of reduced isolation" "guest_kernel kvm 0" \
		"$(field auto '"\(.visibility.exec) \(.visibility.accel) \([.warnings[] | select(.id | endswith("isolation_reduced"))] | length)"')"
fi
"$SBTRACE" probe --no-cache --backend ns "$FIX/boot-multistage" > "$WORK/ns.json" 2> "$WORK/ns.err"
check "--backend ns for a Dockerfile: exit 2, nothing on stdout" "2 0" "$? $(wc -c < "$WORK/ns.json")"
check_true "... and it says where a Dockerfile build runs" grep -q "podman (the host's engine) or qemu" "$WORK/ns.err"
"$SBTRACE" probe --no-cache --backend podman "$FIX/make-shell" > "$WORK/pm.json" 2> "$WORK/pm.err"
check "--backend podman for a make build: exit 2" 2 "$?"

# ---- RUN ["npm","ci"] in the microVM, through the tap -------------------------
npm_services

vm svc --allow-host "registry.test port 8080" "$WORK/svc"
check "npm ci in the microVM: built and booted, safe, high" "safe high null" \
	"$(field svc '"\(.verdict) \(.confidence) \(.reason)"')"
check "... the tarball came from the test registry" 1 "$(grep -c '^GET /dep/-/dep-1.0.0.tgz 200$' "$WORK/httpd.log")"
check "... the registry connect is an allowed verdict at the tap" "$REG_ADDR 8080" \
	"$(field svc '[.egress.allowed_destinations[] | select(.dport == 8080)][0] | "\(.daddr) \(.dport)"')"
check_true "... the build network is the relay behind the tap" sh -c \
	"jq -r .egress.build_network '$WORK/svc.json' | grep -q '^slirp4netns .* behind the VM.s tap'"
check "... the app booted in the guest (its own output)" 1 "$(grep -c '^app up: from dep' "$WORK/svc.err")"

vm hook --allow-host "registry.test port 8080" "$WORK/svc-hook"
check "a postinstall's sh -c in the microVM: unsafe, at the RUN line, the package named" \
	"unsafe high RUN 4 hook@1.0.0" \
	"$(field hook '"\(.verdict) \(.confidence) \([.shell_invocation.locations[] | select(.phase == "build")][0] | "\(.source.instruction) \(.source.line) \(.package)")"')"
check "... its connect to $NET_T2_V4 was refused at the tap" "$NET_T2_V4 80" \
	"$(field hook '[.egress.denied_destinations[] | select(.daddr == "'"$NET_T2_V4"'")][0] | "\(.daddr) \(.dport)"')"
check "... nothing reached the test host" 0 "$(grep -c "$NET_T2_V4:80" "$NET_SERVER_LOG")"
finish
