#!/usr/bin/env bash
# sbtrace benchmark (run by `make bench`, as root). One run, side by side:
#
#   empty_tp   +   sbtrace trace --cgroup SB   +   execsnoop (libbpf-tools)   +   empty_tp
#
# all attached at once, in that order, with kernel.bpf_stats_enabled=1, then
#   inside   N execs of /bin/true in SB  (traced by sbtrace): BPF ns per exec of
#            sbtrace vs execsnoop's two programs; target ratio <= 0.10
#   outside  execsnoop stopped, N execs in OUT (not traced): sbtrace's per-call
#            cost minus the floor, the mean of the empty tp_btf program attached
#            before sbtrace and the one attached after (the first program on a
#            tracepoint pays for warming the shared dispatch path);
#            target delta <= 100 ns
#   attach   BENCH_STARTS starts of sbtrace --duration 0.2: median attach_ms
#            (as sbtrace reports it) and median launch -> TraceStarted line
#            (wall clock, measured here); target median <= 100 ms
#   RSS      sbtrace's VmHWM after the inside phase; target <= 16 MiB
#   events   sbtrace's output must hold exactly N ProcessExec events
#
# Environment: BENCH_EXECS (default 2000), BENCH_STARTS (default 20),
#              EXECSNOOP (default /usr/sbin/execsnoop), BPFTOOL (default bpftool).
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
STARTS=${BENCH_STARTS:-20}
WORKLOAD=/bin/true

# Targets.
T_RATIO=0.10
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

log "cgroup v2 at $CG2; sandbox $SB, outside $OUT; $N execs per phase, $STARTS starts"

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

"$EXECSNOOP" > /dev/null 2>&1 9>&- &
ES_PID=$!
PIDS="$PIDS$ES_PID "

# A second empty program attached after sbtrace: the first program on a
# tracepoint pays for warming the shared dispatch path (measured here: tens of
# ns), so the floor is the mean of an empty program before and one after.
"$EMPTY" > "$WORK/empty2.out" 2> "$WORK/empty2.err" 9>&- &
EMPTY2_PID=$!
PIDS="$PIDS$EMPTY2_PID "
wait_first_line "$WORK/empty2.out" 'attached ' "$EMPTY2_PID" 10 ||
	die "second empty_tp did not attach: $(cat "$WORK/empty2.err" 2>/dev/null)"
EMPTY2_ID=${FIRST_LINE#attached }

# execsnoop prints nothing we keep: wait until it holds its two programs.
i=0
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

SB_ID="" SB_MODE="" SB_OTHER=""
for id in $(prog_ids_of "$SB_PID"); do
	name=$(prog_name "$id")
	case "$name" in
	exec_tp_btf | exec_raw_tp | exec_tracepoint)
		if [ -z "$SB_ID" ] || [ "$name" = exec_tp_btf ]; then SB_ID=$id SB_MODE=$name; fi ;;
	*) SB_OTHER="$SB_OTHER $id($name)" ;;
	esac
done
[ -n "$SB_ID" ] || die "no exec_* program found among sbtrace's (pid $SB_PID) fds"
[ "$SB_MODE" = exec_tp_btf ] || log "note: sbtrace attached $SB_MODE, not exec_tp_btf"
[ -z "$SB_OTHER" ] || log "note: sbtrace also holds programs$SB_OTHER (not counted)"
[ "$(prog_name "$EMPTY_ID")" = bench_empty_exec ] || die "empty_tp id $EMPTY_ID is not bench_empty_exec"
remember_ids "$SB_ID" "$ES_ENTER" "$ES_EXIT" "$EMPTY_ID" "$EMPTY2_ID" $(prog_ids_of "$SB_PID") $(prog_ids_of "$ES_PID")
log "sbtrace hooks: $(head -n 1 "$TRACE_OUT" | jq -c '.hooks | map_values(.mode)')"
log "attached: sbtrace pid $SB_PID prog $SB_ID; execsnoop pid $ES_PID progs $ES_ENTER+$ES_EXIT; empty_tp pid $EMPTY_PID prog $EMPTY_ID"

# execsnoop attaches after loading: probe until every program counts an exec.
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

# --- phases b/c: execs inside and outside ----------------------------------
# run_phase NAME CGROUP: N execs; sets <NAME>_{sb,ese,esx,empty} = "d_rt d_cnt", <NAME>_wall_us
run_phase() {
	local name=$1 cg=$2 t0 t1 id var
	snapshot "$WORK/$name.s0"
	t0=$(now_us)
	"$SPAWN" "$cg" -n "$N" -- "$WORKLOAD" || die "sbt-spawn $cg -n $N failed"
	t1=$(now_us)
	snapshot "$WORK/$name.s1"
	eval "${name}_wall_us=$((t1 - t0))"
	for var in sb:$SB_ID ese:$ES_ENTER esx:$ES_EXIT empty:$EMPTY_ID empty2:$EMPTY2_ID; do
		id=${var#*:}
		eval "${name}_${var%%:*}=\"\$(delta \"\$WORK/\$name.s0\" \"\$WORK/\$name.s1\" \$id)\""
	done
}

log "phase inside: $N execs of $WORKLOAD in $SB"
cpu0=$(cpu_ns_of "$SB_PID")
run_phase in "$SB"
nap 0.3 # let sbtrace drain the ring buffer before reading its CPU time and RSS
cpu1=$(cpu_ns_of "$SB_PID")
RSS_KB=$(awk '/^VmHWM:/ { print $2 }' /proc/"$SB_PID"/status 2>/dev/null)
[ -n "$RSS_KB" ] || die "cannot read VmHWM of sbtrace (pid $SB_PID)"

# execsnoop is the peer for the inside phase only: the outside phase compares
# sbtrace's hot path with the empty program alone, so a third tracer's cache
# footprint on the same execs does not blur a difference of tens of ns.
stop_pid "$ES_PID" INT
ES_RC=$STOP_RC

log "phase outside: $N execs of $WORKLOAD in $OUT (sbtrace and empty_tp attached)"
run_phase out "$OUT"

# Stop the tracers (sbtrace writes its final lines on SIGINT).
stop_pid "$SB_PID" INT
SB_RC=$STOP_RC
stop_pid "$EMPTY_PID" INT
EMPTY_RC=$STOP_RC
stop_pid "$EMPTY2_PID" INT
[ "$STOP_RC" -eq 0 ] || harness_fail "second empty_tp exited $STOP_RC: $(cat "$WORK/empty2.err")"
[ "$SB_RC" -eq 0 ] || harness_fail "sbtrace exited $SB_RC: $(cat "$WORK/trace.err")"
[ "$ES_RC" -eq 0 ] || log "note: execsnoop exited $ES_RC"
[ "$EMPTY_RC" -eq 0 ] || harness_fail "empty_tp exited $EMPTY_RC: $(cat "$WORK/empty.err")"

NEXEC=$(jq -c 'select(.event == "ProcessExec")' "$TRACE_OUT" | wc -l)
NEXEC_TRUE=$(jq -c --arg f "$WORKLOAD" 'select(.event == "ProcessExec" and .filename == $f)' "$TRACE_OUT" | wc -l)
LOST=$(jq -r 'select(.event == "TraceStopped") | [.sandboxes[].lost] | add' "$TRACE_OUT")
if [ "$NEXEC" -ne "$N" ] || [ "$NEXEC_TRUE" -ne "$N" ]; then
	harness_fail "sbtrace reported $NEXEC ProcessExec events ($NEXEC_TRUE of $WORKLOAD), expected exactly $N (lost: ${LOST:-?})"
fi

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
set -- $in_sb; in_sb_rt=$1 in_sb_n=$2
set -- $in_ese; in_ese_rt=$1 in_ese_n=$2
set -- $in_esx; in_esx_rt=$1 in_esx_n=$2
set -- $in_empty; in_empty_rt=$1 in_empty_n=$2
set -- $out_sb; out_sb_rt=$1 out_sb_n=$2
set -- $out_empty; out_empty_rt=$1 out_empty_n=$2
set -- $out_empty2; out_empty2_rt=$1 out_empty2_n=$2
for v in in_sb_n in_ese_n in_esx_n in_empty_n out_sb_n out_empty_n out_empty2_n; do
	[ "${!v}" -ge "$N" ] 2>/dev/null ||
		die "$v = ${!v}: fewer program runs than the $N execs (stats not counting?)"
done

per() { calc '"%.1f", '"$1"' / '"$2"; } # ns per call
in_sb_ns=$(per "$in_sb_rt" "$in_sb_n")
in_es_ns=$(per "$((in_ese_rt + in_esx_rt))" "$in_ese_n")
in_empty_ns=$(per "$in_empty_rt" "$in_empty_n")
out_sb_ns=$(per "$out_sb_rt" "$out_sb_n")
out_empty1_ns=$(per "$out_empty_rt" "$out_empty_n")
out_empty2_ns=$(per "$out_empty2_rt" "$out_empty2_n")
out_empty_ns=$(calc '"%.1f", ('"$out_empty1_ns + $out_empty2_ns"') / 2')
ratio=$(calc '"%.3f", '"$in_sb_ns / $in_es_ns")
delta_ns=$(calc '"%.0f", '"$out_sb_ns - $out_empty_ns")
# Other execs on the machine during "inside" dilute sbtrace's average with
# cheap outside calls; estimate the inside-only cost using the outside phase.
in_bg=$((in_sb_n - N))
in_sb_only_ns=$(calc '"%.1f", '"($in_sb_rt - $in_bg * $out_sb_ns) / $N")
ratio_only=$(calc '"%.3f", '"$in_sb_only_ns / $in_es_ns")
rss_mib=$(calc '"%.1f", '"$RSS_KB / 1024")
cpu_ms=$(calc '"%.1f", '"($cpu1 - $cpu0) / 1e6")
cpu_per_ev=$(calc '"%.2f", '"($cpu1 - $cpu0) / 1e3 / $N")
in_rate=$(calc '"%.0f", '"$N / ($in_wall_us / 1e6)")
out_rate=$(calc '"%.0f", '"$N / ($out_wall_us / 1e6)")

echo
echo "sbtrace benchmark: $N execs of $WORKLOAD per phase, kernel $(uname -r), $(nproc) CPUs"
printf '%-8s %-44s %10s %14s %10s\n' phase program runs run_time_ns ns/call
row() { printf '%-8s %-44s %10s %14s %10s\n' "$1" "$2" "$3" "$4" "$(per "$4" "$3")"; }
row inside "sbtrace $SB_MODE (id $SB_ID)" "$in_sb_n" "$in_sb_rt"
row inside "execsnoop sys_enter_execve (id $ES_ENTER)" "$in_ese_n" "$in_ese_rt"
row inside "execsnoop sys_exit_execve (id $ES_EXIT)" "$in_esx_n" "$in_esx_rt"
row inside "empty tp_btf bench_empty_exec (id $EMPTY_ID)" "$in_empty_n" "$in_empty_rt"
row outside "sbtrace $SB_MODE (id $SB_ID)" "$out_sb_n" "$out_sb_rt"
row outside "empty tp_btf, attached before (id $EMPTY_ID)" "$out_empty_n" "$out_empty_rt"
row outside "empty tp_btf, attached after (id $EMPTY2_ID)" "$out_empty2_n" "$out_empty2_rt"
echo
echo "inside:  sbtrace ${in_sb_ns} ns/exec, execsnoop ${in_es_ns} ns/exec (both programs, per sys_enter call), empty ${in_empty_ns} ns/call"
echo "         ratio sbtrace/execsnoop $ratio; $in_bg other execs on the machine counted in the window;"
echo "         inside-only estimate ${in_sb_only_ns} ns/exec (ratio $ratio_only); $in_rate execs/s"
echo "outside: sbtrace ${out_sb_ns} ns/call, empty ${out_empty_ns} ns/call (before ${out_empty1_ns}, after ${out_empty2_ns}), delta ${delta_ns} ns; $out_rate execs/s"
echo "events:  $NEXEC ProcessExec events for $N execs (lost ${LOST:-?}); sbtrace userspace CPU ${cpu_ms} ms = ${cpu_per_ev} us/event at $in_rate events/s"
echo "attach:  attach_ms median $ATTACH_MED (max $ATTACH_MAX); launch->TraceStarted median $ATTACH_EXT_MED ms (max $ATTACH_EXT_MAX) over $STARTS starts"
echo "RSS:     sbtrace VmHWM $RSS_KB kB after the inside phase"
echo

v1=$(verdict "$ratio" "$T_RATIO")
v2=$(verdict "$delta_ns" "$T_DELTA_NS")
v3=$(verdict "$ATTACH_EXT_MED" "$T_ATTACH_MS")
v4=$(verdict "$rss_mib" "$T_RSS_MIB")
printf 'bench: exec inside sandbox   sbtrace %s us/exec  execsnoop %s us/exec  ratio %s  (target <= %s: %s)\n' \
	"$(calc '"%.2f", '"$in_sb_ns / 1000")" "$(calc '"%.1f", '"$in_es_ns / 1000")" "$ratio" "$T_RATIO" "$v1"
printf 'bench: exec outside sandbox  sbtrace %s ns  empty tp_btf %s ns  delta %s ns  (target <= %s ns: %s)\n' \
	"$(calc '"%.0f", '"$out_sb_ns")" "$(calc '"%.0f", '"$out_empty_ns")" "$delta_ns" "$T_DELTA_NS" "$v2"
printf 'bench: attach                median %s ms (external %s ms)  (target <= %s ms: %s)\n' \
	"$(calc '"%.0f", '"$ATTACH_MED")" "$(calc '"%.0f", '"$ATTACH_EXT_MED")" "$T_ATTACH_MS" "$v3"
printf 'bench: loader RSS            %s MiB  (target <= %s MiB: %s)\n' "$rss_mib" "$T_RSS_MIB" "$v4"
printf 'bench: events                %s/%s ProcessExec  (%s)\n' "$NEXEC" "$N" \
	"$([ "$NEXEC" -eq "$N" ] && echo ok || echo 'HARNESS FAILURE')"

missed=0
for v in "$v1" "$v2" "$v3" "$v4"; do [ "$v" = met ] || missed=$((missed + 1)); done
if [ $missed -eq 0 ]; then echo "bench: all 4 targets met"; else echo "bench: $missed of 4 TARGET(S) MISSED"; fi

[ "$HARNESS_FAIL" -eq 0 ] || exit 1
exit 0
