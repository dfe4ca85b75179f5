#!/bin/sh
# The probe on a Node service's dependencies (issue 22): builds get a network
# through the allowlist, Dockerfile RUN steps too, and nothing else.
#
# The world (netlib.sh): the probe itself runs in the test's sandbox netns
# (nsenter --net: /sys stays, so the cgroup v2 mount does too), so the build's
# relay (slirp4netns) and the DNS proxy's upstream reach only the test hosts;
# the npm registry there is npmreg.sh's.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/netlib.sh"

. "$(dirname "$0")/npmreg.sh"
npmreg_world || exit 1

npm_services
INTEGRITY=$HOOK_INTEGRITY
app "$WORK/npmhook" hook ',"hasInstallScript":true'
INTEGRITY=$DEP_INTEGRITY
app "$WORK/npmrepo" dep ""

# Leftovers of a probe whose pid was $1: none of its container, image, cgroup, netns, relay.
leftovers() {
	_l=""
	[ -z "$(podman ps -a --format '{{.Names}}' | grep "^probe-.*-$1")" ] || _l="$_l container"
	[ -z "$(ls -d "$CG2"/sbtrace/probe-*-"$1" 2> /dev/null)" ] || _l="$_l cgroup"
	[ -z "$(ip netns list 2> /dev/null | grep -e "sbtrace-probe-net-$1" -e "sbtrace-probe-$1")" ] || _l="$_l netns"
	[ -z "$(pgrep -f "slirp4netns.*sbtrace-probe-net-$1")" ] || _l="$_l relay"
	[ "$(podman images -q | wc -l)" = "$IMAGES" ] || _l="$_l image"
	printf '%s\n' "${_l:-none}"
}
IMAGES=$(podman images -q | wc -l)
NSENTER=$(command -v nsenter) # absolute: sbt-spawn execs without a PATH search

# probe NAME ARGS...: the probe in the test's sandbox netns; report $WORK/NAME.json.
# Started with fds 3-5 closed, as a CI runner starts it: the relay's pipe ends
# then are fds 3 and 4 themselves (a `flock FILE cmd` around the run keeps
# fd 3 busy and hid that the relay lost its --exit-fd at exec).
probe() {
	_n=$1
	shift
	${PROBE_CG:+"$SPAWN" "$PROBE_CG" --exec --} "$NSENTER" --net="/run/netns/$NET_SBX" env SBTRACE_RESOLV_CONF="$WORK/resolv.conf" \
		"$SBTRACE" probe --cache-dir "$WORK/cache" --boot-seconds 2 --image-map "$TOP/scripts/image-map" "$@" \
		> "$WORK/$_n.json" 2> "$WORK/$_n.err" 3>&- 4>&- 5>&- &
	PROBE_PID=$!
	relay_watch "$PROBE_PID" "$_n" &
	wait "$PROBE_PID"
	PROBE_RC=$?
	log "$_n: rc $PROBE_RC, $(jq -c '{verdict, confidence, reason, count: .shell_invocation.count, egress: (.egress | {allowed, denied, build_network})}' "$WORK/$_n.json" 2> /dev/null)"
	case "$(jq -r .reason "$WORK/$_n.json" 2> /dev/null)" in
	build_failed | sandbox_boot_failed | boot_failed | boot_killed)
		npm_key "$_n" "$WORK/$_n.err"
		diag "$_n" "$WORK/$_n.err"
		diag "$_n: the registry's log" "$WORK/httpd.log"
		# what our own cgroup carries (a CI runner's egress filter would show here)
		bpftool cgroup show "$CG2$(sed -n 's/^0:://p' /proc/self/cgroup)" > "$WORK/own-cg.txt" 2>&1
		diag "$_n: the programs on our own cgroup" "$WORK/own-cg.txt"
		;;
	esac
	validate_report "$WORK/$_n.json"
	check "$_n: nothing left behind" none "$(leftovers "$PROBE_PID")"
}
field() { jq -r "$2" "$WORK/$1.json"; }

# 1. RUN ["npm","ci"] with the registry allowed: built, booted, safe.
probe svc --allow-host "registry.test port 8080" "$WORK/svc"
check "svc: exit 0" 0 "$PROBE_RC"
check "svc: safe, high" "safe high null" "$(field svc '"\(.verdict) \(.confidence) \(.reason)"')"
check "svc: the app booted (its own output)" 1 "$(grep -c '^app up: from dep$' "$WORK/svc.err")"
check "svc: the registry connect is an allowed verdict" "$REG_ADDR 8080 tcp" \
	"$(field svc '.egress.allowed_destinations[] | select(.dport == 8080) | "\(.daddr) \(.dport) \(.proto)"')"
check "svc: the tarball came from the test registry" 1 "$(grep -c '^GET /dep/-/dep-1.0.0.tgz 200$' "$WORK/httpd.log")"
check_true "svc: the build network is the relay" sh -c "jq -r .egress.build_network '$WORK/svc.json' | grep -q '^slirp4netns'"

# 2. The same without the host rule: no network, not safe, registry.test named
# (and the cached safe answer of 1 is not this one's: the policy is in the key).
probe svc-no "$WORK/svc"
check "svc without the rule: not answered from the cache" false "$(field svc-no .cache.hit)"
check "svc without the rule: not safe" "inconclusive build_failed" "$(field svc-no '"\(.verdict) \(.reason)"')"
check "svc without the rule: registry.test refused" "registry.test" \
	"$(field svc-no '[.egress.refused_names[].name] | map(select(. == "registry.test")) | .[0]')"
check_true "svc without the rule: the warning says what to allow" sh -c \
	"jq -r '.warnings[] | select(.id | endswith(\"egress_refused\")) | .message' '$WORK/svc-no.json' | grep -q \"allow-host 'registry.test'\""
check "svc without the rule: no build network" "none: the allowlist is empty" "$(field svc-no .egress.build_network)"

# 3. A dependency whose postinstall runs through sh -c and connects to a non-allowed IP.
probe hook --allow-host "registry.test port 8080" "$WORK/svc-hook"
check "hook: unsafe, high" "unsafe high" "$(field hook '"\(.verdict) \(.confidence)"')"
check "hook: the shell is at the RUN line and affects the final image" "RUN 4 true" \
	"$(field hook '[.shell_invocation.locations[] | select(.phase == "build")][0] | "\(.source.instruction) \(.source.line) \(.affects_final_image)"')"
check "hook: the location names the package that ran it" "hook@1.0.0" \
	"$(field hook '[.shell_invocation.locations[] | select(.phase == "build")][0].package')"
check "hook: its connect to $NET_T2_V4 was denied" "$NET_T2_V4 80" \
	"$(field hook '.egress.denied_destinations[] | select(.daddr == "'"$NET_T2_V4"'") | "\(.daddr) \(.dport)"' | head -n 1)"
check "hook: the caller saw EPERM" 1 "$(grep -c 'hook connect EPERM' "$WORK/hook.err")"
check "hook: nothing reached the test host" 0 "$(grep -c "$NET_T2_V4:80" "$NET_SERVER_LOG")"

# 4. An npm repo without Dockerfile and without node_modules: npm ci, then the build.
probe npmrepo --allow-host "registry.test port 8080" --no-boot "$WORK/npmrepo"
check "npm repo: install step" '["npm","ci"]' "$(jq -c .command.install "$WORK/npmrepo.json")"
check_true "npm repo: command.why says npm ci" sh -c "jq -r .command.why '$WORK/npmrepo.json' | grep -q 'after npm ci (package-lock.json, no node_modules)'"
check "npm repo: the build ran (npm run build's sh -c, a builder stage's); --no-boot: inconclusive" \
	"inconclusive boot_not_run 1" \
	"$(field npmrepo '"\(.verdict) \(.reason) \([.shell_invocation.locations[] | select(.source.script == "build")] | length)"')"
check "npm repo: the repo is untouched" "" "$(ls "$WORK/npmrepo" | grep -e node_modules -e dist)"

# 4b. ... whose dependency's postinstall shells out: the install step's shell.
probe npmhook --allow-host "registry.test port 8080" --no-boot "$WORK/npmhook"
check "npm repo, hook: the postinstall's sh -c is the install step's" "install package-lock.json true" \
	"$(field npmhook '[.shell_invocation.locations[] | select(.command | startswith("node -e"))][0].source | "\(.instruction) \(.file) \(.matched)"')"
check "npm repo, hook: the package" "hook@1.0.0" \
	"$(field npmhook '[.shell_invocation.locations[] | select(.command | startswith("node -e"))][0].package')"
check "npm repo, hook: its connect denied" "$NET_T2_V4" "$(field npmhook '.egress.denied_destinations[0].daddr')"

# 4c. --egress learn (issue 29): nothing refused but the floor, the proposal in
# the report (registry.test by name, the postinstall's hard-coded address apart),
# and the proposal enforced: 0 denies; without its flagged line the address EPERM.
probe npmhook-learn --egress learn --learn-out "$WORK/npmhook.allow" --learn-format sbtrace,flags \
	--no-boot "$WORK/npmhook"
check "learn: the install ran, nothing denied, mode learn" "0 learn 0" \
	"$PROBE_RC $(field npmhook-learn '"\(.egress.mode) \(.egress.denied)"')"
check "learn: the proposal, registry.test by name, the hard-coded address flagged" \
	"host registry.test port 8080 proto tcp true|cidr $NET_T2_V4/32 port 80 proto tcp false" \
	"$(field npmhook-learn '[.egress.proposal.rules[] | "\(.rule) \(.resolved)"] | join("|")')"
check "learn: complete, one never resolved, the flags text" "true 1 true" \
	"$(field npmhook-learn '"\(.egress.proposal.complete) \(.egress.proposal.never_resolved) \(.egress.proposal.formats.flags | contains("--allow-host '"'"'registry.test port 8080 proto tcp'"'"'"))"')"
check "learn: --learn-out is the report's sbtrace text" "$(field npmhook-learn .egress.proposal.formats.sbtrace)" \
	"$(cat "$WORK/npmhook.allow")"
check "learn: the hook's connect reached the test host" 1 "$(grep -cx 'hook connected' "$WORK/npmhook-learn.err")"
probe npmhook-enforce --allowlist "$WORK/npmhook.allow" --no-boot "$WORK/npmhook"
check "the proposal enforced: built, 0 denies" "boot_not_run 0" \
	"$(field npmhook-enforce '"\(.reason) \(.egress.denied)"')"
grep -v -e '^# never resolved' -e '^cidr ' "$WORK/npmhook.allow" > "$WORK/npmhook.names"
probe npmhook-names --allowlist "$WORK/npmhook.names" --no-boot "$WORK/npmhook"
check "names only: the hard-coded address is the one deny" "$NET_T2_V4:80" \
	"$(field npmhook-names '[.egress.denied_destinations[] | "\(.daddr):\(.dport)"] | unique | join(",")')"
"$SBTRACE" probe --egress learn --no-dns-proxy "$WORK/npmhook" > /dev/null 2> "$WORK/learn-usage.err"
check "learn with --no-dns-proxy: exit 2" 2 "$?"

# 7. The probe's caller sits in a cgroup with an egress filter of its own (a
# CI runner's, an operator's shell's): here a trace on it that allows only the
# world's DNS. The relay's sockets are made in a cgroup of ours
# (sbtrace/probe-net-PID), so the filter judges none of them and the build
# still reaches the registry through the sandbox's own allowlist.
CALLER=$(mk_cgroup caller)
if start_trace "$WORK/caller.jsonl" --cgroup "$CALLER" --allow-cidr "$NET_DNS/32"; then
	PROBE_CG=$CALLER probe svc-caller --no-cache --allow-host "registry.test port 8080" "$WORK/svc"
	stop_trace INT
	check "caller's filter: the build reached the registry, safe" "safe high null" \
		"$(field svc-caller '"\(.verdict) \(.confidence) \(.reason)"')"
	check "caller's filter: it judged no registry connect" 0 \
		"$(jq -s '[.[] | select(.daddr == "'"$REG_ADDR"'")] | length' "$WORK/caller.jsonl")"
	check "caller's filter: it judged the probe's own DNS upstream" true \
		"$(jq -s 'any(.[]; .event == "EgressAllowed" and .daddr == "'"$NET_DNS"'")' "$WORK/caller.jsonl")"
else
	fail "caller's filter: the trace on $CALLER did not start"
fi

# start_slow OUT: a probe of a build whose RUN step sleeps, in the background
# (its pid in SLOW), once that step runs.
mkdir -p "$WORK/slow"
printf 'FROM localhost/sbtrace-busybox:latest\nRUN ["/bin/sleep", "30"]\n' > "$WORK/slow/Dockerfile"
start_slow() {
	nsenter --net="/run/netns/$NET_SBX" env SBTRACE_RESOLV_CONF="$WORK/resolv.conf" \
		"$SBTRACE" probe --no-cache --allow-host "registry.test port 8080" "$WORK/slow" \
		> "$WORK/$1.json" 2> "$WORK/$1.err" &
	SLOW=$!
	wait_for 30 sh -c "ip netns list 2> /dev/null | grep -q sbtrace-probe-net-$SLOW && pgrep -f '[s]leep 30' > /dev/null" ||
		fail "$1: the slow build never started"
}

# 5. SIGINT during a RUN step: nothing left behind.
start_slow sigint
kill -INT "$SLOW"
wait "$SLOW"
check "SIGINT: nothing left behind" none "$(leftovers "$SLOW")"

# 6. SIGKILL during a RUN step: the relay ends with the probe (--exit-fd),
# `sbtrace-shim gc` removes the sandbox and the build's network namespace.
start_slow sigkill
KILLED=$SLOW
kill -KILL "$KILLED"
wait "$KILLED"
check_true "SIGKILL: the relay ended with the probe" wait_for 5 sh -c "! pgrep -f [s]lirp4netns.*sbtrace-probe-net-$KILLED > /dev/null"
"$TOP/build/bin/sbtrace-shim" gc 2> "$WORK/gc.err"
check "SIGKILL + gc: sbtrace-shim gc exit 0" 0 "$?"
# (a buildah working container of a killed build is issue 23's: not checked here)
check "SIGKILL + gc: no netns, cgroup or relay left" "" "$(leftovers "$KILLED" | tr ' ' '\n' | grep -x -e netns -e cgroup -e relay)"
finish
