# The one test command: `make test` (what .ci/run calls).
GO ?= go
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2

.PHONY: test check deps build demo

## test: install the pinned npm test peers, run the static checks and every test with the race detector
test: deps check
	$(GO) test -race -count=1 ./...

## check: gofmt, go vet, staticcheck and go mod tidy leave nothing to say
check:
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...
	$(GO) mod tidy -diff

## deps: install @modelcontextprotocol/server-everything, the conformance suite and Node 22 into .cache/npm
deps:
	scripts/deps.sh

## build: build the mcpi binary into ./bin
build:
	$(GO) build -o bin/mcpi ./cmd/mcpi

## demo: run mcpi against its demo server
demo:
	$(GO) run ./cmd/mcpi demo
