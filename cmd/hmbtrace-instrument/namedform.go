package main

import (
	"fmt"
	"path/filepath"
	"strings"
)

// ownOptions are hmbtrace-instrument's options that a named form
// (hmbtrace-gcc, hmbtrace-mpicc, ...) must not pass to its compiler: GCC
// reads "--user" as --user-dependencies, writes a dependency file and exits
// 0, and takes "--verbose" as -v. -h, --help and --version are not among
// them: "hmbtrace-mpicc --version" is mpicc's, as build tools expect.
var ownOptions = []string{"--user", "--filter", "--verbose", "--no-plugin", "--no-exclude-system"}

// takesValue lists the compiler options whose value is the next argument,
// which may be spelled as one of ownOptions and is then theirs
// ("-Xlinker --verbose" asks the linker to be verbose).
var takesValue = map[string]bool{
	"-o": true, "-x": true, "-I": true, "-L": true, "-D": true, "-U": true, "-T": true, "-u": true, "-e": true,
	"-MF": true, "-MT": true, "-MQ": true, "-include": true, "-imacros": true, "-idirafter": true,
	"-iprefix": true, "-isystem": true, "-iquote": true, "-Xlinker": true, "-Xassembler": true,
	"-Xpreprocessor": true, "-Xclang": true, "-Xcompiler": true,
}

// namedFormCheck refuses, for a program called as a named form argv0, an
// option of hmbtrace-instrument among the compiler's arguments args, and a
// word of HMB_INSTRUMENT_FLAGS (flags) that is not one of its options. It
// returns nil for hmbtrace-instrument itself.
func namedFormCheck(argv0 string, args []string, flags string) error {
	wrapped := wrapperArgs(argv0, nil, "")
	if len(wrapped) == 0 {
		return nil // not a named form
	}
	name, compiler := filepath.Base(argv0), wrapped[len(wrapped)-1]
	for i, a := range args {
		if i > 0 && takesValue[args[i-1]] {
			continue
		}
		opt, _, hasValue := strings.Cut(a, "=")
		if !isOwnOption(opt) {
			continue
		}
		words := a
		if opt == "--filter" && !hasValue {
			value := "FILE"
			if i+1 < len(args) {
				value = args[i+1]
			}
			words = opt + " " + value
		}
		why := ""
		if opt == "--user" {
			why = ": GCC reads --user as --user-dependencies, writes a dependency file and no program"
		}
		return fmt.Errorf("%s: %s is hmbtrace-instrument's option, not %s's, which would take it as its own%s; a named form takes hmbtrace-instrument's options from %s: %s=%s %s ARGS, or hmbtrace-instrument %s %s ARGS",
			name, opt, compiler, why, flagsVar, flagsVar, shellQuote([]string{words}), name, words, compiler)
	}
	words := strings.Fields(flags)
	for i := 0; i < len(words); i++ {
		w := words[i]
		opt, _, hasValue := strings.Cut(w, "=")
		switch {
		case opt == "--filter" && !hasValue:
			if i+1 == len(words) {
				return fmt.Errorf("%s: %s=%q: --filter needs a file", name, flagsVar, flags)
			}
			i++
		case isOwnOption(opt):
		default:
			return fmt.Errorf("%s: %s=%q: %s is not an option of hmbtrace-instrument; it takes %s (see hmbtrace-instrument -h)",
				name, flagsVar, flags, w, strings.Join(ownOptions, ", "))
		}
	}
	return nil
}

func isOwnOption(s string) bool {
	for _, o := range ownOptions {
		if s == o {
			return true
		}
	}
	return false
}
