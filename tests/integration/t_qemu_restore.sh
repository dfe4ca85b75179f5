#!/bin/sh
# The qemu backend's saved boot (sbtrace-shim --vm-boot, qemu_snap.c) in a
# real microVM (Debian's kernel, TCG), on a copy of the guest of this test's
# own (so its GUEST/snap starts empty):
#  - the first boot is cold and saves the guest at its hold (KEY.state and
#    KEY.initrd); the next ones are restored ("boot": "restored" in the state
#    file), and run their own workload with their own exit nonce;
#  - a restored guest is a fresh one: no file an earlier run wrote (its /tmp,
#    HOME, workspace overlay), the guest agent's stream from HELLO with
#    sequence 1 and complete, its clock the host's (not the saved one's:
#    within the run's own time), its RNG reseeded (two restored guests read
#    different bytes, and the agent sends no HELLO unless RNDRESEEDCRNG
#    worked);
#  - a state that does not load (truncated) is a cold boot with the reason
#    ("restore failed: ..."), the workload runs all the same, and the bad
#    state is gone; --vm-boot cold never restores;
#  - nothing is left behind: no state file, per-run dir, tap or temporary
#    file in GUEST/snap.
. "$(dirname "$0")/lib.sh"

STATE="$WORK/state"
NAME="qr$$"
[ -x "$TOP/build/bin/sbtrace-shim" ] || { log "sbtrace-shim missing: run make"; exit 1; }
require_qemu_guest
mkdir -p "$STATE" "$WORK/ws"
# qemu (an unprivileged id) opens the kernel by its path: not below WORK (0700)
G=$(mktemp -d /var/tmp/sbtrace-guest.XXXXXX) || exit 1
cleanup_restore() {
	rm -rf "$G"
	cleanup
}
trap cleanup_restore EXIT
chmod 0755 "$G"
cp "$GUEST/vmlinux" "$GUEST/initramfs.cpio.gz" "$GUEST/release" "$G/"
echo "from the host" > "$WORK/ws/in.txt"

# The workload: what it finds of earlier runs, then leaves its own marks.
cat > "$WORK/ws/run.sh" << 'EOF2'
for f in /tmp/mark "$HOME/mark" /workspace/mark; do
	[ -e "$f" ] && echo "found $f: $(cat "$f")"
done
echo "clock $(date +%s)"
echo "random $(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')"
echo "$1" > /tmp/mark && echo "$1" > "$HOME/mark" && echo "$1" > /workspace/mark
echo "workspace $(cat /workspace/in.txt)"
/bin/true
EOF2

# run TAG [SHIM-ARGS...]: one VM; its stdout WORK/TAG.out, stream WORK/TAG.gs (decoded)
run() {
	tag=$1
	shift
	HOST_START=$(date +%s)
	qemu_run_stream "$STATE" "$NAME$tag" "$WORK/$tag.out" "$WORK/$tag.err" "$WORK/$tag.stream" -- \
		--guest "$G" --no-wait --vm-timeout 180 --workspace "$WORK/ws:ro" "$@" \
		-- /usr/bin/env sh /workspace/run.sh "$tag"
	HOST_NOW=$(date +%s)
	"$TOP/build/tests/sbt-gsread" "$WORK/$tag.stream" | grep -v '^beat ' > "$WORK/$tag.gs"
	[ "$QRC" -eq 0 ] || log "$tag: rc $QRC; stdout: $(cat "$WORK/$tag.out"); stderr: $(tail -c 1500 "$WORK/$tag.err")"
}
boot() { jq -r '"\(.boot) \(.boot_why // "-")"' "$WORK/$1.stream.json" 2> /dev/null; }
states() { ls "$G/snap" 2> /dev/null | grep -c '\.state$'; }
# fresh TAG: the checks every restored (or cold) run must pass
fresh() {
	check "$1: the workload ran (exit 0)" 0 "$QRC"
	check "$1: nothing of an earlier run in /tmp, HOME or the workspace" "" \
		"$(grep '^found' "$WORK/$1.out")"
	check "$1: its own workspace" "workspace from the host" "$(grep '^workspace' "$WORK/$1.out")"
	check "$1: the stream starts with HELLO (sequence 1) and ends whole" "hello|end ok" \
		"$(sed -n '1s/^\(hello\) .*/\1/p; $p' "$WORK/$1.gs" | tr '\n' '|' | sed 's/|$//')"
	check "$1: the workload's execs from the first, in order" "/usr/bin/env|/usr/bin/sh|/usr/bin/date|" \
		"$(sed -n 's/^exec seq=[0-9]* .* filename=\([^ ]*\) .*/\1/p' "$WORK/$1.gs" | head -n 3 | tr '\n' '|')"
	t=$(sed -n 's/^clock //p' "$WORK/$1.out")
	# a restored guest's clock unset would be the saved one's: before this run began
	check_true "$1: the guest's clock is the host's (guest ${t:-?}, run $HOST_START-$HOST_NOW)" \
		test -n "$t" -a "${t:-0}" -ge "$((HOST_START - 1))" -a "${t:-0}" -le "$HOST_NOW"
}

# 1: cold, and saved at the hold
run a
fresh a
check "a: cold, and it saved the guest" "cold no saved guest yet: this boot saves one" "$(boot a)"
check "a: one saved state" 1 "$(states)"
check_true "a: its initrd beside it, readable by qemu's id (0644)" \
	sh -c "ls -l '$G'/snap/*.initrd | grep -q '^-rw-r--r--'"

# 2, 3: restored, each a fresh guest
run b
fresh b
check "b: restored" "restored -" "$(boot b)"
run c
fresh c
check "c: restored" "restored -" "$(boot c)"
rb=$(sed -n 's/^random //p' "$WORK/b.out")
rc=$(sed -n 's/^random //p' "$WORK/c.out")
check_true "b and c: different random bytes ($rb, $rc)" test -n "$rb" -a -n "$rc" -a "$rb" != "$rc"

# 4: a state that does not load: cold, with the reason; the bad state gone
st=$(ls "$G"/snap/*.state)
truncate -s 4096 "$st"
run d
fresh d
check "d: the restore failed: cold, and why" "cold restore failed:" "$(boot d | cut -d' ' -f1-3)"
check_true "d: the bad state was deleted" test ! -e "$st"
check_true "d: the shim said so on stderr" grep -q "restore failed" "$WORK/d.err"

# 5: no state: cold, and saved again; 6: --vm-boot cold never restores
run e
fresh e
check "e: cold and saved anew" "cold no saved guest yet: this boot saves one" "$(boot e)"
run f --vm-boot cold
fresh f
check "f: --vm-boot cold" "cold --vm-boot cold" "$(boot f)"

check "nothing left in the state dir" "" "$(ls "$STATE")"
check "no temporary file in GUEST/snap" "" "$(ls "$G/snap" | grep -v -E '^[0-9a-f]{16}\.(state|initrd)$')"
check "no tap left" "" "$(ip -o link show | grep ': sbt' | grep -v '@' || true)"
finish
