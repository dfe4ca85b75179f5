#!/bin/sh
# The kernel BTF the BPF object's CO-RE relocations need, and nothing else:
# `bpftool gen min_core_btf` of the running kernel's /sys/kernel/btf/vmlinux
# for OBJ, written to OUT with OUT.id naming the kernel it came from
# (the SHA-256 of /sys/kernel/notes, which holds its GNU build id, and the
# size of its BTF). sbtrace loads with it when the running
# kernel is that one (loader/minbtf.c), so libbpf matches the relocations
# against a few KiB of types instead of the whole kernel's (~15 ms of
# start-up); on any other kernel it uses the kernel's own BTF, as without it.
# Redone when OBJ is newer or the kernel differs; fast when done.
# min-btf.sh OBJ OUT
set -eu
OBJ=$1
OUT=$2
VMLINUX=/sys/kernel/btf/vmlinux
BPFTOOL=${BPFTOOL:-bpftool}

if [ ! -r "$VMLINUX" ]; then
	rm -f "$OUT" "$OUT.id"
	exit 0
fi
ID="$(sha256sum < /sys/kernel/notes | cut -d' ' -f1)|$(stat -c %s "$VMLINUX")"
if [ -f "$OUT" ] && [ -f "$OUT.id" ] && [ "$(cat "$OUT.id")" = "$ID" ] && [ ! "$OBJ" -nt "$OUT" ]; then
	exit 0
fi
"$BPFTOOL" gen min_core_btf "$VMLINUX" "$OUT.tmp" "$OBJ"
mv "$OUT.tmp" "$OUT"
printf '%s' "$ID" > "$OUT.id"
echo "  MIN-BTF  $OUT ($(stat -c %s "$OUT") bytes, for $(uname -r))" >&2
