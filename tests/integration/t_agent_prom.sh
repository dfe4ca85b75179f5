#!/bin/sh
# sbtrace agent scraped by a real Prometheus (issue 27): 40 sandboxes living
# 2 s each (children of --cgroup-parent, each with a policy file), every one
# running execs, shells and denied connects; increase() over the host-level
# counters (no sandbox label) equals what the events say, exactly. A removed
# sandbox's counters stay scraped for the retention (its info series goes at
# once); --metrics-no-sandbox-label drops the dimension.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/netlib.sh"

PDIR="$WORK/policies"
OUT="$WORK/agent.jsonl"
PORT=$((20000 + ($$ + 11) % 30000))
PPORT=$((PORT + 1))
PROM_PID=""
N=40

net_require_tools
command -v prometheus > /dev/null || fail "prometheus missing (make deps: prometheus)"
command -v curl > /dev/null || fail "curl missing (make deps: curl)"
net_world_up || exit 1

prom_cleanup() {
	[ -n "$PROM_PID" ] && kill -TERM "$PROM_PID" 2> /dev/null && wait "$PROM_PID" 2> /dev/null
	net_cleanup_hook
}
trap prom_cleanup EXIT

PARENT=$(mk_cgroup pods)
PNAME=$(sb_name "$PARENT")
mkdir -m 0755 "$PDIR"

T_START=$(date +%s)
"$SBTRACE" agent --no-shim --no-socket --cgroup-parent "$PARENT" --policy-dir "$PDIR" \
	--out "$OUT" --metrics-addr "127.0.0.1:$PORT" --stats-interval 1 --poll-ms 20 \
	2> "$WORK/agent.err" &
TRACE_PID=$!
TRACE_OUT=$OUT
has_started() { [ -s "$OUT" ] && head -n 1 "$OUT" | grep -q '"TraceStarted"'; }
wait_for 10 has_started || { log "agent did not start: $(cat "$WORK/agent.err")"; exit 1; }

cat > "$WORK/prometheus.yml" << YML
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: sbtrace
    static_configs:
      - targets: ['127.0.0.1:$PORT']
YML
prometheus --config.file="$WORK/prometheus.yml" --storage.tsdb.path="$WORK/tsdb" \
	--web.listen-address="127.0.0.1:$PPORT" > "$WORK/prom.log" 2>&1 &
PROM_PID=$!

# query EXPR [TIME]: the first result's value ("" when none)
query() {
	curl -sf "http://127.0.0.1:$PPORT/api/v1/query" --data-urlencode "query=$1" \
		${2:+--data-urlencode "time=$2"} | jq -r '.data.result[0].value[1] // empty'
}
scraped() { [ "$(query 'count_over_time(up{job="sbtrace"}[1m])' 2> /dev/null)" -ge 3 ] 2> /dev/null; }
wait_for 60 scraped || { fail "prometheus did not scrape the agent: $(tail -n 5 "$WORK/prom.log")"; finish; }
check "prometheus: the agent is up" 1 "$(query 'up{job="sbtrace"}')"
check "before any sandbox: the host exec counter is there, at 0" 0 "$(query sbtrace_execs_total)"

# --- 40 sandboxes of 2 s each, ten at a time --------------------------------------
sandbox() {
	printf 'cidr %s/32 port 80 proto tcp\n' "$NET_T1_V4" > "$PDIR/s$1.policy"
	mkdir "$PARENT/s$1"
	in_sandbox "$PARENT/s$1" /bin/sh -c "$SBTNET --timeout 1000 tcp $NET_T2_V4 80; \
		$SBTNET --timeout 1000 tcp $NET_T2_V4 81; /bin/sh -c /bin/true; \
		$SBTNET --timeout 1000 tcp $NET_T1_V4 80; sleep 2" > "$WORK/s$1.out" 2>&1
	rmdir "$PARENT/s$1"
}
i=0
while [ $i -lt $N ]; do
	j=0 pids=""
	while [ $j -lt 10 ]; do
		sandbox $((i + j)) &
		pids="$pids $!"
		j=$((j + 1))
	done
	for p in $pids; do wait "$p"; done
	i=$((i + 10))
done
removed_all() { [ "$(nevents "$OUT" SandboxRemoved)" -ge $N ]; }
wait_for 20 removed_all
check "$N sandboxes added" $N "$(nevents "$OUT" SandboxAdded)"
check "$N sandboxes removed" $N "$(nevents "$OUT" SandboxRemoved)"
check "every sandbox's connects: 2 EPERM, then the allowed host" $N \
	"$(cat "$WORK"/s*.out | grep -c '^ok')"
# three scrapes after the last removal: every count is in the TSDB
sleep 3.5

EXECS=$(jq -s '[.[] | select(.event == "ProcessExec")] | length' "$OUT")
# a sandbox's ShellInvocationObserved sums its shells (.count) at its removal
SHELLS=$(jq -s '[.[] | select(.event == "ShellInvocationObserved") | .count] | add // 0' "$OUT")
DENIED=$(jq -s '[.[] | select(.event == "EgressDenied") | .count] | add // 0' "$OUT")
ALLOWED=$(jq -s '[.[] | select(.event == "EgressAllowed") | .count] | add // 0' "$OUT")
log "events: $EXECS execs, $SHELLS shells, $DENIED denials, $ALLOWED allowed"
check_true "each sandbox: at least 6 execs, 2 shells, 2 denials" \
	[ "$EXECS" -ge $((6 * N)) -a "$SHELLS" -ge $((2 * N)) -a "$DENIED" -ge $((2 * N)) ]

# At the last sample, over a range from before the agent started: the first
# sample (the first scrape, 0) and the last bound the range, so increase()
# neither extrapolates nor misses a sandbox that came and went between scrapes.
T_LAST=$(query 'timestamp(sbtrace_execs_total)')
R="$(( $(date +%s) - T_START + 30 ))s"
log "increase() at $T_LAST over $R"
inc() { query "sum(increase($1[$R]))" "$T_LAST" | awk '{ printf "%.0f\n", $1 }'; }
check "increase(sbtrace_execs_total) = the events' execs" "$EXECS" "$(inc sbtrace_execs_total)"
check "increase(sbtrace_shells_total) = the events' shells" "$SHELLS" "$(inc sbtrace_shells_total)"
check "increase(sbtrace_egress_total{verdict=denied}) = the events' denials" "$DENIED" \
	"$(inc 'sbtrace_egress_total{verdict="denied"}')"
check "increase(sbtrace_egress_total{verdict=allowed}) = the events' allowances" "$ALLOWED" \
	"$(inc 'sbtrace_egress_total{verdict="allowed"}')"
check "nothing lost: increase(sbtrace_events_lost_total) 0" 0 "$(inc sbtrace_events_lost_total)"
check "shells by kind: all of them 'command' (sh -c)" "$SHELLS" \
	"$(query 'sum(sbtrace_shells_total{kind="command"})' "$T_LAST" | awk '{ printf "%.0f\n", $1 }')"

# --- a removed sandbox: its counters retained, its info gone at once ------------
curl -sf "http://127.0.0.1:$PORT/metrics" > "$WORK/scrape.txt"
check "removed sandboxes: no sandbox_info series left" 0 \
	"$(grep -c "^sbtrace_sandbox_info{sandbox=\"$PNAME/" "$WORK/scrape.txt")"
check "removed sandboxes: their exec counters kept for the retention" $N \
	"$(grep -c "^sbtrace_sandbox_execs_total{sandbox=\"$PNAME/" "$WORK/scrape.txt")"
check "known label sets at 0: a shell never seen" 1 \
	"$(grep -c '^sbtrace_shells_total{shell="zsh",kind="shebang"} 0$' "$WORK/scrape.txt")"
check "known label sets at 0: lost exec records" 1 \
	"$(grep -c '^sbtrace_events_lost_total{kind="exec",reason="ringbuf_full"} 0$' "$WORK/scrape.txt")"
check_true "promtool accepts the scrape" sh -c "promtool check metrics < '$WORK/scrape.txt' > '$WORK/promtool.out' 2>&1"
stop_trace INT
check "agent exit code" 0 "$TRACE_RC"

# --- --metrics-no-sandbox-label: host counters only --------------------------------
"$SBTRACE" agent --no-shim --no-socket --cgroup-parent "$PARENT" --metrics-no-sandbox-label \
	--out "$WORK/agent2.jsonl" --metrics-addr "127.0.0.1:$PORT" --poll-ms 20 2> "$WORK/agent2.err" &
TRACE_PID=$!
started2() { [ -s "$WORK/agent2.jsonl" ]; }
wait_for 10 started2
mkdir "$PARENT/n0"
"$SPAWN" "$PARENT/n0" -- /bin/true > /dev/null
sleep 0.5
curl -sf "http://127.0.0.1:$PORT/metrics" > "$WORK/scrape2.txt"
check "no sandbox label: no series names a sandbox" 0 "$(grep -c 'sandbox="' "$WORK/scrape2.txt")"
check "... the host counter still counts" "sbtrace_execs_total 1" "$(grep '^sbtrace_execs_total ' "$WORK/scrape2.txt")"
rmdir "$PARENT/n0"
kill -INT "$TRACE_PID"
wait "$TRACE_PID"
TRACE_PID=""
finish
