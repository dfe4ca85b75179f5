#!/bin/sh
# The workload's seccomp filter (userspace/sandbox/seccomp.c) in the ns
# sandbox: every call of sbtrace-shim(1)'s table fails with the errno the table
# gives, also through the i386 ABI, without the kernel running it (the
# prober, tests/helpers/sbt-seccomp.c, says how it knows); what builds do
# still works (fork and exec, threads, files, FIFOs, ptrace of a child, make,
# sh -c, strace); no set-id file reaches the host's workspace; the sandbox's
# init runs without the filter.
. "$(dirname "$0")/lib.sh"

SHIM="$TOP/build/bin/sbtrace-shim"
PROBER="$TOP/build/tests/sbt-seccomp"
for t in make cc strace; do
	command -v $t > /dev/null || skip "$t is missing (make deps)"
done
if [ ! -x "$SHIM" ] || [ ! -x "$PROBER" ]; then
	fail "$SHIM or $PROBER is not built (make)"
	finish
fi

STATE="$WORK/state"
WS="$WORK/ws"
P="sc$$" # every sandbox name of this run starts with it

trap 'remove_sandboxes "$SHIM" "$STATE" "$P"; cleanup' EXIT
mkdir -p "$WS/.bin"
# The checkout may sit below /tmp, which the sandbox replaces by a tmpfs: the
# prober goes in through the workspace.
cp "$PROBER" "$WS/.bin/sbt-seccomp"

# run NAME -- CMD...: a sandbox with the workspace, released at once
run() {
	n=$1
	shift
	"$SHIM" run --name "$n" --state-dir "$STATE" --no-wait --workspace "$WS" "$@"
}

# "call action" for every call sbtrace-shim(1)'s table names (its source: userspace/shim/
# sbtrace-shim.help; the code's table: test_seccomp.c)
awk '/^\| call \| action \| why \|/ { t = 1; next }
	t && !/^\|/ { exit }
	t && /^\|---/ { next }
	t {
		split($0, c, "|"); a = c[3]; gsub(/ /, "", a); s = c[2]
		while (match(s, /`[a-z0-9_]+`/)) {
			print substr(s, RSTART + 1, RLENGTH - 2), a
			s = substr(s, RSTART + RLENGTH)
		}
	}' "$TOP/userspace/shim/sbtrace-shim.help" | sort -u > "$WORK/table"
check_true "sbtrace-shim(1)'s table names at least 60 calls" test "$(wc -l < "$WORK/table")" -ge 60
action() { awk -v n="$1" '$1 == n { print $2 }' "$WORK/table"; }
# The name in a prober label: i386:chmod:S_ISUID -> chmod
call_of() { printf '%s\n' "$1" | sed -e 's/^i386://' -e 's/^x32://' -e 's/:.*//'; }

# --- the calls -----------------------------------------------------------------
run "${P}c" -- /workspace/.bin/sbt-seccomp /workspace > "$WORK/calls" 2> "$WORK/calls.err"
check "the prober exits 0" 0 "$?"
[ -s "$WORK/calls.err" ] && log "prober stderr: $(head -c 300 "$WORK/calls.err")"
I386=$(awk '$1 == "abi" && $2 == "i386" { print $3 }' "$WORK/calls")
[ "$I386" = ok ] || log "this kernel takes no i386 syscalls: those calls are not tried"
[ "$(awk '$1 == "abi" && $2 == "x32" { print $3 }' "$WORK/calls")" = ok ] ||
	log "this kernel takes no x32 syscalls: those calls are not tried"
ndeny=0
while read -r kind label got; do
	case $kind in
	allow) check "allowed, and works: $label" ok "$got" ;;
	pass) check "let through by the filter: $label" reached "$got" ;;
	deny)
		ndeny=$((ndeny + 1))
		want=$(action "$(call_of "$label")")
		[ -n "$want" ] || want="(a call sbtrace-shim(1)'s table does not name)"
		check "denied: $label" "$want" "$got"
		;;
	esac
done < "$WORK/calls"
# Every call of the table is tried (open_tree_attr: newer than Debian 12's libseccomp).
missing=""
while read -r name _; do
	[ "$name" = open_tree_attr ] && continue
	awk '$1 == "deny" { print $2 }' "$WORK/calls" | sed -e 's/^i386://' -e 's/^x32://' -e 's/:.*//' |
		grep -qx "$name" || missing="$missing $name"
done < "$WORK/table"
check "every call of the table was tried" "" "$missing"
check_true "at least 80 denied calls tried ($ndeny)" test "$ndeny" -ge 80

# --- the filter is the workload's, not init's ------------------------------------
OUT=$(run "${P}s" -- /bin/sh -c \
	'grep "^Seccomp:" /proc/self/status | cut -f2; grep "^Seccomp:" /proc/1/status | cut -f2')
check "the workload is filtered (2), init is not (0)" "2 0" "$(echo $OUT)"

# --- builds ----------------------------------------------------------------------
mkdir -p "$WS/b"
cat > "$WS/b/hello.c" << 'EOF'
#include <pthread.h>
#include <stdio.h>
const char *greeting(void);
static void *say(void *arg) { puts(greeting()); return arg; }
int main(void)
{
	pthread_t t;
	if (pthread_create(&t, NULL, say, NULL))
		return 1;
	return pthread_join(t, NULL);
}
EOF
printf 'const char *greeting(void);\nconst char *greeting(void) { return "hello from a thread"; }\n' \
	> "$WS/b/lib.c"
printf '%s\n' 'all: hello' 'lib.a: lib.o' '	ar rcs $@ lib.o' \
	'hello: hello.o lib.a' '	$(CC) -o $@ hello.o lib.a -lpthread' \
	'	install -m 0755 hello hello.installed' '	mkfifo fifo && rm fifo' \
	'check: all' '	./hello.installed' > "$WS/b/Makefile"
OUT=$(run "${P}m" -- make -s -j2 -C /workspace/b check 2> "$WORK/make.err")
check "make -j2 builds and runs (static library, threads, install, mkfifo)" \
	"0 hello from a thread" "$? $OUT"
[ -s "$WORK/make.err" ] && log "make stderr: $(head -c 300 "$WORK/make.err")"
OUT=$(run "${P}h" -- /bin/sh -c \
	'cd /tmp && cc -o t /workspace/b/hello.c /workspace/b/lib.c -lpthread && ./t' 2>&1)
check "sh -c cc && ./t" "0 hello from a thread" "$? $OUT"
OUT=$(run "${P}t" -- strace -f -o /dev/null /bin/sh -c 'exit 7' 2>&1)
check "strace CMD (ptrace of its own child) works" "7 " "$? $OUT"

# --- no set-id file reaches the host ---------------------------------------------
OUT=$(run "${P}u" -- /bin/sh -c 'cp /bin/true /workspace/t;
	chmod 4755 /workspace/t 2>&1; echo "chmod 4755: $?";
	chmod g+s /workspace/b 2>&1; echo "chmod g+s: $?";
	install -m 2755 /bin/true /workspace/t2 2>&1; echo "install -m 2755: $?"')
check "chmod 4755 is refused" 1 "$(printf '%s\n' "$OUT" | sed -n 's/^chmod 4755: //p')"
check "  and says why" 1 "$(printf '%s\n' "$OUT" | grep -c 'chmod.*/workspace/t.*Operation not permitted')"
check "chmod g+s is refused" 1 "$(printf '%s\n' "$OUT" | sed -n 's/^chmod g+s: //p')"
check "install -m 2755 is refused" 1 "$(printf '%s\n' "$OUT" | sed -n 's/^install -m 2755: //p')"
check "no set-id file in the host's workspace" "" "$(find "$WS" -perm /6000)"

check "no cgroup of this run left" "" "$(ls -d "$CG2/sbtrace/$P"* 2> /dev/null)"
finish
