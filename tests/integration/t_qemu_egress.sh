#!/bin/sh
# A real microVM end to end: sbtrace-shim --backend qemu boots the guest
# (qemu -M microvm, TCG) with its tap in the test world's host netns;
# sbtrace trace --sandbox attaches the tap program before the guest runs.
# The guest fetches a page from an allowed test host (it arrives) and
# connects to a non-allowed IP literal (refused at once by the RST sent back
# into the guest); the events are keyed by the tap; the report says the
# guest's execs were invisible. The guest's DNS, sent to an address nobody
# has, is answered by sbtrace's proxy on the tap's host side: an allowed name
# resolves (through the operator's resolver, --resolver) and its address is
# reached; a name no rule allows is refused and never reaches the resolver.
# Then sbtrace probe --backend qemu: never a confident "safe", reason
# exec_not_visible.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/netlib.sh"

SHIM="$TOP/build/bin/sbtrace-shim"
STATE="$WORK/state"
NAME="qe$$"
[ -x "$SHIM" ] || { log "$SHIM missing: run make"; exit 1; }
require_qemu_guest
net_require_tools
net_world_up || exit 1
mkdir -p "$STATE"

# In the guest: an allowed fetch (the greeting), then a connect to a denied IP literal,
# timed with the guest's own clock (centiseconds of /proc/uptime).
cat > "$WORK/guest.sh" << 'EOF'
# DNS to 198.51.100.53 (nobody has it): the proxy answers
a=$(timeout 10 nslookup allowed.test 198.51.100.53 2>&1 | grep -o '192\.0\.2\.1$' | head -n 1)
if [ "$a" = 192.0.2.1 ] && [ "$(timeout 10 nc "$a" 80 < /dev/null)" = hello ]; then echo DNS-OK; fi
if timeout 10 nslookup blocked.test 198.51.100.53 2>&1 | grep -q REFUSED; then echo DNS-REFUSED; fi
# the test host's server greets with "hello" (sbt-net serve)
if [ "$(timeout 10 nc 198.51.100.7 80 < /dev/null)" = hello ]; then echo FETCH-OK; fi
a=$(cut -d' ' -f1 /proc/uptime)
# not -q: the guest's wget is the host's (GNU), which says nothing with -q
timeout 10 wget -O /dev/null http://203.0.113.5/ 2>&1
b=$(cut -d' ' -f1 /proc/uptime)
echo "REFUSED-IN $(awk "BEGIN { print $b - $a }")"
EOF
"$SHIM" run --backend qemu --name "$NAME" --state-dir "$STATE" --guest "$GUEST" --vm-timeout 90 \
	--tap-netns "$NET_HOST" --tap-addrs 203.0.113.253/30,203.0.113.254/30 \
	-- sh -c "$(cat "$WORK/guest.sh")" > "$WORK/guest.out" 2> "$WORK/shim.err" &
SHIM_PID=$!
i=0
while [ ! -e "$STATE/$NAME.json" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
check_true "state file written" [ -e "$STATE/$NAME.json" ]
TAP=$(jq -r .tap "$STATE/$NAME.json")
IFINDEX=$(jq -r .tap_ifindex "$STATE/$NAME.json")

OUT="$WORK/trace.jsonl"
start_trace "$OUT" --sandbox "$NAME" --state-dir "$STATE" \
	--allow-cidr '198.51.100.7/32 port 80 proto tcp' \
	--allow-host 'allowed.test port 80 proto tcp' --resolver 192.0.2.53 || exit 1
wait "$SHIM_PID"
check "the guest's workload exit code comes back" 0 $?
i=0
while kill -0 "$TRACE_PID" 2> /dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
stop_trace INT
check "trace: exit 0, stopped when the VM ended" "0 workload_exited" \
	"$TRACE_RC $(jq -r 'select(.event == "TraceStopped") | .reason' "$OUT")"
log "guest said: $(tr '\n' '|' < "$WORK/guest.out")"

check_true "the guest fetched from the allowed test host" grep -qx FETCH-OK "$WORK/guest.out"
check_true "the fetch reached the test host (its server log)" \
	grep -q "^tcp 203.0.113.254[^ ]* 198.51.100.7:80" "$NET_SERVER_LOG"
check_true "the denied connect failed with 'Connection refused' (the RST)" \
	grep -q "Connection refused" "$WORK/guest.out"
SECS=$(sed -n 's/^REFUSED-IN //p' "$WORK/guest.out")
check_true "refused in under 1 s in the guest (${SECS:-?} s)" awk "BEGIN { exit !(\"$SECS\" != \"\" && $SECS < 1) }"
check "nothing reached the denied test host" 0 "$(grep -c '203\.0\.113\.5' "$NET_SERVER_LOG")"
check_true "DNS: the proxy answered allowed.test, its address reached" grep -qx DNS-OK "$WORK/guest.out"
check_true "DNS: blocked.test refused" grep -qx DNS-REFUSED "$WORK/guest.out"
check "DNS: blocked.test never reached the resolver" 0 "$(grep -c 'blocked\.test' "$NET_DNS_LOG")"
check "DNS: the guest's queries went to the proxy, on the tap" "tap dns_proxy" \
	"$(jq -s -r '[.[] | select(.event == "EgressAllowed" and .dport == 53) | "\(.source) \(.reason)"] | unique | join(",")' "$OUT")"

S=$(head -n 1 "$OUT")
check "TraceStarted: the sandbox's tap, by the shim's ifindex" "$TAP $IFINDEX tcx" \
	"$(echo "$S" | jq -r '.sandboxes[0].tap | "\(.ifname) \(.ifindex) \(.mode)"')"
check "TraceStarted: guest address from the state file" '["203.0.113.254"]' \
	"$(echo "$S" | jq -c '.sandboxes[0].tap.guest')"
check "TraceStarted: visibility exec guest_kernel (the guest agent), network tap" \
	"guest_kernel tap guest_kernel tap" \
	"$(echo "$S" | jq -r '"\(.visibility.exec) \(.visibility.network) \(.sandboxes[0].visibility.exec) \(.sandboxes[0].visibility.network)"')"
check "EgressAllowed on the tap for the fetch" "tap $IFINDEX 1" \
	"$(jq -r 'select(.event == "EgressAllowed" and .daddr == "198.51.100.7") | "\(.source) \(.ifindex) \(.rule.id)"' "$OUT" | head -n 1)"
check "EgressDenied on the tap for the IP literal, RST sent" "tap $IFINDEX tcp_rst not_in_allowlist" \
	"$(jq -r 'select(.event == "EgressDenied" and .daddr == "203.0.113.5") | "\(.source) \(.ifindex) \(.reply) \(.reason)"' "$OUT" | head -n 1)"
check "ShellInvocationObserved: execs visible (the guest's stream), complete; the workload's sh -c" \
	"true true 1" \
	"$(jq -r 'select(.event == "ShellInvocationObserved") | "\(.exec_visible) \(.complete) \(.count)"' "$OUT")"
check "ProcessExec from inside the guest: its nslookup and wget" "nslookup wget" \
	"$(jq -r 'select(.event == "ProcessExec") | .comm' "$OUT" | grep -Ex 'nslookup|wget' | sort -u | tr '\n' ' ' | sed 's/ $//')"
check "the tap is gone with the VM" "" "$(ip -n "$NET_HOST" link show "$TAP" 2> /dev/null)"

# The probe on the qemu backend: the fixture's own build (make -B) runs in the
# guest with the host's make, its execs streamed by the guest agent, then its
# boot (--boot-cmd: a make repo says nothing of what it starts) in the guest
# too: a confident "safe".
FIX="$TOP/tests/fixtures/make-noshell"
"$SBTRACE" probe --backend qemu --guest "$GUEST" --tap-addrs 203.0.113.253/30,203.0.113.254/30 \
	--no-cache -q --timeout 90 --boot-cmd /bin/true "$FIX" > "$WORK/report.json" 2> "$WORK/probe.err"
check "probe --backend qemu: exit 0" 0 $?
validate_report "$WORK/report.json"
check "probe --backend qemu: the command is the fixture's make -B" "make -B" \
	"$(jq -r '.command.argv | join(" ")' "$WORK/report.json")"
check_true "probe --backend qemu: make ran its recipe in the guest" \
	grep -qx "cp src.txt out.txt" "$WORK/probe.err"
check_true "probe --backend qemu: the repo is untouched (no out.txt)" [ ! -e "$FIX/out.txt" ]
check "probe --backend qemu: safe, high (the guest kernel's execs, whole)" "safe high null" \
	"$(jq -r '"\(.verdict) \(.confidence) \(.reason)"' "$WORK/report.json")"
check "probe --backend qemu: visibility exec guest_kernel, network tap, accel tcg" "guest_kernel tap tcg" \
	"$(jq -r '"\(.visibility.exec) \(.visibility.network) \(.visibility.accel)"' "$WORK/report.json")"
check_true "probe --backend qemu: the VM booted (vm_boot timing)" \
	sh -c "[ \$(jq -r '.timings_ms.vm_boot // 0' '$WORK/report.json') -gt 0 ]"
check "probe --backend qemu: nothing left (netns, cgroup)" "0 0" \
	"$(ip netns list | grep -c "sbtrace-probe-" || true) $(ls "$CG2/sbtrace" 2> /dev/null | grep -c '^probe-' || true)"
# (a Dockerfile with --backend qemu builds in the guest: t_probe_vm.sh)
finish
