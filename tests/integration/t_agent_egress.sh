#!/bin/sh
# sbtrace agent: per-sandbox egress policy (issue 14). The agent starts first;
# then a shim sandbox with --allow rules (its state file) and children of
# --cgroup-parent with policy files (--policy-dir DIR/<child>.policy). From
# each, a connect to the allowed test host succeeds and one to another test
# host gets EPERM at once; EgressAllowed/EgressDenied name the right sandbox
# and /metrics counts equal the events; a malformed policy file denies its
# child everything (file:line said); a sandbox without a policy is left
# alone; a group-writable policy dir is refused; no link is left once a
# sandbox is removed, nor once the agent stops. A podman container gets its
# policy file by its cgroup name; a child beyond --max-sandboxes is denied.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/netlib.sh"

SHIM="$TOP/build/bin/sbtrace-shim"
STATE="$WORK/state"
PDIR="$WORK/policies"
P="ae$$"
PORT=$((20000 + ($$ + 7) % 30000))
OUT="$WORK/agent.jsonl"
SHIM_PID=""

net_require_tools
command -v bpftool > /dev/null || fail "bpftool missing (make deps)"
command -v curl > /dev/null || fail "curl missing (make deps: curl)"
net_world_up || exit 1

IMAGE=localhost/sbtrace-busybox:latest
PODMAN="podman --runtime runc --cgroup-manager cgroupfs --events-backend file"
CTR="$P-c"
if PODMAN_ENV=$("$TOP/scripts/podman-setup.sh" 2> "$WORK/podman-setup.err"); then
	eval "$PODMAN_ENV"
else
	fail "scripts/podman-setup.sh failed: $(tail -n 3 "$WORK/podman-setup.err")"
	finish
fi

egress_cleanup() {
	$PODMAN rm -f -t 0 "$CTR" > /dev/null 2>&1
	[ -n "$SHIM_PID" ] && kill -TERM "$SHIM_PID" 2> /dev/null && wait "$SHIM_PID" 2> /dev/null
	remove_sandboxes "$SHIM" "$STATE" "$P"
	net_cleanup_hook
}
trap egress_cleanup EXIT

PARENT=$(mk_cgroup pods)
PARENT_NAME=$(sb_name "$PARENT")
PARENT_ID=$(stat -c %i "$PARENT")
mkdir -m 0755 "$PDIR"
printf '# child ca: one test host, TCP 80\ncidr %s/32 port 80 proto tcp\n' "$NET_T1_V4" > "$PDIR/ca.policy"
printf 'cidr %s/32 port 80\ncidr 198.51.100.7/33\n' "$NET_T1_V4" > "$PDIR/cbad.policy"

# --- a group-writable policy dir is refused -----------------------------------
mkdir -m 0775 "$WORK/gw"
chmod 0775 "$WORK/gw"
"$SBTRACE" agent --cgroup-parent "$PARENT" --no-shim --policy-dir "$WORK/gw" --no-socket \
	--duration 1 > /dev/null 2> "$WORK/gw.err"
check "a group-writable --policy-dir: exit 2" 2 $?
check_true "... and the message says why" grep -q "writable by nobody else" "$WORK/gw.err"

"$SBTRACE" agent --cgroup-parent "$PARENT" --state-dir "$STATE" --policy-dir "$PDIR" \
	--out "$OUT" --metrics-addr "127.0.0.1:$PORT" --stats-interval 1 --no-socket --max-sandboxes 5 \
	--poll-ms 20 2> "$WORK/agent.err" &
TRACE_PID=$!
TRACE_OUT=$OUT
has_started() { [ -s "$OUT" ] && head -n 1 "$OUT" | grep -q '"TraceStarted"'; }
wait_for 10 has_started || { log "agent did not start: $(cat "$WORK/agent.err")"; exit 1; }

check "TraceStarted: the egress hooks, as cgroup links" cgroup_link \
	"$(head -n 1 "$OUT" | jq -r '.hooks.egress.mode')"
# The agent's egress links: on the parent (8, from the start) and per shim sandbox.
links_on() { bpftool -j link show 2> /dev/null | jq --argjson c "$1" '[.[] | select(.type == "cgroup" and .cgroup_id == $c)] | length'; }
check "8 egress links on the watched parent" 8 "$(links_on "$PARENT_ID")"

# --- a shim sandbox with --allow: enforced before its workload runs ------------
mkdir -p "$WORK/ws"
cp "$SBTNET" "$WORK/ws/sbt-net"
SB_SHIM="/sbtrace/$P-s"
"$SHIM" run --name "$P-s" --state-dir "$STATE" --workspace "$WORK/ws" --net veth \
	--veth-addrs 203.0.113.254/30,203.0.113.253/30 --veth-host-netns "$NET_HOST" \
	--allow "cidr $NET_T1_V4/32 port 80 proto tcp" -- /bin/busybox sh -c \
	"/workspace/sbt-net --timeout 2000 tcp $NET_T1_V4 80 > /workspace/allowed; /workspace/sbt-net --timeout 2000 tcp $NET_T2_V4 80 > /workspace/denied; exec /bin/busybox sleep 60" \
	2> "$WORK/shim.err" &
SHIM_PID=$!
ran() { [ -s "$WORK/ws/denied" ]; }
wait_for 20 ran
check "shim: the allowed test host answers" ok "$(cut -d' ' -f1 "$WORK/ws/allowed" 2> /dev/null)"
check "shim: the other one is refused at once (EPERM)" "err EPERM" "$(cut -d' ' -f1,2 "$WORK/ws/denied" 2> /dev/null)"
check "shim: SandboxAdded with its policy from the state file" "true state_file enforce 1 null" \
	"$(jq -r --arg s "$SB_SHIM" 'select(.event == "SandboxAdded" and .sandbox == $s) | "\(.released) \(.egress.source) \(.egress.mode) \(.egress.rules) \(.egress.error)"' "$OUT")"
SHIM_CG_ID=$(jq -r --arg s "$SB_SHIM" 'select(.event == "SandboxAdded" and .sandbox == $s) | .cgroup_id' "$OUT")
check "shim: 8 egress links on its cgroup" 8 "$(links_on "$SHIM_CG_ID")"
# The trace does not read the shim's rules: it refuses rather than drop them.
"$SBTRACE" trace --sandbox "$P-s" --state-dir "$STATE" --duration 1 > /dev/null 2> "$WORK/trace-sb.err"
check "sbtrace trace --sandbox of it without rules of its own: exit 2" 2 $?
check_true "... saying only the agent reads them" grep -q "only sbtrace agent reads" "$WORK/trace-sb.err"

# --- a microVM shim sandbox with a policy: its tap is not the agent's -----------
# Its guest's traffic crosses the tap, not a socket hook: the agent cannot
# enforce the policy, so it does not release the sandbox (the VM never starts).
require_qemu_guest
"$SHIM" run --backend qemu --name "$P-v" --state-dir "$STATE" --guest "$GUEST" \
	--tap-netns "$NET_HOST" --tap-addrs 198.18.77.1/30,198.18.77.2/30 \
	--allow "cidr $NET_T1_V4/32 port 80 proto tcp" -- /bin/true > "$WORK/vm.out" 2> "$WORK/vm.err" &
VM_PID=$!
vm_refused() { grep -q "shim sandbox $P-v runs in a microVM with an egress policy" "$WORK/agent.err"; }
wait_for 20 vm_refused
check_true "a microVM with a policy: not released, said on stderr" vm_refused
check "... no SandboxAdded for it" false \
	"$(jq -n --arg s "/sbtrace/$P-v" 'any(inputs; .event == "SandboxAdded" and .sandbox == $s)' "$OUT")"
sleep 1
check_true "... its shim still waits for a tracer" kill -0 "$VM_PID"
check "... and its VM never ran" "" "$(pgrep -P "$VM_PID" -x qemu-system-x86_64)"
kill -TERM "$VM_PID"
wait "$VM_PID" 2> /dev/null
check "... SIGTERM: nothing left in the state dir" "" "$(ls "$STATE" | grep "^$P-v" | tr '\n' ' ')"

# --- children of the parent: policy file, malformed file, none ------------------
for c in ca cbad cnone; do mkdir "$PARENT/$c"; done
added() { jq -e -n --arg s "$PARENT_NAME/$1" 'any(inputs; .event == "SandboxAdded" and .sandbox == $s)' "$OUT" > /dev/null 2>&1; }
for c in ca cbad cnone; do wait_for 5 added "$c"; done
check "ca: SandboxAdded, its policy file" "cgroup_mkdir policy_dir enforce 1" \
	"$(jq -r --arg s "$PARENT_NAME/ca" 'select(.event == "SandboxAdded" and .sandbox == $s) | "\(.registered_by) \(.egress.source) \(.egress.mode) \(.egress.rules)"' "$OUT")"
check "cbad: SandboxAdded, denied" "policy_dir denied" \
	"$(jq -r --arg s "$PARENT_NAME/cbad" 'select(.event == "SandboxAdded" and .sandbox == $s) | "\(.egress.source) \(.egress.mode)"' "$OUT")"
check_true "cbad: the error names file:line" sh -c "jq -r 'select(.event == \"SandboxAdded\") | .egress.error // empty' '$OUT' | grep -qF '$PDIR/cbad.policy:2:'"
check_true "cbad: stderr says file:line and that it is denied" sh -c "grep -F '$PDIR/cbad.policy:2:' '$WORK/agent.err' | grep -q 'all its egress is denied'"
check "cnone: SandboxAdded, no policy" null \
	"$(jq -c --arg s "$PARENT_NAME/cnone" 'select(.event == "SandboxAdded" and .sandbox == $s) | .egress' "$OUT")"

ev() { jq -e -n --arg s "$1" --arg e "$2" --arg r "$3" 'any(inputs; .sandbox == $s and .event == $e and .reason == $r)' "$OUT" > /dev/null 2>&1; }
# "ok" or "err ERRNO"
conn() { in_sandbox "$PARENT/$1" "$SBTNET" --timeout 2000 tcp "$2" 80 | awk '{ print ($1 == "ok") ? "ok" : $1 " " $2 }'; }
check "ca: the allowed test host answers" ok "$(conn ca "$NET_T1_V4")"
check "ca: the other one is refused at once (EPERM)" "err EPERM" "$(conn ca "$NET_T2_V4")"
# Five denied connects of one process within the fold window: one record,
# the other four folded in the kernel (counted when ca is removed, below).
in_sandbox "$PARENT/ca" python3 -c "
import errno, socket
n = 0
for i in range(5):
    s = socket.socket()
    try:
        s.connect(('$NET_T2_V4', 80))
    except OSError as e:
        n += e.errno == errno.EPERM
print(n)" > "$WORK/five.txt" 2>&1
check "ca: five connects of one process, five EPERM" 5 "$(cat "$WORK/five.txt")"
check "cbad: even the host its bad file allowed is refused (fail closed)" "err EPERM" "$(conn cbad "$NET_T1_V4")"
check "cnone: no policy, not confined" ok "$(conn cnone "$NET_T2_V4")"
check "the test host served ca, cnone and the shim (3 connects so far)" 3 \
	"$(awk '$1 == "tcp"' "$NET_SERVER_LOG" | wc -l)"

# The race: a child with a policy, connecting right after its mkdir, before
# the agent may have read its file: denied either way (policy_pending, or
# its rule), never let through unconfined.
cp "$PDIR/ca.policy" "$PDIR/crace.policy"
T_MKDIR=$(date +%s%N)
mkdir "$PARENT/crace"
check "crace: a connect at once after mkdir to a host its policy does not allow: EPERM" \
	"err EPERM" "$(conn crace "$NET_T2_V4")"
wait_for 5 added crace
log "crace: SandboxAdded (policy applied) $(( $(jq -r --arg s "$PARENT_NAME/crace" 'select(.event == "SandboxAdded" and .sandbox == $s) | .ts / 1000 | floor' "$OUT") - T_MKDIR / 1000 )) us after mkdir; its first denial: $(jq -r --arg s "$PARENT_NAME/crace" 'select(.event == "EgressDenied" and .sandbox == $s) | .reason' "$OUT" | head -n 1)"

# A sixth sandbox finds no slot (--max-sandboxes 5): under --policy-dir it is
# denied, not let through unconfined.
mkdir "$PARENT/cfull"
check "cfull (no slot left): its connect is refused (EPERM)" "err EPERM" "$(conn cfull "$NET_T1_V4")"
check_true "cfull: the agent says it is not registered" grep -q "cfull.*raise --max-sandboxes\|max-sandboxes.*cfull" "$WORK/agent.err"

rmdir "$PARENT/cfull" "$PARENT/crace"
removed() { jq -e -n --arg s "$1" 'any(inputs; .event == "SandboxRemoved" and .sandbox == $s)' "$OUT" > /dev/null 2>&1; }
wait_for 10 removed "$PARENT_NAME/crace"

# A podman container under the parent: its policy file is named after its
# cgroup (libpod-<id>), written between create and start. --network=none: an
# allowed connect fails with ENETUNREACH (it got past the hook), a denied one
# with EPERM.
$PODMAN create --name "$CTR" --network=none --cgroup-parent="$PARENT_NAME" "$IMAGE" /bin/sh -c \
	"nc -w 2 $NET_T1_V4 80 < /dev/null; nc -w 2 $NET_T2_V4 80 < /dev/null" > "$WORK/ctr.id" 2> "$WORK/ctr.err" ||
	fail "podman create: $(cat "$WORK/ctr.err")"
CID=$(cat "$WORK/ctr.id")
SB_CTR="$PARENT_NAME/libpod-$CID"
printf 'cidr %s/32 port 80 proto tcp\n' "$NET_T1_V4" > "$PDIR/libpod-$CID.policy"
$PODMAN start -a "$CTR" > "$WORK/ctr.out" 2>&1
check "container: the allowed host passes the hook (no route: ENETUNREACH)" 1 \
	"$(grep -c "($NET_T1_V4).*Network is unreachable" "$WORK/ctr.out")"
check "container: the other host is refused (EPERM)" 1 \
	"$(grep -c "($NET_T2_V4).*Operation not permitted" "$WORK/ctr.out")"
check "container: SandboxAdded with its policy file" "policy_dir enforce" \
	"$(jq -r --arg s "$SB_CTR" 'select(.event == "SandboxAdded" and .sandbox == $s) | "\(.egress.source) \(.egress.mode)"' "$OUT")"
check "container: SandboxAdded names it from podman's storage (runtime, id, name, image)" \
	"podman $CID $CTR $IMAGE" \
	"$(jq -r --arg s "$SB_CTR" 'select(.event == "SandboxAdded" and .sandbox == $s) | .container | "\(.runtime) \(.id) \(.name) \(.image)"' "$OUT")"
check "a child that is no container: container null" null \
	"$(jq -c --arg s "$PARENT_NAME/ca" 'select(.event == "SandboxAdded" and .sandbox == $s) | .container' "$OUT")"
check_true "container: EgressAllowed (rule)" ev "$SB_CTR" EgressAllowed rule
check_true "container: EgressDenied (not_in_allowlist)" ev "$SB_CTR" EgressDenied not_in_allowlist

# A policy file in audit mode: nothing refused, what would be is reported.
printf 'egress audit # report only\ncidr %s/32 port 80\n' "$NET_T1_V4" > "$PDIR/caudit.policy"
mkdir "$PARENT/caudit"
wait_for 5 added caudit
check "caudit: SandboxAdded, audit" "policy_dir audit 1" \
	"$(jq -r --arg s "$PARENT_NAME/caudit" 'select(.event == "SandboxAdded" and .sandbox == $s) | "\(.egress.source) \(.egress.mode) \(.egress.rules)"' "$OUT")"
check "caudit: a host its rules do not allow is reached" ok "$(conn caudit "$NET_T2_V4")"
sleep 0.2
check "caudit: EgressObserved, would_deny" "not_in_allowlist true" \
	"$(jq -r --arg s "$PARENT_NAME/caudit" 'select(.event == "EgressObserved" and .sandbox == $s) | "\(.reason) \(.would_deny)"' "$OUT" | head -n 1)"

# --- events: the right sandbox, verdict and reason ----------------------------
sleep 0.3
verdicts() { jq -r --arg s "$1" 'select(.sandbox == $s and (.event | startswith("Egress"))) | "\(.event) \(.reason) \(.dst.addr // .daddr // "")"' "$OUT" | sort | uniq | tr '\n' ';'; }
check_true "shim: EgressAllowed (rule)" ev "$SB_SHIM" EgressAllowed rule
check_true "shim: EgressDenied (not_in_allowlist)" ev "$SB_SHIM" EgressDenied not_in_allowlist
check_true "ca: EgressAllowed (rule)" ev "$PARENT_NAME/ca" EgressAllowed rule
check_true "ca: EgressDenied (not_in_allowlist)" ev "$PARENT_NAME/ca" EgressDenied not_in_allowlist
check_true "cbad: EgressDenied (policy_error)" ev "$PARENT_NAME/cbad" EgressDenied policy_error
check "cbad: nothing allowed" 0 "$(nevents "$OUT" EgressAllowed "$PARENT_NAME/cbad")"
check "cnone: no egress event at all" 0 \
	"$(jq -s --arg s "$PARENT_NAME/cnone" '[.[] | select(.sandbox == $s and (.event | startswith("Egress")))] | length' "$OUT")"
check "ca: the allowance names its rule" "cidr $NET_T1_V4/32 port 80 proto tcp" \
	"$(jq -r --arg s "$PARENT_NAME/ca" 'select(.sandbox == $s and .event == "EgressAllowed") | .rule.text' "$OUT" | head -n 1)"
log "verdicts: shim $(verdicts "$SB_SHIM") ca $(verdicts "$PARENT_NAME/ca") cbad $(verdicts "$PARENT_NAME/cbad")"

# --- /metrics: egress counters equal the events ----------------------------------
curl -sf "http://127.0.0.1:$PORT/metrics" > "$WORK/scrape.txt"
check "GET /metrics answers" 0 $?
msum() { awk -v p="sbtrace_egress_verdicts_total{sandbox=\"$1\",verdict=\"$2\"," 'index($0, p) == 1 { n += $NF } END { print n + 0 }' "$WORK/scrape.txt"; }
esum() { jq -s --arg s "$1" --arg e "$2" '[.[] | select(.sandbox == $s and .event == $e) | .count] | add // 0' "$OUT"; }
for sb in "$SB_SHIM" "$PARENT_NAME/ca" "$PARENT_NAME/cbad"; do
	check "/metrics: allowed of $sb equal its EgressAllowed" "$(esum "$sb" EgressAllowed)" "$(msum "$sb" allowed)"
	check "/metrics: denied of $sb equal its EgressDenied" "$(esum "$sb" EgressDenied)" "$(msum "$sb" denied)"
done
check_true "/metrics: some egress counted" sh -c "[ $(msum "$PARENT_NAME/ca" denied) -ge 1 ]"

# --- removal: no link left ---------------------------------------------------------
kill -TERM "$SHIM_PID"
wait "$SHIM_PID" 2> /dev/null
SHIM_PID=""
wait_for 30 removed "$SB_SHIM"
check_true "shim stopped: SandboxRemoved" removed "$SB_SHIM"
check "shim removed: none of its links left" 0 "$(links_on "$SHIM_CG_ID")"
rmdir "$PARENT/ca"
wait_for 10 removed "$PARENT_NAME/ca"
check_true "ca removed: SandboxRemoved" removed "$PARENT_NAME/ca"
check "ca removed: its denials to $NET_T2_V4 count all six (the folded tail came out)" 6 \
	"$(jq -s --arg s "$PARENT_NAME/ca" --arg d "$NET_T2_V4" '[.[] | select(.sandbox == $s and .event == "EgressDenied" and (tostring | contains($d))) | .count] | add' "$OUT")"

validate_schema "$OUT"
kill -INT "$TRACE_PID"
wait "$TRACE_PID"
check "agent: exit 0 on SIGINT" 0 $?
TRACE_PID=""
check "agent stopped: no link left on the parent" 0 "$(links_on "$PARENT_ID")"
check "agent stopped: no pinned object of it" 0 "$(find /sys/fs/bpf -name "*$P*" 2> /dev/null | wc -l)"
finish
