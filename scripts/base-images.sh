#!/bin/sh
# Offline stand-ins for common base images, so that `sbtrace probe` can build a
# Dockerfile that starts `FROM debian:bookworm`, `FROM node:20-slim`,
# `FROM python:3.12`, `FROM golang:1.22-alpine` or
# `FROM gcr.io/distroless/nodejs20-debian12` without any container registry
# (none is used, ever). Each is made from Debian bookworm's packages, from the
# Debian mirror in the host's apt sources:
#
#  - localhost/sbtrace-debian:bookworm  minbase (dash as /bin/sh, bash, coreutils,
#    apt), CMD ["bash"] like debian:bookworm: an mmdebstrap rootfs, `podman
#    import`ed;
#  - localhost/sbtrace-node:bookworm    the same plus Debian's nodejs (v18 in
#    bookworm) and npm, the user node (1000:1000), and like node:* an
#    ENTRYPOINT ["docker-entrypoint.sh"] (a #!/bin/sh script of ours, written
#    below: a first argument that is an option or no command gets `node` put
#    before it, then it execs) with CMD ["node"];
#  - localhost/sbtrace-python:bookworm  the debian one plus python3, pip and venv
#    (and `python`, `pip`; pip may install system-wide, as in the official
#    image), CMD ["python3"];
#  - localhost/sbtrace-golang:bookworm  the debian one plus golang-go (1.19),
#    gcc, libc6-dev, make, git, GOPATH=/go, WORKDIR /go, CMD ["bash"];
#  - localhost/sbtrace-NAME:alpine      node, python and golang with busybox's
#    ash as /bin/sh (Alpine's shell) and no bash, no dash, no apt; still glibc,
#    not musl, and no apk;
#  - localhost/sbtrace-distroless-R:latest and :nonroot (user 65532, WORKDIR
#    /home/nonroot), R static (ca-certificates, tzdata, netbase, no libc), base
#    (+ libc6, libssl3, libstdc++6), nodejs (+ nodejs, ENTRYPOINT
#    ["/nodejs/bin/node"]) and python3 (+ python3, ENTRYPOINT
#    ["/usr/bin/python3"]): with NO SHELL, as gcr.io/distroless/* has none.
#    Their packages are extracted, never installed (no maintainer script
#    runs), without debconf and openssl's tools; what needs a shell to run
#    (a #!/bin/sh script) is left out too, and each is checked for a file
#    named as a shell or the same as one of the host's shells (no_shell).
#
# The node, python and golang images are a rootfs image
# (localhost/sbtrace-NAME-rootfs:bookworm: node's an imported mmdebstrap
# tarball, python's and golang's the debian one with `apt-get install` in a
# `podman build --network=host`, which reaches the Debian mirror alone) with a
# small offline `podman build` on top, labelled sbtrace.recipe=RECIPE and
# sbtrace.provides="Node.js 18.19.0" (what the probe's warning
# base_image_substituted names beside the version a FROM asks for): an image
# of another recipe (an older version of this script) is built again on the
# same rootfs. Recipe 1 imported the rootfs as the node image itself: such an
# image becomes the rootfs, so the slow mmdebstrap step is not run again.
#
# They leave out what the -slim images leave out (man pages, docs but the
# copyright files, info, locales). scripts/image-map says which refs they stand
# in for. The tarballs stay in build/base-images/: after a `podman rmi` they are
# imported again, not downloaded again.
#
# Idempotent, and fast when done: after podman-setup.sh, one `podman image
# exists` or `inspect` per image. From nothing, on 2 CPUs: debian ~65 s,
# node ~125 s, python ~30 s, golang ~60 s, the four distroless ones ~15 s each.
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
# The node, python and golang images' recipe (their sbtrace.recipe label):
# one more at every change below that changes what they hold. 3: the
# sbtrace.provides label.
RECIPE=3
# The distroless images' recipe (label and tarball name), likewise.
DL_RECIPE=1
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

# mktmp: a temporary directory of ours below build/base-images ($tmp; the
# clean-up removes it). apt downloads as _apt, below it: 0755.
mktmp() {
	mkdir -p "$CACHE"
	tmp=$(mktemp -d "$CACHE/tmp.XXXXXX")
	chmod 0755 "$tmp"
}

# mmdebstrap_bg WHAT TARGET [MMDEBSTRAP_OPTION...]: mmdebstrap of $SUITE into
# TARGET from the host's Debian sources, its own temporary files below $tmp
# (mktmp first); WHAT names it in the progress line.
mmdebstrap_bg() {
	what=$1
	target=$2
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
	say "building $what from $from"
	# In the background so that a signal reaches our trap at once, not after
	# mmdebstrap (the trap stops it, and it unmounts its chroot).
	TMPDIR=$tmp mmdebstrap --mode=root "$SUITE" "$target" "$@" < /dev/null &
	child=$!
	wait "$child" ||
		die "mmdebstrap failed (above); is the Debian mirror reachable ('apt-get update' shows it)?"
	child=
}

# build_tarball OUT INCLUDE [MMDEBSTRAP_OPTION...]: a minbase rootfs tarball
# with the packages INCLUDE (comma-separated, may be empty), written to OUT.
build_tarball() {
	out=$1
	include=$2
	shift 2
	t0=$(date +%s)
	mktmp
	mmdebstrap_bg "$out (minbase${include:+ + $include})" "$tmp/rootfs.tar" \
		--variant=minbase --format=tar ${include:+--include="$include"} \
		--dpkgopt='path-exclude=/usr/share/man/*' \
		--dpkgopt='path-exclude=/usr/share/info/*' \
		--dpkgopt='path-exclude=/usr/share/groff/*' \
		--dpkgopt='path-exclude=/usr/share/lintian/*' \
		--dpkgopt='path-exclude=/usr/share/doc/*' \
		--dpkgopt='path-include=/usr/share/doc/*/copyright' \
		--dpkgopt='path-exclude=/usr/share/locale/*' \
		--dpkgopt='path-include=/usr/share/locale/locale.alias' \
		--dpkgopt=force-unsafe-io "$@"
	mv "$tmp/rootfs.tar" "$out"
	cleanup
	say "built $out in $(($(date +%s) - t0)) s ($(du -m "$out" | cut -f1) MB)"
}

# The names sbtrace knows as shells (userspace/exec/shell.c), and the
# multi-call binaries that hold one.
SHELL_NAMES="sh bash rbash dash ash zsh ksh ksh93 mksh lksh pdksh oksh yash posh csh tcsh fish
hush toysh busybox toybox"

# is_shell_name NAME
is_shell_name() {
	for n in $SHELL_NAMES; do
		[ "$1" != "$n" ] || return 0
	done
	return 1
}

# no_shell ROOT: nothing in the tree ROOT is a shell: no file or symlink named
# as one, no file the same as one of the host's shells (a copy under another
# name). Else 1, and what it found on stderr.
# (tests/integration/t_probe_images.sh asks the probe's own shell identity.)
no_shell() {
	found=$(
		find "$1" \( -type f -o -type l \) | while IFS= read -r f; do
			! is_shell_name "${f##*/}" || echo "$f (its name)"
		done
		for d in /bin /usr/bin /sbin /usr/sbin; do
			for n in $SHELL_NAMES; do
				[ ! -f "$d/$n" ] || realpath "$d/$n"
			done
		done | sort -u | while IFS= read -r sh; do
			find "$1" -type f -size "$(stat -c %s "$sh")c" -exec cmp -s "$sh" {} \; \
				-printf "%p (the same as $sh)\n"
		done
	)
	[ -z "$found" ] || {
		say "a shell in $1: $found"
		return 1
	}
}

# shell_script FILE: FILE starts with #! and a shell (#!/bin/sh, #!/usr/bin/env bash).
shell_script() {
	line=$(head -c 128 "$1" | tr -d '\0' | sed -n '1s/^#![[:space:]]*//p')
	set -f
	# shellcheck disable=SC2086 # the #! line's words
	set -- $line
	set +f
	[ $# -ge 1 ] || return 1
	[ "${1##*/}" != env ] || shift
	[ $# -ge 1 ] && is_shell_name "${1##*/}"
}

# build_distroless OUT NAME INCLUDE DROP: a rootfs tarball without a shell,
# written to OUT. apt (mmdebstrap's extract variant) resolves the packages
# INCLUDE needs; each but those in DROP (space-separated) is extracted with
# dpkg-deb, never installed (no maintainer script runs), and described in
# var/lib/dpkg/status.d/ as distroless does. What the real images have of
# their own is written: passwd and group (root, nobody, nonroot 65532),
# nsswitch.conf, os-release, the CA bundle, /tmp, the homes; for nodejs
# /nodejs/bin/node. No docs but the copyright files; no #!-script of a shell
# (it could not run). Then no_shell.
build_distroless() {
	out=$1
	name=$2
	t0=$(date +%s)
	mktmp
	mkdir "$tmp/debs" "$tmp/root"
	SBT_DEBS=$tmp/debs
	export SBT_DEBS
	# shellcheck disable=SC2016 # the hook's $1 and environment, not ours
	mmdebstrap_bg "$out (extracted: $3; without $4)" /dev/null --variant=extract --format=null \
		--include="$3" --extract-hook='cp "$1"/var/cache/apt/archives/*.deb "$SBT_DEBS"/'
	root=$tmp/root
	mkdir -p "$root/var/lib/dpkg/status.d"
	for deb in "$tmp"/debs/*.deb; do
		pkg=$(dpkg-deb --field "$deb" Package)
		case " $4 " in
		*" $pkg "*) continue ;;
		esac
		dpkg-deb --extract "$deb" "$root"
		dpkg-deb --field "$deb" > "$root/var/lib/dpkg/status.d/$pkg"
	done
	rm -rf "$root/usr/share/man" "$root/usr/share/info" "$root/usr/share/groff" \
		"$root/usr/share/lintian" "$root/usr/share/locale"
	[ ! -d "$root/usr/share/doc" ] || find "$root/usr/share/doc" ! -type d ! -name copyright -delete
	find "$root" -type f -perm /111 | while IFS= read -r f; do
		! shell_script "$f" || rm -f "$f"
	done
	mkdir -p "$root/etc/ssl/certs" "$root/tmp" "$root/root" "$root/home/nonroot"
	chmod 1777 "$root/tmp"
	chmod 0700 "$root/root" "$root/home/nonroot"
	chown 65532:65532 "$root/home/nonroot"
	printf '%s\n' 'root:x:0:0:root:/root:/sbin/nologin' \
		'nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin' \
		'nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin' > "$root/etc/passwd"
	printf '%s\n' 'root:x:0:' 'tty:x:5:' 'staff:x:50:' 'nobody:x:65534:' 'nonroot:x:65532:' \
		> "$root/etc/group"
	printf '%s\n' 'passwd: files' 'group: files' 'shadow: files' 'hosts: files dns' \
		'networks: files' 'protocols: files' 'services: files' > "$root/etc/nsswitch.conf"
	printf '%s\n' 'PRETTY_NAME="Distroless (a stand-in by sbtrace, from Debian 12 packages)"' \
		'NAME="Debian GNU/Linux"' 'ID=debian' 'VERSION_ID="12"' "VERSION_CODENAME=$SUITE" \
		> "$root/etc/os-release"
	find "$root/usr/share/ca-certificates" -name '*.crt' 2> /dev/null | sort |
		while IFS= read -r crt; do cat "$crt"; done > "$root/etc/ssl/certs/ca-certificates.crt"
	if [ "$name" = nodejs ]; then
		mkdir -p "$root/nodejs/bin"
		ln -s /usr/bin/node "$root/nodejs/bin/node"
	fi
	no_shell "$root" || die "$out: the distroless rootfs has a shell (above)"
	tar --numeric-owner -C "$root" -cf "$tmp/rootfs.tar" .
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

# python_context DIR, golang_context DIR: those images on their rootfs.
python_context() {
	cat > "$1/Containerfile" << EOF
FROM $IMAGES-python-rootfs:$SUITE
ENV PATH=$IMAGE_PATH LANG=C.UTF-8
CMD ["python3"]
EOF
}

golang_context() {
	cat > "$1/Containerfile" << EOF
FROM $IMAGES-golang-rootfs:$SUITE
ENV GOPATH=/go PATH=/go/bin:/usr/local/go/bin:$IMAGE_PATH
WORKDIR /go
CMD ["bash"]
EOF
}

# alpine_context DIR LINE...: the image BASE (a build argument) with Alpine's
# shell, busybox's ash as /bin/sh (a static busybox: the host's); bash, dash
# and apt removed, the users' shell /bin/sh; LINE... after (its ENTRYPOINT,
# CMD). /bin is /usr/bin's symlink in bookworm.
alpine_context() {
	[ -x "$BUSYBOX" ] || die "$BUSYBOX is missing; run 'make deps' (busybox-static)"
	cp "$BUSYBOX" "$1/busybox"
	cat > "$1/Containerfile" << 'EOF'
ARG BASE
FROM $BASE
COPY busybox /usr/bin/busybox
RUN ["/usr/bin/busybox", "sh", "-euc", "cd /usr/bin && busybox rm -f sh dash bash rbash apt apt-get apt-cache apt-config apt-mark && busybox ln -s busybox sh && busybox ln -s busybox ash && busybox sed -i 's#:/bin/bash$#:/bin/sh#' /etc/passwd"]
EOF
	dir=$1
	shift
	printf '%s\n' "$@" >> "$dir/Containerfile"
}

node_alpine_context() { alpine_context "$1" 'ENTRYPOINT ["docker-entrypoint.sh"]' 'CMD ["node"]'; }
python_alpine_context() { alpine_context "$1" 'CMD ["python3"]'; }
golang_alpine_context() { alpine_context "$1" 'CMD ["/bin/sh"]'; }

# upstream: a Debian version's upstream part (2:1.19.8-2+b1 -> 1.19.8).
upstream() { sed 's/^[0-9]*://; s/[-+~].*//'; }

# image_version IMAGE PACKAGE_RE: the upstream version of the package whose
# name matches PACKAGE_RE (an awk regex, anchored) in IMAGE's dpkg status.
image_version() {
	dir=$(podman image mount "$1") || die "podman image mount $1 failed (above)"
	awk -v re="^($2)\$" '/^Package: / { pkg = $2 } /^Version: / && pkg ~ re { print $2; exit }' \
		"$dir/var/lib/dpkg/status" | upstream
	podman image unmount "$1" > /dev/null
}

node_provides() { echo "Node.js $(image_version "$IMAGES-node-rootfs:$SUITE" nodejs)"; }
python_provides() { echo "Python $(image_version "$IMAGES-python-rootfs:$SUITE" python3)"; }
golang_provides() { echo "Go $(image_version "$IMAGES-golang-rootfs:$SUITE" 'golang-[0-9.]+-go')"; }

# image_id IMAGE: its id, "" when there is none.
image_id() { podman image inspect --format '{{.Id}}' "$1" 2> /dev/null || true; }

# drop_replaced ID IMAGE: the image ID that IMAGE named before it was built
# again is removed (not when it is IMAGE still, or in use), not left dangling.
drop_replaced() {
	[ -z "$1" ] || [ "$1" = "$(image_id "$2")" ] || podman rmi "$1" > /dev/null 2>&1 || true
}

# standin IMAGE CONTEXT_FN [BUILD_ARG [PROVIDES_FN]]: IMAGE of this recipe,
# else built offline (no network, no pull) from the context CONTEXT_FN
# writes, labelled sbtrace.provides with what PROVIDES_FN prints (an image
# built FROM one keeps its label).
standin() {
	if [ "$rebuild" = 0 ] && [ "$(recipe_of "$1")" = "$RECIPE" ]; then
		return 0
	fi
	provides=
	[ -z "${4:-}" ] || provides=$("$4")
	old=$(image_id "$1")
	mktmp
	"$2" "$tmp"
	podman build --quiet --network=none --pull=never --layers=false --format docker \
		${3:+--build-arg "$3"} ${provides:+--label "sbtrace.provides=$provides"} \
		--label "sbtrace.recipe=$RECIPE" -t "$1" "$tmp" > /dev/null ||
		die "podman build of $1 failed (above)"
	cleanup
	drop_replaced "$old" "$1"
	say "built $1 (recipe $RECIPE${provides:+, $provides})"
}

# apt_rootfs NAME PACKAGES SCRIPT: $IMAGES-NAME-rootfs:$SUITE, else built on
# the debian image: apt-get install PACKAGES (no Recommends, docs or man
# pages, as the -slim images), then the shell commands SCRIPT. Its RUN has
# the host's network (--network=host), for the Debian mirror of its apt
# sources (the host's, as mmdebstrap wrote them).
apt_rootfs() {
	image=$IMAGES-$1-rootfs:$SUITE
	if [ "$rebuild" = 1 ]; then
		remove "$image"
	elif podman image exists "$image"; then
		return 0
	fi
	t0=$(date +%s)
	mktmp
	cat > "$tmp/Containerfile" << EOF
FROM $IMAGES-debian:$SUITE
RUN printf '%s\n' 'path-exclude=/usr/share/man/*' 'path-exclude=/usr/share/info/*' \
	'path-exclude=/usr/share/doc/*' 'path-include=/usr/share/doc/*/copyright' \
	'path-exclude=/usr/share/locale/*' 'path-include=/usr/share/locale/locale.alias' \
	> /etc/dpkg/dpkg.cfg.d/sbtrace-slim && \
	apt-get update && \
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
		-o Dpkg::Options::=--force-unsafe-io $2 && \
	rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin && \
	$3
EOF
	say "building $image (debian + $2) with apt-get, from the debian image's apt sources"
	podman build --quiet --network=host --pull=never --layers=false --format docker \
		-t "$image" "$tmp" > /dev/null ||
		die "podman build of $image failed (above); is the Debian mirror reachable?"
	cleanup
	say "built $image in $(($(date +%s) - t0)) s ($(($(podman image inspect --format '{{.Size}}' "$image") / 1000000)) MB)"
}

# distroless NAME INCLUDE DROP ENTRYPOINT [PACKAGE PRODUCT]:
# $IMAGES-distroless-NAME:latest (root, /) and :nonroot (65532,
# /home/nonroot) of this recipe, imported from
# build/base-images/distroless-NAME-$SUITE.rN.tar (build_distroless, when
# missing), its ENTRYPOINT (JSON, or ""), sbtrace.provides "PRODUCT VERSION"
# (PACKAGE's).
distroless() {
	image=$IMAGES-distroless-$1
	tarball=$CACHE/distroless-$1-$SUITE.r$DL_RECIPE.tar
	if [ "$rebuild" = 1 ]; then
		remove "$image:latest"
		remove "$image:nonroot"
		rm -f "$CACHE/distroless-$1-$SUITE".r*.tar
	elif [ "$(recipe_of "$image:latest")" = "$DL_RECIPE" ] &&
		[ "$(recipe_of "$image:nonroot")" = "$DL_RECIPE" ]; then
		return 0
	fi
	if [ ! -f "$tarball" ]; then
		rm -f "$CACHE/distroless-$1-$SUITE".r*.tar # another recipe's
		build_distroless "$tarball" "$1" "$2" "$3"
	fi
	provides=
	if [ -n "${5:-}" ]; then
		provides="$6 $(tar -xOf "$tarball" "./var/lib/dpkg/status.d/$5" |
			awk '/^Version: / { print $2 }' | upstream)"
	fi
	for tag in latest nonroot; do
		user=0
		home=/
		[ "$tag" = latest ] || {
			user=65532
			home=/home/nonroot
		}
		old=$(image_id "$image:$tag")
		podman import --quiet --change "ENV PATH=$IMAGE_PATH" \
			--change "ENV SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt" \
			--change "USER $user" --change "WORKDIR $home" ${4:+--change "ENTRYPOINT $4"} \
			--change "LABEL sbtrace.recipe=$DL_RECIPE" \
			${provides:+--change "LABEL sbtrace.provides=\"$provides\""} \
			"$tarball" "$image:$tag" > /dev/null
		drop_replaced "$old" "$image:$tag"
		say "imported $image:$tag (recipe $DL_RECIPE${provides:+, $provides})"
	done
}

ensure debian '["bash"]' ''
# The hooks' $1 is the chroot, set by mmdebstrap.
# shellcheck disable=SC2016
ensure node-rootfs '["node"]' nodejs,npm \
	--customize-hook='chroot "$1" groupadd --gid 1000 node' \
	--customize-hook='chroot "$1" useradd --uid 1000 --gid node --shell /bin/bash --create-home node'
apt_rootfs python "python3 python3-pip python3-venv python-is-python3" \
	'rm -f /usr/lib/python3*/EXTERNALLY-MANAGED && test -x /usr/bin/pip'
apt_rootfs golang "golang-go gcc libc6-dev make git ca-certificates" \
	'mkdir -p /go/src /go/bin && chmod -R 1777 /go && ln -s /usr/lib/go /usr/local/go'
if [ "$rebuild" = 1 ]; then
	for name in node python golang; do
		remove "$IMAGES-$name:alpine"
		remove "$IMAGES-$name:$SUITE"
	done
fi
standin "$IMAGES-node:$SUITE" node_context "" node_provides
standin "$IMAGES-node:alpine" node_alpine_context "BASE=$IMAGES-node:$SUITE"
standin "$IMAGES-python:$SUITE" python_context "" python_provides
standin "$IMAGES-python:alpine" python_alpine_context "BASE=$IMAGES-python:$SUITE"
standin "$IMAGES-golang:$SUITE" golang_context "" golang_provides
standin "$IMAGES-golang:alpine" golang_alpine_context "BASE=$IMAGES-golang:$SUITE"

# Distroless: the packages of gcr.io/distroless/*'s Debian 12 images, by apt's
# resolution but debconf (perl, for maintainer scripts that never run here) and
# openssl's tools; static without the C library either.
DL_FILES=ca-certificates,tzdata,netbase
DL_LIBS=libc6,libssl3,libstdc++6
distroless static "$DL_FILES" "debconf openssl libc6 libssl3 libgcc-s1 gcc-12-base" ""
distroless base "$DL_FILES,$DL_LIBS" "debconf openssl" ""
distroless nodejs "$DL_FILES,$DL_LIBS,nodejs" "debconf openssl" '["/nodejs/bin/node"]' nodejs Node.js
distroless python3 "$DL_FILES,$DL_LIBS,python3" "debconf openssl" '["/usr/bin/python3"]' python3 Python

echo "export CONTAINERS_CONF=$CONTAINERS_CONF"
