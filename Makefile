# The README's commands. `make test` is what CI runs after installing services.
GO ?= go
PKGS ?= ./...

.PHONY: run test vet fixtures build bench fuzz load load-table

run:
	$(GO) run ./cmd/gateway

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "-s -w" -o bin/gateway ./cmd/gateway

fixtures:
	bash scripts/fetch-github-examples.sh
	bash scripts/fetch-github-openapi.sh

vet:
	$(GO) vet $(PKGS)

# gateway holds the real-time crash, scale-out and outage scenarios (minutes each):
# more than go test's default 10m per package on a busy machine.
test: fixtures vet
	$(GO) test -race -count=1 -timeout 20m $(PKGS)

bench: fixtures
	$(GO) test -run '^$$' -bench . -benchmem $(PKGS)

# Each fuzz target for FUZZTIME (default 10s).
fuzz:
	bash scripts/fuzz.sh

# The standard load scenario with its CPU per event and cost_ratio against the storage floor,
# then the recorded storm (issue 16), against freshly built gateways (SQLite; STORAGE=postgres
# REPLICAS=3 for scale-out). SCENARIO=storm runs the storm alone; OTEL=1 the max row without and
# with tracing into an in-process collector.
load: fixtures
	bash scripts/load.sh $(if $(OTEL),--otel,$(if $(SCENARIO),--scenario $(SCENARIO)))

# Every row of the load table (max, rate1000, rate50, threads10k, watches100k, watched), one JSON
# report per line, each with its CPU per event and cost_ratio against the storage floor.
load-table: fixtures
	bash scripts/load.sh table
