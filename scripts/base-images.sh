#!/bin/sh
# Offline stand-ins for common base images, so that `sbtrace probe` can build a
# Dockerfile that starts `FROM debian:bookworm`, `FROM node:20-slim` or
# `FROM node:20-alpine` without any container registry (none is used, ever).
# Each is a Debian bookworm rootfs made by mmdebstrap from the Debian mirror in
# the host's apt sources, then `podman import`ed:
#
#  - localhost/sbtrace-debian:bookworm  minbase (dash as /bin/sh, bash, coreutils,
#    apt), CMD ["bash"] like debian:bookworm;
#  - localhost/sbtrace-node:bookworm    the same plus Debian's nodejs (v18 in
#    bookworm) and npm, the user node (1000:1000), and like node:* an
#    ENTRYPOINT ["docker-entrypoint.sh"] (a #!/bin/sh script of ours, written
#    below: a first argument that is an option or no command gets `node` put
#    before it, then it execs) with CMD ["node"];
#  - localhost/sbtrace-node:alpine      that image with busybox's ash as /bin/sh
#    (Alpine's shell) and no bash, no dash, no apt; still glibc, not musl, and
#    no apk.
#
# The node images are the imported rootfs (localhost/sbtrace-node-rootfs:bookworm)
# with a small offline `podman build` on top, labelled sbtrace.recipe=RECIPE: an
# image of another recipe (an older version of this script) is built again on
# the same rootfs. Recipe 1 imported the rootfs as the node image itself: such
# an image becomes the rootfs, so the slow mmdebstrap step is not run again.
#
# They leave out what the -slim images leave out (man pages, docs but the
# copyright files, info, locales). scripts/image-map says which refs they stand
# in for. The tarballs stay in build/base-images/: after a `podman rmi` they are
# imported again, not downloaded again.
#
# Idempotent, and fast when done: after podman-setup.sh, one `podman image
# exists` or `inspect` per image.
#
#   base-images.sh            build and import what is missing or of another
#                             recipe
#   base-images.sh --rebuild  remove the images and tarballs first (to build
#                             the rootfs again from the mirror)
#
# SBT_BASE_IMAGES=localhost/NAME names the images localhost/NAME-debian:bookworm
# ... instead of localhost/sbtrace-... (to try a change of recipe beside the
# images in use). Prints `export CONTAINERS_CONF=...` last (eval-able), as
# podman-setup.sh does; progress goes to stderr. Needs root.
set -eu

TOP=$(cd "$(dirname "$0")/.." && pwd)
CACHE="$TOP/build/base-images"
SUITE=bookworm
IMAGES=${SBT_BASE_IMAGES:-localhost/sbtrace}
# The node images' recipe (their sbtrace.recipe label): one more at every
# change below that changes what they hold.
RECIPE=2
BUSYBOX=/bin/busybox
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

# remove IMAGE: untag it (--rebuild).
remove() {
	if podman image exists "$1"; then
		podman rmi "$1" > /dev/null
		say "removed $1"
	fi
}

# recipe_of IMAGE: its sbtrace.recipe label ("" for none, or no such image).
recipe_of() {
	podman image inspect --format '{{index .Labels "sbtrace.recipe"}}' "$1" 2> /dev/null |
		sed 's/^<no value>$//'
}

# ensure NAME CMD INCLUDE [MMDEBSTRAP_OPTION...]: $IMAGES-NAME:$SUITE exists,
# imported from build/base-images/NAME-$SUITE.tar (built if missing).
ensure() {
	name=$1
	image="$IMAGES-$name:$SUITE"
	tarball="$CACHE/$name-$SUITE.tar"
	cmd=$2
	shift 2
	if [ "$rebuild" = 1 ]; then
		remove "$image"
		rm -f "$tarball"
	elif podman image exists "$image"; then
		return 0
	elif [ "$name" != "${name%-rootfs}" ] && [ ! -f "$tarball" ]; then
		# recipe 1 imported the tarball as the image itself: that is the rootfs
		old="$IMAGES-${name%-rootfs}:$SUITE"
		if podman image exists "$old" && [ -z "$(recipe_of "$old")" ]; then
			podman tag "$old" "$image"
			say "kept $old (recipe 1, the rootfs as it was imported) as $image"
			return 0
		fi
	fi
	[ -f "$tarball" ] || build_tarball "$tarball" "$@"
	podman import --quiet --change "ENV PATH=$IMAGE_PATH" --change "CMD $cmd" \
		"$tarball" "$image" > /dev/null
	say "imported $image ($(($(podman image inspect --format '{{.Size}}' "$image") / 1000000)) MB)"
}

# The official node image's ENTRYPOINT is a #!/bin/sh script, so its containers
# run /bin/sh at start. Ours, written here, behaves the same: a first argument
# that is an option (-e ...) or no command on PATH (server.js) is node's.
entrypoint_script() {
	cat << 'EOF'
#!/bin/sh
set -e
if [ "$#" -eq 0 ] || [ "${1#-}" != "$1" ] || ! command -v -- "$1" > /dev/null 2>&1; then
	set -- node "$@"
fi
exec "$@"
EOF
}

# node_context DIR: the node image: the rootfs with the entrypoint.
node_context() {
	entrypoint_script > "$1/docker-entrypoint.sh"
	chmod 0755 "$1/docker-entrypoint.sh"
	cat > "$1/Containerfile" << EOF
FROM $IMAGES-node-rootfs:$SUITE
COPY docker-entrypoint.sh /usr/local/bin/docker-entrypoint.sh
ENV PATH=$IMAGE_PATH
ENTRYPOINT ["docker-entrypoint.sh"]
CMD ["node"]
EOF
}

# alpine_context DIR: the node image with Alpine's shell, busybox's ash as
# /bin/sh (a static busybox: the host's); bash, dash and apt removed, the
# user node's shell /bin/sh. /bin is /usr/bin's symlink in bookworm.
alpine_context() {
	[ -x "$BUSYBOX" ] || die "$BUSYBOX is missing; run 'make deps' (busybox-static)"
	cp "$BUSYBOX" "$1/busybox"
	cat > "$1/Containerfile" << 'EOF'
ARG BASE
FROM $BASE
COPY busybox /usr/bin/busybox
RUN ["/usr/bin/busybox", "sh", "-euc", "cd /usr/bin && busybox rm -f sh dash bash rbash apt apt-get apt-cache apt-config apt-mark && busybox ln -s busybox sh && busybox ln -s busybox ash && busybox sed -i 's#:/bin/bash$#:/bin/sh#' /etc/passwd"]
ENTRYPOINT ["docker-entrypoint.sh"]
CMD ["node"]
EOF
}

# standin IMAGE CONTEXT_FN [BUILD_ARG]: IMAGE of this recipe, else built
# offline (no network, no pull) from the context CONTEXT_FN writes.
standin() {
	if [ "$rebuild" = 0 ] && [ "$(recipe_of "$1")" = "$RECIPE" ]; then
		return 0
	fi
	mkdir -p "$CACHE"
	tmp=$(mktemp -d "$CACHE/tmp.XXXXXX")
	"$2" "$tmp"
	podman build --quiet --network=none --pull=never --layers=false --format docker \
		${3:+--build-arg "$3"} --label "sbtrace.recipe=$RECIPE" -t "$1" "$tmp" > /dev/null ||
		die "podman build of $1 failed (above)"
	cleanup
	say "built $1 (recipe $RECIPE)"
}

ensure debian '["bash"]' ''
# The hooks' $1 is the chroot, set by mmdebstrap.
# shellcheck disable=SC2016
ensure node-rootfs '["node"]' nodejs,npm \
	--customize-hook='chroot "$1" groupadd --gid 1000 node' \
	--customize-hook='chroot "$1" useradd --uid 1000 --gid node --shell /bin/bash --create-home node'
if [ "$rebuild" = 1 ]; then
	remove "$IMAGES-node:alpine"
	remove "$IMAGES-node:$SUITE"
fi
standin "$IMAGES-node:$SUITE" node_context
standin "$IMAGES-node:alpine" alpine_context "BASE=$IMAGES-node:$SUITE"

echo "export CONTAINERS_CONF=$CONTAINERS_CONF"
