#!/bin/sh
# The JSON schemas against samples, with Debian's /usr/bin/jsonschema
# (python3-jsonschema, make deps; not whatever python is first on PATH):
#   - the event kinds (userspace/event/kinds.h, read through the C
#     preprocessor: the list the code has) and the events schema
#     (userspace/schema/events.schema.json) agree: every name of the list has
#     its definition, in the schema's oneOf, with its "event" and the
#     "sandbox" of its scope, and the schema has no event the list lacks;
#     copies of the schema with one defect each are refused;
#   - every line of tests/fixtures/events/kinds.jsonl (test_event_kinds'
#     events, every name of the list among them) is a valid event;
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
EVENTS_SCHEMA="$TOP/userspace/schema/events.schema.json"
EVENT_SAMPLES="$TOP/tests/fixtures/events/kinds.jsonl"
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

# The list of event kinds as JSON, [{"name", "scope"}], from kinds.h's
# SBT_EVENT_KINDS(X(KIND, json, text, metrics, scope, "Name"...)).
event_kinds() {
	printf '%s\n' '#include "event/kinds.h"' \
		'#define SBT_CHECK_KIND(kind, json, text, metrics, scope, ...) @row scope __VA_ARGS__ @end' \
		'SBT_EVENT_KINDS(SBT_CHECK_KIND)' |
		${CC:-cc} -E -P -D_GNU_SOURCE -I"$TOP" -I"$TOP/bpf" -I"$TOP/userspace" -x c - |
		tr '@' '\n' | sed -n 's/^row \([a-z]*\) \(.*\) $/\1 \2/p' |
		jq -R -s -c '[split("\n")[] | select(. != "") | split(" ") as $w
			| $w[1:][] | gsub("[\",]"; "") | select(. != "") | {name: ., scope: $w[0]}]'
}

# kinds_agree KINDS SCHEMA: what differs between the list and the schema, a line
# each; nothing when they agree.
kinds_agree() {
	jq -r --argjson kinds "$1" '
		def among($a): . as $x | $a | index([$x]) != null;
		."$defs" as $d | ($d.event.oneOf | map(."$ref" | sub("^#/\\$defs/"; ""))) as $one
		| {run: {type: "null"}, sandbox: {"$ref": "#/$defs/sandboxName"},
		   either: {oneOf: [{type: "null"}, {"$ref": "#/$defs/sandboxName"}]}} as $scope
		| ($kinds | map(.name)) as $names
		| ($kinds[] | . as $k
			| if $d[$k.name] == null then "\($k.name): in kinds.h, no definition in the schema"
			  elif ($k.name | among($one) | not) then "\($k.name): not in the schema'"'"'s event.oneOf"
			  elif $d[$k.name].properties.event != {const: $k.name} then
				"\($k.name): its definition'"'"'s event is not const \"\($k.name)\""
			  elif $d[$k.name].properties.sandbox != $scope[$k.scope] then
				"\($k.name): its sandbox is not the schema of scope \($k.scope)"
			  else empty end),
		  ($one[] | select(among($names) | not) | "\(.): in the schema'"'"'s event.oneOf, not in kinds.h"),
		  ($d | to_entries[] | select(.value.properties.event.const? != null)
			| select(.key | among($names) | not) | "\(.key): an event in the schema, not in kinds.h")
	' "$2"
}

# kinds_refused FILTER EXPECTED: the events schema changed by FILTER disagrees with the list, saying EXPECTED.
kinds_refused() {
	checks=$((checks + 1))
	jq "$1" "$EVENTS_SCHEMA" > "$t/events.json" || { fail "jq '$1' on the events schema"; return; }
	kinds_agree "$kinds" "$t/events.json" > "$t/err" 2>&1
	if [ ! -s "$t/err" ]; then
		fail "events schema | $1: agrees with kinds.h"
	elif ! grep -qF -- "$2" "$t/err"; then
		fail "events schema | $1: disagrees, but not with \"$2\": $(head -c 400 "$t/err")"
	fi
}

kinds=$(event_kinds)
[ "$(printf '%s' "$kinds" | jq 'length')" -ge 10 ] 2> /dev/null ||
	{ echo "check-schemas: no event kinds read from kinds.h: $kinds" >&2; exit 1; }
checks=$((checks + 1))
out=$(kinds_agree "$kinds" "$EVENTS_SCHEMA")
[ -z "$out" ] || fail "kinds.h and the events schema disagree: $out"
# shellcheck disable=SC2016 # jq's $defs and $ref, not the shell's
{
	kinds_refused 'del(."$defs".DnsAnswer)' "DnsAnswer: in kinds.h, no definition in the schema"
	kinds_refused '."$defs".event.oneOf |= map(select(."$ref" != "#/$defs/TraceStats"))' \
		"TraceStats: not in the schema's event.oneOf"
	kinds_refused '."$defs".Extra = ."$defs".TraceStats | ."$defs".Extra.properties.event.const = "Extra"' \
		"Extra: an event in the schema, not in kinds.h"
	kinds_refused '."$defs".event.oneOf += [{"$ref": "#/$defs/addr"}]' \
		"addr: in the schema's event.oneOf, not in kinds.h"
	kinds_refused '."$defs".ProcessExec.properties.sandbox = {type: "null"}' \
		"ProcessExec: its sandbox is not the schema of scope sandbox"
	kinds_refused '."$defs".EgressDenied.properties.event.const = "EgressAllowed"' \
		"EgressDenied: its definition's event is not const"
}

# The sample events: each valid, and every name of the list among them.
jq -s . "$EVENT_SAMPLES" > "$t/samples.json" || fail "$EVENT_SAMPLES is not JSON Lines"
jq '{"$schema": ."$schema", "$defs": ."$defs", type: "array", items: {"$ref": "#/$defs/event"}}' \
	"$EVENTS_SCHEMA" > "$t/events-array.json"
valid "$t/events-array.json" "$t/samples.json"
checks=$((checks + 1))
out=$(jq -r --argjson kinds "$kinds" 'map(.event) as $seen | $kinds[].name
	| . as $n | select($seen | index([$n]) == null)' "$t/samples.json")
[ -z "$out" ] || fail "$(basename "$EVENT_SAMPLES") has no event named: $out"

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
