package measure

import (
	"runtime"
	"sync/atomic"
)

// Site is a region declared once, at package level, by name, with the
// file and line of its declaration:
//
//	var solve = measure.NewRegion("solve")
//
// It is bound lazily to the Region of the measurement that records it, at
// its first use there, and bound again when another measurement records
// it, so that a Site never yields the region id of another measurement and
// code never passes region tables around. A Site is safe for concurrent
// use.
type Site struct {
	name string
	file string
	line int
	// bound is the site's region in one measurement: the measurement's
	// serial number in the low 32 bits (compared in place), the Region in
	// the high ones. A number rather than a pointer, so that a site keeps
	// no closed measurement (and its buffer) alive, and one load checks it.
	bound atomic.Uint64
}

// serials numbers the measurements from 1, so that a Site's zero binding
// names none.
var serials atomic.Uint32

// nextSerial returns a new measurement's serial number.
func nextSerial() uint32 {
	for {
		if n := serials.Add(1); n != 0 {
			return n
		}
	}
}

// NewRegion declares a region named name at the caller's file and line.
// Two Sites of one name are one region in a measurement, defined with the
// file and line of the first that records.
func NewRegion(name string) *Site {
	_, file, line, _ := runtime.Caller(1)
	return &Site{name: name, file: file, line: line}
}

// NewRegionAt declares a region named name at the given file and line: for
// generated code, which knows the line of the code it instruments better
// than the line of the declaration.
func NewRegionAt(name, file string, line int) *Site {
	return &Site{name: name, file: file, line: line}
}

// Name returns the site's region name.
func (s *Site) Name() string { return s.name }

// Pos returns the file and line the site was declared at ("" and 0 if
// unknown).
func (s *Site) Pos() (file string, line int) { return s.file, s.line }

// RegionOf returns the Region of site s in the measurement, defining it on
// first use. On a disabled measurement, or for a nil Site, it returns the
// zero Region.
func (m *Measurement) RegionOf(s *Site) Region {
	if s == nil || !m.Enabled() {
		return 0
	}
	return s.regionIn(m)
}

// regionIn returns the site's region in enabled measurement m: a load and a
// compare when it is bound to m already.
func (s *Site) regionIn(m *Measurement) Region {
	if b := s.bound.Load(); uint32(b) == m.serial {
		return Region(b >> 32)
	}
	return s.bind(m)
}

// bind binds the site to its region in m. Two measurements recording one
// site in turn bind it in turn, each time under m's mutex: sites are made
// for one measurement at a time, as a program runs them.
//
//go:noinline
func (s *Site) bind(m *Measurement) Region {
	r := m.RegionAt(s.name, s.file, s.line)
	s.bound.Store(uint64(r)<<32 | uint64(m.serial))
	return r
}
