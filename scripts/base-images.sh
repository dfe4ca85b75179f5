#!/bin/sh
# Offline stand-ins for common base images, so that `sbtrace probe` can build a
# Dockerfile that starts `FROM debian:bookworm` or `FROM node:20-slim` without
# any container registry (none is used, ever). Each is a Debian bookworm rootfs
# made by mmdebstrap from the Debian mirror in the host's apt sources, then
# `podman import`ed:
#
#  - localhost/sbtrace-debian:bookworm  minbase (dash as /bin/sh, bash, coreutils,
#    apt), CMD ["bash"] like debian:bookworm;
#  - localhost/sbtrace-node:bookworm    the same plus Debian's nodejs (v18 in
#    bookworm) and npm, the user node (1000:1000) and CMD ["node"] like node:*.
#
# Both leave out what the -slim images leave out (man pages, docs but the
# copyright files, info, locales). scripts/image-map says which refs they stand
# in for. The tarballs stay in build/base-images/: after a `podman rmi` they are
# imported again, not downloaded again.
#
# Idempotent, and fast when done: after podman-setup.sh, one `podman image
# exists` per image.
#
#   base-images.sh            build and import what is missing
#   base-images.sh --rebuild  remove both images and tarballs first (after a
#                             change of recipe here)
#
# Prints `export CONTAINERS_CONF=...` last (eval-able), as podman-setup.sh does;
# progress goes to stderr. Needs root.
set -eu

TOP=$(cd "$(dirname "$0")/.." && pwd)
CACHE="$TOP/build/base-images"
SUITE=bookworm
# The PATH the real images set; podman import sets none.
IMAGE_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

say() { echo "base-images: $*" >&2; }
die() {
	say "$*"
	exit 1
}

# A build in progress: mmdebstrap's pid and our temporary directory, for the
# clean-up on exit and on SIGINT/SIGTERM.
child=
tmp=
cleanup() {
	if [ -n "$child" ]; then
		kill "$child" 2> /dev/null || true
		wait "$child" 2> /dev/null || true
		child=
	fi
	if [ -n "$tmp" ]; then
		# mmdebstrap's chroot had /dev, /proc and /sys mounted: never follow
		# a mount that outlived it.
		rm -rf --one-file-system "$tmp"
		tmp=
	fi
}
trap cleanup EXIT
trap 'say "interrupted; nothing half-built is kept"; exit 130' INT
trap 'say "terminated; nothing half-built is kept"; exit 143' TERM

case "${1:-}" in
"") rebuild=0 ;;
--rebuild) rebuild=1 ;;
*)
	echo "usage: $0 [--rebuild]" >&2
	exit 2
	;;
esac

# The project's podman configuration (CONTAINERS_CONF).
setup=$("$TOP/scripts/podman-setup.sh") || die "scripts/podman-setup.sh failed (above)"
eval "$setup"

# debian_sources: the host's apt sources of Debian bookworm as one-line entries
# (bookworm, bookworm-updates, bookworm-security; other origins left out).
debian_sources() {
	# shellcheck disable=SC2016 # apt's $(FIELD), not the shell's
	apt-get indextargets --format '$(REPO_URI) $(RELEASE) $(COMPONENT)' \
		'Created-By: Packages' 'Origin: Debian' 2> /dev/null |
		awk -v s="$SUITE" '$2 == s || $2 == s "-updates" || $2 == s "-security" {
			print "deb " $0 }' | sort -u -k3,3 -k2,2 -k4
}

# build_tarball OUT INCLUDE [MMDEBSTRAP_OPTION...]: a minbase rootfs tarball
# with the packages INCLUDE (comma-separated, may be empty), written to OUT.
build_tarball() {
	out=$1
	include=$2
	shift 2
	command -v mmdebstrap > /dev/null 2>&1 ||
		die "mmdebstrap is missing; run 'make deps' (apt-get install mmdebstrap)"
	srcs=$(debian_sources)
	if [ -n "$srcs" ]; then
		from="the host's apt sources ($(echo "$srcs" | awk '{ print $2 " " $3 }' | paste -sd, -))"
		while IFS= read -r line; do
			set -- "$@" "$line"
		done << EOF
$srcs
EOF
	else
		from="mmdebstrap's default mirror (no Debian $SUITE source in the host's apt lists; 'apt-get update' fills them)"
	fi
	mkdir -p "$CACHE"
	tmp=$(mktemp -d "$CACHE/tmp.XXXXXX")
	# apt downloads as _apt, below this directory.
	chmod 0755 "$tmp"
	say "building $out (minbase${include:+ + $include}) from $from"
	t0=$(date +%s)
	# In the background so that a signal reaches our trap at once, not after
	# mmdebstrap (the trap stops it, and it unmounts its chroot).
	TMPDIR=$tmp mmdebstrap --mode=root --variant=minbase --format=tar \
		${include:+--include="$include"} \
		--dpkgopt='path-exclude=/usr/share/man/*' \
		--dpkgopt='path-exclude=/usr/share/info/*' \
		--dpkgopt='path-exclude=/usr/share/groff/*' \
		--dpkgopt='path-exclude=/usr/share/lintian/*' \
		--dpkgopt='path-exclude=/usr/share/doc/*' \
		--dpkgopt='path-include=/usr/share/doc/*/copyright' \
		--dpkgopt='path-exclude=/usr/share/locale/*' \
		--dpkgopt='path-include=/usr/share/locale/locale.alias' \
		"$SUITE" "$tmp/rootfs.tar" "$@" < /dev/null &
	child=$!
	wait "$child" ||
		die "mmdebstrap failed (above); is the Debian mirror reachable ('apt-get update' shows it)?"
	child=
	mv "$tmp/rootfs.tar" "$out"
	cleanup
	say "built $out in $(($(date +%s) - t0)) s ($(du -m "$out" | cut -f1) MB)"
}

# ensure NAME CMD INCLUDE [MMDEBSTRAP_OPTION...]: localhost/sbtrace-NAME:$SUITE
# exists, imported from build/base-images/NAME-$SUITE.tar (built if missing).
ensure() {
	image="localhost/sbtrace-$1:$SUITE"
	tarball="$CACHE/$1-$SUITE.tar"
	cmd=$2
	shift 2
	if [ "$rebuild" = 1 ]; then
		if podman image exists "$image"; then
			podman rmi "$image" > /dev/null
			say "removed $image"
		fi
		rm -f "$tarball"
	elif podman image exists "$image"; then
		return 0
	fi
	[ -f "$tarball" ] || build_tarball "$tarball" "$@"
	podman import --quiet --change "ENV PATH=$IMAGE_PATH" --change "CMD $cmd" \
		"$tarball" "$image" > /dev/null
	say "imported $image ($(($(podman image inspect --format '{{.Size}}' "$image") / 1000000)) MB)"
}

ensure debian '["bash"]' ''
# The hooks' $1 is the chroot, set by mmdebstrap.
# shellcheck disable=SC2016
ensure node '["node"]' nodejs,npm \
	--customize-hook='chroot "$1" groupadd --gid 1000 node' \
	--customize-hook='chroot "$1" useradd --uid 1000 --gid node --shell /bin/bash --create-home node'

echo "export CONTAINERS_CONF=$CONTAINERS_CONF"
