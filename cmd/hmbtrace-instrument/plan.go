package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/hmbtrace/hmbtrace/filter"
)

// The instrumentation hooks. glibc defines both as no-ops, so a link that
// does not take them from libhmbtrace runs untraced without a word.
const (
	hookEnter = "__cyg_profile_func_enter"
	hookExit  = "__cyg_profile_func_exit"
)

// hooksArchive holds the hooks' fast path, linked into the program ahead
// of libhmbtrace.so (cshim/hooks).
const hooksArchive = "libhmbtrace-hooks.a"

// ompLibrary is the OpenMP adapter's library, linked for -fopenmp when it
// is installed next to libhmbtrace.
const ompLibrary = "hmbtrace-omp"

// mpiLibrary is the MPI wrappers' library (C and, when the MPI library has
// them, Fortran bindings), linked for MPI programs.
const mpiLibrary = "hmbtrace-mpi"

// note is a message for the user: always shown, or with --verbose only.
type note struct {
	text    string
	verbose bool
}

// plan returns the command to run for a compiler command line.
func plan(o options, argv []string, e env) ([]string, []note, error) {
	c := parseCmdline(argv)
	out := c.argv()
	var notes []note
	switch c.mode {
	case modePass:
		return out, nil, nil
	case modePreprocess:
		// Dependencies and preprocessing must see hmbtrace.h where the
		// compile will.
		if lib, err := e.lib(); err == nil {
			out = append(out, "-I"+lib.includeDir)
		}
		return out, nil, nil
	}
	if !o.user && c.instrumentable() {
		flags, n, err := instrumentFlags(o, &c, e)
		notes = append(notes, n...)
		if err != nil {
			return nil, notes, err
		}
		out = append(out, flags...)
	}
	lib, libErr := e.lib()
	if libErr == nil {
		// After the user's -I, so that theirs come first.
		out = append(out, "-I"+lib.includeDir)
	}
	if c.mode != modeLink {
		// A compile needs the library only for hmbtrace.h: the link says
		// if it is missing.
		return out, notes, nil
	}
	if libErr != nil {
		return nil, notes, libErr
	}
	if !o.user && !c.instrumentable() {
		// A link of objects: the plugin for the ones compiled with -flto.
		// A link with sources has it already.
		flags, n, err := linkPluginFlags(o, &c, e)
		notes = append(notes, n...)
		if err != nil {
			return nil, notes, err
		}
		out = append(out, flags...)
	}
	flags, n, err := linkFlags(&c, lib, e)
	notes = append(notes, n...)
	if err != nil {
		return nil, notes, err
	}
	// Libraries that wrap another one go right before it when the command
	// names it itself: the first library that defines GOMP_parallel or
	// MPI_Send is the one the program calls. The later index first, so
	// that the earlier one stays where it was.
	type insertion struct {
		at   int // in c.args
		flag string
	}
	var ins []insertion
	if i := slices.Index(flags, "-l"+ompLibrary); i >= 0 && c.ompRuntime >= 0 {
		flags = slices.Delete(flags, i, i+1)
		ins = append(ins, insertion{c.ompRuntime, "-l" + ompLibrary})
		notes = append(notes, note{text: fmt.Sprintf("OpenMP: -l%s placed before %s, whose functions it wraps", ompLibrary, c.library(c.ompRuntime)), verbose: true})
	}
	if i := slices.Index(flags, "-l"+mpiLibrary); i >= 0 && c.mpiLib >= 0 {
		flags = slices.Delete(flags, i, i+1)
		ins = append(ins, insertion{c.mpiLib, "-l" + mpiLibrary})
		notes = append(notes, note{text: fmt.Sprintf("MPI: -l%s placed before %s, whose functions it wraps", mpiLibrary, c.library(c.mpiLib)), verbose: true})
	}
	slices.SortFunc(ins, func(a, b insertion) int { return b.at - a.at })
	for _, in := range ins {
		at := len(c.argv()) - len(c.args) + in.at // past the launcher and compiler
		out = slices.Insert(out, at, "-L"+lib.libDir, "-Wl,--push-state,--no-as-needed", in.flag, "-Wl,--pop-state")
	}
	return append(out, flags...), notes, nil
}

// instrumentFlags returns the compiler instrumentation flags for the
// sources of c.
func instrumentFlags(o options, c *cmdline, e env) ([]string, []note, error) {
	l := langFortran
	if c.has(langCXX) {
		l = langCXX
	} else if c.has(langC) {
		l = langC
	}
	info := identify(e, c.compiler, l)
	var notes []note
	var f *filter.Filter
	if o.filterFile != "" {
		var err error
		if f, err = filter.ParseFile(o.filterFile); err != nil {
			return nil, nil, err // ParseFile names the file
		}
	}
	switch info.family {
	case familyGCC:
		pflags, n, ok := gccPluginFlags(o, c, info, f, e)
		notes = append(notes, n...)
		if ok {
			return pflags, notes, nil
		}
		flags := []string{"-finstrument-functions"}
		// Fortran has no headers with code in them: nothing to exclude.
		if !o.noExcludeSystem && l != langFortran {
			dirs := excludeDirs(append(append([]string(nil), info.systemDirs...), c.isystem...))
			if len(dirs) == 0 {
				notes = append(notes, note{text: c.compiler + " named no system include directories: the functions of system headers are instrumented"})
			} else {
				flags = append(flags, "-finstrument-functions-exclude-file-list="+strings.Join(dirs, ","))
			}
		}
		if f != nil {
			names, n := compileTimeFilter(e, c, f, flags)
			notes = append(notes, n...)
			if len(names) > 0 {
				flags = append(flags, "-finstrument-functions-exclude-function-list="+strings.Join(names, ","))
			}
		}
		return flags, notes, nil
	case familyClang:
		// Clang has no exclude lists. Instrumenting after inlining leaves
		// out what was inlined, which at -O1 and above is nearly every
		// small accessor, the standard library's included.
		if f != nil {
			notes = append(notes, note{text: "Clang cannot exclude functions by name: the filter applies at run time (HMB_FILTER_FILE)", verbose: true})
		}
		if o.noExcludeSystem {
			return []string{"-finstrument-functions"}, notes, nil
		}
		return []string{"-finstrument-functions-after-inlining"}, notes, nil
	}
	notes = append(notes, note{text: fmt.Sprintf("%s is %s: plain -finstrument-functions, system headers not excluded, the filter applies at run time", c.compiler, info.family), verbose: true})
	return []string{"-finstrument-functions"}, notes, nil
}

// excludeDirs turns include directories into GCC's file list: each
// directory with a trailing slash (GCC matches substrings of the header's
// path, so "/usr/include/" does not also exclude "/usr/include2"), as given
// and cleaned, since GCC reports a path as the directory it found it in.
// GCC splits the list at commas; a directory with one cannot be named.
func excludeDirs(dirs []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, d := range dirs {
		if d == "" {
			continue
		}
		for _, v := range []string{d, filepath.Clean(d)} {
			v = strings.TrimSuffix(v, "/") + "/"
			if strings.Contains(v, ",") || seen[v] {
				continue
			}
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

// isMPILink reports whether a link is of an MPI program, and why: the
// compiler is an MPI wrapper, or the command names an MPI library itself
// (a plain compiler with CMake's MPI::MPI_C or pkg-config's -lmpi).
func isMPILink(c *cmdline, e env) (bool, string) {
	if c.mpiLib >= 0 {
		return true, "the command links " + c.library(c.mpiLib)
	}
	if isMPI(e, c.compiler) {
		return true, c.compiler + " is an MPI compiler"
	}
	return false, ""
}

// linkFlags returns what goes after the objects of a link.
func linkFlags(c *cmdline, lib libInfo, e env) ([]string, []note, error) {
	has := func(name string) bool { return e.exists(filepath.Join(lib.libDir, name)) }
	if c.static && !has("libhmbtrace.a") {
		return nil, nil, fmt.Errorf("-static: no libhmbtrace.a in %s", lib.libDir)
	}
	if !c.static && !has("libhmbtrace.so") && !has("libhmbtrace.a") {
		return nil, nil, fmt.Errorf("no libhmbtrace.so or libhmbtrace.a in %s", lib.libDir)
	}
	var notes []note
	flags := []string{"-L" + lib.libDir}
	if !c.static {
		flags = append(flags, "-Wl,-rpath,"+lib.libDir)
	}
	// -u makes the linker take the hooks from libhmbtrace.a even when no
	// object before it calls them, and --no-as-needed keeps libhmbtrace.so
	// in the program when --as-needed is the default: either way glibc's
	// no-op hooks would otherwise be the ones called.
	flags = append(flags, "-Wl,-u,"+hookEnter, "-Wl,-u,"+hookExit, "-Wl,--push-state,--no-as-needed")
	if c.openmp {
		if has("lib"+ompLibrary+".so") || has("lib"+ompLibrary+".a") {
			flags = append(flags, "-l"+ompLibrary)
		} else {
			notes = append(notes, note{text: fmt.Sprintf("OpenMP: the OpenMP adapter (lib%s) is not installed in %s: parallel regions and their threads' functions are traced as plain threads", ompLibrary, lib.libDir)})
		}
	}
	if mpi, why := isMPILink(c, e); mpi {
		switch {
		case c.static:
			return nil, notes, fmt.Errorf("-static: libhmbtrace-mpi exists only as a shared library (%s)", lib.libDir)
		case c.mpiStatic:
			// The wrappers call the shared MPI library: with the static one
			// in the program too, it would have two MPI libraries.
			notes = append(notes, note{text: fmt.Sprintf("MPI: %s is a static MPI library, and libhmbtrace-mpi wraps shared ones only: MPI calls are not traced", c.library(c.mpiLib))})
		case !has("lib" + mpiLibrary + ".so"):
			return nil, notes, fmt.Errorf("%s, but there is no libhmbtrace-mpi.so in %s (make cshim builds it when mpicc is on PATH)", why, lib.libDir)
		default:
			// Before the MPI library, which an MPI compiler adds after
			// these; plan moves it before one the command names.
			flags = append(flags, "-l"+mpiLibrary)
		}
	}
	// The hooks' fast path in the program itself (libhmbtrace-hooks.a),
	// which saves throttled functions a call into libhmbtrace.so each. A
	// static link has the library's hooks in the program already.
	if !c.static && has(hooksArchive) {
		flags = append(flags, "-l:"+hooksArchive)
	}
	flags = append(flags, "-lhmbtrace", "-Wl,--pop-state")
	if c.static {
		flags = append(flags, "-lpthread", "-ldl")
	}
	return flags, notes, nil
}
