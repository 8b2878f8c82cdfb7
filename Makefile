# irqnuma: build, test, lint, fuzz and benchmark.
GO ?= go
BIN ?= bin/irqnuma
FUZZTIME ?= 10s
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2

.PHONY: build test lint fuzz bench golden

build:
	$(GO) build -o $(BIN) ./cmd/irqnuma

# vet + race detector + every suite.
test:
	$(GO) vet ./...
	$(GO) test -race -count=1 ./...

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
