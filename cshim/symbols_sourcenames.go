package cshim

import (
	"bytes"
	"debug/elf"
)

// sourceNamesSection is the section hmbtrace's GCC plugin
// (cshim/gccplugin) writes into the objects of Fortran units: each
// function it compiled with its region name as the source gives it,
// whatever -g says. Records, which the linker concatenates, are
//
//	pad to 8 bytes; the function's address (the file's word size and
//	byte order); the name and a NUL; pad to 8 bytes
//
// The section is not allocated: the program does not load it.
const sourceNamesSection = ".hmbtrace.names"

// sourceNames reads the names of the file's .hmbtrace.names section by
// address; nil if it has none. An address listed with two names (two
// functions the linker folded into one) is left out: the symbol and DWARF
// name it then. A damaged section gives the records before the damage.
func sourceNames(f *elf.File) map[uint64]string {
	sec := f.Section(sourceNamesSection)
	if sec == nil || sec.Type == elf.SHT_NOBITS {
		return nil
	}
	data, err := sec.Data()
	if err != nil || len(data) == 0 {
		return nil
	}
	return parseSourceNames(data, f.Class, f.ByteOrder)
}

// byteOrder is the part of binary.ByteOrder that parseSourceNames uses.
type byteOrder interface {
	Uint32([]byte) uint32
	Uint64([]byte) uint64
}

// parseSourceNames parses the records of a .hmbtrace.names section.
func parseSourceNames(data []byte, class elf.Class, order byteOrder) map[uint64]string {
	word := 8
	if class == elf.ELFCLASS32 {
		word = 4
	}
	names := map[uint64]string{}
	ambiguous := map[uint64]bool{}
	for off := 0; ; {
		off = (off + 7) &^ 7
		if off+word > len(data) {
			break
		}
		var addr uint64
		if word == 8 {
			addr = order.Uint64(data[off:])
		} else {
			addr = uint64(order.Uint32(data[off:]))
		}
		off += word
		end := bytes.IndexByte(data[off:], 0)
		if end < 0 {
			break
		}
		name := string(data[off : off+end])
		off += end + 1
		// Address 0: a function the linker dropped (--gc-sections), or
		// the padding a linker put between two objects' records.
		if addr == 0 || name == "" {
			continue
		}
		if prev, ok := names[addr]; ok && prev != name {
			ambiguous[addr] = true
		}
		names[addr] = name
	}
	for addr := range ambiguous {
		delete(names, addr)
	}
	if len(names) == 0 {
		return nil
	}
	return names
}
