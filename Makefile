# bcs-mesos — see README.md. The two set-up commands are `make run` and `make test`.

GO        ?= go
BIN       := bin
CMDS      := $(notdir $(wildcard cmd/*))
FUZZTIME  ?= 30s
BENCHTIME ?= 3x

.PHONY: all build test test-deps run bench fuzz lint clean

all: build

## build: compile every package and the binaries under cmd/ into bin/
build:
	$(GO) build ./...
	@mkdir -p $(BIN)
	@for c in $(CMDS); do echo "go build -o $(BIN)/$$c ./cmd/$$c"; $(GO) build -o $(BIN)/$$c ./cmd/$$c || exit 1; done

## test: install missing test dependencies, then run every test
test: test-deps lint
	$(GO) test -count=1 -timeout 20m ./...

## test-deps: install what the tests need when missing (Debian packages, a running dockerd, the image bcs-test/busybox)
test-deps:
	@scripts/test-deps

## run: the whole system on one machine (bcs-scheduler --dev)
run: build
	@if [ -x $(BIN)/bcs-scheduler ]; then \
		exec $(BIN)/bcs-scheduler --dev; \
	else \
		echo "make run: cmd/bcs-scheduler does not exist yet; so far the repository holds the"; \
		echo "placement engine (pkg/constraint, pkg/offer). Try: make test, make bench."; \
	fi

## bench: the placement benchmarks (figures reported as placements/s)
bench:
	$(GO) test -run '^$$' -bench . -benchtime $(BENCHTIME) -cpu 1 ./pkg/...

## fuzz: run every fuzz target for FUZZTIME each
fuzz:
	@for pkg in $$($(GO) list ./...); do \
		for target in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
			echo "fuzz $$pkg $$target ($(FUZZTIME))"; \
			$(GO) test -run '^$$' -fuzz "^$$target$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
		done; \
	done

## lint: go vet and gofmt must be clean
lint:
	$(GO) vet ./...
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

clean:
	rm -rf $(BIN)
