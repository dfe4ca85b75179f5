#!/bin/sh
# The probe's SARIF log on real builds (issue 31): a repo in a subfolder of a
# repository points at its files from the repository root (%SRCROOT%, found by
# the nearest .git, a directory or a worktree's file), a final-stage RUN's
# remediation is a build stage (not its exec form), and a low-confidence
# answer's results are warnings that carry the confidence.
. "$(dirname "$0")/lib.sh"

podman_up
FIX="$TOP/tests/fixtures"

# sarif NAME ARGS...: the probe's SARIF log in $WORK/NAME.sarif, validated; status in RC
sarif() {
	_n=$1
	shift
	"$SBTRACE" probe -q --no-cache --format sarif "$@" > "$WORK/$_n.sarif" 2> "$WORK/$_n.err"
	RC=$?
	log "$_n: rc $RC, $(jq -c '.runs[0].properties' "$WORK/$_n.sarif" 2> /dev/null)"
	validate_sarif "$WORK/$_n.sarif"
}
# at NAME I: result I's "level uri:line"
at() {
	jq -r ".runs[0].results[$2] | \"\(.level) \(.locations[0].physicalLocation.artifactLocation | \"\(.uriBaseId) \(.uri)\"):\(.locations[0].physicalLocation.region.startLine)\"" \
		"$WORK/$1.sarif"
}
srcroot() { jq -r '.runs[0].originalUriBaseIds."%SRCROOT%".uri' "$WORK/$1.sarif"; }

# ---- a Dockerfile repo below a repository's root ------------------------------
mkdir -p "$WORK/mono/.git" "$WORK/mono/apps"
cp -a "$FIX/boot-final-run" "$WORK/mono/apps/result"
sarif mono --boot-seconds 2 "$WORK/mono/apps/result"
check "subfolder: the final stage's RUN, at the repository's apps/result/Dockerfile:3" \
	"error %SRCROOT% apps/result/Dockerfile:3" "$(at mono 0)"
check "subfolder: %SRCROOT% is the repository root" "file://$WORK/mono/" "$(srcroot mono)"
check "subfolder: the result carries the confidence" "high null" \
	"$(jq -r '.runs[0].results[0].properties | "\(.confidence) \(.reason)"' "$WORK/mono.sarif")"
check "final-stage RUN: the remedy is a build stage, said with its line" true "$(
	jq '.runs[0].results[0].message.text | contains("Dockerfile:3: RUN echo built > /built.txt runs in the final stage: move it to a build stage (FROM localhost/sbtrace-busybox:latest AS build) and COPY --from=build its output; the final image then needs neither a shell nor the tools the step runs")' \
		"$WORK/mono.sarif")"
check "final-stage RUN: no exec form offered" null \
	"$(jq -r '.runs[0].results[0].properties.exec_form' "$WORK/mono.sarif")"

# the report says the same: exec_form null, and the report is valid
"$SBTRACE" probe -q --no-cache --boot-seconds 2 "$WORK/mono/apps/result" > "$WORK/mono.json" 2> /dev/null
validate_report "$WORK/mono.json"
check "report: the final-stage RUN's remediation, no exec form" "null true" \
	"$(jq -r '.shell_invocation.locations[] | select(.source.line == 3) | .remediation | "\(.exec_form) \(.text | startswith("Dockerfile:3: RUN echo built > /built.txt runs in the final stage: "))"' "$WORK/mono.json")"

# ---- a worktree (.git is a file), a make repo in a folder with a space --------------
mkdir -p "$WORK/wt/sub dir"
echo "gitdir: /elsewhere/.git/worktrees/wt" > "$WORK/wt/.git"
cp "$FIX/make-shell/"* "$WORK/wt/sub dir/"
sarif wt --boot-cmd "sh -c true" "$WORK/wt/sub dir"
check "worktree: the recipe at sub%20dir/Makefile:2" "%SRCROOT% sub%20dir/Makefile:2" \
	"$(at wt 0 | cut -d' ' -f2-)"
check "worktree: %SRCROOT% is the worktree" "file://$WORK/wt/" "$(srcroot wt)"

# ---- no repository around: the repo itself is the root -----------------------------
cp -a "$FIX/make-shell" "$WORK/plain"
sarif plain --boot-cmd "sh -c true" "$WORK/plain"
check "no repository: the file relative to the repo" "%SRCROOT% Makefile:2" \
	"$(at plain 0 | cut -d' ' -f2-)"
check "no repository: %SRCROOT% is the repo" "file://$WORK/plain/" "$(srcroot plain)"

# ---- a low-confidence unsafe: the final stage's shell ran, then the build failed ---
mkdir "$WORK/mono/apps/broken"
printf 'FROM localhost/sbtrace-busybox:latest\nRUN echo a > /a\nRUN ["/bin/false"]\n' \
	> "$WORK/mono/apps/broken/Dockerfile"
sarif broken "$WORK/mono/apps/broken"
check "low confidence: the run's verdict" "unsafe low build_failed" \
	"$(jq -r '.runs[0].properties | "\(.verdict) \(.confidence) \(.reason)"' "$WORK/broken.sarif")"
check "low confidence: the shell is a warning, not an error" \
	"warning %SRCROOT% apps/broken/Dockerfile:2" "$(at broken 0)"
check "low confidence: its properties say so" "low build_failed" \
	"$(jq -r '.runs[0].results[0].properties | "\(.confidence) \(.reason)"' "$WORK/broken.sarif")"
check "low confidence: its message says so" true "$(
	jq '.runs[0].results[0].message.text | endswith("; confidence low (build_failed): other shells may have gone unseen")' \
		"$WORK/broken.sarif")"
finish
