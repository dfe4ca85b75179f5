#!/bin/sh
# Run every tests/integration/t_*.sh. Exit 77 means "skipped"; with CI=true a
# skip is a failure (a missing kernel capability must not pass silently).
set -u
cd "$(dirname "$0")"
[ "$(id -u)" -eq 0 ] || { echo "integration: needs root (BPF, cgroups)" >&2; exit 1; }
passed=0; failed=0; skipped=0; failed_names=""
for t in ${TESTS:-t_*.sh}; do
	echo "=== $t"
	start=$(date +%s)
	sh "./$t"
	rc=$?
	end=$(date +%s)
	case $rc in
	0) passed=$((passed + 1)); echo "--- PASS $t ($((end - start)) s)" ;;
	77)
		if [ "${CI:-}" = "true" ]; then
			failed=$((failed + 1)); failed_names="$failed_names $t"
			echo "--- FAIL $t (skipped, but CI=true requires it to run)"
		else
			skipped=$((skipped + 1)); echo "--- SKIP $t"
		fi ;;
	*) failed=$((failed + 1)); failed_names="$failed_names $t"; echo "--- FAIL $t (rc $rc)" ;;
	esac
done
[ -z "$failed_names" ] || echo "failed:$failed_names"
echo "integration: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
