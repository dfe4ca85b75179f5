#!/bin/sh
# scripts/probe.sh REPO [OPTION...]: the set-up (dependencies, mounts, the
# build; the guest for --backend qemu; the stand-in base images for a repo with
# a Dockerfile; all of it on stderr), then `sbtrace probe --image-map
# scripts/image-map OPTION... REPO` in this process's place (exec), so the exit
# status is the probe's own: 0 a report, 2 usage or no build found, 3 kernel
# capability missing, 4 unsafe / 5 inconclusive with --fail-on (sbtrace-probe(1),
# EXIT STATUS); 1 when the set-up failed. `make probe` runs it, but GNU make
# reports any failed recipe as 2: CI runs this. --no-image-map: no
# scripts/image-map. Stdout is the report alone.
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)

if [ $# -lt 1 ] || [ -z "$1" ] || [ "${1#-}" != "$1" ]; then
	echo "usage: scripts/probe.sh REPO [sbtrace probe option...] (REPO first)" >&2
	exit 2
fi
repo=$1
shift
# what a make that ran this (make probe) exports stays out of the probe and the
# build's own make: its flags, its command-line variables (REPO=, PROBE_ARGS=)
[ -z "${MAKELEVEL:-}" ] || unset REPO PROBE_ARGS
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES MAKE_TERMOUT MAKE_TERMERR GNUMAKEFLAGS

setup() {
	"$@" || { echo "scripts/probe.sh: the set-up failed: $*" >&2; exit 1; }
}
setup "$TOP/scripts/deps.sh" >&2
setup "$TOP/scripts/mounts.sh" >&2
setup make -C "$TOP" --no-print-directory -j"$(nproc 2> /dev/null || echo 2)" all >&2

map=--image-map
for a in "$@"; do
	case $a in
	*qemu*) qemu=1 ;;
	-f | --file | --file=*) dockerfile=1 ;; # a Dockerfile by another name
	esac
	[ "$a" = --no-image-map ] && map=""
done
[ -z "${qemu:-}" ] || setup "$TOP/scripts/guest-build.sh" > /dev/null
[ ! -f "$repo/Dockerfile" ] && [ -z "${dockerfile:-}" ] ||
	setup "$TOP/scripts/base-images.sh" > /dev/null

# the options without --no-image-map (not the probe's), in order
n=$#
while [ "$n" -gt 0 ]; do
	a=$1
	shift
	[ "$a" = --no-image-map ] || set -- "$@" "$a"
	n=$((n - 1))
done
exec "$TOP/build/bin/sbtrace" probe ${map:+"$map" "$TOP/scripts/image-map"} "$@" "$repo"
