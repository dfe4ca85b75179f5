#!/bin/sh
# The probe's host engine path, confined (issue 23): podman's RUN steps and
# the boot's container run under the sandboxes' seccomp rules (an OCI profile
# from userspace/sandbox/seccomp.c's table) without the capabilities a build
# does not need, and nothing of a probe outlives it: after SIGKILL of the
# probe no process of the RUN step it ran is alive 5 s later (a watchdog
# outside the probe kills the sandbox's cgroup), and after `sbtrace-shim gc`
# no working container and no image labelled for that probe is left.
# Base image localhost/sbtrace-busybox:latest (scripts/podman-setup.sh); no
# network: every build here has --network=none.
. "$(dirname "$0")/lib.sh"

podman_up

# 1. set-id modes and device nodes are refused in a RUN step; the step sees EPERM.
mkdir -p "$WORK/setid"
cat > "$WORK/setid/Dockerfile" << 'DF'
FROM localhost/sbtrace-busybox:latest
RUN touch /f; chmod u+s /f && echo SETID-ALLOWED || echo SETID-REFUSED; mknod /d c 1 1 && echo MKNOD-ALLOWED || echo MKNOD-REFUSED; ls -l /f
DF
profiles() { ls /tmp/sbtrace-probe-seccomp.* 2> /dev/null | sort; }
profiles > "$WORK/profiles.before"
"$SBTRACE" probe --no-cache --boot-seconds 1 "$WORK/setid" > "$WORK/setid.json" 2> "$WORK/setid.err"
log "setid: rc $?, $(jq -c '{verdict, reason}' "$WORK/setid.json" 2> /dev/null)"
check "chmod u+s in a RUN step: refused" 1 "$(grep -c '^SETID-REFUSED' "$WORK/setid.err")"
check "chmod u+s: the step saw EPERM" 1 "$(grep -c 'chmod: /f: Operation not permitted' "$WORK/setid.err")"
check "mknod of a device in a RUN step: refused" 1 "$(grep -c '^MKNOD-REFUSED' "$WORK/setid.err")"
check "the file has no set-id bit" 1 "$(grep -c -- '^-rw-r--r-- .* /f$' "$WORK/setid.err")"
check "the profile file is removed" "" "$(profiles | comm -13 "$WORK/profiles.before" -)"

# 2. SIGKILL of the probe during a RUN step: nothing of that step alive 5 s later.
# cg_pids PID: the processes in the cgroup tree of the probe PID's sandbox.
cg_pids() {
	grep -l "sbtrace/probe-[0-9a-f]*-$1/" /proc/[0-9]*/cgroup 2> /dev/null | cut -d/ -f3 | tr '\n' ' '
}
EXTERNAL=$(podman ps -a --external -q | sort)
mkdir -p "$WORK/slow"
printf 'FROM localhost/sbtrace-busybox:latest\nRUN ["/bin/sleep", "30"]\n' > "$WORK/slow/Dockerfile"
# start_slow OUT: a probe of a build whose RUN step sleeps, in the background
# (its pid in SLOW), once that step runs in the probe's sandbox.
start_slow() {
	"$SBTRACE" probe --no-cache "$WORK/slow" > "$WORK/$1.json" 2> "$WORK/$1.err" &
	SLOW=$!
	wait_for 30 sh -c "grep -l 'sbtrace/probe-[0-9a-f]*-$SLOW/' /proc/[0-9]*/cgroup 2> /dev/null | xargs -r -n1 dirname | xargs -r -I{} cat {}/cmdline 2> /dev/null | tr '\0' ' ' | grep -q 'sleep 30'" ||
		fail "$1: the slow build never started"
}

# SIGINT during the RUN step: the probe's own clean-up leaves no working container.
start_slow sigint
kill -INT "$SLOW"
wait "$SLOW"
podman ps -a --external -q | sort > "$WORK/external.sigint"
check "SIGINT: no working container left" "" "$(printf '%s\n' "$EXTERNAL" | comm -13 - "$WORK/external.sigint")"

start_slow sigkill
KILLED=$SLOW
kill -KILL "$KILLED"
wait "$KILLED"
check_true "SIGKILL: no process of the RUN step alive 5 s later" wait_for 5 sh -c "[ -z \"\$(grep -l 'sbtrace/probe-[0-9a-f]*-$KILLED/' /proc/[0-9]*/cgroup 2> /dev/null)\" ]"
log "left in the killed probe's cgroup: $(cg_pids "$KILLED")"
check_true "SIGKILL: the watchdog removed the profile file" wait_for 5 sh -c "[ -z \"\$(ls /tmp/sbtrace-probe-seccomp.* 2> /dev/null | sort | comm -13 '$WORK/profiles.before' -)\" ]"

# 3. ... and after `sbtrace-shim gc`: no working container, no image labelled for that probe,
# nor for one whose sandbox is long gone (an image of the probe's label, made here).
GONE=probe-000000000000-999999999
printf 'FROM localhost/sbtrace-busybox:latest\n' > "$WORK/gone.Dockerfile"
podman build -q --label "sbtrace.probe=$GONE" -f "$WORK/gone.Dockerfile" "$WORK" > /dev/null 2>&1 ||
	fail "could not build the labelled image"
"$TOP/build/bin/sbtrace-shim" gc 2> "$WORK/gc.err"
check "gc: exit 0" 0 "$?"
podman ps -a --external -q | sort > "$WORK/external.after"
check "gc: no working container of the killed probe" "" "$(printf '%s\n' "$EXTERNAL" | comm -13 - "$WORK/external.after")"
check "gc: no image labelled for the killed probe" "" "$(podman images -a --format '{{.ID}} {{.Labels}}' | grep "sbtrace.probe:probe-[0-9a-f]*-$KILLED\b")"
check "gc: no image labelled for a sandbox long gone" "" "$(podman images -q --filter "label=sbtrace.probe=$GONE")"
check "gc: no cgroup of the killed probe" "" "$(ls -d "$CG2"/sbtrace/probe-*-"$KILLED" 2> /dev/null)"
finish
