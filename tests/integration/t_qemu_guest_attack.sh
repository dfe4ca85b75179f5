#!/bin/sh
# The guest agent against its own workload (a real microVM under TCG): the
# workload runs as uid 1000 without capabilities and tries to silence or
# fool the agent the init started as guest root: open the virtio-serial
# port sbt.exec for writing and for reading, write a virtio console
# (/dev/hvc*, when there is one), signal the agent (SIGTERM, SIGKILL,
# SIGSTOP), ptrace it, open its /proc/PID/mem, undo its OOM immunity, load a BPF program and
# create a BPF map, unload virtio_console (delete_module), set
# kernel.unprivileged_bpf_disabled to 0, leave the cgroup. Each fails with
# the errno a confined process gets, and the stream stays whole: BYE with
# execs == records, seq without a gap, every attempt's exec in it.
# Then the test hook SBTRACE_TEST_GUEST_AGENT_KILL_MS (the init SIGKILLs the
# agent that long after releasing the workload): HELLO, and the stream ends
# without BYE, which is how the host tells a killed agent. And an agent that
# fails to start: the workload runs all the same, the shim says why. And a
# workload that prints the init's exit line itself (issue 24): its exit code
# is still its own, and what it printed after is not dropped.
. "$(dirname "$0")/lib.sh"

STATE="$WORK/state"
NAME="qa$$"
[ -x "$TOP/build/bin/sbtrace-shim" ] || { log "sbtrace-shim missing: run make"; exit 1; }
[ -x "$TOP/build/tests/sbt-escape" ] || { log "sbt-escape missing: run make"; exit 1; }
require_qemu_guest
mkdir -p "$STATE" "$WORK/ws"
cp "$TOP/build/tests/sbt-escape" "$WORK/ws/"

cat > "$WORK/ws/attack.sh" << 'EOF2'
E=/workspace/sbt-escape
port=
for f in /sys/class/virtio-ports/*/name; do
	read -r n < "$f" && [ "$n" = sbt.exec ] && f=${f%/name} && port=/dev/${f##*/}
done
a=
for p in /proc/[0-9]*; do
	read -r c < "$p/comm" 2> /dev/null && [ "$c" = sbtrace ] && a=${p#/proc/}
done
echo "found port=${port:+yes} agent=${a:+yes}"
echo "r port-write $($E write "$port" x)"
echo "r port-read $($E read "$port")"
hvc=none
tries=0
for h in /dev/hvc*; do
	[ -e "$h" ] || continue
	tries=$((tries + 1))
	hvc=$($E write "$h" x)
	[ "$hvc" != ok ] || break
done
echo "r hvc-write $hvc"
echo "hvc-tries $tries"
echo "r kill-term $($E kill "$a" 15)"
echo "r kill-kill $($E kill "$a" 9)"
echo "r kill-stop $($E kill "$a" 19)"
echo "r ptrace $($E ptrace "$a")"
echo "r mem $($E read "/proc/$a/mem")"
read -r o < "/proc/$a/oom_score_adj" && echo "agent-oom $o"
echo "r oom $($E write "/proc/$a/oom_score_adj" 0)"
echo "r bpf-prog $($E bpf-prog)"
echo "r bpf-map $($E bpf)"
echo "r rmmod $($E delete-module virtio_console)"
echo "r sysctl $($E write /proc/sys/kernel/unprivileged_bpf_disabled 0)"
echo "r cgroup-leave $($E write /sys/fs/cgroup/cgroup.procs $$)"
EOF2
start=$(date +%s)
QR_TRACE="$WORK/trace.jsonl" qemu_run_stream "$STATE" "$NAME" "$WORK/out" "$WORK/err" "$WORK/stream" -- \
	--guest "$GUEST" --vm-timeout 180 --vm-mem 512 \
	--workspace "$WORK/ws:ro" -- /usr/bin/env sh /workspace/attack.sh
log "the attack VM ran $(($(date +%s) - start)) s"
check "the workload's exit code is 0" 0 "$QRC"
[ "$QRC" -eq 0 ] || log "stdout: $(cat "$WORK/out"); stderr: $(tail -c 2000 "$WORK/err")"
check "the workload found the port and the agent" "found port=yes agent=yes" "$(grep '^found ' "$WORK/out")"
r() { sed -n "s/^r $1 //p" "$WORK/out"; }
check "the port: not writable" "err EACCES" "$(r port-write)"
check "the port: not readable" "err EACCES" "$(r port-read)"
hvc=$(r hvc-write)
case $hvc in none | "err EACCES" | "err ENXIO" | "err EIO") log "ok: no writable /dev/hvc* ($hvc)" ;; *) fail "a /dev/hvc* is writable: $hvc" ;; esac
check "SIGTERM to the agent" "err EPERM" "$(r kill-term)"
check "SIGKILL to the agent" "err EPERM" "$(r kill-kill)"
check "SIGSTOP to the agent" "err EPERM" "$(r kill-stop)"
check "PTRACE_ATTACH to the agent" "err EPERM" "$(r ptrace)"
check "the agent's /proc/PID/mem" "err EACCES" "$(r mem)"
check "the agent is spared by the OOM killer" -1000 "$(sed -n 's/^agent-oom //p' "$WORK/out")"
check "... and the workload cannot change that" "err EACCES" "$(r oom)"
check "BPF_PROG_LOAD (socket filter)" "err EPERM" "$(r bpf-prog)"
check "BPF_MAP_CREATE" "err EPERM" "$(r bpf-map)"
check "delete_module virtio_console" "err EPERM" "$(r rmmod)"
check "unprivileged_bpf_disabled stays" "err EACCES" "$(r sysctl)"
check "leaving the cgroup" "err EACCES" "$(r cgroup-leave)"
"$TOP/build/tests/sbt-gsread" "$WORK/stream" | grep -v '^beat ' > "$WORK/gs"
attempts=$(grep -c "filename=/workspace/sbt-escape " "$WORK/gs")
check "HELLO first" hello "$(head -n 1 "$WORK/gs" | cut -d ' ' -f 1)"
# 13 attempts, and one per /dev/hvc*
check "every attempt's exec is in the stream" \
	$((13 + $(sed -n 's/^hvc-tries //p' "$WORK/out"))) "$attempts"
check "the first exec is the workload's argv[0]" "1 /usr/bin/env" \
	"$(sed -n 's/^exec seq=\([0-9]*\) .* filename=\([^ ]*\) .*/\1 \2/p' "$WORK/gs" | head -n 1)"
n=$(grep -c '^exec ' "$WORK/gs")
check "BYE: execs == records == the stream's execs, none lost" "bye execs=$n lost=0 records=$n" \
	"$(grep '^bye ' "$WORK/gs")"
check "seq without a gap" "$(seq 1 "$n" | tr '\n' ' ')" \
	"$(sed -n 's/^exec seq=\([0-9]*\) .*/\1/p' "$WORK/gs" | tr '\n' ' ')"
check "the stream ends whole" "end ok" "$(tail -n 1 "$WORK/gs")"
# The host's trace, which followed the VM: the same execs, and complete.
stopped() { jq -r -n "[inputs | select(.event == \"TraceStopped\")][0].sandboxes[0] | $2" "$1"; }
# (execs: the guest's n and, booted cold, qemu's own on the host; a restored
# guest's qemu started, paused, before the release)
q=1
[ "$(jq -r -n '[inputs | select(.event == "TraceStarted")][0].sandboxes[0].boot.mode' "$WORK/trace.jsonl")" != restored ] || q=0
check "the host's trace: exit 0, the guest's execs complete, the agent's BYE" \
	"0 true true $((n + q)) $((n + q))" \
	"$QR_TRACE_RC $(stopped "$WORK/trace.jsonl" '"\(.exec_complete) \(.guest.bye) \(.execs) \(.received)"')"

# The test hook: the agent SIGKILLed 300 ms into the workload.
start=$(date +%s)
SBTRACE_TEST_GUEST_AGENT_KILL_MS=300 QR_TRACE="$WORK/trace2.jsonl" qemu_run_stream "$STATE" \
	"$NAME" "$WORK/out2" "$WORK/err2" "$WORK/stream2" -- --guest "$GUEST" --vm-timeout 180 --vm-mem 512 \
	-- /usr/bin/env sh -c 'sleep 2; /bin/true'
log "the kill-hook VM ran $(($(date +%s) - start)) s"
check "the workload's exit code is 0 (agent killed)" 0 "$QRC"
"$TOP/build/tests/sbt-gsread" "$WORK/stream2" | grep -v '^beat ' > "$WORK/gs2"
log "stream: $(tr '\n' '|' < "$WORK/gs2")"
check "killed agent: HELLO first" hello "$(head -n 1 "$WORK/gs2" | cut -d ' ' -f 1)"
check "killed agent: no BYE" 0 "$(grep -c '^bye ' "$WORK/gs2")"
check "killed agent: the stream ends without BYE" "end no_bye" "$(tail -n 1 "$WORK/gs2")"
check_true "killed agent: the host's trace says its execs are not complete, and why" \
	sh -c "echo '$(stopped "$WORK/trace2.jsonl" '"\(.exec_complete) \(.complete) \(.guest.bye) \(.exec_incomplete_reason)"')' |
		grep -Eqx 'false false false guest_(agent_gone|stream_unfinished)'"
# An agent that fails (a stand-in sbtrace next to a copy of the shim exits 3): the workload
# runs all the same (as uid 1000), and the shim says why on stderr.
mkdir -p "$WORK/fake"
cp "$TOP/build/bin/sbtrace-shim" "$WORK/fake/"
printf '#!/bin/sh\necho "stand-in agent" >&2\nexit 3\n' > "$WORK/fake/sbtrace"
chmod 0755 "$WORK/fake/sbtrace"
QR_SHIM="$WORK/fake/sbtrace-shim" QR_TRACE="$WORK/trace3.jsonl" qemu_run_stream "$STATE" "$NAME" \
	"$WORK/out3" "$WORK/err3" "$WORK/stream3" -- --guest "$GUEST" --vm-timeout 180 --vm-mem 512 \
	-- /usr/bin/id -u
check "failed agent: the workload ran (exit 0, uid 1000)" "0 1000" "$QRC $(cat "$WORK/out3")"
check "failed agent: the host's trace: not complete, no HELLO" "false false guest_agent_absent" \
	"$(stopped "$WORK/trace3.jsonl" '"\(.exec_complete) \(.guest.attached) \(.exec_incomplete_reason)"')"
check "failed agent: the shim says why" \
	"sbtrace-shim run: sbt-guest: guest agent failed: it exited (status 3): stand-in agent " \
	"$(grep 'guest agent failed' "$WORK/err3")"
# No sbtrace next to the shim: no agent, and the execs are not visible (not a silent "complete").
mkdir -p "$WORK/bare"
cp "$TOP/build/bin/sbtrace-shim" "$WORK/bare/"
QR_SHIM="$WORK/bare/sbtrace-shim" QR_TRACE="$WORK/trace4.jsonl" qemu_run_stream "$STATE" "$NAME" \
	"$WORK/out4" "$WORK/err4" "$WORK/stream4" -- --guest "$GUEST" --vm-timeout 180 --vm-mem 512 \
	-- /usr/bin/true
check "no agent: the workload ran; no stream" "0 0" "$QRC $(wc -c < "$WORK/stream4")"
check "no agent: visibility exec none, not complete" "none false false" \
	"$(jq -r -n '[inputs | select(.event == "TraceStarted")][0].sandboxes[0].visibility.exec' "$WORK/trace4.jsonl") $(stopped "$WORK/trace4.jsonl" '"\(.exec_complete) \(.guest != null)"')"
check_true "no agent: the shim says the guest's execs will not be visible" \
	grep -q "not be visible" "$WORK/err4"
# The workload prints the init's exit line itself, then goes on and exits 3: its
# line is output, the exit code is the one the init reports (with its nonce).
"$TOP/build/bin/sbtrace-shim" run --backend qemu --name "$NAME" --state-dir "$STATE" --no-wait \
	--guest "$GUEST" --vm-timeout 180 -- /bin/sh -c 'echo; echo SBT-GUEST-EXIT 0; echo after; exit 3' \
	> "$WORK/out5" 2> "$WORK/err5"
check "a forged exit line: the workload's own exit code comes back" 3 "$?"
check "... its line and what followed are its output" "|SBT-GUEST-EXIT 0|after|" \
	"$(tr '\n' '|' < "$WORK/out5")"
check "nothing left in the state dir" "" "$(ls "$STATE")"
finish
