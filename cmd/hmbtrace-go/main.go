// Command hmbtrace-go instruments Go programs for hmbtrace without a source
// change: it adds a region to every function of the packages it is told to
// (the main module's by default) as the go command compiles them.
//
// It runs either as the go command's -toolexec program:
//
//	go build -toolexec=hmbtrace-go ./...
//
// or as a front end that runs the go command so:
//
//	hmbtrace-go [-packages list] [-filter file] [-tiny] [-v] build|install|run|test [go flags] [packages]
//
// The instrumented program starts a measurement from the HMB_* environment
// at its first probe and writes the trace when main.main returns or it calls
// os.Exit or log.Fatal, log.Fatalf or log.Fatalln (see package
// github.com/hmbtrace/hmbtrace/measure/auto). Each function gets
//
//	defer auto.Enter(site).End()
//
// as its first statement, site being a package-level region named as pprof
// names the function: pkg/path.Func, pkg/path.(*T).Method,
// pkg/path.T[...].Method, pkg/path.init.0, closures pkg/path.Func.func1 and
// nested ones pkg/path.Func.func1.1, with the function's file and line.
//
// Settings (front-end flags, or environment variables for -toolexec use):
//
//	HMBTRACE_GO_PACKAGES  -packages  comma-separated import-path patterns
//	                                 (`...` wildcards) to instrument; default:
//	                                 the main module(s). The standard library
//	                                 and hmbtrace are never instrumented.
//	HMBTRACE_GO_FILTER    -filter    a Score-P filter file (`hmbtrace score -g`
//	                                 writes one); excluded functions get no
//	                                 probe. Default: $HMB_FILTER_FILE.
//	HMBTRACE_GO_TINY=1    -tiny      also instrument the small functions the
//	                                 compiler would inline (by default left
//	                                 to it: a probe, a deferred call, keeps a
//	                                 function from being inlined).
//	HMBTRACE_GO_VERBOSE=1 -v         print what is instrumented and what not.
//
// Package measure/auto and its dependencies are built with the flags of the
// build that change how packages compile (-tags, -race, -gcflags, ...):
// the front end knows them; under a plain go build -toolexec they are read
// from the go command's command line on Linux, and only GOFLAGS elsewhere.
//
// The module being built must require github.com/hmbtrace/hmbtrace; as a
// tool of the module it does, and keeps doing through go mod tidy:
//
//	go get -tool github.com/hmbtrace/hmbtrace/cmd/hmbtrace-go
//	go tool hmbtrace-go build ./...
//
// Functions marked //go:nosplit, //go:systemstack, //go:nowritebarrier*,
// //go:norace, //go:linkname or //go:cgo_*, functions named _, cgo's
// generated files and the files the go command generates are not
// instrumented; so, in -cover builds, the covered packages, whose files
// the cover tool rewrites first, are not either.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	if len(args) > 0 && isTool(args[0]) {
		code, err := toolexec(args[0], args[1:])
		if err != nil {
			fmt.Fprintf(os.Stderr, "hmbtrace-go: %v\n", err)
			if code == 0 {
				code = 1
			}
		}
		return code
	}
	code, err := frontEnd(args)
	if err != nil {
		fmt.Fprintf(os.Stderr, "hmbtrace-go: %v\n", err)
		if code == 0 {
			code = 2
		}
	}
	return code
}

// isTool reports whether arg is a tool the go command runs through
// -toolexec: an absolute path, such as $GOROOT/pkg/tool/linux_amd64/compile.
func isTool(arg string) bool {
	return filepath.IsAbs(arg) && !strings.HasPrefix(filepath.Base(arg), "-")
}

// toolName is the tool's name without directory and .exe.
func toolName(path string) string {
	return strings.TrimSuffix(filepath.Base(path), ".exe")
}
