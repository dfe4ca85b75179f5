#!/bin/sh
# Run every tests/integration/t_*.sh. Exit 77 means "skipped"; with CI=true a
# skip is a failure (a missing kernel capability must not pass silently).
# A failed test's FAIL lines, its diag: lines (lib.sh diag) and its last lines are repeated at the end,
# where a CI log's tail shows them, its key: lines (lib.sh key) last of all.
set -u
cd "$(dirname "$0")"
[ "$(id -u)" -eq 0 ] || { echo "integration: needs root (BPF, cgroups)" >&2; exit 1; }
passed=0; failed=0; skipped=0; failed_names=""
out=$(mktemp -d /tmp/sbt-integration.XXXXXX) || exit 1
trap 'rm -rf "$out"' EXIT
for t in ${TESTS:-t_*.sh}; do
	echo "=== $t"
	start=$(date +%s)
	# into a file (a background process a test left holding it cannot stall
	# the run), shown once the test ended, kept for the summary
	sh "./$t" > "$out/$t.log" 2>&1
	rc=$?
	cat "$out/$t.log"
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
for t in $failed_names; do
	echo "--- what $t said of its failure:"
	grep -e 'FAIL' -e 'fail:' "$out/$t.log" | head -n 20
	grep -e 'diag:' "$out/$t.log" | head -n 40
	echo "--- the end of $t's output:"
	tail -n 15 "$out/$t.log"
done
# last, where the shortest CI tail still shows them: each failed test's
# one-line digests (lib.sh key)
for t in $failed_names; do
	grep -e ': key: ' "$out/$t.log" | sort -u | head -n 4 | cut -c 1-400
done
[ -z "$failed_names" ] || echo "failed:$failed_names"
echo "integration: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
