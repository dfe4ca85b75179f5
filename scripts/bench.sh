#!/usr/bin/env bash
# sbtrace benchmark (run by `make bench`, as root). One run, side by side:
#
#   empty_tp   +   sbtrace trace --cgroup SB   +   empty_tp
#
# attached once, in that order, with kernel.bpf_stats_enabled=1, then
# BENCH_ROUNDS rounds (default 3, at least 3) of:
#   inside   execsnoop (libbpf-tools) started, N execs of /bin/true in SB
#            (traced by sbtrace): BPF ns per exec of sbtrace (other execs on
#            the machine taken out at the round's outside cost) vs
#            execsnoop's two programs; sbtrace's is its exec program plus
#            its sys_exit_execve program (failed execs: on a successful one it
#            returns at once); target: the median ratio <= 0.05
#   failed   N execs of a file that does not exist in SB: sbtrace's BPF ns per
#            failed exec (its sys_exit_execve program), and exactly N
#            ProcessExecFailed events at the end
#   outside  execsnoop stopped, N execs in OUT (not traced): sbtrace's per-call
#            cost minus the floor, the mean of the empty tp_btf program attached
#            before sbtrace and the one attached after (the first program on a
#            tracepoint pays for warming the shared dispatch path);
#            target: the median delta <= 100 ns
# each figure printed per round and as the median with its range; then
#   syscalls the syscall tracepoints route every task's syscalls through the
#            tracing slow path: ns per syscall of a read/write loop (dd, best of
#            5) before any tracer and with sbtrace attached (no target: the
#            price of seeing failed execs, as execsnoop pays it too)
#   attach   BENCH_STARTS starts of sbtrace --duration 0.2: median attach_ms
#            (as sbtrace reports it) and median launch -> TraceStarted line
#            (wall clock, measured here); target median <= 100 ms
#   RSS      sbtrace's VmHWM after the rounds; target <= 16 MiB
#   events   sbtrace's output must hold exactly ROUNDS * N ProcessExec events
#
# Environment: BENCH_EXECS (default 2000 per phase), BENCH_ROUNDS (default 3),
#              BENCH_STARTS (default 20), EXECSNOOP (default /usr/sbin/execsnoop),
#              BPFTOOL (default bpftool).
# Exit status: 0 whether or not targets are met ("met" / "TARGET MISSED" is
# printed per line); 1 on a harness failure (missing tool, a tracer that does
# not attach, wrong event count, ...).
# shellcheck disable=SC2317 # functions called from traps
# shellcheck disable=SC2154 # in_*/out_* are assigned through eval in run_phase
# shellcheck disable=SC2046,SC2086 # word splitting of id lists is intended
set -u

TOP=$(cd "$(dirname "$0")/.." && pwd)
SBTRACE=$TOP/build/bin/sbtrace
SPAWN=$TOP/build/tests/sbt-spawn
EMPTY=$TOP/build/bench/empty_tp
EXECSNOOP=${EXECSNOOP:-/usr/sbin/execsnoop}
BPFTOOL=${BPFTOOL:-bpftool}
N=${BENCH_EXECS:-2000}
ROUNDS=${BENCH_ROUNDS:-3}
STARTS=${BENCH_STARTS:-20}
WORKLOAD=/bin/true

# Targets.
T_RATIO=0.05
T_DELTA_NS=100
T_ATTACH_MS=100
T_RSS_MIB=16

PIDS=" "          # background processes still to stop, " a b c "
OUR_PROG_IDS=" "  # every BPF program id our processes held
STATS_OLD=""
CG_PARENT=""
WORK=""
HARNESS_FAIL=0

log() { printf 'bench.sh: %s\n' "$*" >&2; }
die() {
	log "HARNESS FAILURE: $*"
	exit 1
}
# A failure that should still let the summary print.
harness_fail() {
	log "HARNESS FAILURE: $*"
	HARNESS_FAIL=1
}

# --- small utilities (no fork where it matters for timing) ----------------
now_us() {
	if [ -n "${EPOCHREALTIME:-}" ]; then
		printf '%s\n' "${EPOCHREALTIME//[.,]/}"
	else
		echo $(($(date +%s%N) / 1000))
	fi
}

# nap SECONDS: sleep without forking (read on a fifo nobody writes to).
nap() { read -r -t "$1" -u 9 _ 2>/dev/null || :; }

# alive PID: running and not a zombie.
alive() {
	local st
	[ -r "/proc/$1/stat" ] || return 1
	{ read -r st < "/proc/$1/stat"; } 2>/dev/null || return 1
	st=${st##*) }
	[ "${st%% *}" != Z ]
}

# stop_pid PID [SIG]: signal, wait up to 5 s, then SIGKILL; reap. STOP_RC = exit code.
stop_pid() {
	local pid=$1 sig=${2:-INT} i=0
	if alive "$pid"; then
		kill -s "$sig" "$pid" 2>/dev/null
		while alive "$pid" && [ $i -lt 50 ]; do
			nap 0.1
			i=$((i + 1))
		done
		if alive "$pid"; then
			log "pid $pid still running 5 s after SIG$sig; sending SIGKILL"
			kill -s KILL "$pid" 2>/dev/null
		fi
	fi
	wait "$pid" 2>/dev/null
	STOP_RC=$?
	PIDS=${PIDS/ $pid / }
}

# prog_ids_of PID: ids of the BPF programs PID holds (prog and link fds).
prog_ids_of() {
	grep -h '^prog_id:' /proc/"$1"/fdinfo/* 2>/dev/null | awk '{ print $2 }' | sort -un
}

remember_ids() {
	local id
	for id in "$@"; do
		case "$OUR_PROG_IDS" in *" $id "*) ;; *) OUR_PROG_IDS="$OUR_PROG_IDS$id " ;; esac
	done
}

# prog_name ID (from a `bpftool prog show -j` dump in $WORK/progs.json)
prog_name() { jq -r --argjson id "$1" '.[] | select(.id == $id) | .name' "$WORK/progs.json"; }

fs_mounted() { # MOUNTPOINT FSTYPE
	awk -v mp="$1" -v t="$2" '$5 == mp { for (i = 7; i <= NF; i++) if ($i == "-") { if ($(i + 1) == t) f = 1; break } }
		END { exit !f }' /proc/self/mountinfo
}

# snapshot FILE: "id run_time_ns run_cnt" of every loaded program (-1 = no stats).
snapshot() {
	"$BPFTOOL" prog show -j > "$WORK/snap.json" || die "bpftool prog show failed"
	jq -r '.[] | "\(.id) \(.run_time_ns // -1) \(.run_cnt // -1)"' "$WORK/snap.json" > "$1" ||
		die "jq failed on bpftool output"
}

# delta S0 S1 ID -> "d_run_time_ns d_run_cnt"
delta() {
	awk -v id="$3" 'FNR == NR { if ($1 == id) { rt = $2; c = $3; seen = 1 } next }
		$1 == id && seen && $2 >= 0 && rt >= 0 { print $2 - rt, $3 - c; found = 1 }
		END { if (!found) print "-1 -1" }' "$1" "$2"
}

cpu_ns_of() { # PID: user+system CPU time of all its threads, in ns (schedstat)
	cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { printf "%d\n", s }'
}

median() { sort -g | awk '{ a[NR] = $1 } END { if (!NR) { print "nan"; exit }
	if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

calc() { awk "BEGIN { printf $1 }"; }     # calc '"%.2f", 1/3'
verdict() { # VALUE TARGET (met when VALUE <= TARGET)
	if awk -v v="$1" -v t="$2" 'BEGIN { exit !(v == v + 0 && v <= t) }'; then echo met; else
		echo "TARGET MISSED"
	fi
}

# --- cleanup --------------------------------------------------------------
rm_cgroup_tree() {
	local d p
	[ -n "$CG_PARENT" ] && [ -d "$CG_PARENT" ] || return 0
	for d in "$CG_PARENT"/sb "$CG_PARENT"/out "$CG_PARENT"; do
		[ -d "$d" ] || continue
		if [ -r "$d/cgroup.procs" ]; then
			while read -r p; do
				echo "$p" > "$CG2/cgroup.procs" 2>/dev/null || true
			done < "$d/cgroup.procs"
		fi
		rmdir "$d" 2>/dev/null || log "warning: could not remove cgroup $d"
	done
}

check_detached() {
	local i=0 left="" id name line ours
	command -v "$BPFTOOL" > /dev/null 2>&1 || return 0
	# Programs are freed asynchronously (RCU) after the last fd closes: poll.
	while [ $i -lt 50 ]; do
		left=$("$BPFTOOL" prog show -j 2>/dev/null |
			jq -r '.[] | select(.name == "exec_tp_btf" or .name == "exec_raw_tp" or
				.name == "exec_tracepoint" or .name == "bench_empty_exec" or
				(.name | test("^tracepoint__syscalls__sys_(enter|exit)_execve"))) |
				"\(.id) \(.name)"' 2>/dev/null)
		ours=""
		while read -r id name; do
			[ -n "$id" ] || continue
			case "$OUR_PROG_IDS" in *" $id "*) ours="$ours $id($name)" ;; esac
		done <<< "$left"
		[ -z "$ours" ] && break
		nap 0.1
		i=$((i + 1))
	done
	if [ -n "$ours" ]; then
		log "WARNING: programs started by this run are still loaded:$ours"
	fi
	while read -r id name; do
		[ -n "$id" ] || continue
		case "$OUR_PROG_IDS" in *" $id "*) continue ;; esac
		case "$name" in
		exec_* | bench_empty_exec)
			log "WARNING: $name (id $id) is still listed by bpftool; not started by this run (another sbtrace or bench running?)" ;;
		esac
	done <<< "$left"
}

cleanup() {
	local rc=$? pid
	trap - EXIT INT TERM
	for pid in $PIDS; do
		stop_pid "$pid" INT
	done
	if [ -n "$STATS_OLD" ]; then
		sysctl -q -w kernel.bpf_stats_enabled="$STATS_OLD" > /dev/null 2>&1 ||
			log "warning: could not restore kernel.bpf_stats_enabled=$STATS_OLD"
	fi
	rm_cgroup_tree
	check_detached
	exec 9>&- 2>/dev/null
	[ -n "$WORK" ] && rm -rf "$WORK"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# --- preconditions --------------------------------------------------------
case "$N" in '' | *[!0-9]* | 0) die "BENCH_EXECS must be a positive integer, got '$N'" ;; esac
case "$STARTS" in '' | *[!0-9]* | 0) die "BENCH_STARTS must be a positive integer, got '$STARTS'" ;; esac
case "$ROUNDS" in '' | *[!0-9]* | [012]) die "BENCH_ROUNDS must be an integer >= 3, got '$ROUNDS'" ;; esac
[ "$(id -u)" -eq 0 ] || die "must run as root"
for t in "$BPFTOOL" jq sysctl awk; do
	command -v "$t" > /dev/null 2>&1 || die "$t not found"
done
for b in "$SBTRACE" "$SPAWN" "$EMPTY" "$EXECSNOOP" "$WORKLOAD"; do
	[ -x "$b" ] || die "$b missing or not executable (run make first)"
done

WORK=$(mktemp -d /tmp/sbtrace-bench.XXXXXX) || die "mktemp failed"
mkfifo "$WORK/nap.fifo" || die "cannot create $WORK/nap.fifo"
exec 9<> "$WORK/nap.fifo" || die "cannot open $WORK/nap.fifo"

if ! fs_mounted /sys/fs/bpf bpf; then
	log "mounting bpffs at /sys/fs/bpf"
	mount -t bpf bpf /sys/fs/bpf || die "cannot mount bpffs"
fi
if ! fs_mounted /sys/kernel/tracing tracefs; then
	log "mounting tracefs at /sys/kernel/tracing"
	mount -t tracefs tracefs /sys/kernel/tracing || die "cannot mount tracefs"
fi

CG2=$(awk '{ for (i = 7; i <= NF; i++) if ($i == "-") { if ($(i + 1) == "cgroup2") { print $5; exit } break } }' \
	/proc/self/mountinfo)
if [ -z "$CG2" ] || [ ! -d "$CG2" ]; then die "no cgroup v2 mount in /proc/self/mountinfo"; fi
CG_PARENT="$CG2/sbtrace-bench.$$"
SB="$CG_PARENT/sb"
OUT="$CG_PARENT/out"
mkdir "$CG_PARENT" "$SB" "$OUT" || die "cannot create cgroups under $CG2"

STATS_OLD=$(sysctl -n kernel.bpf_stats_enabled) || die "cannot read kernel.bpf_stats_enabled"
sysctl -q -w kernel.bpf_stats_enabled=1 > /dev/null || die "cannot enable kernel.bpf_stats_enabled"

log "cgroup v2 at $CG2; sandbox $SB, outside $OUT; $ROUNDS rounds of $N execs per phase, $STARTS starts"

# syscall_ns: ns per syscall of a dd read/write loop, the best of 5.
SYSCALL_BYTES=200000
syscall_ns() {
	local best="" t0 t1 d k
	for k in 1 2 3 4 5; do
		t0=$(now_us)
		dd if=/dev/zero of=/dev/null bs=1 count=$SYSCALL_BYTES 2> /dev/null
		t1=$(now_us)
		d=$((t1 - t0))
		[ -z "$best" ] || [ "$d" -lt "$best" ] && best=$d
	done
	calc '"%.1f", '"$best * 1000 / (2 * $SYSCALL_BYTES)"
}
SYSCALL_BEFORE=$(syscall_ns)

# --- start the three tracers ----------------------------------------------
# wait_first_line FILE PATTERN PID TIMEOUT_S: until the first complete line of
# FILE contains PATTERN (sets FIRST_LINE); 1 if PID died, 2 on timeout.
wait_first_line() {
	local f=$1 pat=$2 pid=$3 deadline line
	deadline=$(($(now_us) + $4 * 1000000))
	while :; do
		if [ -s "$f" ] && { IFS= read -r line < "$f"; } 2>/dev/null; then
			case "$line" in *$pat*) FIRST_LINE=$line; return 0 ;; esac
		fi
		alive "$pid" || return 1
		[ "$(now_us)" -lt "$deadline" ] || return 2
		nap 0.001
	done
}

"$EMPTY" -s > "$WORK/empty.out" 2> "$WORK/empty.err" 9>&- &
EMPTY_PID=$!
PIDS="$PIDS$EMPTY_PID "
wait_first_line "$WORK/empty.out" 'attached ' "$EMPTY_PID" 10 ||
	die "empty_tp did not attach: $(cat "$WORK/empty.err" 2>/dev/null)"
EMPTY_ID=${FIRST_LINE#attached }

TRACE_OUT="$WORK/trace.jsonl"
"$SBTRACE" trace --cgroup "$SB" --out "$TRACE_OUT" 2> "$WORK/trace.err" 9>&- &
SB_PID=$!
PIDS="$PIDS$SB_PID "
wait_first_line "$TRACE_OUT" '"TraceStarted"' "$SB_PID" 10 ||
	die "sbtrace did not start: $(cat "$WORK/trace.err" 2>/dev/null)"

# A second empty program attached after sbtrace: the first program on a
# tracepoint pays for warming the shared dispatch path (measured here: tens of
# ns), so the floor is the mean of an empty program before and one after.
"$EMPTY" > "$WORK/empty2.out" 2> "$WORK/empty2.err" 9>&- &
EMPTY2_PID=$!
PIDS="$PIDS$EMPTY2_PID "
wait_first_line "$WORK/empty2.out" 'attached ' "$EMPTY2_PID" 10 ||
	die "second empty_tp did not attach: $(cat "$WORK/empty2.err" 2>/dev/null)"
EMPTY2_ID=${FIRST_LINE#attached }

"$BPFTOOL" prog show -j > "$WORK/progs.json" 2>/dev/null || die "bpftool prog show failed"
SB_ID="" SB_MODE="" SB_OTHER="" SB_FAIL=""
for id in $(prog_ids_of "$SB_PID"); do
	name=$(prog_name "$id")
	case "$name" in
	exec_tp_btf | exec_raw_tp | exec_tracepoint)
		if [ -z "$SB_ID" ] || [ "$name" = exec_tp_btf ]; then SB_ID=$id SB_MODE=$name; fi ;;
	failed_execve) SB_FAIL=$id ;;
	failed_execveat) ;;
	*) SB_OTHER="$SB_OTHER $id($name)" ;;
	esac
done
[ -n "$SB_ID" ] || die "no exec_* program found among sbtrace's (pid $SB_PID) fds"
[ -n "$SB_FAIL" ] || die "no failed_execve program among sbtrace's (pid $SB_PID) fds"
[ "$SB_MODE" = exec_tp_btf ] || log "note: sbtrace attached $SB_MODE, not exec_tp_btf"
[ -z "$SB_OTHER" ] || log "note: sbtrace also holds programs$SB_OTHER (not counted)"
[ "$(prog_name "$EMPTY_ID")" = bench_empty_exec ] || die "empty_tp id $EMPTY_ID is not bench_empty_exec"
remember_ids "$SB_ID" "$SB_FAIL" "$EMPTY_ID" "$EMPTY2_ID" $(prog_ids_of "$SB_PID")
log "sbtrace hooks: $(head -n 1 "$TRACE_OUT" | jq -c '.hooks | map_values(.mode)')"
log "attached: sbtrace pid $SB_PID prog $SB_ID; empty_tp pid $EMPTY_PID prog $EMPTY_ID, $EMPTY2_PID prog $EMPTY2_ID"

# start_execsnoop: start it, wait until it holds its two programs (sets ES_PID,
# ES_ENTER, ES_EXIT) and until every program counts an exec (it attaches after
# loading).
start_execsnoop() {
	local i=0 id ok
	"$EXECSNOOP" > /dev/null 2>&1 9>&- &
	ES_PID=$!
	PIDS="$PIDS$ES_PID "
	while :; do
		"$BPFTOOL" prog show -j > "$WORK/progs.json" 2>/dev/null || die "bpftool prog show failed"
		ES_ENTER="" ES_EXIT=""
		for id in $(prog_ids_of "$ES_PID"); do
			case "$(prog_name "$id")" in
			*sys_enter_execve*) ES_ENTER=$id ;;
			*sys_exit_execve*) ES_EXIT=$id ;;
			esac
		done
		[ -n "$ES_ENTER" ] && [ -n "$ES_EXIT" ] && break
		alive "$ES_PID" || die "execsnoop exited early (needs tracefs and BTF)"
		[ $i -lt 150 ] || die "execsnoop did not load its programs within 15 s"
		nap 0.1
		i=$((i + 1))
	done
	remember_ids "$ES_ENTER" "$ES_EXIT" $(prog_ids_of "$ES_PID")
	i=0
	snapshot "$WORK/probe0"
	while :; do
		"$SPAWN" "$OUT" -- "$WORKLOAD" || die "sbt-spawn failed"
		snapshot "$WORK/probe1"
		ok=1
		for id in "$SB_ID" "$ES_ENTER" "$ES_EXIT" "$EMPTY_ID" "$EMPTY2_ID"; do
			set -- $(delta "$WORK/probe0" "$WORK/probe1" "$id")
			[ "$2" -gt 0 ] 2>/dev/null || ok=0
		done
		[ $ok -eq 1 ] && break
		[ $i -lt 100 ] || die "programs do not count runs (bpf stats off, or execsnoop not attached)"
		nap 0.1
		i=$((i + 1))
	done
}

# --- rounds: execs inside and outside ---------------------------------------
# run_phase NAME CGROUP [PROG]: N execs of PROG (default WORKLOAD); sets
# <NAME>_{sb,sbf,ese,esx,empty,empty2} = "d_rt d_cnt"
run_phase() {
	local name=$1 cg=$2 prog=${3:-$WORKLOAD} id var
	snapshot "$WORK/$name.s0"
	if [ "$prog" = "$WORKLOAD" ]; then
		"$SPAWN" "$cg" -n "$N" -- "$prog" || die "sbt-spawn $cg -n $N failed"
	else
		"$SPAWN" "$cg" -n "$N" -- "$prog" 2> /dev/null # each child's exec fails: 127
	fi
	snapshot "$WORK/$name.s1"
	for var in sb:$SB_ID sbf:$SB_FAIL ese:$ES_ENTER esx:$ES_EXIT empty:$EMPTY_ID empty2:$EMPTY2_ID; do
		id=${var#*:}
		eval "${name}_${var%%:*}=\"\$(delta \"\$WORK/\$name.s0\" \"\$WORK/\$name.s1\" \$id)\""
	done
}

per() { calc '"%.1f", '"$1"' / '"$2"; } # ns per call

# One round: execsnoop started, N execs in SB (sbtrace, execsnoop and the
# floors on the same execs), execsnoop stopped (the outside phase compares
# sbtrace's hot path with the empty programs alone, so a third tracer's cache
# footprint on the same execs does not blur a difference of tens of ns), N
# execs in OUT. Appends "ratio sb_ns es_ns empty_ns others delta out_sb_ns
# out_empty_ns" to $WORK/rounds.
round() {
	local v in_bg
	start_execsnoop
	log "round $1: $N execs of $WORKLOAD in $SB, then $N in $OUT"
	run_phase in "$SB"
	stop_pid "$ES_PID" INT
	[ "$STOP_RC" -eq 0 ] || log "note: execsnoop exited $STOP_RC"
	run_phase out "$OUT"
	run_phase fail "$SB" /nonexistent/sbtrace-bench/sh
	set -- $in_sb; in_sb_rt=$1 in_sb_n=$2
	set -- $in_sbf; in_sbf_rt=$1 in_sbf_n=$2
	set -- $out_sbf; out_sbf_rt=$1 out_sbf_n=$2
	set -- $fail_sbf; fail_sbf_rt=$1 fail_sbf_n=$2
	set -- $in_ese; in_ese_rt=$1 in_ese_n=$2
	set -- $in_esx; in_esx_rt=$1
	set -- $in_empty; in_empty_rt=$1 in_empty_n=$2
	set -- $out_sb; out_sb_rt=$1 out_sb_n=$2
	set -- $out_empty; out_empty_rt=$1 out_empty_n=$2
	set -- $out_empty2; out_empty2_rt=$1 out_empty2_n=$2
	for v in in_sb_n in_ese_n in_empty_n out_sb_n out_empty_n out_empty2_n; do
		[ "${!v}" -ge "$N" ] 2>/dev/null ||
			die "$v = ${!v}: fewer program runs than the $N execs (stats not counting?)"
	done
	out_sb_ns=$(per "$out_sb_rt" "$out_sb_n")
	out_empty_ns=$(calc '"%.1f", ('"$(per "$out_empty_rt" "$out_empty_n") + $(per "$out_empty2_rt" "$out_empty2_n")"') / 2')
	# Other execs on the machine during "inside" dilute sbtrace's average with
	# cheap outside calls: they are taken out at this round's outside cost.
	in_bg=$((in_sb_n - N))
	in_sb_ns=$(calc '"%.1f", '"($in_sb_rt - $in_bg * $out_sb_ns) / $N")
	# its sys_exit_execve program on each successful exec (it returns at once), per call
	in_sbf_ns=$(per "$in_sbf_rt" "$in_sbf_n")
	out_sbf_ns=$(per "$out_sbf_rt" "$out_sbf_n")
	in_sb_ns=$(calc '"%.1f", '"$in_sb_ns + $in_sbf_ns")
	# a failed exec in the sandbox: the other execs' exits taken out at the outside cost
	[ "$fail_sbf_n" -ge "$N" ] 2>/dev/null || die "fail_sbf_n = $fail_sbf_n: fewer runs than the $N failed execs"
	fail_ns=$(calc '"%.1f", '"($fail_sbf_rt - ($fail_sbf_n - $N) * $out_sbf_ns) / $N")
	in_es_ns=$(per "$((in_ese_rt + in_esx_rt))" "$in_ese_n")
	echo "$(calc '"%.4f", '"$in_sb_ns / $in_es_ns") $in_sb_ns $in_es_ns $(per "$in_empty_rt" "$in_empty_n") $in_bg" \
		"$(calc '"%.1f", '"$out_sb_ns - $out_empty_ns") $out_sb_ns $out_empty_ns $in_sbf_ns $fail_ns" >> "$WORK/rounds"
}

cpu0=$(cpu_ns_of "$SB_PID")
: > "$WORK/rounds"
for r in $(seq 1 "$ROUNDS"); do round "$r"; done
nap 0.3 # let sbtrace drain the ring buffer before reading its CPU time and RSS
cpu1=$(cpu_ns_of "$SB_PID")
RSS_KB=$(awk '/^VmHWM:/ { print $2 }' /proc/"$SB_PID"/status 2>/dev/null)
SYSCALL_WITH=$(syscall_ns) # sbtrace attached, execsnoop stopped
[ -n "$RSS_KB" ] || die "cannot read VmHWM of sbtrace (pid $SB_PID)"

# Stop the tracers (sbtrace writes its final lines on SIGINT).
stop_pid "$SB_PID" INT
SB_RC=$STOP_RC
stop_pid "$EMPTY_PID" INT
EMPTY_RC=$STOP_RC
stop_pid "$EMPTY2_PID" INT
[ "$STOP_RC" -eq 0 ] || harness_fail "second empty_tp exited $STOP_RC: $(cat "$WORK/empty2.err")"
[ "$SB_RC" -eq 0 ] || harness_fail "sbtrace exited $SB_RC: $(cat "$WORK/trace.err")"
[ "$EMPTY_RC" -eq 0 ] || harness_fail "empty_tp exited $EMPTY_RC: $(cat "$WORK/empty.err")"

NTOTAL=$((N * ROUNDS))
NEXEC=$(jq -c 'select(.event == "ProcessExec")' "$TRACE_OUT" | wc -l)
NEXEC_TRUE=$(jq -c --arg f "$WORKLOAD" 'select(.event == "ProcessExec" and .filename == $f)' "$TRACE_OUT" | wc -l)
LOST=$(jq -r 'select(.event == "TraceStopped") | [.sandboxes[].lost] | add' "$TRACE_OUT")
if [ "$NEXEC" -ne "$NTOTAL" ] || [ "$NEXEC_TRUE" -ne "$NTOTAL" ]; then
	harness_fail "sbtrace reported $NEXEC ProcessExec events ($NEXEC_TRUE of $WORKLOAD), expected exactly $NTOTAL (lost: ${LOST:-?})"
fi
NFAIL=$(jq -c 'select(.event == "ProcessExecFailed" and .filename == "/nonexistent/sbtrace-bench/sh")' "$TRACE_OUT" | wc -l)
[ "$NFAIL" -eq "$NTOTAL" ] ||
	harness_fail "sbtrace reported $NFAIL ProcessExecFailed events, expected exactly $NTOTAL"

# --- phase d: attach latency ------------------------------------------------
log "phase attach: $STARTS starts of sbtrace --duration 0.2"
: > "$WORK/attach_ms"
: > "$WORK/attach_ext"
for k in $(seq 1 "$STARTS"); do
	f="$WORK/start.$k.jsonl"
	t0=$(now_us)
	"$SBTRACE" trace --cgroup "$SB" --out "$f" --duration 0.2 2> "$f.err" 9>&- &
	pid=$!
	PIDS="$PIDS$pid "
	wait_first_line "$f" '"TraceStarted"' "$pid" 10
	r=$?
	t1=$(now_us)
	remember_ids $(prog_ids_of "$pid")
	# --duration 0.2: it stops by itself; give it 5 s before signalling.
	i=0
	while alive "$pid" && [ $i -lt 500 ]; do
		nap 0.01
		i=$((i + 1))
	done
	stop_pid "$pid" INT
	[ $r -eq 0 ] || die "start $k: sbtrace did not print TraceStarted (rc $STOP_RC): $(cat "$f.err")"
	[ "$STOP_RC" -eq 0 ] || die "start $k: sbtrace exited $STOP_RC: $(cat "$f.err")"
	ms=$(printf '%s\n' "$FIRST_LINE" | jq -r '.attach_ms // empty')
	[ -n "$ms" ] || die "start $k: TraceStarted has no attach_ms"
	echo "$ms" >> "$WORK/attach_ms"
	calc '"%.3f\n", '"$((t1 - t0))"' / 1000' >> "$WORK/attach_ext"
done
ATTACH_MED=$(median < "$WORK/attach_ms")
ATTACH_EXT_MED=$(median < "$WORK/attach_ext" | awk '{ printf "%.1f", $1 }')
ATTACH_MAX=$(sort -g "$WORK/attach_ms" | tail -n 1)
ATTACH_EXT_MAX=$(sort -g "$WORK/attach_ext" | tail -n 1 | awk '{ printf "%.1f", $1 }')

# --- report -------------------------------------------------------------------
# stat COLUMN: "median (min-max)" of a column of $WORK/rounds
stat() { awk -v c="$1" '{ print $c }' "$WORK/rounds" | sort -g |
	awk '{ a[NR] = $1 } END { m = NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2
		printf "%s %s %s\n", m, a[1], a[NR] }'; }
read -r ratio ratio_lo ratio_hi < <(stat 1)
read -r in_sb_ns in_sb_lo in_sb_hi < <(stat 2)
read -r in_es_ns in_es_lo in_es_hi < <(stat 3)
read -r delta_ns delta_lo delta_hi < <(stat 6)
read -r out_sb_ns _ _ < <(stat 7)
read -r out_empty_ns _ _ < <(stat 8)
read -r sbf_ns sbf_lo sbf_hi < <(stat 9)
read -r fail_ns fail_lo fail_hi < <(stat 10)
rss_mib=$(calc '"%.1f", '"$RSS_KB / 1024")
cpu_ms=$(calc '"%.1f", '"($cpu1 - $cpu0) / 1e6")
cpu_per_ev=$(calc '"%.2f", '"($cpu1 - $cpu0) / 1e3 / $NTOTAL")

echo
echo "sbtrace benchmark: $ROUNDS rounds of $N execs of $WORKLOAD inside, then $N outside; kernel $(uname -r), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "(sbtrace $SB_MODE id $SB_ID; empty tp_btf ids $EMPTY_ID, attached before sbtrace, and $EMPTY2_ID, after; execsnoop started anew each round)"
printf '%-6s %10s %10s %8s %8s %7s   %10s %10s %8s\n' round "sbtrace" execsnoop ratio empty others "outside" floor delta
awk '{ printf "%-6d %10.1f %10.1f %8.4f %8.1f %7d   %10.1f %10.1f %8.1f\n", NR, $2, $3, $1, $4, $5, $7, $8, $6 }' "$WORK/rounds"
echo "(ns per exec inside, with the other execs on the machine taken out at the round's outside cost;"
echo " execsnoop: both its programs, per sys_enter call; outside: ns per call, floor the mean of the two empty programs)"
echo "(sbtrace inside: its exec program and its sys_exit_execve program, $sbf_ns ns of it ($sbf_lo-$sbf_hi) per successful exec)"
echo "events:  $NEXEC ProcessExec events for $NTOTAL execs (lost ${LOST:-?}), $NFAIL ProcessExecFailed for $NTOTAL failed execs; sbtrace userspace CPU ${cpu_ms} ms = ${cpu_per_ev} us/event"
echo "attach:  attach_ms median $ATTACH_MED (max $ATTACH_MAX); launch->TraceStarted median $ATTACH_EXT_MED ms (max $ATTACH_EXT_MAX) over $STARTS starts"
echo "RSS:     sbtrace VmHWM $RSS_KB kB after the rounds"
echo

v1=$(verdict "$ratio" "$T_RATIO")
v2=$(verdict "$delta_ns" "$T_DELTA_NS")
v3=$(verdict "$ATTACH_EXT_MED" "$T_ATTACH_MS")
v4=$(verdict "$rss_mib" "$T_RSS_MIB")
printf 'bench: exec inside sandbox   sbtrace %s us/exec (%s-%s)  execsnoop %s us/exec (%s-%s)  ratio %s (%s-%s), median of %s rounds  (target <= %s: %s)\n' \
	"$(calc '"%.2f", '"$in_sb_ns / 1000")" "$(calc '"%.2f", '"$in_sb_lo / 1000")" "$(calc '"%.2f", '"$in_sb_hi / 1000")" \
	"$(calc '"%.1f", '"$in_es_ns / 1000")" "$(calc '"%.1f", '"$in_es_lo / 1000")" "$(calc '"%.1f", '"$in_es_hi / 1000")" \
	"$(calc '"%.3f", '"$ratio")" "$(calc '"%.3f", '"$ratio_lo")" "$(calc '"%.3f", '"$ratio_hi")" "$ROUNDS" "$T_RATIO" "$v1"
printf 'bench: exec outside sandbox  sbtrace %s ns  empty tp_btf %s ns  delta %s ns (%s to %s), median of %s rounds  (target <= %s ns: %s)\n' \
	"$(calc '"%.0f", '"$out_sb_ns")" "$(calc '"%.0f", '"$out_empty_ns")" "$(calc '"%.0f", '"$delta_ns")" \
	"$(calc '"%.0f", '"$delta_lo")" "$(calc '"%.0f", '"$delta_hi")" "$ROUNDS" "$T_DELTA_NS" "$v2"
printf 'bench: exec failed in sandbox sbtrace %s us/failed exec (%s-%s), median of %s rounds (its sys_exit_execve program: the record of path and argv)\n' \
	"$(calc '"%.2f", '"$fail_ns / 1000")" "$(calc '"%.2f", '"$fail_lo / 1000")" "$(calc '"%.2f", '"$fail_hi / 1000")" "$ROUNDS"
printf 'bench: syscall slow path     %s ns per syscall before any tracer, %s ns with sbtrace attached: %s ns more (the syscall tracepoints)\n' \
	"$SYSCALL_BEFORE" "$SYSCALL_WITH" "$(calc '"%.1f", '"$SYSCALL_WITH - $SYSCALL_BEFORE")"
printf 'bench: attach                median %s ms (external %s ms)  (target <= %s ms: %s)\n' \
	"$(calc '"%.0f", '"$ATTACH_MED")" "$(calc '"%.0f", '"$ATTACH_EXT_MED")" "$T_ATTACH_MS" "$v3"
printf 'bench: loader RSS            %s MiB  (target <= %s MiB: %s)\n' "$rss_mib" "$T_RSS_MIB" "$v4"
printf 'bench: events                %s/%s ProcessExec, %s lost  (%s)\n' "$NEXEC" "$NTOTAL" "${LOST:-?}" \
	"$([ "$NEXEC" -eq "$NTOTAL" ] && echo ok || echo 'HARNESS FAILURE')"

missed=0
for v in "$v1" "$v2" "$v3" "$v4"; do [ "$v" = met ] || missed=$((missed + 1)); done
if [ $missed -eq 0 ]; then echo "bench: all 4 targets met"; else echo "bench: $missed of 4 TARGET(S) MISSED"; fi

[ "$HARNESS_FAIL" -eq 0 ] || exit 1
exit 0
