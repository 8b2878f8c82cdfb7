# irqnuma: build, test, lint, fuzz and benchmark.
GO ?= go
BIN ?= bin/irqnuma
# The Prometheus exporter, a binary of its own so that the CLI does not
# link prometheus/client_golang.
EXPORTER_BIN ?= bin/irqnuma-exporter
FUZZTIME ?= 10s
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2

# The tests make many small files (host-tree copies, unpacked captures,
# snapshots): on a tmpfs that is ten times faster than on a virtual disk.
# TESTTMP is a folder on /dev/shm when that is a writable tmpfs with 2 GiB
# free, else empty (TMPDIR is left alone). `make test TESTTMP=` opts out.
# It is this clone's own (named after the user and a checksum of the
# clone's path, so two clones never share one), and TESTENV removes it
# when the command it prefixes ends, passed, failed or interrupted: a run
# leaves some 300 MB in it.
TESTTMP ?= $(shell d=/dev/shm; [ -d $$d ] && [ -w $$d ] && \
	[ "$$(stat -f -c %T $$d 2>/dev/null)" = tmpfs ] && \
	[ "$$(df -Pk $$d | awk 'NR==2 {print $$4}')" -ge 2097152 ] 2>/dev/null && \
	echo $$d/irqnuma-test-$$(id -u)-$$(printf %s '$(CURDIR)' | cksum | cut -d' ' -f1))
TESTENV = $(if $(TESTTMP),mkdir -p $(TESTTMP) && \
	trap 'chmod -R u+w $(TESTTMP) 2>/dev/null; rm -rf $(TESTTMP)' EXIT && \
	trap 'exit 129' HUP && trap 'exit 130' INT && trap 'exit 143' TERM && \
	TMPDIR=$(TESTTMP))

.PHONY: build install test test-live test-short vmtest lint tidy fuzz bench golden

# A static binary (no cgo: it runs on any Linux of the architecture, in an
# initramfs or a distroless image) with the version from git stamped in.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo "(devel)")
REVISION ?= $(shell git rev-parse HEAD 2>/dev/null)
VPKG = github.com/irqnuma/irqnuma/internal/version
LDFLAGS = -s -w -X '$(VPKG).version=$(VERSION)' -X '$(VPKG).revision=$(REVISION)'

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/irqnuma
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(EXPORTER_BIN) ./cmd/irqnuma-exporter

# The two binaries, their manual pages and the bash, zsh and fish completions,
# laid out under PREFIX as distribution packages do (DESTDIR for staging).
PREFIX ?= /usr/local
DESTDIR ?=
install: build
	install -D -m 0755 $(BIN) $(DESTDIR)$(PREFIX)/bin/irqnuma
	install -D -m 0755 $(EXPORTER_BIN) $(DESTDIR)$(PREFIX)/bin/irqnuma-exporter
	install -d $(DESTDIR)$(PREFIX)/share/man/man1 \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions \
		$(DESTDIR)$(PREFIX)/share/zsh/site-functions \
		$(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d
	$(BIN) __man $(DESTDIR)$(PREFIX)/share/man/man1
	$(EXPORTER_BIN) __man $(DESTDIR)$(PREFIX)/share/man/man1
	$(BIN) completion bash > $(DESTDIR)$(PREFIX)/share/bash-completion/completions/irqnuma
	$(BIN) completion zsh > $(DESTDIR)$(PREFIX)/share/zsh/site-functions/_irqnuma
	$(BIN) completion fish > $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/irqnuma.fish

# vet + race detector + every suite; then the hostile-input tests (and
# bench's hostile output), which a race build skips, without -race: their
# CPU and memory bounds are for the binary that ships. It never changes
# the machine it runs on: the tests that would (hosttest.Writes) skip,
# saying so; make test-live runs them.
test:
	$(GO) vet ./...
	$(TESTENV) $(GO) test -race -count=1 ./...
	$(TESTENV) $(GO) test -count=1 -run '^TestHostile' ./cmd/irqnuma ./internal/run/bench

# The live-host tests, as root: those that change this host while they
# run and put it back (IRQ affinities, eth0's threaded, rps_cpus and
# xps_cpus, /var/lib/irqnuma, control groups, network namespaces, links
# and XDP programs), switched on by IRQNUMA_TEST_LIVE=1, and the live
# tests that only read. LIVE_RUN names them; cmd/irqnuma's
# TestLiveTestsInMakefile fails when a test that writes does not match.
LIVE_RUN = ^(Test[A-Za-z0-9]*Live[A-Za-z0-9]*|TestBenchLeavesNothing|TestStartJoined[A-Za-z0-9]*)$$
test-live:
	$(TESTENV) IRQNUMA_TEST_LIVE=1 $(GO) test -race -count=1 -run '$(LIVE_RUN)' ./...

# The fast loop: no race detector, no live-host tests, no browser.
test-short:
	$(TESTENV) $(GO) test -short ./...

# The real-kernel lab (lab/): boots Debian's 6.1 and 6.12 kernels and the
# newest Debian ships (trixie-backports' linux-image-amd64, 7.3 today,
# fetched through apt sources the lab writes itself under its cache)
# under QEMU and runs the scenarios inside them. Needs root,
# qemu-system-x86, busybox-static, iproute2, iperf3, ethtool, xz-utils,
# debian-archive-keyring and apt sources; fails, never skips, without.
# LAB_REFRESH=1 also rewrites testdata/hosts/lab-debian-*.tar.gz.
LAB_REFRESH ?=
vmtest:
	IRQNUMA_LAB_REFRESH=$(LAB_REFRESH) $(GO) test -tags vmtest -count=1 -timeout 20m ./lab/...

# gofmt, go vet and staticcheck with an explicit list of checks.
lint:
	@out=$$(gofmt -l . | grep -v '^testdata/' || true); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) -checks 'all,-ST1000,-ST1003,-ST1020,-ST1021,-ST1022' ./...

# go.mod and go.sum say exactly what the code imports.
tidy:
	$(GO) mod tidy -diff

# Each fuzz target for FUZZTIME.
fuzz:
	@set -e; for pkg in $$($(GO) list ./...); do \
		for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
			echo "== $$pkg $$f"; \
			$(TESTENV) $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg; \
		done; \
	done

# One package's benchmarks at a time (-p 1): go test runs as many test
# binaries at once as there are CPUs, so on a 2-CPU machine rsshash's
# hashing shared the CPUs with cmd/irqnuma's BenchmarkStartup and its
# hundreds of child processes, and measured that.
bench:
	$(TESTENV) $(GO) test -p 1 -run '^$$' -bench . -benchmem ./...

# Refresh golden files after a deliberate output change: every package
# whose tests compare against testdata/golden takes -update.
GOLDEN_PKGS = $(shell grep -rl --include='*_test.go' -e 'flag.Bool."update"' . | xargs -n1 dirname | sort -u)
golden:
	$(TESTENV) $(GO) test -count=1 $(GOLDEN_PKGS) -update
