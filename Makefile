# git-hegel — run `make help` for the targets.

# Install where PATH already looks: /usr/local when writable, else ~/.local.
PREFIX  ?= $(shell if [ -w /usr/local/bin ] || [ "$$(id -u)" = 0 ]; then echo /usr/local; else echo $$HOME/.local; fi)
BINDIR  ?= $(PREFIX)/bin
MANDIR  ?= $(PREFIX)/share/man/man1
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
GO      ?= go
LDFLAGS := -X main.version=$(VERSION)

.DEFAULT_GOAL := help
.PHONY: help build install uninstall test test-short vet vet-cross bench fuzz man screenshots clean

# help shows $(PREFIX) in the descriptions as the value install would use;
# it reaches awk through the environment, so no quoting can break it.
help: export HEGEL_HELP_PREFIX := $(PREFIX)
help: ## List the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-z-]+:.*## / {d = $$2; i = index(d, "$$(PREFIX)"); if (i) d = substr(d, 1, i-1) ENVIRON["HEGEL_HELP_PREFIX"] substr(d, i+9); printf "  %-12s %s\n", $$1, d}' $(MAKEFILE_LIST)

# A static binary (no cgo): every command, and the agent hook on each tool
# call, starts without the dynamic loader, 0.4 ms sooner. Nothing here needs
# libc: git does the networking, and the dashboard listens on loopback.
build: ## Build bin/git-hegel
	CGO_ENABLED=0 $(GO) build -ldflags "$(LDFLAGS)" -o bin/git-hegel ./cmd/git-hegel

install: build man ## Install git-hegel and its man page (PREFIX=$(PREFIX))
	install -d "$(BINDIR)" "$(MANDIR)"
	install -m 0755 bin/git-hegel "$(BINDIR)/git-hegel"
	install -m 0644 docs/git-hegel.1 "$(MANDIR)/git-hegel.1"
	@case ":$$PATH:" in *":$(BINDIR):"*) echo "Installed $(BINDIR)/git-hegel; try: git hegel start discovery";; \
	  *) echo "Installed $(BINDIR)/git-hegel, but $(BINDIR) is not on PATH: add it, e.g. export PATH=\"$(BINDIR):\$$PATH\"";; esac

uninstall: ## Remove what install put in place
	rm -f "$(BINDIR)/git-hegel" "$(MANDIR)/git-hegel.1"

test: vet vet-cross ## Run every test: unit, storage contract, race, scripts through real git
	$(GO) test -count=1 -timeout 30m ./... ./testdata/bench/
	$(GO) test -count=1 -timeout 30m -race ./engine/ ./gitstore/...
	$(GO) test -count=1 -timeout 30m -race -short ./rollback/

test-short: ## Quick tests (skips the long concurrency runs)
	$(GO) test -short ./...

vet: ## go vet (the benchmark driver in testdata/ too) and a gofmt check
	$(GO) vet ./... ./testdata/bench/...
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

# The code and its tests must compile for the systems git runs on, not only
# the one the tests run on: vet type-checks both without running anything.
vet-cross: ## go vet for macOS and Windows, tests included
	GOOS=darwin $(GO) vet ./... ./testdata/bench/...
	GOOS=windows $(GO) vet ./... ./testdata/bench/...

bench: build ## Benchmarks: Go benchmarks plus whole-command comparisons with git (see docs/benchmarks.md)
	$(GO) test -run '^$$' -bench . -benchmem -benchtime=20x ./gitstore/ ./engine/ ./rollback/
	$(GO) test -run '^$$' -bench '^BenchmarkWeb' -benchtime=30x ./cmd/git-hegel/
	$(GO) run ./testdata/bench

fuzz: ## Fuzz the workflow YAML loader, the log's state reader, the agents' settings editor, commands and their values, 60s each
	$(GO) test -run '^$$' -fuzz FuzzParseWorkflow -fuzztime 60s ./engine/workflow/
	$(GO) test -run '^$$' -fuzz FuzzChainStateOf -fuzztime 60s ./gitstore/
	$(GO) test -run '^$$' -fuzz FuzzSettingsRoundTrip -fuzztime 60s ./engine/agent/
	$(GO) test -run '^$$' -fuzz FuzzMCPConfigRoundTrip -fuzztime 60s ./engine/agent/
	$(GO) test -run '^$$' -fuzz '^FuzzShellCommand$$' -fuzztime 60s ./engine/workflow/
	$(GO) test -run '^$$' -fuzz '^FuzzCommandValues$$' -fuzztime 60s ./cmd/git-hegel/runexec/

man: ## Check that the man page renders without warnings
	@if command -v groff >/dev/null; then \
	  groff -man -Tutf8 -ww -z docs/git-hegel.1 2>&1 | (! grep .) || { echo "docs/git-hegel.1 has warnings"; exit 1; }; \
	else echo "groff not found; skipping the man page check"; fi

screenshots: ## Retake docs/web-*.png from the browser test (needs Chromium)
	HEGEL_SCREENSHOTS=docs $(GO) test -count=1 -run '^TestBrowser$$' -v ./cmd/git-hegel/
	@ls docs/web-*.png >/dev/null 2>&1 || { echo "no screenshots taken (is Chromium installed?)"; exit 1; }

clean: ## Remove build output
	rm -rf bin build
