#!/bin/sh
# DNS proxy benchmark (make bench; root): lookup latency from a sandbox with
# and without sbtrace's per-sandbox DNS proxy, and connect4's cost with the
# learned entries (tests/integration/bench_dns.sh, in the test world).
cd "$(dirname "$0")/.." || exit 1
exec sh tests/integration/bench_dns.sh
