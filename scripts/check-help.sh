#!/bin/sh
# A command's --help and its man page cannot drift from their source
# (userspace/<room>/NAME.help, scripts/gen-help.py):
#   - each @help command prints exactly the text its source makes (exit 0);
#   - each long option of an @options getopt table is named in its help, and
#     each option the help lists as an item (an indented "--x ...") is in the table;
#   - each man page renders without a warning (groff -ww, with tbl).
# check-help.sh BIN MANDIR SRC...   check (BIN: where sbtrace and sbtrace-shim are;
#                                   MANDIR: the pages made from SRC, NAME.1)
# check-help.sh --self-test         show that each check catches what it is for
set -u

GEN=$(cd "$(dirname "$0")" && pwd)/gen-help.py

# The options a help lists as items: the tag of each indented line that starts with an option.
listed_options() {
	awk '/^  +(-[A-Za-z0-9], )?--[a-z]/ && match($0, /[^ ]/) <= 9 {
		tag = $0
		sub(/^ +/, "", tag)
		if (match(tag, /  /)) tag = substr(tag, 1, RSTART - 1)
		if (tag !~ /^(-[A-Za-z0-9], )?--[a-z0-9-]+([ =,]|$)/) next
		while (match(tag, /--[a-z0-9][a-z0-9-]*/)) {
			print substr(tag, RSTART + 2, RLENGTH - 2)
			tag = substr(tag, RSTART + RLENGTH)
		}
	}'
}

# check_src BIN SRC: its helps and their getopt tables. Prints what is wrong; 1 if anything.
check_src() {
	bin=$1 src=$2 wrong=0
	list=$("$GEN" list "$src") || return 1
	tmp=$(mktemp -d) || return 1
	while read -r kind id rest; do
		"$GEN" text "$src" "$id" > "$tmp/want" || { wrong=1; continue; }
		case $kind in
		help)
			# shellcheck disable=SC2086
			set -- $rest
			prog=$1
			shift
			[ -x "$bin/$prog" ] && prog=$bin/$prog
			"$prog" "$@" > "$tmp/got" 2> "$tmp/err"
			rc=$?
			if [ "$rc" -ne 0 ]; then
				echo "$src: '$rest' exits $rc: $(head -c 200 "$tmp/err")"
				wrong=1
			elif ! cmp -s "$tmp/want" "$tmp/got"; then
				echo "$src: '$rest' prints other text than help $id:"
				diff "$tmp/want" "$tmp/got" | head -n 10
				wrong=1
			fi
			;;
		options)
			# shellcheck disable=SC2086
			set -- $rest
			opts=$("$GEN" longopts "$1" "$2") || { wrong=1; continue; }
			for o in $opts; do
				grep -qE -- "--$o([^a-z0-9-]|\$)" "$tmp/want" && continue
				echo "$src: help $id does not name --$o ($1, $2)"
				wrong=1
			done
			for o in $(listed_options < "$tmp/want" | sort -u); do
				echo "$opts" | grep -qx -- "$o" && continue
				echo "$src: help $id lists --$o, which $1's $2 does not have"
				wrong=1
			done
			;;
		esac
	done <<EOF
$list
EOF
	rm -rf "$tmp"
	return $wrong
}

# check_man PAGE: no warning from groff (-ww), tbl run first.
check_man() {
	out=$(groff -t -man -Tutf8 -ww -z "$1" 2>&1)
	[ -z "$out" ] && return 0
	echo "$1: groff warns:"
	echo "$out" | head -n 10
	return 1
}

check() {
	bin=$1 mandir=$2
	shift 2
	bad=0 n=0
	for src in "$@"; do
		n=$((n + 1))
		check_src "$bin" "$src" || bad=1
		page=$mandir/$(basename "$src" .help).1
		if [ -f "$page" ]; then
			check_man "$page" || bad=1
		else
			echo "$src: no man page $page (make all)"
			bad=1
		fi
	done
	[ "$n" -gt 0 ] || { echo "check-help: no sources given"; return 1; }
	return $bad
}

self_test() {
	t=$(mktemp -d)
	trap 'rm -rf "$t"' EXIT
	cat > "$t/opts.c" <<-'EOF'
	static const struct option opts[] = {
		{ "alpha", required_argument, NULL, 'a' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	EOF
	cat > "$t/x.help" <<-EOF
	@name x - a command
	@help x cat $t/out
	@options x $t/opts.c opts
	@section SYNOPSIS [x]
	Usage: x [--alpha N]

	@section OPTIONS [x]
	  -a, --alpha N   the value (default @@1)
	  -h, --help      this help

	@section EXIT STATUS [x]
	0 always

	@section DESCRIPTION
	A command.

	@section SEE ALSO
	sbtrace(1)
	EOF
	"$GEN" text "$t/x.help" x > "$t/out" && "$GEN" man "$t/x.help" "$t/x.1" ||
		{ echo "self-test: the generator fails"; exit 1; }
	check /nonexistent "$t" "$t/x.help" > /dev/null || { echo "self-test: a clean source fails"; exit 1; }
	caught() {
		if check /nonexistent "$t" "$t/x.help" > /dev/null; then
			echo "self-test: not caught: $1"
			exit 1
		fi
	}
	cp "$t/opts.c" "$t/opts.ok"
	awk '/\{ 0 \}/ { print "\t{ \"beta\", no_argument, NULL, 1 }," } { print }' "$t/opts.ok" > "$t/opts.c"
	grep -q '"beta"' "$t/opts.c" || { echo "self-test: could not add an option"; exit 1; }
	caught "an option of the getopt table missing from the help"
	grep -v '"alpha"' "$t/opts.ok" > "$t/opts.c"
	caught "an option in the help that the getopt table does not have"
	cp "$t/opts.ok" "$t/opts.c"
	echo "  an extra line" >> "$t/out"
	caught "--help printing other text than its source"
	"$GEN" text "$t/x.help" x > "$t/out"
	printf '.TH X 1\n.SH NAME\nx\n.XYZ undefined\n' > "$t/x.1"
	caught "a man page groff warns about"
	echo "check-help: self-test passed (4 violations caught)"
}

case ${1:-} in
--self-test) self_test ;;
'' | -h | --help)
	sed -n '2,/^set -u/p' "$0" | sed -e '/^set -u/d' -e 's/^# \{0,1\}//'
	exit 2
	;;
*)
	[ $# -ge 3 ] || { echo "check-help: give BIN MANDIR SRC..." >&2; exit 2; }
	if check "$@"; then
		shift 2
		echo "check-help: ok ($# sources)"
	else
		echo "check-help: FAILED" >&2
		exit 1
	fi
	;;
esac
