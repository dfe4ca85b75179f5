#!/bin/sh
# Set up podman for `sbtrace probe`'s Dockerfile builds (the podman backend).
# Idempotent, and fast when done (no podman call beyond one `image exists`).
#
#  - build/podman/containers.conf: the project's podman configuration, used
#    through CONTAINERS_CONF (nothing under /etc is touched): runc with the
#    cgroupfs manager (no systemd here), no default ulimits (raising rlimits
#    is not permitted in every environment), events to a file.
#  - localhost/sbtrace-busybox:latest: a base image built locally (no
#    registry is used, ever): Debian's busybox-static with its applet
#    symlinks, `podman import`ed from a rootfs tarball.
#
# Prints `export CONTAINERS_CONF=...` last (eval-able). Needs root.
set -eu

TOP=$(cd "$(dirname "$0")/.." && pwd)
DIR="$TOP/build/podman"
CONF="$DIR/containers.conf"
IMAGE="localhost/sbtrace-busybox:latest"
BUSYBOX=/bin/busybox

command -v podman > /dev/null 2>&1 || {
	echo "podman-setup: podman is missing; run 'make deps' (apt-get install podman runc)" >&2
	exit 1
}
command -v runc > /dev/null 2>&1 || {
	echo "podman-setup: runc is missing; run 'make deps' (apt-get install runc)" >&2
	exit 1
}
[ "$(id -u)" -eq 0 ] || {
	echo "podman-setup: needs root (rootful podman)" >&2
	exit 1
}

mkdir -p "$DIR"
WANT=$(
	cat << 'EOF'
# Written by scripts/podman-setup.sh: sbtrace's podman configuration, used
# through CONTAINERS_CONF (the files under /etc stay as they are).
[containers]
# Raising rlimits is not permitted everywhere: keep the inherited ones.
default_ulimits = []
# No network for containers unless asked (`podman build --network=none` too).
netns = "none"

[engine]
runtime = "runc"
# runc creates the container cgroups itself (no systemd); sbtrace's probe passes
# --cgroup-parent so that they land below the sandbox's cgroup.
cgroup_manager = "cgroupfs"
events_logger = "file"
EOF
)
if [ ! -f "$CONF" ] || [ "$(cat "$CONF")" != "$WANT" ]; then
	printf '%s\n' "$WANT" > "$CONF.tmp"
	mv "$CONF.tmp" "$CONF"
	echo "podman-setup: wrote $CONF" >&2
fi
CONTAINERS_CONF=$CONF
export CONTAINERS_CONF

if ! podman image exists "$IMAGE"; then
	[ -x "$BUSYBOX" ] || {
		echo "podman-setup: $BUSYBOX is missing; run 'make deps' (busybox-static)" >&2
		exit 1
	}
	tmp=$(mktemp -d /tmp/sbtrace-podman-setup.XXXXXX)
	trap 'rm -rf "$tmp"' EXIT
	root="$tmp/rootfs"
	mkdir -p "$root/bin" "$root/etc" "$root/tmp" "$root/root" "$root/proc" "$root/sys" \
		"$root/dev"
	chmod 1777 "$root/tmp"
	chmod 0700 "$root/root"
	cp "$BUSYBOX" "$root/bin/busybox"
	for a in $("$BUSYBOX" --list); do
		[ "$a" = busybox ] || [ -e "$root/bin/$a" ] || ln -s busybox "$root/bin/$a"
	done
	ln -s bin "$root/sbin"
	mkdir -p "$root/usr"
	ln -s ../bin "$root/usr/bin"
	ln -s ../bin "$root/usr/sbin"
	printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' \
		> "$root/etc/passwd"
	printf 'root:x:0:\nnogroup:x:65534:\n' > "$root/etc/group"
	# Fixed owners and times: the same busybox gives the same image.
	tar --numeric-owner --owner=0 --group=0 --mtime=@0 --sort=name -C "$root" -cf "$tmp/rootfs.tar" .
	podman import --quiet --change 'CMD ["/bin/sh"]' "$tmp/rootfs.tar" "$IMAGE" > /dev/null
	echo "podman-setup: imported $IMAGE ($(podman image inspect --format '{{.Id}}' "$IMAGE"))" >&2
fi
echo "export CONTAINERS_CONF=$CONF"
