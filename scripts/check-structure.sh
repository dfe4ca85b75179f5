#!/bin/sh
# The structure rules the tree keeps (README, "Layout"), checked on the
# project's own C sources (not vmlinux.h, generated skeletons or tests):
#   - no file longer than 1,000 lines, no function longer than 150;
#   - no folder of product code with more than 30 files (group it into rooms);
#   - no dependency cycle between rooms (scripts/check-deps.py: a .c with its own header);
#   - only the parser (userspace/dockerfile/) parses Dockerfile syntax;
#   - the probe parses JSON only in package_json.c and cache.c;
#   - userspace/ is pure C: no libbpf header.
# check-structure.sh [ROOT]     check a tree (default: this checkout)
# check-structure.sh --self-test   show that each rule catches a violation
set -u

MAX_FILE=1000
MAX_FUNC=150
MAX_FOLDER=30

sources() {
	find "$1/bpf" "$1/loader" "$1/userspace" -name '*.[ch]' 2>/dev/null |
		grep -v '/vmlinux/' | sort
}

# Kernel style: a function body opens with "{" alone in column 0 and closes with "}".
long_functions() {
	awk -v max="$MAX_FUNC" '
		/^[A-Za-z_].*\(/ && !/;[[:space:]]*$/ { name = $0 }
		/^\{[[:space:]]*$/ { start = FNR; next }
		/^\}[[:space:]]*$/ && start {
			n = FNR - start - 1
			if (n > max) printf "%s:%d: function of %d lines (max %d): %s\n", FILENAME, start, n, max, name
			start = 0
		}' "$@"
}

check() {
	root=$1
	bad=0
	files=$(sources "$root")
	[ -n "$files" ] || { echo "check-structure: no sources under $root" >&2; return 2; }
	for f in $files; do
		n=$(wc -l < "$f")
		if [ "$n" -gt "$MAX_FILE" ]; then
			echo "$f: $n lines (max $MAX_FILE); split it"
			bad=1
		fi
	done
	out=$(echo "$files" | sed 's|/[^/]*$||' | sort | uniq -c |
		awk -v max="$MAX_FOLDER" '$1 > max { printf "%s: %d files (max %d); group it into rooms\n", $2, $1, max }')
	[ -z "$out" ] || { echo "$out"; bad=1; }
	out=$(python3 "$(dirname "$0")/check-deps.py" "$root" bpf loader userspace)
	[ -z "$out" ] || { echo "$out"; echo "  ^ rooms that depend on each other: give the dependency one direction"; bad=1; }
	out=$(long_functions $files)
	[ -z "$out" ] || { echo "$out"; bad=1; }
	out=$(grep -nE '"(FROM|ENTRYPOINT|HEALTHCHECK)"|strcasecmp\([^)]*"RUN"' $files |
		grep -v '/userspace/dockerfile/[a-z_]*\.c:')
	[ -z "$out" ] || { echo "$out"; echo "  ^ Dockerfile syntax parsed outside the parser (userspace/dockerfile/)"; bad=1; }
	out=$(grep -nE 'json_tokener|sbt_json_parse_doc|json_object_from_(file|fd)' \
		$(echo "$files" | grep '/userspace/probe/') 2>/dev/null |
		grep -vE '/userspace/probe/(package_json|cache)\.c:')
	[ -z "$out" ] || { echo "$out"; echo "  ^ the probe parses JSON outside package_json.c and cache.c"; bad=1; }
	out=$(grep -nE '#include [<"]bpf/|#include [<"](libbpf|bpf)\.h' \
		$(echo "$files" | grep '/userspace/') 2>/dev/null)
	[ -z "$out" ] || { echo "$out"; echo "  ^ userspace/ must not use libbpf"; bad=1; }
	return $bad
}

self_test() {
	t=$(mktemp -d)
	trap 'rm -rf "$t"' EXIT
	mkdir -p "$t/bpf" "$t/loader" "$t/userspace/probe"
	printf 'int ok(void)\n{\n\treturn 0;\n}\n' > "$t/loader/ok.c"
	check "$t" > /dev/null || { echo "self-test: a clean tree fails"; exit 1; }
	fails() {
		if check "$t" > /dev/null; then
			echo "self-test: not caught: $1"
			exit 1
		fi
		rm -f "$2"
	}
	awk 'BEGIN { for (i = 0; i < 1001; i++) print "int x" i ";" }' > "$t/loader/big.c"
	fails "a file of 1001 lines" "$t/loader/big.c"
	awk 'BEGIN { print "int f(void)"; print "{"; for (i = 0; i < 151; i++) print "\tg();"; print "}" }' \
		> "$t/userspace/long.c"
	fails "a function of 151 lines" "$t/userspace/long.c"
	printf 'static int k(const char *t) { return strcasecmp(t, "FROM"); }\n' > "$t/userspace/probe/x.c"
	fails "a second Dockerfile parser" "$t/userspace/probe/x.c"
	printf 'void r(const char *b) { json_tokener_parse(b); }\n' > "$t/userspace/probe/report.c"
	fails "JSON parsed in the probe's report" "$t/userspace/probe/report.c"
	printf '#include <bpf/libbpf.h>\n' > "$t/userspace/y.c"
	fails "libbpf in userspace" "$t/userspace/y.c"
	mkdir "$t/userspace/flat"
	for i in $(seq 31); do printf 'int v%d;\n' "$i" > "$t/userspace/flat/f$i.c"; done
	check "$t" > /dev/null && { echo "self-test: not caught: a folder of 31 files"; exit 1; }
	rm -rf "$t/userspace/flat"
	printf 'int b(void);\nint a(void)\n{\n\treturn b();\n}\n' > "$t/userspace/a.c"
	printf 'int a(void);\nint b(void)\n{\n\treturn a();\n}\n' > "$t/userspace/b.c"
	check "$t" > /dev/null && { echo "self-test: not caught: a.c and b.c calling each other"; exit 1; }
	rm -f "$t/userspace/a.c"
	check "$t" > /dev/null || { echo "self-test: b.c alone fails"; exit 1; }
	rm -f "$t/userspace/b.c"
	echo "check-structure: self-test passed (7 violations caught)"
}

case ${1:-} in
--self-test) self_test ;;
*)
	root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
	if check "$root"; then
		echo "check-structure: ok ($(sources "$root" | wc -l) files)"
	else
		echo "check-structure: FAILED" >&2
		exit 1
	fi
	;;
esac
