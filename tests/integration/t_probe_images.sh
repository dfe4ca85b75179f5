#!/bin/sh
# `sbtrace probe` on the base images a Dockerfile names (issue 31): a FROM the
# host has not and no --image-map line maps is reason base_image_missing, its
# message naming the image, --pull and --image-map; node's tags map to the
# Debian stand-in whatever they ask for (node:24-slim, no tag), a digest pin
# too (node:20@sha256:...), the warning naming the FROM as written; a FROM
# gcr.io/distroless/nodejs20-debian12 builds on the shell-less stand-in of
# scripts/base-images.sh, where an app whose boot runs node alone is safe and
# one that tries /bin/sh is unsafe (the exec fails, as it would on
# distroless). The distroless stand-ins hold no shell, as the probe's own
# shell identity sees each of their files (sbt-shellscan). Nothing is left.
#
# SBT_BASE_IMAGES=localhost/NAME: the stand-ins under that name (as
# scripts/base-images.sh makes them), the image map rewritten to match.
. "$(dirname "$0")/lib.sh"

podman_up images

SCAN="$TOP/build/tests/sbt-shellscan"
[ -x "$SCAN" ] || fail "$SCAN is missing: 'make all' builds it"
STANDINS=${SBT_BASE_IMAGES:-localhost/sbtrace}
MAP="$WORK/image-map"
sed "s#=localhost/sbtrace-#=$STANDINS-#" "$TOP/scripts/image-map" > "$MAP"
IMAGES_BEFORE=$(podman images -a -q | sort)
PIN=sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef

# repo NAME DOCKERFILE [APP.JS]: a repo in $WORK/NAME (printf escapes in DOCKERFILE)
repo() {
	mkdir -p "$WORK/$1"
	# shellcheck disable=SC2059 # the Dockerfile's lines are the format
	printf "$2" > "$WORK/$1/Dockerfile"
	[ -z "${3:-}" ] || printf '%s\n' "$3" > "$WORK/$1/app.js"
}
# probe NAME ARGS...: report in $WORK/NAME.json (validated), its trace in $WORK/NAME.events
probe() {
	_n=$1
	shift
	"$SBTRACE" probe -q --no-cache --boot-seconds 3 --image-map "$MAP" \
		--trace-out "$WORK/$_n.events" "$@" > "$WORK/$_n.json" 2> "$WORK/$_n.err"
	log "$_n: rc $?, $(jq -c '{verdict, confidence, reason, n: .shell_invocation.count, boot: .boot.ended}' "$WORK/$_n.json" 2> /dev/null)"
	validate_report "$WORK/$_n.json"
}
field() { jq -r "$2" "$WORK/$1.json"; }
# warning NAME ID: the message of the report's warning shell_invocation_trace.ID
warning() { field "$1" ".warnings[] | select(.id == \"shell_invocation_trace.$2\") | .message"; }
# substituted NAME REF: the stand-in the input image:REF names
substituted() { field "$1" ".inputs[] | select(.name == \"image:$2\") | .substituted_by"; }
# has TEXT WORD...: "yes" when TEXT holds each WORD, else what it is
has() {
	_t=$1
	shift
	for _w in "$@"; do
		case "$_t" in
		*"$_w"*) ;;
		*)
			echo "no '$_w' in: $_t"
			return
			;;
		esac
	done
	echo yes
}

APP='console.log("app up", process.version);'

# 1. A FROM nobody has: base_image_missing, named with what to do; nothing ran.
repo missing 'FROM nosuch/image:1\nRUN ["true"]\n'
probe missing "$WORK/missing"
check "FROM nosuch/image:1: base_image_missing, inconclusive, nothing booted" \
	"inconclusive low base_image_missing false" \
	"$(field missing '"\(.verdict) \(.confidence) \(.reason) \(.boot.ran)"')"
check "its warning names the image, --pull and an --image-map line for it" yes \
	"$(has "$(warning missing base_image_missing)" "'nosuch/image:1'" --pull \
		"--image-map 'nosuch/image:1=LOCAL'" scripts/image-map)"
# mapped, but the stand-in is not there either
probe gone --image-map "nosuch/image:*=$STANDINS-nothing-here:1" "$WORK/missing"
check "mapped to a stand-in that is missing: base_image_missing too" base_image_missing \
	"$(field gone .reason)"
check "its warning names both and how to build the stand-ins" yes \
	"$(has "$(warning gone base_image_missing)" "'nosuch/image:1'" \
		"'$STANDINS-nothing-here:1'" scripts/base-images.sh)"

# 2. node:24-slim and node without a tag: both on the Debian stand-in.
repo n24 'FROM node AS build\nRUN ["node", "-e", "require(\\"fs\\").writeFileSync(\\"/built.txt\\", \\"ok\\")"]\nFROM node:24-slim\nWORKDIR /app\nCOPY --from=build /built.txt .\nCOPY app.js .\nCMD ["node", "app.js"]\n' "$APP"
probe n24 "$WORK/n24"
check "node:24-slim (and FROM node): built and booted on the stand-in, safe" \
	"safe high null exited 0" \
	"$(field n24 '"\(.verdict) \(.confidence) \(.reason) \(.boot.ended) \(.boot.exit_code)"')"
check "node:24-slim and node: both stood in for by the Debian one" \
	"$STANDINS-node:bookworm $STANDINS-node:bookworm" \
	"$(substituted n24 node:24-slim) $(substituted n24 node)"
check "the warning names the FROM as asked (node:24-slim) and its stand-in" yes \
	"$(has "$(warning n24 base_image_substituted)" "FROM node:24-slim was built on $STANDINS-node:bookworm")"
check "... and the version asked beside the stand-in's (Node.js 24, not what it has)" yes \
	"$(has "$(warning n24 base_image_substituted)" "asked: Node.js 24, the stand-in has Node.js")"
check "the stand-in says what it has (sbtrace.provides): Node.js 18" yes \
	"$(has "$(podman image inspect --format '{{index .Config.Labels "sbtrace.provides"}}' "$STANDINS-node:bookworm")" "Node.js 18.")"

# 3. A digest pin: mapped like node:20; the input and the warning keep the pin.
repo pin "FROM node:20@$PIN\nWORKDIR /app\nCOPY app.js .\nCMD [\"node\", \"app.js\"]\n" "$APP"
probe pin "$WORK/pin"
check "node:20@sha256:...: built and booted on the stand-in, safe" "safe high exited" \
	"$(field pin '"\(.verdict) \(.confidence) \(.boot.ended)"')"
check "the pinned input is stood in for" "$STANDINS-node:bookworm" "$(substituted pin "node:20@$PIN")"
check "the warning names the pinned FROM" yes \
	"$(has "$(warning pin base_image_substituted)" "FROM node:20@$PIN was built on $STANDINS-node:bookworm")"
check "... and that the digest pin cannot be honoured" yes \
	"$(has "$(warning pin base_image_substituted)" "the digest pin @sha256:0123456789ab... cannot be honoured")"

# 4. Already distroless: the boot runs node alone, and that is a confident safe.
repo dl 'FROM gcr.io/distroless/nodejs20-debian12\nCOPY app.js /app/\nCMD ["/app/app.js"]\n' "$APP"
probe dl "$WORK/dl"
check "FROM gcr.io/distroless/nodejs20-debian12: safe, high, no shell" "safe high null 0 0" \
	"$(field dl '"\(.verdict) \(.confidence) \(.reason) \(.shell_invocation.count) \(.shell_invocation.failed)"')"
check "built on the shell-less stand-in" "$STANDINS-distroless-nodejs:latest" \
	"$(substituted dl gcr.io/distroless/nodejs20-debian12)"
check "its boot ran the app with the image's node, and exited 0" "true exited 0" \
	"$(field dl '"\(.boot.ran) \(.boot.ended) \(.boot.exit_code)"')"
check "the trace: node /app/app.js ran once, no exec failed" "1 0" \
	"$(jq -s -r '"\([.[] | select(.event == "ProcessExec" and .argv == ["/nodejs/bin/node", "/app/app.js"])] | length) \([.[] | select(.event == "ProcessExecFailed")] | length)"' "$WORK/dl.events")"

# 5. The same image, nonroot, with an app that runs a shell: the exec fails, unsafe.
repo dlsh 'FROM gcr.io/distroless/nodejs20-debian12:nonroot\nCOPY app.js /app/\nCMD ["/app/app.js"]\n' \
	'try { require("child_process").execSync("echo hi"); } catch (e) { console.log("no shell:", e.code); }'
probe dlsh "$WORK/dlsh"
check "distroless:nonroot, the app runs sh -c: unsafe, the shell's exec failed (ENOENT)" \
	"unsafe high 1 boot sh ENOENT echo hi" \
	"$(field dlsh '"\(.verdict) \(.confidence) \(.shell_invocation.failed) \(.shell_invocation.locations[0] | "\(.phase) \(.shell) \(.failed) \(.command)")"')"
check "built on the nonroot stand-in" "$STANDINS-distroless-nodejs:nonroot" \
	"$(substituted dlsh gcr.io/distroless/nodejs20-debian12:nonroot)"

# 6. No shell in any distroless stand-in, file by file (the probe's classifiers);
#    the scanner does find the debian stand-in's and a renamed copy of dash.
# scan IMAGE: sbt-shellscan's findings in IMAGE's files, and its exit code
scan() {
	_d=$(podman image mount "$1") || {
		echo "cannot mount $1"
		return
	}
	"$SCAN" "$_d" > "$WORK/scan.out" 2> "$WORK/scan.err"
	_rc=$?
	podman image unmount "$1" > /dev/null
	grep -v '^scanned ' "$WORK/scan.out" | tr '\n' ';'
	echo "rc $_rc"
}
for r in static base nodejs python3; do
	for tag in latest nonroot; do
		check "$STANDINS-distroless-$r:$tag: no file is a shell" "rc 0" \
			"$(scan "$STANDINS-distroless-$r:$tag")"
	done
done
check "the debian stand-in: its shells are found (the scan works)" \
	"rc 1;shell /usr/bin/dash name dash;shell /usr/bin/sh name sh" \
	"$(scan "$STANDINS-debian:bookworm" | tr ';' '\n' | grep -E '^shell /usr/bin/(sh|dash) |^rc' | sort | tr '\n' ';' | sed 's/;$//')"
mkdir -p "$WORK/copy/usr/bin"
cp "$(realpath /bin/sh)" "$WORK/copy/usr/bin/tool"
check "a copy of the host's sh under another name: found by its content" \
	"shell /usr/bin/tool content" \
	"$("$SCAN" "$WORK/copy" | awk '$1 == "shell" { print $1, $2, $3 }')"
check "the distroless nodejs entrypoint and the nonroot user" \
	'["/nodejs/bin/node"] 65532 /home/nonroot' \
	"$(podman image inspect --format '{{json .Config.Entrypoint}} {{.Config.User}} {{.Config.WorkingDir}}' "$STANDINS-distroless-nodejs:nonroot")"

check "no container left" "" "$(podman ps -a --format '{{.Names}}' | grep '^probe-')"
check "no image left" "$IMAGES_BEFORE" "$(podman images -a -q | sort)"
check "no sandbox cgroup left" 0 "$(find "$CG2/sbtrace" -mindepth 1 -maxdepth 1 -name 'probe-*' 2> /dev/null | wc -l)"
check "nothing loaded" 0 "$(nr_our_progs)"
finish
