#!/bin/sh
# sbtrace probe --backend qemu with the guest agent: the build runs in a
# microVM (Debian's kernel under TCG here), its execs come from the guest
# kernel's BPF program over the virtio-serial port, and the probe answers
# with confidence — the same answers, and the same shell counts, as the ns
# backend on the host. A guest agent killed during the build (a test hook of
# the init, not the workload) leaves the stream without its BYE: the answer
# is then never `safe`. A repo without a start command gets no boot, and
# so no confident `safe` (it said safe/high: issue 31); with --boot-cmd the
# boot runs in the microVM after the build and answers.
. "$(dirname "$0")/lib.sh"

FIX="$TOP/tests/fixtures"
require_qemu_guest
command -v gcc > /dev/null || skip "gcc missing (make deps: build-essential)"

# probe NAME [--backend qemu ...] DIR: the report in $WORK/NAME.json (validated), stderr in .err
probe() {
	_n=$1
	shift
	"$SBTRACE" probe --no-cache "$@" > "$WORK/$_n.json" 2> "$WORK/$_n.err"
	PROBE_RC=$?
	log "$_n: rc $PROBE_RC, $(jq -c '{verdict, confidence, reason, count: .shell_invocation.count, vis: .visibility.exec}' "$WORK/$_n.json" 2> /dev/null)"
	[ -s "$WORK/$_n.json" ] || log "$_n: stderr: $(tail -c 1500 "$WORK/$_n.err")"
	validate_report "$WORK/$_n.json"
}
vm() { _n=$1 && shift && probe "$_n" --backend qemu --guest "$GUEST" "$@"; }
field() { jq -r "$2" "$WORK/$1.json"; }
copy() { rm -rf "${WORK:?}/$2" && cp -a "$FIX/$1" "$WORK/$2"; }

# ---- a make recipe with shell syntax: unsafe, high, its line and chain ------
copy make-shell shell
vm shell "$WORK/shell"
# (no Dockerfile: the build's shells are a builder stage's; the microVM runs no boot)
check "make-shell in the microVM: the shell seen from the guest kernel, no boot: inconclusive" \
	"inconclusive boot_not_run guest_kernel false" \
	"$(field shell '"\(.verdict) \(.reason) \(.visibility.exec) \(.shell_invocation.locations[0].affects_final_image)"')"
check "... one shell, at the Makefile's recipe line 2" "1 sh Makefile 2 recipe" \
	"$(field shell '.shell_invocation | "\(.count) \(.locations[0].shell) \(.locations[0].source.file) \(.locations[0].source.line) \(.locations[0].source.instruction)"')"
check "... its command and its chain (make ran it)" "cp src.txt out.txt && cp out.txt out2.txt|make" \
	"$(field shell '.shell_invocation.locations[0] | "\(.command)|\(.chain | split(">") | last)"')"
check "... the accelerator is reported" tcg "$(field shell .visibility.accel)"

# ---- shell-free, but no boot ran: never a confident safe (it said safe/high) --
copy slow-make noshell
vm noshell --fail-on inconclusive "$WORK/noshell"
check "a shell-free make build in the microVM, no boot: inconclusive, low, boot_not_run" \
	"inconclusive low boot_not_run 0" \
	"$(field noshell '"\(.verdict) \(.confidence) \(.reason) \(.shell_invocation.count)"')"
check "... --fail-on inconclusive: exit 5" 5 "$PROBE_RC"
check_true "... the message says no boot ran (no start command: --boot-cmd)" \
	sh -c "jq -r '.warnings[] | select(.id | endswith(\"boot_not_run\")) | .message' '$WORK/noshell.json' | grep -q 'give --boot-cmd'"

# ---- the boot in the microVM, after the build (the guest's script) ------------
copy make-noshell bootvm
vm bootvm --boot-cmd /bin/true "$WORK/bootvm"
check "a boot without a shell, run in the microVM: safe, high, it ran and exited" "safe high true exited 0" \
	"$(field bootvm '"\(.verdict) \(.confidence) \(.boot.ran) \(.boot.ended) \(.boot.exit_code)"')"
vm bootsh --boot-cmd "/bin/sh -c /bin/true" "$WORK/bootvm"
check "a boot that runs sh -c in the microVM: unsafe, high, the shell at boot" "unsafe high 1 boot" \
	"$(field bootsh '"\(.verdict) \(.confidence) \(.shell_invocation.by_phase.boot) \(.shell_invocation.locations[0].phase)"')"
vm bootlong --boot-seconds 2 --boot-cmd "/bin/sleep 60" "$WORK/bootvm"
check "a boot that runs on: stopped at --boot-seconds by SIGTERM, safe" "safe stopped time_limit" \
	"$(field bootlong '"\(.verdict) \(.boot.ended) \(.boot.ended_by)"')"
vm bootmissing --boot-cmd /no/such/server "$WORK/bootvm"
check "a boot whose command is missing in the microVM: boot_failed (127)" "inconclusive boot_failed 127" \
	"$(field bootmissing '"\(.verdict) \(.reason) \(.boot.exit_code)"')"

# ---- a C build with the host's gcc: the same count as the ns backend -------
copy c-make c-ns
probe c-ns "$WORK/c-ns"
copy c-make c-vm
vm c-vm --trace-out "$WORK/c-vm.jsonl" "$WORK/c-vm"
check "c-make on the ns backend: 2 shells, no boot: inconclusive" "inconclusive low 2" \
	"$(field c-ns '"\(.verdict) \(.confidence) \(.shell_invocation.count)"')"
check "c-make in the microVM (gcc from the host's /usr): the same answer and count" \
	"$(field c-ns '"\(.verdict) \(.confidence) \(.shell_invocation.count) \([.shell_invocation.locations[].source.line] | sort)"')" \
	"$(field c-vm '"\(.verdict) \(.confidence) \(.shell_invocation.count) \([.shell_invocation.locations[].source.line] | sort)"')"
check_true "... gcc's own programs ran in the guest kernel (cc1 and ld among its execs)" \
	jq -e -n '[inputs | select(.event == "ProcessExec") | .filename | split("/") | last] |
		any(. == "cc1") and any(. == "ld")' "$WORK/c-vm.jsonl" > /dev/null
check "... the trace's sandbox: visibility guest_kernel, exec complete" "guest_kernel true" \
	"$(jq -r -n '[inputs | select(.event == "TraceStarted")][0].sandboxes[0].visibility.exec' "$WORK/c-vm.jsonl") $(jq -r -n '[inputs | select(.event == "TraceStopped")][0].sandboxes[0].exec_complete' "$WORK/c-vm.jsonl")"

# ---- the microVM's writable space: sized from the repo, its end named --------
# (a tmpfs in the guest's RAM, at most half of it: 1 GiB + 3x the repo's size)
mkdir "$WORK/fill"
vm fill --no-boot --cmd "dd if=/dev/zero of=fill bs=1M count=1024" "$WORK/fill"
check "a build that fills the microVM's writable space: resource_limit, not a boot failure" \
	"inconclusive resource_limit" "$(field fill '"\(.verdict) \(.reason)"')"
check_true "... the message says the space ran out and how big it was" sh -c \
	"jq -r '.warnings[] | select(.id | endswith(\"resource_limit\")) | .message' '$WORK/fill.json' |
		grep -q 'writable space ran out (its console said No space left on device).* tmpfs of at most half its 1024 MiB of RAM (sized from the repo)'"
mkdir "$WORK/big"
head -c 600M /dev/zero > "$WORK/big/blob"
vm big --no-boot --cmd "cp blob blob2" "$WORK/big"
check "a 600 MB repo copied in the microVM (more than half of a fixed 1 GiB): the build worked" \
	"inconclusive boot_not_run" "$(field big '"\(.verdict) \(.reason)"')"
rm -rf "${WORK:?}/big"

# ---- learn mode is the cgroup hooks': the microVM's tap refuses it ----------
"$SBTRACE" probe --no-cache --backend qemu --guest "$GUEST" --egress learn --cmd true "$WORK/fill" \
	> "$WORK/learn.json" 2> "$WORK/learn.err"
check "--egress learn --backend qemu: exit 2, no report" "2 0" "$? $(wc -c < "$WORK/learn.json")"
check_true "... saying learn mode is for cgroup sandboxes" grep -q "learn mode is for cgroup sandboxes" "$WORK/learn.err"

# ---- the guest agent killed mid-build: never safe --------------------------
copy slow-make killed
SBTRACE_TEST_GUEST_AGENT_KILL_MS=1500 vm killed "$WORK/killed"
check "the agent killed during the build: inconclusive, low, events_lost" "inconclusive low events_lost" \
	"$(field killed '"\(.verdict) \(.confidence) \(.reason)"')"
check_true "... the message names the guest stream's reason" \
	sh -c "jq -r '.warnings[] | select(.id | endswith(\"events_lost\")) | .message' '$WORK/killed.json' |
		grep -Eq 'guest_(agent_gone|stream_unfinished)'"
check_true "... and stderr says the stream is not complete" \
	grep -q "the guest's exec stream is not complete" "$WORK/killed.err"
finish
