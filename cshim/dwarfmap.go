package cshim

import (
	"debug/dwarf"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// elf.File.DWARF reads every debug section into a new slice of the Go
// heap: for cxx-mpi (350 KB of DWARF) that copying and the page faults of
// the fresh memory were 0.47 ms of each rank's start, more than parsing
// them. The sections of an executable or shared object need no
// relocation, so mappedDWARF hands debug/dwarf the sections in place, in a
// read-only mapping of the file: the page cache's pages, mapped as they
// are read.

// mappedDWARF returns the DWARF of f, the ELF file at path, read from a
// mapping of the file, and the mapping, which must outlive the data. It
// fails for what it cannot read in place (a relocatable object, compressed
// sections): the caller then uses f.DWARF.
func mappedDWARF(path string, f *elf.File) (*dwarf.Data, []byte, error) {
	if f.Type == elf.ET_REL {
		return nil, nil, errors.New("a relocatable object's DWARF needs relocating")
	}
	for _, s := range f.Sections {
		if strings.HasPrefix(s.Name, ".zdebug_") || strings.HasPrefix(s.Name, ".debug_") && s.Flags&elf.SHF_COMPRESSED != 0 {
			return nil, nil, errors.New("compressed DWARF")
		}
	}
	fh, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer fh.Close() // the mapping stays
	st, err := fh.Stat()
	if err != nil {
		return nil, nil, err
	}
	if st.Size() <= 0 || int64(int(st.Size())) != st.Size() {
		return nil, nil, errors.New("no size to map")
	}
	mem, err := unix.Mmap(int(fh.Fd()), 0, int(st.Size()), unix.PROT_READ, unix.MAP_PRIVATE)
	if err != nil {
		return nil, nil, err
	}
	fail := func(err error) (*dwarf.Data, []byte, error) {
		unix.Munmap(mem)
		return nil, nil, err
	}
	section := func(name string) ([]byte, error) {
		s := f.Section(name)
		if s == nil || s.Type == elf.SHT_NOBITS {
			return nil, nil
		}
		if s.Offset > uint64(len(mem)) || s.Size > uint64(len(mem))-s.Offset {
			return nil, errors.New(name + " lies beyond the file's end")
		}
		return mem[s.Offset : s.Offset+s.Size : s.Offset+s.Size], nil
	}
	// The sections elf.File.DWARF reads, in the same roles.
	var base [5][]byte
	for i, name := range []string{"abbrev", "info", "str", "line", "ranges"} {
		if base[i], err = section(".debug_" + name); err != nil {
			return fail(err)
		}
	}
	d, err := dwarf.New(base[0], nil, nil, base[1], base[3], nil, base[4], base[2])
	if err != nil {
		return fail(err)
	}
	for _, name := range []string{"addr", "line_str", "loclists", "rnglists", "str_offsets"} {
		b, err := section(".debug_" + name)
		if err != nil {
			return fail(err)
		}
		if b != nil {
			if err := d.AddSection(".debug_"+name, b); err != nil {
				return fail(err)
			}
		}
	}
	for i, s := range f.Sections {
		if s.Name != ".debug_types" {
			continue
		}
		b, err := section(s.Name)
		if err != nil {
			return fail(err)
		}
		if err := d.AddTypes(fmt.Sprintf("types-%d", i), b); err != nil {
			return fail(err)
		}
	}
	return d, mem, nil
}
