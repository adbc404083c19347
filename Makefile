# The README's commands. `make test` is what CI runs after installing services.
GO ?= go
PKGS ?= ./...

.PHONY: run test vet fixtures build bench fuzz

run:
	$(GO) run ./cmd/gateway

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "-s -w" -o bin/gateway ./cmd/gateway

fixtures:
	bash scripts/fetch-github-examples.sh

vet:
	$(GO) vet $(PKGS)

test: fixtures vet
	$(GO) test -race -count=1 $(PKGS)

bench: fixtures
	$(GO) test -run '^$$' -bench . -benchmem $(PKGS)
