#!/bin/sh
# Run libFuzzer targets: run-fuzz.sh SECONDS BIN...
# Each BIN runs for SECONDS on its corpus build/fuzz/corpus/<name> (kept
# between runs; crash artifacts go to build/fuzz/artifacts/<name>/).
# Fails if any target fails.
set -u

usage() {
	echo "usage: run-fuzz.sh SECONDS BIN..." >&2
	exit 2
}

[ $# -ge 2 ] || usage
secs=$1
shift
case $secs in
'' | *[!0-9]*) usage ;;
esac
[ "$secs" -gt 0 ] || usage

root=$(cd "$(dirname "$0")/.." && pwd)

# A few seeds (rewritten on every run; the rest of the corpus is kept).
# fuzz_decode: bytes 0-1 filename length - 1, 2-3 interp length - 1, 4-6 argv
# length (little endian), 7 flags, then the strings back to back.
seed() {
	case $1 in
	fuzz_decode)
		printf '\007\000\007\000\016\000\000\000/bin/sh/bin/shsh\000-c\000echo hi\000' \
			>"$2/seed-sh-c"
		printf '\013\000\007\000\017\000\000\001/tmp/run.sh/bin/sh/tmp/run.sh\000a b' \
			>"$2/seed-shebang-cut"
		printf '\014\000\000\000\016\000\000\000/bin/busyboxsh\000build.sh\000\000\000' \
			>"$2/seed-busybox"
		;;
	fuzz_sites)
		printf 'all:\n\tcd sub && $(MAKE) x\n\t@echo hi > f\n\000FROM a AS b\nRUN echo x\nFROM b\nCMD node s.js\n\000cd sub && make x\necho hi > f\nnode s.js\n' \
			>"$2/seed-make-docker"
		;;
	fuzz_migrate)
		printf 'FROM node:20 AS b\nWORKDIR /app\nENV A=1\nUSER node\nHEALTHCHECK --interval=1s CMD node h.js\nCMD npm start\n\000npm run serve\000node dist/s.js --x\n' \
			>"$2/seed-npm-start"
		printf 'FROM node:20\nWORKDIR /w\nENTRYPOINT ["./e"]\nCMD ["a"]\nRUN echo \\\000\000' \
			>"$2/seed-continuation"
		;;
	fuzz_cgroupfs)
		printf '%s\n' \
			'31 22 0:26 / /sys/fs/cgroup ro,nosuid shared:9 - tmpfs tmpfs ro' \
			'36 31 0:31 / /sys/fs/cgroup/memory rw,nosuid shared:16 - cgroup cgroup rw' \
			'41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw' \
			>"$2/seed-hybrid"
		printf '%s\n' \
			'34 25 0:29 /a\040b /mnt/my\040cg rw shared:5 master:1 - cgroup2 cgroup2 rw' \
			>"$2/seed-escaped"
		printf '%s\n' '11:memory:/user.slice' '0::/user.slice/session-2.scope' \
			>"$2/seed-proc-cgroup"
		;;
	fuzz_policy)
		printf '%s\n' 'cidr 169.254.169.254/32 port 80' 'cidr 0.0.0.0/0 port 443 proto tcp' \
			'cidr ::/0 proto udp' 'cidr 2001:db8::/32 port 53-54' \
			'cidr ::ffff:192.0.2.0/120 # mapped' 'host Example.test. port 443' \
			'cidr fe80::/16 port 22' >"$2/seed-rules"
		printf '%s\n' 'cidr 192.0.2.1/24' 'cidr 10.0.0.0/8 port 443-80' 'CIDR ::1' \
			>"$2/seed-errors"
		;;
	fuzz_dns)
		# a response: id 0x1234, QR RD RA, one question allowed.test A, one A answer
		printf '\022\064\201\200\000\001\000\001\000\000\000\000\007allowed\004test\000\000\001\000\001\300\014\000\001\000\001\000\000\000\002\000\004\300\000\002\001' \
			>"$2/seed-a"
		printf 'nameserver 192.0.2.53\noptions timeout:1\n' >"$2/seed-resolv"
		;;
	fuzz_tap)
		# frames (tests/common/frames.h): allowed SYN, VLAN UDP first fragment,
		# QinQ IPv6 with extension headers, DNS to the resolver, ARP
		printf '\002\000\000\000\000\001\002\000\000\000\000\002\010\000\105\000\000\050\000\000\000\000\100\006\023\227\313\000\161\376\306\063\144\007\234\100\000\120\000\000\000\001\000\000\000\000\120\002\000\000\254\027\000\000' \
			>"$2/seed-v4-syn"
		printf '\002\000\000\000\000\001\002\000\000\000\000\002\201\000\000\007\010\000\105\000\000\044\000\000\040\000\100\021\363\215\313\000\161\376\306\063\144\011\234\100\047\017\000\020\103\255\141\142\143\144\145\146\147\150' \
			>"$2/seed-v4-vlan-udp-frag"
		printf '\002\000\000\000\000\001\002\000\000\000\000\002\210\250\000\007\201\000\000\010\206\335\140\000\000\000\000\044\000\100\040\001\015\270\000\011\000\000\000\000\000\000\000\000\000\002\040\001\015\270\000\002\000\000\000\000\000\000\000\000\000\007\074\000\001\004\000\000\000\000\006\000\001\004\000\000\000\000\234\100\001\273\000\000\000\001\000\000\000\000\120\002\000\000\266\140\000\000' \
			>"$2/seed-v6-qinq-ext-syn"
		printf '\002\000\000\000\000\001\002\000\000\000\000\002\010\000\105\000\000\050\000\000\000\000\100\021\173\221\313\000\161\376\300\000\002\065\234\100\000\065\000\024\120\347\022\064\001\000\000\001\000\000\000\000\000\000' \
			>"$2/seed-v4-dns"
		printf '\377\377\377\377\377\377\002\000\000\000\000\002\010\006\000\001\010\000\006\004\000\001\002\000\000\000\000\002\313\000\161\376\000\000\000\000\000\000\313\000\161\375' \
			>"$2/seed-arp"
		;;
	fuzz_dockerfile)
		# byte 0 picks build args (1: GO_VERSION, 2: TARGETARCH, 4: BASE); then the file
		{ printf '\001'; printf '%s\n' '# syntax=docker/dockerfile:1' 'ARG GO_VERSION=1.22 BASE' \
			'FROM --platform=$BUILDPLATFORM golang:${GO_VERSION}-alpine AS Build' \
			'RUN --mount=type=cache,target=/root/.cache \' '  # inside' '  go build ./...' \
			'FROM ${BASE:-scratch}' 'COPY --from=build /app /app' \
			'HEALTHCHECK --interval=5s CMD ["wget", "-q", "http://x/"]' \
			'CMD ["/app"]'; } >"$2/seed-multistage"
		{ printf '\000'; printf '%s\r\n' '# escape=`' 'FROM mcr.microsoft.com/windows/servercore' \
			'RUN dir c:\ `' '  && echo done' 'SHELL ["powershell", "-c"]'; } >"$2/seed-escape"
		{ printf '\006'; printf '%s\n' 'FROM alpine:$TARGETARCH' 'RUN <<EOF bash && cat <<-"X"' 'FROM x' \
			'EOF' '	X' 'COPY <<A /a <<B /b' 'a' 'A' 'b' 'B' 'ONBUILD RUN <<E' 'E' \
			'CMD [1] x'; } >"$2/seed-heredoc"
		;;
	fuzz_state)
		printf '%s' '{"name":"fz","backend":"qemu","cgroup":"/sys/fs/cgroup/unified/sbtrace/fz","cgroup_id":42,"pid":100,"shim_pid":99,"netns":"/proc/100/ns/net","start_ns":1796000000000000000,"visibility":{"exec":"none","network":"tap"},"tap":"sbt1a2b3c4d","tap_netns":"sbt-host","tap_ifindex":7,"guest_addrs":["203.0.113.254","2001:db8:9::2"]}' \
			>"$2/seed-qemu"
		printf '%s' '{"name":"fz","backend":"ns","cgroup":"/sys/fs/cgroup/unified/sbtrace/fz","cgroup_id":42,"pid":100,"shim_pid":99,"netns":"/proc/100/ns/net","start_ns":1,"visibility":{"exec":"host","network":"cgroup"}}' \
			>"$2/seed-ns"
		;;
	esac
}

passed=0
failed=0
for bin in "$@"; do
	name=$(basename "$bin")
	corpus=$root/build/fuzz/corpus/$name
	artifacts=$root/build/fuzz/artifacts/$name/
	if [ ! -x "$bin" ]; then
		echo "run-fuzz: FAILED: $name: $bin is not an executable" >&2
		failed=$((failed + 1))
		continue
	fi
	mkdir -p "$corpus" "$artifacts" || exit 1
	seed "$name" "$corpus"
	echo "run-fuzz: $name for ${secs}s, corpus $corpus"
	if "$bin" -max_total_time="$secs" -rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix="$artifacts" "$corpus"; then
		passed=$((passed + 1))
	else
		echo "run-fuzz: FAILED: $name (exit $?; artifacts in $artifacts)" >&2
		failed=$((failed + 1))
	fi
done

echo "fuzz: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
