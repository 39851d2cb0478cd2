package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// family is the compiler behind a command, as far as its instrumentation
// flags go.
type family int8

const (
	familyUnknown family = iota // -finstrument-functions only
	familyGCC                   // -finstrument-functions-exclude-*-list
	familyClang                 // -finstrument-functions-after-inlining
)

func (f family) String() string {
	switch f {
	case familyGCC:
		return "GCC"
	case familyClang:
		return "Clang"
	}
	return "an unknown compiler"
}

// compilerInfo is what a probe of the compiler found out.
type compilerInfo struct {
	family     family
	systemDirs []string // the compiler's system include directories
	version    string   // GCC's version, as -dumpfullversion prints it
	configured string   // GCC's "Configured with:" line
}

// env is what plan asks of the machine; the tests replace it.
type env struct {
	// probe runs the compiler (with the arguments given) and returns its
	// combined output.
	probe func(compiler string, args ...string) ([]byte, error)
	// lib finds the installed library.
	lib func() (libInfo, error)
	// exists reports whether a file exists.
	exists func(path string) bool
	// readFile reads a file.
	readFile func(path string) ([]byte, error)
}

func newEnv() env {
	return env{probe: runProbe, lib: findLibrary, exists: fileExists, readFile: os.ReadFile}
}

// runProbe runs a compiler for what it says about itself; a hung compiler
// must not hang the build.
func runProbe(compiler string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, compiler, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.Bytes(), err
}

var (
	gccVersion   = regexp.MustCompile(`(?m)^gcc version (\d\S*)`)
	gccConfig    = regexp.MustCompile(`(?m)^Configured with: .*$`)
	clangVersion = regexp.MustCompile(`(?m)clang version \d`)
)

// identify asks the compiler for its version and, for C and C++, its system
// include directories (GCC and Clang print both with -v -E). l is the
// language whose headers matter: C++'s include C's.
func identify(e env, compiler string, l lang) compilerInfo {
	var out []byte
	switch l {
	case langC, langCXX:
		x := "c"
		if l == langCXX {
			x = "c++"
		}
		out, _ = e.probe(compiler, "-v", "-E", "-x", x, "/dev/null")
	default:
		out, _ = e.probe(compiler, "-v")
	}
	var info compilerInfo
	switch {
	case clangVersion.Match(out):
		info.family = familyClang
	case gccVersion.Match(out):
		info.family = familyGCC
		info.version = string(gccVersion.FindSubmatch(out)[1])
		info.configured = strings.TrimSpace(string(gccConfig.Find(out)))
	}
	in := false
	for _, line := range strings.Split(string(out), "\n") {
		switch {
		case strings.HasPrefix(line, "#include <...> search starts here:"):
			in = true
		case strings.HasPrefix(line, "End of search list."):
			in = false
		case in && strings.HasPrefix(line, " "):
			dir := strings.TrimSpace(line)
			// Clang marks framework directories so.
			dir = strings.TrimSuffix(dir, " (framework directory)")
			info.systemDirs = append(info.systemDirs, dir)
		}
	}
	return info
}

// plainCompilers are names that are never MPI wrappers: no probe for them.
var plainCompilers = []string{
	"cc", "c++", "gcc", "g++", "gfortran", "clang", "clang++", "flang", "flang-new",
	"icc", "icpc", "icx", "icpx", "ifort", "ifx", "nvc", "nvc++", "nvfortran",
	"pgcc", "pgc++", "pgfortran", "f77", "f95", "xlc", "xlC", "xlf", "xlf90",
}

// isMPI reports whether the compiler is an MPI compiler wrapper: by its name
// (mpicc, mpicxx, mpif90, ... of Open MPI, MPICH and Intel MPI), and for a
// name it does not know, by whether Open MPI's -showme or MPICH's -show
// works.
func isMPI(e env, compiler string) bool {
	base := filepath.Base(compiler)
	if strings.HasPrefix(base, "mpi") {
		return true
	}
	for _, p := range plainCompilers {
		// gcc-12, x86_64-linux-gnu-gcc-12, clang++-16
		if base == p || strings.HasPrefix(base, p+"-") || strings.HasSuffix(base, "-"+p) || strings.Contains(base, "-"+p+"-") {
			return false
		}
	}
	for _, flag := range []string{"-showme:command", "-show"} {
		if out, err := e.probe(compiler, flag); err == nil && len(bytes.TrimSpace(out)) > 0 {
			return true
		}
	}
	return false
}
