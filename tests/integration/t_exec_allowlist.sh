#!/bin/sh
# The founding ADR-0015: everything sbtrace or the shim runs goes through the one exec
# function (userspace/lib/extbin.c) and its closed allowlist; strace is never on it.
. "$(dirname "$0")/lib.sh"

cd "$TOP" || exit 1
hits=$(grep -rnE '(^|[^a-z_])(system|popen|execv|execvp|execvpe|execve|execl|execlp|execle|fexecve|posix_spawn|posix_spawnp)[[:space:]]*\(' \
	--include='*.c' --include='*.h' loader userspace | grep -v '^userspace/lib/extbin\.[ch]:')
check "no system/popen/exec outside userspace/lib/extbin.c" "" "$hits"
check "strace is not on the list" 0 "$(grep -c '"strace"' userspace/lib/extbin.c)"
# The scan itself finds what it looks for (it would fail without the feature).
printf 'static void x(void) { system("x"); }\n' > "$WORK/probe.c"
check "the scan catches a system() call" 1 \
	"$(grep -cE '(^|[^a-z_])(system|popen)[[:space:]]*\(' "$WORK/probe.c")"
finish
