#!/bin/sh
# Egress modes and edges: audit (allowed, reported with would_deny), observe
# only (TCP connects seen through the run-time-chosen tcp_connect twin, and
# its fallbacks), packet sockets, loopback (host's denied as the floor, the
# sandbox's own allowed), allowlist files and their errors.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/netlib.sh"
net_require_tools
net_world_up || exit 1

C=$(mk_cgroup sbx)
SC=$(sb_name "$C")
ip netns exec "$NET_SBX" sysctl -qw net.ipv4.ping_group_range="0 0"

sandbox_net() { in_sandbox "$C" "$SBTNET" "$@"; }

# --- audit: nothing enforced, every verdict reported -------------------------
OUT="$WORK/audit.jsonl"
start_trace "$OUT" --cgroup "$C" --allow-cidr 203.0.113.5/32 --egress audit || exit 1
check "audit: non-allowed connect goes through" ok "$(sandbox_net tcp 198.51.100.7 80 | cut -d' ' -f1)"
check "audit: raw socket allowed" ok "$(sandbox_net raw 203.0.113.5 | cut -d' ' -f1)"
check "audit: allowed connect" ok "$(sandbox_net tcp 203.0.113.5 80 | cut -d' ' -f1)"
stop_trace INT
check "audit: the host received it" 1 "$(served_from_sandbox 198.51.100.7 80 tcp)"
check "audit: would_deny reported" "EgressObserved connect4 not_in_allowlist true" \
	"$(jq -r 'select(.daddr == "198.51.100.7" and .dport == 80) | "\(.event) \(.hook) \(.reason) \(.would_deny)"' "$OUT")"
check "audit: raw socket would be denied" "EgressObserved raw_socket true" \
	"$(jq -r 'select(.reason == "raw_socket") | "\(.event) \(.reason) \(.would_deny)"' "$OUT")"
check "audit: allowed one reported as allowed by rule" "EgressObserved false cidr 203.0.113.5/32" \
	"$(jq -r 'select(.daddr == "203.0.113.5" and .hook == "connect4") | "\(.event) \(.would_deny) \(.rule.text)"' "$OUT")"
check "audit: no EgressDenied" 0 "$(nevents "$OUT" EgressDenied)"

# --- observe only (no rules): TCP connects through the tcp_connect twin -------
net_logs_reset
OUT="$WORK/observe.jsonl"
start_trace "$OUT" --cgroup "$C" || exit 1
check "observe: mode" observe "$(head -n 1 "$OUT" | jq -r .egress.mode)"
CONNECT_MODE=$(head -n 1 "$OUT" | jq -r .hooks.connect.mode)
check_true "observe: a connect twin attached ($CONNECT_MODE)" [ "$CONNECT_MODE" != null ]
check "observe: nothing attached to the cgroup" 0 "$(bpftool cgroup show "$C" | grep -c egress_)"
check "observe: connect works" ok "$(sandbox_net tcp 198.51.100.7 80 | cut -d' ' -f1)"
check "observe: packet socket" ok "$(sandbox_net packet | cut -d' ' -f1)"
stop_trace INT
check "observe: connect seen" "EgressObserved tcp_connect no_policy false 80" \
	"$(jq -r 'select(.daddr == "198.51.100.7") | "\(.event) \(.hook) \(.reason) \(.would_deny) \(.dport)"' "$OUT")"
check "observe: packet socket seen" "EgressObserved socket_syscall packet_socket packet" \
	"$(jq -r 'select(.reason == "packet_socket") | "\(.event) \(.hook) \(.reason) \(.family)"' "$OUT")"

# The twin chosen here and what failed before it are reported; each fallback
# works: take the preferred ones away one by one.
FEAT=$("$SBTRACE" features)
check "features: connect mode matches TraceStarted" "$CONNECT_MODE" "$(echo "$FEAT" | jq -r .hooks.connect.mode)"
check "features: fentry tried first" fentry "$(echo "$FEAT" | jq -r '.hooks.connect.tried[0].mode')"
for disable in "connect:fentry,connect:kprobe,connect:tp_btf" "connect:fentry,connect:kprobe"; do
	OUT="$WORK/observe-$disable.jsonl"
	SBTRACE_DISABLE_HOOKS=$disable start_trace "$OUT" --cgroup "$C" || exit 1
	want=tracepoint
	[ "$disable" = "connect:fentry,connect:kprobe" ] && want=tp_btf
	sandbox_net tcp 198.51.100.7 8080 > /dev/null
	stop_trace INT
	check "fallback without ${disable}: mode" "$want" "$(head -n 1 "$OUT" | jq -r .hooks.connect.mode)"
	check "fallback without ${disable}: connect seen" "tcp_connect 8080" \
		"$(jq -r 'select(.event == "EgressObserved" and .daddr == "198.51.100.7") | "\(.hook) \(.dport)"' "$OUT")"
done

# --- loopback: the host's is the floor; a netns sandbox's own is its own ------
HC=$(mk_cgroup hostns)
OUT="$WORK/loopback.jsonl"
"$SBTNET" serve --log "$WORK/lo.log" --tcp 127.0.0.1:18081 > "$WORK/lo.ready" &
LO_PID=$!
ip netns exec "$NET_SBX" "$SBTNET" serve --log "$WORK/lo-sbx.log" --tcp 127.0.0.1:18082 > "$WORK/lo-sbx.ready" &
LO2_PID=$!
sleep 0.3
start_trace "$OUT" --cgroup "$HC" --cgroup "$C" --allow-cidr 203.0.113.5/32 || exit 1
res=$("$SPAWN" "$HC" --exec -- "$SBTNET" tcp 127.0.0.1 18081)
check "host-netns sandbox: host loopback denied" err "$(echo "$res" | cut -d' ' -f1)"
check "netns sandbox: its own loopback allowed" ok "$(sandbox_net tcp 127.0.0.1 18082 | cut -d' ' -f1)"
stop_trace INT
kill "$LO_PID" "$LO2_PID"; wait "$LO_PID" "$LO2_PID" 2> /dev/null
check "host loopback: floor event" "EgressDenied floor loopback" \
	"$(jq -r 'select(.daddr == "127.0.0.1" and .dport == 18081) | "\(.event) \(.reason) \(.floor)"' "$OUT")"
check "own loopback: allowed event" "EgressAllowed own_loopback" \
	"$(jq -r 'select(.daddr == "127.0.0.1" and .dport == 18082) | "\(.event) \(.reason)"' "$OUT")"

# --- allowlist files --------------------------------------------------------
cat > "$WORK/allow.list" <<'EOF'
# test hosts
cidr 203.0.113.5/32 port 80 proto tcp   # the allowed raw IP
host allowed.test port 80
EOF
OUT="$WORK/file.jsonl"
start_trace "$OUT" --cgroup "$C" --allowlist "$WORK/allow.list" || exit 1
check "allowlist: rule 1 allows" ok "$(sandbox_net tcp 203.0.113.5 80 | cut -d' ' -f1)"
check "allowlist: port not listed" err "$(sandbox_net tcp 203.0.113.5 8080 | cut -d' ' -f1)"
stop_trace INT
check "allowlist: rules with ids" '[{"id":1,"text":"cidr 203.0.113.5/32 port 80 proto tcp"},{"id":2,"text":"host allowed.test port 80"}]' \
	"$(head -n 1 "$OUT" | jq -c .egress.rules)"

printf 'cidr 203.0.113.5/32\ncidr 10.0.0.1/33 port 80\n' > "$WORK/bad.list"
before=$(nr_our_progs)
"$SBTRACE" trace --cgroup "$C" --allowlist "$WORK/bad.list" --duration 1 > "$WORK/bad.out" 2> "$WORK/bad.err"
check "bad allowlist: exit 2" 2 $?
check "bad allowlist: FILE:LINE:COL: message" "$WORK/bad.list:2:14:" "$(cut -d' ' -f1 "$WORK/bad.err")"
check_true "bad allowlist: says what is wrong" grep -q '/33' "$WORK/bad.err"
check "bad allowlist: nothing attached" "$before" "$(nr_our_progs)"
"$SBTRACE" trace --cgroup "$C" --allow-cidr 192.0.2.1/24 --duration 1 > /dev/null 2> "$WORK/bad2.err"
check "bad --allow-cidr: exit 2" 2 $?
check_true "bad --allow-cidr: did you mean" grep -q 'did you mean 192.0.2.0/24' "$WORK/bad2.err"
"$SBTRACE" trace --cgroup "$C" --egress sometimes --duration 1 > /dev/null 2>&1
check "bad --egress: exit 2" 2 $?
check "no cgroup program left on the sandbox" 0 "$(bpftool cgroup show "$C" 2> /dev/null | grep -c egress_)"
finish
