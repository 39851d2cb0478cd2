package main

import (
	"bufio"
	"fmt"
	"os"
	"strings"

	"github.com/hmbtrace/hmbtrace/filter"
	"github.com/ianlancetaylor/demangle"
)

// GCC's -finstrument-functions-exclude-function-list matches substrings of
// a function's printable name (its qualified name without parameters, C++
// template arguments included), so "Dom::x" also drops "Dom::xy". The
// filter may say no such thing. compileTimeFilter therefore first compiles
// the source to assembly (at -O0, so that functions inlined away at higher
// levels are emitted too), lists the functions GCC instruments there, and
// keeps a name for the list only when every instrumented function whose
// printable name contains it is one the filter excludes. The rest is left
// to the run-time filter, which applies the whole file anyway.
func compileTimeFilter(e env, c *cmdline, f *filter.Filter, flags []string) ([]string, []note) {
	if len(c.sources) != 1 || c.mode != modeCompile {
		return nil, []note{{text: "the filter applies at run time only: compile-time exclusion needs one source compiled with -c or -S", verbose: true}}
	}
	tmp, err := os.CreateTemp("", "hmbtrace-instrument-*.s")
	if err != nil {
		return nil, []note{{text: "the filter applies at run time only: " + err.Error()}}
	}
	tmp.Close()
	defer os.Remove(tmp.Name())
	args := append(probeArgs(c.args), flags...)
	args = append(args, "-O0", "-S", "-o", tmp.Name())
	if out, err := e.probe(c.compiler, args...); err != nil {
		return nil, []note{{text: fmt.Sprintf("the filter applies at run time only: the probe compile failed: %v\n%s", err, out), verbose: true}}
	}
	fns, err := instrumentedFunctions(tmp.Name())
	if err != nil {
		return nil, []note{{text: "the filter applies at run time only: " + err.Error()}}
	}
	names := excludeNames(fns, f)
	var notes []note
	if len(names) > 0 {
		notes = append(notes, note{text: fmt.Sprintf("not instrumented by the filter: %s", strings.Join(names, ", ")), verbose: true})
	}
	return names, notes
}

// probeArgs is the command line without what writes the compile's outputs
// (the object, dependency files) or changes how it is done (LTO, saved
// temporaries), so that the probe leaves the build as it was.
func probeArgs(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-o" || a == "-MF" || a == "-MT" || a == "-MQ":
			i++
		case a == "-c" || a == "-S" || a == "-MD" || a == "-MMD" || a == "-MP" ||
			strings.HasPrefix(a, "-o") && a != "-openmp" || strings.HasPrefix(a, "-MF") || strings.HasPrefix(a, "-MT") || strings.HasPrefix(a, "-MQ") ||
			strings.HasPrefix(a, "-flto") || strings.HasPrefix(a, "-save-temps") || strings.HasPrefix(a, "-fdump-"):
		default:
			if separate[a] && i+1 < len(args) {
				out = append(out, a, args[i+1])
				i++
				continue
			}
			out = append(out, a)
		}
	}
	return out
}

// function is one function of the probe's assembly that GCC instrumented.
type function struct {
	full      string // demangled as hmbtrace names regions
	printable string // as GCC's exclude list sees it
}

// instrumentedFunctions reads GNU assembler output and returns the
// functions that call the entry hook.
func instrumentedFunctions(path string) ([]function, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	var out []function
	seen := map[string]bool{}
	cur := ""
	sc := bufio.NewScanner(fh)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(line, ".type") && strings.HasSuffix(line, "@function"):
			f := strings.Fields(strings.TrimPrefix(line, ".type"))
			cur = strings.Trim(strings.TrimSuffix(f[0], ","), `"`)
		case strings.HasPrefix(line, ".size"):
			cur = ""
		case cur != "" && !seen[cur] && strings.Contains(line, hookEnter):
			seen[cur] = true
			out = append(out, function{full: demangle.Filter(cur), printable: printableName(cur)})
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading %s: %v", path, err)
	}
	return out, nil
}

// printableName is GCC's printable name of a symbol: a C name as it is, a
// C++ one demangled without parameters or return type.
func printableName(sym string) string {
	// A clone (foo.constprop.0) has its original's name.
	if i := strings.IndexByte(sym, '.'); i > 0 {
		sym = sym[:i]
	}
	if s, err := demangle.ToString(sym, demangle.NoParams); err == nil {
		return s
	}
	return sym
}

// excludeNames returns the printable names GCC may exclude: those of
// functions the filter excludes, whose substring match hits no function
// the filter keeps.
func excludeNames(fns []function, f *filter.Filter) []string {
	var names []string
	seen := map[string]bool{}
	for _, fn := range fns {
		s := fn.printable
		if seen[s] || !f.Excluded(fn.full, "") || s == "" || strings.Contains(s, ",") {
			continue
		}
		seen[s] = true
		safe := true
		for _, g := range fns {
			if strings.Contains(g.printable, s) && !f.Excluded(g.full, "") {
				safe = false
				break
			}
		}
		if safe {
			names = append(names, s)
		}
	}
	return names
}
