#!/bin/sh
# The red team's classes of a wrong confident answer (issue 24), each on the
# trace or the probe:
#  - a shell started through the dynamic loader: the kernel sees one exec,
#    of the loader, which runs the shell in its own process. The loader is an
#    interpreter: the shell it runs is a shell, identified_by "loader", on the
#    trace's events and in the probe's answers, a Makefile recipe's and a
#    Dockerfile final stage's RUN and CMD alike: unsafe, never safe;
#  - a stage the target does not build on, with the final stage's RUN text:
#    the final stage's shell stays the final image's;
#  - a shell changed by a byte (a copy of dash with bytes appended): still
#    dash, unsafe;
#  - an ELF the build wrote that is no known shell, run with -c and a string:
#    never a confident safe (executable_unidentified, with its evidence);
#  - a shell tried where there is none (a PATH without one): counted as the
#    shell it would have run, failed ENOENT, unsafe.
# (The trace's side of these: t_exec_identity.sh.)
# (A boot killed at its time limit: t_probe_boot.sh; a microVM workload that
# prints the init's exit line: t_qemu_guest_attack.sh.)
. "$(dirname "$0")/lib.sh"

FIX="$TOP/tests/fixtures"
LOADER=/lib64/ld-linux-x86-64.so.2
[ -x "$LOADER" ] || skip "$LOADER missing (not x86-64 glibc)"

# the trace: one exec of the loader, a shell
CG=$(mk_cgroup loader)
OUT="$WORK/trace.jsonl"
start_trace "$OUT" --cgroup "$(sb_name "$CG")" || exit 1
sh -c "echo \$\$ > '$CG/cgroup.procs' && exec $LOADER /bin/sh -c 'exit 0'"
stop_trace INT
check "the trace: the loader's exec is a sh -c, identified by the loader" "sh command exit 0 loader" \
	"$(jq -r 'select(.event == "ProcessExec" and .shell != null) | "\(.shell.name) \(.shell.kind) \(.shell.command) \(.shell.identified_by)"' "$OUT" | head -n 1)"
check "the trace: its ShellInvocationObserved counts it" 1 \
	"$(jq -r 'select(.event == "ShellInvocationObserved") | .count' "$OUT")"

probe() {
	_n=$1
	shift
	"$SBTRACE" probe --no-cache "$@" > "$WORK/$_n.json" 2> "$WORK/$_n.err"
	log "$_n: rc $?, $(jq -c '{verdict, confidence, reason, count: .shell_invocation.count}' "$WORK/$_n.json" 2> /dev/null)"
	validate_report "$WORK/$_n.json"
}
field() { jq -r "$2" "$WORK/$1.json"; }

rm -rf "$WORK/make-loader" && cp -a "$FIX/make-loader" "$WORK/make-loader"
probe make "$WORK/make-loader"
# (no Dockerfile, no boot: found and placed, a builder stage's; the verdict waits for a boot)
check "a Makefile recipe through the loader: found, at the recipe's line" "inconclusive boot_not_run 1 4 loader" \
	"$(field make '"\(.verdict) \(.reason) \(.shell_invocation.count) \(.shell_invocation.locations[0].source.line) \(.shell_invocation.locations[0].identified_by)"')"

for f in make-copied-shell make-unidentified make-failed-shell; do
	rm -rf "$WORK/$f" && cp -a "$FIX/$f" "$WORK/$f"
done
probe copied "$WORK/make-copied-shell"
check "a copy of dash with bytes appended: found, dash by its content" "inconclusive boot_not_run dash content" \
	"$(field copied '"\(.verdict) \(.reason) \(.shell_invocation.locations[0].shell) \(.shell_invocation.locations[0].identified_by)"')"
probe unident "$WORK/make-unidentified"
check "an ELF the build wrote, run with -c: not safe, executable_unidentified" "inconclusive low executable_unidentified" \
	"$(field unident '"\(.verdict) \(.confidence) \(.reason)"')"
check "... its evidence: the file and its -c string" "tool true 1" \
	"$(field unident '.shell_invocation.unidentified | "\(.executables[0].filename | split("/") | last) \(.executables[0].command_string) \(.count)"')"
check_true "... the warning names it" sh -c "jq -r '.warnings[].message' '$WORK/unident.json' | grep -q 'tool, with -c'"
probe failedsh "$WORK/make-failed-shell"
check "a shell tried where there is none: found, one failed shell" "inconclusive boot_not_run 1 1" \
	"$(field failedsh '"\(.verdict) \(.reason) \(.shell_invocation.count) \(.shell_invocation.failed)"')"
check "... at the recipe's line, failed ENOENT" "sh ENOENT 6" \
	"$(field failedsh '.shell_invocation.locations[0] | "\(.shell) \(.failed) \(.source.line)"')"

podman_up images
probe df --backend podman --boot-seconds 3 "$FIX/df-loader"
check "a final stage's RUN and CMD through the loader: unsafe, high" "unsafe high" \
	"$(field df '"\(.verdict) \(.confidence)"')"
check "... the RUN at line 4 (final image), the CMD at boot, line 5" "boot:CMD:5:true,build:RUN:4:true" \
	"$(field df '[.shell_invocation.locations[] | "\(.phase):\(.source.instruction):\(.source.line):\(.affects_final_image)"] | sort | join(",")')"

probe skipped --backend podman --boot-seconds 2 "$FIX/df-skipped-stage"
check "the final stage's RUN beside another stage's same text: unsafe, high" "unsafe high" \
	"$(field skipped '"\(.verdict) \(.confidence)"')"
check "... its shell is the final image's, at line 7" "build:RUN:7:true" \
	"$(field skipped '[.shell_invocation.locations[] | select(.affects_final_image)][0] | "\(.phase):\(.source.instruction):\(.source.line):\(.affects_final_image)"')"
finish
