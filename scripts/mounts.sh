#!/bin/sh
# Mount what BPF tracing needs when it is absent: bpffs and tracefs. Idempotent.
set -eu
[ "$(id -u)" -eq 0 ] || { echo "mounts: needs root" >&2; exit 1; }
mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf
mountpoint -q /sys/kernel/tracing || mount -t tracefs tracefs /sys/kernel/tracing
