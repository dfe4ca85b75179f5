#!/bin/sh
# Install sbtrace's build, test and bench dependencies from Debian's packages.
# Idempotent, and fast when everything is already there (one dpkg-query).
set -eu

PKGS="clang llvm bpftool strace libbpf-dev libelf-dev zlib1g-dev libjson-c-dev libcmocka-dev
pkg-config make gcc libc6-dev libseccomp-dev libclang-rt-14-dev jq busybox-static libbpf-tools podman runc
qemu-system-x86 xz-utils mmdebstrap slirp4netns openssl
clang-format clang-tidy cppcheck iproute2 procps python3-jsonschema util-linux dnsmasq-base time
libmicrohttpd-dev libncurses-dev prometheus tmux logrotate curl groff-base patch"

missing=""
for p in $PKGS; do
	st=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
	[ "$st" = "installed" ] || missing="$missing $p"
done
if [ -z "$missing" ]; then
	echo "deps: all installed"
	exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
	echo "deps: missing:$missing; run 'make deps' as root (apt-get needs it)" >&2
	exit 1
fi
echo "deps: installing:$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
echo "deps: done"
