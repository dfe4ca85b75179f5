#!/bin/sh
# npm runs a dependency's lifecycle scripts through `sh -c` in the package's
# directory: the probe's build location names the package that ran it
# (name@version from the lockfile), scoped names included, and the same
# script text from two packages is two locations. No network at all: the
# dependencies are tarballs the test packs (`npm pack`), installed from
# `file:` entries of a lockfile v3 whose integrity the test computes.
. "$(dirname "$0")/lib.sh"

command -v npm > /dev/null || skip "npm missing (Debian's npm, or the machine's Node.js)"

APP="$WORK/app"
mkdir -p "$WORK/src/dep" "$WORK/src/sub" "$APP"
# the same script in both: two packages, two locations
cat > "$WORK/src/dep/package.json" << 'J'
{ "name": "dep", "version": "1.0.0", "scripts": { "postinstall": "echo postinstall > done.txt" } }
J
cat > "$WORK/src/sub/package.json" << 'J'
{ "name": "@sbt/sub", "version": "2.0.0", "scripts": { "postinstall": "echo postinstall > done.txt" } }
J
(cd "$APP" && npm pack --silent ../src/dep ../src/sub > /dev/null 2>&1) ||
	fail "npm pack of the fixture's dependencies failed"
# integrity FILE: the lockfile's sha512 of a tarball (what npm ci checks)
integrity() {
	node -e 'process.stdout.write("sha512-" + require("crypto").createHash("sha512")
		.update(require("fs").readFileSync(process.argv[1])).digest("base64"))' "$APP/$1"
}
cat > "$APP/package.json" << 'J'
{ "name": "app", "version": "0.1.0", "private": true,
  "dependencies": { "dep": "file:dep-1.0.0.tgz", "@sbt/sub": "file:sbt-sub-2.0.0.tgz" } }
J
cat > "$APP/package-lock.json" << J
{
  "name": "app", "version": "0.1.0", "lockfileVersion": 3, "requires": true,
  "packages": {
    "": { "name": "app", "version": "0.1.0",
          "dependencies": { "@sbt/sub": "file:sbt-sub-2.0.0.tgz", "dep": "file:dep-1.0.0.tgz" } },
    "node_modules/@sbt/sub": { "version": "2.0.0", "resolved": "file:sbt-sub-2.0.0.tgz",
                               "integrity": "$(integrity sbt-sub-2.0.0.tgz)", "hasInstallScript": true },
    "node_modules/dep": { "version": "1.0.0", "resolved": "file:dep-1.0.0.tgz",
                          "integrity": "$(integrity dep-1.0.0.tgz)", "hasInstallScript": true }
  }
}
J
# npm asks no registry: no audit, no funding or update notice, offline
printf 'audit=false\nfund=false\nupdate-notifier=false\noffline=true\n' > "$APP/.npmrc"

"$SBTRACE" probe --no-cache --cmd "npm ci" "$APP" > "$WORK/pkg.json" 2> "$WORK/pkg.err"
rc=$?
log "pkg: rc $rc, $(jq -c '{verdict, confidence, reason, count: .shell_invocation.count}' "$WORK/pkg.json" 2> /dev/null)"
validate_report "$WORK/pkg.json"
[ "$rc" -eq 0 ] || sed 's/^/  /' "$WORK/pkg.err" >&2
field() { jq -r "$1" "$WORK/pkg.json"; }
# loc PACKAGE: that package's location, phase and final-image flag
loc() { field ".shell_invocation.locations[] | select(.package == \"$1\") | \"\(.command) \(.phase) \(.affects_final_image)\""; }

check "pkg: exit 0" 0 "$rc"
# no Dockerfile: npm ci's shells are a builder stage's; no start script, no boot
check "pkg: a dependency's shell found; no boot: inconclusive" "inconclusive low boot_not_run" \
	"$(field '"\(.verdict) \(.confidence) \(.reason)"')"
check "pkg: the location names dep@1.0.0" "echo postinstall > done.txt build false" "$(loc dep@1.0.0)"
check "pkg: a scoped package by its scoped name" "echo postinstall > done.txt build false" \
	"$(loc @sbt/sub@2.0.0)"
check "pkg: the same text from two packages is two locations" 2 \
	"$(field '[.shell_invocation.locations[] | select(.command == "echo postinstall > done.txt")] | length')"
check "pkg: a dependency's command has no exec-form remediation" "null" \
	"$(field '[.shell_invocation.locations[] | select(.package != null) | .remediation] | unique | .[0]')"
check "pkg: the repo untouched (npm ci wrote into the overlay)" "" "$(ls "$APP" | grep node_modules)"

# The same install as a Dockerfile's exec-form RUN step (the node stand-in, no network: the
# tarballs are in the build context): the location is that RUN line's, in the final image.
if PODMAN_ENV=$("$TOP/scripts/podman-setup.sh"); then
	eval "$PODMAN_ENV"
else
	fail "scripts/podman-setup.sh failed (podman and runc come with 'make deps')"
fi
cp -a "$APP" "$WORK/dapp"
cat > "$WORK/dapp/Dockerfile" << 'D'
FROM node:20-slim
WORKDIR /app
COPY . .
RUN ["npm", "ci"]
CMD ["node", "-e", "console.log('up')"]
D
"$SBTRACE" probe --no-cache --image-map "$TOP/scripts/image-map" "$WORK/dapp" \
	> "$WORK/dpkg.json" 2> "$WORK/dpkg.err"
rc=$?
log "dpkg: rc $rc, $(jq -c '{verdict, confidence, reason, count: .shell_invocation.count}' "$WORK/dpkg.json" 2> /dev/null)"
validate_report "$WORK/dpkg.json"
[ "$rc" -eq 0 ] || sed 's/^/  /' "$WORK/dpkg.err" >&2
dloc() { jq -r ".shell_invocation.locations[] | select(.package == \"$1\") | \"\(.source.instruction) \(.source.line) \(.phase) \(.affects_final_image)\"" "$WORK/dpkg.json"; }
check "dpkg: exit 0" 0 "$rc"
check "dpkg: unsafe, confident" "unsafe high" "$(jq -r '"\(.verdict) \(.confidence)"' "$WORK/dpkg.json")"
check "dpkg: dep's postinstall at the RUN line, in the final image" "RUN 4 build true" "$(dloc dep@1.0.0)"
check "dpkg: the scoped one too" "RUN 4 build true" "$(dloc @sbt/sub@2.0.0)"
# the RUN is in exec form already and npm still runs sh: the remedy moves the step
check "dpkg: the remediation is a build stage, no exec form" \
	'null Dockerfile:4: RUN ["npm", "ci"] runs in the final stage: move it to a build stage (FROM node:20-slim AS build) and COPY --from=build its output; the final image then needs neither a shell nor npm' \
	"$(jq -r '[.shell_invocation.locations[] | select(.package != null) | .remediation] | unique | .[] | "\(.exec_form) \(.text)"' "$WORK/dpkg.json")"

check "no sandbox cgroup left" 0 "$(find "$CG2/sbtrace" -mindepth 1 -maxdepth 1 -name 'probe-*' 2> /dev/null | wc -l)"
check "no overlay left" 0 "$(grep -c sbtrace-probe /proc/self/mountinfo)"
finish
