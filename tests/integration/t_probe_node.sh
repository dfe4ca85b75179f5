#!/bin/sh
# `sbtrace probe` on Node images built on the offline stand-ins of
# scripts/base-images.sh, mapped by the default image map: the node image's
# own ENTRYPOINT (docker-entrypoint.sh, a #!/bin/sh script) is a shell of
# origin base_image that does not count against the app, a shell the app
# starts does; the Alpine stand-in's /bin/sh is busybox; a RUN of apk there
# fails with that reason named. Nothing is left behind.
#
# SBT_BASE_IMAGES=localhost/NAME: the stand-ins under that name (as
# scripts/base-images.sh makes them), the image map rewritten to match.
. "$(dirname "$0")/lib.sh"

podman_up images

FIX="$TOP/tests/fixtures"
STANDINS=${SBT_BASE_IMAGES:-localhost/sbtrace}
MAP="$WORK/image-map"
sed "s#=localhost/sbtrace-#=$STANDINS-#" "$TOP/scripts/image-map" > "$MAP"
IMAGES_BEFORE=$(podman images -a -q | sort)

# probe NAME ARGS...: report in $WORK/NAME.json (validated)
probe() {
	_n=$1
	shift
	"$SBTRACE" probe -q --no-cache --boot-seconds 2 --image-map "$MAP" "$@" \
		> "$WORK/$_n.json" 2> "$WORK/$_n.err"
	log "$_n: rc $?, $(jq -c '{verdict, confidence, reason, n: .shell_invocation.count, aff: .shell_invocation.affecting_final_image, boot: .boot.ended}' "$WORK/$_n.json" 2> /dev/null)"
	validate_report "$WORK/$_n.json"
}
field() { jq -r "$2" "$WORK/$1.json"; }
# the locations of one origin, as "phase affects instruction kind shell"
locs() {
	field "$1" "[.shell_invocation.locations[] | select(.origin == \"$2\") |
		\"\(.phase) \(.affects_final_image) \(.source.instruction) \(.kind) \(.shell)\"] | join(\",\")"
}

# 1. FROM node:20-slim, exec-form CMD: the entrypoint's shell is the base image's.
probe entry "$FIX/node-entry"
check "node:20-slim, exec-form CMD: safe, high, one shell, none against the app" \
	"safe high null 1 0" \
	"$(field entry '"\(.verdict) \(.confidence) \(.reason) \(.shell_invocation.count) \(.shell_invocation.affecting_final_image)"')"
check "the entrypoint's #!/bin/sh: origin base_image, at boot, not affecting" \
	"boot false ENTRYPOINT shebang sh" "$(locs entry base_image)"
check "the base image and its ENTRYPOINT are named" \
	'node:20-slim ["docker-entrypoint.sh"] null' \
	"$(field entry '.shell_invocation.locations[0] | "\(.base_image.image) \(.base_image.entrypoint | tojson) \(.source.file)"')"
check "its remediation: nothing to change, or the exec form" \
	'true ["node","server.js"]' \
	"$(field entry '.shell_invocation.locations[0].remediation | "\(.text | startswith("nothing to change")) \(.exec_form | tojson)"')"
check "the boot ran the app" "true exited 0" \
	"$(field entry '"\(.boot.ran) \(.boot.ended) \(.boot.exit_code)"')"
check "the stand-in is named" "$STANDINS-node:bookworm" \
	"$(field entry '.inputs[] | select(.name == "image:node:20-slim") | .substituted_by')"

# 2. The same app whose server runs `sh -c` at boot: the app's shell, after the exec.
probe spawn "$FIX/node-entry-spawn"
check "node spawning sh -c at boot: unsafe, high" "unsafe high 1" \
	"$(field spawn '"\(.verdict) \(.confidence) \(.shell_invocation.affecting_final_image)"')"
check "node's sh -c: the app's, at its CMD" "boot true CMD command sh" "$(locs spawn repo)"
check "the entrypoint's shell is still the base image's" "boot false ENTRYPOINT shebang sh" \
	"$(locs spawn base_image)"

# 3. The repo's own shell-form CMD, through the entrypoint: the app's.
probe shellcmd "$FIX/node-entry-shell-cmd"
check "shell-form CMD through the entrypoint: unsafe, at CMD line 5" "unsafe boot true CMD command sh 5" \
	"$(field shellcmd .verdict) $(locs shellcmd repo) $(field shellcmd '[.shell_invocation.locations[] | select(.origin == "repo")][0].source.line')"

# 4. The Alpine stand-in: /bin/sh is busybox's ash, also the entrypoint's.
probe alpine "$FIX/node-alpine"
check "node:20-alpine: mapped to the Alpine stand-in" "$STANDINS-node:alpine" \
	"$(field alpine '.inputs[] | select(.name == "image:node:20-alpine") | .substituted_by')"
check "node:20-alpine: the RUN's /bin/sh is busybox, unsafe" \
	"unsafe build true RUN command busybox sh busybox" \
	"$(field alpine .verdict) $(locs alpine repo) $(field alpine '[.shell_invocation.locations[] | select(.origin == "repo")][0].multicall')"
check "node:20-alpine: the entrypoint's shell is busybox too" "boot false ENTRYPOINT shebang busybox sh" \
	"$(locs alpine base_image)"
check "node:20-alpine: the boot ran" "exited 0" "$(field alpine '"\(.boot.ended) \(.boot.exit_code)"')"

# 5. apk on the Alpine stand-in: the build fails, and the report says why.
probe apk "$FIX/node-alpine-apk"
check "RUN apk on the stand-in: build_failed (the RUN's shell is in the final stage)" \
	"unsafe low build_failed" "$(field apk '"\(.verdict) \(.confidence) \(.reason)"')"
MSG=$(field apk '.warnings[] | select(.id == "shell_invocation_trace.stand_in_lacks_tool") | .message')
case "$MSG" in
*"Dockerfile:4 runs apk"*"$STANDINS-node:alpine for node:20-alpine"*--pull*--image-map*) named=yes ;;
*) named="no: $MSG" ;;
esac
check "the warning names apk, the line, the stand-in and what to do" yes "$named"

check "no container left" "" "$(podman ps -a --format '{{.Names}}' | grep '^probe-')"
check "no image left" "$IMAGES_BEFORE" "$(podman images -a -q | sort)"
check "no sandbox cgroup left" 0 "$(find "$CG2/sbtrace" -mindepth 1 -maxdepth 1 -name 'probe-*' 2> /dev/null | wc -l)"
check "nothing loaded" 0 "$(nr_our_progs)"
finish
