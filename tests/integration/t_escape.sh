#!/bin/sh
# Escape attempts from inside an ns sandbox, as an attacker would make them
# (issue 12). Findings 1-8 are cases here, each of which failed on the
# sandbox before the user namespace, seccomp, the clean environment, removal
# at any depth and pinned enforcement; finding 9 (loss per kind) is the flood
# case of t_events_lost.sh and finding 10 (bounded, typed input) the cases of
# t_bad_input.sh. Then the attempts that already held, so they stay held.
# Every attempt is a line from tests/helpers/sbt-escape: "ok ..." or "err ERRNO".
. "$(dirname "$0")/lib.sh"

SHIM="$TOP/build/bin/sbtrace-shim"
ESC="$TOP/build/tests/sbt-escape"
SBTNET="$TOP/build/tests/sbt-net"
STATE="$WORK/state"
WS="$WORK/ws"
P="esc$$"
VICTIM="/var/tmp/sbt-escape.$$" # a host directory the sandbox can see (not /tmp, not /run)
HOSTNS="sbt-eschost-$$"
KEY="sbt-escape-host-$$"
PLANT="sbt-escape-plant-$$"
SRV="" USRV=""
SBCG="$CG2/sbtrace"

cleanup_escape() {
	for p in $SRV $USRV; do kill "$p" 2> /dev/null; done
	wait 2> /dev/null
	"$ESC" key-unlink "$KEY" > /dev/null 2>&1
	"$ESC" key-unlink "$PLANT" > /dev/null 2>&1
	ip netns del "$HOSTNS" 2> /dev/null
	rm -rf "$VICTIM"
	remove_sandboxes "$SHIM" "$STATE" "$P"
	cleanup
}
trap cleanup_escape EXIT

mkdir -p "$WS" "$VICTIM"
cp "$ESC" "$WS/sbt-escape"
cp "$SBTNET" "$WS/sbt-net"
chmod 755 "$VICTIM"
echo "root-only" > "$VICTIM/secret"
chmod 600 "$VICTIM/secret"

# in_sandbox NAME [SHIM OPTIONS] -- CMD...: run CMD in a fresh ns sandbox (no tracer).
in_sandbox() {
	_n=$1; shift
	"$SHIM" run --name "$_n" --state-dir "$STATE" --no-wait "$@" 2>> "$WORK/shim.err"
}
# attempt DESC EXPECTED-RESULT ARGS...: one sbt-escape attempt in a sandbox;
# EXPECTED is its first word ("err") or the whole line.
attempt() {
	_d=$1 _e=$2; shift 2
	_out=$(in_sandbox "${P}a" --workspace "$WS" -- /workspace/sbt-escape "$@")
	case $_e in
	*" "*) check "$_d" "$_e" "$_out" ;;
	*) check "$_d" "$_e" "${_out%% *}" ;;
	esac
}

# --- 1. owner rights: root's 0600 files ------------------------------------
attempt "1. /etc/shadow is not readable" "err EACCES" read /etc/shadow
attempt "1. /etc/gshadow is not readable" "err EACCES" read /etc/gshadow
attempt "1. a root-owned 0600 host file is not readable" "err EACCES" read "$VICTIM/secret"

# --- 2. a root-owned host unix socket outside /run and /tmp -----------------
"$ESC" unix-serve "$VICTIM/sock" "$WORK/peers" > "$WORK/usrv.ready" &
USRV=$!
check_true "2. (the host daemon listens)" wait_for 5 grep -q ready "$WORK/usrv.ready"
attempt "2. a world-writable socket still connects" ok unix-connect "$VICTIM/sock"
peer=$(sed -n 's/^uid=//p' "$WORK/peers" | head -n 1)
check_true "2. SO_PEERCRED: the peer is not uid 0 (got '$peer')" [ -n "$peer" ] && [ "$peer" != 0 ]
check_true "2. ... but an unprivileged id of the sandbox's range (>= 2^16)" [ "${peer:-0}" -ge 65536 ]
chmod 600 "$VICTIM/sock"
attempt "2. a root-only (0600) socket refuses the connection" "err EACCES" unix-connect "$VICTIM/sock"

# --- 3. the host root's keyrings -------------------------------------------
check "3. (a key in the host root's user keyring)" ok "$("$ESC" key-add "$KEY" host-secret | cut -d' ' -f1)"
attempt "3. the sandbox does not find the host's key" err key-find "$KEY"
in_sandbox "${P}a" --workspace "$WS" -- /workspace/sbt-escape key-add "$PLANT" planted > /dev/null
check "3. a key the sandbox plants does not reach the host's keyring" err \
	"$("$ESC" key-find "$PLANT" | cut -d' ' -f1)"

# --- 4. the caller's environment -------------------------------------------
SBT_ESCAPE_TOKEN="token-$$" AWS_SECRET_ACCESS_KEY="aws-$$" \
	in_sandbox "${P}a" -- /bin/busybox env > "$WORK/env"
check "4. no token of the caller's enters" 0 "$(grep -c -e "token-$$" -e "aws-$$" "$WORK/env")"
check "4. only the declared variables" "HOME LANG PATH PWD TERM" \
	"$(cut -d= -f1 "$WORK/env" | sort | tr '\n' ' ' | sed 's/ $//')"

# --- 5. no setuid file on the host from a writable workspace ----------------
in_sandbox "${P}a" --workspace "$WS" -- /bin/busybox sh -c \
	'/workspace/sbt-escape setuid-file /workspace/su1; /workspace/sbt-escape creat-mode /workspace/su2 4755;
	 /workspace/sbt-escape mknod-mode /workspace/su3 4755; /workspace/sbt-escape creat-mode /workspace/sg1 2755;
	 cp /bin/busybox /workspace/bb; chmod u+s,g+s /workspace/bb' > "$WORK/suid.out" 2>&1
check "5. no setuid or setgid file of root's on the host" "" \
	"$(find "$WS" -perm /6000 -user 0 2> /dev/null)"
check "5. no setuid or setgid file at all" "" "$(find "$WS" -perm /6000 2> /dev/null)"
check "5. chmod u+s is refused (EPERM)" "err EPERM" "$(sed -n 1p "$WORK/suid.out")"
attempt "5. no file capabilities on a workspace file either" "err EPERM" setcap /workspace/fcap
check_true "5. the workspace is mounted nosuid,nodev inside" sh -c \
	"\"$SHIM\" run --name ${P}a --state-dir \"$STATE\" --no-wait --workspace \"$WS\" -- /bin/busybox grep ' /workspace ' /proc/mounts 2>/dev/null | grep -q 'nosuid,nodev'"

# --- 6. a child user namespace ---------------------------------------------
attempt "6. unshare(CLONE_NEWUSER) is refused" "err EPERM" unshare-user

# --- 7. a deep cgroup tree below the sandbox --------------------------------
# The sandbox cannot make cgroups itself (held below); a delegated or tricked
# workload could: the tree is made from outside while the workload runs.
in_sandbox "${P}c" -- /bin/busybox sleep 1 &
SP=$!
check_true "7. (the sandbox runs)" wait_for 5 test -d "$SBCG/${P}c"
d="$SBCG/${P}c"; i=0
while [ $i -lt 20 ]; do d="$d/level$i"; i=$((i + 1)); done
mkdir -p "$d"
wait "$SP"
check "7. the shim exits 0 with a 20-level tree below its sandbox" 0 $?
check "7. ... and removes all of it" no "$([ -e "$SBCG/${P}c" ] && echo yes || echo no)"
in_sandbox "${P}c" -- /bin/true
check "7. the name is free again at once" 0 $?
# A killed shim's leftover: gc removes the 20-level tree; the name is reusable.
"$SHIM" run --name "${P}g" --state-dir "$STATE" --no-wait -- /bin/busybox sleep 30 2> /dev/null &
SP=$!
check_true "7. (the second sandbox runs)" wait_for 5 test -d "$SBCG/${P}g"
d="$SBCG/${P}g"; i=0
while [ $i -lt 20 ]; do d="$d/level$i"; i=$((i + 1)); done
mkdir -p "$d"
kill -9 "$SP"
wait "$SP" 2> /dev/null
"$SHIM" gc --state-dir "$STATE" > /dev/null 2>&1
check "7. gc removes a killed shim's 20-level tree" no "$([ -e "$SBCG/${P}g" ] && echo yes || echo no)"
in_sandbox "${P}g" -- /bin/true
check "7. ... and the name is free again" 0 $?

# --- 8. enforcement outlives a killed tracer --------------------------------
ip netns add "$HOSTNS" || skip "ip netns add failed"
ip -n "$HOSTNS" link set lo up
ip netns exec "$HOSTNS" "$SBTNET" serve --log "$WORK/server.log" --tcp 0.0.0.0:8080 > "$WORK/srv.ready" &
SRV=$!
check_true "8. (the test host listens)" wait_for 5 grep -q ready "$WORK/srv.ready"
N="${P}e"
"$SHIM" run --name "$N" --state-dir "$STATE" --net veth --workspace "$WS" \
	--veth-addrs 192.0.2.1/24,192.0.2.100/24 --veth-host-netns "$HOSTNS" -- \
	/bin/busybox sh -c 'while :; do /workspace/sbt-net --timeout 300 tcp 192.0.2.1 8080 >> /workspace/connects; sleep 0.05; done' \
	2> "$WORK/e.err" &
SP=$!
check_true "8. (state file)" wait_for 5 test -s "$STATE/$N.json"
start_trace "$WORK/e.jsonl" --sandbox "$N" --state-dir "$STATE" --allow-cidr 198.51.100.0/24 || exit 1
check_true "8. (the workload's connects are denied)" wait_for 5 grep -q EPERM "$WS/connects"
check "8. the state file names the tracer" "$TRACE_PID" "$(jq -r .tracer_pid "$STATE/$N.json")"
check_true "8. its links are pinned under bpffs" test -d "/sys/fs/bpf/sbtrace/$N"
# The shim stopped: nothing but the pinned links stands between the workload and the host.
kill -STOP "$SP"
kill -9 "$TRACE_PID"
wait "$TRACE_PID" 2> /dev/null
TRACE_PID=""
before=$(wc -l < "$WS/connects")
sleep 1.5
after=$(wc -l < "$WS/connects")
check_true "8. (the workload kept trying: $before -> $after)" [ "$after" -gt "$before" ]
check "8. with the tracer dead every connect is still denied" "" \
	"$(grep -v '^err EPERM' "$WS/connects")"
kill -CONT "$SP"
wait "$SP"
check "8. the shim stops the workload and exits 125" 125 $?
check_true "8. ... and says why" grep -q "its tracer went away" "$WORK/e.err"
check "8. the denied destination was never reached" "" "$(cat "$WORK/server.log")"
check "8. the pinned links are gone with the sandbox" no \
	"$([ -e "/sys/fs/bpf/sbtrace/$N" ] && echo yes || echo no)"
check "8. the cgroup and state file are gone" "no no" \
	"$([ -e "$SBCG/$N" ] && echo yes || echo no) $([ -e "$STATE/$N.json" ] && echo yes || echo no)"

# --- what already held, and must hold ----------------------------------------
attempt "held: mount" "err EPERM" mount /tmp
attempt "held: bpf" "err EPERM" bpf
attempt "held: ptrace of the sandbox's init" "err EPERM" ptrace 1
attempt "held: writing /proc/sys" err write /proc/sys/kernel/hostname escaped
attempt "held: a host pid (the test's own) does not exist inside" "err ESRCH" kill0 $$
check_true "held: only the sandbox's own processes in /proc (a new pid namespace)" [ \
	"$(in_sandbox "${P}a" -- /bin/busybox sh -c 'ls /proc | grep "^[0-9]*$" | sort -n | tail -n 1')" -lt 10 ]
# its fd 1 is a pipe to the shim's relay, not the caller's terminal: no tty to push into
check "held: TIOCSTI on the caller's terminal (the workload has none)" "err ENOTTY" "$(script -qec \
	"\"$SHIM\" run --name ${P}a --state-dir \"$STATE\" --no-wait --workspace \"$WS\" -- /workspace/sbt-escape tiocsti 1" \
	/dev/null 2> /dev/null | tr -d '\r')"
attempt "held: nested cgroups (no cgroupfs to write)" err mkdir /sys/fs/cgroup/escape
attempt "held: mounting cgroupfs" "err EPERM" mount /sys

check "nothing left: cgroups" 0 "$(ls "$SBCG" 2> /dev/null | grep -c "^$P")"
check "nothing left: pins" 0 "$(ls /sys/fs/bpf/sbtrace 2> /dev/null | grep -c "^$P")"
check "nothing left: state files" 0 "$(ls "$STATE" 2> /dev/null | wc -l)"
finish
