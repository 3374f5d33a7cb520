# Jobbie — the two commands: `make dev` runs it, `make test` tests it.
GO       ?= go
BIN      := bin/jobbie
DATA_DIR ?= ./jobbie-data
# Packages whose tests run under the race detector.
RACE_PKGS := ./tenancy/... ./internal/... ./shard/... ./control/... ./gateway/... ./client/... ./cmd/... ./wire/...

.PHONY: dev build test unit e2e vet bench bench-cluster bench-search chaos fuzz clean

dev: build
	$(BIN) dev --data-dir $(DATA_DIR)

build:
	$(GO) build -o $(BIN) ./cmd/jobbie

vet:
	$(GO) vet ./...

# Unit and in-process integration tests under -race, then the end-to-end
# suite against the real binary.
test: vet unit e2e

unit:
	$(GO) test -race -count=1 -timeout 15m $(RACE_PKGS)

e2e: build
	JOBBIE_BIN=$(CURDIR)/$(BIN) $(GO) test -count=1 -timeout 15m ./e2e/...

# The full benchmark runs recorded in docs/BENCHMARKS.md.
bench: build
	./scripts/bench.sh $(BIN)

# Three-node shard cluster against a single node, three alternating pairs
# of 15 s runs with CPU per job per process (docs/BENCHMARKS.md); about
# two minutes.
bench-cluster: build
	./scripts/bench-cluster.sh $(BIN) 15s 3

# The chaos suite at length: a shard leader killed every 10 s for 60 s
# under load (make test runs three kills).
chaos: build
	JOBBIE_BIN=$(CURDIR)/$(BIN) JOBBIE_CHAOS_LONG=1 $(GO) test -count=1 -timeout 30m -run 'TestCluster' -v ./e2e/

# Search and bulk over a million jobs (docs/BENCHMARKS.md); about five
# minutes. JOBBIE_BENCH_JOBS=100000 makes a quicker, smaller run.
bench-search:
	$(GO) test -run '^$$' -bench BenchmarkSearchMillion -benchtime 20x -timeout 60m ./shard/

# Every request decoder of the shard, fuzzed through a real node for
# FUZZTIME each (make test runs only their seeds); about five minutes.
FUZZTIME ?= 30s
FUZZ_TARGETS := FuzzEnqueue FuzzEnqueueBatch FuzzFetch FuzzAck FuzzAckBatchAndHeartbeat FuzzSearch FuzzBulk FuzzSchedule
fuzz:
	@for f in $(FUZZ_TARGETS); do \
		echo "fuzz $$f for $(FUZZTIME)"; \
		$(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) ./shard/fuzz/ || exit 1; \
	done

clean:
	rm -rf bin
