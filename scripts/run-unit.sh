#!/bin/sh
# Run cmocka unit-test binaries; fail if any fails or if none ran.
set -u
[ $# -gt 0 ] || { echo "run-unit: no unit test binaries" >&2; exit 1; }
failed=0
for t in "$@"; do
	if ! "$t"; then
		echo "run-unit: FAILED: $t" >&2
		failed=$((failed + 1))
	fi
done
[ "$failed" -eq 0 ] || { echo "run-unit: $failed binaries failed" >&2; exit 1; }
