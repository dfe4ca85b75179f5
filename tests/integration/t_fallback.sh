#!/bin/sh
# The exec hook's runtime choice: tp_btf here; with tp_btf taken away the
# loader falls back to raw_tp (still sees interp), then to the tracepoint
# (reports interp as unavailable); the choice and the failed tries are reported.
. "$(dirname "$0")/lib.sh"

A=$(mk_cgroup fb)
SA=$(sb_name "$A")
cat > "$WORK/s.sh" <<'S'
#!/bin/sh
exec /bin/true
S
chmod +x "$WORK/s.sh"
DEEP="$WORK/a/b/c/node_modules/@s/p"
mkdir -p "$DEEP"

check "features: preferred mode here" tp_btf "$("$SBTRACE" features | jq -r .hooks.exec.mode)"

# run_mode LABEL EXPECTED_MODE EXPECTED_INTERP [env/args...]
run_mode() {
	label=$1 want=$2 interp=$3; shift 3
	out="$WORK/$label.jsonl"
	start_trace "$out" --cgroup "$A" "$@" || { fail "$label: start"; return; }
	(cd / && "$SPAWN" "$A" -- "$WORK/s.sh") || fail "$label: spawn"
	(cd "$DEEP" && "$SPAWN" "$A" -- /bin/echo 'x y' > /dev/null) || fail "$label: spawn echo"
	stop_trace INT
	check "$label: exit" 0 "$TRACE_RC"
	check "$label: mode" "$want" "$(head -n 1 "$out" | jq -r .hooks.exec.mode)"
	check "$label: 3 execs" 3 "$(nevents "$out" ProcessExec "$SA")"
	check "$label: script interp" "$interp" \
		"$(jq -r --arg f "$WORK/s.sh" 'select(.event == "ProcessExec" and .filename == $f) | .interp' "$out")"
	check "$label: argv" '["/bin/echo","x y"]' \
		"$(jq -c 'select(.event == "ProcessExec" and .filename == "/bin/echo") | .argv' "$out")"
	# the cwd's tail, every twin alike: its last 6 names, or / (no name, the whole path)
	check "$label: a deep cwd's tail" '{"tail":"a/b/c/node_modules/@s/p","complete":false}' \
		"$(jq -c 'select(.event == "ProcessExec" and .filename == "/bin/echo") | .cwd' "$out")"
	check "$label: / as the cwd" '{"tail":"","complete":true}' \
		"$(jq -c --arg f "$WORK/s.sh" 'select(.event == "ProcessExec" and .filename == $f) | .cwd' "$out")"
	check "$label: script is a shell" 1 \
		"$(jq -r 'select(.event == "ShellInvocationObserved") | .count' "$out")"
}

run_mode auto tp_btf /bin/sh
check "auto: no fallback" false "$(head -n 1 "$WORK/auto.jsonl" | jq -r .hooks.exec.fallback)"
check "auto: membership by cgroup address" cgroup_ptr \
	"$(head -n 1 "$WORK/auto.jsonl" | jq -r .hooks.membership.mode)"

# Membership by the ancestor-id helper (kernels without cgroup iterators).
SBTRACE_DISABLE_HOOKS=cgroup_ptr run_mode no_cgroup_ptr tp_btf /bin/sh
check "membership fallback reported" "ancestor_id true" \
	"$(head -n 1 "$WORK/no_cgroup_ptr.jsonl" | jq -r '.hooks.membership | "\(.mode) \(.fallback)"')"

SBTRACE_DISABLE_HOOKS=tp_btf run_mode no_tp_btf raw_tp /bin/sh
check "raw_tp fallback reported" "true tp_btf:disabled" \
	"$(head -n 1 "$WORK/no_tp_btf.jsonl" | jq -r '.hooks.exec | "\(.fallback) \(.tried[0].mode):\(.tried[0].stage)"')"
check_true "fallback announced on stderr" grep -q 'fell back to raw_tp' "$WORK/no_tp_btf.jsonl.err"
check "raw_tp: membership by id (no BTF task pointer)" ancestor_id \
	"$(head -n 1 "$WORK/no_tp_btf.jsonl" | jq -r .hooks.membership.mode)"

# Without bprm the tracepoint cannot see interp; the script still counts as a
# shell only through its argv[0] (/bin/sh), which the kernel puts there.
SBTRACE_DISABLE_HOOKS=tp_btf,raw_tp run_mode tracepoint_only tracepoint null

run_mode forced_raw_tp raw_tp /bin/sh --exec-hook raw_tp
check "forced mode tries only itself" 1 \
	"$(head -n 1 "$WORK/forced_raw_tp.jsonl" | jq -r '.hooks.exec.tried | length')"

# At a mount's root the tail is the whole path inside it ("complete"), unless its last
# name took all of the tail's 256 bytes and may have been cut. A tmpfs in a mount
# namespace of its own, gone with it.
LONG=$(printf '%0255d' 0)
start_trace "$WORK/mnt.jsonl" --cgroup "$A" || fail "mnt: start"
for d in short "$LONG"; do
	unshare -m sh -c 'mount -t tmpfs none "$1" && mkdir "$1/$2" && cd "$1/$2" &&
		exec "$3" "$4" -- /bin/true' sh "$WORK" "$d" "$SPAWN" "$A" || fail "mnt: spawn in $d"
done
stop_trace INT
check "mnt: a cwd at a mount's root: the whole path" '{"tail":"short","complete":true}' \
	"$(jq -c 'select(.event == "ProcessExec" and .cwd.tail == "short") | .cwd' "$WORK/mnt.jsonl")"
check "mnt: a name that fills the tail: maybe cut, not complete" false \
	"$(jq -r --arg l "$LONG" 'select(.event == "ProcessExec" and .cwd.tail == $l) | .cwd.complete' "$WORK/mnt.jsonl")"

# The cut-down kernel BTF (scripts/min-btf.sh, loader/minbtf.c) is a speed-up only:
# none, one for another kernel, or a damaged one for this kernel all trace the same.
MINBTF="$TOP/build/bpf/min_core.btf"
check_true "make made the cut-down kernel BTF for this kernel" [ -s "$MINBTF" ] && [ -s "$MINBTF.id" ]
SBTRACE_MIN_BTF= run_mode no_min_btf tp_btf /bin/sh
cp "$MINBTF" "$WORK/other.btf" && printf 'another kernel|1' > "$WORK/other.btf.id"
SBTRACE_MIN_BTF="$WORK/other.btf" run_mode min_btf_other_kernel tp_btf /bin/sh
head -c 200 /dev/urandom > "$WORK/bad.btf" && cp "$MINBTF.id" "$WORK/bad.btf.id"
SBTRACE_MIN_BTF="$WORK/bad.btf" run_mode min_btf_damaged tp_btf /bin/sh

# Every mode taken away: exit 3, one line naming the problem, nothing attached.
SBTRACE_DISABLE_HOOKS=tp_btf,raw_tp,tracepoint "$SBTRACE" trace --cgroup "$A" --duration 1 \
	> "$WORK/none.out" 2> "$WORK/none.err"
check "no usable mode: exit 3" 3 $?
check_true "no usable mode: message" grep -q 'cannot attach the exec hook' "$WORK/none.err"
check "nothing left loaded" 0 "$(nr_our_progs)"
finish
