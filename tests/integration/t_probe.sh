#!/bin/sh
# `sbtrace probe` end to end on the fixture repos: verdicts, locations,
# typed failures, the content cache, the first exec in the trace, refusals.
. "$(dirname "$0")/lib.sh"

# The podman backend (Dockerfile builds): project containers.conf and the
# local base image localhost/sbtrace-busybox:latest. It must work: a missing
# podman or runc is a failure (make deps installs them), never a skip.
podman_up

FIX="$TOP/tests/fixtures"
CACHE="$WORK/cache"
command -v npm > /dev/null || skip "npm missing (Debian's npm, or the machine's Node.js)"

# probe NAME ARGS...: run the probe, report in $WORK/NAME.json, exit code in PROBE_RC
probe() {
	_n=$1
	shift
	"$SBTRACE" probe -q --cache-dir "$CACHE" "$@" > "$WORK/$_n.json" 2> "$WORK/$_n.err"
	PROBE_RC=$?
	log "$_n: rc $PROBE_RC, $(jq -c '{verdict, confidence, reason, count: .shell_invocation.count, hit: .cache.hit, t: .timings_ms}' "$WORK/$_n.json" 2> /dev/null)"
	validate_report "$WORK/$_n.json"
}
field() { jq -r "$2" "$WORK/$1.json"; }

# npm runs the build script through sh -c, and the location names npm. Without
# a Dockerfile the build is a builder stage's evidence and the verdict is the
# boot's: none here (no start script), so not a confident answer.
probe npm --trace-out "$WORK/npm.events" "$FIX/npm-shell"
check "npm: exit 0" 0 "$PROBE_RC"
check "npm, no boot: inconclusive, boot_not_run" "inconclusive low boot_not_run" \
	"$(field npm '"\(.verdict) \(.confidence) \(.reason)"')"
check "npm: its build shell is evidence for a builder stage" "false shell_invocation_trace.builder_stage_shells" \
	"$(field npm '"\(.shell_invocation.locations[0].affects_final_image) \([.warnings[].id | select(endswith("builder_stage_shells"))][0])"')"
check "npm: the shell is npm's sh -c" "sh command" \
	"$(field npm '.shell_invocation.locations[0] | "\(.shell) \(.kind)"')"
check_true "npm: its location names npm" sh -c "jq -r '.shell_invocation.locations[0].chain' '$WORK/npm.json' | grep -q npm"
check "npm: inputs digested" "package.json $(sha256sum "$FIX/npm-shell/package.json" | cut -d' ' -f1)" \
	"$(field npm '.inputs[] | select(.name == "package.json") | "\(.name) \(.sha256)"')"
check "npm: command" '["npm","run","build"]' "$(jq -c .command.argv "$WORK/npm.json")"
check "npm: repo untouched (the build wrote into an overlay)" "" "$(ls "$FIX/npm-shell" | grep dist)"
check "npm: the very first exec in the sandbox is traced (npm)" "1 npm" \
	"$(jq -r 'select(.event == "ProcessExec")' "$WORK/npm.events" | jq -s -r '.[0] | "\(.seq) \(.filename | split("/") | last)"')"
validate_schema "$WORK/npm.events"

# The verdict of a repo without a Dockerfile is its boot's (--boot-cmd).
probe noshell --boot-cmd /bin/true "$FIX/make-noshell"
check "make without shell, its boot none either: safe, high" "safe high 0" \
	"$(field noshell '"\(.verdict) \(.confidence) \(.shell_invocation.count)"')"
probe noshell-noboot "$FIX/make-noshell"
check "make without shell, no boot: not a confident safe (boot_not_run)" "inconclusive low boot_not_run" \
	"$(field noshell-noboot '"\(.verdict) \(.confidence) \(.reason)"')"

probe makeshell "$FIX/make-shell"
check "make recipe with &&: found, a builder stage's (no boot: inconclusive)" "inconclusive sh command true false" \
	"$(field makeshell '"\(.verdict) \(.shell_invocation.locations[0].shell) \(.shell_invocation.locations[0].kind) \(.shell_invocation.locations[0].chain | endswith("make")) \(.shell_invocation.locations[0].affects_final_image)"')"
probe makeshell-boot --boot-cmd "/bin/true" "$FIX/make-shell"
check "make recipe with &&, a boot without a shell: safe (the runtime runs none)" "safe high 1 0" \
	"$(field makeshell-boot '"\(.verdict) \(.confidence) \(.shell_invocation.count) \(.shell_invocation.affecting_final_image)"')"
probe makeshell-bootsh --boot-cmd "/bin/sh -c /bin/true" "$FIX/make-shell"
check "make, a boot that runs sh -c: unsafe, high, the boot's shell" "unsafe high 1" \
	"$(field makeshell-bootsh '"\(.verdict) \(.confidence) \(.shell_invocation.by_phase.boot)"')"

probe script "$FIX/sh-script"
check "#!/bin/sh build script: shebang, a builder stage's" "inconclusive shebang false" \
	"$(field script '"\(.verdict) \(.shell_invocation.locations[0].kind) \(.shell_invocation.locations[0].affects_final_image)"')"

probe failing "$FIX/failing"
check "failing build: still a report, exit 0" 0 "$PROBE_RC"
check "failing build: low, build_failed, inconclusive" "low build_failed inconclusive" \
	"$(field failing '"\(.confidence) \(.reason) \(.verdict)"')"
check "failing build: warning id" "shell_invocation_trace.build_failed" \
	"$(field failing '.warnings[0].id')"
check_true "warning ids match the pattern" sh -c "jq -r '.warnings[].id' '$WORK/failing.json' | grep -qE '^[a-z][a-z0-9_]*\.[a-z][a-z0-9_]*$'"

# Dockerfile builder stage: podman builds it in the sandbox's cgroup, each RUN
# step's container in a cgroup below it (--cgroup-parent), all traced.
IMAGES_BEFORE=$(podman images -a -q 2> /dev/null | wc -l)
probe docker --target builder --no-boot --trace-out "$WORK/docker.events" "$FIX/dockerfile-builder"
check "Dockerfile: exit 0" 0 "$PROBE_RC"
check "Dockerfile: unsafe, high, built with podman" "unsafe high null dockerfile builder podman" \
	"$(field docker '"\(.verdict) \(.confidence) \(.reason) \(.command.kind) \(.command.target) \(.command.argv[0])"')"
check "Dockerfile: the shell-form RUN is a sh -c location (busybox's, the image's /bin/sh)" 1 \
	"$(field docker '[.shell_invocation.locations[] | select(.shell == "busybox sh" and .multicall == "busybox" and .kind == "command" and any(.argv[]; . == "cp out.txt out2.txt && echo built"))] | length')"
check "Dockerfile: the exec-form RUN's cp is traced, and is no shell" "1 true" \
	"$(jq -s -r '[.[] | select(.event == "ProcessExec" and .argv == ["/bin/cp", "src.txt", "out.txt"])] | "\(length) \(all(.[]; .shell == null))"' "$WORK/docker.events")"
check "Dockerfile: the first exec is podman, the RUN steps run in a cgroup below it" "podman true" \
	"$(jq -s -r '[.[] | select(.event == "ProcessExec")] | (.[0]) as $p | "\($p.comm) \(any(.[]; .comm == "cp" and .cgroup_id != $p.cgroup_id))"' "$WORK/docker.events")"
check "Dockerfile: base image id recorded as an input" \
	"$(podman image inspect --format '{{.Id}}' localhost/sbtrace-busybox:latest 2> /dev/null)" \
	"$(field docker '.inputs[] | select(.name == "image:localhost/sbtrace-busybox:latest") | .sha256')"
check "Dockerfile: the built image is removed" "$IMAGES_BEFORE" "$(podman images -a -q 2> /dev/null | wc -l)"
validate_schema "$WORK/docker.events"

probe nobase "$FIX/dockerfile-missing-base"
check "Dockerfile, base image not local: typed failure" "low base_image_missing inconclusive dockerfile" \
	"$(field nobase '"\(.confidence) \(.reason) \(.verdict) \(.command.kind)"')"
check "Dockerfile, base image not local: warning" "shell_invocation_trace.base_image_missing true" \
	"$(field nobase '.warnings[0] | "\(.id) \(.message | contains("sbtrace-no-such-image"))"')"

# --cmd: split with simple quoting, never a shell.
probe cmd --cmd "/bin/echo 'a b' c" "$FIX/make-noshell"
check "--cmd words" '["/bin/echo","a b","c"]' "$(jq -c .command.argv "$WORK/cmd.json")"
# one program and nothing else: no shell, but nothing says a clean build would not do more
check "--cmd: one program, no shell: not a confident safe" "inconclusive low build_did_nothing 0" \
	"$(field cmd '"\(.verdict) \(.confidence) \(.reason) \(.shell_invocation.count)"')"
probe cmd2 --cmd "make -B" --boot-cmd /bin/true "$FIX/make-noshell"
check "--cmd make -B: programs run, no shell" "safe high 0" \
	"$(field cmd2 '"\(.verdict) \(.confidence) \(.shell_invocation.count)"')"

# The cache: a warm run answers without a sandbox (no trace file appears).
probe warm --trace-out "$WORK/warm.events" --boot-cmd /bin/true "$FIX/make-noshell"
check "warm: cache hit" "true safe" "$(field warm '"\(.cache.hit) \(.verdict)"')"
check "warm: same key" "$(field noshell .cache.key)" "$(field warm .cache.key)"
check_true "warm: no sandbox, no trace" [ ! -e "$WORK/warm.events" ]
echo '{"broken": ' > "$CACHE/$(field noshell .cache.key).json"
probe corrupt --boot-cmd /bin/true "$FIX/make-noshell"
check "corrupt entry: ignored" "false safe" "$(field corrupt '"\(.cache.hit) \(.verdict)"')"
check "corrupt entry: rewritten" "$(field noshell .cache.key)" \
	"$(jq -r .cache.key "$CACHE/$(field noshell .cache.key).json")"
probe nocache --no-cache "$FIX/make-noshell"
check "--no-cache: runs" false "$(field nocache .cache.hit)"

# Refusals: exit 2, a message listing what was looked for.
mkdir "$WORK/empty"
"$SBTRACE" probe -q "$WORK/empty" > "$WORK/empty.out" 2> "$WORK/empty.err"
check "nothing to build: exit 2" 2 $?
check_true "nothing to build: says what it looked for" grep -q "package.json" "$WORK/empty.err"
"$SBTRACE" probe -q "$WORK/no-such-repo" > /dev/null 2>&1
check "missing repo: exit 2" 2 $?
"$SBTRACE" probe -q --cmd "echo 'unterminated" "$FIX/make-noshell" > /dev/null 2> "$WORK/q.err"
check "bad --cmd quoting: exit 2" 2 $?

check "no sandbox cgroup left" 0 "$(find "$CG2/sbtrace" -mindepth 1 -maxdepth 1 -name 'probe-*' 2> /dev/null | wc -l)"
# runc mirrors the podman sandbox's cgroups into the v1 hierarchies (hybrid systems)
check "no sandbox cgroup left in v1 hierarchies" 0 "$(awk '$0 ~ / - cgroup / { print $5 }' /proc/self/mountinfo |
	while read -r m; do find "$m/sbtrace" -mindepth 1 -maxdepth 1 -name 'probe-*' 2> /dev/null; done | wc -l)"
check "no overlay left" 0 "$(grep -c sbtrace-probe /proc/self/mountinfo)"
check "nothing loaded" 0 "$(nr_our_progs)"
finish
