#!/bin/sh
# Probe verdicts a user can act on: each finding of the field trial (a false
# `safe` from the cache, a pre-built tree, a renamed shell ...) as a case,
# and strace on a clean copy as an independent oracle of the shell count.
. "$(dirname "$0")/lib.sh"

FIX="$TOP/tests/fixtures"
CACHE="$WORK/cache"
command -v npm > /dev/null || skip "npm missing (Debian's npm, or the machine's Node.js)"
command -v strace > /dev/null || skip "strace missing (make deps installs it: the tests' oracle)"

# probe NAME ARGS...: run the probe, report in $WORK/NAME.json, stderr in .err, rc in PROBE_RC
probe() {
	_n=$1
	shift
	"$SBTRACE" probe --cache-dir "$CACHE" "$@" > "$WORK/$_n.json" 2> "$WORK/$_n.err"
	PROBE_RC=$?
	log "$_n: rc $PROBE_RC, $(jq -c '{verdict, confidence, reason, count: .shell_invocation.count, hit: .cache.hit}' "$WORK/$_n.json" 2> /dev/null)"
	validate_report "$WORK/$_n.json"
}
field() { jq -r "$2" "$WORK/$1.json"; }
verdict() { field "$1" '"\(.verdict) \(.confidence) \(.reason) \(.shell_invocation.count) \(.cache.hit)"'; }
# copy FIXTURE NAME: a fresh copy of a fixture under $WORK
copy() { rm -rf "${WORK:?}/$2" && cp -a "$FIX/$1" "$WORK/$2"; }

# ---- the oracle: strace -f of the same build on a clean copy ---------------
# Shells among the execs that succeeded: sh, dash or bash by path, or a file whose #! names one.
oracle_count() {
	cat "$1".* | grep -E '^execve\(.*\) = 0' | sed -E 's/^execve\("([^"]*)".*/\1/' |
		while read -r p; do
			case "$p" in /*) f=$p ;; *) f="$2/$p" ;; esac
			case "$(basename "$p")" in sh | dash | bash) echo shell && continue ;; esac
			[ -f "$f" ] && [ "$(head -c 2 "$f")" = "#!" ] || continue
			i=$(head -n 1 "$f" | sed -E 's/^#! *//; s/ .*//')
			case "$(basename "$i")" in sh | dash | bash) echo shell ;; esac
		done | wc -l
}
# oracle NAME FIXTURE CMD...: the build on a clean copy under strace, with the probe's environment
oracle() {
	_n=$1 _f=$2
	shift 2
	copy "$_f" "oracle-$_n"
	(cd "$WORK/oracle-$_n" && env -i PATH="$PATH" HOME=/root LANG=C.UTF-8 TERM=dumb \
		strace -f -ff -qq -e trace=execve -o "$WORK/$_n.strace" "$@" > /dev/null 2>&1)
	oracle_count "$WORK/$_n.strace" "$WORK/oracle-$_n"
}

for f in oracle-make:make oracle-shellfn:make oracle-nested:make oracle-configure:make oracle-npm:npm; do
	fx=${f%%:*}
	if [ "${f#*:}" = npm ]; then want=$(oracle "$fx" "$fx" npm run build); else want=$(oracle "$fx" "$fx" make -B); fi
	copy "$fx" "probe-$fx"
	probe "$fx" --no-cache "$WORK/probe-$fx"
	# no Dockerfile, no boot: the build's shells are a builder stage's, counted all the same
	check "oracle: $fx: the probe counts what strace saw ($want shells)" \
		"inconclusive boot_not_run $want" "$(field "$fx" '"\(.verdict) \(.reason) \(.shell_invocation.count)"')"
	check "oracle: $fx: the listed counts sum to the total" "$(field "$fx" .shell_invocation.count)" \
		"$(field "$fx" '([.shell_invocation.locations[].count] | add) + .shell_invocation.omitted.count')"
done
check_true "oracle: the counts are not trivial (oracle-make runs several shells)" \
	[ "$(field oracle-make .shell_invocation.count)" -ge 2 ]

# ---- 1. the cache cannot go stale -----------------------------------------
# A file the build reads but no declared input names: an included config.mk.
copy oracle-shellfn stale
# (a boot without a shell: a confident answer, which alone is cached)
probe stale1 --boot-cmd /bin/true "$WORK/stale"
probe stale2 --boot-cmd /bin/true "$WORK/stale"
check "cache: unchanged repo: a hit" "true" "$(field stale2 .cache.hit)"
printf 'FLAVOUR = $(shell echo extra | tr a-z A-Z)\n' > "$WORK/stale/config.mk"
probe stale3 --boot-cmd /bin/true "$WORK/stale"
check "cache: config.mk changed: a miss with the new answer" \
	"false $(($(field stale1 .shell_invocation.count) + 1))" \
	"$(field stale3 '"\(.cache.hit) \(.shell_invocation.count)"')"
# A build script run by node (npm): build/index.js gains a shell.
copy oracle-npm stalenpm
probe npm1 --boot-cmd /bin/true "$WORK/stalenpm"
sed -i 's/execFileSync(.true.);/execFileSync("true"); execSync("echo more");/' "$WORK/stalenpm/build/index.js"
probe npm2 --boot-cmd /bin/true "$WORK/stalenpm"
check "cache: build/index.js changed: a miss, one more shell" \
	"false $(($(field npm1 .shell_invocation.count) + 1))" \
	"$(field npm2 '"\(.cache.hit) \(.shell_invocation.count)"')"
# A dependency folder counts too.
mkdir -p "$WORK/stalenpm/node_modules/dep"
echo 'x' > "$WORK/stalenpm/node_modules/dep/index.js"
probe npm3 --boot-cmd /bin/true "$WORK/stalenpm"
check "cache: node_modules changed: a miss" false "$(field npm3 .cache.hit)"
# What the key covers is in the report.
check_true "cache: the key covers the tree, the environment, the tool and the probe" \
	sh -c "jq -e '[.inputs[].name] | (index(\"tree:.\") and index(\"env:PATH\") and index(\"tool:npm\") and index(\"probe:sbtrace\"))' '$WORK/npm3.json' > /dev/null"
# --env is part of the key.
probe npm4 --boot-cmd /bin/true --env FOO=1 "$WORK/stalenpm"
check "cache: another --env: a miss" false "$(field npm4 .cache.hit)"
# A symlink out of the repo: the key cannot cover it, so no cache at all.
ln -s /etc/hostname "$WORK/stalenpm/outside"
probe npm5 --boot-cmd /bin/true "$WORK/stalenpm"
probe npm6 --boot-cmd /bin/true "$WORK/stalenpm"
check "cache: a symlink out of the repo: never answered from the cache" false "$(field npm6 .cache.hit)"
check_true "cache: ... and it says why" grep -q "no cache: a symlink leads out of the repo" "$WORK/npm6.err"
rm "$WORK/stalenpm/outside"

# ---- 2. a pre-built tree gets a clean build's answer ------------------------
copy oracle-make prebuilt
(cd "$WORK/prebuilt" && make > /dev/null 2>&1)
check_true "pre-built: the outputs are there" [ -f "$WORK/prebuilt/sum.txt" ]
probe prebuilt --no-cache "$WORK/prebuilt"
check "pre-built: the same answer as a clean copy" "$(verdict oracle-make)" "$(verdict prebuilt)"
# A --cmd that finds nothing to do cannot say safe.
probe nothing --no-cache --cmd "true" "$WORK/prebuilt"
check "a build that ran nothing: not a confident safe" "inconclusive low build_did_nothing 0 false" \
	"$(verdict nothing)"
# "Did nothing" is what the build wrote, not how many programs it ran: one exec that writes its
# output is a real build, one that writes nothing is not.
probe onewrite --no-cache --boot-cmd /bin/true --cmd "node build.js" "$FIX/boot-server"
check "one exec that writes its output: a confident answer" "safe high null 0 false" "$(verdict onewrite)"
probe onenothing --no-cache --no-boot --cmd "node check.js" "$FIX/boot-server"
check "one exec that writes nothing: build_did_nothing" "inconclusive low build_did_nothing 0 false" \
	"$(verdict onenothing)"
check_true "... and the warning says it wrote nothing" \
	grep -q "wrote nothing to its workspace" "$WORK/onenothing.json"

# ---- 3. failed builds are not cached ---------------------------------------
mkdir "$WORK/failing"
printf 'all: dep.txt\n\tcp dep.txt out.txt\n' > "$WORK/failing/Makefile"
probe fail1 --boot-cmd /bin/true "$WORK/failing"
probe fail2 --boot-cmd /bin/true "$WORK/failing"
check "failed build: reported" "inconclusive low build_failed" \
	"$(field fail1 '"\(.verdict) \(.confidence) \(.reason)"')"
check "failed build: not answered from the cache" false "$(field fail2 .cache.hit)"
echo dep > "$WORK/failing/dep.txt"
probe fail3 --boot-cmd /bin/true "$WORK/failing"
check "failed build, then fixed: the new answer" "safe high null 0 false" "$(verdict fail3)"

# ---- 4. locations show every distinct shell command -------------------------
check "locations: \$(shell uname -s) is a location of its own" 1 \
	"$(field oracle-shellfn '[.shell_invocation.locations[] | select(.command == "uname -m | tr A-Z a-z")] | length')"
check "locations: grouped by site and command, and the report says so" "site,shell,kind,command,chain" \
	"$(field oracle-shellfn .shell_invocation.grouped_by)"
mkdir "$WORK/many"
{
	printf 'N := $(shell seq 1 230)\nall: $(addprefix t,$(N))\nt%%:\n\t@echo $* > /dev/null\n'
} > "$WORK/many/Makefile"
probe many --no-cache "$WORK/many"
check "locations: 230 distinct commands: 200 listed, the rest counted" "230 200 30 30" \
	"$(field many '"\(.shell_invocation.count) \(.shell_invocation.locations | length) \(.shell_invocation.omitted.locations) \(.shell_invocation.omitted.count)"')"

# ---- 5. a shell under another name is a shell --------------------------------
mkdir "$WORK/renamed"
ln -s "$(command -v dash || echo /bin/sh)" "$WORK/renamed/mysh"
cp "$(readlink -f /bin/sh)" "$WORK/renamed/tool"
printf 'all:\n\t./mysh -c true\n\t./tool -c :\n' > "$WORK/renamed/Makefile"
probe renamed --no-cache "$WORK/renamed"
check "renamed: a symlink and a copy of the shell: both shells (a builder stage's)" "2 0" \
	"$(field renamed '"\(.shell_invocation.count) \(.shell_invocation.affecting_final_image)"')"
check "renamed: known by the file's name and by its content" "file_name content" \
	"$(field renamed '[.shell_invocation.locations[].identified_by] | join(" ")')"

# ---- 6. Dockerfile: ARG in FROM, a missing base named, no silent fallback -------
mkdir "$WORK/argfrom"
printf 'ARG GO_VERSION=1.22\nFROM golang:${GO_VERSION}-alpine AS builder\nRUN go build\n' \
	> "$WORK/argfrom/Dockerfile"
printf 'all:\n\ttrue\n' > "$WORK/argfrom/Makefile"
probe argfrom "$WORK/argfrom"
check "FROM with an ARG: the substituted image is named, a boot failure" \
	"inconclusive base_image_missing true" \
	"$(field argfrom '"\(.verdict) \(.reason) \(.warnings[0].message | contains("golang:1.22-alpine"))"')"
probe argfrom2 "$WORK/argfrom"
check "FROM with an ARG: never cached" false "$(field argfrom2 .cache.hit)"
printf 'FROM localhost/sbtrace-nothing AS deps\nFROM deps\nRUN true\n' > "$WORK/argfrom/Dockerfile"
probe final --no-cache "$WORK/argfrom"
check "a Dockerfile: its final stage, not the Makefile, and it says why" \
	"dockerfile Dockerfile: the final stage (line 2), the image a container runs" \
	"$(field final '"\(.command.kind) \(.command.why)"')"

# ---- 7. the host does not leak into the build ----------------------------------
mkdir "$WORK/envleak"
printf 'all:\n\t@env | sort >&2\n\t@echo "MO=[$(MAKEOVERRIDES)] REPO=[$(REPO)]" >&2\n' \
	> "$WORK/envleak/Makefile"
SECRET_TOKEN=hunter2 CC=evil CFLAGS=-Oevil "$SBTRACE" probe --no-cache --env FOO=bar \
	"$WORK/envleak" > "$WORK/envleak.json" 2> "$WORK/envleak.err"
check "env: the caller's tokens, CC, CFLAGS stay out" 0 \
	"$(grep -cE '^(SECRET_TOKEN|CC|CFLAGS)=' "$WORK/envleak.err")"
check "env: --env passes what it names" 1 "$(grep -c '^FOO=bar$' "$WORK/envleak.err")"
check "env: the default set is there" "HOME=/root LANG=C.UTF-8 TERM=dumb" \
	"$(grep -E '^(HOME|LANG|TERM)=' "$WORK/envleak.err" | tr '\n' ' ' | sed 's/ $//')"
SECRET_TOKEN=hunter2 make -s -C "$TOP" probe REPO="$WORK/envleak" PROBE_ARGS="--no-cache" \
	> "$WORK/envmake.json" 2> "$WORK/envmake.err"
check "env: make probe's variables (REPO=, PROBE_ARGS=) are no overrides in the build" 1 \
	"$(grep -c '^MO=\[\] REPO=\[\]$' "$WORK/envmake.err")"
check "env: make probe passes no token either" 0 "$(grep -c '^SECRET_TOKEN=' "$WORK/envmake.err")"

# ---- 8. stdout is the report alone ------------------------------------------------
mkdir "$WORK/with space"
cp "$FIX/make-shell/"* "$WORK/with space/"
make -s -C "$TOP" probe REPO="$WORK/with space" PROBE_ARGS="--no-cache" > "$WORK/space.json" 2> "$WORK/space.err"
check "streams: make probe's stdout parses as one JSON report (a path with a space)" inconclusive \
	"$(jq -r .verdict "$WORK/space.json")"
check_true "streams: the build's output and progress are on stderr" grep -q "verdict:" "$WORK/space.err"
"$SBTRACE" probe -q --no-cache "$WORK/failing/../envleak" > "$WORK/q.json" 2> "$WORK/q.err"
check "streams: -q keeps the build's own output" 1 "$(grep -c '^HOME=/root$' "$WORK/q.err")"
check "streams: -q silences progress" 0 "$(grep -c 'sbtrace probe:' "$WORK/q.err")"
check_true "streams: the summary names the reason" \
	grep -q "verdict: inconclusive, confidence low (build_failed: the build exited with status" "$WORK/fail1.err"

# Every report above is one JSON document; nothing is left behind.
for f in "$WORK"/*.json; do
	jq -e . "$f" > /dev/null 2>&1 || fail "not one JSON document: $f"
done
check "no sandbox cgroup left" 0 "$(find "$CG2/sbtrace" -mindepth 1 -maxdepth 1 -name 'probe-*' 2> /dev/null | wc -l)"
check "no overlay left" 0 "$(grep -c sbtrace-probe /proc/self/mountinfo)"
finish
