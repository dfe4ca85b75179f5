#!/bin/sh
# Who may scrape the agent's /metrics (issue 25): a loopback peer only when
# its socket is root's or an --metrics-allow-uid's; another local user's
# connections are closed before they take a slot, so 200 of them held open
# do not stop root's scrape, and they read no sandbox's name; with
# --metrics-token-file every request needs the token. `sbtrace top` shows a
# cgroup name that holds escapes without them.
. "$(dirname "$0")/lib.sh"

command -v curl > /dev/null || fail "curl missing (make deps: curl)"
command -v setpriv > /dev/null || fail "setpriv missing (util-linux)"
PORT=$((20000 + $$ % 20000))
NOBODY=65534
PARENT=$(mk_cgroup parent)
as_nobody() { setpriv --reuid=$NOBODY --regid=$NOBODY --clear-groups "$@"; }

agent() {
	_out=$1
	shift
	"$SBTRACE" agent --no-shim --no-socket --cgroup-parent "$PARENT" --out "$_out" --stats-interval 0 "$@" \
		2> "$_out.err" &
	AGENT_PID=$!
	TRACE_PID=$AGENT_PID
	wait_for 10 sh -c "[ -s '$_out' ] && head -n 1 '$_out' | grep -q TraceStarted" ||
		{ log "the agent did not start: $(cat "$_out.err")"; exit 1; }
}
stop_agent() { kill -INT "$AGENT_PID"; wait "$AGENT_PID"; TRACE_PID=""; }
code() { curl -s -o /dev/null -m 5 -w '%{http_code}' "$@"; }

# a sandbox whose cgroup name holds a title escape and a screen clear
EVIL=$(printf 'evil\033]0;owned\007\033[2J')
mkdir "$PARENT/$EVIL"
agent "$WORK/a.jsonl" --metrics-addr "127.0.0.1:$PORT"
check "root's scrape: 200" 200 "$(code "http://127.0.0.1:$PORT/metrics")"
wait_for 5 sh -c "curl -s 'http://127.0.0.1:$PORT/metrics' | grep -q 'sbtrace_sandbox_info.*evil'"
"$SBTRACE" top --metrics-addr "127.0.0.1:$PORT" --once --interval 0.3 > "$WORK/top.txt" 2> "$WORK/top.err"
check_true "top lists the hostile sandbox" grep -q "evil" "$WORK/top.txt"
check "... with no raw ESC or BEL" 0 "$(tr -cd '\033\007' < "$WORK/top.txt" | wc -c)"
check "another user's: closed, no reply" 000 "$(as_nobody curl -s -o /dev/null -m 5 -w '%{http_code}' "http://127.0.0.1:$PORT/metrics")"
# 200 idle connections of that user, held while root scrapes
cat > "$WORK/hold.py" << EOF
import socket, time
s = []
for i in range(200):
    try:
        c = socket.create_connection(("127.0.0.1", $PORT), timeout=2)
        s.append(c)
    except OSError:
        pass
open("$WORK/held", "w").write(str(len(s)))
time.sleep(8)
EOF
as_nobody python3 "$WORK/hold.py" &
HOLD=$!
wait_for 10 test -s "$WORK/held"
check "root's scrape beside that user's 200 idle connections: 200" 200 \
	"$(code "http://127.0.0.1:$PORT/metrics")"
kill "$HOLD" 2> /dev/null
wait "$HOLD" 2> /dev/null
stop_agent

agent "$WORK/b.jsonl" --metrics-addr "127.0.0.1:$PORT" --metrics-allow-uid $NOBODY
check "--metrics-allow-uid: that user's scrape: 200" 200 \
	"$(as_nobody curl -s -o /dev/null -m 5 -w '%{http_code}' "http://127.0.0.1:$PORT/metrics")"
stop_agent

printf 'a-token-of-sufficient-length\n' > "$WORK/token"
chmod 600 "$WORK/token"
agent "$WORK/c.jsonl" --metrics-addr "127.0.0.1:$PORT" --metrics-token-file "$WORK/token"
check "a token set: without it, 401" 401 "$(code "http://127.0.0.1:$PORT/metrics")"
check "... with it, 200" 200 "$(code -H 'Authorization: Bearer a-token-of-sufficient-length' "http://127.0.0.1:$PORT/metrics")"
stop_agent
chmod 644 "$WORK/token"
"$SBTRACE" agent --no-shim --no-socket --cgroup-parent "$PARENT" --metrics-addr "127.0.0.1:$PORT" --metrics-token-file "$WORK/token" \
	--duration 1 > /dev/null 2> "$WORK/d.err"
check "a token file others can read: refused (exit 2)" 2 "$?"
check_true "... saying why" grep -q "chmod 600" "$WORK/d.err"
finish
