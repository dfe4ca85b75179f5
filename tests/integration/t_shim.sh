#!/bin/sh
# sbtrace-shim and the ns sandbox backend: isolation as the workload sees it,
# the tracer handshake (FIFO), exit codes, state files, clean-up on exit, on
# SIGTERM and (via gc) after kill -9, input errors.
. "$(dirname "$0")/lib.sh"

SHIM="$TOP/build/bin/sbtrace-shim"
BB=/bin/busybox
[ -x "$BB" ] || skip "busybox is missing (apt-get install busybox-static)"
command -v jq > /dev/null || skip "jq is missing"
if [ ! -x "$SHIM" ]; then
	fail "$SHIM is not built (make)"
	finish
fi

STATE="$WORK/state"
WS="$WORK/ws"
SBCG="$CG2/sbtrace"
P="t$$" # every sandbox name of this run starts with it
BG=""   # background shims

shim_cleanup() {
	for p in $BG; do kill -KILL "$p" 2> /dev/null; done
	remove_sandboxes "$SHIM" "$STATE" "$P"
	cleanup
}
trap shim_cleanup EXIT

mkdir -p "$WS"
echo hello > "$WS/host-file"

# run NAME [shim options] -- CMD...: the shim with this run's state dir
run() {
	n=$1
	shift
	"$SHIM" run --name "$n" --state-dir "$STATE" "$@"
}

# start_bg ERRFILE NAME [shim options] -- CMD...: the shim in the background,
# its pid in BGPID (not a subshell's: signals must reach the shim itself)
start_bg() {
	e=$1
	n=$2
	shift 2
	"$SHIM" run --name "$n" --state-dir "$STATE" "$@" 2> "$e" &
	BGPID=$!
	BG="$BG $BGPID"
}

# No live (non-zombie) process among the pids given.
pids_gone() {
	for p in "$@"; do
		[ -r "/proc/$p/stat" ] || continue
		st=$(sed 's/.*) //' "/proc/$p/stat" 2> /dev/null | cut -d' ' -f1)
		[ -z "$st" ] || [ "$st" = Z ] || return 1
	done
	return 0
}

# procs_at_least CGROUP N: at least N processes in the cgroup
procs_at_least() { test "$({ wc -l < "$1/cgroup.procs"; } 2> /dev/null || echo 0)" -ge "$2"; }

# --- what the workload sees -------------------------------------------------
cat > "$WS/probe.sh" << 'EOF'
echo "host=$(hostname)"
echo "pid=$$"
echo "init=$(cat /proc/1/comm)"
echo "uid=$(id -u)"
for f in CapEff CapBnd CapPrm CapInh CapAmb NoNewPrivs; do
	echo "$f=$(awk -v f="$f:" '$1 == f { print $2 }' /proc/self/status)"
done
for d in /usr /etc / /workspace; do
	if echo x > "$d/sbtrace-probe" 2> /dev/null; then echo "w$d=yes"; else echo "w$d=no"; fi
done
echo x > /tmp/t && echo x > "$HOME/h" && echo "tmp_home=yes"
echo "home=$HOME"
echo "wsfile=$(cat /workspace/host-file)"
echo "cwd=$(pwd)"
echo "ifaces=$(awk -F: 'NR > 2 { gsub(/ /, "", $1); printf "%s ", $1 }' /proc/net/dev)"
echo "links=$(/bin/busybox ip -o link | wc -l)"
echo "cgroup=$(grep '^0::' /proc/self/cgroup)"
echo "cgmounts=$(awk '{ for (i = 7; i <= NF; i++) if ($i == "-") { print $(i + 1); break } }' \
	/proc/self/mountinfo | grep -c cgroup)"
# Every cgroup.procs it can name (the host's paths too): none may take its pid.
n=0
ok=0
for f in "$HOST_CG2/cgroup.procs" "$HOST_CG2/sbtrace/cgroup.procs" \
	/sys/fs/cgroup/cgroup.procs /sys/fs/cgroup/unified/cgroup.procs \
	$(find /sys /proc/1 /proc/self -name cgroup.procs 2> /dev/null); do
	n=$((n + 1))
	echo $$ 2> /dev/null > "$f" && ok=$((ok + 1))
done
echo "escaped=$ok of $n"
mkdir -p /tmp/cg
if /bin/busybox mount -t cgroup2 none /tmp/cg 2> /dev/null; then echo "cgmount=yes"; else echo "cgmount=no"; fi
echo "cgroup_after=$(grep '^0::' /proc/self/cgroup)"
echo "net=$(/bin/busybox nc -w 2 192.0.2.1 80 < /dev/null 2>&1)"
# init (privileged until it dropped everything, non-dumpable) is out of reach.
if cat /proc/1/environ > /dev/null 2>&1 || ls /proc/1/root/ > /dev/null 2>&1; then
	echo "init_reachable=yes"
else
	echo "init_reachable=no"
fi
exit 42
EOF

OUT=$(HOST_CG2="$CG2" run "${P}a" --no-wait --workspace "$WS" -- $BB sh /workspace/probe.sh \
	2> "$WORK/a.err")
RC=$?
val() { printf '%s\n' "$OUT" | sed -n "s|^$1=||p"; }
check "the workload's exit code is the shim's" 42 "$RC"
check "hostname is the sandbox name" "${P}a" "$(val host)"
check "the workload is pid 2" 2 "$(val pid)"
check "pid 1 is the shim's init (no exec before the workload's)" sandbox-init "$(val init)"
check "uid 0" 0 "$(val uid)"
for f in CapEff CapBnd CapPrm CapInh CapAmb; do
	check "$f is empty" 0000000000000000 "$(val $f)"
done
check "no_new_privs" 1 "$(val NoNewPrivs)"
check "/usr is read-only" no "$(val w/usr)"
check "/etc is read-only" no "$(val w/etc)"
check "/ is read-only" no "$(val w/)"
check "/tmp and HOME are writable" yes "$(val tmp_home)"
check "HOME" /root "$(val home)"
check "/workspace has the host's files" hello "$(val wsfile)"
check "/workspace is writable" yes "$(val w/workspace)"
check "the write reached the host directory" x "$(cat "$WS/sbtrace-probe" 2> /dev/null)"
check "cwd is /workspace" /workspace "$(val cwd)"
check "only lo in /proc/net/dev" "lo " "$(val ifaces)"
check "only lo in ip link" 1 "$(val links)"
check "cgroup namespace rooted at the sandbox" "0::/" "$(val cgroup)"
check "no cgroupfs mounted" 0 "$(val cgmounts)"
check_true "the host's cgroup.procs paths were tried" \
	sh -c "printf '%s\n' \"$(val escaped)\" | grep -qE '^0 of [1-9]'"
check "no cgroup.procs took the workload's pid" "0 of" "$(val escaped | cut -d' ' -f1-2)"
check "mounting cgroup2 fails" no "$(val cgmount)"
check "still in its own cgroup" "0::/" "$(val cgroup_after)"
check_true "192.0.2.1: Network is unreachable" \
	sh -c "printf '%s\n' \"$(val net)\" | grep -q 'Network is unreachable'"
check "init's /proc/1/environ and /proc/1/root are not readable" no "$(val init_reachable)"
check "the cgroup is gone after exit" no "$([ -e "$SBCG/${P}a" ] && echo yes || echo no)"
check "no state file left" "" "$(ls -A "$STATE" 2> /dev/null)"
rm -f "$WS/sbtrace-probe"

# --- read-only workspace, exit codes ----------------------------------------
OUT=$(run "${P}r" --no-wait --workspace "$WS:ro" -- $BB sh -c \
	'cat /workspace/host-file; echo x > /workspace/new 2>/dev/null && echo writable || echo ro' \
	2> "$WORK/r.err")
check "workspace :ro is readable, not writable" "hello
ro" "$OUT"
check "nothing written to the host through :ro" no "$([ -e "$WS/new" ] && echo yes || echo no)"
run "${P}x" --no-wait -- /nonexistent/cmd 2> "$WORK/x.err"
check "a command that cannot be executed: 127" 127 "$?"
check_true "and says so" grep -q "cannot execute '/nonexistent/cmd'" "$WORK/x.err"
run "${P}s" --no-wait -- $BB sh -c 'kill -9 $$' 2> /dev/null
check "a workload killed by SIGKILL: 137" 137 "$?"
run "${P}z" --no-wait -- $BB true
check "exit 0" 0 "$?"
N64=$(printf '%s%0*d' "$P" $((64 - ${#P})) 0)
check "a 64-character name works" "$N64" "$(run "$N64" --no-wait -- $BB hostname 2>&1)"

# --- the tracer handshake ---------------------------------------------------
rm -f "$WS/marker"
start_bg "$WORK/h.err" "${P}h" --workspace "$WS" -- $BB sh -c 'touch /workspace/marker; sleep 1'
HP=$BGPID
SF="$STATE/${P}h.json"
check_true "state file written" wait_for 5 test -s "$SF"
check_true "attach FIFO exists" test -p "$STATE/${P}h.attach"
sleep 0.5
check "the workload has not run before the handshake" no \
	"$([ -e "$WS/marker" ] && echo yes || echo no)"
check_true "the shim says it waits" grep -q "sandbox ${P}h up (cgroup $SBCG/${P}h, pid [0-9]*); waiting for a tracer: sbtrace trace --sandbox ${P}h" "$WORK/h.err"
SPID=$(jq -r .pid "$SF")
check "state: name, backend, cgroup, shim_pid, netns" \
	"${P}h ns $SBCG/${P}h $HP /proc/$SPID/ns/net" \
	"$(jq -r '"\(.name) \(.backend) \(.cgroup) \(.shim_pid) \(.netns)"' "$SF")"
check "state: number types" "number number number number" \
	"$(jq -r '[.cgroup_id, .pid, .shim_pid, .start_ns] | map(type) | join(" ")' "$SF")"
check "state: cgroup_id is the cgroup's" "$(stat -c %i "$SBCG/${P}h")" "$(jq -r .cgroup_id "$SF")"
check "state: pid is in the cgroup" "$SPID" "$(cat "$SBCG/${P}h/cgroup.procs")"
check "state: start_ns is recent" 1 \
	"$(jq --arg now "$(date +%s)" '(.start_ns / 1e9) - ($now | tonumber) | fabs < 60 | if . then 1 else 0 end' "$SF")"
check "state: exactly the documented fields" "backend cgroup cgroup_id limits name netns pid shim_pid start_ns tracer_pid visibility" \
	"$(jq -r 'keys | join(" ")' "$SF")"
check "state: no tracer before the handshake" 0 "$(jq -r .tracer_pid "$SF")"
check "state file mode 0600" 600 "$(stat -c %a "$SF")"
check "state dir mode 0700" 700 "$(stat -c %a "$STATE")"
# The name is in use while it runs.
run "${P}h" --no-wait -- $BB true 2> "$WORK/dup.err"
check "a name in use: exit 2" 2 "$?"
check_true "  with 'exists; run sbtrace-shim gc'" grep -q "sandbox ${P}h exists.*sbtrace-shim gc" "$WORK/dup.err"
"$SHIM" gc --state-dir "$STATE" > /dev/null 2>&1
check "gc leaves a sandbox with a live shim alone" yes \
	"$([ -e "$SF" ] && [ -d "$SBCG/${P}h" ] && kill -0 "$SPID" && echo yes || echo no)"
echo attached > "$STATE/${P}h.attach"
check_true "the workload runs after 'attached'" wait_for 5 test -e "$WS/marker"
check "the FIFO is removed after the handshake" no \
	"$([ -e "$STATE/${P}h.attach" ] && echo yes || echo no)"
wait "$HP"
check "handshake run exits 0" 0 "$?"
check "state file removed after exit" no "$([ -e "$SF" ] && echo yes || echo no)"
check "cgroup removed after exit" no "$([ -e "$SBCG/${P}h" ] && echo yes || echo no)"

# --- SIGTERM mid-run --------------------------------------------------------
start_bg /dev/null "${P}t" --no-wait -- $BB sleep 30
TP=$BGPID
wait_for 5 procs_at_least "$SBCG/${P}t" 2 || fail "sleep did not start"
PIDS=$(cat "$SBCG/${P}t/cgroup.procs")
T0=$(date +%s%N)
kill -TERM "$TP"
wait "$TP"
RC=$?
MS=$((($(date +%s%N) - T0) / 1000000))
check "SIGTERM: exit 143" 143 "$RC"
check_true "SIGTERM: exits within 2 s (took $MS ms)" test "$MS" -lt 2000
check "SIGTERM: no cgroup left" no "$([ -e "$SBCG/${P}t" ] && echo yes || echo no)"
check "SIGTERM: no state file left" no "$([ -e "$STATE/${P}t.json" ] && echo yes || echo no)"
# shellcheck disable=SC2086
check_true "SIGTERM: no process left" wait_for 2 pids_gone $PIDS

# A workload that ignores SIGTERM is killed after the grace period.
start_bg /dev/null "${P}g" --no-wait -- $BB sh -c 'trap "" TERM; sleep 30; true'
GP=$BGPID
wait_for 5 procs_at_least "$SBCG/${P}g" 3 || fail "the TERM-ignoring workload did not start"
T0=$(date +%s%N)
kill -TERM "$GP"
wait "$GP"
RC=$?
MS=$((($(date +%s%N) - T0) / 1000000))
check "SIGTERM ignored by the workload: exit 143" 143 "$RC"
check_true "  killed after the 2 s grace period (took $MS ms)" test "$MS" -ge 1900 -a "$MS" -lt 5000
check "  no cgroup left" no "$([ -e "$SBCG/${P}g" ] && echo yes || echo no)"

# SIGINT while waiting for a tracer: nothing runs, nothing is left.
rm -f "$WS/marker"
start_bg /dev/null "${P}i" --workspace "$WS" -- $BB touch /workspace/marker
IP=$BGPID
wait_for 5 test -p "$STATE/${P}i.attach" || fail "no attach FIFO for ${P}i"
kill -INT "$IP"
wait "$IP"
check "SIGINT while waiting: exit 130" 130 "$?"
check "  the workload never ran" no "$([ -e "$WS/marker" ] && echo yes || echo no)"
check "  no state, FIFO or cgroup left" "" \
	"$(ls -A "$STATE"; ls -d "$SBCG/${P}i" 2> /dev/null)"

# --- kill -9 the shim, then gc ----------------------------------------------
start_bg /dev/null "${P}k" --no-wait -- $BB sh -c 'sleep 30 & sleep 30'
KP=$BGPID
wait_for 5 procs_at_least "$SBCG/${P}k" 3 || fail "the sleeps did not start"
PIDS=$(cat "$SBCG/${P}k/cgroup.procs")
kill -KILL "$KP"
wait "$KP" 2> /dev/null
check "kill -9: the state file is left behind" yes \
	"$([ -e "$STATE/${P}k.json" ] && echo yes || echo no)"
check "kill -9: the cgroup is left behind" yes "$([ -d "$SBCG/${P}k" ] && echo yes || echo no)"
GC=$("$SHIM" gc --state-dir "$STATE" -v 2>&1)
check "gc exits 0" 0 "$?"
check_true "gc names what it removed" sh -c "printf '%s\n' \"\$1\" | grep -q 'removed sandbox ${P}k'" sh "$GC"
check "gc: cgroup removed" no "$([ -e "$SBCG/${P}k" ] && echo yes || echo no)"
check "gc: state file removed" "" "$(ls -A "$STATE")"
# shellcheck disable=SC2086
check_true "gc: no process left" wait_for 2 pids_gone $PIDS
check "gc again: nothing to do" "sbtrace-shim gc: removed 0 stale sandboxes" \
	"$("$SHIM" gc --state-dir "$STATE" -v 2> /dev/null)"

# --- input errors -----------------------------------------------------------
for n in '../x' '' "$(printf '%065d' 0)" '.x' 'a/b' 'a b'; do
	run "$n" --no-wait -- $BB true 2> "$WORK/bad.err"
	check "bad name '$n': exit 2" 2 "$?"
	check_true "  the message names --name and the rule" grep -q -- "--name '.*': use 1-64" \
		"$WORK/bad.err"
done
run "${P}m" --no-wait --workspace "$WORK/nope" -- $BB true 2> "$WORK/ws.err"
check "missing workspace: exit 2" 2 "$?"
check_true "  the message names it" grep -q "workspace '$WORK/nope': No such file" "$WORK/ws.err"
run "${P}b" --backend podman -- $BB true 2> "$WORK/pod.err"
check "--backend podman with a non-podman command: exit 2" 2 "$?"
check_true "  the message names it" grep -q "runs podman or docker" "$WORK/pod.err"
if command -v podman > /dev/null; then
	run "${P}p" --backend podman --no-wait -- podman --version > "$WORK/pod.out" 2> "$WORK/pod.err"
	check "--backend podman runs podman in the sandbox cgroup" 0 "$?"
	check_true "  its output" grep -q "^podman version" "$WORK/pod.out"
else
	fail "podman missing (make deps installs it)"
fi
run "${P}n" --net host -- $BB true 2> /dev/null
check "--net host: exit 2" 2 "$?"
run "${P}c" --no-wait 2> /dev/null
check "no command: exit 2" 2 "$?"
"$SHIM" frob 2> /dev/null
check "unknown command: exit 2" 2 "$?"
check_true "--help lists the exit codes" sh -c "'$SHIM' --help | grep -q 'Exit codes'"
check_true "run --help documents the handshake" sh -c "'$SHIM' run --help | grep -q 'attached'"
check_true "help gc" sh -c "'$SHIM' help gc | grep -q 'Usage: sbtrace-shim gc'"
check_true "--version" sh -c "'$SHIM' --version | grep -q '^sbtrace-shim '"

# --- nothing left behind ----------------------------------------------------
check "no cgroup of this run under $SBCG" "" "$(ls -d "$SBCG/$P"* 2> /dev/null)"
check "no state file" "" "$(ls -A "$STATE")"
LEFT=""
for f in /proc/[0-9]*/cmdline; do
	tr '\0' ' ' < "$f" 2> /dev/null | grep -q -- "--name $P" && LEFT="$LEFT ${f#/proc/}"
done
check "no process of this run" "" "$LEFT"
finish
