package cshim

import (
	"cmp"
	"debug/dwarf"
	"debug/elf"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/ianlancetaylor/demangle"
	"golang.org/x/sys/unix"
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
	m, ok := s.find(addr)
	if !ok {
		return Symbol{}, false
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
			obj.close()
		}
	}
	s.files = map[string]*objectFile{}
}

// objectFile is an ELF file's function symbols, sorted by address, and its
// DWARF line tables when it has them.
type objectFile struct {
	f     *elf.File
	path  string
	mem   []byte // the file's mapping that its DWARF is read from (dwarfmap.go), if any
	loads []elf.ProgHeader
	syms  []elfFunc
	lines *lineTables   // nil until needed; noLines if there are none
	ftn   *fortranNames // nil until needed
	// srcNames: the names hmbtrace's GCC plugin wrote for the functions
	// of Fortran units, by address (symbols_sourcenames.go); read on
	// first use (srcRead).
	srcNames map[uint64]string
	srcRead  bool
	byName   map[string]uint64 // function symbols' addresses, built when needed
	// mainInlined: a main and no MAIN__, so gfortran's main program, if
	// the object has one, was inlined into main.
	mainInlined bool
	// hasFortran: the object holds gfortran's code (a MAIN__, a call into
	// libgfortran), so that a symbol with a trailing underscore is a
	// Fortran procedure's (fortranExternal).
	hasFortran bool
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
	obj := &objectFile{f: f, path: path}
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
		obj.hasFortran = obj.hasFortran || strings.HasPrefix(sym.Name, "_gfortran_") || sym.Name == "MAIN__"
		t := elf.ST_TYPE(sym.Info)
		if (t != elf.STT_FUNC && t != elf.STT_GNU_IFUNC) || sym.Section == elf.SHN_UNDEF || sym.Value == 0 || sym.Name == "" {
			continue
		}
		obj.syms = append(obj.syms, elfFunc{value: sym.Value, size: sym.Size, name: sym.Name, global: elf.ST_BIND(sym.Info) != elf.STB_LOCAL})
	}
	hasMain, hasMAIN := false, false
	for _, fn := range obj.syms {
		hasMain = hasMain || fn.name == "main"
		hasMAIN = hasMAIN || fn.name == "MAIN__" || strings.HasPrefix(fn.name, "MAIN__.")
	}
	obj.mainInlined = hasMain && !hasMAIN
	// By address; at one address (aliases) a global symbol first, so that
	// it is the one a lookup finds.
	// (slices' generic sort: sort.SliceStable's reflection took 0.18 ms of
	// a cxx-mpi rank's start.)
	slices.SortStableFunc(obj.syms, func(a, b elfFunc) int {
		if c := cmp.Compare(a.value, b.value); c != 0 {
			return c
		}
		switch {
		case a.global && !b.global:
			return -1
		case b.global && !a.global:
			return 1
		}
		return 0
	})
	return obj, nil
}

// close releases the file and its mapping.
func (obj *objectFile) close() {
	obj.f.Close()
	if obj.mem != nil {
		unix.Munmap(obj.mem)
		obj.mem = nil
	}
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
	if i < 0 || vaddr != obj.syms[i].value && vaddr-obj.syms[i].value >= obj.syms[i].size {
		// No symbol holds it (a stripped file has none of its local
		// functions): a function's entry, the address a probe passes,
		// may still be named by the GCC plugin's table.
		n, ok := obj.sourceNames()[vaddr]
		if !ok {
			return Symbol{}, false
		}
		s := Symbol{Name: n}
		s.File, s.Line = obj.line(vaddr)
		return s, true
	}
	fn := obj.syms[i]
	s := Symbol{Name: obj.name(fn.name, fn.value, 0)}
	s.File, s.Line = obj.line(fn.value)
	return s, true
}

// sourceNames returns the names the GCC plugin wrote into the file, read
// on first use; nil if it wrote none.
func (obj *objectFile) sourceNames() map[uint64]string {
	if !obj.srcRead {
		obj.srcNames, obj.srcRead = sourceNames(obj.f), true
	}
	return obj.srcNames
}

// demangleSymbol returns the readable name of a function symbol: C++ names
// demangled ("ns::f(int)"), gfortran's module procedures as module::proc,
// its main program as "main program", anything else unchanged. A GCC clone
// suffix (.constprop.0, .isra.0, ._omp_fn.0, ...) of a Fortran name is kept
// as " [clone .suffix]", as the C++ demangler writes it.
func demangleSymbol(sym string) string {
	if n, ok := demangleFortran(sym); ok {
		return n
	}
	return demangle.Filter(sym)
}

// fortranExternal names the symbol of an external procedure of gfortran as
// its source does, without the trailing underscore gfortran adds
// (randlc_ is randlc), which is the name DWARF gives it: one procedure has
// one name with and without -g, and one filter rule matches it in both
// builds. Only a symbol that can be gfortran's is changed: lower case (it
// lowercases identifiers), digits and underscores, one trailing underscore,
// in an object that holds Fortran code. A C function named so in such a
// program is what Fortran calls by that name, and is named as Fortran
// calls it. A clone suffix is kept as demangleSymbol keeps it.
func fortranExternal(sym string) string {
	base, suffix := sym, ""
	if i := strings.IndexByte(sym, '.'); i > 0 {
		base, suffix = sym[:i], sym[i:]
	}
	name, ok := strings.CutSuffix(base, "_")
	if !ok || name == "" || strings.HasSuffix(name, "_") || !('a' <= name[0] && name[0] <= 'z') {
		return sym
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_') {
			return sym
		}
	}
	if suffix != "" {
		return name + " [clone " + suffix + "]"
	}
	return name
}

// demangleFortran demangles the symbols only gfortran makes:
// __<module>_MOD_<procedure> (module procedures, also those of submodules,
// and the compiler's __copy_/__final_ procedures of derived types) and
// MAIN__ (the main program, whose name only DWARF tells). Other Fortran
// symbols (external procedures with their trailing underscore, contained
// procedures with a .N suffix) cannot be told from C symbols by their names;
// the GCC plugin's table or the object's DWARF names those (objectFile.name).
func demangleFortran(sym string) (string, bool) {
	base, clone := sym, ""
	if i := strings.IndexByte(sym, '.'); i > 0 {
		base, clone = sym[:i], " [clone "+sym[i:]+"]"
	}
	if base == "MAIN__" {
		return "main program" + clone, true
	}
	// gfortran lowercases identifiers, so "_MOD_" cannot be part of a
	// module's or a procedure's name.
	if rest, ok := strings.CutPrefix(base, "__"); ok {
		if mod, proc, ok := strings.Cut(rest, "_MOD_"); ok && mod != "" && proc != "" {
			return mod + "::" + proc + clone, true
		}
	}
	return "", false
}

// name returns the readable name of function symbol sym at vaddr. A
// function of a Fortran unit compiled with hmbtrace's GCC plugin has the
// name the plugin wrote into the object, from the source: one name with
// and without -g. Else, names that the symbol tells (C++, gfortran's
// module procedures) come from it, the same with and without -g. For the
// rest of a Fortran unit, DWARF tells: external procedures without their trailing underscore, contained
// ones under their host (mod::proc::inner, where the symbol is inner.0),
// the main program by its name, and a function the compiler made from
// another (an OpenMP region's body, a clone) as that one's name with
// " [clone .suffix]". depth bounds that recursion.
func (obj *objectFile) name(sym string, vaddr uint64, depth int) string {
	if n, ok := obj.sourceNames()[vaddr]; ok {
		return n
	}
	base, suffix := sym, ""
	if i := strings.IndexByte(sym, '.'); i > 0 {
		base, suffix = sym[:i], sym[i:]
	}
	// Optimized, gfortran inlines the main program into the main it
	// writes: that main is then the program.
	if base == "MAIN__" || (sym == "main" && obj.mainInlined) {
		if n := obj.fortran().main; n != "" {
			if suffix != "" {
				return n + " [clone " + suffix + "]"
			}
			return n
		}
	}
	n := demangleSymbol(sym)
	if n != sym {
		return n
	}
	ft := obj.fortran()
	dn, ok := ft.names[vaddr]
	if !ok {
		if obj.hasFortran {
			return fortranExternal(sym)
		}
		return n
	}
	// The compiler names what it makes after the symbol it came from
	// (ext_._omp_fn.0), in the scope of its host; that symbol may have a
	// dot itself (a contained procedure's inner.0._omp_fn.0), so the
	// longest prefix that is a symbol is the one.
	leaf := dn
	if i := strings.LastIndex(dn, "::"); i >= 0 {
		leaf = dn[i+2:]
	}
	for i := strings.LastIndexByte(leaf, '.'); i > 0 && depth < 4; i = strings.LastIndexByte(leaf[:i], '.') {
		if from, ok := obj.symbolValue(leaf[:i]); ok {
			return obj.name(leaf[:i], from, depth+1) + " [clone " + leaf[i:] + "]"
		}
	}
	return dn
}

// symbolValue returns the address of the function symbol called name.
func (obj *objectFile) symbolValue(name string) (uint64, bool) {
	if obj.byName == nil {
		obj.byName = make(map[string]uint64, len(obj.syms))
		for _, fn := range obj.syms {
			if _, dup := obj.byName[fn.name]; !dup {
				obj.byName[fn.name] = fn.value
			}
		}
	}
	v, ok := obj.byName[name]
	return v, ok
}

// fortranNames are the names DWARF gives the functions of an object's
// Fortran units.
type fortranNames struct {
	names map[uint64]string // by entry address, qualified: mod::proc::inner
	main  string            // the main program's name
}

var noFortran = &fortranNames{}

// fortran returns the names of the object's Fortran functions, read from
// its DWARF on first use.
func (obj *objectFile) fortran() *fortranNames {
	if obj.ftn == nil {
		if obj.lines == nil {
			obj.lines = obj.newLineTables()
		}
		obj.ftn = obj.lines.fortranNames()
	}
	return obj.ftn
}

// fortranLanguages are the DW_LANG values of Fortran.
var fortranLanguages = map[int64]bool{0x07: true, 0x08: true, 0x0e: true, 0x22: true, 0x23: true}

// fortranNames reads the qualified names of the functions of the Fortran
// compilation units, by entry address.
func (t *lineTables) fortranNames() *fortranNames {
	if t.d == nil {
		return noFortran
	}
	ft := &fortranNames{names: map[uint64]string{}}
	qualified := map[dwarf.Offset]string{} // modules' and procedures' DIEs
	origin := map[uint64]dwarf.Offset{}    // concrete code whose name is in another DIE
	seen := map[dwarf.Offset]bool{}
	for _, u := range t.units {
		if seen[u.cu.Offset] {
			continue
		}
		seen[u.cu.Offset] = true
		lang, _ := u.cu.Val(dwarf.AttrLanguage).(int64)
		if !fortranLanguages[lang] || !u.cu.Children {
			continue
		}
		r := t.d.Reader()
		r.Seek(u.cu.Offset)
		if _, err := r.Next(); err != nil {
			continue
		}
		// scope holds, for each open level of the tree below the unit, the
		// name it adds to its children's qualified names ("" for none).
		var scope []string
		for {
			e, err := r.Next()
			if err != nil || e == nil {
				break
			}
			if e.Tag == 0 {
				if len(scope) == 0 {
					break // the unit's end
				}
				scope = scope[:len(scope)-1]
				continue
			}
			add := ""
			if e.Tag == dwarf.TagModule || e.Tag == dwarf.TagSubprogram {
				name, _ := e.Val(dwarf.AttrName).(string)
				if name != "" {
					q := qualify(scope, name)
					qualified[e.Offset] = q
					add = name
					if m, _ := e.Val(dwarf.AttrMainSubprogram).(bool); m {
						ft.main = name
					}
				}
				if low, ok := e.Val(dwarf.AttrLowpc).(uint64); ok && e.Tag == dwarf.TagSubprogram {
					if name != "" {
						ft.names[low] = qualified[e.Offset]
					} else if o, ok := e.Val(dwarf.AttrAbstractOrigin).(dwarf.Offset); ok {
						origin[low] = o
					} else if o, ok := e.Val(dwarf.AttrSpecification).(dwarf.Offset); ok {
						origin[low] = o
					}
				}
			}
			if e.Children {
				scope = append(scope, add)
			}
		}
	}
	// Optimized code: the concrete instance refers to the abstract one,
	// which has the name and sits in the right scope.
	for low, o := range origin {
		if q, ok := qualified[o]; ok {
			ft.names[low] = q
		}
	}
	return ft
}

// qualify joins the non-empty names of scope and name with "::".
func qualify(scope []string, name string) string {
	var b strings.Builder
	for _, s := range scope {
		if s != "" {
			b.WriteString(s)
			b.WriteString("::")
		}
	}
	b.WriteString(name)
	return b.String()
}

// line returns the source position of the code at vaddr, if known.
func (obj *objectFile) line(vaddr uint64) (string, int) {
	if obj.lines == nil {
		obj.lines = obj.newLineTables()
	}
	return obj.lines.find(vaddr)
}

// lineTables finds source positions in an ELF file's DWARF: the compilation
// units by address range, and their line tables, read on demand.
type lineTables struct {
	d     *dwarf.Data
	units []unitRange // sorted by lo
	// unitsHi[i] is the highest hi of units[:i+1]: a lookup walks back
	// from the last unit starting at or below an address only while an
	// earlier one may still reach it.
	unitsHi []uint64
	read    map[dwarf.Offset]*lineTable
	code    [][2]uint64 // the file's executable segments, [lo, hi)
}

type unitRange struct {
	lo, hi uint64
	cu     *dwarf.Entry
}

var noLines = &lineTables{}

func (obj *objectFile) newLineTables() *lineTables {
	f := obj.f
	if f.Section(".debug_info") == nil || f.Section(".debug_line") == nil {
		return noLines
	}
	d, mem, err := mappedDWARF(obj.path, f)
	if err != nil {
		d, err = f.DWARF()
	}
	if err != nil {
		return noLines
	}
	obj.mem = mem
	return linesOf(d, f)
}

// linesOf indexes the compilation units of d, the DWARF of f, by address
// range.
func linesOf(d *dwarf.Data, f *elf.File) *lineTables {
	t := &lineTables{d: d, read: map[dwarf.Offset]*lineTable{}}
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && p.Flags&elf.PF_X != 0 {
			t.code = append(t.code, [2]uint64{p.Vaddr, p.Vaddr + p.Memsz})
		}
	}
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
	t.unitsHi = make([]uint64, len(t.units))
	for i, u := range t.units {
		t.unitsHi[i] = u.hi
		if i > 0 && t.unitsHi[i-1] > u.hi {
			t.unitsHi[i] = t.unitsHi[i-1]
		}
	}
	return t
}

func (t *lineTables) find(vaddr uint64) (string, int) {
	if t.d == nil {
		return "", 0
	}
	i := sort.Search(len(t.units), func(i int) bool { return t.units[i].lo > vaddr }) - 1
	for ; i >= 0 && t.unitsHi[i] > vaddr; i-- {
		u := t.units[i]
		if vaddr >= u.hi {
			continue
		}
		lt, ok := t.read[u.cu.Offset]
		if !ok {
			lt = readLineTable(t.d, u.cu, t.isCode)
			t.read[u.cu.Offset] = lt
		}
		if file, line, ok := lt.find(vaddr); ok {
			return file, line
		}
	}
	return "", 0
}

// lineTable is a compilation unit's line program as address ranges sorted
// by address. Go's dwarf.LineReader.SeekPC cannot serve here: it assumes
// the unit's sequences come in address order, and GCC's do not when a
// unit's functions go to several sections (main in .text.startup, cold
// parts in .text.unlikely, hot/cold splitting, inline functions in COMDAT
// groups), which the linker places in another order than the assembler
// wrote them. SeekPC then misses every address of the sequences that come
// after a higher one (all of miniVite's OpenMP regions, optimised C++).
type lineTable struct {
	rows  []lineRow // sorted by lo
	files []string  // the rows' files
}

// lineRow is one row of a line program with the addresses it covers,
// [lo, hi): up to the next row of its sequence, or the sequence's end.
// It holds no pointer (its file is an index into the table's files): a
// unit's rows, tens of thousands in optimised C++, are sorted at a
// program's first probe, and moving rows with a string in them costs the
// GC's write barriers on every move.
type lineRow struct {
	lo, hi uint64
	file   int32
	line   int32
}

// isCode reports whether vaddr is in an executable segment of the file, or
// the file has none (an object file).
func (t *lineTables) isCode(vaddr uint64) bool {
	for _, c := range t.code {
		if c[0] <= vaddr && vaddr < c[1] {
			return true
		}
	}
	return len(t.code) == 0
}

// readLineTable reads the line program of unit cu into a lineTable; an
// unreadable program gives an empty one, so that it is read only once.
// isCode tells the sequences of code in the file from those of functions
// the linker dropped (--gc-sections), which start at its tombstone: 0 for
// GNU ld, -1 for lld. They keep their rows and lengths, so they would
// shadow the code at low addresses (a PIE's).
func readLineTable(d *dwarf.Data, cu *dwarf.Entry, isCode func(uint64) bool) *lineTable {
	lt := &lineTable{}
	lr, err := d.LineReader(cu)
	if err != nil || lr == nil {
		return lt
	}
	var (
		le      dwarf.LineEntry
		prev    lineRow // the row before le in its sequence, while open is true
		fileOf  = map[*dwarf.LineFile]int32{}
		open    bool
		start   = true // le starts a sequence
		dropped bool   // the sequence is a dropped function's
		// The last row's file: consecutive rows mostly share it, and the
		// map's look-up per row was a tenth of the read.
		lastFile  *dwarf.LineFile
		lastIndex int32
		seqs      [][2]int // the kept sequences' rows, [from, to)
		seqFrom   int
	)
	for {
		if err := lr.Next(&le); err != nil {
			break // io.EOF, or a damaged program: keep what was read
		}
		if start {
			dropped = le.Address == 0 || !isCode(le.Address)
			seqFrom = len(lt.rows)
		}
		start = le.EndSequence
		if dropped {
			continue
		}
		// The previous row covers up to this one. Rows at one address
		// cover nothing but the last of them, as addr2line reads it.
		if open && le.Address > prev.lo {
			prev.hi = le.Address
			lt.rows = append(lt.rows, prev)
		}
		if le.EndSequence && len(lt.rows) > seqFrom {
			seqs = append(seqs, [2]int{seqFrom, len(lt.rows)})
		}
		open = !le.EndSequence && le.File != nil
		if open {
			if le.File != lastFile {
				fi, ok := fileOf[le.File]
				if !ok {
					fi = int32(len(lt.files))
					fileOf[le.File] = fi
					lt.files = append(lt.files, le.File.Name)
				}
				lastFile, lastIndex = le.File, fi
			}
			prev = lineRow{lo: le.Address, file: lastIndex, line: int32(le.Line)}
		}
	}
	if open && len(lt.rows) > seqFrom {
		seqs = append(seqs, [2]int{seqFrom, len(lt.rows)}) // a program cut short
	}
	lt.rows = sortRows(lt.rows, seqs)
	return lt
}

// sortRows returns rows sorted by lo, as a stable sort would. seqs are
// runs of rows each sorted already (a line program's sequences), covering
// rows in order. The linker's placement of their sections mixes the
// sequences but not their rows, so the sequences are ordered by their
// first row and laid end to end unless two overlap: linear in the rows,
// where a stable sort of tens of thousands of rows was a sixth of the read
// of LULESH's lulesh.cc. It reorders seqs.
func sortRows(rows []lineRow, seqs [][2]int) []lineRow {
	byLo := func(a, b lineRow) int { return cmp.Compare(a.lo, b.lo) }
	if slices.IsSortedFunc(rows, byLo) {
		return rows
	}
	covered := 0
	for _, q := range seqs {
		covered += q[1] - q[0]
	}
	if covered == len(rows) {
		slices.SortStableFunc(seqs, func(a, b [2]int) int { return cmp.Compare(rows[a[0]].lo, rows[b[0]].lo) })
		apart := true
		for i := 1; i < len(seqs) && apart; i++ {
			apart = rows[seqs[i-1][1]-1].lo < rows[seqs[i][0]].lo
		}
		if apart {
			out := make([]lineRow, 0, len(rows))
			for _, q := range seqs {
				out = append(out, rows[q[0]:q[1]]...)
			}
			return out
		}
	}
	slices.SortStableFunc(rows, byLo)
	return rows
}

// find returns the source position of vaddr. The code's rows do not
// overlap, so the last row starting at or below vaddr is the only one
// that can hold it. (Two units can hold one COMDAT function: GNU ld
// points the dropped copy's sequence at the kept one, the same code.)
func (lt *lineTable) find(vaddr uint64) (string, int, bool) {
	i := sort.Search(len(lt.rows), func(i int) bool { return lt.rows[i].lo > vaddr }) - 1
	if i >= 0 && vaddr < lt.rows[i].hi {
		return lt.files[lt.rows[i].file], int(lt.rows[i].line), true
	}
	return "", 0, false
}
