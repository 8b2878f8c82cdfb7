# irqnuma: build, test, lint, fuzz and benchmark.
GO ?= go
BIN ?= bin/irqnuma
FUZZTIME ?= 10s
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2

.PHONY: build test vmtest lint fuzz bench golden

build:
	$(GO) build -o $(BIN) ./cmd/irqnuma

# vet + race detector + every suite.
test:
	$(GO) vet ./...
	$(GO) test -race -count=1 ./...

# The real-kernel lab (lab/): boots Debian's 6.1 and 6.12 kernels under
# QEMU and runs the scenarios inside them. Needs root, qemu-system-x86,
# busybox-static, iproute2 and apt sources; fails, never skips, without.
# LAB_REFRESH=1 also rewrites testdata/hosts/lab-debian-*.tar.gz.
LAB_REFRESH ?=
vmtest:
	IRQNUMA_LAB_REFRESH=$(LAB_REFRESH) $(GO) test -tags vmtest -count=1 -timeout 20m ./lab/...

# gofmt, go vet and staticcheck with an explicit list of checks.
lint:
	@out=$$(gofmt -l . | grep -v '^testdata/' || true); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) -checks 'all,-ST1000,-ST1003,-ST1020,-ST1021,-ST1022' ./...

# Each fuzz target for FUZZTIME.
fuzz:
	@set -e; for pkg in $$($(GO) list ./...); do \
		for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
			echo "== $$pkg $$f"; \
			$(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg; \
		done; \
	done

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

# Refresh golden files after a deliberate output change.
golden:
	$(GO) test ./... -update
