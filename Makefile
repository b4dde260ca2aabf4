# bcs-mesos — see README.md. The two set-up commands are `make run` and `make test`.

GO        ?= go
BIN       := bin
CMDS      := $(notdir $(wildcard cmd/*))
FUZZTIME  ?= 30s
BENCHTIME ?= 3x
DATA      ?= ./bcs-data
# make run's addresses and more bcs-scheduler flags: LISTEN=127.0.0.1:9080 make run
LISTEN    ?= 127.0.0.1:8080
MASTER    ?= 127.0.0.1:5050
ARGS      ?=

STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
# The pure packages (no etcd, Docker, processes or dev cluster): seconds.
UNIT_PKGS := ./pkg/constraint/... ./pkg/offer/... ./pkg/manifest/... ./pkg/strictjson ./pkg/field \
	./pkg/launch ./pkg/mesoswire ./pkg/executor ./proto ./internal/...
# The packages whose goroutines share state: the scheduler's driver and its
# output pipeline, leadership, the store, the Mesos connection, the dev
# cluster, the API server.
RACE_PKGS := ./pkg/scheduler ./pkg/schedulerd ./pkg/store ./pkg/mesosconn ./pkg/devcluster ./pkg/api

.PHONY: all build test test-e2e test-unit test-race test-deps run examples bench bench-e2e fuzz lint clean

all: build

## build: compile every package and the binaries under cmd/ into bin/
build:
	@$(GO) mod download # quietly: go build would print a line per module it fetches
	$(GO) build ./...
	@mkdir -p $(BIN)
	@for c in $(CMDS); do echo "go build -o $(BIN)/$$c ./cmd/$$c"; $(GO) build -o $(BIN)/$$c ./cmd/$$c || exit 1; done

## test: install missing test dependencies, then run every test: the e2e suite
## in the background while the other packages run, then the race detector's
test: test-deps lint
	@GO=$(GO) scripts/test-all $(RACE_PKGS)

## test-e2e: the end-to-end suite alone, two tests at a time (E2E_WORKERS=1 runs one; E2E_RUN=regexp picks some; part of test)
test-e2e:
	@GO=$(GO) scripts/test-e2e

## test-race: the packages whose goroutines share state, under the race detector (part of test)
test-race:
	$(GO) test -count=1 -race -timeout 10m $(RACE_PKGS)

## test-unit: the pure packages and the scheduler's scenario scripts, in seconds
test-unit:
	$(GO) test -count=1 $(UNIT_PKGS)
	$(GO) test -count=1 -run '^TestScenarios$$' ./pkg/scheduler

## test-deps: install what the tests need when missing (Debian packages, a running dockerd, the image bcs-test/busybox)
test-deps:
	@scripts/test-deps

## run: the whole system on one machine: bcs-scheduler --dev (embedded etcd,
## dev cluster, real executors), API on $(LISTEN), master on $(MASTER),
## everything under $(DATA), more flags in ARGS. dockerd and the example image
## come from test-deps; the pods' network containers run that image too (no
## registry needed).
run: build examples test-deps
	exec $(BIN)/bcs-scheduler --dev --data-dir $(DATA) --listen $(LISTEN) --dev-master-listen $(MASTER) \
		--container-executor-arg=--network-image=bcs-test/busybox:latest \
		'--container-executor-arg=--network-command=sleep 2147483647' $(ARGS)

## examples: the quick start's packages, served by bcs-scheduler at /files/: gamesvr.tar.gz,
## and gamesvr-v2.tar.gz (the same with a VERSION file) for the hot patch example
examples:
	@mkdir -p $(DATA)/files $(BIN)/gamesvr-package
	$(GO) build -o $(BIN)/gamesvr-package/gamesvr ./examples/gamesvr
	cp examples/gamesvr/package/*.sh $(BIN)/gamesvr-package/
	rm -f $(BIN)/gamesvr-package/VERSION
	tar -C $(BIN)/gamesvr-package -czf $(DATA)/files/gamesvr.tar.gz .
	echo v2 >$(BIN)/gamesvr-package/VERSION
	tar -C $(BIN)/gamesvr-package -czf $(DATA)/files/gamesvr-v2.tar.gz .

## bench: the placement benchmarks (figures reported as placements/s)
bench:
	$(GO) test -run '^$$' -bench . -benchtime $(BENCHTIME) -cpu 1 ./pkg/...

## bench-e2e: the end-to-end scale benchmark (e2e/scale): etcd and the dev cluster with simulated
## executors in one process, bcs-scheduler in its own; 10,000 task groups on 100 agents and
## 100,000 on 5,000, each placed spread, plain and mixed (BENCH_E2E picks, e.g. 5kAgents/plain;
## 1MOn10kAgents the million; Rollout the rollouts at size; Failover a killed leader), each run waiting at most CAP
BENCH_E2E ?= Running10k|Running100k
CAP       ?= 10m
bench-e2e:
	$(GO) test -run '^$$' -bench '$(BENCH_E2E)' -benchtime 1x -timeout 0 ./e2e/scale -cap $(CAP)

## fuzz: run every fuzz target for FUZZTIME each
fuzz:
	@for pkg in $$($(GO) list ./...); do \
		for target in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
			echo "fuzz $$pkg $$target ($(FUZZTIME))"; \
			$(GO) test -run '^$$' -fuzz "^$$target$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
		done; \
	done

## lint: go vet, gofmt, staticcheck and go mod tidy must be clean
lint:
	$(GO) vet ./...
	$(GO) mod tidy -diff
	$(GO) run $(STATICCHECK) ./...
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

clean:
	rm -rf $(BIN)
