# The one test command: `make test` (what .ci/run calls).
GO ?= go
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2

FUZZTIME ?= 10s
# Every fuzz target, as package:Target. make fuzz runs each for FUZZTIME.
FUZZ_TARGETS := \
	./internal/transport:FuzzSSEReader ./internal/transport:FuzzReadLine ./internal/transport:FuzzCheckFrame \
	./internal/transport:FuzzValidJSON ./internal/mcp:FuzzDecodeSplit ./internal/mcp:FuzzMemberString \
	./internal/mcp:FuzzDecodeFrame ./internal/record:FuzzReader ./internal/record:FuzzRoundTrip \
	./internal/record:FuzzRedactJSON ./internal/schema:FuzzCoerce ./internal/config:FuzzParse \
	./internal/schema:FuzzValidateAgrees \
	./internal/auth:FuzzParseChallenge ./internal/rows:FuzzParserEvent ./internal/safetext:FuzzSafe \
	./internal/query:FuzzParse

.PHONY: test check deps build demo fuzz bench e2e

## e2e: drive the real binary's TUI in tmux against the demo server and server-everything
e2e: deps
	scripts/e2e-tui.sh

## test: install the pinned npm test peers, run the static checks, every test with the race detector, the TUI end to end in tmux, and each fuzz target for FUZZTIME
test: deps check
	$(GO) test -race -count=1 ./...
	scripts/e2e-tui.sh
	$(MAKE) --no-print-directory fuzz

## fuzz: run each fuzz target for FUZZTIME (a crash is a failure; its input lands in the package's testdata/fuzz; a run that ends in "context deadline exceeded" with no failing input is run once more)
fuzz:
	@for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t##*:}; \
		echo "fuzz $$pkg $$name ($(FUZZTIME))"; \
		ok=0; for try in 1 2; do \
			if $(GO) test -run='^$$' -fuzz="^$$name\$$" -fuzztime=$(FUZZTIME) $$pkg > /tmp/mcpi-fuzz.log 2>&1; then ok=1; break; fi; \
			if grep -q 'Failing input written' /tmp/mcpi-fuzz.log || ! grep -q 'context deadline exceeded' /tmp/mcpi-fuzz.log; then break; fi; \
			echo "  the fuzzer stopped on its own deadline without a failing input (a Go fuzzing fault): once more"; \
		done; \
		if [ $$ok = 0 ]; then cat /tmp/mcpi-fuzz.log; exit 1; fi; \
		tail -1 /tmp/mcpi-fuzz.log; \
	done

## check: gofmt, go vet, staticcheck and go mod tidy leave nothing to say
check:
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...
	$(GO) mod tidy -diff

## deps: install @modelcontextprotocol/server-everything, the conformance suite and Node 22 into .cache/npm, and build Jaeger into .cache/tools
deps:
	scripts/deps.sh
	scripts/jaeger.sh

## bench: mcpi against the floor, the Go SDK client and the Inspector CLI; start-up and the
## shell's TAB against 101763e; mcpi bench against the floor generator (docs/performance.md).
## what mcpi proxy adds to a frame. Each script checks its goals; a missed one makes the
## target fail after all four ran.
bench:
	@status=0; scripts/bench.sh || status=1; scripts/bench-startup.sh || status=1; \
	  scripts/bench-load.sh || status=1; scripts/bench-proxy.sh || status=1; exit $$status

## build: build the mcpi binary into ./bin, static (no cgo: no libc to load, 0.5 ms less to start)
build:
	CGO_ENABLED=0 $(GO) build -o bin/mcpi ./cmd/mcpi

## demo: run mcpi against its demo server
demo:
	$(GO) run ./cmd/mcpi demo
