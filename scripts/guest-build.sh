#!/bin/sh
# Build the microVM guest of `sbtrace-shim run --backend qemu` from Debian
# packages, cached: prints the guest directory (and nothing else) on stdout,
#   CACHE/guest-<kernel release>-<hash of scripts/guest/init and VERSION>/
#     vmlinux            the uncompressed kernel (ELF, booted through PVH)
#     initramfs.cpio.gz  busybox (static), /init, the virtio-net, 9p,
#                        overlay and virtio_console modules
#     release            the kernel release
# Progress and errors go to stderr. CACHE: --cache DIR, else
# $SBTRACE_GUEST_CACHE, else /var/cache/sbtrace/guest.
#
#  - The kernel: the package Debian's linux-image-amd64 depends on, fetched
#    with `apt-get download` into a temporary directory and unpacked with
#    dpkg-deb -x (nothing is installed, /boot is untouched). vmlinux is cut
#    out of vmlinuz: the bzImage header gives the payload's offset and
#    length, its magic the compressor; the result must be an ELF whose size
#    is the one the kernel build appended to the payload.
#  - busybox: /bin/busybox of the installed busybox-static, else the
#    package fetched the same way.
#  - Modules: virtio-net over virtio-mmio (microvm) and virtio-pci, 9p
#    over virtio (the host's /usr and the workspace, read-only) and
#    overlayfs (their tmpfs upper layers), virtio_console (the guest
#    agent's virtio-serial port), virtio_blk, ext4 and crc32c_generic (ext4's checksums:
#    the engine's throw-away disk, the probe's Dockerfile build), with
#    their dependencies (the modules' own depends= fields) in load order,
#    decompressed here when the package ships .ko.xz/.ko.zst/.ko.gz (the
#    guest uses plain insmod); those in modules.builtin are skipped.
# Built in a temporary directory in CACHE and renamed into place: a guest
# directory is complete or absent. A second run finds it and downloads
# nothing. Without a working apt-cache (no package lists), the newest cached
# guest built from the same init script is used.
#
# Needs (make deps): apt, dpkg, busybox-static, xz-utils, gzip; zstd only
# for a zstd-compressed kernel or modules. Not root, if CACHE is writable
# (then /dev/console comes from the kernel's built-in initramfs).
set -eu

# Part of the cache key with the init script: bump it when what this script builds changes.
VERSION=5
META=linux-image-amd64
MODULES="virtio_mmio virtio_net virtio_pci 9p 9pnet_virtio overlay virtio_console virtio_blk ext4 crc32c_generic"

prog=guest-build
die() {
	echo "$prog: $*" >&2
	exit 1
}
note() { echo "$prog: $*" >&2; }

usage() {
	cat << EOF
Usage: scripts/guest-build.sh [--cache DIR]
Build (once) the microVM guest for sbtrace-shim --backend qemu and print its
directory. --cache DIR: where guests are kept (default \$SBTRACE_GUEST_CACHE,
else /var/cache/sbtrace/guest).
EOF
}

cache=${SBTRACE_GUEST_CACHE:-/var/cache/sbtrace/guest}
while [ $# -gt 0 ]; do
	case $1 in
	--cache)
		[ $# -ge 2 ] || die "--cache needs a directory"
		cache=$2
		shift 2
		;;
	--cache=*)
		cache=${1#--cache=}
		shift
		;;
	-h | --help)
		usage
		exit 0
		;;
	*) die "unknown argument '$1'; see --help" ;;
	esac
done
[ -n "$cache" ] || die "--cache: give a directory"
case $cache in
/*) ;;
*) cache="$(pwd)/$cache" ;;
esac

here=$(cd "$(dirname "$0")" && pwd)
init="$here/guest/init"
[ -r "$init" ] || die "$init is missing"
for t in apt-cache apt-get dpkg-deb sha256sum gzip od; do
	command -v "$t" > /dev/null 2>&1 || die "$t not found; run 'make deps'"
done
[ "$(dpkg --print-architecture)" = amd64 ] ||
	die "only amd64 guests are built (qemu-system-x86_64); this is $(dpkg --print-architecture)"

hash=$({
	cat "$init"
	echo "guest-build $VERSION"
} | sha256sum | cut -c1-12)

complete() { [ -s "$1/vmlinux" ] && [ -s "$1/initramfs.cpio.gz" ] && [ -s "$1/release" ]; }

# The kernel package the metapackage depends on right now. apt-cache takes
# half a second where apt keeps no pkgcache.bin: its answer is kept in
# CACHE/.kernel-package until apt's lists, dpkg's status or /etc/apt change.
stamp="$cache/.kernel-package"
pkg=""
if [ -s "$stamp" ] &&
	[ -z "$(find /var/lib/apt/lists /var/lib/dpkg/status /etc/apt -newer "$stamp" 2> /dev/null | head -n 1)" ]; then
	pkg=$(head -n 1 "$stamp")
fi
if [ -z "$pkg" ]; then
	pkg=$(apt-cache depends "$META" 2> /dev/null |
		awk '$1 ~ /Depends:$/ && $2 ~ /^linux-image-[0-9]/ { print $2; exit }')
	if [ -n "$pkg" ] && mkdir -p "$cache" 2> /dev/null; then
		printf '%s\n' "$pkg" > "$stamp.$$" 2> /dev/null && mv -f "$stamp.$$" "$stamp" 2> /dev/null ||
			rm -f "$stamp.$$"
	fi
fi
if [ -z "$pkg" ]; then
	# Offline or no package lists: the newest guest of this init script will do.
	last=$(ls -d "$cache"/guest-*-"$hash" 2> /dev/null | sort -V | tail -n 1)
	if [ -n "$last" ] && complete "$last"; then
		note "apt-cache knows no $META (no package lists?); using the cached $last"
		printf '%s\n' "$last"
		exit 0
	fi
	die "apt-cache depends $META names no kernel package; run 'apt-get update'"
fi
release=${pkg#linux-image-}
case $release in
*/* | *..* | '') die "unexpected kernel package name '$pkg'" ;;
esac
out="$cache/guest-$release-$hash"
if complete "$out"; then
	printf '%s\n' "$out"
	exit 0
fi

mkdir -p "$cache" 2> /dev/null || die "cannot create the cache $cache (use --cache DIR)"
tmp=$(mktemp -d "$cache/.build.XXXXXX") || die "cannot write to the cache $cache (use --cache DIR)"
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM
mkdir "$tmp/dl" "$tmp/pkg" "$tmp/root" "$tmp/out"
# apt drops to the _apt user for downloads: let it write there.
if [ "$(id -u)" -eq 0 ] && id _apt > /dev/null 2>&1; then
	chown _apt "$tmp/dl"
fi

# fetch PACKAGE: apt-get download into $tmp/dl; prints the .deb's path.
fetch() {
	note "downloading $1"
	(cd "$tmp/dl" && apt-get download -q "$1" > "$tmp/apt.log" 2>&1) ||
		die "apt-get download $1 failed: $(tail -n 3 "$tmp/apt.log" | tr '\n' ' ')"
	set -- "$tmp"/dl/"$1"_*.deb
	[ -f "$1" ] || die "apt-get download left no .deb"
	printf '%s\n' "$1"
}

# ---- the kernel ----------------------------------------------------------
deb=$(fetch "$pkg")
note "unpacking $(basename "$deb")"
dpkg-deb -x "$deb" "$tmp/pkg" || die "dpkg-deb -x $deb failed"
rm -f "$deb"
kdir="$tmp/pkg/lib/modules/$release"
img="$tmp/pkg/boot/vmlinuz-$release"
[ -d "$kdir" ] || die "$pkg has no lib/modules/$release"
[ -f "$img" ] || die "$pkg has no boot/vmlinuz-$release"
if [ -f "$tmp/pkg/boot/config-$release" ] && ! grep -q '^CONFIG_PVH=y' "$tmp/pkg/boot/config-$release"; then
	die "kernel $release is built without CONFIG_PVH: microvm cannot boot its vmlinux"
fi

# u8 FILE OFFSET / le32 FILE OFFSET: unsigned integers read from a file.
u8() { od -An -v -j "$2" -N 1 -tu1 "$1" | tr -d ' \n'; }
le32() {
	set -- $(od -An -v -j "$2" -N 4 -tu1 "$1")
	[ $# -eq 4 ] || return 1
	echo $(($1 + $2 * 256 + $3 * 65536 + $4 * 16777216))
}
hex() { od -An -v -j "$2" -N "$3" -tx1 "$1" | tr -d ' \n'; }

# extract_vmlinux BZIMAGE OUT: the payload (boot protocol 2.08+: setup_sects
# at 0x1f1, "HdrS" at 0x202, payload_offset/length at 0x248/0x24c, relative
# to the protected-mode code at (setup_sects + 1) * 512), decompressed by the
# tool its magic names. The build appends the uncompressed size (gzip's ISIZE
# is the same field), which the result must match.
extract_vmlinux() {
	[ "$(hex "$1" 514 4)" = 48647253 ] || die "$1: no bzImage header (HdrS)"
	setup=$(u8 "$1" 497)
	[ "$setup" -ne 0 ] || setup=4
	poff=$(le32 "$1" 584) && plen=$(le32 "$1" 588) || die "$1: short header"
	start=$(((setup + 1) * 512 + poff))
	[ "$plen" -gt 8 ] && [ $((start + plen)) -le "$(wc -c < "$1")" ] ||
		die "$1: payload offset/length out of range"
	magic=$(hex "$1" "$start" 6)
	case $magic in
	1f8b*) dec="gzip -dc" ;;
	fd377a585a00) dec="xz -dc" ;;
	5d0000*) dec="xz -dc --format=lzma" ;;
	425a68*) dec="bzip2 -dc" ;;
	28b52ffd*) dec="zstd -dcq" ;;
	02214c18*) dec="lz4 -dc" ;;
	894c5a4f*) dec="lzop -dc" ;;
	*) die "$1: unknown payload compression (magic $magic)" ;;
	esac
	command -v "${dec%% *}" > /dev/null 2>&1 || die "the kernel is ${dec%% *}-compressed: install ${dec%% *}"
	# The appended size follows the stream: decompressors complain about it, so
	# their status is not the test; the size and the ELF magic are.
	tail -c +$((start + 1)) "$1" | head -c "$plen" | $dec > "$2" 2> "$tmp/dec.err" || true
	want=$(le32 "$1" $((start + plen - 4)))
	got=$(wc -c < "$2")
	[ "$got" -eq "$want" ] ||
		die "$1: decompressing with '$dec' gave $got bytes, not $want: $(head -c 200 "$tmp/dec.err")"
	[ "$(hex "$2" 0 4)" = 7f454c46 ] || die "$1: the payload is not an ELF vmlinux"
}
note "extracting vmlinux"
extract_vmlinux "$img" "$tmp/out/vmlinux"
printf '%s\n' "$release" > "$tmp/out/release"

# ---- busybox -------------------------------------------------------------
bb=/bin/busybox
st=$(dpkg-query -W -f='${db:Status-Status}' busybox-static 2> /dev/null || true)
if [ "$st" != installed ] || [ ! -x "$bb" ]; then
	deb=$(fetch busybox-static)
	dpkg-deb -x "$deb" "$tmp/bb" || die "dpkg-deb -x $deb failed"
	bb="$tmp/bb/bin/busybox"
	[ -x "$bb" ] || die "busybox-static has no bin/busybox"
fi
r="$tmp/root"
mkdir -p "$r/bin" "$r/dev" "$r/proc" "$r/sys" "$r/tmp" "$r/root" "$r/etc" "$r/lib/modules"
cp "$bb" "$r/bin/busybox"
for a in $("$bb" --list); do
	case $a in
	busybox | */* | '') ;;
	*) ln -s busybox "$r/bin/$a" ;;
	esac
done
[ -e "$r/bin/sh" ] || die "$bb has no sh applet"
cp "$init" "$r/init"
chmod 0755 "$r/init" "$r/bin/busybox"
chmod 1777 "$r/tmp"
chmod 0700 "$r/root"
# The kernel opens /dev/console before /init runs (its built-in initramfs has one too).
mknod -m 0600 "$r/dev/console" c 5 1 2> /dev/null || true
printf 'root:x:0:0:root:/root:/bin/sh\n' > "$r/etc/passwd"
printf 'root:x:0:\n' > "$r/etc/group"

# ---- modules -------------------------------------------------------------
# modfile NAME: the module's file in the package ('-' and '_' are the same), or nothing.
modfile() {
	find "$kdir/kernel" -type f \( -name "$1.ko*" -o -name "$(echo "$1" | tr _ -).ko*" \) |
		head -n 1
}
# builtin NAME: true when the kernel has it built in.
builtin() {
	[ -f "$kdir/modules.builtin" ] &&
		grep -Eq "/($1|$(echo "$1" | tr _ -))\.ko\$" "$kdir/modules.builtin"
}
# plain NAME FILE: the uncompressed module as $r/lib/modules/NAME.ko.
plain() {
	case $2 in
	*.ko) cp "$2" "$r/lib/modules/$1.ko" ;;
	*.ko.xz) xz -dc "$2" > "$r/lib/modules/$1.ko" ;;
	*.ko.zst) zstd -dcq "$2" > "$r/lib/modules/$1.ko" ;;
	*.ko.gz) gzip -dc "$2" > "$r/lib/modules/$1.ko" ;;
	*) die "unknown module compression: $2" ;;
	esac || die "cannot decompress $2"
}
# deps NAME: the depends= of an unpacked module, space-separated, '-' as '_'.
deps() {
	tr '\0' '\n' < "$r/lib/modules/$1.ko" | sed -n 's/^depends=//p' | head -n 1 | tr ',-' ' _'
}

# The closure of $MODULES under depends=, then a topological order.
todo=$MODULES
have=""
while :; do
	set -- $todo
	[ $# -gt 0 ] || break
	m=$1
	shift
	todo=$*
	case " $have " in *" $m "*) continue ;; esac
	f=$(modfile "$m")
	if [ -z "$f" ]; then
		builtin "$m" || die "module $m is neither in $pkg nor built in"
		continue
	fi
	plain "$m" "$f"
	have="$have $m"
	todo="$todo $(deps "$m")"
done
order=""
left=$have
rounds=0
while [ -n "$(echo $left)" ]; do
	rounds=$((rounds + 1))
	[ $rounds -le 64 ] || die "module dependencies form a cycle:$left"
	next=""
	for m in $left; do
		ready=1
		for d in $(deps "$m"); do
			case " $have " in *" $d "*) ;; *) continue ;; esac # built in
			case " $order " in *" $d "*) ;; *) ready=0 ;; esac
		done
		if [ $ready -eq 1 ]; then order="$order $m"; else next="$next $m"; fi
	done
	left=$next
done
for m in $order; do echo "$m"; done > "$r/lib/modules/sbt.order"
note "modules:$order"

# ---- the archive ---------------------------------------------------------
(cd "$r" && find . | LC_ALL=C sort | "$bb" cpio -o -H newc -R 0:0 2> /dev/null) |
	gzip -9 -n > "$tmp/out/initramfs.cpio.gz" || die "cannot write the initramfs"
[ -s "$tmp/out/initramfs.cpio.gz" ] || die "empty initramfs"
chmod 0755 "$tmp/out"

# Atomic: rename(2) of the complete directory (mv -T: never into an existing one).
if ! mv -T "$tmp/out" "$out" 2> /dev/null; then
	complete "$out" || die "cannot rename the guest into $out"
	note "another build finished first: $out"
fi
note "built $out"
printf '%s\n' "$out"
