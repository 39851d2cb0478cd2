package main

import (
	"path/filepath"
	"strings"
)

// lang is what a compiler makes of an input file.
type lang int8

const (
	langNone    lang = iota // an object, archive, library or linker script
	langC                   // C, preprocessed or not
	langCXX                 // C++
	langFortran             // any Fortran form
	langAsm                 // assembler: never instrumented
)

// what a command line does, as GCC's driver reads it (Clang, the MPI
// wrappers and most vendor compilers follow it).
type mode int8

const (
	modePass       mode = iota // a query, or no input: run unchanged
	modePreprocess             // -E, -M, -MM, -fsyntax-only: nothing to instrument or link
	modeCompile                // -c or -S: objects or assembly
	modePartial                // -r: a relocatable link, no libraries
	modeLink                   // an executable or shared object
)

// cmdline is a compiler's command line, classified.
type cmdline struct {
	launcher string // ccache and its kind, run in front of the compiler
	compiler string
	args     []string // after the compiler
	mode     mode
	sources  []source
	inputs   int      // input files of every kind
	isystem  []string // -isystem directories: their headers are system headers
	openmp   bool
	// ompRuntime is the index in args of the first OpenMP runtime the
	// command names itself (-lgomp, -lomp, -liomp5 or its file), -1 if none.
	// The adapter must be linked before it, or the runtime's GOMP_*
	// functions are the ones called.
	ompRuntime int
	// mpiLib is the index in args of the first MPI library the command
	// names itself (CMake's MPI::MPI_C gives libmpi.so's path, pkg-config
	// -lmpi), -1 if none. The wrappers must be linked before it.
	mpiLib int
	// mpiStatic is the static MPI library (libmpi.a) at mpiLib.
	mpiStatic bool
	static    bool
	shared    bool
}

// source is an input file the compiler compiles.
type source struct {
	path string
	lang lang
}

// separate lists the options whose value is the next argument when it is
// not attached (GCC's driver, gfortran's -J, the linker pass-throughs).
var separate = map[string]bool{
	"-o": true, "-x": true, "-I": true, "-L": true, "-D": true, "-U": true, "-l": true,
	"-include": true, "-imacros": true, "-iprefix": true, "-iwithprefix": true,
	"-iwithprefixbefore": true, "-isystem": true, "-idirafter": true, "-iquote": true,
	"-isysroot": true, "-imultilib": true, "-MF": true, "-MT": true, "-MQ": true,
	"-Xlinker": true, "-Xassembler": true, "-Xpreprocessor": true, "-Xclang": true,
	"-T": true, "-u": true, "-e": true, "-z": true, "-aux-info": true, "--param": true,
	"-J": true, "-A": true, "-B": true, "-G": true, "-specs": true, "-wrapper": true,
	"-arch": true, "-target": true, "--sysroot": true, "-module": true,
}

// launchers run the compiler that follows them: hmbtrace-instrument asks
// that compiler what it is, and runs the launcher.
var launchers = map[string]bool{"ccache": true, "sccache": true, "distcc": true, "icecc": true}

// argv is the command line to run, launcher included.
func (c *cmdline) argv() []string {
	var out []string
	if c.launcher != "" {
		out = append(out, c.launcher)
	}
	return append(append(out, c.compiler), c.args...)
}

// langOfX maps -x's argument to a language; "none" goes back to the file
// name's extension.
func langOfX(x string) (lang, bool) {
	switch {
	case x == "none":
		return 0, false
	case x == "c" || x == "cpp-output" || x == "c-header":
		return langC, true
	case x == "c++" || x == "c++-cpp-output" || x == "c++-header":
		return langCXX, true
	case strings.HasPrefix(x, "f77") || strings.HasPrefix(x, "f95") || strings.HasPrefix(x, "fortran"):
		return langFortran, true
	case strings.HasPrefix(x, "assembler"):
		return langAsm, true
	}
	return langNone, true
}

// langOfFile maps a file name's extension to a language, as GCC does.
func langOfFile(name string) lang {
	ext := filepath.Ext(name)
	switch ext {
	case ".c", ".i":
		return langC
	case ".cc", ".cp", ".cxx", ".cpp", ".CPP", ".c++", ".C", ".ii":
		return langCXX
	case ".s", ".S", ".sx":
		return langAsm
	}
	switch strings.ToLower(ext) {
	case ".f", ".for", ".ftn", ".fpp", ".f90", ".f95", ".f03", ".f08":
		return langFortran
	}
	return langNone
}

// parseCmdline classifies a compiler's command line.
func parseCmdline(argv []string) cmdline {
	c := cmdline{compiler: argv[0], args: argv[1:], ompRuntime: -1, mpiLib: -1}
	if launchers[filepath.Base(c.compiler)] && len(c.args) > 0 && !strings.HasPrefix(c.args[0], "-") {
		c.launcher, c.compiler, c.args = c.compiler, c.args[0], c.args[1:]
	}
	var compileOnly, preprocess, partial bool
	xlang, xset := langNone, false
	args := c.args
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "-" || !strings.HasPrefix(a, "-") {
			c.inputs++
			if isOpenMPRuntime(filepath.Base(a)) {
				c.openMPRuntimeAt(i)
			}
			c.mpiLibraryAt(i, filepath.Base(a))
			l := langOfFile(a)
			if xset {
				l = xlang
			}
			if l != langNone {
				c.sources = append(c.sources, source{path: a, lang: l})
			}
			continue
		}
		if separate[a] {
			if i+1 < len(args) {
				i++
				switch a {
				case "-x":
					xlang, xset = langOfX(args[i])
				case "-isystem":
					c.isystem = append(c.isystem, args[i])
				case "-l":
					c.libraryAt(i-1, args[i])
				case "-Xlinker":
					c.linkerArgsAt(i-1, []string{args[i]})
				}
			}
			continue
		}
		switch {
		case a == "-c" || a == "-S":
			compileOnly = true
		case a == "-E" || a == "-M" || a == "-MM" || a == "-fsyntax-only":
			preprocess = true
		case a == "-r":
			partial = true
		case a == "-static":
			c.static = true
		case a == "-shared":
			c.shared = true
		case a == "-fopenmp" || strings.HasPrefix(a, "-fopenmp=") || a == "-qopenmp" ||
			a == "-fiopenmp" || a == "-openmp" || a == "-mp" || strings.HasPrefix(a, "-mp="):
			c.openmp = true
		case strings.HasPrefix(a, "-l"):
			c.libraryAt(i, a[2:])
		case strings.HasPrefix(a, "-Wl,"):
			c.linkerArgsAt(i, strings.Split(a[len("-Wl,"):], ","))
		case strings.HasPrefix(a, "-x"):
			xlang, xset = langOfX(a[2:])
		case strings.HasPrefix(a, "-isystem"):
			c.isystem = append(c.isystem, a[len("-isystem"):])
		}
	}
	switch {
	case c.inputs == 0:
		// A query (--version, -print-sysroot), or an error the compiler
		// reports itself.
		c.mode = modePass
	case preprocess:
		c.mode = modePreprocess
	case compileOnly:
		c.mode = modeCompile
	case partial:
		c.mode = modePartial
	default:
		c.mode = modeLink
	}
	return c
}

// libraryAt notes the library that -l's argument names at args[i]: the
// OpenMP runtime or an MPI library.
func (c *cmdline) libraryAt(i int, arg string) {
	if isOpenMPRuntime(libFileName(arg)) {
		c.openMPRuntimeAt(i)
		return
	}
	c.mpiLibraryAt(i, libFileName(arg))
}

// linkerArgsAt notes the libraries that the linker's own arguments at
// args[i] name (-Wl,-lmpi, -Wl,--as-needed,-lmpi, -Xlinker -lmpi): what
// goes in before args[i] comes before them on the link.
func (c *cmdline) linkerArgsAt(i int, parts []string) {
	for j := 0; j < len(parts); j++ {
		p := parts[j]
		switch {
		case p == "-l" && j+1 < len(parts):
			j++
			c.libraryAt(i, parts[j])
		case strings.HasPrefix(p, "-l") && len(p) > 2:
			c.libraryAt(i, p[2:])
		case strings.HasPrefix(p, "--library="):
			c.libraryAt(i, p[len("--library="):])
		}
	}
}

// openMPRuntimeAt notes an OpenMP runtime named at args[i]: the program
// is an OpenMP one even when the link has no -fopenmp (Makefiles that link
// with "$(CC) ... -lgomp").
func (c *cmdline) openMPRuntimeAt(i int) {
	c.openmp = true
	if c.ompRuntime < 0 {
		c.ompRuntime = i
	}
}

// mpiLibraryAt notes the MPI library file name at args[i], if it is one.
func (c *cmdline) mpiLibraryAt(i int, name string) {
	if c.mpiLib >= 0 {
		return
	}
	if static, ok := isMPILibrary(name); ok {
		c.mpiLib, c.mpiStatic = i, static
	}
}

// libFileName is the file -l's argument names: -l:libmpi.so.40 names the
// file itself, -lmpi names libmpi.so (or libmpi.a, which only the linker
// knows; the shared one is what a dynamic link takes first).
func libFileName(arg string) string {
	if name, ok := strings.CutPrefix(arg, ":"); ok {
		return name
	}
	return "lib" + arg + ".so"
}

// mpiLibraries are the MPI libraries that define the MPI and PMPI
// functions the program calls: Open MPI's C library and its Fortran
// bindings (mpif.h, use mpi, use mpi_f08) and C++ bindings; MPICH's and
// Intel MPI's C, Fortran and C++ libraries.
var mpiLibraries = []string{
	"libmpi", "libmpi_mpifh", "libmpi_usempif08", "libmpi_usempi", "libmpi_usempi_ignore_tkr", "libmpi_cxx",
	"libmpich", "libmpichf90", "libmpichcxx", "libmpifort", "libmpicxx",
}

// isMPILibrary reports whether a library file name is one of the MPI
// libraries (shared, with or without a version, or static) and whether it
// is the static one.
func isMPILibrary(name string) (static, ok bool) {
	for _, lib := range mpiLibraries {
		rest, found := strings.CutPrefix(name, lib)
		if !found {
			continue
		}
		if rest == ".a" {
			return true, true
		}
		if rest == ".so" || strings.HasPrefix(rest, ".so.") {
			return false, true
		}
	}
	return false, false
}

// isOpenMPRuntime reports whether a library file name is one of the OpenMP
// runtimes: GCC's libgomp, LLVM's libomp, Intel's libiomp5 (shared, with or
// without a version, or static).
func isOpenMPRuntime(name string) bool {
	for _, lib := range []string{"libgomp", "libomp", "libiomp5"} {
		rest, ok := strings.CutPrefix(name, lib)
		if ok && (rest == ".a" || rest == ".so" || strings.HasPrefix(rest, ".so.")) {
			return true
		}
	}
	return false
}

// instrumentable reports whether any source is compiled code that
// -finstrument-functions applies to.
func (c *cmdline) instrumentable() bool {
	for _, s := range c.sources {
		if s.lang == langC || s.lang == langCXX || s.lang == langFortran {
			return true
		}
	}
	return false
}

// library is how the command names the library at args[i]: "-l mpi" as
// one string.
func (c *cmdline) library(i int) string {
	if c.args[i] == "-l" && i+1 < len(c.args) {
		return "-l " + c.args[i+1]
	}
	return c.args[i]
}

// has reports whether a source of language l is compiled.
func (c *cmdline) has(l lang) bool {
	for _, s := range c.sources {
		if s.lang == l {
			return true
		}
	}
	return false
}
