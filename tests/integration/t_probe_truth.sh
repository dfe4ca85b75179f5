#!/bin/sh
# `sbtrace probe`'s verdict on what real repos are (issue 31): a boot that
# died is not a clean boot (a CMD that does not exist, one that cannot run);
# a package.json with a start script and no build is probed, not refused,
# and its boot is the answer (a shell of a script that start runs is that
# script's); a repo without a Dockerfile is answered by its
# boot, its build's shells a builder stage's. (The false safe of the microVM
# backend, which runs no boot: t_probe_qemu.sh.)
. "$(dirname "$0")/lib.sh"

podman_up
command -v npm > /dev/null || fail "npm missing (Debian's npm comes with 'make deps')"

# probe NAME ARGS...: report in $WORK/NAME.json (validated), exit code in PROBE_RC
probe() {
	_n=$1
	shift
	"$SBTRACE" probe -q --no-cache --boot-seconds 3 "$@" > "$WORK/$_n.json" 2> "$WORK/$_n.err"
	PROBE_RC=$?
	log "$_n: rc $PROBE_RC, $(jq -c '{verdict, confidence, reason, n: .shell_invocation.count, boot: .boot.ended, code: .boot.exit_code}' "$WORK/$_n.json" 2> /dev/null)"
	validate_report "$WORK/$_n.json"
}
field() { jq -r "$2" "$WORK/$1.json"; }

# --- a boot that died -------------------------------------------------------------
mkdir "$WORK/nocmd"
printf 'FROM localhost/sbtrace-busybox:latest\nCOPY app.txt /app.txt\nCMD ["/no/such/server"]\n' \
	> "$WORK/nocmd/Dockerfile"
echo app > "$WORK/nocmd/app.txt"
probe nocmd --fail-on inconclusive "$WORK/nocmd"
check "a CMD that does not exist (exit 127): boot_failed, never a confident safe" \
	"inconclusive low boot_failed" "$(field nocmd '"\(.verdict) \(.confidence) \(.reason)"')"
check "... --fail-on inconclusive: exit 5" 5 "$PROBE_RC"
check_true "... the message names the exit code and the Dockerfile's line" \
	sh -c "jq -r '.warnings[] | select(.id | endswith(\"boot_failed\")) | .message' '$WORK/nocmd.json' |
		grep -q 'Dockerfile:3.*exited 127.*command not found'"
sed -i 's|CMD \["/no/such/server"\]|CMD ["/app.txt"]|' "$WORK/nocmd/Dockerfile"
probe noexec "$WORK/nocmd"
check "a CMD that is not executable (exit 126): boot_failed" "inconclusive boot_failed 126" \
	"$(field noexec '"\(.verdict) \(.reason) \(.boot.exit_code)"')"
sed -i 's|CMD \["/app.txt"\]|CMD ["/bin/false"]|' "$WORK/nocmd/Dockerfile"
probe false "$WORK/nocmd"
check "a boot that exits 1 at once, before it was ready: boot_failed" "inconclusive boot_failed" \
	"$(field false '"\(.verdict) \(.reason)"')"
sed -i 's|CMD \["/bin/false"\]|CMD ["/bin/true"]|' "$WORK/nocmd/Dockerfile"
probe true "$WORK/nocmd"
check "a boot that exits 0: a clean boot, safe, high" "safe high null" \
	"$(field true '"\(.verdict) \(.confidence) \(.reason)"')"

# --- --file: a Dockerfile by another name (docker build -f) -----------------------
mkdir -p "$WORK/named/deploy"
printf 'FROM localhost/sbtrace-busybox:latest\nCMD ["/bin/true"]\n' > "$WORK/named/Dockerfile"
printf 'FROM localhost/sbtrace-busybox:latest\nRUN echo built > /built\nCMD ["/bin/true"]\n' \
	> "$WORK/named/deploy/Dockerfile.prod"
probe named-default "$WORK/named"
check "a repo's Dockerfile without a shell: safe (the other one is not looked at)" "safe high" \
	"$(field named-default '"\(.verdict) \(.confidence)"')"
probe named --file deploy/Dockerfile.prod "$WORK/named"
check "--file deploy/Dockerfile.prod: its RUN's shell, unsafe, at its line in its file" \
	"0 unsafe high deploy/Dockerfile.prod 2 RUN" \
	"$PROBE_RC $(field named '"\(.verdict) \(.confidence) \(.shell_invocation.locations[0].source | "\(.file) \(.line) \(.instruction)")"')"
check "... the plan says which Dockerfile, and it is an input (its digest)" "true $(sha256sum < "$WORK/named/deploy/Dockerfile.prod" | cut -d' ' -f1)" \
	"$(field named '"\(.command.why | startswith("deploy/Dockerfile.prod: the final stage")) \(.inputs[] | select(.name == "deploy/Dockerfile.prod") | .sha256)"')"
check_true "... the remedy names the file and line" sh -c \
	"jq -r '.shell_invocation.locations[0].remediation.text' '$WORK/named.json' | grep -q '^deploy/Dockerfile.prod:2: RUN echo built > /built runs in the final stage'"
"$SBTRACE" probe -q --no-cache --boot-seconds 3 --format sarif -f "$WORK/named/deploy/Dockerfile.prod" \
	"$WORK/named" > "$WORK/named.sarif" 2> "$WORK/named-sarif.err"
check "... SARIF (-f as an absolute path in the repo): the result's URI is the file's" \
	"deploy/Dockerfile.prod 2" \
	"$(jq -r '.runs[0].results[0].locations[0].physicalLocation | "\(.artifactLocation.uri) \(.region.startLine)"' "$WORK/named.sarif")"
"$SBTRACE" probe -q --no-cache --file Containerfile "$WORK/named" > "$WORK/named-missing.json" 2> "$WORK/named-missing.err"
check "--file naming no file: exit 2, nothing else built instead, no report" "2 0" \
	"$? $(wc -c < "$WORK/named-missing.json")"
check_true "... the message says which file and where it was looked for" \
	grep -q -- "--file Containerfile: no such regular file in $WORK/named" "$WORK/named-missing.err"
"$SBTRACE" probe -q --no-cache --file ../Dockerfile "$WORK/named/deploy" 2> "$WORK/named-out.err" > /dev/null
check "--file climbing out of the repo: exit 2" 2 "$?"

# --- npm start only: probed, the boot is the answer -------------------------------
mkdir "$WORK/startonly"
printf '{ "name": "s", "version": "1.0.0", "private": true, "scripts": { "start": "node server.js" } }\n' \
	> "$WORK/startonly/package.json"
printf 'console.log("up");\n' > "$WORK/startonly/server.js"
probe startonly "$WORK/startonly"
check "start script, no build: probed (exit 0), kind npm_start" "0 npm_start" \
	"$PROBE_RC $(field startonly .command.kind)"
check "... npm start runs the script through sh -c: unsafe, high, at boot, the start script" \
	"unsafe high boot start" \
	"$(field startonly '"\(.verdict) \(.confidence) \(.shell_invocation.locations[0].phase) \(.shell_invocation.locations[0].source.script)"')"
check "... no dependencies: nothing installed (the build is true)" '["true"]' \
	"$(jq -c .command.argv "$WORK/startonly.json")"
probe startcmd --boot-cmd "node server.js" "$WORK/startonly"
check "... the same start without npm: safe, high" "safe high" \
	"$(field startcmd '"\(.verdict) \(.confidence)"')"

# a start script that runs another: each shell is its own script's, with its line
mkdir "$WORK/serve"
printf '{\n  "name": "s",\n  "version": "1.0.0",\n  "scripts": {\n    "start": "npm run serve",\n    "serve": "node server.js"\n  }\n}\n' \
	> "$WORK/serve/package.json"
printf 'console.log("up");\n' > "$WORK/serve/server.js"
probe serve "$WORK/serve"
check "start runs serve: npm run serve is start's (line 5), node server.js is serve's (line 6)" \
	"node server.js:serve:6 npm run serve:start:5" \
	"$(field serve '[.shell_invocation.locations[] | "\(.command):\(.source.script):\(.source.line)"] | sort | join(" ")')"

# --- no Dockerfile: the boot's verdict, the build's shells a builder stage's ------
mkdir "$WORK/mk"
printf 'all:\n\techo built > out.txt && cp out.txt out2.txt\n' > "$WORK/mk/Makefile"
probe mk --boot-cmd /bin/true "$WORK/mk"
check "make with a shell recipe, a boot without one: safe, high, the shell listed as the builder's" \
	"safe high 1 false" \
	"$(field mk '"\(.verdict) \(.confidence) \(.shell_invocation.count) \(.shell_invocation.locations[0].affects_final_image)"')"
check_true "... and the report says the build is a builder stage's evidence" \
	sh -c "jq -e '[.warnings[].id] | index(\"shell_invocation_trace.builder_stage_shells\")' '$WORK/mk.json' > /dev/null"
probe mknoboot "$WORK/mk"
check "... without a boot: inconclusive, boot_not_run, naming --boot-cmd" "inconclusive boot_not_run true" \
	"$(field mknoboot '"\(.verdict) \(.reason) \(.warnings[] | select(.id | endswith("boot_not_run")) | .message | contains("--boot-cmd"))"')"
finish
