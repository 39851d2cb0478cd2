package cshim

import (
	"bufio"
	"cmp"
	"debug/dwarf"
	"debug/elf"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"slices"
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
// miniVite's OpenMP regions). With --gc-sections, GNU ld leaves the
// sequence of a dropped function at address 0, over the PIE's code: both
// addr2lines take it for that code, so there the lines to expect are
// those of the same build without the dropped function (the same code).
func TestLineTableOrder(t *testing.T) {
	tracetest.RequireTool(t, "addr2line", "binutils")
	tracetest.RequireTool(t, "llvm-addr2line", "llvm")
	src := filepath.Join("testdata", "linetable", "sections.cc")
	gc := []string{"-ffunction-sections", "-Wl,--gc-sections"}
	for _, c := range []struct {
		name, cxx string
		flags     []string
		ref       []string // flags of the build whose lines addr2line gives; nil: this one
	}{
		{"g++", "g++", nil, nil},
		{"clang++", "clang++", nil, nil},
		{"gc-sections", "g++", append(gc, "-DWITH_DROPPED"), gc},
	} {
		t.Run(c.name, func(t *testing.T) {
			tracetest.RequireTool(t, c.cxx, map[string]string{"g++": "g++", "clang++": "clang"}[c.cxx])
			dir := t.TempDir()
			build := func(name string, flags []string) string {
				exe := filepath.Join(dir, name)
				args := append([]string{"-O2", "-g", "-o", exe, src}, flags...)
				if out, err := exec.Command(c.cxx, args...).CombinedOutput(); err != nil {
					t.Fatalf("%s %s: %v\n%s", c.cxx, strings.Join(args, " "), err, out)
				}
				return exe
			}
			exe := build("sections", c.flags)
			ref := exe
			if c.ref != nil {
				ref = build("ref", c.ref)
				if a, b := text(t, exe), text(t, ref); a != b {
					t.Fatalf("%s and %s have different code: want the dropped function's code gone", exe, ref)
				}
			}
			obj, err := openObject(exe)
			if err != nil {
				t.Fatal(err)
			}
			defer obj.f.Close()
			// The case under test must be there: else this test proves nothing.
			unordered, over := sequences(t, obj.f)
			if c.cxx == "g++" && unordered == 0 {
				t.Fatalf("no compilation unit of %s has a line sequence below the one before it", exe)
			}
			if c.name == "gc-sections" {
				if over == 0 {
					t.Fatalf("no line sequence of %s starts at 0 and reaches its code", exe)
				}
				if _, ok := obj.symbolValue("_Z12unused_scalePVd"); ok {
					t.Fatalf("%s has unused_scale: want it dropped", exe)
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
			// Both addr2lines, each where it is right. binutils' gives
			// the first rows of a DWARF 5 unit the unit's own file where
			// the line program's file register is still 1 (objdump and
			// llvm-addr2line say file 1), so its file names are not
			// compared. llvm-addr2line takes a dropped function's
			// sequence at 0 for the code there, so its file is compared
			// where its line is binutils'.
			gnu := addr2line(t, "addr2line", ref, addrs)
			llvm := addr2line(t, "llvm-addr2line", ref, addrs)
			bad, entryLines := 0, 0
			for i, a := range addrs {
				file, line := obj.line(a)
				if line == 0 {
					file = ""
				}
				if line != gnu[i].line || (llvm[i].line == gnu[i].line && !samePath(file, llvm[i].file)) {
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

// sequences counts the line sequences of f that start below the sequence
// before them in their unit, and those that start at 0 and reach into an
// executable segment.
func sequences(t *testing.T, f *elf.File) (unordered, over int) {
	t.Helper()
	d, err := f.DWARF()
	if err != nil {
		t.Fatal(err)
	}
	var code uint64 = 1<<64 - 1
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && p.Flags&elf.PF_X != 0 && p.Vaddr < code {
			code = p.Vaddr
		}
	}
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
		start, last, first, zero := true, uint64(0), true, false
		for lr.Next(&le) == nil {
			if start {
				if !first && le.Address < last {
					unordered++
				}
				last, first = le.Address, false
				zero = le.Address == 0
			}
			if zero && le.EndSequence && le.Address > code {
				over++
			}
			start = le.EndSequence
		}
		r.SkipChildren()
	}
	return unordered, over
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

// text returns the contents of exe's .text section.
func text(t *testing.T, exe string) string {
	t.Helper()
	f, err := elf.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := f.Section(".text")
	if s == nil {
		t.Fatalf("%s has no .text", exe)
	}
	b, err := s.Data()
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%#x:%x", s.Addr, b)
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

// TestSortRows: laying a unit's sequences end to end gives the rows a
// stable sort by address gives, for sequences apart (the common case),
// overlapping, starting at one address, or holding one row.
func TestSortRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	laidOut := 0
	for trial := range 2000 {
		var rows []lineRow
		var seqs [][2]int
		for range 1 + rng.IntN(8) {
			from := len(rows)
			lo := uint64(rng.IntN(64)) * 16
			if trial%2 == 0 {
				lo = uint64(rng.IntN(1<<20)) * 64 // rarely overlapping
			}
			for range 1 + rng.IntN(5) {
				hi := lo + 1 + uint64(rng.IntN(4))
				rows = append(rows, lineRow{lo: lo, hi: hi, file: int32(len(seqs)), line: int32(len(rows))})
				lo = hi
			}
			seqs = append(seqs, [2]int{from, len(rows)})
		}
		want := slices.Clone(rows)
		slices.SortStableFunc(want, func(a, b lineRow) int { return cmp.Compare(a.lo, b.lo) })
		got := sortRows(slices.Clone(rows), seqs)
		if !slices.Equal(got, want) {
			t.Fatalf("trial %d: sequences %v of %v:\ngot  %v\nwant %v", trial, seqs, rows, got, want)
		}
		if !slices.IsSortedFunc(rows, func(a, b lineRow) int { return cmp.Compare(a.lo, b.lo) }) {
			laidOut++
		}
	}
	if laidOut < 500 {
		t.Errorf("%d of 2000 trials had rows out of order: the test needs more", laidOut)
	}
}
