package cshim

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"strings"
)

// Reading an object's symbol tables and DWARF takes up to tens of
// milliseconds for a large code (TeaLeaf: 50 ms). Done at a function's first
// probe, it ran after that probe's timestamp, inside the function: for the
// executable that function is main, whose exclusive time then held the
// reading. The Runtime reads the executable's tables when the measurement
// starts, before the first probe's timestamp, if the executable calls the
// -finstrument-functions hooks; a program that only links the library
// (pkg-config puts the hooks into every executable) does not pay it.
// When a hook's probe is what starts the measurement (the common case: the
// first function entered, main or a constructor), the C side passes the
// function's address and the Runtime reads the object that holds it,
// executable or shared object, without first checking the executable for
// calls of the hooks (a second pass over its symbols and code: 0.28 ms of a
// cxx-mpi rank's start).

// callsHooks reports whether the ELF executable at path calls
// __cyg_profile_func_enter: through the PLT or the GOT when the hooks are
// the library's (a relocation against the symbol; -Wl,-u alone makes none),
// or with a direct call when libhmbtrace-hooks.a put them into the
// executable (x86-64: a CALL rel32 in .text whose target is the hook).
func callsHooks(path string) bool {
	f, err := elf.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	const hook = "__cyg_profile_func_enter"
	dyn, _ := f.DynamicSymbols()
	var hookAddr uint64
	for i, s := range dyn {
		if s.Name != hook {
			continue
		}
		if s.Section == elf.SHN_UNDEF {
			return relocatesSymbol(f, uint32(i+1)) // DynamicSymbols skips index 0
		}
		hookAddr = s.Value
	}
	if hookAddr == 0 {
		// Not exported: look in the full symbol table.
		syms, _ := f.Symbols()
		for _, s := range syms {
			if s.Name == hook && s.Section != elf.SHN_UNDEF {
				hookAddr = s.Value
			}
		}
	}
	if hookAddr == 0 || f.Machine != elf.EM_X86_64 {
		return hookAddr != 0
	}
	text := f.Section(".text")
	if text == nil {
		return false
	}
	code, err := text.Data()
	if err != nil {
		return false
	}
	for i := 0; ; {
		j := bytes.IndexByte(code[i:], 0xe8)
		if j < 0 || i+j+5 > len(code) {
			return false
		}
		at := i + j
		rel := int32(binary.LittleEndian.Uint32(code[at+1:]))
		if text.Addr+uint64(at)+5+uint64(int64(rel)) == hookAddr {
			return true
		}
		i = at + 1
	}
}

// relocatesSymbol reports whether a dynamic relocation of f refers to the
// dynamic symbol of index sym (a PLT slot or a GOT entry: a call site).
func relocatesSymbol(f *elf.File, sym uint32) bool {
	for _, name := range []string{".rela.plt", ".rela.dyn"} {
		s := f.Section(name)
		if s == nil || f.Class != elf.ELFCLASS64 {
			continue
		}
		data, err := s.Data()
		if err != nil {
			continue
		}
		for off := 0; off+24 <= len(data); off += 24 {
			info := f.ByteOrder.Uint64(data[off+8:])
			if elf.R_SYM64(info) == sym {
				return true
			}
		}
	}
	return false
}

// Preload reads the symbol tables and DWARF names of the file at path now,
// so that the first lookups in it are quick.
func (s *Symbolizer) Preload(path string) {
	if obj := s.object(path); obj != nil {
		obj.fortran()
	}
}

// PreloadAt reads the symbol tables and DWARF names of the object that
// holds the code address addr now, as Preload does for a path, and
// returns its path ("" if no file holds addr).
func (s *Symbolizer) PreloadAt(addr uint64) string {
	if m, ok := s.find(addr); ok && strings.HasPrefix(m.Path, "/") {
		s.Preload(m.Path)
		return m.Path
	}
	return ""
}
