package cshim

import (
	"bufio"
	"debug/dwarf"
	"debug/elf"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hmbtrace/hmbtrace/internal/tracetest"
)

// TestLineTableOrder builds testdata/linetable with g++ and clang++ at -O2
// and checks the source line of every address of every function against
// addr2line's. GCC's unit there has line sequences out of address order
// (main in .text.startup, cold parts, COMDAT templates), which Go's
// dwarf.LineReader.SeekPC does not find (trial 3: no @file:line on any of
// miniVite's OpenMP regions).
func TestLineTableOrder(t *testing.T) {
	tracetest.RequireTool(t, "addr2line", "binutils")
	tracetest.RequireTool(t, "llvm-addr2line", "llvm")
	src := filepath.Join("testdata", "linetable", "sections.cc")
	for _, cxx := range []string{"g++", "clang++"} {
		t.Run(cxx, func(t *testing.T) {
			tracetest.RequireTool(t, cxx, map[string]string{"g++": "g++", "clang++": "clang"}[cxx])
			exe := filepath.Join(t.TempDir(), "sections")
			if out, err := exec.Command(cxx, "-O2", "-g", "-o", exe, src).CombinedOutput(); err != nil {
				t.Fatalf("%s -O2 -g -o %s %s: %v\n%s", cxx, exe, src, err, out)
			}
			obj, err := openObject(exe)
			if err != nil {
				t.Fatal(err)
			}
			defer obj.f.Close()
			if cxx == "g++" {
				// The case under test must be there: else this test proves nothing.
				if n := unorderedSequences(t, obj.f); n == 0 {
					t.Fatalf("no compilation unit of %s has a line sequence below the one before it", exe)
				}
			}
			var addrs []uint64
			entries := map[uint64]string{}
			for _, fn := range obj.syms {
				entries[fn.value] = fn.name
				addrs = append(addrs, fn.value)
				for a := fn.value + 1; a < fn.value+fn.size; a++ {
					addrs = append(addrs, a)
				}
			}
			// Both addr2lines: binutils' gives the first row of a DWARF 5
			// unit the unit's own file, where the line program's initial
			// file register says file 1 (objdump and llvm-addr2line agree
			// with that), so its file names are not compared.
			gnu := addr2line(t, "addr2line", exe, addrs)
			llvm := addr2line(t, "llvm-addr2line", exe, addrs)
			bad, entryLines := 0, 0
			for i, a := range addrs {
				file, line := obj.line(a)
				if line == 0 {
					file = ""
				}
				if line != gnu[i].line || line != llvm[i].line || !samePath(file, llvm[i].file) {
					if bad++; bad <= 10 {
						t.Errorf("%#x (%s+%#x): %s:%d, addr2line says %s:%d, llvm-addr2line %s:%d",
							a, symAt(obj, a), a-symStart(obj, a), file, line, gnu[i].file, gnu[i].line, llvm[i].file, llvm[i].line)
					}
				}
				if _, ok := entries[a]; ok && line > 0 {
					entryLines++
				}
			}
			if bad > 10 {
				t.Errorf("... %d addresses of %d differ", bad, len(addrs))
			}
			// main, work, lookup, report, the constructor and the templates.
			if entryLines < 8 {
				t.Errorf("%d function entries have a line, want 8 or more", entryLines)
			}
			for _, name := range []string{"main", "_Z4worki"} {
				v, ok := obj.symbolValue(name)
				if !ok {
					t.Fatalf("no symbol %s", name)
				}
				if file, line := obj.line(v); filepath.Base(file) != "sections.cc" || line == 0 {
					t.Errorf("%s's entry at %s:%d, want sections.cc:<line>", name, file, line)
				}
			}
		})
	}
}

// unorderedSequences counts the line sequences of f that start below the
// sequence before them in their unit.
func unorderedSequences(t *testing.T, f *elf.File) int {
	t.Helper()
	d, err := f.DWARF()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	r := d.Reader()
	for {
		e, err := r.Next()
		if err != nil || e == nil {
			break
		}
		if e.Tag != dwarf.TagCompileUnit {
			r.SkipChildren()
			continue
		}
		lr, err := d.LineReader(e)
		if err != nil || lr == nil {
			r.SkipChildren()
			continue
		}
		var le dwarf.LineEntry
		start, last, first := true, uint64(0), true
		for lr.Next(&le) == nil {
			if start {
				if !first && le.Address < last {
					n++
				}
				last, first = le.Address, false
			}
			start = le.EndSequence
		}
		r.SkipChildren()
	}
	return n
}

// samePath reports whether our file name and addr2line's name the same
// file: addr2line joins a relative name (GCC's, of a file compiled by a
// relative path) to the unit's directory, and does not clean paths.
func samePath(ours, a2l string) bool {
	if ours == "" || a2l == "" {
		return ours == a2l
	}
	if !filepath.IsAbs(ours) {
		return strings.HasSuffix(filepath.Clean(a2l), "/"+filepath.Clean(ours))
	}
	return filepath.Clean(ours) == filepath.Clean(a2l)
}

type srcLine struct {
	file string
	line int
}

// addr2line returns the source lines of addrs in exe that tool (addr2line,
// llvm-addr2line) gives.
func addr2line(t *testing.T, tool, exe string, addrs []uint64) []srcLine {
	t.Helper()
	var in strings.Builder
	for _, a := range addrs {
		fmt.Fprintf(&in, "%#x\n", a)
	}
	cmd := exec.Command(tool, "-e", exe)
	cmd.Stdin = strings.NewReader(in.String())
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s -e %s: %v", tool, exe, err)
	}
	var lines []srcLine
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		s, _, _ := strings.Cut(sc.Text(), " (discriminator")
		i := strings.LastIndexByte(s, ':')
		if i < 0 {
			t.Fatalf("%s printed %q", tool, sc.Text())
		}
		l, err := strconv.Atoi(s[i+1:])
		if err != nil || l == 0 { // "?": no line
			lines = append(lines, srcLine{})
			continue
		}
		lines = append(lines, srcLine{file: s[:i], line: l})
	}
	if len(lines) != len(addrs) {
		t.Fatalf("%s printed %d lines for %d addresses", tool, len(lines), len(addrs))
	}
	return lines
}

func symAt(obj *objectFile, a uint64) string {
	if s, ok := obj.lookup(a); ok {
		return s.Name
	}
	return "?"
}

func symStart(obj *objectFile, a uint64) uint64 {
	for i := len(obj.syms) - 1; i >= 0; i-- {
		if obj.syms[i].value <= a {
			return obj.syms[i].value
		}
	}
	return 0
}
