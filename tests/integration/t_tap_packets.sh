#!/bin/sh
# The tap program frame by frame on the real kernel (BPF_PROG_TEST_RUN):
# tests/kernel/test_tap_packets.c, a table of 39 cases (allowed and denied
# IPv4/IPv6 TCP/UDP/ICMP, VLAN, stacked VLAN, extension headers, fragments,
# mapped destination, spoofed sources, ARP, neighbour discovery, DNS,
# malformed and truncated headers at every layer, audit mode, folding).
. "$(dirname "$0")/lib.sh"

BIN="$TOP/build/tests/kernel/test_tap_packets"
[ -x "$BIN" ] || { log "$BIN missing: run make"; exit 1; }

"$BIN" > "$WORK/cmocka.out" 2>&1
RC=$?
cat "$WORK/cmocka.out" >&2
check "packet table: every case passes" 0 "$RC"
check_true "packet table: at least 25 cases ran" \
	sh -c "[ \$(grep -c '^\[       OK \]' '$WORK/cmocka.out') -ge 25 ]"
check "nothing left loaded" 0 "$(bpftool prog show 2>/dev/null | grep -c ' name tap_ingress ' || true)"
finish
