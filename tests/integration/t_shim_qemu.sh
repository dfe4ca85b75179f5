#!/bin/sh
# sbtrace-shim run --backend qemu: a microVM (qemu -M microvm, TCG) in the
# sandbox cgroup, its eth0's host side a tap in a test host's network
# namespace (documentation ranges only, no other route anywhere). The guest
# fetches a page from the test host; its output and exit code come back
# through the shim; the tracer's handshake holds the VM until attached; the
# tap, cgroup, state and per-run files are gone after a run, after SIGTERM,
# and (through gc) after a SIGKILLed shim.
. "$(dirname "$0")/lib.sh"

SHIM="$TOP/build/bin/sbtrace-shim"
STATE="$WORK/state"
NS="sbt-qemuhost-$$"
NAME="q$$"
[ -x "$SHIM" ] || { log "$SHIM missing: run make"; exit 1; }
# The guest: built once from Debian's packages, then cached (well under 1 s).
require_qemu_guest
check_true "the guest has a kernel and an initramfs" \
	test -s "$GUEST/vmlinux" -a -s "$GUEST/initramfs.cpio.gz" -a -s "$GUEST/release"

# The test host: its own netns, the tap's host side arrives with the VM;
# 198.51.100.7 and 2001:db8:7::7 on lo, busybox httpd on port 80.
HTTPD=""
cleanup_qemu() {
	if [ -n "${SHIM_PID:-}" ] && kill -0 "$SHIM_PID" 2> /dev/null; then
		kill -TERM "$SHIM_PID" 2> /dev/null
		wait "$SHIM_PID" 2> /dev/null
	fi
	[ -z "$HTTPD" ] || kill "$HTTPD" 2> /dev/null
	wait 2> /dev/null
	ip netns del "$NS" 2> /dev/null
	cleanup
}
trap cleanup_qemu EXIT
ip netns add "$NS" || skip "ip netns add failed"
ip netns exec "$NS" sysctl -qw net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0
ip -n "$NS" link set lo up
ip -n "$NS" addr add 198.51.100.7/32 dev lo
ip -n "$NS" addr add 2001:db8:7::7/128 dev lo nodad
mkdir -p "$WORK/www" "$STATE"
printf 'hello from the test host\n' > "$WORK/www/v4.txt"
printf 'hello over IPv6\n' > "$WORK/www/v6.txt"
ip netns exec "$NS" /bin/busybox httpd -f -p 80 -h "$WORK/www" &
HTTPD=$!
i=0
until ip netns exec "$NS" timeout 2 /bin/busybox wget -q -O /dev/null http://198.51.100.7/v4.txt 2> /dev/null; do
	i=$((i + 1))
	[ $i -lt 50 ] || { log "httpd did not come up"; exit 1; }
	sleep 0.1
done

CG2_SB="$CG2/sbtrace"
tap_in_ns() { ip -n "$NS" -o link show 2> /dev/null | grep -c ": sbt" || true; }
# leftovers NAME: what a sandbox leaves behind (cgroup, state, FIFO, per-run dir) as "a b c d"
leftovers() {
	printf '%s %s %s %s\n' "$([ -e "$CG2_SB/$1" ] && echo cgroup || echo -)" \
		"$([ -e "$STATE/$1.json" ] && echo state || echo -)" \
		"$([ -e "$STATE/$1.attach" ] && echo fifo || echo -)" \
		"$([ -e "$STATE/$1.vm" ] && echo vmdir || echo -)"
}
# wait_exe PID PATTERN: until /proc/PID/exe matches (at most ~10 s)
wait_exe() {
	_i=0
	while [ $_i -lt 200 ]; do
		case $(readlink "/proc/$1/exe" 2> /dev/null) in $2) return 0 ;; esac
		sleep 0.05
		_i=$((_i + 1))
	done
	return 1
}

# --- 1: the handshake, the cgroup, the tap; a page over IPv4 and IPv6 -----
# (a cold boot: a restored one starts qemu paused before the release, t_qemu_restore.sh)
"$SHIM" run --backend qemu --name "$NAME" --state-dir "$STATE" --guest "$GUEST" --vm-boot cold \
	--tap-netns "$NS" --tap-addrs 203.0.113.253/30,203.0.113.254/30 \
	--tap-addrs6 2001:db8:9::1/64,2001:db8:9::2/64 --vm-timeout 120 \
	--timings "$WORK/timings.json" -- \
	sh -c 'timeout 10 wget -q -O - http://198.51.100.7/v4.txt &&
		timeout 10 wget -q -O - "http://[2001:db8:7::7]/v6.txt"' \
	> "$WORK/out1" 2> "$WORK/err1" &
SHIM_PID=$!
i=0
while [ ! -e "$STATE/$NAME.json" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
check_true "state file written" [ -e "$STATE/$NAME.json" ]
SJ="$STATE/$NAME.json"
TAP=$(jq -r .tap "$SJ")
QPID=$(jq -r .pid "$SJ")
check "state: backend" qemu "$(jq -r .backend "$SJ")"
check "state: visibility (the guest agent: guest_kernel)" "guest_kernel tap" "$(jq -r '"\(.visibility.exec) \(.visibility.network)"' "$SJ")"
# this host's /dev/kvm opens and makes a VM, but its CPU has no vmx/svm: TCG (see accel.c)
if grep -qwE 'vmx|svm' /proc/cpuinfo; then want_accel=$(jq -r .accel "$SJ"); else want_accel=tcg; fi
check "state: accel" "$want_accel" "$(jq -r .accel "$SJ")"
check "state: tap netns" "$NS" "$(jq -r .tap_netns "$SJ")"
check "state: guest addresses" "203.0.113.254 2001:db8:9::2" "$(jq -r '.guest_addrs | join(" ")' "$SJ")"
check "state: tap ifindex is the tap's" "$(ip -n "$NS" -o link show "$TAP" 2> /dev/null | cut -d: -f1)" \
	"$(jq -r .tap_ifindex "$SJ")"
check "the tap is up in the test host's netns, addressed" "203.0.113.253/30" \
	"$(ip -n "$NS" -o -4 addr show dev "$TAP" 2> /dev/null | awk '{ print $4 }')"
check "no tap in the root netns" 0 "$(ip -o link show | grep -c ": $TAP[:@]" || true)"
sleep 0.3
check "the VM waits for a tracer: qemu not started" sandbox-vm "$(cat "/proc/$QPID/comm" 2> /dev/null)"
OUT="$WORK/trace.jsonl"
start_trace "$OUT" --sandbox "$NAME" --state-dir "$STATE" || exit 1
check_true "after the handshake the child becomes qemu" wait_exe "$QPID" "*/qemu-system-x86_64"
check "qemu runs in the sandbox cgroup" "0::/sbtrace/$NAME" "$(grep '^0::' "/proc/$QPID/cgroup" 2> /dev/null)"
check_true "the cgroup's cgroup.procs lists qemu" grep -qx "$QPID" "$CG2_SB/$NAME/cgroup.procs"
check "qemu has no capabilities" 0000000000000000 \
	"$(awk '$1 == "CapEff:" { print $2 }' "/proc/$QPID/status" 2> /dev/null)"
wait "$SHIM_PID"
check "shim exit code is the guest workload's" 0 $?
SHIM_PID=""
printf 'hello from the test host\nhello over IPv6\n' > "$WORK/want1"
check_true "the pages reach the shim's stdout, nothing else" cmp -s "$WORK/want1" "$WORK/out1"
[ -s "$WORK/out1" ] || log "stdout: $(cat "$WORK/out1"); stderr: $(cat "$WORK/err1")"
stop_trace INT
check "the tracer saw qemu's exec in the sandbox (the guest's execs stay invisible)" \
	"qemu-system-x86_64" \
	"$(jq -r 'select(.event == "ProcessExec") | .filename' "$OUT" | head -n 1 | sed 's|.*/||')"
check "TraceStarted says how the VM runs (accel)" "$want_accel" \
	"$(jq -r -n '[inputs | select(.event == "TraceStarted")][0].sandboxes[0].accel' "$OUT")"
check "the tap is gone after the run" 0 "$(tap_in_ns)"
check "nothing left after the run" "- - - -" "$(leftovers "$NAME")"
timings_ok() { jq -e '.boot_ms > 0 and .total_ms >= .boot_ms' "$WORK/timings.json" > /dev/null; }
check_true "timings: boot_ms recorded" timings_ok
log "boot: $(jq -c . "$WORK/timings.json")"

# --- 2: exit code, merged output byte for byte, the workspace (9p) ---------
mkdir -p "$WORK/ws/sub"
printf 'from the workspace\n' > "$WORK/ws/data.txt"
printf 'x' > "$WORK/ws/sub/x"
ln -s data.txt "$WORK/ws/link"
"$SHIM" run --backend qemu --name "${NAME}b" --state-dir "$STATE" --guest "$GUEST" --no-wait \
	--vm-timeout 120 --workspace "$WORK/ws" -- \
	sh -c 'cat link; ls sub; echo "it'\''s stderr" >&2; printf "no newline"; exit 7' \
	> "$WORK/out2" 2> "$WORK/err2"
check "guest exit 7: shim exit 7" 7 $?
printf "from the workspace\nx\nit's stderr\nno newline" > "$WORK/want2"
check_true "workspace, quoting, stderr merged, a last line without newline" \
	cmp -s "$WORK/want2" "$WORK/out2"
cmp -s "$WORK/want2" "$WORK/out2" || log "got: $(od -c "$WORK/out2" | head -n 5); stderr: $(cat "$WORK/err2")"
check "nothing left after exit 7" "- - - -" "$(leftovers "${NAME}b")"

# --- 3: SIGTERM to the shim mid-boot ----------------------------------------
"$SHIM" run --backend qemu --name "${NAME}c" --state-dir "$STATE" --guest "$GUEST" --no-wait \
	--tap-netns "$NS" --tap-addrs 203.0.113.253/30,203.0.113.254/30 -- sleep 60 \
	> "$WORK/out3" 2> "$WORK/err3" &
SHIM_PID=$!
i=0
while [ ! -e "$STATE/${NAME}c.json" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
QPID=$(jq -r .pid "$STATE/${NAME}c.json" 2> /dev/null)
check_true "qemu started" wait_exe "$QPID" "*/qemu-system-x86_64"
check "the tap exists while the VM boots" 1 "$(tap_in_ns)"
sleep 0.5
kill -TERM "$SHIM_PID"
wait "$SHIM_PID"
check "SIGTERM: shim exit 143" 143 $?
SHIM_PID=""
check_true "SIGTERM: qemu is gone" [ ! -e "/proc/$QPID/exe" ]
check "SIGTERM: the tap is gone" 0 "$(tap_in_ns)"
check "SIGTERM: nothing left" "- - - -" "$(leftovers "${NAME}c")"

# --- 4: a SIGKILLed shim: qemu dies with it, gc removes the rest ------------
"$SHIM" run --backend qemu --name "${NAME}d" --state-dir "$STATE" --guest "$GUEST" --no-wait \
	--tap-netns "$NS" --tap-addrs 203.0.113.253/30,203.0.113.254/30 -- sleep 60 \
	> /dev/null 2>&1 &
SHIM_PID=$!
i=0
while [ ! -e "$STATE/${NAME}d.json" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
QPID=$(jq -r .pid "$STATE/${NAME}d.json" 2> /dev/null)
check_true "qemu started (kill test)" wait_exe "$QPID" "*/qemu-system-x86_64"
kill -KILL "$SHIM_PID"
wait "$SHIM_PID" 2> /dev/null
SHIM_PID=""
i=0
while [ -e "/proc/$QPID/exe" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
check_true "SIGKILL: qemu died with the shim" [ ! -e "/proc/$QPID/exe" ]
# /proc/PID/exe goes before the exiting process's files are closed: wait for the tap.
i=0
while [ "$(tap_in_ns)" -ne 0 ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
check "SIGKILL: its tap went with it" 0 "$(tap_in_ns)"
check "SIGKILL: state and per-run files left for gc" "state vmdir" \
	"$(leftovers "${NAME}d" | awk '{ print $2, $4 }')"
"$SHIM" gc --state-dir "$STATE" > /dev/null 2>&1
check "gc: nothing left" "- - - -" "$(leftovers "${NAME}d")"

# --- 5: gc deletes a tap that outlived its shim, and only that one ----------
# A state file as a killed shim's (dead shim pid), naming two persistent taps:
# one with its recorded ifindex (deleted), one with another (kept).
sh -c 'exit 0' &
DEAD=$!
wait "$DEAD"
ip -n "$NS" tuntap add dev sbtgcx1 mode tap
ip -n "$NS" tuntap add dev sbtgcx2 mode tap
for t in sbtgcx1 sbtgcx2; do
	idx=$(ip -n "$NS" -o link show "$t" | cut -d: -f1)
	[ "$t" = sbtgcx2 ] && idx=$((idx + 1000))
	n="${NAME}gc$t"
	jq -cn --arg n "$n" --arg cg "$CG2_SB/$n" --argjson pid "$DEAD" --arg ns "$NS" \
		--arg tap "$t" --argjson idx "$idx" \
		'{name: $n, backend: "qemu", cgroup: $cg, cgroup_id: 1, pid: $pid, shim_pid: $pid,
		  netns: "/proc/\($pid)/ns/net", start_ns: 1,
		  visibility: {exec: "none", network: "tap"},
		  tap: $tap, tap_netns: $ns, tap_ifindex: $idx, guest_addrs: ["203.0.113.254"]}' \
		> "$STATE/$n.json"
	mkdir -p "$STATE/$n.vm" && : > "$STATE/$n.vm/initrd"
done
"$SHIM" gc --state-dir "$STATE" -v > "$WORK/gc.out" 2>&1
check "gc: removed both stale sandboxes" 2 "$(grep -c 'removed sandbox' "$WORK/gc.out")"
check "gc: the tap with the recorded ifindex is deleted" 0 \
	"$(ip -n "$NS" -o link show sbtgcx1 2> /dev/null | wc -l)"
check "gc: a tap with another ifindex is not touched" 1 \
	"$(ip -n "$NS" -o link show sbtgcx2 2> /dev/null | wc -l)"
check "gc: per-run dirs removed" 0 "$(ls "$STATE" | grep -c "gc")"
ip -n "$NS" link del sbtgcx2 2> /dev/null

# --- 6: the state file's qemu fields are checked as untrusted input ----------
# (read by sbtrace trace --sandbox: refused with the field named, before any BPF)
bad_state() { # NAME JQ-EDIT: a valid qemu state file for NAME, edited
	jq -cn --arg n "$1" --arg cg "$CG2_SB/$1" \
		'{name: $n, backend: "qemu", cgroup: $cg, cgroup_id: 1, pid: 1, shim_pid: 1,
		  netns: "/proc/1/ns/net", start_ns: 1, visibility: {exec: "none", network: "tap"},
		  tap: "sbt00000000", tap_netns: "", tap_ifindex: 5, guest_addrs: ["203.0.113.254"]}' |
		jq -c "$2" > "$STATE/$1.json"
}
for edit in '.tap_netns = "../etc"' '.tap = "a/b"' '.tap = "sixteen-chars-xx"' \
	'.tap_ifindex = 0' '.guest_addrs = ["not-an-ip"]' '.guest_addrs = [1]' \
	'.guest_addrs = ["1.2.3.4","1.2.3.4","1.2.3.4","1.2.3.4","1.2.3.4"]' 'del(.tap_netns)' \
	'.visibility.exec = "all"' '.accel = "hvf"' '.accel = 1' '.backend = "ns"'; do
	bad_state "${NAME}s" "$edit"
	"$SBTRACE" trace --sandbox "${NAME}s" --state-dir "$STATE" --duration 1 > /dev/null 2> "$WORK/err7"
	rc=$?
	field=$(printf '%s' "$edit" | sed -n 's/^[^.]*\.\([a-z_.]*\).*/\1/p' | sed 's/ *$//')
	[ "$edit" = '.backend = "ns"' ] && field=tap # the tap fields belong to qemu only
	check "state '$edit': refused (exit 2)" 2 "$rc"
	check_true "state '$edit': the message names '$field'" grep -q "'$field'" "$WORK/err7"
done
rm -f "$STATE/${NAME}s.json"

# --- 7: usage errors: exit 2 before anything is made ------------------------
"$SHIM" run --backend qemu --name "${NAME}e" --state-dir "$STATE" -- true 2> "$WORK/err6"
check "no --guest: exit 2" 2 $?
check_true "no --guest: names the script" grep -q "guest-build.sh" "$WORK/err6"
"$SHIM" run --backend qemu --name "${NAME}e" --state-dir "$STATE" --guest "$GUEST" \
	--tap-addrs 203.0.113.253/30,198.51.100.9/30 -- true 2> "$WORK/err6"
check "addresses in two subnets: exit 2" 2 $?
"$SHIM" run --backend qemu --name "${NAME}e" --state-dir "$STATE" --guest "$GUEST" \
	--tap-netns "no-such-ns-$$" -- true 2> "$WORK/err6"
check "unknown tap netns: exit 2" 2 $?
"$SHIM" run --name "${NAME}e" --state-dir "$STATE" --tap-netns "$NS" -- true 2> "$WORK/err6"
check "tap options without --backend qemu: exit 2" 2 $?
check "nothing made by the refused runs" "- - - -" "$(leftovers "${NAME}e")"
finish
