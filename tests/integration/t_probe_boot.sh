#!/bin/sh
# `sbtrace probe`'s distroless question: the build and then a short boot of
# what it built, shells tied to their Dockerfile stage and line (or npm
# script), the verdict from the shells that affect the final image, the
# exec-form remediation, stand-in base images (--image-map), --fail-on,
# SARIF, and no container, image, cgroup or process left behind (also after
# SIGINT during the boot).
. "$(dirname "$0")/lib.sh"

podman_up images
command -v npm > /dev/null || fail "npm missing (Debian's npm comes with 'make deps')"

FIX="$TOP/tests/fixtures"
IMAGES_BEFORE=$(podman images -a -q | sort)

# probe NAME ARGS...: report in $WORK/NAME.json (validated), exit code in PROBE_RC
probe() {
	_n=$1
	shift
	"$SBTRACE" probe -q --no-cache --boot-seconds 2 "$@" > "$WORK/$_n.json" 2> "$WORK/$_n.err"
	PROBE_RC=$?
	log "$_n: rc $PROBE_RC, $(jq -c '{verdict, confidence, reason, n: .shell_invocation.count, aff: .shell_invocation.affecting_final_image, boot: .boot.ended}' "$WORK/$_n.json" 2> /dev/null)"
	validate_report "$WORK/$_n.json"
}
field() { jq -r "$2" "$WORK/$1.json"; }
# the one location of a report, as "phase stage affects instruction line matched"
loc() { field "$1" ".shell_invocation.locations[$2] | \"\(.phase) \(.stage) \(.affects_final_image) \(.source.instruction) \(.source.line) \(.source.matched)\""; }

# 1. Multi-stage: the builder's shell RUN is reported but does not reach the
#    final image, which starts an exec-form command: safe, high.
probe multi "$FIX/boot-multistage"
check "multi-stage: safe, high" "safe high null 1 0" \
	"$(field multi '"\(.verdict) \(.confidence) \(.reason) \(.shell_invocation.count) \(.shell_invocation.affecting_final_image)"')"
check "multi-stage: the builder's RUN, stage and line, not affecting" "build builder false RUN 5 true" "$(loc multi 0)"
check "multi-stage: the final stage was booted as its CMD says" "true exited 0 10 dockerfile" \
	"$(field multi '"\(.boot.ran) \(.boot.ended) \(.boot.exit_code) \(.boot.line) \(.boot.source)"')"
check "multi-stage: the final stage is what was built" "null" "$(field multi .command.target)"

# 2. ENTRYPOINT is a #!/bin/sh script: unsafe at boot, the ENTRYPOINT line.
probe entry "$FIX/boot-entrypoint-script"
check "entrypoint script: unsafe, high" "unsafe high" "$(field entry '"\(.verdict) \(.confidence)"')"
check "entrypoint script: a boot shell at the ENTRYPOINT line" "boot #0 true ENTRYPOINT 4 true" "$(loc entry 0)"
check "entrypoint script: a #! script, no remediation" "shebang null" \
	"$(field entry '.shell_invocation.locations[0] | "\(.kind) \(.remediation)"')"

# 3. Shell-form CMD: unsafe at boot, with the exec form to use instead.
probe cmd "$FIX/boot-shell-cmd"
check "shell-form CMD: unsafe, boot, line 3" "unsafe boot #0 true CMD 3 true" \
	"$(field cmd .verdict) $(loc cmd 0)"
check "shell-form CMD: the exec-form replacement" 'CMD ["echo", "started"]' \
	"$(field cmd '.shell_invocation.locations[0].remediation.text')"

# 4. A shell-form RUN in the final stage: unsafe, build phase, affects the image.
probe finalrun "$FIX/boot-final-run"
check "final-stage RUN: unsafe, build, affects the final image" "unsafe build #0 true RUN 3 true" \
	"$(field finalrun .verdict) $(loc finalrun 0)"
check "final-stage RUN: the boot ran too, without a shell" "true 0" \
	"$(field finalrun '"\(.boot.ran) \(.shell_invocation.by_phase.boot)"')"

# 5. The HEALTHCHECK's CMD-SHELL, run once during the boot.
probe hc "$FIX/boot-healthcheck"
check "HEALTHCHECK: unsafe, boot, its line" "unsafe boot #0 true HEALTHCHECK 3 true" \
	"$(field hc .verdict) $(loc hc 0)"
check "HEALTHCHECK: it ran, and passed" 0 "$(field hc .boot.healthcheck_exit_code)"
# a passing HEALTHCHECK is readiness: the boot ends after it and the quiet second, not at 30 s
probe hcready --boot-seconds 30 "$FIX/boot-healthcheck"
check "HEALTHCHECK passed: the boot ended at it" "healthcheck 0" \
	"$(field hcready '"\(.boot.ended_by) \(.boot.healthcheck_exit_code)"')"
check_true "HEALTHCHECK passed: ready_ms set" [ "$(field hcready '.boot.ready_ms // -1')" -ge 0 ]
check_true "HEALTHCHECK passed: the boot far below 30 s" [ "$(field hcready '.boot.seconds * 10 | floor')" -lt 100 ]

# 6. A container whose PID 1 ignores SIGTERM is killed at the deadline: it never became
# ready, so what it would run later (a late shell) was not seen: not a confident answer.
t0=$(date +%s)
probe sigterm "$FIX/boot-sigterm"
t1=$(date +%s)
check "SIGTERM dropped for a PID 1 never ready: killed at once, exit 137, not confident" \
	"killed time_limit 137 inconclusive low boot_killed" \
	"$(field sigterm '"\(.boot.ended) \(.boot.ended_by) \(.boot.exit_code) \(.verdict) \(.confidence) \(.reason)"')"
check_true "SIGTERM ignored: 2 s boot + 2 s grace, not the 60 s it asks for" [ $((t1 - t0)) -lt 30 ]
check_true "SIGTERM dropped for PID 1: killed well before the 2 s grace ends" \
	[ "$(field sigterm '.boot.seconds * 10 | floor')" -lt 35 ]

# ... and one that exits on SIGTERM is stopped, not killed (podman run passes it on).
probe stops "$FIX/boot-stops"
check "SIGTERM handled: stopped, its own exit code" "stopped 0" \
	"$(field stops '"\(.boot.ended) \(.boot.exit_code)"')"

# 6b. A server's boot ends at readiness: it listens, then a quiet second (not --boot-seconds).
ms_now() { date +%s%3N; }
t0=$(ms_now)
probe srvimg --boot-seconds 30 --image-map "$TOP/scripts/image-map" "$FIX/boot-server-image"
t1=$(ms_now)
check "server image: ended at readiness, safe, high" "ready safe high" \
	"$(field srvimg '"\(.boot.ended_by) \(.verdict) \(.confidence)"')"
check_true "server image: it was seen listening (ready_ms)" [ "$(field srvimg '.boot.ready_ms // -1')" -ge 0 ]
check "server image: ready, then killed idle (PID 1 without a SIGTERM handler): warned, still confident" \
	"killed shell_invocation_trace.boot_stop_unhandled" \
	"$(field srvimg '"\(.boot.ended) \([.warnings[].id | select(. == "shell_invocation_trace.boot_stop_unhandled")][0])"')"
check_true "server image: the app's own output" grep -q "listening on 127.0.0.1:8080" "$WORK/srvimg.err"
# node as PID 1 re-raises its SIGTERM, which the kernel drops: killed at once, not after the grace
check_true "server image: the boot ends within 1.5 s of its listen (+ the kill's 0.5 s), not 30 s" \
	[ "$(field srvimg '(.boot.seconds * 1000 - .boot.ready_ms) | floor')" -lt 2000 ]
check_true "server image: the whole probe far below --boot-seconds ($((t1 - t0)) ms)" [ $((t1 - t0)) -lt 15000 ]
# ... and one whose server traps SIGTERM and goes on: killed, not a confident safe
probe srvterm --boot-seconds 30 --image-map "$TOP/scripts/image-map" \
	--boot-cmd "node server.js --ignore-term" "$FIX/boot-server-image"
check "server image trapping SIGTERM: killed, inconclusive, low, warned" \
	"killed ready inconclusive low boot_killed shell_invocation_trace.boot_killed" \
	"$(field srvterm '"\(.boot.ended) \(.boot.ended_by) \(.verdict) \(.confidence) \(.reason) \(.warnings[0].id)"')"

# The ns backend: --boot-cmd after a build, ready once it listens.
t0=$(ms_now)
probe srvns --boot-seconds 30 --cmd "node build.js" --boot-cmd "node server.js" "$FIX/boot-server"
t1=$(ms_now)
check "ns server: ended at readiness, stopped by SIGTERM, safe, high" "ready stopped safe high" \
	"$(field srvns '"\(.boot.ended_by) \(.boot.ended) \(.verdict) \(.confidence)"')"
check_true "ns server: the boot ends within 1.5 s of its listen" \
	[ "$(field srvns '(.boot.seconds * 1000 - .boot.ready_ms) | floor')" -lt 1500 ]
check_true "ns server: the whole probe far below --boot-seconds ($((t1 - t0)) ms)" [ $((t1 - t0)) -lt 8000 ]
probe srvnsq --boot-seconds 30 --boot-quiet-ms 3000 --cmd "node build.js" --boot-cmd "node server.js" \
	"$FIX/boot-server"
check_true "ns server: --boot-quiet-ms 3000 waits 3 s after the listen" \
	[ "$(field srvnsq '(.boot.seconds * 1000 - .boot.ready_ms) | floor')" -ge 2900 ]
"$SBTRACE" probe -q --boot-quiet-ms -1 "$FIX/boot-server" > /dev/null 2> "$WORK/badquiet.err"
check "--boot-quiet-ms -1: exit 2, named" "2 1" "$? $(grep -c -- '--boot-quiet-ms' "$WORK/badquiet.err")"
probe srvnsterm --boot-seconds 30 --cmd "node build.js" --boot-cmd "node server.js --ignore-term" \
	"$FIX/boot-server"
check "ns server trapping SIGTERM: killed, not a confident safe" "killed ready inconclusive low boot_killed" \
	"$(field srvnsterm '"\(.boot.ended) \(.boot.ended_by) \(.verdict) \(.confidence) \(.reason)"')"
check_true "ns server trapping SIGTERM: the grace, not --boot-seconds" \
	[ "$(field srvnsterm '.boot.seconds * 10 | floor')" -lt 60 ]
probe notready --boot-seconds 2 --cmd "node build.js" --boot-cmd "sleep 30" "$FIX/boot-server"
check "a boot that never listens: its time limit" "time_limit null stopped" \
	"$(field notready '"\(.boot.ended_by) \(.boot.ready_ms) \(.boot.ended)"')"

# 7. npm start (package.json's start script) after a shell-free make build:
#    unsafe at boot, the script's line, and the exec form that needs no shell.
# (npm start exits by itself: the long deadline only spares a loaded machine a stopped boot)
probe npmstart --boot-seconds 30 "$FIX/npm-start"
check "npm start: unsafe, boot, the start script" "unsafe boot script start 6" \
	"$(field npmstart '"\(.verdict) \(.shell_invocation.locations[0].phase) \(.shell_invocation.locations[0].source.instruction) \(.shell_invocation.locations[0].source.script) \(.shell_invocation.locations[0].source.line)"')"
check "npm start: remediation" 'CMD ["node", "server.js"] ["node","server.js"]' \
	"$(field npmstart '"\(.shell_invocation.locations[0].remediation.text) \(.shell_invocation.locations[0].remediation.exec_form | tojson)"')"
check "npm start: the boot's source and argv" 'npm_start ["npm","start"]' \
	"$(field npmstart '"\(.boot.source) \(.boot.argv | tojson)"')"
# the same start command given without npm: no shell at all
probe bootcmd --boot-cmd "node server.js" "$FIX/npm-start"
check "--boot-cmd node server.js: safe, high, the boot ran" "safe high boot_cmd exited" \
	"$(field bootcmd '"\(.verdict) \(.confidence) \(.boot.source) \(.boot.ended)"')"

# 8. FROM node:20-slim, built and booted on the Debian-built stand-in.
probe node --image-map "$TOP/scripts/image-map" "$FIX/node-mapped"
check "node:20-slim mapped: built and booted, no shell: safe" "safe high true exited 0" \
	"$(field node '"\(.verdict) \(.confidence) \(.boot.ran) \(.boot.ended) \(.boot.exit_code)"')"
check "node:20-slim mapped: the input says which image stood in" "localhost/sbtrace-node:bookworm" \
	"$(field node '.inputs[] | select(.name == "image:node:20-slim") | .substituted_by')"
check "node:20-slim mapped: warned" "shell_invocation_trace.base_image_substituted" \
	"$(field node '[.warnings[].id] | map(select(. == "shell_invocation_trace.base_image_substituted")) | .[0]')"
check_true "node:20-slim mapped: the repo's Dockerfile untouched" \
	grep -q '^FROM node:20-slim$' "$FIX/node-mapped/Dockerfile"
probe nodemiss "$FIX/node-mapped"
check "node:20-slim unmapped: a typed failure that names --image-map" "base_image_missing true" \
	"$(field nodemiss '"\(.reason) \(.warnings[0].message | contains("--image-map"))"')"
"$SBTRACE" probe -q --image-map "bad map" "$FIX/node-mapped" > /dev/null 2> "$WORK/badmap.err"
check "--image-map without REF=LOCAL: exit 2" 2 $?
printf 'node:20=ok\nbroken line\n' > "$WORK/map"
"$SBTRACE" probe -q --image-map "$WORK/map" "$FIX/node-mapped" > /dev/null 2> "$WORK/badmap2.err"
check_true "--image-map FILE: a bad line is named FILE:LINE" grep -q "map:2:" "$WORK/badmap2.err"

# 9. --no-boot: the build alone, said in the report.
probe noboot --no-boot "$FIX/boot-shell-cmd"
check "--no-boot: no boot shell, boot skipped: not a confident safe (boot_not_run)" "inconclusive false no_boot shell_invocation_trace.boot_not_run" \
	"$(field noboot '"\(.verdict) \(.boot.ran) \(.boot.skipped) \(.warnings[0].id)"')"

# 10. --fail-on: the exit code says the verdict.
probe failu --fail-on unsafe "$FIX/boot-shell-cmd"
check "--fail-on unsafe, unsafe: exit 4" 4 "$PROBE_RC"
probe fails --fail-on unsafe "$FIX/boot-multistage"
check "--fail-on unsafe, safe: exit 0" 0 "$PROBE_RC"
probe faili --fail-on inconclusive "$FIX/failing"
check "--fail-on inconclusive, inconclusive: exit 5" "5 inconclusive" "$PROBE_RC $(field faili .verdict)"

# 11. SARIF: valid, and its results point at the Dockerfile's lines, from the
# root of the repository the fixtures are in (this checkout's, when it is a work tree).
[ -e "$TOP/.git" ] && in_repo=tests/fixtures/ || in_repo=
"$SBTRACE" probe -q --no-cache --boot-seconds 2 --format sarif "$FIX/boot-multistage" > "$WORK/multi.sarif" 2> /dev/null
validate_sarif "$WORK/multi.sarif"
check "SARIF: the builder's RUN, a note at Dockerfile:5" "note ${in_repo:+${in_repo}boot-multistage/}Dockerfile 5" \
	"$(jq -r '.runs[0].results[0] | "\(.level) \(.locations[0].physicalLocation.artifactLocation.uri) \(.locations[0].physicalLocation.region.startLine)"' "$WORK/multi.sarif")"
"$SBTRACE" probe -q --no-cache --boot-seconds 30 --format sarif "$FIX/npm-start" > "$WORK/npm.sarif" 2> /dev/null
validate_sarif "$WORK/npm.sarif"
check "SARIF: npm start, an error at package.json:6" "error ${in_repo:+${in_repo}npm-start/}package.json 6" \
	"$(jq -r '.runs[0].results[0] | "\(.level) \(.locations[0].physicalLocation.artifactLocation.uri) \(.locations[0].physicalLocation.region.startLine)"' "$WORK/npm.sarif")"

# 12. SIGINT during the boot: inconclusive, and nothing is left.
"$SBTRACE" probe -q --no-cache --boot-seconds 60 "$FIX/boot-sigterm" > "$WORK/int.json" 2> "$WORK/int.err" &
PID=$!
wait_for 60 sh -c "podman ps --format '{{.Names}}' | grep -q '^probe-.*-$PID-boot\$'" ||
	fail "SIGINT: the boot's container never started"
kill -INT "$PID"
wait "$PID"
check "SIGINT during the boot: a report, inconclusive" "0 inconclusive boot_interrupted" \
	"$? $(jq -r '"\(.verdict) \(.reason)"' "$WORK/int.json")"
validate_report "$WORK/int.json"

check "no container left" "" "$(podman ps -a --format '{{.Names}}' | grep '^probe-')"
check "no image left" "$IMAGES_BEFORE" "$(podman images -a -q | sort)"
check "no sandbox cgroup left" 0 "$(find "$CG2/sbtrace" -mindepth 1 -maxdepth 1 -name 'probe-*' 2> /dev/null | wc -l)"
check "no sandbox cgroup left in v1 hierarchies" 0 "$(awk '$0 ~ / - cgroup / { print $5 }' /proc/self/mountinfo |
	while read -r m; do find "$m/sbtrace" -mindepth 1 -maxdepth 1 -name 'probe-*' 2> /dev/null; done | wc -l)"
check "no container process left" "" "$(pgrep -x sleep -a | grep ' 60$')"
check "nothing loaded" 0 "$(nr_our_progs)"
finish
