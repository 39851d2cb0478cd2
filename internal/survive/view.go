package survive

import (
	"encoding/binary"
	"fmt"
	"unsafe"
)

// View is a mapping file as a reader sees it: its parts, bounded by the
// fill marks the process stored last.
type View struct {
	Header Header
	Levels []LevelEntry // filled entries
	Locs   []LocEntry   // entries up to the highest location published
	Descs  []BinDesc
	Defs   []byte // the complete definition records
	bins   []byte
}

// Def is one record of the definition log.
type Def struct {
	Kind    byte
	Payload []byte
}

// FormatError says what is wrong with a mapping file, and where.
type FormatError struct {
	Offset uint64
	Reason string
}

func (e *FormatError) Error() string {
	return fmt.Sprintf("hmbtrace mapping: offset %d: %s", e.Offset, e.Reason)
}

// Read makes a View of a mapping file's bytes b, which it keeps. Fill
// marks beyond the file's parts (a damaged file) are errors, never panics.
func Read(b []byte) (*View, error) {
	hs := uint64(unsafe.Sizeof(Header{}))
	if uint64(len(b)) < hs || string(b[:8]) != Magic {
		return nil, &FormatError{0, "not an hmbtrace mapping file"}
	}
	if uintptr(unsafe.Pointer(&b[0]))%8 != 0 {
		b = append(make([]byte, 0, len(b)+8), b...) // the heap gives 8-aligned arrays
	}
	v := &View{Header: *(*Header)(unsafe.Pointer(&b[0]))}
	h := &v.Header
	if h.Version != Version {
		return nil, &FormatError{8, fmt.Sprintf("layout version %d; this reader reads version %d", h.Version, Version)}
	}
	if h.FileSize != uint64(len(b)) {
		return nil, &FormatError{0, fmt.Sprintf("file of %d bytes, its header says %d (truncated?)", len(b), h.FileSize)}
	}
	part := func(off, n, size uint64, what string) (unsafe.Pointer, error) {
		if off%8 != 0 || off > uint64(len(b)) || n > (uint64(len(b))-off)/size {
			return nil, &FormatError{off, fmt.Sprintf("%s: %d entries of %d bytes do not fit the file", what, n, size)}
		}
		if n == 0 {
			return nil, nil
		}
		return unsafe.Pointer(&b[off]), nil
	}
	if h.Levels > h.LevelCap || h.Locs > h.LocCap || h.DefUsed > h.DefCap {
		return nil, &FormatError{0, "fill marks beyond the capacities"}
	}
	p, err := part(h.OffLevels, h.Levels, uint64(unsafe.Sizeof(LevelEntry{})), "levels")
	if err != nil {
		return nil, err
	}
	v.Levels = unsafe.Slice((*LevelEntry)(p), h.Levels)
	if p, err = part(h.OffLocs, h.Locs, uint64(unsafe.Sizeof(LocEntry{})), "locations"); err != nil {
		return nil, err
	}
	v.Locs = unsafe.Slice((*LocEntry)(p), h.Locs)
	if p, err = part(h.OffDescs, h.Bins, uint64(unsafe.Sizeof(BinDesc{})), "bin descriptors"); err != nil {
		return nil, err
	}
	v.Descs = unsafe.Slice((*BinDesc)(p), h.Bins)
	if _, err = part(h.OffDefs, h.DefUsed, 1, "definitions"); err != nil {
		return nil, err
	}
	v.Defs = b[h.OffDefs : h.OffDefs+h.DefUsed]
	if h.BinSize == 0 || h.Bins > 1<<40/h.BinSize {
		return nil, &FormatError{32, fmt.Sprintf("%d bins of %d bytes", h.Bins, h.BinSize)}
	}
	if _, err = part(h.OffBins, h.Bins*h.BinSize, 1, "bins"); err != nil {
		return nil, err
	}
	v.bins = b[h.OffBins : h.OffBins+h.Bins*h.BinSize]
	return v, nil
}

// Bin returns the complete records of bin i: its bytes up to its fill
// mark. ok is false for a free bin or one whose descriptor is not
// consistent (a level that has no entry, a mark beyond the bin).
func (v *View) Bin(i int) (data []byte, level int, ok bool) {
	d := v.Descs[i]
	if d.Level == 0 || uint64(d.Level) > uint64(len(v.Levels)) || uint64(d.Used) > v.Header.BinSize {
		return nil, 0, false
	}
	lo := uint64(i) * v.Header.BinSize
	return v.bins[lo : lo+uint64(d.Used)], int(d.Level - 1), true
}

// Definitions calls f for each complete record of the log, in order. It
// returns an error for a record that overruns the log's fill mark.
func (v *View) Definitions(f func(Def) error) error {
	for at := uint64(0); at < uint64(len(v.Defs)); {
		if uint64(len(v.Defs))-at < 5 {
			return &FormatError{v.Header.OffDefs + at, "definition record cut short"}
		}
		n := uint64(binary.LittleEndian.Uint32(v.Defs[at:]))
		if n > uint64(len(v.Defs))-at-5 {
			return &FormatError{v.Header.OffDefs + at, fmt.Sprintf("definition record of %d bytes beyond the log's end", n)}
		}
		if err := f(Def{Kind: v.Defs[at+4], Payload: v.Defs[at+5 : at+5+n]}); err != nil {
			return err
		}
		at += 5 + n
	}
	return nil
}
