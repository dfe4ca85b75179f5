#!/bin/sh
# The host engine's Dockerfile build cannot change the repo or reach the host
# through it (issue 23): the engine's build context is a copy of the repo
# (no set-id bit, no special file), a repo with a symlink that leads out of
# it is refused, and so are RUN flags the probe cannot confine (a read-write
# bind of the context, a cache, another network), each with its line, before
# anything runs; `sbtrace-shim gc` removes the copy a killed probe left. The repo and the files outside it are compared (names,
# types, modes, owners, link targets, contents) before and after.
. "$(dirname "$0")/lib.sh"

podman_up
BASE=localhost/sbtrace-busybox:latest

# probe NAME REPO ARGS...: report in $WORK/NAME.json, stderr in $WORK/NAME.err, exit code in PROBE_RC
probe() {
	_n=$1
	shift
	"$SBTRACE" probe -q --no-cache --boot-seconds 2 "$@" > "$WORK/$_n.json" 2> "$WORK/$_n.err"
	PROBE_RC=$?
	log "$_n: rc $PROBE_RC, $(jq -c '{verdict, confidence, reason}' "$WORK/$_n.json" 2> /dev/null) $(tail -n 1 "$WORK/$_n.err")"
}
field() { jq -r "$2" "$WORK/$1.json"; }
# state DIR: every entry's name, type, mode, owner, link target, and every file's sha256
state() {
	(cd "$1" && find . -printf '%p %y %m %U:%G %l\n' | LC_ALL=C sort &&
		find . -type f -exec sha256sum {} + | LC_ALL=C sort)
}
# repo NAME: a fresh repo $WORK/NAME whose Dockerfile is stdin
repo() {
	mkdir -p "$WORK/$1"
	cat > "$WORK/$1/Dockerfile"
	echo "data" > "$WORK/$1/data.txt"
}

# a. A RUN that binds the context read-write and writes a file, a set-uid
#    binary and a device node into it: refused with its line; the repo as it was.
repo rwbind << EOF
FROM $BASE
RUN --mount=type=bind,target=/ctx,rw sh -c 'echo x > /ctx/new; cp /bin/busybox /ctx/suid; chmod 4755 /ctx/suid; mknod /ctx/mem c 1 1'
CMD ["/bin/true"]
EOF
BEFORE=$(state "$WORK/rwbind")
probe rwbind "$WORK/rwbind"
check "rw bind: refused as a bad Dockerfile (exit 2)" 2 "$PROBE_RC"
check_true "rw bind: the error names the line and the flag" \
	grep -q "Dockerfile:2: RUN --mount=type=bind: a read-write bind lets the step write the build context" "$WORK/rwbind.err"
check "rw bind: the repo is unchanged (no new file, set-id bit or device)" "$BEFORE" "$(state "$WORK/rwbind")"

# a'. What the engine sees is a copy: set-id bits dropped, a FIFO left out,
#     a link inside kept as a link; the copy gone afterwards, the repo unchanged.
repo copy << EOF
FROM $BASE
RUN --mount=type=bind,target=/ctx ["/bin/sh", "-c", "test -f /ctx/tool && test ! -u /ctx/tool && test ! -e /ctx/fifo && test -L /ctx/inlink && test \$(cat /ctx/inlink) = data"]
CMD ["/bin/true"]
EOF
printf '#!/bin/sh\n' > "$WORK/copy/tool"
chmod 4755 "$WORK/copy/tool"
mkfifo "$WORK/copy/fifo"
ln -s data.txt "$WORK/copy/inlink"
BEFORE=$(state "$WORK/copy")
probe copy "$WORK/copy"
check "copy: exit 0, the build worked (its RUN saw the copy)" "0 unsafe high null" \
	"$PROBE_RC $(field copy '"\(.verdict) \(.confidence) \(.reason)"')"
CTX=$(field copy '.command.argv[-1]')
case "$CTX" in
/var/tmp/sbtrace-ctx-*) log "ok: copy: the engine's build context is $CTX" ;;
*) fail "copy: the engine's build context is '$CTX', not a copy under /var/tmp" ;;
esac
check "copy: -f names the copy's Dockerfile" "$CTX/Dockerfile" "$(field copy '.command.argv[-2]')"
check "copy: the copy is removed" "no" "$([ -e "$CTX" ] && echo yes || echo no)"
check_true "copy: stderr says the set-id bit was dropped" \
	grep -q "build context: set-uid/set-gid bits dropped from 1 entry, the first: tool" "$WORK/copy.err"
check_true "copy: stderr says the FIFO was left out" \
	grep -q "build context: 1 special file left out .*the first: fifo" "$WORK/copy.err"
check_true "copy: command.why says so" sh -c "jq -r .command.why '$WORK/copy.json' | grep -q 'build context: a copy of the repo'"
check "copy: the repo is unchanged" "$BEFORE" "$(state "$WORK/copy")"
validate_report "$WORK/copy.json"

# b. A symlink to a root-only file outside the repo, used by COPY, or as a
#    bind mount's source: refused with its path; nothing outside read or written.
mkdir -p "$WORK/outside"
echo "secret" > "$WORK/outside/secret"
chmod 0600 "$WORK/outside/secret"
OUTSIDE=$(state "$WORK/outside")
repo linkcopy << EOF
FROM $BASE
COPY link /leak
RUN ["/bin/cat", "/leak"]
EOF
ln -s "$WORK/outside/secret" "$WORK/linkcopy/link"
probe linkcopy "$WORK/linkcopy"
check "symlink out, COPY: refused (exit 2)" 2 "$PROBE_RC"
check_true "symlink out, COPY: the error names the link and its target" \
	grep -q "$WORK/linkcopy/link: a symlink to $WORK/outside/secret, outside the repo" "$WORK/linkcopy.err"
check "symlink out, COPY: no report" "" "$(cat "$WORK/linkcopy.json")"
repo linkbind << EOF
FROM $BASE
RUN --mount=type=bind,source=link,target=/s ["/bin/sh", "-c", "cat /s; echo owned > /s"]
EOF
ln -s ../outside/secret "$WORK/linkbind/link"
probe linkbind "$WORK/linkbind"
check "symlink out, bind source: refused (exit 2)" 2 "$PROBE_RC"
check_true "symlink out, bind source: the error names the link" \
	grep -q "$WORK/linkbind/link: a symlink to ../outside/secret, outside the repo" "$WORK/linkbind.err"
check "symlink out: nothing outside the repo read or written" "$OUTSIDE" "$(state "$WORK/outside")"
check "symlink out: the secret was never printed" "" \
	"$(grep -lx secret "$WORK/linkcopy.err" "$WORK/linkbind.err" "$WORK/linkcopy.json" "$WORK/linkbind.json")"

# c. A cache mount would keep what the build wrote on the host: refused with its line.
repo cache << EOF
FROM $BASE
RUN echo one
RUN --mount=type=cache,target=/c touch /c/left
EOF
BEFORE=$(state "$WORK/cache")
probe cache "$WORK/cache"
check "cache mount: refused (exit 2)" 2 "$PROBE_RC"
check_true "cache mount: the error names line 3 and says what to do" \
	grep -q "Dockerfile:3: RUN --mount=type=cache: a cache mount keeps what the build writes on the host after the probe; drop it" "$WORK/cache.err"
check "cache mount: the repo is unchanged" "$BEFORE" "$(state "$WORK/cache")"

# d. Another network for a step: refused with its line (a continuation's first line).
repo network << EOF
FROM $BASE
RUN --network=host \\
	true
EOF
probe network "$WORK/network"
check "--network=host: refused (exit 2)" 2 "$PROBE_RC"
check_true "--network=host: the error names line 2" \
	grep -q "Dockerfile:2: RUN --network=host: the step's network is the sandbox's" "$WORK/network.err"
# e. SIGKILL of the probe during a RUN step leaves its copy of the repo:
#    `sbtrace-shim gc` removes it (and the sandbox, as for every probe).
repo slow << EOF
FROM $BASE
RUN ["/bin/sleep", "30"]
EOF
"$SBTRACE" probe -q --no-cache --no-boot "$WORK/slow" > "$WORK/slow.json" 2> "$WORK/slow.err" &
SLOW=$!
wait_for 30 sh -c "ls -d /var/tmp/sbtrace-ctx-$SLOW.* > /dev/null 2>&1 && pgrep -f '[s]leep 30' > /dev/null" ||
	fail "slow: the build never started"
kill -KILL "$SLOW"
wait "$SLOW"
check "SIGKILL: the copy is left behind" 1 "$(ls -d /var/tmp/sbtrace-ctx-"$SLOW".* 2> /dev/null | wc -l)"
"$TOP/build/bin/sbtrace-shim" gc -v 2> "$WORK/gc.err"
check "SIGKILL + gc: exit 0" 0 "$?"
check "SIGKILL + gc: the copy is removed" "" "$(ls -d /var/tmp/sbtrace-ctx-"$SLOW".* 2> /dev/null)"
check_true "SIGKILL + gc: gc says so" grep -q "removed build context /var/tmp/sbtrace-ctx-$SLOW\." "$WORK/gc.err"
finish
