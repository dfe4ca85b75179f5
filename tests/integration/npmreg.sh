# The npm registry of the probe's network tests (t_probe_net, t_probe_vm):
# sourced after lib.sh and netlib.sh. The test
# host serves a static npm registry (tests/helpers/sbt-httpd) at
# registry.test = 198.51.100.80:8080, answered by the world's dnsmasq; its
# tarballs are packed here with `npm pack`, the lockfiles (v3) name them
# with `resolved` and `integrity`. Never the real registry.
#
#   npmreg_world              the tools, podman and its images, the network
#                             world, the registry's address and server, and
#                             $WORK/resolv.conf naming the world's DNS
#   pack NAME POSTINSTALL     a package into it
#   app DIR DEP EXTRA         an app depending on DEP@1.0.0
#   dockerfile DIR            a Node service's Dockerfile (RUN ["npm","ci"])
#   npm_services              the packages dep and hook, the services svc, svc-hook
#   relay_watch PID NAME      (in the background) the probe PID's relay: its
#                             namespace, cgroup and connects (strace), for npm_key
#   npm_key NAME ERR          a failed build's one-line digest (lib.sh key)
npmreg_world() {
	net_require_tools
	command -v npm > /dev/null || skip "npm missing (the machine's Node.js)"
	command -v nsenter > /dev/null || skip "nsenter missing (util-linux)"
	command -v slirp4netns > /dev/null || fail "slirp4netns missing: 'make deps' installs it"
	podman_up images
	net_world_up || return 1
	HTTPD="$TOP/build/tests/sbt-httpd"
	REG="$WORK/registry"
	REG_ADDR=198.51.100.80
	ip -n "$NET_HOST" addr add "$REG_ADDR/32" dev lo || fail "registry address"
	mkdir -p "$REG"
	_net_bg "$NET_HOST" "$WORK/httpd.out" "$HTTPD" --listen "$REG_ADDR:8080" --root "$REG" --log "$WORK/httpd.log"
	wait_for 5 grep -qx ready "$WORK/httpd.out" || fail "sbt-httpd is not ready: $(cat "$WORK/httpd.out")"
	printf 'nameserver %s\n' "$NET_DNS" > "$WORK/resolv.conf"
	# The way the probe's relay goes out: from the sandbox netns, in our own
	# cgroup and in a fresh one of ours (a filter on our own cgroup shows here).
	_reach() {
		"$@" "$(command -v curl)" -s -o /dev/null -m 2 -w '%{http_code}' \
			"http://$REG_ADDR:8080/" 2> /dev/null
		echo " (curl exit $?)"
	}
	_own=$(_reach nsenter --net="/run/netns/$NET_SBX")
	_fresh=$(_reach "$SPAWN" "$(mk_cgroup npmreg-probe)" --exec -- "$(command -v nsenter)" \
		--net="/run/netns/$NET_SBX")
	printf 'the registry from the sandbox netns: our own cgroup (%s): HTTP %s; a cgroup of ours: HTTP %s\n' \
		"$(sed -n 's/^0:://p' /proc/self/cgroup)" "$_own" "$_fresh" > "$WORK/reg-reach.txt"
	log "$(cat "$WORK/reg-reach.txt")"
	case "$_own" in *"exit 0)") ;; *) diag "registry reach" "$WORK/reg-reach.txt" ;; esac
}

# pack NAME POSTINSTALL: the package NAME@1.0.0 into the registry; its
# integrity in $INTEGRITY. POSTINSTALL (may be empty) is its postinstall script.
pack() {
	_d="$WORK/src/$1"
	mkdir -p "$_d" "$REG/$1/-"
	if [ -n "$2" ]; then
		printf '{"name":"%s","version":"1.0.0","main":"index.js","scripts":{"postinstall":"%s"}}\n' "$1" "$2" > "$_d/package.json"
	else
		printf '{"name":"%s","version":"1.0.0","main":"index.js"}\n' "$1" > "$_d/package.json"
	fi
	printf 'module.exports = "from %s";\n' "$1" > "$_d/index.js"
	(cd "$_d" && npm pack --silent --pack-destination "$REG/$1/-" > /dev/null 2>&1) || fail "npm pack $1"
	INTEGRITY="sha512-$(openssl dgst -sha512 -binary "$REG/$1/-/$1-1.0.0.tgz" | base64 -w0)"
}

# app DIR DEP INSTALLSCRIPT: package.json, package-lock.json (v3) and .npmrc
# of an app depending on DEP@1.0.0 from the test registry.
app() {
	mkdir -p "$1"
	cat > "$1/package.json" << EOF
{"name":"app","version":"1.0.0","dependencies":{"$2":"1.0.0"},"scripts":{"build":"node build.js"}}
EOF
	cat > "$1/package-lock.json" << EOF
{"name":"app","version":"1.0.0","lockfileVersion":3,"requires":true,"packages":{
"":{"name":"app","version":"1.0.0","dependencies":{"$2":"1.0.0"}},
"node_modules/$2":{"version":"1.0.0","resolved":"http://registry.test:8080/$2/-/$2-1.0.0.tgz","integrity":"$INTEGRITY"$3}}}
EOF
	# two quick retries (a connection the relay drops while it starts is tried
	# again; a refused name fails within seconds); no audit, fund or update
	# check; install scripts' output shown
	printf 'registry=http://registry.test:8080/\nfetch-retries=2\nfetch-retry-mintimeout=500\nfetch-retry-maxtimeout=1000\naudit=false\nfund=false\nupdate-notifier=false\nforeground-scripts=true\n' > "$1/.npmrc"
	printf 'const fs = require("fs"); fs.mkdirSync("dist", { recursive: true });\nfs.writeFileSync("dist/out.txt", require("%s") + "\\n");\n' "$2" > "$1/build.js"
	printf 'console.log("app up: " + require("%s"));\n' "$2" > "$1/server.js"
}

# dockerfile DIR: a Node service's Dockerfile, `RUN ["npm","ci"]` in exec form.
dockerfile() {
	cat > "$1/Dockerfile" << 'EOF'
FROM node:20-slim
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
RUN ["npm", "ci"]
COPY server.js ./
CMD ["node", "server.js"]
EOF
}

# npm_services: the packages dep (plain) and hook (a postinstall that npm
# runs through sh -c, which connects to the non-allowed test host NET_T2_V4),
# and the Node services $WORK/svc and $WORK/svc-hook (a Dockerfile each)
# depending on them; DEP_INTEGRITY and HOOK_INTEGRITY are their integrity.
npm_services() {
	pack dep ""
	DEP_INTEGRITY=$INTEGRITY
	app "$WORK/svc" dep ""
	dockerfile "$WORK/svc"
	pack hook "node -e \\\"require('net').connect(80,'$NET_T2_V4').on('error',e=>console.log('hook connect',e.code)).on('connect',()=>console.log('hook connected'))\\\""
	HOOK_INTEGRITY=$INTEGRITY
	app "$WORK/svc-hook" hook ',"hasInstallScript":true'
	dockerfile "$WORK/svc-hook"
}

relay_watch() {
	# DEBUG_PROBE_STRACE=1: the whole probe under strace -f instead ($WORK/NAME.probe-strace)
	if [ -n "${DEBUG_PROBE_STRACE:-}" ]; then
		strace -f -tt -qq -e trace=process,connect,close,kill,setns,unshare,write -e signal=all -s 80 -o "$WORK/$2.probe-strace" -p "$1" 2> /dev/null
		return 0
	fi
	_i=0
	while [ $_i -lt 600 ] && kill -0 "$1" 2> /dev/null; do
		_r=$(pgrep -P "$1" -x slirp4netns | head -n 1)
		if [ -n "$_r" ]; then
			printf 'relay netns %s (the world sandbox netns %s) cgroup %s\n' "$(readlink "/proc/$_r/ns/net" || echo 'none: it exited')" \
				"net:[$(stat -L -c %i "/run/netns/$NET_SBX")]" "$(sed -n 's/^0:://p' "/proc/$_r/cgroup")" > "$WORK/$2.relay"
			command -v strace > /dev/null &&
				strace -f -qq -e trace=connect -o "$WORK/$2.strace" -p "$_r" 2> /dev/null
			return 0
		fi
		sleep 0.1
		_i=$((_i + 1))
	done
}

# npm_key NAME ERR: one line for a CI log's tail: what npm and the relay said
# in ERR, the cgroup programs attached anywhere on this host (a filter that
# judged the relay's sockets shows here), and whether the registry answered
# the sandbox netns before the probe.
npm_key() {
	_e=$(grep -a -o -E 'npm ERR! (code|errno|syscall|address) [^ ]+|connect E[A-Z]+ [0-9.:]+|getaddrinfo E[A-Z_]+ [^ ]+|slirp4netns[^"]{0,80}' "$2" |
		sort -u | head -n 6 | tr '\n' ';')
	_p=$(bpftool cgroup tree "$CG2" 2> /dev/null | awk '
		/^\// { cg = $1; sub(".*/unified", "", cg); next }
		NF >= 3 && $1 ~ /^[0-9]+$/ { a[cg] = a[cg] "," $2 }
		END { for (c in a) printf "%s:%s ", (c == "" ? "/" : c), substr(a[c], 2) }')
	key "$1: ${_e:-no npm error line}; cgroup programs: ${_p:-none}; before: $(tr '\n' ' ' < "$WORK/reg-reach.txt" | sed 's/the registry from the sandbox netns: //')"
	# what the relay's own connects returned (strace), and where it ran
	_c=$(sed -n 's/.*sin_port=htons(\([0-9]*\)), sin_addr=inet_addr("\([0-9.]*\)").*) = \(.*\)/\2:\1 \3/p' \
		"$WORK/$1.strace" 2> /dev/null | sort | uniq -c | sort -rn | head -n 4 | tr -s ' ' | tr '\n' ';')
	key "$1: relay: $(cat "$WORK/$1.relay" 2> /dev/null || echo 'not seen'); its connects: ${_c:-none seen}"
}
