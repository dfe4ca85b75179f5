#!/bin/sh
# The workload never holds the operator's terminal (issue 25): the shim run
# under a pty (script(1)) gives the workload no terminal fd — its stdin is
# /dev/null, its stdout and stderr pipes to a relay of the shim's — so its
# escape bytes (a window title, OSC 52 clipboard, CSI clear screen, a C1 CSI)
# reach the terminal as \xNN, and its stty cannot change the terminal. The
# same workload's output to a file arrives unchanged.
. "$(dirname "$0")/lib.sh"

SHIM="$TOP/build/bin/sbtrace-shim"
command -v script > /dev/null || fail "script(1) missing (util-linux)"
STATE="$WORK/state"
P="tt$$"
trap 'remove_sandboxes "$SHIM" "$STATE" "$P"; cleanup' EXIT

cat > "$WORK/evil.sh" << 'EOF'
for f in 0 1 2; do [ -t $f ] && echo "fd $f is a terminal"; done
printf 'title \033]0;owned\007 clip \033]52;c;aGk=\007 clear \033[2J c1 \302\233J end\n'
printf 'to stderr \033[31m\n' >&2
stty -echo 0<&1 2> /dev/null && echo "stty changed the terminal"  # on its stdout, the red team's way
echo done
EOF
mkdir -p "$WORK/ws"
cp "$WORK/evil.sh" "$WORK/ws/evil.sh"
# the terminal's echo flag after the shim, as the operator's shell sees it
script -qec "'$SHIM' run --name ${P}a --state-dir '$STATE' --no-wait --workspace '$WORK/ws' -- /bin/sh /workspace/evil.sh; stty -a | grep -o ' -\\?echo ' | head -n 1" \
	"$WORK/typescript" > /dev/null 2>&1 < /dev/null
check "script ran" 0 "$?"
T="$WORK/typescript"
check "no fd of the workload is the terminal" 0 "$(grep -c 'is a terminal' "$T")"
check "no raw ESC reached the terminal" 0 "$(tr -cd '\033' < "$T" | wc -c)"
check "no C1 CSI reached the terminal" 0 "$(grep -c "$(printf '\302\233')" "$T")"
check "the title escape arrived escaped" 1 "$(grep -c 'title \\x1b]0;owned\\x07 clip \\x1b]52;c;aGk=\\x07 clear \\x1b\[2J c1 \\xc2\\x9bJ end' "$T")"
check "stderr too" 1 "$(grep -c 'to stderr \\x1b\[31m' "$T")"
check "stty could not touch the terminal" 0 "$(grep -c 'stty changed' "$T")"
check "the terminal still echoes after the shim" " echo " "$(grep -a -o ' -\?echo ' "$T" | tail -n 1)"
check "the workload ran to its end" 1 "$(grep -c '^done' "$T")"

# to a file: the bytes as they were
"$SHIM" run --name "${P}b" --state-dir "$STATE" --no-wait --workspace "$WORK/ws" -- /bin/sh /workspace/evil.sh \
	> "$WORK/file.out" 2> "$WORK/file.err"
check "to a file: the workload's bytes unchanged" 1 "$(grep -c "$(printf 'title \033]0;owned\007')" "$WORK/file.out")"
check "no relay left behind" "" "$(pgrep -x sbt-relay)"
finish
