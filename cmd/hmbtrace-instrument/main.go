// Command hmbtrace-instrument is a prefix for compile and link commands that
// builds a program traced by hmbtrace, as Score-P's scorep prefix does
// (Knüpfer et al.):
//
//	hmbtrace-instrument mpicxx -O3 -c lulesh.cc
//	hmbtrace-instrument mpicxx -o lulesh lulesh.o
//	make CC="hmbtrace-instrument mpicc" FC="hmbtrace-instrument mpif90"
//	make CC=hmbtrace-mpicc FC=hmbtrace-mpif90
//
// Called through a link named hmbtrace-COMPILER (make cshim makes them for
// the usual compilers), it is "hmbtrace-instrument COMPILER", with its own
// options taken from HMB_INSTRUMENT_FLAGS: for build systems that want the
// compiler to be one word, as Score-P's scorep-mpicc wrappers are. Given
// on its command line, those options are refused, not passed on: the
// compiler would read them as its own.
//
// On a compile with GCC (gcc, g++, gfortran and MPI wrappers around them) it
// loads hmbtrace's GCC plugin, which instruments functions after inlining
// with the -finstrument-functions hooks, leaves out the functions of system
// headers (the C++ standard library, the system's libraries) and applies a
// filter file exactly. Without the plugin, and for other compilers, it adds
// -finstrument-functions, with system headers excluded and the exact names
// a filter file excludes dropped where the compiler can do so without
// dropping more. On a link it appends, after
// the objects, libhmbtrace and what the program needs of it: the MPI
// wrappers for an MPI compiler, the OpenMP adapter for -fopenmp, and
// flags that make hmbtrace's instrumentation hooks win over glibc's no-op
// ones. Anything else (-E, -M, --version, ...) runs unchanged.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"
)

// version is the hmbtrace release, as in hmbtrace.pc.
const version = "0.1.0"

const usage = `usage: hmbtrace-instrument [options] COMPILER [ARGS...]

A prefix for compile and link commands: the program it builds is traced by
hmbtrace. Examples:
  hmbtrace-instrument mpicxx -O3 -c lulesh.cc
  hmbtrace-instrument mpicxx -o lulesh lulesh.o
  make CC="hmbtrace-instrument mpicc" CXX="hmbtrace-instrument mpicxx"
  CC="hmbtrace-instrument mpicc" cmake ..

Compiling (-c, -S, or sources given to a link) instruments the functions of
the program. With GCC (gcc, g++, gfortran, MPI wrappers around them) the
hmbtrace GCC plugin does it after inlining: an inlined function costs
nothing, a function with an out-of-line body is traced. With -flto the link
loads the plugin too, since lto1 optimises there. Otherwise (another
compiler, --no-plugin, no plugin installed) it adds
-finstrument-functions, which with GCC also instruments every inlined copy.
The functions of system headers (the C++ standard library, headers in the
compiler's system include directories and -isystem ones) are not
instrumented. Linking appends libhmbtrace after the objects, with the MPI
wrappers (libhmbtrace-mpi) for an MPI compiler wrapper or a command that
names the MPI library (CMake's MPI::MPI_C: right before it) and the OpenMP
adapter for -fopenmp when it is installed. -E, -M, -MM and queries run
unchanged.

Named forms: hmbtrace-cc, hmbtrace-gcc, hmbtrace-g++, hmbtrace-gfortran,
hmbtrace-clang, hmbtrace-clang++, hmbtrace-mpicc, hmbtrace-mpicxx,
hmbtrace-mpif90, hmbtrace-mpifort, ... (links to this program, made by make
cshim; any hmbtrace-COMPILER link works) are "hmbtrace-instrument COMPILER",
for build systems that take the compiler as one word:
  make CC=hmbtrace-mpicc FC=hmbtrace-mpif90
Their options come from HMB_INSTRUMENT_FLAGS (e.g. "--verbose --filter f"):
given on their command line, --user, --filter, --verbose, --no-plugin and
--no-exclude-system are refused, as the compiler would read them as its own.

Options (before the compiler):
  --user               no compiler instrumentation: only the hmb_* API calls of
                       the program are traced (the library is still linked)
  --filter FILE        a Score-P filter file (default: $HMB_FILTER_FILE); the
                       GCC plugin leaves out exactly what it excludes (without
                       the plugin, GCC drops the exact names it excludes where
                       its substring match drops nothing else); the run-time
                       filter (HMB_FILTER_FILE) applies the whole file. The
                       link names the rules that matched no function of the
                       program (a name spelled as another build spells it)
  --no-exclude-system  instrument the functions of system headers too
  --no-plugin          with GCC, use -finstrument-functions, not the plugin
  --verbose            print the command that runs
  --version            print the version
  -h, --help           this help

The library is looked for next to this program (../lib) and then through
pkg-config (hmbtrace.pc on PKG_CONFIG_PATH).
`

// options are hmbtrace-instrument's own, given before the compiler.
type options struct {
	user            bool
	verbose         bool
	noExcludeSystem bool
	noPlugin        bool
	filterFile      string
}

func main() {
	if err := namedFormCheck(os.Args[0], os.Args[1:], os.Getenv(flagsVar)); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	os.Exit(run(wrapperArgs(os.Args[0], os.Args[1:], os.Getenv(flagsVar)), os.Stdout, os.Stderr))
}

// flagsVar holds hmbtrace-instrument's options for its named forms.
const flagsVar = "HMB_INSTRUMENT_FLAGS"

// wrapperArgs returns the arguments run takes for a program called as
// argv0 with args: unchanged for hmbtrace-instrument; for a link named
// hmbtrace-COMPILER, the options in flags, then COMPILER and args. The
// "--" keeps the compiler's own arguments from being read as options, so
// that "hmbtrace-mpicc --version" is mpicc's, as build tools expect of a
// compiler.
func wrapperArgs(argv0 string, args []string, flags string) []string {
	compiler, ok := strings.CutPrefix(filepath.Base(argv0), "hmbtrace-")
	if !ok || compiler == "" || compiler == "instrument" || strings.HasPrefix(compiler, "instrument.") {
		return args
	}
	out := append(strings.Fields(flags), "--", compiler)
	return append(out, args...)
}

// run does everything but exit, for the tests; it returns the exit status.
// On success it does not return: the compiler replaces this process.
func run(args []string, stdout, stderr io.Writer) int {
	opts, rest, err := parseOptions(args)
	if errors.Is(err, errHelp) {
		fmt.Fprint(stdout, usage)
		return 0
	}
	if errors.Is(err, errVersion) {
		fmt.Fprintf(stdout, "hmbtrace-instrument %s%s\n", version, revision())
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "hmbtrace-instrument: %v\n", err)
		return 2
	}
	if runtime.GOOS != "linux" {
		// It builds everywhere, but what it links (libhmbtrace, the cgo
		// shim) and its GCC plugin are built on Linux only.
		fmt.Fprintf(stderr, "hmbtrace-instrument: libhmbtrace, which it links into the program, needs Linux (this is %s)\n", runtime.GOOS)
		return 1
	}
	argv, notes, err := plan(opts, rest, newEnv())
	for _, n := range notes {
		if !n.verbose || opts.verbose {
			fmt.Fprintf(stderr, "hmbtrace-instrument: %s\n", n.text)
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "hmbtrace-instrument: %v\n", err)
		return 1
	}
	if opts.verbose {
		fmt.Fprintf(stderr, "hmbtrace-instrument: %s\n", shellQuote(argv))
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		fmt.Fprintf(stderr, "hmbtrace-instrument: compiler %s: %v\n", argv[0], err)
		return 1
	}
	if c := parseCmdline(rest); c.mode == modeLink && opts.filterFile != "" && !opts.user {
		// The link runs as a child, so that the filter's rules can be
		// checked against what it linked (unmatched.go).
		return runAndCheckFilter(path, argv, opts.filterFile, linkOutput(c.args), stderr)
	}
	// exec keeps the compiler's exit status, signals and process id, as
	// build tools expect of a compiler.
	err = syscall.Exec(path, argv, os.Environ())
	fmt.Fprintf(stderr, "hmbtrace-instrument: running %s: %v\n", path, err)
	return 1
}

var (
	errHelp    = errors.New("help")
	errVersion = errors.New("version")
)

// parseOptions splits the leading options of hmbtrace-instrument from the
// compiler's command line.
func parseOptions(args []string) (options, []string, error) {
	var o options
	o.filterFile = os.Getenv("HMB_FILTER_FILE")
	i := 0
loop:
	for ; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			i++
			break loop
		case a == "-h" || a == "--help":
			return o, nil, errHelp
		case a == "--version":
			return o, nil, errVersion
		case a == "--user":
			o.user = true
		case a == "--verbose":
			o.verbose = true
		case a == "--no-exclude-system":
			o.noExcludeSystem = true
		case a == "--no-plugin":
			o.noPlugin = true
		case a == "--filter":
			if i+1 >= len(args) {
				return o, nil, errors.New("--filter needs a file")
			}
			i++
			o.filterFile = args[i]
		case strings.HasPrefix(a, "--filter="):
			o.filterFile = strings.TrimPrefix(a, "--filter=")
		case strings.HasPrefix(a, "--"):
			return o, nil, fmt.Errorf("unknown option %s (see hmbtrace-instrument -h)", a)
		default:
			break loop
		}
	}
	rest := args[i:]
	if len(rest) == 0 {
		return o, nil, errors.New("no compiler given: hmbtrace-instrument [options] COMPILER [ARGS...], e.g. hmbtrace-instrument mpicc -O2 -c x.c")
	}
	if strings.HasPrefix(rest[0], "-") {
		return o, nil, fmt.Errorf("no compiler given: %s is an option, not a compiler (hmbtrace-instrument's options come first, then the compiler and its arguments)", rest[0])
	}
	return o, rest, nil
}

// revision names the source revision the command was built from, when the
// Go toolchain recorded it.
func revision() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	var rev, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+modified"
			}
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if rev == "" {
		return ""
	}
	return " (" + rev + dirty + ")"
}

// shellQuote prints a command line so that a shell reads it back as argv.
func shellQuote(argv []string) string {
	var b strings.Builder
	for i, a := range argv {
		if i > 0 {
			b.WriteByte(' ')
		}
		if a != "" && strings.IndexFunc(a, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=,:+@%", r))
		}) < 0 {
			b.WriteString(a)
			continue
		}
		b.WriteByte('\'')
		b.WriteString(strings.ReplaceAll(a, "'", `'\''`))
		b.WriteByte('\'')
	}
	return b.String()
}
