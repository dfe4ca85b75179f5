#!/bin/sh
# sbtrace probe --migrate (issue 28): the distroless migration of a
# Dockerfile's final stage, built and booted under trace on the shell-less
# stand-in of the distroless nodejs image (scripts/base-images.sh), with every
# failed exec as evidence. Six fixtures (tests/fixtures/migrate-*):
#  - CMD npm start with a simple start script, a shell-form CMD, a shell-form
#    HEALTHCHECK, a final-stage RUN npm ci whose postinstall shells out: the
#    right patch, and verified on the stand-in;
#  - an app that calls child_process.exec at start: converted, not verified,
#    the failed exec of /bin/sh (ENOENT) with its chain;
#  - an ENTRYPOINT script with logic: unconverted, with its line, never checked.
# The stand-in has no shell by the probe's own identity check (sbt-shellscan,
# the probe's classifiers), said here too; the repo is never written; the
# patch applies to the repo's Dockerfile (patch --dry-run) and SARIF carries it.
. "$(dirname "$0")/lib.sh"

podman_up images

FIX="$TOP/tests/fixtures"
SCAN="$TOP/build/tests/sbt-shellscan"
STANDINS=${SBT_BASE_IMAGES:-localhost/sbtrace}
BASE="$STANDINS-distroless-nodejs:nonroot"
MAP="$WORK/image-map"
sed "s#=localhost/sbtrace-#=$STANDINS-#" "$TOP/scripts/image-map" > "$MAP"

# migrate NAME ARGS...: a copy of fixture migrate-NAME probed with --migrate;
# the report in $WORK/NAME.json (validated), the exit code in RC
migrate() {
	_n=$1
	shift
	rm -rf "${WORK:?}/$_n" && cp -a "$FIX/migrate-$_n" "$WORK/$_n"
	find "$WORK/$_n" -exec stat -c '%n %s %Y' {} + | sort > "$WORK/$_n.before"
	"$SBTRACE" probe -q --no-cache --boot-seconds 5 --image-map "$MAP" --migrate \
		--distroless-base "$BASE" "$@" "$WORK/$_n" > "$WORK/$_n.json" 2> "$WORK/$_n.err"
	RC=$?
	log "$_n: rc $RC, $(jq -c '{verdict, m: (.migration | {start, verified, why, un: [.unconverted[] | "\(.line) \(.what)"], fe: [.failed_execs[] | "\(.shell) \(.errno) \(.chain)"]})}' "$WORK/$_n.json" 2> /dev/null)"
	[ -s "$WORK/$_n.json" ] || log "$_n: stderr: $(tail -c 1500 "$WORK/$_n.err")"
	validate_report "$WORK/$_n.json"
	find "$WORK/$_n" -exec stat -c '%n %s %Y' {} + | sort > "$WORK/$_n.after"
	check "$_n: the repo is not written" "" "$(diff "$WORK/$_n.before" "$WORK/$_n.after")"
}
field() { jq -r "$2" "$WORK/$1.json"; }
# applies NAME: the patch applies to the repo's Dockerfile, and gives the migrated one
applies() {
	field "$1" .migration.dockerfile_patch > "$WORK/$1.patch"
	cp "$WORK/$1/Dockerfile" "$WORK/$1.Dockerfile"
	(cd "$WORK" && patch -s "$1.Dockerfile" < "$1.patch") > /dev/null 2>&1 || { echo "does not apply"; return; }
	tail -n +"$(($(wc -l < "$WORK/$1/Dockerfile") + 1))" "$WORK/$1.Dockerfile" | grep -v '^#' | grep -v '^$' | tr '\n' '|' | sed 's/|$//'
}

command -v patch > /dev/null || fail "patch missing (make deps)"

# ---- the stand-in has no shell, by the probe's own identity check -------------
_d=$(podman image mount "$BASE") || fail "cannot mount $BASE"
"$SCAN" "$_d" > "$WORK/scan.out" 2>&1
check "the check's base $BASE: no file is a shell (sbt-shellscan, the probe's classifiers)" 0 "$?"
podman image unmount "$BASE" > /dev/null

# ---- 1. CMD npm start, a simple start script -----------------------------------
migrate npm-start
check "npm start: the original is unsafe (npm start runs sh -c at boot)" unsafe "$(field npm-start .verdict)"
check "npm start: the start script's own command under node's ENTRYPOINT" 'CMD ["server.js"]' \
	"$(field npm-start .migration.start)"
check "npm start: the new stage" \
	"FROM $BASE AS sbtrace-distroless|COPY --from=0 /app /app|WORKDIR /app|EXPOSE 8080|USER nonroot|CMD [\"server.js\"]" \
	"$(applies npm-start)"
check "npm start: verified on the stand-in (safe, high, ready, no failed exec)" \
	"true safe high true 0" \
	"$(field npm-start '.migration | "\(.verified) \(.verification.verdict) \(.verification.confidence) \(.verification.boot.ready_ms != null) \(.failed_execs | length)"')"
check "npm start: the changes name the line" "7 npm start" \
	"$(field npm-start '.migration.changes[] | select(.what == "npm start") | "\(.line) \(.what)"')"
check "npm start: exit 0 (no --fail-on)" 0 "$RC"

# ---- 2. a shell-form CMD ---------------------------------------------------------
migrate shell-cmd
check "shell-form CMD: CMD [\"server.js\"], ENV kept" \
	"FROM $BASE AS sbtrace-distroless|ENV NODE_ENV=production|COPY --from=0 /app /app|WORKDIR /app|USER nonroot|CMD [\"server.js\"]" \
	"$(applies shell-cmd)"
check "shell-form CMD: verified" "true" "$(field shell-cmd .migration.verified)"

# ---- 3. a HEALTHCHECK in shell form ----------------------------------------------
migrate healthcheck
check "HEALTHCHECK: its exec form, node by its path, the flags kept" \
	'HEALTHCHECK --interval=1s --timeout=3s CMD ["/nodejs/bin/node", "health.js"]' \
	"$(applies healthcheck | tr '|' '\n' | grep '^HEALTHCHECK')"
check "HEALTHCHECK: verified (the check's boot ready)" "true" "$(field healthcheck .migration.verified)"

# ---- 4. a final-stage RUN npm ci whose install script shells out -----------------
migrate run-npm-ci
check "RUN npm ci: the original's shell is the final stage's RUN" "RUN 7 true" \
	"$(field run-npm-ci '[.shell_invocation.locations[] | select(.phase == "build")][0] | "\(.source.instruction) \(.source.line) \(.affects_final_image)"')"
check "RUN npm ci: it stays in the old stage, now a build stage; the new one copies /app" \
	"COPY --from=0 /app /app" "$(applies run-npm-ci | tr '|' '\n' | grep '^COPY')"
check "RUN npm ci: verified: its shells ran in the build stage, none in the final image" "true 2 0" \
	"$(field run-npm-ci '"\(.migration.verified) \(.migration.verification.shells) \(.migration.verification.affecting_final_image)"')"

# ---- 5. the app calls child_process.exec at start -------------------------------
migrate child-exec --fail-on unsafe
check "child_process.exec: converted, not verified" 'CMD ["server.js"] false' \
	"$(field child-exec '"\(.migration.start) \(.migration.verified)"')"
check "... the failed exec of the shell, its chain (node ran it) and command" \
	"sh /bin/sh ENOENT node echo warm-up boot" \
	"$(field child-exec '.migration.failed_execs[0] | "\(.shell) \(.filename) \(.errno) \(.chain | split(">") | last) \(.command) \(.phase)"')"
check_true "... and what it tells" sh -c "jq -r '.migration.failed_execs[0].why' '$WORK/child-exec.json' | grep -q -- '-> sh: the app tries /bin/sh (ENOENT) at boot'"
check "... --fail-on unsafe: exit 4" 4 "$RC"

# ---- 6. an ENTRYPOINT script with logic ------------------------------------------
migrate entrypoint-script --fail-on inconclusive
check "ENTRYPOINT script: unconverted, with its line; not checked" \
	"5 ENTRYPOINT /app/docker-entrypoint.sh false null" \
	"$(field entrypoint-script '.migration | "\(.unconverted[0].line) \(.unconverted[0].what) \(.verified) \(.verification)"')"
check "... the patch says the start is not converted" 1 \
	"$(field entrypoint-script .migration.dockerfile_patch | grep -c '^+# sbtrace: the start command is not converted')"
check "... --fail-on inconclusive: exit 4 (the original is unsafe)" 4 "$RC"

# ---- SARIF: the patch as the fix of the final image's result ------------------------
"$SBTRACE" probe -q --no-cache --boot-seconds 5 --image-map "$MAP" --migrate --distroless-base "$BASE" \
	--format sarif --migrate-out "$WORK/npm.patch" "$WORK/npm-start" > "$WORK/npm.sarif" 2> "$WORK/npm-sarif.err"
validate_sarif "$WORK/npm.sarif"
check "SARIF: the boot's result carries the migration as a fix at the Dockerfile's end" \
	"Dockerfile $(wc -c < "$WORK/npm-start/Dockerfile") 0 true" \
	"$(jq -r '[.runs[0].results[] | select(.fixes)][0].fixes[0] | "\(.artifactChanges[0].artifactLocation.uri) \(.artifactChanges[0].replacements[0].deletedRegion.charOffset) \(.artifactChanges[0].replacements[0].deletedRegion.charLength) \(.artifactChanges[0].replacements[0].insertedContent.text | contains("CMD [\"server.js\"]"))"' "$WORK/npm.sarif")"
check "--migrate-out: the patch" "$(field npm-start .migration.dockerfile_patch)" "$(cat "$WORK/npm.patch")"

# ---- what --migrate refuses -------------------------------------------------------
mkdir -p "$WORK/mk" && printf 'all:\n\ttrue\n' > "$WORK/mk/Makefile"
"$SBTRACE" probe -q --no-cache --migrate "$WORK/mk" > /dev/null 2> "$WORK/mk.err"
check "--migrate of a repo without a Dockerfile: exit 2" 2 "$?"
"$SBTRACE" probe -q --no-cache --distroless-base x "$WORK/mk" > /dev/null 2> "$WORK/mk2.err"
check "--distroless-base without --migrate: exit 2" 2 "$?"
finish
