# sbtrace — build, test, bench.  `make help` lists the targets.
# V=1 shows full commands.

VERSION := 0.1.0
PREFIX ?= /usr/local
DESTDIR ?=
ARCH ?= $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')

CC ?= cc
CLANG ?= clang
BPFTOOL ?= bpftool
LLVM_STRIP ?= llvm-strip

BUILD := build
OBJ := $(BUILD)/obj
BIN := $(BUILD)/bin
BPFOBJ := $(BUILD)/bpf
TESTBIN := $(BUILD)/tests
ASANOBJ := $(BUILD)/asan
GEN := $(BUILD)/gen
MAN := $(BUILD)/man

ifeq ($(V),1)
Q :=
msg =
else
Q := @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

WARN := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wno-unused-parameter
CFLAGS ?= -O2 -g
CFLAGS += -std=c11 -D_GNU_SOURCE $(WARN) -I. -Ibpf -Iuserspace -Iskel -I$(GEN) \
	  -DSBTRACE_VERSION='"$(VERSION)"'
LDLIBS_BPF := -lbpf -lelf -lz
LDLIBS_JSON := -ljson-c
# The sandbox's seccomp filter (userspace/sandbox/seccomp.c): whatever links the library.
LDLIBS_SECCOMP := -lseccomp
# The agent's /metrics endpoint (libmicrohttpd, loader/agent_obs.c) and `sbtrace top`'s live
# view (ncurses, userspace/top/) are loaded at run time (dlopen) by the commands that use them:
# linked, they would add ~3 MiB to every `sbtrace trace`'s resident memory.
SAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all

BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -mcpu=v3 -Wall -Werror \
	      -Ibpf -Ibpf/vmlinux/$(ARCH)

# The loader's BPF parts, one word each: bpf/<part>.bpf.c, linked into one
# object (one load, one parse of the kernel BTF) -> skel/sbtrace.skel.h.
BPF_PARTS := exec egress tap agent
# Standalone BPF programs (benchmark helpers): bpf/<name>.bpf.c -> skel/<name>.skel.h
BPF_PROGS := bench_empty
SKELS := skel/sbtrace.skel.h $(patsubst %,skel/%.skel.h,$(BPF_PROGS))

# Pure userspace library: no libbpf in sight. Its rooms (README, "Layout"): one word each.
LIB_ROOMS := lib event exec egress dockerfile trace session cmd sandbox probe migrate
LIB_SRCS := $(foreach r,$(LIB_ROOMS),$(wildcard userspace/$(r)/*.c))
LIB_OBJS := $(patsubst %.c,$(OBJ)/%.o,$(LIB_SRCS))
LIB_ASAN_OBJS := $(patsubst %.c,$(ASANOBJ)/%.o,$(LIB_SRCS))

LOADER_SRCS := $(wildcard loader/*.c)
LOADER_OBJS := $(patsubst %.c,$(OBJ)/%.o,$(LOADER_SRCS))
# `sbtrace top`: built into sbtrace only, so the library and its tests need no ncurses headers.
TOP_SRCS := $(wildcard userspace/top/*.c)
TOP_OBJS := $(patsubst %.c,$(OBJ)/%.o,$(TOP_SRCS))

# A command's --help and its man page, from one source (scripts/gen-help.py has the format):
# userspace/<room>/NAME.help -> $(GEN)/help/NAME.h (the usage function's text) and $(MAN)/NAME.1.
HELP_SRCS := $(wildcard userspace/*/*.help)
HELP_HDRS := $(patsubst %.help,$(GEN)/help/%.h,$(notdir $(HELP_SRCS)))
MAN_PAGES := $(patsubst %.help,$(MAN)/%.1,$(notdir $(HELP_SRCS)))
vpath %.help $(sort $(dir $(HELP_SRCS)))

UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(TESTBIN)/%,$(UNIT_SRCS))
UNIT_ASAN_BINS := $(patsubst tests/unit/%.c,$(TESTBIN)/asan/%,$(UNIT_SRCS))

HELPER_SRCS := $(wildcard tests/helpers/*.c)
HELPER_BINS := $(patsubst tests/helpers/%.c,$(TESTBIN)/%,$(HELPER_SRCS))

# Tests of BPF programs on the real kernel (BPF_PROG_TEST_RUN; root): tests/kernel/test_*.c,
# run by tests/integration/ scripts.
KERNEL_SRCS := $(wildcard tests/kernel/test_*.c)
KERNEL_BINS := $(patsubst tests/kernel/%.c,$(TESTBIN)/kernel/%,$(KERNEL_SRCS))

# Benchmark helpers that load BPF (e.g. the empty-program floor): tests/bench/*.c
BENCH_SRCS := $(wildcard tests/bench/*.c)
BENCH_BINS := $(patsubst tests/bench/%.c,$(BUILD)/bench/%,$(BENCH_SRCS))

.PHONY: probe all deps test unit unit-asan integration bench format lint clean install \
	vmlinux help fuzz check-format check-structure check-schemas check-help base-images min-btf

all: $(BIN)/sbtrace $(BIN)/sbtrace-shim $(MAN_PAGES) $(HELPER_BINS) $(BENCH_BINS) $(KERNEL_BINS) \
	min-btf

# The running kernel's BTF cut down to what the object's CO-RE relocations need
# (scripts/min-btf.sh; redone for another kernel or object, else nothing to do).
min-btf: $(BPFOBJ)/sbtrace.bpf.o
	$(Q)BPFTOOL=$(BPFTOOL) scripts/min-btf.sh $< $(BPFOBJ)/min_core.btf

help:
	@echo 'targets: all (default) deps probe (REPO=path) test unit unit-asan check-schemas check-help'
	@echo '         integration bench fuzz base-images format check-format lint clean install'
	@echo '         (PREFIX, DESTDIR) vmlinux'

deps:
	$(Q)scripts/deps.sh

# The main job: make probe REPO=path [PROBE_ARGS=...]. Stdout is the report alone:
# the set-up's output goes to stderr, and make's own variables (MAKEFLAGS, REPO=...)
# stay out of the probe and of the build it runs. A repo with a Dockerfile gets
# podman set up and the Debian-built stand-in base images (scripts/image-map; an
# --image-map in PROBE_ARGS wins over it; --no-image-map: none). scripts/probe.sh
# does all that and execs the probe, so its exit status is the probe's; GNU make
# exits 2 for any failed recipe, whatever its status, so this rule says the
# probe's own code on stderr, and CI runs scripts/probe.sh REPO [ARGS...] instead.
probe:
	$(Q)test -n "$(REPO)" || { echo 'make probe: give REPO=path/to/repo' >&2; exit 2; }
	$(Q)scripts/probe.sh "$(REPO)" $(PROBE_ARGS) || { rc=$$?; w="sbtrace probe exited $$rc"; \
		case $$rc in 2) w="$$w (usage or no build found)";; \
		3) w="$$w (kernel capability missing)";; 4) w="$$w (unsafe)";; \
		5) w="$$w (inconclusive)";; *) w="scripts/probe.sh exited $$rc (see above)";; esac; \
		echo "make probe: $$w; make itself exits 2 for any failure: for the probe's" \
			"own exit code run scripts/probe.sh REPO [PROBE_ARGS...]" >&2; exit $$rc; }

vmlinux:
	$(Q)scripts/refresh-vmlinux.sh $(ARCH)

# Offline stand-ins for debian:bookworm and node:* (its Debian and Alpine tags:
# scripts/image-map), from Debian packages (mmdebstrap comes with deps); the
# script's stdout (an export line) is not make's business.
base-images:
	$(Q)scripts/deps.sh >&2
	$(Q)scripts/base-images.sh > /dev/null

# --- BPF ---------------------------------------------------------------
# -MMD: every header a part includes (policy.bpf.h ...) is a dependency.
$(BPFOBJ)/%.part.o: bpf/%.bpf.c bpf/vmlinux/$(ARCH)/vmlinux.h | $(BPFOBJ)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -MMD -MP -c $< -o $@

# The exec program cut after part N (bpf/exec.bpf.c's enum exec_part), for
# scripts/bench-exec-parts.sh: exec_stop<N>.bpf.o; exec.bpf.o is the whole program.
EXEC_STOPS := 1 2 3 4 5 6 7 8
EXEC_PART_OBJS := $(patsubst %,$(BPFOBJ)/exec_stop%.bpf.o,$(EXEC_STOPS)) $(BPFOBJ)/exec.bpf.o

$(BPFOBJ)/exec_stop%.part.o: bpf/exec.bpf.c bpf/vmlinux/$(ARCH)/vmlinux.h | $(BPFOBJ)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -DSBT_STOP_AFTER=$* -MMD -MP -c $< -o $@

$(BPFOBJ)/sbtrace.bpf.o: $(patsubst %,$(BPFOBJ)/%.part.o,$(BPF_PARTS))
	$(call msg,BPF-LINK,$@)
	$(Q)$(BPFTOOL) gen object $@ $^

$(BPFOBJ)/%.bpf.o: $(BPFOBJ)/%.part.o
	$(call msg,BPF-LINK,$@)
	$(Q)$(BPFTOOL) gen object $@ $<

skel/%.skel.h: $(BPFOBJ)/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $(*)_bpf > $@.tmp && mv $@.tmp $@

# --- help and man pages -------------------------------------------------
# The .d files name what a page was made from (its includes, the headers of its @CONST@s).
$(GEN)/help/%.h: %.help scripts/gen-help.py
	$(call msg,GEN-HELP,$@)
	$(Q)scripts/gen-help.py header $< $@ $(@:.h=.d)

$(MAN)/%.1: %.help scripts/gen-help.py
	$(call msg,GEN-MAN,$@)
	$(Q)VERSION=$(VERSION) DATE="$$(git log -1 --format=%cs -- $< 2>/dev/null)" \
		scripts/gen-help.py man $< $@ $(@:.1=.d)

# --- userspace ---------------------------------------------------------
$(OBJ)/%.o: %.c | $(SKELS) $(HELP_HDRS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

$(ASANOBJ)/%.o: %.c | $(HELP_HDRS)
	$(call msg,CC-ASAN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(SAN_FLAGS) -MMD -MP -c $< -o $@

# Archives are made anew (`ar r` on an old one would keep the objects of removed sources),
# members named by path (P): userspace/event/sink.c and userspace/probe/sink.c are both sink.o.
$(OBJ)/libsbtrace.a: $(LIB_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcsP $@ $^

$(ASANOBJ)/libsbtrace.a: $(LIB_ASAN_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcsP $@ $^

$(BIN)/sbtrace: $(LOADER_OBJS) $(TOP_OBJS) $(OBJ)/libsbtrace.a | $(BIN)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ -o $@ $(LDLIBS_BPF) $(LDLIBS_JSON) $(LDLIBS_SECCOMP) -ldl

# The companion that launches sandboxes: userspace/shim/*.c + the library.
SHIM_SRCS := $(wildcard userspace/shim/*.c)
SHIM_OBJS := $(patsubst %.c,$(OBJ)/%.o,$(SHIM_SRCS))

$(BIN)/sbtrace-shim: $(SHIM_OBJS) $(OBJ)/libsbtrace.a | $(BIN)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ -o $@ $(LDLIBS_JSON) $(LDLIBS_SECCOMP)

# Helpers link libc alone, but for the filter's prober (its own seccomp listener thread).
$(TESTBIN)/sbt-seccomp: HELPER_LDLIBS := $(LDLIBS_SECCOMP) -lpthread
# The guest stream's reader: the library's frames and exec decoder.
$(TESTBIN)/sbt-gsread: tests/helpers/sbt-gsread.c $(OBJ)/libsbtrace.a | $(TESTBIN)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $^ -o $@ $(LDLIBS_JSON)
$(TESTBIN)/%: tests/helpers/%.c tests/common/frames.h | $(TESTBIN)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $< -o $@ $(HELPER_LDLIBS)

$(TESTBIN)/kernel/%: tests/kernel/%.c tests/kernel/taplab.h tests/common/frames.h \
		$(OBJ)/libsbtrace.a $(SKELS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $< $(OBJ)/libsbtrace.a -o $@ -lcmocka $(LDLIBS_BPF) $(LDLIBS_JSON) \
		$(LDLIBS_SECCOMP)

$(BUILD)/bench/%: tests/bench/%.c $(SKELS) $(OBJ)/libsbtrace.a
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $< $(OBJ)/libsbtrace.a -o $@ $(LDLIBS_BPF) $(LDLIBS_JSON) \
		$(LDLIBS_SECCOMP) -lpthread

$(TESTBIN)/test_%: tests/unit/test_%.c $(OBJ)/libsbtrace.a | $(TESTBIN)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $^ -o $@ -lcmocka $(LDLIBS_JSON) $(LDLIBS_SECCOMP)

$(TESTBIN)/asan/test_%: tests/unit/test_%.c $(ASANOBJ)/libsbtrace.a
	$(call msg,CC-ASAN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(SAN_FLAGS) $^ -o $@ -lcmocka $(LDLIBS_JSON) $(LDLIBS_SECCOMP)

# test_top: `sbtrace top`'s table (userspace/top/table.c, outside the library), before it.
$(TESTBIN)/test_top: tests/unit/test_top.c $(OBJ)/userspace/top/table.o $(OBJ)/libsbtrace.a \
		| $(TESTBIN)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $^ -o $@ -lcmocka $(LDLIBS_JSON) $(LDLIBS_SECCOMP)
$(TESTBIN)/asan/test_top: tests/unit/test_top.c $(ASANOBJ)/userspace/top/table.o \
		$(ASANOBJ)/libsbtrace.a
	$(call msg,CC-ASAN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(SAN_FLAGS) $^ -o $@ -lcmocka $(LDLIBS_JSON) $(LDLIBS_SECCOMP)

$(BUILD) $(BIN) $(BPFOBJ) $(TESTBIN):
	$(Q)mkdir -p $@

# --- tests -------------------------------------------------------------
unit: $(UNIT_BINS) check-help
	$(Q)scripts/run-unit.sh $(UNIT_BINS)

# Every command's --help is the text its source makes, every man page renders without a
# warning, every long option of a getopt table is in its help (and the checks catch each).
check-help: $(BIN)/sbtrace $(BIN)/sbtrace-shim $(MAN_PAGES)
	$(Q)scripts/check-help.sh --self-test
	$(Q)scripts/check-help.sh $(BIN) $(MAN) $(HELP_SRCS)

unit-asan: $(UNIT_ASAN_BINS)
	$(Q)ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
		scripts/run-unit.sh $(UNIT_ASAN_BINS)

integration: all
	$(Q)tests/integration/run.sh

# The probe report's schema against its samples (tests/fixtures/reports/), and the SARIF
# logs test_sarif makes of them against the OASIS SARIF 2.1.0 schema (tests/schema/): the
# valid ones pass, broken copies are refused (Debian's /usr/bin/jsonschema; a few seconds).
check-schemas: $(TESTBIN)/test_sarif
	$(Q)rm -rf $(BUILD)/sarif && mkdir -p $(BUILD)/sarif
	$(Q)$(TESTBIN)/test_sarif $(BUILD)/sarif > /dev/null
	$(Q)scripts/check-schemas.sh $(BUILD)/sarif

test: deps check-structure
	$(Q)$(MAKE) --no-print-directory all
	$(Q)$(MAKE) --no-print-directory unit
	$(Q)$(MAKE) --no-print-directory unit-asan
	$(Q)$(MAKE) --no-print-directory check-schemas
	$(Q)$(MAKE) --no-print-directory fuzz
	$(Q)$(MAKE) --no-print-directory integration

# libFuzzer targets: tests/fuzz/fuzz_*.c, each run for FUZZ_SECONDS.
FUZZ_SECONDS ?= 20
FUZZ_SRCS := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BINS := $(patsubst tests/fuzz/%.c,$(BUILD)/fuzz/%,$(FUZZ_SRCS))

# The tap target feeds frames to the real program: it links libbpf and the skeleton.
FUZZ_TAP_LIB := userspace/egress/policy.c userspace/egress/policy_compile.c userspace/event/decode.c
$(BUILD)/fuzz/fuzz_tap: tests/fuzz/fuzz_tap.c tests/kernel/taplab.h tests/common/frames.h \
		$(FUZZ_TAP_LIB) $(SKELS)
	$(call msg,FUZZ-CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) -std=c11 -D_GNU_SOURCE -g -O1 -I. -Ibpf -Iuserspace -Iskel \
		-DSBTRACE_VERSION='"$(VERSION)"' -fsanitize=fuzzer,address,undefined \
		$< $(FUZZ_TAP_LIB) -o $@ $(LDLIBS_BPF) $(LDLIBS_JSON)

$(BUILD)/fuzz/%: tests/fuzz/%.c $(LIB_SRCS) | $(HELP_HDRS)
	$(call msg,FUZZ-CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) -std=c11 -D_GNU_SOURCE -g -O1 -I. -Ibpf -Iuserspace -I$(GEN) \
		-DSBTRACE_VERSION='"$(VERSION)"' \
		-fsanitize=fuzzer,address,undefined $^ -o $@ $(LDLIBS_JSON) $(LDLIBS_SECCOMP)

fuzz: $(FUZZ_BINS)
	$(Q)scripts/run-fuzz.sh $(FUZZ_SECONDS) $(FUZZ_BINS)

# Every script's output to build/bench.log as well; at the end its `bench:` lines together (each
# figure beside its reference or target), with the host's kernel.
BENCH_SCRIPTS := bench.sh bench-exec-parts.sh bench-agent-trace.sh bench-egress.sh bench-dns.sh \
	bench-probe.sh bench-probe-build.sh bench-tap.sh bench-qemu.sh
bench: all $(EXEC_PART_OBJS)
	$(Q)mkdir -p $(BUILD) && : > $(BUILD)/bench.log
	$(Q)for s in $(BENCH_SCRIPTS); do { scripts/$$s 2>&1; echo $$? > $(BUILD)/bench.rc; } | \
		tee -a $(BUILD)/bench.log; [ "$$(cat $(BUILD)/bench.rc)" = 0 ] || exit 1; done
	$(Q)echo; echo "== make bench: the figures side by side (host kernel $$(uname -r), $$(nproc) CPUs, $$(date -u +%F))"
	$(Q)grep '^bench:' $(BUILD)/bench.log

# --- hygiene -----------------------------------------------------------
check-structure:
	$(Q)scripts/check-structure.sh --self-test
	$(Q)scripts/check-structure.sh

FORMAT_SRCS = $(shell git ls-files '*.c' '*.h' | grep -v '^bpf/vmlinux/')

format:
	$(Q)clang-format -i $(FORMAT_SRCS)

check-format:
	$(Q)clang-format --dry-run --Werror $(FORMAT_SRCS)

lint: $(SKELS) $(HELP_HDRS)
	$(Q)cppcheck --quiet --error-exitcode=1 --enable=warning,performance,portability \
		--inline-suppr --suppress=missingIncludeSystem --suppress=unknownMacro \
		-I bpf -I userspace -I skel -I $(GEN) \
		-D__linux__ loader userspace tests/unit
	$(Q)clang-tidy --quiet $(LIB_SRCS) -- $(CFLAGS)
	@# bpftool 7.1's generated skeletons leak on calloc failure (unix.Malloc
	@# reports it through our calls); the loader is checked without that one.
	$(Q)clang-tidy --quiet --checks=-clang-analyzer-unix.Malloc $(LOADER_SRCS) -- $(CFLAGS)
	$(Q)clang-tidy --quiet $(SHIM_SRCS) $(TOP_SRCS) -- $(CFLAGS)

# The binaries, their man pages ($(MAN)), the agent's systemd unit, its logrotate snippet
# and sample config, bash completion (scripts/dist/). The agent reads /etc/sbtrace/agent.conf
# and logrotate /etc/logrotate.d whatever PREFIX is: SYSCONFDIR is /etc, not $(PREFIX)/etc.
# agent.conf is installed only where there is none (an operator's is never replaced); the
# sample is always refreshed.
SYSCONFDIR ?= /etc
install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 \
		$(DESTDIR)$(PREFIX)/lib/systemd/system \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions \
		$(DESTDIR)$(SYSCONFDIR)/logrotate.d
	install -d -m 0755 $(DESTDIR)$(SYSCONFDIR)/sbtrace
	install -m 0755 $(BIN)/sbtrace $(DESTDIR)$(PREFIX)/bin/sbtrace
	install -m 0755 $(BIN)/sbtrace-shim $(DESTDIR)$(PREFIX)/bin/sbtrace-shim
	install -m 0644 $(MAN_PAGES) $(DESTDIR)$(PREFIX)/share/man/man1/
	sed 's|@BINDIR@|$(PREFIX)/bin|' scripts/dist/sbtrace-agent.service \
		> $(DESTDIR)$(PREFIX)/lib/systemd/system/sbtrace-agent.service
	install -m 0644 scripts/dist/sbtrace.bash-completion \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions/sbtrace
	ln -sf sbtrace $(DESTDIR)$(PREFIX)/share/bash-completion/completions/sbtrace-shim
	install -m 0644 scripts/dist/sbtrace-agent.logrotate \
		$(DESTDIR)$(SYSCONFDIR)/logrotate.d/sbtrace-agent
	install -m 0644 scripts/dist/agent.conf $(DESTDIR)$(SYSCONFDIR)/sbtrace/agent.conf.example
	test -e $(DESTDIR)$(SYSCONFDIR)/sbtrace/agent.conf || \
		install -m 0644 scripts/dist/agent.conf $(DESTDIR)$(SYSCONFDIR)/sbtrace/agent.conf

clean:
	rm -rf $(BUILD) skel/*.skel.h

-include $(shell find $(BUILD) -name '*.d' -type f -not -path '$(BUILD)/base-images/*' 2>/dev/null)
