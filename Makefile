# Portier build. `make test` is what CI runs (through .ci/run); `make run` starts the demo system.
# The pinned OPA binary comes from tools/ensure-opa.sh (found on PATH or built from the Go module proxy).

OPA_BIN := .tools/opa-path
NODE    := node
PORTIER := $(NODE) dist/cli/main.js
BUNDLE  := build/bundle.tar.gz
DATA_OUT := build/bundle-data
POLICY_SRC := $(shell find policies -name '*.rego' 2>/dev/null)
DATA_SRC := $(wildcard data/*.json) $(wildcard data/schemas/*.json)
TS_SRC := $(shell find src -name '*.ts' 2>/dev/null)

.PHONY: all deps opa build policies data-check fmt fmt-check policy-test matrix matrix-check test unit bench run clean typecheck

all: build

node_modules/.package-lock.json: package.json package-lock.json
	npm install --no-audit --no-fund
	@touch $@

deps: node_modules/.package-lock.json opa

# Resolve the pinned opa once per make run; the file holds its absolute path.
opa:
	@mkdir -p .tools && bash tools/ensure-opa.sh > $(OPA_BIN)
	@echo "opa: $$(cat $(OPA_BIN)) ($$($$(cat $(OPA_BIN)) version | head -1))"

dist/cli/main.js: $(TS_SRC) tsconfig.json node_modules/.package-lock.json
	npx tsc -p tsconfig.json
	@touch $@

typecheck: node_modules/.package-lock.json
	npx tsc -p tsconfig.test.json

# Validate data/ against its schemas and write the bundle's data document.
data-check: dist/cli/main.js
	$(PORTIER) data build --out $(DATA_OUT)

fmt: opa
	$$(cat $(OPA_BIN)) fmt --write policies

fmt-check: opa
	@out=$$($$(cat $(OPA_BIN)) fmt --list policies); \
	if [ -n "$$out" ]; then echo "opa fmt: these files are not formatted (run make fmt):"; echo "$$out"; exit 1; fi

policies: opa data-check fmt-check
	$$(cat $(OPA_BIN)) check --strict policies $(DATA_OUT)
	$(PORTIER) bundle build --opa $$(cat $(OPA_BIN)) --out $(BUNDLE)

build: dist/cli/main.js policies matrix

matrix: dist/cli/main.js
	$(PORTIER) matrix --bundle $(BUNDLE) --format md > docs/access-matrix.md

# CI: the committed matrix must be what the policy computes.
matrix-check: dist/cli/main.js
	@$(PORTIER) matrix --bundle $(BUNDLE) --format md > build/access-matrix.md
	@diff -u docs/access-matrix.md build/access-matrix.md || { echo "docs/access-matrix.md drifted from the policy: run make matrix and commit"; exit 1; }

policy-test: opa data-check
	$(PORTIER) test --opa $$(cat $(OPA_BIN))

unit: dist/cli/main.js policies
	npx vitest run --reporter=default --reporter=json --outputFile.json=build/vitest-report.json
	@node -e 'const r=require("./build/vitest-report.json"); console.log("vitest: " + r.numPassedTests + " passed, " + r.numFailedTests + " failed" + (r.numPendingTests ? ", " + r.numPendingTests + " skipped" : ""))'

test: deps dist/cli/main.js policies matrix-check policy-test typecheck unit

bench: deps build
	npx tsx test/bench/run-all.ts

run: deps build
	$(PORTIER) dev

clean:
	rm -rf dist build
