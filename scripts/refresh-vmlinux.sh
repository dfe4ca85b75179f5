#!/bin/sh
# Regenerate the pinned bpf/vmlinux/<arch>/vmlinux.h from the running kernel's BTF.
# CO-RE relocations make the pinned header work on other kernels; refresh it
# only to reach types or fields the pinned one lacks.
set -eu
arch=${1:-$(uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')}
btf=${BTF:-/sys/kernel/btf/vmlinux}
[ -r "$btf" ] || { echo "refresh-vmlinux: $btf not readable: kernel built without BTF?" >&2; exit 1; }
out="bpf/vmlinux/$arch/vmlinux.h"
mkdir -p "$(dirname "$out")"
bpftool btf dump file "$btf" format c > "$out.tmp"
mv "$out.tmp" "$out"
echo "refresh-vmlinux: wrote $out from $btf ($(uname -r))"
