#!/bin/sh
# The probe's JSON schemas against samples, with Debian's /usr/bin/jsonschema
# (python3-jsonschema, make deps; not whatever python is first on PATH):
#   - every report sample (tests/fixtures/reports/*.json) is valid against
#     userspace/schema/probe-report.schema.json, and every broken copy of one
#     below (one defect each) is refused, for the reason it names;
#   - with SARIF_DIR: every *.sarif there (test_sarif's logs of those samples)
#     is valid against the OASIS SARIF 2.1.0 schema (tests/schema/), and broken
#     copies are refused: a check that cannot fail proves nothing.
# check-schemas.sh [SARIF_DIR]
set -u

TOP=$(cd "$(dirname "$0")/.." && pwd)
JSONSCHEMA=/usr/bin/jsonschema
REPORT_SCHEMA="$TOP/userspace/schema/probe-report.schema.json"
SARIF_SCHEMA="$TOP/tests/schema/sarif-schema-2.1.0.json"
SAMPLES="$TOP/tests/fixtures/reports"
SARIF_DIR=${1:-}
# One line per error: where and what (not the whole instance, as the default prints).
ERRFMT='{error.json_path}: {error.message}
'
bad=0
checks=0

[ -x "$JSONSCHEMA" ] || { echo "check-schemas: $JSONSCHEMA missing (make deps: python3-jsonschema)" >&2; exit 1; }
command -v jq > /dev/null || { echo "check-schemas: jq missing (make deps)" >&2; exit 1; }
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT

fail() { echo "check-schemas: FAIL: $*" >&2; bad=1; }

# valid SCHEMA FILE...: every FILE is valid (one run of the validator; one per
# file to name the invalid ones when that fails).
valid() {
	schema=$1; shift
	checks=$((checks + $#))
	args=""
	for f in "$@"; do args="$args -i $f"; done
	# shellcheck disable=SC2086 # the samples' paths have no blanks
	"$JSONSCHEMA" -F "$ERRFMT" $args "$schema" > /dev/null 2>&1 && return
	for f in "$@"; do
		"$JSONSCHEMA" -F "$ERRFMT" -i "$f" "$schema" > "$t/err" 2>&1 ||
			fail "$(basename "$f") against $(basename "$schema"): $(head -c 800 "$t/err")"
	done
}

# refused SCHEMA BASE FILTER EXPECTED: BASE changed by the jq FILTER is invalid,
# and the validator says EXPECTED (so it fails for this defect, not another).
refused() {
	checks=$((checks + 1))
	jq "$3" "$2" > "$t/case.json" || { fail "jq '$3' on $2"; return; }
	if "$JSONSCHEMA" -F "$ERRFMT" -i "$t/case.json" "$1" > "$t/err" 2>&1; then
		fail "$(basename "$2") | $3: accepted"
	elif ! grep -qF -- "$4" "$t/err"; then
		fail "$(basename "$2") | $3: refused, but not with \"$4\": $(head -c 400 "$t/err")"
	fi
}

report() { refused "$REPORT_SCHEMA" "$SAMPLES/$1" "$2" "$3"; }

valid "$REPORT_SCHEMA" "$SAMPLES"/*.json
report safe.json 'del(.verdict)' "'verdict' is a required property"
report unsafe-dockerfile.json '.shell_invocation.locations[0].phase = "run"' \
	"'run' is not one of ['build', 'boot']"
report unsafe-dockerfile.json 'del(.shell_invocation.locations[4].remediation)' \
	"'remediation' is a required property"
report unsafe-dockerfile.json '.shell_invocation.locations[4].remediaton = null' \
	"Additional properties are not allowed ('remediaton' was unexpected)"
report unsafe-npm.json '.shell_invocation.locations[2].remediation = {"text": "CMD [\"x\"]"}' \
	"is not valid under any of the given schemas"
report unsafe-dockerfile.json '.shell_invocation.locations[4].source.line = 0' \
	"0 is less than the minimum of 1"
report unsafe-npm.json '.shell_invocation.locations[0].source.instruction = "COPY"' \
	"'COPY' is not one of"
report unsafe-npm.json '.shell_invocation.locations[0].stage = ""' "'' is too short"
report unsafe-dockerfile.json '.inputs[1].substituted_by = 7' "7 is not of type 'string'"
report unsafe-dockerfile.json 'del(.shell_invocation.by_phase)' "'by_phase' is a required property"
report unsafe-dockerfile.json '.boot.skipped = "timeout"' "'timeout' is not one of"
report unsafe-dockerfile.json '.boot.ended = "crashed"' "'crashed' is not one of"
report unsafe-dockerfile.json '.boot.ran = false' "None is not of type 'string'"
report inconclusive-build-failed.json '.reason = "crashed"' "'crashed' is not one of"
report safe.json '.shell_invocation.affecting_final_image = 1' "0 was expected"
report unsafe-npm.json '.shell_invocation.affecting_final_image = 0' "0 is less than the minimum of 1"
report safe.json '.confidence = "low"' "'high' was expected"
report inconclusive.json '.confidence = "high"' "'low' was expected"
report unsafe-cmd-events-lost.json '.confidence = "high"' "None was expected"
report safe-cached-make.json '.cache.hit = false' "'to_first_exec' is a required property"
report inconclusive-vm.json '.visibility.accel = "hvf"' "'hvf' is not one of ['kvm', 'tcg']"

if [ -n "$SARIF_DIR" ]; then
	set -- "$SARIF_DIR"/*.sarif
	[ -f "$1" ] || { echo "check-schemas: no *.sarif in $SARIF_DIR" >&2; exit 1; }
	valid "$SARIF_SCHEMA" "$@"
	log="$SARIF_DIR/unsafe-dockerfile.sarif"
	refused "$SARIF_SCHEMA" "$log" 'del(.version)' "'version' is a required property"
	refused "$SARIF_SCHEMA" "$log" '.runs[0].results[0].level = "fatal"' "'fatal' is not one of"
	refused "$SARIF_SCHEMA" "$log" \
		'.runs[0].results[0].locations[0].physicalLocation.region.startLine = 0' \
		"0 is less than the minimum of 1"
	refused "$SARIF_SCHEMA" "$log" 'del(.runs[0].tool.driver.name)' "'name' is a required property"
fi

if [ "$bad" -ne 0 ]; then
	echo "check-schemas: FAILED" >&2
	exit 1
fi
echo "check-schemas: ok ($checks checks)"
