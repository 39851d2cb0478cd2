package cshim

import (
	"debug/dwarf"
	"debug/elf"
	"os"
	"sort"
	"strings"

	"github.com/ianlancetaylor/demangle"
)

// Symbol is what the Symbolizer knows of a code address: the function's
// symbol, demangled (C++: "ns::f(int)"), and its source file and line when
// the file has DWARF line tables.
type Symbol struct {
	Name string
	File string
	Line int
}

// Symbolizer names code addresses of the running process by the ELF symbol
// tables (.symtab, else .dynsym) of the files mapped into it: the
// executable, PIE or not, and its shared objects, also those loaded later.
// It is not safe for concurrent use.
type Symbolizer struct {
	mapsPath string
	maps     []Mapping // sorted by Start
	files    map[string]*objectFile
}

// NewSymbolizer returns a Symbolizer of the calling process.
func NewSymbolizer() *Symbolizer {
	return &Symbolizer{mapsPath: "/proc/self/maps", files: map[string]*objectFile{}}
}

// Lookup names the function that contains addr, an address of the process.
func (s *Symbolizer) Lookup(addr uint64) (Symbol, bool) {
	m, ok := s.mapping(addr)
	if !ok {
		// Mapped since the last read (dlopen), or not at all.
		s.readMaps()
		if m, ok = s.mapping(addr); !ok {
			return Symbol{}, false
		}
	}
	if !strings.HasPrefix(m.Path, "/") {
		return Symbol{}, false
	}
	obj := s.object(m.Path)
	if obj == nil {
		return Symbol{}, false
	}
	// The file offset of addr, then the virtual address the file's own
	// symbols use: this undoes the load bias of PIE executables and shared
	// objects, and is the identity for the rest.
	return obj.lookupOffset(addr - m.Start + m.Offset)
}

func (s *Symbolizer) readMaps() {
	data, err := os.ReadFile(s.mapsPath)
	if err != nil {
		return
	}
	maps, err := ParseMaps(data)
	if err != nil {
		return
	}
	sort.Slice(maps, func(i, j int) bool { return maps[i].Start < maps[j].Start })
	s.maps = maps
}

// mapping returns the mapping that holds addr.
func (s *Symbolizer) mapping(addr uint64) (Mapping, bool) {
	i := sort.Search(len(s.maps), func(i int) bool { return s.maps[i].End > addr })
	if i < len(s.maps) && s.maps[i].Start <= addr {
		return s.maps[i], true
	}
	return Mapping{}, false
}

// object returns the symbols of the ELF file at path, loading them on first
// use; nil if the file cannot be read.
func (s *Symbolizer) object(path string) *objectFile {
	if obj, ok := s.files[path]; ok {
		return obj
	}
	obj, err := openObject(path)
	if err != nil {
		obj = nil
	}
	s.files[path] = obj
	return obj
}

// Close releases the files the Symbolizer opened. A nil Symbolizer is fine.
func (s *Symbolizer) Close() {
	if s == nil {
		return
	}
	for _, obj := range s.files {
		if obj != nil {
			obj.f.Close()
		}
	}
	s.files = map[string]*objectFile{}
}

// objectFile is an ELF file's function symbols, sorted by address, and its
// DWARF line tables when it has them.
type objectFile struct {
	f     *elf.File
	loads []elf.ProgHeader
	syms  []elfFunc
	lines *lineTables // nil until needed; noLines if there are none
}

type elfFunc struct {
	value, size uint64
	name        string
	global      bool
}

func openObject(path string) (*objectFile, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, err
	}
	obj := &objectFile{f: f}
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD {
			obj.loads = append(obj.loads, p.ProgHeader)
		}
	}
	syms, err := f.Symbols()
	if err != nil || len(syms) == 0 {
		syms, _ = f.DynamicSymbols()
	}
	for _, sym := range syms {
		t := elf.ST_TYPE(sym.Info)
		if (t != elf.STT_FUNC && t != elf.STT_GNU_IFUNC) || sym.Section == elf.SHN_UNDEF || sym.Value == 0 || sym.Name == "" {
			continue
		}
		obj.syms = append(obj.syms, elfFunc{value: sym.Value, size: sym.Size, name: sym.Name, global: elf.ST_BIND(sym.Info) != elf.STB_LOCAL})
	}
	// By address; at one address (aliases) a global symbol first, so that
	// it is the one a lookup finds.
	sort.SliceStable(obj.syms, func(i, j int) bool {
		a, b := obj.syms[i], obj.syms[j]
		if a.value != b.value {
			return a.value < b.value
		}
		return a.global && !b.global
	})
	return obj, nil
}

// lookupOffset names the function at file offset off.
func (obj *objectFile) lookupOffset(off uint64) (Symbol, bool) {
	for _, p := range obj.loads {
		if p.Off <= off && off-p.Off < p.Filesz {
			return obj.lookup(off - p.Off + p.Vaddr)
		}
	}
	return Symbol{}, false
}

// lookup names the function at virtual address vaddr of the file.
func (obj *objectFile) lookup(vaddr uint64) (Symbol, bool) {
	i := sort.Search(len(obj.syms), func(i int) bool { return obj.syms[i].value > vaddr }) - 1
	// Back over aliases to the first (preferred) symbol at that address.
	for i > 0 && obj.syms[i-1].value == obj.syms[i].value {
		i--
	}
	if i < 0 {
		return Symbol{}, false
	}
	fn := obj.syms[i]
	if vaddr != fn.value && vaddr-fn.value >= fn.size {
		return Symbol{}, false
	}
	s := Symbol{Name: demangle.Filter(fn.name)}
	s.File, s.Line = obj.line(fn.value)
	return s, true
}

// line returns the source position of the code at vaddr, if known.
func (obj *objectFile) line(vaddr uint64) (string, int) {
	if obj.lines == nil {
		obj.lines = newLineTables(obj.f)
	}
	return obj.lines.find(vaddr)
}

// lineTables finds source positions in an ELF file's DWARF: the compilation
// units by address range, and their line tables, read on demand.
type lineTables struct {
	d     *dwarf.Data
	units []unitRange // sorted by lo
	read  map[dwarf.Offset]*dwarf.LineReader
}

type unitRange struct {
	lo, hi uint64
	cu     *dwarf.Entry
}

var noLines = &lineTables{}

func newLineTables(f *elf.File) *lineTables {
	if f.Section(".debug_info") == nil || f.Section(".debug_line") == nil {
		return noLines
	}
	d, err := f.DWARF()
	if err != nil {
		return noLines
	}
	t := &lineTables{d: d, read: map[dwarf.Offset]*dwarf.LineReader{}}
	r := d.Reader()
	for {
		e, err := r.Next()
		if err != nil || e == nil {
			break
		}
		if e.Tag == dwarf.TagCompileUnit || e.Tag == dwarf.TagPartialUnit {
			ranges, err := d.Ranges(e)
			if err == nil {
				for _, rg := range ranges {
					t.units = append(t.units, unitRange{lo: rg[0], hi: rg[1], cu: e})
				}
			}
		}
		r.SkipChildren()
	}
	sort.Slice(t.units, func(i, j int) bool { return t.units[i].lo < t.units[j].lo })
	return t
}

func (t *lineTables) find(vaddr uint64) (string, int) {
	if t.d == nil {
		return "", 0
	}
	i := sort.Search(len(t.units), func(i int) bool { return t.units[i].lo > vaddr }) - 1
	for ; i >= 0; i-- {
		u := t.units[i]
		if vaddr >= u.hi {
			continue
		}
		lr, ok := t.read[u.cu.Offset]
		if !ok {
			lr, _ = t.d.LineReader(u.cu)
			t.read[u.cu.Offset] = lr
		}
		if lr == nil {
			return "", 0
		}
		var le dwarf.LineEntry
		if err := lr.SeekPC(vaddr, &le); err != nil || le.File == nil {
			return "", 0
		}
		return le.File.Name, le.Line
	}
	return "", 0
}
