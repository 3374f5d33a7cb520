# Jobbie — the two commands: `make dev` runs it, `make test` tests it.
GO       ?= go
BIN      := bin/jobbie
DATA_DIR ?= ./jobbie-data
# Packages whose tests run under the race detector.
RACE_PKGS := ./tenancy/... ./internal/... ./shard/... ./control/... ./gateway/... ./client/... ./cmd/... ./wire/... ./embedded/...

.PHONY: dev build console console-test console-scale browser test unit examples-test e2e python-test ts-test outbox-test postgres vet bench bench-cluster bench-cpu bench-embedded bench-push bench-search chaos noisy fuzz clean
.PHONY: terraform-provider test-terraform docs-terraform docs-terraform-check
.PHONY: deploy-test image proto proto-check proto-baseline

dev: build
	$(BIN) dev --data-dir $(DATA_DIR)

# The version, commit and build date `jobbie version` prints, stamped
# into the binary (a plain go build says "dev" and Go's own VCS info).
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT  ?= $(shell git rev-parse HEAD 2>/dev/null)
DATE    ?= $(shell date -u +%Y-%m-%dT%H:%M:%SZ)
LDFLAGS := -X main.version=$(VERSION) -X main.commit=$(COMMIT) -X main.date=$(DATE)

build: console
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/jobbie

# `make install` copies the built jobbie to $(PREFIX)/bin, ~/.local/bin
# unless PREFIX says otherwise (PREFIX=/usr/local as root); that
# directory must be on the PATH.
PREFIX ?= $(HOME)/.local
.PHONY: install
install: build
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 0755 $(BIN) $(DESTDIR)$(PREFIX)/bin/jobbie
	@case ":$$PATH:" in *":$(PREFIX)/bin:"*) ;; *) echo "add $(PREFIX)/bin to your PATH: export PATH=$(PREFIX)/bin:\$$PATH";; esac

# The console's front end (TypeScript, Preact, Vite) into
# gateway/console/dist, which the binary embeds; `npm ci` from the
# committed lock file. A plain `go build` without it serves a page saying
# how to build it.
console:
	./scripts/build-console.sh build

# The front end's unit tests (vitest).
console-test:
	./scripts/build-console.sh test

# Debian's Chromium for the console's browser tests (e2e/console).
browser:
	./scripts/install-chromium.sh

vet:
	$(GO) vet ./...

# Unit and in-process integration tests under -race, the console's unit
# tests, then the end-to-end suites against the real binary: e2e/console
# drives the console in a real Chromium.
test: vet proto-check unit examples-test outbox-test console-test e2e python-test ts-test test-terraform docs-terraform-check deploy-test

unit:
	$(GO) test -race -count=1 -timeout 15m $(RACE_PKGS)

# The Go programs of examples/ (examples/embedded: an embedded node, then
# the same code against a jobbie dev of bin/jobbie, a plain go build).
examples-test:
	$(GO) build -o $(BIN) ./cmd/jobbie
	JOBBIE_BIN=$(CURDIR)/$(BIN) $(GO) test -race -count=1 -timeout 5m ./examples/...

# One package at a time (-p 1): the end-to-end suite's timing bounds and
# the browser tests each want the machine's cores to themselves.
e2e: build browser postgres
	JOBBIE_BIN=$(CURDIR)/$(BIN) $(GO) test -p 1 -count=1 -timeout 15m ./e2e/...

# Debian's PostgreSQL server, which the outbox's tests (outbox/ and
# e2e/outbox) start their own server from: one per test binary, on a
# random 127.0.0.1 port, as nobody when run as root.
postgres:
	./scripts/install-postgres.sh

# The transactional outbox (outbox/, docs/outbox.md) against real SQLite
# files and a real PostgreSQL server; its fault-injection tests against
# the real binary are in e2e/outbox (make e2e).
outbox-test: postgres
	$(GO) test -race -count=1 -timeout 10m ./outbox/...

# The Python SDK (clients/python) against a jobbie dev its tests start on
# random ports: Debian's pytest and mypy for Debian's python3 (no PyPI),
# installed by scripts/install-python-test-tools.sh; bin/jobbie is built
# first (a plain go build, quick when nothing changed); jobbie/types_gen.py
# checked current with docs/api/openapi.json and the package type-checked
# (mypy --strict) before pytest.
PYTHON ?= /usr/bin/python3
python-test:
	PYTHON=$(PYTHON) ./scripts/install-python-test-tools.sh
	$(GO) build -o $(BIN) ./cmd/jobbie
	cd clients/python && $(PYTHON) scripts/gen_types.py --check && $(PYTHON) -m mypy --strict jobbie && \
		JOBBIE_BIN=$(CURDIR)/$(BIN) $(PYTHON) -m pytest -q tests

# The TypeScript SDK (clients/typescript) against a jobbie dev its tests
# start on random ports: `npm ci` from the committed lock file, bin/jobbie
# (a plain go build, quick when nothing changed), src/api.gen.ts checked
# current with docs/api/openapi.json, tsc, then vitest.
ts-test:
	$(GO) build -o $(BIN) ./cmd/jobbie
	cd clients/typescript && npm ci --no-audit --no-fund --loglevel=error && node scripts/gen-types.mjs --check && npx tsc --noEmit && \
		JOBBIE_BIN=$(CURDIR)/$(BIN) npx vitest run

# The protocol (proto/, docs/api/grpc.md). `make proto` regenerates
# proto/gen after a change to proto/jobbie/v1; `make proto-check` (run by
# `make test`) lints it, checks it against proto/baseline.binpb for
# breaking changes (KEDA's external scaler protocol against
# proto/externalscaler.binpb, KEDA's own, which never moves), and checks
# proto/gen is current; `make
# proto-baseline` moves the baseline to the protocol as it is now, on
# purpose, once a release has shipped it. buf and the plugins are Go
# tools pinned in go.mod.
proto:
	cd proto && $(GO) tool buf generate
proto-check:
	GO=$(GO) ./scripts/proto-check.sh
proto-baseline:
	cd proto && $(GO) tool buf build -o baseline.binpb

# The Terraform provider, and a CLI configuration whose dev_overrides make
# terraform use it offline (docs/terraform.md).
terraform-provider:
	$(GO) build -o bin/terraform-provider-jobbie ./cmd/terraform-provider-jobbie
	printf 'provider_installation {\n  dev_overrides {\n    "jobbie/jobbie" = "%s"\n  }\n  direct {}\n}\n' "$(CURDIR)/bin" > bin/terraform-dev.tfrc
	@echo "export TF_CLI_CONFIG_FILE=$(CURDIR)/bin/terraform-dev.tfrc"

# The provider's acceptance tests: the terraform CLI against a jobbie dev
# on random ports (terraform must be on the PATH).
test-terraform: build
	TF_ACC=1 JOBBIE_BIN=$(CURDIR)/$(BIN) $(GO) test -count=1 -timeout 10m ./terraform-provider/...

# docs/terraform, generated by tfplugindocs from the schema and examples/.
docs-terraform:
	./terraform-provider/docs.sh
docs-terraform-check:
	./terraform-provider/docs.sh check

# deploy/ (docs/operate/deploy.md): jobbie-pod against a real shard node; the
# Helm chart rendered and linted with helm as a library (its own module,
# deploy/go.mod), every manifest strictly decoded into its Kubernetes type
# and checked; compose.yaml's wiring; every flag both use against jobbie;
# then both run as processes on loopback addresses, a self-hosted shard
# joining each through its tunnel (about 30 s).
# `make image` builds the container image without a registry: static
# binaries built here, then deploy/Dockerfile.local FROM scratch with
# podman (deploy/Dockerfile is the multi-stage build for where base
# images can be pulled).
IMAGE  ?= jobbie:dev
PODMAN ?= podman
deploy-test:
	cd deploy/pod && $(GO) test -count=1 ./...
	cd deploy && $(GO) test -count=1 ./...

image: console
	rm -rf deploy/.image && mkdir -p deploy/.image/fs/var/lib/jobbie deploy/.image/fs/etc/jobbie/pki deploy/.image/fs/etc/jobbie/ca
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "-s -w" -o deploy/.image/jobbie ./cmd/jobbie
	cd deploy/pod && CGO_ENABLED=0 $(GO) build -trimpath -ldflags "-s -w" -o ../.image/jobbie-pod .
	$(PODMAN) build -f deploy/Dockerfile.local -t $(IMAGE) deploy/.image

# Every console screen against a namespace of 1,000 queues and a million
# jobs, each held under a second (docs/BENCHMARKS.md); a few minutes.
console-scale: build browser
	JOBBIE_BIN=$(CURDIR)/$(BIN) JOBBIE_CONSOLE_SCALE=1000000 $(GO) test -count=1 -timeout 30m -run TestConsoleScale -v ./e2e/console/

# The full benchmark runs recorded in docs/BENCHMARKS.md.
bench: build
	./scripts/bench.sh $(BIN)

# Three-node shard cluster against a single node, three alternating pairs
# of 15 s runs with CPU per job per process (docs/BENCHMARKS.md); about
# two minutes.
bench-cluster: build
	./scripts/bench-cluster.sh $(BIN) 15s 3

# CPU per job all-in (server and load generator) with one job per
# enqueue, fetch and ack call, 4 producers and 16 workers: three 10 s runs
# (docs/BENCHMARKS.md, "Single-call path"); about a minute. BASE=<binary>
# alternates with another build.
bench-cpu: build
	./scripts/bench-cpu.sh $(BIN) 10s 3

# Embedded against jobbie dev: 10,000 jobs enqueued and worked in the
# example's process, on an embedded node and on a fresh jobbie dev, three
# times in turn, with jobs/s and CPU per job (docs/BENCHMARKS.md); about
# two minutes.
bench-embedded:
	$(GO) build -o $(BIN) ./cmd/jobbie
	./scripts/bench-embedded.sh $(BIN) 10000 3

# Push delivery: jobbie bench --push flat out and paced at 1,000 jobs/s
# against a fresh jobbie dev (docs/BENCHMARKS.md); about half a minute.
bench-push: build
	./scripts/bench-push.sh $(BIN) 10s 1

# The chaos suite at length: a shard leader killed every 10 s for 60 s
# under load (make test runs three kills), and a namespace moved back and
# forth four times under load between 3-node shards (make test moves it
# once between 1-node shards).
chaos: build
	JOBBIE_BIN=$(CURDIR)/$(BIN) JOBBIE_CHAOS_LONG=1 $(GO) test -count=1 -timeout 30m -run 'TestCluster|TestMove' -v ./e2e/

# Noisy neighbour: one tenant floods enqueues while another enqueues
# 200 jobs/s and works them, with fair admission on and off
# and with the flooding tenant on a plan (docs/BENCHMARKS.md); about
# four minutes. JOBBIE_NOISY_MODES=fair,plan runs some modes only.
noisy: build
	JOBBIE_BIN=$(CURDIR)/$(BIN) JOBBIE_NOISY=1 $(GO) test -count=1 -timeout 20m -run TestNoisyNeighbour -v ./e2e/

# Search and bulk over a million jobs (docs/BENCHMARKS.md); about five
# minutes. JOBBIE_BENCH_JOBS=100000 makes a quicker, smaller run.
bench-search:
	$(GO) test -run '^$$' -bench BenchmarkSearchMillion -benchtime 20x -timeout 60m ./shard/

# Every fuzz target of the module (scripts/fuzz.sh finds them: every
# func Fuzz* of a test file) for FUZZTIME each; make test runs only their
# seeds. docs/development.md lists what they cover.
FUZZTIME ?= 30s
fuzz:
	GO=$(GO) FUZZTIME=$(FUZZTIME) ./scripts/fuzz.sh

clean:
	rm -rf bin
