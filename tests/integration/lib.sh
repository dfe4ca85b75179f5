# Shared helpers for integration tests (POSIX sh, sourced).
# Each test: creates its own cgroups under a per-test parent, starts sbtrace,
# runs workloads with sbt-spawn (no shell unless the test wants one), asserts
# on the JSON Lines with jq, and cleans up in an EXIT trap.

TOP=$(cd "$(dirname "$0")/../.." && pwd)
SBTRACE="$TOP/build/bin/sbtrace"
SPAWN="$TOP/build/tests/sbt-spawn"
T_NAME=$(basename "$0" .sh)
WORK=$(mktemp -d "/tmp/sbtrace-$T_NAME.XXXXXX")
TRACE_PID=""
T_FAILS=0
T_CHECKS=0

# The cgroup v2 mount, from mountinfo (never hard-coded).
CG2=$(awk '$0 ~ / - cgroup2 / { print $5; exit }' /proc/self/mountinfo)
[ -n "$CG2" ] || { echo "$T_NAME: no cgroup v2 mount" >&2; exit 77; }
CG_PARENT="$CG2/sbtrace-test.$T_NAME.$$"

log() { printf '%s: %s\n' "$T_NAME" "$*" >&2; }

# Skip: exit 77, which the runner turns into a failure when CI=true.
skip() { log "SKIP: $*"; exit 77; }

fail() { log "FAIL: $*"; T_FAILS=$((T_FAILS + 1)); }

# check DESCRIPTION EXPECTED ACTUAL
check() {
	T_CHECKS=$((T_CHECKS + 1))
	if [ "$2" = "$3" ]; then
		log "ok: $1"
	else
		fail "$1: expected '$2', got '$3'"
	fi
}

# check_true DESCRIPTION COMMAND...
check_true() {
	_ct_desc=$1; shift # not $desc: callers use that name (sh has no locals)
	T_CHECKS=$((T_CHECKS + 1))
	if "$@"; then log "ok: $_ct_desc"; else fail "$_ct_desc"; fi
}

# wait_for SECONDS COMMAND...: poll until COMMAND succeeds
wait_for() {
	w_max=$(($1 * 20))
	shift
	w_i=0
	while ! "$@"; do
		w_i=$((w_i + 1))
		[ $w_i -ge $w_max ] && return 1
		sleep 0.05
	done
	return 0
}

mk_cgroup() {
	mkdir -p "$CG_PARENT/$1" && printf '%s\n' "$CG_PARENT/$1"
}

# Remove a cgroup tree bottom-up, moving stray processes to the parent's parent.
rm_cgroup_tree() {
	[ -d "$1" ] || return 0
	# what the test started in it ends with it (a holder's `sleep 120` would outlive the test)
	if [ -f "$1/cgroup.kill" ] && echo 1 > "$1/cgroup.kill" 2> /dev/null; then
		_rc_i=0
		while [ -n "$(find "$1" -name cgroup.procs -exec cat {} + 2> /dev/null)" ] && [ $_rc_i -lt 20 ]; do
			sleep 0.05
			_rc_i=$((_rc_i + 1))
		done
	fi
	find "$1" -depth -type d | while read -r d; do
		if [ -f "$d/cgroup.procs" ]; then
			while read -r p; do
				echo "$p" > "$CG2/cgroup.procs" 2>/dev/null || true
			done < "$d/cgroup.procs"
		fi
		rmdir "$d" 2>/dev/null || true
	done
}

# remove_sandboxes SHIM STATE_DIR PREFIX: what a test's sandboxes left (a test
# that failed half-way): gc the state dir, then kill and remove every sandbox
# cgroup whose name starts with PREFIX.
remove_sandboxes() {
	[ -x "$1" ] && "$1" gc --state-dir "$2" > /dev/null 2>&1
	for d in "$CG2/sbtrace/$3"*; do
		[ -d "$d" ] || continue
		echo 1 > "$d/cgroup.kill" 2> /dev/null
		i=0
		# at any depth: a test may have built a tree below the sandbox
		while rm_cgroup_tree "$d" && [ -d "$d" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
	done
}

cleanup() {
	if [ -n "$TRACE_PID" ] && kill -0 "$TRACE_PID" 2>/dev/null; then
		kill -TERM "$TRACE_PID" 2>/dev/null
		wait "$TRACE_PID" 2>/dev/null
	fi
	rm_cgroup_tree "$CG_PARENT"
	# SBT_KEEP_WORK=1: leave the files for a look after a failure
	[ -n "${SBT_KEEP_WORK:-}" ] && log "work files kept in $WORK" || rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# start_trace OUTFILE ARGS... : start sbtrace in the background, wait for TraceStarted.
start_trace() {
	out=$1; shift
	TRACE_OUT=$out
	"$SBTRACE" trace --out "$out" "$@" 2> "$out.err" &
	TRACE_PID=$!
	i=0
	while [ $i -lt 100 ]; do
		if [ -s "$out" ] && head -n 1 "$out" | grep -q '"TraceStarted"'; then
			return 0
		fi
		if ! kill -0 "$TRACE_PID" 2>/dev/null; then
			wait "$TRACE_PID"; rc=$?
			TRACE_PID=""
			log "sbtrace exited early (rc $rc): $(cat "$out.err")"
			if [ "$rc" -eq 3 ]; then skip "kernel capability missing"; fi
			return 1
		fi
		sleep 0.05
		i=$((i + 1))
	done
	log "sbtrace did not start within 5 s: $(cat "$out.err")"
	return 1
}

# stop_trace [SIGNAL]: stop sbtrace, return its exit code in TRACE_RC; every
# line it wrote must validate against the events JSON schema.
stop_trace() {
	kill -"${1:-INT}" "$TRACE_PID" 2> /dev/null # it may have stopped by itself
	wait "$TRACE_PID"; TRACE_RC=$?
	TRACE_PID=""
	validate_schema "$TRACE_OUT"
}

SCHEMA="$TOP/userspace/schema/events.schema.json"
# Debian's python3-jsonschema (make deps), not whatever python is first on PATH.
JSONSCHEMA=/usr/bin/jsonschema

# validate_schema FILE: every JSON line of FILE is a valid sbtrace event.
validate_schema() {
	T_CHECKS=$((T_CHECKS + 1))
	jq -s . "$1" > "$1.array.json" || { fail "schema: $1 is not JSON Lines"; return; }
	jq -n --slurpfile s "$SCHEMA" \
		'{"$schema": $s[0]["$schema"], "$defs": $s[0]["$defs"], type: "array", items: {"$ref": "#/$defs/event"}}' \
		> "$WORK/schema-array.json"
	if "$JSONSCHEMA" -i "$1.array.json" "$WORK/schema-array.json" > "$WORK/schema.err" 2>&1; then
		log "ok: $(basename "$1") valid against the events schema"
	else
		fail "schema: $(basename "$1"): $(head -c 600 "$WORK/schema.err")"
	fi
}

REPORT_SCHEMA="$TOP/userspace/schema/probe-report.schema.json"
SARIF_SCHEMA="$TOP/tests/schema/sarif-schema-2.1.0.json"
# One line per error: where and what (not the whole instance, as the default prints).
SCHEMA_ERRFMT='{error.json_path}: {error.message}
'

# validate_json SCHEMA WHAT FILE: FILE (one JSON document) is valid against SCHEMA.
validate_json() {
	T_CHECKS=$((T_CHECKS + 1))
	if "$JSONSCHEMA" -F "$SCHEMA_ERRFMT" -i "$3" "$1" > "$WORK/schema.err" 2>&1; then
		log "ok: $(basename "$3") valid against the $2 schema"
	else
		fail "schema: $(basename "$3"): $(head -c 600 "$WORK/schema.err")"
	fi
}

# validate_report FILE: FILE is a valid probe report (userspace/schema/probe-report.schema.json).
validate_report() { validate_json "$REPORT_SCHEMA" "probe report" "$1"; }

# validate_sarif FILE: FILE is a valid SARIF 2.1.0 log (the OASIS schema, tests/schema/).
validate_sarif() { validate_json "$SARIF_SCHEMA" "SARIF 2.1.0" "$1"; }

# Count events of a type (optionally for a sandbox): nevents FILE EVENT [SANDBOX]
nevents() {
	if [ $# -ge 3 ]; then
		jq -s --arg e "$2" --arg s "$3" '[.[] | select(.event == $e and .sandbox == $s)] | length' "$1"
	else
		jq -s --arg e "$2" '[.[] | select(.event == $e)] | length' "$1"
	fi
}

# The sandbox name sbtrace uses for a cgroup directory (path below the v2 root).
sb_name() { printf '%s\n' "${1#"$CG2"}"; }

# Number of loaded BPF programs whose name starts with exec_ (ours).
nr_our_progs() {
	bpftool prog show 2>/dev/null | grep -cE ' name exec_(tp_btf|raw_tp|tracepoint) ' || true
}

# require_qemu_guest: skip (77; a failure under CI=true) without qemu, the tun
# device or busybox; set GUEST to the microVM guest scripts/guest-build.sh
# builds from Debian's packages (cached after the first build).
require_qemu_guest() {
	command -v qemu-system-x86_64 > /dev/null 2>&1 ||
		skip "qemu-system-x86_64 not installed (make deps: qemu-system-x86)"
	[ -c /dev/net/tun ] || skip "/dev/net/tun missing (modprobe tun)"
	[ -x /bin/busybox ] || skip "/bin/busybox missing (make deps: busybox-static)"
	GUEST=$(sh "$TOP/scripts/guest-build.sh" 2> "$WORK/guest.err") || {
		log "scripts/guest-build.sh failed: $(tail -n 5 "$WORK/guest.err")"
		exit 1
	}
}

# qemu_run_stream STATE NAME OUT ERR STREAM -- SHIM-RUN-ARGS...: sbtrace-shim
# run --backend qemu --name NAME --state-dir STATE ARGS in the background;
# holds an fd on STATE/NAME.vm/exec.stream (the guest agent's frames; the
# shim deletes it at the end), copies the state file to STREAM.json, and
# after the shim's exit copies the stream to STREAM (empty without one).
# Sets QRC to the shim's exit code. With QR_TRACE=FILE (and no --no-wait),
# the host's `sbtrace trace --sandbox NAME` follows the VM (the guest's
# stream among it): its events in FILE, its exit code in QR_TRACE_RC.
# QR_SHIM: another sbtrace-shim binary.
qemu_run_stream() {
	qr_state=$1 qr_name=$2 qr_out=$3 qr_err=$4 qr_stream=$5
	shift 6
	"${QR_SHIM:-$TOP/build/bin/sbtrace-shim}" run --backend qemu --name "$qr_name" \
		--state-dir "$qr_state" \
		"$@" > "$qr_out" 2> "$qr_err" &
	qr_pid=$!
	qr_f="$qr_state/$qr_name.vm/exec.stream"
	qr_i=0
	while [ $qr_i -lt 1200 ] && kill -0 $qr_pid 2> /dev/null &&
		! [ -e "$qr_state/$qr_name.json" ]; do
		sleep 0.05
		qr_i=$((qr_i + 1))
	done
	: > "$qr_stream"
	qr_tpid=
	if [ -n "${QR_TRACE:-}" ] && [ -e "$qr_state/$qr_name.json" ]; then
		"$SBTRACE" trace --sandbox "$qr_name" --state-dir "$qr_state" --out "$QR_TRACE" \
			2> "$QR_TRACE.err" &
		qr_tpid=$!
	fi
	if [ -e "$qr_f" ] && exec 9< "$qr_f"; then
		cp "$qr_state/$qr_name.json" "$qr_stream.json" 2> /dev/null
		wait $qr_pid
		QRC=$?
		cat <&9 > "$qr_stream"
		exec 9<&-
	else
		wait $qr_pid
		QRC=$?
	fi 2> /dev/null
	QR_TRACE_RC=
	if [ -n "$qr_tpid" ]; then
		wait "$qr_tpid"
		QR_TRACE_RC=$?
	fi
}

# podman_up [images]: the project's podman configuration (CONTAINERS_CONF, the
# busybox base image), and with "images" the Debian-built stand-ins for node:*
# and debian:* too (scripts/base-images.sh: idempotent; ~2 min the first time).
# A failure is a failure, never a skip: `make deps` installs podman, runc and
# mmdebstrap.
podman_up() {
	if PODMAN_ENV=$("$TOP/scripts/podman-setup.sh"); then
		eval "$PODMAN_ENV"
	else
		fail "scripts/podman-setup.sh failed (podman and runc come with 'make deps')"
	fi
	[ "${1:-}" != images ] || "$TOP/scripts/base-images.sh" > /dev/null ||
		fail "scripts/base-images.sh failed (mmdebstrap comes with 'make deps')"
}

# diag NAME FILE: what a failed probe's build said (its errors, the tail of
# FILE), as "diag:" lines, which run.sh repeats with the FAIL lines at the end
# of a failed run: a CI log alone tells why.
diag() {
	{ grep -a -i -E 'err|fail|timed? ?out|EAI_|ECONN|refused|denied|exit (code|status)' "$2" | tail -n 12
	  tail -n 4 "$2"; } | cut -c 1-300 | while IFS= read -r _l; do log "diag: $1: $_l"; done
}

# key TEXT: a one-line digest of a failure, repeated by run.sh as the very
# last lines of a run (what a short CI log tail shows).
key() { log "key: $*"; }

finish() {
	if [ "$T_FAILS" -gt 0 ]; then
		log "$T_FAILS of $T_CHECKS checks failed"
		exit 1
	fi
	log "all $T_CHECKS checks passed"
	exit 0
}
