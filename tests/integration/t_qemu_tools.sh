#!/bin/sh
# sbtrace-shim run --backend qemu with the host's tools in the guest: the
# guest's root has the host's /usr read-only over 9p (writes land in a tmpfs
# overlay), /etc/alternatives, and the workspace over 9p under a tmpfs
# overlay. In one boot: `make` runs the workspace's Makefile, `gcc` (through
# /etc/alternatives' cc too) compiles a C file that only root could read on
# the host (the workspace is idmapped like the ns backend's) and the program
# runs, all as the guest's unprivileged user (uid 1000), to whom the
# guest's /usr is read-only; writes to /workspace stay in the guest. In a
# second boot the workload is guest root (test hook SBTRACE_TEST_GUEST_ROOT:
# as a guest kernel that does as it likes): its writes to /usr stay in the
# guest, and a read-write 9p mount it makes of a host share (out of the
# chroot: it may) cannot write (qemu's readonly=on). A root-only file below the host's /usr
# is unreadable (qemu reads as an unprivileged id); nothing of the host
# outside /usr shows (/etc/shadow, /root, /work, the host's processes). The
# accelerator is reported: TCG on a host without a usable KVM, and
# --vm-accel kvm there is an error before anything starts.
. "$(dirname "$0")/lib.sh"

SHIM="$TOP/build/bin/sbtrace-shim"
STATE="$WORK/state"
NAME="qt$$"
MARK="sbt-qemu-tools-$$"
[ -x "$SHIM" ] || { log "$SHIM missing: run make"; exit 1; }
require_qemu_guest
command -v make > /dev/null && command -v gcc > /dev/null ||
	skip "make and gcc are needed on the host (they run in the guest from its /usr)"
cleanup_tools() {
	rm -f "/usr/$MARK" "/usr/$MARK.secret" "/etc/alternatives/$MARK.rw" "/etc/alternatives/$MARK.ln"
	rmdir "/etc/alternatives/$MARK.d" 2> /dev/null
	cleanup
}
trap cleanup_tools EXIT
mkdir -p "$STATE" "$WORK/ws"
printf 'all:\n\t@echo "make ran in $$(uname -r)"\n' > "$WORK/ws/Makefile"
printf '#include <stdio.h>\nint main(void) { printf("compiled in the guest: %%d\\n", 6 * 7); return 0; }\n' \
	> "$WORK/ws/hello.c"
chmod 0600 "$WORK/ws/hello.c" # root's alone: readable through the idmapped export only
GUEST_REL=$(cat "$GUEST/release")
# A host file below /usr that only root may read: qemu reads as an unprivileged id.
( umask 077 && echo "host secret" > "/usr/$MARK.secret" )

# The workload: one line per fact, "name=value".
cat > "$WORK/run.sh" << EOF
make
gcc -O0 -o /tmp/hello hello.c && /tmp/hello
echo "cc=\$(readlink -f "\$(command -v cc)")"
echo "usr-write=\$( { echo x > /usr/$MARK; } 2> /dev/null && echo written || echo refused)"
echo "ws-write=\$(echo y > /workspace/new.txt && cat /workspace/new.txt)"
echo "secret=\$(cat /usr/$MARK.secret 2> /dev/null || echo unreadable)"
echo "shadow=\$(test -e /etc/shadow && echo present || echo absent)"
echo "work=\$(test -e /work && echo present || echo absent)"
echo "pid1=\$(tr '\\000' ' ' < /proc/1/cmdline)"
EOF
# The second boot's, as guest root: /usr written; out of the chroot (pid 1's root), the share
# of the host's /etc/alternatives unmounted and mounted again read-write; qemu's readonly=on
# must refuse.
cat > "$WORK/root.sh" << EOF
echo "root-home=\$(ls -A /root | wc -l)"
echo "usr-write=\$(echo x > /usr/$MARK && cat /usr/$MARK)"
chroot /proc/1/root /bin/sh -c '
umount /newroot/etc/alternatives && mkdir -p /m &&
	mount -t 9p -o trans=virtio,version=9p2000.L sbt.alt /m &&
	grep -q "^sbt.alt /m 9p rw," /proc/mounts && echo "rw-mount=rw"
{ echo z > /m/$MARK.rw; } 2> /dev/null && echo "rw-9p=written" || echo "rw-9p=refused"
mkdir /m/$MARK.d 2> /dev/null && echo "rw-mkdir=made" || echo "rw-mkdir=refused"
ln -s /etc/passwd /m/$MARK.ln 2> /dev/null && echo "rw-ln=made" || echo "rw-ln=refused"'
EOF
start=$(date +%s%N)
"$SHIM" run --backend qemu --name "$NAME" --state-dir "$STATE" --guest "$GUEST" --no-wait \
	--vm-timeout 180 --vm-mem 512 --vm-accel tcg --timings "$WORK/timings.json" \
	--workspace "$WORK/ws:ro" -- sh -c "$(cat "$WORK/run.sh")" > "$WORK/out" 2> "$WORK/err"
rc=$?
end=$(date +%s%N)
check "the workload's exit code is 0" 0 "$rc"
[ "$rc" -eq 0 ] || log "stdout: $(cat "$WORK/out"); stderr: $(tail -c 2000 "$WORK/err")"
val() { sed -n "s/^$1=//p" "$WORK/out"; }
check "make ran the workspace's Makefile, in the guest's kernel" "make ran in $GUEST_REL" \
	"$(grep '^make ran' "$WORK/out")"
check "gcc compiled a root-only (0600) workspace file; the program ran" "compiled in the guest: 42" \
	"$(grep '^compiled' "$WORK/out")"
cc_is_gcc() { case $(val cc) in /usr/bin/*gcc*) return 0 ;; esac; return 1; }
check_true "cc is gcc through the host's /etc/alternatives" cc_is_gcc
check "the guest's /usr is read-only to the workload (uid 1000)" refused "$(val usr-write)"
check "a write to /workspace works in the guest" y "$(val ws-write)"
check_true "... and never reaches the host's directory" [ ! -e "$WORK/ws/new.txt" ]
check "a root-only (0600) host file below /usr is unreadable in the guest" unreadable "$(val secret)"
check "the guest has no /etc/shadow (its /etc is its own)" absent "$(val shadow)"
check "the host's /work is not there" absent "$(val work)"
check "the guest's /proc is its own: pid 1 is the guest's init" "/bin/sh /init " "$(val pid1)"
check "timings: accel tcg" tcg "$(jq -r .accel "$WORK/timings.json" 2> /dev/null)"
check "nothing left in the state dir" "" "$(ls "$STATE")"
log "boot + workload: $(((end - start) / 1000000)) ms; $(jq -c . "$WORK/timings.json" 2> /dev/null)"

SBTRACE_TEST_GUEST_ROOT=1 "$SHIM" run --backend qemu --name "$NAME" --state-dir "$STATE" \
	--guest "$GUEST" --no-wait --vm-timeout 180 --vm-mem 512 --vm-accel tcg \
	-- sh -c "$(cat "$WORK/root.sh")" > "$WORK/out" 2> "$WORK/err"
rc=$?
check "as guest root (test hook): the workload's exit code is 0" 0 "$rc"
[ "$rc" -eq 0 ] || log "stdout: $(cat "$WORK/out"); stderr: $(tail -c 2000 "$WORK/err")"
check "a write to /usr works for the guest's root" x "$(val usr-write)"
check "the guest's /root is empty" 0 "$(val root-home)"
check_true "... and never reaches the host's /usr" [ ! -e "/usr/$MARK" ]
check "the guest's root mounts a host share read-write (the guest kernel allows it)" rw "$(val rw-mount)"
check "... a write there is refused (qemu: readonly=on)" refused "$(val rw-9p)"
check "... a mkdir there is refused" refused "$(val rw-mkdir)"
check "... a symlink there is refused" refused "$(val rw-ln)"
check_true "... and none reached the host" \
	[ ! -e "/etc/alternatives/$MARK.rw" -a ! -e "/etc/alternatives/$MARK.d" -a ! -L "/etc/alternatives/$MARK.ln" ]
check "nothing left in the state dir" "" "$(ls "$STATE")"

# --vm-accel kvm where KVM is not usable (here: no vmx/svm flag): exit 2, why, nothing made.
if ! grep -qwE 'vmx|svm' /proc/cpuinfo || [ ! -c /dev/kvm ]; then
	"$SHIM" run --backend qemu --name "${NAME}k" --state-dir "$STATE" --guest "$GUEST" --no-wait \
		--vm-accel kvm -- true > /dev/null 2> "$WORK/errk"
	check "--vm-accel kvm without a usable KVM: exit 2" 2 $?
	check_true "... says why" grep -q "KVM is not usable" "$WORK/errk"
	check "... nothing made" "" "$(ls "$STATE")"
fi
"$SHIM" run --backend qemu --name "${NAME}k" --state-dir "$STATE" --guest "$GUEST" \
	--vm-accel hvf -- true > /dev/null 2> "$WORK/errk"
check "--vm-accel hvf: exit 2" 2 $?
"$SHIM" run --name "${NAME}k" --state-dir "$STATE" --vm-accel tcg -- true > /dev/null 2> "$WORK/errk"
check "--vm-accel without --backend qemu: exit 2" 2 $?
finish
