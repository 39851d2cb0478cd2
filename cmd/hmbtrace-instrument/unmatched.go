package main

// A filter rule that matches no function of the program filters nothing,
// and says nothing unless told: the usual cause is a name spelled as
// another build spells it. The GCC plugin sees one translation unit at a
// time, where a rule for a function of another unit matches nothing, so
// the rules are judged once, at the link, against every function of the
// program as the measurement names it (cshim.Functions: demangled, Fortran
// procedures by their source names), and the rules that matched none are
// said in one line.

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"

	"github.com/hmbtrace/hmbtrace/filter"
)

// linkOutput returns the file a link command writes: its -o, else a.out.
func linkOutput(args []string) string {
	out := "a.out"
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-o" && i+1 < len(args):
			out = args[i+1]
			i++
		case strings.HasPrefix(a, "-o") && len(a) > 2:
			out = a[2:]
		}
	}
	return out
}

// runAndCheckFilter runs the link argv, then, if it succeeded, says which
// rules of the filter file matched no function of what it linked. It
// returns the link's exit status.
func runAndCheckFilter(path string, argv []string, filterFile, output string, stderr io.Writer) int {
	cmd := exec.Command(path, argv[1:]...)
	cmd.Args[0] = argv[0]
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return max(ee.ExitCode(), 1)
		}
		fmt.Fprintf(stderr, "hmbtrace-instrument: running %s: %v\n", path, err)
		return 1
	}
	if line := unmatchedRules(filterFile, output); line != "" {
		fmt.Fprintln(stderr, line)
	}
	return 0
}

// unmatchedRules returns the line that names the rules of filterFile
// matching no function of the linked file output, "" if every rule matched
// one (or the file cannot be read: the compile said so already).
func unmatchedRules(filterFile, output string) string {
	f, err := filter.ParseFile(filterFile)
	if err != nil {
		return ""
	}
	fns, err := programFunctions(output)
	if err != nil {
		return fmt.Sprintf("hmbtrace-instrument: filter %s: its rules are not checked against %s: %v", filterFile, output, err)
	}
	mt := filter.NewMatcher(f)
	files := false
	for _, fn := range fns {
		mt.Region(fn.Name, fn.File)
		files = files || fn.File != ""
	}
	var rules []string
	for _, r := range mt.Unmatched() {
		if r.File && !files {
			continue // built without -g: no function's file is known
		}
		rules = append(rules, r.String())
	}
	if len(rules) == 0 {
		return ""
	}
	what := "a rule"
	if len(rules) > 1 {
		what = fmt.Sprintf("%d rules", len(rules))
	}
	return fmt.Sprintf("hmbtrace-instrument: filter %s: %s matched no function of %s, so filtered nothing: %s "+
		"(names are as hmbtrace summary prints them: Fortran procedures without gfortran's trailing underscore, C++ demangled)",
		filterFile, what, output, strings.Join(rules, "; "))
}
