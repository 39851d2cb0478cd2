package cshim

import (
	"bytes"
	"fmt"
	"strconv"
)

// Mapping is one line of /proc/<pid>/maps: a range of the address space
// and what is mapped there.
type Mapping struct {
	Start, End uint64 // [Start, End)
	Perms      string // "r-xp"
	Offset     uint64 // offset in the file of the byte at Start
	Path       string // the file; "" for anonymous memory, "[vdso]" and the like for the kernel's
}

// ParseMaps parses the text of /proc/<pid>/maps:
//
//	55d0c6a00000-55d0c6a02000 r-xp 00001000 08:01 1234   /usr/bin/prog
//
// A malformed line is an error naming its number and what is wrong.
func ParseMaps(data []byte) ([]Mapping, error) {
	var maps []Mapping
	for n := 1; len(data) > 0; n++ {
		var line []byte
		line, data, _ = bytes.Cut(data, []byte{'\n'})
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		m, err := parseMapsLine(line)
		if err != nil {
			return nil, fmt.Errorf("maps line %d: %v", n, err)
		}
		maps = append(maps, m)
	}
	return maps, nil
}

func parseMapsLine(line []byte) (Mapping, error) {
	var m Mapping
	field := func() []byte {
		line = bytes.TrimLeft(line, " \t")
		i := bytes.IndexAny(line, " \t")
		if i < 0 {
			i = len(line)
		}
		f := line[:i]
		line = line[i:]
		return f
	}
	addr := field()
	lo, hi, ok := bytes.Cut(addr, []byte{'-'})
	if !ok {
		return m, fmt.Errorf("address range %q: want start-end", addr)
	}
	var err error
	if m.Start, err = strconv.ParseUint(string(lo), 16, 64); err != nil {
		return m, fmt.Errorf("start address %q: not hexadecimal", lo)
	}
	if m.End, err = strconv.ParseUint(string(hi), 16, 64); err != nil {
		return m, fmt.Errorf("end address %q: not hexadecimal", hi)
	}
	if m.End < m.Start {
		return m, fmt.Errorf("address range %q ends before it starts", addr)
	}
	perms := field()
	if len(perms) != 4 {
		return m, fmt.Errorf("permissions %q: want four characters such as r-xp", perms)
	}
	m.Perms = string(perms)
	off := field()
	if m.Offset, err = strconv.ParseUint(string(off), 16, 64); err != nil {
		return m, fmt.Errorf("offset %q: not hexadecimal", off)
	}
	if dev := field(); len(dev) == 0 {
		return m, fmt.Errorf("device missing")
	}
	inode := field()
	if len(inode) == 0 {
		return m, fmt.Errorf("inode missing")
	}
	if _, err := strconv.ParseUint(string(inode), 10, 64); err != nil {
		return m, fmt.Errorf("inode %q: not a number", inode)
	}
	// The path is the rest of the line and may hold blanks.
	m.Path = string(bytes.TrimSpace(line))
	return m, nil
}
