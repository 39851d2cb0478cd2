# hmbtrace: `make test` runs everything CI runs; `make bench` measures.
GO       ?= go
export GOTOOLCHAIN := local
GOBIN    := $(shell $(GO) env GOPATH)/bin
# Packages with concurrent code, tested again under the race detector.
RACE_PKGS := ./buffer/... ./measure/... ./hwcounter/... ./export/... ./analysis/waitstate/...

PREFIX   ?= /usr/local

.PHONY: test deps lint cross unit race bench heat clean cshim install bench-c stress

test: deps lint cross unit race

deps:
	@.ci/deps

# The reliability probes too long for make test (about an hour): repeated
# races, signals and recoveries, and every fuzz target (.ci/stress).
stress: deps
	@.ci/stress

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GOBIN)/staticcheck ./...

# The tests run without the shell's HMB_* variables, which Start applies
# over every Config (HMB_ARTIFACTS is the tests' own).
NOENV := env $(addprefix -u ,$(filter-out HMB_ARTIFACTS,$(filter HMB_%,$(.VARIABLES))))

# cshim's tests take about 6 of go test's default 10 minutes on CI's two
# cores; a busier machine must not fail them for that alone.
unit:
	$(NOENV) $(GO) test -count=1 -timeout 25m ./...

race:
	$(NOENV) $(GO) test -count=1 -race -short $(RACE_PKGS)

# Every comparison against the peers, side by side (bench.txt, charts in
# bench-charts/), then the hot-path Go benchmarks five times (bench-go.txt,
# for benchstat).
bench:
	$(GO) run ./bench -svg bench-charts | tee bench.txt
	$(GO) test -run '^$$' -bench . -benchmem -count 5 ./encode ./measure ./internal/clock ./buffer | tee bench-go.txt

# The C ABI: libhmbtrace.so, libhmbtrace.a, hmbtrace.h, the Fortran module,
# hmbtrace.pc, bin/hmbtrace-instrument and bin/hmbtrace in build/; install copies them under PREFIX.
cshim:
	$(MAKE) -C cshim cshim

install:
	$(MAKE) -C cshim install PREFIX=$(PREFIX)

# The C probe against libotf2's event writer, same clock.
bench-c:
	$(MAKE) -C cshim bench-c

# The main job: the instrumented example writes a trace and prints its summary.
heat:
	$(GO) run ./examples/heat

clean:
	rm -rf hmb-out bench.txt bench-go.txt bench-charts build

# Every platform: the library and the commands build for linux, darwin and
# windows on amd64 and arm64, with the probes in and compiled out, and vet
# (test files included) for windows, the system furthest from Linux, and
# for the arm64 Mac, where traces are read on a laptop; and the 32-bit
# Linux on arm (CROSS_32), where an int holds 32 bits. cshim, the cgo
# shim, is Linux's only and left out.
CROSS_OS   := linux darwin windows
CROSS_ARCH := amd64 arm64
CROSS_32   := linux/arm
cross:
	@pkgs=$$($(GO) list ./... | grep -v -E '/cshim(/|$$)') || exit 1; \
	for os in $(CROSS_OS); do for arch in $(CROSS_ARCH); do for tags in "" hmbtrace_off; do \
	  echo "cross: GOOS=$$os GOARCH=$$arch CGO_ENABLED=0 $(GO) build $${tags:+-tags $$tags }-o /dev/null"; \
	  GOOS=$$os GOARCH=$$arch CGO_ENABLED=0 $(GO) build -tags "$$tags" -o /dev/null $$pkgs || exit 1; \
	done; done; done; \
	for t in $(CROSS_32); do \
	  echo "cross: GOOS=$${t%/*} GOARCH=$${t#*/} CGO_ENABLED=0 $(GO) build -o /dev/null"; \
	  GOOS=$${t%/*} GOARCH=$${t#*/} CGO_ENABLED=0 $(GO) build -o /dev/null $$pkgs || exit 1; \
	done; \
	for t in windows/amd64 darwin/arm64; do \
	  echo "cross: GOOS=$${t%/*} GOARCH=$${t#*/} CGO_ENABLED=0 $(GO) vet"; \
	  GOOS=$${t%/*} GOARCH=$${t#*/} CGO_ENABLED=0 $(GO) vet $$pkgs || exit 1; \
	done
